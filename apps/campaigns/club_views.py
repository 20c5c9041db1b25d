"""Clubs: create one, invite by link or short code, join, change roles, remove members, leave.

A club always keeps at least one organiser: every change that could take the last one away runs
with the club row locked, so two organisers stepping down at the same moment cannot both succeed.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.core.paginator import Paginator
from django.db.models import Exists, F, OuterRef, Prefetch, Q, prefetch_related_objects
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from apps.battles import watch
from apps.battles.models import Battle, BattleStatus
from apps.campaigns import permissions, services
from apps.campaigns.account_forms import (ClubForm, InviteForm, JoinForm, RoleForm, SpectatorLinkForm, client_ip,
                                          code_guessing_paused, count_wrong_code, invite_lookup, normalise_code,
                                          pretty_code, unique_club_slug)
from apps.campaigns.models import Club, Invite, Membership, Role, SpectatorLink
from config.responses import refused, see_other


DEAD_INVITES_SHOWN = 10  # invitations withdrawn, expired or used up, newest first
FINISHED_BATTLES_PER_PAGE = 10  # finished battles on the club page, those with a live spectator link first


def locked_club(club_id):
    return Club.objects.select_for_update().get(pk=club_id)


def organised_club(doing):
    """For the views only the club's organisers use: they get the club instead of its slug."""
    return permissions.organisers_only(lambda request, slug: permissions.club_or_404(request.user, slug), "slug",
                                       doing, club_url)


def club_url(club, anchor=""):
    return reverse("club", args=[club.slug]) + (f"#{anchor}" if anchor else "")


# Pages ------------------------------------------------------------------------------------------

@login_required
def club_list(request):
    memberships = permissions.memberships(request.user).select_related("club").order_by("club__name")
    return render(request, "clubs/list.html", {
        "memberships": memberships, "club_form": ClubForm.for_user(request.user), "join_form": JoinForm(),
    })


@login_required
def club_new(request):
    form = ClubForm(request.POST) if request.method == "POST" else ClubForm.for_user(request.user)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            slug = unique_club_slug(form.cleaned_data["name"])
            made = form.made_meanwhile(request.user)
            if made is None:
                club = Club.objects.create(name=form.cleaned_data["name"], slug=slug)
                Membership.objects.create(club=club, user=request.user, role=Role.ORGANISER)
        if made is not None:
            messages.info(request, f"{made.name} is already made (the form was sent twice): here it is.")
            return see_other(club_url(made, "invites"))
        messages.success(request, f"{club.name} is yours: you are its organiser. Invite the others below.")
        return see_other(club_url(club, "invites"))
    return render(request, "clubs/new.html", {"form": form}, status=400 if request.method == "POST" else 200)


def club_context(request, club, *, member_errors=None, link_errors=None, **overrides):
    """The club page: members and their roles; for organisers also the invitations and each
    battle's spectator links. `member_errors` / `link_errors` put a refusal beside its row."""
    user = request.user
    role = permissions.role_in(user, club.pk)
    organiser = role == Role.ORGANISER
    members = list(club.memberships.select_related("user").order_by("user__username"))
    for member in members:
        member.error = (member_errors or {}).get(member.pk, "")
        member.is_me = member.user_id == user.pk
    context = {
        "club": club, "role": role, "organiser": organiser, "members": members,
        "organiser_count": sum(1 for m in members if m.role == Role.ORGANISER and m.user.is_active),
        "campaigns": club.campaigns.order_by("name"), "role_choices": Role.choices, "invite_form": InviteForm(),
    }
    if organiser:
        now = timezone.now()
        # Every invitation that still works (each one can be withdrawn), then the newest of those that
        # no longer do: a club that hands each newcomer a one-use code makes dozens.
        invites = permissions.invites_for(user, club.pk).select_related("created_by")
        working = Q(revoked_at__isnull=True, expires_at__gt=now, uses__lt=F("max_uses"))
        invites = [*invites.filter(working), *invites.exclude(working)[:DEAD_INVITES_SHOWN]]
        for invite in invites:
            invite.state = ("withdrawn" if invite.revoked_at else "expired" if invite.expires_at <= now
                            else "used up" if invite.uses >= invite.max_uses else "")
            invite.pretty = pretty_code(invite.code)
            invite.url = request.build_absolute_uri(reverse("join_code", args=[invite.code]))
        # Every battle not finished yet (a link is made for tonight's), then the finished ones a page at a
        # time, those with a live link first (the ones an organiser comes to revoke): listing them all
        # put a card and a form on the page for every battle the club ever played.
        errors = link_errors or {}
        live = SpectatorLink.objects.filter(revoked_at__isnull=True)
        links = Prefetch("spectator_links", queryset=live, to_attr="live_links")
        club_battles = Battle.objects.filter(club=club).select_related("campaign")
        current = ~Q(status=BattleStatus.FINISHED)
        if errors:  # a refused form is shown where it was filled in
            current |= Q(pk__in=list(errors))
        battles = list(club_battles.filter(current).prefetch_related(links).order_by("-created_at", "-pk"))
        finished = Paginator(
            club_battles.exclude(current).annotate(linked=Exists(live.filter(battle=OuterRef("pk"))))
            .order_by("-linked", "-created_at", "-pk"), FINISHED_BATTLES_PER_PAGE,
        ).get_page(request.GET.get("finished"))
        finished.object_list = list(finished.object_list)
        prefetch_related_objects(finished.object_list, links)
        for battle in (*battles, *finished):
            battle.link_form = errors.get(battle.pk) or SpectatorLinkForm(prefix=f"b{battle.pk}")
            for link in battle.live_links:
                link.url = request.build_absolute_uri(reverse("spectator", args=[watch.link_token(link)]))
        finished.linked = club_battles.exclude(current).filter(Exists(live.filter(battle=OuterRef("pk")))).count()
        context.update(invites=invites, battles=battles, finished_battles=finished)
    context.update(overrides)
    return context


@login_required
def club_detail(request, slug):
    club = permissions.club_or_404(request.user, slug)
    return render(request, "clubs/club.html", club_context(request, club))


# Invitations ------------------------------------------------------------------------------------

@login_required
@require_POST
@organised_club("invite new members")
def invite_new(request, club):
    form = InviteForm(request.POST)
    if not form.is_valid():
        return render(request, "clubs/club.html", club_context(request, club, invite_form=form), status=400)
    invite = form.create(club=club, user=request.user)
    messages.success(request, f"New invitation {pretty_code(invite.code)}: share the code or its link.")
    return see_other(club_url(club, "invites"))


@login_required
@require_POST
@organised_club("withdraw invitations")
def invite_revoke(request, club, pk):
    invite = permissions.get_or_404(Invite.objects.filter(club=club), pk=pk)
    if invite.revoked_at is None:
        Invite.objects.filter(pk=invite.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
        messages.success(request, f"Invitation {pretty_code(invite.code)} withdrawn: it no longer works.")
    return see_other(club_url(club, "invites"))


def join(request):
    """Type a code: it leads to the same page as the invitation link."""
    form = JoinForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        return see_other(reverse("join_code", args=[form.cleaned_data["code"]]))
    return render(request, "clubs/join.html", {"form": form}, status=400 if request.method == "POST" else 200)


def join_code(request, code):
    """The invitation: who invites you and as what; joining is a POST by a signed-in person."""
    code = normalise_code(code)
    ip = client_ip(request)
    paused = code_guessing_paused(ip)
    if paused:
        return render(request, "clubs/join.html", {"form": JoinForm(initial={"code": code}), "problem": paused},
                      status=429)
    invite = invite_lookup(code)
    if invite is None:
        count_wrong_code(ip)
        return render(request, "clubs/join.html", {
            "form": JoinForm(initial={"code": code}),
            "problem": "No invitation has this code. Check it with whoever gave it to you.",
        }, status=404)
    now = timezone.now()
    context = {"invite": invite, "problem": invite.problem(now), "pretty": pretty_code(invite.code)}
    if request.user.is_authenticated:
        context["current_role"] = permissions.role_in(request.user, invite.club_id)
    if request.method != "POST":
        # A member opening the link again (it is how they find the club from the chat) is told they are
        # in, not that the invitation they used up cannot be used.
        gone = context["problem"] and context.get("current_role") is None
        return render(request, "clubs/invite.html", context, status=410 if gone else 200)
    if not request.user.is_authenticated:
        return redirect(f"{reverse('login')}?next={reverse('join_code', args=[invite.code])}")
    if context["current_role"] is not None:
        messages.info(request, f"You are already a member of {invite.club.name} "
                               f"({Role(context['current_role']).label.lower()}); nothing was changed.")
        return see_other(club_url(invite.club))
    if context["problem"]:
        return render(request, "clubs/invite.html", context, status=410)
    try:
        with transaction.atomic():
            # Count the use only if it is still allowed at this instant: two people taking the last
            # use of a code at once cannot both get in.
            claimed = Invite.objects.filter(pk=invite.pk, revoked_at__isnull=True, expires_at__gt=now,
                                            uses__lt=F("max_uses")).update(uses=F("uses") + 1)
            if not claimed:
                invite.refresh_from_db()
                context["problem"] = invite.problem(now) or "This invitation can no longer be used."
                return render(request, "clubs/invite.html", context, status=410)
            Membership.objects.create(club=invite.club, user=request.user, role=invite.role)
    except IntegrityError:  # the same person joining twice at once: the second one changes nothing
        messages.info(request, f"You are already a member of {invite.club.name}; nothing was changed.")
        return see_other(club_url(invite.club))
    messages.success(request, f"Welcome to {invite.club.name}: you joined as {invite.get_role_display().lower()}.")
    return see_other(club_url(invite.club))


# Members ----------------------------------------------------------------------------------------

LAST_ORGANISER = ("{name} is the club's last organiser: make someone else an organiser first, "
                  "so the club is never left without one.")


def member_refused(request, club, membership, message):
    """The club page again, the reason beside the member's row; nothing was changed."""
    messages.error(request, "Nothing was changed: see the message beside the member.")
    return render(request, "clubs/club.html", club_context(request, club, member_errors={membership.pk: message}),
                  status=409)


@login_required
@require_POST
@organised_club("change members' roles")
def member_role(request, club, pk):
    membership = permissions.get_or_404(club.memberships.select_related("user"), pk=pk)
    form = RoleForm(request.POST)
    if not form.is_valid():
        return member_refused(request, club, membership, "Choose organiser, designer or player.")
    role = form.cleaned_data["role"]
    with transaction.atomic():
        locked_club(club.pk)
        current = Membership.objects.filter(pk=membership.pk).values_list("role", flat=True).first()
        if current is None:
            return refused(request, "That member has left the club meanwhile.", status=404, back=club_url(club))
        if current == Role.ORGANISER and role != Role.ORGANISER and \
                not permissions.organisers_left(club.pk, without_user_id=membership.user_id):
            return member_refused(request, club, membership, LAST_ORGANISER.format(name=membership.user.get_username()))
        if role != current:
            # The member's open battle pages were drawn for the old role (an organiser's forms, which no
            # poll redraws): their polls refuse them, and they reload as what the member is now.
            Membership.objects.filter(pk=membership.pk).update(role=role, watch_epoch=F("watch_epoch") + 1)
    messages.success(request, f"{membership.user.get_username()} is now {Role(role).label.lower()}.")
    # Land on the member's own row, its new role on screen (the message is at the top, far above).
    return see_other(club_url(club, f"member-{membership.pk}"))


def sides_released(armies):
    """What the organiser is told about the sides a member no longer commands."""
    if not armies:
        return ""
    names = ", ".join(dict.fromkeys(a.name for a in armies))
    return f" The organisers now act for what they commanded ({names}) until you choose someone else."


@login_required
@require_POST
@organised_club("remove members")
def member_remove(request, club, pk):
    membership = permissions.get_or_404(club.memberships.select_related("user"), pk=pk)
    with transaction.atomic():
        locked_club(club.pk)
        if not permissions.organisers_left(club.pk, without_user_id=membership.user_id):
            return member_refused(request, club, membership, LAST_ORGANISER.format(name=membership.user.get_username()))
        Membership.objects.filter(pk=membership.pk).delete()
        released = services.release_commands(club_id=club.pk, user_id=membership.user_id)
    if membership.user_id == request.user.pk:
        messages.success(request, f"You left {club.name}.")
        return see_other(reverse("club_list"))
    messages.success(request, f"{membership.user.get_username()} is no longer a member of {club.name}."
                              + sides_released(released))
    # A code shared with the whole club lets whoever was removed straight back in: say so.
    live = Invite.objects.filter(club=club, revoked_at__isnull=True, expires_at__gt=timezone.now(),
                                 uses__lt=F("max_uses")).count()
    if live:
        messages.warning(request, f"{live} invitation{'s' if live != 1 else ''} of the club still work"
                                  f"{'' if live != 1 else 's'}: {membership.user.get_username()} could join again "
                                  f"with {'any of them' if live != 1 else 'it'}. Withdraw "
                                  f"{'them' if live != 1 else 'it'} under Invitations if they should not.")
    return see_other(club_url(club, "members"))


@login_required
@require_POST
def club_leave(request, slug):
    club = permissions.club_or_404(request.user, slug)
    with transaction.atomic():
        locked_club(club.pk)
        mine = Membership.objects.filter(club=club, user=request.user).first()
        if mine is None:  # left in another tab meanwhile
            return see_other(reverse("club_list"))
        if not permissions.organisers_left(club.pk, without_user_id=request.user.pk):
            return member_refused(request, club, mine, "You are the club's last organiser: make someone else an "
                                                       "organiser before you leave.")
        mine.delete()
        services.release_commands(club_id=club.pk, user_id=request.user.pk)
    messages.success(request, f"You left {club.name}.")
    return see_other(reverse("club_list"))
