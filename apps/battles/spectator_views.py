"""Spectator links: a battle watched live, read-only, without an account.

An organiser makes a link (a SpectatorLink row); its URL carries the signed link id and secret
(`watch.link_token`). The page shows the map, the structures, the armies and the log, and polls
like the battle page with a token naming the link instead of a user. Revoking the link stops both
the page and the poll at once: the poll's one query also asks whether the link is still live.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from apps.battles import watch
from apps.battles.models import Battle
from apps.battles.views import Viewer, _int, battle_context, load_board, one_moment, poll_refused, poller_context, \
    updates_context, updates_response
from apps.campaigns import permissions
from apps.campaigns.account_forms import SpectatorLinkForm
from apps.campaigns.club_views import club_context, club_url
from apps.campaigns.models import SpectatorLink
from config.responses import refused, see_other

REVOKED = "This spectator link was revoked. Ask the club's organisers for a new one."
SPECTATOR = Viewer(None, None)  # no account, no club role, no side: nothing to act on


def link_from_token(token):
    """The link a genuine URL token names, or None (forged, mangled, or for a deleted link)."""
    try:
        link_id, secret = watch.read_link_token(token)
    except watch.InvalidToken:
        return None
    link = (SpectatorLink.objects.select_related("battle__club", "battle__campaign", "battle__scenario")
            .filter(pk=link_id).first())
    if link is None or not watch.same_secret(link, secret):
        return None
    return link


@never_cache
@require_GET
def spectator(request, token):
    link = link_from_token(token)
    if link is None:
        return refused(request, "This spectator link is not valid: check that it was copied whole.", status=404,
                       title="Spectator link not found")
    if link.revoked_at is not None:
        return refused(request, REVOKED, status=403, title="Spectator link revoked")
    battle = link.battle
    board = load_board(battle)
    context = battle_context(battle, SPECTATOR, board=board)
    context.update(read_only=True, card_sid="", card_structure=None, form=None, link=link,
                   **poller_context(battle, context["log_total"], watch.issue_spectator(battle.pk, link.pk)))
    return render(request, "battles/spectator.html", context)


@require_GET
def spectator_poll(request, pk):
    """The battle poll for a spectator: 204 after one query when nothing changed (that query also
    checks the link is not revoked), the changed panels otherwise, read-only."""
    try:
        link_id = watch.read_spectator(request.GET.get("t"), pk)
    except watch.InvalidToken:
        return poll_refused("This page's watch token is invalid or has expired: reload the page.")
    row = Battle.objects.versions(pk, spectator_link_id=link_id)
    if row is None:
        raise Http404("No such battle.")
    version, map_version, live = row
    if not live:
        return poll_refused(REVOKED)
    if (version, map_version) == (_int(request.GET.get("v")), _int(request.GET.get("m"))):
        return HttpResponse(status=204)
    with one_moment():
        battle = Battle.objects.select_related("campaign", "scenario").get(pk=pk)
        board = load_board(battle)
        context = updates_context(battle, SPECTATOR, after=_int(request.GET.get("after"), 0),
                                  map_known=_int(request.GET.get("m")), card="", board=board,
                                  token=request.GET.get("t"))
    context["read_only"] = True
    return updates_response(request, context)


# Organisers hand links out and take them back -----------------------------------------------------

@login_required
@require_POST
def link_new(request, pk):
    battle = permissions.get_or_404(permissions.battles_for(request.user).select_related("club"), pk=pk)
    club = battle.club
    if not permissions.may_manage_spectators(request.user, club.pk):
        return refused(request, "Only the club's organisers hand out spectator links.", back=club_url(club))
    form = SpectatorLinkForm(request.POST, prefix=f"b{battle.pk}")
    if not form.is_valid():
        return render(request, "clubs/club.html", club_context(request, club, link_errors={battle.pk: form}),
                      status=400)
    SpectatorLink.objects.create(battle=battle, secret=watch.new_link_secret(), label=form.cleaned_data["label"],
                                 created_by=request.user)
    messages.success(request, f"New spectator link for {battle.name}: anyone holding it can watch, read-only, "
                              "until you revoke it.")
    return see_other(club_url(club, f"spectators-{battle.pk}"))


@login_required
@require_POST
def link_revoke(request, pk):
    link = permissions.get_or_404(permissions.spectator_links_for(request.user).select_related("battle__club"), pk=pk)
    club = link.battle.club
    if not permissions.may_manage_spectators(request.user, club.pk):
        return refused(request, "Only the club's organisers revoke spectator links.", back=club_url(club))
    SpectatorLink.objects.filter(pk=link.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    messages.success(request, f"Spectator link{f' “{link.label}”' if link.label else ''} for {link.battle.name} "
                              "revoked: it no longer opens the battle.")
    return see_other(club_url(club, f"spectators-{link.battle_id}"))

