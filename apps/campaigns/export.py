"""A whole campaign as one JSON file: the versioned format "redoubt.campaign" (docs/formats.md).

It is a club's backup and its way to move hosts: the campaign's settings, its ground and rosters as
they stand, the scenarios its battles came from (in the scenario format), the bunker sheets in use
(in the sheet format), and every battle with its own ground, forces and full log.

`export_campaign(campaign) -> dict` and `import_campaign(data, *, club, user) -> Campaign` are plain
functions; the download is `campaign_file(campaign_id=…)`, the same bytes as `campaign_text` of that
dict, written in pieces from one snapshot of the database. Rows are referred to by their place in the
file (structure 3, unit "A:2"), never by id, and everything is exported in a fixed order, so export →
import → export gives the same bytes.

The one exception is the battle log: it is carried verbatim, hashes and all, because its hash chain
covers every entry's content. Its entries name rows the way the rules engine does ("s12", "u7",
"w3"), with the ids of the host they were written on; those tokens are part of the signed record and
are kept as they are.
"""

import json
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import batched
from types import SimpleNamespace

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, connection, transaction
from django.db.models import F

from apps.armies.models import Army, Unit, UnitWeapon, Weapon
from apps.battles.log import entry_hash
from apps.battles.models import Battle, BattleStatus, LogEntry
from apps.battles.snapshot import STRUCTURE_WRITE_FIELDS
from apps.campaigns import permissions, services
from apps.campaigns.formats import (SCENARIO_FORMAT, SCENARIO_VERSION, SMALL, _write as write_scenario, clean_rules,
                                    clean_scenario, clean_sheets, clean_structure, clean_table, clean_unit, clean_zone,
                                    crewless, drop_crew, export_scenario, export_structure, export_unit, export_zone,
                                    free_name, load_grounds, resolve_sheets)
from apps.campaigns.models import Campaign, Club, Scenario
from apps.campaigns.services import with_suffix
from apps.rules.state import SequenceState
from apps.structures.formats import (ROOT, Checker, FormatErrors, check_document, describe, item, join,
                                     number, sheet_body, show)
from apps.structures.models import NO_CREW, Floor, Material, Opening, Structure, has_crews

CAMPAIGN_FORMAT = "redoubt.campaign"
CAMPAIGN_VERSION = 1


def max_bytes():
    """The largest file the import takes: `settings.CAMPAIGN_FILE_MAX_BYTES`, read when asked so a test
    or a host can change it (why it is what it is: docs/formats.md)."""
    return settings.CAMPAIGN_FILE_MAX_BYTES


# What a log entry adds to the file, on average (its undo data is most of it): a move 1.6 kB, an attack
# 1.2 to 2.9 kB; 30,000 entries downloaded as 51.4 MB (bench/bench_export.py, docs/formats.md). The rest of
# the file (ground, rosters, each session's copies) is a few kB a session.
BYTES_PER_ENTRY = 1_700
# The campaign page warns from this share of the limit: the estimate is an average, and a log of
# attacks writes more an entry than one of moves.
WARN_FROM = 0.9


def file_estimate(entries):
    """What the campaign page says before the download about a file with `entries` log entries: its
    likely size, and whether that is near or over what this server's import takes."""
    size, limit = entries * BYTES_PER_ENTRY, max_bytes()
    return SimpleNamespace(entries=f"{entries:,}", megabytes=size / 1_000_000, limit_megabytes=limit / 1_000_000,
                           over=size > limit, near=WARN_FROM * limit <= size <= limit)


# The download reads the log this many entries at a time (some 1.7 MB of JSON, a few times that as
# Python objects), and the import writes it so; the download hands the server pieces of about PIECE
# characters.
LOG_CHUNK = 1000
PIECE = 256 * 1024

RULES = ("ruleset", "damage_variant", "collapse_check", "fires", "uncontrolled_events", "fireteam_initiative",
         "weather", "options")
TOP_KEYS = ("format", "version", "name", "description", "created_at", "rules", "settings", "deployment_zones", "sheets",
            "scenarios", "structures", "armies", "battles")
SETTINGS_KEYS = ("fires_persist", "single_open_battle")
ARMY_KEYS = ("side", "name", "owner", "units")
BATTLE_ARMY_KEYS = ("side", "name", "owner", "origin", "units")
BATTLE_KEYS = ("session_number", "name", "scenario", "status", "turn", "upkeep_turn", "created_at", "finished_at",
               "winner", "result", "table", "rules", "sequence", "structures", "armies", "campaign_before",
               "campaign_at_setup", "log_head", "log")
ENTRY_KEYS = ("seq", "turn", "actor", "actor_name", "side", "action", "inputs", "dice", "outcome", "summary", "undo",
              "undone", "undoes", "client_token", "prev_hash", "entry_hash", "created_at")
SEQUENCE_KEYS = tuple(SequenceState.__dataclass_fields__)
SEQUENCE_UNITS = ("activated", "pending_morale", "team")
BEFORE_UNIT_KEYS = ("unit", "floor", "x", "y", "models_left", "destroyed")
# Recorded since a crew's section could rejoin its crew; files from before have none.
BEFORE_UNIT_OPTIONAL = ("rejoined",)
MAX_BATTLES = 500
MAX_ENTRIES = 100_000
MAX_JSON_DEPTH = 32
MAX_ROLLS = 2_000  # a log entry's dice: an upkeep rolls one collapse check a structure at most
HEX = frozenset("0123456789abcdef")


# ---------------------------------------------------------------------------------- export

def campaign_text(data):
    """The campaign file's text: without the other formats' indentation. A log entry's undo data nests
    six deep, and the indents more than doubled it (a unit moving into a house, 1.5 kB, took 3.8): a
    club's 30,000-entry backup came to 100 MB, twice what the import takes. Unindented, json's C encoder
    writes it, in a fifth of the time and a third of the memory."""
    return _dumps(data) + "\n"


def _dumps(data):
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def iso(moment):
    return moment.astimezone(UTC).isoformat(timespec="microseconds") if moment else None


def canonical(value):
    """Free-form JSON with every object's keys sorted, so the file does not depend on how the
    database orders them."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


class Ground:
    """One owner's structures and armies as exported, with the maps from row ids to file references."""

    def __init__(self, structures, armies):
        self.structures = structures
        self.armies = armies
        self.index = {s.pk: i for i, s in enumerate(structures)}
        self.floors = {f.pk: (self.index[s.pk], f.level) for s in structures for f in s.floor_rows}
        self.units = {}
        for army in armies:
            for i, unit in enumerate(army.unit_rows):
                self.units[unit.pk] = f"{army.side}:{i}"


def _sheet_keys(grounds):
    """Each sheet in use, by the slug the file knows it by (a clash between a library sheet and a club
    sheet of the same slug gets a suffix, so every reference stays unambiguous)."""
    keys, used = {}, set()
    sheets = sorted({s.sheet for g in grounds for s in g.structures if s.sheet_id},
                    key=lambda sheet: (sheet.slug, sheet.club_id is not None, sheet.pk))
    for sheet in sheets:
        key, n = sheet.slug, 2
        while key in used:
            key, n = f"{sheet.slug[:75]}-{n}", n + 1
        keys[sheet.pk] = key
        used.add(key)
    return keys


def _structures(ground, sheet_keys, ruleset, origins=None):
    out = []
    for s in ground.structures:
        row = export_structure(s, ground.index, ruleset)
        row["sheet"] = sheet_keys[s.sheet_id] if s.sheet_id else None
        if s.sheet_id and has_crews(ruleset):
            # Beside crew_men, where a reader of the file looks for it.
            keys = list(row.items())
            at = list(row).index("crew_men") + 1
            row = dict(keys[:at] + [("crew_start", s.crew_start)] + keys[at:])
        if origins is not None:
            row["origin"] = origins.get(s.origin_id)
        out.append(row)
    return out


def _armies(ground, usernames, campaign=None):
    out = []
    for army in ground.armies:
        units = []
        for unit in army.unit_rows:
            row = export_unit(unit, ground.index)
            if campaign is not None:
                row["origin"] = campaign.units.get(unit.origin_id)
            units.append(row)
        row = {"side": army.side, "name": army.name, "owner": usernames.get(army.owner_id)}
        if campaign is not None:
            origin = next((a for a in campaign.armies if a.pk == army.origin_id), None)
            row["origin"] = origin.side if origin else None
        row["units"] = units
        out.append(row)
    return out


def _sequence(sequence, ground):
    if not isinstance(sequence, dict) or not sequence:
        return {}
    tokens = {f"u{pk}": ref for pk, ref in ground.units.items()}
    out = dict(sequence)
    for key in SEQUENCE_UNITS:
        if isinstance(out.get(key), list):
            out[key] = [tokens[t] for t in out[key] if t in tokens]
    return canonical(out)


def _before(before, campaign, ruleset):
    """What reopening the battle needs, with the campaign's rows named by their place in the file (no
    sheet crew in a ruleset without them, as `export_structure`)."""
    if not before:
        return {}
    ref_order = {ref: i for i, ref in enumerate(campaign.units.values())}
    structures = []
    for pk, values in (before.get("structures") or {}).items():
        index = campaign.index.get(int(pk))
        if index is None:
            continue
        row = {"structure": index}
        for field in STRUCTURE_WRITE_FIELDS:
            if field in values and not (field in NO_CREW and crewless(ruleset)):
                row[field] = number(values[field]) if field == "fire_size" else values[field]
        structures.append(row)
    units = []
    for pk, values in (before.get("units") or {}).items():
        ref = campaign.units.get(int(pk))
        if ref is None:
            continue
        floor = campaign.floors.get(values.get("floor_id"))
        units.append({
            "unit": ref, "floor": {"structure": floor[0], "floor": floor[1]} if floor else None,
            "x": number(values.get("x")), "y": number(values.get("y")),
            "models_left": values.get("models_left"), "destroyed": values.get("destroyed"),
            **{k: values[k] for k in BEFORE_UNIT_OPTIONAL if k in values},
        })
    created = [campaign.units[pk] for pk in before.get("created_units") or [] if pk in campaign.units]
    return {
        "structures": sorted(structures, key=lambda r: r["structure"]),
        "units": sorted(units, key=lambda r: ref_order[r["unit"]]),
        "created_units": sorted(created, key=ref_order.get),
    }


def _at_setup(battle, campaign):
    """An open session's setting up (`services.at_setup`), its rows named by their place in the file:
    imported, it still writes back only what it changed, where its log's record names this host's rows."""
    setup = services.at_setup(battle) if battle.status != BattleStatus.FINISHED else None
    if not setup:
        return {}
    rows = _before(setup, campaign, battle.ruleset)
    return {"structures": rows["structures"], "units": rows["units"]}


def _log_rows(campaign):
    """Every battle's log in the file's order: the battles' order (`campaign_battles`), then seq. One
    SELECT, read `LOG_CHUNK` rows at a time (on PostgreSQL through a server-side cursor)."""
    rows = (LogEntry.objects.filter(battle__campaign=campaign)
            .order_by(F("battle__session_number").asc(nulls_last=True), "battle__created_at", "battle_id", "seq")
            .values("battle_id", "seq", "turn", "actor_id", "actor_name", "side", "action", "inputs", "dice",
                    "outcome", "summary", "undo", "undone", "undoes__seq", "client_token", "prev_hash", "entry_hash",
                    "created_at"))
    return rows.iterator(chunk_size=LOG_CHUNK)


def _entry(e, usernames):
    return {
        "seq": e["seq"], "turn": e["turn"], "actor": usernames.get(e["actor_id"]), "actor_name": e["actor_name"],
        "side": e["side"], "action": e["action"], "inputs": canonical(e["inputs"]), "dice": canonical(e["dice"]),
        "outcome": canonical(e["outcome"]), "summary": e["summary"], "undo": canonical(e["undo"]),
        "undone": e["undone"], "undoes": e["undoes__seq"], "client_token": e["client_token"],
        "prev_hash": e["prev_hash"], "entry_hash": e["entry_hash"], "created_at": iso(e["created_at"]),
    }


def _logs_by_battle(campaign, battles, usernames):
    """Each battle's entries as an iterator, battle by battle, all from the one `_log_rows` read; each
    battle's must be used up before the next battle's are asked for. Put it first in a zip, so the
    check after the last battle runs."""
    rows = _log_rows(campaign)
    pending = next(rows, None)

    def entries(battle_id):
        nonlocal pending
        while pending is not None and pending["battle_id"] == battle_id:
            yield _entry(pending, usernames)
            pending = next(rows, None)

    for battle in battles:
        yield entries(battle.pk)
    if pending is not None:
        # The query and `campaign_battles` order battles differently: entries would be left out.
        raise AssertionError(f"log entry {pending['seq']} of battle {pending['battle_id']} is out of order")


def campaign_battles(campaign):
    return list(campaign.battles.select_related("scenario")
                .order_by(F("session_number").asc(nulls_last=True), "created_at", "pk"))


def _head(campaign):
    """The whole file but the battles' logs: (the document, whose battles have no "log" yet, the battles
    in the same order, the usernames the log names). Small whatever the log's length."""
    battles = campaign_battles(campaign)
    # The campaign's ground and every battle's, each in a fixed number of queries.
    ground = Ground(*load_grounds("campaign", Campaign.objects.filter(pk=campaign.pk))[campaign.pk])
    grounds = {pk: Ground(*rows) for pk, rows in load_grounds("battle", campaign.battles.all()).items()}
    user_ids = {a.owner_id for g in (ground, *grounds.values()) for a in g.armies if a.owner_id}
    user_ids |= set(LogEntry.objects.filter(battle__campaign=campaign, actor__isnull=False)
                    .values_list("actor_id", flat=True).distinct())
    User = get_user_model()
    usernames = dict(User.objects.filter(pk__in=user_ids).values_list("pk", User.USERNAME_FIELD))

    sheet_keys = _sheet_keys([ground, *grounds.values()])
    sheets = {}
    for g in (ground, *grounds.values()):
        for s in g.structures:
            if s.sheet_id and sheet_keys[s.sheet_id] not in sheets:
                sheets[sheet_keys[s.sheet_id]] = {**sheet_body(s.sheet), "slug": sheet_keys[s.sheet_id]}
    scenarios = sorted({b.scenario for b in battles if b.scenario_id}, key=lambda s: (s.name, s.pk))
    scenario_index = {s.pk: i for i, s in enumerate(scenarios)}
    scenario_grounds = load_grounds("scenario", Scenario.objects.filter(pk__in=[s.pk for s in scenarios]))

    doc = {
        "format": CAMPAIGN_FORMAT,
        "version": CAMPAIGN_VERSION,
        "name": campaign.name,
        "description": campaign.description,
        "created_at": iso(campaign.created_at),
        "rules": {key: getattr(campaign, key) for key in RULES},
        "settings": {key: getattr(campaign, key) for key in SETTINGS_KEYS},
        "deployment_zones": [export_zone(z) for z in (campaign.deployment_zones or [])],
        "sheets": [sheets[key] for key in sorted(sheets)],
        "scenarios": [export_scenario(s, scenario_grounds[s.pk]) for s in scenarios],
        "structures": _structures(ground, sheet_keys, campaign.ruleset),
        "armies": _armies(ground, usernames),
        "battles": [{
            "session_number": b.session_number,
            "name": b.name,
            "scenario": scenario_index.get(b.scenario_id),
            "status": b.status,
            "turn": b.turn,
            "upkeep_turn": b.upkeep_turn,
            "created_at": iso(b.created_at),
            "finished_at": iso(b.finished_at),
            "winner": b.winner,
            "result": b.result,
            "table": {"width": number(b.table_width), "depth": number(b.table_depth)},
            "rules": {key: getattr(b, key) for key in RULES},
            "sequence": _sequence(b.sequence, grounds[b.pk]),
            "structures": _structures(grounds[b.pk], sheet_keys, b.ruleset, origins=ground.index),
            "armies": _armies(grounds[b.pk], usernames, campaign=ground),
            "campaign_before": _before(b.campaign_before, ground, b.ruleset),
            "campaign_at_setup": _at_setup(b, ground),
            "log_head": b.log_head,
        } for b in battles],
    }
    return doc, battles, usernames


def export_campaign(campaign):
    """The whole file as one dict, for code that edits a document (the tests). The download does not
    use it: a 30,000-entry log made a dict, then a string, then bytes of it, 500 MB at once
    (`campaign_file` writes the same bytes in pieces)."""
    with one_snapshot():
        doc, battles, usernames = _head(campaign)
        for entries, data in zip(_logs_by_battle(campaign, battles, usernames), doc["battles"]):
            data["log"] = list(entries)
    return doc


@contextmanager
def one_snapshot():
    """Everything read inside sees the database as of one moment: on PostgreSQL one repeatable-read,
    read-only transaction. Read in read committed, an attack committed while the file is written would
    put its entry in the log after the battle's `log_head` and ground were read without it: a file
    whose log and state disagree. SQLite's transaction reads one snapshot anyway."""
    outermost = not connection.in_atomic_block  # inside a transaction already (a test's), it is that one
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def campaign_file(*, campaign_id):
    """The campaign file's bytes, in pieces of about `PIECE` characters: exactly `campaign_text(
    export_campaign(campaign))`, without ever holding more than the file's head and `LOG_CHUNK` log
    entries. All of it is read in `one_snapshot`, held open until the last piece is written (or the
    download is dropped: closing the generator rolls it back). The caller checks who may read it."""
    with one_snapshot():
        campaign = Campaign.objects.get(pk=campaign_id)
        doc, battles, usernames = _head(campaign)
        battle_docs = doc.pop("battles")
        # "battles" is the document's last key and "log" a battle's: each is written as the text of the
        # object without it, its closing brace opened up again. The head goes out before the log is
        # asked for, so the first bytes do not wait for its query.
        yield (_dumps(doc)[:-1] + ',"battles":[').encode()
        buffer, size = [], 0
        for i, (entries, data) in enumerate(zip(_logs_by_battle(campaign, battles, usernames), battle_docs)):
            buffer.append(("," if i else "") + _dumps(data)[:-1] + ',"log":[')
            for n, entry in enumerate(entries):
                buffer.append(("," if n else "") + _dumps(entry))
                size += len(buffer[-1])
                if size >= PIECE:
                    yield "".join(buffer).encode()
                    buffer, size = [], 0
            buffer.append("]}")
        buffer.append("]}\n")
        yield "".join(buffer).encode()


# ---------------------------------------------------------------------------------- checking

def moment(path, value, c, null=False):
    if value is None and null:
        return None
    if not isinstance(value, str):
        c.error(path, f"must be a date and time like \"2025-03-01T19:30:00.000000+00:00\", not {show(value)}")
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None:
        c.error(path, f"{show(value)} is not an ISO 8601 date and time with a UTC offset")
        return None
    return parsed


def username(path, value, c):
    if value is None:
        return None
    return c.text(path, value, 150, False)


def _storable(text):
    if "\x00" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _plain_json(value, depth):
    """True when `any_json` would find nothing to refuse in `value`. Checked first without naming a path
    for every key and item: naming them was most of the time an import of a long campaign took."""
    if depth > MAX_JSON_DEPTH or (depth == MAX_JSON_DEPTH and isinstance(value, (dict, list)) and value):
        return False  # its items would be nested too deeply: any_json names them
    if isinstance(value, dict):
        for key, v in value.items():
            if not _storable(key) or (type(v) not in SIMPLE and not _plain_json(v, depth + 1)):
                return False
        return True
    if isinstance(value, list):
        for v in value:
            if type(v) not in SIMPLE and not _plain_json(v, depth + 1):
                return False
        return True
    if isinstance(value, str):
        return _storable(value)
    return not isinstance(value, float) or abs(value) <= 1e300


SIMPLE = frozenset({int, bool, type(None)})  # values that are always storable


def any_json(path, value, c, depth=0):
    """Free-form JSON (a log entry's inputs, dice, outcome and undo data) the database can store."""
    if _plain_json(value, depth):
        return value
    if depth > MAX_JSON_DEPTH:
        c.error(path, f"is nested too deeply (at most {MAX_JSON_DEPTH} levels)")
        return None
    if isinstance(value, dict):
        for key, v in value.items():
            if c.clean_string(join(path, key), key):
                any_json(join(path, key), v, c, depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            any_json(item(path, i), v, c, depth + 1)
    elif isinstance(value, str):
        c.clean_string(path, value)
    elif isinstance(value, float) and not abs(value) <= 1e300:
        c.error(path, "is too large")
    return value


def json_object(path, value, c):
    if not isinstance(value, dict):
        c.error(path, f"must be an object, not {describe(value)}")
        return None
    return any_json(path, value, c)


def dice_list(path, value, c):
    """A log entry's rolls: free-form, but no more than the rules ever roll in one entry (an upkeep's
    collapse checks, one a structure, are the most). Every page that shows the entry draws each one."""
    if isinstance(value, list) and len(value) > MAX_ROLLS:
        c.error(path, f"holds {len(value):,} rolls; an entry has at most {MAX_ROLLS:,}")
        return None
    return json_array(path, value, c)


def json_array(path, value, c):
    if c.array(path, value) is None:
        return None
    return any_json(path, value, c)


def hash_text(path, value, c):
    if not isinstance(value, str) or (value and (len(value) != 64 or not set(value) <= HEX)):
        c.error(path, f"must be a SHA-256 hash (64 lowercase hex digits) or \"\", not {show(value)}")
        return None
    return value


class UnitRefs(dict):
    """"A:0" → the first unit of side A's army, and so on. `unsure`: the sides whose army's own side
    was refused; a reference to them is not reported again, as the army's error already explains it."""

    unsure = frozenset()


def unit_ref(path, value, c, refs):
    if isinstance(value, str) and value.partition(":")[0] in refs.unsure:
        return None
    if not isinstance(value, str) or value not in refs:
        known = ", ".join(sorted(refs)[:8]) + (", …" if len(refs) > 8 else "")
        c.error(path, f"{show(value)} is not one of this file's units here ({known or 'there are none'})")
        return None
    return value


def clean_ground(c, prefix, data, *, width, depth, materials, sheets, broken, weapons, ruleset, campaign=None):
    """The structures and armies of the campaign (campaign=None) or of one of its battles, whose rows
    then name the campaign rows they were copied from (`origin`)."""
    f = c.field
    structures_in = f(data, prefix, "structures", c.array, 500, default=list) or []
    structures, origins = [], []
    for i, raw in enumerate(structures_in):
        path = item(join(prefix, "structures"), i)
        raw, origin = _split(raw, "origin", campaign is not None)
        raw, crew_start = _split(raw, "crew_start", True)
        structure = clean_structure(c, path, raw, width=width, depth=depth, materials=materials, sheets=sheets,
                                    broken=broken, count=len(structures_in), ruleset=ruleset)
        if origin is not None and not campaign["structures"]:
            c.error(join(path, "origin"), "the campaign has no structures to copy from")
            origin = None
        elif origin is not None:
            origin = c.integer(join(path, "origin"), origin, 0, len(campaign["structures"]) - 1)
        if structure is not None:
            source = campaign["structures"][origin] if origin is not None else None
            structure["crew_start"] = clean_crew_start(c, join(path, "crew_start"), crew_start, structure, ruleset,
                                                       source["crew_start"] if source else None)
        structures.append(structure)
        origins.append(origin)
    for i, s in enumerate(structures):
        for j, other in enumerate((s or {}).get("connections") or []):
            if other == i:
                c.error(item(join(item(join(prefix, "structures"), i), "connections"), j),
                        "a structure cannot connect to itself")

    armies_in = f(data, prefix, "armies", c.array, 2, default=list) or []
    armies, refs, occupied = [], UnitRefs(), {}
    for i, raw in enumerate(armies_in):
        path = item(join(prefix, "armies"), i)
        d = c.obj(path, raw, BATTLE_ARMY_KEYS if campaign is not None else ARMY_KEYS, required=("side", "name"))
        if d is None:
            continue
        side = f(d, path, "side", c.choice, ("A", "B"))
        army = {"side": side, "name": f(d, path, "name", c.text, 120, False),
                "owner": f(d, path, "owner", username, c, default=None), "origin": None, "units": []}
        # An origin on a side whose campaign army was refused: that army's error says it.
        if campaign is not None and not (isinstance(d.get("origin"), str) and d["origin"] in campaign["refs"].unsure):
            army["origin"] = f(d, path, "origin", c.choice, tuple(a["side"] for a in campaign["armies"] if a),
                               default=None) if d.get("origin") is not None else None
        if side is not None and any(a["side"] == side for a in armies):
            c.error(join(path, "side"), "each side has one army: two armies are on the same side")
        for j, raw_unit in enumerate(f(d, path, "units", c.array, 500, default=list) or []):
            at = item(join(path, "units"), j)
            raw_unit, origin = _split(raw_unit, "origin", campaign is not None)
            unit = clean_unit(c, at, raw_unit, weapons=weapons, ruleset=ruleset, structures=structures, width=width,
                              depth=depth)
            if unit is not None:
                unit["origin"] = unit_ref(join(at, "origin"), origin, c, campaign["refs"]) \
                    if origin is not None else None
                where = unit["at"]
                if where and "structure" in where:
                    key = (where["structure"], where["floor"])
                    if key in occupied:
                        c.error(join(at, "at"), f"floor {key[1]} of structure {key[0]} already holds {occupied[key]} "
                                                "(one unit per floor)")
                    occupied[key] = at
            army["units"].append(unit)
            if side is not None:
                refs[f"{side}:{j}"] = unit
        armies.append(army)
    if any(a["side"] is None for a in armies):
        refs.unsure = frozenset({"A", "B"} - {a["side"] for a in armies})
    return {"structures": structures, "origins": origins, "armies": armies, "refs": refs}


def clean_crew_start(c, path, value, structure, ruleset, inherited=None):
    """The men a structure's crew started the campaign with (`Structure.crew_start`), which the tally
    counts losses from. A file written before the app kept it has none: a battle's structure then
    takes the start of the campaign structure it was copied from (`inherited`), a campaign's the
    sheet's crew, which is what the tally assumed when the file was written. Never less than the men
    it has and those who walked out of it: no loss is negative."""
    why = crewless(ruleset)
    if why is not None:
        if value not in (None, 0):
            c.note(path, f"was left out: {why}")
        return 0
    state = structure["state"] or {}
    men, left = structure["crew_men"], state.get("crew_left", 0)
    if men is None or left is None:
        return value  # already refused at its own path
    if value is None:
        sheet = structure["sheet"]
        known = inherited if inherited is not None else sheet["crew_total"] if sheet else 0
        return min(max(known, men + left), SMALL)
    start = c.integer(path, value, 0, SMALL)
    if start is not None and start < men + left:
        has = f"the {men} men it has and the {left} who walked out of it" if left else f"the {men} men it has"
        c.error(path, f"is fewer than {has}: a crew never gains men ({start} < {men + left})")
    return start


def _split(raw, key, allowed):
    """`raw` without `key` (which the reused scenario checkers do not know), and the key's value."""
    if allowed and isinstance(raw, dict) and key in raw:
        raw = dict(raw)
        return raw, raw.pop(key)
    return raw, None


def clean_sequence(path, value, c, refs):
    d = c.obj(path, value, SEQUENCE_KEYS)
    if d is None:
        return None
    out = {}
    for key, v in d.items():
        if key in SEQUENCE_UNITS:
            rows = c.array(join(path, key), v, 1000) or []
            out[key] = [unit_ref(item(join(path, key), i), r, c, refs) for i, r in enumerate(rows)]
        else:
            out[key] = any_json(join(path, key), v, c)
    return out


def clean_before(path, value, c, campaign, ruleset=None):
    d = c.obj(path, value, ("structures", "units", "created_units"))
    if not d:
        return {}
    f = c.field
    structures = []
    for i, row in enumerate(f(d, path, "structures", c.array, 500, default=list) or []):
        at = item(join(path, "structures"), i)
        r = c.obj(at, row, ("structure", *STRUCTURE_WRITE_FIELDS), required=("structure",))
        if r is None:
            continue
        high = len(campaign["structures"]) - 1
        values = {"structure": f(r, at, "structure", c.integer, 0, max(high, 0))}
        for field in STRUCTURE_WRITE_FIELDS:
            if field not in r:
                continue
            v, here = r[field], join(at, field)
            if field == "fire_size":
                values[field] = None if v is None else c.decimal(here, v, places=2, max_digits=8, low=0, low_open=True)
            elif field == "fire_started_turn":
                values[field] = c.integer(here, v, 1, null=True)
            elif field in ("collapsed", "destroyed", "impassable", "breached", "crew_routed"):
                values[field] = c.boolean(here, v)
            elif field == "weapons_destroyed":
                values[field] = [c.integer(item(here, k), w, 0, 49) for k, w in enumerate(c.array(here, v, 50) or [])]
            else:
                values[field] = c.integer(here, v, 0, 3 if field == "crew_pins" else 2147483647)
        drop_crew(c, at, ruleset, values, {}, fields=tuple(NO_CREW))
        structures.append(values)
    units = []
    for i, row in enumerate(f(d, path, "units", c.array, 5000, default=list) or []):
        at = item(join(path, "units"), i)
        r = c.obj(at, row, BEFORE_UNIT_KEYS + BEFORE_UNIT_OPTIONAL, required=BEFORE_UNIT_KEYS)
        if r is None:
            continue
        floor = r.get("floor")
        if floor is not None:
            fd = c.obj(join(at, "floor"), floor, ("structure", "floor"), required=("structure", "floor"))
            s = f(fd, join(at, "floor"), "structure", c.integer, 0, max(len(campaign["structures"]) - 1, 0))
            level = f(fd, join(at, "floor"), "floor", c.integer, 0, 99)
            floor = None if s is None or level is None else (s, level)
            target = campaign["structures"][s] if floor and s < len(campaign["structures"]) else None
            if target and target["floors"] is not None and level not in [fl["level"] for fl in target["floors"]]:
                c.error(join(at, "floor"), f"structure {s} has no floor {level}")
        units.append({
            "unit": unit_ref(join(at, "unit"), r.get("unit"), c, campaign["refs"]), "floor": floor,
            "x": None if r.get("x") is None else c.decimal(join(at, "x"), r["x"], places=2, max_digits=6, low=0),
            "y": None if r.get("y") is None else c.decimal(join(at, "y"), r["y"], places=2, max_digits=6, low=0),
            "models_left": c.integer(join(at, "models_left"), r.get("models_left"), 0, 32767),
            "destroyed": c.boolean(join(at, "destroyed"), r.get("destroyed")),
            **{k: c.boolean(join(at, k), r[k]) for k in BEFORE_UNIT_OPTIONAL if k in r},
        })
    created = [unit_ref(item(join(path, "created_units"), i), ref, c, campaign["refs"])
               for i, ref in enumerate(f(d, path, "created_units", c.array, 5000, default=list) or [])]
    return {"structures": structures, "units": units, "created_units": created}


def clean_log(c, path, rows):
    """Every entry of one battle's log, its hashes as written (`first_mismatch` checks the chain)."""
    entries, tokens, undone_targets = [], set(), set()
    for i, raw in enumerate(rows):
        at = item(path, i)
        d = c.obj(at, raw, ENTRY_KEYS, required=ENTRY_KEYS)
        if d is None:
            continue
        f = c.field
        seq = f(d, at, "seq", c.integer, 1, 2147483647)
        if seq is not None and seq != i + 1:
            c.error(join(at, "seq"), f"must be {i + 1}: the log is numbered from 1 without gaps, in order")
        undoes = f(d, at, "undoes", c.integer, 1, max(i, 1), null=True)
        if undoes is not None and seq is not None and undoes >= seq:
            c.error(join(at, "undoes"), "must name an earlier entry")
        elif undoes is not None and undoes in undone_targets:
            c.error(join(at, "undoes"), f"entry #{undoes} is already undone by another entry")
        undone_targets.add(undoes)
        token = None if d.get("client_token") is None else f(d, at, "client_token", c.text, 64)
        if token is not None and token in tokens:
            c.error(join(at, "client_token"), "is used by another entry of this battle")
        tokens.add(token)
        entries.append({
            "seq": seq, "turn": f(d, at, "turn", c.integer, 1, 2147483647), "actor": f(d, at, "actor", username, c),
            "actor_name": f(d, at, "actor_name", c.text, 150), "side": f(d, at, "side", c.text, 1),
            "action": f(d, at, "action", c.text, 40, False), "inputs": f(d, at, "inputs", json_object, c),
            "dice": f(d, at, "dice", dice_list, c), "outcome": f(d, at, "outcome", json_object, c),
            "summary": f(d, at, "summary", c.text, 500), "undo": f(d, at, "undo", json_object, c),
            "undone": f(d, at, "undone", c.boolean), "undoes": undoes, "client_token": token,
            "prev_hash": f(d, at, "prev_hash", hash_text, c), "entry_hash": f(d, at, "entry_hash", hash_text, c),
            "created_at": f(d, at, "created_at", moment, c),
        })
    return entries


def _restores_rows(entry):
    undo = entry["undo"] if isinstance(entry["undo"], dict) else {}
    return not entry["undone"] and entry["action"] != "undo" and bool(undo.get("structures") or undo.get("units"))


def first_mismatch(entries, head):
    """Where a cleaned log stops matching its hash chain and head, or None when it is intact."""
    prev = ""
    for e in entries:
        if e["prev_hash"] != prev:
            return f"entry #{e['seq']} does not follow entry #{e['seq'] - 1} (previous hash differs)"
        row = SimpleNamespace(**{k: e[k] for k in ("seq", "turn", "actor_name", "side", "action", "inputs", "dice",
                                                     "outcome", "summary", "undo")},
                              undoes_id=e["undoes"], undoes=SimpleNamespace(seq=e["undoes"]))
        if e["entry_hash"] != entry_hash(row, prev):
            return f"entry #{e['seq']} was changed after it was written (hash differs)"
        prev = e["entry_hash"]
    if head != prev:
        return "the log's head hash does not match its newest entry (entries are missing)"
    return None


def clean_battle(c, path, value, *, campaign, ctx, warnings, sessions):
    d = c.obj(path, value, BATTLE_KEYS, required=("name", "status", "table", "rules"))
    if d is None:
        return None
    f = c.field
    width, depth = f(d, path, "table", clean_table, c, default=(None, None)) or (None, None)
    rules = f(d, path, "rules", clean_rules, c)
    ruleset = rules["ruleset"] if rules else None
    status = f(d, path, "status", c.choice, tuple(BattleStatus.values))
    number_ = f(d, path, "session_number", c.integer, 1, 32767, null=True, default=None)
    if number_ is not None and number_ in sessions:
        c.error(join(path, "session_number"), f"session {number_} appears twice")
    sessions.add(number_)
    finished_at = f(d, path, "finished_at", moment, c, True, default=None)
    if status == BattleStatus.FINISHED and d.get("finished_at") is None:
        c.error(join(path, "finished_at"), "a finished battle needs the time it finished")
    scenario = f(d, path, "scenario", c.integer, 0, max(len(ctx["scenarios"]) - 1, 0), null=True, default=None)
    if scenario is not None and scenario >= len(ctx["scenarios"]):
        c.error(join(path, "scenario"), "the file has no scenarios")
    ground = clean_ground(c, path, d, width=width, depth=depth, materials=ctx["materials"], sheets=ctx["sheets"],
                          broken=ctx["broken"], weapons=ctx["weapons"](ruleset), ruleset=ruleset, campaign=campaign)
    before = c.count()
    log = clean_log(c, join(path, "log"), f(d, path, "log", c.array, MAX_ENTRIES, default=list) or [])
    head = f(d, path, "log_head", hash_text, c, default="")
    # A log that no longer matches its hashes is imported as it is, not refused: it did not match on
    # the old host either, and verify_log reports the same entry here.
    broken = first_mismatch(log, head) if c.count() == before else None
    if broken:
        warnings.append(f"{d.get('name')}: {broken}; verify_log reports it too")
    if status != BattleStatus.FINISHED and any(_restores_rows(e) for e in log):
        warnings.append(f"{d.get('name')} is still open: what was done in it before the import cannot be undone "
                        "here (its log names the old host's rows). Play on, or finish it.")
    return {
        "session_number": number_, "name": f(d, path, "name", c.text, 120, False), "scenario": scenario,
        "status": status, "turn": f(d, path, "turn", c.integer, 1, 2147483647, default=1),
        "upkeep_turn": f(d, path, "upkeep_turn", c.integer, 0, 2147483647, default=0),
        "created_at": f(d, path, "created_at", moment, c, True, default=None), "finished_at": finished_at,
        "winner": f(d, path, "winner", c.choice, ("", "A", "B", "D"), default=""),
        "result": f(d, path, "result", c.text, 300, default=""),
        "table_width": width, "table_depth": depth, "rules": rules,
        "sequence": f(d, path, "sequence", clean_sequence, c, ground["refs"], default=dict) or {},
        "ground": ground,
        "campaign_before": f(d, path, "campaign_before", clean_before, c, campaign, ruleset, default=dict) or {},
        "campaign_at_setup": f(d, path, "campaign_at_setup", clean_before, c, campaign, ruleset, default=dict) or {},
        "log_head": head, "log": log,
    }


def clean_campaign(c, data, warnings):
    d = c.obj("", data, TOP_KEYS, required=("name", "rules"))
    if d is None:
        return None
    f = c.field
    rules = f(d, "", "rules", clean_rules, c)
    settings = f(d, "", "settings", c.obj, SETTINGS_KEYS, default=dict) or {}
    doc = {
        "name": f(d, "", "name", c.text, 120, False),
        "description": f(d, "", "description", c.text, 5000, default=""),
        "created_at": f(d, "", "created_at", moment, c, True, default=None),
        "rules": rules,
        "fires_persist": f(settings, "settings", "fires_persist", c.boolean, default=False),
        "single_open_battle": f(settings, "settings", "single_open_battle", c.boolean, default=True),
    }
    # A file written before campaigns kept their zones has none: its sessions' maps shade none, as then.
    # The campaign has no table of its own (each session has one), so a zone is only checked for shape.
    zones = f(d, "", "deployment_zones", c.array, 20, default=list) or []
    doc["deployment_zones"] = [clean_zone(c, item("deployment_zones", i), z, None, None) for i, z in enumerate(zones)]

    sheets, broken = clean_sheets(c, d, limit=200)
    doc["sheets"] = sheets

    scenarios = []
    for i, raw in enumerate(f(d, "", "scenarios", c.array, 100, default=list) or []):
        # The scenario format's own checker, its paths moved under scenarios[i].
        sub = Checker()
        cleaned = clean_scenario(sub, raw) if check_document(sub, raw, SCENARIO_FORMAT, SCENARIO_VERSION) else None
        for path, message in sub.errors:
            c.error(item("scenarios", i) if path == ROOT else f"{item('scenarios', i)}.{path}", message)
        c.more += sub.more
        c.notes += [f"{item('scenarios', i)}.{note}" for note in sub.notes]
        scenarios.append((raw, cleaned))
    doc["scenarios"] = scenarios

    materials = {(m.surface, m.slug): m for m in Material.objects.all()}
    catalogue = {}

    def weapons(ruleset):
        if ruleset not in catalogue:
            catalogue[ruleset] = {w.slug: w for w in Weapon.objects.filter(ruleset=ruleset)} if ruleset else {}
        return catalogue[ruleset]

    ruleset = rules["ruleset"] if rules else None
    ctx = {"materials": materials, "sheets": sheets, "broken": broken, "weapons": weapons, "scenarios": scenarios}
    doc["ground"] = clean_ground(c, "", d, width=None, depth=None, materials=materials, sheets=sheets, broken=broken,
                                 weapons=weapons(ruleset), ruleset=ruleset)
    sessions = set()
    doc["battles"] = [clean_battle(c, item("battles", i), raw, campaign=doc["ground"], ctx=ctx, warnings=warnings,
                                   sessions=sessions)
                      for i, raw in enumerate(f(d, "", "battles", c.array, MAX_BATTLES, default=list) or [])]
    return doc


# ---------------------------------------------------------------------------------- import

def import_campaign(data, *, club, user):
    """A new campaign of `club` from a parsed "redoubt.campaign" document, with its ground, rosters,
    scenarios, sheets and battles with their logs. Only an organiser of `club` may import into it.
    Raises FormatErrors listing every problem (nothing is saved then). A campaign name the club already
    uses gets " (2)", " (3)"…; the returned campaign's `import_warnings` lists logs whose hash chain
    did not match in the file (they are imported as they are, so verify_log reports the same entry)."""
    if club is None or not permissions.is_organiser(user, club.pk):
        raise PermissionDenied("Only an organiser of the club may import a campaign into it.")
    c, warnings = Checker(), []
    doc = clean_campaign(c, data, warnings) \
        if check_document(c, data, CAMPAIGN_FORMAT, CAMPAIGN_VERSION) else None
    if not c.ok:
        raise c.failure()
    try:
        with transaction.atomic():
            Club.lock(club.pk)
            campaign = _write(doc, club, user, warnings)
    except DatabaseError as exc:
        raise FormatErrors([(ROOT, f"could not be saved: {str(exc).strip().splitlines()[0]}")]) from None
    campaign.import_warnings = warnings + c.notes
    return campaign


def _users(doc, club, warnings):
    """The file's usernames that name members of `club`. Anyone else is left unlinked: a name alone
    must not make a stranger a side's commander or the author of log entries."""
    names = {a["owner"] for a in doc["ground"]["armies"] if a["owner"]}
    for b in doc["battles"]:
        names |= {a["owner"] for a in b["ground"]["armies"] if a["owner"]}
        names |= {e["actor"] for e in b["log"] if e["actor"]}
    User = get_user_model()
    field = User.USERNAME_FIELD
    found = {getattr(u, field): u for u in User.objects.filter(**{f"{field}__in": names, "memberships__club": club})}
    if names - set(found):
        warnings.append(f"Not members of {club.name}, so not linked: {', '.join(sorted(names - set(found)))}. Their "
                        "armies have no commander (choose one on the campaign page once they have joined); their log "
                        "entries keep the name.")
    return found


def _scenarios(doc, club, user):
    """The file's scenarios as rows: the club's own scenario of that name when it exports exactly the
    same, otherwise a new one (its name suffixed if the club uses it)."""
    rows = []
    for raw, cleaned in doc["scenarios"]:
        same = club.scenarios.filter(name=cleaned["name"]).first()
        rows.append(same if same is not None and export_scenario(same) == raw else write_scenario(cleaned, club, user))
    return rows


def _build_grounds(items, sheets, users, origins=None):
    """Rows for the cleaned structures and armies of each (ground, owner) in `items`, all owners in one
    statement per table; returns, for each, its new rows by file reference."""
    structures = Structure.objects.bulk_create([
        Structure(**owner, sheet=sheets[s["sheet"]["slug"]] if s["sheet"] else None,
                  origin=origins["structures"][o] if origins and o is not None else None,
                  **{k: v for k, v in s.items() if k not in ("sheet", "floors", "connections", "state")}, **s["state"])
        for ground, owner in items for s, o in zip(ground["structures"], ground["origins"])
    ])
    # Each owner's structures, in file order.
    own_structures, at = [], 0
    for ground, _ in items:
        own_structures.append(structures[at:at + len(ground["structures"])])
        at += len(ground["structures"])
    wanted = [(n, i, fl) for n, (ground, _) in enumerate(items) for i, s in enumerate(ground["structures"])
              for fl in s["floors"]]
    floors = Floor.objects.bulk_create([Floor(structure=own_structures[n][i], level=fl["level"], is_roof=fl["is_roof"])
                                        for n, i, fl in wanted])
    Opening.objects.bulk_create([Opening(floor=floor, **o) for (_, _, fl), floor in zip(wanted, floors)
                                 for o in fl["openings"]])
    floor_at = [{} for _ in items]
    for (n, i, fl), floor in zip(wanted, floors):
        floor_at[n][(i, fl["level"])] = floor
    through = Structure.connections.through
    pairs = {(rows[i].pk, rows[j].pk) for (ground, _), rows in zip(items, own_structures)
             for i, s in enumerate(ground["structures"]) for j in s["connections"]}
    pairs |= {(b, a) for a, b in pairs}
    through.objects.bulk_create([through(from_structure_id=a, to_structure_id=b) for a, b in sorted(pairs)])

    armies = Army.objects.bulk_create([
        Army(**owner, side=a["side"], name=a["name"], owner=users.get(a["owner"]),
             origin=origins["armies"].get(a["origin"]) if origins else None)
        for ground, owner in items for a in ground["armies"]
    ])
    own_armies, at = [], 0
    for ground, _ in items:
        own_armies.append(armies[at:at + len(ground["armies"])])
        at += len(ground["armies"])
    wanted = [(n, army, j, u) for n, (ground, _) in enumerate(items)
              for army, a in zip(own_armies[n], ground["armies"]) for j, u in enumerate(a["units"])]
    units = Unit.objects.bulk_create([_unit(army, u, floor_at[n], origins, own_structures[n])
                                      for n, army, _, u in wanted])
    UnitWeapon.objects.bulk_create([UnitWeapon(unit=unit, weapon=w["weapon"], count=w["count"])
                                    for unit, (_, _, _, u) in zip(units, wanted) for w in u["weapons"]])
    built = [{"structures": own_structures[n], "floors": floor_at[n], "armies": {a.side: a for a in own_armies[n]},
              "units": {}} for n in range(len(items))]
    for unit, (n, army, j, _) in zip(units, wanted):
        built[n]["units"][f"{army.side}:{j}"] = unit
    return built


def _unit(army, u, floor_at, origins, structures):
    at, state = u["at"], u["state"]
    return Unit(
        army=army, name=u["name"], kind=u["kind"], tank_class=u["tank_class"], experience=u["experience"],
        models_start=u["models"], fireteam=u["fireteam"],
        floor=floor_at[(at["structure"], at["floor"])] if at and "structure" in at else None,
        x=at["x"] if at and "x" in at else None, y=at["y"] if at and "y" in at else None,
        origin=origins["units"][u["origin"]] if origins and u["origin"] else None,
        crew_of=structures[u["crew_of"]] if u["crew_of"] is not None else None,
        **{**state, "models_left": state.get("models_left", u["models"])},
    )


def _write(doc, club, user, warnings):
    rules = doc["rules"]
    # The file has no table of the campaign's own: its first session's is the one it started on.
    first = min(doc["battles"], key=lambda b: (b["session_number"] is None, b["session_number"] or 0), default=None)
    campaign = Campaign.objects.create(
        club=club, name=free_name(Campaign.objects.filter(club=club), doc["name"]), description=doc["description"],
        fires_persist=doc["fires_persist"], single_open_battle=doc["single_open_battle"],
        deployment_zones=doc["deployment_zones"], **rules,
        **({"table_width": first["table_width"], "table_depth": first["table_depth"]} if first else {}),
    )
    if doc["created_at"]:
        Campaign.objects.filter(pk=campaign.pk).update(created_at=doc["created_at"])
    sheets = resolve_sheets(doc["sheets"], club)
    scenarios = _scenarios(doc, club, user)
    users = _users(doc, club, warnings)
    own = _build_grounds([(doc["ground"], {"campaign": campaign})], sheets, users)[0]
    battles = []
    for b in doc["battles"]:
        if campaign.name != doc["name"]:
            # "Winter Line (2)": its sessions follow, or the home page lists two "Winter Line — session 2";
            # a session with a name of its own gets " (2)" where the club has that name already.
            # (Written together, the sessions cannot see each other's names in the club: each sees those
            # chosen before it.)
            name = with_suffix(campaign.name, b["name"][len(doc["name"]):]) if b["name"].startswith(doc["name"]) \
                else free_name(Battle.objects.filter(club=club), b["name"], taken=[d["name"] for d in battles])
            b = {**b, "name": name}
        battles.append(b)
    _write_battles(battles, campaign, own, sheets, scenarios, users)
    campaign.refresh_from_db()
    return campaign


def _write_battles(docs, campaign, own, sheets, scenarios, users):
    """Every session of the file, all of them in one statement per table (a campaign of forty sessions
    was four hundred statements written one session at a time)."""
    battles = Battle.objects.bulk_create([Battle(
        club_id=campaign.club_id, campaign=campaign, scenario=scenarios[b["scenario"]] if b["scenario"] is not None
        else None, name=b["name"], session_number=b["session_number"], status=b["status"], turn=b["turn"],
        upkeep_turn=b["upkeep_turn"], table_width=b["table_width"], table_depth=b["table_depth"],
        winner=b["winner"], result=b["result"], finished_at=b["finished_at"], log_head=b["log_head"],
        imported_seq=max((e["seq"] for e in b["log"]), default=0), **b["rules"],
    ) for b in docs])
    grounds = _build_grounds([(b["ground"], {"battle": battle}) for b, battle in zip(docs, battles)], sheets, users,
                             origins=own)
    for b, battle, built in zip(docs, battles, grounds):
        sequence = dict(b["sequence"])
        for key in SEQUENCE_UNITS:
            if key in sequence:
                sequence[key] = [f"u{built['units'][ref].pk}" for ref in sequence[key]]
        battle.sequence, battle.campaign_before = sequence, _before_rows(b["campaign_before"], own)
        battle.imported_setup = {k: v for k, v in _before_rows(b["campaign_at_setup"], own).items()
                                 if k != "created_units"}
        if b["created_at"]:
            battle.created_at = b["created_at"]
    Battle.objects.bulk_update(battles, ["sequence", "campaign_before", "imported_setup", "created_at"])
    # bulk_create stamps auto_now_add with the present moment: each entry gets its own time back, and
    # an undo the entry it undid (written in the same batch, so only now known by id). One UPDATE per
    # entry, pipelined by psycopg's executemany: bulk_update's CASE over a thousand rows a batch took
    # half of importing a long campaign (4 of 8.5 s for 8,500 entries). A batch at a time, so a long
    # log is never all model instances at once (writing 30,000 entries took 27 MB so, 10 now).
    created, undoes = (LogEntry._meta.get_field(name) for name in ("created_at", "undoes"))
    quote = connection.ops.quote_name
    update = (f"UPDATE {quote(LogEntry._meta.db_table)} SET {quote(created.column)} = %s, "
              f"{quote(undoes.column)} = %s WHERE {quote(LogEntry._meta.pk.column)} = %s")
    ids = {}
    for batch in batched(((battle, e) for b, battle in zip(docs, battles) for e in b["log"]), LOG_CHUNK):
        entries = LogEntry.objects.bulk_create([
            LogEntry(battle=battle, actor=users.get(e["actor"]),
                     **{k: e[k] for k in ENTRY_KEYS if k not in ("actor", "undoes", "created_at")})
            for battle, e in batch])
        ids.update(((battle.pk, e["seq"]), row.pk) for row, (battle, e) in zip(entries, batch))
        with connection.cursor() as cursor:
            # An entry undoes an earlier one: in this batch or one before it.
            cursor.executemany(update, [(created.get_db_prep_save(e["created_at"], connection),
                                         ids[(battle.pk, e["undoes"])] if e["undoes"] else None, row.pk)
                                        for row, (battle, e) in zip(entries, batch)])


def _before_rows(before, own):
    """The cleaned `campaign_before` in the shape `apps.campaigns.services` stores it, with the new rows' ids."""
    if not before:
        return {}
    structures = own["structures"]
    out = {
        "structures": {str(structures[r["structure"]].pk): {k: v for k, v in r.items() if k != "structure"}
                       for r in before["structures"]},
        "units": {},
        "created_units": [own["units"][ref].pk for ref in before["created_units"]],
    }
    for r in before["units"]:
        floor = own["floors"].get(r["floor"]) if r["floor"] else None
        out["units"][str(own["units"][r["unit"]].pk)] = {
            "floor_id": floor.pk if floor else None, "x": r["x"], "y": r["y"],
            "models_left": r["models_left"], "destroyed": r["destroyed"],
            **{k: r[k] for k in BEFORE_UNIT_OPTIONAL if k in r},
        }
    return out
