"""The attack form: a Django Form built from the chosen action's rules fields.

The form shapes and carries what the players enter; it does not judge it. Every value goes to the
rules through `services`, which raise a RulesError naming the field at fault, so a weapon the unit
does not carry or a floor that does not exist gets the rules' own words next to the right input,
with or without JavaScript.
"""

import uuid
from dataclasses import dataclass

from django import forms
from django.utils.safestring import mark_safe

from apps import rules
from apps.battles import services
from apps.campaigns import permissions
from apps.rules.dice import ordinal
from apps.rules.lg import cannot_fire_from, rotary_hits
from apps.rules.tables import DH_PINS_TO_ROUT
from config.widgets import esc

DICE_MODES = (("server", "Roll for me"), ("player", "I rolled"))
# What "Attacking unit" means where naming it is optional.
ATTACKER_HELP = {"ba_indirect": "Optional: the spotter or gun calling it in",
                 "ba_barrage": "Optional: the spotter or gun calling it in",
                 "ba_damage": "Optional: the unit that scored these hits (it has fired already: this uses no order)"}
YES_NO = (("yes", "Yes"), ("no", "No"))
MAX_DICE = 100  # a 10D10 blast and a few more; nothing needs more
SUBFIELD = "__"  # unit_hits fields are split into one number per unit: hits__u7, hits__building


def form_actions(ruleset, organiser=True):
    """The actions the attack form offers: everything the ruleset has but the turn buttons' own, and to a
    player not the organisers' own (`permissions.ORGANISERS_ONLY`)."""
    return [s for s in rules.available_actions(ruleset) if s.key not in services.TURN_ACTIONS
            and (organiser or s.key not in permissions.ORGANISERS_ONLY)]


def client_token(value):
    """A well-formed one-time token from the form, or a new one."""
    try:
        return str(uuid.UUID(str(value)))
    except (ValueError, TypeError, AttributeError):
        return str(uuid.uuid4())


def dice_values(data):
    """The players' dice in order: dice_0, dice_1, … up to the first empty one."""
    values = dice_entered(data)
    return values[:values.index("")] if "" in values else values


def dice_entered(data):
    """Every die field as typed, up to the last one filled in: a field left empty is "" in its place,
    so the dice typed after it are shown again rather than lost."""
    values = [str(data.get(f"dice_{i}", "")).strip() for i in range(MAX_DICE)]
    while values and not values[-1]:
        values.pop()
    return values


ENEMY_PIECE = services.ENEMY_PIECE
# Weapon fields whose weapon is that piece's (what it fired), not the acting unit's.
WEAPON_OF = {"lg_detect": "target"}

# Inputs the players' own rulebook decides that follow from another answer: asked only once that answer is
# given, with nothing chosen for them; not asked otherwise (the rule's default applies). Offered already set
# (penetration to No, a flamethrower's hits to 0), a player who answered "Hit: yes" and missed the next
# question resolved a shot that did not get through, or a flame that hit and did nothing.
# (action, input): (the input it follows, the answer that asks it, what decides it).
ASKED_AFTER = {
    ("lg_attack_structure", "penetrated"): ("hit", "yes", "your rulebook's penetration roll (Rule 16) decides it"),
    ("lg_breach", "penetrated"): ("hit", "yes", "your rulebook's penetration roll (Rule 16) decides it"),
    ("ba_flamethrower", "hits"): ("hit", "yes", "the core rules' roll for the flamethrower decides it"),
}


def asked_after(spec, name):
    return ASKED_AFTER.get((spec.key, name)) if spec is not None else None


def unanswered(spec, data):
    """The first input of `spec` that ASKED_AFTER asks for and `data` leaves unanswered, and why it is
    asked, or None."""
    for f in spec.fields if spec is not None else ():
        after = asked_after(spec, f.name)
        if after and str(data.get(after[0], "")).strip() == after[1] and not str(data.get(f.name, "")).strip():
            return f, after[2]
    return None


def acting_unit_field(action):
    """The form field naming the unit that acts: `attacker`, the spec's own unit field, or None."""
    if action in services.UNIT_ACTIONS:
        return services.UNIT_ACTIONS[action]
    if action in services.ATTACKS or action in services.ATTACKER_OPTIONAL:
        return "attacker"
    return None


def raw_inputs(spec, data):
    """The spec's inputs as the rules read them (strings, comma lists, "u7=3" pairs); empty ones left out."""
    inputs = {}
    if spec is None:
        return inputs
    for f in spec.fields:
        if f.type == "units":
            value = ",".join(v for v in data.getlist(f.name) if v.strip()) if hasattr(data, "getlist") \
                else data.get(f.name, "")
        elif f.type == "unit_hits":
            prefix = f.name + SUBFIELD
            pairs = [(k[len(prefix):], str(v).strip()) for k, v in data.items() if k.startswith(prefix)]
            value = ",".join(f"{k}={v}" for k, v in pairs if v) or data.get(f.name, "")
        else:
            value = data.get(f.name, "")
        value = str(value).strip()
        if value:
            inputs[f.name] = value
    return inputs


@dataclass
class DieRow:
    """One die the players must enter, in the order the rules ask for it."""

    index: int
    label: str  # the whole of it ("HE hits, second d6"), for messages and screen readers
    sides: int
    value: str = ""
    error: str = ""
    focus: bool = False
    short: str = ""  # beside the field: a group's later dice say only which die they are

    def __post_init__(self):
        self.short = self.short or self.label

    @property
    def name(self):
        return f"dice_{self.index}"


class SplitChoice(forms.Field):
    """Several values of one input (checkboxes), handed to the rules as a list."""

    widget = forms.CheckboxSelectMultiple

    def to_python(self, value):
        return [str(v) for v in value or [] if str(v).strip()]


def _place(state, unit):
    if unit.structure and unit.structure in state.structures:
        structure = state.structures[unit.structure]
        floor = structure.floor(unit.floor) if unit.floor is not None else None
        return f"in {structure.label}{', ' + floor.label if floor else ''}"
    if unit.position:
        return f"at {unit.position[0]:g}″, {unit.position[1]:g}″"
    return "off the table"


# About what a select shows of its choice at 390 px before cutting it off.
LONG_CHOICE = 33


def _chosen_label(choices, value):
    for key, label in choices:
        if isinstance(label, (list, tuple)):  # an optgroup
            found = _chosen_label(label, value)
            if found:
                return found
        elif str(key) == value and value:
            return str(label)
    return ""


def unit_choice(state, unit, note=""):
    # The note straight after the name: a closed select on a phone shows only the label's start.
    note = f" — {note}" if note else ""
    return unit.id, (f"{unit.label}{note} (side {unit.side}, {unit.models} model{'' if unit.models == 1 else 's'}, "
                     f"{_place(state, unit)})")


def structure_choice(s):
    states = []
    if s.collapsed:
        states.append("rubble")
    elif s.damage_max and s.damage_taken:
        states.append(f"{int(s.damage_pct)}% damaged")
    if s.fire:
        states.append("burning")
    if s.crew is not None and s.crew.routed:
        states.append("crew routed")
    return s.id, s.label + (f" ({', '.join(states)})" if states else "")


class ActionForm(forms.Form):
    """The attack form for one action. Bound to the request's data (with the spec's defaults filled
    in for inputs not sent at all), so every re-render shows what the player chose."""

    action = forms.ChoiceField(label="Action")
    dice_mode = forms.ChoiceField(label="Dice", choices=DICE_MODES, widget=forms.RadioSelect)
    client_token = forms.CharField(widget=forms.HiddenInput)
    drawn_for = forms.CharField(widget=forms.HiddenInput, required=False)  # the action the form was drawn for

    use_required_attribute = False  # the rules say what is missing, in their words

    def __init__(self, data, *, battle, state, sides, organiser=False, submitted=False):
        self.battle, self.state, self.sides = battle, state, frozenset(sides)
        # A weapon chosen that the unit cannot use for this action (the unit or the action changed
        # since) gives way to the unit's one weapon that can while the player is still choosing; a
        # form submitted with it keeps it, beside the rule's reason.
        self.keep_invalid = submitted
        actions = form_actions(battle.ruleset, organiser)
        data = data.copy()
        key = data.get("action") or actions[0].key if actions else ""
        # An organisers' action sent by a player (a form kept from before their role changed) is drawn with
        # its fields, so services' refusal stands beside the piece chosen.
        self.spec = next((a for a in form_actions(battle.ruleset) if a.key == key), None)
        data["action"] = key
        data["dice_mode"] = data.get("dice_mode") if data.get("dice_mode") in dict(DICE_MODES) else "server"
        data["client_token"] = client_token(data.get("client_token"))
        if self.spec is not None:
            self._drop_defaults_of(rules.ACTIONS.get(str(data.get("drawn_for", ""))), data)
            for f in self.spec.fields:
                if f.name not in data and f.default is not None and f.type != "units" \
                        and not asked_after(self.spec, f.name):
                    data[f.name] = _as_text(f.default)
        data["drawn_for"] = key
        super().__init__(data, label_suffix="")
        self.fields["action"].choices = [(a.key, a.label) for a in actions] + (
            [] if self.spec in actions or not key else
            [(key, self.spec.label if self.spec else f"{key} (not an action of this battle)")])
        self.dice = []
        self.dice_hint = ""
        self.dice_error = False
        self.result = None
        self.odds, self.odds_hint = None, ""
        self.submitted = False  # re-rendered after a refused Resolve: say so beside the button
        self._add_fields()
        self._repeat_long_choices()

    def _drop_defaults_of(self, before, data):
        """The action changed: a value that is only the last action's default gives way to this one's.
        HE places 1 pin by default and a flamethrower none, but the HE's "1", still in the form, was sent
        with the flamethrower and pinned its target unasked. A value the player typed stays."""
        if before is None or before.key == self.spec.key:
            return
        drawn = {f.name: _as_text(f.default) for f in before.fields if f.default is not None}
        for f in self.spec.fields:
            old = drawn.get(f.name)
            if old is not None and str(data.get(f.name, "")) == old and (f.default is None or _as_text(f.default) != old):
                data.pop(f.name)

    # Building -------------------------------------------------------------------------------

    @property
    def acting_field(self):
        return acting_unit_field(self.data.get("action"))

    @property
    def player_dice(self):
        return self.data.get("dice_mode") == "player"

    def _add_fields(self):
        if self.spec is None:
            return
        if self.acting_field == "attacker":
            self.left_out, self.spent = [], []
            choices = self._my_units("attacker")
            help_text = ATTACKER_HELP.get(self.data.get("action"), "")
            if self.left_out:
                help_text = f"Not offered: {', '.join(self.left_out)}"
            elif len(choices) == 1 and self.data.get("action") == "ba_indirect" and self.data.get("mode") != "air_strike":
                # An empty list, with the air strike that needs no gun of theirs one choice further down.
                help_text = "None of your units fires indirect. For an air strike, choose “Air strike” under Attack"
            elif len(choices) == 1 and self.spent:
                # An empty list that said nothing sent the player looking for the unit they had just fired with.
                help_text = f"Not offered: {', '.join(self.spent)}"
            self.fields["attacker"] = forms.CharField(
                label="Attacking unit", required=False, widget=forms.Select(choices=choices), help_text=help_text,
            )
            chosen = self.state.units.get(str(self.data.get("attacker", "")))
            if chosen is not None and self._routed(chosen):
                # That routed units hold their fire is the DH core rulebook's rule, not seed 003's: the app
                # neither refuses the attack nor invents a number for it, it only says so before the dice.
                self.fields["attacker"].warning = (
                    f"{chosen.label} has routed (3 pins). In the Disposable Heroes rulebook routed units do not "
                    "fire; seed 003 does not say. Resolve this only if your rulebook lets it fire.")
                said = ["id_attacker_warning"] + (["id_attacker_helptext"] if help_text else [])
                self.fields["attacker"].widget.attrs["aria-describedby"] = " ".join(said)
        weapon = self.state.weapons.get(str(self.data.get("weapon", "")))
        for f in self.spec.fields:
            after = asked_after(self.spec, f.name)
            if after and str(self.data.get(after[0], "")) != after[1]:
                self.data.pop(f.name, None)  # not asked yet, or not at all after a miss: the rule's default
                continue
            if f.weapon_has is not None and weapon is not None and not f.weapon_has(weapon):
                self.data.pop(f.name, None)  # a choice left from another weapon: the rule's default applies
                continue
            structure = self._structure() if f.type == "choice" and f.structure_allows else None
            if structure is not None and not any(f.structure_allows(structure, key) for key, _ in f.choices):
                self.data.pop(f.name, None)  # nothing there to choose between (no heavy weapon left): not asked
                continue
            if f.type == "unit_hits":
                self._add_unit_hits(f)
            else:
                self.fields[f.name] = self._field(f)

    def _field(self, f):
        kw = {"label": f.label, "required": False, "help_text": f.help}
        optional = not f.required or f.default is not None
        if f.type == "bool":
            return forms.CharField(widget=forms.RadioSelect(choices=YES_NO), **kw)
        if f.type == "count":
            return forms.CharField(widget=forms.RadioSelect(choices=self._count_choices()), **kw)
        if f.type in ("int", "float"):
            # Text, not number, as the dice: a number field sends a typed letter as "", and the rules then
            # asked for a value the player had typed. inputmode still brings up the phone's digits keypad.
            whole = f.type == "int"
            attrs = {"inputmode": "numeric" if whole else "decimal", "autocomplete": "off"}
            if whole and f.min is not None and f.min >= 0:
                attrs["pattern"] = "[0-9]*"
            return forms.CharField(widget=forms.TextInput(attrs=attrs), **kw)
        if f.type == "choice":
            choices = self._structure_choices(f) if f.structure_allows else f.choices
            if len(f.choices) <= 4 and not (optional and f.default is None):
                return forms.CharField(widget=forms.RadioSelect(choices=choices), **kw)
            return forms.CharField(widget=forms.Select(choices=_blank(choices, optional, "—")), **kw)
        if f.type == "unit":
            if f.name == acting_unit_field(self.spec.key):
                choices = self._my_units(f.name)
                if self.__dict__.pop("not_moving", None):
                    kw["help_text"] = ("Only a piece in its side's latest activation moves: a piece not offered is "
                                       "activated first (“Activate (move only)”)")
            else:
                units = self._pieces(f) if f.structure_allows and self._structure() else self._units(f.name)
                not_offered = self.__dict__.pop("not_offered", None)
                if not_offered:
                    kw["help_text"] = " ".join(filter(None, [f.help, f"Not offered: {', '.join(not_offered)}"]))
                # Never a unit chosen for the player: the first in the list may well be their own.
                choices = [("", "— none —" if optional else "Choose a unit"), *units]
            return forms.CharField(widget=forms.Select(choices=choices), **kw)
        if f.type == "units":
            if f.among:
                choices = self._among(f)
                if not choices:
                    kw["help_text"] = " ".join(filter(None, [f.help, "Tick the pieces above first."]))
            elif f.structure_allows and self._structure() is not None:
                choices = self._pieces(f)
                if not choices:
                    kw["help_text"] = f"Nobody is in {self._structure().label}"
            else:
                choices = self._units(f.name)
            return SplitChoice(widget=forms.CheckboxSelectMultiple(choices=choices), **kw)
        if f.type == "structure":
            # Only those the action can be made at (the rule's `fits`: a fire to pass through); the one
            # chosen (tapped on the map) stays, for the rule to say why not.
            fits, current = f.fits or (lambda s: True), str(self.data.get(f.name, ""))
            # A crew is fired at by the other side and walked out by its own (services refuses the rest).
            crew_of = {"dh_leave": True, **dict.fromkeys(services.DH_ATTACKS, False)}.get(self.spec.key)
            if crew_of is not None and len(self.sides) == 1:
                fits = (lambda s, fits=fits: fits(s) and (s.crew.side in self.sides) == crew_of)
            choices = [structure_choice(s) for s in sorted(self.state.structures.values(), key=lambda s: s.label)
                       if fits(s) or s.id == current]
            return forms.CharField(widget=forms.Select(choices=_blank(choices, True, "Choose a structure")), **kw)
        if f.type == "floor":
            return forms.CharField(widget=forms.Select(choices=self._floors(optional, f)), **kw)
        if f.type == "weapon":
            return forms.CharField(widget=forms.Select(choices=self._weapons(f.name)), **kw)
        return forms.CharField(**kw)

    def _repeat_long_choices(self):
        """A native select shows its choice on one line, cut off on a phone ("Grenadier Squad 1 (side
        B, 7 mode…"): a long choice is repeated in full under it (`chosen_in_full`)."""
        for name, field in self.fields.items():
            if type(field.widget) is forms.Select:
                label = _chosen_label(field.widget.choices, str(self.data.get(name, "")))
                field.chosen_in_full = label if len(label) > LONG_CHOICE else ""

    def _structure(self):
        return self.state.structures.get(str(self.data.get("structure", "")))

    def _pieces(self, f):
        """The units still fighting that the chosen structure allows (those inside it). One chosen that
        it does not (left from the last target) is let go while the player is still choosing; a form
        submitted with it keeps it, beside the rule's reason."""
        structure = self._structure()
        theirs = ENEMY_PIECE.get(self.spec.key) == f.name and len(self.sides) == 1
        live = sorted((u for u in self.state.units.values() if not (u.destroyed or u.rejoined)
                       and not (theirs and u.side in self.sides)), key=lambda u: (u.side, u.label))
        choices = [unit_choice(self.state, u) for u in live if f.structure_allows(structure, u)]
        offered = {c[0] for c in choices}
        chosen = [v for v in self.data.getlist(f.name) if v.strip()] if hasattr(self.data, "getlist") else []
        stale = [v for v in chosen if v not in offered]
        if stale and self.keep_invalid:
            choices += [unit_choice(self.state, self.state.units[v], f"not in {structure.label}")
                        if v in self.state.units else (v, v) for v in stale]
        elif stale:
            self.data.setlist(f.name, [v for v in chosen if v in offered])
        return choices

    def _structure_choices(self, f):
        """The choices the chosen structure allows. One it does not (a roof, left from the last target)
        gives way to the rule's default while the player is still choosing; a form submitted with it
        keeps it, beside the rule's reason."""
        structure = self._structure()
        if structure is None:
            return f.choices
        choices = tuple(c for c in f.choices if f.structure_allows(structure, c[0]))
        current = str(self.data.get(f.name, ""))
        labels = dict(f.choices)
        if current in labels and current not in {c[0] for c in choices}:
            if self.keep_invalid:
                choices += ((current, f"{labels[current]} ({structure.label} has none)"),)
            elif f.default is not None and f.structure_allows(structure, f.default):
                self.data[f.name] = _as_text(f.default)
            elif len(choices) == 1:
                # The default is not there (a bunker with machine guns only): the one left is the answer.
                self.data[f.name] = choices[0][0]
            else:
                self.data.pop(f.name, None)
        return choices

    def _count_choices(self):
        weapon = self.state.weapons.get(str(self.data.get("weapon", "")))
        choices = [("0", "No"), ("1", "Yes")]
        if weapon is not None and weapon.rof_code == "R" and weapon.barrels >= 3 and rotary_hits(weapon.barrels) > 1:
            # A rotary weapon scores its table's hits (LG-68), not one per barrel: no more can penetrate.
            # Counted, one is "1 hit": beside "3 hits" a "Yes" reads as "all of them".
            choices = [("0", "No"), ("1", "1 hit")] + [(str(n), f"{n} hits")
                                                       for n in range(2, rotary_hits(weapon.barrels) + 1)]
        return choices

    def _among(self, f):
        """The units ticked in the field `f` draws from, and any already ticked in `f` (a form sent with one
        not among them keeps it, for the rule to refuse beside the field)."""
        ticked = [v for name in (f.among, f.name) for v in self.data.getlist(name) if v in self.state.units] \
            if hasattr(self.data, "getlist") else []
        units = sorted({v: self.state.units[v] for v in ticked}.values(), key=lambda u: (u.side, u.label))
        return [unit_choice(self.state, u) for u in units]

    def _units(self, name):
        """Every unit still fighting; those in the chosen structure first. Only the enemy's where the
        field names the other side's piece (unless the player commands both sides)."""
        structure = str(self.data.get("structure", ""))
        theirs = ENEMY_PIECE.get(self.spec.key) == name and len(self.sides) == 1
        live = sorted((u for u in self.state.units.values() if not (u.destroyed or u.rejoined)
                       and not (theirs and u.side in self.sides)), key=lambda u: (u.side, u.label))
        notes = {}
        if self.spec.key == "lg_detect" and name == "target":
            # Only a piece that could have fired (not one a bunker without slits shuts in), as the attack
            # form offers no such attacker; one already chosen stays, beside the rule's reason.
            stuck = {u.id: cannot_fire_from(self.state, u) for u in live}
            current = str(self.data.get(name, ""))
            self.not_offered = [f"{u.label} ({stuck[u.id][0]})" for u in live if stuck[u.id] and u.id != current]
            notes = {u.id: stuck[u.id][0] for u in live if stuck[u.id] and u.id == current}
            live = [u for u in live if not stuck[u.id] or u.id in notes]
        inside = [unit_choice(self.state, u, notes.get(u.id, "")) for u in live
                  if structure and u.structure == structure]
        others = [unit_choice(self.state, u, notes.get(u.id, "")) for u in live
                  if not (structure and u.structure == structure)]
        if inside:
            where = self.state.structures[structure].label
            return [(f"In {where}", inside), ("Elsewhere", others)]
        return others

    def _my_units(self, name):
        """The units this player may act with: their side's, still fighting, not yet acted."""
        seq = self.state.sequence
        # A club that tracks orders with its own order dice switches the "has acted" check off.
        tracked = (self.battle.options or {}).get("track_actions", True)
        current = str(self.data.get(name, ""))
        choices = [("", "Choose a unit")]
        # Only the units that can make the action at all (the rule's `fits`: a tank ram's heavy tanks).
        fits = next((f.fits for f in self.spec.fields if f.name == name), None) or (lambda u: True)
        armed = self._armed() if name == "attacker" else None
        for u in sorted(self.state.units.values(), key=lambda u: (u.side, u.label)):
            if u.side not in self.sides or u.destroyed or u.rejoined or (not fits(u) and u.id != current):
                continue
            if armed is not None and not armed(u):
                # Chosen for another action, or before it: let go while the player is still choosing;
                # a form submitted with it keeps it, beside the rule's reason.
                if u.id == current and self.keep_invalid:
                    choices.append(unit_choice(self.state, u, "no weapon that can do this"))
                elif u.id == current:
                    self.data.pop(name, None)
                    current = ""
                continue
            action = self.data.get("action")
            if action == "move" and self.battle.ruleset == "lg" and rules.lg_sequence.cannot_move(self.state, u):
                # Refused by the rules (seed 002: a piece moves with its initiative); kept once chosen, saying so.
                if u.id == current:
                    choices.append(unit_choice(self.state, u, "not in an activation now"))
                else:
                    self.not_moving = True
                continue
            stuck = services.lg_cannot_fire_from(self.state, u, action) if self.battle.ruleset == "lg" else None
            if stuck:
                # Refused by services where it stands (in a bunker, in ruins): kept only once chosen, saying why;
                # left out, the field's help names it, or an empty list would leave the player guessing.
                if u.id == current:
                    choices.append(unit_choice(self.state, u, stuck[0]))
                elif not (tracked and (u.acted or u.id in seq.activated)) and not u.incapacitated:
                    self.__dict__.setdefault("left_out", []).append(f"{u.label} ({stuck[0]})")
                continue
            done = tracked and action not in services.USES_NO_ACTION and (u.acted or u.id in seq.activated) \
                and not (u.id in seq.team and action in services.ATTACKS)  # its fireteam's initiative
            # A morale check and a correction are not moving or firing: an incapacitated piece still has them.
            stunned = u.incapacitated and action not in services.FOLLOW_UPS | services.NOT_MOVING_OR_FIRING
            if not (done or stunned):
                choices.append(unit_choice(self.state, u, "routed" if self._routed(u) else ""))
            elif u.id == current:
                choices.append(unit_choice(self.state, u, "has acted" if done else "incapacitated"))
            else:
                self.__dict__.setdefault("spent", []).append(
                    f"{u.label} ({'has acted this turn' if done else 'incapacitated'})")
        if current and current not in {c[0] for c in choices}:
            unit = self.state.units.get(current)
            # Chosen, then lost to the other side's attack on another phone: say so, not "not yours".
            why = "destroyed" if unit is not None and unit.side in self.sides and unit.destroyed else "not yours"
            choices.append(unit_choice(self.state, unit, why) if unit else (current, current))
        return choices

    def _routed(self, unit):
        """Disposable Heroes: a unit's third pin is its rout (DH-6)."""
        return self.battle.ruleset == "dh" and unit.pins >= DH_PINS_TO_ROUT

    def _armed(self):
        """Whether a unit carries a weapon it can make this action with (the weapon field's `fits` and
        `fits_with`, as `_weapons` lists them; services refuses any other), or None where the unit's own
        weapons do not matter: no weapon asked for, one that may be left out (DH small arms), another
        piece's (a detection) or an air strike's aircraft."""
        weapon = next((f for f in self.spec.fields if f.type == "weapon"), None)
        if weapon is None or not weapon.required or weapon.default is not None or self.spec.key in WEAPON_OF \
                or self.data.get("mode") == "air_strike":
            return None
        fits = weapon.fits or (lambda w: True)
        fits_with = weapon.fits_with or (lambda w, inputs: True)
        catalogue = self.state.weapons
        return lambda u: any(k in catalogue and fits(catalogue[k]) and fits_with(catalogue[k], self.data)
                             for k in u.weapons)

    def _floors(self, optional, field=None):
        structure = self.state.structures.get(str(self.data.get("structure", "")))
        if structure is None:
            return [("", "Choose the structure first")]
        aimed = self.state.units.get(str(self.data.get(field.floor_of, ""))) if field and field.floor_of else None
        aimed = aimed if aimed is not None and aimed.structure == structure.id else None
        choices, current = [], str(self.data.get("floor", ""))
        for f in structure.floors:
            unit = self.state.units.get(f.unit) if f.unit else None
            who = f"{unit.label} (side {unit.side})" if unit else "empty"
            if aimed is None or f.level == aimed.floor:
                choices.append((str(f.level), f"{f.label.capitalize()} — {who}"))
            elif str(f.level) == current and self.keep_invalid:
                choices.append((current, f"{f.label.capitalize()} — {aimed.label} is not there"))
            elif str(f.level) == current:
                # Left from before the unit was chosen: the unit's floor is the one aimed at.
                self.data.pop("floor", None)
                current = ""
        if current and current not in {c[0] for c in choices}:
            choices.append((current, f"Floor {current} (not in {structure.label})"))
        return _blank(choices, optional, "— not chosen —")

    def _weapons(self, name):
        """The acting unit's weapons that can make this action (the rule's `fits`), or for a detection
        the weapons of the piece that fired; before a unit is chosen, those the player's units carry (the
        other side's, for a detection); the whole catalogue's for an air strike."""
        carried = ()
        owner = WEAPON_OF.get(self.spec.key) or self.acting_field or "attacker"
        unit = self.state.units.get(str(self.data.get(owner, "")))
        air = self.data.get("mode") == "air_strike"
        if unit is not None and not air:
            carried = unit.weapons
        # The acting unit fires only what it carries (services refuses the rest): one that carries
        # nothing was offered the whole catalogue, and then told it did not carry what it chose.
        armed = bool(carried) or (unit is not None and not air and self.spec.key not in WEAPON_OF)
        spec = next((f for f in self.spec.fields if f.name == name), None)
        fits = (spec and spec.fits) or (lambda w: True)
        # …and, where it depends on them, with the other inputs as chosen (ba_indirect's mode).
        fits_with = (spec and spec.fits_with) or (lambda w, inputs: True)
        if armed:
            listed = carried
        elif unit is None and not air and (self.acting_field or self.spec.key in WEAPON_OF):
            # No unit chosen yet: what the player's own units carry (for a detection, what the other side's
            # carry), not a club library's every weapon.
            live = [u for u in self.state.units.values() if not u.destroyed]
            if self.spec.key in WEAPON_OF:
                live = [u for u in live if u.side not in self.sides] or live
            else:
                live = [u for u in live if u.side in self.sides]
            listed = sorted({k for u in live for k in u.weapons if k in self.state.weapons},
                            key=lambda k: self.state.weapons[k].name)
        else:
            listed = sorted(self.state.weapons, key=lambda k: self.state.weapons[k].name)
        choices = [(k, self.state.weapons[k].name) for k in listed
                   if k in self.state.weapons and fits(self.state.weapons[k])
                   and fits_with(self.state.weapons[k], self.data)]
        current = str(self.data.get(name, ""))
        if carried and len(choices) == 1 and (not current or current != choices[0][0] and not self.keep_invalid):
            self.data[name] = current = choices[0][0]  # nothing to choose: the one weapon of the unit that can
        if current and current not in {c[0] for c in choices}:
            weapon = self.state.weapons.get(current)
            why = "not carried" if weapon and current not in carried and armed else "cannot do this"
            choices.append((current, f"{weapon.name} ({why})" if weapon else current))
        blank = "Choose a weapon" if choices or not armed else f"{unit.label} has no weapon that can do this"
        return _blank(choices, True, blank)

    def _add_unit_hits(self, f):
        structure = self.state.structures.get(str(self.data.get("structure", "")))
        if not getattr(self, "unit_hits_hint", ""):  # the first such field says it for all
            self.unit_hits_hint = "" if structure else f"{f.label}: choose the building first"
        if structure is None:
            return
        what = "Pins" if f.name == "pins" else "Hits"
        targets = [(u, f"{what} on {self.state.units[u].label}") for u in
                   (fl.unit for fl in structure.floors if fl.unit) if u in self.state.units]
        if not targets and f.name != "pins":  # the building's own die is only for an empty one (A-BA-3)
            targets.append(("building", f"Hits on {structure.label} itself (empty building)"))
        for i, (key, label) in enumerate(targets):
            self.fields[f"{f.name}{SUBFIELD}{key}"] = forms.CharField(
                label=label, required=False, help_text=f.help if i == 0 else "",
                widget=forms.TextInput(attrs={"inputmode": "numeric", "pattern": "[0-9]*", "autocomplete": "off"}),
            )

    # Reading --------------------------------------------------------------------------------

    def inputs(self):
        return raw_inputs(self.spec, self.data)

    def attacker(self):
        return str(self.data.get("attacker", "")).strip() or None if self.acting_field == "attacker" else None

    def dice_values(self):
        return dice_values(self.data) if self.player_dice else None

    def complete(self):
        """Every required input is filled in: worth asking the rules for odds or dice."""
        if self.spec is None:
            return False
        inputs = self.inputs()
        if self.data.get("action") in services.ATTACKS and not self.attacker():
            return False
        return all(f.name in inputs for f in self.spec.fields if f.required and f.default is None) \
            and unanswered(self.spec, self.data) is None

    # Errors ---------------------------------------------------------------------------------

    def add_rules_error(self, error):
        """Put a RulesError's message next to the input it names."""
        name = str(error.field or "")
        if name.startswith("dice[") and name.endswith("]") and name[5:-1].isdigit():
            index = int(name[5:-1])
            row = next((r for r in self.dice if r.index == index), None)
            if row is not None:
                row.error = error.message
                return
            self.dice_hint, self.dice_error = error.message, True
            return
        if name == "attacker" and "attacker" not in self.fields and self.acting_field in self.fields:
            name = self.acting_field
        name = name.replace(".", SUBFIELD)
        if name not in self.fields:
            name = name.split(SUBFIELD)[0]
        if name in self.fields and name not in ("client_token",):
            self.add_error(name, error.message)
        else:
            self.add_error(None, error.message)

    def fields_html(self):
        """Every visible input but the dice mode (drawn with the dice), each with its label, help,
        warning and errors, as the attack form shows them. Drawn here rather than by a partial per
        field: its lookups and tags were three quarters of the time the form took to draw, and the
        form is redrawn with every attack's answer and every change of an input."""
        return mark_safe("".join(_field_html(f) for f in self.visible_fields() if f.name != "dice_mode"))

    def has_problems(self):
        return bool(self.errors) or any(r.error for r in self.dice)

    def problems(self):
        """Every message the form shows, for the summary beside the button."""
        messages = [m for errors in self.errors.values() for m in errors]
        return messages + [r.error for r in self.dice if r.error] + ([self.dice_hint] if self.dice_error else [])


CHOICE_GROUPS = ("radioselect", "checkboxselectmultiple")  # a fieldset with a legend, not a label


def _field_html(field):
    kind, errors, auto_id = field.widget_type, field.errors, field.auto_id
    if kind in CHOICE_GROUPS:
        described = field.aria_describedby
        described = f' aria-describedby="{esc(described)}"' if described else ""
        control = (f'\n    <fieldset class="choice-group"{described}><legend>{esc(field.label)}</legend>{esc(field)}'
                   "</fieldset>\n  ")
    else:
        chosen = getattr(field.field, "chosen_in_full", "")
        chosen = f'<p class="chosen-in-full">{esc(chosen)}</p>' if chosen else ""
        control = f"\n    {esc(field.label_tag())}\n    {esc(field)}\n    {chosen}\n  "
    help_text, warning = field.help_text, getattr(field.field, "warning", "")
    return "".join((
        f'\n<div class="field field-{esc(kind)}{" has-error" if errors else ""}" id="field-{esc(field.name)}">\n  ',
        control, "\n  ",
        f'<p class="help" id="{esc(auto_id)}_helptext">{esc(help_text)}</p>' if help_text else "", "\n  ",
        f'<p class="field-warning" id="{esc(auto_id)}_warning">{esc(warning)}</p>' if warning else "", "\n  ",
        f'<div id="{esc(auto_id)}_error">'
        + "".join(f'<p class="field-error" role="alert">{esc(e)}</p>' for e in errors) + "</div>" if errors else "",
        "\n</div>\n",
    ))


def _blank(choices, optional, label):
    return [("", label), *choices] if optional else list(choices)


def _as_text(value):
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def dice_rows(plan_next_die, values):
    """The dice fields to show: whole groups (both d6 of a 2D6) as the rules ask for them, up to the
    first group not fully entered. `plan_next_die(prefix)` returns the DieSpec after `prefix`;
    `values` are the fields as typed ("" for one left empty: `dice_entered`)."""
    rows, used = [], 0
    while used <= len(values) and len(rows) < MAX_DICE:
        spec = plan_next_die(values[:used])
        if spec is None:
            break
        group = [rules.DieSpec(spec.purpose, spec.sides, j, spec.count) for j in range(spec.index, spec.count + 1)]
        entered = values[used:used + len(group)]
        for k, die in enumerate(group):
            rows.append(DieRow(used + k, die.label, die.sides, entered[k] if k < len(entered) else "",
                               short="" if k == 0 else f"{ordinal(die.index)} d{die.sides}"))
        bad = [r for r in rows[-len(group):] if r.value and not _face(r.value, r.sides)]
        for r in bad:
            r.error = f"{r.label}: {r.value} is not a d{r.sides} result"
        if len(entered) < len(group) or "" in entered or bad:
            break
        used += len(group)
    # A wrong die first (so it can be typed again), else the next one to enter.
    focus = next((r for r in rows if r.error), None) or next((r for r in rows if not r.value), None)
    if focus is not None:
        focus.focus = True
    return rows


def _face(value, sides):
    try:
        return 1 <= int(str(value).strip()) <= sides
    except ValueError:
        return False
