"""The surface the battle screen and the sheet editor use: inputs, errors, outcomes, apply."""

import json

import pytest

from apps.rules import (ACTIONS, ActionRefused, BattleState, Effect, Fire, Floor, InputError, Outcome, OutcomeError,
                        RandomDice, RulesError, ScriptedDice, SequenceState, StructureState, UnusedDice, apply,
                        available_actions, next_die, odds, resolve)

from . import cases
from .builders import battle, building, fort, unit


@pytest.mark.parametrize("key, inputs, field, value", [
    ("ba_he", {"weapon": "bazooka_9000", "structure": "house", "target": "sq", "hit": "yes"}, "weapon",
     "bazooka_9000"),
    ("ba_he", {"weapon": "he_2d6", "structure": "castle", "hit": "yes"}, "structure", "castle"),
    ("ba_he", {"weapon": "he_2d6", "structure": "house", "floor": 7, "hit": "yes"}, "floor", 7),
    ("ba_he", {"weapon": "he_2d6", "structure": "house", "target": "ghost", "hit": "yes"}, "target", "ghost"),
    ("ba_he", {"weapon": "he_2d6", "structure": "house", "target": "sq", "hit": "maybe"}, "hit", "maybe"),
    ("ba_he", {"weapon": "he_2d6", "structure": "house", "target": "sq"}, "hit", None),
    ("ba_he", {"weapon": "he_2d6", "structure": "house", "target": "sq", "hit": "yes", "pins": -1}, "pins", -1),
    ("ba_he", {"weapon": "laser_rifle", "structure": "house", "target": "sq", "hit": "yes"}, "weapon", "laser_rifle"),
    ("ba_indirect", {"weapon": "mortar_2d6", "mode": "orbital", "structure": "house", "target": "sq", "hit": "yes"},
     "mode", "orbital"),
    ("ba_damage", {"target": "sq", "hits": "lots"}, "hits", "lots"),
    ("no_such_action", {}, "action", "no_such_action"),
])
def test_bad_inputs_name_the_field_and_value(key, inputs, field, value):
    state = battle("ba", [building("house", 2)], [unit("sq", structure="house", floor=0)])
    with pytest.raises(RulesError) as err:
        resolve(key, state, inputs, RandomDice(1))
    assert (err.value.field, err.value.value) == (field, value)
    assert err.value.message and json.dumps(err.value.to_dict())


def test_negative_armour_is_refused():
    state = battle("lg", [building("house", 1, wall_ac=-2)])
    with pytest.raises(InputError) as err:
        resolve("lg_attack_structure", state, {"weapon": "laser_rifle", "structure": "house", "hit": "yes"},
                RandomDice(1))
    assert (err.value.field, err.value.value) == ("structure.wall_ac", -2)
    with pytest.raises(InputError) as err:
        resolve("lg_attack_structure", battle("lg", [building("house", 1)]),
                {"weapon": "anti_matter_missile", "structure": "house", "hit": "yes", "armour_class": -1},
                RandomDice(1))
    assert (err.value.field, err.value.value) == ("armour_class", -1)


def test_an_action_of_another_ruleset_is_refused():
    with pytest.raises(ActionRefused) as err:
        resolve("ba_he", battle("lg", [building("house")]), {}, RandomDice(1))
    assert err.value.field == "action"


def test_scripted_dice_errors_leave_no_outcome():
    state, key, inputs = cases.ba_he()
    with pytest.raises(UnusedDice):
        resolve(key, state, inputs, ScriptedDice([1, 2, 3, 4]))
    with pytest.raises(RulesError) as err:
        resolve(key, state, inputs, ScriptedDice([1, 9, 3]))
    assert str(err.value) == "HE hits (3D6) on floor 1, second d6: 9 is not a d6 result"


def test_next_die_walks_the_form_one_field_at_a_time():
    state, key, inputs = cases.ba_indirect()
    first = next_die(key, state, inputs)
    assert first.label == "Floor roll at floor 2, d6"
    assert next_die(key, state, inputs, [5]).label == "HE hits (3D6) on floor 2, first d6"
    assert next_die(key, state, inputs, [1]).label == "Floor roll at floor 1, d6"
    assert next_die(key, state, inputs, [5, 1, 2, 3]) is None


def test_registry_describes_every_action_as_json():
    assert {s.key for s in available_actions("dh")} >= {"dh_main_gun", "dh_flamethrower", "upkeep", "end_turn"}
    assert not [s for s in available_actions("lg") if s.key.startswith("ba_")]
    for s in ACTIONS.values():
        d = json.loads(json.dumps(s.to_dict()))
        assert d["label"] and d["source"].startswith("seed")


def test_outcome_json_and_dice_sources():
    state, key, inputs = cases.dh_main_gun()
    out = resolve(key, state, inputs, RandomDice(3))
    assert Outcome.from_dict(json.loads(json.dumps(out.to_dict()))) == out
    assert {d.source for d in out.dice} == {"server"}
    scripted = resolve(key, state, inputs, ScriptedDice([2, 1]))
    assert [d.source for d in scripted.dice] == ["player", "player"]


def test_apply_is_pure_and_strict():
    state = battle("lg", [building("house", 1, damage_max=10, damage_taken=8)], [unit("sq", models=3)])
    after = apply(state, Outcome("x", (Effect("damage", "house", 2),), (), ""))
    assert after.structures["house"].damage_taken == 10 and state.structures["house"].damage_taken == 8
    for bad in (Effect("damage", "house", 3), Effect("damage", "house", -1), Effect("casualties", "sq", 4),
                Effect("damage", "nowhere", 1), Effect("teleport", "sq")):
        with pytest.raises(OutcomeError):
            apply(state, Outcome("x", (bad,), (), ""))
    f = battle("dh", [fort(men=2)])
    with pytest.raises(OutcomeError):
        apply(f, Outcome("x", (Effect("crew_casualties", "fort", 3),), (), ""))


def test_state_json_round_trip_keeps_the_sheet_shape():
    state = battle("dh", [fort("german-concrete-blockhouse")], [unit("u")])
    d = json.loads(json.dumps(state.to_dict()))
    assert d["structures"]["fort"]["sheet"]["locations"]["top"] == {"av": 75}
    assert BattleState.from_dict(d) == state


def test_a_record_read_from_json_takes_its_fields_types_and_nothing_of_the_json():
    """What from_dict makes of each field's type: a whole number where a float is due becomes one, a
    list a tuple, a dict a new dict (changing the JSON after does not change the state), an optional
    record None or the record, an unknown key is ignored."""
    d = {"id": "s1", "kind": "building", "name": "House", "wall_material": "brick", "wall_ac": 5, "area": 36,
         "floors": [{"level": 0, "openings": {"front": 2}}, {"level": 1, "unit": "u1"}], "fire": {"size": 4,
         "started_turn": 2}, "crew": None, "house_rule": "kept out"}
    s = StructureState.from_dict(d)
    d["floors"][0]["openings"]["front"] = 9
    assert s.area == 36.0 and isinstance(s.area, float) and s.fire == Fire(4.0, 2) and isinstance(s.fire.size, float)
    assert s.floors == (Floor(0, None, {"front": 2}), Floor(1, "u1")) and s.crew is None
    assert SequenceState.from_dict({"sides": ["B", "A"], "activated": ["u1"], "initiative": None}) == \
        SequenceState(sides=("B", "A"), activated=("u1",))


def test_odds_marginals_are_labelled():
    state, key, inputs = cases.ba_indirect()
    result = odds(key, state, inputs)
    labels = {m.label: m.value for m in result.marginals}
    assert labels["House collapses"] == result.probability(lambda o: "collapse" in [e.type for e in o.effects])
    assert "Explodes on the ground floor" in labels and "Expected hits on sq" in labels
    assert json.dumps(result.to_dict())
    state, key, inputs = cases.dh_main_gun()
    rows = [m for m in odds(key, state, inputs).marginals if m.kind == "probability"]
    bands = [m.label for m in rows if m.key.startswith("ph_result")]
    assert set(bands) == {"PH result ≤2", "PH result 3–4", "PH result 5–6", "PH result 7–8", "PH result 9–10"}
    # The bars read most likely first, and equally likely bands in their own order.
    assert [m.value for m in rows] == sorted((m.value for m in rows), reverse=True)
    same = [m.label for m in rows if m.key.startswith("ph_result") and m.value == rows[-1].value]
    tied = [b for b in ("PH result ≤2", "PH result 3–4", "PH result 5–6", "PH result 7–8", "PH result 9–10")
            if b in same]
    assert same == tied


def test_a_field_drawing_from_another_names_a_units_field_before_it():
    """`parse` reads a spec's fields in order: an `among` field checks against the one it names, which must
    already be read (else every unit would be refused as not among none)."""
    from apps.rules import ACTIONS

    for spec in ACTIONS.values():
        for i, f in enumerate(spec.fields):
            if f.among:
                earlier = {g.name: g.type for g in spec.fields[:i]}
                assert (f.type, earlier.get(f.among)) == ("units", "units"), (spec.key, f.name)
