"""The battle screen in a real headless Chromium at a phone's size (390×844, touch): alice signs in,
taps the Brick townhouse on the map, fills in the attack form with her own dice, resolves it, sees
the log and the map change, and undoes it — while bob, on his own phone, watches the same battle
and sees both changes arrive by the poll, without reloading. No console error, uncaught exception or
CSP violation is allowed on either phone (checked by the `watch` fixture). A second test plays a
turn to its end the same way: an attack, "End turn", the next turn's upkeep, on both phones.

The plain POST-and-redirect path without JavaScript is covered in detail by the view tests; one
small check here makes sure a real browser with JavaScript off can still tap, attack and read the log.
"""

import re
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from apps.armies.models import Unit, Weapon
from apps.battles import services
from apps.battles.models import Battle, BattleStatus, LogEntry
from apps.campaigns import services as campaign_services
from apps.structures.models import Structure
from tests.browser.conftest import QUIET, sign_in

pytestmark = [pytest.mark.browser]

POLL_WAIT_MS = 6_000  # the page polls every 2 s; a watcher must see a change well within three polls


def ids(battle):
    """The demo's pieces as the page names them (s<pk>, u<pk>, w<pk>)."""
    townhouse = Structure.objects.get(battle=battle, name="Brick townhouse")
    units = {(u.army.side, u.name): f"u{u.pk}" for u in Unit.objects.filter(army__battle=battle).select_related("army")}
    shell = Weapon.objects.get(ruleset="ba", slug="he-2d6")
    return townhouse, f"s{townhouse.pk}", units, f"w{shell.pk}"


def newest_seq(battle):
    return LogEntry.objects.filter(battle=battle).order_by("-seq").values_list("seq", flat=True).first() or 0


def mark_loaded(page):
    """A marker only this document holds: if it is still there later, the page was never reloaded.
    Main-frame navigations after this point are counted too."""
    page.evaluate("window.__loadedOnce = 'yes'")
    navigations = []
    page.on("framenavigated", lambda frame: navigations.append(frame.url) if frame == page.main_frame else None)
    return navigations


def phone_at(watch, live_server, url, who):
    """`who` signed in on a phone of their own and on `url`, marked to show a later reload (`mark_loaded`)."""
    page = sign_in(watch(who), live_server.url, who)
    page.goto(url)
    return page, mark_loaded(page)


def assert_not_reloaded(page, navigations):
    assert page.evaluate("window.__loadedOnce") == "yes", "the page was reloaded"
    # The page may rewrite its own address (HX-Replace-Url: a result that owes a damage roll); it must
    # not go anywhere else.
    elsewhere = [u for u in navigations if urlsplit(u).path != urlsplit(page.url).path]
    assert elsewhere == [], f"the page navigated: {navigations}"


@contextmanager
def swapped(page, *selectors):
    """Wait until htmx has replaced each element the action inside the block refreshes (the old ones
    are marked first; a swapped-in element carries no mark) and the page is quiet again: no htmx
    request in flight or queued, nothing left to settle."""
    page.evaluate("sels => sels.forEach(s => { document.querySelector(s).dataset.stale = '1'; })", list(selectors))
    yield
    for selector in selectors:
        page.wait_for_selector(f"{selector}:not([data-stale])", state="attached")
    page.wait_for_function(QUIET)


def choose(page, select, value):
    """Pick an option; the form re-renders with what depends on it (weapons carried, floors, dice)."""
    with swapped(page, "#attack-form"):
        page.select_option(select, value)
    expect(page.locator(select)).to_have_value(value)


def check(page, radio):
    with swapped(page, "#attack-form"):
        page.check(radio)
    expect(page.locator(radio)).to_be_checked()


def aim_the_field_gun(page, units, shell, *, own_dice=False):
    """The demo's bench shot, chosen as a player does: the Field gun team's HE at Grenadier Squad 2, a
    hit; with `own_dice`, "I rolled", and its two dice fields showing."""
    choose(page, "#id_attacker", units[("A", "Field gun team")])
    choose(page, "#id_weapon", shell)
    choose(page, "#id_target", units[("B", "Grenadier Squad 2")])
    if own_dice:
        check(page, '#id_dice_mode input[value="player"]')
    check(page, '#id_hit input[value="yes"]')
    if own_dice:
        expect(page.locator(".die-input")).to_have_count(2)


def die(page, index, face):
    """Type one die as a thumb would (key presses: `fill` would also fire a change event no phone
    sends). A d6 is one digit, so battle.js asks for the next die straight away."""
    with swapped(page, "#attack-form"):
        page.locator(f"#id_dice_{index}").press_sequentially(str(face))
    expect(page.locator(f"#id_dice_{index}")).to_have_value(str(face))


def assert_drawn_as_svg(page, sid):
    """A map piece swapped in on its own must still be SVG inside the map's <svg> (parsed as HTML it
    would be an invisible unknown element), and be drawn: its footprint has a size on screen."""
    drawn = page.evaluate("""sid => {
        const piece = document.getElementById('map-' + sid);
        const box = piece.querySelector('.map-footprint').getBoundingClientRect();
        return [piece.namespaceURI, piece.parentElement.tagName.toLowerCase(), box.width > 0 && box.height > 0,
                document.querySelectorAll('[id="map-' + sid + '"]').length];
    }""", sid)
    assert drawn == ["http://www.w3.org/2000/svg", "svg", True, 1], drawn


def test_tap_roll_resolve_undo_and_another_phone_sees_it(live_server, demo, watch):
    townhouse, sid, units, shell = ids(demo)
    gun, squad = units[("A", "Field gun team")], units[("B", "Grenadier Squad 2")]
    seq = newest_seq(demo) + 1  # the attack's entry; the undo will be seq + 1
    battle_url = f"{live_server.url}/battles/{demo.pk}/"

    # Bob opens the battle on his phone and only watches from now on.
    bob, bob_navigations = phone_at(watch, live_server, battle_url, "bob")
    expect(bob.locator(f'#map [data-structure="{sid}"]')).to_have_class(re.compile(r"\bst-intact\b"))

    # Alice signs in and opens the battle from her home page.
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.get_by_role("link", name=re.compile(re.escape(demo.name))).first.click()
    alice.wait_for_selector("#map")
    assert alice.url.rstrip("/").endswith(f"/battles/{demo.pk}")
    alice_navigations = mark_loaded(alice)

    # Tap the townhouse: its card opens and the attack form targets it.
    shape = alice.locator(f'#map [data-structure="{sid}"]')
    expect(shape).to_have_class(re.compile(r"\bst-intact\b"))
    with swapped(alice, "#card", "#attack-form"):
        shape.tap()
    expect(alice.locator("#card-title")).to_have_text("Brick townhouse")
    expect(alice.locator("#card")).to_contain_text("Grenadier Squad 2")
    expect(alice.locator("#card-target")).to_have_value(sid)
    expect(alice.locator("#id_structure")).to_have_value(sid)
    expect(shape).to_have_class(re.compile(r"\bis-selected\b"))

    # The attack: the field gun's 2D6 HE shell at the squad on the ground floor.
    expect(alice.locator("#id_action")).to_have_value("ba_he")
    choose(alice, "#id_attacker", gun)
    expect(alice.locator("#id_weapon option")).to_have_text(["Choose a weapon", "HE shell, 2D6 in buildings"])
    choose(alice, "#id_weapon", shell)
    choose(alice, "#id_target", squad)

    # "I rolled": no die to enter until the rules know what to roll for.
    check(alice, '#id_dice_mode input[value="player"]')
    expect(alice.locator(".die-input")).to_have_count(0)
    expect(alice.locator("#dice")).to_contain_text("Fill in the inputs above")
    check(alice, '#id_hit input[value="no"]')  # a miss rolls nothing
    expect(alice.locator(".die-input")).to_have_count(0)
    expect(alice.locator("#dice")).to_contain_text("needs no dice")
    check(alice, '#id_hit input[value="yes"]')  # a hit: the shell's 2D6, both dice of the one roll
    expect(alice.locator(".die-input")).to_have_count(2)
    expect(alice.locator("label[for=id_dice_0]")).to_contain_text("HE hits")
    expect(alice.locator("label[for=id_dice_1]")).to_contain_text("second d6")
    expect(alice.locator("#id_dice_0")).to_have_attribute("data-sides", "6")
    expect(alice.locator("#odds")).to_contain_text("collapse", ignore_case=True)
    die(alice, 0, 6)
    expect(alice.locator("#id_dice_1")).to_be_focused()  # straight on to the next die
    die(alice, 1, 5)
    expect(alice.locator(".die-input")).to_have_count(2)  # 11 hits: nothing more to roll

    # Resolve, with one of alice's own polls held in flight across it (what happens at the table
    # whenever a tap lands during a poll): the answer's new #poller replaces the one that asked, and
    # the late poll answer must be dropped quietly, not rolled back onto the page nor logged as errors.
    held = []
    alice.route("**/poll/**", lambda route: held.append(route))
    with alice.expect_request(lambda r: "/poll/" in r.url, timeout=POLL_WAIT_MS):
        pass
    # The answer redraws only what the attack changed: the townhouse's piece of the map, not the map.
    changed = ["#attack-form", f"#map-{sid}", "#card", "#poller"]
    alice.evaluate("sels => sels.forEach(s => { document.querySelector(s).dataset.stale = '1'; })",
                   changed + ["#map"])
    alice.click("button.resolve")
    expect(alice.locator("#attack-form .result")).to_contain_text(f"Resolved #{seq}")
    for selector in changed:
        alice.wait_for_selector(f"{selector}:not([data-stale])", state="attached")
    assert len(held) == 1, "one poll was held across the attack"
    held[0].continue_()  # asked with the old version: the server answers with every changed panel
    alice.unroute("**/poll/**")
    alice.wait_for_function(QUIET)
    entry = alice.locator(f"#log-{seq}")
    expect(alice.locator("#log-list > li.log-entry").first).to_have_id(f"log-{seq}")
    expect(entry).to_contain_text("collapses")
    expect(entry.locator(".die")).to_have_text(["6", "5"])
    expect(entry.locator(".roll-source")).to_contain_text("entered by alice")
    expect(entry.locator(".roll-source-player")).to_have_count(1)
    expect(shape).to_have_class(re.compile(r"\bst-collapsed\b"))
    expect(shape).to_have_attribute("aria-label", re.compile(r"collapsed"))
    assert alice.locator("#map").get_attribute("data-stale") == "1", "the whole map was redrawn"
    assert_drawn_as_svg(alice, sid)
    expect(alice.locator("#card")).to_contain_text("ollapsed")
    townhouse.refresh_from_db()
    assert townhouse.collapsed
    logged = LogEntry.objects.get(battle=demo, seq=seq)
    assert logged.action == "ba_he" and [d["faces"] for d in logged.dice] == [[6, 5]]

    # Bob's phone gets it by the poll, without a reload.
    bob_shape = bob.locator(f'#map [data-structure="{sid}"]')
    expect(bob.locator(f"#log-{seq}")).to_contain_text("collapses", timeout=POLL_WAIT_MS)
    expect(bob.locator(f"#log-{seq} .die")).to_have_text(["6", "5"])
    expect(bob_shape).to_have_class(re.compile(r"\bst-collapsed\b"))
    assert_not_reloaded(bob, bob_navigations)

    # Undo: the entry stays, marked undone, followed by the undo; the townhouse stands again.
    undo = alice.locator(".undo-button")
    expect(undo).to_have_text(f"Undo #{seq}")
    questions = []  # a slip of the thumb must not undo: the button asks first
    alice.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))
    with swapped(alice, f"#map-{sid}", "#turns"):
        undo.click()
    assert questions and questions[0].startswith(f"Undo #{seq}? "), questions
    expect(entry).to_have_class(re.compile(r"\bis-undone\b"))
    expect(entry).to_contain_text(f"Undone by #{seq + 1}")
    expect(alice.locator("#log-list > li.log-entry").first).to_have_id(f"log-{seq + 1}")
    expect(alice.locator(f"#log-{seq + 1}")).to_contain_text(f"Undoes #{seq}")
    expect(shape).to_have_class(re.compile(r"\bst-intact\b"))
    expect(shape).not_to_have_class(re.compile(r"\bst-collapsed\b"))
    townhouse.refresh_from_db()
    assert not townhouse.collapsed
    assert LogEntry.objects.filter(battle=demo, seq=seq, undone=True).exists()
    assert_not_reloaded(alice, alice_navigations)

    expect(bob.locator(f"#log-{seq}")).to_have_class(re.compile(r"\bis-undone\b"), timeout=POLL_WAIT_MS)
    expect(bob.locator(f"#log-{seq + 1}")).to_contain_text(f"Undoes #{seq}")
    expect(bob.locator("#log-list > li.log-entry").first).to_have_id(f"log-{seq + 1}")
    expect(bob_shape).to_have_class(re.compile(r"\bst-intact\b"))
    assert_drawn_as_svg(bob, sid)
    assert bob.locator(f"#log-{seq}").count() == 1  # the attack's entry once, not twice
    assert_not_reloaded(bob, bob_navigations)
    assert Battle.objects.get(pk=demo.pk).version == demo.version + 2


def test_dice_typed_while_the_form_answers_are_on_their_way_are_kept(live_server, demo, watch):
    """At the table the second die is typed a moment after the first, before the form's answer to
    the first is back (every answer redraws the form). It must land in the second field and stay."""
    townhouse, sid, units, shell = ids(demo)
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/?target={sid}")
    aim_the_field_gun(alice, units, shell, own_dice=True)

    # Hold the answer to the first die until the second is typed: the slow network, made certain.
    held = []
    alice.route("**/form/**", lambda route: held.append(route) if not held else route.continue_())
    alice.locator("#id_dice_0").press_sequentially("6")
    alice.wait_for_function("() => document.activeElement && document.activeElement.id === 'id_dice_1'")
    alice.keyboard.type("5")
    alice.wait_for_timeout(100)
    assert len(held) == 1, "the second die waits behind the first die's answer"
    held[0].continue_()
    alice.wait_for_function(QUIET)
    alice.unroute("**/form/**")
    expect(alice.locator("#id_dice_0")).to_have_value("6")
    expect(alice.locator("#id_dice_1")).to_have_value("5")
    expect(alice.locator("#id_dice_1")).to_be_focused()
    expect(alice.locator("#dice .field-error")).to_have_count(0)
    seq = newest_seq(demo) + 1
    alice.click("button.resolve")
    expect(alice.locator("#attack-form .result")).to_contain_text(f"Resolved #{seq}")
    assert [d["faces"] for d in LogEntry.objects.get(battle=demo, seq=seq).dice] == [[6, 5]]


def test_a_letter_typed_for_a_die_is_named_as_no_die_face(live_server, demo, watch):
    """Chromium sent a letter typed into the die's number field as "": the player was told to roll the
    die and enter it. Typed as a thumb would, the letter reaches the server and is named beside its
    field; nothing is resolved. The field still asks a phone for its digits keypad."""
    townhouse, sid, units, shell = ids(demo)
    logged = newest_seq(demo)
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/?target={sid}")
    aim_the_field_gun(alice, units, shell, own_dice=True)
    expect(alice.locator("#id_dice_0")).to_have_attribute("inputmode", "numeric")
    with swapped(alice, "#attack-form"):  # "Go" on the keypad moves on: the form answers what was typed
        alice.locator("#id_dice_0").press_sequentially("x")
        alice.locator("#id_dice_0").press("Enter")
    expect(alice.locator("#error-dice_0")).to_have_text(re.compile(r"first d6: x is not a d6 result$"))
    with swapped(alice, "#attack-form"):
        alice.click("button.resolve")
    expect(alice.locator("#error-dice_0")).to_have_text(re.compile(r"first d6: x is not a d6 result$"))
    expect(alice.locator("#id_dice_0")).to_have_value("x")
    expect(alice.locator("#attack-form")).not_to_contain_text("roll it and enter the result")
    assert newest_seq(demo) == logged


def test_hits_on_a_squad_lead_to_its_damage_roll_in_one_tap(live_server, demo, watch):
    """Bolt Action: HE that leaves the squad standing scores hits, rolled for damage next. The answer
    offers that roll; one tap fills in the form with the squad, the hits, HE and the gun."""
    townhouse, sid, units, shell = ids(demo)
    gun, squad = units[("A", "Field gun team")], units[("B", "Grenadier Squad 2")]
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/?target={sid}")
    choose(alice, "#id_attacker", gun)
    choose(alice, "#id_weapon", shell)
    choose(alice, "#id_target", squad)
    check(alice, '#id_dice_mode input[value="player"]')
    check(alice, '#id_hit input[value="yes"]')
    die(alice, 0, 2)
    die(alice, 1, 1)
    alice.click("button.resolve")
    follow_up = alice.locator("#attack-form .follow-up a")
    expect(follow_up).to_have_text(re.compile(r"^Roll damage: 3 hits on Grenadier Squad 2"))
    # The roll is still offered after a reload (the phone slept, the page was opened again).
    alice.reload()
    expect(follow_up).to_have_text(re.compile(r"^Roll damage: 3 hits on Grenadier Squad 2"))
    with swapped(alice, "#attack-form"):
        follow_up.tap()
    expect(alice.locator("#id_action")).to_have_value("ba_damage")
    expect(alice.locator("#id_target")).to_have_value(squad)
    expect(alice.locator("#id_attacker")).to_have_value(gun)
    expect(alice.locator('input[name="hits"]')).to_have_value("3")
    expect(alice.locator('input[name="source"][value="he"]')).to_be_checked()


def test_without_javascript_tap_and_resolve_by_plain_post(live_server, demo, watch):
    townhouse, sid, units, shell = ids(demo)
    seq = newest_seq(demo) + 1
    page = sign_in(watch("alice (no JavaScript)", javascript=False), live_server.url, "alice")
    page.goto(f"{live_server.url}/battles/{demo.pk}/")
    expect(page.locator("html")).not_to_have_class(re.compile(r"\bjs\b"))
    expect(page.get_by_text("JavaScript is off: this page does not update by itself")).to_be_visible()

    # Tapping the townhouse follows its link: the page again, with the card open and the form aimed.
    with page.expect_navigation():
        page.locator(f'#map [data-structure="{sid}"]').tap()
    assert f"target={sid}" in page.url
    expect(page.locator("#card-title")).to_have_text("Brick townhouse")
    expect(page.locator("#id_structure")).to_have_value(sid)

    # Every input is on the page already; "Roll for me" is the default.
    page.select_option("#id_attacker", units[("A", "Field gun team")])
    page.select_option("#id_weapon", shell)
    page.select_option("#id_target", units[("B", "Grenadier Squad 2")])
    page.check('#id_hit input[value="yes"]')
    expect(page.locator('#id_dice_mode input[value="server"]')).to_be_checked()
    with page.expect_navigation():
        page.click("button.resolve")
    # 303 back to the page; `result` when the server's dice left hits to roll damage for.
    assert re.search(rf"/battles/{demo.pk}/\?target={sid}&action=ba_he(&result={seq})?$", page.url), page.url
    expect(page.locator(".messages")).to_contain_text(f"#{seq}:")
    expect(page.locator("#log-list > li.log-entry").first).to_have_id(f"log-{seq}")
    expect(page.locator(f"#log-{seq} .die")).to_have_count(2)
    expect(page.locator(f"#log-{seq} .roll-source")).to_contain_text("rolled by the server")
    assert LogEntry.objects.filter(battle=demo, seq=seq, action="ba_he").exists()


def test_a_turn_played_to_its_end_on_two_phones(live_server, demo, watch):
    """From an attack to the end of the turn without a reload: the unit that fired is marked as having
    acted, "End turn" (confirmed) moves both phones to the next turn, runs its upkeep and frees the
    unit to act again."""
    townhouse, sid, units, shell = ids(demo)
    gun = units[("A", "Field gun team")]
    gun_row = f"#unit-{gun[1:]}"
    turn = demo.turn
    battle_url = f"{live_server.url}/battles/{demo.pk}/"

    bob, bob_navigations = phone_at(watch, live_server, battle_url, "bob")
    alice, alice_navigations = phone_at(watch, live_server, battle_url, "alice")
    expect(alice.locator("#turns-title")).to_have_text(f"Turn {turn}")
    expect(alice.locator(gun_row)).not_to_contain_text("Acted")

    # The field gun fires, the server rolling ("roll for me" is the default).
    with swapped(alice, "#card", "#attack-form"):
        alice.locator(f'#map [data-structure="{sid}"]').tap()
    choose(alice, "#id_attacker", gun)
    choose(alice, "#id_weapon", shell)
    choose(alice, "#id_target", units[("B", "Grenadier Squad 2")])
    check(alice, '#id_hit input[value="yes"]')
    with swapped(alice, "#attack-form", gun_row):
        alice.click("button.resolve")
    expect(alice.locator("#attack-form .result")).to_contain_text("Resolved #")
    expect(alice.locator(gun_row)).to_contain_text("Acted")
    expect(alice.locator(f'#id_attacker option[value="{gun}"]')).to_have_count(0)  # it has acted
    # Alice's only HE gun has fired: the list left empty says why, not nothing at all.
    expect(alice.locator("#id_attacker_helptext")).to_have_text("Not offered: Field gun team (has acted this turn)")
    expect(bob.locator(gun_row)).to_contain_text("Acted", timeout=POLL_WAIT_MS)

    # End the turn: the button asks first, as a tap at the table could be a slip.
    questions = []
    alice.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))
    before = newest_seq(demo)
    with swapped(alice, "#turns", gun_row):
        alice.click('button[data-action="end_turn"]')
    assert questions == [f"End turn {turn}? The next turn's upkeep runs straight away."]
    expect(alice.locator("#turns-title")).to_have_text(f"Turn {turn + 1}")
    expect(alice.locator("#battle-header .turn-badge")).to_have_text(f"Turn {turn + 1}")
    expect(alice.locator(gun_row)).not_to_contain_text("Acted")
    # The turn's answer leaves the attack form alone, so the form asks again: the gun may act anew.
    expect(alice.locator(f'#id_attacker option[value="{gun}"]')).to_have_count(1)
    expect(alice.locator("#id_attacker_helptext")).to_have_count(0)
    actions = list(LogEntry.objects.filter(battle=demo, seq__gt=before).order_by("seq").values_list("action", flat=True))
    assert actions[0] == "end_turn" and "upkeep" in actions, actions
    for seq in range(before + 1, before + len(actions) + 1):
        expect(alice.locator(f"#log-{seq}")).to_have_count(1)
    assert Battle.objects.get(pk=demo.pk).turn == turn + 1
    assert not Unit.objects.get(pk=gun[1:]).acted

    # Bob's phone follows by the poll alone.
    expect(bob.locator("#turns-title")).to_have_text(f"Turn {turn + 1}", timeout=POLL_WAIT_MS)
    # His End turn now ends the new turn: one sent for the old one would be refused as already ended.
    expect(bob.locator('#turns form:has(button[data-action="end_turn"]) input[name="turn"]')).to_have_value(
        str(turn + 1))
    expect(bob.locator("#battle-header .turn-badge")).to_have_text(f"Turn {turn + 1}")
    expect(bob.locator(gun_row)).not_to_contain_text("Acted")
    expect(bob.locator(f"#log-{before + len(actions)}")).to_have_count(1)
    assert_not_reloaded(alice, alice_navigations)
    assert_not_reloaded(bob, bob_navigations)


def test_starting_the_battle_opens_the_attack_form_on_the_players_phones(live_server, demo, watch):
    """The organiser taps "Start battle"; alice's phone, open since the setting up, goes from "not
    started yet" to the attack form by the poll alone."""
    Battle.objects.filter(pk=demo.pk).update(status="setup")
    battle_url = f"{live_server.url}/battles/{demo.pk}/"
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(battle_url)
    navigations = mark_loaded(alice)
    expect(alice.locator("#attack-panel")).to_contain_text("The battle has not started yet.")
    organiser = sign_in(watch("demo"), live_server.url, "demo")
    organiser.goto(battle_url)
    with swapped(organiser, "#turns"):
        organiser.click('button[data-action="start"]')
    assert Battle.objects.get(pk=demo.pk).status == "in_progress"
    expect(alice.locator("#attack-form #id_action")).to_be_visible(timeout=POLL_WAIT_MS)
    expect(alice.locator("#attack-panel")).not_to_contain_text("not started")
    assert_not_reloaded(alice, navigations)


def test_d10s_move_on_without_leaving_the_field_and_go_does_not_resolve(live_server, demo, watch):
    """Disposable Heroes small arms at the rifle pit with the players' own d10s. A "7" is a whole d10:
    the form asks for the next die at once. A "1" may become "10": it counts once the thumb pauses.
    The keyboard's Go (Enter) in a die field moves on; it does not resolve a half-entered attack."""
    from apps.battles import services
    from django.contrib.auth import get_user_model

    olga = get_user_model().objects.get(username="olga")
    farm = Battle.objects.get(name="Farm by the ford — session 1")
    services.start(battle_id=farm.pk, user=olga)
    squad = Unit.objects.get(army__battle=farm, name="Panzergrenadier Squad")
    pit = Structure.objects.get(battle=farm, name="Soviet Rifle Pit")
    before = newest_seq(farm)
    phone = sign_in(watch("olga"), live_server.url, "olga")
    phone.goto(f"{live_server.url}/battles/{farm.pk}/?action=dh_small_arms&attacker=u{squad.pk}"
               f"&structure=s{pit.pk}&shots=3&dice_mode=player")
    expect(phone.locator(".die-input")).to_have_count(3)
    with swapped(phone, "#attack-form"):
        phone.locator("#id_dice_0").press_sequentially("7")
    expect(phone.locator("#id_dice_0")).to_have_value("7")
    phone.wait_for_function("() => document.activeElement && document.activeElement.id === 'id_dice_1'")
    with swapped(phone, "#attack-form"):
        phone.keyboard.type("1")  # no change event, no blur: the pause alone sends it
    expect(phone.locator("#id_dice_1")).to_have_value("1")
    expect(phone.locator("#id_dice_2")).to_be_focused()
    phone.keyboard.type("9")
    phone.wait_for_function(QUIET)
    with swapped(phone, "#attack-form"):
        phone.keyboard.press("Enter")
    expect(phone.locator("#attack-form .result")).to_have_count(0)
    expect(phone.locator("#attack-form .not-resolved")).to_have_count(0)
    assert newest_seq(farm) == before


def test_a_choice_tapped_while_the_form_answers_is_kept(live_server, demo, watch):
    """Shots typed, then "I rolled" tapped before the form's answer to the shots is back: the answer
    must not put "Roll for me" back (the tap was lost and had to be made twice)."""
    from apps.battles import services
    from django.contrib.auth import get_user_model

    olga = get_user_model().objects.get(username="olga")
    farm = Battle.objects.get(name="Farm by the ford — session 1")
    services.start(battle_id=farm.pk, user=olga)
    squad = Unit.objects.get(army__battle=farm, name="Panzergrenadier Squad")
    pit = Structure.objects.get(battle=farm, name="Soviet Rifle Pit")
    phone = sign_in(watch("olga"), live_server.url, "olga")
    phone.goto(f"{live_server.url}/battles/{farm.pk}/?action=dh_small_arms&attacker=u{squad.pk}&structure=s{pit.pk}")
    held = []
    phone.route("**/form/**", lambda route: held.append(route) if not held else route.continue_())
    phone.locator("#id_shots").fill("3")
    phone.locator("#id_shots").dispatch_event("change")
    phone.wait_for_function("() => document.querySelector('#attack-panel').classList.contains('htmx-request')")
    phone.check('#id_dice_mode input[value="player"]')
    phone.wait_for_timeout(100)
    assert len(held) == 1, "the tap waits behind the shots' answer"
    held[0].continue_()
    phone.wait_for_function(QUIET)
    phone.unroute("**/form/**")
    expect(phone.locator('#id_dice_mode input[value="player"]')).to_be_checked()
    expect(phone.locator("#id_shots")).to_have_value("3")
    expect(phone.locator(".die-input")).to_have_count(3)


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_enter_in_our_own_dice_rolls_with_those_dice(live_server, demo, watch, javascript):
    """Enter in "We roll our own dice" submits the dice typed, never the server's roll: a form submits
    by its first button, and the turn button's "roll for me" once came first."""
    Battle.objects.filter(pk=demo.pk).update(collapse_check=True, damage_variant=3)
    church = Structure.objects.get(battle=demo, name="Stone church")
    Structure.objects.filter(pk=church.pk).update(damage_taken=church.damage_max // 2, collapsed=False)
    page = sign_in(watch("alice", javascript=javascript), live_server.url, "alice")
    page.goto(f"{live_server.url}/battles/{demo.pk}/")
    offline_note = expect(page.get_by_text("JavaScript is off: this page does not update by itself"))
    offline_note.to_be_hidden() if javascript else offline_note.to_be_visible()
    page.once("dialog", lambda dialog: dialog.accept())  # End turn asks first (with JavaScript)
    page.locator("#turns details.own-dice summary").last.click()
    before = newest_seq(demo)
    page.locator("#dice-end_turn").fill("2")
    if javascript:
        with swapped(page, "#turns"):
            page.locator("#dice-end_turn").press("Enter")
    else:
        with page.expect_navigation():
            page.locator("#dice-end_turn").press("Enter")
        # No dialog without JavaScript: the page asks, keeping the dice.
        assert not LogEntry.objects.filter(battle=demo, seq__gt=before).exists()
        expect(page.locator("#turns .confirm-form")).to_contain_text("With your dice: 2.")
        with page.expect_navigation():
            page.click("#turns .confirm-form button")
    upkeep = LogEntry.objects.get(battle=demo, seq__gt=before, action="upkeep")
    checks = [d for d in upkeep.dice if "Collapse check" in d["purpose"]]
    assert [(d["faces"], d["source"]) for d in checks] == [([2], "player")]


def test_a_squad_moves_into_a_building_from_the_map(live_server, demo, watch):
    """"Move": the unit, a tap on the building, its floor; the armies panel, the card and the other
    phone then have the squad inside."""
    _, _, units, _ = ids(demo)
    rifles = units[("A", "1st Rifle Squad")]  # in the open at the start
    workshop = Structure.objects.get(battle=demo, name="Timber workshop")
    bob = sign_in(watch("bob"), live_server.url, "bob")
    bob.goto(f"{live_server.url}/battles/{demo.pk}/")
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    choose(alice, "#id_action", "move")
    choose(alice, "#id_unit", rifles)
    with swapped(alice, "#card", "#attack-form"):
        alice.locator(f'#map [data-structure="s{workshop.pk}"]').tap()
    expect(alice.locator("#id_structure")).to_have_value(f"s{workshop.pk}")
    choose(alice, "#id_floor", "1")
    with swapped(alice, "#attack-form", f"#unit-{rifles[1:]}"):
        alice.click("button.resolve")
    expect(alice.locator("#attack-form .result")).to_contain_text("1st Rifle Squad moves into Timber workshop, floor 1")
    expect(alice.locator(f"#unit-{rifles[1:]}")).to_contain_text("in Timber workshop, floor 1")
    expect(alice.locator("#card")).to_contain_text("1st Rifle Squad")
    expect(bob.locator(f"#unit-{rifles[1:]}")).to_contain_text("in Timber workshop, floor 1", timeout=POLL_WAIT_MS)
    assert Unit.objects.get(pk=rifles[1:]).floor.structure_id == workshop.pk


def test_a_lost_answer_says_so_and_the_same_tap_again_resolves_once(live_server, demo, watch):
    """The club's wifi drops an answer: the attack reached the server and was resolved, but the phone
    heard nothing. The foot of the screen says so; the same form sent again answers with that one
    resolution, not a second. A poll that gets no answer says the page may be out of date, until one does."""
    townhouse, sid, units, shell = ids(demo)
    alice = sign_in(watch("alice"), live_server.url, "alice")
    asked = []
    alice.on("request", lambda request: asked.append(request.url) if request.method == "GET" else None)
    alice.goto(f"{live_server.url}/battles/{demo.pk}/?target={sid}")
    notice = alice.locator("#connection")
    expect(notice).to_be_hidden()
    aim_the_field_gun(alice, units, shell)
    seq = newest_seq(demo) + 1

    def lose_the_answer(route):
        route.fetch()  # the server resolves it ...
        route.abort("internetdisconnected")  # ... and the phone never hears back

    reported = watch.problems.items
    quiet_until = len(reported)
    alice.route("**/resolve/", lose_the_answer)
    alice.click("button.resolve")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Your last tap got no answer")
    assert newest_seq(demo) == seq, "the lost answer's attack was resolved"
    expect(alice.locator("button.resolve")).to_be_enabled()
    alice.unroute("**/resolve/")
    with swapped(alice, "#attack-form"):
        alice.click("button.resolve")
    expect(alice.locator("#attack-form .result")).to_contain_text(f"Resolved #{seq}")
    expect(notice).to_be_hidden()
    assert newest_seq(demo) == seq and LogEntry.objects.filter(battle=demo, client_token__isnull=False, seq__gte=seq).count() == 1

    alice.route("**/poll/**", lambda route: route.abort("internetdisconnected"))
    expect(notice).to_contain_text("this page may be out of date", timeout=POLL_WAIT_MS)
    alice.unroute("**/poll/**")
    expect(notice).to_be_hidden(timeout=POLL_WAIT_MS)
    # The form's refreshes as it was filled in never put the CSRF token in an address (server logs).
    assert any("/form/" in u for u in asked) and not any("csrfmiddlewaretoken" in u for u in asked), asked
    # The browser and htmx report each request the test cut off; those reports, and only those, are
    # what this test made happen.
    cut = re.compile(r"ERR_INTERNET_DISCONNECTED|htmx:(sendError|afterRequest), \[object HTML(Form|Div)Element\]")
    made = [p for p in reported[quiet_until:] if cut.search(p)]
    assert made, "cutting the connection off went unreported: the filter below would hide nothing"
    reported[quiet_until:] = [p for p in reported[quiet_until:] if p not in made]


def test_the_keyboard_focus_stays_on_the_control_whose_answer_replaced_its_panel(live_server, demo, watch):
    """With a keyboard (or a screen reader) the focus is on the control that asked. Its answer replaces
    the panel around it (the attack form, the turn panel): the focus must land on the same control in
    the new panel, or on the panel's heading when that control is gone, never on <body>, from where
    the next Tab starts again at the top of the page."""
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    alice.on("dialog", lambda dialog: dialog.accept())

    alice.focus("button.resolve")
    with swapped(alice, "#attack-form"):
        alice.keyboard.press("Enter")  # nothing chosen: the form comes back with its errors
    expect(alice.locator("#attack-form .not-resolved")).to_be_visible()
    expect(alice.locator("button.resolve")).to_be_focused()

    alice.focus('button[data-action="end_turn"]')
    with swapped(alice, "#turns"):
        alice.keyboard.press("Enter")
    expect(alice.locator("#turns-title")).to_have_text(f"Turn {demo.turn + 1}")
    expect(alice.locator('button[data-action="end_turn"]')).to_be_focused()

    alice.focus("button.undo-button")
    with swapped(alice, "#turns"):
        alice.keyboard.press("Enter")  # the Undo button it was is gone with what it undid
    expect(alice.locator("#turns-title")).to_have_text(f"Turn {demo.turn}")
    expect(alice.locator("#turns-title")).to_be_focused()


def test_target_in_the_structure_list_takes_the_keyboard_focus_to_the_card(live_server, demo, watch):
    """"Target" far down the structure list scrolls the card it opens into view; the focus goes with
    it, so the next Tab is in the card and the attack form, not back down the list."""
    townhouse, sid, units, shell = ids(demo)
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    alice.focus(f'#structure-{townhouse.pk} .target-link')
    with swapped(alice, "#card"):
        alice.keyboard.press("Enter")
    expect(alice.locator("#card-title")).to_have_text("Brick townhouse")
    expect(alice.locator("#card-title")).to_be_focused()
    expect(alice.locator("#card-title")).to_be_in_viewport()


def aiming_with_our_own_dice(live_server, demo, watch):
    """Alice's phone with the townhouse tapped, the field gun aimed at it and "I rolled" with a 4 typed."""
    townhouse, sid, units, shell = ids(demo)
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    with swapped(alice, "#card", "#attack-form"):
        alice.locator(f'#map [data-structure="{sid}"]').tap()
    aim_the_field_gun(alice, units, shell, own_dice=True)
    die(alice, 0, 4)
    return alice, (townhouse, sid, units, shell)


def test_a_reload_mid_attack_opens_the_same_card_and_choices(live_server, demo, watch):
    """A phone reloaded mid-attack (a thumb on reload, a browser that reloads a tab after the phone
    slept) opens the card tapped, the action, the unit and weapon chosen and "I rolled", as they were."""
    logged = newest_seq(demo)
    alice, (townhouse, sid, units, shell) = aiming_with_our_own_dice(live_server, demo, watch)
    alice.reload()
    expect(alice.locator("#card-title")).to_have_text("Brick townhouse")
    expect(alice.locator("#id_structure")).to_have_value(sid)
    expect(alice.locator("#id_attacker")).to_have_value(units[("A", "Field gun team")])
    expect(alice.locator("#id_weapon")).to_have_value(shell)
    expect(alice.locator('#id_dice_mode input[value="player"]')).to_be_checked()
    expect(alice.locator("#id_dice_0")).to_have_value("4")
    assert newest_seq(demo) == logged  # nothing was resolved meanwhile


def test_a_fireteam_keeps_the_initiative_until_its_side_taps_team_done(live_server, demo, watch):
    """Fireteam initiative (seed 002): alice activates her fireteam with the turn panel's checkbox; the
    initiative stays with side A, so bob's phone shows Pass disabled with the reason and no Team done;
    alice's Team done hands the initiative to bob, whose Pass comes back by the poll."""
    Battle.objects.filter(pk=demo.pk).update(ruleset="lg", fireteam_initiative=True, upkeep_turn=demo.turn,
                                             sequence={"initiative": "A", "rolled": True})
    team = list(Unit.objects.filter(army__battle=demo, army__side="A").order_by("pk")[:2])
    Unit.objects.filter(pk__in=[u.pk for u in team]).update(fireteam="red")
    battle_url = live_server.url + f"/battles/{demo.pk}/"
    alice = sign_in(watch("alice"), live_server.url, "alice")
    bob = sign_in(watch("bob"), live_server.url, "bob")
    for page in (alice, bob):
        page.goto(battle_url)
    alice.select_option("#activate-unit", f"u{team[0].pk}")
    alice.locator("#turns input[name=fireteam]").check()
    with swapped(alice, "#turns"):
        alice.locator("#turns [data-action=lg_activate]").click()
    expect(alice.locator("#turns [data-action=lg_team_done]")).to_be_enabled()
    expect(bob.locator("#why-lg_pass")).to_contain_text("fireteam holds the initiative", timeout=POLL_WAIT_MS)
    expect(bob.locator("#turns [data-action=lg_pass]")).to_be_disabled()
    expect(bob.locator("#turns [data-action=lg_team_done]")).to_have_count(0)
    with swapped(alice, "#turns"):
        alice.locator("#turns [data-action=lg_team_done]").click()
    expect(alice.locator("#turns [data-action=lg_team_done]")).to_have_count(0)
    expect(bob.locator("#turns [data-action=lg_pass]")).to_be_enabled(timeout=POLL_WAIT_MS)
    assert LogEntry.objects.filter(battle=demo, action="lg_team_done").count() == 1
    assert Battle.objects.get(pk=demo.pk).sequence["initiative"] == "B"


def test_the_upkeeps_fire_attack_is_followed_up_from_the_turn_panel(live_server, demo, watch):
    """A burning townhouse attacks the squad inside at the start of the turn (seed 000, AF 5); the turn
    panel offers to enter who that eliminated. Alice taps it, the form comes filled in (the fire, the
    squad), she ticks the squad as eliminated and records it; bob's phone sees the offer go away."""
    townhouse, sid, units, _ = ids(demo)
    Structure.objects.filter(pk=townhouse.pk).update(fire_size=4, fire_started_turn=demo.turn)
    Battle.objects.filter(pk=demo.pk).update(ruleset="lg", fires=True, collapse_check=False,
                                             upkeep_turn=demo.turn - 1, sequence={})
    inside = Unit.objects.filter(floor__structure=townhouse).order_by("pk").first()
    if inside is None:
        inside = Unit.objects.filter(army__battle=demo, army__side="B").order_by("pk").first()
        Unit.objects.filter(pk=inside.pk).update(floor=townhouse.floors.order_by("level").first(), x=None, y=None)
    battle_url = live_server.url + f"/battles/{demo.pk}/"
    alice = sign_in(watch("alice"), live_server.url, "alice")
    bob = sign_in(watch("bob"), live_server.url, "bob")
    for page in (alice, bob):
        page.goto(battle_url)
    with swapped(alice, "#turns"):
        alice.locator("#turns [data-action=upkeep]").click()
    offer = alice.locator("#turns a.button-link", has_text="Enter who the fire in Brick townhouse eliminated")
    expect(offer).to_contain_text(inside.name)
    expect(bob.locator("#turns a.button-link", has_text="Enter who the fire")).to_have_count(1, timeout=POLL_WAIT_MS)
    with swapped(alice, "#attack-form"):
        offer.click()
    expect(alice.locator("#id_action")).to_have_value("lg_fire_casualties")
    expect(alice.locator("#id_structure")).to_have_value(sid)
    expect(alice.locator(f'#id_caught input[value="u{inside.pk}"]')).to_be_checked()
    alice.locator(f'#id_eliminated input[value="u{inside.pk}"]').check()
    with swapped(alice, "#turns"):
        alice.locator("#attack-form button.resolve").click()
    expect(alice.locator("#turns a.button-link", has_text="Enter who the fire")).to_have_count(0)
    expect(bob.locator("#turns a.button-link", has_text="Enter who the fire")).to_have_count(0, timeout=POLL_WAIT_MS)
    assert Unit.objects.get(pk=inside.pk).destroyed


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_finish_battle_asks_first_and_a_refusal_shows_beside_the_result(live_server, demo, watch, javascript):
    """Without JavaScript "Finish battle" finished at the first press (only hx-confirm asked): now the page
    asks, keeping the result chosen. A refusal (here: finished meanwhile from another phone) showed at the
    page's top, over HTMX after a reload that closed and emptied the form; now beside Result, in the form
    left open with the text typed."""
    page = sign_in(watch("demo", javascript=javascript), live_server.url, "demo")
    page.goto(f"{live_server.url}/battles/{demo.pk}/")
    page.locator("#finish-battle summary").click()
    page.check('#finish-battle input[name="winner"][value="B"]')
    page.fill("#finish-result", "The barn burned")
    if not javascript:
        with page.expect_navigation():
            page.get_by_role("button", name="Finish battle", exact=True).click()
        expect(page.locator("#finish-battle .confirm-form")).to_contain_text("Side B won: The barn burned.")
        assert Battle.objects.get(pk=demo.pk).status == BattleStatus.IN_PROGRESS
        with page.expect_navigation():
            page.get_by_role("link", name="No, not yet").click()
        expect(page.locator("#finish-battle .confirm-form")).to_have_count(0)
        expect(page.locator('#finish-battle input[name="winner"][value="B"]')).to_be_checked()
        expect(page.locator("#finish-result")).to_have_value("The barn burned")
    # Another organiser's phone finishes it first.
    campaign_services.finish_battle(battle_id=demo.pk, user=get_user_model().objects.get(username="demo"), winner="A")
    if javascript:
        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Finish battle", exact=True).click()
    else:
        with page.expect_navigation():
            page.get_by_role("button", name="Finish battle", exact=True).click()
    if javascript:
        expect(page.locator("#finish-error")).to_have_text("This battle is already finished")
        expect(page.locator("#finish-battle")).to_have_attribute("open", "")
        expect(page.locator("#finish-result")).to_have_value("The barn burned")
    else:
        # Finished: the page has no Finish form any more, so the refusal is at its top.
        expect(page.locator(".messages")).to_contain_text("This battle is already finished")
    assert Battle.objects.get(pk=demo.pk).winner == "A"


def test_what_is_typed_in_the_turns_panel_stays_when_another_phone_acts(live_server, demo, watch):
    """Every change another phone makes redraws the turns panel. The organiser half way through Finish
    battle (result chosen, words typed) and through End turn with the table's own dice lost all of it, the
    sections closed, whenever a player moved a piece meanwhile."""
    # End turn's upkeep then owes one die: the half-damaged church's collapse check.
    Battle.objects.filter(pk=demo.pk).update(collapse_check=True, damage_variant=3)
    church = Structure.objects.get(battle=demo, name="Stone church")
    Structure.objects.filter(pk=church.pk).update(damage_taken=church.damage_max // 2, collapsed=False)
    page = sign_in(watch("demo"), live_server.url, "demo")
    page.goto(f"{live_server.url}/battles/{demo.pk}/")
    page.locator("#finish-battle summary").click()
    page.check('#finish-battle input[name="winner"][value="B"]')
    page.fill("#finish-result", "The barn burned")
    page.locator("#turns details.own-dice summary").last.click()
    page.locator("#dice-end_turn").fill("4")
    page.locator("#finish-result").focus()
    sniper = Unit.objects.get(army__battle=demo, floor__structure__name="Foxhole centre")
    before = newest_seq(demo)
    with swapped(page, "#turns"):
        services.perform(battle_id=demo.pk, user=sniper.army.owner, action="move",
                         inputs={"unit": f"u{sniper.pk}", "x": "18", "y": "2"})
    assert newest_seq(demo) == before + 1
    expect(page.locator("#finish-battle")).to_have_attribute("open", "")
    expect(page.locator('#finish-battle input[name="winner"][value="B"]')).to_be_checked()
    expect(page.locator("#finish-result")).to_have_value("The barn burned")
    expect(page.locator("#finish-result")).to_be_focused()  # the player typing there keeps typing there
    expect(page.locator("#dice-end_turn")).to_be_visible()
    expect(page.locator("#dice-end_turn")).to_have_value("4")
    # Its own answer is the panel as it now stands: End turn with those dice leaves no dice typed.
    page.once("dialog", lambda dialog: dialog.accept())
    with swapped(page, "#turns"):
        page.locator("#dice-end_turn").press("Enter")
    upkeep = LogEntry.objects.get(battle=demo, seq__gt=before + 1, action="upkeep")
    assert [(d["faces"], d["source"]) for d in upkeep.dice if "Collapse check" in d["purpose"]] == [([4], "player")]
    assert page.evaluate("() => (document.getElementById('dice-end_turn') || {}).value || ''") == ""


def another_phone_acts(page, demo, user, action, inputs, **more):
    """Another phone acts (through the services); `page` hears of it by its poll, and its attack form asks
    again (battle-changed)."""
    before = newest_seq(demo)
    with page.expect_response(lambda response: response.url.split("?")[0].endswith(f"/battles/{demo.pk}/form/")):
        with swapped(page, "#turns"):
            services.perform(battle_id=demo.pk, user=user, action=action, inputs=inputs, **more)
    page.wait_for_function(QUIET)
    assert newest_seq(demo) == before + 1


def foxhole_sniper(demo):
    return Unit.objects.select_related("army__owner").get(army__battle=demo, floor__structure__name="Foxhole centre")


# A property, not an attribute: it marks the very element without changing how it is drawn.
KEEP = "sels => sels.forEach(s => { document.querySelector(s).redoubtKept = true; })"
KEPT = "sels => sels.filter(s => !(document.querySelector(s) || {}).redoubtKept)"


def test_the_attack_form_a_player_is_choosing_in_stays_put_when_another_phone_acts(live_server, demo, watch):
    """Another phone's change has the attack form ask again, and mostly nothing in it changes; it was swapped
    in anew all the same. The select whose picker the player had open went with the old form (no picker can
    be seen headless; that the select is still the same element can), and as the focused select went, the
    page jumped some 1,500 px away from the log the player had scrolled down to read."""
    alice, (townhouse, sid, units, shell) = aiming_with_our_own_dice(live_server, demo, watch)
    alice.locator("#id_weapon").focus()
    alice.locator("#log-title").scroll_into_view_if_needed()
    reading = alice.locator("#log-title").bounding_box()["y"]
    alice.evaluate(KEEP, ["#id_weapon", "#id_target", "#card"])
    sniper = foxhole_sniper(demo)
    another_phone_acts(alice, demo, sniper.army.owner, "move", {"unit": f"u{sniper.pk}", "x": "18", "y": "2"})
    assert alice.evaluate(KEPT, ["#id_weapon", "#id_target", "#card"]) == []
    expect(alice.locator("#id_weapon")).to_be_focused()
    expect(alice.locator("#id_weapon")).to_have_value(shell)
    expect(alice.locator("#id_dice_0")).to_have_value("4")
    expect(alice.locator('#id_hit input[value="yes"]')).to_be_checked()
    expect(alice.locator('#id_dice_mode input[value="player"]')).to_be_checked()
    # Still reading the log where they were (a new entry and a line of the turns panel may shift it a little).
    assert abs(alice.locator("#log-title").bounding_box()["y"] - reading) < 40


def test_a_change_to_the_attack_form_waits_while_one_of_its_selects_has_the_focus(live_server, demo, watch):
    """Another phone's change that the attack form does show (the field gun alice is aiming has fired) was
    swapped in at once, and took away the select whose picker alice had open. It waits until she leaves it."""
    alice, (townhouse, sid, units, shell) = aiming_with_our_own_dice(live_server, demo, watch)
    gun, squad = units[("A", "Field gun team")], units[("B", "Grenadier Squad 2")]
    option = alice.locator(f'#id_attacker option[value="{gun}"]')
    assert "acted" not in option.inner_text()
    alice.locator("#id_weapon").focus()
    alice.evaluate(KEEP, ["#id_weapon"])
    another_phone_acts(alice, demo, get_user_model().objects.get(username="alice"), "ba_he",
                       {"weapon": shell, "structure": sid, "target": squad, "hit": "yes"}, attacker=gun,
                       dice_values=["3", "4"])
    assert alice.evaluate(KEPT, ["#id_weapon"]) == []
    expect(alice.locator("#id_weapon")).to_be_focused()
    assert "acted" not in option.inner_text()
    # Out of the select: the form asks again, and now says so.
    with alice.expect_response(lambda response: response.url.split("?")[0].endswith(f"/battles/{demo.pk}/form/")):
        alice.locator("#id_weapon").blur()
    alice.wait_for_function(QUIET)
    assert alice.evaluate(KEPT, ["#id_weapon"]) == ["#id_weapon"]
    expect(option).to_contain_text("acted")


def test_the_turns_panel_and_header_a_player_is_using_stay_put_when_another_phone_acts(live_server, demo, watch):
    """Another phone's change redraws the turns panel and the header. The piece chosen to activate and the
    ticked fireteam box were put back, but in a new select (an open picker closed) and a new box (the focus
    on it fell to the page); the event's "What it does" and the header's "Rules and options" closed."""
    sniper = foxhole_sniper(demo)
    Battle.objects.filter(pk=demo.pk).update(
        ruleset="lg", fireteam_initiative=True, uncontrolled_events=True, upkeep_turn=demo.turn,
        sequence={"initiative": "A", "rolled": True, "activated": [f"u{sniper.pk}"], "events": [
            {"roll": 1, "name": "Friendly artillery support", "affects": "A", "beneficiary": "A",
             "turn": demo.turn, "until_turn": demo.turn + 1}]})
    team = list(Unit.objects.filter(army__battle=demo, army__side="A").exclude(pk=sniper.pk).order_by("pk")[:2])
    Unit.objects.filter(pk__in=[u.pk for u in team]).update(fireteam="red")
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    chosen = alice.locator("#activate-unit option").last.get_attribute("value")
    assert chosen != alice.locator("#activate-unit").input_value()  # not the one drawn chosen
    alice.select_option("#activate-unit", chosen)
    fireteam = alice.locator("#turns input[name=fireteam]")
    fireteam.check()
    alice.locator("#turns details.event-effect summary").click()
    alice.locator("#battle-header details summary").click()
    fireteam.focus()
    alice.evaluate(KEEP, ["#activate-unit", "#turns input[name=fireteam]"])
    # The organiser, on their phone, records the move of the sniper side A has activated.
    organiser = get_user_model().objects.get(username="demo")
    another_phone_acts(alice, demo, organiser, "move", {"unit": f"u{sniper.pk}", "x": "18", "y": "2"})
    assert alice.evaluate(KEPT, ["#activate-unit", "#turns input[name=fireteam]"]) == []
    expect(alice.locator("#activate-unit")).to_have_value(chosen)
    expect(fireteam).to_be_checked()
    expect(fireteam).to_be_focused()
    expect(alice.locator("#turns details.event-effect")).to_have_attribute("open", "")
    expect(alice.locator("#battle-header details")).to_have_attribute("open", "")
    # What the change did shows all the same.
    version = Battle.objects.get(pk=demo.pk).version
    expect(alice.locator("#battle-header")).to_have_attribute("data-version", str(version))
    expect(alice.locator("#poller input[name=v]")).to_have_value(str(version))
    expect(alice.locator(f"#log-{newest_seq(demo)}")).to_contain_text(sniper.name)


def test_a_player_reading_below_the_attack_form_keeps_their_place_when_another_phone_redraws_it(
        live_server, demo, watch):
    """Another phone fires the field gun alice was aiming: her form asks again and is drawn anew without it.
    htmx puts the new form in before it takes the old one out, and with the focus still in the old one (the
    select last chosen), Chromium moved the page down by the form's height: alice, reading the log further
    down, found herself some 1,500 px below it."""
    townhouse, sid, units, shell = ids(demo)
    gun, squad = units[("A", "Field gun team")], units[("B", "Grenadier Squad 2")]
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    with swapped(alice, "#card", "#attack-form"):
        alice.locator(f'#map [data-structure="{sid}"]').tap()
    aim_the_field_gun(alice, units, shell)
    alice.locator("#id_weapon").focus()
    alice.locator("#log-title").scroll_into_view_if_needed()
    reading = alice.locator("#log-title").bounding_box()["y"]
    with swapped(alice, "#attack-form"):  # drawn anew: the gun has acted
        services.perform(battle_id=demo.pk, user=get_user_model().objects.get(username="alice"), action="ba_he",
                         inputs={"weapon": shell, "structure": sid, "target": squad, "hit": "yes"}, attacker=gun,
                         dice_values=["3", "4"])
    alice.wait_for_function(QUIET)
    # Where it was, give or take a line of the turns panel above it.
    assert abs(alice.locator("#log-title").bounding_box()["y"] - reading) < 100


def test_a_box_unticked_while_the_form_answers_is_kept(live_server, demo, watch):
    """Alice enters who the fire caught and eliminated: she ticks one piece as eliminated and, before the
    form's answer to that is back, unticks a piece as caught. That box came back ticked with the answer,
    and stayed so: the form told what had changed meanwhile only by a list's first ticked value."""
    townhouse, sid, units, _ = ids(demo)
    Structure.objects.filter(pk=townhouse.pk).update(fire_size=4, fire_started_turn=demo.turn)
    Battle.objects.filter(pk=demo.pk).update(ruleset="lg", fires=True, collapse_check=False,
                                             upkeep_turn=demo.turn - 1, sequence={})
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    with swapped(alice, "#turns"):
        alice.locator("#turns [data-action=upkeep]").click()
    with swapped(alice, "#attack-form"):
        alice.locator("#turns a.button-link", has_text="Enter who the fire in Brick townhouse eliminated").click()
    # The form comes with the pieces the fire reached ticked as caught (in the demo, two).
    first, second = alice.locator("#id_caught input:checked").evaluate_all("boxes => boxes.map(b => b.value)")
    held = []
    alice.route("**/form/**", lambda route: held.append(route) if not held else route.continue_())
    alice.locator(f'#id_eliminated input[value="{first}"]').check()
    alice.wait_for_function("() => document.querySelector('#attack-panel').classList.contains('htmx-request')")
    alice.locator(f'#id_caught input[value="{second}"]').uncheck()
    assert len(held) == 1, "the untick waits behind the tick's answer"
    held[0].continue_()
    alice.wait_for_function(QUIET)
    alice.unroute("**/form/**")
    expect(alice.locator(f'#id_eliminated input[value="{first}"]')).to_be_checked()
    expect(alice.locator(f'#id_caught input[value="{first}"]')).to_be_checked()
    expect(alice.locator(f'#id_caught input[value="{second}"]')).not_to_be_checked()
