"""Who may see and do what. Every view calls into this module; nothing else decides access.

Objects of a club the user does not belong to are not found (404), never forbidden (403), so ids
reveal nothing about other clubs.
"""

import functools

from django.http import Http404

from apps.battles.watch import SWITCHED_OFF
from apps.campaigns.models import Campaign, Club, Membership, Role, Scenario
from config.responses import refused


def memberships(user):
    if not user.is_authenticated:
        return Membership.objects.none()
    return Membership.objects.filter(user=user)


def role_in(user, club_id):
    """The user's role in the club, or None. Cached per request on the user object."""
    if not user.is_authenticated:
        return None
    known = getattr(user, "_redoubt_known_roles", {})
    if club_id in known:
        return known[club_id]
    cache = getattr(user, "_redoubt_roles", None)
    if cache is None:
        cache = dict(Membership.objects.filter(user=user).values_list("club_id", "role"))
        user._redoubt_roles = cache
    return cache.get(club_id)


def remember_role(user, club_id, role):
    """A role read with the object it belongs to (battle_or_404): role_in need not ask again."""
    if user.is_authenticated:
        known = getattr(user, "_redoubt_known_roles", None)
        if known is None:
            known = user._redoubt_known_roles = {}
        known[club_id] = role


def clubs_for(user):
    if not user.is_authenticated:
        return Club.objects.none()
    return Club.objects.filter(memberships__user=user)


def campaigns_for(user):
    return Campaign.objects.filter(club__in=clubs_for(user))


def campaigns_with_role(user):
    """`campaigns_for(user)`, each campaign carrying `viewer_role`: the user's role in its club (same query)."""
    from django.db.models import OuterRef, Subquery

    if not user.is_authenticated:
        return campaigns_for(user)
    return campaigns_for(user).annotate(viewer_role=Subquery(
        Membership.objects.filter(club=OuterRef("club"), user=user).values("role")[:1]))


def organised_clubs(user):
    """Clubs the user organises: where they may run sessions and import a whole campaign."""
    if not user.is_authenticated:
        return Club.objects.none()
    return Club.objects.filter(memberships__user=user, memberships__role=Role.ORGANISER).distinct()


def scenarios_for(user):
    return Scenario.objects.filter(club__in=clubs_for(user))


def battles_for(user):
    from apps.battles.models import Battle

    return Battle.objects.filter(club__in=clubs_for(user))


def structures_for(user):
    from django.db.models import Q

    from apps.structures.models import Structure

    clubs = clubs_for(user)
    return Structure.objects.filter(
        Q(battle__club__in=clubs) | Q(campaign__club__in=clubs) | Q(scenario__club__in=clubs)
    )


def sheets_for(user):
    """Library sheets (no club) are visible to every signed-in user; club sheets to members."""
    from django.db.models import Q

    from apps.structures.models import BunkerSheet

    if not user.is_authenticated:
        return BunkerSheet.objects.none()
    return BunkerSheet.objects.filter(Q(club__isnull=True) | Q(club__in=clubs_for(user)))


def get_or_404(queryset, **lookup):
    try:
        return queryset.get(**lookup)
    except queryset.model.DoesNotExist:
        raise Http404(f"No {queryset.model._meta.verbose_name} found.") from None


def is_organiser(user, club_id):
    return role_in(user, club_id) == Role.ORGANISER


def organisers_only(find, key, doing, back):
    """A view only the organisers of a club may use, on the club or one of its campaigns. In place of
    the URL's `key` argument the view is given the object `find(request, value)` returns (404 for what
    the user may not see); any other member gets the refusal page, "Only the organisers of <club>
    <doing>.", with a link to `back(object)`."""
    def decorate(view):
        @functools.wraps(view)
        def checked(request, *args, **kwargs):
            obj = find(request, kwargs.pop(key))
            club = obj if isinstance(obj, Club) else obj.club
            if not is_organiser(request.user, club.pk):
                return refused(request, f"Only the organisers of {club.name} {doing}.", back=back(obj))
            return view(request, obj, *args, **kwargs)
        return checked
    return decorate


def can_design(user, club_id):
    return role_in(user, club_id) in {Role.ORGANISER, Role.DESIGNER}


def can_act_for_army(user, army):
    """Players act only for their own army; organisers may act for either side."""
    club_id = army_club_id(army)
    role = role_in(user, club_id)
    if role == Role.ORGANISER:
        return True
    return role is not None and army.owner_id == user.pk


def army_club_id(army):
    if army.battle_id:
        return army.battle.club_id
    if army.campaign_id:
        return army.campaign.club_id
    return army.scenario.club_id


# Battles at the table ---------------------------------------------------------------------------

def watcher_role(user_id, battle_id):
    """The club role of a battle's watcher, known only by id (the poll token carries no session),
    or None once they are no longer a member of the battle's club, or their account was deactivated
    (signing in and every page refuse it; the token outlives that by up to 12 hours). One query."""
    return (Membership.objects.filter(user_id=user_id, user__is_active=True, club__battles__pk=battle_id)
            .values_list("role", flat=True).first())


def watch_refused(held_epoch, epoch):
    """Why a battle page's poll token may no longer watch, or "". `epoch` is what the poll's one query
    read for the token's membership (None: gone), `held_epoch` what the token was issued with."""
    if epoch is None:
        return "You are no longer a member of this battle's club."
    if epoch == SWITCHED_OFF:
        return "Your account has been switched off: ask the club's organiser."
    if epoch != held_epoch:
        return ("You signed out, set a new password, or your role in the club or the side you play changed "
                "since this page opened: reload the page (and sign in again if asked).")
    return ""


def sides_commanded(user_id, role, armies):
    """The sides a member may act for in a battle: organisers command both, a player their own
    army's side, anyone else none. `armies` are the battle's Army rows."""
    if role == Role.ORGANISER:
        return frozenset({"A", "B"})
    if role is None:
        return frozenset()
    return frozenset(a.side for a in armies if a.owner_id is not None and a.owner_id == user_id)


# Putting the table's record right, not acting for a side: a piece placed wrong or knocked over is set where it
# stands outside any activation, which a player could use to move their own pieces out of turn.
ORGANISERS_ONLY = frozenset({"correct_position"})


def may_take_action(role, action):
    """Whether a member who commands a side here may take this battle action: organisers any, players all
    but the organisers' own."""
    return role == Role.ORGANISER or action not in ORGANISERS_ONLY


# Rolls that decide who goes first: a player who could undo one could roll it again until it suits.
REROLL_ONLY_BY_ORGANISERS = frozenset({"lg_initiative"})


def may_undo(user_id, role, actor_id, action=""):
    """Organisers may undo anything; a player only what they did themselves, but not an initiative roll."""
    if role == Role.ORGANISER:
        return True
    return (role is not None and actor_id is not None and actor_id == user_id
            and action not in REROLL_ONLY_BY_ORGANISERS)


def design_clubs(user):
    """Clubs where the user may author sheets and scenarios: those they organise or design for."""
    if not user.is_authenticated:
        return Club.objects.none()
    return Club.objects.filter(
        memberships__user=user, memberships__role__in=[Role.ORGANISER, Role.DESIGNER]
    ).distinct()


def can_edit_sheet(user, sheet):
    """Library sheets (no club) are read-only for everyone: clubs clone them."""
    return sheet.club_id is not None and can_design(user, sheet.club_id)


def can_edit_scenario(user, scenario):
    return can_design(user, scenario.club_id)


def battle_or_404(user, pk):
    """A battle of one of the user's clubs, carrying `viewer_role` (the user's role in its club, read
    in the same join and remembered for role_in); 404 for anyone else's, so ids reveal nothing."""
    from apps.battles.snapshot import member_battle

    battle = member_battle(user.pk, pk) if user.is_authenticated else None
    if battle is None:
        raise Http404("No battle found.")
    remember_role(user, battle.club_id, battle.viewer_role)
    return battle


def club_or_404(user, slug):
    """A club the user belongs to, by its slug; anyone else's is not found."""
    return get_or_404(clubs_for(user), slug=slug)


def may_manage_members(user, club_id):
    """Organisers change roles, remove members, invite and revoke invitations."""
    return is_organiser(user, club_id)


def organisers_left(club_id, *, without_user_id=None):
    """How many organisers the club keeps if `without_user_id` stops being one. Call it with the
    club row locked (see club_views.locked_club) so two organisers cannot both step down at once.
    A deactivated account is not counted: it can no longer sign in to run the club."""
    organisers = Membership.objects.filter(club_id=club_id, role=Role.ORGANISER, user__is_active=True)
    if without_user_id is not None:
        organisers = organisers.exclude(user_id=without_user_id)
    return organisers.count()


def invites_for(user, club_id):
    """The club's invitations, for its organisers only."""
    from apps.campaigns.models import Invite

    if not may_manage_members(user, club_id):
        return Invite.objects.none()
    return Invite.objects.filter(club_id=club_id)


# Spectators ------------------------------------------------------------------------------------

def may_manage_spectators(user, club_id):
    """Organisers hand out and revoke read-only spectator links to their club's battles."""
    return is_organiser(user, club_id)


def spectator_links_for(user):
    """Spectator links of the battles the user can see (organisers manage them; 404 for others' clubs)."""
    from apps.campaigns.models import SpectatorLink

    return SpectatorLink.objects.filter(battle__club__in=clubs_for(user))


def club_members(club_id):
    """Who may command a side: the club's members whose accounts still sign in."""
    return list(Membership.objects.filter(club_id=club_id, user__is_active=True).order_by("user__username")
                .values_list("user_id", "user__username"))
