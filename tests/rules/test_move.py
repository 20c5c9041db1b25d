"""Moving a unit (`move`, every ruleset): into a structure's floor or to a spot on the table, as the
players moved it. One unit per floor (BA-2); rubble, impassable structures and destroyed units refuse."""

import pytest

from apps.rules import ActionRefused, InputError, ScriptedDice, apply, resolve

from .builders import battle, building, unit


def move(state, **inputs):
    out = resolve("move", state, inputs, ScriptedDice([]))
    assert out.dice == ()
    return out, apply(state, out)


def world(**house):
    return battle("ba", [building("house", 2, **house), building("barn", 1)],
                  [unit("sq", "A", position=(5.0, 5.0)), unit("gren", "B", structure="house", floor=1),
                   unit("tank", "A", kind="vehicle", position=(20.0, 20.0))])


def test_into_a_floor_then_out_to_a_spot():
    state = world()
    out, state = move(state, unit="sq", structure="house", floor=0)
    assert out.summary == "sq moves into House, ground floor"
    sq = state.units["sq"]
    assert (sq.structure, sq.floor, sq.position) == ("house", 0, None)
    assert state.structures["house"].floor(0).unit == "sq"
    # A one-floor structure needs no floor named; leaving the house frees its floor.
    _, state = move(state, unit="sq", structure="barn")
    assert state.structures["house"].floor(0).unit is None and state.structures["barn"].floor(0).unit == "sq"
    out, state = move(state, unit="sq", x="12.5", y="30")
    assert out.summary == "sq moves to 12.5″, 30″, out of Barn"
    sq = state.units["sq"]
    assert (sq.structure, sq.floor, sq.position) == (None, None, (12.5, 30.0))
    assert state.structures["barn"].floor(0).unit is None


@pytest.mark.parametrize("inputs, field, words", [
    ({"unit": "sq", "structure": "house", "floor": 1}, "floor", "gren holds floor 1 of House: one unit per floor"),
    ({"unit": "sq", "structure": "house"}, "floor", "Choose the floor of House"),
    ({"unit": "sq"}, "structure", "Choose the structure it went into, or give the spot"),
    ({"unit": "gren", "structure": "house", "floor": 1}, "floor", "gren is on floor 1 of House already"),
    ({"unit": "tank", "structure": "barn"}, "unit", "tank is a vehicle"),
])
def test_refused_moves_name_their_field(inputs, field, words):
    with pytest.raises((InputError, ActionRefused)) as err:
        resolve("move", world(), inputs, ScriptedDice([]))
    assert err.value.field == field and words in err.value.message


@pytest.mark.parametrize("state_of_house, words", [({"collapsed": True}, "is rubble"),
                                                   ({"destroyed": True}, "is destroyed: nobody holds it"),
                                                   ({"impassable": True}, "is impassable")])
def test_no_one_goes_into_rubble_or_an_impassable_building(state_of_house, words):
    with pytest.raises(ActionRefused, match=words):
        resolve("move", world(**state_of_house), {"unit": "sq", "structure": "house", "floor": 0}, ScriptedDice([]))


def test_in_bolt_action_only_infantry_enter_buildings():
    state = battle("ba", [building("house", 1)], [unit("gun", "A", kind="artillery", position=(1.0, 1.0))])
    with pytest.raises(ActionRefused, match=r"gun is artillery: only infantry may enter buildings during the game \(BA-1\)"):
        resolve("move", state, {"unit": "gun", "structure": "house"}, ScriptedDice([]))
    # Not a LaserGrenadiers rule: there a gun team may take a house.
    lg = battle("lg", [building("house", 1)], [unit("gun", "A", kind="artillery", position=(1.0, 1.0))])
    assert resolve("move", lg, {"unit": "gun", "structure": "house"}, ScriptedDice([])).effects


def test_an_enemy_crewed_fortification_is_not_walked_into():
    from .builders import fort
    state = battle("dh", [fort(side="B")], [unit("sq", "A", position=(1.0, 1.0)), unit("mine", "B", position=(2.0, 2.0))])
    with pytest.raises(ActionRefused, match="crew \\(side B\\) holds it: it is taken by assault"):
        resolve("move", state, {"unit": "sq", "structure": "fort"}, ScriptedDice([]))
    assert resolve("move", state, {"unit": "mine", "structure": "fort"}, ScriptedDice([])).effects


def test_in_bolt_action_artillery_set_up_in_a_building_never_moves():
    """BA-6/BA-50: artillery set up inside a building cannot move for the rest of the game: not out to the
    table, not to another floor. In a foxhole or trench (not a building) the core rules move it."""
    from apps.rules.state import StructureState
    from .builders import bunker, floors
    pit = StructureState("pit", "foxhole", name="Pit", floors=floors(1))
    state = battle("ba", [building("house", 2), bunker(), pit],
                   [unit("gun", "A", kind="artillery", structure="house", floor=1),
                    unit("at", "A", kind="artillery", structure="pillbox", floor=0),
                    unit("mortar", "A", kind="artillery", structure="pit", floor=0)])
    for inputs in ({"unit": "gun", "x": "3", "y": "4"}, {"unit": "gun", "structure": "house", "floor": 0},
                   {"unit": "at", "x": "3", "y": "4"}):
        with pytest.raises(ActionRefused) as err:
            resolve("move", state, inputs, ScriptedDice([]))
        assert err.value.field == "unit" and "cannot move for the rest of the game (BA-6, BA-50)" in err.value.message
    assert resolve("move", state, {"unit": "mortar", "x": "3", "y": "4"}, ScriptedDice([])).effects
    lg = battle("lg", [building("house", 2)], [unit("gun", "A", kind="artillery", structure="house", floor=1)])
    assert resolve("move", lg, {"unit": "gun", "x": "3", "y": "4"}, ScriptedDice([])).effects
