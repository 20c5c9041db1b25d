"""The map's names as the poll leaves them, in a real Chromium at a phone's size: where a structure's
name goes depends on its neighbours, so a change to one piece may move another's name. A phone that
only redrew the pieces the change touched kept the old name there, and two phones showed two maps."""

import pytest
from django.urls import reverse

from apps.armies.models import Unit
from apps.battles import services
from apps.structures.models import Structure
from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser]

NAMES = """() => Object.fromEntries(Array.from(document.querySelectorAll('#map .map-structure'), piece => {
  const name = piece.querySelector('.map-name');
  return [piece.dataset.structure, name && [name.textContent, name.getAttribute('x'), name.getAttribute('y')]];
}))"""


def bob_watching_the_foxholes(live_server, demo, watch):
    """Bob's phone open on the demo battle; Foxhole east's id, the sniper in the centre foxhole, bob's page
    and the names as it first drew them."""
    east = f"s{Structure.objects.get(battle=demo, name='Foxhole east').pk}"
    sniper = Unit.objects.get(army__battle=demo, floor__structure__name="Foxhole centre")
    bob = watch("bob")
    sign_in(bob, live_server.url, "bob")
    bob.goto(live_server.url + reverse("battle", args=[demo.pk]))
    return east, sniper, bob, bob.evaluate(NAMES)


def test_a_sniper_leaving_its_foxhole_moves_the_next_foxholes_name_on_a_watching_phone(live_server, demo, watch):
    """The demo's sniper team holds the centre foxhole; its badge keeps Foxhole east's name off the spot
    it would take. The sniper walks out into the open (alice's move): bob's phone, watching, must draw
    Foxhole east's name where a page opened afresh draws it, every name where that page has it."""
    east, sniper, bob, before = bob_watching_the_foxholes(live_server, demo, watch)
    alice = sign_in(watch("alice"), live_server.url, "alice")
    services.perform(battle_id=demo.pk, user=sniper.army.owner, action="move",
                     inputs={"unit": f"u{sniper.pk}", "x": "18", "y": "2"})
    bob.wait_for_function(f"() => (({NAMES})()['{east}'] || [])[2] !== {before[east][2]!r}", timeout=6_000)
    alice.goto(live_server.url + reverse("battle", args=[demo.pk]))
    assert bob.evaluate(NAMES) == alice.evaluate(NAMES)


def test_an_undone_move_brings_the_next_foxholes_name_back_on_a_watching_phone(live_server, demo, watch):
    """The sniper walks out, then the move is undone: bob's phone held the move, and redraws only what
    the undo took back (the foxholes, the units on the table), not the whole map, with every name where
    a page opened afresh has it: Foxhole east's back where it was before the move."""
    east, sniper, bob, before = bob_watching_the_foxholes(live_server, demo, watch)
    services.perform(battle_id=demo.pk, user=sniper.army.owner, action="move",
                     inputs={"unit": f"u{sniper.pk}", "x": "18", "y": "2"})
    bob.wait_for_function(f"() => (({NAMES})()['{east}'] || [])[2] !== {before[east][2]!r}", timeout=6_000)
    bob.evaluate("() => { document.getElementById('map').dataset.kept = '1'; }")  # gone if #map is swapped
    services.undo_last(battle_id=demo.pk, user=sniper.army.owner)
    bob.wait_for_function(f"() => (({NAMES})()['{east}'] || [])[2] === {before[east][2]!r}", timeout=6_000)
    assert bob.evaluate("() => document.getElementById('map').dataset.kept") == "1"
    assert bob.evaluate(NAMES) == before
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(live_server.url + reverse("battle", args=[demo.pk]))
    assert bob.evaluate(NAMES) == alice.evaluate(NAMES)
