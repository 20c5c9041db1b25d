"""Spectator links: an organiser hands one out, anyone holding it watches the battle live without
an account and without any way to act; revoking it stops the page and the poll at once."""

import re

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.battles import watch
from apps.battles.models import Battle
from apps.campaigns.models import Membership, Role, Scenario, SpectatorLink
from tests.battles.test_poll import attack
from tests.battles.test_views import ZONES, map_zones, w  # noqa: F401 - w: the battle fixture
from tests.campaigns.test_pages import assert_csp_clean, body, fast_passwords  # noqa: F401

HTMX = {"HTTP_HX_REQUEST": "true"}


def make_link(w, **fields):
    return SpectatorLink.objects.create(battle=w.battle, secret=watch.new_link_secret(), created_by=w.organiser,
                                        **fields)


def page_url(link):
    return reverse("spectator", args=[watch.link_token(link)])


def poll_url(w):
    return reverse("spectator_poll", args=[w.battle.pk])


def held(w, link, **overrides):
    battle = Battle.objects.get(pk=w.battle.pk)
    newest = battle.log_entries.order_by("-seq").values_list("seq", flat=True).first() or 0
    return {"v": battle.version, "m": battle.map_version, "after": newest,
            "t": watch.issue_spectator(battle.pk, link.pk), **overrides}


def signed(account):
    client = Client()
    client.force_login(account)
    return client


MEMBERS_ONLY = re.compile(r"/battles/\d+/(card|form|log|resolve|undo|turn)/|/structures/|/sheets/")


def assert_read_only(html):
    assert "<form" not in html, "a spectator is offered a form"
    assert "hx-post" not in html
    found = MEMBERS_ONLY.search(html)
    assert found is None, f"a link into the members' pages: {found and found.group(0)}"


# ---------------------------------------------------------------------------------- making links

def test_an_organiser_makes_a_link_and_the_club_page_shows_it(w):
    client = signed(w.organiser)
    response = client.post(reverse("spectator_link_new", args=[w.battle.pk]), {f"b{w.battle.pk}-label": "Screen"})
    assert response.status_code == 303
    link = SpectatorLink.objects.get(battle=w.battle)
    assert link.label == "Screen" and link.created_by == w.organiser and link.revoked_at is None
    assert len(link.secret) >= 20
    club_page = body(client.get(reverse("club", args=[w.club.slug])))
    assert f"http://testserver{page_url(link)}" in club_page


def test_a_player_cannot_make_or_revoke_a_link(w):
    link = make_link(w)
    client = signed(w.alice)
    response = client.post(reverse("spectator_link_new", args=[w.battle.pk]), {})
    assert response.status_code == 403 and "organisers" in body(response)
    response = client.post(reverse("spectator_link_revoke", args=[link.pk]))
    assert response.status_code == 403
    assert SpectatorLink.objects.count() == 1 and SpectatorLink.objects.get().revoked_at is None


def test_another_clubs_organiser_finds_neither_battle_nor_link(w):
    link = make_link(w)
    client = signed(w.olga)
    assert client.post(reverse("spectator_link_new", args=[w.battle.pk]), {}).status_code == 404
    assert client.post(reverse("spectator_link_revoke", args=[link.pk])).status_code == 404
    assert SpectatorLink.objects.count() == 1 and SpectatorLink.objects.get().revoked_at is None


def test_extra_fields_do_not_choose_the_battle_or_the_secret(w):
    client = signed(w.organiser)
    client.post(reverse("spectator_link_new", args=[w.battle.pk]), {
        "battle": w.other_battle.pk, "secret": "chosen", "revoked_at": "2000-01-01", "created_by": w.alice.pk,
    })
    link = SpectatorLink.objects.get()
    assert link.battle_id == w.battle.pk and link.secret != "chosen" and link.revoked_at is None
    assert link.created_by == w.organiser


# ---------------------------------------------------------------------------------- watching

def test_a_spectator_of_a_battle_not_started_is_not_told_to_start_it(w):
    """Exploratory test: the spectator page's turns panel said "an organiser of the club starts it here with
    'Start battle'", which a spectator can neither do nor see; a player's page still says it."""
    Battle.objects.filter(pk=w.battle.pk).update(status="setup")
    turns = re.sub(r"\s+", " ", body(Client().get(page_url(make_link(w)))).split('id="turns"')[1].split("</section>")[0])
    assert "starts it here" not in turns and "Start battle" not in turns
    assert "The battle has not started yet: the club's organisers start it at the table." in turns
    assert "starts it here" in body(signed(w.alice).get(reverse("battle", args=[w.battle.pk])))


def test_the_page_shows_map_structures_armies_and_log_read_only_without_an_account(w):
    link = make_link(w)
    attack(w)
    response = Client().get(page_url(link))
    assert response.status_code == 200
    html = body(response)
    assert_csp_clean(response)
    assert_read_only(html)
    assert 'id="map"' in html and 'id="structures"' in html and 'id="battle-log"' in html and 'id="armies"' in html
    assert "Brick house" in html and "Grenadiers" in html
    for entry in w.battle.log_entries.all():
        assert f'id="log-{entry.seq}"' in html
    assert f'hx-get="{poll_url(w)}"' in html
    token = re.search(r'name="t" value="([^"]+)"', html).group(1)
    link_id = watch.read_spectator(token, w.battle.pk)
    assert link_id == link.pk
    assert response["Cache-Control"].startswith("max-age=0")


def test_a_spectator_sees_the_scenarios_deployment_zones_on_the_map_and_after_a_redraw(w):
    """The spectator page draws the battle page's map, zones included (its scenario comes with the link's
    battle); so does its poll when it redraws the whole map."""
    Battle.objects.filter(pk=w.battle.pk).update(
        scenario=Scenario.objects.create(club=w.club, name="Crossroads", deployment_zones=ZONES))
    link = make_link(w)
    client = Client()
    response = client.get(page_url(link))
    assert response.status_code == 200
    assert [(side, rect, label) for side, rect, label, _ in map_zones(response)] == [
        ("map-zone zone-A", {"x": 0, "y": 0, "width": 48, "height": 9}, "Side A deploys"),
        ("map-zone zone-B", {"x": 0, "y": 27, "width": 48, "height": 9}, "Side B deploys"),
        ("map-zone zone-B", {"x": 42.5, "y": 9, "width": 5.5, "height": 18}, "Side B deploys")]
    attack(w)
    redrawn = client.get(poll_url(w), held(w, link, m=0), **HTMX)
    assert redrawn.status_code == 200 and '<div id="map" class="map-panel" hx-swap-oob="true">' in body(redrawn)
    assert len(map_zones(redrawn)) == 3
    assert_read_only(body(redrawn))


def test_a_link_keeps_one_address(w, monkeypatch):
    """The club page shows the address an organiser handed out last week, not a new one each time."""
    link = make_link(w)
    first = watch.link_token(link)
    monkeypatch.setattr("time.time", lambda: 2_000_000_000.0)
    assert watch.link_token(link) == first
    assert watch.read_link_token(first) == (link.pk, link.secret)


def test_a_member_token_or_a_tampered_link_opens_nothing(w):
    link = make_link(w)
    token = watch.link_token(link)
    client = Client()
    for bad in [token[:-2] + ("AA" if not token.endswith("AA") else "BB"), "garbage",
                watch.issue(w.battle.pk, w.alice.pk)]:
        response = client.get(reverse("spectator", args=[bad]))
        assert response.status_code == 404 and "not valid" in body(response), bad
    # A genuine signature over the right id but another secret: a link made and deleted, its id reused.
    impostor = SpectatorLink(pk=link.pk, battle=w.battle, secret="another-secret")
    assert client.get(page_url(impostor)).status_code == 404


def test_the_poll_is_one_query_without_the_session_and_read_only_when_something_changed(w):
    link = make_link(w)
    client = Client()
    params = held(w, link)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(poll_url(w), params, **HTMX)
    assert response.status_code == 204
    assert len(queries.captured_queries) == 1
    sql = queries.captured_queries[0]["sql"]
    assert "django_session" not in sql and "auth_user" not in sql
    assert not response.cookies

    attack(w)
    response = client.get(poll_url(w), params, **HTMX)
    assert response.status_code == 200
    html = body(response)
    assert f'<g id="map-s{w.house.pk}"' in html and 'hx-swap-oob' in html  # drawn, not a link
    assert_read_only(html)
    assert f'hx-get="{poll_url(w)}"' in html  # the next poll still asks the spectator poll
    whole = body(client.get(poll_url(w), {**params, "m": params["m"] - 1}, **HTMX))
    assert '<div id="map"' in whole
    assert_read_only(whole)


def test_tokens_do_not_cross_between_members_and_spectators(w):
    link = make_link(w)
    client = Client()
    member = {**held(w, link), "t": watch.issue(w.battle.pk, w.alice.pk)}
    assert client.get(poll_url(w), member, **HTMX).status_code == 403
    spectator = held(w, link)
    assert client.get(reverse("battle_poll", args=[w.battle.pk]), spectator, **HTMX).status_code == 403
    other_battle = {**held(w, link), "t": watch.issue_spectator(w.other_battle.pk, link.pk)}
    assert client.get(poll_url(w), other_battle, **HTMX).status_code == 403
    # A token for another battle's link used on this battle: the link is not this battle's.
    theirs = SpectatorLink.objects.create(battle=w.other_battle, secret="x" * 24)
    forged = {**held(w, link), "t": watch.issue_spectator(w.battle.pk, theirs.pk)}
    assert client.get(poll_url(w), forged, **HTMX).status_code == 403


# ---------------------------------------------------------------------------------- revoking

def test_revoking_stops_the_page_and_the_poll(w):
    link = make_link(w)
    client = Client()
    params = held(w, link)
    assert client.get(page_url(link)).status_code == 200
    response = signed(w.organiser).post(reverse("spectator_link_revoke", args=[link.pk]))
    assert response.status_code == 303
    link.refresh_from_db()
    assert link.revoked_at is not None

    response = client.get(page_url(link))
    assert response.status_code == 403
    assert "This spectator link was revoked" in body(response)
    assert "Nothing was changed" not in body(response)  # a spectator only opened a page
    # Nothing changed since the page opened, and still refused, in that same one query.
    with CaptureQueriesContext(connection) as queries:
        response = client.get(poll_url(w), params, **HTMX)
    assert response.status_code == 403 and "This spectator link was revoked" in body(response)
    assert response["HX-Refresh"] == "true"  # htmx reloads into the refusal page
    assert len(queries.captured_queries) == 1
    attack(w)
    assert client.get(poll_url(w), params, **HTMX).status_code == 403


def test_revoking_twice_keeps_the_first_time(w):
    link = make_link(w, revoked_at=timezone.now() - timezone.timedelta(days=1))
    first = link.revoked_at
    signed(w.organiser).post(reverse("spectator_link_revoke", args=[link.pk]))
    link.refresh_from_db()
    assert link.revoked_at == first


def test_other_links_of_the_battle_keep_working(w):
    kept, revoked = make_link(w, label="kept"), make_link(w, label="gone")
    signed(w.organiser).post(reverse("spectator_link_revoke", args=[revoked.pk]))
    assert Client().get(page_url(kept)).status_code == 200
    assert Client().get(page_url(revoked)).status_code == 403


def test_a_link_survives_its_maker_leaving_but_not_the_battle(w):
    link = make_link(w)
    Membership.objects.filter(user=w.organiser).update(role=Role.PLAYER)
    assert Client().get(page_url(link)).status_code == 200
    w.battle.delete()
    assert Client().get(page_url(link)).status_code == 404
