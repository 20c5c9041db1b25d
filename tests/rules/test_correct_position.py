"""An organiser's correction (`correct_position`, every ruleset): a piece placed wrong or knocked over is put
where it stands, outside any activation. Not a move: no initiative or order used, nothing marked."""

import pytest

from apps.rules import ActionRefused, InputError, ScriptedDice, apply, resolve

from .builders import battle, building, fort, unit


def correct(state, **inputs):
    out = resolve("correct_position", state, inputs, ScriptedDice([]))
    assert out.dice == ()
    return out, apply(state, out)


def lg_turn():
    """Side A activated a1 and then a3: a1's activation is over, b2 has not been activated."""
    state = battle("lg", [building("house", 2)],
                   [unit("a1", "A", models=1, position=(5.0, 5.0)), unit("a3", "A", models=1, position=(6.0, 6.0)),
                    unit("b1", "B", models=1, position=(30.0, 30.0)), unit("b2", "B", models=1, position=(31.0, 31.0),
                                                                           incapacitated=True)])
    state = state.replace(upkeep_turn=1)
    for key, inputs, dice in (("lg_initiative", {}, [1, 2]), ("lg_activate", {"unit": "a1"}, []),
                              ("lg_activate", {"unit": "b1"}, []), ("lg_activate", {"unit": "a3"}, [])):
        state = apply(state, resolve(key, state, inputs, ScriptedDice(dice)))
    return state


def test_a_piece_outside_its_activation_is_put_right_and_the_sequence_is_untouched():
    state = lg_turn()
    with pytest.raises(ActionRefused, match="side A has activated another piece since"):
        resolve("move", state, {"unit": "a1", "x": "3", "y": "4"}, ScriptedDice([]))
    out, after = correct(state, unit="a1", x="3", y="4")
    assert out.summary == "Organiser corrected a1's position to 3″, 4″ (it was at 5″, 5″) — not a move: " \
                          "no initiative used"
    assert after.units["a1"].position == (3.0, 4.0)
    # Nobody's initiative, activation, pass streak or marks change: b2, never activated and stunned by a
    # blast, is put right too and may still act this turn.
    out, after = correct(after, unit="b2", structure="house", floor=1)
    assert out.summary == "Organiser corrected b2's position to House, floor 1 (it was at 31″, 31″) — not a " \
                          "move: no initiative used"
    assert (after.units["b2"].structure, after.units["b2"].floor, after.units["b2"].position) == ("house", 1, None)
    assert after.structures["house"].floor(1).unit == "b2"
    assert after.sequence == state.sequence
    assert {k: (u.acted, u.incapacitated) for k, u in after.units.items()} == \
        {k: (u.acted, u.incapacitated) for k, u in state.units.items()}


def test_between_turns_and_in_other_rulesets_too():
    state = lg_turn().replace(turn=2)
    assert correct(state, unit="b1", x="1", y="2")[1].units["b1"].position == (1.0, 2.0)
    # Bolt Action artillery set up in a building never moves (BA-6, BA-50); one recorded there by mistake is
    # put right. In Disposable Heroes a section back in the fortification it left is placed, not rejoined.
    ba = battle("ba", [building("house", 2)], [unit("gun", "A", kind="artillery", structure="house", floor=1)])
    out, after = correct(ba, unit="gun", x="3", y="4")
    assert out.summary.endswith("(it was in House, floor 1) — not a move: no action used")
    assert after.units["gun"].structure is None and after.structures["house"].floor(1).unit is None
    dh = battle("dh", [fort(side="A", left=5)], [unit("sec", "A", models=5, crew_of="fort", position=(3.0, 3.0))])
    out, after = correct(dh, unit="sec", structure="fort")
    assert [e.type for e in out.effects] == ["moved"] and after.units["sec"].structure == "fort"
    assert after.structures["fort"].crew == dh.structures["fort"].crew


@pytest.mark.parametrize("inputs, field, words", [
    ({"unit": "a1", "x": "5", "y": "5"}, "x", "a1 stands at 5″, 5″ already: nothing to correct"),
    ({"unit": "a1", "structure": "house"}, "floor", "Choose the floor of House"),
    ({"unit": "a1"}, "structure", "Choose the structure it went into, or give the spot"),
    ({"unit": "dead", "x": "1", "y": "1"}, "unit", "dead has been destroyed"),
    ({"unit": "a3", "structure": "house", "floor": 0}, "floor", "b1 holds the ground floor of House"),
])
def test_where_nobody_can_stand_is_refused_beside_the_field(inputs, field, words):
    state = lg_turn()
    state = apply(state, resolve("move", state, {"unit": "b1", "structure": "house", "floor": 0}, ScriptedDice([])))
    state = state.replace(units={**state.units, "dead": unit("dead", "A", destroyed=True)})
    with pytest.raises((InputError, ActionRefused)) as err:
        resolve("correct_position", state, inputs, ScriptedDice([]))
    assert err.value.field == field and words in err.value.message
