"""A battle page's poll token outlives what it was issued for by up to 12 hours: the member signs
out, changes their password, is removed from the club or given another role, or their account is
switched off. From then on the token must read nothing, not even "unchanged", while a page opened
afresh (a fresh token) still works. Each test goes through the pages as a phone does: the token is
the one the battle page put in #poller."""

import pytest
from django.test import Client
from django.urls import reverse

from apps.battles.models import Battle
from apps.campaigns.models import Membership, Role
from tests.battles.test_poll import HTMX, poll_url
from tests.battles.test_views import w  # noqa: F401 - the battle fixture
from tests.campaigns.test_pages import body, fast_passwords, page  # noqa: F401 - autouse: cheap hashing

NEW_PASSWORD = "Trench-coffee-1916"


def attack(w):
    """Something new in the battle, as many times as a test needs (a unit acts once a turn)."""
    from apps.battles.log import append_entry

    attack.count = getattr(attack, "count", 0) + 1
    entry = append_entry(Battle.objects.get(pk=w.battle.pk), action="note", summary=f"Shells on the ridge {attack.count}")
    Battle.objects.bump_version(w.battle.pk)
    return entry


def opened(client, w):
    """What the battle page gave this phone to poll with."""
    response = client.get(reverse("battle", args=[w.battle.pk]))
    assert response.status_code == 200
    return {i.attrs["name"]: i.attrs["value"] for i in page(response).find("poller").find_all("input")}


def phone(user):
    client = Client()
    client.force_login(user)
    return client


def current(w, held):
    battle = Battle.objects.get(pk=w.battle.pk)
    return {**held, "v": battle.version, "m": battle.map_version}


def assert_refused(w, held, why):
    """Refused on the changed path (which would send the log and panels) and on the unchanged one
    (which would tell an outsider whether the battle moved), with a reason the page can show and the
    reload htmx obeys; and nothing of the battle in the answer."""
    entry = attack(w)
    for params in (held, current(w, held)):
        response = Client().get(poll_url(w), params, **HTMX)  # the token alone: no session needed
        assert response.status_code == 403, (response.status_code, body(response)[:200])
        assert response["HX-Refresh"] == "true" and response["Content-Type"].startswith("text/plain")
        assert why in body(response)
        assert entry.summary not in body(response) and "log-" not in body(response)


def assert_fresh_token_works(w, client):
    """A page opened now polls as before: nothing new is 204, a change is sent."""
    held = opened(client, w)
    assert Client().get(poll_url(w), held, **HTMX).status_code == 204
    entry = attack(w)
    response = Client().get(poll_url(w), held, **HTMX)
    assert response.status_code == 200 and entry.summary in body(response)


def test_signing_out_ends_the_pages_watch(w):
    client = phone(w.alice)
    held = opened(client, w)
    assert client.post(reverse("logout")).status_code in (200, 302)
    assert_refused(w, held, "signed out")
    client.force_login(w.alice)
    assert_fresh_token_works(w, client)


def test_signing_out_on_one_phone_reloads_the_others_which_get_a_fresh_token(w):
    """The epoch is the member's, not the session's: a second phone still signed in reloads (403,
    HX-Refresh) and its fresh page polls again."""
    laptop, second = phone(w.alice), phone(w.alice)
    held = opened(second, w)
    laptop.post(reverse("logout"))
    assert_refused(w, held, "signed out")
    assert_fresh_token_works(w, second)


def test_a_password_change_ends_every_pages_watch(w):
    """A stolen token, or a page left open on a phone someone else now holds, stops with the new password."""
    left_open = opened(phone(w.alice), w)
    client = phone(w.alice)
    response = client.post(reverse("password_change"), {
        "old_password": "x", "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert response.status_code == 302, body(response)[:500]
    assert_refused(w, left_open, "password")
    assert_fresh_token_works(w, client)  # the session that changed it stays signed in


def test_a_password_set_anywhere_else_ends_the_watch_too(w):
    """The reset link, the admin and `manage.py changepassword` all end in set_password and save."""
    held = opened(phone(w.alice), w)
    w.alice.set_password(NEW_PASSWORD)
    w.alice.save()
    assert_refused(w, held, "password")
    assert_fresh_token_works(w, phone(w.alice))


def test_a_removed_member_reads_nothing_not_even_unchanged(w):
    held = opened(phone(w.alice), w)
    membership = Membership.objects.get(club=w.battle.club, user=w.alice)
    response = phone(w.organiser).post(reverse("club_member_remove", args=[w.battle.club.slug, membership.pk]))
    assert response.status_code == 303
    assert_refused(w, held, "no longer a member")
    # Back in the club (a new membership): the old page's token stays dead, a new page works.
    Membership.objects.create(club=w.battle.club, user=w.alice, role=Role.PLAYER)
    assert_refused(w, held, "no longer a member")
    assert_fresh_token_works(w, phone(w.alice))


def test_a_member_who_left_reads_nothing(w):
    held = opened(phone(w.bob), w)
    bob = phone(w.bob)
    assert bob.post(reverse("club_leave", args=[w.battle.club.slug])).status_code == 303
    assert_refused(w, held, "no longer a member")


@pytest.mark.parametrize("new_role", [Role.PLAYER, Role.DESIGNER])
def test_a_changed_role_reloads_the_page(w, new_role):
    """An organiser made a player keeps no page drawn for an organiser (its organisers' forms are
    never redrawn by the poll): the page reloads and is drawn for the role they have now."""
    Membership.objects.filter(club=w.battle.club, user=w.alice).update(role=Role.ORGANISER)
    client = phone(w.alice)
    held = opened(client, w)
    membership = Membership.objects.get(club=w.battle.club, user=w.alice)
    response = phone(w.organiser).post(reverse("club_member_role", args=[w.battle.club.slug, membership.pk]),
                                       {"role": new_role})
    assert response.status_code == 303
    assert_refused(w, held, "role")
    assert_fresh_token_works(w, client)


def test_a_role_left_as_it_was_keeps_the_page(w):
    held = opened(phone(w.alice), w)
    membership = Membership.objects.get(club=w.battle.club, user=w.alice)
    phone(w.organiser).post(reverse("club_member_role", args=[w.battle.club.slug, membership.pk]), {"role": Role.PLAYER})
    assert Client().get(poll_url(w), held, **HTMX).status_code == 204


def test_a_switched_off_account_reads_nothing(w):
    held = opened(phone(w.alice), w)
    w.alice.is_active = False
    w.alice.save()
    assert_refused(w, held, "switched off")


def test_an_account_switched_off_by_a_bulk_update_reads_nothing(w):
    """The admin's or the shell's queryset update() calls no save(), so no epoch moves: the poll's own
    query reads is_active."""
    held = opened(phone(w.alice), w)
    type(w.alice).objects.filter(pk=w.alice.pk).update(is_active=False)
    assert_refused(w, held, "switched off")


def test_another_members_sign_out_leaves_this_page_alone(w):
    held = opened(phone(w.alice), w)
    phone(w.bob).post(reverse("logout"))
    assert Client().get(poll_url(w), held, **HTMX).status_code == 204


def test_the_refusal_costs_the_unchanged_polls_one_query(w, django_assert_num_queries):
    """The epoch is read by the query the unchanged poll makes anyway: a live token costs one query,
    and so does a stale one's refusal (no session, no user row, no second look at the membership)."""
    client = phone(w.alice)
    held = opened(client, w)
    with django_assert_num_queries(1) as queries:
        assert Client().get(poll_url(w), held, **HTMX).status_code == 204
    assert "watch_epoch" in queries.captured_queries[0]["sql"]
    client.post(reverse("logout"))
    with django_assert_num_queries(1):
        assert Client().get(poll_url(w), held, **HTMX).status_code == 403


@pytest.mark.parametrize("through", ["campaign", "battle"])
def test_a_member_given_a_side_is_reloaded_into_playing_it_and_the_one_it_was_taken_from_out(w, through):
    """Exploratory test: an organiser gave a watching player side A ("Commanded by" on the campaign page); the
    player's open battle page kept saying "You are watching…" until they reloaded, since a page drawn for a
    watcher has no attack form to ask again when the battle changes. Their next poll now reloads the page (as a
    new role does), and it is drawn for the side they play; so is the page of the player it was taken from.
    Bob, whose side B stays his, keeps his page."""
    from django.contrib.auth.models import User

    from apps.armies.models import Army
    from apps.campaigns.models import Campaign

    carol = User.objects.create_user("carol", password="x")
    Membership.objects.create(club=w.battle.club, user=carol, role=Role.PLAYER)
    carols, alices, bobs = phone(carol), phone(w.alice), phone(w.bob)
    assert "You are watching" in body(carols.get(reverse("battle", args=[w.battle.pk])))
    held = {name: opened(client, w) for name, client in (("carol", carols), ("alice", alices), ("bob", bobs))}
    if through == "campaign":
        campaign = Campaign.objects.create(club=w.battle.club, name="Ridge", ruleset="ba")
        Army.objects.create(campaign=campaign, side="A", name="Side A", owner=w.alice)
        Battle.objects.filter(pk=w.battle.pk).update(campaign=campaign)
        url = reverse("campaign_commander", args=[campaign.pk])
    else:
        url = reverse("battle_commander", args=[w.battle.pk])
    assert phone(w.organiser).post(url, {"side": "A", "owner": carol.pk}).status_code in (302, 303)
    assert Army.objects.get(battle=w.battle, side="A").owner == carol

    assert_refused(w, held["carol"], "reload the page")
    assert_refused(w, held["alice"], "reload the page")
    response = Client().get(poll_url(w), current(w, held["bob"]), **HTMX)
    assert response.status_code == 204
    carols_page = body(carols.get(reverse("battle", args=[w.battle.pk])))
    assert "You are watching" not in carols_page and 'id="attack-form"' in carols_page
    assert "You are watching" in body(alices.get(reverse("battle", args=[w.battle.pk])))
    assert_fresh_token_works(w, carols)
