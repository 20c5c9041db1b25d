"""The bunker sheet editor: one form for the card's head and foot, a formset per location table
facing, one for the NCO ranks and one for the weapons.

`SheetEditor` binds them together, turns what was typed into the model's JSON (the shape of
`apps.rules.state.FortSheet.to_dict()`) and places the rules' own checks (`validate_sheet`) next to
the field they are about.
"""

import re

from django import forms
from django.forms import formset_factory

from apps.rules.dh import validate_sheet
from apps.rules.state import FACINGS
from apps.structures.formats import FEATURE_LENGTH, MAX_FEATURES, SHEET_KEYS, rules_dict
from apps.structures.models import SheetKind

PEN_COLUMNS = ("<2", "2", "3", "4", "5", "6", "7", "8", "9", "10+")
FACING_LABELS = {"front": "Front", "side": "Side", "rear": "Rear"}


def number_input(signed=False):
    # A phone shows a digits-only pad for inputmode=numeric, which has no minus sign.
    return forms.NumberInput(attrs={} if signed else {"inputmode": "numeric"})


class SheetForm(forms.Form):
    name = forms.CharField(max_length=120)
    kind = forms.ChoiceField(choices=SheetKind.choices, label="Bunker or Fort")
    kind_note = forms.CharField(max_length=200, required=False, label="Note beside the kind",
                                help_text="e.g. Including Indirect Fire")
    dm = forms.IntegerField(label="DM", min_value=-10, max_value=10, widget=number_input(signed=True))
    crew_total = forms.IntegerField(label="Total crew (men)", min_value=0, max_value=999, widget=number_input())
    top_av = forms.IntegerField(label="Top AV", required=False, max_value=9999, widget=number_input(signed=True))
    features = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}),
                               help_text=f"One per line, e.g. Basic Sights (at most {MAX_FEATURES} lines of "
                                         f"{FEATURE_LENGTH} characters)")
    penetration_weapon = forms.CharField(max_length=40, required=False, label="Main gun")
    # Holds the errors about the row as a whole (ten values, never decreasing); never typed in.
    penetration_row = forms.CharField(required=False, widget=forms.HiddenInput)
    note = forms.CharField(required=False, max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))
    version = forms.IntegerField(widget=forms.HiddenInput)
    # Shown only for a sheet whose bunkers are in play (`sheet_edit`): saving changes them too.
    in_play_too = forms.BooleanField(required=False, label="Change it in those campaigns and battles too")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for i, column in enumerate(PEN_COLUMNS):
            self.fields[f"pen_{i}"] = forms.IntegerField(
                label=f"d10 {column}", required=False, widget=number_input(), max_value=9999
            )

    def clean_features(self):
        # The limits the sheet import checks: a sheet saved here must import back from its own export.
        lines = [line.strip() for line in (self.cleaned_data.get("features") or "").splitlines() if line.strip()]
        long = [f"line {i} has {len(line)}" for i, line in enumerate(lines, 1) if len(line) > FEATURE_LENGTH]
        if long:
            raise forms.ValidationError(f"At most {FEATURE_LENGTH} characters a feature ({'; '.join(long)})")
        if len(lines) > MAX_FEATURES:
            raise forms.ValidationError(f"At most {MAX_FEATURES} features (there are {len(lines)})")
        return self.cleaned_data.get("features")

    def pen_fields(self):
        return [self[f"pen_{i}"] for i in range(len(PEN_COLUMNS))]


class LocationForm(forms.Form):
    location = forms.CharField(max_length=40, required=False, widget=forms.TextInput(attrs={"list": "location-names"}))
    d10_from = forms.IntegerField(label="d10 from", required=False, widget=number_input())
    d10_to = forms.IntegerField(label="d10 to", required=False, widget=number_input())
    av = forms.IntegerField(label="AV", required=False, max_value=9999, widget=number_input(signed=True))
    DELETE = forms.BooleanField(label="Remove", required=False)

    def clean(self):
        data = super().clean()
        if not self.is_blank(data) and not (data.get("location") or "").strip() and "location" not in self.errors:
            self.add_error("location", "Name the location (Walls, Entrance, Vision…)")
        if not self.is_blank(data):
            for name in ("d10_from", "d10_to"):
                if data.get(name) is None and name not in self.errors:
                    self.add_error(name, "Enter the d10 result")
                elif data.get(name) is not None and not 1 <= data[name] <= 10:
                    # Beside the number that is off the die: the rules' own check names the range and sat
                    # under "from" even when "to" was the 11.
                    self.add_error(name, f"A d10 rolls 1 to 10, not {data[name]}")
            low, high = data.get("d10_from"), data.get("d10_to")
            if not self.errors.keys() & {"d10_from", "d10_to"} and low > high:
                self.add_error("d10_to", f"Reversed: a range runs from the lower result to the higher ({high} to "
                                         f"{low}, not {low} to {high})")
        return data

    @staticmethod
    def is_blank(data):
        return not (data.get("location") or "").strip() and all(data.get(k) is None for k in ("d10_from", "d10_to", "av"))


class LeaderForm(forms.Form):
    rank = forms.CharField(max_length=60, required=False, widget=forms.TextInput(attrs={"list": "rank-names"}))
    count = forms.IntegerField(required=False, min_value=0, max_value=999, widget=number_input())
    DELETE = forms.BooleanField(label="Remove", required=False)

    def clean(self):
        data = super().clean()
        rank, count = (data.get("rank") or "").strip(), data.get("count")
        if rank and count is None and "count" not in self.errors:
            self.add_error("count", "How many?")
        if count and not rank and "rank" not in self.errors:  # a rank too long is named, only not kept
            self.add_error("rank", "Name the rank (NCO, Jr NCO…)")
        return data


CREW = re.compile(r"\s*(\d{1,3})\s*")


class WeaponForm(forms.Form):
    crew = forms.CharField(max_length=20, required=False, widget=forms.TextInput(attrs={"list": "crew-options"}),
                           help_text='Men it needs; "all" for All Crew; empty when it needs none')
    name = forms.CharField(max_length=60, required=False, label="Weapon")
    location = forms.CharField(max_length=40, required=False, widget=forms.TextInput(attrs={"list": "weapon-locations"}))
    range = forms.IntegerField(label="Range (in)", required=False, min_value=0, max_value=9999, widget=number_input())
    # Seed 003's cards print 1 to 6, or "-" (the Rifles of a rifle pit): left empty here.
    rof = forms.IntegerField(label="ROF", required=False, min_value=1, max_value=99, widget=number_input(),
                             error_messages={"min_value": "At least 1 (leave it empty for none, as a pit's Rifles)"})
    ap = forms.IntegerField(label="AP", required=False, min_value=0, max_value=99, widget=number_input())
    mm = forms.IntegerField(label="MM", required=False, min_value=-99, max_value=99, widget=number_input(signed=True))
    dm = forms.IntegerField(label="DM", required=False, min_value=-99, max_value=99, widget=number_input(signed=True))
    special = forms.CharField(max_length=80, required=False)
    DELETE = forms.BooleanField(label="Remove", required=False)

    def clean_crew(self):
        raw = (self.cleaned_data.get("crew") or "").strip()
        if raw == "":
            return None
        if raw.lower() in ("all", "all crew"):
            return "all"
        match = CREW.fullmatch(raw)
        if not match:
            raise forms.ValidationError('Enter a number of men, "all" for All Crew, or leave it empty')
        if int(match.group(1)) == 0:
            # The cards print 3, 4, 6, "All Crew" or nothing (a weapon served by the row above's crew, a pit's
            # Rifles): 0 men would read as a weapon nobody needs to serve.
            raise forms.ValidationError('At least 1 man: leave it empty when it needs none of its own')
        return int(match.group(1))

    def clean(self):
        data = super().clean()
        filled = any(data.get(k) not in (None, "") for k in ("crew", "location", "range", "rof", "ap", "mm", "dm",
                                                             "special"))
        if filled and not (data.get("name") or "").strip() and "name" not in self.errors:
            self.add_error("name", "Name the weapon")
        return data


class BaseLocationFormSet(forms.BaseFormSet):
    def clean(self):
        """One row per location on a facing: the card prints a facing's locations by name, so a second
        "Walls" would vanish from it (its d10 results with it), and the sheet import refuses it."""
        seen = {}
        for form in self.forms:
            data = getattr(form, "cleaned_data", {}) or {}
            name = (data.get("location") or "").strip()
            if data.get("DELETE") or not name or "location" in form.errors:
                continue
            if name.lower() in seen:
                form.add_error("location", f"{seen[name.lower()]} is already a location on this facing: give it one "
                                           "row (one d10 range), or name this one differently")
            seen.setdefault(name.lower(), name)


class BaseLeaderFormSet(forms.BaseFormSet):
    def clean(self):
        """The card keeps one count per rank: a second "NCO" row replaced the first's count."""
        seen = set()
        for form in self.forms:
            data = getattr(form, "cleaned_data", {}) or {}
            rank = (data.get("rank") or "").strip()
            if data.get("DELETE") or not rank or "rank" in form.errors:
                continue
            if rank in seen:
                form.add_error("rank", f"{rank} is listed twice: add up the count in one row")
            seen.add(rank)


def formset(form, extra, base=forms.BaseFormSet):
    return formset_factory(form, formset=base, extra=extra, can_delete=False, max_num=50, absolute_max=60,
                           validate_max=True)


LocationFormSet = formset(LocationForm, 1, BaseLocationFormSet)
LeaderFormSet = formset(LeaderForm, 1, BaseLeaderFormSet)
WeaponFormSet = formset(WeaponForm, 1)


def initial_from_sheet(sheet):
    """Initial data for every part of the editor from a saved sheet."""
    locations = sheet.locations if isinstance(sheet.locations, dict) else {}
    top = locations.get("top") if isinstance(locations.get("top"), dict) else {}
    row = list(sheet.penetration_row or [])
    main = {
        "name": sheet.name, "kind": sheet.kind, "kind_note": sheet.kind_note, "dm": sheet.dm,
        "crew_total": sheet.crew_total, "top_av": top.get("av"), "features": "\n".join(map(str, sheet.features or [])),
        "penetration_weapon": sheet.penetration_weapon, "note": sheet.note, "version": sheet.version,
        **{f"pen_{i}": v for i, v in enumerate(row[:10])},
    }
    leaders = sheet.leaders if isinstance(sheet.leaders, dict) else {}
    return {
        "main": main,
        "leaders": [{"rank": rank, "count": count} for rank, count in leaders.items()],
        **{facing: [{k: e.get(k) for k in ("location", "d10_from", "d10_to", "av")}
                    for e in (locations.get(facing) or []) if isinstance(e, dict)] for facing in FACINGS},
        "weapons": [{**{k: w.get(k) for k in ("name", "location", "range", "rof", "ap", "mm", "dm", "special")},
                     "crew": "all" if w.get("crew") == "all" else ("" if w.get("crew") is None else w.get("crew"))}
                    for w in (sheet.weapons or []) if isinstance(w, dict)],
    }


class SheetEditor:
    """The editor's forms bound together.

    `data` is a POST (or None for a fresh page from `sheet`). After `check()`, `body` is the sheet as
    the model stores it (built from whatever parsed, so the preview can show a half-typed card),
    every problem sits next to its field, and `valid` says whether it may be saved.
    """

    def __init__(self, sheet, data=None, extra_rows=None):
        initial = initial_from_sheet(sheet)
        self.sheet = sheet
        self.bound = data is not None
        if data is not None and extra_rows:
            data = data.copy()
            total = f"{extra_rows}-TOTAL_FORMS"
            if total in data and data[total].isdigit():
                data[total] = str(min(int(data[total]) + 1, 50))
        kw = {"data": data} if data is not None else {}
        self.main = SheetForm(initial=initial["main"], **kw)
        self.leaders = LeaderFormSet(prefix="leaders", initial=initial["leaders"], **kw)
        self.facings = {facing: LocationFormSet(prefix=facing, initial=initial[facing], **kw) for facing in FACINGS}
        self.weapons = WeaponFormSet(prefix="weapons", initial=initial["weapons"], **kw)
        for facing, fs in self.facings.items():
            fs.label = FACING_LABELS[facing]
            fs.facing = facing
            fs.coverage_errors = []
        for fs in self.formsets():
            fs.slot_errors = []
        self.body = None
        self.valid = False

    # -- all forms, for the error slots the live preview refreshes

    def formsets(self):
        return [self.leaders, *self.facings.values(), self.weapons]

    def all_forms(self):
        yield self.main
        for fs in self.formsets():
            yield from fs.forms

    def error_slots(self):
        slots = []
        for form in self.all_forms():
            for bound_field in form:
                # The in-play box is only on the page of a sheet in play, and only a save checks it.
                if (not bound_field.is_hidden or bound_field.name == "penetration_row") and \
                        bound_field.name != "in_play_too":
                    slots.append((f"err-{bound_field.auto_id}", list(bound_field.errors)))
        for fs in self.formsets():
            slots.append((f"err-{fs.prefix}", fs.slot_errors))
        slots.append(("err-form", list(self.main.non_field_errors())))
        return slots

    # -- from the forms to the sheet's JSON

    def check(self):
        """Clean every form, build `body`, place the rules' problems; True when it may be saved."""
        if not self.bound:
            self.body = self._body_from_initial()
            self.valid = True
            return True
        forms_ok = self.main.is_valid()
        forms_ok &= all([fs.is_valid() for fs in self.formsets()])  # every formset, so all errors show
        m = self.main.cleaned_data
        self.body, self.rows = self._body(m)
        self._check_name()
        problems = validate_sheet(rules_dict(self.body), blank_ok=True)
        pen = [m.get(f"pen_{i}") for i in range(10)]
        if any(v is not None for v in pen) and any(v is None for v in pen):
            missing = [PEN_COLUMNS[i] for i, v in enumerate(pen) if v is None and f"pen_{i}" not in self.main.errors]
            if missing:
                self.main.add_error("penetration_row", f"Fill in all ten columns or none (missing: {', '.join(missing)})")
        for path, message in problems:
            self._place(path, message)
        # "12 men, including 1 NCO": the NCOs are among the crew. Asked here only, not of an import: a
        # club's backup holding a sheet saved before this check must still import.
        ranked = sum(self.body["leaders"].values())
        # A crew left empty or refused is 0 men in the body: its own field says what is wrong with it.
        if ranked > self.body["crew_total"] and "crew_total" not in self.main.errors:
            self.leaders.coverage_errors = [f"{ranked} NCOs, more than the whole crew ({self.body['crew_total']} men)"]
        for fs in self.formsets():
            fs.slot_errors = list(fs.non_form_errors()) + getattr(fs, "coverage_errors", [])
        self.valid = forms_ok and not problems and not any(form.errors for form in self.all_forms()) and not any(
            fs.slot_errors for fs in self.formsets())
        return self.valid

    def _check_name(self):
        """A club's sheets have names of their own (clones and imports are given one): the builder offers
        them by name, and two alike could not be told apart there."""
        from apps.structures.models import BunkerSheet

        name, club = self.body["name"], self.sheet.club_id
        if name and club and "name" not in self.main.errors and BunkerSheet.objects.filter(
                club=club, name=name).exclude(pk=self.sheet.pk).exists():
            self.main.add_error("name", f"Your club already has a sheet called {name}: give this one a name of its own")

    def _rows(self, fs, build):
        rows, index = [], []
        for i, form in enumerate(fs.forms):
            data = getattr(form, "cleaned_data", {}) or {}
            if data.get("DELETE"):
                continue
            value = build(form, data)
            if value is not None:
                rows.append(value)
                index.append(i)
        return rows, index

    def _body(self, m):
        def location(form, data):
            raw = {k: (form.data.get(form.add_prefix(k)) or "").strip() for k in ("location", "d10_from", "d10_to", "av")}
            if not any(raw.values()):
                return None
            return {"location": (data.get("location") or "").strip(), "d10_from": data.get("d10_from"),
                    "d10_to": data.get("d10_to"), "av": data.get("av")}

        def leader(form, data):
            rank = (data.get("rank") or "").strip()
            return (rank, data.get("count") or 0) if rank else None

        def weapon(form, data):
            name = (data.get("name") or "").strip()
            if not name:
                return None
            return {"crew": data.get("crew"), "name": name, "location": (data.get("location") or "").strip() or None,
                    **{k: data.get(k) for k in ("range", "rof", "ap", "mm", "dm")},
                    "special": (data.get("special") or "").strip()}

        rows = {}
        locations = {}
        for facing, fs in self.facings.items():
            locations[facing], rows[facing] = self._rows(fs, location)
        locations["top"] = {"av": m.get("top_av")}
        leaders, rows["leaders"] = self._rows(self.leaders, leader)
        weapons, rows["weapons"] = self._rows(self.weapons, weapon)
        pen = [m.get(f"pen_{i}") for i in range(10)]
        features = [line.strip() for line in (m.get("features") or "").splitlines() if line.strip()]
        body = {
            "slug": self.sheet.slug,
            "name": (m.get("name") or "").strip(),
            "kind": m.get("kind") or self.sheet.kind,
            "kind_note": (m.get("kind_note") or "").strip(),
            "dm": m.get("dm") if m.get("dm") is not None else 0,
            "crew_total": m.get("crew_total") if m.get("crew_total") is not None else 0,
            "leaders": dict(leaders),
            "locations": locations,
            "weapons": weapons,
            "features": features,
            "penetration_weapon": (m.get("penetration_weapon") or "").strip(),
            "penetration_row": pen if all(v is not None for v in pen) else [],
            "note": (m.get("note") or "").strip(),
            "is_blank": self.sheet.is_blank,
        }
        return body, rows

    def _body_from_initial(self):
        from apps.structures.formats import sheet_body

        return sheet_body(self.sheet)

    # -- the rules' problems next to their fields

    def _place(self, path, message):
        match = re.fullmatch(r"locations\.(front|side|rear)\[(\d+)\]\.(d10|av)", path)
        if match:
            facing, i, name = match.group(1), int(match.group(2)), match.group(3)
            form = self.facings[facing].forms[self.rows[facing][i]]
            field = "d10_from" if name == "d10" else "av"
            # The form has said what is wrong with the range, beside the field that is (`LocationForm.clean`).
            if field not in form.errors and not (name == "d10" and "d10_to" in form.errors):
                form.add_error(field, message[0].upper() + message[1:])
            return
        match = re.fullmatch(r"locations\.(front|side|rear)", path)
        if match:
            self.facings[match.group(1)].coverage_errors.append(f"{FACING_LABELS[match.group(1)]}: {message}")
            return
        match = re.fullmatch(r"weapons\[(\d+)\]\.crew", path)
        if match:
            form = self.weapons.forms[self.rows["weapons"][int(match.group(1))]]
            if "crew" not in form.errors:
                form.add_error("crew", message[0].upper() + message[1:])
            return
        match = re.fullmatch(r"penetration_row\[(\d+)\]", path)
        field = (f"pen_{match.group(1)}" if match else
                 {"locations.top.av": "top_av", "crew_total": "crew_total", "dm": "dm", "kind": "kind",
                  "penetration_row": "penetration_row"}.get(path))
        if field is None:
            self.main.add_error(None, f"{path}: {message}")
        elif field not in self.main.errors:
            if field == "crew_total":
                message = f"Too few men: {message}"
            self.main.add_error(field, message[0].upper() + message[1:])

    def saved_fields(self):
        """Model field values to write (the body without the slug and the blank flag)."""
        return {key: self.body[key] for key in SHEET_KEYS if key not in ("slug", "is_blank")}
