"""Every random number a rule needs comes from a `Dice`.

A rule is written once against this interface and then serves four purposes: play with the
server rolling (`RandomDice`), play with the players' own physical dice (`ScriptedDice`), replay
of a logged battle (the logged faces fed back as scripted dice) and exact odds (`ExactDice`
through `exact_odds`), which re-runs the same rule over every outcome of every die.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import repeat
from math import comb
from typing import NamedTuple

from .errors import DieValueError, MissingDie, UnusedDice

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def ordinal(n):
    return _ORDINALS[n - 1] if n <= len(_ORDINALS) else f"{n}th"


class DieRoll(NamedTuple):
    """One logged roll: a die, a sum or a pool, with what it was for and what it decided.
    (A NamedTuple: an action creates several, and exact odds hash them by the thousand.)"""

    purpose: str
    sides: int
    count: int
    faces: tuple[int, ...]
    value: int
    source: str  # "server" | "player"
    target: str = ""  # what the value was checked against, in words

    def to_dict(self):
        return {"purpose": self.purpose, "sides": self.sides, "count": self.count, "faces": list(self.faces),
                "value": self.value, "source": self.source, "target": self.target}

    @classmethod
    def from_dict(cls, d):
        return cls(d["purpose"], d["sides"], d["count"], tuple(d["faces"]), d["value"], d["source"],
                   d.get("target", ""))


@dataclass(frozen=True, slots=True)
class DieSpec:
    """The next physical die the players must roll: the UI shows `label` beside the field."""

    purpose: str
    sides: int
    index: int  # which die of `count`, from 1
    count: int

    @property
    def label(self):
        if self.count == 1:
            return f"{self.purpose}, d{self.sides}"
        return f"{self.purpose}, {ordinal(self.index)} d{self.sides}"

    def to_dict(self):
        return {"purpose": self.purpose, "sides": self.sides, "index": self.index, "count": self.count,
                "label": self.label}


def _check(count, sides):
    if sides < 2 or count < 0:
        raise ValueError(f"no such roll: {count}d{sides}")


def _meets(face, at_most, at_least):
    return (at_most is None or face <= at_most) and (at_least is None or face >= at_least)


@lru_cache(maxsize=None)
def _pool_target(at_most, at_least):
    if at_most is not None and at_least is not None:
        return f"{at_least}–{at_most} counts"
    return f"≤ {at_most} counts" if at_most is not None else f"≥ {at_least} counts"


@lru_cache(maxsize=None)
def up_to(n):
    """The faces 1 to n of a low-is-good roll in words: "1–4"; a single face is "1" (not "1–1"), none "0"."""
    return f"1–{n}" if n > 1 else str(max(n, 0))


def success_faces(chance, sides):
    """Faces 1..n that succeed for a percentage chance (low is good: 30 % on a d10 is 1–3)."""
    n, rest = divmod(chance * sides, 100)
    if rest or not 0 <= n <= sides:
        raise ValueError(f"{chance}% cannot be rolled on a d{sides}")
    return n


class Dice:
    """Base: subclasses supply `_roll`; every roll is recorded in `rolls`."""

    source = "server"

    def __init__(self):
        self.rolls: list[DieRoll] = []

    def _roll(self, count, sides, purpose):  # pragma: no cover - abstract
        raise NotImplementedError

    def _record(self, purpose, sides, faces, value, target=""):
        self.rolls.append(DieRoll(purpose, sides, len(faces), faces, value, self.source, target))

    def die(self, sides, purpose, *, key=None, target=""):
        # `key` only matters to ExactDice: a rule that thresholds a die says so, and the
        # enumerator then explores one face per threshold group.
        if sides < 2:
            raise ValueError(f"no such die: d{sides}")
        faces = self._roll(1, sides, purpose)
        self.rolls.append(DieRoll(purpose, sides, 1, faces, faces[0], self.source, target))
        return faces[0]

    def total(self, count, sides, purpose, *, plus=0):
        _check(count, sides)
        faces = self._roll(count, sides, purpose)
        value = sum(faces) + plus
        self._record(purpose, sides, faces, value, f"sum + {plus}" if plus else "sum")
        return value

    def pool(self, count, sides, purpose, *, at_most=None, at_least=None):
        _check(count, sides)
        if at_most is None and at_least is None:
            raise ValueError("a pool needs at_most and/or at_least")
        if count == 0:
            return 0
        faces = self._roll(count, sides, purpose)
        low, high = at_least or 1, sides if at_most is None else at_most
        value = len([f for f in faces if low <= f <= high])
        self.rolls.append(DieRoll(purpose, sides, count, faces, value, self.source, _pool_target(at_most, at_least)))
        return value

    def percent(self, chance, purpose, *, sides=10):
        n = success_faces(chance, sides)
        if n in (0, sides):  # certain either way: nobody needs to roll
            return n == sides
        faces = self._roll(1, sides, purpose)
        self.rolls.append(DieRoll(purpose, sides, 1, faces, faces[0], self.source, f"{up_to(n)} succeeds"))
        return faces[0] <= n

    def decided(self, text, last=1):
        """What the last `last` rolls decided, where that is known only once they are rolled: an
        initiative pair (which side wins, or a tie), the event an uncontrolled-event die picks."""
        for i in range(max(0, len(self.rolls) - last), len(self.rolls)):
            self.rolls[i] = self.rolls[i]._replace(target=text)

    def done(self):
        """Called once the rule has finished asking; scripted dice complain about leftovers."""


class RandomDice(Dice):
    source = "server"

    def __init__(self, seed=None):
        super().__init__()
        self._random = random.Random(seed).random

    def _roll(self, count, sides, purpose):
        r = self._random
        if count == 1:
            return (int(r() * sides) + 1,)
        return tuple([int(r() * sides) + 1 for _ in repeat(None, count)])


class ScriptedDice(Dice):
    """The players' physical dice, one value per physical die, in the order the rule asks.

    Values may be ints or the strings a web form sends.
    """

    source = "player"

    def __init__(self, values):
        super().__init__()
        self.values = list(values)
        self.used = 0

    def _roll(self, count, sides, purpose):
        faces = []
        for i in range(count):
            spec = DieSpec(purpose, sides, i + 1, count)
            if self.used >= len(self.values):
                raise MissingDie(spec, self.used)
            raw = self.values[self.used]
            try:
                face = int(str(raw).strip())
            except ValueError:
                face = None
            if face is None or not 1 <= face <= sides or isinstance(raw, bool):
                raise DieValueError(f"dice[{self.used}]", raw, f"{spec.label}: {raw} is not a d{sides} result")
            faces.append(face)
            self.used += 1
        return tuple(faces)

    def done(self):
        left = self.values[self.used:]
        if left:
            raise UnusedDice("dice", left, f"{len(left)} die value(s) left over ({', '.join(map(str, left))}): "
                                           "this action needs only the first " f"{self.used}")


# ---------------------------------------------------------------------------- exact odds

@lru_cache(maxsize=None)
def _uniform(sides):
    p = Fraction(1, sides)
    return tuple((v, p) for v in range(1, sides + 1))


@lru_cache(maxsize=4096)
def _grouped(sides, keys):
    """One representative face per distinct key, with the group's probability."""
    groups = {}
    for face, k in enumerate(keys, 1):
        groups.setdefault(k, []).append(face)
    return tuple((faces[0], Fraction(len(faces), sides)) for faces in groups.values())


@lru_cache(maxsize=None)
def _sum_distribution(count, sides):
    dist = {0: Fraction(1)}
    for _ in range(count):
        nxt = {}
        for s, p in dist.items():
            for v in range(1, sides + 1):
                nxt[s + v] = nxt.get(s + v, 0) + p / sides
        dist = nxt
    return tuple(sorted(dist.items()))


@lru_cache(maxsize=None)
def _pool_distribution(count, sides, at_most, at_least):
    p = Fraction(sum(1 for f in range(1, sides + 1) if _meets(f, at_most, at_least)), sides)
    dist = ((k, comb(count, k) * p**k * (1 - p) ** (count - k)) for k in range(count + 1))
    return tuple((k, q) for k, q in dist if q)


class ExactDice(Dice):
    """Walks one path through the choice tree per run; `exact_odds` drives it over every path.

    A sum or a pool is one choice point with its precomputed distribution, so 10D10 costs 11
    branches, not 10^10.
    """

    source = "exact"

    def __init__(self):
        super().__init__()
        self.restart([])

    def restart(self, path):
        self._path, self._taken, self._sizes = path, [], []
        # Numerator and denominator kept apart and reduced once per path: Fraction arithmetic on every
        # choice would cost more than the rule itself.
        self._num = self._den = 1
        self.rolls.clear()

    @property
    def probability(self):
        return Fraction(self._num, self._den)

    def _choose(self, options):
        pos = len(self._taken)
        i = self._path[pos] if pos < len(self._path) else 0
        self._taken.append(i)
        self._sizes.append(len(options))
        value, p = options[i]
        self._num *= p.numerator
        self._den *= p.denominator
        return value

    def die(self, sides, purpose, *, key=None, target=""):
        _check(1, sides)
        if key is None:
            return self._choose(_uniform(sides))
        return self._choose(_grouped(sides, tuple(key(v) for v in range(1, sides + 1))))

    def total(self, count, sides, purpose, *, plus=0):
        _check(count, sides)
        return self._choose([(s + plus, p) for s, p in _sum_distribution(count, sides)])

    def pool(self, count, sides, purpose, *, at_most=None, at_least=None):
        _check(count, sides)
        if at_most is None and at_least is None:
            raise ValueError("a pool needs at_most and/or at_least")
        return self._choose(_pool_distribution(count, sides, at_most, at_least)) if count else 0

    def percent(self, chance, purpose, *, sides=10):
        n = success_faces(chance, sides)
        if n in (0, sides):
            return n == sides
        p = Fraction(n, sides)
        return self._choose(((True, p), (False, 1 - p)))


def odds_key(result):
    """Outcomes are the same result when their effects are; dice and wording may differ."""
    return getattr(result, "effects", result)


def exact_odds(fn, *args, key=odds_key, limit=100_000):
    """Run `fn(*args, dice)` over every outcome of every die it asks for.

    Returns [(result, probability)], most likely first, one entry per distinct `key(result)`
    (the first result met stands for its group); the probabilities are Fractions summing to 1.
    """
    dice = ExactDice()
    merged = {}
    path = []
    for _ in range(limit):
        dice.restart(path)
        result = fn(*args, dice)
        k = key(result)
        if k in merged:
            merged[k][1] += dice.probability
        else:
            merged[k] = [result, dice.probability]
        path, sizes = dice._taken, dice._sizes
        while path and path[-1] + 1 >= sizes[len(path) - 1]:
            path.pop()
        if not path:
            return sorted(((r, p) for r, p in merged.values()), key=lambda rp: -rp[1])
        path[-1] += 1
    raise RuntimeError(f"more than {limit} dice paths: give the rule's dice a key")
