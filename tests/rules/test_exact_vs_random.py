"""Exact odds must agree with what the random dice actually produce (200,000 trials each)."""

from collections import Counter

import pytest

from apps.rules import RandomDice, check_inputs, odds, spec

from . import cases

TRIALS = 200_000
# Eleven actions across the three rulesets; cases.py has more, which the property tests and the benchmark use.
SAMPLED = [cases.lg_rotary, cases.lg_detect, cases.lg_upkeep, cases.ba_he, cases.ba_indirect, cases.ba_bunker,
           cases.ba_tank_ram, cases.ba_damage, cases.dh_main_gun, cases.dh_flamethrower, cases.dh_small_arms]


@pytest.mark.parametrize("case", SAMPLED, ids=lambda c: c.__name__)
def test_exact_odds_agree_with_random_trials(case):
    state, key, inputs = case()
    checked = check_inputs(key, state, inputs)
    exact = {o.effects: p for o, p in odds(key, state, checked).outcomes}
    assert sum(exact.values()) == 1
    resolve, dice = spec(key).resolve, RandomDice(20261122)
    seen = Counter(resolve(state, checked, dice).effects for _ in range(TRIALS))
    assert set(seen) <= set(exact), "a random outcome the exact odds say cannot happen"
    worst = max(abs(seen[k] / TRIALS - float(p)) for k, p in exact.items())
    assert worst < 0.005, f"{worst:.4f}"
