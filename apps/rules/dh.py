"""Disposable Heroes fortification variant (seed 003), and the sheet helpers the sheet editor reuses.

The seed relies on the DH core book for acquisition, to-hit and wound rolls and for Guts checks:
those come in as inputs ("acquired?", "hit?", "casualties", "Guts check passed?"). Hit location,
penetration, the Penetrating Hits table, the blast pool and pins are rolled here.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

from . import tables
from .errors import InputError
from .inputs import Field, action, refuse
from .outcome import Effect
from .state import FACINGS, CrewState, CrewWeapon, FortSheet

SOURCE = "seed 003_2fba9840313b247a.txt"


# ---------------------------------------------------------------------------- sheet helpers

def riflemen(men, crews):
    """Men who may fire small arms besides the weapons (DH-21): the men left once every weapon is manned,
    halved, rounded down (A-DH-5). "all" means the weapon takes the whole crew; an undermanned crew has no
    riflemen; None is a weapon that needs no men (the Rifle Pit's rifles)."""
    needed = [c for c in crews if c is not None]
    if "all" in needed:
        return 0
    total = sum(needed)
    return 0 if men < total else (men - total) // 2


def crew_riflemen(crew):
    return riflemen(crew.men, [w.crew for w in crew.weapons if not w.destroyed])


def crew_from_sheet(sheet, side):
    leaders = sum(sheet.leaders.values()) if sheet.leaders else 0
    return CrewState(side, sheet.crew_total, nco=leaders,
                     weapons=tuple(CrewWeapon(w.name, w.crew, w.location or "") for w in sheet.weapons))


def _as_sheet(sheet):
    return sheet.to_dict() if isinstance(sheet, FortSheet) else sheet


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def validate_sheet(sheet, *, blank_ok=False):
    """Problems with a fortification sheet as [(field path, message)]; [] when it is sound.

    Accepts a FortSheet or its dict (the BunkerSheet model's JSON). `blank_ok` lets unfilled numbers pass,
    for a card still being drawn up.
    """
    d = _as_sheet(sheet)
    problems = []

    def number(path, v, low=None):
        if v is None:
            if not blank_ok:
                problems.append((path, "is missing"))
        elif not _is_int(v):
            problems.append((path, f"must be a whole number, not {v!r}"))
        elif low is not None and v < low:
            problems.append((path, f"must not be negative ({v})"))

    if d.get("kind") not in ("bunker", "fort"):
        problems.append(("kind", f"must be bunker or fort, not {d.get('kind')!r}"))
    number("dm", d.get("dm"))
    number("crew_total", d.get("crew_total"), 0)
    locations = d.get("locations") or {}
    for facing in FACINGS:
        rows = locations.get(facing) or []
        if not rows:
            problems.append((f"locations.{facing}", "has no locations"))
        seen = [0] * 11
        for i, loc in enumerate(rows):
            path = f"locations.{facing}[{i}]"
            lo, hi = loc.get("d10_from"), loc.get("d10_to")
            if _is_int(lo) and _is_int(hi) and 1 <= hi < lo <= 10:
                # Both results are on the die: "not within 1–10" sent people looking for an 11 that isn't there.
                problems.append((f"{path}.d10", f"range {lo}–{hi} is reversed: it runs from the lower result "
                                                f"to the higher ({hi}–{lo})"))
            elif not (_is_int(lo) and _is_int(hi) and 1 <= lo <= hi <= 10):
                problems.append((f"{path}.d10", f"range {lo}–{hi} is not within 1–10"))
            else:
                for face in range(lo, hi + 1):
                    seen[face] += 1
            number(f"{path}.av", loc.get("av"), 0)
        if rows:
            missing = [f for f in range(1, 11) if seen[f] == 0]
            twice = [f for f in range(1, 11) if seen[f] > 1]
            if missing:
                problems.append((f"locations.{facing}", f"d10 results {_faces(missing)} hit no location"))
            if twice:
                problems.append((f"locations.{facing}", f"d10 results {_faces(twice)} hit two locations"))
    number("locations.top.av", (locations.get("top") or {}).get("av"), 0)
    needed, everyone = 0, False
    for i, w in enumerate(d.get("weapons") or []):
        crew = w.get("crew")
        if crew == "all":
            everyone = True
        elif crew is not None:
            number(f"weapons[{i}].crew", crew, 0)
            needed += crew if _is_int(crew) else 0
    total = d.get("crew_total")
    if _is_int(total) and (needed > total or (everyone and total < 1)):
        problems.append(("crew_total", f"{total} men cannot man weapons needing {needed if not everyone else 'all'}"))
    row = d.get("penetration_row") or []
    if row or not blank_ok:
        if len(row) != 10:
            problems.append(("penetration_row", f"needs 10 values (d10 <2, 2 … 9, 10+), has {len(row)}"))
        for i, v in enumerate(row):
            number(f"penetration_row[{i}]", v, 0)
        for i in range(1, len(row)):
            if _is_int(row[i]) and _is_int(row[i - 1]) and row[i] < row[i - 1]:
                problems.append((f"penetration_row[{i}]", f"{row[i]} is lower than the column before ({row[i - 1]})"))
    return problems


def _faces(faces):
    return ", ".join(map(str, faces))


def penetrates(row, face, av):
    """DH-10: the row's value for the d10 against the location's AV; equal penetrates (A-DH-8 reading)."""
    return row[face - 1] >= av


def penetration_odds(sheet, row):
    """Exact chance that a hit from a gun with penetration `row` penetrates, per facing (and from the top)."""
    sheet = sheet if isinstance(sheet, FortSheet) else FortSheet.from_dict(sheet)
    odds = {}
    for facing in FACINGS:
        odds[facing] = sum((Fraction(loc.d10_to - loc.d10_from + 1, 10) *
                            Fraction(sum(penetrates(row, f, loc.av) for f in range(1, 11)), 10)
                            for loc in sheet.locations.get(facing, ())), Fraction(0))
    if sheet.top_av is not None:
        odds["top"] = Fraction(sum(penetrates(row, f, sheet.top_av) for f in range(1, 11)), 10)
    return odds


@lru_cache(maxsize=None)
def ph_row(total, overlap="11+"):
    """The Penetrating Hits row for a modified roll. The seed prints "9-10" and "10 or more": by default
    9–10 is the survivors-routed row and 11+ total elimination (A-DH-1); "10+" reads it as 9, then 10+."""
    rows = tables.DH_PH_TABLE
    last = 11 if overlap == "11+" else 10
    if total >= last:
        return {**rows[5], "band": f"{last}+"}
    if total >= 9:
        return {**rows[4], "band": "9–10" if last == 11 else "9"}
    for row in rows[:4]:
        if row["high"] is not None and total <= row["high"]:
            return row
    raise AssertionError(total)


_checked = {}


def _problems(sheet):
    # Exact odds re-run the rule hundreds of times over the same sheet: check it once.
    hit = _checked.get(id(sheet))
    if hit is None or hit[0] is not sheet:
        if len(_checked) > 256:
            _checked.clear()
        hit = _checked[id(sheet)] = (sheet, validate_sheet(sheet))
    return hit[1]


def _by_face(sheet, facing):
    """The location each d10 face hits, index 1..10 (cached: exact odds ask for it on every path)."""
    hit = _checked.get((id(sheet), facing))
    if hit is None or hit[0] is not sheet:
        hit = _checked[(id(sheet), facing)] = (sheet, [None] + [sheet.location_for(facing, v) for v in range(1, 11)])
    return hit[1]


def _sheet(s):
    if s.sheet is None or s.crew is None:
        refuse("structure", s.id, f"{s.label} has no Disposable Heroes fortification sheet and crew")
    problems = _problems(s.sheet)
    if problems:
        path, message = problems[0]
        # A club's sheet still being drawn up reaches the table: not the attacker's mistake, and not theirs to fix.
        raise InputError(f"structure.sheet.{path}", s.sheet.slug, f"{s.label}'s sheet is not ready for play "
                                                                  f"({path} {message}): a designer fills it in on "
                                                                  "its page under Sheets")
    if s.destroyed:
        refuse("structure", s.id, f"{s.label} has been destroyed")
    return s.sheet, s.crew


def _heavy_category(w, sheet_weapon):
    if w.crew is None:
        return None  # the crew's own rifles: not a heavy weapon
    rof = sheet_weapon.rof if sheet_weapon is not None else None
    return "machine_gun" if (rof or 1) > 1 else "main_gun"


def heavy_weapon_standing(s, kind):
    """The form's question "main gun or machine gun?" (DH-15) is put only where the answer can matter: the
    kinds of heavy weapon `s` still has standing. With one kind the choice is that one; with none, not asked."""
    if s.sheet is None or s.crew is None:
        return False
    for i, w in enumerate(s.crew.weapons):
        sw = s.sheet.weapons[i] if i < len(s.sheet.weapons) else None
        if not w.destroyed and _heavy_category(w, sw) == kind:
            return True
    return False


def heaviest_weapon(sheet, crew, choice):
    """DH-15: the attacker names a main gun or a machine gun; with none of that kind the other kind is
    taken, and with no heavy weapon at all the clause is ignored."""
    found = {}
    for i, w in enumerate(crew.weapons):
        sw = sheet.weapons[i] if i < len(sheet.weapons) else None
        kind = _heavy_category(w, sw)
        if kind and not w.destroyed:
            found.setdefault(kind, i)
    other = "machine_gun" if choice == "main_gun" else "main_gun"
    return found.get(choice, found.get(other))


def guts(s, crew, survivors, passed, flame, pins_now=None):
    """A failed Guts check pins the crew (DH-6, DH-14); the third pin routs it 9". Against a flamethrower a
    failure routs at once and never pins (DH-16)."""
    if survivors <= 0:
        return [], ""
    if crew.routed:
        return [], "the crew has routed already: no Guts check"
    if passed:
        return [], "Guts check passed"
    if flame:
        return [Effect("rout", s.id, note="flamethrower")], "Guts check failed against a flamethrower: routs 9\""
    pins = crew.pins if pins_now is None else pins_now
    effects = [Effect("pin", s.id, 1)]
    if pins + 1 >= tables.DH_PINS_TO_ROUT:
        effects.append(Effect("rout", s.id))
        return effects, "Guts check failed: third pin, the crew routs 9\""
    return effects, f"Guts check failed: pinned ({pins + 1})"


def penetrating_hit(state, s, sheet, crew, weapon, dice, heaviest, flame=False):
    """Roll on the Fortification Penetrating Hits Results table (DH-11..16). A row that calls for a Guts
    check says so (`guts_check`): the players roll it once they know the row and what the blast did, and
    enter it with `dh_guts`."""
    mods = (weapon.dm or 0) + sheet.dm + crew.penetrating_hits
    overlap = state.options.dh_overlap
    face = dice.die(10, f"Penetrating hits on {s.label} (d10 {mods:+d})",
                    key=lambda v: ph_row(v + mods, overlap)["band"])
    row = ph_row(face + mods, overlap)
    effects = [Effect("ph_result", s.id, note=row["band"])]
    words = [f"PH {row['band']}: {row['text'].rstrip('.')}"]  # the seed's words; "; " follows
    men = crew.men
    if row["eliminated"]:
        if men:
            effects.append(Effect("crew_casualties", s.id, men))
        effects.append(Effect("destroyed", s.id))
        return effects, "; ".join(words)
    dead = 0
    if row["blast_ap"] and men:
        # Casualties = dice at or under the AP score (the DH core wound procedure is not in the seeds).
        dead = min(men, dice.pool(tables.DH_BLAST_DICE, 10, f"Blast vs crew, 10D10 AP {row['blast_ap']}",
                                  at_most=row["blast_ap"]))
        if dead:
            effects.append(Effect("crew_casualties", s.id, dead))
        words.append(f"{dead} crew killed")
    survivors = men - dead
    if row["destroyed"]:
        effects.append(Effect("destroyed", s.id))
        if survivors:
            # The table's "3 pins" are how a rout is reached; a flamethrower routs without them (DH-16:
            # "flamethrowers never pin").
            if crew.pins < tables.DH_PINS_TO_ROUT and not flame:
                effects.append(Effect("pin", s.id, tables.DH_PINS_TO_ROUT - crew.pins))
            effects.append(Effect("rout", s.id))
            words.append(f"{survivors} survivors routed")
        return effects, "; ".join(words)
    effects.append(Effect("penetrating_hits", s.id, row["ph"]))
    if row["heaviest"]:
        i = heaviest_weapon(sheet, crew, heaviest)
        if i is not None:
            effects.append(Effect("weapon_destroyed", s.id, i, ref=crew.weapons[i].name))
            words.append(f"{crew.weapons[i].name} destroyed")
        else:  # the seed's words above promise one: say why nothing went (neither kind stands: the other
            # kind is taken when the named one is gone, so naming only the one asked for misled)
            words.append("no main gun or machine gun left to destroy")
    if survivors and not crew.routed:
        # After the roll, not before: only these rows call for a check, and the DH core's modifiers for it
        # follow what the blast did. A flamethrower's failed check routs (DH-16): the note says so.
        effects.append(Effect("guts_check", s.id, survivors, note="flamethrower" if flame else ""))
        words.append(f"the crew ({survivors} left) takes a Guts check{' against a flamethrower' if flame else ''}: "
                     "roll it, then enter it")
    return effects, "; ".join(words)


# ---------------------------------------------------------------------------- actions

def fortification(s):
    """What the crew actions are made at: a fortification with a sheet and a crew, still standing (`_sheet`)."""
    return s.sheet is not None and s.crew is not None and not s.destroyed


def crew_inside(s):
    """What a crew can leave: one with men inside, standing or not (a 9–10 result's routed survivors)."""
    return s.crew is not None and s.crew.men > 0


def main_gun(w):
    """Engages a fortification as a vehicle target: anything but small arms and flamethrowers."""
    return w.dh_category not in ("small_arms", "flamethrower", "")


def small_arms(w):
    return w.dh_category in ("small_arms", "atr")


def dh_flamethrower(w):
    return w.dh_category == "flamethrower"


_GUTS = Field("guts_passed", "bool", "Guts check passed?", required=False,
              help="The crew's Guts check from your rulebook, once you know the casualties; asked only if there "
                   "are any (the log then says whether it held)")


def _guts_owed(value, men, routed, casualties, who):
    """Casualties that leave men standing call for a Guts check (DH-5, DH-6): it is the players' roll, so
    it must be entered, never taken as failed (a pin) or passed because the field was left alone."""
    if value is None and 0 < casualties < men and not routed:
        many = "casualties call" if casualties != 1 else "casualty calls"
        raise InputError("guts_passed", None, f"{casualties} {many} for a Guts check in {who}: roll it and say "
                                              "whether it passed")


@action(
    "dh_main_gun", "dh", "Main gun or AT weapon at a fortification",
    Field("weapon", "weapon", "Weapon", fits=main_gun),
    Field("structure", "structure", "Fortification", fits=fortification),
    Field("facing", "choice", "Facing hit", choices=(("front", "Front"), ("side", "Side"), ("rear", "Rear"),
                                                     ("top", "Top (from above)"))),
    Field("acquired", "bool", "Acquired?", default=True,
          help="Your acquisition roll: +0 against a Bunker, +2 against a Fort. Infantry AT weapons skip it"),
    Field("hit", "bool", "Hit?", help="Your to-hit roll"),
    Field("penetration", "choice", "Penetration", default="roll",
          choices=(("roll", "Roll on the weapon's row"), ("yes", "Penetrated (your rulebook)"),
                   ("no", "Not penetrated (your rulebook)")),
          help="The seeds give rows only for the guns on the sheets: for another weapon (bazooka, "
               "Panzerschreck, explosives) take the answer from your rulebook's chart"),
    Field("heaviest", "choice", "Heaviest weapon (on a 7–8)", default="main_gun",
          choices=(("main_gun", "A main gun"), ("machine_gun", "A machine gun")),
          structure_allows=heavy_weapon_standing),
    source=f"{SOURCE} 'Firing Main Guns at Fortifications', penetrating hits table (DH-7..15, DH-4, A-DH-1, "
           "A-DH-3, A-DH-7, A-DH-8)",
)
def resolve_dh_main_gun(state, inp, dice):
    w, s, facing = inp["weapon"], inp["structure"], inp["facing"]
    sheet, crew = _sheet(s)
    if not main_gun(w):
        refuse("weapon", w.key, f"{w.name} cannot attack a fortification as a vehicle: "
                                + ("use the flamethrower action" if w.dh_category == "flamethrower"
                                   else "small arms can only shoot at the crew"))
    told = inp["penetration"]
    if told == "roll" and len(w.penetration_row) != 10:
        raise InputError("penetration", told, f"{w.name} has no penetration row here: answer Penetrated or Not "
                                              "penetrated from your rulebook's chart")
    if w.dh_category == "main_gun" and not inp["acquired"]:
        return [], f"{w.name} did not acquire {s.label} ({tables.DH_ACQUIRE_MODIFIER[sheet.kind]:+d} to acquire)"
    if not inp["hit"]:
        return [], f"{w.name} missed {s.label}"
    if facing == "top":
        name, av = "Top", sheet.top_av
    else:
        by_face = _by_face(sheet, facing)
        face = dice.die(10, f"Hit location, {facing}", key=lambda v: by_face[v])
        loc = by_face[face]
        name, av = loc.location, loc.av
    effects = [Effect("location_hit", s.id, note=f"{facing} {name}")]
    if told == "roll":
        row = w.penetration_row
        face = dice.die(10, f"Penetration, {w.name} against AV {av}", key=lambda v: penetrates(row, v, av))
        through = penetrates(row, face, av)
    else:
        through = told == "yes"
    if not through:
        return effects + [Effect("not_penetrated", s.id)], f"{w.name} hit the {facing} {name} (AV {av}): " \
                                                           "no penetration"
    more, text = penetrating_hit(state, s, sheet, crew, w, dice, inp["heaviest"])
    return effects + [Effect("penetrated", s.id)] + more, f"{w.name} penetrated the {facing} {name} (AV {av}); {text}"


@action(
    "dh_flamethrower", "dh", "Flamethrower at a fortification",
    Field("weapon", "weapon", "Weapon", help="The flamethrower it fires", fits=dh_flamethrower),
    Field("structure", "structure", "Fortification", fits=fortification),
    Field("hit", "bool", "Hit?", help="Your to-hit roll"),
    Field("heaviest", "choice", "Heaviest weapon (on a 7–8)", default="main_gun",
          choices=(("main_gun", "A main gun"), ("machine_gun", "A machine gun")),
          structure_allows=heavy_weapon_standing),
    source=f"{SOURCE} 'Firing Flamethrowers at Fortifications' (DH-16)",
)
def resolve_dh_flamethrower(state, inp, dice):
    w, s = inp["weapon"], inp["structure"]
    sheet, crew = _sheet(s)
    if not dh_flamethrower(w):
        refuse("weapon", w.key, f"{w.name} is not a flamethrower")
    if not inp["hit"]:
        return [], f"{w.name} missed {s.label}"
    more, text = penetrating_hit(state, s, sheet, crew, w, dice, inp["heaviest"], flame=True)
    return [Effect("penetrated", s.id, note="flamethrower")] + more, f"{w.name} penetrates {s.label}; {text}"


@action(
    "dh_small_arms", "dh", "Small arms at a fortification's crew",
    Field("weapon", "weapon", "Weapon", required=False, fits=small_arms),
    Field("structure", "structure", "Fortification", fits=fortification),
    Field("shots", "int", "Shots", min=1, max=100, help="Dice your rulebook gives the firing unit"),
    source=f"{SOURCE} 'Firing Small Arms at Fortifications' (DH-2, DH-3, DH-4, A-DH-2)",
)
def resolve_dh_small_arms(state, inp, dice):
    w, s = inp["weapon"], inp["structure"]
    sheet, crew = _sheet(s)
    if w is not None and not small_arms(w):
        refuse("weapon", w.key, f"{w.name} engages fortifications as a vehicle target, not its crew")
    cover = tables.DH_COVER[sheet.kind]
    second = cover["second_d10_at_most"]
    # "1s, then 5s": each shot needs a natural 1, then a second d10 of 5 or less (4 against a Fort).
    ones = dice.pool(inp["shots"], 10, "Shots at the crew: natural 1s", at_most=1)
    hits = dice.pool(ones, 10, f"Confirming d10 per natural 1 (≤{second})", at_most=second) if ones else 0
    effects = [Effect("crew_hits", s.id, hits)] if hits else []
    return effects, f"{inp['shots']} shots at {s.label}'s crew ({cover['name']} {cover['modifier']}): " \
                    f"{ones} natural 1{'s' * (ones != 1)}, {hits} hit{'s' * (hits != 1)}" + \
                    ("; roll to wound, then enter the casualties" if hits else "")


@action(
    "dh_crew_casualties", "dh", "Casualties among a fortification's crew",
    Field("structure", "structure", "Fortification", fits=fortification),
    Field("casualties", "int", "Casualties", min=0, help="From your wound rolls"),
    Field("hits", "int", "Hits rolled for", required=False, min=1,
          help="The small-arms hits the wound rolls were for (filled in when you come from the attack)"),
    _GUTS,
    source=f"{SOURCE} 'Firing Small Arms at Fortifications' 2nd paragraph (DH-5, DH-6)",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_dh_crew_casualties(state, inp, dice):
    s, n = inp["structure"], inp["casualties"]
    sheet, crew = _sheet(s)
    if n > crew.men:
        raise InputError("casualties", n, f"{s.label}'s crew has only {crew.men} men")
    if inp["hits"] is not None and n > inp["hits"]:
        raise InputError("casualties", n, f"{inp['hits']} hit{'s' * (inp['hits'] != 1)} can kill at most "
                                          f"{inp['hits']} (one wound roll each)")
    _guts_owed(inp["guts_passed"], crew.men, crew.routed, n, f"{s.label}'s crew")
    if not n:
        return [], f"No casualties in {s.label}: no Guts check"
    if n == crew.men:
        return [Effect("crew_casualties", s.id, n)], f"{n} of {s.label}'s crew killed: no crew left, no Guts check"
    more, text = guts(s, crew, crew.men - n, inp["guts_passed"], flame=False)
    return [Effect("crew_casualties", s.id, n)] + more, f"{n} of {s.label}'s crew killed; {text}"


@action(
    "dh_casualties", "dh", "Casualties in a unit",
    Field("target", "unit", "Unit hit"),
    Field("casualties", "int", "Casualties", min=0, help="From your rulebook's fire and wound rolls (a fortification's "
                                                           "machine guns, rifles, blasts at infantry)"),
    Field("guts_passed", "bool", "Guts check passed?", required=False,
          help="The unit's Guts check from your rulebook, once you know the casualties; asked only if there are any"),
    source=f"{SOURCE} 'How Fortifications Fight Back', 'Leaving Fortifications' (DH-19..22): the fire itself is "
           "the DH core rulebook's",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_dh_casualties(state, inp, dice):
    """The seed has fortifications fight back, and crews walk out as infantry, but leaves the fire at
    infantry to the DH core rulebook: its result is entered here, so a campaign's rosters keep their
    losses (a crew's sections included)."""
    u, n = inp["target"], inp["casualties"]
    if u.destroyed:
        refuse("target", u.id, f"{u.label} has been destroyed")
    if n > u.models:
        raise InputError("casualties", n, f"{u.label} has only {u.models} model{'s' * (u.models != 1)}")
    _guts_owed(inp["guts_passed"], u.models, u.pins >= tables.DH_PINS_TO_ROUT, n, u.label)
    if not n:
        return [], f"No casualties in {u.label}: no Guts check"
    effects = [Effect("casualties", u.id, n)]
    if n == u.models:
        return effects + [Effect("unit_destroyed", u.id)], f"{n} of {u.label} killed: the unit is destroyed"
    if inp["guts_passed"]:
        return effects, f"{n} of {u.label} killed; Guts check passed"
    if u.pins >= tables.DH_PINS_TO_ROUT:
        return effects, f"{n} of {u.label} killed; Guts check failed: already routed (3 pins)"
    effects.append(Effect("pin", u.id, 1))
    if u.pins + 1 >= tables.DH_PINS_TO_ROUT:
        return effects, f"{n} of {u.label} killed; Guts check failed: third pin, the unit routs 9\""
    return effects, f"{n} of {u.label} killed; Guts check failed: pinned ({u.pins + 1})"


@action(
    "dh_guts", "dh", "Guts check of a fortification's crew",
    Field("structure", "structure", "Fortification", fits=fortification),
    Field("guts_passed", "bool", "Guts check passed?",
          help="The crew's Guts check from your rulebook, with all its normal modifiers, their cover included"),
    Field("flamethrower", "bool", "Against a flamethrower?", default=False,
          help="Failed against a flamethrower, the crew routs at once, with no pin (filled in when you come "
               "from the attack)"),
    source=f"{SOURCE} penetrating hits table and the paragraph below it, 'Firing Flamethrowers at "
           "Fortifications' (DH-6, DH-14, DH-16)",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_dh_guts(state, inp, dice):
    s = inp["structure"]
    sheet, crew = _sheet(s)
    if crew.men == 0:
        refuse("structure", s.id, f"{s.label} has no crew left to take a Guts check")
    if crew.routed:
        refuse("structure", s.id, f"{s.label}'s crew has routed already")
    effects, text = guts(s, crew, crew.men, inp["guts_passed"], inp["flamethrower"])
    return effects, f"{s.label}'s crew: {text}"


def _catalogue(state, *names):
    """The battle's catalogue weapon (its key) of the first of these names that it has, or None: the
    seeds name a crew's arms, the catalogue (their reference data) holds them under those names."""
    by_name = {w.name.lower(): key for key, w in state.weapons.items()}
    return next((by_name[n.lower()] for n in names if n.lower() in by_name), None)


@action(
    "dh_leave", "dh", "Crew leaves its fortification",
    Field("structure", "structure", "Fortification", fits=crew_inside),
    Field("section_size", "int", "Men per section", required=False, min=1,
          help="Size of your army's infantry sections; the battle's default otherwise"),
    source=f"{SOURCE} 'Leaving Fortifications' (DH-22)",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_dh_leave(state, inp, dice):
    s = inp["structure"]
    if not crew_inside(s):
        refuse("structure", s.id, f"{s.label} has no crew left to leave")
    crew, size = s.crew, inp["section_size"] or state.options.section_size
    # As close to section size as possible: the nearest whole number of sections, sizes as even as can be.
    # Halves round up, always: round() goes to the even number, so 25 men in tens made 2 sections of 13
    # and 12 while 35 made 4 of 9 and 8.
    k = max(1, (2 * crew.men + size) // (2 * size))
    base, extra = divmod(crew.men, k)
    lmgs = [w.name for w in crew.weapons if w.light_mg and not w.destroyed]
    rifles, grenades = _catalogue(state, "Rifles"), _catalogue(state, "Grenades")
    effects = [Effect("crew_leaves", s.id, crew.men)]
    # A unit's rout is its third pin (DH-6), and a crew routed by a flamethrower has no pins to show for
    # it (DH-16: they never pin): its sections go out routed all the same, with the three.
    pins = tables.DH_PINS_TO_ROUT if crew.routed else crew.pins
    # Numbered on from the sections this crew already formed: one that walks out again, later in the battle
    # or in a later session of a campaign (whose roster keeps the old sections), made a second "crew 1".
    named = re.compile(rf"{re.escape(s.label)} crew (\d+)")
    formed = max((int(m.group(1)) for u in state.units.values() if (m := named.fullmatch(u.label))), default=0)
    for i in range(k):
        number = formed + i + 1
        uid = f"{s.id}-crew-{number}"
        while uid in state.units:
            uid += "x"
        men = base + (i < extra)
        effects.append(Effect("unit_created", uid, men, ref=s.id, note=f"{s.label} crew {number}"))
        if pins:
            # The crew is one unit (DH-6): its pin markers go out with it, e.g. a 9–10 result's survivors
            # "Routed (3 Pin markers and Rout 9")" stay routed infantry (A-DH-14).
            effects.append(Effect("pin", uid, pins))
        # DH-22: "normally armed with rifles ... and grenades", and the light MGs they take, shared out
        # between the sections; each man not on a light MG has a rifle.
        carried = {}
        for name in lmgs[i::k]:
            key = _catalogue(state, name, "LMG", "Light MG")
            if key is not None:
                carried[key] = carried.get(key, 0) + 1
        if rifles is not None and men > sum(carried.values()):
            carried = {rifles: men - sum(carried.values()), **carried}
        if grenades is not None:
            carried[grenades] = men
        effects.extend(Effect("carries", uid, n, ref=key) for key, n in carried.items())
    carried = f"; they take {', '.join(lmgs)}" if lmgs else "; every other weapon is abandoned"
    routed = "; routed, they rout on (3 pins)" if crew.routed else ""
    return effects, f"{crew.men} men leave {s.label} as {k} section(s) of " \
                    f"{'/'.join(str(base + (i < extra)) for i in range(k))}: rifles and grenades, one leader with " \
                    f"the Jr NCO Guts score{carried}{routed}"
