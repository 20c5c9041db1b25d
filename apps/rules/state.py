"""The battle as the rules see it: frozen, slotted, JSON-friendly records.

Field names follow the database models (apps/structures, apps/armies, apps/battles) so the
battle screen can build a state from rows without a translation table.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from functools import cache

from . import tables

SIDES = ("A", "B")
FACINGS = ("front", "side", "rear")


# ---------------------------------------------------------------------------- serialisation

def to_jsonable(obj):
    if dataclasses.is_dataclass(obj):
        return obj.to_dict()
    if isinstance(obj, (tuple, list)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return obj


@cache
def _builder(tp):
    """The function that builds a value of type `tp` from its JSON form, or None where the value is
    kept as it is; the type is looked into once, not for every value of every record loaded (that
    was two thirds of loading a battle's sequence, options and fortification sheets)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        classes = [a for a in args if dataclasses.is_dataclass(a)]
        tuples = [a for a in args if typing.get_origin(a) is tuple]
        if not classes and not tuples:
            return None  # an optional plain value
        record = classes[0] if classes else None
        items = (_builder(tuples[0]) or tuple) if tuples else None

        def union(data):
            if data is None:
                return None
            if record is not None and isinstance(data, dict):
                return record.from_dict(data)
            return items(data) if items is not None and isinstance(data, list) else data
        return union
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _builder(args[0])
            return tuple if item is None else lambda data: tuple(item(v) for v in data)
        parts = [_builder(a) or _same for a in args]
        return lambda data: tuple(build(v) for build, v in zip(parts, data))
    if origin is dict:
        value = _builder(args[1])
        return (lambda data: dict(data.items())) if value is None else \
            lambda data: {k: value(v) for k, v in data.items()}
    if dataclasses.is_dataclass(tp):
        return tp.from_dict
    if tp is float:
        return lambda data: float(data) if isinstance(data, int) else data
    return None


def _same(value):
    return value


@cache
def _fields(cls):
    """Each field's name and builder (`_builder`) of a record class."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, _builder(hints[f.name])) for f in dataclasses.fields(cls))


class Record:
    """to_dict/from_dict for the dataclasses here and in outcome.py. Unknown keys are ignored, so
    a newer log or an options dict with house rules still loads."""

    __slots__ = ()

    def to_dict(self):
        return {f.name: to_jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data):
        return cls(**{name: data[name] if build is None else build(data[name])
                      for name, build in _fields(cls) if name in data})

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)


# ---------------------------------------------------------------------------- structures

@dataclass(frozen=True, slots=True)
class Floor(Record):
    level: int
    unit: str | None = None  # Bolt Action: one unit per floor
    openings: dict[str, int] = field(default_factory=dict)  # side -> windows, doors and gaps
    slits: dict[str, int] = field(default_factory=dict)  # side -> firing slits (counted in `openings` too)
    roof: bool = False  # an accessible flat roof is the top floor

    @property
    def label(self):
        return "flat roof" if self.roof else ("ground floor" if self.level == 0 else f"floor {self.level}")

    @property
    def the_label(self):
        """For prose: "on the ground floor", "on floor 2"."""
        return self.label if self.level and not self.roof else f"the {self.label}"


@dataclass(frozen=True, slots=True)
class Fire(Record):
    size: float  # square inches burning
    started_turn: int


@dataclass(frozen=True, slots=True)
class CrewWeapon(Record):
    name: str
    crew: int | str | None = None  # men it needs; "all" = the whole crew; None = none
    location: str = ""  # Main Gun, Infantry, Coaxial, FG…
    destroyed: bool = False
    light_mg: bool = False  # the only weapon a crew may carry out (seed 003)


@dataclass(frozen=True, slots=True)
class CrewState(Record):
    side: str
    men: int
    nco: int = 1
    pins: int = 0
    routed: bool = False
    penetrating_hits: int = 0
    weapons: tuple[CrewWeapon, ...] = ()
    left: int = 0  # men who walked out as infantry sections (dh_leave): on a roster, not lost


@dataclass(frozen=True, slots=True)
class SheetLocation(Record):
    location: str
    d10_from: int
    d10_to: int
    av: int


@dataclass(frozen=True, slots=True)
class SheetWeapon(Record):
    name: str
    crew: int | str | None = None
    location: str | None = None
    range: int | None = None
    rof: int | None = None
    ap: int | None = None
    mm: int | None = None
    dm: int | None = None
    special: str = ""


@dataclass(frozen=True, slots=True)
class FortSheet(Record):
    """A Disposable Heroes fortification card (seed 003). Its dict form is the JSON the
    BunkerSheet model stores: locations {"front": [...], "side": [...], "rear": [...], "top": {"av": n}}."""

    slug: str
    name: str
    kind: str = "bunker"  # bunker | fort
    dm: int = 0
    crew_total: int = 0
    leaders: dict[str, int] = field(default_factory=dict)
    locations: dict[str, tuple[SheetLocation, ...]] = field(default_factory=dict)
    top_av: int | None = None
    weapons: tuple[SheetWeapon, ...] = ()
    features: tuple[str, ...] = ()
    penetration_weapon: str = ""
    penetration_row: tuple[int, ...] = ()
    kind_note: str = ""
    note: str = ""

    def to_dict(self):
        d = Record.to_dict(self)
        top = d.pop("top_av")
        d["locations"] = {**d["locations"], "top": {"av": top}}
        return d

    @classmethod
    def from_dict(cls, data):
        data = dict(data)
        locations = dict(data.get("locations") or {})
        top = locations.pop("top", None) or {}
        data["locations"] = locations
        data["top_av"] = top.get("av")
        return Record.from_dict.__func__(cls, data)

    def location_for(self, facing, face):
        return next((loc for loc in self.locations.get(facing, ()) if loc.d10_from <= face <= loc.d10_to), None)


@dataclass(frozen=True, slots=True)
class StructureState(Record):
    id: str
    kind: str = "building"
    name: str = ""
    wall_material: str | None = None
    roof_material: str | None = None
    wall_ac: int | None = None  # when set, overrides the material's class (military materials: Rule 16)
    roof_ac: int | None = None
    construction: str = "other"  # wooden | brick | stone | concrete | earth | metal | other
    flammable: bool = False  # contains wood, fabric, plastic… whatever its walls are made of
    flimsy: bool = False
    floors: tuple[Floor, ...] = (Floor(0),)
    area: float = 36.0  # square inches: how far a fire can grow
    damage_max: int = 0
    damage_taken: int = 0
    fire: Fire | None = None
    collapsed: bool = False
    destroyed: bool = False  # untenable: nobody may occupy it or move through it
    impassable: bool = False
    breach_needed: int = 0
    breach_scored: int = 0
    breached: bool = False
    crew: CrewState | None = None
    sheet: FortSheet | None = None

    @property
    def label(self):
        return self.name or self.id

    @property
    def is_bunker(self):
        """Bolt Action's bunker rules cover bunkers, pillboxes and every reinforced structure."""
        return self.kind in tables.FORTIFICATION_KINDS

    def floor(self, level):
        floors = self.floors
        if 0 <= level < len(floors) and floors[level].level == level:  # the usual layout: index = level
            return floors[level]
        return next((f for f in floors if f.level == level), None)

    @property
    def top_floor(self):
        return max(f.level for f in self.floors)

    @property
    def has_roof(self):
        """A foxhole, a trench, an open emplacement has none: no armour class to strike (LG-4)."""
        return bool(self.roof_material) or self.roof_ac is not None

    def armour_class(self, surface):
        explicit = self.roof_ac if surface == "roof" else self.wall_ac
        if explicit is not None:
            return explicit
        material = self.roof_material if surface == "roof" else self.wall_material
        table = tables.ROOF_ARMOR_CLASS if surface == "roof" else tables.MATERIAL_ARMOR_CLASS
        return table.get(material)

    def is_flammable(self, surface):
        """LG-25: a surface burns if it is made of, or contains, flammable material. Its material says
        the first. The structure's `flammable` flag says the second, but only where the materials do not
        already account for it: the builder and imports set the flag when either material burns, and
        a timber roof does not make the brick walls under it burn."""
        material = self.roof_material if surface == "roof" else self.wall_material
        if material in tables.FLAMMABLE_MATERIALS:
            return True
        return self.flammable and not {self.wall_material, self.roof_material} & tables.FLAMMABLE_MATERIALS

    @property
    def damage_pct(self):
        return 100 * self.damage_taken / self.damage_max if self.damage_max else 0


# ---------------------------------------------------------------------------- units and weapons

@dataclass(frozen=True, slots=True)
class UnitState(Record):
    id: str
    side: str
    kind: str = "infantry"  # infantry | artillery | vehicle
    name: str = ""
    tank_class: str = ""  # "" | heavy | super_heavy
    experience: str = "regular"  # inexperienced | regular | veteran
    models: int = 1
    down: bool = False
    pins: int = 0
    acted: bool = False
    incapacitated: bool = False
    morale_check_pending: bool = False
    fireteam: str = ""
    destroyed: bool = False
    structure: str | None = None
    floor: int | None = None
    position: tuple[float, float] | None = None
    weapons: tuple[str, ...] = ()
    crew_of: str | None = None  # DH: the fortification whose crew walked out as this section
    rejoined: bool = False  # DH: moved back into it; its men are that crew's again, it is off the table

    @property
    def label(self):
        return self.name or self.id


@dataclass(frozen=True, slots=True)
class WeaponProfile(Record):
    key: str
    name: str
    ruleset: str
    # LaserGrenadiers (seed 004)
    weapon_type: str = ""  # key of tables.ATTACK_FACTOR, e.g. fusion_small_arms, laser_cannon
    attack_factor: int | None = None  # overrides the type's factor (weapon charts)
    range_factor: float | None = None
    min_range: float | None = None
    rof_code: str = ""  # A B P R S
    weapon_class: str = ""  # L M H G U
    effect_area: float = 0.0  # inches; 0 = none or not known
    has_effect_area: bool = False  # the seeds say it has one, whether or not its size is known
    detection_effect: int = 0
    barrels: int = 1
    vehicle_only: bool = False
    variable_fire: bool = False
    convergence: bool = False
    # Bolt Action (seed 001)
    he_value: str = ""  # D3 D6 2D6 3D6
    flamethrower: bool = False
    heavy_weapon: bool = False
    heavy_howitzer: bool = False
    indirect: bool = False
    # Disposable Heroes (seed 003)
    dh_category: str = ""  # small_arms main_gun infantry_at atr flamethrower explosives
    ap: int | None = None
    rof: int | None = None
    mm: int | None = None
    dm: int | None = None
    penetration_row: tuple[int, ...] = ()

    @property
    def with_effect_area(self):
        return self.has_effect_area or self.effect_area > 0


# ---------------------------------------------------------------------------- battle

@dataclass(frozen=True, slots=True)
class BattleOptions(Record):
    ruleset: str = "ba"  # lg | ba | dh
    damage_variant: int = 0  # 0 = no damage points, else LG variant 1/2/3
    collapse_check: bool = False
    fires: bool = True
    uncontrolled_events: bool = False
    fireteam_initiative: bool = False
    weather: str = "clear"  # clear | mist | rain | very_strong_wind
    dh_overlap: str = "11+"  # PH table: "11+" (9–10, then 11 or more) or "10+" (9, then 10 or more)
    section_size: int = 10  # DH: men per unit when a crew leaves its fortification


@dataclass(frozen=True, slots=True)
class EventRecord(Record):
    roll: int
    name: str
    affects: str  # side whose forces the event affects (who rolled it)
    beneficiary: str
    turn: int
    until_turn: int


@dataclass(frozen=True, slots=True)
class SequenceState(Record):
    """LaserGrenadiers sequence of play (seed 002)."""

    sides: tuple[str, str] = SIDES
    initiative: str | None = None
    rolled: bool = False
    pass_streak: int = 0
    activated: tuple[str, ...] = ()
    # Where each of this turn's activations begins in `activated`: one piece's, or a fireteam's activated
    # together. Two activations of one fireteam's members in a row are two, and only the latest moves.
    starts: tuple[int, ...] = ()
    pending_morale: tuple[str, ...] = ()
    events: tuple[EventRecord, ...] = ()
    # Fireteam initiative (seed 002): the members of the fireteam just activated together that have not
    # fired yet; they may, until anyone else acts or passes.
    team: tuple[str, ...] = ()

    def other(self, side):
        return self.sides[1] if side == self.sides[0] else self.sides[0]


@dataclass(frozen=True, slots=True)
class BattleState(Record):
    structures: dict[str, StructureState] = field(default_factory=dict)
    units: dict[str, UnitState] = field(default_factory=dict)
    weapons: dict[str, WeaponProfile] = field(default_factory=dict)
    turn: int = 1
    options: BattleOptions = BattleOptions()
    sequence: SequenceState = SequenceState()
    upkeep_turn: int = 0  # the last turn whose start-of-turn upkeep was resolved

    @classmethod
    def build(cls, structures=(), units=(), weapons=(), **kwargs):
        """A state from lists, with each floor's occupant filled in from the units."""
        units = {u.id: u for u in units}
        inside = {}  # structure id -> floor -> unit id, in one pass over the units (not one per structure)
        for u in units.values():
            if u.structure is not None and not u.destroyed:
                inside.setdefault(u.structure, {})[u.floor] = u.id
        built = {}
        for s in structures:
            here = inside.get(s.id)
            if here and any(not f.unit and f.level in here for f in s.floors):
                s = s.replace(floors=tuple(f if f.unit or f.level not in here else f.replace(unit=here[f.level])
                                           for f in s.floors))
            built[s.id] = s
        if isinstance(kwargs.get("options"), dict):
            kwargs["options"] = BattleOptions.from_dict(kwargs["options"])
        seq = kwargs.get("sequence")
        if seq is None:
            pending = tuple(u.id for u in units.values() if u.morale_check_pending)
            kwargs["sequence"] = SequenceState(pending_morale=pending)
        return cls(built, units, {w.key: w for w in weapons}, **kwargs)

    def occupants(self, structure_id, floor=None):
        """Units inside a structure (on one floor if given), in floor order."""
        inside = [u for u in self.units.values()
                  if u.structure == structure_id and not u.destroyed and (floor is None or u.floor == floor)]
        return sorted(inside, key=lambda u: (u.floor or 0, u.id))

    def weapon(self, key):
        return self.weapons.get(key) or WEAPONS.get(key)


WEAPONS = {d["key"]: WeaponProfile.from_dict(d) for d in tables.EXAMPLE_WEAPONS}
