"""The demo battle played on phones whose scripts are switched off (Chromium with JavaScript disabled):
every tap follows a plain link or posts a plain form, and every answer is a whole page. Alice taps a
building, chooses with "Update the form", rolls her own dice (one out of range first), follows the
damage roll it owes, undoes it; bob lets the server roll, ends the turn and reads older log entries.
The view tests (tests/battles/test_no_javascript.py) hold the details; this is the path a person takes."""

import pytest
from playwright.sync_api import expect

from apps.battles.log import append_entry
from apps.battles.models import Battle, LogEntry
from tests.browser.conftest import sign_in
from tests.browser.test_battle_screen import ids, newest_seq

pytestmark = [pytest.mark.browser]


def follow(page, locator):
    """A tap or a press that loads a whole page; returns its status."""
    with page.expect_navigation() as navigation:
        locator.click()
    return navigation.value.status


def test_alice_plays_an_attack_its_damage_and_an_undo_without_javascript(live_server, demo, watch):
    townhouse, sid, units, shell = ids(demo)
    gun, squad = units[("A", "Field gun team")], units[("B", "Grenadier Squad 2")]
    seq = newest_seq(demo) + 1
    alice = sign_in(watch("alice (no JavaScript)", javascript=False), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    expect(alice.get_by_text("JavaScript is off: this page does not update by itself")).to_be_visible()

    # The townhouse's piece is a link: the page again with its card open and the form aimed at it.
    assert follow(alice, alice.locator(f'#map [data-structure="{sid}"]')) == 200
    expect(alice.locator("#card-title")).to_have_text("Brick townhouse")

    # Nothing redraws on a change: "Update the form" asks for what the choices so far bring (the
    # units inside, the dice fields of "I rolled"), and keeps them.
    alice.select_option("#id_attacker", gun)
    alice.select_option("#id_weapon", shell)
    alice.check('#id_dice_mode input[value="player"]')
    assert follow(alice, alice.get_by_role("button", name="Update the form")) == 200
    expect(alice.locator("#id_attacker")).to_have_value(gun)
    expect(alice.locator("#id_weapon")).to_have_value(shell)
    alice.select_option("#id_target", squad)
    alice.check('#id_hit input[value="yes"]')
    assert follow(alice, alice.get_by_role("button", name="Update the form")) == 200
    expect(alice.locator(".die-input")).to_have_count(2)
    expect(alice.locator("#odds")).to_contain_text("Exact odds")

    # A die out of range: the page again, the message beside that die, what was typed kept, nothing logged.
    alice.fill("#id_dice_0", "9")
    alice.fill("#id_dice_1", "3")
    assert follow(alice, alice.locator("button.resolve")) == 422
    expect(alice.locator("#error-dice_0")).to_contain_text("9 is not a d6 result")
    expect(alice.locator("#id_dice_1")).to_have_value("3")
    assert newest_seq(demo) == seq - 1
    # The refused form's page answers 422, which Chromium reports on the console as a resource that
    # failed to load: that one is expected (`watch` fails the test on any other).
    expected = [p for p in watch.problems.items if "status of 422" in p and "/resolve/" in p]
    assert len(expected) == 1, watch.problems.items
    watch.problems.items.remove(expected[0])

    alice.fill("#id_dice_0", "4")
    assert follow(alice, alice.locator("button.resolve")) == 200
    expect(alice.locator(".messages")).to_contain_text(f"#{seq}: 2D6 shell explodes on the ground floor: 7 hits")
    expect(alice.locator("#log-list > li.log-entry").first).to_have_id(f"log-{seq}")
    expect(alice.locator(f"#log-{seq} .roll-source")).to_contain_text("entered by alice")

    # Its follow-up: the damage roll, filled in, with her own dice again.
    damage = alice.get_by_role("link", name="Roll damage: 7 hits on Grenadier Squad 2")
    assert follow(alice, damage) == 200
    expect(alice.locator("#id_action")).to_have_value("ba_damage")
    expect(alice.locator(".die-input")).to_have_count(7)
    for index, face in enumerate((1, 2, 3, 4, 5, 6, 1)):
        alice.fill(f"#id_dice_{index}", str(face))
    assert follow(alice, alice.locator("button.resolve")) == 200
    expect(alice.locator(".messages")).to_contain_text(f"#{seq + 1}: 7 hits on Grenadier Squad 2 needing 4+: 3 casualties")
    # The card she had open is still open (the damage roll's form names no structure of its own).
    expect(alice.locator("#card-title")).to_have_text("Brick townhouse")
    expect(alice.locator("#id_action")).to_have_value("ba_damage")

    # Undo: no dialog without scripts, so the page asks, and only "Yes" undoes.
    assert follow(alice, alice.get_by_role("button", name=f"Undo #{seq + 1}")) == 200
    expect(alice.locator(".confirm-form")).to_contain_text(f"Undo #{seq + 1}?")
    assert not LogEntry.objects.filter(battle=demo, action="undo", seq__gt=seq).exists()
    assert follow(alice, alice.get_by_role("button", name=f"Yes, undo #{seq + 1}")) == 200
    expect(alice.locator(".messages")).to_contain_text(f"#{seq + 2}: Undid #{seq + 1}")
    expect(alice.locator(f"#log-{seq + 1}")).to_contain_text("Undone by")
    # The card and the form's choices stay through the question and the answer, as with JavaScript.
    expect(alice.locator("#card-title")).to_have_text("Brick townhouse")
    expect(alice.locator("#id_action")).to_have_value("ba_damage")
    expect(alice.locator('#id_dice_mode input[value="player"]')).to_be_checked()


def test_bob_lets_the_server_roll_ends_the_turn_and_reads_older_entries_without_javascript(live_server, demo, watch):
    # A long battle: the page opens with the newest fifty entries only.
    battle = Battle.objects.get(pk=demo.pk)
    for n in range(55):
        append_entry(battle, action="note", summary=f"Note {n}", turn=battle.turn)
    turn = battle.turn
    bob = sign_in(watch("bob (no JavaScript)", javascript=False), live_server.url, "bob")
    bob.goto(f"{live_server.url}/battles/{demo.pk}/")

    # Older entries: the page with ?before=, then back to the newest.
    expect(bob.locator("#log-list > li.log-entry")).to_have_count(50)
    assert follow(bob, bob.get_by_role("link", name="Load older entries")) == 200
    assert "before=" in bob.url
    expect(bob.locator("#log-count")).to_contain_text("Entries before #")
    expect(bob.locator("#log-list")).to_contain_text("Note 0")
    assert follow(bob, bob.get_by_role("link", name="Back to the newest entries")) == 200
    expect(bob.locator("#log-list")).to_contain_text("Note 54")

    # "Roll for me" (the default): the pioneers' flamethrower at the timber cottage, a miss.
    seq = newest_seq(demo) + 1
    bob.locator('#map a[aria-label^="Timber cottage"]').click()
    expect(bob.locator("#card-title")).to_have_text("Timber cottage")
    bob.select_option("#id_action", "ba_flamethrower")
    assert follow(bob, bob.get_by_role("button", name="Update the form")) == 200
    expect(bob.locator("#card-title")).to_have_text("Timber cottage")
    bob.select_option("#id_attacker", ids(demo)[2][("B", "Pioneer flamethrower team")])
    assert follow(bob, bob.get_by_role("button", name="Update the form")) == 200
    bob.select_option("#id_floor", index=1)
    bob.check('#id_hit input[value="no"]')
    expect(bob.locator('#id_dice_mode input[value="server"]')).to_be_checked()
    assert follow(bob, bob.locator("button.resolve")) == 200
    expect(bob.locator(".messages")).to_contain_text(f"#{seq}:")
    expect(bob.locator(f"#log-{seq}")).to_contain_text("Flamethrower at a building")

    # End turn: asked on the page, then done; the next turn's upkeep runs with it.
    assert follow(bob, bob.locator('#turns button[data-action="end_turn"]')) == 200
    expect(bob.locator(".confirm-form")).to_contain_text(f"End turn {turn}?")
    assert Battle.objects.get(pk=demo.pk).turn == turn
    assert follow(bob, bob.get_by_role("button", name=f"Yes, end turn {turn}")) == 200
    expect(bob.locator("#turns-title")).to_have_text(f"Turn {turn + 1}")
    expect(bob.locator(".messages")).to_contain_text(f"Turn {turn} ends")
