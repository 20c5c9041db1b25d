"""The battle screen end to end through the test client: resolve with the players' dice or the
server's, every kind of bad input (a message in the form, nothing changed, no entry), double taps,
undo, the turn buttons, LaserGrenadiers initiative, CSRF, and other clubs seeing nothing.

Every test checks the database afterwards, not just the HTML."""

import math
import re
import uuid
from urllib.parse import parse_qs, urlsplit

import pytest
from django.http import QueryDict
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.armies.models import Unit, UnitWeapon
from apps.battles import services, views, watch
from apps.battles.models import Battle, BattleStatus, LogEntry
from apps.campaigns.models import Campaign, Club, Membership, Role, Scenario
from apps import rules
from apps.rules import SequenceState
from apps.rules.tables import DH_SHEETS
from apps.structures.models import Structure
from tests import factories
from tests.campaigns.test_pages import assert_csp_clean, body, page, text_of  # noqa: F401
from tests.campaigns.test_pages import fast_passwords  # noqa: F401 - autouse: cheap password hashing
from tests.demo_rows import load_demo

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def w(db):
    """A Bolt Action battle: side A's field gun (HE 2D6) facing side B's grenadiers on floor 1 of a
    brick house; alice commands A, bob B; olga belongs to another club."""
    w = factories.make_world()
    w.he = factories.weapon("ba", "he-2d6", name="HE shell 2D6", he_value="2D6")
    w.flamer = factories.weapon("ba", "flamethrower", name="Flamethrower", flamethrower=True)
    w.house = w.structure("Brick house", floors=2, x=30, y=20)
    w.floors = list(w.house.floors.order_by("level"))
    w.gun = w.unit("A", "Field gun", weapons=[w.he], x=30, y=5, kind="artillery", models=4)
    w.rifles = w.unit("A", "Rifles", weapons=[], x=10, y=5)
    w.squad = w.unit("B", "Grenadiers", floor=w.floors[1])
    w.pioneers = w.unit("B", "Pioneers", weapons=[w.flamer], x=40, y=40, models=2)
    other = factories.make_world(club_name="Other club")
    w.other_battle = other.battle
    w.other_house = other.structure("Their house")
    w.olga = other.organiser
    return w


def sid(structure):
    return f"s{structure.pk}"


def uid(unit):
    return f"u{unit.pk}"


def url(w, name, *args):
    return reverse(name, args=[w.battle.pk, *args])


def signed(client, account):
    client.force_login(account)
    return client


def he_attack(w, **extra):
    data = {"action": "ba_he", "attacker": uid(w.gun), "weapon": f"w{w.he.pk}", "structure": sid(w.house),
            "target": uid(w.squad), "hit": "yes", "went_down": "no", "pins": "1", "dice_mode": "player",
            "client_token": str(uuid.uuid4())}
    data.update(extra)
    return data


def state(w):
    """Everything an attack could change, to compare before and after a refusal."""
    battle = Battle.objects.get(pk=w.battle.pk)
    return (battle.version, battle.map_version, battle.turn, LogEntry.objects.filter(battle=battle).count(),
            list(Structure.objects.filter(battle=battle).order_by("pk").values()),
            list(Unit.objects.filter(army__battle=battle).order_by("pk").values()))


def form_html(response):
    node = page(response).find("attack-form")
    assert node is not None, "no attack form in the response"
    return node.text()


# ---------------------------------------------------------------------------------- the page

def test_page_has_map_card_form_turns_log_and_poller(client, w):
    # HE is offered only to units carrying an HE weapon: each side's infantry gets one, so the list
    # below holds alice's and not bob's because of their sides.
    for unit in (w.rifles, w.squad):
        UnitWeapon.objects.create(unit=unit, weapon=w.he)
    response = signed(client, w.alice).get(url(w, "battle") + f"?target={sid(w.house)}")
    assert response.status_code == 200
    assert_csp_clean(response)
    html = body(response)
    for element in ("map", "card", "attack-form", "battle-log", "poller", "turns", "battle-header"):
        assert f'id="{element}"' in html, element
    assert f'data-structure="{sid(w.house)}"' in html
    assert 'viewBox="0 0 72 48"' in html
    # The footprint is centred on (x, y): a 6″ square at (30, 20) starts at (27, 17).
    assert 'x="27" y="17" width="6" height="6"' in html
    card = text_of(response, "card")
    assert "Brick house" in card and "Floor 1 Grenadiers" in card and "Front 2 windows" in card
    # The target is preselected and the attacker list holds only alice's units.
    form = page(response).find("attack-form")
    selected = [o.attrs.get("value") for o in form.find_all("option") if "selected" in o.attrs]
    assert sid(w.house) in selected
    attackers = [o.attrs["value"] for o in page(response).find("id_attacker").find_all("option")]
    assert attackers == ["", uid(w.gun), uid(w.rifles)]
    actions = [o.attrs["value"] for o in page(response).find("id_action").find_all("option")]
    assert "ba_he" in actions and not set(actions) & services.TURN_ACTIONS
    assert re.search(r'name="client_token" value="[0-9a-f-]{36}"', html)


def test_a_unit_that_acted_is_not_offered(client, w):
    UnitWeapon.objects.create(unit=w.rifles, weapon=w.he)  # HE is offered only to units that carry it
    Unit.objects.filter(pk=w.gun.pk).update(acted=True)
    response = signed(client, w.alice).get(url(w, "battle"))
    attackers = [o.attrs["value"] for o in page(response).find("id_attacker").find_all("option")]
    assert attackers == ["", uid(w.rifles)]


def test_an_empty_attacker_list_says_whose_units_have_acted(client, w):
    """Found at a phone-sized table: once the field gun had fired, the HE form's unit list was empty and said
    nothing, and the player looked for the gun they had just fired with. Left empty, the list names who has
    acted; a unit that merely lacks the weapon (the rifles) is not named."""
    Unit.objects.filter(pk=w.gun.pk).update(acted=True)
    response = signed(client, w.alice).get(url(w, "battle"))
    attackers = [o.attrs["value"] for o in page(response).find("id_attacker").find_all("option")]
    assert attackers == [""]
    assert text_of(response, "id_attacker_helptext") == "Not offered: Field gun (has acted this turn)"
    # With a unit to choose, the list says nothing more than it did.
    UnitWeapon.objects.create(unit=w.rifles, weapon=w.he)
    response = signed(client, w.alice).get(url(w, "battle"))
    assert page(response).find("id_attacker_helptext") is None


def test_a_watcher_sees_no_form(client, w):
    designer = factories.User.objects.create_user("dora-test", password="x")
    Membership.objects.create(club=w.club, user=designer, role=Role.DESIGNER)
    response = signed(client, designer).get(url(w, "battle"))
    assert response.status_code == 200
    assert '<form id="attack-form"' not in body(response)
    assert "only this battle's players and the club's organisers act" in text_of(response, "attack-panel")


def test_card_partial_selects_the_target_in_the_form(client, w):
    signed(client, w.alice)
    response = client.get(url(w, "battle_card", sid(w.house)), {"action": "ba_he", "attacker": uid(w.gun)}, **HTMX)
    assert response.status_code == 200
    html = body(response)
    assert html.lstrip().startswith('<section id="card"')
    assert "Grenadiers" in text_of(response, "card")
    form = page(response).find("attack-form")
    assert form.attrs.get("hx-swap-oob") == "true"
    selected = [o.attrs.get("value") for o in form.find_all("option") if "selected" in o.attrs]
    # The one enemy unit inside is what the player most likely means to hit.
    assert sid(w.house) in selected and uid(w.squad) in selected and uid(w.gun) in selected
    # Without JavaScript the same link is the page with ?target=.
    plain = client.get(url(w, "battle_card", sid(w.house)))
    assert plain.status_code == 302 and plain["Location"].startswith(url(w, "battle") + f"?target={sid(w.house)}")


def test_a_tap_leaves_the_unit_a_damage_roll_hits_alone(client, w):
    """A damage roll names a unit, not a structure: tapping the map must not swap the unit chosen
    for another (the player's own, say), and nothing is chosen for the player to begin with."""
    signed(client, w.alice)
    chosen = {"action": "ba_damage", "target": uid(w.pioneers), "hits": "2"}

    def selected(response):
        form = page(response).find("attack-form")
        return {s.attrs["name"]: [o.attrs.get("value") for o in s.find_all("option") if "selected" in o.attrs]
                for s in form.find_all("select")}

    tapped = client.get(url(w, "battle_card", sid(w.house)), chosen, **HTMX)
    assert selected(tapped)["target"] == [uid(w.pioneers)]
    # With no unit chosen yet, the one enemy inside the tapped house is the likely one.
    tapped = client.get(url(w, "battle_card", sid(w.house)), {**chosen, "target": ""}, **HTMX)
    assert selected(tapped)["target"] == [uid(w.squad)]
    fresh = client.get(url(w, "battle_form"), {"action": "ba_damage"}, **HTMX)
    target = next(s for s in page(fresh).find("attack-form").find_all("select") if s.attrs["name"] == "target")
    assert target.find_all("option")[0].attrs.get("value") == "" and selected(fresh)["target"] == [""]


def test_the_weapon_list_offers_what_can_make_the_action(client, w):
    """The rule says which weapons can make an action at all (`Field.fits`): HE needs an HE value, so
    the gun's anti-tank round is not offered for it, and its one HE shell is chosen at once."""
    at_gun = factories.weapon("ba", "at-gun", name="Anti-tank gun")
    UnitWeapon.objects.create(unit=w.gun, weapon=at_gun)
    signed(client, w.alice)

    def weapons(**data):
        form = page(client.get(url(w, "battle_form"), {"structure": sid(w.house), **data}, **HTMX))
        select = next(s for s in form.find("attack-form").find_all("select") if s.attrs["name"] == "weapon")
        return [(o.attrs.get("value"), o.text(), "selected" in o.attrs) for o in select.find_all("option")]

    assert weapons(action="ba_he", attacker=uid(w.gun)) == [("", "Choose a weapon", False),
                                                            (f"w{w.he.pk}", "HE shell 2D6", True)]
    # A unit none of whose weapons can do it is not offered as the attacker; sent all the same, its
    # weapon list says so.
    sent = client.post(url(w, "battle_resolve"), {"action": "ba_flamethrower", "attacker": uid(w.gun),
                                                  "structure": sid(w.house), "client_token": str(uuid.uuid4())},
                       **HTMX)
    assert [(o.attrs.get("value"), o.text()) for o in page(sent).find("id_weapon").find_all("option")] == [
        ("", "Field gun has no weapon that can do this")]
    # A weapon chosen before that cannot do it gives way to the one that can while choosing…
    assert weapons(action="ba_he", attacker=uid(w.gun), weapon=f"w{at_gun.pk}")[1:] == [
        (f"w{w.he.pk}", "HE shell 2D6", True)]
    # …and, submitted all the same, stays beside the rule's reason.
    response = client.post(url(w, "battle_resolve"), he_attack(w, weapon=f"w{at_gun.pk}"), **HTMX)
    assert "Anti-tank gun has no HE value" in text_of(response, "field-weapon")
    assert "Anti-tank gun (cannot do this)" in text_of(response, "field-weapon")


def test_before_a_unit_is_chosen_the_weapon_list_is_what_the_players_units_carry(client, w):
    """With no attacker chosen (the form a page opens with, and the one drawn under each result once the
    unit that fired has acted), the list was the club library's every weapon of the ruleset, a panzerfaust
    nobody in the battle carries among them: choosing one was refused once a unit was picked."""
    factories.weapon("ba", "panzerfaust", name="Panzerfaust", he_value="D6")  # in the library, carried by nobody

    def weapons(user, action):
        signed(client, user)
        form = page(client.get(url(w, "battle_form"), {"action": action, "structure": sid(w.house)}, **HTMX))
        select = next(s for s in form.find("attack-form").find_all("select") if s.attrs["name"] == "weapon")
        return [o.text() for o in select.find_all("option")]

    assert weapons(w.alice, "ba_he") == ["Choose a weapon", "HE shell 2D6"]
    assert weapons(w.bob, "ba_flamethrower") == ["Choose a weapon", "Flamethrower"]
    assert weapons(w.alice, "ba_flamethrower") == ["Choose a weapon"]  # side A has none
    assert weapons(w.organiser, "ba_he") == ["Choose a weapon", "HE shell 2D6"]


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_a_unit_that_carries_no_weapon_is_offered_none(client, w, htmx):
    """Rifles carries no weapon in this battle: its weapon list was the whole catalogue (as if no unit
    were chosen), and whatever the player picked was refused ("Rifles does not carry …"). The form no
    longer offers Rifles for HE; sent with it all the same, the list says the unit has no weapon that
    can do this, and a weapon sent anyway is still refused beside the field."""
    signed(client, w.alice)
    before = state(w)
    sent = client.post(url(w, "battle_resolve"), he_attack(w, attacker=uid(w.rifles), weapon=""),
                       **(HTMX if htmx else {}))
    assert [(o.attrs["value"], o.text()) for o in page(sent).find("id_weapon").find_all("option")] == \
        [("", "Rifles has no weapon that can do this")]
    assert state(w) == before
    response = client.post(url(w, "battle_resolve"), he_attack(w, attacker=uid(w.rifles)), **(HTMX if htmx else {}))
    assert response.status_code == (200 if htmx else 422)
    assert "Rifles does not carry HE shell 2D6" in text_of(response, "field-weapon")
    assert "HE shell 2D6 (not carried)" in text_of(response, "field-weapon")
    assert state(w) == before


def attacker_options(response):
    """The attacking units offered, as (value, label, selected), the blank first choice left out."""
    select = page(response).find("id_attacker")
    return [(o.attrs["value"], o.text(), "selected" in o.attrs) for o in select.find_all("option") if o.attrs["value"]]


def test_an_attack_offers_only_the_units_carrying_a_weapon_that_can_make_it(client, db):
    """In the demo battle 'HE over open sights' listed all five Soviet units, and a rifle squad picked
    was told it '… has no weapon that can do this'. Only the field gun team carries HE. Actions that
    ask no weapon of the unit (a damage roll, an air strike's aircraft) still offer every unit, and a
    squad chosen for one is let go when the action changes to HE, then offered again."""
    from django.contrib.auth.models import User

    load_demo()
    battle = Battle.objects.get(name="Village crossroads — session 1")
    units = {u.name: f"u{u.pk}" for u in Unit.objects.filter(army__battle=battle, army__side="A")}
    squad = units["1st Rifle Squad"]
    signed(client, User.objects.get(username="alice"))

    def offered(**data):
        return attacker_options(client.get(reverse("battle_form", args=[battle.pk]), data, **HTMX))

    assert [(v, chosen) for v, _, chosen in offered(action="ba_he")] == [(units["Field gun team"], False)]
    everyone = sorted(units.values())
    damage = offered(action="ba_damage", attacker=squad)
    assert sorted(v for v, _, _ in damage) == everyone and (squad, True) in [(v, c) for v, _, c in damage]
    # Changed to HE with the squad chosen: let go, not left selected without being offered.
    he = client.get(reverse("battle_form", args=[battle.pk]), {"action": "ba_he", "attacker": squad}, **HTMX)
    assert [v for v, _, _ in attacker_options(he)] == [units["Field gun team"]]
    assert not any(chosen for _, _, chosen in attacker_options(he))
    assert "has no weapon that can do this" not in text_of(he, "field-weapon")
    # Indirect fire needs a weapon that fires indirect; an air strike's aircraft is nobody's weapon.
    assert offered(action="ba_indirect", mode="indirect") == []
    assert sorted(v for v, _, _ in offered(action="ba_indirect", mode="air_strike", attacker=squad)) == everyone
    assert sorted(v for v, _, _ in offered(action="ba_damage")) == everyone


def test_small_arms_whose_weapon_may_be_left_out_offer_every_unit(client, db):
    """Disposable Heroes small arms need no weapon named (the firing unit's shots are what count): a
    section carrying none is offered for them, but not for a main gun, which must be one it carries."""
    dh = factories.make_world(ruleset="dh", club_name="Heroes club")
    gun = factories.weapon("dh", "pak-40-t", name="PaK 40", dh_category="main_gun")
    gunners = dh.unit("A", "Gun crew", weapons=[gun])
    section = dh.unit("A", "Rifle section")
    signed(client, dh.alice)

    def offered(action):
        return [v for v, _, _ in attacker_options(client.get(url(dh, "battle_form"), {"action": action}, **HTMX))]

    assert offered("dh_small_arms") == [uid(gunners), uid(section)]
    assert uid(section) not in offered("dh_main_gun")


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_an_attacker_without_a_weapon_for_the_action_sent_anyway_stays_chosen_beside_the_refusal(client, w, htmx):
    """The form no longer offers Rifles for HE; a form sent with it all the same is refused beside the
    weapon as before, nothing changed, and Rifles stays chosen, saying why, rather than the select
    silently falling back to 'Choose a unit'."""
    signed(client, w.alice)
    before = state(w)
    sent = client.post(url(w, "battle_resolve"), he_attack(w, attacker=uid(w.rifles)), **(HTMX if htmx else {}))
    assert sent.status_code == (200 if htmx else 422)
    assert "Rifles does not carry HE shell 2D6" in text_of(sent, "field-weapon")
    assert [(v, "— no weapon that can do this" in label, chosen) for v, label, chosen in attacker_options(sent)
            if v == uid(w.rifles)] == [(uid(w.rifles), True, True)]
    assert state(w) == before and not LogEntry.objects.filter(battle=w.battle).exists()


def test_a_long_choice_is_repeated_in_full_below_its_select(client, w):
    """A native select cuts its choice off at a phone's width: a long one is repeated under it."""
    signed(client, w.alice)
    form = page(client.get(url(w, "battle_form"), {"action": "ba_he", "structure": sid(w.house),
                                                   "target": uid(w.squad), "weapon": f"w{w.he.pk}"}, **HTMX))
    repeated = {field.attrs["id"]: p.text() for field in form.find_all("div", cls="field")
                for p in field.find_all("p", cls="chosen-in-full")}
    assert repeated == {"field-target": "Grenadiers (side B, 10 models, in Brick house, floor 1)"}


def test_units_on_one_spot_are_drawn_apart(client, w):
    """The rifles and the pioneers stand on the same spot: two markers, each still titled."""
    Unit.objects.filter(pk=w.pioneers.pk).update(x=10, y=5)
    html = body(signed(client, w.alice).get(url(w, "battle")))
    markers = re.findall(r'<circle class="map-unit side-(\w)" cx="([\d.]+)" cy="([\d.]+)" r="1" role="img" '
                         r'aria-label="[^"]+"><title>([^<]+)</title>', html)
    spots = {name: (float(x), float(y)) for _, x, y, name in markers}
    rifles, pioneers = spots["Rifles (side A)"], spots["Pioneers (side B)"]
    assert rifles == (10, 5) and pioneers != rifles and math.dist(rifles, pioneers) >= 2


def test_the_map_names_each_structure_below_its_footprint(client, w):
    Structure.objects.filter(pk=w.house.pk).update(rotation=90, width=10, depth=4)
    signed(client, w.alice)
    piece = page(client.get(url(w, "battle"))).find(f"map-{sid(w.house)}")
    name = next(t for t in piece.find_all("text") if "map-name" in t.attrs.get("class", ""))
    # Turned a quarter, the 10-inch side runs down the table: the name sits 5 + 1.3 inches below the centre.
    assert name.text() == "Brick house" and float(name.attrs["y"]) == 20 + 5 + 1.3


def test_a_map_piece_draws_its_footprint_turned_its_fire_and_its_name_as_text(client, w):
    """Map pieces are drawn in Python (views.piece_svg): numbers as %g prints them, words escaped."""
    Structure.objects.filter(pk=w.house.pk).update(name='<b>"Inn"</b>', rotation=30, width=7.5, depth=4,
                                                  fire_size=12.5, fire_started_turn=1, damage_taken=5, damage_max=20)
    Battle.objects.filter(pk=w.battle.pk).update(ruleset="lg")  # a fire with a size (a Bolt Action one has none)
    html = body(signed(client, w.alice).get(url(w, "battle")))
    assert '<rect class="map-footprint" x="26.25" y="18" width="7.5" height="4" transform="rotate(30 30 20)"></rect>' \
        in html
    assert '<g class="map-fire"><rect x="-1.15" y="-1.15" width="2.3" height="2.3" rx="0.3" ' \
           'transform="translate(30 17.6) rotate(45)"></rect><text x="30" y="17.6">12.5</text></g>' in html
    assert '<text class="map-name" x="30" y="' in html and "&lt;b&gt;&quot;Inn&quot;&lt;/b&gt;" in html
    assert '<b>"Inn"</b>' not in html
    assert '<text class="map-damage" x="30" y="20">25%</text>' in html


def test_a_name_that_would_overprint_a_larger_neighbours_goes_above_its_footprint(client, w):
    shed = w.structure("Garden shed by the house", x=36, y=22, width=2, depth=2)  # beside it, as low
    hut = w.structure("Hut", x=60, y=20, width=2, depth=2)
    signed(client, w.alice)
    html = page(client.get(url(w, "battle")))

    def name(s):
        return [t.text() for t in html.find(f"map-s{s.pk}").find_all("text") if "map-name" in t.attrs.get("class", "")]

    assert name(w.house) == ["Brick house"] and name(hut) == ["Hut"]
    # Below, its words would sit on the house's (where no spot is free, it has none: test_map_names).
    (shed_name,) = [t for t in html.find(f"map-s{shed.pk}").find_all("text") if "map-name" in t.attrs.get("class", "")]
    assert shed_name.text() == "Garden shed by th…" and float(shed_name.attrs["y"]) == 22 - 1 - 1.3
    # A unit standing in the open beside the hut does not cost it its name.
    w.unit("B", "Scouts in the open", x=60, y=22.5)
    html = page(client.get(url(w, "battle")))
    assert name(hut) == ["Hut"] and name(w.house) == ["Brick house"]


def test_the_map_rings_pinned_units_inside_and_in_the_open(client, w):
    """Bolt Action pins were shown on the map only for a Disposable Heroes crew: a squad pinned by an HE
    shell looked as fresh as before on every phone until someone opened its card. Its side's badge on the
    building, and a unit's dot in the open, are ringed and say it to a screen reader."""
    signed(client, w.alice)
    html = page(client.get(url(w, "battle")))
    (badge,) = html.find(f"map-{sid(w.house)}").find_all("g", cls="map-badge")
    assert "is-pinned" not in badge.attrs["class"]
    assert 'class="map-unit side-A" ' in body(client.get(url(w, "battle")))
    Unit.objects.filter(pk__in=[w.squad.pk, w.rifles.pk]).update(pins=2)
    response = client.get(url(w, "battle"))
    html = page(response)
    piece = html.find(f"map-{sid(w.house)}")
    (badge,) = piece.find_all("g", cls="map-badge")
    assert badge.attrs["class"] == "map-badge side-B is-pinned"
    assert "Grenadiers pinned (2)" in piece.find_all("title")[0].text()
    assert 'class="map-unit side-A is-pinned"' in body(response)
    assert 'aria-label="Rifles (side A, pinned 2)"' in body(response)
    assert "pinned" in html.find_all("ul", cls="map-legend")[0].text()


def test_a_bolt_action_fire_is_shown_without_a_size(client, w):
    """Seed 001 sets a building on fire, all of it; its fire has no size and never grows. The map's fire
    diamond read "36", the card "Burning 36 sq in" and "Fire: 36 sq in", the key "burning (sq in)", as if
    the fire could spread (a LaserGrenadiers fire does). A LaserGrenadiers battle keeps its sizes."""
    Structure.objects.filter(pk=w.house.pk).update(fire_size=36, fire_started_turn=1, impassable=True)
    signed(client, w.alice)
    for ruleset, sized in (("ba", False), ("lg", True)):
        Battle.objects.filter(pk=w.battle.pk).update(ruleset=ruleset)
        response = client.get(url(w, "battle") + f"?target={sid(w.house)}")
        piece = page(response).find(f"map-{sid(w.house)}")
        (diamond,) = piece.find_all("g", cls="map-fire")
        assert diamond.find_all("text")[0].text() == ("36" if sized else "")
        assert ("36 sq in" in piece.attrs["aria-label"]) is sized
        card = text_of(response, "card")
        assert ("36 sq in" in card) is sized and "urning" in card
        assert ("burning (sq in)" in page(response).find_all("ul", cls="map-legend")[0].text()) is sized
        # The structure's own page, which has no battle in its context, the same.
        full = body(client.get(reverse("structure", args=[w.house.pk])))
        assert ("36 sq in" in full) is sized and "urning" in full
    Battle.objects.filter(pk=w.battle.pk).update(ruleset="ba")


NAME_HALF = 0.6 * 1.45 + 0.15  # half a name's line (DejaVu's ascent and descent) and its halo, in inches


def test_a_small_piece_with_someone_inside_has_its_name_below_their_badges(client, w):
    """A foxhole is smaller than the badges of who holds it: its name moves down below them, where
    it would have been covered."""
    foxhole = w.structure("Foxhole", floors=1, x=60, y=10, width=2, depth=2)
    w.unit("A", "Scouts", floor=foxhole.floors.get())
    signed(client, w.alice)
    piece = page(client.get(url(w, "battle"))).find(f"map-s{foxhole.pk}")
    (badge,) = piece.find_all("g", cls="map-badge")
    name = next(t for t in piece.find_all("text") if "map-name" in t.attrs.get("class", ""))
    badge_bottom = float(badge.find_all("circle")[0].attrs["cy"]) + 1.3
    assert name.text() == "Foxhole" and float(name.attrs["y"]) - NAME_HALF > badge_bottom
    # A neighbour whose name would run across the foxhole's badge has it above its own footprint instead.
    shed = w.structure("Long-named shed", floors=1, x=58, y=8, width=2, depth=2)
    html = page(client.get(url(w, "battle")))
    assert [float(t.attrs["y"]) for t in html.find(f"map-s{shed.pk}").find_all("text")
            if "map-name" in t.attrs.get("class", "")] == [8 - 1 - 1.3]
    assert len(html.find(f"map-s{foxhole.pk}").find_all("g", cls="map-badge")) == 1
    # A small bunker's pinned crew ("1 pin") is printed where its name would be: the name goes below it too.
    # Sheet crews are Disposable Heroes': the battle is played by those rules for this.
    from apps.structures.models import BunkerSheet
    Battle.objects.filter(pk=w.battle.pk).update(ruleset="dh")
    pit = w.structure("Rifle pit", floors=1, x=40, y=40, width=2, depth=2, kind="bunker",
                      sheet=BunkerSheet.objects.create(**next(s for s in DH_SHEETS if s["slug"] == "soviet-rifle-pit")),
                      crew_men=4, crew_pins=1, crew_side="B")
    piece = page(client.get(url(w, "battle"))).find(f"map-s{pit.pk}")
    crew = next(t for t in piece.find_all("text") if "map-crew" in t.attrs.get("class", ""))
    name = next(t for t in piece.find_all("text") if "map-name" in t.attrs.get("class", ""))
    assert crew.text() == "1 pin" and float(name.attrs["y"]) - NAME_HALF > float(crew.attrs["y"]) + 2.1 / 2
    Battle.objects.filter(pk=w.battle.pk).update(ruleset="ba")
    # The house holds its badge, but its name just below the footprint (1.3 inches) would touch the
    # badge's foot (3.5 inches below its middle) with its halo: it goes as low as the foxhole's.
    house = page(client.get(url(w, "battle"))).find(f"map-s{w.house.pk}")
    (badge,) = house.find_all("g", cls="map-badge")
    (name,) = [float(t.attrs["y"]) for t in house.find_all("text") if "map-name" in t.attrs.get("class", "")]
    assert name - NAME_HALF > float(badge.find_all("circle")[0].attrs["cy"]) + 1.3 and name > 20 + 3 + 1.3


# A 48″ × 36″ scenario's zones: a strip along each side's edge, and side B's flank down the right edge,
# too narrow for its label to run across.
ZONES = [{"side": "A", "x": 0, "y": 0, "width": 48, "depth": 9},
         {"side": "B", "x": 0, "y": 27, "width": 48, "depth": 9},
         {"side": "B", "x": 42.5, "y": 9, "width": 5.5, "depth": 18}]


def started_from_scenario(w, zones, name="Hill 112"):
    """A battle an organiser starts with the builder's Start from a scenario of w's club: a 48″ × 36″
    table with `zones` and a farmhouse in the middle."""
    scenario = Scenario.objects.create(club=w.club, name=name, table_width=48, table_depth=36, ruleset="ba",
                                       deployment_zones=zones)
    Structure.objects.create(scenario=scenario, name="Farmhouse", damage_max=24, x=24, y=18, width=6, depth=6,
                             wall_material=factories.material("brick", 6, construction="brick"))
    response = signed(Client(), w.organiser).post(reverse("scenario_start", args=[scenario.pk]),
                                                  {"name": f"Battle on {name}", "status": "setup"})
    assert response.status_code == 302
    return Battle.objects.get(scenario=scenario)


def map_zones(response):
    """The deployment zones the map panel draws: (side class, rectangle, label, its turn), in order."""
    svg = page(response).find("map").find_all("svg")[0]
    return [(g.attrs["class"], {k: float(v) for k, v in g.find_all("rect")[0].attrs.items()},
             g.find_all("text")[0].text(), g.find_all("text")[0].attrs)
            for g in svg.find_all("g", cls="map-zone")]


def test_the_battle_map_draws_its_scenarios_deployment_zones_under_the_structures(client, w):
    battle = started_from_scenario(w, ZONES)
    response = signed(client, w.alice).get(reverse("battle", args=[battle.pk]))
    assert response.status_code == 200
    zones = map_zones(response)
    # Where the scenario puts them, in its inches (the map draws one user unit an inch).
    assert [(side, rect) for side, rect, _, _ in zones] == [
        ("map-zone zone-A", {"x": 0, "y": 0, "width": 48, "height": 9}),
        ("map-zone zone-B", {"x": 0, "y": 27, "width": 48, "height": 9}),
        ("map-zone zone-B", {"x": 42.5, "y": 9, "width": 5.5, "height": 18}),
    ]
    # Labelled inside each zone by the table edge it runs along; turned down the narrow flank.
    assert [label for _, _, label, _ in zones] == ["Side A deploys", "Side B deploys", "Side B deploys"]
    assert [{k: v for k, v in attrs.items() if k != "class"} for _, _, _, attrs in zones] == [
        {"x": "24", "y": "1.25"}, {"x": "24", "y": "34.75"},
        {"x": "46.75", "y": "18", "transform": "rotate(-90 46.75 18)"}]
    html = body(response)
    assert "<title>Side A deploys here: 48″ × 9″ from (0″, 0″)</title>" in html
    # Under the structures and units: drawn after the table, before any of them.
    farmhouse = battle.structures.get()
    assert html.index('class="map-table"') < html.index('class="map-zone zone-B"') \
        < html.index(f'id="map-s{farmhouse.pk}"') < html.index('id="map-units"')
    assert_csp_clean(response)


def test_a_battle_without_a_scenario_or_whose_scenario_has_no_zones_draws_none(client, w):
    signed(client, w.alice)
    assert w.battle.scenario_id is None
    response = client.get(url(w, "battle"))
    assert response.status_code == 200 and map_zones(response) == []
    assert "map-zone" not in body(response)
    battle = started_from_scenario(w, [], name="Open ground")
    response = client.get(reverse("battle", args=[battle.pk]))
    assert response.status_code == 200 and map_zones(response) == []
    # A zone the builder's map cannot read (an imported file's) is skipped there and here alike.
    Scenario.objects.filter(pk=battle.scenario_id).update(deployment_zones=[
        {"side": "A", "x": 0, "y": 0, "width": "wide", "depth": 9}, {"side": "B", "x": 0, "y": 30},
        {"side": "<b>B</b>", "x": 0, "y": 30, "width": 48, "depth": 6}])
    response = client.get(reverse("battle", args=[battle.pk]))
    assert [(side, label) for side, _, label, _ in map_zones(response)] == [
        ("map-zone zone-<b>B</b>", "Side <b>B</b> deploys")]
    html = body(response)
    assert '<g class="map-zone zone-&lt;b&gt;B&lt;/b&gt;">' in html and "Side &lt;b&gt;B&lt;/b&gt; deploys" in html
    assert "<b>B</b>" not in html


def test_every_session_of_a_campaign_shades_the_zones_it_was_started_with(client, w):
    """A campaign started from a scenario: its sessions are set up from the campaign, with no scenario of
    their own, and their maps shaded no zones at all. Every session now shades the zones the scenario had
    when the campaign started; the designer moving them later moves nothing in the running campaign."""
    scenario = Scenario.objects.create(club=w.club, name="Hill 112", table_width=48, table_depth=36, ruleset="ba",
                                       deployment_zones=ZONES)
    signed(client, w.organiser)
    response = client.post(reverse("scenario_campaign", args=[scenario.pk]), {"campaign-name": "Hill campaign"})
    assert response.status_code == 303
    one = Battle.objects.get(campaign__name="Hill campaign", session_number=1)
    services.start(battle_id=one.pk, user=w.organiser)
    client.post(reverse("battle_finish", args=[one.pk]), {"confirmed": "1", "winner": "A"})
    client.post(reverse("campaign_session_start", args=[one.campaign_id]), {"weather": "clear"})
    two = Battle.objects.get(campaign=one.campaign, session_number=2)
    assert two.scenario_id is None
    Scenario.objects.filter(pk=scenario.pk).update(deployment_zones=[
        {"side": "A", "x": 0, "y": 0, "width": 12, "depth": 36}])
    client.post(reverse("campaign_session_start", args=[one.campaign_id]), {"weather": "clear"})
    for battle in (one, two):
        response = signed(client, w.alice).get(reverse("battle", args=[battle.pk]))
        assert [(side, rect) for side, rect, _, _ in map_zones(response)] == [
            ("map-zone zone-A", {"x": 0, "y": 0, "width": 48, "height": 9}),
            ("map-zone zone-B", {"x": 0, "y": 27, "width": 48, "height": 9}),
            ("map-zone zone-B", {"x": 42.5, "y": 9, "width": 5.5, "height": 18}),
        ], battle.name


def test_an_undos_answer_on_a_campaigns_session_draws_its_zones_without_another_query(client, w):
    """The answer to an undo reads the battle row again: a campaign's session keeps its campaign, whose
    zones the redrawn map shades, rather than reading it once more."""
    signed(client, w.alice)

    def undo():
        client.post(url(w, "battle_resolve"), he_attack(w, dice_0="2", dice_1="1"), **HTMX)
        seq = LogEntry.objects.filter(battle=w.battle).order_by("-seq").values_list("seq", flat=True).first()
        with CaptureQueriesContext(connection) as queries:
            response = client.post(url(w, "battle_undo"), {"after": seq, "m": 0, "target": sid(w.house)}, **HTMX)
        assert response.status_code == 200 and '<div id="map" class="map-panel" hx-swap-oob="true">' in body(response)
        return len(queries.captured_queries), response

    alone, response = undo()
    assert map_zones(response) == []
    campaign = Campaign.objects.create(club=w.club, name="Hill campaign", deployment_zones=ZONES[:2])
    Battle.objects.filter(pk=w.battle.pk).update(campaign=campaign, session_number=1)
    in_campaign, response = undo()
    assert [label for _, _, label, _ in map_zones(response)] == ["Side A deploys", "Side B deploys"]
    assert in_campaign == alone


def test_a_whole_map_redrawn_by_an_attacks_answer_or_the_poll_keeps_the_zones(client, w):
    """An answer to a page that missed a map change redraws the whole map: the zones with it. One
    that sends only the changed pieces leaves the page's zones where they are."""
    scenario = Scenario.objects.create(club=w.club, name="Crossroads", deployment_zones=ZONES[:2])
    Battle.objects.filter(pk=w.battle.pk).update(scenario=scenario)
    signed(client, w.alice)
    battle = Battle.objects.get(pk=w.battle.pk)
    held = {"v": battle.version, "m": battle.map_version, "after": battle.log_entries.count(),
            "t": watch.issue(w.battle.pk, w.alice.pk)}
    shot = he_attack(w, dice_0="2", dice_1="1")  # the squad stays, pinned
    stale = client.post(url(w, "battle_resolve"), {**shot, **held, "m": held["m"] - 1}, **HTMX)
    assert stale.status_code == 200
    # A phone that held the map as it was before the attack gets only the pieces it changed.
    pieces = client.get(url(w, "battle_poll"), held, **HTMX)
    assert pieces.status_code == 200 and f'id="map-{sid(w.house)}"' in body(pieces)
    assert '<div id="map"' not in body(pieces) and "map-zone" not in body(pieces)
    poll = client.get(url(w, "battle_poll"), {**held, "m": 0}, **HTMX)
    assert poll.status_code == 200
    for answer in (stale, poll):
        assert '<div id="map" class="map-panel" hx-swap-oob="true">' in body(answer)
        assert [label for _, _, label, _ in map_zones(answer)] == ["Side A deploys", "Side B deploys"]


def test_the_card_gives_armour_classes_only_where_the_rules_read_them(client, w):
    """Armour class is LaserGrenadiers' (seed 000): a Bolt Action card names the walls without it."""
    signed(client, w.alice)
    card = text_of(client.get(url(w, "battle"), {"target": sid(w.house)}), "card")
    assert "Brick house" in card and " AC " not in card
    Battle.objects.filter(pk=w.battle.pk).update(ruleset="lg")
    assert " AC " in text_of(client.get(url(w, "battle"), {"target": sid(w.house)}), "card")


def test_a_destroyed_structure_says_so_on_the_map_card_and_list(client, w):
    """A bunker destroyed by a penetrating hit (DH PH 9–10) or a building made untenable (LG) is not
    "Intact": it is drawn and listed as destroyed."""
    Structure.objects.filter(pk=w.house.pk).update(destroyed=True)
    signed(client, w.alice)
    html = page(client.get(url(w, "battle"), {"target": sid(w.house)}))
    piece = html.find(f"map-{sid(w.house)}")
    assert "st-destroyed" in piece.attrs["class"].split() and "st-intact" not in piece.attrs["class"].split()
    assert "destroyed" in piece.attrs["aria-label"]
    for panel in ("card", f"structure-{w.house.pk}"):
        badges = [b.text() for b in html.find(panel).find_all("li", cls="badge")]
        assert "Destroyed" in badges and "Intact" not in badges, (panel, badges)


def test_a_unit_left_inside_ruins_is_pointed_out_with_a_way_to_move_it(client, w):
    """LG: a structure made untenable leaves its pieces inside (the seeds say no more). The card says
    so and offers a player the Move form for that unit, filled in; a watcher gets the words only."""
    Structure.objects.filter(pk=w.house.pk).update(destroyed=True)
    signed(client, w.bob)
    card = page(client.get(url(w, "battle"), {"target": sid(w.house)})).find("card")
    note = card.find_all("p", cls="in-ruins")
    assert len(note) == 1 and "Still inside the ruins" in note[0].text()
    link = note[0].find_all("a")[0]
    assert link.text().strip() == "Move Grenadiers out"
    form = page(client.get(link.attrs["hx-get"], **HTMX))

    def chosen(select):
        return [o.attrs.get("value") for o in form.find(select).find_all("option") if "selected" in o.attrs]

    assert chosen("id_action") == ["move"] and chosen("id_unit") == [uid(w.squad)]
    # A member who plays no side here reads that it is there, with nothing to tap.
    from django.contrib.auth import get_user_model
    watcher = get_user_model().objects.create_user("watcher-ruins", password="x")
    Membership.objects.create(user=watcher, club_id=w.battle.club_id, role=Role.PLAYER)
    signed(client, watcher)
    note = page(client.get(url(w, "battle"), {"target": sid(w.house)})).find("card").find_all("p", cls="in-ruins")
    assert "the players move it out" in note[0].text() and not note[0].find_all("a")
    # An intact house says nothing of ruins.
    Structure.objects.filter(pk=w.house.pk).update(destroyed=False)
    assert not page(client.get(url(w, "battle"), {"target": sid(w.house)})).find("card").find_all("p", cls="in-ruins")


def test_damage_reads_the_same_percentage_everywhere(client, w):
    """7 of 18 points is 38% on the map, the card and the target list, as the collapse check's log
    entry prints it (rounded down, A-LG-2), not 39% here and 38% there."""
    Battle.objects.filter(pk=w.battle.pk).update(damage_variant=1)
    Structure.objects.filter(pk=w.house.pk).update(damage_max=18, damage_taken=7)
    signed(client, w.alice)
    html = page(client.get(url(w, "battle"), {"target": sid(w.house)}))
    assert [t.text() for t in html.find(f"map-{sid(w.house)}").find_all("text") if "map-damage" in
            t.attrs.get("class", "")] == ["38%"]
    assert "Damaged 38%" in [b.text() for b in html.find("card").find_all("li", cls="badge")]
    options = [o.text() for o in html.find("attack-form").find_all("option") if o.attrs.get("value") == sid(w.house)]
    assert options and all("38% damaged" in o for o in options)


def test_damage_points_show_only_where_the_battle_counts_them(client, w):
    signed(client, w.alice)
    assert "Damage" not in text_of(client.get(url(w, "battle")), f"structure-{w.house.pk}")  # Bolt Action, no variant
    Battle.objects.filter(pk=w.battle.pk).update(damage_variant=1)
    assert "Damage 0/24 (0%)" in text_of(client.get(url(w, "battle")), f"structure-{w.house.pk}")


def test_a_destroyed_unit_shows_no_one_left(client, w):
    """The collapse kills the squad inside: the armies panel says 0 models, with no pins or Down."""
    Unit.objects.filter(pk=w.squad.pk).update(pins=2, down=True)
    signed(client, w.alice)
    answer = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="6", dice_1="5"), **HTMX)
    assert "Resolved #" in body(answer)
    squad = Unit.objects.get(pk=w.squad.pk)
    assert (squad.destroyed, squad.models_left, squad.pins, squad.down) == (True, 0, 0, False)
    row = text_of(client.get(url(w, "battle")), f"unit-{w.squad.pk}")
    assert "0/10 models" in row and "Destroyed" in row and "Pinned" not in row and "Down" not in row


def test_form_partial_asks_for_each_die_and_shows_exact_odds(client, w):
    signed(client, w.alice)
    data = he_attack(w)
    del data["client_token"]
    response = client.get(url(w, "battle_form"), data, **HTMX)
    assert response.status_code == 200
    html = body(response)
    labels = re.findall(r'<label for="id_dice_(\d)">([^<]+)</label>', html)
    # A group's later dice say only which die they are (six long labels fill a phone); a screen reader
    # still hears the whole of it.
    assert labels == [("0", "HE hits (2D6) on floor 1, first d6"), ("1", "second d6")]
    assert 'id="id_dice_1" value="" aria-label="HE hits (2D6) on floor 1, second d6"' in html
    odds = text_of(response, "odds")
    # 2D6 ≥ 10 collapses the house: 6/36.
    assert "Brick house collapses 16.7% (1/6)" in odds
    assert "Expected hits on Grenadiers" in odds
    assert '<svg class="odds-bar"' in html and 'width="16.67"' in html
    # The dice entered so far come back, and nothing more is asked once all are in.
    response = client.get(url(w, "battle_form"), {**data, "dice_0": "3", "dice_1": "4"}, **HTMX)
    assert re.findall(r'name="(dice_\d)"', body(response)) == ["dice_0", "dice_1"]
    assert 'value="3"' in body(response) and 'value="4"' in body(response)


def test_form_partial_with_incomplete_inputs_shows_a_hint_not_an_error(client, w):
    signed(client, w.alice)
    for data in ({}, {"action": "ba_he"}, {"action": "ba_he", "attacker": uid(w.gun)},
                 {"action": "ba_he", "structure": "s999999"}, {"action": "nonsense"},
                 {"action": "ba_he", "dice_mode": "player"}):
        response = client.get(url(w, "battle_form"), data, **HTMX)
        assert response.status_code == 200, data
        assert 'id="attack-form"' in body(response)
    response = client.get(url(w, "battle_form"), {"action": "ba_he", "attacker": uid(w.gun)}, **HTMX)
    assert "Fill in the inputs to see the exact odds." in text_of(response, "odds")


def test_form_partial_points_at_a_bad_weapon_before_submitting(client, w):
    signed(client, w.alice)
    data = he_attack(w, weapon=f"w{w.flamer.pk}", dice_mode="server")
    # The gun's one HE weapon takes the place of a weapon it does not carry (chosen before the unit)…
    response = client.get(url(w, "battle_form"), data, **HTMX)
    assert [o.attrs["value"] for o in page(response).find("id_weapon").find_all("option")
            if "selected" in o.attrs] == [f"w{w.he.pk}"]
    # …but with two to choose from, the form points at the one that cannot be used.
    UnitWeapon.objects.create(unit=w.gun, weapon=factories.weapon("ba", "he-3d6", name="HE 3D6", he_value="3D6"))
    response = client.get(url(w, "battle_form"), data, **HTMX)
    field = text_of(response, "field-weapon")
    assert "Field gun does not carry Flamethrower" in field


def test_a_tank_may_not_drive_into_a_building_its_own_side_holds(client, w):
    """Seed 001 'Tanks assaulting buildings': driving in is an assault. Bob's Tiger may not bring the
    house down on his own grenadiers; nothing changes. Side A's heavy tank may."""
    tiger = w.unit("B", "Tiger", kind="vehicle", tank_class="heavy", models=1, x=30, y=30)
    signed(client, w.bob)
    refused = client.post(url(w, "battle_resolve"), {
        "action": "ba_tank_ram", "tank": uid(tiger), "structure": sid(w.house), "dice_mode": "server",
        "client_token": str(uuid.uuid4())}, **HTMX)
    assert ("Grenadiers of Tiger's own side is in Brick house: a tank drives into a building as an assault on "
            "the enemy, never into its own side's") in text_of(refused, "field-structure")
    assert not Structure.objects.get(pk=w.house.pk).collapsed and not Unit.objects.get(pk=w.squad.pk).destroyed
    assert not LogEntry.objects.filter(battle=w.battle).exists()

    kv = w.unit("A", "KV-2", kind="vehicle", tank_class="heavy", models=1, x=30, y=12)
    signed(client, w.alice)
    client.post(url(w, "battle_resolve"), {
        "action": "ba_tank_ram", "tank": uid(kv), "structure": sid(w.house), "dice_mode": "player",
        "dice_0": "6", "dice_1": "1", "dice_2": "1", "dice_3": "1", "client_token": str(uuid.uuid4())}, **HTMX)
    assert Structure.objects.get(pk=w.house.pk).collapsed and Unit.objects.get(pk=w.squad.pk).destroyed


def test_indirect_fire_offers_only_the_weapons_that_fire_indirect(client, w):
    """A unit with a mortar and a direct-fire gun: indirect fire is offered the mortar alone (the gun
    would be refused on Resolve: it cannot fire indirect); an air strike any HE in the catalogue."""
    mortar = factories.weapon("ba", "mortar-t", name="Light mortar", he_value="D6", indirect=True)
    UnitWeapon.objects.create(unit=w.gun, weapon=mortar)
    signed(client, w.alice)

    def offered(**data):
        form = page(client.get(url(w, "battle_form"), {"action": "ba_indirect", "attacker": uid(w.gun), **data},
                               **HTMX))
        return [o.attrs.get("value") for o in form.find("id_weapon").find_all("option") if o.attrs.get("value")]

    assert offered() == offered(mode="indirect") == [f"w{mortar.pk}"]
    assert offered(mode="air_strike") == [f"w{w.he.pk}", f"w{mortar.pk}"]
    # The rule refuses the gun with the same reason as before, should a stale form send it.
    refused = client.post(url(w, "battle_resolve"), {
        "action": "ba_indirect", "attacker": uid(w.gun), "weapon": f"w{w.he.pk}", "mode": "indirect",
        "structure": sid(w.house), "target": uid(w.squad), "hit": "yes", "client_token": str(uuid.uuid4())}, **HTMX)
    assert "HE shell 2D6 cannot fire indirect" in text_of(refused, "field-weapon")
    assert not LogEntry.objects.filter(battle=w.battle).exists()


# ---------------------------------------------------------------------------------- resolving

def test_i_rolled_dice_resolve_exactly_as_entered(client, w):
    signed(client, w.alice)
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="3", dice_1="4"), **HTMX)
    assert response.status_code == 200
    entry = LogEntry.objects.get(battle=w.battle, action="ba_he")
    assert entry.dice == [{"purpose": "HE hits (2D6) on floor 1", "sides": 6, "count": 2, "faces": [3, 4],
                           "value": 7, "source": "player", "target": "sum"}]
    assert entry.inputs["dice"] == "player" and entry.actor == w.alice and entry.side == "A"
    # 7 hits: the house stands; the grenadiers take a pin and the hits to roll damage for.
    house = Structure.objects.get(pk=w.house.pk)
    assert not house.collapsed
    squad, gun = Unit.objects.get(pk=w.squad.pk), Unit.objects.get(pk=w.gun.pk)
    assert squad.pins == 1 and not squad.destroyed and squad.floor_id == w.floors[1].pk
    assert gun.acted
    assert LogEntry.objects.filter(battle=w.battle).count() == before[3] + 1
    battle = Battle.objects.get(pk=w.battle.pk)
    assert battle.version == before[0] + 1 and battle.map_version == before[1] + 1

    html = body(response)
    # The fresh form (a new token), then the new entry at the top of the log, the map, the header.
    assert html.lstrip().startswith('<form id="attack-form"')
    assert f"Resolved #{entry.seq}" in form_html(response)
    assert 'hx-swap-oob="afterbegin:#log-list"' in html and f'id="log-{entry.seq}"' in html
    assert '<div id="map" class="map-panel" hx-swap-oob="true">' in html
    assert '<header id="battle-header"' in html and f"Version {battle.version}" in text_of(response, "battle-header")
    assert '<section id="card"' not in html or sid(w.house) in html
    new_token = re.search(r'name="client_token" value="([0-9a-f-]+)"', html).group(1)
    assert new_token != he_attack(w)["client_token"]
    poller = page(response).find("poller")
    values = {i.attrs["name"]: i.attrs["value"] for i in poller.find_all("input")}
    assert values["v"] == str(battle.version) and values["m"] == str(battle.map_version)
    assert values["after"] == str(entry.seq)


def test_ten_hits_collapse_the_house_and_everyone_inside(client, w):
    signed(client, w.alice)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="6", dice_1="5"), **HTMX)
    assert response.status_code == 200
    house = Structure.objects.get(pk=w.house.pk)
    assert house.collapsed
    assert Unit.objects.get(pk=w.squad.pk).destroyed
    assert "st-collapsed" in body(response)  # the map redrawn out of band shows the rubble


@pytest.mark.parametrize("dice", [("6", "5"), ("2", "1")], ids=["collapse", "stands"])
def test_the_answer_draws_the_same_panels_as_a_fresh_load(client, w, dice):
    """The attack's answer is drawn from the rows the action has just written, not from a second
    load: map, structures, armies and card must read exactly as a fresh load draws them (a collapse
    empties a floor; a small shell leaves the squad in place with a pin)."""
    signed(client, w.alice)
    answer = client.post(url(w, "battle_resolve"), {**he_attack(w, dice_0=dice[0], dice_1=dice[1]),
                                                    "card": sid(w.house)}, **HTMX)
    assert answer.status_code == 200
    battle = Battle.objects.get(pk=w.battle.pk)
    fresh = client.get(reverse("battle_poll", args=[battle.pk]), {
        "v": 0, "m": 0, "after": 0, "t": watch.issue(battle.pk, w.alice.pk), "card": sid(w.house)}, **HTMX)
    assert fresh.status_code == 200
    for panel in ("map", "structures", "armies", "card"):
        assert text_of(answer, panel) == text_of(fresh, panel), panel
    squad = Unit.objects.get(pk=w.squad.pk)
    assert squad.destroyed == (dice == ("6", "5"))
    assert ("Grenadiers" in text_of(answer, "card")) == (not squad.destroyed)


@pytest.mark.parametrize("dice", [("6", "5"), ("2", "1")], ids=["collapse", "stands"])
def test_a_current_page_gets_only_what_changed_drawn_as_a_fresh_load_draws_it(client, w, dice):
    """A page that holds the battle as it was just before the attack gets back only the structure and
    unit pieces the attack changed, each reading exactly as the same piece of a freshly loaded page."""
    barn = w.structure("Barn", x=60, y=40)
    signed(client, w.alice)
    battle = Battle.objects.get(pk=w.battle.pk)
    held = {"v": battle.version, "m": battle.map_version, "after": battle.log_entries.count(), "card": sid(w.house)}
    answer = client.post(url(w, "battle_resolve"), {**he_attack(w, dice_0=dice[0], dice_1=dice[1]), **held}, **HTMX)
    assert answer.status_code == 200
    html = body(answer)
    pieces = [f"map-{sid(w.house)}", "map-units", f"structure-{w.house.pk}", f"unit-{w.gun.pk}",
              f"unit-{w.squad.pk}", "card"]
    sent = re.findall(r' id="(map-s\d+|map-units|structure-\d+|unit-\d+|card|map|structures|armies)"', html)
    assert sorted(sent) == sorted(pieces)
    assert f'id="map-{sid(barn)}"' not in html and f'id="structure-{barn.pk}"' not in html
    fresh = client.get(url(w, "battle"), {"target": sid(w.house)})
    for piece in pieces:
        assert text_of(answer, piece) == text_of(fresh, piece), piece


def test_roll_for_me(client, w):
    signed(client, w.alice)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_mode="server"), **HTMX)
    assert response.status_code == 200
    entry = LogEntry.objects.get(battle=w.battle, action="ba_he")
    (roll,) = entry.dice
    assert roll["source"] == "server" and roll["count"] == 2 and all(1 <= f <= 6 for f in roll["faces"])
    assert entry.inputs["dice"] == "server"
    assert Structure.objects.get(pk=w.house.pk).collapsed == (sum(roll["faces"]) >= 10)
    assert "rolled by the server" in body(response)


def test_without_javascript_the_form_posts_and_redirects_with_a_message(client, w):
    signed(client, w.alice)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="1", dice_1="2"))
    assert response.status_code == 303
    entry = LogEntry.objects.get(battle=w.battle, action="ba_he")
    assert response["Location"] == url(w, "battle") + (f"?target={sid(w.house)}&action=ba_he&dice_mode=player"
                                                       f"&result={entry.seq}")
    followed = client.get(response["Location"])
    assert f"#{entry.seq}: {entry.summary}" in body(followed)
    # The hits on the grenadiers lead to their damage roll, filled in, as with JavaScript.
    (link,) = page(followed).find("attack-form").find_all("a", cls="button-link")
    assert link.text().startswith("Roll damage: ") and f"target=u{w.squad.pk}" in link.attrs["href"]


def test_a_missing_die_without_javascript_asks_for_it(client, w):
    signed(client, w.alice)
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="3"))
    assert response.status_code == 422
    assert state(w) == before
    html = body(response)
    assert '<label for="id_dice_1">second d6</label>' in html
    assert "HE hits (2D6) on floor 1, second d6: roll it and enter the result" in form_html(response)
    assert 'value="3"' in html


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_a_letter_typed_for_a_die_is_named_beside_it(client, w, htmx):
    """A die field was an <input type=number>: Chromium sends a letter typed into one as "", and the player
    was told to roll the die they had entered. It is a text field (the numeric keypad still comes up),
    so the letter arrives and the player reads that it is no die face; nothing changes, nothing is logged."""
    signed(client, w.alice)
    form = page(client.get(url(w, "battle_form"), he_attack(w), **HTMX)).find("attack-form")
    field = form.find("id_dice_0").attrs
    assert (field["type"], field["inputmode"], field["pattern"]) == ("text", "numeric", "[0-9]*")
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="x", dice_1="4"), **(HTMX if htmx else {}))
    assert response.status_code == (200 if htmx else 422)
    assert state(w) == before
    form = page(response).find("attack-form")
    assert form.find("id_dice_0").attrs["value"] == "x" and form.find("id_dice_0").attrs["aria-invalid"] == "true"
    assert form.find("error-dice_0").text() == "HE hits (2D6) on floor 1, first d6: x is not a d6 result"
    assert "roll it and enter the result" not in form.text()


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_a_die_typed_after_an_empty_field_is_kept(client, w, htmx):
    signed(client, w.alice)
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="", dice_1="4"), **(HTMX if htmx else {}))
    assert state(w) == before
    form = page(response).find("attack-form")
    assert form.find("id_dice_1").attrs["value"] == "4" and form.find("id_dice_0").attrs["value"] == ""
    assert "autofocus" in form.find("id_dice_0").attrs
    assert "roll it and enter the result" in form_html(response)
    # The message belongs to its field for a screen reader too.
    assert form.find("id_dice_0").attrs["aria-invalid"] == "true"
    assert "roll it and enter the result" in form.find(form.find("id_dice_0").attrs["aria-describedby"]).text()


BAD_INPUTS = {
    "weapon not carried": (lambda w: {"weapon": f"w{w.flamer.pk}"}, "weapon", "Field gun does not carry Flamethrower"),
    "target in another battle": (lambda w: {"structure": f"s{w.other_house.pk}", "target": ""}, "structure",
                                 "there is no structure"),
    "floor that does not exist": (lambda w: {"floor": "7", "target": ""}, "floor", "Brick house has no floor 7"),
    "die out of range": (lambda w: {"dice_0": "7", "dice_1": "2"}, None, "7 is not a d6 result"),
    "unknown action": (lambda w: {"action": "dh_main_gun"}, None, "not an action of this battle"),
    "attacker of the other side": (lambda w: {"attacker": f"u{w.pioneers.pk}"}, "attacker", "Pioneers is side B"),
    # Nor another floor than the unit aimed at's (test_the_unit_aimed_at_…); sent anyway, refused.
    "floor not the unit aimed at's": (lambda w: {"floor": "0"}, "floor", "Grenadiers is on floor 1, not 0"),
    # The form no longer offers a unit outside the building (test_the_unit_aimed_at_…); sent anyway, refused.
    "unit aimed at outside the building": (lambda w: {"target": f"u{w.pioneers.pk}"}, "target",
                                           "Pioneers is not inside Brick house"),
    # The form sends one number per unit (hits__u7); a crafted "hits" must still be refused in words.
    "barrage hits not as unit=hits": (lambda w: {"action": "ba_barrage", "attacker": "", "hits": "1,2,3"}, None,
                                      "write each as unit=hits, e.g. u7=2 (not '1')"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_bad_input_is_explained_in_the_form_and_changes_nothing(client, w, case, htmx):
    make, field, message = BAD_INPUTS[case]
    signed(client, w.alice)
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, **make(w)), **(HTMX if htmx else {}))
    assert response.status_code == (200 if htmx else 422)
    assert message in form_html(response), form_html(response)
    if field:
        assert message in text_of(response, f"field-{field}")
    assert state(w) == before


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_a_barrage_on_an_occupied_building_offers_no_die_for_the_building_itself(client, w, htmx):
    """The form offered "Hits on Brick house itself (empty building)" beside the grenadiers inside, and both
    counted towards the collapse: 6 on the squad and 4 on the house brought it down at 10, killing them.
    An occupied building is hit through its units' dice; a crafted post is refused and changes nothing."""
    signed(client, w.alice)
    form = page(client.get(url(w, "battle_form"), {"action": "ba_barrage", "structure": sid(w.house)}, **HTMX))
    labels = [label.text() for label in form.find("attack-form").find_all("label")]
    assert "Hits on Grenadiers" in labels and not [x for x in labels if "itself" in x], labels
    before = state(w)
    data = {"action": "ba_barrage", "structure": sid(w.house), f"hits__{uid(w.squad)}": "6", "hits__building": "4",
            "client_token": str(uuid.uuid4())}
    response = client.post(url(w, "battle_resolve"), data, **(HTMX if htmx else {}))
    assert "Not resolved: Brick house is not empty (Grenadiers inside)" in form_html(response)
    assert state(w) == before
    w.house.refresh_from_db()
    assert not w.house.collapsed
    # Empty, the house has its own die.
    Unit.objects.filter(pk=w.squad.pk).update(floor=None, x=5, y=5)
    form = page(client.get(url(w, "battle_form"), {"action": "ba_barrage", "structure": sid(w.house)}, **HTMX))
    assert "Hits on Brick house itself (empty building)" in form.find("attack-form").text()


def test_switching_action_puts_the_new_actions_defaults_in_place_of_the_old_ones(client, w):
    """HE places 1 pin by default, a flamethrower none. Chosen after the HE the page opens on, the
    flamethrower form kept the HE's "1" and its hit pinned the squad unasked; its "0" hits likewise
    became the damage roll's hits. A value the player typed is kept."""
    signed(client, w.bob)

    def value(params, name):
        form = page(client.get(url(w, "battle_form"), params, **HTMX)).find("attack-form")
        return next(i.attrs.get("value") for i in form.find_all("input") if i.attrs.get("name") == name)

    assert value({"action": "ba_he"}, "pins") == "1"
    assert value({"action": "ba_he"}, "drawn_for") == "ba_he"
    assert value({"action": "ba_flamethrower", "pins": "1", "drawn_for": "ba_he"}, "pins") == "0"
    assert value({"action": "ba_flamethrower", "pins": "2", "drawn_for": "ba_he"}, "pins") == "2"
    assert value({"action": "ba_damage", "hits": "0", "drawn_for": "ba_flamethrower"}, "hits") in ("", None)
    assert value({"action": "ba_indirect", "pins": "1", "drawn_for": "ba_he"}, "pins") == "1"


def test_the_barrage_form_explains_each_number_in_words(client, w):
    """The form asks one number per unit, but its help still read "unit=hits from each 'heavy howitzer'
    barrage result…; 'building' for an empty building's own die": the syntax of the pairs the rules accept,
    beside a box that wants a plain number (a player typed "u7=6" there)."""
    signed(client, w.alice)
    for occupied in (True, False):
        if not occupied:
            Unit.objects.filter(pk=w.squad.pk).update(floor=None, x=5, y=5)
        form = page(client.get(url(w, "battle_form"), {"action": "ba_barrage", "structure": sid(w.house)}, **HTMX))
        text = form.find("attack-form").text()
        assert "From the 'heavy howitzer' barrage results, before halving for Down" in text
        assert "unit=" not in text and "'building'" not in text, text


def test_a_barrage_records_its_pins_on_the_units_inside(client, w):
    """The barrage form asked only for heavy-howitzer hits: the pins it places (all it does to a unit in a
    bunker) could not be recorded anywhere. Now one number per unit inside, as for the hits."""
    signed(client, w.alice)
    form = page(client.get(url(w, "battle_form"), {"action": "ba_barrage", "structure": sid(w.house)}, **HTMX))
    labels = [label.text() for label in form.find("attack-form").find_all("label")]
    assert labels[-2:] == ["Hits on Grenadiers", "Pins on Grenadiers"], labels
    data = {"action": "ba_barrage", "structure": sid(w.house), f"hits__{uid(w.squad)}": "3",
            f"pins__{uid(w.squad)}": "2", "client_token": str(uuid.uuid4())}
    response = client.post(url(w, "battle_resolve"), data, **HTMX)
    assert response.status_code == 200
    squad = Unit.objects.get(pk=w.squad.pk)
    assert squad.pins == 2
    entry = LogEntry.objects.filter(battle=w.battle, action="ba_barrage").get()
    assert entry.summary == "3 heavy howitzer hits on Brick house: it stands; Grenadiers +2 pins"
    assert entry.outcome["effects"][0] == {"type": "pin", "target": uid(w.squad), "n": 2}


def test_numbers_too_large_for_the_database_are_ignored_not_a_crash(client, w):
    signed(client, w.alice)
    huge = "9" * 30
    assert client.get(url(w, "battle"), {"before": huge}).status_code == 200
    assert client.get(url(w, "battle_log"), {"before": huge}, **HTMX).status_code == 200
    response = client.post(url(w, "battle_turn"), {"action": "end_turn", "after": huge, "m": huge,
                                                   "client_token": str(uuid.uuid4())}, **HTMX)
    assert response.status_code == 200 and Battle.objects.get(pk=w.battle.pk).turn == 2


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_a_unit_that_already_acted(client, w, htmx):
    signed(client, w.alice)
    client.post(url(w, "battle_resolve"), he_attack(w, dice_0="1", dice_1="1"), **HTMX)
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="1", dice_1="1"), **(HTMX if htmx else {}))
    assert "Field gun has already acted this turn" in text_of(response, "field-attacker")
    assert state(w) == before


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_an_ended_battle(client, w, htmx):
    Battle.objects.filter(pk=w.battle.pk).update(status=BattleStatus.FINISHED, finished_at=timezone.now())
    signed(client, w.alice)
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="1", dice_1="1"), **(HTMX if htmx else {}))
    assert "This battle has ended" in form_html(response)
    assert state(w) == before
    # The page itself no longer offers the form, and a phone whose form asks again (its poll saw the
    # battle end) gets the message in its place.
    assert '<form id="attack-form"' not in body(client.get(url(w, "battle")))
    again = client.get(url(w, "battle_form"), {"action": "ba_he"}, **HTMX)
    assert again.status_code == 200 and "<form" not in body(again)
    assert text_of(again, "attack-form") == "The battle has ended: nothing more can happen in it."


def test_answers_that_do_not_redraw_the_form_tell_it_to_ask_again(client, w):
    """The attack form lists the units that may still act: another player's attack, a new turn or
    the end of the battle changes that, so every answer that leaves the form alone tells it (the
    panel asks again on the event, with what the player has filled in)."""
    signed(client, w.bob)
    bobs_page = body(client.get(url(w, "battle")))
    assert 'hx-trigger="change, battle-changed from:body"' in bobs_page
    battle = Battle.objects.get(pk=w.battle.pk)
    held = {"v": battle.version, "m": battle.map_version, "after": 0, "t": watch.issue(battle.pk, w.bob.pk)}
    assert client.get(url(w, "battle_poll"), held, **HTMX).status_code == 204
    signed(client, w.alice)
    attack = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="2", dice_1="1"), **HTMX)
    assert "Resolved #" in body(attack) and "HX-Trigger" not in attack  # it redrew the form itself
    signed(client, w.bob)
    poll = client.get(url(w, "battle_poll"), held, **HTMX)
    assert poll.status_code == 200 and poll["HX-Trigger"] == "battle-changed"
    turn = client.post(url(w, "battle_turn"), {"action": "end_turn", "client_token": str(uuid.uuid4())}, **HTMX)
    assert Battle.objects.get(pk=w.battle.pk).turn == 2 and turn["HX-Trigger"] == "battle-changed"
    # Someone who only watches has no form to refresh: the page's panel does not listen for the event.
    designer = factories.User.objects.create_user("dora-test", password="x")
    Membership.objects.create(club=w.club, user=designer, role=Role.DESIGNER)
    signed(client, designer)
    assert "battle-changed" not in body(client.get(url(w, "battle")))
    # Bob's side goes to someone else: his page's form, asking again, is told to reload (as a watcher).
    from apps.armies.models import Army
    Army.objects.filter(battle=w.battle, side="B").update(owner=designer)
    signed(client, w.bob)
    stale = client.get(url(w, "battle_form"), {"action": "ba_he"}, **HTMX)
    assert stale.status_code == 403 and stale["HX-Refresh"] == "true"
    assert "You are watching" in body(client.get(url(w, "battle")))


def test_double_submit_resolves_once(client, w):
    signed(client, w.alice)
    data = he_attack(w, dice_0="2", dice_1="2")
    first = client.post(url(w, "battle_resolve"), data, **HTMX)
    second = client.post(url(w, "battle_resolve"), data, **HTMX)
    plain = client.post(url(w, "battle_resolve"), data)
    assert first.status_code == second.status_code == 200 and plain.status_code == 303
    assert LogEntry.objects.filter(battle=w.battle, action="ba_he").count() == 1
    assert Unit.objects.get(pk=w.squad.pk).pins == 1


def test_a_malformed_token_is_not_stored(client, w):
    signed(client, w.alice)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="2", dice_1="2", client_token="x" * 300),
                           **HTMX)
    assert response.status_code == 200
    assert LogEntry.objects.get(battle=w.battle, action="ba_he").client_token is None


# ---------------------------------------------------------------------------------- undo

def test_undo_restores_and_logs_and_shows_the_entry_struck(client, w):
    signed(client, w.alice)
    client.post(url(w, "battle_resolve"), he_attack(w, dice_0="6", dice_1="6"), **HTMX)
    attack = LogEntry.objects.get(battle=w.battle, action="ba_he")
    assert Structure.objects.get(pk=w.house.pk).collapsed
    assert f"Undo #{attack.seq}" in text_of(client.get(url(w, "battle")), "turns")

    response = client.post(url(w, "battle_undo"), {"after": attack.seq, "m": 0, "target": sid(w.house)}, **HTMX)
    assert response.status_code == 200
    assert not Structure.objects.get(pk=w.house.pk).collapsed
    squad = Unit.objects.get(pk=w.squad.pk)
    assert not squad.destroyed and squad.floor_id == w.floors[1].pk and squad.pins == 0
    attack.refresh_from_db()
    undo = LogEntry.objects.get(battle=w.battle, action="undo")
    assert attack.undone and undo.undoes_id == attack.pk and undo.seq == attack.seq + 1
    html = body(response)
    # The undone entry is replaced in place, struck through; the undo arrives on top.
    replaced = page(response).find(f"log-{attack.seq}")
    assert replaced.attrs.get("hx-swap-oob") == "true" and "is-undone" in replaced.attrs["class"]
    assert f"Undone by #{undo.seq}" in replaced.text()
    assert 'hx-swap-oob="afterbegin:#log-list"' in html and f'id="log-{undo.seq}"' in html
    assert f"Undoes #{attack.seq}" in text_of(response, f"log-{undo.seq}")
    assert '<div id="map" class="map-panel" hx-swap-oob="true">' in html
    assert '<section id="card" class="panel panel-card"' in html
    assert "Intact" in text_of(response, "card")
    # The log tags the app's own entries in words, not by their internal names.
    assert "Undo" in [t.text().strip() for t in page(response).find(f"log-{undo.seq}").find_all("span")
                      if "tag" in t.attrs.get("class", "")]


def test_undo_asks_first(client, w):
    signed(client, w.alice)
    client.post(url(w, "battle_resolve"), he_attack(w, dice_0="2", dice_1="1"), **HTMX)
    seq = LogEntry.objects.get(battle=w.battle, action="ba_he").seq
    undo_form = next(f for f in page(client.get(url(w, "battle"))).find("turns").find_all("form")
                     if "undo-form" in f.attrs.get("class", ""))
    assert undo_form.attrs["hx-confirm"].startswith(f"Undo #{seq}? ")


def test_undo_sent_twice_undoes_once_and_says_so(client, w):
    """The undo form names the entry it shows; the same form sent again (a retry after a lost answer, a
    second phone) is refused beside the turn buttons and the entry below stays."""
    signed(client, w.alice)
    client.post(url(w, "battle_resolve"), he_attack(w, dice_0="2", dice_1="1"), **HTMX)
    client.post(url(w, "battle_resolve"), {"action": "move", "unit": uid(w.gun), "x": "2", "y": "2",
                                           "client_token": str(uuid.uuid4())}, **HTMX)
    moved = LogEntry.objects.get(battle=w.battle, action="move")
    undo_form = next(f for f in page(client.get(url(w, "battle"))).find("turns").find_all("form")
                     if "undo-form" in f.attrs.get("class", ""))
    fields = {i.attrs["name"]: i.attrs.get("value", "") for i in undo_form.find_all("input")}
    assert fields["seq"] == str(moved.seq)
    client.post(url(w, "battle_undo"), fields, **HTMX)
    version = Battle.objects.get(pk=w.battle.pk).version
    again = client.post(url(w, "battle_undo"), fields, **HTMX)
    assert again.status_code == 200
    assert f"#{moved.seq} has already been undone: nothing more was undone" in text_of(again, "turns")
    assert Battle.objects.get(pk=w.battle.pk).version == version
    assert list(LogEntry.objects.filter(battle=w.battle, undone=True).values_list("seq", flat=True)) == [moved.seq]


def heroes_world():
    """A Disposable Heroes battle (alice commands side A, bob side B) and the German HMG loghouse's sheet."""
    from apps.structures.models import BunkerSheet

    dh = factories.make_world(ruleset="dh", club_name="Heroes club")
    return dh, BunkerSheet.objects.create(**next(s for s in DH_SHEETS if s["slug"] == "german-hmg-loghouse"))


def loghouse_under_fire():
    """`heroes_world` with side B's loghouse manned by 10 and side A's 45mm AT gun (DM −1, penetration
    12 to 120 in twelves) facing it: the battle, the loghouse, the gun and its crew."""
    dh, sheet = heroes_world()
    bunker = dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=10, crew_side="B")
    gun = factories.weapon("dh", "45mm", name="45mm", dh_category="main_gun", dm=-1,
                           penetration_row=list(range(12, 121, 12)))
    return dh, bunker, gun, dh.unit("A", "AT gun", kind="artillery", models=3, weapons=[gun])


@pytest.mark.parametrize("action", ["dh_main_gun", "dh_flamethrower"])
def test_main_gun_or_machine_gun_is_asked_only_where_the_answer_can_matter(client, db, action):
    """DH-15: on a 7–8 the attacker names a main gun or a machine gun to destroy. The form asked it of every
    fortification, a rifle pit with no heavy weapon included; the rule takes the other kind when there is none
    of the one named, and ignores the clause with none at all. It offers the kinds still standing: both on
    the Soviet AT/HMG loghouse, the machine gun alone (chosen) on the German HMG loghouse, and no question on
    the rifle pit or on a loghouse whose guns are gone."""
    from apps.structures.models import BunkerSheet

    dh, bunker, gun, crew = loghouse_under_fire()
    flamer = factories.weapon("dh", "flammenwerfer", name="Flammenwerfer", dh_category="flamethrower")
    pioneers = dh.unit("A", "Pioneers", weapons=[flamer])
    sheets = {slug: BunkerSheet.objects.create(**next(s for s in DH_SHEETS if s["slug"] == slug))
              for slug in ("soviet-at-hmg-loghouse", "soviet-rifle-pit")}
    both = dh.structure("Soviet loghouse", floors=1, kind="bunker", sheet=sheets["soviet-at-hmg-loghouse"],
                        crew_men=6, crew_side="B")
    pit = dh.structure("Rifle pit", floors=1, kind="bunker", sheet=sheets["soviet-rifle-pit"], crew_men=9,
                       crew_side="B")
    signed(client, dh.alice)
    attacker, weapon = (crew, gun) if action == "dh_main_gun" else (pioneers, flamer)

    def asked(structure):
        form = page(client.get(url(dh, "battle_form"), {"action": action, "attacker": uid(attacker),
                                                        "weapon": f"w{weapon.pk}", "structure": f"s{structure.pk}"},
                               **HTMX))
        field = form.find("field-heaviest")
        if field is None:
            return None
        radios = [n for n in field.find_all("input") if n.attrs.get("name") == "heaviest"]
        return [n.attrs["value"] for n in radios], [n.attrs["value"] for n in radios if "checked" in n.attrs]

    assert asked(both) == (["main_gun", "machine_gun"], ["main_gun"])
    assert asked(bunker) == (["machine_gun"], ["machine_gun"])
    assert asked(pit) is None
    Structure.objects.filter(pk=bunker.pk).update(weapons_destroyed=[0, 1])
    assert asked(bunker) is None


def test_hits_on_a_bunker_crew_offer_the_casualties_next(client, db):
    """Disposable Heroes: two small-arms hits on the loghouse's crew; the answer offers the casualties
    form for that fortification (the wound rolls are the players' rulebook's)."""
    dh, sheet = heroes_world()
    bunker = dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=10, crew_side="B")
    squad = dh.unit("A", "Rifle squad")
    signed(client, dh.alice)
    answer = client.post(url(dh, "battle_resolve"), {
        "action": "dh_small_arms", "attacker": uid(squad), "structure": f"s{bunker.pk}", "shots": "2",
        "dice_mode": "player", "dice_0": "1", "dice_1": "1", "dice_2": "3", "dice_3": "2",
        "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Resolved #" in body(answer)
    link = next(a for a in page(answer).find("attack-form").find_all("a") if "casualties" in a.text())
    assert link.text().strip() == "Enter the casualties: 2 hits on Loghouse's crew"
    filled = client.get(f"{url(dh, 'battle_form')}?{link.attrs['hx-get'].split('?', 1)[1]}", **HTMX)
    chosen = {s.attrs["name"]: [o.attrs.get("value") for o in s.find_all("option") if "selected" in o.attrs]
              for s in page(filled).find("attack-form").find_all("select")}
    assert chosen["action"] == ["dh_crew_casualties"] and chosen["structure"] == [f"s{bunker.pk}"]
    assert page(filled).find("id_hits").attrs["value"] == "2"
    # The two hits can kill at most two: a third casualty is refused beside its field.
    query = dict(parse_qs(link.attrs["hx-get"].split("?", 1)[1]))
    refused = client.post(url(dh, "battle_resolve"), {**{k: v[0] for k, v in query.items()}, "casualties": "3",
                                                      "client_token": str(uuid.uuid4())}, **HTMX)
    assert "2 hits can kill at most 2 (one wound roll each)" in text_of(refused, "field-casualties")
    assert Structure.objects.get(pk=bunker.pk).crew_men == 10


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_a_routed_section_walked_back_into_its_bunker_is_refused_beside_the_structure(client, db, htmx):
    """Seed 003: the third pin routs a unit, and a rout forces a crew out. A routed section moved back
    into its bunker rejoined the fresh crew there, which kept its own pins: the rout vanished. It is
    refused beside "Into", nothing changes and nothing is logged; the unit list says it has routed."""
    dh, sheet = heroes_world()
    bunker = dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=4, crew_side="B", crew_left=6)
    section = dh.unit("B", "Loghouse crew 1", models=6, x=20, y=28, pins=3, crew_of=bunker)
    signed(client, dh.bob)
    form = client.get(url(dh, "battle_form"), {"action": "move"}, **HTMX)
    labels = [o.text() for o in page(form).find("id_unit").find_all("option") if o.attrs["value"] == uid(section)]
    assert labels == ["Loghouse crew 1 — routed (side B, 6 models, at 20″, 28″)"]
    sent = client.post(url(dh, "battle_resolve"), {"action": "move", "unit": uid(section), "structure": sid(bunker),
                                                   "client_token": str(uuid.uuid4())}, **(HTMX if htmx else {}))
    assert sent.status_code == (200 if htmx else 422)
    assert ("Loghouse crew 1 has routed (3 pins): a routed unit routs away and goes into no fortification, so it "
            "cannot go into Loghouse") in text_of(sent, "field-structure")
    bunker.refresh_from_db()
    section.refresh_from_db()
    assert (bunker.crew_men, bunker.crew_left, bunker.crew_pins) == (4, 6, 0)
    assert not section.rejoined and (section.pins, float(section.x)) == (3, 20)
    assert not LogEntry.objects.filter(battle=dh.battle).exists()


def test_a_routed_unit_chosen_to_attack_is_marked_and_warned_of_not_refused(client, db):
    """That routed units do not fire is the DH core rulebook's rule, not seed 003's: the attacker list
    marks a routed unit and the form warns once it is chosen, but the attack is the players' call."""
    dh, bunker, gun, crew_gun = loghouse_under_fire()
    routed = dh.unit("A", "Rifle section", pins=3)
    pinned = dh.unit("A", "Scouts", pins=2)
    signed(client, dh.alice)
    query = {"action": "dh_small_arms", "structure": sid(bunker), "shots": "4"}
    form = client.get(url(dh, "battle_form"), query, **HTMX)
    marked = {v: "— routed" in label for v, label, _ in attacker_options(form)}
    assert marked == {uid(crew_gun): False, uid(routed): True, uid(pinned): False}
    assert page(form).find("id_attacker_warning") is None
    form = client.get(url(dh, "battle_form"), {**query, "attacker": uid(routed)}, **HTMX)
    assert text_of(form, "id_attacker_warning") == (
        "Rifle section has routed (3 pins). In the Disposable Heroes rulebook routed units do not fire; seed 003 "
        "does not say. Resolve this only if your rulebook lets it fire.")
    assert "id_attacker_warning" in page(form).find("id_attacker").attrs["aria-describedby"]
    assert page(client.get(url(dh, "battle_form"), {**query, "attacker": uid(pinned)}, **HTMX)).find(
        "id_attacker_warning") is None
    sent = client.post(url(dh, "battle_resolve"), {**query, "attacker": uid(routed), "dice_mode": "player",
                                                   **{f"dice_{i}": "5" for i in range(4)},
                                                   "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Resolved #" in body(sent)
    assert LogEntry.objects.filter(battle=dh.battle, action="dh_small_arms").count() == 1


def test_a_routed_crews_own_side_is_reminded_to_record_it_leaving(client, db):
    """The attack that routs a crew offers "record it leaving" to the player who made it only when the
    crew is theirs; the crew's own side, following by the poll, is reminded in its turn panel until the
    crew has left, and the reminder opens that form. The other side is not."""
    dh, sheet = heroes_world()
    bunker = dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=6, crew_side="B",
                          crew_pins=3, crew_routed=True)
    signed(client, dh.bob)
    turns = page(client.get(url(dh, "battle"))).find("turns")
    link = next(a for a in turns.find_all("a") if "leaving" in a.text())
    assert "Loghouse's crew has routed and must leave" in turns.text()
    filled = client.get(f"{url(dh, 'battle_form')}?{link.attrs['hx-get'].split('?', 1)[1]}", **HTMX)
    chosen = {s.attrs["name"]: [o.attrs.get("value") for o in s.find_all("option") if "selected" in o.attrs]
              for s in page(filled).find("attack-form").find_all("select")}
    assert chosen["action"] == ["dh_leave"] and chosen["structure"] == [f"s{bunker.pk}"]
    signed(client, dh.alice)
    assert "must leave" not in page(client.get(url(dh, "battle"))).find("turns").text()
    # Once it has left, nobody is reminded.
    signed(client, dh.bob)
    client.post(url(dh, "battle_resolve"), {"action": "dh_leave", "structure": f"s{bunker.pk}",
                                            "client_token": str(uuid.uuid4())}, **HTMX)
    assert Structure.objects.get(pk=bunker.pk).crew_men == 0
    assert "must leave" not in page(client.get(url(dh, "battle"))).find("turns").text()


def test_a_penetrating_hit_asks_for_the_guts_check_after_its_dice(client, db):
    """Disposable Heroes, seed 003: a penetrating hit's row says whether the crew takes a Guts check, and
    the check is taken with its normal modifiers once the blast's casualties are known. The attack form
    asks nothing about it; the answer offers the check for that crew, and entering it fails and pins."""
    dh, bunker, gun, crew_gun = loghouse_under_fire()
    signed(client, dh.alice)
    attack = {"action": "dh_main_gun", "attacker": uid(crew_gun), "weapon": f"w{gun.pk}",
              "structure": f"s{bunker.pk}", "facing": "front", "hit": "yes"}
    form = page(client.get(url(dh, "battle_form") + "?" + "&".join(f"{k}={v}" for k, v in attack.items()), **HTMX))
    assert not [i for i in form.find("attack-form").find_all("input") if i.attrs.get("name") == "guts_passed"]
    assert "Hit?" in form.find("attack-form").text()
    # Front 3: walls (AV 90); penetration 8: 96; PH 6 − 1 = 5: blast 10D10 AP 6, two dice kill two.
    dice = ["3", "8", "6", "1", "2", "7", "8", "9", "10", "10", "9", "8", "7"]
    answer = client.post(url(dh, "battle_resolve"), {
        **attack, "dice_mode": "player", **{f"dice_{i}": d for i, d in enumerate(dice)},
        "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Resolved #" in body(answer)
    assert (Structure.objects.get(pk=bunker.pk).crew_men, Structure.objects.get(pk=bunker.pk).crew_pins) == (8, 0)
    link = next(a for a in page(answer).find("attack-form").find_all("a") if "Guts" in a.text())
    assert link.text().strip() == "Enter the Guts check of Loghouse's crew"
    query = {k: v[0] for k, v in parse_qs(link.attrs["hx-get"].split("?", 1)[1]).items()}
    assert query == {"action": "dh_guts", "structure": f"s{bunker.pk}", "flamethrower": "no"}
    filled = page(client.get(f"{url(dh, 'battle_form')}?{link.attrs['hx-get'].split('?', 1)[1]}", **HTMX))
    assert [o.attrs.get("value") for o in filled.find("id_action").find_all("option") if "selected" in o.attrs] == [
        "dh_guts"]
    signed(client, dh.bob)
    done = client.post(url(dh, "battle_resolve"), {**query, "guts_passed": "no", "client_token": str(uuid.uuid4())},
                       **HTMX)
    assert "Loghouse's crew: Guts check failed: pinned (1)" in page(done).find("attack-form").text()
    assert Structure.objects.get(pk=bunker.pk).crew_pins == 1


def test_the_crews_side_is_reminded_of_a_guts_check_owed_until_it_is_entered(client, db):
    """Seed 003: a penetrating hit's Guts check is the crew's roll, but only the phone that attacked was offered
    it (its answer's follow-up, and its address after a reload). The crew's side is reminded in the turns panel
    of every phone of theirs until the check is entered; an undo brings it back or takes it away with what it
    undoes. The attacking side, holding no fortification, is not."""
    dh, bunker, gun, crew_gun = loghouse_under_fire()
    signed(client, dh.alice)
    # Front 3: walls (AV 90); penetration 8: 96; PH 6 − 1 = 5: blast 10D10 AP 6, two dice kill two; Guts check.
    dice = ["3", "8", "6", "1", "2", "7", "8", "9", "10", "10", "9", "8", "7"]
    client.post(url(dh, "battle_resolve"), {
        "action": "dh_main_gun", "attacker": uid(crew_gun), "weapon": f"w{gun.pk}", "structure": f"s{bunker.pk}",
        "facing": "front", "hit": "yes", "dice_mode": "player", **{f"dice_{i}": d for i, d in enumerate(dice)},
        "client_token": str(uuid.uuid4())})
    attack = LogEntry.objects.get(battle=dh.battle, action="dh_main_gun")
    said = f"Loghouse's crew owes the Guts check of #{attack.seq}: enter it"

    def reminders(user):
        signed(client, user)
        return [a for a in page(client.get(url(dh, "battle"))).find("turns").find_all("a") if "Guts" in a.text()]

    assert reminders(dh.alice) == []
    [link] = reminders(dh.bob)
    assert link.text().strip() == said
    assert {k: v[0] for k, v in parse_qs(link.attrs["hx-get"].split("?", 1)[1]).items()} == {
        "action": "dh_guts", "structure": f"s{bunker.pk}", "flamethrower": "no"}
    assert_owed_until_entered(reminders, said, battle=dh.battle, owner=dh.bob, attacker=dh.alice, enter=lambda: (
        services.perform(battle_id=dh.battle.pk, user=dh.bob, action="dh_guts",
                         inputs={"structure": f"s{bunker.pk}", "guts_passed": "yes", "flamethrower": "no"})))


def assert_owed_until_entered(reminders, said, *, battle, owner, attacker, enter):
    """A roll owed shows in the turns panel of the owing side (`reminders(user)`, its links) until `enter`
    makes its entry; an undo of that entry brings it back, an undo of the attack that owed it takes it away."""
    assert [a.text().strip() for a in reminders(owner)] == [said]
    enter()
    assert reminders(owner) == []
    services.undo_last(battle_id=battle.pk, user=owner)
    assert [a.text().strip() for a in reminders(owner)] == [said]
    services.undo_last(battle_id=battle.pk, user=attacker)
    assert reminders(owner) == []


def test_the_guts_reminder_costs_the_crews_page_one_query_however_long_the_log(client, db):
    """guts_owed reads the log: one query, limited, whatever the number of attacks (query counts are fixed)."""
    dh, bunker, gun, crew_gun = loghouse_under_fire()
    miss = {"weapon": f"w{gun.pk}", "structure": f"s{bunker.pk}", "facing": "front", "hit": "no"}

    def bobs_page_queries():
        signed(client, dh.bob)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url(dh, "battle")).status_code == 200
        [guts] = [q["sql"] for q in queries.captured_queries if "'dh_guts'" in q["sql"]]
        assert f"LIMIT {views.GUTS_LOOKBACK}" in guts  # the rows it reads do not grow either
        return len(queries)

    services.perform(battle_id=dh.battle.pk, user=dh.alice, action="dh_main_gun", attacker=uid(crew_gun), inputs=miss)
    few = bobs_page_queries()
    Battle.objects.filter(pk=dh.battle.pk).update(options={"track_actions": False})  # the gun fires again and again
    for _ in range(views.GUTS_LOOKBACK + 5):
        services.perform(battle_id=dh.battle.pk, user=dh.alice, action="dh_main_gun", attacker=uid(crew_gun),
                         inputs=miss)
    assert bobs_page_queries() == few


def test_a_guts_check_already_entered_is_not_offered_again_by_the_result_s_address(client, db):
    """Seed 003: a penetrating hit's row calls for one Guts check. The page after the attack is at
    ?…&result=<its entry> and offers "Enter the Guts check"; back on that address (a reload, a phone that
    slept) after the check was entered, it offered it again: one tap, and the crew took a second pin for
    the same hit. Undone, the check is owed again."""
    dh, bunker, gun, crew_gun = loghouse_under_fire()
    signed(client, dh.alice)
    # Front 3: walls (AV 90); penetration 8: 96; PH 2 − 1 = 1: no effect, Guts check, 1 PH.
    attacked = client.post(url(dh, "battle_resolve"), {
        "action": "dh_main_gun", "attacker": uid(crew_gun), "weapon": f"w{gun.pk}", "structure": f"s{bunker.pk}",
        "facing": "front", "hit": "yes", "dice_mode": "player", "dice_0": "3", "dice_1": "8", "dice_2": "2",
        "client_token": str(uuid.uuid4())})
    result_page = attacked["Location"]
    assert "result=" in result_page

    def offered():
        form = page(client.get(result_page)).find("attack-form")
        return [a.text().strip() for a in form.find_all("a") if "Guts" in a.text()]

    assert offered() == ["Enter the Guts check of Loghouse's crew"]
    signed(client, dh.bob)
    client.post(url(dh, "battle_resolve"), {"action": "dh_guts", "structure": f"s{bunker.pk}", "guts_passed": "no",
                                            "flamethrower": "no", "client_token": str(uuid.uuid4())})
    assert Structure.objects.get(pk=bunker.pk).crew_pins == 1
    signed(client, dh.alice)
    assert offered() == []
    signed(client, dh.bob)
    client.post(url(dh, "battle_undo"), {"confirmed": "1"})
    assert Structure.objects.get(pk=bunker.pk).crew_pins == 0
    signed(client, dh.alice)
    assert offered() == ["Enter the Guts check of Loghouse's crew"]


def test_the_dh_forms_offer_only_the_fortifications_each_action_can_be_made_at(client, db):
    """Disposable Heroes: the Fortification list of every crew action held every structure on the table,
    the player's own bunkers and plain houses among them, and picking one was refused only on Resolve
    ("choose an enemy fortification", "has no … sheet and crew"). Now the attacks offer the enemy's
    crewed fortifications still standing, Crew leaves the player's own crews, and the entries for a
    crew (casualties, Guts) any crewed fortification standing; the organiser, playing both sides, sees
    every crewed one."""
    dh, sheet = heroes_world()
    dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=10, crew_side="B")
    dh.structure("Pit", floors=1, kind="bunker", sheet=sheet, crew_men=10, crew_side="A", x=40)
    dh.structure("Ruin", floors=1, kind="bunker", sheet=sheet, crew_men=4, crew_side="B", x=60,
                 destroyed=True, crew_routed=True, crew_pins=3)
    dh.structure("Farmhouse", floors=1, x=5)

    def offered(user, action):
        signed(client, user)
        form = page(client.get(url(dh, "battle_form"), {"action": action}, **HTMX)).find("attack-form")
        return [o.text().strip() for o in form.find("id_structure").find_all("option") if o.attrs.get("value")]

    for action in ("dh_main_gun", "dh_flamethrower", "dh_small_arms"):
        assert offered(dh.alice, action) == ["Loghouse"], action
        assert offered(dh.bob, action) == ["Pit"], action
    assert offered(dh.alice, "dh_leave") == ["Pit"]
    # The destroyed blockhouse's routed survivors still walk out.
    assert offered(dh.bob, "dh_leave") == ["Loghouse", "Ruin (crew routed)"]
    for action in ("dh_crew_casualties", "dh_guts"):
        assert offered(dh.alice, action) == ["Loghouse", "Pit"], action
    assert offered(dh.organiser, "dh_main_gun") == ["Loghouse", "Pit"]


def test_a_bunker_card_says_how_many_of_the_crew_may_fire_their_rifles(client, db):
    """Seed 003, "How Fortifications Fight Back" (DH-21): the men left once every weapon is manned, halved,
    fire their rifles beside the weapons. The card showed the crew and the weapons lost but not that
    figure, which players recomputed at the table after every loss. It follows the crew and its weapons:
    10 men and two MG34s (3 each) give 2; 8 men with one MG34 destroyed give 2 ((8 − 3) // 2); 5 men
    cannot man both, and none are free."""
    dh, sheet = heroes_world()
    bunker = dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=10, crew_side="B")
    signed(client, dh.alice)

    def facts():
        card = page(client.get(url(dh, "battle_card", f"s{bunker.pk}"), **HTMX))
        return {d.find_all("dt")[0].text().strip(): d.find_all("dd")[0].text().strip()
                for d in card.find_all("div") if d.find_all("dt") and d.find_all("dd")}

    def free():
        return facts()["Free to fire rifles"]

    assert free() == "2"
    Structure.objects.filter(pk=bunker.pk).update(crew_men=8, weapons_destroyed=[0])
    assert free() == "2"
    Structure.objects.filter(pk=bunker.pk).update(crew_men=5, weapons_destroyed=[])
    assert free() == "0"
    page_text = text_of(client.get(url(dh, "battle")), "structures")
    assert "Free to fire rifles 0" in " ".join(page_text.split())
    # Destroyed by a 9–10 (no hit counted, its routed survivors on their way out): it fights back no more.
    Structure.objects.filter(pk=bunker.pk).update(crew_men=6, crew_routed=True, destroyed=True)
    said = facts()
    assert (said["Free to fire rifles"], said["Penetrating hits"]) == ("none: destroyed", "none more: destroyed")


def test_a_crew_that_routs_is_offered_to_leave_its_fortification(client, db):
    """Seed 003: on its third pin the crew "must Rout 9\"" out of its fortification and fights on as
    infantry. The answer to the failed Guts check offers the crew's side the Crew leaves form for it
    (the other side cannot record it, so it is not offered to them); recorded, the sections keep the
    three pins."""
    dh, sheet = heroes_world()
    bunker = dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=10, crew_side="B")
    Structure.objects.filter(pk=bunker.pk).update(crew_pins=2)
    guts = {"action": "dh_guts", "structure": f"s{bunker.pk}", "guts_passed": "no"}
    signed(client, dh.alice)
    answer = client.post(url(dh, "battle_resolve"), {**guts, "client_token": str(uuid.uuid4())}, **HTMX)
    assert "third pin, the crew routs 9" in page(answer).find("attack-form").text()
    assert not [a for a in page(answer).find("attack-form").find_all("a") if "routs" in a.text()]
    services.undo_last(battle_id=dh.battle.pk, user=dh.alice)
    signed(client, dh.bob)
    answer = client.post(url(dh, "battle_resolve"), {**guts, "client_token": str(uuid.uuid4())}, **HTMX)
    (link,) = [a for a in page(answer).find("attack-form").find_all("a") if "routs" in a.text()]
    assert link.text().strip() == "Loghouse's crew routs 9″: record it leaving as infantry sections"
    query = {k: v[0] for k, v in parse_qs(link.attrs["hx-get"].split("?", 1)[1]).items()}
    assert query == {"action": "dh_leave", "structure": f"s{bunker.pk}"}
    client.post(url(dh, "battle_resolve"), {**query, "client_token": str(uuid.uuid4())}, **HTMX)
    assert Structure.objects.get(pk=bunker.pk).crew_men == 0
    assert [(u.models_left, u.pins) for u in Unit.objects.filter(army__battle=dh.battle, army__side="B")] == [(10, 3)]


def test_the_form_under_a_result_does_not_call_the_done_action_an_error(client, db):
    """Disposable Heroes: the crew leaves its loghouse. The form drawn under the result keeps the action
    and the fortification, which now has nobody left to leave: the answer says what was done, with no
    red message beside it as if it had failed. Resolving it again is refused there, and changes nothing."""
    dh, sheet = heroes_world()
    bunker = dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=10, crew_side="B")
    signed(client, dh.bob)
    answer = client.post(url(dh, "battle_resolve"), {
        "action": "dh_leave", "structure": f"s{bunker.pk}", "client_token": str(uuid.uuid4())}, **HTMX)
    form = page(answer).find("attack-form")
    assert "Resolved #" in form.text() and "leave Loghouse" in form.text()
    assert "no crew left" not in form.text() and not form.find_all("p", cls="field-error")
    assert Structure.objects.get(pk=bunker.pk).crew_men == 0
    assert sum(Unit.objects.filter(army__battle=dh.battle, army__side="B").values_list("models_left", flat=True)) == 10
    before = state(dh)
    again = client.post(url(dh, "battle_resolve"), {
        "action": "dh_leave", "structure": f"s{bunker.pk}", "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Loghouse has no crew left to leave" in text_of(again, "field-structure")
    assert state(dh) == before


def test_a_crew_section_is_offered_the_rifles_and_light_mg_it_carried_out(client, db):
    """Disposable Heroes, seed 003: a crew that leaves takes its Light MGs; every other weapon is
    abandoned; crews carry rifles and grenades. The sections get those as weapon rows, and the attack
    form offers a section exactly its own small arms, not the whole catalogue (45mm included)."""
    from apps.structures.models import BunkerSheet

    dh = factories.make_world(ruleset="dh", club_name="Heroes club")
    rifles = factories.weapon("dh", "rifles", name="Rifles", dh_category="small_arms")
    lmg = factories.weapon("dh", "lmg", name="LMG", dh_category="small_arms")
    grenades = factories.weapon("dh", "grenades", name="Grenades")
    factories.weapon("dh", "45mm", name="45mm", dh_category="main_gun", penetration_row=list(range(12, 121, 12)))
    data = next(s for s in DH_SHEETS if s["slug"] == "soviet-at-hmg-loghouse")
    sheet = BunkerSheet.objects.create(**{**data, "weapons": [*data["weapons"], {
        "crew": 2, "name": "DP LMG", "location": "Infantry", "range": 48, "rof": 3, "ap": 8, "mm": -2, "dm": -3,
        "special": ""}]})
    bunker = dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=12, crew_side="B")
    enemy = dh.structure("Pit", floors=1, kind="bunker", sheet=sheet, crew_men=12, crew_side="A", x=40, y=40)
    signed(client, dh.bob)
    answer = client.post(url(dh, "battle_resolve"), {
        "action": "dh_leave", "structure": f"s{bunker.pk}", "section_size": "6", "client_token": str(uuid.uuid4())},
        **HTMX)
    assert "Resolved #" in body(answer)
    one, two = Unit.objects.filter(army__battle=dh.battle, army__side="B").order_by("name")
    arms = {u.name: sorted((uw.weapon.slug, uw.count) for uw in UnitWeapon.objects.filter(unit=u))
            for u in (one, two)}
    assert arms == {"Loghouse crew 1": [("grenades", 6), ("lmg", 1), ("rifles", 5)],
                    "Loghouse crew 2": [("grenades", 6), ("rifles", 6)]}
    for section, offered in ((one, ["LMG", "Rifles"]), (two, ["Rifles"])):
        form = page(client.get(url(dh, "battle_form") + f"?action=dh_small_arms&attacker=u{section.pk}"
                                                        f"&structure=s{enemy.pk}", **HTMX)).find("attack-form")
        weapon = next(s for s in form.find_all("select") if s.attrs["name"] == "weapon")
        assert sorted(o.text() for o in weapon.find_all("option") if o.attrs.get("value")) == offered
    assert rifles and lmg and grenades


def test_a_crew_that_walked_out_is_not_shown_as_routed(client, db):
    """Disposable Heroes: a crew in good order leaves its loghouse (Crew leaves). The fortification is
    empty, not routed: the map must not print R (routed) on it while its card says "Routed: no", nor
    the card call the men who walked out eliminated. A routed crew still shows R."""
    dh, sheet = heroes_world()
    bunker = dh.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_men=10, crew_side="B")
    other = dh.structure("Blockhouse", floors=1, kind="bunker", sheet=sheet, crew_men=3, crew_side="B",
                         x=40, y=40)
    Structure.objects.filter(pk=other.pk).update(crew_routed=True, crew_pins=3)
    signed(client, dh.bob)
    answer = client.post(url(dh, "battle_resolve"), {
        "action": "dh_leave", "structure": f"s{bunker.pk}", "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Resolved #" in body(answer)
    left = Structure.objects.get(pk=bunker.pk)
    assert (left.crew_men, left.crew_routed) == (0, False)
    html = page(client.get(url(dh, "battle")))
    piece = html.find(f"map-s{bunker.pk}")
    crew = [t.text() for t in piece.find_all("text") if "map-crew" in t.attrs.get("class", "")]
    assert crew == ["0"] and "st-routed" not in piece.attrs["class"]
    assert "routed" not in piece.attrs["aria-label"] and "no crew left" in piece.attrs["aria-label"]
    card = html.find(f"structure-{bunker.pk}").text()
    assert "No crew left" in card and "eliminated" not in card
    routed = html.find(f"map-s{other.pk}")
    assert [t.text() for t in routed.find_all("text") if "map-crew" in t.attrs.get("class", "")] == ["routed"]
    assert "st-routed" in routed.attrs["class"]


def test_hits_on_a_unit_offer_its_damage_roll_ready_filled(client, w):
    """HE that leaves the squad standing scores hits: the answer offers the damage roll for them, with
    the squad, the hits, HE and the gun filled in, and the gun (which has acted) may be named in it."""
    signed(client, w.alice)
    answer = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="2", dice_1="1"), **HTMX)
    link = next(a for a in page(answer).find("attack-form").find_all("a") if "Roll damage" in a.text())
    assert link.text().strip() == "Roll damage: 3 hits on Grenadiers"
    assert Unit.objects.get(pk=w.gun.pk).acted
    query = link.attrs["hx-get"].split("?", 1)[1]
    assert link.attrs["href"] == f"{url(w, 'battle')}?{query}#attack-panel"  # the same without JavaScript
    filled = client.get(f"{url(w, 'battle_form')}?{query}", **HTMX)
    chosen = {s.attrs["name"]: [o.attrs.get("value") for o in s.find_all("option") if "selected" in o.attrs]
              for s in page(filled).find("attack-form").find_all("select")}
    assert chosen["action"] == ["ba_damage"] and chosen["target"] == [uid(w.squad)]
    inputs = page(filled).find("attack-form").find_all("input")
    checked = {i.attrs["name"]: i.attrs.get("value") for i in inputs if "checked" in i.attrs}
    values = {i.attrs["name"]: i.attrs.get("value") for i in inputs}
    assert chosen["attacker"] == [uid(w.gun)] and checked["source"] == "he" and values["hits"] == "3"
    done = client.post(url(w, "battle_resolve"), {**dict(part.split("=") for part in query.split("&")),
                                                   "pen": "0", "close_quarters": "no", "dice_mode": "player",
                                                   **{f"dice_{i}": "6" for i in range(3)},
                                                   "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Resolved #" in body(done), form_html(done)
    entry = LogEntry.objects.get(battle=w.battle, action="ba_damage")
    assert entry.side == "A" and entry.inputs["attacker"] == uid(w.gun)
    assert Unit.objects.get(pk=w.squad.pk).models_left == 10 - 3


@pytest.mark.parametrize("mode", ["player", "server"])
def test_a_damage_roll_is_offered_with_the_dice_the_hits_were_rolled_with(client, w, mode):
    """Players who rolled the HE hits with their own dice were offered the damage roll on "Roll for
    me": tapping Resolve had the server roll it for them. It opens on the mode the hits were rolled in,
    asking for one die per hit; the damage rolled with the players' dice is the one logged. (A D6 shell:
    one the server rolls cannot bring the house down, which would leave no damage to roll.)"""
    d6 = factories.weapon("ba", "he-d6", name="HE shell D6", he_value="D6")
    UnitWeapon.objects.create(unit=w.gun, weapon=d6)
    signed(client, w.alice)
    dice = {"dice_0": "3"} if mode == "player" else {}
    answer = client.post(url(w, "battle_resolve"), he_attack(w, weapon=f"w{d6.pk}", dice_mode=mode, **dice), **HTMX)
    link = next(a for a in page(answer).find("attack-form").find_all("a") if "Roll damage" in a.text())
    query = link.attrs["hx-get"].split("?", 1)[1]
    filled = page(client.get(f"{url(w, 'battle_form')}?{query}", **HTMX)).find("attack-form")
    checked = [i.attrs["value"] for i in filled.find_all("input") if i.attrs.get("name") == "dice_mode"
               and "checked" in i.attrs]
    assert checked == [mode]
    hits = LogEntry.objects.get(battle=w.battle, action="ba_he").outcome["effects"]
    n = next(e["n"] for e in hits if e["type"] == "hits")
    dice_fields = [i for i in filled.find_all("input") if i.attrs.get("name", "").startswith("dice_")
                   and i.attrs["name"] != "dice_mode"]
    assert len(dice_fields) == (n if mode == "player" else 0)
    if mode == "player":
        done = client.post(url(w, "battle_resolve"), {**QueryDict(query).dict(), "pen": "0", "close_quarters": "no",
                                                      **{f"dice_{i}": "6" for i in range(n)},
                                                      "client_token": str(uuid.uuid4())}, **HTMX)
        assert "Resolved #" in body(done), form_html(done)
        entry = LogEntry.objects.get(battle=w.battle, action="ba_damage")
        assert {d["source"] for d in entry.dice} == {"player"}
        assert Unit.objects.get(pk=w.squad.pk).models_left == 10 - n


def test_unit_choices_count_models_and_a_lone_weapon_is_chosen(client, w):
    Unit.objects.filter(pk=w.gun.pk).update(models_left=1)
    signed(client, w.alice)
    form = client.get(url(w, "battle_form"), {"action": "ba_he", "attacker": uid(w.gun)}, **HTMX)
    assert "Field gun (side A, 1 model, " in form_html(form)
    weapon = next(s for s in page(form).find("attack-form").find_all("select") if s.attrs["name"] == "weapon")
    assert [o.attrs["value"] for o in weapon.find_all("option") if "selected" in o.attrs] == [f"w{w.he.pk}"]


def test_only_an_organiser_or_the_player_who_acted_may_undo(client, w):
    signed(client, w.alice)
    client.post(url(w, "battle_resolve"), he_attack(w, dice_0="6", dice_1="6"), **HTMX)
    signed(client, w.bob)
    assert "Undo #" not in text_of(client.get(url(w, "battle")), "turns")
    before = state(w)
    response = client.post(url(w, "battle_undo"), {}, **HTMX)
    assert "Only an organiser or" in text_of(response, "turns")
    assert state(w) == before
    plain = client.post(url(w, "battle_undo"))
    assert plain.status_code == 303 and state(w) == before
    signed(client, w.organiser)
    assert "Undo #" in text_of(client.get(url(w, "battle")), "turns")
    # Without JavaScript no dialog asks first: the page does, and only "Yes" undoes.
    asked = client.post(url(w, "battle_undo"))
    assert asked.status_code == 303 and asked["Location"] == url(w, "battle") + "?confirm=undo#turns"  # no seq sent
    assert state(w) == before
    question = page(client.get(asked["Location"])).find("turns")
    assert "Undo #1?" in question.text() and "Yes, undo #1" in question.text()
    assert client.post(url(w, "battle_undo"), {"confirmed": "1"}).status_code == 303
    assert not Structure.objects.get(pk=w.house.pk).collapsed


# ---------------------------------------------------------------------------------- turns

@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_two_phones_ending_the_same_turn_end_it_once(client, w, htmx):
    """Both players agree the turn is over and both tap "End turn 1" a moment apart (the second phone had
    not polled yet, or its question was still open): the second tap ended turn 2 as well, with its upkeep.
    Each End turn button carries the turn it ends; the second is refused and changes nothing."""
    battle = Battle.objects.get(pk=w.battle.pk)
    for account in (w.alice, w.bob):  # each phone has the page open at turn 1
        for form in page(signed(Client(), account).get(url(w, "battle"))).find("turns").find_all("form"):
            fields = {i.attrs.get("name"): i.attrs.get("value") for i in form.find_all("input")}
            assert fields.get("turn") == "1", fields
    signed(client, w.alice)
    alice = client.post(url(w, "battle_turn"), {"action": "end_turn", "turn": "1", "client_token": str(uuid.uuid4()),
                                                "confirmed": "1"}, **(HTMX if htmx else {}))
    assert alice.status_code == (200 if htmx else 303)
    battle.refresh_from_db()
    assert battle.turn == 2
    before = state(w)
    bob = signed(Client(), w.bob)
    response = bob.post(url(w, "battle_turn"), {"action": "end_turn", "turn": "1", "client_token": str(uuid.uuid4()),
                                                "confirmed": "1"}, **(HTMX if htmx else {}), follow=not htmx)
    said = text_of(response, "turns") if htmx else page(response).text()  # without JavaScript: the page's message
    assert "Turn 1 has already ended: nothing more was ended. This is turn 2" in said
    assert state(w) == before
    assert LogEntry.objects.filter(battle=battle, action="end_turn").count() == 1
    # Turn 2's own button ends turn 2.
    bob.post(url(w, "battle_turn"), {"action": "end_turn", "turn": "2", "client_token": str(uuid.uuid4())}, **HTMX)
    battle.refresh_from_db()
    assert battle.turn == 3


def test_upkeep_then_end_turn(client, w):
    signed(client, w.alice)
    turns = text_of(client.get(url(w, "battle")), "turns")
    assert "Start-of-turn upkeep" in turns and "End turn" in turns
    response = client.post(url(w, "battle_turn"), {"action": "upkeep", "client_token": str(uuid.uuid4())}, **HTMX)
    assert response.status_code == 200
    battle = Battle.objects.get(pk=w.battle.pk)
    assert battle.upkeep_turn == 1 and LogEntry.objects.filter(battle=battle, action="upkeep").count() == 1
    assert "Start-of-turn upkeep" not in text_of(response, "turns")
    assert "Undo #1" in text_of(response, "turns") and "Undo #1–" not in text_of(response, "turns")

    token = str(uuid.uuid4())
    response = client.post(url(w, "battle_turn"), {"action": "end_turn", "client_token": token})
    assert response["Location"] == url(w, "battle") + "?confirm=end_turn&turn=1#turns"  # no JavaScript: the page asks
    assert "End turn 1? The next turn's upkeep runs straight away." in text_of(client.get(response["Location"]),
                                                                               "turns")
    battle.refresh_from_db()
    assert battle.turn == 1
    response = client.post(url(w, "battle_turn"), {"action": "end_turn", "client_token": token, "confirmed": "1"})
    assert response.status_code == 303
    battle.refresh_from_db()
    assert battle.turn == 2 and battle.upkeep_turn == 2
    assert list(LogEntry.objects.filter(battle=battle).order_by("seq").values_list("action", flat=True)) == [
        "upkeep", "end_turn", "upkeep"]
    response = client.get(url(w, "battle"))
    assert "Turn 2" in text_of(response, "battle-header")
    # One Undo takes back the End turn with the upkeep it ran, and its button says so.
    assert "Undo #2–#3" in text_of(response, "turns") and "and its upkeep" in text_of(response, "turns")
    from apps.battles.views import last_undoable
    assert last_undoable(battle)["seqs"] == "#2–#3"  # the same without the page's entries in hand
    # Another player is told the same two entries; the undo's answer names both undos.
    bob = Client()
    assert "may undo #2–#3" in text_of(signed(bob, w.bob).get(url(w, "battle")), "turns")
    undone = client.post(url(w, "battle_undo"), {"after": 3, "m": battle.map_version}, **HTMX)
    assert "#4: Undid #3" in body(undone) and "#5: Undid #2" in body(undone)


def test_turn_buttons_share_no_token(client, w):
    html = body(signed(client, w.alice).get(url(w, "battle")))
    tokens = re.findall(r'name="client_token" value="([0-9a-f-]+)"', html)
    assert len(tokens) == len(set(tokens)) >= 3


def test_start_battle_is_for_organisers(client, w):
    Battle.objects.filter(pk=w.battle.pk).update(status=BattleStatus.SETUP)
    signed(client, w.alice)
    assert "Start battle" not in [b.text() for b in page(client.get(url(w, "battle"))).find("turns").find_all("button")]
    client.post(url(w, "battle_turn"), {"action": "start"})
    assert Battle.objects.get(pk=w.battle.pk).status == BattleStatus.SETUP
    signed(client, w.organiser)
    assert "Start battle" in text_of(client.get(url(w, "battle")), "turns")
    response = client.post(url(w, "battle_turn"), {"action": "start"}, **HTMX)
    assert response["HX-Refresh"] == "true"
    assert Battle.objects.get(pk=w.battle.pk).status == BattleStatus.IN_PROGRESS


@pytest.fixture
def lg(db):
    w = factories.make_world(ruleset="lg", club_name="Grenadier club")
    w.a1 = w.unit("A", "Alpha one")
    w.a2 = w.unit("A", "Alpha two")
    w.b1 = w.unit("B", "Bravo one")
    return w


def test_laser_grenadiers_initiative_pass_and_activate(client, lg):
    Battle.objects.filter(pk=lg.battle.pk).update(upkeep_turn=1)  # turn 1's upkeep done: initiative next
    signed(client, lg.organiser)
    turns = text_of(client.get(url(lg, "battle")), "turns")
    assert "Roll initiative" in turns and "not rolled yet" in turns
    response = client.post(url(lg, "battle_turn"), {"action": "lg_initiative", "client_token": str(uuid.uuid4())},
                           **HTMX)
    assert response.status_code == 200
    battle = Battle.objects.get(pk=lg.battle.pk)
    holder = battle.sequence["initiative"]
    assert holder in ("A", "B") and battle.sequence["rolled"]
    assert f"Initiative Side {holder}" in text_of(response, "turns")
    assert "Roll initiative" not in text_of(response, "turns")

    # The side holding the initiative passes; the streak shows and the initiative moves over.
    player = lg.alice if holder == "A" else lg.bob
    signed(client, player)
    response = client.post(url(lg, "battle_turn"), {"action": "lg_pass", "client_token": str(uuid.uuid4())}, **HTMX)
    battle.refresh_from_db()
    other = "B" if holder == "A" else "A"
    assert battle.sequence["initiative"] == other and battle.sequence["pass_streak"] == 1
    assert "Passes in a row 1" in text_of(response, "turns")

    # The other side activates a piece (move only).
    mover = lg.b1 if other == "B" else lg.a1
    signed(client, lg.bob if other == "B" else lg.alice)
    response = client.post(url(lg, "battle_turn"), {"action": "lg_activate", "unit": uid(mover),
                                                    "client_token": str(uuid.uuid4())}, **HTMX)
    battle.refresh_from_db()
    assert uid(mover) in battle.sequence["activated"]
    assert mover.name in text_of(response, "turns")
    assert LogEntry.objects.filter(battle=battle).count() == 3


def test_activate_move_only_offers_the_whole_fireteam(client, lg):
    """With fireteam initiative (LG-38) the turn panel's "Activate (move only)" can move a piece's whole
    fireteam, as the attack form's activation can: the piece's teammates are marked too."""
    Battle.objects.filter(pk=lg.battle.pk).update(upkeep_turn=1, fireteam_initiative=True,
                                                  sequence={"initiative": "A", "rolled": True})
    Unit.objects.filter(pk__in=[lg.a1.pk, lg.a2.pk]).update(fireteam="1")
    signed(client, lg.alice)
    form = page(client.get(url(lg, "battle"))).find("turns")
    assert "Alpha one (side A, fireteam 1)" in form.text() and "whole fireteam" in form.text()
    client.post(url(lg, "battle_turn"), {"action": "lg_activate", "unit": uid(lg.a1), "fireteam": "yes",
                                         "client_token": str(uuid.uuid4())}, **HTMX)
    activated = Battle.objects.get(pk=lg.battle.pk).sequence["activated"]
    assert set(activated) == {uid(lg.a1), uid(lg.a2)}
    # Without the option in use there is nothing to tick.
    Battle.objects.filter(pk=lg.battle.pk).update(fireteam_initiative=False, sequence={"initiative": "A",
                                                                                       "rolled": True})
    assert "whole fireteam" not in page(client.get(url(lg, "battle"))).find("turns").text()


def test_no_own_dice_offered_where_the_upkeep_rolls_none(client, w):
    """Without collapse checks the upkeep rolls nothing: End turn offers no field for dice."""
    signed(client, w.alice)
    turns = page(client.get(url(w, "battle"))).find("turns")
    assert turns.find("dice-end_turn") is None and "We roll our own dice" not in turns.text()
    Battle.objects.filter(pk=w.battle.pk).update(collapse_check=True, damage_variant=1)
    assert page(client.get(url(w, "battle"))).find("dice-end_turn") is not None


def test_players_roll_their_own_dice_for_initiative_and_upkeep(client, lg):
    """"We roll our own dice" under a turn button: the faces in order. A missing die is named, what
    was typed stays in the field and nothing is logged; complete, the log says the players rolled."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, collapse_check=True,
                                                  damage_variant=3, upkeep_turn=0)
    house = lg.structure("House", floors=1, damage_max=10, damage_taken=5)
    signed(client, lg.alice)
    turns = page(client.get(url(lg, "battle"))).find("turns")
    assert turns.find("dice-upkeep") is not None
    # The turn opens with its upkeep: initiative waits for it, and says so on its button.
    assert turns.find("dice-lg_initiative") is None
    assert turns.find("why-lg_initiative").text() == "Run the start-of-turn upkeep for turn 1 first"

    def press(action, dice):
        return client.post(url(lg, "battle_turn"), {"action": action, "dice_mode": "player", "dice": dice,
                                                    "client_token": str(uuid.uuid4())}, **HTMX)

    answer = press("upkeep", "")
    assert "Collapse check, House (50% damaged), d10: roll it and enter the result" in text_of(answer, "turns")
    answer = press("upkeep", "three")
    assert "Enter the dice as numbers, e.g. 3 7 (not 'three')" in text_of(answer, "turns")
    field = page(answer).find("dice-upkeep")
    assert field.attrs["value"] == "three"
    assert not LogEntry.objects.filter(battle=lg.battle).exists()
    # Without JavaScript too: the page opens again at the field, with what was typed.
    plain = client.post(url(lg, "battle_turn"), {"action": "upkeep", "dice_mode": "player", "dice": "three",
                                                 "client_token": str(uuid.uuid4())})
    assert plain["Location"] == url(lg, "battle") + "?dice_for=upkeep&dice=three#dice-upkeep"
    again = page(client.get(plain["Location"]))
    assert again.find("dice-upkeep").attrs["value"] == "three"
    assert "Enter the dice as numbers, e.g. 3 7 (not 'three')" in again.text()
    press("upkeep", "9")
    entry = LogEntry.objects.get(battle=lg.battle, action="upkeep")
    assert entry.dice[0]["faces"] == [9] and entry.dice[0]["source"] == "player"
    assert Structure.objects.get(pk=house.pk).collapsed  # stands only on 1–5
    turns = page(client.get(url(lg, "battle"))).find("turns")
    assert turns.find("dice-lg_initiative") is not None and "Side A's d10, then side B's" in turns.text()
    answer = press("lg_initiative", "4.4 2, 8")  # a tie, then B's 8 against A's 2
    entry = LogEntry.objects.get(battle=lg.battle, action="lg_initiative")
    assert [r["faces"] for r in entry.dice] == [[4], [4], [2], [8]] and {r["source"] for r in entry.dice} == {"player"}
    assert Battle.objects.get(pk=lg.battle.pk).sequence["initiative"] == "A"
    # The server still rolls when asked to.
    Battle.objects.filter(pk=lg.battle.pk).update(sequence={})
    client.post(url(lg, "battle_turn"), {"action": "lg_initiative", "dice_mode": "server", "dice": "1 2",
                                         "client_token": str(uuid.uuid4())}, **HTMX)
    newest = LogEntry.objects.filter(battle=lg.battle, action="lg_initiative").order_by("-seq").first()
    assert {r["source"] for r in newest.dice} == {"server"}


def test_odds_of_an_action_without_bars_are_its_outcomes_in_words():
    """What an action changes may have no bar of its own (a breach's progress): the odds list each
    outcome in words, not "Nothing can come of this"."""
    from apps.battles.views import odds_rows
    from tests.rules.builders import battle, building

    state = battle("lg", [building("wall", 1)])
    rows = odds_rows(rules.odds("lg_breach", state, {"structure": "wall", "hit": "yes", "penetrated": "yes",
                                                      "needed": 3}))
    assert [(r.kind, r.text) for r in rows] == [("probability", "100%")]
    assert "1/3 towards a breach" in rows[0].label


def test_an_action_that_records_the_players_results_offers_no_dice_and_no_odds(client, lg):
    """A breach's hit and penetration are the players' own rolls: nothing for the server to roll or
    price, and the button records it."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, sequence=SequenceState(
        initiative="A", rolled=True).to_dict())
    farm = lg.structure("Farmhouse", floors=1)
    signed(client, lg.alice)
    form = page(client.get(url(lg, "battle_form"), {"action": "lg_breach", "attacker": uid(lg.a1),
                                                    "structure": f"s{farm.pk}", "hit": "yes", "penetrated": "yes",
                                                    "needed": "3"}, **HTMX)).find("attack-form")
    assert form.find("dice") is None and form.find("odds") is None
    assert form.find_all("button", cls="resolve")[0].text().strip() == "Record"
    done = client.post(url(lg, "battle_resolve"), {"action": "lg_breach", "attacker": uid(lg.a1),
                                                   "structure": f"s{farm.pk}", "hit": "yes", "penetrated": "yes",
                                                   "needed": "3", "client_token": str(uuid.uuid4())}, **HTMX)
    assert "1/3 towards a breach" in text_of(done, "attack-form")
    assert Structure.objects.get(pk=farm.pk).breach_scored == 1


def test_the_range_field_says_what_the_map_measures_and_the_band_it_puts_the_weapon_in(client, lg):
    """LaserGrenadiers' range bands (LG-55) decide whether a weapon may fire: the field was a bare "Range
    (inches)" though the app knows where the attacker and the target stand. It says what the map measures,
    to the target's nearest wall, and the band; it fills nothing in (the table's tape measure decides)."""
    farm, inside, laser = farm_under_fire(lg)  # the farm's 6″ footprint centred on (20, 20); Alpha one at (10, 10)
    cannon = factories.weapon("lg", "cannon-r", name="Laser cannon", weapon_type="laser_cannon", attack_factor=7,
                              range_factor=4)
    UnitWeapon.objects.create(unit=lg.a1, weapon=cannon)
    signed(client, lg.alice)
    ask = {"action": "lg_attack_structure", "attacker": uid(lg.a1), "structure": sid(farm)}
    said = text_of(client.get(url(lg, "battle_form"), {**ask, "weapon": f"w{laser.pk}"}, **HTMX), "field-range")
    assert "On the map: about 10″ from Alpha one to Farmhouse. Measure on the table: that decides." in said
    said = text_of(client.get(url(lg, "battle_form"), {**ask, "weapon": f"w{cannon.pk}"}, **HTMX), "field-range")
    assert "about 10″ from Alpha one to Farmhouse: long range for Laser cannon." in said
    form = page(client.get(url(lg, "battle_form"), {**ask, "weapon": f"w{cannon.pk}"}, **HTMX))
    assert form.find("id_range").attrs.get("value", "") == ""
    # Inside a structure, the attacker has no spot of its own on the map: nothing is said.
    Unit.objects.filter(pk=lg.a1.pk).update(floor=lg.structure("Tower", floors=1, x=40).floors.get(), x=None, y=None)
    said = text_of(client.get(url(lg, "battle_form"), {**ask, "weapon": f"w{laser.pk}"}, **HTMX), "field-range")
    assert "On the map" not in said


def test_a_flamethrowers_hits_are_asked_after_a_hit_with_none_filled_in(client, w):
    """Bolt Action: a flamethrower's hits come from the core rules. "Hits scored" was offered filled in with
    0: a flame that hit resolved as doing nothing when the player missed the field. It is asked once the
    flame hit, empty; resolved without it, the form says so beside the field and nothing is logged."""
    Unit.objects.filter(pk=w.squad.pk).update(floor=w.floors[0])  # the flame reaches the ground floor
    signed(client, w.bob)
    flame = {"action": "ba_flamethrower", "attacker": uid(w.pioneers), "weapon": f"w{w.flamer.pk}",
             "structure": sid(w.house), "target": uid(w.squad)}

    def hits(form):
        return [i.attrs.get("value", "") for i in page(form).find("attack-form").find_all("input")
                if i.attrs.get("name") == "hits"]

    assert hits(client.get(url(w, "battle_form"), flame, **HTMX)) == []
    assert hits(client.get(url(w, "battle_form"), {**flame, "hit": "yes"}, **HTMX)) == [""]
    before = state(w)
    refused = client.post(url(w, "battle_resolve"), {**flame, "hit": "yes", "client_token": str(uuid.uuid4())},
                          **HTMX)
    assert ("Hits scored is required after a hit: the core rules' roll for the flamethrower decides it"
            in text_of(refused, "field-hits"))
    assert state(w) == before and not LogEntry.objects.filter(battle=w.battle).exists()


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_penetration_is_asked_after_a_hit_with_no_answer_chosen(client, lg, htmx):
    """Seed 000 leaves penetration to the rulebook (Rule 16). "Penetrated?" was offered already set to No:
    a player who answered "Hit: yes" and missed the next question resolved a shot that did not get through.
    It is asked once the shot hit, nothing chosen; the odds wait for it; resolved without it, the form says
    so beside the field and nothing is logged. After a miss it is not asked at all."""
    farm, inside, laser = farm_under_fire(lg)
    signed(client, lg.alice)
    shot = {"action": "lg_attack_structure", "attacker": uid(lg.a1), "weapon": f"w{laser.pk}", "structure": sid(farm)}

    def penetrated(form):
        return [(i.attrs["value"], "checked" in i.attrs) for i in page(form).find("attack-form").find_all("input")
                if i.attrs.get("name") == "penetrated"]

    assert penetrated(client.get(url(lg, "battle_form"), shot, **HTMX)) == []
    assert penetrated(client.get(url(lg, "battle_form"), {**shot, "hit": "no"}, **HTMX)) == []
    asked = client.get(url(lg, "battle_form"), {**shot, "hit": "yes"}, **HTMX)
    assert penetrated(asked) == [("0", False), ("1", False)]
    assert "Fill in the inputs to see the exact odds" in text_of(asked, "attack-form")
    answered = client.get(url(lg, "battle_form"), {**shot, "hit": "yes", "penetrated": "1", "troops": "known",
                                                   "targets": uid(inside)}, **HTMX)
    assert "Bravo inside is hit" in text_of(answered, "odds")

    before = state(lg)
    refused = client.post(url(lg, "battle_resolve"), {**shot, "hit": "yes", "dice_mode": "server",
                                                      "client_token": str(uuid.uuid4())}, **(HTMX if htmx else {}))
    assert refused.status_code == (200 if htmx else 422)
    assert ("Penetrated? is required after a hit: your rulebook's penetration roll (Rule 16) decides it"
            in text_of(refused, "field-penetrated"))
    assert state(lg) == before and not LogEntry.objects.filter(battle=lg.battle).exists()
    missed = client.post(url(lg, "battle_resolve"), {**shot, "hit": "no", "dice_mode": "server",
                                                     "client_token": str(uuid.uuid4())}, **(HTMX if htmx else {}))
    assert missed.status_code == (200 if htmx else 303)
    assert LogEntry.objects.get(battle=lg.battle).summary.startswith("Alpha one: laser-h missed Farmhouse")


def test_a_rotary_weapon_offers_only_as_many_penetrations_as_it_scores_hits(client, lg):
    """A six-barrel minigun scores 3 hits (LG-68): "Penetrated?" offers No, Yes, 2 and 3 hits, not 6."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, sequence=SequenceState(
        initiative="A", rolled=True).to_dict())
    minigun = factories.weapon("lg", "minigun-test", weapon_type="bullet", rof_code="R", barrels=6)
    gunner = lg.unit("A", "Gunner", weapons=[minigun])
    farm = lg.structure("Farmhouse", floors=1)
    signed(client, lg.alice)
    form = page(client.get(url(lg, "battle_form"), {"action": "lg_attack_structure", "attacker": uid(gunner),
                                                    "weapon": f"w{minigun.pk}", "structure": f"s{farm.pk}",
                                                    "hit": "yes"}, **HTMX))
    offered = [i.attrs["value"] for i in form.find("attack-form").find_all("input")
               if i.attrs.get("name") == "penetrated"]
    assert offered == ["0", "1", "2", "3"]
    # Counted, one is "1 hit": beside "2 hits" and "3 hits" a "Yes" read as "all of them penetrated".
    labels = [label.text().strip() for label in form.find("id_penetrated").find_all("label")]
    assert labels == ["No", "1 hit", "2 hits", "3 hits"]


def test_a_player_cannot_undo_an_initiative_roll_to_roll_it_again(client, lg):
    """Undone, the roll could be made again until it suits: only an organiser may undo it."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, upkeep_turn=1)
    signed(client, lg.alice)
    client.post(url(lg, "battle_turn"), {"action": "lg_initiative", "client_token": str(uuid.uuid4())}, **HTMX)
    entry = LogEntry.objects.get(battle=lg.battle, action="lg_initiative")
    turns = page(client.get(url(lg, "battle"))).find("turns")
    assert not [f for f in turns.find_all("form") if "undo-form" in f.attrs.get("class", "")]
    assert f"Only an organiser may undo #{entry.seq}: undone, the roll could be made again" in turns.text()
    answer = client.post(url(lg, "battle_undo"), {}, **HTMX)
    assert f"Only an organiser may undo #{entry.seq}" in text_of(answer, "turns")
    assert not LogEntry.objects.get(pk=entry.pk).undone
    signed(client, lg.organiser)
    client.post(url(lg, "battle_undo"), {}, **HTMX)
    assert LogEntry.objects.get(pk=entry.pk).undone


def test_no_pass_while_morale_checks_are_owed(client, lg):
    seq = SequenceState(initiative="A", rolled=True, pending_morale=(uid(lg.a1),))
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=seq.to_dict())
    signed(client, lg.alice)
    response = client.get(url(lg, "battle"))
    button = next(b for b in page(response).find("turns").find_all("button") if b.attrs.get("data-action") == "lg_pass")
    assert "disabled" in button.attrs
    assert "Side A may not pass: Alpha one must check morale first" in text_of(response, "turns")
    end = next(b for b in page(response).find("turns").find_all("button") if b.attrs.get("data-action") == "end_turn")
    assert "disabled" in end.attrs
    assert "The turn cannot end while morale checks are owed (Alpha one)" in text_of(response, "turns")
    response = client.post(url(lg, "battle_turn"), {"action": "lg_pass"}, **HTMX)
    assert "may not pass" in text_of(response, "turns")
    assert not LogEntry.objects.filter(battle=lg.battle).exists()


def test_a_morale_check_owed_by_a_piece_that_cannot_be_activated_says_how_to_record_it(client, lg):
    """The check is made when the piece is activated (LG-36), but a piece that has had its initiative, or
    that a blast incapacitated, cannot be: its side could neither pass nor end the turn, and the button
    only said "must check morale first", with the piece missing from "Piece to activate"."""
    Unit.objects.filter(pk=lg.a2.pk).update(incapacitated=True)
    seq = SequenceState(initiative="A", rolled=True, activated=(uid(lg.a1),),
                        pending_morale=(uid(lg.a1), uid(lg.a2)))
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=seq.to_dict())
    signed(client, lg.alice)
    reason = page(client.get(url(lg, "battle"))).find("why-lg_pass").text()
    assert reason == ("Side A may not pass: Alpha one, Alpha two must check morale first. Alpha one has had its "
                      "initiative and Alpha two was incapacitated by a blast: record their checks with "
                      "“Mark a morale check owed or made” (Owes a morale check? No)")
    # One that may still be activated makes its check then: nothing more to say.
    seq = SequenceState(initiative="A", rolled=True, pending_morale=(uid(lg.a1),))
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=seq.to_dict())
    reason = page(client.get(url(lg, "battle"))).find("why-lg_pass").text()
    assert reason == "Side A may not pass: Alpha one must check morale first"


def test_an_uncontrolled_event_says_whose_forces_it_affects_and_for_how_long(client, lg):
    """The turn panel read "Friendly artillery support: side A, benefits side A, until turn 5": the first
    side was whose forces the event affects (seed 002, 2c), which it did not say."""
    from apps.rules.state import EventRecord
    events = (EventRecord(1, "Friendly artillery support", "A", "A", 4, 5),
              EventRecord(7, "Enemy sniper", "B", "A", 4, 4))
    seq = SequenceState(initiative="A", rolled=True, events=events)
    Battle.objects.filter(pk=lg.battle.pk).update(turn=4, upkeep_turn=4, sequence=seq.to_dict())
    signed(client, lg.alice)
    turns = text_of(client.get(url(lg, "battle")), "turns")
    assert "Friendly artillery support: affects side A's forces, benefits side A; this turn and turn 5" in turns
    assert "Enemy sniper: affects side B's forces, benefits side A; this turn" in turns


def test_an_uncontrolled_event_says_what_it_does_in_the_charts_words(client, lg):
    """The panel named the event ("Enemy sniper") and nothing more: what it does (whose infantryman,
    what penetration) was in the rulebook's chart only. Each event now carries the seed 002 chart's own
    words, under "What it does", with who "the player" is."""
    from apps.rules.state import EventRecord
    seq = SequenceState(initiative="A", rolled=True, events=(EventRecord(7, "Enemy sniper", "B", "A", 1, 1),))
    Battle.objects.filter(pk=lg.battle.pk).update(upkeep_turn=1, sequence=seq.to_dict())
    signed(client, lg.bob)
    effect = page(client.get(url(lg, "battle"))).find("turns").find_all("details", cls="event-effect")
    assert len(effect) == 1 and effect[0].find_all("summary")[0].text().strip() == "What it does"
    assert effect[0].find_all("p")[0].text().strip() == (
        "A concealed sniper hits an infantryman of the opposing player's choice. The round has a penetration "
        "factor of 7. (“The player” is side B.)")


def test_the_move_form_says_a_laser_grenadiers_piece_is_activated_first(client, lg):
    """A move records where a piece went and uses no action; in LaserGrenadiers a piece that only moves
    still takes its side's initiative (seed 002, 2a–e), with "Activate (move only)". A player who recorded
    a move was left holding the initiative, with the piece still free to fire later in the turn."""
    signed(client, lg.alice)
    form = text_of(client.get(url(lg, "battle_form"), {"action": "move"}, **HTMX), "attack-form")
    assert ("LaserGrenadiers: a piece that only moves takes its initiative with “Activate (move only)”, "
            "then its move is recorded here") in form


def text_of_field(form):
    return form.find("id_attacker_helptext").text().strip()


def test_the_lg_attack_form_offers_no_attacker_that_cannot_fire_from_where_it_stands(client, lg):
    """A piece in a bunker (no firing slits, seed 000) or in ruins (A-LG-3) is refused as the attacker:
    the list offered them anyway, to be refused on Resolve. Chosen before, it stays, saying why."""
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=SequenceState(initiative="A", rolled=True).to_dict(),
                                                  upkeep_turn=1)
    rifle = factories.weapon("lg", "rifle-test", weapon_type="laser_small_arms", rof_code="P")
    concrete = ("concrete_reinforced", 9, "concrete")
    bunker = lg.structure("Bunker", kind="bunker", floors=1, wall=concrete)
    ruin = lg.structure("Ruin", floors=1, collapsed=True, destroyed=True)
    sentry = lg.unit("A", "Sentry", floor=bunker.floors.get(), weapons=[rifle], models=1)
    squatter = lg.unit("A", "Squatter", floor=ruin.floors.get(), weapons=[rifle], models=1)
    free = lg.unit("A", "Rifleman", weapons=[rifle], models=1)
    signed(client, lg.alice)

    def offered(**chosen):
        form = page(client.get(url(lg, "battle_form"), {"action": "lg_attack_structure", **chosen}, **HTMX))
        return [o.text() for o in form.find("id_attacker").find_all("option") if o.attrs.get("value")]

    assert [o.split(" (")[0] for o in offered()] == ["Rifleman"]
    # Left out, they are named: with no other piece the list would be empty, with nothing to say why.
    form = page(client.get(url(lg, "battle_form"), {"action": "lg_attack_structure"}, **HTMX))
    assert text_of_field(form) == ("Not offered: Sentry (in a bunker: no firing slits), Squatter (in ruins: must "
                                   "leave first)")
    assert "— in a bunker: no firing slits" in offered(attacker=uid(sentry))[-1]
    assert "— in ruins: must leave first" in offered(attacker=uid(squatter))[-1]
    assert uid(free)


def test_detect_offers_no_piece_that_could_not_have_fired(client, lg):
    """"Detect a concealed piece that fired" offered the pieces in a bunker without firing slits (seed 000:
    nobody inside fires out), which the attack form never offers as attackers. Left out and named; one
    chosen anyway is refused beside the field and nothing is logged."""
    rifle = factories.weapon("lg", "rifle-test", weapon_type="laser_small_arms", rof_code="P")
    concrete = ("concrete_reinforced", 9, "concrete")
    bunker = lg.structure("Bunker", kind="bunker", floors=1, wall=concrete)
    sentry = lg.unit("B", "Sentry", floor=bunker.floors.get(), weapons=[rifle], models=1)
    signed(client, lg.alice)
    form = page(client.get(url(lg, "battle_form"), {"action": "lg_detect"}, **HTMX))
    offered = [o.text().split(" (")[0] for o in form.find("id_target").find_all("option") if o.attrs.get("value")]
    assert offered == ["Bravo one"]
    assert "Not offered: Sentry (in a bunker: no firing slits)" in form.find("id_target_helptext").text()
    answer = client.post(url(lg, "battle_resolve"), {"action": "lg_detect", "target": uid(sentry),
                                                     "weapon": f"w{rifle.pk}", "base": "3",
                                                     "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Sentry is in Bunker, a bunker: it has no firing slits or embrasures, so pieces inside cannot fire " \
           "out (seed 000): it is not the piece that fired" in text_of(answer, "field-target")
    assert not LogEntry.objects.filter(battle=lg.battle, action="lg_detect").exists()


def test_one_phone_cannot_end_the_turn_while_the_other_side_may_still_act(client, lg):
    """LG-39: the turn ends when every piece has moved or fired, or after both sides pass twice in a row.
    "End turn" was open to either player at any moment: alice ended turn 1 before bob had moved a piece."""
    seq = SequenceState(initiative="B", rolled=True, activated=(uid(lg.a1), uid(lg.a2)))
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=seq.to_dict(), status=BattleStatus.IN_PROGRESS,
                                                  upkeep_turn=1)
    signed(client, lg.alice)
    response = client.get(url(lg, "battle"))
    end = next(b for b in page(response).find("turns").find_all("button") if b.attrs.get("data-action") == "end_turn")
    assert "disabled" in end.attrs
    assert "The turn goes on while pieces may still act (Bravo one)" in text_of(response, "turns")
    answer = client.post(url(lg, "battle_turn"), {"action": "end_turn", "turn": "1",
                                                  "client_token": str(uuid.uuid4())}, **HTMX)
    assert "both sides pass twice in a row" in text_of(answer, "turns")
    battle = Battle.objects.get(pk=lg.battle.pk)
    assert battle.turn == 1 and battle.sequence["activated"] == [uid(lg.a1), uid(lg.a2)]
    assert not LogEntry.objects.filter(battle=lg.battle).exists()
    # Bravo one has its initiative: now the turn may end.
    signed(client, lg.bob)
    client.post(url(lg, "battle_turn"), {"action": "lg_activate", "unit": uid(lg.b1),
                                         "client_token": str(uuid.uuid4())}, **HTMX)
    client.post(url(lg, "battle_turn"), {"action": "end_turn", "turn": "1", "client_token": str(uuid.uuid4())}, **HTMX)
    assert Battle.objects.get(pk=lg.battle.pk).turn == 2


def test_a_piece_a_blast_incapacitated_may_not_act_but_still_checks_morale(client, lg):
    """LG-63: offered for its morale check only; an attack or activation with it is refused, unchanged."""
    laser = factories.weapon("lg", "laser-t", weapon_type="laser", attack_factor=4, rof_code="S")
    for unit in (lg.a1, lg.a2):  # an attack is offered only to pieces carrying a weapon
        UnitWeapon.objects.create(unit=unit, weapon=laser)
    seq = SequenceState(initiative="A", rolled=True, pending_morale=(uid(lg.a1),))
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=seq.to_dict(), status=BattleStatus.IN_PROGRESS)
    Unit.objects.filter(pk=lg.a1.pk).update(incapacitated=True)
    signed(client, lg.alice)

    def offered(action):
        form = page(client.get(url(lg, "battle_form"), {"action": action}, **HTMX)).find("attack-form")
        field = "unit" if action == "lg_morale" else "attacker"
        select = next(s for s in form.find_all("select") if s.attrs["name"] == field)
        return [o.attrs.get("value") for o in select.find_all("option") if o.attrs.get("value")]

    assert offered("lg_attack_structure") == [uid(lg.a2)]
    assert uid(lg.a1) in offered("lg_morale")
    for action in ("lg_activate", "lg_attack_structure"):
        answer = client.post(url(lg, "battle_resolve"), {"action": action, "unit": uid(lg.a1), "attacker": uid(lg.a1),
                                                         "client_token": str(uuid.uuid4())}, **HTMX)
        assert "Alpha one was incapacitated by a blast: it may not move or fire until the turn ends" in body(answer)
    assert not LogEntry.objects.filter(battle=lg.battle).exists()
    assert Battle.objects.get(pk=lg.battle.pk).sequence["activated"] == []


# ---------------------------------------------------------------------------------- the log

def test_log_loads_more_with_a_keyset(client, w):
    for n in range(120):
        factories_entry(w, n)
    signed(client, w.alice)
    response = client.get(url(w, "battle"))
    ids = [e.attrs["id"] for e in page(response).find("log-list").find_all("li", cls="log-entry")]
    assert ids[0] == "log-120" and ids[-1] == "log-71" and len(ids) == 50
    more = page(response).find("log-more").find_all("a")[0]
    assert more.attrs["hx-get"].startswith(url(w, "battle_log") + "?before=71")
    older = client.get(url(w, "battle_log"), {"before": 71, "turn": 1}, **HTMX)
    ids = re.findall(r'<li id="log-(\d+)" class="log-entry', body(older))
    assert ids[0] == "70" and ids[-1] == "21" and len(ids) == 50
    assert "log-turn" not in body(older)  # same turn as the entry above: no second heading
    last = client.get(url(w, "battle_log"), {"before": 21, "turn": 1}, **HTMX)
    assert 'id="log-more"' not in body(last) and 'id="log-1"' in body(last)
    # Without JavaScript, "load more" is the page with ?before=.
    plain = client.get(url(w, "battle") + "?before=71")
    assert 'id="log-70"' in body(plain) and 'id="log-71"' not in body(plain)


def factories_entry(w, n):
    from apps.battles.log import append_entry

    append_entry(w.battle, action="note", summary=f"Note {n}", turn=1,
                 dice=[{"purpose": "test", "sides": 6, "count": 1, "faces": [n % 6 + 1], "value": n % 6 + 1,
                        "source": "server", "target": ""}])


# ---------------------------------------------------------------------------------- access

def every_url(w):
    s = sid(w.house)
    return [("get", url(w, "battle"), {}), ("get", url(w, "battle_form"), {"action": "ba_he"}),
            ("get", url(w, "battle_card", s), {}), ("get", url(w, "battle_log"), {"before": 5}),
            ("post", url(w, "battle_resolve"), he_attack(w)), ("post", url(w, "battle_undo"), {}),
            ("post", url(w, "battle_turn"), {"action": "end_turn"})]


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_another_club_gets_404_everywhere_and_nothing_changes(client, w, htmx):
    signed(client, w.olga)
    before = state(w)
    for method, address, data in every_url(w):
        response = getattr(client, method)(address, data, **(HTMX if htmx else {}))
        assert response.status_code == 404, (method, address, response.status_code)
    assert state(w) == before


def test_anonymous_is_sent_to_sign_in(client, w):
    for method, address, data in every_url(w):
        response = getattr(client, method)(address, data)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], address


def test_a_card_of_another_battles_structure_is_not_found(client, w):
    signed(client, w.alice)
    assert client.get(url(w, "battle_card", f"s{w.other_house.pk}"), **HTMX).status_code == 404
    assert client.get(url(w, "battle_card", "nonsense"), **HTMX).status_code == 404


def test_writes_need_post(client, w):
    """A GET writes nothing: it is the address of a page a form without JavaScript answered, opened
    again from history, and goes back to the battle page rather than to a bare 405."""
    signed(client, w.alice)
    before = state(w)
    for name in ("battle_resolve", "battle_undo", "battle_turn"):
        response = client.get(url(w, name), he_attack(w, dice_0="1", dice_1="1"))
        assert response.status_code == 303 and response["Location"] == url(w, "battle")
    assert state(w) == before and not LogEntry.objects.filter(battle=w.battle).exists()
    # Not signed in: the sign-in page first, as for every battle page.
    client.logout()
    assert "/accounts/login/" in client.get(url(w, "battle_resolve"))["Location"]


def test_htmx_posts_carry_the_csrf_token_in_a_header(w):
    client = Client(enforce_csrf_checks=True)
    client.force_login(w.alice)
    html = body(client.get(url(w, "battle")))
    token = re.search(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', html).group(1)
    data = he_attack(w, dice_0="1", dice_1="2")
    assert client.post(url(w, "battle_resolve"), data, **HTMX).status_code == 403
    assert not LogEntry.objects.filter(battle=w.battle).exists()
    response = client.post(url(w, "battle_resolve"), data, HTTP_X_CSRFTOKEN=token, **HTMX)
    assert response.status_code == 200
    assert LogEntry.objects.filter(battle=w.battle, action="ba_he").count() == 1
    response = client.post(url(w, "battle_turn"), {"action": "upkeep"}, HTTP_X_CSRFTOKEN=token, **HTMX)
    assert response.status_code == 200


def test_players_act_only_for_their_own_side(client, w):
    for unit in (w.squad, w.pioneers):  # HE is offered only to units that carry it
        UnitWeapon.objects.create(unit=unit, weapon=w.he)
    signed(client, w.bob)
    response = client.get(url(w, "battle"))
    attackers = [o.attrs["value"] for o in page(response).find("id_attacker").find_all("option")]
    assert attackers == ["", uid(w.squad), uid(w.pioneers)]
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="6", dice_1="6"), **HTMX)
    assert "Field gun is side A's" in text_of(response, "field-attacker")
    assert state(w) == before


def test_other_club_member_in_a_club_of_its_own(client, w):
    """Ids reveal nothing: a battle of a club the user does not belong to is simply not there."""
    lone = Club.objects.create(name="Lone", slug="lone")
    account = factories.User.objects.create_user("lone-user", password="x")
    Membership.objects.create(club=lone, user=account, role=Role.ORGANISER)
    signed(client, account)
    assert client.get(url(w, "battle")).status_code == 404


def test_without_javascript_update_the_form_shows_the_dice_and_odds(client, w):
    """"Update the form" answers with the page at its own address, opened at the form, the choices in
    the address: answered at /resolve/, the page opened at its top (screens above the form on a
    phone), and a reload or the back button asked to post the form again."""
    signed(client, w.alice)
    before = state(w)
    data = he_attack(w, preview="1", dice_0="4", floor="")
    response = client.post(url(w, "battle_resolve"), data)
    assert response.status_code == 303
    location = urlsplit(response["Location"])
    assert location.path == url(w, "battle") and location.fragment == "attack-panel"
    query = parse_qs(location.query)
    assert query == {k: [v] for k, v in data.items() if v and k not in ("client_token", "preview")}
    assert state(w) == before
    response = client.get(response["Location"])
    assert response.status_code == 200
    html = body(response)
    assert '<input type="text" name="dice_0" id="id_dice_0" value="4"' in html
    assert '<label for="id_dice_0">HE hits (2D6) on floor 1, first d6</label>' in html
    assert "Brick house collapses 16.7%" in text_of(response, "odds")
    assert "Not resolved" not in html


def test_the_form_partial_is_only_for_players(client, w):
    designer = factories.User.objects.create_user("dora-form", password="x")
    Membership.objects.create(club=w.club, user=designer, role=Role.DESIGNER)
    signed(client, designer)
    assert client.get(url(w, "battle_form"), {"action": "ba_he"}, **HTMX).status_code == 403
    before = state(w)
    assert client.post(url(w, "battle_resolve"), he_attack(w, dice_0="1", dice_1="1"), **HTMX).status_code == 403
    assert state(w) == before


@pytest.mark.parametrize("ruleset", ["ba", "lg", "dh"])
def test_every_action_of_every_ruleset_renders_its_form(client, db, ruleset):
    from apps import rules
    from apps.battles.forms import form_actions

    w = factories.make_world(ruleset=ruleset, club_name=f"Club {ruleset}")
    house = w.structure("House", floors=2)
    w.unit("A", "Alpha", x=5, y=5)
    bravo = w.unit("B", "Bravo", floor=house.floors.get(level=0))
    signed(client, w.organiser)
    actions = form_actions(ruleset)
    assert actions
    for spec in actions:
        for mode in ("server", "player"):
            # "caught": a field offering only the pieces ticked there (`Field.among`) has them to offer.
            data = {"action": spec.key, "structure": f"s{house.pk}", "dice_mode": mode, "hit": "yes",
                    "caught": uid(bravo)}
            response = client.get(url(w, "battle_form"), data, **HTMX)
            assert response.status_code == 200, (spec.key, mode)
            html = body(response)
            for f in spec.fields:
                # A house has no heavy weapon standing: which one a 7–8 destroys is not asked of it.
                asked = not (f.name == "heaviest" and ruleset == "dh")
                assert (f'name="{f.name}' in html) == asked, (spec.key, f.name)
        assert rules.ACTIONS[spec.key].ruleset in (ruleset, "any")


def test_a_bolt_action_bunker_is_held_by_units_not_by_its_sheets_crew(client, w):
    """Seed 001 'Bunkers': a bunker follows the rules for buildings, held by the units inside it; its
    sheet gives it its kind and shape, not a crew (a Disposable Heroes mechanic). Even with crew values
    left in its row (as the demo's loghouse had, and an undo of an entry logged before the migration
    would restore), the map, the card and the rules see none: side B walks into the empty bunker."""
    from apps.structures.models import BunkerSheet
    sheet = BunkerSheet.objects.create(**next(s for s in DH_SHEETS if s["slug"] == "soviet-at-hmg-loghouse"))
    bunker = w.structure("Loghouse", floors=1, kind="bunker", sheet=sheet, crew_side="A", crew_men=12, x=50, y=30)
    signed(client, w.bob)
    battle = page(client.get(url(w, "battle")))
    piece = battle.find(f"map-s{bunker.pk}")
    assert not [t for t in piece.find_all("text") if "map-crew" in t.attrs.get("class", "")]
    assert "crew" not in piece.text().lower()
    assert "crew" not in text_of(client.get(url(w, "battle")), f"structure-{bunker.pk}").lower()
    card = client.get(url(w, "battle_card", sid(bunker)), **HTMX)
    assert "Loghouse" in text_of(card, "card") and "crew" not in text_of(card, "card").lower()
    full = client.get(reverse("structure", args=[bunker.pk]))
    assert "No crew: units hold it" in body(full) and "12/12" not in body(full)

    response = client.post(url(w, "battle_resolve"), {
        "action": "move", "unit": uid(w.pioneers), "structure": sid(bunker), "floor": "0",
        "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Resolved #1: Pioneers moves into Loghouse, ground floor" in text_of(response, "attack-form")
    assert Unit.objects.get(pk=w.pioneers.pk).floor == bunker.floors.get()


def test_players_record_a_move_and_every_panel_follows(client, w):
    """The rifles go into the brick house: the floor is theirs on the map, the card and the armies
    panel; a spot off the table is refused beside its field; undo puts them back where they stood."""
    signed(client, w.alice)
    move = {"action": "move", "unit": uid(w.rifles), "structure": sid(w.house), "floor": "0",
            "client_token": str(uuid.uuid4()), "card": sid(w.house), "m": str(w.battle.map_version),
            "after": "0"}
    form = page(client.get(url(w, "battle_form"), {"action": "move"}, **HTMX)).find("attack-form")
    assert form.find("dice") is None and form.find("odds") is None  # it rolls nothing
    assert [b.text() for b in form.find_all("button") if "resolve" in b.attrs.get("class", "")] == ["Record"]
    response = client.post(url(w, "battle_resolve"), move, **HTMX)
    assert "Resolved #1: Rifles moves into Brick house, ground floor" in text_of(response, "attack-form")
    rifles = Unit.objects.get(pk=w.rifles.pk)
    assert rifles.floor == w.floors[0] and rifles.x is None and not rifles.acted
    assert "Rifles" in text_of(response, "card") and "in Brick house, ground floor" in text_of(response, f"unit-{w.rifles.pk}")
    assert page(response).find(f"map-{sid(w.house)}").find_all("g", cls="map-badge")

    refused = client.post(url(w, "battle_resolve"), {**move, "structure": "", "floor": "", "x": "500", "y": "3",
                                                     "client_token": str(uuid.uuid4())}, **HTMX)
    assert "500″ is off the 72″ table" in text_of(refused, "field-x")
    assert Unit.objects.get(pk=w.rifles.pk).floor == w.floors[0]

    client.post(url(w, "battle_undo"), {}, **HTMX)
    rifles = Unit.objects.get(pk=w.rifles.pk)
    assert rifles.floor is None and (rifles.x, rifles.y) == (10, 5)


def test_without_javascript_a_tap_on_the_map_keeps_the_choices_made(client, w):
    """A tap follows the piece's plain link: it carries the action, unit and weapon already chosen, not
    the aim (the tap chooses that) nor one-time tokens."""
    UnitWeapon.objects.create(unit=w.gun, weapon=w.flamer)  # a flamethrower is offered to units carrying one
    signed(client, w.alice)
    chosen = {"action": "ba_flamethrower", "attacker": uid(w.gun), "weapon": f"w{w.flamer.pk}", "structure": "s999",
              "client_token": str(uuid.uuid4()), "dice_0": "4"}
    html = page(client.get(url(w, "battle"), chosen))
    href = html.find(f"map-{sid(w.house)}").attrs["href"]
    query = parse_qs(urlsplit(href).query)
    assert {k: query[k] for k in ("action", "attacker", "weapon", "target")} == {
        "action": ["ba_flamethrower"], "attacker": [uid(w.gun)], "weapon": [f"w{w.flamer.pk}"], "target": [sid(w.house)]}
    assert not {"structure", "client_token", "dice_0"} & set(query)
    tapped = page(client.get(href))

    def chosen_in(select_id):
        return [o.attrs["value"] for o in tapped.find(select_id).find_all("option") if "selected" in o.attrs]

    assert chosen_in("id_action") == ["ba_flamethrower"] and chosen_in("id_structure") == [sid(w.house)]
    assert chosen_in("id_attacker") == [uid(w.gun)]


def test_without_javascript_a_refused_form_opens_at_the_field_at_fault(client, w):
    """The page comes back whole: the browser scrolls to the autofocus field, the one the message is beside."""
    signed(client, w.alice)
    response = client.post(url(w, "battle_resolve"), he_attack(w, attacker=""))
    assert response.status_code == 422 and "Choose the unit that attacks" in text_of(response, "field-attacker")
    assert "autofocus" in page(response).find("id_attacker").attrs
    assert [n.attrs["id"] for n in page(response).iter() if "autofocus" in n.attrs] == ["id_attacker"]


def test_without_javascript_end_turn_with_our_own_dice_left_empty_still_asks_for_them(client, lg):
    """The page's confirmation keeps "our own dice" even with nothing typed: the upkeep then names the
    die it needs instead of the server rolling it."""
    # Every piece has had its initiative: the turn may end (LG-39).
    everyone = SequenceState(initiative="A", rolled=True, activated=(uid(lg.a1), uid(lg.a2), uid(lg.b1)))
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, collapse_check=True,
                                                  damage_variant=3, upkeep_turn=1, sequence=everyone.to_dict())
    lg.structure("House", floors=1, damage_max=10, damage_taken=5)
    signed(client, lg.organiser)
    asked = client.post(url(lg, "battle_turn"), {"action": "end_turn", "dice_mode": "player", "dice": "",
                                                 "client_token": str(uuid.uuid4())})
    question = page(client.get(asked["Location"])).find("turns")
    form = next(f for f in question.find_all("form") if "confirm-form" in f.attrs.get("class", ""))
    sent = {i.attrs["name"]: i.attrs.get("value", "") for i in form.find_all("input")}
    assert sent["dice_mode"] == "player" and sent["dice"] == "" and "none typed yet" in form.text()
    client.post(url(lg, "battle_turn"), sent)
    assert not LogEntry.objects.filter(battle=lg.battle, action="upkeep").exists()  # no die typed: not rolled
    assert Battle.objects.get(pk=lg.battle.pk).turn == 1


def test_moves_offer_units_that_acted_and_go_where_they_are_told(client, w):
    """A move uses no action: the gun that fired may still be moved, into a structure chosen with no spot
    typed (test_a_spot_typed_for_a_move_wins_over_the_structure_tapped: a spot typed goes first)."""
    signed(client, w.alice)
    client.post(url(w, "battle_resolve"), he_attack(w, dice_0="1", dice_1="1"), **HTMX)
    assert Unit.objects.get(pk=w.gun.pk).acted
    form = page(client.get(url(w, "battle_form"), {"action": "move"}, **HTMX))
    offered = [o.attrs["value"] for o in form.find("id_unit").find_all("option")]
    assert uid(w.gun) in offered
    Unit.objects.filter(pk=w.gun.pk).update(kind="infantry")  # BA-1: only infantry enter buildings
    response = client.post(url(w, "battle_resolve"), {
        "action": "move", "unit": uid(w.gun), "structure": sid(w.house), "floor": "0", "x": "", "y": "",
        "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Field gun moves into Brick house, ground floor" in text_of(response, "attack-form")


@pytest.mark.parametrize("kind", ["vehicle", "infantry"])
def test_a_spot_typed_for_a_move_wins_over_the_structure_tapped(client, w, kind):
    """Exploratory test at 390x844: a tap on a structure puts it in the move's "Into" field, and a vehicle moved
    to a typed x and y was refused ("is a vehicle: it does not go into structures") until the player cleared
    "Into", a field they never filled in. Both numbers typed are where the unit goes."""
    tank = w.unit("A", "Panzer IV", kind=kind, x=5, y=5)  # (infantry too: whatever the unit)
    signed(client, w.alice)
    form = page(client.get(url(w, "battle_card", sid(w.house)), {"action": "move", "unit": uid(tank)}, **HTMX))
    assert [o.attrs["value"] for o in form.find("id_structure").find_all("option") if "selected" in o.attrs] == \
        [sid(w.house)]
    response = client.post(url(w, "battle_resolve"), {
        "action": "move", "unit": uid(tank), "structure": sid(w.house), "floor": "", "x": "12", "y": "8",
        "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Panzer IV moves to 12″, 8″" in text_of(response, "attack-form")
    tank.refresh_from_db()
    assert (tank.x, tank.y, tank.floor_id) == (12, 8, None)
    # One number alone is no spot: "Into" stands.
    response = client.post(url(w, "battle_resolve"), {
        "action": "move", "unit": uid(tank), "structure": sid(w.house), "floor": "0", "x": "20", "y": "",
        "client_token": str(uuid.uuid4())}, **HTMX)
    tank.refresh_from_db()
    if kind == "vehicle":
        assert "is a vehicle: it does not go into structures" in text_of(response, "attack-form")
        assert (tank.x, tank.y, tank.floor_id) == (12, 8, None)
    else:
        assert tank.floor_id == w.floors[0].pk


@pytest.mark.parametrize("again", [False, True], ids=["new-structure", "same-structure"])
def test_a_tap_on_a_structure_clears_a_spot_typed_for_the_move(client, w, again):
    """A typed spot goes before "Into" (above), so a spot typed earlier must not outlast a later tap: the
    unit would go to the old spot, not into the structure just tapped. The tap is the newer choice, on the
    structure already in "Into" too."""
    signed(client, w.alice)
    typed = {"action": "move", "unit": uid(w.gun), "x": "12", "y": "8"}
    if again:
        typed["structure"] = sid(w.house)
    form = page(client.get(url(w, "battle_card", sid(w.house)), typed, **HTMX))
    assert [o.attrs["value"] for o in form.find("id_structure").find_all("option") if "selected" in o.attrs] == \
        [sid(w.house)]
    assert form.find("id_x").attrs.get("value", "") == "" and form.find("id_y").attrs.get("value", "") == ""
    # Without JavaScript the tap is the map's link, which carries the form's choices: not the spot.
    preview = client.post(url(w, "battle_resolve"), {**typed, "preview": "1"}, follow=True)
    links = [a.attrs["href"] for a in page(preview).find_all("a", cls="target-link")]
    assert links and all("x=" not in href and "y=" not in href and "unit=" in href for href in links)


def test_a_piece_that_was_activated_still_makes_its_morale_check(client, lg):
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, sequence={
        "sides": ["A", "B"], "initiative": "B", "rolled": True, "pass_streak": 0, "activated": [uid(lg.a1)],
        "pending_morale": [uid(lg.a1)], "events": []})
    signed(client, lg.alice)
    form = page(client.get(url(lg, "battle_form"), {"action": "lg_morale"}, **HTMX))
    assert uid(lg.a1) in [o.attrs["value"] for o in form.find("id_unit").find_all("option")]


def test_players_of_a_battle_being_set_up_are_told_who_starts_it(client, w):
    Battle.objects.filter(pk=w.battle.pk).update(status=BattleStatus.SETUP)
    turns = text_of(signed(client, w.alice).get(url(w, "battle")), "turns")
    assert 'an organiser of the club starts it here with "Start battle"' in turns and "Start battle" not in \
        [b.text() for b in page(client.get(url(w, "battle"))).find("turns").find_all("button")]


def test_units_in_the_open_carry_their_initials_on_the_map(client, w):
    """A phone shows no hover title: the dot says whose it is; a screen reader reads its name."""
    html = body(signed(client, w.alice).get(url(w, "battle")))
    assert re.search(r'<circle class="map-unit side-A" cx="30" cy="5" r="1" role="img" aria-label="Field gun \(side A\)">'
                     r'<title>Field gun \(side A\)</title></circle>'
                     r'<text class="map-unit-initials" x="30" y="5" aria-hidden="true">FG</text>', html)


def test_a_pinned_or_routed_unit_says_so_on_the_map(client, db):
    """Disposable Heroes: a crew's section routed out of its bunker (3 pins, "Rout 9\"") stood on the map
    as a plain dot, while its bunker beside it said R: the player moving it had to open the armies panel
    to know it must rout on. A unit's dot now carries its pins ("1 pin", "2 pins") or "routed", as a crew's
    bunker does, and says it to a screen reader; a unit with none is drawn as before. In words: the P1 and R
    they once were read like initials, and the PaK 40's initials "P4" on its dot like four pins."""
    dh = factories.make_world(ruleset="dh", club_name="Heroes club")
    dh.unit("A", "Guards squad", x=10, y=5)
    dh.unit("A", "Pit crew 1", x=20, y=5, pins=3)
    dh.unit("B", "Pioneers", x=30, y=40, pins=1)
    dh.unit("B", "PaK 40", x=40, y=40, pins=2)
    html = body(signed(client, dh.alice).get(url(dh, "battle")))
    assert re.search(r'<circle class="map-unit side-A" cx="10" cy="5" r="1" role="img" aria-label="Guards squad '
                     r'\(side A\)"><title>Guards squad \(side A\)</title></circle><text class="map-unit-initials" '
                     r'x="10" y="5" aria-hidden="true">GS</text><circle', html)
    assert re.search(r'<circle class="map-unit side-A is-routed" cx="20" cy="5" r="1" role="img" aria-label="Pit '
                     r'crew 1 \(side A, routed\)"><title>Pit crew 1 \(side A, routed\)</title></circle>'
                     r'<text class="map-unit-initials" x="20" y="5" aria-hidden="true">PC</text>'
                     r'<text class="map-unit-state" x="20" y="6.8" aria-hidden="true">routed</text>', html)
    assert re.search(r'<circle class="map-unit side-B is-pinned" cx="30" cy="40" r="1" role="img" '
                     r'aria-label="Pioneers \(side B, pinned 1\)">.*?<text class="map-unit-state" x="30" y="41.8" '
                     r'aria-hidden="true">1 pin</text>', html)
    assert re.search(r'aria-hidden="true">P4</text><text class="map-unit-state" x="40" y="41.8" aria-hidden="true">'
                     r'2 pins</text>', html)
    # No mark under a dot reads as initials do: a letter and a figure.
    assert not re.search(r'class="map-unit-state"[^>]*>[A-Z]', html)


def test_the_address_keeps_a_result_while_a_damage_roll_is_owed(client, w):
    signed(client, w.alice)
    response = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="1", dice_1="2"), **HTMX)
    entry = LogEntry.objects.get(battle=w.battle, action="ba_he")
    assert response["HX-Replace-Url"] == url(w, "battle") + f"?target={sid(w.house)}&action=ba_he&dice_mode=player" \
                                                            f"&result={entry.seq}"
    reopened = page(client.get(response["HX-Replace-Url"])).find("attack-form")
    assert [a.text() for a in reopened.find_all("a", cls="button-link")][0].startswith("Roll damage: 3 hits")
    # A move owes nothing: the address drops the result.
    moved = client.post(url(w, "battle_resolve"), {"action": "move", "unit": uid(w.rifles), "x": "11", "y": "5",
                                                   "client_token": str(uuid.uuid4())}, **HTMX)
    assert moved["HX-Replace-Url"] == url(w, "battle") + "?action=move"


def chosen(form, name):
    """The value a reopened form shows for `name`: the selected option, the checked radio, or the input's."""
    for node in form.iter():
        if node.attrs.get("name") != name:
            continue
        if node.tag == "select":
            return next((o.attrs["value"] for o in node.find_all("option") if "selected" in o.attrs), None)
        if node.attrs.get("type") == "radio":
            if "checked" in node.attrs:
                return node.attrs["value"]
            continue
        return node.attrs.get("value")
    return None


def test_a_reload_opens_the_card_and_the_choices_the_phone_showed(client, w):
    """With JavaScript the taps and form changes are answered in place: each answer writes the page's
    address (HX-Replace-Url), so a reload, or a phone whose browser reloads it after a sleep, opens the
    same card, action, choices and "I rolled" rather than a blank form."""
    signed(client, w.alice)
    tapped = client.get(url(w, "battle_card", sid(w.house)), {"action": "ba_he", "dice_mode": "player"}, **HTMX)
    address = tapped["HX-Replace-Url"]
    assert urlsplit(address).path == url(w, "battle")
    reopened = page(client.get(address))
    assert text_of(body(client.get(address)), "card-title") == "Brick house"
    form = reopened.find("attack-form")
    assert (chosen(form, "action"), chosen(form, "structure"), chosen(form, "dice_mode")) == \
        ("ba_he", sid(w.house), "player")
    # The tap aimed the form at the one enemy inside: kept too.
    assert chosen(form, "target") == uid(w.squad)

    # Changing the form (the attacking unit, a die typed) writes the address again; what the page's
    # script adds to the request (which input changed) and the one-time token stay out of it.
    changed = client.get(url(w, "battle_form"), {"action": "ba_he", "dice_mode": "player", "structure": sid(w.house),
                                                 "attacker": uid(w.gun), "weapon": f"w{w.he.pk}", "target": uid(w.squad),
                                                 "hit": "yes", "went_down": "no", "pins": "1", "dice_0": "4",
                                                 "client_token": str(uuid.uuid4()), "changed": "dice_0"}, **HTMX)
    query = parse_qs(urlsplit(changed["HX-Replace-Url"]).query)
    assert "changed" not in query and "client_token" not in query and query["dice_0"] == ["4"]
    form = page(client.get(changed["HX-Replace-Url"])).find("attack-form")
    assert (chosen(form, "attacker"), chosen(form, "weapon"), chosen(form, "dice_0")) == \
        (uid(w.gun), f"w{w.he.pk}", "4")


def test_a_card_tapped_by_someone_who_only_watches_reopens_on_reload(client, w):
    from django.contrib.auth.models import User

    watcher = User.objects.create_user("wendy", password="x")  # in the club, commanding no side here
    Membership.objects.create(club=w.battle.club, user=watcher, role=Role.PLAYER)
    signed(client, watcher)
    tapped = client.get(url(w, "battle_card", sid(w.house)), **HTMX)
    assert tapped["HX-Replace-Url"] == url(w, "battle") + f"?target={sid(w.house)}"
    assert text_of(body(client.get(tapped["HX-Replace-Url"])), "card-title") == "Brick house"


def test_detection_offers_the_other_sides_pieces_and_the_weapons_of_the_one_that_fired(client, lg):
    """Detecting a concealed piece that fired: alice (side A) is offered side B's pieces only, and the
    weapons the chosen piece carries (before one is chosen, those side B's pieces carry); naming her own
    piece anyway is refused beside the field."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, sequence=SequenceState(
        initiative="A", rolled=True).to_dict())
    rifle = factories.weapon("lg", "bolt-rifle-t", weapon_type="bolt_rifle", attack_factor=3, rof_code="S")
    factories.weapon("lg", "laser-t", weapon_type="laser", attack_factor=4, rof_code="S")
    UnitWeapon.objects.create(unit=lg.b1, weapon=rifle)
    signed(client, lg.alice)
    form = page(client.get(url(lg, "battle_form"), {"action": "lg_detect", "target": uid(lg.b1)}, **HTMX))
    offered = [o.attrs.get("value") for o in form.find("id_target").find_all("option") if o.attrs.get("value")]
    assert offered == [uid(lg.b1)]
    weapons = [o.attrs.get("value") for o in form.find("id_weapon").find_all("option") if o.attrs.get("value")]
    assert weapons == [f"w{rifle.pk}"]
    # Before the piece is chosen: what side B's pieces carry, not alice's own laser nor the library's.
    laser = factories.weapon("lg", "laser-a", weapon_type="laser", attack_factor=4, rof_code="S")
    UnitWeapon.objects.create(unit=lg.a1, weapon=laser)
    form = page(client.get(url(lg, "battle_form"), {"action": "lg_detect"}, **HTMX))
    weapons = [o.attrs.get("value") for o in form.find("id_weapon").find_all("option") if o.attrs.get("value")]
    assert weapons == [f"w{rifle.pk}"]
    refused = client.post(url(lg, "battle_resolve"), {"action": "lg_detect", "target": uid(lg.a1),
                                                      "weapon": f"w{rifle.pk}", "client_token": str(uuid.uuid4())},
                          **HTMX)
    assert "Alpha one is your own piece" in text_of(refused, "field-target")
    assert not LogEntry.objects.filter(battle=lg.battle, action="lg_detect").exists()


def test_a_bolt_action_shell_or_flame_is_aimed_at_the_enemys_units_only(client, w):
    """HE, indirect fire and flamethrowers are aimed at a unit of the other side: alice's own Rifles, in
    the house with bob's Grenadiers, are not offered, and naming them anyway is refused beside the field,
    nothing logged. An organiser commands both sides and is offered both."""
    Unit.objects.filter(pk=w.rifles.pk).update(floor=w.floors[0], x=None, y=None)
    signed(client, w.alice)
    for action in ("ba_he", "ba_indirect", "ba_flamethrower"):
        form = page(client.get(url(w, "battle_form"), {"action": action, "structure": sid(w.house)}, **HTMX))
        offered = [o.attrs.get("value") for o in form.find("id_target").find_all("option") if o.attrs.get("value")]
        assert offered == [uid(w.squad)], action
    refused = client.post(url(w, "battle_resolve"), {
        "action": "ba_he", "attacker": uid(w.gun), "weapon": f"w{w.he.pk}", "structure": sid(w.house),
        "target": uid(w.rifles), "hit": "yes", "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Rifles is your own piece" in text_of(refused, "field-target")
    assert not LogEntry.objects.filter(battle=w.battle, action="ba_he").exists()
    signed(client, w.organiser)
    form = page(client.get(url(w, "battle_form"), {"action": "ba_he", "structure": sid(w.house)}, **HTMX))
    offered = {o.attrs.get("value") for o in form.find("id_target").find_all("option") if o.attrs.get("value")}
    assert offered == {uid(w.squad), uid(w.rifles)}


def test_a_side_with_no_indirect_fire_is_pointed_to_the_air_strike(client, w):
    """Bob's side has no mortar or howitzer: on "Indirect fire or air strike" the attacker list is empty,
    and says where the air strike is; chosen, his units may call it in."""
    signed(client, w.bob)
    form = page(client.get(url(w, "battle_form"), {"action": "ba_indirect"}, **HTMX))
    assert [o.attrs.get("value") for o in form.find("id_attacker").find_all("option")] == [""]
    assert "For an air strike, choose “Air strike” under Attack" in form.find("field-attacker").text()
    form = page(client.get(url(w, "battle_form"), {"action": "ba_indirect", "mode": "air_strike"}, **HTMX))
    assert uid(w.squad) in [o.attrs.get("value") for o in form.find("id_attacker").find_all("option")]
    assert "For an air strike" not in form.find("field-attacker").text()


def test_the_fire_mode_is_asked_only_for_a_weapon_with_variable_fire(client, lg):
    """Pulse or beam is a choice only a variable-fire weapon has (LG-71): other weapons are not offered
    it, and a pulse left over from one such weapon does not follow the player to the next."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, sequence=SequenceState(
        initiative="A", rolled=True).to_dict())
    farm = lg.structure("Farmhouse", floors=1)
    laser = factories.weapon("lg", "laser-t", weapon_type="laser", attack_factor=4, rof_code="S")
    variable = factories.weapon("lg", "variable-t", weapon_type="laser", attack_factor=5, rof_code="S",
                                variable_fire=True)
    for w in (laser, variable):
        UnitWeapon.objects.create(unit=lg.a1, weapon=w)
    signed(client, lg.alice)
    ask = {"action": "lg_attack_structure", "attacker": uid(lg.a1), "structure": f"s{farm.pk}", "hit": "yes",
           "penetrated": "0", "mode": "pulse"}
    with_variable = page(client.get(url(lg, "battle_form"), {**ask, "weapon": f"w{variable.pk}"}, **HTMX))
    assert with_variable.find("field-mode") is not None
    with_laser = page(client.get(url(lg, "battle_form"), {**ask, "weapon": f"w{laser.pk}"}, **HTMX))
    assert with_laser.find("field-mode") is None
    assert "pulse" not in with_laser.find("attack-form").text().lower()
    assert with_laser.find("odds").find_all("li", cls="odds-row") or "Nothing can come" in with_laser.find("odds").text()


def farm_under_fire(lg):
    """Side A's Alpha one, its initiative, a laser at a farmhouse holding side B's Bravo inside."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, sequence=SequenceState(
        initiative="A", rolled=True).to_dict(), options={"track_actions": False})
    farm = lg.structure("Farmhouse", floors=1)
    inside = lg.unit("B", "Bravo inside", floor=farm.floors.get())
    laser = factories.weapon("lg", "laser-h", weapon_type="laser", attack_factor=4, rof_code="S")
    UnitWeapon.objects.create(unit=lg.a1, weapon=laser)
    return farm, inside, laser


def shoot_at_the_farm(lg, farm, inside, laser, hit_die="1"):
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=SequenceState(initiative="A", rolled=True).to_dict())
    return services.perform(battle_id=lg.battle.pk, user=lg.alice, action="lg_attack_structure", attacker=uid(lg.a1),
                            inputs={"weapon": f"w{laser.pk}", "structure": sid(farm), "hit": "yes", "penetrated": 1,
                                    "troops": "known", "targets": uid(inside)}, dice_values=[hit_die])


def test_the_side_whose_piece_was_hit_is_reminded_to_enter_who_was_eliminated(client, lg):
    """LaserGrenadiers: a piece hit inside a structure takes the rulebook's damage roll, entered as "Hit or blast:
    who it eliminated". Only the phone that fired was offered it (its answer's follow-up); the side whose piece
    was hit is reminded in the turns panel of every phone of theirs until it is entered, and an undo brings it
    back or takes it away with what it undoes. A miss owes nothing; the side that fired is not reminded."""
    farm, inside, laser = farm_under_fire(lg)

    def reminders(user):
        signed(client, user)
        return [a for a in page(client.get(url(lg, "battle"))).find("turns").find_all("a") if "eliminated" in a.text()]

    shoot_at_the_farm(lg, farm, inside, laser, hit_die="9")  # 30 %: a 9 misses the piece
    assert reminders(lg.bob) == []
    attack = shoot_at_the_farm(lg, farm, inside, laser)
    assert "hits Bravo inside" in attack.summary
    said = f"Bravo inside hit by #{attack.seq}: enter who it eliminated"
    assert reminders(lg.alice) == []
    [link] = reminders(lg.bob)
    assert link.text().strip() == said
    assert parse_qs(link.attrs["hx-get"].split("?", 1)[1]) == {
        "action": ["lg_blast"], "weapon": [f"w{laser.pk}"], "caught": [uid(inside)]}
    # The link opens the form filled in: the piece is the one hit.
    signed(client, lg.bob)
    form = client.get(link.attrs["hx-get"], **HTMX)
    assert pieces(form, "caught")[1] == [uid(inside)]
    assert_owed_until_entered(reminders, said, battle=lg.battle, owner=lg.bob, attacker=lg.alice, enter=lambda: (
        services.perform(battle_id=lg.battle.pk, user=lg.bob, action="lg_blast",
                         inputs={"weapon": f"w{laser.pk}", "caught": uid(inside), "eliminated": ""})))


def test_the_hit_reminder_costs_the_pages_one_query_however_long_the_log(client, lg):
    farm, inside, laser = farm_under_fire(lg)

    def bobs_page_queries():
        signed(client, lg.bob)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url(lg, "battle")).status_code == 200
        [read] = [q["sql"] for q in queries.captured_queries if "'lg_blast'" in q["sql"]]
        assert f"LIMIT {views.GUTS_LOOKBACK}" in read
        return len(queries)

    shoot_at_the_farm(lg, farm, inside, laser, hit_die="9")
    few = bobs_page_queries()
    for _ in range(views.GUTS_LOOKBACK + 5):
        shoot_at_the_farm(lg, farm, inside, laser, hit_die="9")
    assert bobs_page_queries() == few


def surfaces(response):
    """The surfaces the form offers, and the one checked."""
    inputs = [n for n in page(response).find("field-surface").find_all("input") if n.attrs.get("name") == "surface"]
    return [n.attrs["value"] for n in inputs], [n.attrs["value"] for n in inputs if "checked" in n.attrs]


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_a_roof_is_offered_only_on_a_structure_that_has_one(client, lg, htmx):
    """A foxhole has no roof to strike: the form offers its wall alone, and a roof chosen on the last
    target gives way to the wall. A form sent with the roof anyway (a page drawn before, a crafted
    post) is still refused beside the surface, with the roof shown as chosen, and nothing changes."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, sequence=SequenceState(
        initiative="A", rolled=True).to_dict())
    farm = lg.structure("Farmhouse", floors=1, roof_material=factories.material("tiles", 3, surface="roof"))
    foxhole = lg.structure("Foxhole", floors=1, kind="foxhole", wall=("earth", 5, "earth"))
    laser = factories.weapon("lg", "laser-r", weapon_type="laser", attack_factor=4, rof_code="S")
    UnitWeapon.objects.create(unit=lg.a1, weapon=laser)
    signed(client, lg.alice)
    shot = {"action": "lg_attack_structure", "attacker": uid(lg.a1), "weapon": f"w{laser.pk}", "hit": "yes",
            "penetrated": "0", "surface": "roof"}
    assert surfaces(client.get(url(lg, "battle_form"), {**shot, "structure": f"s{farm.pk}"}, **HTMX)) \
        == (["wall", "roof"], ["roof"])
    assert surfaces(client.get(url(lg, "battle_form"), {**shot, "structure": f"s{foxhole.pk}"}, **HTMX)) \
        == (["wall"], ["wall"])
    # The page a phone opens on (the address keeps the choices) offers the same.
    assert surfaces(client.get(url(lg, "battle"), {**shot, "target": f"s{foxhole.pk}"})) == (["wall"], ["wall"])

    before = state(lg)
    response = client.post(url(lg, "battle_resolve"), {**shot, "structure": f"s{foxhole.pk}", "dice_mode": "server",
                                                      "client_token": str(uuid.uuid4())}, **(HTMX if htmx else {}))
    assert response.status_code == (200 if htmx else 422)
    assert "Foxhole has no roof: fire at its wall" in text_of(response, "field-surface")
    assert surfaces(response) == (["wall", "roof"], ["roof"])
    assert "Roof (Foxhole has none)" in text_of(response, "field-surface")
    assert state(lg) == before


def pieces(response, name="targets"):
    """The pieces a units field offers (their ids), and those checked."""
    field = page(response).find(f"field-{name}")
    inputs = [n for n in field.find_all("input") if n.attrs.get("name") == name]
    return [n.attrs["value"] for n in inputs], [n.attrs["value"] for n in inputs if "checked" in n.attrs]


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_the_pieces_inside_offered_are_those_inside_the_target(client, lg, htmx):
    """Fire at a structure aims at pieces inside it (LG 'Attacking concealed targets'): the form offered
    every piece on the table, and the rule then refused any not inside. It offers those inside; a piece
    chosen inside the last target is let go; a form sent with one anyway is refused beside the field,
    showing it chosen, and nothing changes."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, sequence=SequenceState(
        initiative="A", rolled=True).to_dict())
    farm = lg.structure("Farmhouse", floors=2)
    foxhole = lg.structure("Foxhole", floors=1, kind="foxhole", wall=("earth", 5, "earth"), x=50)
    inside = lg.unit("B", "Bravo inside", floor=farm.floors.get(level=1))
    laser = factories.weapon("lg", "laser-p", weapon_type="laser", attack_factor=4, rof_code="S")
    UnitWeapon.objects.create(unit=lg.a1, weapon=laser)
    signed(client, lg.alice)
    shot = {"action": "lg_attack_structure", "attacker": uid(lg.a1), "weapon": f"w{laser.pk}", "hit": "yes",
            "penetrated": "0", "troops": "known", "targets": uid(inside)}
    at_farm = client.get(url(lg, "battle_form"), {**shot, "structure": sid(farm)}, **HTMX)
    assert pieces(at_farm) == ([uid(inside)], [uid(inside)])
    at_foxhole = client.get(url(lg, "battle_form"), {**shot, "structure": sid(foxhole)}, **HTMX)
    assert pieces(at_foxhole) == ([], [])
    assert "Nobody is in Foxhole" in text_of(at_foxhole, "field-targets")
    assert "not inside" not in form_html(at_foxhole)

    before = state(lg)
    response = client.post(url(lg, "battle_resolve"), {**shot, "structure": sid(foxhole), "dice_mode": "server",
                                                      "client_token": str(uuid.uuid4())}, **(HTMX if htmx else {}))
    assert response.status_code == (200 if htmx else 422)
    assert "Bravo inside is not inside Foxhole" in text_of(response, "field-targets")
    assert pieces(response) == ([uid(inside)], [uid(inside)])
    assert "not in Foxhole" in text_of(response, "field-targets")
    assert state(lg) == before


@pytest.mark.parametrize("action", ["ba_he", "ba_indirect", "ba_flamethrower"])
def test_the_unit_aimed_at_is_one_inside_the_target_building(client, w, action):
    """A unit aimed at in a building must be in it (A-BA-3): the list offered every unit on the table
    ("Elsewhere"), and the rule refused any outside. It offers those inside; one chosen elsewhere (the
    player changed the building) is let go rather than refused before they resolve."""
    signed(client, w.alice)
    ask = {"action": action, "structure": sid(w.house), "target": uid(w.pioneers)}
    form = page(client.get(url(w, "battle_form"), ask, **HTMX)).find("id_target")
    options = [(o.attrs["value"], "selected" in o.attrs) for o in form.find_all("option")]
    assert options == [("", True), (uid(w.squad), False)]
    assert "is not inside" not in form_html(client.get(url(w, "battle_form"), ask, **HTMX))
    empty = w.structure("Empty barn", floors=1, x=50, y=30)
    form = page(client.get(url(w, "battle_form"), {**ask, "structure": sid(empty)}, **HTMX)).find("id_target")
    assert [o.attrs["value"] for o in form.find_all("option")] == [""]


@pytest.mark.parametrize("action", ["ba_he", "ba_indirect", "ba_flamethrower"])
def test_the_floor_aimed_at_is_the_floor_of_the_unit_aimed_at(client, w, action):
    """Aiming at a unit, the floor is its own (A-BA-3): every floor was offered and another was refused
    ("Grenadiers is on floor 1, not 0"). Only its floor is offered then, and one chosen before the unit
    was is let go; with no unit aimed at, every floor of the building is offered."""
    signed(client, w.alice)

    def floors(**ask):
        form = page(client.get(url(w, "battle_form"), {"action": action, "structure": sid(w.house), **ask}, **HTMX))
        options = form.find("id_floor").find_all("option")
        return [(o.attrs["value"], "selected" in o.attrs) for o in options], form.find("attack-form").text()

    assert floors(target=uid(w.squad))[0] == [("", True), ("1", False)]
    assert floors(target=uid(w.squad), floor="1")[0] == [("", False), ("1", True)]
    chosen, text = floors(target=uid(w.squad), floor="0")
    assert chosen == [("", True), ("1", False)] and "is on floor" not in text
    assert floors(floor="0")[0] == [("", False), ("0", True), ("1", False)]


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_moving_through_a_fire_offers_the_structures_on_fire(client, lg, htmx):
    """LG-30: a piece passes through a burning area. Every structure was offered, and one not on fire
    was refused ("… is not burning"). Those on fire are offered; the one tapped on the map stays chosen
    though it is not, and resolving it is refused beside the field, nothing changed."""
    Battle.objects.filter(pk=lg.battle.pk).update(status=BattleStatus.IN_PROGRESS, sequence=SequenceState(
        initiative="A", rolled=True).to_dict())
    burning = lg.structure("Burning barn", floors=1, fire_size=4, fire_started_turn=1)
    cold = lg.structure("Cold house", floors=1, x=50)
    signed(client, lg.alice)
    ask = {"action": "lg_fire_through", "unit": uid(lg.a1)}

    def offered(**more):
        options = page(client.get(url(lg, "battle_form"), {**ask, **more}, **HTMX)).find("id_structure").find_all("option")
        return [(o.attrs["value"], "selected" in o.attrs) for o in options]

    assert offered() == [("", True), (sid(burning), False)]
    assert offered(structure=sid(cold)) == [("", False), (sid(burning), False), (sid(cold), True)]
    before = state(lg)
    response = client.post(url(lg, "battle_resolve"), {**ask, "structure": sid(cold), "client_token": str(uuid.uuid4())},
                           **(HTMX if htmx else {}))
    assert response.status_code == (200 if htmx else 422)
    assert "Cold house is not burning" in text_of(response, "field-structure")
    assert state(lg) == before
    done = client.post(url(lg, "battle_resolve"), {**ask, "structure": sid(burning), "client_token": str(uuid.uuid4())},
                       **HTMX)
    assert "Resolved #" in body(done), form_html(done)
    assert LogEntry.objects.filter(battle=lg.battle, action="lg_fire_through").count() == 1
    # The fire's AF 5 attack is the rulebook's to resolve: the answer offers to enter who it eliminated.
    links = page(done).find("attack-form").find_all("a", cls="button-link")
    assert [a.text().strip() for a in links] == ["Enter who the fire in Burning barn eliminated: Alpha one"]


@pytest.mark.parametrize("action", ["ba_he", "ba_indirect", "ba_flamethrower", "ba_barrage", "ba_tank_ram"])
def test_bolt_action_offers_only_the_buildings_its_rules_cover(client, w, action):
    """Seed 001's rules are for buildings and bunkers still standing: a foxhole or rubble was offered
    as the target, and refused ("… is a foxhole, not a building or bunker", "already rubble"); a tank
    may not drive into a bunker either. Those are not offered; one tapped on the map stays chosen, and
    resolving it is refused beside the field with the rule's words, nothing changed."""
    foxhole = w.structure("Foxhole", floors=1, kind="foxhole", x=50, y=30)
    rubble = w.structure("Rubble", floors=1, collapsed=True, x=50, y=40)
    bunker = w.structure("Bunker", floors=1, kind="bunker", x=60, y=40)
    signed(client, w.alice)

    def offered(**more):
        form = page(client.get(url(w, "battle_form"), {"action": action, **more}, **HTMX))
        return [o.attrs["value"] for o in form.find("id_structure").find_all("option") if o.attrs["value"]]

    buildings = [sid(w.house), sid(bunker)] if action != "ba_tank_ram" else [sid(w.house)]  # by name
    assert offered() == buildings
    assert offered(structure=sid(foxhole)) == [*buildings, sid(foxhole)]
    assert sid(rubble) not in offered(structure=sid(foxhole))
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, structure=sid(foxhole), target=""))
    assert response.status_code == 422
    assert "Foxhole is a foxhole, not a building or bunker" in text_of(response, "field-structure")
    assert state(w) == before


def test_a_tank_ram_offers_only_the_heavy_tanks(client, w):
    """The Tank list of "Heavy tank drives into a building" held every unit of the player's that had not
    acted (squads, guns, a light tank), each refused only once resolved. BA-45: heavy and super-heavy tanks."""
    tiger = w.unit("A", "Tiger", kind="vehicle", tank_class="heavy", x=30, y=40, models=1)
    maus = w.unit("A", "Maus", kind="vehicle", tank_class="super_heavy", x=40, y=40, models=1)
    stuart = w.unit("A", "Stuart", kind="vehicle", tank_class="light", x=50, y=40, models=1)
    signed(client, w.alice)

    def tanks(**data):
        form = page(client.get(url(w, "battle_form"), {"action": "ba_tank_ram", "structure": sid(w.house), **data},
                               **HTMX))
        return [o.attrs["value"] for o in form.find("id_tank").find_all("option")]

    assert tanks() == ["", uid(maus), uid(tiger)]
    assert uid(stuart) in tanks(tank=uid(stuart))  # chosen all the same (a stale form): kept, and refused
    response = client.post(url(w, "battle_resolve"), {"action": "ba_tank_ram", "tank": uid(stuart),
                                                      "structure": sid(w.house), "client_token": str(uuid.uuid4())},
                           **HTMX)
    assert "Stuart is not a heavy or super-heavy tank" in text_of(response, "field-tank")
    assert not LogEntry.objects.filter(battle=w.battle, action="ba_tank_ram").exists()


def test_a_unit_chosen_then_destroyed_on_another_phone_is_marked_destroyed_not_someone_elses(client, w):
    """Bob had chosen his grenadiers to act when alice's shell brought their house down: the poll redrew his
    form with them marked "— not yours". They are his, and destroyed."""
    signed(client, w.bob)
    Unit.objects.filter(pk=w.squad.pk).update(destroyed=True, models_left=0, floor=None)
    form = page(client.get(url(w, "battle_form"), {"action": "ba_flamethrower", "attacker": uid(w.squad)}, **HTMX))
    chosen = [o.text() for o in form.find("id_attacker").find_all("option") if "selected" in o.attrs]
    assert len(chosen) == 1 and chosen[0].startswith("Grenadiers — destroyed (side B, 0 models") \
        and "— destroyed" in chosen[0], chosen
    # One of the other side's, in a crafted form, is still "not yours".
    form = page(client.get(url(w, "battle_form"), {"action": "ba_flamethrower", "attacker": uid(w.gun)}, **HTMX))
    chosen = [o.text() for o in form.find("id_attacker").find_all("option") if "selected" in o.attrs]
    assert "— not yours" in chosen[0], chosen


def test_a_tank_that_brings_a_building_down_is_offered_its_place_in_the_rubble(client, w):
    """BA-47: the tank halts in the rubble. The answer offers the Move form filled in with the spot the
    house stood on; recording it puts the tank there."""
    tank = w.unit("A", "Tiger", kind="vehicle", tank_class="heavy", x=30, y=40, models=1)
    signed(client, w.alice)
    answer = client.post(url(w, "battle_resolve"), {
        "action": "ba_tank_ram", "tank": uid(tank), "structure": sid(w.house), "dice_mode": "player",
        "dice_0": "6", "dice_1": "1", "dice_2": "1", "dice_3": "1", "client_token": str(uuid.uuid4())}, **HTMX)
    assert Structure.objects.get(pk=w.house.pk).collapsed
    link = next(a for a in page(answer).find("attack-form").find_all("a") if "rubble" in a.text())
    assert link.text().strip() == "Record Tiger in the rubble of Brick house"
    query = {k: v[0] for k, v in parse_qs(link.attrs["hx-get"].split("?", 1)[1]).items()}
    assert query == {"action": "move", "unit": uid(tank), "x": "30", "y": "20"}
    client.post(url(w, "battle_resolve"), {**query, "client_token": str(uuid.uuid4())}, **HTMX)
    tank.refresh_from_db()
    assert (float(tank.x), float(tank.y), tank.floor_id) == (30, 20, None)


def test_without_javascript_a_damage_roll_link_opens_with_the_building_s_card(client, w):
    """A follow-up's address names the unit hit in `target` (the form's field): the page took it for
    the structure tapped, found none and showed no card; the card is its building's."""
    signed(client, w.alice)
    response = client.get(url(w, "battle"), {"action": "ba_damage", "target": uid(w.squad), "hits": "3",
                                             "source": "he", "structure": sid(w.house), "attacker": uid(w.gun)})
    assert text_of(response, "card-title") == "Brick house"
    assert page(response).find("card-target").attrs["value"] == sid(w.house)
    chosen = [o.attrs["value"] for o in page(response).find("id_target").find_all("option") if "selected" in o.attrs]
    assert chosen == [uid(w.squad)]


def test_without_javascript_the_structure_tapped_is_not_taken_for_the_unit_aimed_at(client, w):
    """`target` in the page's address is the structure tapped; the form's own `target` is a unit."""
    signed(client, w.alice)
    response = client.get(url(w, "battle"), {"action": "ba_he", "attacker": uid(w.gun), "weapon": f"w{w.he.pk}",
                                             "hit": "yes", "target": sid(w.house)})
    assert text_of(response, "card-title") == "Brick house"
    form = page(response).find("attack-form")
    assert [o.attrs["value"] for o in form.find("id_structure").find_all("option") if "selected" in o.attrs] == [
        sid(w.house)]
    # Not "Unit aimed at: there is no unit 's…' in this battle" beside the field: a tap is not a mistake.
    errors = [e.text() for e in form.find_all("p", cls="field-error")]
    assert not [e for e in errors if "no unit" in e], errors


def test_without_javascript_the_next_attack_keeps_the_action_and_the_players_dice(client, w):
    """With JavaScript the form under a result keeps its action, target and dice mode; without it the
    page after a resolve opened on the first action with "Roll for me", to be chosen again every time."""
    signed(client, w.bob)
    attack = {"action": "ba_flamethrower", "attacker": uid(w.pioneers), "weapon": f"w{w.flamer.pk}",
              "structure": sid(w.house), "floor": "0", "hit": "no", "dice_mode": "player", "dice_0": "1",
              "client_token": str(uuid.uuid4())}
    response = client.post(url(w, "battle_resolve"), attack)
    assert response.status_code == 303
    assert LogEntry.objects.filter(battle=w.battle, action="ba_flamethrower").exists()
    form = page(client.get(response["Location"])).find("attack-form")

    def chosen(name):
        return [o.attrs["value"] for o in form.find(f"id_{name}").find_all("option") if "selected" in o.attrs]

    assert chosen("action") == ["ba_flamethrower"] and chosen("structure") == [sid(w.house)]
    assert "checked" in form.find("id_dice_mode_1").attrs  # "I rolled"


def test_without_javascript_a_confirmation_opened_again_does_not_ask_about_the_next_one(client, w):
    """The page that asks "Undo #2?" or "End turn 1?" (no JavaScript, so no dialog) is an address: back
    on it once that is done, it asked "Undo #1?" or "End turn 2?" in its place, one tap from doing
    what nobody asked for. It names what it asks about, and asks nothing once that is done."""
    signed(client, w.alice)
    client.post(url(w, "battle_turn"), {"action": "upkeep", "client_token": str(uuid.uuid4())}, **HTMX)
    client.post(url(w, "battle_resolve"), {"action": "move", "unit": uid(w.rifles), "x": "11", "y": "5",
                                           "client_token": str(uuid.uuid4())}, **HTMX)
    asked = client.post(url(w, "battle_undo"), {"seq": "2"})
    assert asked["Location"] == url(w, "battle") + "?confirm=undo&seq=2#turns"
    assert "Undo #2?" in text_of(client.get(asked["Location"]), "turns")
    assert client.post(url(w, "battle_undo"), {"seq": "2", "confirmed": "1"}).status_code == 303
    assert LogEntry.objects.get(battle=w.battle, seq=2).undone
    again = page(client.get(asked["Location"])).find("turns")
    assert "Undo #1?" not in again.text() and not again.find_all("form", cls="confirm-form")
    assert not LogEntry.objects.get(battle=w.battle, seq=1).undone

    asked = client.post(url(w, "battle_turn"), {"action": "end_turn", "client_token": str(uuid.uuid4())})
    assert asked["Location"] == url(w, "battle") + "?confirm=end_turn&turn=1#turns"
    question = page(client.get(asked["Location"])).find("turns")
    form = next(f for f in question.find_all("form") if "confirm-form" in f.attrs.get("class", ""))
    client.post(url(w, "battle_turn"), {i.attrs["name"]: i.attrs.get("value", "") for i in form.find_all("input")})
    assert Battle.objects.get(pk=w.battle.pk).turn == 2
    again = page(client.get(asked["Location"])).find("turns")
    assert "End turn 2?" not in again.text() and not again.find_all("form", cls="confirm-form")


def test_a_damage_roll_already_rolled_is_not_offered_again_by_the_result_s_address(client, w):
    """Without JavaScript the page after an attack that scored hits is at ?…&result=<its entry> and
    offers "Roll damage". Back on that address after the damage was rolled, it offered it again: one
    tap, and the same hits were rolled for twice. Undone, the roll is owed again."""
    signed(client, w.alice)
    attacked = client.post(url(w, "battle_resolve"), he_attack(w, dice_0="2", dice_1="1"))
    result_page = attacked["Location"]
    assert "result=" in result_page

    def offered():
        form = page(client.get(result_page)).find("attack-form")
        return [a.text() for a in form.find_all("a") if "Roll damage" in a.text()]

    (link,) = offered()
    assert link == "Roll damage: 3 hits on Grenadiers"
    client.post(url(w, "battle_resolve"), {
        "action": "ba_damage", "target": uid(w.squad), "hits": "3", "source": "he", "structure": sid(w.house),
        "attacker": uid(w.gun), "pen": "0", "close_quarters": "no", "dice_mode": "player",
        **{f"dice_{i}": "6" for i in range(3)}, "client_token": str(uuid.uuid4())})
    assert Unit.objects.get(pk=w.squad.pk).models_left == 10 - 3
    assert offered() == []
    client.post(url(w, "battle_undo"), {"confirmed": "1"})
    assert Unit.objects.get(pk=w.squad.pk).models_left == 10
    assert offered() == ["Roll damage: 3 hits on Grenadiers"]


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain"])
def test_a_letter_typed_for_a_number_is_named_beside_it(client, w, htmx):
    """The attack form's number fields were <input type=number>, as the dice were: a letter typed into
    "Pins" arrived as "", and the rules took the field as left empty. A text field with the digits
    keypad sends what was typed, and the rules name it beside the field; nothing changes."""
    signed(client, w.alice)
    form = page(client.get(url(w, "battle_form"), he_attack(w), **HTMX)).find("attack-form")
    field = form.find("id_pins").attrs
    assert (field["type"], field["inputmode"]) == ("text", "numeric")
    before = state(w)
    response = client.post(url(w, "battle_resolve"), he_attack(w, pins="x", dice_0="3", dice_1="4"),
                           **(HTMX if htmx else {}))
    assert response.status_code == (200 if htmx else 422)
    assert state(w) == before
    form = page(response).find("attack-form")
    assert form.find("id_pins").attrs["value"] == "x"
    assert "id_pins_error" in form.find("id_pins").attrs["aria-describedby"]
    assert "not 'x'" in form.find("id_pins_error").text()


def test_the_lg_attack_aims_only_at_the_other_sides_pieces_inside(client, lg):
    """Seed 000: penetrating fire hits *enemy* pieces inside ("All enemy troops within the effect area").
    In a farmhouse held by both sides (alice's piece below, bob's above), alice's attack offered her own
    piece among the "Pieces inside" and, ticked, hit it. It offers bob's only, and her own is refused
    beside the field, nothing resolved."""
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=SequenceState(initiative="A", rolled=True).to_dict(),
                                                  upkeep_turn=1)
    rifle = factories.weapon("lg", "laser-rifle-test", weapon_type="laser_small_arms", rof_code="P")
    gunner = lg.unit("A", "Gunner", weapons=[rifle])
    farm = lg.structure("Farmhouse", floors=2)
    floors = list(farm.floors.order_by("level"))
    Unit.objects.filter(pk=lg.a2.pk).update(floor=floors[0], x=None, y=None)
    Unit.objects.filter(pk=lg.b1.pk).update(floor=floors[1], x=None, y=None)
    signed(client, lg.alice)
    shot = {"action": "lg_attack_structure", "attacker": uid(gunner), "weapon": f"w{rifle.pk}",
            "structure": sid(farm), "hit": "yes", "penetrated": "1", "troops": "known"}
    form = page(client.get(url(lg, "battle_form"), shot, **HTMX)).find("attack-form")
    offered = [i.attrs["value"] for i in form.find_all("input") if i.attrs.get("name") == "targets"]
    assert offered == [uid(lg.b1)]
    answer = client.post(url(lg, "battle_resolve"), {**shot, "targets": uid(lg.a2), "dice_mode": "player",
                                                     "dice_0": "1", "client_token": str(uuid.uuid4())}, **HTMX)
    errors = [e.text() for e in page(answer).find("attack-form").find_all("p", cls="field-error")]
    assert "Alpha two is your own piece: choose one of the other side's" in errors
    assert not LogEntry.objects.filter(battle=lg.battle, action="lg_attack_structure").exists()
    # The organiser commands both sides: both are offered, as the table decides.
    signed(client, lg.organiser)
    form = page(client.get(url(lg, "battle_form"), shot, **HTMX)).find("attack-form")
    assert {i.attrs["value"] for i in form.find_all("input") if i.attrs.get("name") == "targets"} == {
        uid(lg.a2), uid(lg.b1)}


def test_a_fireteam_activated_together_fires_in_the_same_initiative(client, lg):
    """Seed 002, Fireteam Initiative: the team's members "may move and fire before the opposing player
    gets the initiative again". After "Its whole fireteam" the attack form offered none of them ("has
    acted"), so a team could only ever move. Each member now fires once, named in the log, while the
    panel lists who still may; "Team done" ends the team's initiative."""
    Battle.objects.filter(pk=lg.battle.pk).update(upkeep_turn=1, fireteam_initiative=True,
                                                  sequence={"initiative": "A", "rolled": True})
    rifle = factories.weapon("lg", "laser-rifle-test", weapon_type="laser_small_arms", rof_code="P")
    for member in (lg.a1, lg.a2):
        UnitWeapon.objects.create(unit=member, weapon=rifle)
    Unit.objects.filter(pk__in=[lg.a1.pk, lg.a2.pk]).update(fireteam="red")
    farm = lg.structure("Farmhouse", floors=1)
    signed(client, lg.alice)
    client.post(url(lg, "battle_turn"), {"action": "lg_activate", "unit": uid(lg.a1), "fireteam": "yes",
                                         "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Alpha one, Alpha two may still fire" in text_of(client.get(url(lg, "battle")), "turns")

    def attackers():
        form = page(client.get(url(lg, "battle_form"), {"action": "lg_attack_structure"}, **HTMX))
        return [o.attrs["value"] for o in form.find("id_attacker").find_all("option") if o.attrs.get("value")]

    assert attackers() == [uid(lg.a1), uid(lg.a2)]
    shot = {"action": "lg_attack_structure", "attacker": uid(lg.a1), "weapon": f"w{rifle.pk}",
            "structure": sid(farm), "hit": "no", "client_token": str(uuid.uuid4())}
    client.post(url(lg, "battle_resolve"), shot, **HTMX)
    entry = LogEntry.objects.get(battle=lg.battle, action="lg_attack_structure")
    assert entry.summary.startswith("Alpha one: ")
    assert entry.summary.endswith("the fireteam keeps the initiative: Alpha two may still fire")
    assert attackers() == [uid(lg.a2)]
    battle = Battle.objects.get(pk=lg.battle.pk)
    assert battle.sequence["team"] == [uid(lg.a2)] and battle.sequence["initiative"] == "A"
    client.post(url(lg, "battle_turn"), {"action": "lg_team_done", "client_token": str(uuid.uuid4())}, **HTMX)
    battle.refresh_from_db()
    assert battle.sequence["team"] == [] and battle.sequence["initiative"] == "B"
    assert attackers() == []
    assert "may still fire" not in text_of(client.get(url(lg, "battle")), "turns")


def test_the_other_side_waits_while_a_fireteam_holds_the_initiative(client, lg):
    """The initiative went to side B at once when side A activated a fireteam, so B could move first, and
    anything B did ended A's team's turn. Now B's pass and B's attack are refused, with the reason in the
    turns panel and beside the attacker, and nothing is logged or changed, until A has fired with every
    member or says "Team done" (logged, and undone exactly like any entry)."""
    Battle.objects.filter(pk=lg.battle.pk).update(upkeep_turn=1, fireteam_initiative=True,
                                                  sequence={"initiative": "A", "rolled": True})
    rifle = factories.weapon("lg", "laser-rifle-test", weapon_type="laser_small_arms", rof_code="P")
    for member in (lg.a1, lg.a2, lg.b1):
        UnitWeapon.objects.create(unit=member, weapon=rifle)
    Unit.objects.filter(pk__in=[lg.a1.pk, lg.a2.pk]).update(fireteam="red")
    farm = lg.structure("Farmhouse", floors=1)
    signed(client, lg.alice).post(url(lg, "battle_turn"), {"action": "lg_activate", "unit": uid(lg.a1),
                                                           "fireteam": "yes", "client_token": str(uuid.uuid4())},
                                  **HTMX)
    held = Battle.objects.get(pk=lg.battle.pk).sequence
    assert held["initiative"] == "A" and held["team"] == [uid(lg.a1), uid(lg.a2)]
    assert 'data-action="lg_team_done"' in body(client.get(url(lg, "battle")))

    signed(client, lg.bob)
    response = client.get(url(lg, "battle"))
    assert page(response).find("why-lg_pass").text().startswith(
        "Side A's fireteam holds the initiative while Alpha one, Alpha two may still fire")
    assert 'data-action="lg_team_done"' not in body(response)
    before = state(lg)
    answer = client.post(url(lg, "battle_turn"), {"action": "lg_pass", "client_token": str(uuid.uuid4())}, **HTMX)
    assert "only side A may pass now" in text_of(answer, "turns")
    answer = client.post(url(lg, "battle_resolve"), {
        "action": "lg_attack_structure", "attacker": uid(lg.b1), "weapon": f"w{rifle.pk}", "structure": sid(farm),
        "hit": "no", "client_token": str(uuid.uuid4())}, **HTMX)
    assert "side A's fireteam holds the initiative while Alpha one, Alpha two may still fire" in \
        text_of(answer, "field-attacker")
    answer = client.post(url(lg, "battle_turn"), {"action": "lg_team_done", "client_token": str(uuid.uuid4())},
                         **HTMX)
    assert "only side A may say its fireteam is done now" in text_of(answer, "turns")
    assert state(lg) == before and Battle.objects.get(pk=lg.battle.pk).sequence == held

    signed(client, lg.alice)
    client.post(url(lg, "battle_turn"), {"action": "lg_team_done", "client_token": str(uuid.uuid4())}, **HTMX)
    done = LogEntry.objects.get(battle=lg.battle, action="lg_team_done")
    assert done.summary == "Side A's fireteam is done (Alpha one, Alpha two did not fire); side B has the initiative"
    battle = Battle.objects.get(pk=lg.battle.pk)
    assert battle.sequence["initiative"] == "B" and battle.sequence["team"] == []
    client.post(url(lg, "battle_undo"), {"seq": done.seq}, **HTMX)
    assert LogEntry.objects.get(pk=done.pk).undone
    assert Battle.objects.get(pk=lg.battle.pk).sequence == held



def test_an_lg_hit_inside_offers_to_record_who_it_eliminated(client, lg):
    """A hammerhead that penetrated the farmhouse hit the piece inside, and the answer stopped there: the
    blast's survivors are incapacitated for the rest of the turn (seed 004), which the players had to
    remember to enter with "Blast: who is incapacitated" (now "Hit or blast: who it eliminated"), nowhere offered. The answer now offers it filled
    in (the warhead, the pieces hit), and once it is recorded a reload offers it no more."""
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=SequenceState(initiative="A", rolled=True).to_dict(),
                                                  upkeep_turn=1)
    missile = factories.weapon("lg", "hammerhead-test", weapon_type="hammerhead", rof_code="S",
                               has_effect_area=True)
    launcher = lg.unit("A", "Launcher", weapons=[missile])
    farm = lg.structure("Farmhouse", floors=1)
    Unit.objects.filter(pk=lg.b1.pk).update(floor=farm.floors.get(), x=None, y=None)
    signed(client, lg.alice)
    answer = client.post(url(lg, "battle_resolve"), {
        "action": "lg_attack_structure", "attacker": uid(launcher), "weapon": f"w{missile.pk}",
        "structure": sid(farm), "hit": "yes", "penetrated": "1", "troops": "known", "targets": uid(lg.b1),
        "client_token": str(uuid.uuid4())}, **HTMX)
    links = page(answer).find("attack-form").find_all("a", cls="button-link")
    assert [a.text().strip() for a in links] == [
        "Enter who the blast eliminated: Bravo one (survivors are incapacitated this turn)"]
    query = parse_qs(urlsplit(links[0].attrs["href"]).query)
    assert (query["action"], query["weapon"], query["caught"]) == (["lg_blast"], [f"w{missile.pk}"], [uid(lg.b1)])
    entry = LogEntry.objects.get(battle=lg.battle, action="lg_attack_structure")
    client.post(url(lg, "battle_resolve"), {"action": "lg_blast", "weapon": f"w{missile.pk}", "caught": uid(lg.b1),
                                            "client_token": str(uuid.uuid4())}, **HTMX)
    assert Unit.objects.get(pk=lg.b1.pk).incapacitated
    again = page(client.get(url(lg, "battle"), {"result": entry.seq})).find("attack-form")
    assert not again.find_all("a", cls="button-link")


def test_an_lg_move_outside_its_pieces_activation_is_refused(client, lg):
    """With Alpha one mid-activation (the initiative already passed to side B), bob recorded a move of
    Bravo one, which had not had its initiative: "Move a unit" never asked whose turn it was. Moving is what
    a piece does with its initiative (seed 002): the move is refused beside the unit, nothing logged or
    moved, until side B activates it."""
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=SequenceState(initiative="B", rolled=True,
                                                                         activated=(uid(lg.a1),)).to_dict(),
                                                  upkeep_turn=1)
    Unit.objects.filter(pk=lg.b1.pk).update(x=1, y=1)
    signed(client, lg.bob)
    # Not offered, and the field says why.
    form = page(client.get(url(lg, "battle_form"), {"action": "move"}, **HTMX))
    assert [o.attrs["value"] for o in form.find("id_unit").find_all("option") if o.attrs.get("value")] == []
    assert "a piece not offered is activated first" in form.find("id_unit_helptext").text()
    move = {"action": "move", "unit": uid(lg.b1), "x": "5", "y": "6"}
    answer = client.post(url(lg, "battle_resolve"), {**move, "client_token": str(uuid.uuid4())}, **HTMX)
    assert "Bravo one moves with its own initiative: side B activates it first" in text_of(answer, "field-unit")
    assert not LogEntry.objects.filter(battle=lg.battle, action="move").exists()
    assert (Unit.objects.get(pk=lg.b1.pk).x, Unit.objects.get(pk=lg.b1.pk).y) == (1, 1)
    client.post(url(lg, "battle_turn"), {"action": "lg_activate", "unit": uid(lg.b1),
                                         "client_token": str(uuid.uuid4())}, **HTMX)
    form = page(client.get(url(lg, "battle_form"), {"action": "move"}, **HTMX))
    assert [o.attrs["value"] for o in form.find("id_unit").find_all("option") if o.attrs.get("value")] == [uid(lg.b1)]
    client.post(url(lg, "battle_resolve"), {**move, "client_token": str(uuid.uuid4())}, **HTMX)
    assert (Unit.objects.get(pk=lg.b1.pk).x, Unit.objects.get(pk=lg.b1.pk).y) == (5, 6)


def test_the_move_form_waits_for_where_the_unit_went_before_calling_it_missing(client, lg):
    """Picking the unit to move drew "Choose the structure it went into, or give the spot on the table"
    in red under "Into" at once, before the player had had a chance to say where it went: an input not
    given yet is a hint, not a mistake. Recorded without it, the form still says so beside the field."""
    # Alpha one's activation (the initiative has passed to side B): its move is recorded now.
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=SequenceState(initiative="B", rolled=True,
                                                                         activated=(uid(lg.a1),)).to_dict(),
                                                  upkeep_turn=1)
    signed(client, lg.alice)
    form = page(client.get(url(lg, "battle_form"), {"action": "move", "unit": uid(lg.a1)}, **HTMX)).find("attack-form")
    assert not form.find_all("p", cls="field-error")
    answer = client.post(url(lg, "battle_resolve"), {"action": "move", "unit": uid(lg.a1),
                                                     "client_token": str(uuid.uuid4())}, **HTMX)
    field = text_of(answer, "field-structure")
    assert "Choose the structure it went into, or give the spot on the table (x and y)" in field
    assert not LogEntry.objects.filter(battle=lg.battle, action="move").exists()


def test_the_last_piece_to_fire_says_the_turn_may_end(client, lg):
    """The last piece's attack was logged "…; side A has the initiative" with nobody left to use it: as
    its activation does, it now says every piece has had its initiative and the turn may end."""
    Battle.objects.filter(pk=lg.battle.pk).update(upkeep_turn=1, sequence=SequenceState(
        initiative="A", rolled=True, activated=(uid(lg.a2), uid(lg.b1))).to_dict())
    rifle = factories.weapon("lg", "laser-rifle-test", weapon_type="laser_small_arms", rof_code="P")
    UnitWeapon.objects.create(unit=lg.a1, weapon=rifle)
    farm = lg.structure("Farmhouse", floors=1)
    signed(client, lg.alice)
    client.post(url(lg, "battle_resolve"), {"action": "lg_attack_structure", "attacker": uid(lg.a1),
                                            "weapon": f"w{rifle.pk}", "structure": sid(farm), "hit": "no",
                                            "client_token": str(uuid.uuid4())}, **HTMX)
    entry = LogEntry.objects.get(battle=lg.battle, action="lg_attack_structure")
    assert entry.summary == "Alpha one: laser-rifle-test missed Farmhouse; every piece has had its initiative: " \
                            "the turn may end"


def test_an_upkeep_fire_attack_offers_to_record_who_it_eliminated(client, lg):
    """The start-of-turn upkeep logged "fire attacks Bravo one (AF 5)" for the burning barn, and nothing
    then offered a way to enter who the attack eliminated: the upkeep answers in the turn panel, which had
    no follow-up links. The panel now offers it filled in (the fire, the pieces it attacked), on the answer,
    on a reload and on the other phone, until it is recorded."""
    barn = lg.structure("Barn", floors=2, fire_size=2, fire_started_turn=1)
    floors = list(barn.floors.order_by("level"))
    Unit.objects.filter(pk=lg.b1.pk).update(floor=floors[0], x=None, y=None)
    Unit.objects.filter(pk=lg.a1.pk).update(floor=floors[1], x=None, y=None)
    signed(client, lg.alice)
    answer = client.post(url(lg, "battle_turn"), {"action": "upkeep", "client_token": str(uuid.uuid4())}, **HTMX)
    assert "fire attacks" in LogEntry.objects.get(battle=lg.battle, action="upkeep").summary

    def offered(response):
        links = page(response).find("turns").find_all("a", cls="button-link")
        return [(a.text().strip(), parse_qs(urlsplit(a.attrs["href"]).query)) for a in links
                if "fire" in a.text()]

    expected = [("Enter who the fire in Barn eliminated: Bravo one, Alpha one",
                 {"action": ["lg_fire_casualties"], "structure": [sid(barn)], "caught": [uid(lg.b1), uid(lg.a1)]})]
    assert offered(answer) == expected
    signed(client, lg.bob)
    assert offered(client.get(url(lg, "battle"))) == expected
    # Followed, the form comes filled in; bob ticks who the rulebook's roll eliminated.
    form = page(client.get(url(lg, "battle_form"), dict(expected[0][1], action="lg_fire_casualties"), **HTMX))
    assert [o.attrs.get("value") for o in form.find("id_structure").find_all("option")
            if "selected" in o.attrs] == [sid(barn)]
    # "Of those, eliminated" offers the two the fire attacked, not every piece on the table.
    assert sorted(i.attrs["value"] for i in form.find_all("input") if i.attrs.get("name") == "eliminated") == \
        sorted([uid(lg.a1), uid(lg.b1)])
    client.post(url(lg, "battle_resolve"), {"action": "lg_fire_casualties", "structure": sid(barn),
                                            "caught": [uid(lg.a1), uid(lg.b1)], "eliminated": [uid(lg.b1)],
                                            "client_token": str(uuid.uuid4())}, **HTMX)
    assert Unit.objects.get(pk=lg.b1.pk).destroyed and not Unit.objects.get(pk=lg.a1.pk).destroyed
    assert offered(client.get(url(lg, "battle"))) == []
