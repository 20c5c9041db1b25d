"""Property tests: any outcome applies cleanly, exact odds always sum to one, and whatever the random
dice produce is something the exact odds said could happen."""

import json

from hypothesis import HealthCheck, assume, given, settings, strategies as st

from apps.rules import (BattleState, Outcome, RandomDice, RulesError, apply, check_inputs, exact_odds, odds,
                        resolve, spec)

from .cases import CASES

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def situations(draw):
    """A case from cases.py with its structures, crews and units knocked about."""
    case = draw(st.sampled_from(CASES))
    state, key, inputs = case()
    structures = {}
    for sid, s in state.structures.items():
        changes = {}
        if s.damage_max:
            changes["damage_max"] = m = draw(st.integers(1, 40))
            changes["damage_taken"] = draw(st.integers(0, m - 1))
        if s.crew is not None:
            changes["crew"] = s.crew.replace(men=draw(st.integers(1, 30)), pins=draw(st.integers(0, 2)),
                                             penetrating_hits=draw(st.integers(0, 8)))
        structures[sid] = s.replace(**changes)
    units = {uid: u.replace(models=draw(st.integers(1, 12))) for uid, u in state.units.items()}
    return state.replace(structures=structures, units=units), key, inputs


def assert_sound(state):
    for s in state.structures.values():
        assert 0 <= s.damage_taken <= s.damage_max or s.damage_taken == s.damage_max == 0
        assert s.breach_needed == 0 or 0 <= s.breach_scored <= s.breach_needed
        if s.crew is not None:
            assert s.crew.men >= 0 and 0 <= s.crew.pins <= 3 and s.crew.penetrating_hits >= 0
        if s.fire is not None:
            assert 0 < s.fire.size
    for u in state.units.values():
        assert u.models >= 0


@FAST
@given(situations(), st.integers(0, 2**32), st.integers(1, 4))
def test_applying_any_outcome_keeps_the_state_sound(situation, seed, repeats):
    state, key, inputs = situation
    before = json.dumps(state.to_dict(), sort_keys=True)
    dice = RandomDice(seed)
    current = state
    for _ in range(repeats):
        try:
            outcome = resolve(key, current, inputs, dice)
        except RulesError:
            break  # e.g. the structure is destroyed now, or the crew is gone
        current = apply(current, outcome)
        assert_sound(current)
    assert json.dumps(state.to_dict(), sort_keys=True) == before  # apply never mutates its input


@FAST
@given(situations())
def test_every_exact_distribution_sums_to_exactly_one(situation):
    state, key, inputs = situation
    try:
        result = odds(key, state, inputs)
    except RulesError:
        assume(False)
    assert sum(p for _, p in result.outcomes) == 1
    assert all(p > 0 for _, p in result.outcomes)
    for m in result.marginals:
        assert m.kind == "expected" or 0 <= m.value <= 1


@FAST
@given(situations(), st.integers(0, 2**32))
def test_random_outcomes_are_in_the_exact_support(situation, seed):
    state, key, inputs = situation
    try:
        checked = check_inputs(key, state, inputs)
    except RulesError:
        assume(False)
    run = spec(key).resolve
    support = {o.effects for o, _ in exact_odds(run, state, checked)}
    dice = RandomDice(seed)
    for _ in range(25):
        assert run(state, checked, dice).effects in support


@FAST
@given(situations(), st.integers(0, 2**32))
def test_outcomes_and_states_survive_json(situation, seed):
    state, key, inputs = situation
    try:
        outcome = resolve(key, state, inputs, RandomDice(seed))
    except RulesError:
        assume(False)
    assert Outcome.from_dict(json.loads(json.dumps(outcome.to_dict()))) == outcome
    after = apply(state, outcome)
    assert BattleState.from_dict(json.loads(json.dumps(after.to_dict()))) == after
