"""What an action did: effects, the dice that decided them, one line of words.

`apply` is pure and strict: an effect that would take damage past its maximum, crew or models
below zero, or name a unit that is not there raises `OutcomeError` rather than being clamped, so a
stale outcome can never corrupt a battle. The rules produce effects that always fit.
"""

from __future__ import annotations

from typing import NamedTuple

from .dice import DieRoll
from .errors import OutcomeError
from .state import BattleState, EventRecord, Fire, SequenceState
from . import tables


class Effect(NamedTuple):
    """One consequence. A NamedTuple: cheap to make and to hash, since exact odds group outcomes by
    their effects."""

    type: str
    target: str  # structure, unit or side id
    n: int | float = 0  # points, hits, pins, men, fire size, event roll…
    floor: int | None = None
    ref: str = ""  # a second id: the weapon, the structure a new unit came from, the beneficiary side
    note: str = ""  # words for the log

    def to_dict(self):
        d = {"type": self.type, "target": self.target}
        for name, default in (("n", 0), ("floor", None), ("ref", ""), ("note", "")):
            value = getattr(self, name)
            if value != default:
                d[name] = value
        return d

    @classmethod
    def from_dict(cls, d):
        return cls(d["type"], d["target"], d.get("n", 0), d.get("floor"), d.get("ref", ""), d.get("note", ""))


class Outcome(NamedTuple):
    action: str
    effects: tuple[Effect, ...]
    dice: tuple[DieRoll, ...]
    summary: str

    def to_dict(self):
        return {"action": self.action, "effects": [e.to_dict() for e in self.effects],
                "dice": [d.to_dict() for d in self.dice], "summary": self.summary}

    @classmethod
    def from_dict(cls, d):
        return cls(d["action"], tuple(Effect.from_dict(e) for e in d["effects"]),
                   tuple(DieRoll.from_dict(r) for r in d["dice"]), d["summary"])

    def of_type(self, *types):
        return [e for e in self.effects if e.type in types]


# ---------------------------------------------------------------------------- apply

class _Work:
    """The state being rebuilt: fresh dicts over the old, immutable records."""

    def __init__(self, state):
        self.structures = dict(state.structures)
        self.units = dict(state.units)
        self.turn = state.turn
        self.sequence = state.sequence
        self.upkeep_turn = state.upkeep_turn

    def structure(self, e):
        try:
            return self.structures[e.target]
        except KeyError:
            raise OutcomeError("effects", e.target, f"{e.type}: no structure {e.target!r} in this battle") from None

    def unit(self, e, uid=None):
        uid = uid or e.target
        try:
            return self.units[uid]
        except KeyError:
            raise OutcomeError("effects", uid, f"{e.type}: no unit {uid!r} in this battle") from None

    def crew(self, e):
        s = self.structure(e)
        if s.crew is None:
            raise OutcomeError("effects", e.target, f"{e.type}: {s.label} has no crew")
        return s, s.crew

    def set_structure(self, s, **changes):
        self.structures[s.id] = s.replace(**changes)

    def set_unit(self, u, **changes):
        self.units[u.id] = u.replace(**changes)

    def leave_floor(self, u):
        s = self.structures.get(u.structure)
        if s is not None:
            self.set_structure(s, floors=tuple(f.replace(unit=None) if f.unit == u.id else f for f in s.floors))


def _fail(e, message):
    raise OutcomeError("effects", e.target, f"{e.type} {e.target}: {message}")


def _damage(w, e):
    s = w.structure(e)
    if e.n < 0 or s.damage_taken + e.n > s.damage_max:
        _fail(e, f"{e.n} points would leave {s.damage_taken + e.n} of {s.damage_max}")
    w.set_structure(s, damage_taken=s.damage_taken + e.n)


def _fire_started(w, e):
    if e.n <= 0:
        _fail(e, "a fire has a positive size")
    w.set_structure(w.structure(e), fire=Fire(e.n, w.turn))


def _fire_grown(w, e):
    s = w.structure(e)
    if s.fire is None or e.n < s.fire.size:
        _fail(e, "only a burning structure's fire grows")
    w.set_structure(s, fire=s.fire.replace(size=e.n))


def _breach_progress(w, e):
    s = w.structure(e)
    if not 0 <= e.n <= s.breach_needed:
        _fail(e, f"{e.n} of {s.breach_needed} breach points")
    w.set_structure(s, breach_scored=e.n)


def _crew_change(field):
    def handler(w, e):
        s, crew = w.crew(e)
        value = getattr(crew, field) + (-e.n if field == "men" else e.n)
        if e.n < 0 or value < 0 or (field == "pins" and value > tables.DH_PINS_TO_ROUT):
            _fail(e, f"crew {field} would be {value}")
        changes = {field: value}
        if field == "men" and value == 0:
            # The crew is one unit (DH-6), and a unit with no one left has no pins and no rout: the map, the
            # campaign's ground and the next session must not show an empty bunker pinned (as unit_destroyed).
            changes.update(pins=0, routed=False)
        w.set_structure(s, crew=crew.replace(**changes))
    return handler


def _pin(w, e):
    if e.target in w.structures:
        return _crew_change("pins")(w, e)
    u = w.unit(e)
    w.set_unit(u, pins=u.pins + e.n)


def _rout(w, e):
    s, crew = w.crew(e)
    w.set_structure(s, crew=crew.replace(routed=True))


def _weapon_destroyed(w, e):
    s, crew = w.crew(e)
    if not 0 <= e.n < len(crew.weapons) or crew.weapons[e.n].destroyed:
        _fail(e, f"no intact weapon #{e.n}")
    weapons = tuple(x.replace(destroyed=True) if i == e.n else x for i, x in enumerate(crew.weapons))
    w.set_structure(s, crew=crew.replace(weapons=weapons))


def _crew_leaves(w, e):
    s, crew = w.crew(e)
    if e.n != crew.men:
        _fail(e, f"{e.n} men leave but the crew has {crew.men}")
    # The crew is one unit (DH-6): its pin markers and its rout go out with it, on the sections it forms;
    # the empty fortification keeps neither.
    w.set_structure(s, crew=crew.replace(men=0, pins=0, routed=False, left=crew.left + e.n))


def _unit_created(w, e):
    from .state import UnitState

    if e.target in w.units:
        _fail(e, "a unit with that id already exists")
    source = w.structures.get(e.ref)
    side = source.crew.side if source is not None and source.crew is not None else e.note
    w.units[e.target] = UnitState(e.target, side, "infantry", name=e.note or e.target, models=int(e.n),
                                  weapons=(), crew_of=e.ref if source is not None and source.crew is not None else None)


def _carries(w, e):
    u = w.unit(e)
    if e.n < 1 or e.ref in u.weapons:
        _fail(e, f"{u.label} cannot be given {e.n} × {e.ref!r}")
    w.set_unit(u, weapons=u.weapons + (e.ref,))


def _casualties(w, e):
    u = w.unit(e)
    if e.n < 0 or e.n > u.models:
        _fail(e, f"{e.n} casualties but {u.models} models")
    w.set_unit(u, models=u.models - e.n)


def _unit_destroyed(w, e):
    u = w.unit(e)
    w.leave_floor(u)
    # Destroyed means no one left: the models and pins shown and counted must say so too.
    w.set_unit(u, destroyed=True, models=0, pins=0, down=False, structure=None, floor=None,
               morale_check_pending=False)
    # Nor does it owe a morale check: one owed would hold its side's pass and the turn's end for good.
    if u.id in w.sequence.pending_morale:
        _seq(w, pending_morale=tuple(x for x in w.sequence.pending_morale if x != u.id))


def _abandon(w, e):
    u = w.unit(e)
    if u.structure is None:
        _fail(e, "is not inside a structure")
    w.leave_floor(u)
    w.set_unit(u, structure=None, floor=None)


def _moved(w, e):
    """Into `ref`'s floor `floor`, or to the spot "x,y" in `note`."""
    u = w.unit(e)
    if u.destroyed:
        _fail(e, "is destroyed")
    w.leave_floor(u)
    if not e.ref:
        try:
            x, y = (float(v) for v in e.note.split(","))
        except ValueError:
            _fail(e, f"{e.note!r} is not a spot x,y")
        w.set_unit(u, structure=None, floor=None, position=(x, y))
        return
    s = w.structures.get(e.ref)
    if s is None:
        _fail(e, f"no structure {e.ref!r}")
    if not any(f.level == e.floor and f.unit is None for f in s.floors):
        _fail(e, f"{s.label} has no empty floor {e.floor}")
    w.set_structure(s, floors=tuple(f.replace(unit=u.id) if f.level == e.floor else f for f in s.floors))
    w.set_unit(u, structure=s.id, floor=e.floor, position=None)


def _rejoins(w, e):
    """A section moved back into the fortification its crew left: its `n` men are the crew again."""
    u, (s, crew) = w.unit(e), w.crew(e._replace(target=e.ref))
    if u.destroyed or u.rejoined or u.crew_of != s.id or e.n != u.models or e.n > crew.left:
        _fail(e, f"{u.label} cannot rejoin {s.label}'s crew with {e.n} men ({crew.left} walked out)")
    w.leave_floor(u)
    # The crew's own pins and rout stay as they are: seed 003 says nothing of a crew coming back in
    # (docs/rules.md, "A section rejoins its crew"). Those who died outside stay counted in `left`: the
    # roster's section holds their loss.
    w.set_structure(w.structures[s.id], crew=crew.replace(men=crew.men + e.n, left=crew.left - e.n))
    w.set_unit(u, rejoined=True, structure=None, floor=None, position=None)


def _seq(w, **changes):
    w.sequence = w.sequence.replace(**changes)


def _activated(w, e):
    u = w.unit(e)
    w.set_unit(u, acted=True)
    # A fireteam activated together may fire in that initiative (seed 002, Fireteam Initiative 2); any other
    # activation, the other side's or another team's, ends it.
    seq = w.sequence
    joined = tuple(t for t in seq.team if w.units[t].side == u.side and w.units[t].fireteam == u.fireteam)
    together = e.note.startswith("fireteam ")
    team = joined + (u.id,) if together else ()
    # A member joining the team activated with it is that activation; anyone else begins a new one.
    starts = seq.starts if together and joined else seq.starts + (len(seq.activated),)
    _seq(w, activated=seq.activated + (u.id,), starts=starts, pass_streak=0, team=team)


def _fireteam_fires(w, e):
    u = w.unit(e)
    if u.id not in w.sequence.team:
        raise OutcomeError("effects", u.id, f"{u.label} is not in a fireteam that may still fire")
    _seq(w, team=tuple(t for t in w.sequence.team if t != u.id))


def _morale(owed):
    def handler(w, e):
        u = w.unit(e)
        w.set_unit(u, morale_check_pending=owed)
        pending = tuple(x for x in w.sequence.pending_morale if x != u.id)
        _seq(w, pending_morale=pending + ((u.id,) if owed else ()))
    return handler


def _uncontrolled_event(w, e):
    row = tables.UNCONTROLLED_EVENTS[int(e.n) - 1]
    record = EventRecord(int(e.n), row["name"], e.target, e.ref, w.turn, w.turn + row["turns"] - 1)
    _seq(w, events=w.sequence.events + (record,))


def _turn_ended(w, e):
    w.turn += 1
    seq = w.sequence
    w.sequence = SequenceState(seq.sides, pending_morale=seq.pending_morale,
                               events=tuple(x for x in seq.events if x.until_turn >= w.turn))
    for u in list(w.units.values()):
        if u.acted or u.down or u.incapacitated:
            w.set_unit(u, acted=False, down=False, incapacitated=False)


def _log_only(kind):
    def handler(w, e):
        if kind == "unit":
            w.unit(e)
        elif kind == "structure":
            w.structure(e)
    return handler


def _flag(kind, **changes):
    def handler(w, e):
        if kind == "unit":
            w.set_unit(w.unit(e), **changes)
        else:
            w.set_structure(w.structure(e), **changes)
    return handler


HANDLERS = {
    "damage": _damage,
    "untenable": _flag("structure", destroyed=True, impassable=True),
    "destroyed": _flag("structure", destroyed=True),
    # What burned is rubble now: the upkeep neither grows a collapsed structure's fire nor lets it
    # attack anyone (docs/rules.md, "a collapse puts its fire out").
    "collapse": _flag("structure", collapsed=True, destroyed=True, fire=None),
    "fire_started": _fire_started,
    "fire_grown": _fire_grown,
    "impassable": _flag("structure", impassable=True),
    "breach_set": lambda w, e: w.set_structure(w.structure(e), breach_needed=int(e.n)),
    "breach_progress": _breach_progress,
    "breached": _flag("structure", breached=True),
    "floor_hit": _log_only("structure"),
    "location_hit": _log_only("structure"),
    "penetrated": _log_only("structure"),
    "not_penetrated": _log_only("structure"),
    "ph_result": _log_only("structure"),
    "guts_check": _log_only("structure"),
    "crew_hits": _log_only("structure"),
    "crew_casualties": _crew_change("men"),
    "penetrating_hits": _crew_change("penetrating_hits"),
    "pin": _pin,
    "rout": _rout,
    "weapon_destroyed": _weapon_destroyed,
    "crew_leaves": _crew_leaves,
    "unit_created": _unit_created,
    "carries": _carries,
    "hits": _log_only("unit"),
    "fire_attack": _log_only("unit"),
    "detected": _log_only("unit"),
    "not_detected": _log_only("unit"),
    "tank_result": _log_only("unit"),
    "casualties": _casualties,
    "went_down": _flag("unit", down=True, acted=True),
    "incapacitated": _flag("unit", incapacitated=True),
    "unit_destroyed": _unit_destroyed,
    "abandon": _abandon,
    "moved": _moved,
    "rejoins": _rejoins,
    "initiative": lambda w, e: _seq(w, initiative=e.target, rolled=True),
    "uncontrolled_event": _uncontrolled_event,
    "passed": lambda w, e: _seq(w, pass_streak=int(e.n), team=()),
    "activated": _activated,
    "fireteam_fires": _fireteam_fires,
    "team_done": lambda w, e: _seq(w, team=()),
    "morale_owed": _morale(True),
    "morale_checked": _morale(False),
    "turn_ended": _turn_ended,
    "upkeep_done": lambda w, e: setattr(w, "upkeep_turn", w.turn),
}


def apply(state: BattleState, outcome: Outcome) -> BattleState:
    """The state after the outcome; `state` itself is never changed."""
    w = _Work(state)
    for e in outcome.effects:
        handler = HANDLERS.get(e.type)
        if handler is None:
            raise OutcomeError("effects", e.type, f"unknown effect type {e.type!r}")
        handler(w, e)
    return state.replace(structures=w.structures, units=w.units, turn=w.turn, sequence=w.sequence,
                         upkeep_turn=w.upkeep_turn)
