from fractions import Fraction

import pytest

from apps.rules.dice import ExactDice, RandomDice, ScriptedDice, exact_odds
from apps.rules.errors import DieValueError, MissingDie, UnusedDice


def test_scripted_sums_take_one_value_per_physical_die():
    d = ScriptedDice([3, 4, 6])
    assert d.total(2, 6, "HE hits") == 7
    assert d.die(6, "Floor roll") == 6
    assert [r.faces for r in d.rolls] == [(3, 4), (6,)]
    assert all(r.source == "player" for r in d.rolls)


def test_scripted_impossible_value_names_the_die():
    with pytest.raises(DieValueError) as err:
        ScriptedDice([2, 7]).total(2, 6, "HE hits")
    assert str(err.value) == "HE hits, second d6: 7 is not a d6 result"
    assert (err.value.field, err.value.value) == ("dice[1]", 7)


@pytest.mark.parametrize("bad", [0, 11, "x", "", True, 2.5])
def test_scripted_rejects_non_faces(bad):
    with pytest.raises(DieValueError):
        ScriptedDice([bad]).die(10, "Location")


def test_scripted_missing_die_says_which_one_comes_next():
    d = ScriptedDice([5])
    with pytest.raises(MissingDie) as err:
        d.total(3, 6, "Building value")
    spec = err.value.spec
    assert (spec.purpose, spec.sides, spec.index, spec.count) == ("Building value", 6, 2, 3)
    assert spec.label == "Building value, second d6"
    assert err.value.field == "dice[1]"


def test_scripted_leftover_values_are_an_error():
    d = ScriptedDice([1, 2])
    d.die(6, "one")
    with pytest.raises(UnusedDice):
        d.done()


def test_scripted_accepts_form_strings():
    assert ScriptedDice([" 4 "]).die(6, "x") == 4


def test_d3_is_its_own_die():
    assert ScriptedDice([3]).die(3, "HE hits") == 3
    with pytest.raises(DieValueError, match="4 is not a d3 result"):
        ScriptedDice([4]).die(3, "HE hits")


def test_pool_counts_dice_at_or_under_the_target():
    d = ScriptedDice([1, 6, 7, 10, 3, 6, 9, 2, 8, 5])
    assert d.pool(10, 10, "Blast AP 6", at_most=6) == 6
    assert d.rolls[0].value == 6 and d.rolls[0].count == 10


def test_percent_is_low_is_good_and_certainties_roll_nothing():
    assert ScriptedDice([3]).percent(30, "hit") is True
    assert ScriptedDice([4]).percent(30, "hit") is False
    d = ScriptedDice([])
    assert d.percent(100, "certain") is True and d.percent(0, "never") is False and d.rolls == []


def test_random_dice_are_seedable_and_in_range():
    a, b = RandomDice(7), RandomDice(7)
    faces = [a.die(10, "x") for _ in range(1000)]
    assert faces == [b.die(10, "x") for _ in range(1000)]
    assert set(faces) == set(range(1, 11))
    assert all(r.source == "server" for r in a.rolls)


def test_exact_sum_and_pool_are_single_choice_points():
    dist = dict(exact_odds(lambda d: d.total(3, 6, "3D6")))
    assert dist[10] == Fraction(27, 216) and dist[3] == Fraction(1, 216) and sum(dist.values()) == 1
    pool = dict(exact_odds(lambda d: d.pool(10, 10, "10D10", at_most=6)))
    assert len(pool) == 11 and pool[10] == Fraction(6, 10) ** 10 and sum(pool.values()) == 1


def test_exact_key_groups_faces():
    runs = []

    def rule(d):
        runs.append(1)
        return d.die(10, "pen", key=lambda v: v >= 7) >= 7

    assert dict(exact_odds(rule)) == {False: Fraction(6, 10), True: Fraction(4, 10)}
    assert len(runs) == 2


def test_exact_nested_choices():
    def rule(d):
        first = d.die(6, "floor", key=lambda v: v >= 4) >= 4
        return "top" if first else ("middle" if d.die(6, "floor 2", key=lambda v: v >= 4) >= 4 else "ground")

    assert dict(exact_odds(rule)) == {"top": Fraction(1, 2), "middle": Fraction(1, 4), "ground": Fraction(1, 4)}


def test_exact_dice_records_nothing():
    d = ExactDice()
    d.die(6, "x")
    assert d.rolls == []
