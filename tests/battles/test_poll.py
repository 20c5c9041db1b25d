"""The poll every phone at the table sends every two seconds: nothing new costs one small query and
never touches the session; a change sends only the panels that changed; a bad token gets 403."""

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.battles import services, watch
from apps.battles.models import Battle, LogEntry
from apps.campaigns.models import Membership
from tests.battles.test_views import he_attack, sid, uid, w  # noqa: F401 - w is the battle fixture
from tests.campaigns.test_pages import body, fast_passwords, page  # noqa: F401

HTMX = {"HTTP_HX_REQUEST": "true"}


def poll_url(w):
    return reverse("battle_poll", args=[w.battle.pk])


def held(w, user=None, **overrides):
    """What a page that has just opened holds."""
    battle = Battle.objects.get(pk=w.battle.pk)
    params = {"v": battle.version, "m": battle.map_version, "after": newest(w),
              "t": watch.issue(battle.pk, (user or w.alice).pk)}
    params.update(overrides)
    return params


def newest(w):
    return w.battle.log_entries.order_by("-seq").values_list("seq", flat=True).first() or 0


def attack(w, dice=("3", "4")):
    inputs = {k: v for k, v in he_attack(w).items() if k in ("weapon", "structure", "target", "hit")}
    return services.perform(battle_id=w.battle.pk, user=w.alice, action="ba_he", inputs=inputs, attacker=uid(w.gun),
                            dice_values=list(dice))


def test_unchanged_is_204_after_one_query_without_the_session(w):
    client = Client()
    client.force_login(w.alice)  # a session cookie is sent; the poll must not read it
    params = held(w)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(poll_url(w), params, **HTMX)
    assert response.status_code == 204 and response.content == b""
    assert len(queries.captured_queries) == 1, [q["sql"] for q in queries.captured_queries]
    sql = queries.captured_queries[0]["sql"]
    assert "battles_battle" in sql and "version" in sql and "map_version" in sql
    # The token's membership and its epoch are checked in that same query (test_poll_withdrawn.py).
    assert "campaigns_membership" in sql and "watch_epoch" in sql
    assert "django_session" not in sql
    # The user row is not loaded: that same statement only reads whether the account is still active.
    assert sql.count("auth_user") == 1 and "is_active" in sql and "password" not in sql
    assert "Cookie" not in response.get("Vary", "")  # the session was never accessed
    assert not response.cookies


def test_unchanged_with_django_assert_num_queries(client, w, django_assert_num_queries):
    params = held(w)
    with django_assert_num_queries(1):
        assert client.get(poll_url(w), params, **HTMX).status_code == 204


def test_the_token_is_the_only_credential(w):
    """No session at all (another device, or the cookie expired): the token still answers."""
    anonymous = Client()
    assert anonymous.get(poll_url(w), held(w), **HTMX).status_code == 204
    attack(w)
    response = anonymous.get(poll_url(w), held(w, v=1, m=1, after=0), **HTMX)
    assert response.status_code == 200


@pytest.mark.parametrize("token", ["", "garbage", "eyJiIjoxfQ:1abc:def"])
def test_a_bad_token_is_403(client, w, token):
    assert client.get(poll_url(w), held(w, t=token), **HTMX).status_code == 403


def test_a_token_for_another_battle_is_403(client, w):
    token = watch.issue(w.other_battle.pk, w.olga.pk)
    assert client.get(poll_url(w), held(w, t=token), **HTMX).status_code == 403


def test_an_expired_token_is_403(client, w, monkeypatch):
    params = held(w)
    monkeypatch.setattr(watch, "MAX_AGE", -1)
    assert client.get(poll_url(w), params, **HTMX).status_code == 403


def test_a_changed_battle_is_checked_against_membership(client, w):
    params = held(w)
    attack(w)
    Membership.objects.filter(user=w.alice).delete()
    response = client.get(poll_url(w), params, **HTMX)
    assert response.status_code == 403


def test_a_deactivated_account_watches_no_more(client, w):
    """An account switched off (is_active=False: a member who left on bad terms, a stolen account) is
    refused by every page at once; its open battle page's poll token, good for 12 hours, must not keep
    sending it the battle."""
    params = held(w)
    attack(w)
    type(w.alice).objects.filter(pk=w.alice.pk).update(is_active=False)
    response = client.get(poll_url(w), params, **HTMX)
    assert response.status_code == 403


def test_changed_returns_the_new_entry_the_header_and_what_the_entry_changed(client, w):
    barn = w.structure("Barn", x=60, y=40)
    params = held(w, card=sid(w.house))
    entry = attack(w)
    # The shell left the house standing but the squad inside it changed, and the gun has fired.
    assert not entry.undo["structures"] and set(entry.undo["units"]) == {uid(w.gun), uid(w.squad)}
    with CaptureQueriesContext(connection) as queries:
        response = client.get(poll_url(w), params, **HTMX)
    assert response.status_code == 200
    assert not any("django_session" in q["sql"] for q in queries.captured_queries)
    html = body(response)
    battle = Battle.objects.get(pk=w.battle.pk)
    assert response["X-Battle-Version"] == str(battle.version)
    poller = page(response).find("poller")
    assert poller.attrs["hx-swap-oob"] == "true"
    values = {i.attrs["name"]: i.attrs["value"] for i in poller.find_all("input")}
    assert values == {"v": str(battle.version), "m": str(battle.map_version), "after": str(entry.seq),
                      "t": params["t"]}
    assert re.search(r'<div hx-swap-oob="afterbegin:#log-list">\s*<li class="log-turn" id="log-turn-%d">' % entry.seq,
                     html)
    assert f'id="log-{entry.seq}"' in html and entry.summary in html
    assert '<header id="battle-header"' in html and 'hx-swap-oob="true"' in html
    assert '<section id="turns"' in html and '<section id="card" class="panel panel-card"' in html
    # The page's map was one change behind and that change is the new entry: only the house the squad
    # stands in (on the map and in the list, SVG parsed inside its own <svg>), the units on the table
    # and the two units' rows are redrawn.
    pieces = re.findall(r'<(\w+) id="(map-s\d+|map-units|structure-\d+|unit-\d+)"[^>]*hx-swap-oob="true"', html)
    assert sorted(name for _, name in pieces) == sorted(
        [f"map-{sid(w.house)}", "map-units", f"structure-{w.house.pk}", f"unit-{w.gun.pk}", f"unit-{w.squad.pk}"])
    assert re.search(r'<template><svg>\s*<a id="map-%s"' % sid(w.house), html)
    # By its ids, not its bare "s23", which a random token in the answer may hold.
    assert f'id="map-{sid(barn)}"' not in html and f'id="structure-{barn.pk}"' not in html
    for panel in ('<div id="map"', '<ul id="structures"', '<div id="armies"'):
        assert panel not in html, panel
    assert 'id="attack-form"' not in html  # another player's half-filled form is left alone
    # Asking again with what the answer gave: nothing new.
    again = {**params, **values}
    assert client.get(poll_url(w), again, **HTMX).status_code == 204


def test_a_page_further_behind_gets_the_whole_map_and_lists(client, w):
    """Its map is older than the entries it lacks can explain: only a whole redraw is safe."""
    params = held(w, card=sid(w.house))
    attack(w)
    behind = {**params, "m": params["m"] - 1}
    html = body(client.get(poll_url(w), behind, **HTMX))
    for panel in ('<div id="map" class="map-panel" hx-swap-oob="true">', '<ul id="structures"',
                  '<div id="armies" class="army-list" hx-swap-oob="true">', '<section id="card"'):
        assert panel in html, panel
    assert "<template>" not in html


def test_a_page_that_missed_an_attack_and_its_undo_gets_what_they_touched(client, w):
    """The undo keeps what it took back, as the attack kept what it changed: a page that missed both
    redraws the house the squad stands in and the two units' rows, as after the attack alone. It got the
    whole map, as the undo's record said where its units stand again, not where it took them from."""
    params = held(w)
    attack(w)
    services.undo_last(battle_id=w.battle.pk, user=w.alice)
    html = body(client.get(poll_url(w), params, **HTMX))
    pieces = re.findall(r'<(\w+) id="(map-s\d+|map-units|structure-\d+|unit-\d+)"[^>]*hx-swap-oob="true"', html)
    assert sorted(name for _, name in pieces) == sorted(
        [f"map-{sid(w.house)}", "map-units", f"structure-{w.house.pk}", f"unit-{w.gun.pk}", f"unit-{w.squad.pk}"])
    assert '<div id="map"' not in html
    assert len(re.findall(r'<li id="log-\d+"', html)) == 2  # the attack (marked undone) and the undo


def test_a_page_that_missed_an_undo_written_before_undos_kept_what_they_took_back_gets_the_whole_map(client, w):
    """Such an undo's record says only what it restored: where its units stood before it cannot be told."""
    params = held(w)
    attack(w)
    undo = services.undo_last(battle_id=w.battle.pk, user=w.alice)
    LogEntry.objects.filter(pk=undo.pk).update(undo={})
    html = body(client.get(poll_url(w), params, **HTMX))
    assert '<div id="map" class="map-panel" hx-swap-oob="true">' in html and "<template>" not in html


def test_a_version_only_change_leaves_the_map_alone(client, w):
    params = held(w)
    services.turn_action(battle_id=w.battle.pk, user=w.alice, action="upkeep")  # nothing burns: no row changes
    battle = Battle.objects.get(pk=w.battle.pk)
    assert battle.version == params["v"] + 1 and battle.map_version == params["m"]
    response = client.get(poll_url(w), params, **HTMX)
    assert response.status_code == 200
    html = body(response)
    assert 'id="map"' not in html and 'id="structures"' not in html and 'id="card"' not in html
    assert 'id="battle-header"' in html and 'id="turns"' in html and "upkeep" in html


def test_a_side_handed_to_another_player_is_redrawn_on_every_phone(client, w):
    """No log entry says who plays a side: a phone still learns it, with the armies panel redrawn."""
    from apps.campaigns import services as campaign_services

    params = held(w)
    campaign_services.set_battle_commander(battle_id=w.battle.pk, user=w.organiser, side="B", owner_id=w.alice.pk)
    response = client.get(poll_url(w), params, **HTMX)
    assert response.status_code == 200
    armies = page(response).find("armies")
    assert armies is not None and "Played by alice" in armies.text() and "Played by bob" not in armies.text()


def test_the_same_turn_keeps_one_heading(client, w):
    attack(w, ("1", "1"))
    params = held(w)
    services.turn_action(battle_id=w.battle.pk, user=w.alice, action="upkeep")
    html = body(client.get(poll_url(w), params, **HTMX))
    # The heading above the entry this page held moves above the new one.
    first = params["after"]
    assert f'<li id="log-turn-{first}" hx-swap-oob="delete"></li>' in html
    assert f'id="log-turn-{first + 1}"' in html


def test_undone_entries_are_replaced_struck_through(client, w):
    entry = attack(w)
    params = held(w)
    undo = services.undo_last(battle_id=w.battle.pk, user=w.alice)
    response = client.get(poll_url(w), params, **HTMX)
    replaced = page(response).find(f"log-{entry.seq}")
    assert replaced.attrs["hx-swap-oob"] == "true" and "is-undone" in replaced.attrs["class"]
    assert f"Undone by #{undo.seq}" in replaced.text()
    assert f'id="log-{undo.seq}"' in body(response)


def test_a_page_far_behind_gets_the_whole_log(client, w):
    from apps.battles.log import append_entry

    params = held(w)
    for n in range(60):
        append_entry(w.battle, action="note", summary=f"Note {n}")
    Battle.objects.bump_version(w.battle.pk)
    response = client.get(poll_url(w), params, **HTMX)
    log = page(response).find("battle-log")
    assert log.attrs["hx-swap-oob"] == "true"
    assert len(log.find_all("li", cls="log-entry")) == 50
    values = {i.attrs["name"]: i.attrs["value"] for i in page(response).find("poller").find_all("input")}
    assert values["after"] == "60"


def test_the_poll_view_holds_nothing_in_memory(w):
    """Two phones (two clients, no shared state but the database) see the same answers."""
    import apps.battles.views as views

    mutable = {name for name, value in vars(views).items()
               if not name.startswith("__") and isinstance(value, (dict, list, set)) and name.isupper()}
    assert mutable == set(), mutable
    first, second = Client(), Client()
    params = held(w)
    attack(w)
    def answer(client):
        # One-time tokens (CSRF, the turn buttons') differ by design; everything else must not.
        return re.sub(r'name="(csrfmiddlewaretoken|client_token)" value="[^"]+"', "", body(
            client.get(poll_url(w), params, **HTMX)))

    assert answer(first) == answer(second)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_changed_poll_reads_the_battle_and_its_log_as_of_one_moment():
    """An action another worker commits while a poll answer is being drawn must not show up in the
    log part of the answer but not in its versions (or the other way round): the reads share one
    PostgreSQL snapshot."""
    import threading

    from apps.battles.views import one_moment
    from tests import factories

    battle = factories.make_world(club_name="Moment club").battle
    with one_moment():
        with connection.cursor() as cursor:
            cursor.execute("SHOW transaction_isolation")
            assert cursor.fetchone()[0] == "repeatable read"
        before = Battle.objects.get(pk=battle.pk).version

        def another_worker():
            Battle.objects.filter(pk=battle.pk).update(version=before + 1)
            connection.close()

        worker = threading.Thread(target=another_worker)
        worker.start()
        worker.join()
        assert Battle.objects.get(pk=battle.pk).version == before  # still the moment the answer began
    assert Battle.objects.get(pk=battle.pk).version == before + 1
