"""Actions that record the players' own results (`ActionSpec.rolls` False) roll no die, whatever the
server's dice would say; the form offers them no dice and no odds on the strength of that flag."""

import pytest

from apps.rules import ACTIONS, RandomDice, resolve
from apps.rules.state import Fire, SequenceState

from .builders import battle, building, fort, unit

def holding_initiative():
    state = battle("lg", [], [unit("t1", side="A", models=1), unit("b1", side="B", models=1)])
    return state.replace(sequence=SequenceState(initiative="A", rolled=True))


BOOKKEEPING = {
    "ba_barrage": lambda: (battle("ba", [building("house", 2)], [unit("sq", structure="house", floor=0)]),
                           {"structure": "house", "hits": "sq=4"}),
    "dh_crew_casualties": lambda: (battle("dh", [fort()]), {"structure": "fort", "casualties": 2, "hits": 3,
                                                            "guts_passed": "yes"}),
    "dh_casualties": lambda: (battle("dh", [], [unit("sq", models=5)]), {"target": "sq", "casualties": 2,
                                                                          "guts_passed": "no"}),
    "dh_guts": lambda: (battle("dh", [fort()]), {"structure": "fort", "guts_passed": "no"}),
    "dh_leave": lambda: (battle("dh", [fort()]), {"structure": "fort"}),
    "lg_breach": lambda: (battle("lg", [building("wall", 1)]), {"structure": "wall", "hit": "yes",
                                                                  "penetrated": "yes", "needed": 2}),
    "lg_blast": lambda: (battle("lg", [], [unit("t1", models=1), unit("t2", models=1)]),
                         {"weapon": "he_shell", "caught": "t1,t2", "eliminated": "t2"}),
    "lg_fire_casualties": lambda: (battle("lg", [building("barn", 1, fire=Fire(2, 1))],
                                          [unit("t1", models=1, structure="barn", floor=0)]),
                                   {"structure": "barn", "caught": "t1", "eliminated": "t1"}),
    "lg_fire_through": lambda: (battle("lg", [building("barn", 1, fire=Fire(2, 1))], [unit("t1", models=1)]),
                                {"unit": "t1", "structure": "barn"}),
    "lg_morale": lambda: (battle("lg", [], [unit("t1", models=1)]), {"unit": "t1"}),
    # Turn-order steps roll nothing either: the form offered "Roll for me / I rolled" and "exact odds 100%"
    # for activating a piece or passing.
    "lg_activate": lambda: (holding_initiative(), {"unit": "t1"}),
    "lg_pass": lambda: (holding_initiative(), {}),
    "lg_team_done": lambda: (holding_initiative().replace(sequence=SequenceState(initiative="A", rolled=True,
                                                                                 team=("t1",))), {}),
    "correct_position": lambda: (battle("lg", [], [unit("t1", models=1)]), {"unit": "t1", "x": 3, "y": 4}),
    "move": lambda: (battle("ba", [building("house", 2)], [unit("sq")]), {"unit": "sq", "structure": "house",
                                                                          "floor": 1}),
}


def test_every_action_that_says_it_rolls_nothing_is_checked_here():
    assert {k for k, spec in ACTIONS.items() if not spec.rolls} == set(BOOKKEEPING)


@pytest.mark.parametrize("action", sorted(BOOKKEEPING))
@pytest.mark.parametrize("seed", range(5))
def test_it_rolls_no_die(action, seed):
    state, inputs = BOOKKEEPING[action]()
    outcome = resolve(action, state, inputs, RandomDice(seed))
    assert outcome.dice == () and outcome.effects, outcome
