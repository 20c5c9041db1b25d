"""Disposable Heroes fortification variant: seed 003."""

from fractions import Fraction

import pytest

from apps.rules import ActionRefused, InputError, OutcomeError, ScriptedDice, apply, resolve, tables
from apps.rules.dh import crew_riflemen, penetration_odds, ph_row, riflemen, validate_sheet
from apps.rules.outcome import Effect, Outcome
from apps.rules.state import FortSheet

from .builders import SHEETS, battle, building, fort


def kinds(out):
    return [(e.type, e.n) for e in out.effects]


def dh(*structures, **options):
    return battle("dh", structures, **options)


MAIN_GUN = {"weapon": "dh_45mm", "structure": "fort", "facing": "front", "hit": "yes"}
MISS = [1] * 10  # a blast pool in which every die is at or under any AP


# -------------------------------------------------------------- crew arithmetic and sheets

def test_crew_arithmetic_seed_example():
    assert riflemen(10, [3, 3]) == 2  # 10 − 3 − 3 = 4 → 2


@pytest.mark.parametrize("slug, men", [
    ("soviet-at-hmg-loghouse", 3), ("soviet-rifle-pit", 4), ("soviet-t-34-turret-bunker", 0),
    ("german-hmg-loghouse", 2), ("german-at-bunker", 2), ("german-hmg-blockhouse", 2),
    ("german-concrete-blockhouse", 6), ("german-h-35-atlantic-wall-turret-bunker", 0)])
def test_riflemen_on_every_sample_sheet(slug, men):
    assert crew_riflemen(fort(slug).crew) == men


def test_undermanned_and_destroyed_weapons():
    assert riflemen(5, [3, 3]) == 0
    assert riflemen(6, [3, 3]) == 0 and riflemen(7, [3, 3]) == 0 and riflemen(8, [3, 3]) == 1
    assert riflemen(4, ["all", None]) == 0
    crew = fort().crew
    crew = crew.replace(weapons=(crew.weapons[0].replace(destroyed=True), crew.weapons[1]))
    assert crew_riflemen(crew) == 3  # (10 − 3) // 2


def test_eight_sample_sheets_and_a_blank_are_sound():
    assert [d["name"] for d in tables.DH_SHEETS] == [
        "Soviet AT/HMG Loghouse", "Soviet Rifle Pit", "Soviet T-34 Turret Bunker", "German HMG Loghouse",
        "German AT Bunker", "German HMG Blockhouse", "German Concrete Blockhouse",
        "German H-35 Atlantic Wall Turret Bunker"]
    for d in tables.DH_SHEETS:
        assert validate_sheet(d) == [], d["slug"]
        assert FortSheet.from_dict(d).to_dict() == {k: v for k, v in d.items()}
    assert validate_sheet(tables.DH_BLANK_SHEET, blank_ok=True) == []
    assert ("locations.front[0].av", "is missing") in validate_sheet(tables.DH_BLANK_SHEET)


def test_sheet_values_transcribed():
    s = SHEETS["german-concrete-blockhouse"]
    assert (s.kind, s.dm, s.crew_total, s.top_av) == ("fort", -3, 24, 75)
    assert [(x.location, x.d10_from, x.d10_to, x.av) for x in s.locations["rear"]] == [
        ("Walls", 1, 9, 175), ("Entrance", 10, 10, 75)]
    assert SHEETS["german-at-bunker"].penetration_row == (17, 35, 53, 70, 88, 105, 123, 140, 158, 175)
    assert SHEETS["german-h-35-atlantic-wall-turret-bunker"].locations["front"][1].av == 61


def test_sheet_validation_names_each_problem():
    bad = {**tables.DH_SHEETS[0],
           "locations": {"front": [{"location": "Walls", "d10_from": 1, "d10_to": 8, "av": -5},
                                   {"location": "Vision", "d10_from": 8, "d10_to": 9, "av": 10}],
                         "side": [{"location": "Walls", "d10_from": 1, "d10_to": 10, "av": 75}],
                         "rear": [{"location": "Walls", "d10_from": 1, "d10_to": 10, "av": 50}],
                         "top": {"av": 25}},
           "crew_total": 5, "penetration_row": [12, 24, 36, 30, 60, 72, 84, 96, 108, 120]}
    problems = dict(validate_sheet(bad))
    assert problems["locations.front[0].av"] == "must not be negative (-5)"
    assert ("locations.front", "d10 results 10 hit no location") in validate_sheet(bad)
    assert any(p == "locations.front" and "8 hit two" in m for p, m in validate_sheet(bad))
    assert "cannot man" in problems["crew_total"]
    assert "lower than the column before" in problems["penetration_row[3]"]
    assert dict(validate_sheet({**tables.DH_SHEETS[0], "kind": "castle"}))["kind"]


def test_a_reversed_range_is_called_reversed_and_one_off_the_die_out_of_range():
    """An import's 8–1 said "not within 1–10", which it is: both results are on the die."""
    def problems(rows):
        sheet = {**tables.DH_SHEETS[0], "locations": {**tables.DH_SHEETS[0]["locations"], "front": rows}}
        return dict(validate_sheet(sheet))
    reversed_ = problems([{"location": "Walls", "d10_from": 8, "d10_to": 1, "av": 5},
                          {"location": "Vision", "d10_from": 9, "d10_to": 10, "av": 5}])
    assert reversed_["locations.front[0].d10"] == "range 8–1 is reversed: it runs from the lower result to the higher (1–8)"
    off_die = problems([{"location": "Walls", "d10_from": 1, "d10_to": 11, "av": 5}])
    assert off_die["locations.front[0].d10"] == "range 1–11 is not within 1–10"


def test_penetration_odds_per_facing():
    row = SHEETS["soviet-at-hmg-loghouse"].penetration_row  # the 45mm
    odds = penetration_odds(SHEETS["german-hmg-loghouse"], row)
    assert odds == {"front": Fraction(8, 10) * Fraction(3, 10) + Fraction(2, 10),
                    "side": Fraction(3, 10), "rear": Fraction(8, 10) * Fraction(6, 10) + Fraction(2, 10) * Fraction(9, 10),
                    "top": Fraction(8, 10)}


# -------------------------------------------------------------- penetrating hits table

@pytest.mark.parametrize("total, band", [(-3, "≤2"), (2, "≤2"), (3, "3–4"), (6, "5–6"), (8, "7–8"), (9, "9–10"),
                                         (10, "9–10"), (11, "11+"), (15, "11+")])
def test_ph_bands_with_the_overlap_read_as_9_10_then_11_plus(total, band):
    assert ph_row(total)["band"] == band


def test_ph_overlap_alternative_reading():
    assert ph_row(9, "10+")["band"] == "9" and ph_row(10, "10+")["band"] == "10+"


def test_overlap_at_ten_in_play():
    state = dh(fort(penetrating_hits=4))  # 45mm DM −1, loghouse DM 0, 4 PH: d10 7 → 10
    out = resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([1, 9, 7, *MISS]))
    assert ("destroyed", 0) in kinds(out) and out.of_type("ph_result")[0].note == "9–10"
    alt = resolve("dh_main_gun", dh(fort(penetrating_hits=4), dh_overlap="10+"), MAIN_GUN, ScriptedDice([1, 9, 7]))
    assert alt.of_type("ph_result")[0].note == "10+" and ("crew_casualties", 10) in kinds(alt)


def test_location_and_penetration_from_the_sheet():
    """DH-9/10: front d10 9 → Vision AV 10; 45mm pen d10 8 → 96 v AV 90 penetrates, 7 → 84 does not."""
    state = dh(fort())
    out = resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([9, 1, 1]))
    assert out.of_type("location_hit")[0].note == "front Vision" and out.of_type("penetrated")
    assert resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([3, 7])).of_type("not_penetrated")
    assert resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([3, 8, 1])).of_type("penetrated")
    rear = resolve("dh_main_gun", state, {**MAIN_GUN, "facing": "rear"}, ScriptedDice([3, 4]))
    assert rear.of_type("location_hit")[0].note == "rear Walls" and "AV 60" in rear.dice[1].purpose


def test_a_weapon_without_a_row_takes_penetration_from_the_players():
    """The seeds print rows only for the sheets' guns: a bazooka's penetration is the players' answer.
    Without it, the form is told which field to fill; with it, the location is still rolled."""
    from apps.rules.state import WeaponProfile

    bazooka = WeaponProfile("w_bazooka", "Bazooka", "dh", dh_category="infantry_at")
    state = battle("dh", [fort()], [], [bazooka])
    attack = {**MAIN_GUN, "weapon": "w_bazooka", "acquired": "yes"}
    with pytest.raises(InputError) as err:
        resolve("dh_main_gun", state, attack, ScriptedDice([3]))
    assert err.value.field == "penetration" and "from your rulebook's chart" in err.value.message
    out = resolve("dh_main_gun", state, {**attack, "penetration": "no"}, ScriptedDice([3]))
    assert out.of_type("not_penetrated") and [d.purpose for d in out.dice] == ["Hit location, front"]
    out = resolve("dh_main_gun", state, {**attack, "penetration": "yes"},
                  ScriptedDice([3, 6, *MISS]))
    assert out.of_type("penetrated") and out.of_type("ph_result")[0].note == "5–6"
    # A gun with its row still rolls, unless the players say otherwise.
    assert resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([3, 7])).of_type("not_penetrated")


def test_catalogue_example_45mm_against_the_german_hmg_loghouse():
    """DH-12: d10 6 → 5: blast AP 6, Guts, 2 PH. Next d10 6 → 6 − 1 + 2 = 7: blast AP 8, PH 4, an MG34 lost."""
    state = dh(fort())
    blast = [1, 2, 3, 6, 7, 8, 9, 10, 10, 10]  # four at or under AP 6, six at or under AP 8
    out = resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([1, 10, 6, *blast]))
    assert out.of_type("ph_result")[0].note == "5–6"
    assert kinds(out)[-3:] == [("crew_casualties", 4), ("penetrating_hits", 2), ("guts_check", 6)]
    state = apply(state, out)
    out = resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([1, 10, 6, *blast]))
    assert out.of_type("ph_result")[0].note == "7–8"
    assert ("crew_casualties", 6) in kinds(out) and out.of_type("weapon_destroyed")[0].ref == "MG34 HMG"
    state = apply(state, out)
    crew = state.structures["fort"].crew
    assert (crew.men, crew.penetrating_hits, crew.pins, crew.weapons[0].destroyed) == (0, 4, 0, True)


def test_catalogue_example_75mm_against_the_concrete_blockhouse():
    """DH-12: 7.5cm (DM 0) v Fort (DM −3) with 2 PH, d10 8 → 7: AP 8, +2 PH (4), one 10.5cm destroyed."""
    state = dh(fort("german-concrete-blockhouse", penetrating_hits=2))
    out = resolve("dh_main_gun", state, {**MAIN_GUN, "weapon": "dh_75mm", "facing": "top"},
                  ScriptedDice([10, 8, *([10] * 10)]))
    assert out.of_type("ph_result")[0].note == "7–8" and out.of_type("weapon_destroyed")[0].ref == "10.5cm"
    assert apply(state, out).structures["fort"].crew.penetrating_hits == 4


def test_catalogue_example_105mm_against_the_h35():
    """DH-11: 10.5cm (DM +2) v H-35 (DM +1), 1 previous PH, d10 5 → 9: survivors routed."""
    state = dh(fort("german-h-35-atlantic-wall-turret-bunker", penetrating_hits=1))
    out = resolve("dh_main_gun", state, {**MAIN_GUN, "weapon": "dh_105mm", "facing": "top"},
                  ScriptedDice([10, 5, *([10] * 10)]))
    assert out.of_type("ph_result")[0].note == "9–10"
    assert [e.type for e in out.effects][-3:] == ["destroyed", "pin", "rout"]
    crew = apply(state, out).structures["fort"].crew
    assert (crew.pins, crew.routed, crew.men) == (3, True, 2)


def test_blast_casualties_never_exceed_the_crew():
    state = dh(fort("german-h-35-atlantic-wall-turret-bunker"))
    out = resolve("dh_main_gun", state, {**MAIN_GUN, "weapon": "dh_105mm", "facing": "top"},
                  ScriptedDice([10, 5, *MISS]))
    assert ("crew_casualties", 2) in kinds(out)


def test_heaviest_weapon_is_the_attackers_choice_and_ignored_without_one():
    state = dh(fort("soviet-at-hmg-loghouse"))
    dice = [1, 10, 9, *([10] * 10)]  # 45mm DM −1: 9 → 8
    gun = resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice(dice))
    mg = resolve("dh_main_gun", state, {**MAIN_GUN, "heaviest": "machine_gun"},
                 ScriptedDice(dice))
    assert gun.of_type("weapon_destroyed")[0].ref == "45mm" and mg.of_type("weapon_destroyed")[0].ref == "Maxim"
    pit = resolve("dh_main_gun", dh(fort("soviet-rifle-pit")), MAIN_GUN,
                  ScriptedDice(dice))
    assert pit.of_type("ph_result")[0].note == "7–8" and not pit.of_type("weapon_destroyed")
    assert ("penetrating_hits", 2) in kinds(pit)
    # Neither kind stands (the rifle pit has none): the words do not name only the kind asked for.
    assert "Destroys Heaviest Weapon; 0 crew killed; no main gun or machine gun left to destroy" in pit.summary


def test_third_pin_routs():
    state = dh(fort(pins=2))
    out = resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([1, 10, 5, *([10] * 10)]))  # 4 → 3–4
    assert [e.type for e in out.effects][-1:] == ["guts_check"]
    state = apply(state, out)
    out = resolve("dh_guts", state, {"structure": "fort", "guts_passed": "no"}, ScriptedDice([]))
    assert [e.type for e in out.effects] == ["pin", "rout"]
    assert apply(state, out).structures["fort"].crew.pins == 3


def test_the_guts_check_comes_after_the_roll_that_calls_for_it():
    """Seed 003: the table's rows say "Guts Check" (not 9–10 nor the last row), and the check is taken
    "as normal with all normal modifiers": it is rolled once the row and the blast's casualties are known,
    so the attack asks nothing about it and says one is owed; the players then enter it."""
    from apps.rules import spec

    assert "guts_passed" not in [f.name for f in spec("dh_main_gun").fields]
    assert "guts_passed" not in [f.name for f in spec("dh_flamethrower").fields]
    state = dh(fort())
    out = resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([1, 10, 6, 1, 2, 3, 6, 7, 8, 9, 10, 10, 10]))
    assert kinds(out)[-3:] == [("crew_casualties", 4), ("penetrating_hits", 2), ("guts_check", 6)]
    assert not out.of_type("pin") and "the crew (6 left) takes a Guts check: roll it, then enter it" in out.summary
    state = apply(state, out)
    held = resolve("dh_guts", state, {"structure": "fort", "guts_passed": "yes"}, ScriptedDice([]))
    assert held.effects == () and held.summary == "German HMG Loghouse's crew: Guts check passed"
    failed = resolve("dh_guts", state, {"structure": "fort", "guts_passed": "no"}, ScriptedDice([]))
    assert kinds(failed) == [("pin", 1)] and apply(state, failed).structures["fort"].crew.pins == 1
    # 9–10 and 11+ call for none; nor does a crew the blast killed to the last man.
    routed = resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([1, 10, 9, *([10] * 10)]))  # 9 − 1 + 2 PH
    assert routed.of_type("ph_result")[0].note == "9–10" and not routed.of_type("guts_check")
    wiped = resolve("dh_main_gun", dh(fort(men=2)), MAIN_GUN, ScriptedDice([1, 10, 6, *MISS]))
    assert not wiped.of_type("guts_check")
    with pytest.raises(ActionRefused, match="no crew left to take a Guts check"):
        resolve("dh_guts", apply(dh(fort(men=2)), wiped), {"structure": "fort", "guts_passed": "no"}, ScriptedDice([]))


def test_flamethrower_penetrates_never_pins_and_routs_on_a_failed_guts_check():
    """DH-16 example: flamethrower v Soviet Rifle Pit, PH roll 4 → blast AP 3, Guts failed → rout, no pin."""
    state = dh(fort("soviet-rifle-pit"))
    out = resolve("dh_flamethrower", state, {"weapon": "dh_flamethrower", "structure": "fort", "hit": "yes"},
                  ScriptedDice([4, *([10] * 10)]))
    assert [e.type for e in out.effects] == ["penetrated", "ph_result", "penetrating_hits", "guts_check"]
    assert out.of_type("guts_check")[0].note == "flamethrower"
    state = apply(state, out)
    failed = resolve("dh_guts", state, {"structure": "fort", "guts_passed": "no", "flamethrower": "yes"},
                     ScriptedDice([]))
    assert [e.type for e in failed.effects] == ["rout"]
    assert apply(state, failed).structures["fort"].crew.pins == 0
    passed = resolve("dh_guts", state, {"structure": "fort", "guts_passed": "yes", "flamethrower": "yes"},
                     ScriptedDice([]))
    assert not passed.of_type("rout", "pin")


def test_a_flamethrower_that_destroys_the_fortification_routs_its_survivors_without_pins():
    """PH 9–10: destroyed, survivors routed; the table reaches the rout by "3 pins", but flamethrowers
    never pin (DH-16). A main gun's 9–10 still places them."""
    state = dh(fort("soviet-rifle-pit"))
    flamed = resolve("dh_flamethrower", state, {"weapon": "dh_flamethrower", "structure": "fort", "hit": "yes"},
                     ScriptedDice([9, *([10] * 10)]))
    assert [e.type for e in flamed.effects] == ["penetrated", "ph_result", "destroyed", "rout"]
    after = apply(state, flamed).structures["fort"].crew
    assert after.routed and after.pins == 0
    shelled = resolve("dh_main_gun", dh(fort()), MAIN_GUN, ScriptedDice([1, 10, 10, *([10] * 10)]))  # PH 10 − 1
    assert [e.type for e in shelled.effects][-3:] == ["destroyed", "pin", "rout"]


def test_small_arms_only_against_the_crew():
    state = dh(fort())
    with pytest.raises(ActionRefused) as err:
        resolve("dh_main_gun", state, {**MAIN_GUN, "weapon": "dh_rifle"}, ScriptedDice([]))
    assert (err.value.field, err.value.value) == ("weapon", "dh_rifle")
    with pytest.raises(ActionRefused):
        resolve("dh_small_arms", state, {"weapon": "dh_45mm", "structure": "fort", "shots": 3}, ScriptedDice([]))


@pytest.mark.parametrize("slug, second, hit", [("german-hmg-loghouse", 5, True), ("german-hmg-loghouse", 6, False),
                                               ("german-concrete-blockhouse", 5, False),
                                               ("german-concrete-blockhouse", 4, True)])
def test_small_arms_need_ones_then_fives_or_fours(slug, second, hit):
    out = resolve("dh_small_arms", dh(fort(slug)), {"weapon": "dh_rifle", "structure": "fort", "shots": 2},
                  ScriptedDice([1, 7, second]))
    assert kinds(out) == ([("crew_hits", 1)] if hit else [])


def test_small_arms_odds_are_bars_per_number_of_hits():
    """Not one line per path of natural 1s: "1 natural 1, 1 hit" with the chance of every 1-hit result
    misread the odds. A bar per number of hits, one for none, and the long tail as "or more"."""
    from apps.rules import odds
    state = dh(fort("german-hmg-loghouse"))  # a Bunker: second d10 ≤ 5, so 1/20 a shot
    bars = {m.label: m.value for m in odds("dh_small_arms", state, {"weapon": "dh_rifle", "structure": "fort",
                                                                    "shots": 3}).marginals if m.kind == "probability"}
    name = state.structures["fort"].label
    # A scale, not the likeliest first: none, 1, 2 … however the chances fall (40 shots: 2 hits likeliest).
    many = [m.label for m in odds("dh_small_arms", state, {"weapon": "dh_rifle", "structure": "fort",
                                                          "shots": 40}).marginals if m.kind == "probability"]
    assert many[:3] == [f"No hits on {name}'s crew", f"1 hit on {name}'s crew", f"2 hits on {name}'s crew"]
    assert many[-1].endswith(f"or more hits on {name}'s crew")
    assert bars == {f"No hits on {name}'s crew": Fraction(19, 20) ** 3,
                    f"1 hit on {name}'s crew": 3 * Fraction(1, 20) * Fraction(19, 20) ** 2,
                    f"2 or more hits on {name}'s crew": 1 - Fraction(19, 20) ** 3 - 3 * Fraction(1, 20) * Fraction(19, 20) ** 2}


def test_guts_only_when_small_arms_cause_casualties():
    state = dh(fort())
    assert resolve("dh_crew_casualties", state, {"structure": "fort", "casualties": 0}, ScriptedDice([])).effects == ()
    out = resolve("dh_crew_casualties", state, {"structure": "fort", "casualties": 1, "guts_passed": "no"},
                  ScriptedDice([]))
    assert kinds(out) == [("crew_casualties", 1), ("pin", 1)]
    with pytest.raises(InputError) as err:
        resolve("dh_crew_casualties", state, {"structure": "fort", "casualties": 11}, ScriptedDice([]))
    assert (err.value.field, err.value.value) == ("casualties", 11)
    # Come from the attack, the casualties cannot outnumber its hits: one wound roll per hit.
    with pytest.raises(InputError, match="1 hit can kill at most 1"):
        resolve("dh_crew_casualties", state, {"structure": "fort", "casualties": 2, "hits": 1}, ScriptedDice([]))



def test_casualties_that_call_for_a_guts_check_need_it_entered():
    """DH-5, DH-6: casualties that leave men standing call for the players' Guts check. Left alone, the
    field read as failed: a crew whose casualties were typed in from the follow-up link was pinned by a
    check nobody had rolled. Now it must be entered; none is asked where no check is taken (no
    casualties, the last men, a crew or unit already routed)."""
    from .builders import unit

    state = battle("dh", [fort(), fort("soviet-rifle-pit", sid="pit", men=4, pins=3, routed=True)],
                   [unit("sec", "B", models=5), unit("fled", "B", models=5, pins=3)])
    for action, inputs, who in (("dh_crew_casualties", {"structure": "fort"}, "German HMG Loghouse's crew"),
                                ("dh_casualties", {"target": "sec"}, "sec")):
        with pytest.raises(InputError) as err:
            resolve(action, state, {**inputs, "casualties": 2}, ScriptedDice([]))
        assert (err.value.field, err.value.value) == ("guts_passed", None)
        assert err.value.message == f"2 casualties call for a Guts check in {who}: roll it and say whether it passed"
        assert resolve(action, state, {**inputs, "casualties": 0}, ScriptedDice([])).effects == ()
    assert kinds(resolve("dh_crew_casualties", state, {"structure": "fort", "casualties": 10}, ScriptedDice([]))) == [
        ("crew_casualties", 10)]
    assert kinds(resolve("dh_crew_casualties", state, {"structure": "pit", "casualties": 1}, ScriptedDice([]))) == [
        ("crew_casualties", 1)]
    assert kinds(resolve("dh_casualties", state, {"target": "fled", "casualties": 1}, ScriptedDice([]))) == [
        ("casualties", 1)]

def test_acquisition_and_a_miss():
    state = dh(fort())
    assert resolve("dh_main_gun", state, {**MAIN_GUN, "acquired": "no"}, ScriptedDice([])).effects == ()
    assert resolve("dh_main_gun", state, {**MAIN_GUN, "hit": "no"}, ScriptedDice([])).effects == ()


def test_leaving_splits_the_crew_into_sections():
    state = dh(fort("german-concrete-blockhouse"), section_size=12)
    out = resolve("dh_leave", state, {"structure": "fort"}, ScriptedDice([]))
    assert [(e.type, e.n) for e in out.effects] == [("crew_leaves", 24), ("unit_created", 12), ("unit_created", 12)]
    after = apply(state, out)
    assert after.structures["fort"].crew.men == 0
    # They walked out: not lost, on a roster as the sections (the campaign tally counts them there).
    assert after.structures["fort"].crew.left == 24
    assert [(u.models, u.side, u.kind) for u in after.units.values()] == [(12, "B", "infantry")] * 2
    out = resolve("dh_leave", dh(fort("soviet-at-hmg-loghouse")), {"structure": "fort", "section_size": 5},
                  ScriptedDice([]))
    assert [e.n for e in out.effects[1:]] == [6, 6]
    with pytest.raises(ActionRefused):
        resolve("dh_leave", after, {"structure": "fort"}, ScriptedDice([]))


@pytest.mark.parametrize("men, sizes", [(25, [9, 8, 8]), (35, [9, 9, 9, 8]), (45, [9, 9, 9, 9, 9]), (14, [14]),
                                        (16, [8, 8])])
def test_a_crew_half_way_between_two_counts_of_sections_makes_the_larger(men, sizes):
    """Sections of ten: 25 men are 2.5 sections, 3 of them as near to ten as 2 (each 1.7 off against 2.5);
    a half always rounds the same way, never to whichever count is even."""
    f = fort("german-concrete-blockhouse")
    state = dh(f.replace(crew=f.crew.replace(men=men)), section_size=10)
    out = resolve("dh_leave", state, {"structure": "fort"}, ScriptedDice([]))
    assert [e.n for e in out.effects if e.type == "unit_created"] == sizes


def test_a_section_moved_back_into_its_fortification_rejoins_its_crew_and_keeps_the_crews_pins():
    state = dh(fort("german-concrete-blockhouse"), section_size=12)
    state = apply(state, resolve("dh_leave", state, {"structure": "fort"}, ScriptedDice([])))
    one, two = state.units
    assert state.units[one].crew_of == "fort"
    state = apply(state, resolve("dh_casualties", state, {"target": one, "casualties": 2, "guts_passed": "no"},
                                 ScriptedDice([])))
    out = resolve("move", state, {"unit": one, "structure": "fort"}, ScriptedDice([]))
    assert kinds(out) == [("rejoins", 10)]
    after = apply(state, out)
    crew, section = after.structures["fort"].crew, after.units[one]
    # Ten back in; the two who fell outside stay with the men who walked out (the section's own loss).
    assert (crew.men, crew.left, crew.pins) == (10, 14, 0)
    assert section.rejoined and (section.structure, section.position, section.pins) == (None, None, 1)
    assert not any(f.unit for f in after.structures["fort"].floors)
    with pytest.raises(InputError, match="rejoined"):
        resolve("move", after, {"unit": one, "x": 1, "y": 1}, ScriptedDice([]))
    # A stale or forged effect is refused rather than giving the crew men it never had.
    with pytest.raises(OutcomeError):
        apply(after, Outcome("move", (Effect("rejoins", two, 13, ref="fort"),), (), ""))


def test_a_routed_section_cannot_walk_back_into_its_crew_and_shed_its_rout():
    """Seed 003: the third pin routs a unit, and a rout forces a crew out of its fortification. Rejoining a
    crew that keeps its own pins made the rout vanish: a routed unit goes into no fortification."""
    state = dh(fort("german-concrete-blockhouse"), fort("soviet-rifle-pit", sid="pit", side="B"),
               building("house", 1), section_size=12)
    state = apply(state, resolve("dh_leave", state, {"structure": "fort"}, ScriptedDice([])))
    one, two = state.units
    for _ in range(2):
        state = apply(state, resolve("dh_casualties", state, {"target": one, "casualties": 1, "guts_passed": "no"},
                                     ScriptedDice([])))
    # Pinned twice, not routed: it still rejoins (the crew keeps its own pins, as before).
    assert kinds(resolve("move", state, {"unit": one, "structure": "fort"}, ScriptedDice([]))) == [("rejoins", 10)]
    state = apply(state, resolve("dh_casualties", state, {"target": one, "casualties": 1, "guts_passed": "no"},
                                 ScriptedDice([])))
    assert state.units[one].pins == tables.DH_PINS_TO_ROUT
    for sid in ("fort", "pit"):  # its own crew's fortification, or another of its side's
        with pytest.raises(ActionRefused, match="has routed") as refused:
            resolve("move", state, {"unit": one, "structure": sid}, ScriptedDice([]))
        assert refused.value.field == "structure"
    # It routs away over the table, or into a house (cover, not a fortification: the core rules' business).
    assert kinds(resolve("move", state, {"unit": one, "x": 1, "y": 1}, ScriptedDice([]))) == [("moved", 0)]
    assert kinds(resolve("move", state, {"unit": one, "structure": "house"}, ScriptedDice([]))) == [("moved", 0)]
    # The unrouted section still goes back in.
    assert kinds(resolve("move", state, {"unit": two, "structure": "fort"}, ScriptedDice([]))) == [("rejoins", 12)]


def test_a_damaged_sheet_is_refused_by_name():
    f = fort()
    sheet = f.sheet.replace(top_av=-1)
    with pytest.raises(InputError) as err:
        resolve("dh_main_gun", dh(f.replace(sheet=sheet)), MAIN_GUN, ScriptedDice([]))
    assert err.value.field == "structure.sheet.locations.top.av"


def test_a_sheet_not_ready_for_play_is_refused_saying_so():
    """Found at the table: every attack on a bunker whose club sheet had no main-gun row yet was refused with
    "Hill 112 Pillbox's sheet: penetration_row needs 10 values …", which read as the attacker's mistake. The
    refusal says that the sheet is not ready for play, and who puts it right."""
    f = fort()
    with pytest.raises(InputError) as err:
        resolve("dh_main_gun", dh(f.replace(sheet=f.sheet.replace(penetration_row=()))), MAIN_GUN, ScriptedDice([]))
    assert err.value.field == "structure.sheet.penetration_row"
    assert str(err.value.message) == (
        "German HMG Loghouse's sheet is not ready for play (penetration_row needs 10 values (d10 <2, 2 … 9, "
        "10+), has 0): a designer fills it in on its page under Sheets")


def test_summaries_read_as_sentences():
    """"1 natural 1", not "1 ones"; the seed's "2 PH." is not followed by ".;"."""
    state = dh(fort())
    small = resolve("dh_small_arms", state, {"structure": "fort", "shots": 2}, ScriptedDice([1, 5, 3]))
    assert "1 natural 1, 1 hit;" in small.summary
    gun = resolve("dh_main_gun", state, MAIN_GUN, ScriptedDice([1, 10, 6, *MISS]))
    assert "Guts Check. 2 PH; 10 crew killed" in gun.summary and ".;" not in gun.summary


def test_routed_survivors_leave_with_their_pins():
    # Seed 003, 9–10: "survivors Routed (3 Pin markers and Rout 9")"; A-DH-14: they become infantry
    # (DH-22) with 3 pins. The sections the crew forms keep the pin markers it carried.
    f = fort("german-concrete-blockhouse")
    state = dh(f.replace(crew=f.crew.replace(men=15, pins=3, routed=True)), section_size=10)
    after = apply(state, resolve("dh_leave", state, {"structure": "fort"}, ScriptedDice([])))
    assert [(u.models, u.pins) for u in after.units.values()] == [(8, 3), (7, 3)]
    # They took the markers with them: the empty blockhouse is neither pinned nor routed.
    empty = after.structures["fort"].crew
    assert (empty.men, empty.pins, empty.routed, empty.left) == (0, 0, False, 15)
    pinned = dh(f.replace(crew=f.crew.replace(pins=1)), section_size=12)
    after = apply(pinned, resolve("dh_leave", pinned, {"structure": "fort"}, ScriptedDice([])))
    assert [u.pins for u in after.units.values()] == [1, 1]


def test_the_flamethrower_asks_no_penetration():
    # Seed 003: flamethrowers "automatically Penetrate": the form must not offer "Not penetrated" and then ignore it.
    from apps.rules import spec
    assert "penetration" not in [f.name for f in spec("dh_flamethrower").fields]


def test_crew_sections_carry_rifles_grenades_and_the_light_mgs_they_took():
    # Seed 003, Leaving Fortifications: "They may take Light MGs with them ... all other weapons are
    # abandoned. Crews are normally armed with rifles ... and grenades." The battle's catalogue holds them.
    from apps.rules import CrewWeapon, WeaponProfile

    catalogue = [WeaponProfile("w1", "Rifles", "dh", dh_category="small_arms"),
                 WeaponProfile("w2", "LMG", "dh", dh_category="small_arms"),
                 WeaponProfile("w3", "Grenades", "dh"), WeaponProfile("w4", "45mm", "dh", dh_category="main_gun")]
    f = fort("soviet-at-hmg-loghouse")
    # A sheet's own light MG goes with the crew (under the catalogue's LMG); the 45mm and Maxim stay.
    f = f.replace(crew=f.crew.replace(weapons=f.crew.weapons + (CrewWeapon("DP LMG", 2, "Infantry", light_mg=True),)))
    state = battle("dh", [f], weapons=catalogue, section_size=6)
    out = resolve("dh_leave", state, {"structure": "fort"}, ScriptedDice([]))
    assert [(e.target, e.ref, e.n) for e in out.of_type("carries")] == [
        ("fort-crew-1", "w1", 5), ("fort-crew-1", "w2", 1), ("fort-crew-1", "w3", 6),
        ("fort-crew-2", "w1", 6), ("fort-crew-2", "w3", 6)]
    after = apply(state, out)
    assert [after.units[u].weapons for u in ("fort-crew-1", "fort-crew-2")] == [("w1", "w2", "w3"), ("w1", "w3")]
    # Without those weapons in the catalogue, the sections are formed all the same.
    bare = apply(dh(fort()), resolve("dh_leave", dh(fort()), {"structure": "fort"}, ScriptedDice([])))
    assert [u.weapons for u in bare.units.values()] == [()]


def test_casualties_in_a_unit_are_the_players_and_pin_on_a_failed_guts_check():
    """The fortification's fire at infantry is the DH core rulebook's: its losses are entered, so a crew's
    sections (and every squad) keep them; a failed Guts check pins, the third pin routs."""
    from .builders import unit

    state = battle("dh", [fort()], [unit("sec", "B", models=5, pins=1)])
    out = resolve("dh_casualties", state, {"target": "sec", "casualties": 2, "guts_passed": "no"}, ScriptedDice([]))
    assert kinds(out) == [("casualties", 2), ("pin", 1)] and out.summary.endswith("pinned (2)")
    after = apply(state, out).units["sec"]
    assert (after.models, after.pins) == (3, 2)
    held = resolve("dh_casualties", state, {"target": "sec", "casualties": 1, "guts_passed": "yes"}, ScriptedDice([]))
    assert kinds(held) == [("casualties", 1)]
    gone = resolve("dh_casualties", state, {"target": "sec", "casualties": 5}, ScriptedDice([]))
    assert [e.type for e in gone.effects] == ["casualties", "unit_destroyed"]
    assert resolve("dh_casualties", state, {"target": "sec", "casualties": 0}, ScriptedDice([])).effects == ()
    with pytest.raises(InputError, match="has only 5 models"):
        resolve("dh_casualties", state, {"target": "sec", "casualties": 6}, ScriptedDice([]))


def test_a_crew_killed_to_the_last_man_keeps_no_pins_nor_rout():
    """The crew is one unit (DH-6): killed to the last man it is no longer pinned or routed, as a destroyed
    unit is not. A pit pinned twice whose last five fell showed "No crew left" beside "Pins 2 of 3", on the
    campaign's ground and in the next session too; and the summary ended in a dangling "; "."""
    state = dh(fort("soviet-rifle-pit", men=5, pins=2))
    out = resolve("dh_crew_casualties", state, {"structure": "fort", "casualties": 5, "guts_passed": "no"},
                  ScriptedDice([]))
    assert kinds(out) == [("crew_casualties", 5)]
    assert out.summary == "5 of Soviet Rifle Pit's crew killed: no crew left, no Guts check"
    crew = apply(state, out).structures["fort"].crew
    assert (crew.men, crew.pins, crew.routed) == (0, 0, False)
    # Nor is a routed crew whose last men fall.
    routed = dh(fort("soviet-rifle-pit", men=3, pins=3, routed=True))
    out = resolve("dh_crew_casualties", routed, {"structure": "fort", "casualties": 3}, ScriptedDice([]))
    assert apply(routed, out).structures["fort"].crew.routed is False
    # One left standing keeps what the crew had, and takes its Guts check.
    out = resolve("dh_crew_casualties", state, {"structure": "fort", "casualties": 4, "guts_passed": "no"},
                  ScriptedDice([]))
    crew = apply(state, out).structures["fort"].crew
    assert (crew.men, crew.pins) == (1, 3) and crew.routed



@pytest.mark.parametrize("guts_passed", ["no", "yes"])
def test_casualties_in_a_routed_crew_still_inside_say_it_takes_no_guts_check(guts_passed):
    """A crew routed by a flamethrower's failed check is still inside until its side records it leaving.
    Fire that kills two of them logged "2 of … killed; " (a dangling "; "), or "Guts check passed" for a
    check a routed crew never takes: now it says there is none, and no pin."""
    state = dh(fort("soviet-rifle-pit", men=6, routed=True))
    out = resolve("dh_crew_casualties", state, {"structure": "fort", "casualties": 2, "guts_passed": guts_passed},
                  ScriptedDice([]))
    assert kinds(out) == [("crew_casualties", 2)]
    assert out.summary == "2 of Soviet Rifle Pit's crew killed; the crew has routed already: no Guts check"

def test_a_crew_routed_by_a_flamethrower_leaves_routed():
    """A failed Guts check against a flamethrower routs the crew with no pin (DH-16); leaving, its sections
    came out with no pins, that is neither pinned nor routed: the rout was lost on the way out. A unit's
    rout is its third pin, so they take three."""
    f = fort("german-concrete-blockhouse")
    state = dh(f.replace(crew=f.crew.replace(men=15, pins=0, routed=True)), section_size=10)
    out = resolve("dh_leave", state, {"structure": "fort"}, ScriptedDice([]))
    assert out.summary.endswith("; routed, they rout on (3 pins)")
    after = apply(state, out)
    assert [(u.models, u.pins) for u in after.units.values()] == [(8, 3), (7, 3)]
    assert (after.structures["fort"].crew.pins, after.structures["fort"].crew.routed) == (0, False)
    # A crew pinned once but not routed goes out pinned once, its summary saying nothing of a rout.
    pinned = dh(f.replace(crew=f.crew.replace(pins=1)), section_size=12)
    out = resolve("dh_leave", pinned, {"structure": "fort"}, ScriptedDice([]))
    assert "rout" not in out.summary and [u.pins for u in apply(pinned, out).units.values()] == [1, 1]


def test_a_crew_walking_out_again_numbers_its_sections_on_from_those_it_formed():
    """A crew that walked out, went back in and walks out again (later in the battle, or in a campaign's later
    session, whose roster keeps the old sections) made a second "… crew 1": two roster rows of one name."""
    state = dh(fort("german-concrete-blockhouse"), section_size=12)
    state = apply(state, resolve("dh_leave", state, {"structure": "fort"}, ScriptedDice([])))
    one, two = state.units
    for section in (one, two):
        state = apply(state, resolve("move", state, {"unit": section, "structure": "fort"}, ScriptedDice([])))
    out = resolve("dh_leave", state, {"structure": "fort"}, ScriptedDice([]))
    made = [e for e in out.effects if e.type == "unit_created"]
    label = state.structures["fort"].label
    assert [e.note for e in made] == [f"{label} crew 3", f"{label} crew 4"]
    assert not {e.target for e in made} & set(state.units)
