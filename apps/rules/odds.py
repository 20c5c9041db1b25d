"""Exact odds of an action, and the marginals the odds preview draws as bars."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from .actions import spec as action_spec
from .dice import exact_odds
from .errors import ActionRefused
from .inputs import parse

# Effect types whose chance is worth a bar, with the words for it.
_EVENTS = {
    "collapse": "{s} collapses",
    "untenable": "{s} destroyed (untenable)",
    "destroyed": "{s} destroyed",
    "fire_started": "Fire starts in {s}",
    "impassable": "{s} becomes impassable",
    "breached": "{s} breached",
    "penetrated": "Penetrates {s}",
    "rout": "{s}'s crew routs",
    "guts_check": "{s}'s crew takes a Guts check",
    "weapon_destroyed": "A weapon in {s} is destroyed",
    "detected": "{s} detected",
    "unit_destroyed": "{s} destroyed",
    "abandon": "{s} abandons the building",
    "incapacitated": "{s} incapacitated",
    "hits": "{s} is hit",
    "pin": "{s} pinned",
}
_BY_NOTE = {"ph_result": "PH result {n}", "location_hit": "Hits {n}", "tank_result": "{s}: {n}"}
# A note as the players read it on a bar (the log's words for it).
_NOTE_WORDS = {"superficial": "superficial damage", "ram_damage": "ram damage"}
# Effects whose count is the result itself: a bar per count, one for none at all, and the unlikely
# long tail (thirty shots can score thirty hits) folded into one "or more".
_BY_COUNT = {"crew_hits": ("{n} hit{plural} on {s}'s crew", "{n} or more hits on {s}'s crew",
                           "No hits on {s}'s crew")}
_TAIL = Fraction(1, 100)
_EXPECTED = {"hits": "Expected hits on {s}", "casualties": "Expected casualties in {s}",
             "crew_casualties": "Expected crew casualties in {s}", "damage": "Expected damage to {s}",
             "crew_hits": "Expected hits on {s}'s crew", "penetrating_hits": "Expected PH on {s}"}


@dataclass(frozen=True)
class Marginal:
    key: str
    label: str
    value: Fraction
    kind: str  # "probability" | "expected"

    def to_dict(self):
        return {"key": self.key, "label": self.label, "kind": self.kind, "value": str(self.value),
                "float": float(self.value)}


@dataclass(frozen=True)
class Odds:
    action: str
    outcomes: tuple  # ((Outcome, Fraction), …), most likely first
    marginals: tuple[Marginal, ...]

    def probability(self, predicate):
        return sum((p for o, p in self.outcomes if predicate(o)), Fraction(0))

    def marginal(self, key):
        return next(m.value for m in self.marginals if m.key == key)

    def to_dict(self):
        return {"action": self.action, "marginals": [m.to_dict() for m in self.marginals],
                "outcomes": [{"probability": str(p), "float": float(p), "summary": o.summary,
                              "effects": [e.to_dict() for e in o.effects]} for o, p in self.outcomes]}


def _name(state, target):
    thing = state.structures.get(target) or state.units.get(target)
    return thing.label if thing is not None else target


def _label(state, e, kind):
    name = _name(state, e.target)
    if kind == "event":
        return _EVENTS[e.type].format(s=name)
    if kind == "floor":
        return f"Explodes on {state.structures[e.target].floor(e.floor).the_label}"
    if kind == "note":
        return _BY_NOTE[e.type].format(n=_NOTE_WORDS.get(e.note, e.note), s=name)
    if kind == "count":
        return _BY_COUNT[e.type][0].format(n=e.n, plural="s" * (e.n != 1), s=name)
    return _EXPECTED[e.type].format(s=name)


def _first_number(label):
    digits = re.search(r"\d+", label)
    return int(digits[0]) if digits else 0


def marginals(state, distribution):
    probs, expected, labels = {}, {}, {}
    for outcome, p in distribution:
        seen = set()
        for e in outcome.effects:
            t = e.type
            for key, kind in ((t in _EVENTS and (t, e.target), "event"),
                              (t == "floor_hit" and (t, e.target, e.floor), "floor"),
                              (t in _BY_NOTE and (t, e.target, e.note), "note"),
                              (t in _BY_COUNT and (t, e.target, e.n), "count")):
                if key and key not in seen:
                    seen.add(key)
                    probs[key] = probs.get(key, 0) + p
                    if key not in labels:
                        labels[key] = _label(state, e, kind)
            if t in _EXPECTED:
                key = ("expected_" + t, e.target)
                expected[key] = expected.get(key, 0) + p * e.n
                if key not in labels:
                    labels[key] = _label(state, e, "expected")
    _fold_counts(state, probs, labels)
    # Most likely first; equal chances in the order of the numbers they name (PH ≤2, 3–4, 5–6 …).
    # Bars that are all counts of one thing (crew hits) read as a scale instead: none, 1, 2 … n or more.
    if probs and all(k[0] in _BY_COUNT for k in probs):
        ordered = sorted(probs.items(), key=lambda kv: (kv[0][:2], _first_number(labels[kv[0]]),
                                                         str(kv[0][2]).endswith("+")))
    else:
        ordered = sorted(probs.items(), key=lambda kv: (-kv[1], _first_number(labels[kv[0]]), labels[kv[0]]))
    out = [Marginal(":".join(map(str, k)), labels[k], Fraction(v), "probability") for k, v in ordered]
    out += [Marginal(":".join(k), labels[k], Fraction(v), "expected") for k, v in expected.items()]
    return tuple(out)


def _fold_counts(state, probs, labels):
    for t, target in {(k[0], k[1]) for k in probs if k[0] in _BY_COUNT}:
        counts = sorted((k[2], k) for k in probs if k[:2] == (t, target))
        _, more, none = _BY_COUNT[t]
        name = _name(state, target)
        probs[(t, target, 0)] = 1 - sum(probs[k] for _, k in counts)
        labels[(t, target, 0)] = none.format(s=name)
        tail = next((i for i, (_, k) in enumerate(counts)
                     if i and all(probs[later] < _TAIL for _, later in counts[i:])), None)
        if tail is not None and tail < len(counts) - 1:
            first = counts[tail][0]
            folded = (t, target, f"{first}+")
            probs[folded] = sum(probs.pop(k) for _, k in counts[tail:])
            labels[folded] = more.format(n=first, s=name)


def odds(action_key, state, inputs) -> Odds:
    """Every distinct outcome of the action with its exact probability (Fractions summing to 1)."""
    s = action_spec(action_key)
    if not s.exact:
        raise ActionRefused("action", action_key, f"{s.label} has no exact odds: its ties re-roll without end")
    checked = parse(s, state, inputs)
    distribution = exact_odds(s.resolve, state, checked)
    return Odds(action_key, tuple(distribution), marginals(state, distribution))
