import re
from fractions import Fraction

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import F, Prefetch, Q
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from apps.armies.models import Weapon
from apps.campaigns import permissions
from apps.campaigns.models import Club, Scenario
from apps.rules import tables
from apps.rules.dh import penetration_odds, riflemen, validate_sheet
from apps.structures import blueprints
from apps.structures.formats import (
    MAX_BYTES,
    SHEET_KEYS,
    FormatErrors,
    dumps,
    export_sheet,
    import_sheet,
    parse_document,
    rules_dict,
    sheet_body,
    unique_sheet_name,
    unique_slug,
)
from apps.structures.forms import SheetEditor
from apps.structures.models import BunkerSheet, Floor, Side, Structure
from config.responses import refused

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
    kind, note = sheet.get_kind_display(), sheet.kind_note or ""
    # The seed's fort card reads "Fort, Including Indirect Fire…": a note that repeats the kind is not doubled.
    if note.lower().startswith(kind.lower()):
        note = note[len(kind):].lstrip(" ,")
    return {
        "kind": kind,
        "kind_note": note,
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


def free_riflemen(structure):
    """Men of the crew free to fire their rifles beside the sheet's weapons still standing (DH-21)."""
    weapons = (structure.sheet.weapons or []) if structure.sheet_id else []
    lost = set(structure.weapons_destroyed or [])
    return riflemen(structure.crew_men or 0, [w.get("crew") for i, w in enumerate(weapons) if i not in lost])


def openings_by_side(openings):
    """[("Front", "1 door, 2 windows"), ...] going round the building: front, right, rear, left."""
    order = list(Side.values)
    groups = {}
    for opening in sorted(openings, key=lambda o: (order.index(o.side) if o.side in order else 9, o.kind)):
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
    structure.riflemen = free_riflemen(structure)
    for floor in structure.floors.all():
        floor.opening_groups = openings_by_side(floor.openings.all())
    owner = structure.battle or structure.campaign or structure.scenario
    return render(request, "structures/structure.html", {"structure": structure,
                                                         "ruleset": owner.ruleset if owner is not None else ""})


@login_required
def sheet_list(request):
    sheets = list(permissions.sheets_for(request.user).select_related("club").order_by("club__name", "name"))
    clubs = list(permissions.design_clubs(request.user).order_by("name"))
    return render(request, "structures/sheet_list.html", {
        "library": [s for s in sheets if s.club_id is None],
        "club_sheets": [s for s in sheets if s.club_id is not None],
        "design_clubs": clubs, "newest_sheet": newest_sheet_id(clubs),
    })


@login_required
def sheet_detail(request, pk):
    sheet = permissions.get_or_404(permissions.sheets_for(request.user).select_related("club"), pk=pk)
    return render(request, "structures/sheet.html", {
        "sheet": sheet, "card": sheet_card(sheet), **sheet_actions(request.user, sheet),
    })


# ---------------------------------------------------------------------------------- editor helpers

def sheet_actions(user, sheet):
    """What the sheet page offers this user: edit (its club's designers), clone (into a club they design for)."""
    clubs = list(permissions.design_clubs(user))
    return {"can_edit": permissions.can_edit_sheet(user, sheet), "clone_clubs": clubs,
            "newest_sheet": newest_sheet_id(clubs)}


def editable_sheet(request, pk):
    """The sheet if the user may edit it: other clubs' sheets are not found, library sheets and
    sheets of a club where the user only plays are forbidden."""
    sheet = permissions.get_or_404(permissions.sheets_for(request.user).select_related("club"), pk=pk)
    if not permissions.can_edit_sheet(request.user, sheet):
        raise PermissionDenied("Library sheets are read-only (clone one), and only a club's organisers and "
                               "designers edit its sheets.")
    return sheet


def percent(p):
    value = float(p) * 100
    return f"{value:.0f}%" if abs(value - round(value)) < 0.05 else f"{value:.1f}%"


def odds_cells(odds):
    cells = []
    for facing in ("front", "side", "rear", "top"):
        p = odds.get(facing)
        cells.append(None if p is None else {"percent": percent(p), "fraction": str(Fraction(p))})
    return cells


def full_row(row):
    return isinstance(row, list) and len(row) == 10 and all(isinstance(v, int) and not isinstance(v, bool) for v in row)


def reference_guns():
    """Penetration rows to test a sheet against: the DH catalogue's guns, then the sample sheets' main guns."""
    guns = []
    for weapon in Weapon.objects.filter(ruleset="dh").order_by("name"):
        if full_row(weapon.penetration_row):
            guns.append((f"w{weapon.pk}", f"{weapon.name} (DH catalogue)", weapon.penetration_row))
    for sheet in BunkerSheet.objects.filter(club__isnull=True, is_blank=False).order_by("name"):
        if full_row(sheet.penetration_row):
            guns.append((f"s{sheet.pk}", f"{sheet.penetration_weapon or 'Main gun'} of the {sheet.name}",
                         sheet.penetration_row))
    return guns


def target_sheets():
    return [(f"t{s.pk}", s.name, s) for s in BunkerSheet.objects.filter(club__isnull=True, is_blank=False)
            .order_by("name") if not validate_sheet(rules_dict(sheet_body(s)))]


def weapon_rows_with_penetration(body):
    """(weapon name, its penetration row) for each of the sheet's weapons that has one: the card's
    main-gun row for the weapon it names, otherwise a DH catalogue gun of the same name."""
    catalogue = {w.name.lower(): w.penetration_row for w in Weapon.objects.filter(ruleset="dh")
                 if full_row(w.penetration_row)}
    main, row = body["penetration_weapon"].strip().lower(), body["penetration_row"]
    found = []
    for weapon in body["weapons"]:
        name = weapon["name"]
        lowered = name.lower().strip("() ")
        if main and full_row(row) and (lowered.startswith(main) or main.startswith(lowered)):
            found.append((name, row))
        elif lowered in catalogue:
            found.append((name, catalogue[lowered]))
    return found


def crew_lines(body):
    crews = [w["crew"] for w in body["weapons"]]
    men = body["crew_total"]
    free = riflemen(men, crews)
    needed = [c for c in crews if c is not None]
    if "all" in needed:
        return free, "The whole crew serves the weapons: nobody is free to fire rifles."
    total = sum(c for c in needed if isinstance(c, int))
    if men < total:
        return 0, f"Undermanned: the weapons need {total} men and the crew has {men}, so nobody fires rifles."
    return free, (f"{men} men, {total} on the weapons: {men - total} left over, halved and rounded down = "
                  f"{free} free to fire rifles.")


def preview_context(editor, data):
    """The live card and its computed lines for the sheet as typed so far."""
    body = editor.body
    card_sheet = BunkerSheet(club=editor.sheet.club, **{k: body[k] for k in SHEET_KEYS})
    ready = not [p for p, _ in validate_sheet(rules_dict(body)) if p.startswith("locations")]
    guns = reference_guns()
    chosen = (data or {}).get("reference") or (guns[0][0] if guns else "")
    reference = next((g for g in guns if g[0] == chosen), guns[0] if guns else None)
    targets = target_sheets()
    chosen_target = (data or {}).get("target") or (targets[0][0] if targets else "")
    target = next((t for t in targets if t[0] == chosen_target), targets[0] if targets else None)
    free, crew_text = crew_lines(body)
    context = {
        "card_sheet": card_sheet, "card": sheet_card(card_sheet), "ready": ready, "riflemen": free,
        "crew_text": crew_text, "guns": guns, "reference": reference, "targets": targets, "target": target,
        "incomplete": validate_sheet(rules_dict(body)) if editor.valid else [],
    }
    if ready and reference is not None:
        context["reference_odds"] = odds_cells(penetration_odds(rules_dict(body), reference[2]))
    if target is not None:
        target_dict = rules_dict(sheet_body(target[2]))
        context["weapon_odds"] = [{"name": name, "cells": odds_cells(penetration_odds(target_dict, row))}
                                  for name, row in weapon_rows_with_penetration(body)]
    return context


def differences(mine, theirs):
    labels = {"name": "Name", "kind": "Bunker or Fort", "kind_note": "Note beside the kind", "dm": "DM",
              "crew_total": "Total crew", "leaders": "NCO ranks", "locations": "Location table",
              "weapons": "Weapons", "features": "Features", "penetration_weapon": "Main gun",
              "penetration_row": "Penetration row", "note": "Note"}
    return [label for key, label in labels.items() if mine.get(key) != theirs.get(key)]


ROW_PREFIXES = {"leaders", "front", "side", "rear", "weapons"}


def render_editor(request, sheet, editor, status=200, **extra):
    context = {"sheet": sheet, "editor": editor, **preview_context(editor, request.POST if editor.bound else None),
               "in_play": in_play(sheet), **extra}
    return render(request, "structures/sheet_edit.html", context, status=status)


def in_play(sheet):
    """Names of the campaigns and battles whose bunkers are this card. They hold the sheet itself, not a
    copy: saving it changes their armour, weapons and penetration there too, mid-campaign."""
    used = Structure.objects.filter(sheet=sheet).filter(Q(campaign__isnull=False) | Q(battle__isnull=False))
    campaigns = sorted(set(used.filter(campaign__isnull=False).values_list("campaign__name", flat=True)) |
                       set(used.filter(battle__campaign__isnull=False).values_list("battle__campaign__name", flat=True)))
    battles = sorted(set(used.filter(battle__campaign__isnull=True, battle__isnull=False)
                         .values_list("battle__name", flat=True)))
    return [f"the campaign {name}" for name in campaigns] + [f"the battle {name}" for name in battles]


def fewer_men(sheet, crew_total):
    """A crew cut below what a scenario manned its bunkers with: those bunkers get the sheet's whole crew,
    or the builder would start battles with more men than the card and the scenario's own file would not
    import back. Scenarios only: a campaign or battle keeps the crew it was played with. Each scenario is
    locked as a builder change locks it. The names of the scenarios changed."""
    over = Structure.objects.filter(sheet=sheet, scenario__isnull=False, crew_men__gt=crew_total)
    scenarios = list(Scenario.objects.select_for_update().filter(pk__in=over.values("scenario_id"))
                     .order_by("pk").values_list("name", flat=True))
    if scenarios and over.update(crew_men=crew_total):
        return [f"the scenario {name}" for name in sorted(scenarios)]
    return []


def changes_play(request, sheet, editor):
    """A save that would change a card in play without the designer having said so: refused, told next to
    the box that says so (a clone changes only what it is placed in)."""
    used = in_play(sheet)
    if not used or editor.main.cleaned_data.get("in_play_too") or not differences(editor.body, sheet_body(sheet)):
        return False
    editor.main.add_error("in_play_too", f"{sheet.name} is in play in {', '.join(used)}: saving changes its "
                                         "bunkers there too. Tick this to do so, or clone the sheet and change the "
                                         "clone for new scenarios.")
    editor.valid = False
    return True


def weapon_places(sheet):
    """Where the sheet's weapons are counted by their place on the card: the campaigns and battles that hold
    it (their bunkers' lost weapons, and their logs' weapon_destroyed entries and undo records, name a
    weapon by its index), and the scenarios whose bunkers start with weapons lost."""
    lost = (Structure.objects.filter(sheet=sheet, scenario__isnull=False).exclude(weapons_destroyed=[])
            .values_list("scenario__name", flat=True))
    return in_play(sheet) + [f"the scenario {name}" for name in sorted(set(lost))]


def moves_weapons(sheet, editor):
    """A change that removes or moves a weapon of a card whose weapons are counted by place: refused next to
    the weapons, whether or not the in-play box is ticked. Removing the second of three weapons made a
    campaign's lost third weapon reappear and its second count as lost; the only honest ways are a
    change in place (numbers, a name) or a weapon added at the end, or a clone."""
    old = [w for w in sheet.weapons or [] if isinstance(w, dict)]
    if not editor.bound or not old:
        return False
    forms_ = editor.weapons.forms
    names = [(w.get("name") or "").strip().lower() for w in old]
    removed, moved = [], []
    for i, name in enumerate(names):
        data = (getattr(forms_[i], "cleaned_data", None) or {}) if i < len(forms_) else {}
        typed = (data.get("name") or "").strip()
        label = f"{old[i].get('name') or 'weapon'} (weapon {i + 1})"
        if i < len(forms_) and "name" in forms_[i].errors:
            continue  # told what is wrong with its name already
        if i >= len(forms_) or data.get("DELETE") or not typed:
            removed.append(label)
        elif typed.lower() != name and typed.lower() in names:
            moved.append(f"{typed} into weapon {i + 1}'s place")
    if not removed and not moved:
        return False
    where = weapon_places(sheet)
    if not where:
        return False
    what = "; ".join(([f"removes {', '.join(removed)}"] if removed else []) +
                     ([f"moves {', '.join(moved)}"] if moved else []))
    one = len(where) == 1
    editor.weapons.slot_errors.append(
        f"This save {what}, but {', '.join(where)} {'holds' if one else 'hold'} {sheet.name} and "
        f"count{'s' if one else ''} its bunkers' lost weapons by their place on the card: the wrong weapon would "
        "count as lost there. Change a weapon's numbers in its own row or add one at the end, or clone the "
        "sheet and change the clone.")
    editor.valid = False
    return True


# ---------------------------------------------------------------------------------- editor views

@login_required
def sheet_edit(request, pk):
    sheet = editable_sheet(request, pk)
    if request.method != "POST":
        editor = SheetEditor(sheet)
        editor.check()
        return render_editor(request, sheet, editor)

    add = request.POST.get("add")
    editor = SheetEditor(sheet, request.POST, extra_rows=add if add in ROW_PREFIXES else None)
    editor.check()
    if add:
        return render_editor(request, sheet, editor)
    moves_weapons(sheet, editor)
    if not editor.valid or changes_play(request, sheet, editor):
        return render_editor(request, sheet, editor, status=400)
    seen = editor.main.cleaned_data["version"]
    with transaction.atomic():
        saved = BunkerSheet.objects.filter(pk=sheet.pk, version=seen).update(
            **editor.saved_fields(), version=F("version") + 1, updated_at=timezone.now()
        )
        manned = fewer_men(sheet, editor.body["crew_total"]) if saved else []
        if saved and editor.body["name"] != sheet.name:
            slug_for_name(sheet, editor.body["name"])
    if saved:
        messages.success(request, f"Saved {editor.body['name']} (version {seen + 1}).")
        if manned:
            messages.info(request, f"Its bunkers in {', '.join(manned)} had more men than its crew of "
                                   f"{editor.body['crew_total']}: they now have {editor.body['crew_total']}.")
        return redirect("sheet_edit", pk=sheet.pk)

    # Someone saved since this form was opened: show both, save nothing. The form now carries the
    # new version, so saving again (having seen theirs) is a deliberate overwrite.
    current = BunkerSheet.objects.select_related("club").get(pk=sheet.pk)
    if not differences(editor.body, sheet_body(current)):
        # What was saved is what this form holds: the same form sent twice (a double tap), not a conflict.
        messages.success(request, f"Saved {editor.body['name']} (version {current.version}).")
        return redirect("sheet_edit", pk=sheet.pk)
    data = request.POST.copy()
    data["version"] = str(current.version)
    editor = SheetEditor(current, data)
    editor.check()
    theirs = sheet_body(current)
    return render_editor(request, current, editor, status=409, conflict={
        "seen": seen, "current": current.version, "card": sheet_card(current),
        "differences": differences(editor.body, theirs),
    })


@login_required
@require_POST
def sheet_preview(request, pk):
    sheet = editable_sheet(request, pk)
    editor = SheetEditor(sheet, request.POST)
    editor.check()
    moves_weapons(sheet, editor)  # else the preview would clear the refusal while the row is still removed
    context = {"sheet": sheet, "editor": editor, **preview_context(editor, request.POST)}
    return render(request, "structures/sheet_edit.html#preview-response", context)


# What "New sheet" names a sheet until it is given a name (clone_slug, then unique_slug's -2, -3…).
PLACEHOLDER_SLUG = re.compile(r"new-bunker(-\d+)?")


def slug_for_name(sheet, name):
    """A sheet "New sheet" made takes a slug from the name it is first given: `new-bunker-3` told nothing
    in its exported file or in an import's message. Not once anything stands on it: the files of the
    scenarios and campaigns that place it name it by its slug, and importing one of them back finds the
    club's own sheet by that slug (a new slug would make a second copy of the card)."""
    base = slugify(name)[:80]
    if (not base or PLACEHOLDER_SLUG.fullmatch(base) or not PLACEHOLDER_SLUG.fullmatch(sheet.slug)
            or Structure.objects.filter(sheet=sheet).exists()):
        return
    Club.lock(sheet.club_id)
    BunkerSheet.objects.filter(pk=sheet.pk).update(slug=unique_slug(sheet.club, base))


def clone_target(request):
    clubs = list(permissions.design_clubs(request.user))
    if not clubs:
        raise PermissionDenied("Only organisers and designers can make sheets for their club.")
    wanted = request.POST.get("club")
    if wanted in (None, "") and len(clubs) == 1:
        return clubs[0]
    club = next((c for c in clubs if str(c.pk) == str(wanted)), None)
    if club is None:
        raise PermissionDenied("Choose one of the clubs you design for.")
    return club


def clone_slug(fields):
    base = fields.get("slug", "") or "new-bunker"
    return "new-bunker" if base == "blank" else base


def clone_into(source_fields, club):
    """A new sheet of `club`, its slug picked and saved under the club's lock."""
    fields = {k: v for k, v in source_fields.items() if k in SHEET_KEYS}
    base = clone_slug(fields)
    fields.pop("slug", None)
    fields["is_blank"] = False
    with transaction.atomic():
        Club.lock(club.pk)
        # A name of its own, as an import gets: the builder lists the club's sheets by name.
        fields["name"] = unique_sheet_name(club, fields.get("name") or "New bunker")
        return BunkerSheet.objects.create(club=club, slug=unique_slug(club, base), **fields)


def newest_sheet_id(clubs):
    return BunkerSheet.objects.filter(club__in=clubs).order_by("-pk").values_list("pk", flat=True).first() or 0


class CloneForm(forms.Form):
    # The newest sheet of the user's design clubs when the page was drawn (newest_sheet_id): a second
    # send of the same New sheet or Clone form (a double tap) finds the sheet the first made and goes
    # to it instead of making another. Absent from a page drawn before the forms carried it.
    after = forms.IntegerField(required=False, min_value=0)


def made_meanwhile(club, after, slug):
    """A sheet of `club` made since the page was drawn as this form would make it (`slug`, or `slug-2`…)."""
    if after is None:
        return None
    same = re.compile(rf"{re.escape(slug)}|{re.escape(slug[:75])}-\d+")
    return next((s for s in club.bunker_sheets.filter(pk__gt=after).order_by("pk") if same.fullmatch(s.slug)), None)


def clone_once(request, fields, made, back):
    """`fields` cloned into the club the form chose, and on to the editor saying `made`; the same form's
    second send (a double tap, at once or one after the other) goes to the sheet its first made."""
    club = clone_target(request)
    form = CloneForm(request.POST)
    if not form.is_valid():  # only a hand-made request: the page writes a number
        return refused(request, "This form was not sent as its page drew it: reload the page and try again.",
                       status=400, title="Nothing made", back=back)
    with transaction.atomic():
        Club.lock(club.pk)  # before looking: the two sends of a double tap at once take turns
        first = made_meanwhile(club, form.cleaned_data["after"], clone_slug(fields))
        sheet = first or clone_into(fields, club)
    if first is None:
        messages.success(request, made.format(sheet=sheet, club=club))
    else:
        messages.info(request, f"{sheet.name} is already made (the form was sent twice): here it is.")
    return redirect("sheet_edit", pk=sheet.pk)


@login_required
@require_POST
def sheet_clone(request, pk):
    source = permissions.get_or_404(permissions.sheets_for(request.user), pk=pk)
    return clone_once(request, sheet_body(source), "{sheet.name} is now {club.name}'s own sheet: edit it here.",
                      back=reverse("sheet", args=[source.pk]))


@login_required
@require_POST
def sheet_new(request):
    """A new club sheet from the blank card of the library (or of the seed, when the library has none)."""
    blank = BunkerSheet.objects.filter(club__isnull=True, is_blank=True).order_by("pk").first()
    fields = sheet_body(blank) if blank else {**tables.DH_BLANK_SHEET}
    return clone_once(request, {**fields, "slug": "new-bunker", "name": ""},
                      "A new sheet from the blank card: fill it in, the card on the right follows.",
                      back=reverse("sheet_list"))


@login_required
@require_POST
def sheet_delete(request, pk):
    """A club sheet nothing stands on: drafts and clones a designer no longer wants. One a scenario,
    campaign or battle places is refused, naming where (those hold the sheet itself, not a copy)."""
    sheet = editable_sheet(request, pk)
    with transaction.atomic():
        # The builder places a sheet with its row locked (`structure_add`): a placement under way
        # finishes first and is seen here, instead of the delete failing on it with a server error.
        list(BunkerSheet.objects.select_for_update().filter(pk=sheet.pk).values_list("pk"))
        used = Structure.objects.filter(sheet=sheet)
        where = sorted(set(used.filter(scenario__isnull=False).values_list("scenario__name", flat=True)))
        where = [f"the scenario {name}" for name in where] + in_play(sheet)
        if where:
            return refused(request, f"{sheet.name or 'This sheet'} is placed in {', '.join(where)}: it stays until "
                                    "nothing stands on it (remove it from those scenarios, or clone it and change "
                                    "the clone).", status=409, title="Not deleted", back=reverse("sheet", args=[sheet.pk]))
        sheet.delete()
    messages.success(request, f"Deleted {sheet.name or 'the sheet'}.")
    return redirect("sheet_list")


@login_required
def sheet_export(request, pk):
    sheet = permissions.get_or_404(permissions.sheets_for(request.user), pk=pk)
    # Named as the sheet is now: a renamed clone keeps the slug it was cloned with.
    return json_download(dumps(export_sheet(sheet)), f"{slugify(sheet.name) or sheet.slug}.redoubt-sheet.json")


def download_name(name, kind, pk):
    """A club keeps several campaigns' and scenarios' files side by side: named after what they hold,
    with the number to tell two of one name apart."""
    return f"{slugify(name) or kind}-{pk}.redoubt-{kind}.json"


def json_download(text, filename):
    response = HttpResponse(text, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
def sheet_print(request, pk):
    sheet = permissions.get_or_404(permissions.sheets_for(request.user).select_related("club"), pk=pk)
    return render(request, "structures/sheet_print.html", {
        "sheets": print_cards([sheet]), "title": sheet.name or "blank sheet", "back": reverse("sheet", args=[sheet.pk]),
    })


def print_cards(sheets):
    return [(sheet, sheet_card(sheet), f"sheet-{sheet.pk}" if len(sheets) > 1 else "sheet") for sheet in sheets]


# ---------------------------------------------------------------------------------- import

class ImportForm(forms.Form):
    club = forms.TypedChoiceField(coerce=int)
    file = forms.FileField(required=False, help_text=f"A .json file of at most {MAX_BYTES // 1000:,} kB")
    text = forms.CharField(required=False, label="…or paste the JSON", widget=forms.Textarea(attrs={"rows": 8}))

    def __init__(self, *args, clubs, **kwargs):
        super().__init__(*args, **kwargs)
        self.clubs = {club.pk: club for club in clubs}
        self.fields["club"].choices = [(club.pk, club.name) for club in clubs]
        # The JSON parser reports a stray NUL with its line and column; the form need not refuse it first.
        self.fields["text"].validators = []

    def clean(self):
        data = super().clean()
        upload, text = data.get("file"), (data.get("text") or "")
        if upload and text.strip():
            raise forms.ValidationError("Upload a file or paste the text, not both.")
        if not upload and not text.strip() and "file" not in self.errors:
            raise forms.ValidationError("Choose a file or paste the JSON.")
        return data

    def chosen_club(self):
        return self.clubs[self.cleaned_data["club"]]

    def document(self):
        """The parsed document; FormatErrors when it is too big (checked before reading) or not JSON."""
        upload = self.cleaned_data.get("file")
        if upload:
            if upload.size > MAX_BYTES:
                raise FormatErrors([("document", f"is {upload.size:,} bytes; files above {MAX_BYTES:,} bytes are refused")])
            return parse_document(upload.read())
        return parse_document(self.cleaned_data["text"])


def run_import(request, template, importer, done, *, clubs=None, form_class=ImportForm, extra=None):
    """The import page shared by sheets, scenarios and campaigns: a bad file lists every error with
    its path and nothing is saved. `clubs` are those the user may import into (by default the ones
    they design for)."""
    if clubs is None:
        clubs = list(permissions.design_clubs(request.user).order_by("name"))
        if not clubs:
            raise PermissionDenied("Only organisers and designers import into their club.")
    form = form_class(request.POST or None, request.FILES or None, clubs=clubs)
    errors, problems = [], 0
    if request.method == "POST" and form.is_valid():
        try:
            obj = importer(form.document(), club=form.chosen_club(), user=request.user)
        except FormatErrors as exc:
            errors, problems = exc.errors, exc.total  # the first MAX_ERRORS of them listed
        else:
            return done(obj)
    status = 400 if request.method == "POST" else 200
    return render(request, template, {"form": form, "errors": errors, "problems": problems, **(extra or {})},
                  status=status)


@login_required
def sheet_import(request):
    def done(sheet):
        messages.success(request, f"Imported {sheet.name or 'the sheet'} into {sheet.club.name} as “{sheet.slug}”.")
        return redirect("sheet", pk=sheet.pk)

    return run_import(request, "structures/sheet_import.html", import_sheet, done)


# ---------------------------------------------------------------------------------- reference

@login_required
def reference(request):
    """The armour classes of seed 000 and the structure templates with their damage points."""
    walls = sorted(tables.MATERIAL_ARMOR_CLASS.items(), key=lambda kv: (kv[1], kv[0]))
    roofs = sorted(tables.ROOF_ARMOR_CLASS.items(), key=lambda kv: (kv[1], kv[0]))
    name = tables.MATERIAL_NAMES.get
    return render(request, "structures/reference.html", {
        "walls": [(name(k, k), ac, k in tables.FLAMMABLE_MATERIALS) for k, ac in walls],
        "roofs": [(name(k, k), ac, k in tables.FLAMMABLE_MATERIALS) for k, ac in roofs],
        "blueprints": [(b, name(b.wall, b.wall), name(b.roof, b.roof) if b.roof else "") for b in blueprints.BLUEPRINTS],
    })
