"""Between the database and the rules engine: a battle's rows become an `apps.rules` state, and
a changed state is written back to exactly the rows that changed. Also the battle screen's other
hot reads (the member's battle, the locked battle row, the log panel's entries), written as plain
SQL because building their ORM querysets cost more than running them.

Ids in the rules state are the rows' primary keys with a prefix — "s12" a structure, "u7" a unit,
"w3" a weapon — because the rules look structures and units up in one namespace.
"""

import json
import math
import time
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from psycopg import pq

from django.contrib.auth import get_user_model
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models.base import ModelState
from django.db.models.fields.related_descriptors import ForeignKeyDeferredAttribute
from django.db.models.signals import post_init, pre_init

from apps.armies.models import Army, Unit, UnitWeapon, Weapon
from apps.battles.models import Battle, LogEntry
from apps.campaigns.models import Campaign, Membership, Scenario
from apps.rules import (BattleOptions, BattleState, CrewState, CrewWeapon, Fire, Floor, FortSheet, SequenceState,
                        StructureState, UnitState, WeaponProfile)
from apps.structures.models import BunkerSheet, Material, Opening, Structure, mark_crews
from apps.structures.models import Floor as FloorModel

SHEET_FIELDS = ("slug", "name", "kind", "dm", "crew_total", "leaders", "locations", "weapons", "features",
                "penetration_weapon", "penetration_row", "kind_note", "note")
STRUCTURE_WRITE_FIELDS = ["damage_taken", "fire_size", "fire_started_turn", "collapsed", "destroyed", "impassable",
                          "breach_needed", "breach_scored", "breached", "crew_men", "crew_pins", "crew_routed",
                          "crew_penetrating_hits", "weapons_destroyed", "crew_left"]
UNIT_WRITE_FIELDS = ["models_left", "down", "pins", "acted", "incapacitated", "morale_check_pending", "destroyed",
                     "fireteam", "floor", "x", "y", "rejoined"]


def structure_id(s):
    return f"s{s.pk}"


def unit_id(u):
    return f"u{u.pk}"


def weapon_id(w):
    return f"w{w.pk}"


def fort_sheet(sheet):
    return FortSheet.from_dict({name: getattr(sheet, name) for name in SHEET_FIELDS})


def light_mg(name):
    """A sheet weapon the crew may take out with it (seed 003): a "Light MG", or an "LMG" ("DP LMG")."""
    words = name.lower().replace("-", " ").split()
    return "lmg" in words or ("light" in words and any(w.startswith("mg") or w == "machine" for w in words))


def structure_state(s, sheets=None):
    """The rules' state of a structure row. `sheets`, the fortification sheets already read (by pk):
    a battle's bunkers often share one, and reading a sheet's locations and weapons is slow."""
    if not s.sheet_id:
        sheet = None
    elif sheets is not None:
        sheet = sheets.get(s.sheet_id) or sheets.setdefault(s.sheet_id, fort_sheet(s.sheet))
    else:
        sheet = fort_sheet(s.sheet)
    crew = None
    if sheet is not None and s.crewed:  # a sheet crew is Disposable Heroes' only
        destroyed = set(s.weapons_destroyed or [])
        crew = CrewState(
            side=s.crew_side, men=s.crew_men, nco=sum(sheet.leaders.values()) or 1, pins=s.crew_pins,
            routed=s.crew_routed, penetrating_hits=s.crew_penetrating_hits, left=s.crew_left,
            weapons=tuple(CrewWeapon(w.name, w.crew, w.location or "", i in destroyed,
                                     light_mg=light_mg(w.name))
                          for i, w in enumerate(sheet.weapons)),
        )
    floors = []
    for floor in s.floor_rows:
        openings, slits = {}, {}
        for opening in floor.opening_rows:
            openings[opening.side] = openings.get(opening.side, 0) + opening.count
            if opening.kind == "firing_slit":
                slits[opening.side] = slits.get(opening.side, 0) + opening.count
        occupant = getattr(floor, "occupant", None)
        floors.append(Floor(floor.level, unit_id(occupant) if occupant else None, openings, slits, floor.is_roof))
    return StructureState(
        id=structure_id(s), kind=s.kind, name=s.name,
        wall_material=s.wall_material.slug, roof_material=s.roof_material.slug if s.roof_material_id else None,
        wall_ac=s.wall_material.armor_class, roof_ac=s.roof_material.armor_class if s.roof_material_id else None,
        construction=s.wall_material.construction, flammable=s.flammable, flimsy=s.flimsy,
        floors=tuple(floors) or (Floor(0),), area=float(s.width * s.depth),
        damage_max=s.damage_max, damage_taken=s.damage_taken,
        fire=Fire(float(s.fire_size), s.fire_started_turn or 1) if s.fire_size is not None else None,
        collapsed=s.collapsed, destroyed=s.destroyed, impassable=s.impassable,
        breach_needed=s.breach_needed, breach_scored=s.breach_scored, breached=s.breached,
        crew=crew, sheet=sheet,
    )


def unit_state(u, side):
    floor = u.floor
    return UnitState(
        id=unit_id(u), side=side, kind=u.kind, name=u.name, tank_class=u.tank_class, experience=u.experience,
        models=u.models_left, down=u.down, pins=u.pins, acted=u.acted, incapacitated=u.incapacitated,
        morale_check_pending=u.morale_check_pending, fireteam=u.fireteam, destroyed=u.destroyed,
        structure=f"s{floor.structure_id}" if floor else None, floor=floor.level if floor else None,
        position=(float(u.x), float(u.y)) if u.x is not None else None,
        weapons=tuple(f"w{pk}" for pk in u.weapon_ids),
        crew_of=f"s{u.crew_of_id}" if u.crew_of_id else None, rejoined=u.rejoined,
    )


def weapon_profile(w):
    return WeaponProfile(
        key=weapon_id(w), name=w.name, ruleset=w.ruleset, weapon_type=w.weapon_type, attack_factor=w.attack_factor,
        range_factor=float(w.range_factor) if w.range_factor is not None else None,
        min_range=float(w.min_range) if w.min_range is not None else None,
        rof_code=w.rof_code, weapon_class=w.weapon_class,
        effect_area=float(w.effect_area) if w.effect_area is not None else 0.0,
        has_effect_area=w.has_effect_area,
        detection_effect=w.detection_effect or 0, barrels=w.barrels, vehicle_only=w.vehicle_only,
        variable_fire=w.variable_fire, convergence=w.weapon_type == "convergence_beam",
        he_value=w.he_value, flamethrower=w.flamethrower, heavy_weapon=w.heavy_weapon,
        heavy_howitzer=w.heavy_howitzer, indirect=w.indirect, dh_category=w.dh_category,
        ap=w.ap, rof=w.rof, mm=w.mm, dm=w.dm, penetration_row=tuple(w.penetration_row or ()),
    )


# The catalogue's weapon profiles by the whole row they were read from: every load reads the ruleset's
# catalogue, a dozen rows or more, which a club seldom changes; building each row and its profile again
# was a tenth of an action's load. A row changed in any column is a new key.
_PROFILES = {}


def catalogue_weapon(values):
    """The rules' profile of a catalogue weapon row (as `weapon_profile(WEAPONS.build(values))`)."""
    key = tuple(values)
    try:
        profile = _PROFILES.get(key)
    except TypeError:  # a column the driver handed back as a list or dict
        return weapon_profile(WEAPONS.build(values))
    if profile is None:
        if len(_PROFILES) > 5000:  # edited catalogues' old rows: never read again
            _PROFILES.clear()
        profile = _PROFILES[key] = weapon_profile(WEAPONS.build(values))
    return profile


def battle_options(battle):
    known = set(BattleOptions.__dataclass_fields__)
    return BattleOptions.from_dict({k: v for k, v in battle.rules_options().items() if k in known})


@dataclass
class Snapshot:
    """A battle as the rules see it, with the rows it was read from."""

    battle: object
    state: BattleState
    structures: dict  # id -> Structure row
    units: dict  # id -> Unit row
    armies: dict  # side -> Army row

    def floor_row(self, structure_id, level):
        return next(f for f in self.structures[structure_id].floor_rows if f.level == level)


def load(battle, *, lock=False):
    """Every structure (its floors and openings), army, unit and catalogue weapon of the battle, in
    seven plain SELECTs however large the battle is, sent to PostgreSQL in one round trip.

    With `lock`, the structure and unit rows are locked until the transaction ends (the battle row
    itself is locked by the caller first, so concurrent actions on one battle queue up in order).

    Why not the ORM's select_related and prefetch_related: this runs on every attack, poll answer
    and page, and building those querysets and their prefetches cost two thirds of it. The rows are
    still model instances (`Model.from_db`, the field converters applied), with their foreign keys
    cached; a structure's floors are `s.floor_rows`, a floor's openings `floor.opening_rows`, a
    unit's weapon ids `u.weapon_ids`.
    """
    return _snapshot(battle, iter(run(_load_statements(battle.pk, lock))))


def lock_and_load(battle_id, client_token=None):
    """`lock_battle` then `load(lock=True)`, in one round trip on PostgreSQL: what an action reads
    before the rules run. The statements run one after another, each with its own snapshot, so the
    rows are read after the battle's lock is held. Raises Battle.DoesNotExist."""
    results = iter(run(_lock_statements(battle_id, client_token) + _load_statements(battle_id, True)))
    return _snapshot(_locked(battle_id, results), results)


def _load_statements(battle_id, lock):
    return [
        _structures_sql(battle_id, lock), _floors_sql(battle_id), _openings_sql(battle_id), _armies_sql(battle_id),
        _units_sql(battle_id, lock), _unit_weapons_sql(battle_id),
        (_sql("SELECT {w} FROM {weapon} w WHERE w.ruleset = (SELECT ruleset FROM {battle} WHERE id = %s)"
              " ORDER BY w.ruleset, w.name", w=WEAPONS.columns("w")), [battle_id]),
    ]


def _snapshot(battle, results):
    structure_rows = _structures(next(results))
    mark_crews(structure_rows.values(), battle.ruleset)
    floors = _floors(next(results), next(results), structure_rows)
    armies = _armies(next(results))
    unit_rows = _units(next(results), next(results), armies, floors)
    weapons = [catalogue_weapon(values) for values in next(results)]
    cache_occupants(structure_rows.values(), unit_rows.values())
    sheets = {}
    state = BattleState.build(
        structures=[structure_state(s, sheets) for s in structure_rows.values()],
        units=[unit_state(u, u.army.side) for u in unit_rows.values()],
        weapons=weapons,
        turn=battle.turn,
        options=battle_options(battle),
        sequence=SequenceState.from_dict(battle.sequence) if battle.sequence else None,
        upkeep_turn=battle.upkeep_turn,
    )
    return Snapshot(battle, state, structure_rows, unit_rows, {a.side: a for a in armies})


def _plain_attributes(model, fields):
    """True when setting these fields' attributes is only storing them in the instance's __dict__ and
    nobody listens for the model's init signals: then a row can be built without Model.__init__. A
    field whose descriptor does more on assignment (a file field's) keeps the ORM's way; a foreign
    key's id descriptor only drops a cached related object, which a new instance has none of."""
    if pre_init.has_listeners(model) or post_init.has_listeners(model):
        return False
    for f in fields:
        descriptor = getattr(model, f.attname, None)
        if hasattr(descriptor, "__set__") and not isinstance(descriptor, ForeignKeyDeferredAttribute):
            return False
    return True


class _Reader:
    """Builds instances of one model from its concrete columns (or only those named, the rest
    deferred), as the ORM would (`from_db`, with each field's database converter: JSON arrives as
    text, for one)."""

    def __init__(self, model, names=None):
        self.model = model
        self.fields = [f for f in model._meta.concrete_fields if names is None or f.attname in names]
        self.names = [f.attname for f in self.fields]
        self.width = len(self.fields)
        self._converters = None
        self._plain = None
        self._columns = {}

    def columns(self, alias):
        if alias not in self._columns:
            self._columns[alias] = ", ".join(f"{alias}.{connection.ops.quote_name(f.column)}" for f in self.fields)
        return self._columns[alias]

    def build(self, values):
        if self._converters is None:
            # The backend's converters first, then the field's, as the ORM's compiler applies them (SQLite
            # hands back booleans as integers and decimals as floats; PostgreSQL, JSON as text).
            self._converters = []
            for i, f in enumerate(self.fields):
                column = f.get_col(self.model._meta.db_table)
                for converter in connection.ops.get_db_converters(column) + column.get_db_converters(connection):
                    self._converters.append((i, converter, column))
        if self._converters:
            values = list(values)
            for i, converter, column in self._converters:
                values[i] = converter(values[i], column, connection)
        if self._plain is None:
            self._plain = _plain_attributes(self.model, self.fields)
        if not self._plain:
            return self.model.from_db(DEFAULT_DB_ALIAS, self.names, values)
        # What Model.__init__ ends up doing for a row read from the database, without its loop of
        # setattr calls and signal sends: a fifth of the time it took. `_plain_attributes` says when
        # that is the same thing.
        row = self.model.__new__(self.model)
        state = row._state = ModelState()
        # `connection` is the default database's (its alias, looked up through a proxy for every row,
        # was a tenth of building them).
        state.adding, state.db = False, DEFAULT_DB_ALIAS
        row.__dict__.update(zip(self.names, values))
        return row


BATTLES, CAMPAIGNS, SCENARIOS = _Reader(Battle), _Reader(Campaign), _Reader(Scenario)
STRUCTURES, MATERIALS, SHEETS = _Reader(Structure), _Reader(Material), _Reader(BunkerSheet)
FLOORS, OPENINGS = _Reader(FloorModel), _Reader(Opening)
ARMIES, OWNERS, UNITS, WEAPONS = _Reader(Army), _Reader(get_user_model()), _Reader(Unit), _Reader(Weapon)
TABLES = {"battle": Battle, "campaign": Campaign, "scenario": Scenario, "membership": Membership,
          "log": LogEntry, "structure": Structure, "material": Material, "sheet": BunkerSheet, "floor": FloorModel,
          "opening": Opening, "army": Army, "user": get_user_model(), "unit": Unit, "unit_weapon": UnitWeapon,
          "weapon": Weapon}


def member_battle(user_id, battle_id):
    """The battle if `user_id` belongs to its club, else None; with its campaign and scenario cached,
    `viewer_role`, the user's role in the club, and `viewer_watch`, the membership's (id, watch_epoch)
    a poll token carries. One join (a user has at most one membership per club), read without the
    ORM's query building: every battle page, form and action starts here."""
    with connection.cursor() as cursor:
        cursor.execute(_sql(
            "SELECT {b}, {c}, {sc}, m.id, m.watch_epoch, m.role FROM {battle} b"
            " JOIN {membership} m ON m.club_id = b.club_id AND m.user_id = %s"
            " LEFT JOIN {campaign} c ON c.id = b.campaign_id LEFT JOIN {scenario} sc ON sc.id = b.scenario_id"
            " WHERE b.id = %s", b=BATTLES.columns("b"), c=CAMPAIGNS.columns("c"), sc=SCENARIOS.columns("sc"),
        ), [user_id, battle_id])
        values = cursor.fetchone()
    if values is None:
        return None
    a, b = BATTLES.width, BATTLES.width + CAMPAIGNS.width
    battle = BATTLES.build(values[:a])
    Battle.campaign.field.set_cached_value(battle, CAMPAIGNS.build(values[a:b]) if battle.campaign_id else None)
    Battle.scenario.field.set_cached_value(battle, SCENARIOS.build(values[b:-3]) if battle.scenario_id else None)
    battle.viewer_watch = values[-3:-1]
    battle.viewer_role = values[-1]
    return battle


def lock_battle(battle_id, client_token=None):
    """The battle row, locked until the transaction ends (actions on one battle queue up here), with
    what an action asks next: `done_entry_id`, the entry already logged under `client_token` (a
    double tap), and `log_last`, the newest entry's (seq, entry_hash) for `log.append_entry`.
    Raises Battle.DoesNotExist."""
    return _locked(battle_id, iter(run(_lock_statements(battle_id, client_token))))


def _lock_statements(battle_id, client_token):
    return [
        (_sql("SELECT {b} FROM {battle} b WHERE b.id = %s" + _for_update("b", True), b=BATTLES.columns("b")),
         [battle_id]),
        # Not subqueries of the locking SELECT: they would see the log as it was before the wait for
        # the lock (read committed takes the statement's snapshot first), missing the entry the
        # action ahead just committed. The next statement sees it.
        (_sql("SELECT (SELECT l.id FROM {log} l WHERE l.battle_id = %s AND l.client_token = %s), l.seq, l.entry_hash"
              " FROM (SELECT 1) one LEFT JOIN (SELECT seq, entry_hash FROM {log} WHERE battle_id = %s"
              " ORDER BY seq DESC LIMIT 1) l ON true"), [battle_id, client_token, battle_id]),
    ]


def _locked(battle_id, results):
    rows, ((done, seq, head),) = next(results), next(results)
    if not rows:
        raise Battle.DoesNotExist(f"No battle {battle_id}")
    battle = BATTLES.build(rows[0])
    battle.done_entry_id = done
    battle.log_last = (seq, head) if seq is not None else None
    return battle


# What the log panel shows of an entry; `inputs`, `outcome` and `undo` can be large and it needs none.
ENTRIES = _Reader(LogEntry, {"id", "battle_id", "seq", "turn", "actor_id", "actor_name", "side", "action", "summary",
                             "dice", "undone", "created_at", "undoes_id"})
ENTRY_STUBS = _Reader(LogEntry, {"id", "seq"})


def log_entries(battle_id, *, before=None, after=None, upto=None, seqs=None, limit=None, touched=False):
    """The battle's log entries, newest first, as the log panel shows them: each with `restorable`
    (its undo record can restore rows), the entry it undoes and the one that undid it (id and seq
    only) cached, and with `touched` its undo record: what the rows it changed were before it (for an
    undo, what it took back; for one written before undos kept that, the record it restored, and
    `touched_after` set).
    Filters: seq < before, seq >= after, seq <= upto, seq in seqs; at most `limit`.

    Plain SQL for the reason `load` is: the ORM query (two self-joins, two annotations, deferred
    fields) took longer to build than to run, on every page, poll answer and action."""
    where, params = ["l.battle_id = %s"], [battle_id]
    for clause, value in (("l.seq < %s", before), ("l.seq >= %s", after), ("l.seq <= %s", upto)):
        if value is not None:
            where.append(clause)
            params.append(value)
    if seqs is not None:
        where.append(f"l.seq IN ({', '.join(['%s'] * len(seqs))})" if seqs else "false")
        params.extend(seqs)
    if connection.vendor == "postgresql":
        restorable, took_back = "jsonb_exists(l.undo, 'structures')", "jsonb_exists(l.undo, 'took_back')"
    else:
        restorable = """json_type(l.undo, '$."structures"') IS NOT NULL"""
        took_back = """json_type(l.undo, '$."took_back"') IS NOT NULL"""
    extra = f", CASE WHEN l.undoes_id IS NULL OR {took_back} THEN l.undo ELSE u.undo END" if touched else ""
    sql = _sql(
        "SELECT {l}, " + restorable + ", {u}, {ub}" + extra + " FROM {log} l"
        " LEFT JOIN {log} u ON u.id = l.undoes_id LEFT JOIN {log} ub ON ub.undoes_id = l.id"
        " WHERE " + " AND ".join(where) + " ORDER BY l.seq DESC" + (" LIMIT %s" if limit is not None else ""),
        l=ENTRIES.columns("l"), u=ENTRY_STUBS.columns("u"), ub=ENTRY_STUBS.columns("ub"))
    if limit is not None:
        params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    entries = []
    a, b, c = ENTRIES.width, ENTRIES.width + 1, ENTRIES.width + 1 + ENTRY_STUBS.width
    undone_by = LogEntry.undone_by.related
    for values in rows:
        entry = ENTRIES.build(values[:a])
        entry.restorable = bool(values[a])
        LogEntry.undoes.field.set_cached_value(entry, ENTRY_STUBS.build(values[b:c]) if entry.undoes_id else None)
        by = ENTRY_STUBS.build(values[c:c + ENTRY_STUBS.width]) if values[c] is not None else None
        undone_by.set_cached_value(entry, by)
        if touched:
            record = values[-1]
            record = json.loads(record) if isinstance(record, (str, bytes)) else record
            # An undo written before undos kept what they took back has only the record it restored.
            entry.touched_after = bool(entry.undoes_id) and not (isinstance(record, dict) and "took_back" in record)
            entry.touched = record["took_back"] if entry.undoes_id and not entry.touched_after else record
        entries.append(entry)
    return entries


def _sql(sql, **columns):
    return sql.format(**_table_names(), **columns)


@cache
def _table_names():
    # Quoted once, not for each of an action's dozen statements (15 names through the connection proxy
    # each time were a fiftieth of an attack). The tables and the database's quoting never change.
    return {name: connection.ops.quote_name(model._meta.db_table) for name, model in TABLES.items()}


def _for_update(alias, lock):
    # As select_for_update(of=...) does: nothing where the database has no row locks (SQLite, which
    # the app falls back to without PostgreSQL, serialises writers on its own).
    return f" FOR UPDATE OF {alias}" if lock and connection.features.has_select_for_update_of else ""


def run(statements):
    """Run each (sql, params) in order and return the rows of each (an empty list for a statement
    that returns none). On PostgreSQL in one round trip: psycopg's pipeline mode sends them all
    before reading any result, and as prepared statements (the connection's `prepare_threshold`)
    PostgreSQL plans each once per connection, not on every action. The pipeline is logged as one
    query, its statements joined by ";\n". SQLite runs them one by one."""
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            results = []
            for sql, params in statements:
                cursor.execute(sql, params)
                results.append(cursor.fetchall() if cursor.description else [])
            return results
    connection.ensure_connection()
    raw, start = connection.connection, time.monotonic()
    with connection.wrap_database_errors:
        with raw.pipeline():
            cursors = []
            for sql, params in statements:
                cursor = raw.cursor()
                cursor.execute(sql, params)
                cursors.append(cursor)
        results = [cursor.fetchall() if _has_rows(cursor) else [] for cursor in cursors]
    if connection.queries_logged:
        # As Django's debug cursor records a query, so tests that count queries see this one.
        connection.queries_log.append({"sql": ";\n".join(sql for sql, _ in statements),
                                       "params": [params for _, params in statements],
                                       "time": f"{time.monotonic() - start:.3f}"})
    return results


def _has_rows(cursor):
    """`cursor.description is not None`, without the Column it builds for each of the result's
    columns: over a hundred per action (the structures' SELECT alone has its materials' and sheet's),
    a twentieth of the time an attack took."""
    res = cursor.pgresult
    return bool(res) and bool(res.nfields or res.status in ROW_STATUSES)


ROW_STATUSES = frozenset(getattr(pq.ExecStatus, name) for name in ("TUPLES_OK", "SINGLE_TUPLE", "TUPLES_CHUNK")
                         if hasattr(pq.ExecStatus, name))


def update_statement(row, fields):
    """The UPDATE that `row.save(update_fields=fields)` would send, for `run`."""
    meta, quote = row._meta, connection.ops.quote_name
    columns = [meta.get_field(name) for name in fields]
    return (f"UPDATE {quote(meta.db_table)} SET {', '.join(f'{quote(f.column)} = %s' for f in columns)}"
            f" WHERE {quote(meta.pk.column)} = %s",
            [f.get_db_prep_save(getattr(row, f.attname), connection) for f in columns] + [row.pk])


def insert_statement(row):
    """The INSERT that `row.save()` would send for a new row with a database-made primary key,
    returning that key, for `run`."""
    meta, quote = row._meta, connection.ops.quote_name
    columns = [f for f in meta.concrete_fields if not f.primary_key]
    return (f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in columns)})"
            f" VALUES ({', '.join(['%s'] * len(columns))}) RETURNING {quote(meta.pk.column)}",
            [f.get_db_prep_save(f.pre_save(row, True), connection) for f in columns])


def saved(row, pk):
    """`row` after `run` inserted it as `pk`: from now on the ORM treats it as stored."""
    row.pk = pk
    row._state.adding, row._state.db = False, connection.alias
    return row


def _structures_sql(battle_id, lock):
    return _sql(
        "SELECT {s}, {wm}, {rm}, {sh} FROM {structure} s"
        " JOIN {material} wm ON wm.id = s.wall_material_id"
        " LEFT JOIN {material} rm ON rm.id = s.roof_material_id"
        " LEFT JOIN {sheet} sh ON sh.id = s.sheet_id"
        " WHERE s.battle_id = %s ORDER BY s.name, s.id" + _for_update("s", lock),
        s=STRUCTURES.columns("s"), wm=MATERIALS.columns("wm"), rm=MATERIALS.columns("rm"), sh=SHEETS.columns("sh"),
    ), [battle_id]


def _structures(result):
    rows, materials = {}, {}
    a, b, c = STRUCTURES.width, STRUCTURES.width + MATERIALS.width, STRUCTURES.width + 2 * MATERIALS.width

    def material(columns):
        # A battle's structures share a handful of materials: each is built once (its id comes first).
        found = materials.get(columns[0])
        if found is None:
            found = materials[columns[0]] = MATERIALS.build(columns)
        return found

    for values in result:
        s = STRUCTURES.build(values[:a])
        Structure.wall_material.field.set_cached_value(s, material(values[a:b]))
        Structure.roof_material.field.set_cached_value(s, material(values[b:c]) if s.roof_material_id else None)
        Structure.sheet.field.set_cached_value(s, SHEETS.build(values[c:]) if s.sheet_id else None)
        s.floor_rows = []
        rows[structure_id(s)] = s
    return rows


def _floors_sql(battle_id):
    return _sql("SELECT {f} FROM {floor} f JOIN {structure} s ON s.id = f.structure_id"
                " WHERE s.battle_id = %s ORDER BY f.structure_id, f.level", f=FLOORS.columns("f")), [battle_id]


def _openings_sql(battle_id):
    return _sql("SELECT {o} FROM {opening} o JOIN {floor} f ON f.id = o.floor_id"
                " JOIN {structure} s ON s.id = f.structure_id WHERE s.battle_id = %s"
                " ORDER BY o.floor_id, o.side, o.kind", o=OPENINGS.columns("o")), [battle_id]


def _floors(floor_result, opening_result, structure_rows):
    """Each structure's floors (`floor_rows`, by level) with their openings (`opening_rows`); by pk."""
    by_pk = {s.pk: s for s in structure_rows.values()}
    floors = {}
    for values in floor_result:
        floor = FLOORS.build(values)
        structure = by_pk[floor.structure_id]
        FloorModel.structure.field.set_cached_value(floor, structure)
        floor.opening_rows = []
        structure.floor_rows.append(floor)
        floors[floor.pk] = floor
    for values in opening_result:
        opening = OPENINGS.build(values)
        floor = floors[opening.floor_id]
        Opening.floor.field.set_cached_value(opening, floor)
        floor.opening_rows.append(opening)
    return floors


def _armies_sql(battle_id):
    return _sql("SELECT {a}, {u} FROM {army} a LEFT JOIN {user} u ON u.id = a.owner_id"
                " WHERE a.battle_id = %s ORDER BY a.side, a.name", a=ARMIES.columns("a"), u=OWNERS.columns("u")), \
        [battle_id]


def _armies(result):
    armies = []
    for values in result:
        army = ARMIES.build(values[:ARMIES.width])
        Army.owner.field.set_cached_value(army, OWNERS.build(values[ARMIES.width:]) if army.owner_id else None)
        armies.append(army)
    return armies


def _units_sql(battle_id, lock):
    return _sql("SELECT {u} FROM {unit} u JOIN {army} a ON a.id = u.army_id WHERE a.battle_id = %s"
                " ORDER BY a.side, a.name, u.name, u.id" + _for_update("u", lock), u=UNITS.columns("u")), [battle_id]


def _unit_weapons_sql(battle_id):
    return _sql("SELECT uw.unit_id, uw.weapon_id FROM {unit_weapon} uw JOIN {unit} u ON u.id = uw.unit_id"
                " JOIN {army} a ON a.id = u.army_id WHERE a.battle_id = %s ORDER BY uw.id"), [battle_id]


def _units(unit_result, weapon_result, armies, floors):
    by_pk = {a.pk: a for a in armies}
    rows = {}
    for values in unit_result:
        u = UNITS.build(values)
        Unit.army.field.set_cached_value(u, by_pk[u.army_id])
        # A unit stands on one of this battle's floors, or on the table.
        Unit.floor.field.set_cached_value(u, floors.get(u.floor_id))
        u.weapon_ids = []
        rows[unit_id(u)] = u
    by_unit = {u.pk: u for u in rows.values()}
    for unit, weapon in weapon_result:
        by_unit[unit].weapon_ids.append(weapon)
    return rows


def cache_occupants(structure_rows, unit_rows):
    """Each floor's occupant from the units already loaded, not one query per floor. Run again after
    writing units: who stands where may have changed."""
    by_floor = {u.floor_id: u for u in unit_rows if u.floor_id}
    occupant = FloorModel.occupant.related
    for s in structure_rows:
        for floor in s.floor_rows:
            # Cache "nobody" too, or reading an empty floor's occupant would query for it.
            occupant.set_cached_value(floor, by_floor.get(floor.pk))


def _decimal(value):
    return None if value is None else Decimal(str(round(value, 2)))


def changed_ids(before, after):
    # `rules.apply` hands on the records it did not change: those are the same objects, and comparing
    # one field by field (a dataclass's ==) was most of this.
    was = before.structures
    structures = [k for k, s in after.structures.items() if was.get(k) is not s and was.get(k) != s]
    was = before.units
    units = [k for k, u in after.units.items() if was.get(k) is not u and was.get(k) != u]
    return structures, units


def structure_updates(snapshot, states):
    """Set the snapshot's structure rows to `states`; returns their UPDATEs, for `run`."""
    statements = []
    for s in states:
        row = snapshot.structures[s.id]
        row.damage_taken = s.damage_taken
        row.fire_size = _decimal(s.fire.size) if s.fire else None
        row.fire_started_turn = s.fire.started_turn if s.fire else None
        row.collapsed, row.destroyed, row.impassable = s.collapsed, s.destroyed, s.impassable
        row.breach_needed, row.breach_scored, row.breached = s.breach_needed, s.breach_scored, s.breached
        if s.crew is not None:
            row.crew_men, row.crew_pins, row.crew_routed = s.crew.men, s.crew.pins, s.crew.routed
            row.crew_penetrating_hits, row.crew_left = s.crew.penetrating_hits, s.crew.left
            row.weapons_destroyed = [i for i, w in enumerate(s.crew.weapons) if w.destroyed]
        statements.append(update_statement(row, STRUCTURE_WRITE_FIELDS))
    return statements


# Which way a unit leaves a structure, in degrees clockwise from its front: the rear, else a flank,
# else the front, whichever first has the table beyond it.
WAYS_OUT = (180, 90, 270, 0)


def outside(structure_row, side, battle):
    """Where a unit that leaves a structure without a spot of its own stands (a crew's sections, a unit
    abandoning a burning building) until the players move it on ("Move a unit"): an inch beyond the
    footprint's rear, on `battle`'s table. Seed 003 has a crew that leaves "operate as an infantry
    unit" and a routed one "Rout 9″", but the movement is the core rulebook's, so the app only sets
    them down by the way out (docs/rules.md, "Where a unit that leaves stands").

    The rear of a structure with a sheet is the side its front (`facing`) turns away from: every sheet
    of seed 003 has its Entrance there, and it is the side away from the enemy the front covers. A
    structure without a sheet has no front: its rear is the side towards the leaving `side`'s own
    table edge (side A's is the top). Where the table ends beyond the rear, a flank, else the front."""
    s = structure_row
    front = float(s.facing) if s.sheet_id else 180.0 if side == "A" else 0.0
    x, y, turn = float(s.x), float(s.y), math.radians(float(s.rotation))
    width, depth = float(battle.table_width), float(battle.table_depth)
    spots = []
    for way in WAYS_OUT:
        heading = math.radians(front + way)
        dx, dy = math.sin(heading), -math.cos(heading)
        # How far the footprint reaches that way from its centre: it is turned `rotation` about it.
        on_width = abs(dx * math.cos(turn) + dy * math.sin(turn))
        on_depth = abs(-dx * math.sin(turn) + dy * math.cos(turn))
        reach = min(float(s.width) / 2 / on_width if on_width > 1e-9 else math.inf,
                    float(s.depth) / 2 / on_depth if on_depth > 1e-9 else math.inf)
        spots.append((round(x + (reach + 1) * dx, 2), round(y + (reach + 1) * dy, 2)))
    fits = [(px, py) for px, py in spots if 0 <= px <= width and 0 <= py <= depth]
    # A structure nearly as large as the table: its rear, kept on the table.
    px, py = fits[0] if fits else (min(max(spots[0][0], 0), width), min(max(spots[0][1], 0), depth))
    return _decimal(px), _decimal(py)


def unit_updates(snapshot, states):
    """Set the snapshot's unit rows to `states`; returns their UPDATEs, in the order to `run` them."""
    rows = []
    for u in states:
        row = snapshot.units[u.id]
        row.models_left, row.down, row.pins, row.acted = u.models, u.down, u.pins, u.acted
        row.incapacitated, row.morale_check_pending = u.incapacitated, u.morale_check_pending
        row.destroyed, row.fireteam, row.rejoined = u.destroyed, u.fireteam, u.rejoined
        row.floor_before = row.floor_id
        left_from = row.floor.structure_id if row.floor_id else None
        if u.rejoined:
            row.floor, row.x, row.y = None, None, None  # its men are in the crew, not on the table
        elif u.structure is not None:
            row.floor, row.x, row.y = snapshot.floor_row(u.structure, u.floor), None, None
        elif u.position is not None:
            row.floor, row.x, row.y = None, _decimal(u.position[0]), _decimal(u.position[1])
        elif left_from is not None and not u.destroyed:
            row.floor = None
            row.x, row.y = outside(snapshot.structures[f"s{left_from}"], u.side, snapshot.battle)
        else:
            row.floor, row.x, row.y = None, None, None
        rows.append(row)
    statements = []
    # One unit per floor is a unique constraint checked row by row: clear the moving units' floors
    # first so two units swapping floors never collide halfway.
    moving = [r.pk for r in rows if r.floor_id is not None and r.floor_id != r.floor_before]
    if moving:
        statements.append((_sql(f"UPDATE {{unit}} SET floor_id = NULL WHERE id IN ({', '.join(['%s'] * len(moving))})"),
                           moving))
    return statements + [update_statement(row, UNIT_WRITE_FIELDS) for row in rows]


def create_units(snapshot, states, sources, counts=None):
    """Units the rules created (a crew leaving its fortification): new rows in the side's army,
    standing just outside the structure they came from (`sources`: unit id -> structure id), with a
    weapon row for each catalogue weapon the rules gave them (`counts`: (unit id, weapon id) -> how many)."""
    created, arms = [], []
    for u in states:
        source = snapshot.structures.get(sources.get(u.id, ""))
        x, y = outside(source, u.side, snapshot.battle) if source is not None else (None, None)
        row = Unit.objects.create(
            army=snapshot.armies[u.side], name=u.name or "Crew section", kind=u.kind, experience=u.experience,
            models_start=u.models, models_left=u.models, pins=u.pins, x=x, y=y,
            crew_of_id=int(u.crew_of[1:]) if u.crew_of else None,
        )
        created.append(row.pk)
        arms += [UnitWeapon(unit=row, weapon_id=int(key[1:]), count=(counts or {}).get((u.id, key), 1))
                 for key in u.weapons]
    if arms:
        UnitWeapon.objects.bulk_create(arms)
    return created
