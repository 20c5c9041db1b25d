"""JSON import and export of bunker sheets: the versioned format "redoubt.sheet" (docs/formats.md).

`export_sheet(sheet) -> dict` and `import_sheet(data, *, club, user) -> BunkerSheet` are plain
functions so the scenario format (apps/campaigns/formats.py) and a later whole-campaign export reuse
them. An import checks the whole document before it writes anything and reports every problem as
(field path, message) in one `FormatErrors`; nothing is saved unless everything is right.

`Checker` is the small validator both formats use: it walks a parsed document, collects errors with
their paths (`structures[3].floors[1].openings[0].side`) and hands back cleaned values.
"""

import codecs
import json
import re
import threading
from decimal import Decimal, InvalidOperation

from django.core.exceptions import PermissionDenied
from django.db import DatabaseError, transaction
from django.utils.text import slugify

from apps.rules.dh import validate_sheet
from apps.rules.state import FACINGS

SHEET_FORMAT = "redoubt.sheet"
SHEET_VERSION = 1
# Files above this are refused before they are parsed: a whole scenario is a few tens of kB.
MAX_BYTES = 1_000_000
ROOT = "document"  # the path of an error about the file as a whole

SHEET_KEYS = ("slug", "name", "kind", "kind_note", "dm", "crew_total", "leaders", "locations", "weapons",
              "features", "penetration_weapon", "penetration_row", "note", "is_blank")
WEAPON_KEYS = ("crew", "name", "location", "range", "rof", "ap", "mm", "dm", "special")
LOCATION_KEYS = ("location", "d10_from", "d10_to", "av")

# Bounds that keep a sheet printable and every number storable; the card's own numbers are far inside.
AV_MAX = 9999
PEN_MAX = 9999
MAX_ROWS = 50
MAX_FEATURES, FEATURE_LENGTH = MAX_ROWS, 80


# The errors an import keeps and lists. A file can hold millions (a 50 MB campaign file of unknown
# keys, or of strings with a NUL in them): listing them all drew a page of a gigabyte and more, for
# minutes, from one request. The rest are counted; nobody fixes a file from its millionth error.
MAX_ERRORS = 200


class FormatErrors(Exception):
    """Everything wrong with an imported document: `errors` is a list of (field path, message), the
    first MAX_ERRORS found; `more` counts those found beyond them."""

    def __init__(self, errors, more=0):
        self.errors = list(errors)
        self.more = more
        super().__init__("; ".join(f"{path}: {message}" for path, message in self.errors[:5]))

    @property
    def total(self):
        return len(self.errors) + self.more


# ---------------------------------------------------------------------------------- parsing

def _no_constants(name):
    raise ValueError(f"{name} is not a number JSON allows")


def _objects():
    """The object hook of one parse: it refuses a repeated key, and keeps one copy of each string value
    (json shares repeated keys, not values). A campaign's log names the same structures, units, materials
    and actions thousands of times: a 30,000-entry file parsed to 197 MB, 162 MB so (bench_export.py)."""
    same = {}

    def pairs(items):
        seen = {}
        for key, value in items:
            if key in seen:
                raise ValueError(f'the key "{key}" appears twice in one object')
            seen[key] = same.setdefault(value, value) if type(value) is str else value
        return seen

    return pairs


_narrowing = threading.local()  # the runs `_narrow` is writing in this thread


def _escape_wide(exc):
    """The codec error handler "redoubt-json-escape": a run of characters beyond ASCII as the JSON
    escapes json reads back as the same characters, noted in `_narrowing.runs`."""
    text, written = exc.object, []
    for ch in text[exc.start:exc.end]:
        n = ord(ch)
        written.append(f"\\u{n:04x}" if n <= 0xFFFF else
                       f"\\u{0xD800 | (n - 0x10000) >> 10:04x}\\u{0xDC00 | (n - 0x10000) & 0x3FF:04x}")
    at = exc.start - 1
    while at >= 0 and text[at] == "\\":
        at -= 1
    if (exc.start - 1 - at) % 2:
        written[0] = "?"  # the file escapes this character with a backslash: it stays an invalid escape
    written = "".join(written)
    _narrowing.runs.append((exc.start, exc.end, len(written)))
    return written, exc.end


codecs.register_error("redoubt-json-escape", _escape_wide)


def _narrow(text):
    """(`text` as ASCII bytes, each character beyond ASCII written as its JSON escape; where those runs
    are: [(start in text, end, length written)]). A str is stored at the width of its widest character,
    so one "—" made a campaign file's 51 MB of text 103 MB, held beside all that is parsed from it.
    Only for text decoded from UTF-8: a lone surrogate (pasted text may hold one) could pair with an
    escape after it."""
    _narrowing.runs = runs = []
    try:
        return text.encode("ascii", "redoubt-json-escape"), runs
    finally:
        del _narrowing.runs


def _column(exc, runs):
    """The column of a JSON error in the file's own text, which `_narrow` wrote `runs` into."""
    def original(at):  # a place in the narrowed text, in the file's text
        shift = 0
        for start, end, written in runs:
            if at < start + shift:
                break
            if at < start + shift + written:
                return start
            shift += written - (end - start)
        return at - shift

    newline = exc.doc.rfind("\n", 0, exc.pos)
    return original(exc.pos) - (original(newline) if newline >= 0 else -1)


def parse_document(raw, *, limit=MAX_BYTES):
    """A JSON text (bytes or str) as Python data; FormatErrors when it is too big or not JSON."""
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise FormatErrors([(ROOT, f"is {size:,} bytes; files above {limit:,} bytes are refused")])
    runs = ()
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise FormatErrors([(ROOT, f"is not UTF-8 text (byte {exc.start})")]) from None
        if not raw.isascii():
            raw, runs = _narrow(raw)
            raw = raw.decode("ascii")  # once the wide text is gone
    if not raw or raw.isspace():  # not strip(): a copy of the whole text
        raise FormatErrors([(ROOT, "is empty")])
    try:
        return json.loads(raw, parse_constant=_no_constants, object_pairs_hook=_objects())
    except json.JSONDecodeError as exc:
        column = _column(exc, runs) if runs else exc.colno
        raise FormatErrors([(ROOT, f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {column}")]) from None
    except RecursionError:
        raise FormatErrors([(ROOT, "is nested too deeply")]) from None
    except ValueError as exc:  # NaN/Infinity, a repeated key, an integer with thousands of digits
        raise FormatErrors([(ROOT, f"is not valid JSON: {exc}")]) from None


def dumps(data):
    """The exported text: stable key order, two-space indent, UTF-8, a final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------------- checking

MISSING = object()


def describe(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def show(value, limit=60):
    """A value quoted for a message: JSON-escaped, so odd characters cannot break the page."""
    text = json.dumps(value) if isinstance(value, str) else describe(value)
    return text if len(text) <= limit else text[: limit - 1] + "…\""


IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def join(path, key):
    """`path.key`, or `path["odd key"]` for a key that is not a plain name (keys come from the file)."""
    if isinstance(key, str) and IDENTIFIER.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{show(str(key))}]"


def item(path, index):
    return f"{path}[{index}]"


def _plain(value):
    value = Decimal(value)
    return str(int(value)) if value == value.to_integral_value() else str(value.normalize())


def _short(value):
    return str(value) if abs(value) < 10**15 else "a very large number"


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


class Checker:
    """Collects (path, message) errors while cleaning a parsed document.

    Each method returns the cleaned value, or None after recording why it is wrong; callers carry on
    so that one pass reports every error.
    """

    def __init__(self, *, designed=False):
        # A sheet or scenario file is a designer's card, held to the sheet editor's own checks (a weapon
        # crew or ROF of 0); a campaign file is the club's record of what was played, read as it was.
        self.designed = designed
        self.errors = []
        self.more = 0  # errors found beyond the first MAX_ERRORS, counted, not kept
        self.notes = []  # what was read but left out, told to the importer with the result

    def note(self, path, message):
        self.notes.append(f"{path or ROOT}: {message}")

    def error(self, path, message):
        if len(self.errors) < MAX_ERRORS:
            self.errors.append((path or ROOT, message))
        else:
            self.more += 1

    @property
    def ok(self):
        return not self.errors

    def count(self):
        return len(self.errors) + self.more

    def failure(self):
        """What the import raises when the document is wrong."""
        return FormatErrors(self.errors, self.more)

    # -- containers

    def obj(self, path, value, keys, required=()):
        """An object whose keys are among `keys` (any order); missing required keys are errors."""
        if not isinstance(value, dict):
            self.error(path, f"must be an object, not {describe(value)}")
            return None
        for key in value:
            if key not in keys:
                self.error(join(path, key), f"is not a field here (expected {', '.join(keys)})")
        for key in required:
            if key not in value:
                self.error(join(path, key), "is missing")
        return value

    def array(self, path, value, max_items=None):
        if not isinstance(value, list):
            self.error(path, f"must be an array, not {describe(value)}")
            return None
        if max_items is not None and len(value) > max_items:
            self.error(path, f"has {len(value)} entries; at most {max_items} are allowed")
            return None
        return value

    # -- scalars

    def text(self, path, value, max_length=None, blank=True, pattern=None, pattern_help=""):
        if not isinstance(value, str):
            self.error(path, f"must be a string, not {describe(value)}")
            return None
        if not self.clean_string(path, value):
            return None
        if not blank and not value.strip():
            self.error(path, "must not be empty")
            return None
        if max_length is not None and len(value) > max_length:
            self.error(path, f"is {len(value)} characters long; at most {max_length} are allowed")
            return None
        if pattern is not None and not re.fullmatch(pattern, value):
            self.error(path, f"{show(value)} is not {pattern_help}")
            return None
        return value

    def clean_string(self, path, value):
        """Strings the database can store: no NUL character, no lone surrogate."""
        if "\x00" in value:
            self.error(path, "must not contain a NUL character")
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            self.error(path, "contains a character that is not valid Unicode")
            return False
        return True

    def boolean(self, path, value):
        if not isinstance(value, bool):
            self.error(path, f"must be true or false, not {describe(value)}")
            return None
        return value

    def integer(self, path, value, low=None, high=None, null=False):
        if value is None and null:
            return None
        if not _is_int(value):
            wanted = "a whole number or null" if null else "a whole number"
            self.error(path, f"must be {wanted}, not {describe(value) if not isinstance(value, float) else repr(value)}")
            return None
        if low is not None and value < low:
            self.error(path, f"must be at least {low} (it is {_short(value)})")
            return None
        if high is not None and value > high:
            self.error(path, f"must be at most {high} (it is {_short(value)})")
            return None
        return value

    def choice(self, path, value, choices):
        if not isinstance(value, str) or value not in choices:
            self.error(path, f"must be one of {', '.join(map(show, choices))}, not {show(value)}")
            return None
        return value

    def decimal(self, path, value, *, places, max_digits, low=None, high=None, low_open=False):
        """A number stored in a DecimalField: at most `places` decimals, within bounds."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.error(path, f"must be a number, not {describe(value)}")
            return None
        try:
            number = Decimal(str(value))
        except InvalidOperation:
            self.error(path, f"{value!r} is not a number")
            return None
        if not number.is_finite():
            self.error(path, "must be a finite number")
            return None
        # The bound the data asks for first: -99999 for a coordinate "must be at least 0", not "too large".
        if low is not None and (number <= low if low_open else number < low):
            self.error(path, f"must be {'more than' if low_open else 'at least'} {_plain(low)} (it is {value!r})")
            return None
        if abs(number) >= Decimal(10) ** (max_digits - places):
            limit = 10 ** (max_digits - places)
            self.error(path, f"is too large ({value!r}); it must stay under {limit}" if number > 0
                       else f"is too small ({value!r}); it must stay above -{limit}")
            return None
        if number != number.quantize(Decimal(1).scaleb(-places)):
            self.error(path, f"has more than {places} decimal place{'s' * (places != 1)} ({value!r})")
            return None
        if high is not None and number > high:
            self.error(path, f"must be at most {_plain(high)} (it is {value!r})")
            return None
        return number.quantize(Decimal(1).scaleb(-places))

    def field(self, data, path, key, check, *args, default=MISSING, **kwargs):
        """data[key] through `check`, or `default` when the key is absent (an error if there is none)."""
        if data is None:
            return None
        if key not in data:
            if default is MISSING:
                return None  # `obj` already reported it as missing
            return default() if callable(default) else default
        return check(join(path, key), data[key], *args, **kwargs)


def number(value):
    """A stored Decimal as the JSON number it exports as: 24, 17.5 (never 24.00 or "17.50")."""
    if value is None:
        return None
    value = Decimal(value)
    return int(value) if value == value.to_integral_value() else float(value.normalize())


def check_document(c, data, fmt, version):
    """The envelope every Redoubt file has: an object with "format" and "version". False when the
    rest of the document should not be read at all (wrong kind of file, unknown version)."""
    if not isinstance(data, dict):
        c.error(ROOT, f"must be a JSON object with \"format\": \"{fmt}\", not {describe(data)}")
        return False
    given = data.get("format", MISSING)
    if given is MISSING:
        c.error("format", f'is missing: a Redoubt file of this kind starts with "format": "{fmt}"')
        return False
    if given != fmt:
        other = f" (this is a {show(given)} file)" if isinstance(given, str) and given.startswith("redoubt.") else ""
        c.error("format", f'must be "{fmt}"{other}')
        return False
    v = data.get("version", MISSING)
    if v is MISSING:
        c.error("version", f"is missing (this Redoubt reads version {version})")
        return False
    if not _is_int(v) or v < 1:
        c.error("version", f"must be a whole number, not {describe(v)}")
        return False
    if v != version:
        c.error("version", f"is {v}; this Redoubt reads version {version} of {fmt}")
        return False
    return True


# ---------------------------------------------------------------------------------- sheets: export

def _location(entry):
    entry = entry if isinstance(entry, dict) else {}
    return {key: entry.get(key, "" if key == "location" else None) for key in LOCATION_KEYS}


def _weapon(weapon):
    weapon = weapon if isinstance(weapon, dict) else {}
    out = {key: weapon.get(key) for key in WEAPON_KEYS}
    out["name"] = out["name"] or ""
    out["special"] = out["special"] or ""
    return out


def sheet_body(sheet):
    """The sheet's fields in the format's key order (no envelope): what the scenario format embeds."""
    locations = sheet.locations if isinstance(sheet.locations, dict) else {}
    top = locations.get("top")
    return {
        "slug": sheet.slug,
        "name": sheet.name,
        "kind": sheet.kind,
        "kind_note": sheet.kind_note,
        "dm": sheet.dm,
        "crew_total": sheet.crew_total,
        "leaders": dict(sheet.leaders) if isinstance(sheet.leaders, dict) else {},
        "locations": {
            **{facing: [_location(e) for e in (locations.get(facing) or [])] for facing in FACINGS},
            "top": {"av": top.get("av") if isinstance(top, dict) else None},
        },
        "weapons": [_weapon(w) for w in (sheet.weapons or [])],
        "features": [str(f) for f in (sheet.features or [])],
        "penetration_weapon": sheet.penetration_weapon,
        "penetration_row": list(sheet.penetration_row or []),
        "note": sheet.note,
        "is_blank": sheet.is_blank,
    }


def export_sheet(sheet):
    return {"format": SHEET_FORMAT, "version": SHEET_VERSION, **sheet_body(sheet)}


def rules_dict(body):
    """What `apps.rules.dh` expects of a sheet (the model's JSON shape)."""
    return {key: body[key] for key in ("slug", "name", "kind", "dm", "crew_total", "leaders", "locations",
                                       "weapons", "penetration_row")}


# ---------------------------------------------------------------------------------- sheets: checking

SLUG = r"[-a-zA-Z0-9_]+"


def clean_sheet(c, data, path="", envelope=False):
    """The cleaned sheet body (same shape and key order as `sheet_body`), or None. Structural errors
    first; when the shape is right, the rules' own checks (`validate_sheet`) add theirs."""
    keys = SHEET_KEYS + (("format", "version") if envelope else ())
    before = c.count()
    d = c.obj(path, data, keys, required=("name", "kind", "locations"))
    if d is None:
        return None
    f = c.field
    is_blank = f(d, path, "is_blank", c.boolean, default=False)
    name = f(d, path, "name", c.text, 120, blank=bool(is_blank))
    slug = f(d, path, "slug", c.text, 80, False, SLUG, "a slug (letters, digits, - and _)", default=None)
    out = {
        "slug": slug or slugify(name or "")[:80] or "sheet",
        "name": name,
        "kind": f(d, path, "kind", c.choice, ("bunker", "fort")),
        "kind_note": f(d, path, "kind_note", c.text, 200, default=""),
        "dm": f(d, path, "dm", c.integer, -10, 10, default=0),
        "crew_total": f(d, path, "crew_total", c.integer, 0, 999, default=0),
        "leaders": f(d, path, "leaders", _leaders, c, default=dict),
        "locations": f(d, path, "locations", _locations, c),
        "weapons": f(d, path, "weapons", _weapons, c, default=list),
        "features": f(d, path, "features", _features, c, default=list),
        "penetration_weapon": f(d, path, "penetration_weapon", c.text, 40, default=""),
        "penetration_row": f(d, path, "penetration_row", _penetration_row, c, default=list),
        "note": f(d, path, "note", c.text, 2000, default=""),
        "is_blank": is_blank,
    }
    if c.count() > before:
        return None
    for problem_path, message in validate_sheet(rules_dict(out), blank_ok=True):
        sub = rules_path(problem_path)
        c.error(f"{path}.{sub}" if path else sub, message)
    return out if c.count() == before else None


def rules_path(problem_path):
    """validate_sheet names a location's range `…[i].d10`; the format's fields are d10_from/d10_to."""
    return re.sub(r"\.d10$", ".d10_from", problem_path)


def _leaders(path, value, c):
    if not isinstance(value, dict):
        c.error(path, f'must be an object of rank: count, e.g. {{"NCO": 1}}, not {describe(value)}')
        return None
    out = {}
    for rank, count in value.items():
        at = f"{path}[{show(rank)}]"
        if not c.clean_string(at, rank):
            continue
        if not rank.strip() or len(rank) > 60:
            c.error(at, "a rank must be 1 to 60 characters long")
            continue
        cleaned = c.integer(at, count, 0, 999)
        if cleaned is not None:
            out[rank] = cleaned
    return out


def _locations(path, value, c):
    d = c.obj(path, value, FACINGS + ("top",), required=FACINGS + ("top",))
    if d is None:
        return None
    out = {}
    for facing in FACINGS:
        rows = c.field(d, path, facing, c.array, MAX_ROWS)
        at = join(path, facing)
        out[facing] = [_location_row(item(at, i), row, c) for i, row in enumerate(rows or [])]
        seen = set()
        for i, row in enumerate(out[facing]):
            name = (row or {}).get("location")
            if name and name.strip().lower() in seen:
                # The card lists a facing's locations by name: a second one of the same name would vanish.
                c.error(join(item(at, i), "location"), f"{show(name)} is already a location on the {facing} facing")
            seen.add((name or "").strip().lower())
    top_path = join(path, "top")
    top = c.field(d, path, "top", c.obj, ("av",), ("av",))
    out["top"] = {"av": c.field(top, top_path, "av", c.integer, 0, AV_MAX, null=True)}
    return out


def _location_row(path, row, c):
    d = c.obj(path, row, LOCATION_KEYS, required=LOCATION_KEYS)
    if d is None:
        return None
    low = c.field(d, path, "d10_from", c.integer, 1, 10)
    high = c.field(d, path, "d10_to", c.integer, 1, 10)
    if low is not None and high is not None and high < low:
        c.error(join(path, "d10_to"), f"must not be below d10_from ({high} < {low})")
    return {
        "location": c.field(d, path, "location", c.text, 40, False),
        "d10_from": low,
        "d10_to": high,
        "av": c.field(d, path, "av", c.integer, 0, AV_MAX, null=True),
    }


def _crew(path, value, c):
    if value is None or value == "all":
        return value
    if isinstance(value, str):
        c.error(path, f'must be a number of men, "all" or null, not {show(value)}')
        return None
    crew = c.integer(path, value, 0, 999)
    if crew == 0 and c.designed:
        # 0 is not "none": the rules take a weapon with a crew (even of 0) as a heavy weapon to knock out.
        c.error(path, 'must be at least 1 man: write null when it needs none of its own (a pit\'s Rifles), '
                      '"all" for All Crew')
        return None
    return crew


def _rof(path, value, c):
    rof = c.integer(path, value, 0, 99, null=True)
    if rof == 0 and c.designed:
        # The cards print 1 to 6 or "-"; the rules would fire a 0 as 1.
        c.error(path, "must be at least 1: write null when it has none (a pit's Rifles)")
        return None
    return rof


def _weapons(path, value, c):
    rows = c.array(path, value, MAX_ROWS)
    if rows is None:
        return None
    out = []
    for i, row in enumerate(rows):
        at = item(path, i)
        d = c.obj(at, row, WEAPON_KEYS, required=("name",))
        if d is None:
            continue
        f = c.field
        out.append({
            "crew": f(d, at, "crew", _crew, c, default=None),
            "name": f(d, at, "name", c.text, 60),
            "location": f(d, at, "location", _optional_text, c, 40, default=None),
            "range": f(d, at, "range", c.integer, 0, 9999, null=True, default=None),
            "rof": f(d, at, "rof", _rof, c, default=None),
            "ap": f(d, at, "ap", c.integer, 0, 99, null=True, default=None),
            "mm": f(d, at, "mm", c.integer, -99, 99, null=True, default=None),
            "dm": f(d, at, "dm", c.integer, -99, 99, null=True, default=None),
            "special": f(d, at, "special", c.text, 80, default=""),
        })
    return out


def _optional_text(path, value, c, max_length):
    return None if value is None else c.text(path, value, max_length)


def _features(path, value, c):
    rows = c.array(path, value, MAX_FEATURES)
    if rows is None:
        return None
    return [c.text(item(path, i), v, FEATURE_LENGTH, False) for i, v in enumerate(rows)]


def _penetration_row(path, value, c):
    row = c.array(path, value, 10)
    if row is None:
        return None
    if row and len(row) != 10:
        c.error(path, f"needs 10 values (d10 <2, 2 … 9, 10+) or none, has {len(row)}")
    return [c.integer(item(path, i), v, 0, PEN_MAX) for i, v in enumerate(row)]


# ---------------------------------------------------------------------------------- sheets: import

def first_free(wanted, taken, numbered):
    """`wanted` if `taken` does not hold it, else the first of numbered(2), numbered(3)… that it
    does not: an import or a copy never takes a name or slug the club already uses."""
    if wanted not in taken:
        return wanted
    n = 2
    while numbered(n) in taken:
        n += 1
    return numbered(n)


def unique_slug(club, slug, taken=()):
    """`slug`, or `slug-2`, `slug-3`… when the club already has a sheet by that slug."""
    from apps.structures.models import BunkerSheet

    existing = set(BunkerSheet.objects.filter(club=club, slug__startswith=slug).values_list("slug", flat=True))
    return first_free(slug, existing | set(taken), lambda n: f"{slug[:75]}-{n}")


def unique_sheet_name(club, name, taken=()):
    """`name`, or "name (2)", "name (3)"… when the club (or `taken`) already has a sheet called so."""
    from apps.structures.models import BunkerSheet

    existing = set(BunkerSheet.objects.filter(club=club, name__startswith=name).values_list("name", flat=True))
    return first_free(name, existing | set(taken), lambda n: f"{name[:90]} ({n})")


def new_sheet(body, club, slug=None):
    """An unsaved club sheet from a cleaned body."""
    from apps.structures.models import BunkerSheet

    fields = {key: body[key] for key in SHEET_KEYS}
    fields["slug"] = slug or fields["slug"]
    return BunkerSheet(club=club, **fields)


def _check_designer(club, user):
    from apps.campaigns import permissions

    if club is None or not permissions.can_design(user, club.pk):
        raise PermissionDenied("only the club's organisers and designers may import into it")


def import_sheet(data, *, club, user):
    """A new sheet of `club` from a parsed "redoubt.sheet" document. Raises FormatErrors listing every
    problem (nothing is saved then), PermissionDenied when `user` may not design for `club`.
    A slug the club already uses gets a -2, -3… suffix, a name a " (2)", " (3)"…: two sheets listed
    alike could not be told apart in the builder."""
    from apps.campaigns.models import Club

    _check_designer(club, user)
    c = Checker(designed=True)
    body = clean_sheet(c, data, envelope=True) if check_document(c, data, SHEET_FORMAT, SHEET_VERSION) else None
    if not c.ok:
        raise c.failure()
    try:
        with transaction.atomic():
            Club.lock(club.pk)
            sheet = new_sheet(body, club, unique_slug(club, body["slug"]))
            sheet.name = unique_sheet_name(club, sheet.name)
            sheet.save()
    except DatabaseError as exc:  # a constraint the checks above missed (the club's lock rules out a race on the slug)
        raise FormatErrors([(ROOT, f"could not be saved: {str(exc).strip().splitlines()[0]}")]) from None
    return sheet
