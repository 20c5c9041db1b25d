"""The demo's LaserGrenadiers battle, Relay Station, played on two phones (390×844, touch) from the
start of turn 1 to the start of turn 2 without a reload: alice runs the upkeep and enters both sides'
initiative dice, taps the North pillbox on the map and fires the marines' laser cannon at it with her own
die; bob's phone sees the hit arrive by the poll, then activates a raider; both sides pass twice in turn
and turn 2 opens on both phones. The `watch` fixture fails the test on any console error, uncaught
exception or CSP violation on either phone."""

import re

import pytest
from playwright.sync_api import expect

from apps.armies.models import Unit
from apps.battles.models import Battle, LogEntry
from apps.structures.models import Structure
from tests.browser.test_battle_screen import (POLL_WAIT_MS, assert_not_reloaded, check, choose, die, phone_at,
                                              swapped)

pytestmark = [pytest.mark.browser]

RELAY = "Relay Station — session 1"


def turn_button(page, action):
    return page.locator(f'#turns button[data-action="{action}"]')


def tap_turn(page, action):
    with swapped(page, "#turns"):
        turn_button(page, action).click()


def test_turn_1_of_the_relay_station_on_two_phones(live_server, demo, watch):
    battle = Battle.objects.get(name=RELAY)
    url = f"{live_server.url}/battles/{battle.pk}/"
    pillbox = Structure.objects.get(battle=battle, name="North pillbox")
    sid = f"s{pillbox.pk}"
    unit = {u.name: f"u{u.pk}" for u in Unit.objects.filter(army__battle=battle)}

    bob, bob_loaded = phone_at(watch, live_server, url, "bob")
    alice, alice_loaded = phone_at(watch, live_server, url, "alice")

    # The turn opens with its upkeep, then initiative: both sides' d10s, typed on one phone, lowest wins.
    expect(turn_button(alice, "lg_initiative")).to_be_disabled()
    tap_turn(alice, "upkeep")
    expect(alice.locator("#log-list > li.log-entry").first).to_contain_text("Turn 1 upkeep: nothing to do")
    alice.locator("#turns summary", has_text="We roll our own dice").click()
    alice.fill("#dice-lg_initiative", "2 8")
    with swapped(alice, "#turns"):
        alice.locator('#turns button[data-action="lg_initiative-own"]').click()
    expect(alice.locator("#log-list > li.log-entry").first).to_contain_text("Initiative 2/8: side A wins")
    expect(alice.locator("#turns")).to_contain_text(re.compile(r"Initiative\s*Side A"))
    expect(bob.locator("#turns")).to_contain_text(re.compile(r"Initiative\s*Side A"), timeout=POLL_WAIT_MS)
    expect(turn_button(bob, "lg_pass")).to_be_disabled()

    # Tap the pillbox: its card names the gunner inside; the form aims at it.
    footprint = alice.locator(f"#map-{sid} .map-footprint")
    footprint.scroll_into_view_if_needed()
    box = footprint.bounding_box()
    with swapped(alice, "#card", "#attack-form"):
        alice.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(alice.locator("#card-title")).to_have_text("North pillbox")
    expect(alice.locator("#card")).to_contain_text("Pillbox gunner")
    expect(alice.locator("#id_structure")).to_have_value(sid)
    expect(alice.locator("#id_action")).to_have_value("lg_attack_structure")
    # Before a unit is chosen, only what the marines carry.
    expect(alice.locator("#id_weapon option")).to_have_text(
        ["Choose a weapon", "Chainsaw (engineering)", "High explosive grenade", "Laser rifle", "Light laser cannon",
         "Minigun, 6 barrels", "Ray rifle"])
    choose(alice, "#id_attacker", unit["Laser cannon team"])
    expect(alice.locator("#id_weapon option:checked")).to_have_text("Light laser cannon")  # its one weapon
    check(alice, '#id_hit input[value="yes"]')
    check(alice, '#id_penetrated input[value="1"]')
    check(alice, '#id_troops input[value="known"]')
    check(alice, f'#id_targets input[value="{unit["Pillbox gunner"]}"]')
    expect(alice.locator("#odds")).to_contain_text("Pillbox gunner is hit")
    expect(alice.locator("#odds")).to_contain_text("30%")
    check(alice, '#id_dice_mode input[value="player"]')
    expect(alice.locator(".die-input")).to_have_count(1)
    die(alice, 0, 3)
    seq = LogEntry.objects.filter(battle=battle).count() + 1
    alice.click("button.resolve")
    expect(alice.locator("#attack-form .result")).to_contain_text(f"Resolved #{seq}")
    said = ("Laser cannon team: Light laser cannon (AF 7) hit North pillbox's wall, 1 penetrating; 1 damage (1/30); "
            "hits Pillbox gunner; side B has the initiative")
    expect(alice.locator(f"#log-{seq} .log-summary")).to_have_text(said)
    expect(alice.locator(f"#map-{sid}")).to_have_attribute("aria-label", "North pillbox, damaged 3%")
    pillbox.refresh_from_db()
    assert pillbox.damage_taken == 1

    # Bob's phone: the entry, the pillbox's damage and the initiative, by the poll.
    expect(bob.locator(f"#log-{seq} .log-summary")).to_have_text(said, timeout=POLL_WAIT_MS)
    expect(bob.locator(f"#map-{sid}")).to_have_attribute("aria-label", "North pillbox, damaged 3%")
    expect(turn_button(bob, "lg_pass")).to_be_enabled()

    # Bob activates a raider; then both sides pass twice in turn and turn 2 opens on both phones.
    bob.select_option("#activate-unit", unit["Raider Vask"])
    tap_turn(bob, "lg_activate")
    expect(bob.locator("#log-list > li.log-entry").first).to_contain_text("Side B activates Raider Vask")
    for page in (alice, bob, alice, bob):
        expect(turn_button(page, "lg_pass")).to_be_enabled(timeout=POLL_WAIT_MS)
        tap_turn(page, "lg_pass")
    expect(bob.locator("#log-list > li.log-entry").first).to_contain_text("both sides passed twice, turn 1 ends")
    for page in (alice, bob):
        expect(page.locator("#turns-title")).to_have_text("Turn 2", timeout=POLL_WAIT_MS)
        expect(turn_button(page, "upkeep")).to_be_enabled()
    assert Battle.objects.get(pk=battle.pk).turn == 2
    assert_not_reloaded(alice, alice_loaded)
    assert_not_reloaded(bob, bob_loaded)
