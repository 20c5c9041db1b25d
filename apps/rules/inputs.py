"""Action specs, their form fields, and the checking of raw form values against them.

Everything an action needs is checked here before the first die is asked for, so a bad value
never leaves a half-resolved attack behind.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable

from .errors import ActionRefused, InputError, UnknownReference

RULESET_NAMES = {"lg": "LaserGrenadiers", "ba": "Bolt Action", "dh": "Disposable Heroes", "any": "any ruleset"}
_TRUE = {"true", "yes", "y", "on", "1"}
_FALSE = {"false", "no", "n", "off", "0"}
YES_NO = (("yes", "Yes"), ("no", "No"))


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # int float bool count choice unit units structure floor weapon unit_hits
    label: str
    help: str = ""
    choices: tuple[tuple[str, str], ...] = ()
    required: bool = True
    default: object = None
    min: float | None = None
    max: float | None = None
    # A "weapon" field: which weapons can make this action at all (the form offers only those; the
    # rule refuses the others with its reason). The same for a "unit" or "structure" field's units or
    # structures (a tank ram's heavy tanks, a fire to pass through).
    fits: Callable | None = field(default=None, compare=False)
    # A "weapon" field whose fit also depends on the other inputs: `fits_with(weapon, inputs)`, inputs
    # as the form sends them (ba_indirect: indirect fire needs an indirect weapon, an air strike any HE).
    fits_with: Callable | None = field(default=None, compare=False)
    # Any other field: it applies only when the chosen weapon satisfies this (a fire mode only for a
    # weapon with variable fire); the form leaves it out for other weapons, and the rule its default.
    weapon_has: Callable | None = field(default=None, compare=False)
    # A "choice" or "units" field some of whose choices depend on the structure chosen (a roof to
    # strike, the pieces inside): `structure_allows(structure, choice key or unit)`. The form offers
    # only those it allows; the rule still refuses the others with its reason, for a form sent anyway.
    structure_allows: Callable | None = field(default=None, compare=False)
    # A "floor" field that, once the unit field it names is chosen, can only be that unit's floor: the
    # form offers that floor alone (the rule refuses another).
    floor_of: str | None = None
    # A "units" field that can only hold units ticked in the "units" field it names (of the pieces caught,
    # those eliminated): the form offers those alone, not every piece on the table, and `parse` refuses
    # others. That field must come first in the spec.
    among: str | None = None

    def to_dict(self):
        return {"name": self.name, "type": self.type, "label": self.label, "help": self.help,
                "choices": [list(c) for c in self.choices], "required": self.required and self.default is None,
                "default": self.default, "min": self.min, "max": self.max}


@dataclass(frozen=True)
class ActionSpec:
    key: str
    ruleset: str  # lg | ba | dh | any
    label: str
    fields: tuple[Field, ...]
    resolve: Callable = field(repr=False)  # resolve(state, inputs, dice) -> Outcome
    source: str = ""  # seed file and section, catalogue ids
    exact: bool = True  # False where a roll may repeat without end (initiative ties)
    help: str = ""
    rolls: bool = True  # False for bookkeeping that never rolls (a move): no dice or odds to offer

    def to_dict(self):
        return {"key": self.key, "ruleset": self.ruleset, "label": self.label, "source": self.source,
                "exact_odds": self.exact, "rolls": self.rolls, "help": self.help,
                "fields": [f.to_dict() for f in self.fields]}


class Inputs(dict):
    """Inputs already checked against their spec: resolving them again skips the checks."""


ACTIONS: dict[str, ActionSpec] = {}


def action(key, ruleset, label, *fields, source, exact=True, help="", rolls=True):
    """Register `fn(state, inputs, dice) -> (effects, summary)` as action `key`.

    Returns the public `resolve_xxx(state, inputs, dice) -> Outcome`, which checks raw inputs,
    runs the rule, and asks scripted dice whether values were left over.
    """
    from .outcome import Outcome

    def register(fn):
        spec = None

        @functools.wraps(fn)
        def resolve(state, inputs, dice):
            checked = inputs if type(inputs) is Inputs else parse(spec, state, inputs)
            rolls = dice.rolls
            start = len(rolls)
            effects, summary = fn(state, checked, dice)
            dice.done()
            mine = tuple(rolls[start:])
            del rolls[start:]
            return Outcome(key, tuple(effects), mine, summary)

        spec = ActionSpec(key, ruleset, label, tuple(fields), resolve, source, exact, help, rolls)
        ACTIONS[key] = spec
        return resolve

    return register


def _bool(f, value):
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise InputError(f.name, value, f"{f.label}: answer yes or no, not {value!r}")


def _number(f, value, kind):
    if isinstance(value, bool):
        raise InputError(f.name, value, f"{f.label} must be a number, not {value!r}")
    try:
        number = kind(str(value).strip()) if isinstance(value, str) else kind(value)
        if kind is int and number != value and not isinstance(value, str):
            raise ValueError
    except (TypeError, ValueError):
        raise InputError(f.name, value, f"{f.label} must be a{'' if kind is int else ' decimal'} number, "
                                        f"not {value!r}") from None
    if f.min is not None and number < f.min:
        raise InputError(f.name, value, f"{f.label} must be at least {f.min:g}, not {number:g}")
    if f.max is not None and number > f.max:
        raise InputError(f.name, value, f"{f.label} must be at most {f.max:g}, not {number:g}")
    return number


def _unit(f, state, uid):
    unit = state.units.get(str(uid))
    if unit is None:
        raise UnknownReference(f.name, uid, f"{f.label}: there is no unit {uid!r} in this battle")
    if unit.destroyed:
        raise InputError(f.name, uid, f"{f.label}: {unit.label} has been destroyed")
    if unit.rejoined:
        raise InputError(f.name, uid, f"{f.label}: {unit.label} has rejoined its fortification's crew: it acts as "
                                      "that crew now")
    return unit


def _list(value):
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)


def _convert(f, value, state, ruleset, done):
    t = f.type
    if t == "bool":
        return _bool(f, value)
    if t == "count":  # "penetrated: yes/no" for one hit, a number for rotary weapons
        if isinstance(value, bool) or (isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE):
            return int(_bool(f, value))
        return _number(f, value, int)
    if t == "int":
        return _number(f, value, int)
    if t == "float":
        return _number(f, value, float)
    if t == "choice":
        text = str(value).strip()
        if text not in {c[0] for c in f.choices}:
            allowed = ", ".join(c[0] for c in f.choices)
            raise InputError(f.name, value, f"{f.label}: unknown choice {value!r} (choose {allowed})")
        return text
    if t == "unit":
        return _unit(f, state, value)
    if t == "units":
        units = [_unit(f, state, v) for v in _list(value)]
        if len({u.id for u in units}) != len(units):
            raise InputError(f.name, value, f"{f.label}: a unit is listed twice")
        if f.among:
            pool = {u.id for u in done.get(f.among) or ()}
            stray = [u for u in units if u.id not in pool]
            if stray:
                raise InputError(f.name, [u.id for u in stray], f"{f.label}: {', '.join(u.label for u in stray)} "
                                                                f"{'is' if len(stray) == 1 else 'are'} not among them")
        return tuple(units)
    if t == "structure":
        s = state.structures.get(str(value))
        if s is None:
            raise UnknownReference(f.name, value, f"{f.label}: there is no structure {value!r} in this battle")
        for surface in ("wall", "roof"):
            ac = s.armour_class(surface)
            if ac is not None and ac < 0:
                raise InputError(f"{f.name}.{surface}_ac", ac, f"{s.label}: armour class {ac} is negative")
        return s
    if t == "floor":
        level = _number(f, value, int)
        s = done.get("structure")
        if s is not None and s.floor(level) is None:
            levels = ", ".join(str(x.level) for x in s.floors)
            raise UnknownReference(f.name, value, f"{s.label} has no floor {level} (its floors: {levels})")
        return level
    if t == "weapon":
        w = state.weapon(str(value))
        if w is None:
            raise UnknownReference(f.name, value, f"{f.label}: unknown weapon {value!r}")
        if ruleset != "any" and w.ruleset != ruleset:
            raise InputError(f.name, value, f"{w.name} is a {RULESET_NAMES.get(w.ruleset, w.ruleset)} weapon, "
                                            f"not a {RULESET_NAMES[ruleset]} one")
        return w
    if t == "unit_hits":
        pairs = value.items() if isinstance(value, dict) else [p.split("=", 1) for p in _list(value)]
        hits = {}
        for pair in pairs:
            if len(pair) != 2:
                raise InputError(f.name, value, f"{f.label}: write each as unit=hits, e.g. u7=2 (not {pair[0]!r})")
            uid, n = pair
            uid = str(uid).strip()
            if uid != "building":
                _unit(f, state, uid)
            hits[uid] = _number(Field(f"{f.name}.{uid}", "int", f"{f.label} ({uid})", min=0), n, int)
        return hits
    raise AssertionError(f"field type {t!r}")


def parse(spec, state, raw):
    if isinstance(raw, Inputs):
        return raw
    if spec.ruleset != "any" and state.options.ruleset != spec.ruleset:
        raise ActionRefused("action", spec.key, f"{spec.label} is a {RULESET_NAMES[spec.ruleset]} action; this "
                                                f"battle is played with {RULESET_NAMES[state.options.ruleset]}")
    raw = raw or {}
    out = Inputs()
    for f in spec.fields:
        value = raw.get(f.name)
        if value is None or value == "" or value == []:
            if f.required and f.default is None:
                raise InputError(f.name, value, f"{f.label} is required")
            out[f.name] = f.default
        else:
            out[f.name] = _convert(f, value, state, spec.ruleset, out)
    return out


def refuse(field, value, message):
    raise ActionRefused(field, value, message)
