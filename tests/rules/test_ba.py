"""Bolt Action buildings and bunkers: seed 001."""

import pytest

from apps.rules import ActionRefused, InputError, RandomDice, ScriptedDice, apply, odds, resolve
from apps.rules.ba import damage_needed, halve_up, max_shooters, plunging_fire_bonus, to_hit_modifier, entry_problem
from apps.rules.state import Floor

from .builders import battle, building, bunker, unit


def kinds(out):
    return [(e.type, e.target) for e in out.effects]


def house(n=3, units=(), **kw):
    return battle("ba", [building("house", n, **kw)], units)


def squad(uid="sq", floor=0, **kw):
    return unit(uid, structure="house", floor=floor, **kw)


# -------------------------------------------------------------- HE over open sights

def test_a_collapse_names_who_it_killed_or_says_nobody_was_inside():
    """"Stone church collapses (10+), everyone inside destroyed" was logged for an empty church, and a tank
    bringing a house down said nothing of the squad inside. The log names them, or says nobody was in."""
    state = house(units=[squad(name="Grenadiers"), squad("up", floor=1, name="MG team")])
    out = resolve("ba_he", state, {"weapon": "he_2d6", "structure": "house", "target": "sq", "hit": "yes"},
                  ScriptedDice([6, 4]))
    assert out.summary == "2D6 shell explodes on the ground floor: 10 hits; House collapses (10+): Grenadiers, MG team destroyed"
    empty = house()
    out = resolve("ba_he", empty, {"weapon": "he_2d6", "structure": "house", "floor": 0, "hit": "yes"},
                  ScriptedDice([6, 4]))
    assert out.summary == "2D6 shell explodes on the ground floor: 10 hits; House collapses (10+): nobody inside"
    out = resolve("ba_barrage", empty, {"structure": "house", "hits": "building=10"}, ScriptedDice([]))
    assert out.summary == "10 heavy howitzer hits: House collapses: nobody inside"
    out = resolve("ba_tank_ram", tank_battle(), {"tank": "tank", "structure": "house"}, ScriptedDice([3, 6, 5, 1]))
    assert out.summary == "13 v 12, the tank wins: House collapses (sq destroyed); tank halts in the rubble, Down; +1 pin"


@pytest.mark.parametrize("faces, collapses", [([6, 3], False), ([6, 4], True), ([5, 4], False)])
def test_2d6_he_collapses_at_ten_hits(faces, collapses):
    state = house(units=[squad(pins=2), squad("up", floor=1)])
    out = resolve("ba_he", state, {"weapon": "he_2d6", "structure": "house", "target": "sq", "hit": "yes"},
                  ScriptedDice(faces))
    assert (("collapse", "house") in kinds(out)) is collapses
    if collapses:
        assert ("unit_destroyed", "sq") in kinds(out) and ("unit_destroyed", "up") in kinds(out)
        after = apply(state, out)
        assert after.structures["house"].collapsed and after.units["up"].destroyed
        # Nobody is left: no models and no pins to show or count, and no floor.
        assert [(u.models, u.pins, u.down, u.structure) for u in (after.units["sq"], after.units["up"])] == \
            [(0, 0, False, None)] * 2
    else:
        assert [e.n for e in out.effects if e.type == "hits"] == [sum(faces)]


def test_3d6_he_ten_hits_collapse_even_when_the_unit_went_down():
    state = house(units=[squad()])
    out = resolve("ba_he", state, {"weapon": "he_3d6", "structure": "house", "target": "sq", "hit": "yes",
                                   "went_down": "yes"}, ScriptedDice([5, 3, 2]))
    assert ("collapse", "house") in kinds(out)


@pytest.mark.parametrize("faces, hits", [([6, 3], 5), ([4, 4], 4), ([1, 2], 2)])
def test_going_down_halves_hits_rounding_up(faces, hits):
    state = house(units=[squad()])
    out = resolve("ba_he", state, {"weapon": "he_2d6", "structure": "house", "target": "sq", "hit": "yes",
                                   "went_down": "yes"}, ScriptedDice(faces))
    assert [e.n for e in out.effects if e.type == "hits"] == [hits]
    assert apply(state, out).units["sq"].down


def test_d6_he_never_collapses_and_d3_is_a_d3():
    assert halve_up(7) == 4 and halve_up(1) == 1
    state = house(units=[squad()])
    out = resolve("ba_he", state, {"weapon": "he_d3", "structure": "house", "target": "sq", "hit": "yes"},
                  ScriptedDice([3]))
    assert [e.n for e in out.effects if e.type == "hits"] == [3]
    od = odds("ba_he", state, {"weapon": "he_d6", "structure": "house", "target": "sq", "hit": "yes"})
    assert od.probability(lambda o: "collapse" in [e.type for e in o.effects]) == 0


def test_only_a_unit_that_has_not_acted_may_go_down():
    state = house(units=[squad(acted=True)])
    with pytest.raises(InputError) as err:
        resolve("ba_he", state, {"weapon": "he_2d6", "structure": "house", "target": "sq", "hit": "yes",
                                 "went_down": "yes"}, ScriptedDice([1, 1]))
    assert err.value.field == "went_down"


def test_a_miss_does_nothing_and_rolls_nothing():
    out = resolve("ba_he", house(units=[squad()]), {"weapon": "he_3d6", "structure": "house", "target": "sq",
                                                    "hit": "no"}, ScriptedDice([]))
    assert out.effects == () and out.dice == ()


# -------------------------------------------------------------- bunkers

@pytest.mark.parametrize("faces, collapses", [([6, 4, 1], False), ([6, 4, 2], True)])
def test_bunker_collapses_at_twelve_not_ten(faces, collapses):
    state = battle("ba", [bunker()], [unit("sq", structure="pillbox", floor=0)])
    out = resolve("ba_he", state, {"weapon": "he_3d6", "structure": "pillbox", "target": "sq", "hit": "yes"},
                  ScriptedDice(faces))
    assert (("collapse", "pillbox") in kinds(out)) is collapses
    assert "hits" not in [e.type for e in out.effects]  # HE never damages troops in a bunker
    assert ("pin", "sq") in kinds(out)


def test_bunker_barrage_and_air_strike_threshold_is_twelve():
    state = battle("ba", [bunker()], [unit("sq", structure="pillbox", floor=0)])
    assert resolve("ba_barrage", state, {"structure": "pillbox", "hits": "sq=11"}, ScriptedDice([])).effects == ()
    assert ("collapse", "pillbox") in kinds(resolve("ba_barrage", state, {"structure": "pillbox", "hits": "sq=12"},
                                                    ScriptedDice([])))


@pytest.mark.parametrize("pins, said", [(2, "sq +2 pins, no damage inside a bunker"),
                                        (0, "no damage to sq inside a bunker")])
def test_he_on_a_bunker_logs_how_many_pins_it_placed(pins, said):
    """"sq pinned, no damage inside a bunker" was logged whatever the pins entered, none included."""
    state = battle("ba", [bunker()], [unit("sq", structure="pillbox", floor=0)])
    out = resolve("ba_he", state, {"weapon": "he_2d6", "structure": "pillbox", "target": "sq", "hit": "yes",
                                   "pins": pins}, ScriptedDice([3, 4]))
    assert out.summary == f"2D6 shell explodes on the ground floor: 7 hits; {said}"
    assert [(e.type, e.n) for e in out.effects if e.type == "pin"] == ([("pin", pins)] if pins else [])


def test_he_damage_rolls_are_refused_in_a_bunker():
    state = battle("ba", [bunker()], [unit("sq", structure="pillbox", floor=0)])
    with pytest.raises(ActionRefused):
        resolve("ba_damage", state, {"target": "sq", "hits": 3, "source": "he"}, ScriptedDice([]))


# -------------------------------------------------------------- indirect fire and air strikes

def test_floor_roll_from_the_top():
    """BA-27 example: 3-floor house, 2 then 5 → explodes on floor 1; 1 then 3 → ground floor."""
    state = house(units=[squad(floor=2)])
    inp = {"weapon": "mortar_2d6", "structure": "house", "target": "sq", "hit": "yes"}
    out = resolve("ba_indirect", state, inp, ScriptedDice([2, 5, 1, 1]))
    assert out.effects[0].floor == 1
    out = resolve("ba_indirect", state, inp, ScriptedDice([1, 3, 6, 6]))
    assert out.effects[0].floor == 0 and ("collapse", "house") in kinds(out)


def test_ground_floor_always_explodes_and_empty_floors_still_roll_hits():
    state = battle("ba", [building("house", 1)], [])
    out = resolve("ba_indirect", state, {"weapon": "mortar_2d6", "structure": "house", "floor": 0, "hit": "yes"},
                  ScriptedDice([5, 5]))
    assert kinds(out) == [("floor_hit", "house"), ("collapse", "house")]
    od = odds("ba_indirect", house(units=[squad(floor=2)]),
              {"weapon": "mortar_2d6", "structure": "house", "target": "sq", "hit": "yes"})
    floors = {m.key: m.value for m in od.marginals if m.key.startswith("floor_hit")}
    assert floors == {"floor_hit:house:2": 0.5, "floor_hit:house:1": 0.25, "floor_hit:house:0": 0.25}


def test_empty_floor_hit_can_bring_down_a_building_on_the_unit_below():
    """BA-28 example: 2D6 explodes on empty floor 2, rolls 6+5 → collapse, the unit on floor 0 dies."""
    state = house(units=[squad(floor=0)])
    out = resolve("ba_indirect", state, {"weapon": "mortar_2d6", "structure": "house", "target": "sq", "hit": "yes"},
                  ScriptedDice([6, 6, 5]))
    assert kinds(out) == [("floor_hit", "house"), ("collapse", "house"), ("unit_destroyed", "sq")]


def test_direct_fire_weapons_cannot_fire_indirect_but_can_be_an_air_strike():
    state = house(units=[squad()])
    with pytest.raises(ActionRefused):
        resolve("ba_indirect", state, {"weapon": "he_2d6", "structure": "house", "target": "sq", "hit": "yes"},
                ScriptedDice([]))
    out = resolve("ba_indirect", state, {"weapon": "he_2d6", "mode": "air_strike", "structure": "house",
                                         "target": "sq", "hit": "yes"}, ScriptedDice([1, 2, 4, 3]))
    assert out.effects[0].floor == 0


def test_an_air_strike_pins_the_unit_aimed_at_whichever_floor_the_bomb_bursts_on():
    """BA-33/34: the aircraft's pin markers are placed, measured from the building, before the floor roll.
    The sniper on the top floor is pinned though the bomb falls through to the empty floor 1; an indirect
    shell's pins go on the unit it hits, so none on an empty floor."""
    state = house(4, units=[squad("sniper", floor=3), squad("sq", floor=0)])
    inp = {"weapon": "he_2d6", "mode": "air_strike", "structure": "house", "target": "sniper", "hit": "yes",
           "pins": 2}
    out = resolve("ba_indirect", state, inp, ScriptedDice([1, 2, 5, 3, 3]))
    assert out.effects[0].floor == 1
    assert [(e.type, e.target, e.n) for e in out.effects if e.type in ("pin", "hits")] == [("pin", "sniper", 2)]
    assert apply(state, out).units["sniper"].pins == 2
    # The log's action reads "Indirect fire or air strike": the line says which it was.
    assert out.summary == "Air strike: 2D6 bomb bursts on floor 1: 6 hits; on an empty floor; sniper +2 pins"
    assert odds("ba_indirect", state, inp).marginal("pin:sniper") == 1
    shell = resolve("ba_indirect", state, {**inp, "weapon": "mortar_2d6", "mode": "indirect"},
                    ScriptedDice([1, 2, 5, 3, 3]))
    assert shell.of_type("pin") == []
    assert shell.summary == "2D6 shell explodes on floor 1: 6 hits; on an empty floor"
    shell = resolve("ba_indirect", state, {**inp, "weapon": "mortar_2d6", "mode": "indirect"},
                    ScriptedDice([1, 2, 2, 3, 3]))
    assert [(e.target, e.n) for e in shell.of_type("pin")] == [("sq", 2)]


# -------------------------------------------------------------- flamethrowers

@pytest.mark.parametrize("face, fire", [(4, True), (3, False)])
def test_flamethrower_sets_a_building_alight_on_4_plus(face, fire):
    state = battle("ba", [building("house", 2)],
                   [unit("sq", structure="house", floor=0), unit("gun", kind="artillery", structure="house", floor=1)])
    out = resolve("ba_flamethrower", state, {"weapon": "ba_flamethrower", "structure": "house", "target": "sq",
                                             "hit": "yes", "hits": 5}, ScriptedDice([face]))
    assert ("hits", "sq") in kinds(out)
    if fire:
        assert {("fire_started", "house"), ("impassable", "house"), ("abandon", "sq"),
                ("unit_destroyed", "gun")} <= set(kinds(out))
        after = apply(state, out)
        assert after.structures["house"].impassable and after.units["sq"].structure is None
        assert after.structures["house"].floor(0).unit is None and after.units["gun"].destroyed
        assert out.summary.endswith("House is on fire and impassable; sq must leave it; gun (artillery) destroyed")
    else:
        assert ("fire_started", "house") not in kinds(out)


def test_flamethrower_needs_an_opening_and_never_burns_a_bunker():
    blank = building("house", 1).replace(floors=(Floor(0, openings={"rear": 1}),))
    state = battle("ba", [blank, bunker()], [unit("sq", structure="house", floor=0),
                                             unit("b", structure="pillbox", floor=0)])
    with pytest.raises(ActionRefused) as err:
        resolve("ba_flamethrower", state, {"weapon": "ba_flamethrower", "structure": "house", "target": "sq",
                                           "side": "front", "hit": "yes"}, ScriptedDice([]))
    assert (err.value.field, err.value.value) == ("side", "front")
    out = resolve("ba_flamethrower", state, {"weapon": "ba_flamethrower", "structure": "pillbox", "target": "b",
                                             "hit": "yes", "hits": 4}, ScriptedDice([]))
    assert out.dice == () and kinds(out) == [("hits", "b")]


def test_flamethrower_pins_are_the_players_and_go_on_the_unit_hit():
    state = house(n=1, units=[squad(pins=1)])
    flame = {"weapon": "ba_flamethrower", "structure": "house", "target": "sq", "hit": "yes", "hits": 3, "pins": 2}
    out = resolve("ba_flamethrower", state, flame, ScriptedDice([1]))
    assert [(e.target, e.n) for e in out.of_type("pin")] == [("sq", 2)]
    assert apply(state, out).units["sq"].pins == 3 and "sq +2 pins" in out.summary
    with pytest.raises(InputError) as err:
        resolve("ba_flamethrower", state, {**flame, "hit": "no", "hits": 0}, ScriptedDice([1]))
    assert (err.value.field, err.value.message) == ("pins", "a miss places no pins")


def test_flamethrower_fire_roll_even_on_a_miss():
    state = house(n=1, units=[squad()])
    out = resolve("ba_flamethrower", state, {"weapon": "ba_flamethrower", "structure": "house", "target": "sq",
                                             "hit": "no"}, ScriptedDice([6]))
    assert ("fire_started", "house") in kinds(out)
    assert out.summary.endswith("on fire and impassable; sq must leave it") and "artillery" not in out.summary
    empty = resolve("ba_flamethrower", house(n=1, units=[]), {"weapon": "ba_flamethrower", "structure": "house",
                                                               "floor": 0, "hit": "no"}, ScriptedDice([6]))
    assert empty.summary.endswith("on fire and impassable; nobody inside")


# -------------------------------------------------------------- barrages

def test_barrage_totals_heavy_howitzer_hits_per_building():
    """BA-38 example: 6 and 5 heavy-howitzer hits → 11 → collapse, both destroyed."""
    state = house(units=[squad(), squad("up", floor=1)])
    out = resolve("ba_barrage", state, {"structure": "house", "hits": {"sq": 6, "up": 5}}, ScriptedDice([]))
    assert kinds(out) == [("collapse", "house"), ("unit_destroyed", "sq"), ("unit_destroyed", "up")]
    out = resolve("ba_barrage", state, {"structure": "house", "hits": "sq=6,up=3"}, ScriptedDice([]))
    assert [(e.target, e.n) for e in out.effects] == [("sq", 6), ("up", 3)]


def test_an_occupied_building_has_no_barrage_die_of_its_own():
    """A-BA-3: the building's own die is for an empty building. With a unit inside, the building is hit
    through that unit's die (BA-37): 6 on the squad plus a 'building' 4 counted the same shell twice and
    brought the house down at 10."""
    state = house(units=[squad()])
    with pytest.raises(InputError) as refused:
        resolve("ba_barrage", state, {"structure": "house", "hits": "sq=6,building=4"}, ScriptedDice([]))
    assert refused.value.field == "hits" and "not empty (sq inside)" in refused.value.message
    assert kinds(resolve("ba_barrage", state, {"structure": "house", "hits": "sq=6,building=0"}, ScriptedDice([]))) \
        == [("hits", "sq")]
    empty = house()
    assert kinds(resolve("ba_barrage", empty, {"structure": "house", "hits": "building=10"}, ScriptedDice([]))) \
        == [("collapse", "house")]


def test_a_barrage_places_its_pins_and_in_a_bunker_that_is_all_it_does():
    """BA-56: units in bunkers take the barrage's pin markers as normal but no damage. The bunker's
    barrage said "pins only" and placed none, and no action could place them."""
    state = battle("ba", [bunker()], [unit("sq", structure="pillbox", floor=0)])
    out = resolve("ba_barrage", state, {"structure": "pillbox", "hits": "sq=5", "pins": "sq=2"}, ScriptedDice([]))
    assert [(e.type, e.target, e.n) for e in out.effects] == [("pin", "sq", 2)]
    assert out.summary.endswith("pins only, no damage inside a bunker; sq +2 pins")
    assert apply(state, out).units["sq"].pins == 2
    state = house(units=[squad(down=True), squad("up", floor=1)])
    out = resolve("ba_barrage", state, {"structure": "house", "hits": "sq=5,up=2", "pins": "sq=1,up=0"},
                  ScriptedDice([]))
    assert [(e.type, e.target, e.n) for e in out.effects] == [("pin", "sq", 1), ("hits", "sq", 3), ("hits", "up", 2)]
    for pins, field in (("building=1", "pins"), ("nobody=1", "pins")):
        with pytest.raises(InputError) as refused:
            resolve("ba_barrage", state, {"structure": "house", "hits": "sq=1", "pins": pins}, ScriptedDice([]))
        assert refused.value.field == field


@pytest.mark.parametrize("action, inputs", [
    ("ba_he", {"weapon": "he_3d6", "floor": 0, "hit": "yes"}),
    ("ba_indirect", {"weapon": "he_3d6", "mode": "air_strike", "floor": 1, "hit": "yes"}),
    ("ba_flamethrower", {"weapon": "ba_flamethrower", "floor": 0, "hit": "no"}),
    ("ba_barrage", {"hits": "building=12"}),
])
def test_rubble_is_not_a_building_any_more(action, inputs):
    """A collapsed building is rubble, difficult terrain (seed 001's opening): a flamethrower's miss set the
    rubble of a workshop on fire and made it impassable, and every HE shell or barrage 'collapsed' it again."""
    state = battle("ba", [building("house", 2, collapsed=True, destroyed=True)], [])
    with pytest.raises(ActionRefused) as refused:
        resolve(action, state, {"structure": "house", **inputs}, ScriptedDice([6, 6, 6, 6]))
    assert refused.value.field == "structure" and "House is already rubble" in refused.value.message


# -------------------------------------------------------------- tanks

def tank_battle(construction="brick", tank_class="heavy", **kw):
    return battle("ba", [building("house", 2, construction=construction, **kw)],
                  [unit("tank", "A", kind="vehicle", tank_class=tank_class, models=1), squad()])


@pytest.mark.parametrize("tank_face, bld, result", [
    (3, [6, 5, 4], "building"),  # 13 v 15
    (3, [6, 5, 2], "tie"),  # 13 v 13
    (3, [6, 5, 1], "tank"),  # 13 v 12
])
def test_heavy_tank_ram_three_outcomes(tank_face, bld, result):
    state = tank_battle()
    out = resolve("ba_tank_ram", state, {"tank": "tank", "structure": "house"}, ScriptedDice([tank_face, *bld]))
    k = kinds(out)
    assert ("pin", "tank") in k
    assert (("collapse", "house") in k) is (result != "building")
    assert (("went_down", "tank") in k) is (result != "building")
    notes = [e.note for e in out.effects if e.type == "tank_result"]
    assert notes == {"building": ["ram_damage"], "tie": ["superficial"], "tank": []}[result]


def test_the_ram_odds_name_the_tank_and_its_damage_in_words():
    """The bars name the tank ("Tiger: ram damage"), not "Tank: ram_damage" (the note's code)."""
    labels = {m.label for m in odds("ba_tank_ram", tank_battle(), {"tank": "tank", "structure": "house"}).marginals}
    assert {"tank: ram damage", "tank: superficial damage"} <= labels
    assert not any("_" in label or label.startswith("Tank:") for label in labels)


def test_super_heavy_tank_ties_a_brick_building_at_sixteen():
    """BA-47 example: super-heavy 5+11 = 16 v brick 16 → superficial damage, building destroyed."""
    out = resolve("ba_tank_ram", tank_battle(tank_class="super_heavy"), {"tank": "tank", "structure": "house"},
                  ScriptedDice([5, 6, 6, 4]))
    assert [e.note for e in out.effects if e.type == "tank_result"] == ["superficial"]
    assert ("collapse", "house") in kinds(out) and ("unit_destroyed", "sq") in kinds(out)


def test_wooden_building_only_superficially_damages_the_tank():
    out = resolve("ba_tank_ram", tank_battle("wooden"), {"tank": "tank", "structure": "house"},
                  ScriptedDice([1, 6, 6]))
    assert [e.note for e in out.effects if e.type == "tank_result"] == ["superficial"]


def test_who_may_ram_what():
    with pytest.raises(ActionRefused):
        resolve("ba_tank_ram", tank_battle(tank_class=""), {"tank": "tank", "structure": "house"}, ScriptedDice([]))
    with pytest.raises(ActionRefused):
        resolve("ba_tank_ram", tank_battle("concrete"), {"tank": "tank", "structure": "house"}, ScriptedDice([]))
    state = battle("ba", [bunker()], [unit("tank", "A", kind="vehicle", tank_class="super_heavy", models=1)])
    with pytest.raises(ActionRefused) as err:
        resolve("ba_tank_ram", state, {"tank": "tank", "structure": "pillbox"}, ScriptedDice([]))
    assert err.value.field == "structure"
    shed = resolve("ba_tank_ram", tank_battle(flimsy=True), {"tank": "tank", "structure": "house"}, ScriptedDice([]))
    assert shed.dice == () and ("collapse", "house") in kinds(shed)


@pytest.mark.parametrize("construction, flimsy", [("brick", False), ("wooden", False), ("stone", False),
                                                  ("concrete", False), ("stone", True)])
def test_the_form_offers_a_tank_only_the_buildings_the_rule_lets_it_ram(construction, flimsy):
    """`rammable` is what the form offers: a stone church was offered, then refused ("only wooden or brick")."""
    from apps.rules.ba import rammable
    state = tank_battle(construction, flimsy=flimsy)
    try:
        resolve("ba_tank_ram", state, {"tank": "tank", "structure": "house"}, RandomDice(1))
        allowed = True
    except ActionRefused:
        allowed = False
    assert rammable(state.structures["house"]) is allowed is (flimsy or construction in ("brick", "wooden"))


@pytest.mark.parametrize("flimsy", [False, True])
def test_a_tank_never_drives_into_a_building_its_own_side_holds(flimsy):
    """BA-45: it "is treated as an assault", made on the enemy: not on a building that holds any of the
    tank's own side (it would come down on them), even with the enemy on another floor; a shed too."""
    state = battle("ba", [building("house", 2, flimsy=flimsy)],
                   [unit("tank", "A", kind="vehicle", tank_class="heavy", models=1), squad("mine", side="A"),
                    squad("theirs", floor=1)])
    with pytest.raises(ActionRefused) as err:
        resolve("ba_tank_ram", state, {"tank": "tank", "structure": "house"}, ScriptedDice([3, 6, 5, 1]))
    assert err.value.field == "structure"
    assert err.value.message == ("mine of tank's own side is in House: a tank drives into a building as an "
                                 "assault on the enemy, never into its own side's")


# -------------------------------------------------------------- shooting at and from units inside

@pytest.mark.parametrize("experience, need", [("inexperienced", 4), ("regular", 5), ("veteran", 6)])
def test_extra_protection(experience, need):
    inside = squad(experience=experience)
    assert damage_needed(inside) == need
    assert damage_needed(inside, "he") == need - 1
    assert damage_needed(inside, "flamethrower") == need - 1
    assert damage_needed(inside, close_quarters=True) == need - 1
    assert damage_needed(inside, pen=1) == need - 1


def test_damage_rolls_inside():
    state = house(units=[squad(models=3)])
    out = resolve("ba_damage", state, {"target": "sq", "hits": 4}, ScriptedDice([4, 5, 6, 1]))
    assert [(e.type, e.n) for e in out.effects] == [("casualties", 2)]
    out = resolve("ba_damage", state, {"target": "sq", "hits": 4, "source": "he"}, ScriptedDice([4, 5, 6, 1]))
    assert [(e.type, e.n) for e in out.effects] == [("casualties", 3), ("unit_destroyed", 0)]


def test_a_damage_roll_that_wipes_out_the_unit_says_so_in_the_log():
    """The log line is what both phones read: "3 casualties" on a squad of three did not say it was gone."""
    state = house(units=[squad(models=3)])
    out = resolve("ba_damage", state, {"target": "sq", "hits": 4, "source": "he"}, ScriptedDice([4, 5, 6, 1]))
    assert out.summary == "4 hits on sq needing 4+: 3 casualties; sq destroyed"
    out = resolve("ba_damage", state, {"target": "sq", "hits": 4, "source": "he"}, ScriptedDice([4, 5, 1, 1]))
    assert out.summary == "4 hits on sq needing 4+: 2 casualties"


@pytest.mark.parametrize("kind, need", [("building", 5), ("bunker", 5), ("pillbox", 5), ("foxhole", 4),
                                        ("trench", 4), ("weapon_emplacement", 4)])
def test_extra_protection_only_inside_buildings_and_bunkers(kind, need):
    """BA-19: "inside a building" (+1, regulars 5+); bunkers follow the building rules (BA-51, A-BA-8). A
    foxhole or trench is not a building: a regular there is damaged on the core 4+."""
    hole = building("hole", 1).replace(kind=kind)
    state = battle("ba", [hole], [unit("sq", structure="hole", floor=0, models=5)])
    out = resolve("ba_damage", state, {"target": "sq", "hits": 2}, ScriptedDice([4, 5]))
    assert out.dice[0].purpose == f"Damage on sq ({need}+)"
    assert [(e.type, e.n) for e in out.effects] == [("casualties", 2 if need == 4 else 1)]


def test_cover_modifiers():
    house_ = building("house")
    assert to_hit_modifier(house_) == -2 and to_hit_modifier(bunker()) == -4
    assert to_hit_modifier(bunker(), flamethrower=True) == 0 and to_hit_modifier(house_, he=True) == 0


def test_plunging_fire():
    assert plunging_fire_bonus(1, 9, True) == 1
    assert plunging_fire_bonus(0, 9, True) == 0
    assert plunging_fire_bonus(1, 13, True) == 0
    assert plunging_fire_bonus(2, 9, True, indirect=True) == 0  # already has its own +1


def test_firing_out_and_moving_in():
    h = building("house", 2).replace(floors=(Floor(0, openings={"front": 2, "left": 1}), Floor(1, roof=True)))
    assert max_shooters(h, 0, "front") == 4 and max_shooters(h, 0, "left") == 2 and max_shooters(h, 0, "rear") == 0
    assert max_shooters(h, 1, "rear") == 5
    state = battle("ba", [h], [unit("a", structure="house", floor=0), unit("b"), unit("gun", kind="artillery")])
    assert "one unit per floor" in entry_problem(state, state.units["b"], state.structures["house"])
    assert entry_problem(state, state.units["b"], state.structures["house"], 1) is None
    assert "only infantry" in entry_problem(state, state.units["gun"], state.structures["house"], 1)


@pytest.mark.parametrize("kind", ["foxhole", "trench", "emplacement"])
@pytest.mark.parametrize("action, inputs", [
    ("ba_he", {"weapon": "he_2d6", "target": "sq", "hit": "yes"}),
    ("ba_indirect", {"weapon": "he_2d6", "mode": "air_strike", "target": "sq", "hit": "yes"}),
    ("ba_flamethrower", {"weapon": "ba_flamethrower", "target": "sq", "hit": "yes", "hits": 2}),
    ("ba_barrage", {"hits": "sq=3"}),
])
def test_building_attacks_refuse_what_is_not_a_building(kind, action, inputs):
    """Seed 001's attacks on buildings cover buildings and bunkers; a foxhole, trench or emplacement is
    cover under the core rules (seed 003: "should not be considered Fortifications"), so no HE value of
    hits, no collapse: refused, naming the structure, with where to go instead."""
    hole = building("hole", 1).replace(kind=kind)
    state = battle("ba", [hole], [unit("sq", structure="hole", floor=0, models=5)])
    with pytest.raises(ActionRefused) as refused:
        resolve(action, state, {"structure": "hole", **inputs}, RandomDice(1))
    assert refused.value.field == "structure"
    assert f"Hole is a {kind}, not a building or bunker" in refused.value.message
    assert "Damage rolls for hits on a unit" in refused.value.message
    # The same attack at a building resolves (the refusal is about the kind, not the inputs).
    house_ = hole.replace(kind="building", floors=(Floor(0, "sq", {"front": 1}),))
    resolve(action, battle("ba", [house_], [unit("sq", structure="hole", floor=0, models=5)]),
            {"structure": "hole", **inputs}, RandomDice(1))


def test_a_bunker_is_fired_into_and_out_of_through_its_slits_only():
    """BA-52: "firing in or out only through firing slits (never doors or solid walls)". A pillbox with a
    door at the back and a slit in front: the flamethrower may go in through the slit, not the door; its
    crew shoot out of the slit's side only. A building's door is a gap like any other (BA-29)."""
    pillbox = bunker().replace(floors=(Floor(0, openings={"front": 1, "rear": 1}, slits={"front": 1}),))
    house_ = building("house", 1).replace(floors=(Floor(0, openings={"rear": 1}),))
    state = battle("ba", [pillbox, house_], [unit("b", structure="pillbox", floor=0),
                                             unit("sq", structure="house", floor=0)])
    flame = {"weapon": "ba_flamethrower", "hit": "yes", "hits": 2}
    with pytest.raises(ActionRefused) as err:
        resolve("ba_flamethrower", state, {**flame, "structure": "pillbox", "target": "b", "side": "rear"},
                ScriptedDice([]))
    assert (err.value.field, err.value.value) == ("side", "rear")
    assert "no firing slit (a bunker is fired into through its slits only, never its door) on its rear side" \
        in err.value.message
    assert kinds(resolve("ba_flamethrower", state, {**flame, "structure": "pillbox", "target": "b", "side": "front"},
                         ScriptedDice([]))) == [("hits", "b")]
    assert ("hits", "sq") in kinds(resolve("ba_flamethrower", state, {**flame, "structure": "house", "target": "sq",
                                                                      "side": "rear"}, ScriptedDice([3])))
    assert max_shooters(pillbox, 0, "front") == 2 and max_shooters(pillbox, 0, "rear") == 0
    assert max_shooters(house_, 0, "rear") == 2
    # A bunker with a door and no slit at all cannot be flamed, whatever side is named.
    shut = bunker().replace(floors=(Floor(0, openings={"rear": 1}),))
    with pytest.raises(ActionRefused, match="no firing slit"):
        resolve("ba_flamethrower", battle("ba", [shut], [unit("b", structure="pillbox", floor=0)]),
                {**flame, "structure": "pillbox", "target": "b"}, ScriptedDice([]))


def test_the_log_says_the_pins_an_he_shell_places_on_the_unit_it_hits():
    """The shell's pin went on the squad it hit but its entry said only the hits: players reading the
    log took it that no pin was placed. It says the pins as the flamethrower's does; a bunker's crew is
    said pinned already, and nobody is left to pin in a building that collapses."""
    state = house(units=[squad()])
    inp = {"weapon": "he_2d6", "structure": "house", "target": "sq", "hit": "yes", "pins": 1}
    out = resolve("ba_he", state, inp, ScriptedDice([2, 1]))
    assert [(e.type, e.target, e.n) for e in out.effects if e.type in ("pin", "hits")] == [("pin", "sq", 1), ("hits", "sq", 3)]
    assert out.summary == "2D6 shell explodes on the ground floor: 3 hits; sq takes 3 hits; sq +1 pin"
    assert resolve("ba_he", state, {**inp, "pins": 2}, ScriptedDice([2, 1])).summary.endswith("; sq +2 pins")
    assert "pin" not in resolve("ba_he", state, {**inp, "pins": 0}, ScriptedDice([2, 1])).summary
    collapse = resolve("ba_he", state, inp, ScriptedDice([6, 5]))
    assert "collapses" in collapse.summary and "pin" not in collapse.summary
