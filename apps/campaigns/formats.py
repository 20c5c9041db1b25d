"""JSON import and export of a whole scenario: the versioned format "redoubt.scenario"
(docs/formats.md). It embeds the bunker sheets its structures use in the sheet format of
apps/structures/formats.py, and both forces with their units and catalogue weapons.

`export_scenario(scenario) -> dict` and `import_scenario(data, *, club, user) -> Scenario` are plain
functions; `export_structure`/`export_army` and the `clean_*` checkers are the pieces a
whole-campaign export can reuse. Rows are written in the file's order and exported in id order, so
export → import → export gives the same bytes.
"""

from decimal import Decimal

from django.db import DatabaseError, transaction
from django.db.models import Q

from apps.armies.models import Army, Experience, Side as ArmySide, TankClass, Unit, UnitKind, UnitWeapon, Weapon
from apps.campaigns.models import Club, DamageVariant, Ruleset, Scenario, Weather
from apps.structures.formats import (ROOT, Checker, FormatErrors, _check_designer, check_document, clean_sheet,
                                     first_free, item, join, new_sheet, number, sheet_body, show, unique_sheet_name,
                                     unique_slug)
from apps.structures.models import (NO_CREW, BunkerSheet, Floor, Material, Opening, OpeningKind, Side, Structure,
                                    StructureKind, footprint_reach, has_crews)

SCENARIO_FORMAT = "redoubt.scenario"
SCENARIO_VERSION = 1

SHEET_KINDS = ("bunker", "fort", "pillbox", "strongpoint", "weapon_turret", "weapon_emplacement")
RULE_KEYS = ("ruleset", "damage_variant", "collapse_check", "fires", "uncontrolled_events", "fireteam_initiative",
             "weather", "options")
TOP_KEYS = ("format", "version", "name", "description", "table", "rules", "deployment_zones", "sheets",
            "structures", "armies")
STRUCTURE_KEYS = ("name", "kind", "wall_material", "roof_material", "flammable", "flimsy", "x", "y", "width",
                  "depth", "rotation", "damage_max", "breach_needed", "sheet", "facing", "crew_side", "crew_men",
                  "floors", "connections", "state")
STATE_DEFAULTS = {  # a structure's battle state: exported only where it differs from a fresh structure
    "damage_taken": 0, "fire_size": None, "fire_started_turn": None, "collapsed": False, "destroyed": False,
    "impassable": False, "breach_scored": 0, "breached": False, "crew_pins": 0, "crew_routed": False,
    "crew_penetrating_hits": 0, "weapons_destroyed": [], "crew_left": 0,
}
UNIT_KEYS = ("name", "kind", "tank_class", "experience", "models", "fireteam", "at", "weapons", "state", "crew_of")
UNIT_STATE_DEFAULTS = {"models_left": None, "down": False, "pins": 0, "acted": False, "incapacitated": False,
                       "morale_check_pending": False, "destroyed": False, "rejoined": False}
MAX_ITEMS = 500
SMALL = 32767  # PositiveSmallIntegerField
# What the builder's forms take, so an imported scenario can be edited there afterwards.
MAX_OPENINGS, MAX_WEAPONS = 99, 999
BIG = 2147483647


# ---------------------------------------------------------------------------------- export

def export_zone(zone):
    zone = zone if isinstance(zone, dict) else {}
    return {"side": zone.get("side"), **{k: _json_number(zone.get(k)) for k in ("x", "y", "width", "depth")}}


def _json_number(value):
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        return value
    try:
        return number(Decimal(str(value)))
    except ArithmeticError:
        return value


def export_structure(structure, index, ruleset=None):
    """One structure; `index` maps structure ids to their place in the file (for connections). In a
    `ruleset` without sheet crews it has none, whatever an old undo left in its row (the import
    would refuse one)."""
    crew = NO_CREW if crewless(ruleset) else {key: getattr(structure, key) for key in NO_CREW}
    state = {key: crew[key] if key in crew else getattr(structure, key) for key in STATE_DEFAULTS}
    state["fire_size"] = number(state["fire_size"])
    state = {k: v for k, v in state.items() if v != STATE_DEFAULTS[k]}
    out = {
        "name": structure.name,
        "kind": structure.kind,
        "wall_material": structure.wall_material.slug,
        "roof_material": structure.roof_material.slug if structure.roof_material_id else None,
        "flammable": structure.flammable,
        "flimsy": structure.flimsy,
        "x": number(structure.x),
        "y": number(structure.y),
        "width": number(structure.width),
        "depth": number(structure.depth),
        "rotation": number(structure.rotation),
        "damage_max": structure.damage_max,
        "breach_needed": structure.breach_needed,
        "sheet": structure.sheet.slug if structure.sheet_id else None,
        "facing": number(structure.facing),
        "crew_side": crew["crew_side"],
        "crew_men": crew["crew_men"],
        "floors": [
            {"level": floor.level, "is_roof": floor.is_roof,
             "openings": [{"side": o.side, "kind": o.kind, "count": o.count} for o in floor.opening_rows]}
            for floor in structure.floor_rows
        ],
        "connections": sorted(index[pk] for pk in structure.connected_ids if pk in index),
    }
    if state:
        out["state"] = state
    return out


def export_unit(unit, index):
    at = None
    if unit.floor_id is not None and unit.floor.structure_id in index:
        at = {"structure": index[unit.floor.structure_id], "floor": unit.floor.level}
    elif unit.x is not None:
        at = {"x": number(unit.x), "y": number(unit.y)}
    state = {key: getattr(unit, key) for key in UNIT_STATE_DEFAULTS}
    state = {k: v for k, v in state.items()
             if (v != unit.models_start if k == "models_left" else v != UNIT_STATE_DEFAULTS[k])}
    out = {
        "name": unit.name, "kind": unit.kind, "tank_class": unit.tank_class, "experience": unit.experience,
        "models": unit.models_start, "fireteam": unit.fireteam, "at": at,
        "weapons": [{"weapon": uw.weapon.slug, "count": uw.count} for uw in unit.weapon_rows],
    }
    if state:
        out["state"] = state
    if unit.crew_of_id in index:
        # Only where set: files of units that are nobody's crew section read as they always did.
        out["crew_of"] = index[unit.crew_of_id]
    return out


def export_army(army, index):
    return {"side": army.side, "name": army.name, "units": [export_unit(u, index) for u in army.unit_rows]}


def load_grounds(owner, owners):
    """{owner id: (structures, armies)} for every scenario, campaign or battle (`owner`) in the queryset
    `owners`, as the export reads them, in eight queries however many owners and rows there are: each
    child table is read once, by a join on the owners' query rather than a list of ids (a campaign of
    hundreds of battles has more floors than one statement may carry parameters). In id order, the
    children as plain lists: `structure.floor_rows` (by level), `floor.opening_rows`,
    `structure.connected_ids`, `army.unit_rows`, `unit.weapon_rows` (UnitWeapon rows with their weapon)."""
    grounds = {pk: ([], []) for pk in owners.values_list("pk", flat=True)}
    mine = {f"{owner}__in": owners}
    structures = {s.pk: s for s in Structure.objects.filter(**mine).select_related("wall_material", "roof_material",
                                                                                   "sheet").order_by("pk")}
    floors = {}
    for s in structures.values():
        s.floor_rows, s.connected_ids = [], []
        grounds[getattr(s, f"{owner}_id")][0].append(s)
    for floor in Floor.objects.filter(**{f"structure__{owner}__in": owners}).order_by("structure_id", "level"):
        floor.opening_rows = []
        structures[floor.structure_id].floor_rows.append(floor)
        floors[floor.pk] = floor
    for opening in Opening.objects.filter(**{f"floor__structure__{owner}__in": owners}).order_by("pk"):
        floors[opening.floor_id].opening_rows.append(opening)
    through = Structure.connections.through
    for a, b in (through.objects.filter(**{f"from_structure__{owner}__in": owners})
                 .values_list("from_structure_id", "to_structure_id")):
        structures[a].connected_ids.append(b)
    armies = {a.pk: a for a in Army.objects.filter(**mine).order_by("side", "pk")}
    units = {}
    for army in armies.values():
        army.unit_rows = []
        grounds[getattr(army, f"{owner}_id")][1].append(army)
    for unit in Unit.objects.filter(**{f"army__{owner}__in": owners}).select_related("floor").order_by("pk"):
        unit.weapon_rows = []
        armies[unit.army_id].unit_rows.append(unit)
        units[unit.pk] = unit
    for uw in UnitWeapon.objects.filter(**{f"unit__army__{owner}__in": owners}).select_related("weapon").order_by("pk"):
        units[uw.unit_id].weapon_rows.append(uw)
    return grounds


def export_scenario(scenario, ground=None):
    """The file of `scenario`; `ground` is its (structures, armies) from `load_grounds` when the caller
    has already read it."""
    structures, armies = ground or load_grounds("scenario", Scenario.objects.filter(pk=scenario.pk))[scenario.pk]
    index = {s.pk: i for i, s in enumerate(structures)}
    sheets = []
    for structure in structures:
        if structure.sheet_id and structure.sheet not in sheets:
            sheets.append(structure.sheet)
    return {
        "format": SCENARIO_FORMAT,
        "version": SCENARIO_VERSION,
        "name": scenario.name,
        "description": scenario.description,
        "table": {"width": number(scenario.table_width), "depth": number(scenario.table_depth)},
        "rules": {key: getattr(scenario, key) for key in RULE_KEYS},
        "deployment_zones": [export_zone(z) for z in (scenario.deployment_zones or [])],
        "sheets": [sheet_body(s) for s in sheets],
        "structures": [export_structure(s, index, scenario.ruleset) for s in structures],
        "armies": [export_army(a, index) for a in armies],
    }


# ---------------------------------------------------------------------------------- checking

def coordinate(path, value, c, high=None):
    return c.decimal(path, value, places=2, max_digits=6, low=0, high=high)


def clean_rules(path, value, c):
    d = c.obj(path, value, RULE_KEYS, required=("ruleset",))
    if d is None:
        return None
    f = c.field
    out = {
        "ruleset": f(d, path, "ruleset", c.choice, tuple(Ruleset.values)),
        "damage_variant": f(d, path, "damage_variant", c.integer, 0, 3, default=DamageVariant.NONE),
        "collapse_check": f(d, path, "collapse_check", c.boolean, default=False),
        "fires": f(d, path, "fires", c.boolean, default=True),
        "uncontrolled_events": f(d, path, "uncontrolled_events", c.boolean, default=False),
        "fireteam_initiative": f(d, path, "fireteam_initiative", c.boolean, default=False),
        "weather": f(d, path, "weather", c.choice, tuple(Weather.values), default=Weather.CLEAR),
        "options": f(d, path, "options", clean_options, c, default=dict),
    }
    if out["collapse_check"] and out["damage_variant"] == 0:
        # As the scenario's settings say: LG-21 reads the damage taken, which needs damage points.
        c.error(join(path, "collapse_check"), "a collapse check reads the damage points: set damage_variant "
                                              "to 1, 2 or 3, or leave it false")
    return out


def clean_options(path, value, c, depth=0):
    """House-rule settings: any JSON the database can store, nested at most four deep."""
    if depth == 0 and not isinstance(value, dict):
        c.error(path, f"must be an object, not {show(value) if isinstance(value, str) else type(value).__name__}")
        return None
    if depth > 4:
        c.error(path, "is nested too deeply (at most 4 levels)")
        return None
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if c.clean_string(join(path, key), key):
                out[key] = clean_options(join(path, key), v, c, depth + 1)
        return out
    if isinstance(value, list):
        return [clean_options(item(path, i), v, c, depth + 1) for i, v in enumerate(value)]
    if isinstance(value, str):
        return value if c.clean_string(path, value) else None
    if isinstance(value, float) and abs(value) > 1e300:
        c.error(path, "is too large")
        return None
    return value


def clean_table(path, value, c):
    d = c.obj(path, value, ("width", "depth"), required=("width", "depth"))
    if d is None:
        return None, None
    width = c.field(d, path, "width", c.decimal, places=2, max_digits=6, low=0, low_open=True)
    depth = c.field(d, path, "depth", c.decimal, places=2, max_digits=6, low=0, low_open=True)
    return width, depth


def clean_zone(c, path, value, width, depth):
    d = c.obj(path, value, ("side", "x", "y", "width", "depth"), required=("side", "x", "y", "width", "depth"))
    if d is None:
        return None
    f = c.field
    zone = {
        "side": f(d, path, "side", c.choice, tuple(ArmySide.values)),
        "x": f(d, path, "x", coordinate, c, width),
        "y": f(d, path, "y", coordinate, c, depth),
        "width": f(d, path, "width", c.decimal, places=2, max_digits=6, low=0, low_open=True),
        "depth": f(d, path, "depth", c.decimal, places=2, max_digits=6, low=0, low_open=True),
    }
    if None in zone.values():
        return None
    if width is not None and zone["x"] + zone["width"] > width:
        c.error(join(path, "width"), f"runs off the table: x + width = {number(zone['x'] + zone['width'])} > {number(width)}")
    if depth is not None and zone["y"] + zone["depth"] > depth:
        c.error(join(path, "depth"), f"runs off the table: y + depth = {number(zone['y'] + zone['depth'])} > {number(depth)}")
    return {"side": zone["side"], **{k: number(zone[k]) for k in ("x", "y", "width", "depth")}}


def clean_structure(c, path, value, *, width, depth, materials, sheets, broken, count, ruleset=None):
    """`ruleset` (when the file's rules named a known one) decides whether it may have a sheet crew."""
    d = c.obj(path, value, STRUCTURE_KEYS, required=("name", "wall_material"))
    if d is None:
        return None
    f = c.field
    kind = f(d, path, "kind", c.choice, tuple(StructureKind.values), default=StructureKind.BUILDING)
    wall = f(d, path, "wall_material", material, c, materials, "wall")
    roof = f(d, path, "roof_material", material, c, materials, "roof", default=None)
    sheet = f(d, path, "sheet", sheet_ref, c, sheets, broken, default=None)
    if sheet is not None and kind is not None and kind not in SHEET_KINDS:
        c.error(join(path, "sheet"), f"only fortifications have a sheet ({', '.join(SHEET_KINDS)}), not a {kind}")
    out = {
        "name": f(d, path, "name", c.text, 120, False),
        "kind": kind,
        "wall_material": wall,
        "roof_material": roof,
        "flammable": f(d, path, "flammable", c.boolean,
                       default=lambda: bool((wall and wall.flammable) or (roof and roof.flammable))),
        "flimsy": f(d, path, "flimsy", c.boolean, default=False),
        "x": f(d, path, "x", coordinate, c, width, default=Decimal(0)),
        "y": f(d, path, "y", coordinate, c, depth, default=Decimal(0)),
        "width": f(d, path, "width", c.decimal, places=2, max_digits=6, low=0, low_open=True, default=Decimal(6)),
        "depth": f(d, path, "depth", c.decimal, places=2, max_digits=6, low=0, low_open=True, default=Decimal(6)),
        "rotation": f(d, path, "rotation", angle, c, default=Decimal(0)),
        "damage_max": f(d, path, "damage_max", c.integer, 0, BIG, default=0),
        "breach_needed": f(d, path, "breach_needed", c.integer, 0, SMALL, default=0),
        "sheet": sheet,
        "facing": f(d, path, "facing", angle, c, default=Decimal(0)),
        "crew_side": f(d, path, "crew_side", c.choice, ("", "A", "B"), default=""),
        "crew_men": f(d, path, "crew_men", c.integer, 0, SMALL,
                      default=lambda: sheet["crew_total"] if sheet and crewless(ruleset) is None else 0),
        "floors": f(d, path, "floors", clean_floors, c, default=list),
        "connections": f(d, path, "connections", connections, c, count, default=list),
    }
    out["state"] = f(d, path, "state", clean_state, c, out, default=dict)
    drop_crew(c, path, ruleset, out, out["state"])
    return out


def crewless(ruleset):
    """Why a structure of `ruleset` has no sheet crew, or None when it may have one (or the ruleset is unknown)."""
    if ruleset is None or has_crews(ruleset) or ruleset not in Ruleset.values:
        return None
    return (f"a {Ruleset(ruleset).label} structure has no crew (a sheet's crew is Disposable Heroes'; "
            "units hold a bunker, as they hold a building)")


def drop_crew(c, path, ruleset, structure, state, fields=("crew_side", "crew_men")):
    """A crewless ruleset's structure keeps no crew value it is given. Left out with a note rather than
    refused: files this app wrote before Bolt Action bunkers lost their sheet crews carry them."""
    why = crewless(ruleset)
    if why is None:
        return
    dropped = False
    for key in fields:
        if structure.get(key) not in (None, NO_CREW[key]):
            structure[key], dropped = NO_CREW[key], True
    for key in list(state or {}):
        if key in NO_CREW and state[key] not in (None, NO_CREW[key]):
            state[key], dropped = NO_CREW[key], True
    if dropped:
        c.note(path, f"its crew was left out: {why}")


def angle(path, value, c):
    return c.decimal(path, value, places=1, max_digits=5, low=0, high=Decimal("359.9"))


def material(path, value, c, materials, surface):
    if surface == "roof" and value is None:
        return None
    if not isinstance(value, str):
        c.error(path, f"must be a {surface} material's slug, not {show(value)}")
        return None
    found = materials.get((surface, value))
    if found is None:
        known = ", ".join(sorted(slug for s, slug in materials if s == surface))
        c.error(path, f"{show(value)} is not a {surface} material (known: {known})")
    return found


def sheet_ref(path, value, c, sheets, broken=()):
    if value is None or (isinstance(value, str) and value in broken):
        return None
    if not isinstance(value, str) or value not in sheets:
        c.error(path, f"{show(value)} is not the slug of one of the file's sheets")
        return None
    return sheets[value]


def clean_floors(path, value, c):
    rows = c.array(path, value, 50)
    if rows is None:
        return None
    out, levels = [], set()
    for i, row in enumerate(rows):
        at = item(path, i)
        d = c.obj(at, row, ("level", "is_roof", "openings"), required=("level",))
        if d is None:
            continue
        level = c.field(d, at, "level", c.integer, 0, 99)
        if level is not None and level in levels:
            c.error(join(at, "level"), f"floor {level} is listed twice")
        levels.add(level)
        out.append({"level": level, "is_roof": c.field(d, at, "is_roof", c.boolean, default=False),
                    "openings": c.field(d, at, "openings", clean_openings, c, default=list)})
    if None not in levels and sorted(levels) != list(range(len(levels))):
        # The structure page edits floors by level 0, 1, 2…, and a building has no missing storey.
        c.error(path, f"floor levels must run 0, 1, 2… without a gap, not {', '.join(map(str, sorted(levels)))}")
    roofs = [f["level"] for f in out if f["is_roof"]]
    if roofs and None not in levels and roofs != [max(levels)]:
        c.error(path, "only the top floor can be a flat roof")
    return out


def clean_openings(path, value, c):
    rows = c.array(path, value, 20)
    if rows is None:
        return None
    out, seen = [], set()
    for i, row in enumerate(rows):
        at = item(path, i)
        d = c.obj(at, row, ("side", "kind", "count"), required=("side", "kind"))
        if d is None:
            continue
        side = c.field(d, at, "side", c.choice, tuple(Side.values))
        kind = c.field(d, at, "kind", c.choice, tuple(OpeningKind.values))
        count = c.field(d, at, "count", c.integer, 1, MAX_OPENINGS, default=1)
        if side and kind and (side, kind) in seen:
            c.error(at, f"the {side} side already has a row of {kind.replace('_', ' ')}s: add up the count instead")
        seen.add((side, kind))
        if kind == OpeningKind.MADE_OPENING and count not in (None, 1):
            c.error(join(at, "count"), "a made opening is one gap (count 1)")
        out.append({"side": side, "kind": kind, "count": count})
    return out


def connections(path, value, c, count):
    rows = c.array(path, value, MAX_ITEMS)
    if rows is None:
        return None
    out = []
    for i, v in enumerate(rows):
        index = c.integer(item(path, i), v, 0, max(count - 1, 0))
        if index is not None and index in out:
            c.error(item(path, i), f"structure {index} is listed twice")
        out.append(index)
    return out


def clean_state(path, value, c, structure):
    d = c.obj(path, value, tuple(STATE_DEFAULTS))
    if d is None:
        return None
    f = c.field
    out = {
        "damage_taken": f(d, path, "damage_taken", c.integer, 0, BIG, default=0),
        "fire_size": f(d, path, "fire_size", fire_size, c, default=None),
        "fire_started_turn": f(d, path, "fire_started_turn", c.integer, 1, BIG, null=True, default=None),
        "collapsed": f(d, path, "collapsed", c.boolean, default=False),
        "destroyed": f(d, path, "destroyed", c.boolean, default=False),
        "impassable": f(d, path, "impassable", c.boolean, default=False),
        "breach_scored": f(d, path, "breach_scored", c.integer, 0, SMALL, default=0),
        "breached": f(d, path, "breached", c.boolean, default=False),
        "crew_pins": f(d, path, "crew_pins", c.integer, 0, 3, default=0),
        "crew_routed": f(d, path, "crew_routed", c.boolean, default=False),
        "crew_penetrating_hits": f(d, path, "crew_penetrating_hits", c.integer, 0, SMALL, default=0),
        "weapons_destroyed": f(d, path, "weapons_destroyed", weapon_indexes, c, structure["sheet"], default=list),
        "crew_left": f(d, path, "crew_left", c.integer, 0, SMALL, default=0),
    }
    damage_max = structure["damage_max"]
    if out["damage_taken"] and damage_max is not None and out["damage_taken"] > damage_max:
        c.error(join(path, "damage_taken"), f"is more than damage_max ({out['damage_taken']} > {damage_max})")
    needed = structure["breach_needed"]
    if out["breach_scored"] and needed and out["breach_scored"] > needed:
        c.error(join(path, "breach_scored"), f"is more than breach_needed ({out['breach_scored']} > {needed})")
    return out


def fire_size(path, value, c):
    if value is None:
        return None
    return c.decimal(path, value, places=2, max_digits=8, low=0, low_open=True)


def weapon_indexes(path, value, c, sheet):
    rows = c.array(path, value, 50)
    if rows is None:
        return None
    high = len(sheet["weapons"]) - 1 if sheet else -1
    out = []
    for i, v in enumerate(rows):
        if high < 0:
            c.error(item(path, i), "the structure has no sheet weapons to lose")
            break
        out.append(c.integer(item(path, i), v, 0, high))
    return out


def clean_army(c, path, value, *, weapons, ruleset, structures, width, depth):
    d = c.obj(path, value, ("side", "name", "units"), required=("side", "name"))
    if d is None:
        return None
    units = c.field(d, path, "units", c.array, MAX_ITEMS, default=list) or []
    return {
        "side": c.field(d, path, "side", c.choice, tuple(ArmySide.values)),
        "name": c.field(d, path, "name", c.text, 120, False),
        "units": [clean_unit(c, item(join(path, "units"), i), u, weapons=weapons, ruleset=ruleset,
                             structures=structures, width=width, depth=depth) for i, u in enumerate(units)],
    }


def clean_unit(c, path, value, *, weapons, ruleset, structures, width, depth):
    d = c.obj(path, value, UNIT_KEYS, required=("name",))
    if d is None:
        return None
    f = c.field
    kind = f(d, path, "kind", c.choice, tuple(UnitKind.values), default=UnitKind.INFANTRY)
    tank_class = f(d, path, "tank_class", c.choice, tuple(TankClass.values), default=TankClass.NONE)
    if tank_class and kind not in (None, UnitKind.VEHICLE):
        c.error(join(path, "tank_class"), f"only a vehicle has a tank class, not {kind}")
    models = f(d, path, "models", c.integer, 1, SMALL, default=1)
    out = {
        "name": f(d, path, "name", c.text, 120, False),
        "kind": kind,
        "tank_class": tank_class,
        "experience": f(d, path, "experience", c.choice, tuple(Experience.values), default=Experience.REGULAR),
        "models": models,
        "fireteam": f(d, path, "fireteam", c.text, 40, default=""),
        "at": f(d, path, "at", position, c, structures, width, depth, default=None),
        "weapons": f(d, path, "weapons", unit_weapons, c, weapons, ruleset, default=list),
    }
    out["state"] = f(d, path, "state", unit_state, c, models, default=dict)
    crew_of = f(d, path, "crew_of", c.integer, 0, max(len(structures) - 1, 0), default=None)
    if crew_of is not None and crew_of >= len(structures):
        c.error(join(path, "crew_of"), "the file has no structures")
        crew_of = None
    out["crew_of"] = crew_of
    return out


def position(path, value, c, structures, width, depth):
    if value is None:
        return None
    if isinstance(value, dict) and "structure" in value:
        d = c.obj(path, value, ("structure", "floor"), required=("structure", "floor"))
        if d is None:
            return None
        index = c.field(d, path, "structure", c.integer, 0, max(len(structures) - 1, 0))
        level = c.field(d, path, "floor", c.integer, 0, 99)
        if index is None or level is None or index >= len(structures):
            if index is not None and index >= len(structures):
                c.error(join(path, "structure"), "the file has no structures")
            return None
        target = structures[index]
        if target is not None and target["floors"] is not None:
            if level not in [fl["level"] for fl in target["floors"]]:
                c.error(join(path, "floor"), f"structure {index} ({show(target['name'] or '')}) has no floor {level}")
                return None
        return {"structure": index, "floor": level}
    d = c.obj(path, value, ("x", "y"), required=("x", "y"))
    if d is None:
        return None
    x = c.field(d, path, "x", coordinate, c, width)
    y = c.field(d, path, "y", coordinate, c, depth)
    return None if x is None or y is None else {"x": x, "y": y}


def unit_weapons(path, value, c, weapons, ruleset):
    rows = c.array(path, value, 50)
    if rows is None:
        return None
    out, seen = [], set()
    for i, row in enumerate(rows):
        at = item(path, i)
        d = c.obj(at, row, ("weapon", "count"), required=("weapon",))
        if d is None:
            continue
        slug = d.get("weapon")
        weapon = None
        if not isinstance(slug, str):
            c.error(join(at, "weapon"), f"must be a weapon's slug, not {show(slug)}")
        elif ruleset is not None:
            weapon = weapons.get(slug)
            if weapon is None:
                c.error(join(at, "weapon"), f"{show(slug)} is not in the {Ruleset(ruleset).label} weapon catalogue")
            elif slug in seen:
                c.error(join(at, "weapon"), f"{show(slug)} is listed twice: add up the count instead")
        seen.add(slug if isinstance(slug, str) else None)
        out.append({"weapon": weapon, "count": c.field(d, at, "count", c.integer, 1, MAX_WEAPONS, default=1)})
    return out


def unit_state(path, value, c, models):
    d = c.obj(path, value, tuple(UNIT_STATE_DEFAULTS))
    if d is None:
        return None
    f = c.field
    out = {
        "models_left": f(d, path, "models_left", c.integer, 0, SMALL, default=models),
        "down": f(d, path, "down", c.boolean, default=False),
        "pins": f(d, path, "pins", c.integer, 0, SMALL, default=0),
        "acted": f(d, path, "acted", c.boolean, default=False),
        "incapacitated": f(d, path, "incapacitated", c.boolean, default=False),
        "morale_check_pending": f(d, path, "morale_check_pending", c.boolean, default=False),
        "destroyed": f(d, path, "destroyed", c.boolean, default=False),
        "rejoined": f(d, path, "rejoined", c.boolean, default=False),
    }
    if models is not None and out["models_left"] is not None and out["models_left"] > models:
        c.error(join(path, "models_left"), f"is more than models ({out['models_left']} > {models})")
    return out


def clean_sheets(c, d, *, limit):
    """The file's bunker sheets by slug, and the slugs of those that were broken (already reported:
    structures naming them need not repeat that)."""
    sheets, broken = {}, set()
    for i, raw in enumerate(c.field(d, "", "sheets", c.array, limit, default=list) or []):
        body = clean_sheet(c, raw, item("sheets", i))
        if body is None:
            if isinstance(raw, dict) and isinstance(raw.get("slug"), str):
                broken.add(raw["slug"])
            continue
        if body["slug"] in sheets:
            c.error(join(item("sheets", i), "slug"), f"{show(body['slug'])} is used by two sheets of the file")
        sheets[body["slug"]] = body
    return sheets, broken


def clean_scenario(c, data):
    """Every section of a scenario document checked; the cleaned document, or None with c.errors set."""
    d = c.obj("", data, TOP_KEYS, required=("name", "table", "rules"))
    if d is None:
        return None
    f = c.field
    width, depth = f(d, "", "table", clean_table, c, default=(None, None)) or (None, None)
    rules = f(d, "", "rules", clean_rules, c)
    zones = f(d, "", "deployment_zones", c.array, 20, default=list) or []
    doc = {
        "name": f(d, "", "name", c.text, 120, False),
        "description": f(d, "", "description", c.text, 5000, default=""),
        "table_width": width, "table_depth": depth, "rules": rules,
        "deployment_zones": [clean_zone(c, item("deployment_zones", i), z, width, depth) for i, z in enumerate(zones)],
    }

    sheets, broken = clean_sheets(c, d, limit=100)
    doc["sheets"] = sheets

    structures_in = f(d, "", "structures", c.array, MAX_ITEMS, default=list) or []
    materials = {(m.surface, m.slug): m for m in Material.objects.all()}
    structures = [clean_structure(c, item("structures", i), s, width=width, depth=depth, materials=materials,
                                  sheets=sheets, broken=broken, count=len(structures_in),
                                  ruleset=rules["ruleset"] if rules else None)
                  for i, s in enumerate(structures_in)]
    for i, s in enumerate(structures):
        for j, other in enumerate((s or {}).get("connections") or []):
            if other == i:
                c.error(item(join(item("structures", i), "connections"), j), "a structure cannot connect to itself")
        on_the_table(c, item("structures", i), s, width, depth)
    doc["structures"] = structures

    ruleset = rules["ruleset"] if rules else None
    weapons = {w.slug: w for w in Weapon.objects.filter(ruleset=ruleset)} if ruleset else {}
    armies_in = f(d, "", "armies", c.array, 2, default=list) or []
    armies = [clean_army(c, item("armies", i), a, weapons=weapons, ruleset=ruleset, structures=structures,
                         width=width, depth=depth) for i, a in enumerate(armies_in)]
    sides = [a["side"] for a in armies if a and a["side"]]
    if len(sides) != len(set(sides)):
        c.error("armies", "each side has one army: two armies are on the same side")
    occupied = {}
    for i, army in enumerate(armies):
        for j, unit in enumerate((army or {}).get("units") or []):
            at = (unit or {}).get("at")
            if at and "structure" in at:
                key = (at["structure"], at["floor"])
                if key in occupied:
                    c.error(f"armies[{i}].units[{j}].at",
                            f"floor {key[1]} of structure {key[0]} already holds {occupied[key]} (one unit per floor)")
                else:
                    occupied[key] = f"armies[{i}].units[{j}]"
    doc["armies"] = armies
    return doc


def on_the_table(c, path, structure, width, depth):
    """As the builder places it: the whole footprint at its rotation on the table, not only its centre. A
    scenario's structure hanging off the edge could be neither moved nor saved in the builder, and its
    table's settings could not be saved at all. Not asked of a campaign's ground: that was played on
    as it stands, and a club's backup must import."""
    keys = ("x", "y", "width", "depth", "rotation")
    if structure is None or width is None or depth is None or any(structure.get(k) is None for k in keys):
        return
    reach = footprint_reach(structure["width"], structure["depth"], structure["rotation"])
    for key, limit, half in (("x", width, reach[0]), ("y", depth, reach[1])):
        if not half <= structure[key] <= limit - half:
            edge = "wide" if key == "x" else "deep"
            where = (f"its centre goes from {number(half)} to {number(limit - half)}" if half * 2 <= limit
                     else "it is larger than the table")
            c.error(join(path, key), f"{number(structure[key])} puts its footprint off the table: on a table "
                                     f"{number(limit)}″ {edge}, {where}")


def crews_as_built(c, doc):
    """The builder's rule for a Disposable Heroes bunker's crew (`StructureForm.check_crew`): at most its
    sheet's men (refused), holding it for one side (told), with no unit of the other side inside (refused). A crew of neither side could be attacked by both sides, could
    not leave, and counted in neither tally; more men than the sheet's were printed as the card's. Asked
    of a scenario file only: a campaign file's scenarios and ground were played as they stand (the builder
    gave a bunker its sheet's crew for neither side until it asked), and a club's backup must import."""
    rules = doc.get("rules")
    if not rules or not has_crews(rules.get("ruleset")):
        return
    for i, s in enumerate(doc["structures"]):
        if s is None or s["sheet"] is None or s["crew_men"] is None or s["crew_side"] is None:
            continue
        path, men, total = item("structures", i), s["crew_men"], s["sheet"]["crew_total"]
        if total is not None and men > total:
            c.error(join(path, "crew_men"), f"{men} men is more than its sheet's crew: the "
                                            f"{show(s['sheet']['name'])} sheet has {total} men (0 to {total})")
        elif men and not s["crew_side"]:
            # Imported all the same, and told: every scenario file this app wrote before the builder asked
            # was so, and a designer's backups must come back. The builder marks the bunker until a side
            # is chosen on its page.
            c.note(join(path, "crew_side"), f"its crew of {men} men holds it for neither side: choose the side "
                                            "whose men hold it on its page in the builder before a campaign starts")
    # Nobody of the other side inside a crew's bunker (`UnitForm.clean`): a battle's Move takes nobody there.
    for i, army in enumerate(doc["armies"]):
        for j, unit in enumerate((army or {}).get("units") or []):
            at = (unit or {}).get("at")
            s = doc["structures"][at["structure"]] if at and "structure" in at else None
            if s and s["crew_side"] and s["crew_men"] and army["side"] and army["side"] != s["crew_side"]:
                c.error(f"armies[{i}].units[{j}].at", f"{show(s['name'] or '')} is held by its crew for side "
                                                      f"{s['crew_side']}: a side {army['side']} unit is not set up "
                                                      "inside it")


# ---------------------------------------------------------------------------------- import

def free_name(siblings, name, taken=()):
    """`name`, or "name (2)", "name (3)"… whichever none of `siblings` (a club's scenarios or
    campaigns) is called yet, nor any of `taken`: an import never overwrites what the club has."""
    taken = set(siblings.filter(name__startswith=name[:100]).values_list("name", flat=True)) | set(taken)
    return first_free(name, taken, lambda n: f"{name[:110]} ({n})")


def resolve_sheets(bodies, club):
    """The file's sheets as rows: the library sheet or the club's own when one with the same slug
    holds exactly the same card, otherwise a new club sheet (slug suffixed if the club uses it)."""
    rows, taken, names = {}, set(), set()
    known = {(s.club_id, s.slug): s for s in BunkerSheet.objects.filter(
        Q(club__isnull=True) | Q(club=club), slug__in=list(bodies))}
    for slug, body in bodies.items():
        library, own = known.get((None, slug)), known.get((club.pk, slug))
        match = next((s for s in (library, own) if s is not None and sheet_body(s) == body), None)
        if match is None:
            match = new_sheet(body, club, unique_slug(club, slug, taken))
            if match.name:  # a name of its own, as a sheet import or a clone gets: the builder offers them by name
                match.name = unique_sheet_name(club, match.name, names)
            match.save()
            taken.add(match.slug)
            names.add(match.name)
        rows[slug] = match
    return rows


def vehicles_outside(c, doc):
    """The builder's rule (`UnitForm.clean`): a vehicle stands on the table, never on a floor of a structure,
    where a battle's Move never takes one. Asked of a scenario file only, as `crews_as_built`: a club's backup
    must import as it was played."""
    for i, army in enumerate(doc["armies"]):
        for j, unit in enumerate((army or {}).get("units") or []):
            at = (unit or {}).get("at")
            if at and "structure" in at and unit["kind"] == UnitKind.VEHICLE:
                c.error(f"armies[{i}].units[{j}].at", f"{show(unit['name'] or '')} is a vehicle: it stands on the "
                                                      "table (x, y), not on a floor of a structure")


def import_scenario(data, *, club, user):
    """A new scenario of `club` from a parsed "redoubt.scenario" document, with its structures,
    sheets and forces. Raises FormatErrors listing every problem (nothing is saved then). A name the
    club already uses gets " (2)", " (3)"…; the scenario's `import_warnings` names what was left out."""
    _check_designer(club, user)
    c = Checker(designed=True)
    doc = clean_scenario(c, data) if check_document(c, data, SCENARIO_FORMAT, SCENARIO_VERSION) else None
    if doc is not None:
        crews_as_built(c, doc)
        vehicles_outside(c, doc)
    if not c.ok:
        raise c.failure()
    try:
        with transaction.atomic():
            Club.lock(club.pk)
            scenario = _write(doc, club, user)
    except DatabaseError as exc:
        raise FormatErrors([(ROOT, f"could not be saved: {str(exc).strip().splitlines()[0]}")]) from None
    scenario.import_warnings = c.notes
    return scenario


def _write(doc, club, user):
    rules = doc["rules"]
    scenario = Scenario.objects.create(
        club=club, author=user if user.is_authenticated else None, name=free_name(Scenario.objects.filter(club=club), doc["name"]),
        description=doc["description"], table_width=doc["table_width"], table_depth=doc["table_depth"],
        deployment_zones=doc["deployment_zones"], **rules,
    )
    sheets = resolve_sheets(doc["sheets"], club)
    # In bulk, one statement per table: a scenario of forty structures was two hundred INSERTs.
    rows = Structure.objects.bulk_create([
        Structure(scenario=scenario, sheet=sheets[s["sheet"]["slug"]] if s["sheet"] else None,
                  **{k: v for k, v in s.items() if k not in ("sheet", "floors", "connections", "state")}, **s["state"])
        for s in doc["structures"]
    ])
    wanted = [(i, fl) for i, s in enumerate(doc["structures"]) for fl in s["floors"]]
    made = Floor.objects.bulk_create([Floor(structure=rows[i], level=fl["level"], is_roof=fl["is_roof"])
                                      for i, fl in wanted])
    Opening.objects.bulk_create([Opening(floor=floor, **o) for (_, fl), floor in zip(wanted, made) for o in fl["openings"]])
    floors = {(i, fl["level"]): floor for (i, fl), floor in zip(wanted, made)}
    through = Structure.connections.through
    pairs = {(rows[i].pk, rows[j].pk) for i, s in enumerate(doc["structures"]) for j in s["connections"]}
    pairs |= {(b, a) for a, b in pairs}
    through.objects.bulk_create([through(from_structure_id=a, to_structure_id=b) for a, b in sorted(pairs)])
    armies = Army.objects.bulk_create([Army(scenario=scenario, side=a["side"], name=a["name"]) for a in doc["armies"]])
    wanted = [(army, u) for army, a in zip(armies, doc["armies"]) for u in a["units"]]
    units = []
    for army, u in wanted:
        at, state = u["at"], u["state"]
        units.append(Unit(
            army=army, name=u["name"], kind=u["kind"], tank_class=u["tank_class"], experience=u["experience"],
            models_start=u["models"], fireteam=u["fireteam"],
            floor=floors[(at["structure"], at["floor"])] if at and "structure" in at else None,
            x=at["x"] if at and "x" in at else None, y=at["y"] if at and "y" in at else None,
            crew_of=rows[u["crew_of"]] if u["crew_of"] is not None else None,
            **{**state, "models_left": state.get("models_left", u["models"])},
        ))
    units = Unit.objects.bulk_create(units)
    UnitWeapon.objects.bulk_create([UnitWeapon(unit=unit, weapon=w["weapon"], count=w["count"])
                                    for unit, (_, u) in zip(units, wanted) for w in u["weapons"]])
    return scenario
