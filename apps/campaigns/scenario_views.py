"""The scenario builder: a scenario's settings, its ground on an SVG map (drag, or type coordinates
on a phone), structures with floors, openings and connected sections, deployment zones, the two
forces, JSON import/export, printing its sheets, and starting a battle from it.

Every club member may look at a scenario; its organisers and designers change it; only organisers
start a battle. Other clubs' scenarios are not found.
"""

import re
from copy import deepcopy
from decimal import Decimal
from functools import wraps

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import F, Prefetch
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from apps.armies.models import Unit, UnitWeapon
from apps.battles.log import append_entry
from apps.battles.models import Battle, BattleStatus
from apps.campaigns import permissions
from apps.campaigns import services as campaign_services
from apps.campaigns.copying import copy_battlefield, copy_floors
from apps.campaigns.formats import export_scenario, import_scenario
from apps.campaigns.formats import free_name as free_scenario_name
from apps.campaigns.models import Club, Scenario
from apps.campaigns.scenario_forms import (AddStructureForm, ArmyForm, CopyScenarioForm, MoveForm, NewScenarioForm,
                                           OpeningFormSet, ScenarioForm, SectionForm, StartBattleForm, StartCampaignForm,
                                           StructureForm, UnitForm, UnitWeaponFormSet, ZoneFormSet, half_extents)
from apps.campaigns.session_views import htmx_redirect
from apps.rules import ActionRefused
from apps.rules.dh import validate_sheet
from apps.structures import blueprints
from apps.structures.formats import dumps, first_free, number, rules_dict, sheet_body
from apps.structures.models import BunkerSheet, Floor, Material, Opening, Structure, has_crews, mark_crews
from apps.structures.views import download_name, json_download, print_cards, run_import
from config.responses import refused, see_other

RULES_FIELDS = ["ruleset", "damage_variant", "collapse_check", "fires", "uncontrolled_events", "fireteam_initiative",
                "weather", "options"]
BA_SECTION_MAX = Decimal(8)  # Bolt Action: large buildings are sections of at most 8" x 8"


# ---------------------------------------------------------------------------------- access

def visible_scenario(request, pk):
    return permissions.get_or_404(permissions.scenarios_for(request.user).select_related("club", "author"), pk=pk)


def editable_scenario(request, pk):
    scenario = visible_scenario(request, pk)
    if not permissions.can_edit_scenario(request.user, scenario):
        raise PermissionDenied("Only the club's organisers and designers change its scenarios.")
    return scenario


def scenario_structure(scenario, sid):
    return permissions.get_or_404(scenario.structures.select_related("wall_material", "roof_material", "sheet"), pk=sid)


def scenario_unit(scenario, uid):
    return permissions.get_or_404(Unit.objects.filter(army__scenario=scenario).select_related("army"), pk=uid)


def one_writer(view):
    """A change to a scenario runs with the scenario's row locked, from before its form is checked until
    it is saved: two tabs (or two designers, or a double tap) changing the same scenario take turns, and
    the second is checked against what the first saved (a side now taken, a floor now occupied, a
    structure now removed) instead of failing on a constraint with a server error. A battle started
    from it copies it whole, never half of someone's change."""
    @wraps(view)
    def locked(request, pk, *args, **kwargs):
        if request.method != "POST":
            return view(request, pk, *args, **kwargs)
        with transaction.atomic():
            # Before the permission check, by key only: a scenario the user may not see is still not
            # found by the view.
            list(Scenario.objects.select_for_update().filter(pk=pk).values_list("pk"))
            return view(request, pk, *args, **kwargs)
    return locked


def back_to(scenario, anchor=""):
    return redirect(reverse("scenario", args=[scenario.pk]) + (f"#{anchor}" if anchor else ""))


# ---------------------------------------------------------------------------------- list, new

@login_required
def scenario_list(request):
    scenarios = permissions.scenarios_for(request.user).select_related("club", "author").order_by("club__name", "name")
    return render(request, "scenarios/list.html", {
        "scenarios": scenarios, "design_clubs": list(permissions.design_clubs(request.user).order_by("name")),
    })


@login_required
def scenario_new(request):
    clubs = permissions.design_clubs(request.user).order_by("name")
    if not clubs.exists():
        raise PermissionDenied("Only organisers and designers create scenarios.")
    form = NewScenarioForm(request.POST or None, clubs=clubs)
    if request.method == "POST":
        with transaction.atomic():
            lock_chosen_club(request.user, request.POST.get("club"))
            valid = form.is_valid()
            if valid and form.created is None:
                scenario = form.save(commit=False)
                scenario.club = form.cleaned_data["club"]
                scenario.author = request.user
                scenario.deployment_zones = default_zones(scenario)
                scenario.save()
                messages.success(request, f"Scenario {scenario.name} created: add its structures and forces.")
                return back_to(scenario)
        if valid:  # form.created: this form's first send (a double tap), found under the club's lock
            messages.info(request, f"{form.created.name} is already created (the form was sent twice): here it is.")
            return back_to(form.created)
    return render(request, "scenarios/new.html", {"form": form}, status=400 if request.method == "POST" else 200)


def lock_chosen_club(user, pk):
    """Club.lock for the club a form names, before the form is checked: the name is then checked against
    what another tab saved meanwhile, instead of two tabs passing the check together and the second
    failing on the club's unique name. Only a club the user designs for, which the form lets them choose:
    any club's id was locked, and FOR UPDATE holds back every row written that refers to the club (a
    battle, a membership), so anyone with a club of their own could stall another's by naming its id."""
    if str(pk).isdecimal() and permissions.can_design(user, int(pk)):
        list(Club.objects.select_for_update().filter(pk=pk).values_list("pk"))


def default_zones(scenario):
    """A 12" strip along the top (side A) and bottom (side B) edges, or a quarter of a small table."""
    w, d = Decimal(scenario.table_width), Decimal(scenario.table_depth)
    strip = min(Decimal(12), d / 4)
    return [{"side": "A", "x": 0, "y": 0, "width": number(w), "depth": number(strip)},
            {"side": "B", "x": 0, "y": number(d - strip), "width": number(w), "depth": number(strip)}]


# ---------------------------------------------------------------------------------- the builder page

LABEL_CHARS, LABEL_SIZE = 24, 1.1  # a name on the builder's map: characters at most, height in inches (designer.css)


def drop_overprinted_labels(pieces):
    """As on the battle map: a name that would print over one already placed (the larger structures
    first) is left out; the piece still names itself to a screen reader and in the list below."""
    placed = []
    for p in sorted(pieces, key=lambda p: -(p["w"] * p["d"])):
        half, y = len(p["label"]) * LABEL_SIZE * 0.3, p["y"] + p["label_y"]
        box = (p["x"] - half, y - LABEL_SIZE / 2, p["x"] + half, y + LABEL_SIZE / 2)
        if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in placed):
            p["label"] = ""
        else:
            placed.append(box)


def map_pieces(scenario, structures, armies):
    """Floats for the SVG: the map draws in inches, one user unit per inch."""
    pieces = []
    for s in structures:
        w, d = float(s.width), float(s.depth)
        pieces.append({
            "structure": s, "x": float(s.x), "y": float(s.y), "w": w, "d": d, "hw": -w / 2, "hd": -d / 2,
            "rotation": float(s.rotation), "facing": float(s.facing), "arrow": d / 2 + 1.2, "tip": d / 2 + 2.2,
            "label_y": max(w, d) / 2 + 1.1, "label": s.name if len(s.name) <= LABEL_CHARS else
            s.name[:LABEL_CHARS - 1] + "…",
        })
    drop_overprinted_labels(pieces)
    units = []
    for army in armies:
        for unit in army.units.all():
            if unit.x is not None:
                units.append({"unit": unit, "side": army.side, "x": float(unit.x), "y": float(unit.y),
                              "initials": "".join(part[0] for part in unit.name.split()[:2]).upper()})
    zones = []
    for zone in scenario.deployment_zones or []:
        try:
            zones.append({"side": zone["side"], **{k: float(zone[k]) for k in ("x", "y", "width", "depth")}})
        except (KeyError, TypeError, ValueError):
            continue
    w, d = float(scenario.table_width), float(scenario.table_depth)
    return {"pieces": pieces, "units_on_table": units, "zones": zones, "table": {
        "w": w, "d": d, "view": f"-2 -2 {w + 4:g} {d + 4:g}",
        "grid_x": [x for x in range(6, int(w), 6)], "grid_y": [y for y in range(6, int(d), 6)]}}


def builder_context(request, scenario, **overrides):
    user = request.user
    can_edit = permissions.can_edit_scenario(user, scenario)
    structures = mark_crews(list(
        scenario.structures.select_related("wall_material", "roof_material", "sheet")
        .prefetch_related(Prefetch("floors", queryset=Floor.objects.select_related("occupant")), "connections")
        .order_by("name", "pk")
    ), scenario.ruleset)
    armies = list(scenario.armies.select_related("owner").prefetch_related(
        Prefetch("units", queryset=Unit.objects.select_related("floor__structure").prefetch_related("unit_weapons__weapon"))
    ).order_by("side"))
    for army in armies:
        for unit in army.units.all():
            unit.foreign_weapons = [uw.weapon.name for uw in unit.unit_weapons.all()
                                    if uw.weapon.ruleset != scenario.ruleset]
    for s in structures:
        s.move_form = overrides.get("move_forms", {}).get(s.pk) or MoveForm(
            scenario=scenario, prefix=f"s{s.pk}", structure=s, initial={"x": number(s.x), "y": number(s.y)})
        s.oversized = (scenario.ruleset == "ba" and s.kind == "building"
                       and (s.width > BA_SECTION_MAX or s.depth > BA_SECTION_MAX))
        s.floor_count = len(s.floors.all())
        # Added, switched to Disposable Heroes or imported with the sheet's crew, before anyone said whose.
        s.crew_of_nobody = s.crewed and s.crew_men and not s.crew_side
        # A club's sheet still being drawn up may be placed, but the rules refuse every attack on its bunker
        # (apps.rules.dh): said only at the table, mid-game, had nobody there been able to fill it in.
        s.sheet_problems = validate_sheet(rules_dict(sheet_body(s.sheet))) if s.crewed else []
    sides = {a.side for a in armies}
    zones = overrides.get("zone_formset") or ZoneFormSet(prefix="zones", scenario=scenario, initial=[
        {k: z.get(k) for k in ("side", "x", "y", "width", "depth")} for z in scenario.deployment_zones or []
        if isinstance(z, dict)])
    context = {
        "scenario": scenario, "can_edit": can_edit, "can_start": permissions.is_organiser(user, scenario.club_id),
        "structures": structures, "armies": armies,
        "settings_form": overrides.get("settings_form") or ScenarioForm(instance=scenario),
        "add_form": overrides.get("add_form") or AddStructureForm(scenario=scenario),
        "zone_formset": zones,
        "army_forms": overrides.get("army_forms") or [
            ArmyForm(instance=a, scenario=scenario, prefix=f"army{a.pk}") for a in armies],
        # A refused new force keeps its form and error even when its side was taken meanwhile.
        "new_army_form": overrides.get("new_army_form") or (
            ArmyForm(scenario=scenario, prefix="newarmy") if len(sides) < 2 else None),
        "start_form": overrides.get("start_form") or StartBattleForm(initial={
            "name": campaign_services.with_suffix(scenario.name, f" — {timezone.localdate():%d %b %Y}"),
            "after": newest_battle_id(scenario)}),
        "campaign_form": overrides.get("campaign_form") or StartCampaignForm(
            club=scenario.club, prefix="campaign",
            initial={"name": campaign_services.with_suffix(scenario.name, " campaign")}),
        "copy_form": CopyScenarioForm(scenario=scenario) if can_edit else None,
        "newest_structure": max((s.pk for s in structures), default=0),  # the "+ Section" forms' `after`
        "sheets_used": sorted({s.sheet for s in structures if s.sheet_id}, key=lambda sh: sh.name),
        "blueprints": blueprints.BLUEPRINTS,
        "map_problem": overrides.get("map_problem", ""),
        **map_pieces(scenario, structures, armies),
    }
    return context


@login_required
def scenario_detail(request, pk):
    scenario = visible_scenario(request, pk)
    return render(request, "scenarios/builder.html", builder_context(request, scenario))


def builder_with_errors(request, scenario, status=400, **overrides):
    """Bad input (400), or a save refused because it would put back what someone else changed meanwhile
    (409): the form says what."""
    messages.error(request, "Nothing was changed: fix what is marked below." if status == 400 else
                            "Nothing was changed: someone else changed it meanwhile, as said below.")
    return render(request, "scenarios/builder.html", builder_context(request, scenario, **overrides), status=status)


@login_required
@require_POST
@one_writer
def scenario_settings(request, pk):
    scenario = editable_scenario(request, pk)
    ruleset = scenario.ruleset  # before the form's validation writes the new one onto the instance
    form = ScenarioForm(request.POST, instance=scenario)
    if not form.is_valid():
        return builder_with_errors(request, scenario, settings_form=form)
    seen = form.cleaned_data.get("version")
    # A ruleset's own options are not on another ruleset's form: those keep what they were.
    fields = {name: form.cleaned_data[name] for name in form.Meta.fields if name in form.fields}
    if form.zones != (scenario.deployment_zones or []):  # the zones along the table's edges follow it
        fields["deployment_zones"] = form.zones
    with transaction.atomic():
        query = Scenario.objects.filter(pk=scenario.pk)
        if seen is not None:
            query = query.filter(version=seen)
        saved = query.update(**fields, version=F("version") + 1, updated_at=timezone.now())
        if saved and fields.get("ruleset") != ruleset and has_crews(fields.get("ruleset")):
            # Its bunkers placed under another ruleset have no crew: they get the sheet's, as if added now.
            scenario.structures.man_sheets()
    current = None if saved else Scenario.objects.get(pk=scenario.pk)
    # A newer version holding exactly these settings is this same form sent twice (a double tap): saved.
    if current is not None and any(getattr(current, name) != value for name, value in fields.items()):
        messages.error(request, f"Someone else changed this scenario's settings meanwhile (now version "
                                f"{current.version}); yours were not saved. Their settings are shown: "
                                "change them again if needed.")
        return back_to(scenario, "settings")
    messages.success(request, "Settings saved.")
    return back_to(scenario, "settings")


# ---------------------------------------------------------------------------------- structures

def free_name(scenario, name):
    return first_free(name, set(scenario.structures.values_list("name", flat=True)), lambda n: f"{name} {n}")


def free_spot(scenario, width, depth):
    """The first point near the table's centre where the new footprint overlaps nothing."""
    tw, td = Decimal(scenario.table_width), Decimal(scenario.table_depth)
    boxes = [(s.x - s.width / 2, s.y - s.depth / 2, s.x + s.width / 2, s.y + s.depth / 2)
             for s in scenario.structures.all()]
    cx, cy = (tw / 2).quantize(Decimal("0.5")), (td / 2).quantize(Decimal("0.5"))
    step = max(Decimal(width), Decimal(depth)) + 1
    for ring in range(0, 8):
        for dx in range(-ring, ring + 1):
            for dy in range(-ring, ring + 1):
                if max(abs(dx), abs(dy)) != ring:
                    continue
                x, y = cx + dx * step, cy + dy * step
                box = (x - width / 2, y - depth / 2, x + width / 2, y + depth / 2)
                if box[0] < 0 or box[1] < 0 or box[2] > tw or box[3] > td:
                    continue
                if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in boxes):
                    return x, y
    return cx, cy


def added_meanwhile(structures, after, name, kind):
    """One of `structures` added since the page was drawn as this form would add it (`name`, or `name 2`…)."""
    if after is None:
        return None
    same = re.compile(re.escape(name) + r"( \d+)?")
    return next((s for s in structures.filter(pk__gt=after, kind=kind).order_by("pk") if same.fullmatch(s.name)),
                None)


def build_floors(structure, floors):
    for level, spec in enumerate(floors):
        floor = Floor.objects.create(structure=structure, level=level, is_roof=spec == "roof")
        if spec != "roof":
            Opening.objects.bulk_create([Opening(floor=floor, side=side, kind=kind, count=count)
                                         for side, kinds in spec.items() for kind, count in kinds.items()])


@login_required
@require_POST
@one_writer
def structure_add(request, pk):
    scenario = editable_scenario(request, pk)
    form = AddStructureForm(request.POST, scenario=scenario)
    if not form.is_valid():
        return builder_with_errors(request, scenario, add_form=form)
    blueprint = blueprints.BY_KEY[form.cleaned_data["blueprint"]]
    sheet = form.cleaned_data.get("sheet")
    # Held until the bunker is saved, so a designer deleting the sheet meanwhile waits and then sees it
    # placed (`sheet_delete`); a sheet deleted a moment before is gone from here too.
    if sheet is not None and not BunkerSheet.objects.select_for_update(no_key=True).filter(pk=sheet.pk).values("pk"):
        form.add_error("sheet", f"{sheet.name} was deleted a moment ago: choose another sheet")
        return builder_with_errors(request, scenario, add_form=form)
    wall = Material.objects.filter(surface="wall", slug=blueprint.wall).first()
    roof = Material.objects.filter(surface="roof", slug=blueprint.roof).first() if blueprint.roof else None
    if wall is None or (blueprint.roof and roof is None):
        form.add_error("blueprint", "The materials of this template are not loaded: run `manage.py demo` once.")
        return builder_with_errors(request, scenario, add_form=form)
    width, depth = Decimal(str(blueprint.width)), Decimal(str(blueprint.depth))
    if width > scenario.table_width or depth > scenario.table_depth:
        # It would stand off the table wherever it went, and the scenario's settings could not be saved.
        form.add_error("blueprint", f"A {blueprint.label.split(' (')[0].lower()} is {number(width)}″ × "
                                    f"{number(depth)}″: it does not fit on this {number(scenario.table_width)}″ × "
                                    f"{number(scenario.table_depth)}″ table")
        return builder_with_errors(request, scenario, add_form=form)
    kind = sheet.kind if sheet and blueprint.kind in ("bunker", "fort") else blueprint.kind
    name = form.cleaned_data["name"].strip() or (sheet.name if sheet else blueprint.label)
    added = added_meanwhile(scenario.structures, form.cleaned_data["after"], name, kind)
    if added is not None:  # this form's first send (a double tap), under the scenario's lock
        messages.info(request, f"{added.name} is already added (the form was sent twice): here it is.")
        return back_to(scenario, f"structure-{added.pk}")
    x, y = free_spot(scenario, width, depth)
    with transaction.atomic():
        structure = Structure.objects.create(
            scenario=scenario, name=free_name(scenario, name), kind=kind, wall_material=wall, roof_material=roof,
            flammable=wall.flammable or bool(roof and roof.flammable), flimsy=blueprint.flimsy,
            x=x, y=y, width=width, depth=depth, damage_max=blueprint.points(scenario.damage_variant),
            breach_needed=blueprint.breach_needed, sheet=sheet,
            crew_men=sheet.crew_total if sheet and has_crews(scenario.ruleset) else 0,
        )
        build_floors(structure, blueprint.floors)
    messages.success(request, f"Added {structure.name} at ({number(x)}″, {number(y)}″): drag it on the map or "
                              "type where it stands.")
    return back_to(scenario, f"structure-{structure.pk}")


@login_required
@require_POST
@one_writer
def structure_move(request, pk, sid):
    """Place a structure: the map posts x/y after a drag (snapped to 0.5″); a phone posts the typed
    coordinates of the structure's row."""
    scenario = editable_scenario(request, pk)
    structure = scenario_structure(scenario, sid)
    drag = bool(request.htmx)
    form = MoveForm(request.POST, scenario=scenario, snap=drag, structure=structure,
                    prefix=None if drag else f"s{structure.pk}")
    if not form.is_valid():
        if drag:
            return refused_drag(request, scenario, form)
        return builder_with_errors(request, scenario, move_forms={structure.pk: form},
                                   status=409 if form.moved_meanwhile else 400)
    Structure.objects.filter(pk=structure.pk).update(x=form.cleaned_data["x"], y=form.cleaned_data["y"])
    if drag:
        context = builder_context(request, scenario)
        context["moved"] = next(s for s in context["structures"] if s.pk == structure.pk)
        return render(request, "scenarios/builder.html#moved", context)
    messages.success(request, f"{structure.name} now stands at ({number(form.cleaned_data['x'])}″, "
                              f"{number(form.cleaned_data['y'])}″).")
    return back_to(scenario, f"structure-{structure.pk}")


def refused_drag(request, scenario, form):
    """The map as it stands, its status line saying why the drag was not saved (designer.js swaps it
    in: the piece goes back where it stands)."""
    problem = next((e for errors in form.errors.values() for e in errors), "")
    return render(request, "scenarios/builder.html#map", builder_context(request, scenario, map_problem=problem),
                  status=400)


# Every floor a structure may have (StructureForm's Floors goes to 20), not only those it has: a designer
# raising Floors gives the new floors their openings in the same save (`BaseOpeningFormSet.beyond`).
OPENING_LEVELS = [(lvl, "ground floor" if lvl == 0 else f"floor {lvl}") for lvl in range(20)]


@login_required
@one_writer
def structure_edit(request, pk, sid):
    scenario = editable_scenario(request, pk)
    structure = scenario_structure(scenario, sid)
    floors = list(structure.floors.prefetch_related("openings"))
    initial = [{"level": f.level, "side": o.side, "kind": o.kind, "count": o.count}
               for f in floors for o in sorted(f.openings.all(), key=lambda o: o.pk)]
    if request.method != "POST":
        form = StructureForm(instance=structure, scenario=scenario)
        openings = OpeningFormSet(prefix="openings", initial=initial, levels=OPENING_LEVELS)
        return render(request, "scenarios/structure.html", {"scenario": scenario, "structure": structure,
                                                            "form": form, "openings": openings})
    form = StructureForm(request.POST, instance=structure, scenario=scenario)
    openings = OpeningFormSet(request.POST, prefix="openings", initial=initial, levels=OPENING_LEVELS)
    if form.is_valid():  # the openings are checked against the floors this save gives it
        openings.floors = (form.cleaned_data["floor_count"], len([f for f in floors if not f.is_roof]),
                           form.cleaned_data.get("flat_roof"))
    if not (form.is_valid() and openings.is_valid()):
        return render(request, "scenarios/structure.html", {
            "scenario": scenario, "structure": structure, "form": form, "openings": openings}, status=400)
    levels = form.cleaned_data["floor_count"] + (1 if form.cleaned_data.get("flat_roof") else 0)
    roof_level = form.cleaned_data["floor_count"] if form.cleaned_data.get("flat_roof") else None
    wanted = [o.cleaned_data for o in openings.forms
              if o.cleaned_data and not o.cleaned_data.get("DELETE") and o.cleaned_data.get("level") not in (None, "")]
    try:
        with transaction.atomic():
            structure = save_structure(form, levels, roof_level, wanted)
    except Overwrite:
        form.refuse_overwrite()
        return render(request, "scenarios/structure.html", {
            "scenario": scenario, "structure": structure, "form": form, "openings": openings}, status=409)
    messages.success(request, f"Saved {structure.name}.")
    return back_to(scenario, f"structure-{structure.pk}")


class Overwrite(Exception):
    """Raised inside a save's transaction to take it back: it would overwrite another tab's change."""


def save_structure(form, levels, roof_level, wanted):
    structure = form.save()
    existing = {f.level: f for f in structure.floors.all()}
    for level, floor in existing.items():
        if level >= levels:
            floor.delete()
    for level in range(levels):
        floor = existing.get(level) or Floor(structure=structure, level=level)
        floor.is_roof = level == roof_level
        floor.save()
        existing[level] = floor
    Opening.objects.filter(floor__structure=structure).delete()
    Opening.objects.bulk_create([Opening(floor=existing[o["level"]], side=o["side"], kind=o["kind"],
                                         count=o.get("count") or 1) for o in wanted])
    if form.would_overwrite():
        raise Overwrite
    return structure


@login_required
@require_POST
@one_writer
def structure_section(request, pk, sid):
    """A connected section next to this one (Bolt Action builds large buildings from sections)."""
    scenario = editable_scenario(request, pk)
    source = scenario_structure(scenario, sid)
    form = SectionForm(request.POST)
    if not form.is_valid():  # only a hand-made request: the page writes a number
        return refused(request, "This form was not sent as its page drew it: reload the page and try again.",
                       status=400, title="Nothing added", back=reverse("scenario", args=[scenario.pk]))
    name = f"{source.name} (section)"
    added = added_meanwhile(source.connections, form.cleaned_data["after"], name, source.kind)
    if added is not None:  # this form's first send (a double tap), under the scenario's lock
        messages.info(request, f"{added.name} is already added (the form was sent twice): here it is.")
        return back_to(scenario, f"structure-{added.pk}")
    # Beside it along the table's width, by the box its footprint covers at its rotation (a house
    # turned a quarter is as wide as it is deep), and wholly on the table.
    reach = half_extents(source)[0]
    x = source.x + 2 * reach
    if x + reach > scenario.table_width:
        x = max(reach, source.x - 2 * reach)
    with transaction.atomic():
        section = Structure.objects.create(
            scenario=scenario, name=free_name(scenario, name), kind=source.kind,
            wall_material=source.wall_material, roof_material=source.roof_material, flammable=source.flammable,
            flimsy=source.flimsy, x=x, y=source.y, width=source.width, depth=source.depth, rotation=source.rotation,
            damage_max=source.damage_max, breach_needed=source.breach_needed,
        )
        copy_floors({source.pk: section})
        section.connections.add(source)
    messages.success(request, f"Added {section.name}, connected to {source.name}.")
    return back_to(scenario, f"structure-{section.pk}")


@login_required
@require_POST
@one_writer
def structure_delete(request, pk, sid):
    scenario = editable_scenario(request, pk)
    structure = scenario_structure(scenario, sid)
    structure.delete()  # units on its floors stay in the force, not placed (floor SET_NULL)
    messages.success(request, f"Removed {structure.name}.")
    return back_to(scenario, "ground")


@login_required
@require_POST
@one_writer
def scenario_delete(request, pk):
    """A scenario no battle was started from (a draft, a mistaken import), with its ground and forces.
    One that was played stays: its battles and campaigns name it, and a campaign's file carries it."""
    scenario = editable_scenario(request, pk)
    started = list(scenario.battles.order_by("pk").values_list("name", flat=True)[:3])
    if started:
        more = scenario.battles.count() - len(started)
        listed = ", ".join(started) + (f" and {more} more" if more > 0 else "")
        return refused(request, f"{scenario.name} stays: battles were started from it ({listed}), and their pages "
                                "and their campaign's file name it.", status=409, title="Not deleted",
                       back=reverse("scenario", args=[scenario.pk]))
    scenario.delete()  # its structures, floors, openings, forces and units; club sheets stay
    messages.success(request, f"Deleted the scenario {scenario.name}.")
    return redirect("scenario_list")


def copy_name(scenario):
    return f"{scenario.name[:113]} (copy)"  # within the 120 characters a name has


def copied_meanwhile(scenario, user, after):
    """A copy of `scenario` this user made since the page was drawn, named as this send would name it
    ("<name> (copy)", or free_name's "(2)"…): this form's first send (a double tap)."""
    name = copy_name(scenario)
    same = re.compile(re.escape(name) + "|" + re.escape(name[:110]) + r" \(\d+\)")
    made = Scenario.objects.filter(club=scenario.club_id, author=user, pk__gt=after).order_by("pk")
    return next((s for s in made if same.fullmatch(s.name)), None)


@login_required
@require_POST
@one_writer
def scenario_copy(request, pk):
    """A new scenario of the same club holding all this one does (its ground with floors, openings,
    connections and sheets, both forces, zones and rules), for a variant to be designed from it; this
    one is untouched. The form's `after` lands a double tap's second send on the first's copy."""
    scenario = visible_scenario(request, pk)
    if not permissions.can_edit_scenario(request.user, scenario):
        raise PermissionDenied("Only the club's organisers and designers copy its scenarios.")
    form = CopyScenarioForm(request.POST, scenario=scenario)
    if not form.is_valid():  # only a hand-made request: the page writes a number
        return refused(request, "This form was not sent as its page drew it: reload the page and try again.",
                       status=400, title="Nothing copied", back=reverse("scenario", args=[scenario.pk]))
    with transaction.atomic():
        # one_writer's lock on the source holds a double tap's second send until the first's copy is there to
        # be found; the club's keeps the free name free of a scenario created or imported at the same moment.
        Club.lock(scenario.club_id)
        made = copied_meanwhile(scenario, request.user, form.cleaned_data["after"])
        if made is None:
            copy = Scenario.objects.create(
                club_id=scenario.club_id, author=request.user,
                name=free_scenario_name(Scenario.objects.filter(club=scenario.club_id), copy_name(scenario)),
                description=scenario.description, table_width=scenario.table_width,
                table_depth=scenario.table_depth, deployment_zones=deepcopy(scenario.deployment_zones),
                **{name: deepcopy(getattr(scenario, name)) for name in RULES_FIELDS},
            )
            copy_battlefield(scenario, scenario=copy)
    if made is not None:
        messages.info(request, f"{made.name} is already made (the form was sent twice): here it is.")
    else:
        made = copy
        messages.success(request, f"{copy.name} holds all that {scenario.name} does; {scenario.name} stays as it "
                                  "was.")
    url = reverse("scenario", args=[made.pk])
    return htmx_redirect(url) if request.htmx else see_other(url)


# ---------------------------------------------------------------------------------- zones and forces

@login_required
@require_POST
@one_writer
def scenario_zones(request, pk):
    scenario = editable_scenario(request, pk)
    formset = ZoneFormSet(request.POST, prefix="zones", scenario=scenario)
    if not formset.is_valid():
        return builder_with_errors(request, scenario, status=409 if formset.changed_meanwhile else 400,
                                   zone_formset=formset)
    Scenario.objects.filter(pk=scenario.pk).update(deployment_zones=formset.zones(), updated_at=timezone.now())
    messages.success(request, "Deployment zones saved.")
    return back_to(scenario, "zones")


@login_required
@require_POST
@one_writer
def army_save(request, pk, army_id=None):
    scenario = editable_scenario(request, pk)
    army = permissions.get_or_404(scenario.armies, pk=army_id) if army_id else None
    prefix = f"army{army.pk}" if army else "newarmy"
    form = ArmyForm(request.POST, instance=army, scenario=scenario, prefix=prefix)
    if not form.is_valid():
        if army:
            forms_ = [form if a.pk == army.pk else ArmyForm(instance=a, scenario=scenario, prefix=f"army{a.pk}")
                      for a in scenario.armies.order_by("side")]
            return builder_with_errors(request, scenario, status=409 if form.changed_meanwhile else 400,
                                       army_forms=forms_)
        return builder_with_errors(request, scenario, new_army_form=form)
    army = form.save(commit=False)
    army.scenario = scenario
    army.save()
    messages.success(request, f"Saved {army.name}.")
    return back_to(scenario, f"army-{army.pk}")


def unit_page(request, scenario, form, weapons, unit=None, army=None, status=200):
    return render(request, "scenarios/unit.html", {"scenario": scenario, "form": form, "weapons": weapons,
                                                   "unit": unit, "army": army or unit.army}, status=status)


def save_unit(request, scenario, army, unit=None):
    initial = [{"weapon": uw.weapon, "count": uw.count} for uw in unit.unit_weapons.select_related("weapon")] if unit else []
    if request.method != "POST":
        form = UnitForm(instance=unit, scenario=scenario, army=army)
        weapons = UnitWeaponFormSet(prefix="weapons", initial=initial, ruleset=scenario.ruleset)
        return unit_page(request, scenario, form, weapons, unit, army)
    form = UnitForm(request.POST, instance=unit, scenario=scenario, army=army)
    weapons = UnitWeaponFormSet(request.POST, prefix="weapons", initial=initial, ruleset=scenario.ruleset)
    if not (form.is_valid() and weapons.is_valid()):
        return unit_page(request, scenario, form, weapons, unit, army, status=400)
    if form.added is not None:  # this form's first send (a double tap), under the scenario's lock
        messages.info(request, f"{form.added.name} is already added (the form was sent twice): here it is.")
        return back_to(scenario, f"army-{army.pk}")
    try:
        with transaction.atomic():
            unit = form.save(commit=False)
            unit.army = army
            unit.save()
            unit.unit_weapons.all().delete()
            UnitWeapon.objects.bulk_create([
                UnitWeapon(unit=unit, weapon=d["weapon"], count=d.get("count") or 1)
                for d in (f.cleaned_data for f in weapons.forms) if d and d.get("weapon") and not d.get("DELETE")
            ])
            if form.would_overwrite():
                raise Overwrite
    except Overwrite:
        form.refuse_overwrite()
        return unit_page(request, scenario, form, weapons, unit, army, status=409)
    messages.success(request, f"Saved {unit.name}.")
    return back_to(scenario, f"army-{army.pk}")


@login_required
@one_writer
def unit_new(request, pk, army_id):
    scenario = editable_scenario(request, pk)
    army = permissions.get_or_404(scenario.armies, pk=army_id)
    return save_unit(request, scenario, army)


@login_required
@one_writer
def unit_edit(request, pk, uid):
    scenario = editable_scenario(request, pk)
    unit = scenario_unit(scenario, uid)
    return save_unit(request, scenario, unit.army, unit)


@login_required
@require_POST
@one_writer
def unit_move(request, pk, uid):
    """A unit standing at a point, dragged on the map."""
    scenario = editable_scenario(request, pk)
    unit = scenario_unit(scenario, uid)
    form = MoveForm(request.POST, scenario=scenario, snap=True)
    if unit.floor_id:
        form.add_error(None, f"{unit.name} is in a structure: choose where it stands on its own page")
    if not form.is_valid():
        return refused_drag(request, scenario, form)
    Unit.objects.filter(pk=unit.pk).update(x=form.cleaned_data["x"], y=form.cleaned_data["y"])
    return render(request, "scenarios/builder.html#map", builder_context(request, scenario))


@login_required
@require_POST
@one_writer
def unit_delete(request, pk, uid):
    scenario = editable_scenario(request, pk)
    unit = scenario_unit(scenario, uid)
    unit.delete()
    messages.success(request, f"Removed {unit.name}.")
    return back_to(scenario, f"army-{unit.army_id}")


# ---------------------------------------------------------------------------------- battle, files, print

def newest_battle_id(scenario):
    return scenario.battles.order_by("-pk").values_list("pk", flat=True).first() or 0


@login_required
@require_POST
@one_writer
def scenario_start(request, pk):
    """Organisers start a battle: it gets its own copy of the ground and forces; the scenario is
    untouched and can start any number of battles."""
    scenario = visible_scenario(request, pk)
    if not permissions.is_organiser(request.user, scenario.club_id):
        raise PermissionDenied("Only the club's organisers start battles.")
    form = StartBattleForm(request.POST)
    unsided = campaign_services.crews_of_nobody(scenario)
    if unsided:
        form.add_error(None, campaign_services.CrewsOfNobody(unsided).message)
    unready = campaign_services.unready_sheets(scenario)
    if unready:
        form.add_error(None, campaign_services.SheetsNotReady(unready).message)
    wrong = campaign_services.set_up_wrongly(scenario)
    if wrong:
        form.add_error(None, campaign_services.SetUpWrongly(wrong).message)
    if not form.is_valid():
        return builder_with_errors(request, scenario, start_form=form)
    seen, newest = form.cleaned_data["after"], newest_battle_id(scenario)
    if seen is not None and newest > seen:  # under the scenario's lock (one_writer): the second of two sends
        started = Battle.objects.get(pk=newest)
        messages.info(request, f"{started.name} was started from this scenario after the page was opened (the form "
                               "was sent twice, or from another tab): here it is. To start another, start it again "
                               "from the scenario.")
        return redirect("battle", pk=started.pk)
    with transaction.atomic():
        battle = Battle.objects.create(
            club=scenario.club, scenario=scenario, name=form.cleaned_data["name"], status=form.cleaned_data["status"],
            table_width=scenario.table_width, table_depth=scenario.table_depth,
            **{name: getattr(scenario, name) for name in RULES_FIELDS},
        )
        copy_battlefield(scenario, battle=battle)
        status = "in progress" if battle.status == BattleStatus.IN_PROGRESS else "being set up"
        append_entry(battle, action="setup", actor=request.user, turn=1,
                     summary=f"Battle started from the scenario {scenario.name}; it is {status}.")
    messages.success(request, f"{battle.name} has its own copy of the ground and both forces.")
    return redirect("battle", pk=battle.pk)


@login_required
@require_POST
def scenario_campaign(request, pk):
    """Organisers start a campaign on the scenario's ground and forces; its first session is set up."""
    scenario = visible_scenario(request, pk)
    if not permissions.is_organiser(request.user, scenario.club_id):
        raise PermissionDenied("Only the club's organisers start campaigns.")
    form = StartCampaignForm(request.POST, club=scenario.club, prefix="campaign")
    if not form.is_valid():
        return builder_with_errors(request, scenario, campaign_form=form)
    fields = {k: v for k, v in form.cleaned_data.items() if k != "after"}
    # This form's first send (a double tap) may have started it already: land on that one.
    campaign, started = form.started_meanwhile(), False
    if campaign is None:
        try:
            campaign = campaign_services.start_campaign(scenario_id=scenario.pk, user=request.user, **fields)
            started = True
        except (campaign_services.CrewsOfNobody, campaign_services.SheetsNotReady,
                campaign_services.SetUpWrongly) as error:
            form.add_error(None, error.message)
            return builder_with_errors(request, scenario, campaign_form=form)
        except ActionRefused as error:  # the same name, started from another tab while this one was checked
            campaign = form.started_meanwhile()
            if campaign is None:
                form.add_error("name", error.message)
                return builder_with_errors(request, scenario, campaign_form=form)
    if started:
        messages.success(request, f"{campaign.name} has its own copy of the ground and both forces; session 1 is "
                                  "set up.")
    else:
        messages.info(request, f"{campaign.name} is already started (the form was sent twice): here it is.")
    # Its own fragment: a browser would otherwise carry the form's #start-campaign over the redirect.
    return see_other(reverse("campaign", args=[campaign.pk]) + "#sessions")


@login_required
def scenario_export(request, pk):
    scenario = visible_scenario(request, pk)
    return json_download(dumps(export_scenario(scenario)), download_name(scenario.name, "scenario", scenario.pk))


@login_required
def scenario_import(request):
    def done(scenario):
        messages.success(request, f"Imported the scenario {scenario.name} into {scenario.club.name}.")
        for warning in scenario.import_warnings:
            messages.warning(request, warning)
        return back_to(scenario)

    return run_import(request, "scenarios/import.html", import_scenario, done, extra={"action": request.path})


@login_required
def scenario_print(request, pk):
    scenario = visible_scenario(request, pk)
    sheets = sorted({s.sheet for s in scenario.structures.select_related("sheet__club") if s.sheet_id},
                    key=lambda sheet: sheet.name)
    return render(request, "structures/sheet_print.html", {
        "sheets": print_cards(sheets), "title": f"sheets of {scenario.name}",
        "back": reverse("scenario", args=[scenario.pk]),
    })
