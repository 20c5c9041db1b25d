"""LaserGrenadiers structures and weapons: seeds 000 and 004."""

import pytest

from apps.rules import ActionRefused, InputError, ScriptedDice, apply, resolve, tables
from apps.rules.lg import attack_factor, damage_points, fire_chance, range_band, rotary_hits, vaporshock_premature
from apps.rules.state import WEAPONS, Fire, StructureState
from apps.rules.turns import collapse_stands_on

from .builders import building, battle, unit


def types(outcome):
    return [e.type for e in outcome.effects]


def lg(structures=(), units=(), **options):
    return battle("lg", structures, units, **options)


# -------------------------------------------------------------- seed 000: combat engineers

def test_chainsaw_breaches_a_three_point_brick_wall_in_the_fourth_turn():
    """Seed 000 example: hit+penetrate, hit+penetrate, fail to penetrate, hit+penetrate → breached."""
    state = lg([building("wall", 1)])
    turns = [("yes", "yes"), ("yes", "yes"), ("yes", "no"), ("yes", "yes")]
    progress = []
    for turn, (hit, pen) in enumerate(turns, 1):
        inputs = {"structure": "wall", "hit": hit, "penetrated": pen}
        if turn == 1:
            inputs["needed"] = 3
        outcome = resolve("lg_breach", state, inputs, ScriptedDice([]))
        state = apply(state, outcome)
        progress.append((state.structures["wall"].breach_scored, state.structures["wall"].breached))
    assert progress == [(1, False), (2, False), (2, False), (3, True)]
    with pytest.raises(ActionRefused):
        resolve("lg_breach", state, {"structure": "wall", "hit": "yes", "penetrated": "yes"}, ScriptedDice([]))


def test_with_damage_points_each_breaching_success_also_deals_a_point():
    """Seed 000: "Each successful attack counts as one hit, causing one point of damage"; with the
    optional damage points in play (A-LG-24) the wall's damage follows its breach count, and a
    structure whose points run out is destroyed. Without them only the breach counter moves."""
    wall = building("wall", 1).replace(damage_max=2)
    state = lg([wall], damage_variant=2)
    first = resolve("lg_breach", state, {"structure": "wall", "hit": "yes", "penetrated": "yes", "needed": 3},
                    ScriptedDice([]))
    state = apply(state, first)
    assert (state.structures["wall"].breach_scored, state.structures["wall"].damage_taken) == (1, 1)
    assert first.summary == "Wall: 1/3 towards a breach; 1 damage (1/2)"
    missed = apply(state, resolve("lg_breach", state, {"structure": "wall", "hit": "yes", "penetrated": "no"},
                                  ScriptedDice([])))
    assert missed.structures["wall"].damage_taken == 1
    second = resolve("lg_breach", state, {"structure": "wall", "hit": "yes", "penetrated": "yes"}, ScriptedDice([]))
    assert "untenable" in types(second) and apply(state, second).structures["wall"].damage_taken == 2
    plain = apply(lg([wall]), resolve("lg_breach", lg([wall]), {"structure": "wall", "hit": "yes", "penetrated": "yes",
                                                                  "needed": 3}, ScriptedDice([])))
    assert (plain.structures["wall"].breach_scored, plain.structures["wall"].damage_taken) == (1, 0)


def test_rubble_and_destroyed_structures_cannot_be_breached():
    """A wall brought down (a collapse check) or a structure whose points ran out (untenable) has nothing
    left to breach: a breaching success on the farmhouse's rubble had scored 1/3 and a damage point on it.
    The form offers neither (the field's fit), and the rule refuses it, naming what it is."""
    from apps.rules import spec

    rubble = building("farm", 1, damage_max=18, damage_taken=14, collapsed=True, destroyed=True)
    ruin = building("shed", 1, damage_max=4, damage_taken=4, destroyed=True, impassable=True)
    state = lg([rubble, ruin, building("wall", 1)], damage_variant=2)
    fits = next(f.fits for f in spec("lg_breach").fields if f.name == "structure")
    assert [s.id for s in state.structures.values() if fits(s)] == ["wall"]
    for sid, why in (("farm", "Farm is rubble"), ("shed", "Shed is destroyed")):
        with pytest.raises(ActionRefused) as err:
            resolve("lg_breach", state, {"structure": sid, "hit": "yes", "penetrated": "yes", "needed": 3},
                    ScriptedDice([]))
        assert (err.value.field, err.value.message) == ("structure", f"{why}: there is no wall left to breach")


def test_rubble_is_not_offered_as_a_target_and_is_refused_as_rubble():
    """The attack form offered "Farmhouse (rubble)" after its collapse check, and then refused it as
    "already destroyed": it is offered no more, and the refusal says what it is."""
    from apps.rules import spec

    rubble = building("farm", 1, damage_max=18, damage_taken=14, collapsed=True, destroyed=True)
    ruin = building("shed", 1, damage_max=4, damage_taken=4, destroyed=True, impassable=True)
    state = lg([rubble, ruin, building("house", 1)], damage_variant=2)
    fits = next(f.fits for f in spec("lg_attack_structure").fields if f.name == "structure")
    assert [s.id for s in state.structures.values() if fits(s)] == ["house"]
    shot = {"weapon": "laser_rifle", "hit": "yes", "penetrated": "yes"}
    for sid, message in (("farm", "Farm is rubble"), ("shed", "Shed is already destroyed")):
        with pytest.raises(ActionRefused) as err:
            resolve("lg_attack_structure", state, {**shot, "structure": sid}, ScriptedDice([]))
        assert (err.value.field, err.value.message) == ("structure", message)


def test_breach_needs_its_count_first():
    with pytest.raises(InputError) as err:
        resolve("lg_breach", lg([building("wall", 1)]), {"structure": "wall", "hit": "yes"}, ScriptedDice([]))
    assert err.value.field == "needed"


# -------------------------------------------------------------- seed 000: damage point variants

@pytest.mark.parametrize("variant, penetrated, points", [
    (1, "yes", 1), (1, "no", 0),
    (2, "yes", 7), (2, "no", 1),
    (3, "yes", 14), (3, "no", 2),
])
def test_heavy_fusion_rifle_under_each_variant(variant, penetrated, points):
    """Seed 000 variant table: V1 penetration 1; V2 hit 1 / penetration 7; V3 hit 2 / penetration 14."""
    state = lg([building("house", 1, wall_material="stucco", damage_max=24)], damage_variant=variant, fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "heavy_fusion_rifle", "structure": "house", "hit": "yes",
                                                 "penetrated": penetrated}, ScriptedDice([]))
    assert sum(e.n for e in out.effects if e.type == "damage") == points
    assert apply(state, out).structures["house"].damage_taken == points


def test_variant_three_does_not_double_weapons_without_an_effect_area():
    assert damage_points(3, 5, 0, 1, 1) == 5
    assert damage_points(3, 5, 2.0, 1, 1) == 10


def test_damage_stops_at_the_maximum_and_the_structure_becomes_untenable():
    state = lg([building("house", 1, damage_max=24, damage_taken=20)], damage_variant=3, fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "heavy_fusion_rifle", "structure": "house", "hit": "yes",
                                                 "penetrated": "yes"}, ScriptedDice([]))
    assert [(e.type, e.n) for e in out.effects] == [("damage", 4), ("untenable", 0)]
    after = apply(state, out).structures["house"]
    assert (after.damage_taken, after.destroyed, after.impassable) == (24, True, True)


def test_no_damage_points_when_the_battle_ignores_them():
    state = lg([building("house", 1, damage_max=24)], damage_variant=0, fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "heavy_fusion_rifle", "structure": "house", "hit": "yes",
                                                 "penetrated": "yes"}, ScriptedDice([]))
    assert out.effects == ()


# -------------------------------------------------------------- seed 000: collapse check

@pytest.mark.parametrize("taken, face, collapses", [(10, 6, False), (10, 7, True)])
def test_forty_percent_collapse_check(taken, face, collapses):
    """Seed 000: 40% damage collapses unless 1–6 is rolled on a d10 (24 points, 10 lost = 41.7%)."""
    state = lg([building("house", 1, damage_max=24, damage_taken=taken)], collapse_check=True)
    out = resolve("upkeep", state, {}, ScriptedDice([face]))
    assert ("collapse" in types(out)) is collapses
    assert out.dice[0].target == "stands on 1–6"


@pytest.mark.parametrize("taken, stands_on", [(0, None), (9, None), (10, 9), (19, 9), (40, 6), (45, 6), (95, 1),
                                              (99, 1), (100, None)])
def test_collapse_generalisation(taken, stands_on):
    """A-LG-2: percentage rounded down to tens, stands on d10 ≤ 10 − tens; no check under 10%."""
    assert collapse_stands_on(taken, 100) == stands_on


def test_collapse_checks_take_the_players_dice_in_the_order_of_the_structure_list():
    """The players type the upkeep's dice in one line: the first goes to the first damaged structure they
    see in the list (by name). Sorted as text, s100 (House) came before s99 (Barn) and took the Barn's die."""
    state = lg([building("s100", 1, name="House", damage_max=10, damage_taken=5),
                building("s99", 1, name="Barn", damage_max=10, damage_taken=5)], collapse_check=True)
    out = resolve("upkeep", state, {}, ScriptedDice([3, 8]))
    assert [(d.purpose, d.value) for d in out.dice] == [("Collapse check, Barn (50% damaged)", 3),
                                                       ("Collapse check, House (50% damaged)", 8)]
    assert [e.target for e in out.effects if e.type == "collapse"] == ["s100"]


def test_collapse_check_only_when_the_option_is_on_and_once_per_turn():
    state = lg([building("house", 1, damage_max=10, damage_taken=5)])
    out = resolve("upkeep", state, {}, ScriptedDice([]))
    assert out.dice == ()
    with pytest.raises(ActionRefused):
        resolve("upkeep", apply(state, out), {}, ScriptedDice([]))


def test_a_collapse_puts_the_fire_out_so_the_next_upkeep_leaves_it_alone():
    """The burning barn collapses at its check: rubble, no fire; next turn nothing grows or attacks."""
    barn = building("barn", 1, damage_max=24, damage_taken=10, fire=Fire(4.0, 1))
    state = lg([barn], [unit("t1", structure="barn", floor=0, models=1)], collapse_check=True)
    out = resolve("upkeep", state, {}, ScriptedDice([7]))
    after = apply(state, out).structures["barn"]
    assert "collapse" in types(out) and after.collapsed and after.fire is None
    # t1 has had its initiative, so the turn may end (LG-39).
    state = apply(state, out).replace(sequence=state.sequence.replace(activated=("t1",)))
    state = apply(state, resolve("end_turn", state, {}, ScriptedDice([])))
    out = resolve("upkeep", state, {}, ScriptedDice([]))
    assert [e.type for e in out.effects] == ["upkeep_done"] and "nothing to do" in out.summary


# -------------------------------------------------------------- seed 000: fires

def test_fire_table_and_weather():
    assert fire_chance("laser_cannon", "clear") == 8
    assert fire_chance("laser_small_arms", "rain") == 4  # catalogue: laser in rain 1–8 → 1–4
    assert fire_chance("high_explosive", "rain") == 2
    assert fire_chance("flamer_small_arms", "mist") == 8
    assert fire_chance("bullet", "clear") == 0  # not in the table: never starts a fire
    assert {k: fire_chance(k, "clear") for k in tables.FIRE_CHANCE} == tables.FIRE_CHANCE


def test_fire_chance_floors_at_zero(monkeypatch):
    monkeypatch.setitem(tables.FIRE_CHANCE, "laser", 3)
    assert fire_chance("laser_cannon", "rain") == 0


@pytest.mark.parametrize("weather, face, fire", [("clear", 6, True), ("clear", 7, False), ("rain", 2, True),
                                                 ("rain", 3, False), ("mist", 4, True), ("mist", 5, False)])
def test_high_explosive_sets_a_timber_shed_alight(weather, face, fire):
    state = lg([building("shed", 1, wall_material="timber_light")], weather=weather)
    out = resolve("lg_attack_structure", state, {"weapon": "he_shell", "structure": "shed", "hit": "yes"},
                  ScriptedDice([face]))
    assert ("fire_started" in types(out)) is fire


def test_fire_only_on_flammable_surfaces_even_without_penetration():
    state = lg([building("house", 1, wall_material="brick", roof_material="thatch")])
    wall = resolve("lg_attack_structure", state, {"weapon": "laser_rifle", "structure": "house", "hit": "yes"},
                   ScriptedDice([]))
    assert wall.dice == ()
    roof = resolve("lg_attack_structure", state, {"weapon": "laser_rifle", "structure": "house", "hit": "yes",
                                                  "surface": "roof"}, ScriptedDice([8]))
    assert types(roof) == ["fire_started"]
    assert resolve("lg_attack_structure", state, {"weapon": "laser_rifle", "structure": "house", "hit": "no",
                                                  "surface": "roof"}, ScriptedDice([])).effects == ()


def test_a_structure_without_a_roof_cannot_be_hit_on_its_roof():
    """A foxhole has sandbag walls (AC 4) and no roof: "Roof" was resolved against no armour class at all
    and scored its damage (5 of 5 points: destroyed). Refused beside the surface field, nothing changed."""
    foxhole = StructureState("foxhole", "foxhole", name="Foxhole", wall_material="sandbags", damage_max=5)
    state = lg([foxhole], damage_variant=2)
    shot = {"weapon": "laser_rifle", "structure": "foxhole", "hit": "yes", "penetrated": "yes"}
    with pytest.raises(ActionRefused) as err:
        resolve("lg_attack_structure", state, {**shot, "surface": "roof"}, ScriptedDice([]))
    assert (err.value.field, err.value.message) == ("surface", "Foxhole has no roof: fire at its wall")
    assert types(resolve("lg_attack_structure", state, shot, ScriptedDice([]))) == ["damage", "untenable"]
    # A military roof known only by its armour class (Rule 16) is a roof.
    state = lg([foxhole.replace(roof_ac=9)], damage_variant=2)
    assert resolve("lg_attack_structure", state, {**shot, "surface": "roof"}, ScriptedDice([])).effects


def test_a_flammable_roof_does_not_make_the_brick_walls_burn():
    """The builder flags a brick house with a timber roof flammable (either material burns); a hit on its
    brick wall still rolls no fire (LG-25: the surface struck must contain or be made of what burns).
    A structure flagged flammable whose materials do not burn (a concrete store of fuel and fabric)
    burns wherever it is hit."""
    house_ = building("house", 1, wall_material="brick", roof_material="wood_and_tile", flammable=True)
    store = building("store", 1, wall_material="concrete_reinforced", roof_material="concrete_reinforced",
                     flammable=True)
    state = lg([house_, store])
    shot = {"weapon": "laser_rifle", "hit": "yes"}
    assert resolve("lg_attack_structure", state, {**shot, "structure": "house"}, ScriptedDice([])).dice == ()
    assert types(resolve("lg_attack_structure", state, {**shot, "structure": "house", "surface": "roof"},
                         ScriptedDice([8]))) == ["fire_started"]
    for surface in ("wall", "roof"):
        assert types(resolve("lg_attack_structure", state, {**shot, "structure": "store", "surface": surface},
                             ScriptedDice([8]))) == ["fire_started"]


def test_fire_grows_every_second_turn_and_triples_in_strong_wind():
    def sizes(weather, area=1000):
        state = lg([building("barn", 1, area=area, fire=Fire(1, 3))], weather=weather).replace(turn=3)
        seen = []
        for _ in range(5):
            state = apply(state, resolve("upkeep", state, {}, ScriptedDice([])))
            seen.append(state.structures["barn"].fire.size)
            state = apply(state, resolve("end_turn", state, {}, ScriptedDice([])))
        return seen

    assert sizes("clear") == [1, 1, 2, 2, 4]  # turns 3..7: doubles at 5 and 7
    assert sizes("very_strong_wind") == [1, 1, 3, 3, 9]
    assert sizes("clear", area=3) == [1, 1, 2, 2, 3]  # no more than the building itself


def test_burning_structure_attacks_the_pieces_inside_with_attack_factor_five():
    state = lg([building("barn", 2, fire=Fire(2, 1))], [unit("t1", structure="barn", floor=1, models=1)])
    out = resolve("upkeep", state, {}, ScriptedDice([]))
    assert [(e.type, e.target, e.n) for e in out.effects if e.type == "fire_attack"] == [("fire_attack", "t1", 5)]
    through = resolve("lg_fire_through", state, {"unit": "t1", "structure": "barn"}, ScriptedDice([]))
    assert through.effects[0].n == 5


def test_the_players_enter_who_a_fire_eliminated():
    """The fire's AF 5 attack is resolved with the rulebook (Rule 16); the players enter whom it
    eliminated, among those it attacked. A fire is no blast warhead: nobody else is marked."""
    state = lg([building("barn", 2, fire=Fire(2, 1))], [unit("t1", structure="barn", floor=0, models=1),
                                                         unit("t2", structure="barn", floor=1, models=1),
                                                         unit("t3", models=1)])
    out = resolve("lg_fire_casualties", state, {"structure": "barn", "caught": "t1,t2", "eliminated": "t2"},
                  ScriptedDice([]))
    after = apply(state, out)
    assert after.units["t2"].destroyed and not after.units["t1"].destroyed and not after.units["t1"].incapacitated
    assert out.summary == "Fire in Barn: t2 eliminated (1 of 2 attacked survive)"
    with pytest.raises(InputError) as err:
        resolve("lg_fire_casualties", state, {"structure": "barn", "caught": "t1", "eliminated": "t3"},
                ScriptedDice([]))
    assert (err.value.field, err.value.message) == ("eliminated", "Of those, eliminated: t3 is not among them")


# -------------------------------------------------------------- seed 000: troops inside

@pytest.mark.parametrize("weapon, troops, face, hit", [
    ("laser_rifle", "known", 4, True), ("laser_rifle", "known", 5, False),  # pulse 40%
    ("bolt_rifle", "known", 3, True), ("bolt_rifle", "known", 4, False),  # single shot 30%
    ("rotary_cone_gun", "known", 5, True), ("rotary_cone_gun", "known", 6, False),  # rotary 50%
    ("bolt_rifle", "exploratory", 1, True), ("bolt_rifle", "exploratory", 2, False),  # 10%
    ("laser_rifle", "exploratory", 2, True), ("laser_rifle", "exploratory", 3, False),  # 20%
    ("rotary_cone_gun", "exploratory", 3, True), ("rotary_cone_gun", "exploratory", 4, False),  # 30%
])
def test_chance_to_hit_pieces_inside_after_penetrating(weapon, troops, face, hit):
    state = lg([building("house", 1, wall_material="stucco")], [unit("t1", structure="house", floor=0, models=1)],
               fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": weapon, "structure": "house", "hit": "yes",
                                                 "penetrated": 1, "troops": troops, "targets": "t1"},
                  ScriptedDice([face]))
    assert ("hits" in types(out)) is hit


def test_a_one_face_chance_reads_as_that_face_not_a_range_of_one():
    """Exploratory single-shot fire (10%) showed its die as "1–1 succeeds", a 90% damaged structure's
    collapse check as "stands on 1–1" and a detection at 0 +1 as "1–0 +1 … = 1–1": a chance of one face
    is that face. A detection number that leaves no face says so instead of "needed 1–0"."""
    state = lg([building("house", 1, wall_material="stucco")], [unit("t1", structure="house", floor=0, models=1)],
               fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "bolt_rifle", "structure": "house", "hit": "yes",
                                                 "penetrated": 1, "troops": "exploratory", "targets": "t1"},
                  ScriptedDice([2]))
    assert (out.dice[0].purpose, out.dice[0].target) == ("Exploratory fire at t1 (10%)", "1 succeeds")
    upkeep = resolve("upkeep", lg([building("house", 1, damage_max=10, damage_taken=9)], collapse_check=True), {},
                     ScriptedDice([2]))
    assert upkeep.dice[0].target == "stands on 1"
    assert upkeep.summary == "Turn 1 upkeep: House collapses (90% damaged, stands only on 1)"
    sniper = lg([], [unit("sniper", side="A", models=1)])
    seen = resolve("lg_detect", sniper, {"target": "sniper", "weapon": "bolt_rifle", "base": 0}, ScriptedDice([1]))
    assert (seen.dice[0].purpose, seen.dice[0].target) == ("Detect sniper: 0 +1 for the Bolt rifle = 1", "1 succeeds")
    assert seen.summary == "sniper detected (needed 1)"
    unseen = resolve("lg_detect", sniper, {"target": "sniper", "weapon": "laser_rifle", "base": 0}, ScriptedDice([]))
    assert types(unseen) == ["not_detected"] and not unseen.dice
    assert unseen.summary == "sniper not detected (no face detects it: detection number 0)"


def test_exploratory_fire_at_an_area_nobody_is_in_still_resolves_against_the_structure():
    """Seed 000: exploratory fire is made "with no idea if enemy pieces are present"; one roll per piece
    actually in the designated area (A-LG-4), so none when the area is empty. It was refused ("name the
    pieces the attack is aimed at inside"), a dead end on a structure with nobody in it."""
    state = lg([building("house", 1, wall_material="stucco", damage_max=24)], [], fires=False, damage_variant=2)
    out = resolve("lg_attack_structure", state, {"weapon": "laser_rifle", "structure": "house", "hit": "yes",
                                                 "penetrated": 1, "troops": "exploratory"}, ScriptedDice([]))
    assert types(out) == ["damage"] and not out.dice
    assert out.summary.endswith("exploratory fire: no piece in the target area")
    # A known location is a piece the attacker knows is there: it must still be named.
    with pytest.raises(InputError) as error:
        resolve("lg_attack_structure", state, {"weapon": "laser_rifle", "structure": "house", "hit": "yes",
                                               "penetrated": 1, "troops": "known"}, ScriptedDice([]))
    assert error.value.field == "targets" and "known location" in error.value.message


def test_effect_area_weapons_hit_everyone_in_the_projected_half():
    state = lg([building("house", 1, wall_material="stucco")],
               [unit("t1", structure="house", floor=0, models=1), unit("t2", structure="house", floor=0, models=1)],
               fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "hammerhead_grenade", "structure": "house", "hit": "yes",
                                                 "penetrated": "yes", "troops": "known", "targets": ["t1", "t2"]},
                  ScriptedDice([]))
    assert [(e.type, e.target) for e in out.effects] == [("hits", "t1"), ("hits", "t2")]


def test_no_chance_inside_without_penetration():
    state = lg([building("house", 1)], [unit("t1", structure="house", floor=0, models=1)], fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "laser_rifle", "structure": "house", "hit": "yes",
                                                 "troops": "known", "targets": "t1"}, ScriptedDice([]))
    assert out.effects == ()


def test_targets_must_be_inside():
    state = lg([building("house", 1)], [unit("t1", models=1)])
    with pytest.raises(InputError) as err:
        resolve("lg_attack_structure", state, {"weapon": "laser_rifle", "structure": "house", "hit": "yes",
                                               "troops": "known", "targets": "t1"}, ScriptedDice([]))
    assert (err.value.field, err.value.value) == ("targets", "t1")


def test_bolt_rifle_detection_example():
    """Seed 000: more than two-thirds concealment → 1–3, +1 for the bolt rifle → 1–4."""
    state = lg([], [unit("sniper", side="A", models=1)])
    assert types(resolve("lg_detect", state, {"target": "sniper", "weapon": "bolt_rifle"}, ScriptedDice([4]))) \
        == ["detected"]
    assert types(resolve("lg_detect", state, {"target": "sniper", "weapon": "bolt_rifle"}, ScriptedDice([5]))) \
        == ["not_detected"]
    out = resolve("lg_detect", state, {"target": "sniper", "weapon": "laser_rifle"}, ScriptedDice([4]))
    assert types(out) == ["not_detected"] and "1–3" in out.dice[0].purpose


def test_no_detection_of_a_piece_shut_in_a_bunker_without_slits():
    """Seed 000: a bunker lacks "firing slits and embrasures" (LG-2), so a piece inside fires nothing out
    and cannot be the concealed piece that fired; one in a pillbox with slits (the seed's example) can."""
    from apps.rules.state import Floor
    from .builders import bunker
    shut = bunker("shut").replace(floors=(Floor(0, openings={"front": 1}),))
    state = lg([shut, bunker("pillbox")], [unit("inside", side="A", models=1, structure="shut", floor=0),
                                           unit("sniper", side="A", models=1, structure="pillbox", floor=0)])
    with pytest.raises(ActionRefused) as err:
        resolve("lg_detect", state, {"target": "inside", "weapon": "bolt_rifle"}, ScriptedDice([1]))
    assert err.value.field == "target" and "cannot fire out (seed 000): it is not the piece that fired" \
        in err.value.message
    assert types(resolve("lg_detect", state, {"target": "sniper", "weapon": "bolt_rifle"}, ScriptedDice([4]))) \
        == ["detected"]


# -------------------------------------------------------------- seed 004: weapons

@pytest.mark.parametrize("ac, af", [(6, 6), (2, 2), (0, 1), (9, 9)])
def test_anti_matter_attack_factor_is_the_armour_class_struck(ac, af):
    assert attack_factor(WEAPONS["anti_matter_missile"], ac) == af


@pytest.mark.parametrize("wall, af", [("brick", 6), ("concrete_reinforced", 9), ("stucco", 3)])
def test_anti_matter_penetration_damage_follows_the_wall(wall, af):
    state = lg([building("house", 1, wall_material=wall, damage_max=30)], damage_variant=2, fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "anti_matter_missile", "structure": "house", "hit": "yes",
                                                 "penetrated": "yes"}, ScriptedDice([]))
    assert out.effects[0].n == af
    out = resolve("lg_attack_structure", state, {"weapon": "anti_matter_missile", "structure": "house", "hit": "yes",
                                                 "penetrated": "yes", "armour_class": 0}, ScriptedDice([]))
    assert out.effects[0].n == 1


def test_attack_factor_table():
    assert attack_factor(WEAPONS["bullet_rifle"]) == 3
    assert attack_factor(WEAPONS["light_laser_cannon"]) == 7
    assert attack_factor(WEAPONS["particle_beam"]) == 8
    assert sorted({af for af in tables.ATTACK_FACTOR.values() if af}) == list(range(1, 10))


@pytest.mark.parametrize("distance, band", [(0, "short"), (20, "short"), (20.5, "medium"), (40, "medium"),
                                            (41, "long"), (60, "long"), (61, "out_of_range")])
def test_light_laser_cannon_range_bands(distance, band):
    """Seed 004: range factor 20 → short 0–20, medium 20+–40, long 40+–60."""
    assert range_band(WEAPONS["light_laser_cannon"], distance) == band


def test_minimum_range_and_out_of_range_refused():
    mortar = WEAPONS["light_laser_cannon"].replace(min_range=5)
    assert range_band(mortar, 4) == "too_close"
    state = lg([building("house", 1)])
    with pytest.raises(ActionRefused) as err:
        resolve("lg_attack_structure", state, {"weapon": "light_laser_cannon", "structure": "house", "hit": "yes",
                                               "range": 61}, ScriptedDice([]))
    assert (err.value.field, err.value.value) == ("range", 61.0)


@pytest.mark.parametrize("barrels, hits", [(3, 1), (4, 2), (5, 2), (6, 3), (7, 3), (8, 4), (10, 5)])
def test_rotary_barrels_to_hits(barrels, hits):
    assert rotary_hits(barrels) == hits


def test_rotary_hits_each_checked_for_penetration():
    state = lg([building("house", 1, damage_max=50)], damage_variant=2, fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "rotary_cone_gun", "structure": "house", "hit": "yes",
                                                 "penetrated": 2}, ScriptedDice([]))
    assert out.effects[0].n == 1 + 2 * 4  # 3 hits: one stops at the wall (1), two penetrate (AF 4 each)
    with pytest.raises(InputError) as err:
        resolve("lg_attack_structure", state, {"weapon": "rotary_cone_gun", "structure": "house", "hit": "yes",
                                               "penetrated": 4}, ScriptedDice([]))
    assert (err.value.field, err.value.value) == ("penetrated", 4)


def test_variable_fire_pulse_mode_reduces_the_attack():
    assert attack_factor(WEAPONS["particle_beam"], pulse=True) == 7
    assert attack_factor(WEAPONS["ray_rifle"], pulse=True) == 5
    assert attack_factor(WEAPONS["ray_rifle"]) == 6
    state = lg([building("house", 1, damage_max=50)], damage_variant=2, fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "particle_beam", "structure": "house", "hit": "yes",
                                                 "penetrated": "yes", "mode": "pulse"}, ScriptedDice([]))
    assert out.effects[0].n == 7
    assert out.summary.startswith("Particle beam in pulse mode (AF 7) hit")  # the log says why the AF is lower
    with pytest.raises(ActionRefused) as err:
        resolve("lg_attack_structure", state, {"weapon": "laser_rifle", "structure": "house", "hit": "yes",
                                               "mode": "pulse"}, ScriptedDice([]))
    assert err.value.field == "mode"


@pytest.mark.parametrize("troops, mode, face, hit", [
    ("known", "beam", 3, True), ("known", "beam", 4, False),  # beam 30%
    ("known", "pulse", 4, True), ("known", "pulse", 5, False),  # fired as pulses: 40%
    ("exploratory", "beam", 1, True), ("exploratory", "beam", 2, False),  # 10%
    ("exploratory", "pulse", 2, True), ("exploratory", "pulse", 3, False),  # 20%
])
def test_a_beam_weapon_fired_in_pulse_mode_has_a_pulse_weapons_chance_inside(troops, mode, face, hit):
    """Seed 004: in pulse mode a beam weapon fires pulses and takes "the +1 for pulse mode" in hit/miss;
    seed 000 gives "automatic and pulse weapons" 40% (known) and 20% (exploratory) inside. A particle beam
    in pulse mode paid the lower attack factor yet kept the beam's 30% and 10%."""
    state = lg([building("house", 1, wall_material="stucco")], [unit("t1", structure="house", floor=0, models=1)],
               fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "particle_beam", "structure": "house", "hit": "yes",
                                                 "penetrated": 1, "mode": mode, "troops": troops, "targets": "t1"},
                  ScriptedDice([face]))
    assert ("hits" in types(out)) is hit


def test_convergence_beams_hit_the_troops_through_the_walls():
    state = lg([building("house", 1, damage_max=24)], [unit("t1", structure="house", floor=0, models=1)],
               damage_variant=3)
    out = resolve("lg_attack_structure", state, {"weapon": "convergence_beam", "structure": "house", "hit": "yes",
                                                 "troops": "known", "targets": "t1"}, ScriptedDice([]))
    assert [(e.type, e.target) for e in out.effects] == [("hits", "t1")]


def test_blast_incapacitates_survivors_on_foot():
    state = lg([], [unit("t1", models=1), unit("t2", models=1), unit("tank", kind="vehicle"),
                    unit("done", models=1, acted=True)])
    out = resolve("lg_blast", state, {"weapon": "he_shell", "caught": "t1,t2,tank,done", "eliminated": "t2"},
                  ScriptedDice([]))
    assert [(e.type, e.target) for e in out.effects] == [("unit_destroyed", "t2"), ("incapacitated", "t1")]
    laser = resolve("lg_blast", state, {"weapon": "laser_rifle", "caught": "t1"}, ScriptedDice([]))
    assert laser.effects == ()
    # Eliminated only among those caught (Field.among): the others are refused at the field, nothing done.
    with pytest.raises(InputError) as err:
        resolve("lg_blast", state, {"weapon": "he_shell", "caught": "t1", "eliminated": "t1,t2,tank"}, ScriptedDice([]))
    assert (err.value.field, err.value.value, err.value.message) == (
        "eliminated", ["t2", "tank"], "Of those, eliminated: t2, tank are not among them")


def test_a_weapon_without_a_blast_records_its_eliminations_without_an_incapacitation_count():
    """The hit's follow-up records a laser rifle's or fusion rifle's eliminations here too; its summary read
    "Heavy fusion rifle: 1 eliminated, 0 incapacitated for the rest of the turn", as if survivors of a
    blast had been spared. A weapon that is no blast warhead incapacitates nobody (LG-63): it says so."""
    state = lg([], [unit("t1", models=1), unit("t2", models=1)])
    out = resolve("lg_blast", state, {"weapon": "laser_rifle", "caught": "t1,t2", "eliminated": "t2"},
                  ScriptedDice([]))
    assert [(e.type, e.target) for e in out.effects] == [("unit_destroyed", "t2")]
    assert out.summary == "Laser rifle: 1 eliminated (not a blast warhead: nobody is incapacitated)"
    blast = resolve("lg_blast", state, {"weapon": "he_shell", "caught": "t1,t2", "eliminated": "t2"},
                    ScriptedDice([]))
    assert blast.summary.endswith(": 1 eliminated, 1 incapacitated for the rest of the turn")


@pytest.mark.parametrize("variant, burning, points", [(2, False, 7), (2, True, 4), (3, False, 14), (3, True, 8)])
def test_vaporshock_landing_on_a_burning_building_attacks_with_af_4(variant, burning, points):
    """LG-62 / catalogue example: a vaporshock warhead that lands on a burning building ignites early, AF 4
    (normally 7), so a penetration scores 4 points under variant 2 and 8 under variant 3 (effect area)."""
    warhead = WEAPONS["he_shell"].replace(key="vaporshock", name="Vaporshock shell", weapon_type="vaporshock",
                                         effect_area=4.0)
    house = building("house", 1, damage_max=30, fire=Fire(2.0, 1) if burning else None)
    state = battle("lg", [house], [], [warhead], damage_variant=variant, fires=False)
    out = resolve("lg_attack_structure", state, {"weapon": "vaporshock", "structure": "house", "hit": "yes",
                                                 "penetrated": "yes"}, ScriptedDice([]))
    assert [(e.type, e.n) for e in out.effects] == [("damage", points)]
    assert ("AF 4" in out.summary) is burning


def test_vaporshock_goes_off_early_in_fire():
    assert vaporshock_premature(WEAPONS["he_shell"].replace(weapon_type="vaporshock", effect_area=4)) == (4, 2)
