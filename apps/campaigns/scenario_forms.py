"""Forms of the scenario builder: the scenario's settings, a structure with its floors, openings and
connections, placing on the map, deployment zones, the two forces and starting a battle."""

import hashlib
import json
from decimal import Decimal

from django import forms
from django.db.models import Q
from django.forms import formset_factory
from django.forms.models import model_to_dict

from apps.armies.models import Army, Side as ArmySide, Unit, UnitKind, UnitWeapon, Weapon
from apps.battles.models import BattleStatus
from apps.campaigns.formats import SMALL
from apps.campaigns.models import Scenario
from apps.structures import blueprints
from apps.structures.formats import number
from apps.structures.models import (BunkerSheet, Floor, Material, Opening, OpeningKind, Side, Structure,
                                     footprint_reach)

SHEET_KINDS = {"bunker", "fort", "pillbox", "strongpoint", "weapon_turret", "weapon_emplacement"}
HALF = Decimal("0.5")

# Fields one ruleset's rules read and the others' never do: a LaserGrenadiers designer is not asked
# for a Bolt Action tank class. Left out of the form, a stored value stays as it was.
# A sheet's crew is Disposable Heroes' (apps.structures.models.CREW_RULESET): a Bolt Action bunker is held by units.
RULESET_FIELDS = {"flimsy": "ba", "breach_needed": "lg", "tank_class": "ba", "experience": "ba", "fireteam": "lg",
                  "crew_side": "dh", "crew_men": "dh"}


LG_OPTIONS = ("damage_variant", "collapse_check", "uncontrolled_events", "fireteam_initiative")


def keep_ruleset_fields(form, ruleset):
    for name, only in RULESET_FIELDS.items():
        if name in form.fields and ruleset != only:
            del form.fields[name]


# Six digits, two after the point: Django's own words for the limit ("no more than 4 digits before
# the decimal point") mean nothing to a club.
INCH_ERRORS = {"max_whole_digits": "At most 9999 inches", "max_digits": "At most 9999 inches",
               "max_decimal_places": "At most two decimal places (0.01″)"}


class Inches(forms.DecimalField):
    def run_validators(self, value):
        """The first limit `value` is past, alone: -1e20 is below 0 and has too many digits, and 'greater than
        or equal to 0' beside 'At most 9999 inches' read as if both were asked of a number the player never
        meant to be large."""
        try:
            super().run_validators(value)
        except forms.ValidationError as error:
            raise forms.ValidationError(error.error_list[:1]) from None


def inches(label, **kw):
    return Inches(label=label, max_digits=6, decimal_places=2, min_value=0, error_messages=INCH_ERRORS,
                  widget=forms.NumberInput(attrs=number_attrs(0, 9999)), **kw)


def number_attrs(low, high):
    """The browser's limits for a measure, no stricter than the server's: a phone that refuses to
    send 0° or 12.25″ shows its own bubble and nothing reaches the form's messages. "any" step, as
    the server takes any value to its decimal places."""
    return {"inputmode": "decimal", "step": "any", "min": f"{low:g}", "max": f"{high:g}"}


class ScenarioForm(forms.ModelForm):
    """Name, table and the ruleset's options. `version` guards against two designers saving at once."""

    version = forms.IntegerField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = Scenario
        fields = ["name", "description", "table_width", "table_depth", "ruleset", "damage_variant",
                  "collapse_check", "fires", "uncontrolled_events", "fireteam_initiative", "weather"]
        labels = {"table_width": "Table width (inches)", "table_depth": "Table depth (inches)",
                  "damage_variant": "Damage points"}
        help_texts = {"table_width": "", "table_depth": ""}
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
        error_messages = {"table_width": INCH_ERRORS, "table_depth": INCH_ERRORS}

    def __init__(self, *args, club=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.club = club or (self.instance.club if self.instance.pk else None)
        for name in ("table_width", "table_depth"):
            self.fields[name].widget.attrs.update(number_attrs(0.01, 9999))
        if self.instance.pk:
            self.fields["version"].initial = self.instance.version
            for name in ("table_width", "table_depth"):
                self.initial[name] = number(getattr(self.instance, name))
            # The ruleset being saved decides: switching to LaserGrenadiers may set its options at once.
            ruleset = self.data.get("ruleset", self.instance.ruleset) if self.is_bound else self.instance.ruleset
            if ruleset != "lg":
                # Only LaserGrenadiers' rules read them (damage points, collapse checks, the sequence of
                # play): a Bolt Action or Disposable Heroes club would set them for nothing.
                for name in LG_OPTIONS:
                    del self.fields[name]
                self.fields["ruleset"].help_text = ("LaserGrenadiers' own options (damage points, collapse checks, "
                                                    "events, fireteams) appear once it is saved as LaserGrenadiers.")
            else:
                self.fields["damage_variant"].required = False  # not on the page before the switch

    def clean_damage_variant(self):
        value = self.cleaned_data.get("damage_variant")
        return self.instance.damage_variant if value in (None, "") else value

    def clean_name(self):
        name = self.cleaned_data["name"].strip()
        others = Scenario.objects.filter(club=self.club, name=name).exclude(pk=self.instance.pk)
        if self.club is not None and others.exists():
            raise forms.ValidationError("Your club already has a scenario with this name.")
        return name

    def clean(self):
        data = super().clean()
        for name in ("table_width", "table_depth"):
            if data.get(name) is not None and data[name] <= 0:
                self.add_error(name, "Must be more than 0 inches")
        if data.get("ruleset") and data["ruleset"] != "lg":
            # The new-scenario form asks them before the ruleset is saved (no JavaScript hides them): for
            # another ruleset they are left at their defaults, not stored for rules that never read them.
            for name in LG_OPTIONS:
                if name in self.fields:
                    data[name] = 0 if name == "damage_variant" else False
        if data.get("collapse_check") and not data.get("damage_variant"):
            # LG-21 reads the damage taken: without damage points it would never roll.
            self.add_error("collapse_check", "A collapse check reads the damage points: choose a damage-points "
                                             "variant, or leave it off")
        self.zones = list(self.instance.deployment_zones or [])
        if self.instance.pk:
            width, depth = data.get("table_width"), data.get("table_depth")
            # The whole footprint, as when a structure is placed: its centre on the table is not enough.
            structures = [(s, half_extents(s)) for s in self.instance.structures.all()]
            too_wide = [s.name for s, half in structures if width is not None and s.x + half[0] > width]
            too_deep = [s.name for s, half in structures if depth is not None and s.y + half[1] > depth]
            # Units standing at a point and the zones too: the map would draw them off its edge, and the
            # scenario's own file would not import back (its checks hold them to the table).
            units = Unit.objects.filter(army__scenario=self.instance, x__isnull=False, y__isnull=False).order_by("name")
            too_wide += [u.name for u in units if width is not None and u.x > width]
            too_deep += [u.name for u in units if depth is not None and u.y > depth]
            for field, names in (("table_width", too_wide), ("table_depth", too_deep)):
                if names:
                    self.add_error(field, f"{', '.join(names)} would be off the table: move them first")
            if width is not None and depth is not None:
                self.fit_zones((self.instance.table_width, self.instance.table_depth), (width, depth))
        return data

    def fit_zones(self, old, new):
        """The zones on the resized table (`self.zones`): a zone along a whole edge stays along it, one
        against the far edge stays against it (the default zones follow the table); one that would
        then still run off is refused beside the measurement that pushes it off."""
        self.zones, off = [], {"table_width": [], "table_depth": []}
        for zone in self.instance.deployment_zones or []:
            if not isinstance(zone, dict):
                continue
            fitted = dict(zone)
            for field, edge, size, was, now in (("table_width", "x", "width", old[0], new[0]),
                                                ("table_depth", "y", "depth", old[1], new[1])):
                at, length = Decimal(str(zone.get(edge) or 0)), Decimal(str(zone.get(size) or 0))
                if at == 0 and length == was:
                    length = now
                elif at + length == was:
                    at, length = max(now - length, 0), min(length, now)
                if at + length > now:
                    off[field].append(zone.get("side"))
                fitted[edge], fitted[size] = number(at), number(length)
            self.zones.append(fitted)
        for field, sides in off.items():
            if sides:
                named = " and ".join(f"side {side}" if side else "no side" for side in sides)
                self.add_error(field, f"The deployment zone{'s' if len(sides) > 1 else ''} of {named} would be off "
                                      "the table: change the zones first")


class NewScenarioForm(ScenarioForm):
    club = forms.ModelChoiceField(queryset=None, empty_label=None)
    # The newest scenario of the user's design clubs when the page was drawn: a second send of the same
    # form (a double tap) finds the scenario the first created and goes to it.
    after = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    class Meta(ScenarioForm.Meta):
        fields = ["club", *ScenarioForm.Meta.fields]

    def __init__(self, *args, clubs, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["club"].queryset = clubs
        self.order_fields(["club", "after"])  # both cleaned before the name, which reads them
        self.created = None
        if not self.is_bound:
            self.fields["after"].initial = (Scenario.objects.filter(club__in=clubs).order_by("-pk")
                                            .values_list("pk", flat=True).first() or 0)

    def general_fields(self):
        return [self[name] for name in self.fields if name not in LG_OPTIONS and not self[name].is_hidden]

    def lg_fields(self):
        return [self[name] for name in LG_OPTIONS if name in self.fields]

    def created_meanwhile(self, name):
        """The scenario of this name created since the page was drawn: this form's first send, most likely."""
        club, after = self.cleaned_data.get("club"), self.cleaned_data.get("after")
        if club is None or after is None:
            return None
        return club.scenarios.filter(pk__gt=after, name=name).first()

    def clean_name(self):
        self.club = self.cleaned_data.get("club")
        self.created = self.created_meanwhile(self.cleaned_data["name"].strip())
        return self.created.name if self.created else super().clean_name()

    def validate_constraints(self):
        if self.created is None:  # else the scenario holding the name is the one this form lands on
            super().validate_constraints()


class CopyScenarioForm(forms.Form):
    # The club's newest scenario when the page was drawn: a second send of the same "Copy" (a double tap)
    # finds the copy the first made and goes to it instead of making another.
    after = forms.IntegerField(widget=forms.HiddenInput, min_value=0)

    def __init__(self, *args, scenario, **kwargs):
        super().__init__(*args, auto_id="copy_%s", **kwargs)
        if not self.is_bound:
            self.fields["after"].initial = (Scenario.objects.filter(club=scenario.club_id).order_by("-pk")
                                            .values_list("pk", flat=True).first() or 0)


class AddStructureForm(forms.Form):
    blueprint = forms.ChoiceField(label="Template", choices=blueprints.CHOICES)
    name = forms.CharField(max_length=120, required=False, help_text="Leave empty for the template's name")
    sheet = forms.ModelChoiceField(queryset=None, required=False, label="Bunker sheet",
                                   help_text="For a bunker or fort: its Disposable Heroes sheet")
    # The scenario's newest structure when the page was drawn: a second send of the same form (a
    # double tap) finds the one the first added and goes to it instead of adding another.
    after = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    def __init__(self, *args, scenario, **kwargs):
        # Its own ids: the settings form on the same page has a "name" too, and a label must find its input.
        super().__init__(*args, auto_id="add_%s", **kwargs)
        self.scenario = scenario
        if not self.is_bound:
            self.fields["after"].initial = scenario.structures.order_by("-pk").values_list("pk", flat=True).first() or 0
        self.fields["sheet"].queryset = usable_sheets(scenario)
        self.fields["sheet"].label_from_instance = sheet_label
        self.fields["blueprint"].choices = blueprints.choices_for(scenario.ruleset)
        if scenario.ruleset == "lg":
            del self.fields["sheet"]  # see Blueprint.offered_in

    def clean(self):
        data = super().clean()
        blueprint = blueprints.BY_KEY.get(data.get("blueprint"))
        if blueprint and blueprint.needs_sheet and not data.get("sheet"):
            self.add_error("sheet", f"A {blueprint.label.split(' (')[0].lower()} needs its sheet")
        if blueprint and not blueprint.needs_sheet and data.get("sheet") and blueprint.kind not in SHEET_KINDS:
            self.add_error("sheet", f"A {blueprint.label.lower()} has no sheet: choose the bunker or fort template")
        return data


class SectionForm(forms.Form):
    # The scenario's newest structure when the page was drawn: a second send of the same "+ Section"
    # (a double tap) finds the section the first added and goes to it instead of adding another.
    after = forms.IntegerField(required=False, min_value=0)


def usable_sheets(scenario):
    """The library and the scenario's own club's sheets, never another club's."""
    return BunkerSheet.objects.filter(Q(club__isnull=True, is_blank=False) | Q(club=scenario.club_id)).order_by(
        "club_id", "name")


def sheet_label(sheet):
    # A clone keeps its library sheet's name until it is renamed: the two are offered side by side.
    return f"{sheet.name} (library)" if sheet.club_id is None else sheet.name


class MoveForm(forms.Form):
    """Where a structure or unit stands: typed on a phone, or posted by a drag on the map.

    A structure's typed coordinates carry where it stood when the page was drawn (`seen`): both x and y
    go with every save, so one changed here after another tab dragged the piece would put back that
    tab's other coordinate. Such a save is refused, saying where it stands now; sent again, it is a
    deliberate move. A drag names where it is dropped and carries nothing: it is a move whatever
    happened since."""

    x = inches("x (inches)")
    y = inches("y (inches)")
    seen = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args, scenario, snap=False, structure=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.scenario, self.snap, self.structure = scenario, snap, structure
        self.moved_meanwhile = False
        if structure is not None and not self.is_bound:
            self.fields["seen"].initial = spot(structure)

    def clean(self):
        data = super().clean()
        if self.structure is not None and data.get("seen") and data["seen"] != spot(self.structure):
            here = (self.structure.x, self.structure.y)
            if None not in (data.get("x"), data.get("y")) and (data["x"], data["y"]) != here:
                self.moved_meanwhile = True
                self.add_error(None, f"{self.structure.name} was moved to ({number(here[0])}″, {number(here[1])}″) "
                                     "since this page was opened (in another tab, or by another designer), so it "
                                     "was not placed. Place it again to put it where this form says.")
                self.data = self.data.copy()
                self.data[self.add_prefix("seen")] = spot(self.structure)
                return data
        half = half_extents(self.structure) if self.structure is not None else (Decimal(0), Decimal(0))
        tables = (("x", self.scenario.table_width, half[0]), ("y", self.scenario.table_depth, half[1]))
        for name, limit, reach in tables:
            value = data.get(name)
            if value is None:
                continue
            if self.snap:  # a drag snaps to half inches
                value = (value / HALF).quantize(Decimal(1)) * HALF
                data[name] = value
            edge = 'wide' if name == 'x' else 'deep'
            if value > limit:
                self.add_error(name, f"The table is {number(limit)}″ {edge}: enter 0 to {number(limit)}")
            elif reach and not reach <= value <= limit - reach:
                # The centre on the table is not enough: the whole footprint must be.
                self.add_error(name, f"{self.structure.name} would hang off the table: on a table "
                                     f"{number(limit)}″ {edge}, its centre goes from {number(reach)} to "
                                     f"{number(limit - reach)}")
        return data


def spot(structure):
    """Where a structure stands, as its coordinates form carries it."""
    return f"{number(structure.x)},{number(structure.y)}"


def half_extents(structure):
    """Half the width and depth of the box a structure's footprint covers at its rotation, in inches."""
    return footprint_reach(structure.width, structure.depth, structure.rotation)


def state_of(*parts):
    """A short digest of what a page showed of a row and its children."""
    return hashlib.sha256(json.dumps(parts, default=str, sort_keys=True).encode()).hexdigest()[:32]


class SeenState:
    """For a form that saves a whole row (and its children) as the page showed it: `seen` carries the
    row's state when the page was drawn. Saved after another tab or designer changed it (a drag on the
    map, their own save), the form would silently put back everything they changed; instead the view
    undoes the save and the form says so, now carrying the new state, so saving again is a deliberate
    overwrite (as the sheet editor does). A save that changes nothing (the same form sent twice) is
    no overwrite. The view runs under the scenario's lock (one_writer)."""

    CHANGED = ("{name} was changed since this page was opened (in another tab, or by another designer), so nothing "
               "was saved. Save again to put what this form holds over that change, or reload the page to see it.")

    def remember_state(self):
        self.fields["seen"] = forms.CharField(widget=forms.HiddenInput, required=False)
        self.state = self.current_state() if self.instance.pk else ""
        self.name_seen = self.instance.name  # validating the form changes the instance's
        self.fields["seen"].initial = self.state
        self.changed_meanwhile = False

    def check_state(self):
        seen = self.cleaned_data.get("seen")
        self.changed_meanwhile = bool(self.instance.pk and seen and seen != self.state)

    def would_overwrite(self):
        """After the save, in its transaction: did it change a row someone else had changed meanwhile?"""
        return self.changed_meanwhile and self.current_state() != self.state

    def refuse_overwrite(self):
        self.add_error(None, self.CHANGED.format(name=self.name_seen))
        self.data = self.data.copy()
        self.data[self.add_prefix("seen")] = self.state


class SeenValues:
    """SeenState for a form whose row is nothing but its own fields (a force's side, name and commander; a
    campaign's settings): `seen` carries their values as the page showed them rather than a digest, so a
    refusal can say what someone else changed. A save is refused when someone else changed a field since
    and this form would put it back (or change it again); a form holding what is stored already (the
    same form sent twice) is saved. Whoever checks holds the lock of the row that decides."""

    changed_meanwhile = ()

    def remember_values(self):
        self.fields["seen"] = forms.CharField(widget=forms.HiddenInput, required=False)
        self.stored = model_to_dict(self.instance, fields=self.Meta.fields)  # validating the form changes the instance
        self.fields["seen"].initial = values_state(self.stored)

    def seen_values(self):
        """The values the page showed; None for a form sent without them (the last save wins, as before)."""
        seen = read_state(self.cleaned_data.get("seen"))
        return seen if isinstance(seen, dict) else None

    def values(self):
        """What saving this form stores, as `stored` holds it (a commander by their id)."""
        return {name: self.fields[name].prepare_value(self.cleaned_data.get(name)) for name in self.stored}

    def check_values(self):
        """In clean(), the row read under its lock: refuse to put back what someone else changed."""
        seen, saving = self.seen_values() or {}, self.values()
        changed = [name for name, value in self.stored.items() if name in seen and seen[name] != value]
        if any(saving[name] != self.stored[name] for name in changed):
            self.refuse(changed, self.stored)

    def refuse(self, changed, stored):
        """Nothing is saved. The form keeps what it holds but now carries what is stored, so saving it
        again (having been told what changed) is a deliberate overwrite."""
        self.changed_meanwhile = changed
        what = ", ".join(f"{self.fields[name].label} (now {self.shown(name, stored[name])})" for name in changed)
        self.add_error(None, self.CHANGED.format_map({**stored, **(self.seen_values() or {}), "what": what}))
        self.data = self.data.copy()
        self.data[self.add_prefix("seen")] = values_state(stored)

    def shown(self, name, value):
        field = self.fields[name]
        if isinstance(field, forms.BooleanField):
            return "on" if value else "off"
        if hasattr(field, "choices"):
            key = "" if value is None else str(value)
            return next((str(label) for choice, label in field.choices if str(choice) == key), key)
        return f"“{value}”"


def values_state(values):
    return json.dumps(values, default=str, sort_keys=True)


def read_state(text):
    """What a `seen` field holds, or None when it holds no JSON: a hand-made or mangled request, whose
    last save wins as a page's from before the forms carried it. JSON nested past the parser's depth
    is none either (json.loads raises RecursionError, not a ValueError: it failed the request)."""
    try:
        return json.loads(text or "null")
    except (ValueError, RecursionError):
        return None


class StructureForm(SeenState, forms.ModelForm):
    floor_count = forms.IntegerField(label="Floors", min_value=0, max_value=20,
                                     help_text="Storeys from the ground floor up (0 for a foxhole with no floor)")
    flat_roof = forms.BooleanField(label="Accessible flat roof on top", required=False)

    class Meta:
        model = Structure
        fields = ["name", "kind", "wall_material", "roof_material", "flammable", "flimsy", "x", "y", "width",
                  "depth", "rotation", "damage_max", "breach_needed", "sheet", "facing", "crew_side", "crew_men",
                  "connections"]
        labels = {"x": "x (from the left edge)", "y": "y (from the top edge)", "rotation": "Rotation (° clockwise)",
                  "damage_max": "Damage points", "breach_needed": "Attacks to breach",
                  "facing": "Sheet front faces (° clockwise, 0 = top edge)", "crew_men": "Crew (men)",
                  "connections": "Connected sections"}
        widgets = {"connections": forms.CheckboxSelectMultiple}

    def __init__(self, *args, scenario, **kwargs):
        super().__init__(*args, **kwargs)
        self.scenario = scenario
        keep_ruleset_fields(self, scenario.ruleset)
        self.fields["wall_material"].queryset = Material.objects.filter(surface="wall")
        self.fields["roof_material"].queryset = Material.objects.filter(surface="roof")
        self.fields["sheet"].queryset = usable_sheets(scenario)
        self.fields["sheet"].label_from_instance = sheet_label
        self.fields["connections"].queryset = scenario.structures.exclude(pk=self.instance.pk).order_by("name")
        self.fields["connections"].help_text = "Sections of one large building (Bolt Action: each at most 8″ × 8″)"
        limits = {"x": (0, scenario.table_width), "y": (0, scenario.table_depth), "width": (0.01, 9999),
                  "depth": (0.01, 9999), "rotation": (0, 359.9), "facing": (0, 359.9)}
        for name, (low, high) in limits.items():
            self.fields[name].widget.attrs.update(number_attrs(low, high))
        for name in ("x", "y", "width", "depth", "rotation", "facing"):
            if self.instance.pk:
                self.initial[name] = number(getattr(self.instance, name))
        if self.instance.pk:
            floors = list(self.instance.floors.all())
            self.fields["floor_count"].initial = len([f for f in floors if not f.is_roof])
            self.fields["flat_roof"].initial = any(f.is_roof for f in floors)
        self.remember_state()

    def current_state(self):
        s = self.instance
        return state_of(
            list(Structure.objects.filter(pk=s.pk).values(*[f for f in self.Meta.fields if f != "connections"])),
            sorted(s.connections.values_list("pk", flat=True)),
            list(Floor.objects.filter(structure=s).order_by("level").values_list("level", "is_roof")),
            sorted(Opening.objects.filter(floor__structure=s).values_list("floor__level", "side", "kind", "count")))

    def clean_name(self):
        # As added (free_name): the map, the attack form and the log name structures, and two alike
        # could not be told apart at the table.
        name = self.cleaned_data["name"].strip()
        if self.scenario.structures.exclude(pk=self.instance.pk).filter(name=name).exists():
            raise forms.ValidationError(f"Another structure of this scenario is called {name}: give this one a "
                                        "name of its own")
        return name

    def clean(self):
        data = super().clean()
        self.check_state()
        for name, limit in (("x", self.scenario.table_width), ("y", self.scenario.table_depth)):
            if data.get(name) is not None and not 0 <= data[name] <= limit:
                self.add_error(name, f"The table is {number(limit)}″: enter 0 to {number(limit)}")
        for name in ("width", "depth"):
            if data.get(name) is not None and data[name] <= 0:
                self.add_error(name, "Must be more than 0")
        for name in ("rotation", "facing"):
            if data.get(name) is not None and not 0 <= data[name] < 360:
                self.add_error(name, "Enter 0 to 359.9 degrees")
        self.check_footprint(data)
        kind, sheet = data.get("kind"), data.get("sheet")
        if sheet and kind not in SHEET_KINDS:
            self.add_error("sheet", f"Only fortifications ({', '.join(sorted(SHEET_KINDS))}) have a sheet")
        if data.get("crew_side") and not sheet:
            self.add_error("crew_side", "Only a structure with a sheet has a crew")
        self.check_crew(data, sheet)
        self.check_units_inside(data)
        if data.get("roof_material") is None and data.get("flat_roof"):
            self.add_error("flat_roof", "A flat roof needs a roof material")
        if self.instance.pk and data.get("floor_count") is not None:
            levels = data["floor_count"] + (1 if data.get("flat_roof") else 0)
            held = [(f.level, f.occupant.name) for f in self.instance.floors.select_related("occupant")
                    if f.level >= levels and hasattr(f, "occupant")]
            if held:
                self.add_error("floor_count", "; ".join(f"floor {lvl} holds {name}: move it first" for lvl, name in held))
        return data


    def check_crew(self, data, sheet):
        """Disposable Heroes (the only ruleset whose form asks): the crew is the sheet's, or fewer men (a
        bunker manned below strength), and it holds the bunker for one side. A crew of neither side
        could be attacked by both, could not leave it, and counted in neither side's tally."""
        men = data.get("crew_men")
        if "crew_men" not in self.fields or sheet is None or men is None or "crew_men" in self.errors:
            return
        if men > sheet.crew_total:
            self.add_error("crew_men", f"The {sheet.name} sheet's crew is {sheet.crew_total} men: enter 0 to "
                                       f"{sheet.crew_total}")
        elif men and not data.get("crew_side") and "crew_side" not in self.errors:
            self.add_error("crew_side", f"Choose the side whose {men} men hold it (or set its crew to 0 men)")

    def check_units_inside(self, data):
        """A crew holds its bunker for one side: not while a unit of the other side stands inside (as the unit's
        own page refuses placing one there)."""
        side = data.get("crew_side")
        if not (self.instance.pk and side and data.get("crew_men")) or "crew_side" in self.errors:
            return
        other = (Unit.objects.filter(floor__structure=self.instance).exclude(army__side=side).select_related("army")
                 .order_by("name").first())
        if other is not None:
            self.add_error("crew_side", f"{other.name} (side {other.army.side}) stands inside: move it out first, or "
                                        f"give the crew side {other.army.side}")

    def check_footprint(self, data):
        """The whole footprint must stand on the table, not only its centre (as when it is placed)."""
        keys = ("x", "y", "width", "depth", "rotation")
        if self.errors.keys() & set(keys) or any(data.get(k) is None for k in keys):
            return
        reach = footprint_reach(data["width"], data["depth"], data["rotation"])
        for name, limit, half in (("x", self.scenario.table_width, reach[0]), ("y", self.scenario.table_depth, reach[1])):
            if not half <= data[name] <= limit - half:
                edge = "wide" if name == "x" else "deep"
                where = (f"its centre goes from {number(half)} to {number(limit - half)}" if half * 2 <= limit
                         else "it is larger than the table")
                self.add_error(name, f"It would hang off the table: on a table {number(limit)}″ {edge}, {where}")


class OpeningForm(forms.Form):
    level = forms.TypedChoiceField(label="Floor", coerce=int, required=False)
    side = forms.ChoiceField(choices=[("", "—")] + Side.choices, required=False)
    kind = forms.ChoiceField(choices=[("", "—")] + OpeningKind.choices, required=False)
    count = forms.IntegerField(min_value=1, max_value=99, required=False,
                               widget=forms.NumberInput(attrs={"inputmode": "numeric"}))
    DELETE = forms.BooleanField(label="Remove", required=False)

    def __init__(self, *args, levels=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["level"].choices = [("", "—")] + [(lvl, label) for lvl, label in levels]
        # The floors offered are those the form keeps: an opening left on a floor taken away, or on the
        # flat roof taken off, is not on any of them ("Select a valid choice. 2 is not one of…").
        self.fields["level"].error_messages["invalid_choice"] = (
            "This floor is not in the building any more: remove the opening, or keep the floor")

    def clean(self):
        data = super().clean()
        if data.get("DELETE"):
            # A row being removed is not saved, so not checked: "Remove" on the window of a floor being
            # taken away was refused as being on no floor, and the floor could not be taken away at all.
            self._errors.clear()
            return data
        filled = [data.get(k) not in (None, "") for k in ("level", "side", "kind")]
        if any(filled):
            for name, present in zip(("level", "side", "kind"), filled):
                if not present and name not in self.errors:
                    self.add_error(name, "Choose one")
            if data.get("count") is None and "count" not in self.errors:
                data["count"] = 1
            if data.get("kind") == OpeningKind.MADE_OPENING and (data.get("count") or 1) != 1:
                self.add_error("count", "A made opening is a single gap")
        return data


class BaseOpeningFormSet(forms.BaseFormSet):
    def __init__(self, *args, levels=(), **kwargs):
        self.levels = levels
        self.floors = None  # (floors it is saved with, floors it had, flat roof): set once the structure's form is valid
        super().__init__(*args, **kwargs)

    def get_form_kwargs(self, index):
        return {"levels": self.levels}

    def clean(self):
        seen = set()
        for form in self.forms:
            data = getattr(form, "cleaned_data", {}) or {}
            if data.get("DELETE") or data.get("level") in (None, ""):
                continue
            if self.floors is not None and data["level"] >= self.floors[0]:
                form.add_error("level", self.beyond(data["level"], *self.floors))
                continue
            key = (data["level"], data.get("side"), data.get("kind"))
            if key in seen:
                form.add_error("kind", "This floor already lists that kind of opening on that side: add up the counts")
            seen.add(key)


    @staticmethod
    def beyond(level, count, had, roof):
        """Why an opening on `level` is on no floor of a structure saved with `count` floors (it had `had`).
        Every floor it may have is offered, so that new floors get their openings in the same save; one
        above them all is a Floors left too low, a floor taken away, or the flat roof."""
        if level < had:
            return "This floor is not in the building any more: remove the opening, or keep the floor"
        name = "the ground floor" if level == 0 else f"floor {level}"
        if roof and level == count:
            return f"With Floors at {count}, {name} is its flat roof, which has no windows or doors: make Floors " \
                   f"{level + 1}, or choose a lower floor"
        if count == 0:
            return f"Floors is 0, so it has no floor: make Floors {level + 1} to give {name} openings"
        top = "the ground floor" if count == 1 else f"floor {count - 1}"
        return f"Floors is {count}, so its top floor is {top}: make Floors {level + 1} to give {name} openings, " \
               "or choose a lower floor"


OpeningFormSet = formset_factory(OpeningForm, formset=BaseOpeningFormSet, extra=2, max_num=80, absolute_max=100)


class ZoneForm(forms.Form):
    # The column is headed "Side" and is narrow on a desktop's six-column row: "Side A" showed as "Side".
    side = forms.ChoiceField(choices=[("", "—")] + [(value, value) for value in ArmySide.values], required=False)
    x = inches("x", required=False)
    y = inches("y", required=False)
    width = inches("Width", required=False)
    depth = inches("Depth", required=False)
    DELETE = forms.BooleanField(label="Remove", required=False)

    def __init__(self, *args, scenario=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.scenario = scenario

    def clean(self):
        data = super().clean()
        keys = ("side", "x", "y", "width", "depth")
        if data.get("DELETE") or all(data.get(k) in (None, "") for k in keys):
            return data
        for name in keys:
            if data.get(name) in (None, "") and name not in self.errors:
                self.add_error(name, "Required")
        for name in ("width", "depth"):
            if data.get(name) is not None and data[name] <= 0:
                self.add_error(name, "Must be more than 0")
        s = self.scenario
        if data.get("x") is not None and data.get("width") and data["x"] + data["width"] > s.table_width:
            self.add_error("width", f"Runs off the {number(s.table_width)}″ table")
        if data.get("y") is not None and data.get("depth") and data["y"] + data["depth"] > s.table_depth:
            self.add_error("depth", f"Runs off the {number(s.table_depth)}″ table")
        return data


class BaseZoneFormSet(forms.BaseFormSet):
    """The scenario's deployment zones, saved whole. As with SeenState, `seen` carries the zones the page
    was drawn from (the zones themselves, so a refusal can say what they are now): saving over zones
    someone else changed since is refused, unless this form holds exactly what is stored (sent twice).
    Bound under the scenario's lock (one_writer)."""

    CHANGED = ("The deployment zones were changed since this page was opened (in another tab, or by another "
               "designer), so nothing was saved. They are now: {zones}. Save again to put what this form holds over "
               "that change, or reload the page to see it.")

    def __init__(self, *args, scenario=None, **kwargs):
        self.scenario = scenario
        super().__init__(*args, **kwargs)
        self.stored, self.seen_name = scenario.deployment_zones, f"{self.prefix}-seen"
        self.seen = self.data.get(self.seen_name, "") if self.is_bound else values_state(self.stored)
        self.changed_meanwhile = False

    def get_form_kwargs(self, index):
        return {"scenario": self.scenario}

    def zones(self):
        """What saving this form stores."""
        return [{"side": d["side"], **{k: number(d[k]) for k in ("x", "y", "width", "depth")}}
                for d in (f.cleaned_data for f in self.forms) if d and not d.get("DELETE") and d.get("side")]

    def clean(self):
        if any(self.errors):
            return
        seen = read_state(self.seen)  # None: no state to check against, the last save wins, as before
        if seen is not None and seen != self.stored and self.zones() != self.stored:
            self.changed_meanwhile = True
            self.seen = values_state(self.stored)  # so saving again is a deliberate overwrite
            raise forms.ValidationError(self.CHANGED.format(zones=zones_text(self.stored)))


def zones_text(zones):
    """As the builder lists them to those who may not change them."""
    shown = [f"Side {z.get('side')}: {z.get('width')}″ × {z.get('depth')}″ from ({z.get('x')}″, {z.get('y')}″)"
             for z in zones or [] if isinstance(z, dict)]
    return "; ".join(shown) or "none"


ZoneFormSet = formset_factory(ZoneForm, formset=BaseZoneFormSet, extra=1, max_num=20, absolute_max=30)


class ArmyForm(SeenValues, forms.ModelForm):
    CHANGED = ("{name} was changed since this page was opened (in another tab, or by another designer), so nothing "
               "was saved. Changed meanwhile: {what}. Save again to put what this form holds over that change, or "
               "reload the page to see it.")

    class Meta:
        model = Army
        fields = ["side", "name", "owner"]
        labels = {"owner": "Commanded by"}
        help_texts = {"owner": "The player who acts for this side in battles started from the scenario"}

    def __init__(self, *args, scenario, **kwargs):
        super().__init__(*args, **kwargs)
        self.scenario = scenario
        taken = set(scenario.armies.exclude(pk=self.instance.pk).values_list("side", flat=True))
        self.fields["side"].choices = [c for c in ArmySide.choices if c[0] not in taken]
        # A side offered when the page was drawn, taken since (another tab, a double tap).
        self.fields["side"].error_messages["invalid_choice"] = (
            "That side already has a force in this scenario (added meanwhile?): reload the page to see it.")
        members = self.fields["owner"].queryset.filter(memberships__club=scenario.club_id).order_by("username")
        self.fields["owner"].queryset = members
        self.fields["owner"].empty_label = "Nobody yet (organisers act for it)"
        if self.instance.pk:
            self.remember_values()

    def clean(self):
        data = super().clean()
        if self.instance.pk and not self.errors:
            self.check_values()
        return data


class UnitForm(SeenState, forms.ModelForm):
    place = forms.ChoiceField(label="Where", required=False,
                              help_text="On a floor of a structure, at a point on the table, or not placed yet")
    x = inches("x (from the left edge)", required=False)
    y = inches("y (from the top edge)", required=False)
    # The limits the scenario import checks: what the builder saves must import back.
    models_start = forms.IntegerField(label="Models", min_value=1, max_value=SMALL, initial=1)
    # A new unit's form: the army's newest unit when the page was drawn. A second send of the same form
    # (a double tap) finds the unit the first added and goes to it instead of adding another.
    after = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    class Meta:
        model = Unit
        fields = ["name", "kind", "tank_class", "experience", "models_start", "fireteam"]

    def __init__(self, *args, scenario, army, **kwargs):
        super().__init__(*args, **kwargs)
        self.scenario, self.army, self.added = scenario, army, None
        if self.instance.pk:
            del self.fields["after"]  # a saved unit's page carries `seen` instead
        elif not self.is_bound:
            self.fields["after"].initial = army.units.order_by("-pk").values_list("pk", flat=True).first() or 0
        keep_ruleset_fields(self, scenario.ruleset)
        floors, self.crewed = [], {}
        for structure in scenario.structures.prefetch_related("floors").order_by("name"):
            for floor in structure.floors.all():
                floors.append((f"floor:{floor.pk}", f"{structure.name} — {floor.label}"))
                if structure.crew_side and structure.crew_men:
                    self.crewed[f"floor:{floor.pk}"] = structure
        self.fields["place"].choices = [("", "Not placed"), ("point", "A point on the table (x, y)"), *floors]
        self.floor_ids = {key: int(key.split(":")[1]) for key, _ in floors}
        if self.instance.pk:
            if self.instance.floor_id:
                self.fields["place"].initial = f"floor:{self.instance.floor_id}"
            elif self.instance.x is not None:
                self.fields["place"].initial = "point"
            self.fields["x"].initial, self.fields["y"].initial = number(self.instance.x), number(self.instance.y)
        self.remember_state()

    def current_state(self):
        u = self.instance
        return state_of(list(Unit.objects.filter(pk=u.pk).values(*self.Meta.fields, "floor_id", "x", "y")),
                        sorted(UnitWeapon.objects.filter(unit=u).values_list("weapon_id", "count")))

    def added_meanwhile(self):
        """A unit of this name the army gained since the page was drawn: this form's first send, most likely."""
        after, name = self.cleaned_data.get("after"), self.cleaned_data.get("name")
        if after is None or not name:
            return None
        return self.army.units.filter(pk__gt=after, name=name).order_by("pk").first()

    def clean(self):
        data = super().clean()
        self.check_state()
        self.added = self.added_meanwhile()
        place = data.get("place") or ""
        if data.get("tank_class") and data.get("kind") != UnitKind.VEHICLE:
            self.add_error("tank_class", "Only vehicles have a tank class")
        if place == "point":
            for name, limit in (("x", self.scenario.table_width), ("y", self.scenario.table_depth)):
                if data.get(name) is None:
                    if name not in self.errors:  # a value given but refused says why itself
                        self.add_error(name, "Enter where it stands")
                elif data[name] > limit:
                    self.add_error(name, f"The table is {number(limit)}″: enter 0 to {number(limit)}")
        elif place.startswith("floor:"):
            if data.get("kind") == UnitKind.VEHICLE:
                # The battle's Move never takes a vehicle into a structure, and Bolt Action sets only infantry
                # and artillery up inside a building: placed here, a battle began with a tank in a house.
                self.add_error("place", "A vehicle stands on the table, not in a structure: place it at a point on "
                                        "the table")
            crewed = self.crewed.get(place)
            if crewed is not None and crewed.crew_side != self.army.side:
                # The battle's Move takes nobody into a bunker the other side's crew holds (it is assaulted):
                # placed here, a battle began with both sides inside it.
                self.add_error("place", f"{crewed.name} is held by its crew for side {crewed.crew_side}: a side "
                                        f"{self.army.side} unit is not set up inside it")
            floor_id = self.floor_ids.get(place)
            holder = Unit.objects.filter(floor_id=floor_id).exclude(pk=self.instance.pk).first()
            if holder is not None and holder != self.added:  # this form's first send put it there: the view lands on it
                self.add_error("place", f"{holder.name} is already on that floor (one unit per floor)")
        return data

    def save(self, commit=True):
        unit = super().save(commit=False)
        place = self.cleaned_data.get("place") or ""
        unit.floor_id, unit.x, unit.y = None, None, None
        if place == "point":
            unit.x, unit.y = self.cleaned_data["x"], self.cleaned_data["y"]
        elif place.startswith("floor:"):
            unit.floor_id = self.floor_ids[place]
        if not unit.pk:
            unit.models_left = unit.models_start
        else:
            unit.models_left = min(unit.models_left, unit.models_start) if unit.models_left else unit.models_start
        if commit:
            unit.save()
        return unit


class UnitWeaponForm(forms.Form):
    weapon = forms.ModelChoiceField(queryset=None, required=False)
    count = forms.IntegerField(min_value=1, max_value=999, required=False,
                               widget=forms.NumberInput(attrs={"inputmode": "numeric"}))
    DELETE = forms.BooleanField(label="Remove", required=False)

    def __init__(self, *args, ruleset=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["weapon"].queryset = Weapon.objects.filter(ruleset=ruleset).order_by("name")
        # Only the scenario's ruleset is offered: "(Bolt Action)" after every name would say nothing.
        self.fields["weapon"].label_from_instance = lambda weapon: weapon.name

    def clean(self):
        data = super().clean()
        # A count of no weapon was dropped on save without a word: the designer meant some weapon.
        if data.get("count") and not data.get("weapon") and not data.get("DELETE") and "weapon" not in self.errors:
            self.add_error("weapon", f"Choose the weapon these {data['count']} are (or clear the count)")
        return data


class BaseUnitWeaponFormSet(forms.BaseFormSet):
    def __init__(self, *args, ruleset=None, **kwargs):
        self.ruleset = ruleset
        super().__init__(*args, **kwargs)

    def get_form_kwargs(self, index):
        return {"ruleset": self.ruleset}

    def clean(self):
        seen = set()
        for form in self.forms:
            data = getattr(form, "cleaned_data", {}) or {}
            if data.get("DELETE") or not data.get("weapon"):
                continue
            if data["weapon"].pk in seen:
                form.add_error("weapon", "Listed twice: add up the count instead")
            seen.add(data["weapon"].pk)


UnitWeaponFormSet = formset_factory(UnitWeaponForm, formset=BaseUnitWeaponFormSet, extra=2, max_num=30, absolute_max=40)


class StartCampaignForm(forms.Form):
    name = forms.CharField(max_length=120, label="Campaign name")
    fires_persist = forms.BooleanField(required=False, label="Fires keep burning into the next session")
    single_open_battle = forms.BooleanField(required=False, initial=True, label="One open battle at a time")
    # The club's newest campaign when the page was drawn: a second send of the same form (a double
    # tap) finds the campaign the first started and goes to it.
    after = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    def __init__(self, *args, club, **kwargs):
        super().__init__(*args, **kwargs)
        self.club = club
        if not self.is_bound:
            self.fields["after"].initial = club.campaigns.order_by("-pk").values_list("pk", flat=True).first() or 0

    def started_meanwhile(self):
        """The campaign of this name started since the page was drawn: this form's first send, most likely."""
        after = self.cleaned_data.get("after")
        if after is None:
            return None
        return self.club.campaigns.filter(pk__gt=after, name__iexact=self.cleaned_data.get("name", "")).first()

    def clean_name(self):
        return self.cleaned_data["name"].strip()

    def clean(self):
        data = super().clean()
        name = data.get("name")
        # "operation crossroads" is the same one; the one this form's first send started is landed on.
        if name and not self.started_meanwhile() and self.club.campaigns.filter(name__iexact=name).exists():
            self.add_error("name", f"{self.club.name} already has a campaign called {name}.")
        return data


class StartBattleForm(forms.Form):
    name = forms.CharField(max_length=120)
    status = forms.ChoiceField(choices=[(BattleStatus.SETUP, "Setting up (players still deploying)"),
                                        (BattleStatus.IN_PROGRESS, "In progress (turn 1 starts now)")],
                               initial=BattleStatus.SETUP)
    # The newest battle started from the scenario when the page was drawn (0: none): a second send of
    # the same form finds a newer one and goes to it instead of starting another.
    after = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    def __init__(self, *args, **kwargs):
        # Its own ids: the scenario's settings form on the same page has a "name" too.
        super().__init__(*args, auto_id="start_%s", **kwargs)
