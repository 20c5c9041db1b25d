from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.shortcuts import render

from apps.campaigns import permissions
from apps.structures.models import Floor, Side

FACINGS = (("front", "Front"), ("side", "Side"), ("rear", "Rear"))
CARD_ROWS = ("Walls", "Entrance", "Vision")
PENETRATION_D10 = ("<2", "2", "3", "4", "5", "6", "7", "8", "9", "10+")
DASH = "–"


def signed(value):
    """Modifiers print as the card prints them: +0, +2, -3."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"+{value}" if value >= 0 else str(value)
    return plain(value)


def plain(value):
    return DASH if value is None or value == "" or value == "-" else str(value)


def inches(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f'{value:g}"'
    return plain(value)


def d10_range(entry):
    if entry.get("d10"):
        return str(entry["d10"])
    low, high = entry.get("d10_from"), entry.get("d10_to")
    if low is None:
        return DASH
    return str(low) if high in (None, low) else f"{low}-{high}"


def crew_line(sheet):
    """'12 men, including 1 NCO and 1 Jr NCO', as the card's Total Crew cell reads."""
    leaders = sheet.leaders or {}
    if isinstance(leaders, dict):
        ranks = [f"{count} {rank}" for rank, count in leaders.items() if count]
    elif isinstance(leaders, list):
        ranks = [str(rank) for rank in leaders]
    else:
        ranks = [str(leaders)]
    if not ranks:
        return f"{sheet.crew_total} men"
    listed = ", ".join(ranks[:-1]) + " and " + ranks[-1] if len(ranks) > 1 else ranks[0]
    return f"{sheet.crew_total} men, including {listed}"


def location_rows(locations):
    """The card's location table: one row per location (Walls, Entrance, Vision), one cell per
    facing with its d10 range and armour value, or None where that facing has no such location."""
    locations = locations or {}
    names = []
    for facing, _ in FACINGS:
        for entry in locations.get(facing) or []:
            if entry.get("location") not in names:
                names.append(entry.get("location"))
    # The card's own row order first; anything a designer added keeps the order it was entered in.
    names.sort(key=lambda name: CARD_ROWS.index(name) if name in CARD_ROWS else len(CARD_ROWS))
    rows = []
    for name in names:
        cells = []
        for facing, _ in FACINGS:
            entry = next((e for e in locations.get(facing) or [] if e.get("location") == name), None)
            cells.append(None if entry is None else {"d10": d10_range(entry), "av": armour(entry.get("av"))})
        rows.append({"location": name, "cells": cells})
    return rows


def armour(value):
    """An armour value as text, or None on a blank card (0 AV is a real value: an open slit)."""
    return None if value is None or value == "" else str(value)


def top_av(locations):
    top = (locations or {}).get("top")
    return armour(top.get("av") if isinstance(top, dict) else top)


def weapon_rows(weapons):
    rows = []
    for weapon in weapons or []:
        crew = weapon.get("crew")
        rows.append({
            # "all": the whole crew serves the weapons; None: it shares the crew of the row above.
            "crew": "All crew" if crew == "all" else ("" if crew is None else str(crew)),
            "name": plain(weapon.get("name")),
            "location": plain(weapon.get("location")),
            "range": inches(weapon.get("range")),
            "rof": plain(weapon.get("rof")),
            "ap": plain(weapon.get("ap")),
            "mm": signed(weapon.get("mm")),
            "dm": signed(weapon.get("dm")),
            "special": plain(weapon.get("special")),
        })
    return rows


def sheet_card(sheet):
    """The sheet laid out as the 003 card prints it; the template only places the strings."""
    row = list(sheet.penetration_row or [])
    return {
        "crew": crew_line(sheet),
        "dm": signed(sheet.dm),
        "locations": location_rows(sheet.locations),
        "facings": [label for _, label in FACINGS],
        "top_av": top_av(sheet.locations),
        "weapons": weapon_rows(sheet.weapons),
        "features": [str(f) for f in sheet.features or [] if f not in (None, "", "-")],
        "penetration": [{"d10": d10, "value": plain(v)} for d10, v in zip(PENETRATION_D10, row)],
    }


def weapons_lost(structure):
    """Names of the sheet weapons a fortification has lost; the model stores their indexes."""
    if not structure.sheet_id or not structure.weapons_destroyed:
        return []
    weapons = structure.sheet.weapons or []
    names = []
    for index in structure.weapons_destroyed:
        known = isinstance(index, int) and 0 <= index < len(weapons)
        names.append((weapons[index].get("name") if known else None) or f"weapon #{index}")
    return names


def openings_by_side(floor):
    """[("Front", "1 door, 2 windows"), ...] going round the building: front, right, rear, left."""
    order = list(Side.values)
    groups = {}
    for opening in sorted(floor.openings.all(), key=lambda o: (order.index(o.side) if o.side in order else 9, o.kind)):
        noun = opening.get_kind_display().lower() + ("s" if opening.count > 1 else "")
        groups.setdefault(opening.get_side_display(), []).append(f"{opening.count} {noun}")
    return [(side, ", ".join(items)) for side, items in groups.items()]


@login_required
def structure_detail(request, pk):
    structure = permissions.get_or_404(
        permissions.structures_for(request.user)
        .select_related("wall_material", "roof_material", "sheet", "battle__campaign", "campaign", "scenario")
        .prefetch_related(
            Prefetch("floors", queryset=Floor.objects.select_related("occupant__army").prefetch_related("openings")),
            "connections",
        ),
        pk=pk,
    )
    structure.weapons_lost = weapons_lost(structure)
    for floor in structure.floors.all():
        floor.opening_groups = openings_by_side(floor)
    return render(request, "structures/structure.html", {"structure": structure})


@login_required
def sheet_list(request):
    sheets = list(permissions.sheets_for(request.user).select_related("club").order_by("club__name", "name"))
    return render(request, "structures/sheet_list.html", {
        "library": [s for s in sheets if s.club_id is None],
        "club_sheets": [s for s in sheets if s.club_id is not None],
    })


@login_required
def sheet_detail(request, pk):
    sheet = permissions.get_or_404(permissions.sheets_for(request.user).select_related("club"), pk=pk)
    return render(request, "structures/sheet.html", {"sheet": sheet, "card": sheet_card(sheet)})
