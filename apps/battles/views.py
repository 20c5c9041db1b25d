"""The battle screen: one page (battles/battle.html) and the HTMX endpoints that refresh its panels.

Every change goes through `services`; these views only read, render and redirect. A request that
changes the battle answers an HTMX caller with the panels that changed (out-of-band swaps, the same
bundle the poll sends other phones) and a plain browser with a 303 back to the page.
"""

import heapq
import math
import re
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from fractions import Fraction
from types import MappingProxyType, SimpleNamespace
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist
from django.db import connection, transaction
from django.db.models import BooleanField, ExpressionWrapper, Q
from django.http import Http404, HttpResponse, HttpResponseForbidden, QueryDict
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils import timezone
from django.utils.html import conditional_escape
from django.utils.safestring import mark_safe
from django.utils.text import capfirst
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from apps import rules
from apps.battles import forms as battle_forms
from apps.battles import services, watch
from apps.battles import snapshot as snap
from apps.battles.models import Battle, BattleStatus
from apps.campaigns import permissions
from apps.campaigns.models import Role
from apps.structures.models import Floor
from apps.structures.views import free_riflemen, openings_by_side, weapons_lost
from config.responses import post_or_back, refused, see_other
from config.widgets import esc

PLAIN = "text/plain; charset=utf-8"  # an htmx caller's refusal: the connection notice shows its words
# The page opens with the newest entries only; a long battle must open as fast as a short one.
LOG_PAGE_SIZE = 50
TURN_BUTTONS = frozenset({"start", "end_turn", "upkeep", "lg_initiative", "lg_pass", "lg_activate", "lg_team_done"})
# Inputs that belong to one structure: a new target clears them.
PER_STRUCTURE = ("floor", "target", "targets", "side", "caught", "eliminated")


# Entries the app writes itself, not the rules: their tags in the log.
APP_ACTIONS = MappingProxyType({"setup": "Set up", "session_start": "Session starts", "start": "Battle starts",
                                "undo": "Undo", "finish": "Battle ends", "reopen": "Reopened", "note": "Note"})


def action_label(action):
    spec = rules.ACTIONS.get(action)
    if spec is not None:
        return spec.label
    return APP_ACTIONS.get(action) or action.replace("_", " ").capitalize()


@dataclass(frozen=True)
class Viewer:
    """Who is looking, known by id so the poll can build one from its token alone."""

    user_id: int | None
    role: str | None
    sides: frozenset = frozenset()

    @property
    def organiser(self):
        return self.role == Role.ORGANISER

    @property
    def plays(self):
        return bool(self.sides)


@dataclass
class Board:
    """A battle's structures, units and armies as rows (for the page) and as rules state (for the form)."""

    snapshot: object
    structures: list
    units: list
    armies: list
    map: dict = field(default_factory=dict)

    def structure(self, sid):
        """The structure for the card, with its floors' openings grouped by side (only the card shows them)."""
        structure = next((s for s in self.structures if s.sid == sid), None)
        if structure is not None:
            for floor in structure.floor_rows:
                floor.opening_groups = openings_by_side(floor.opening_rows)
        return structure


# Reading the battle --------------------------------------------------------------------------

def scoped_battle(request, pk):
    return permissions.battle_or_404(request.user, pk)


def load_board(battle, snapshot=None):
    """Every structure (floors, openings, occupants), unit and army, in a fixed number of queries; or
    from the rows of a `snapshot` an action has just written."""
    if snapshot is None:
        snapshot = snap.load(battle)
    else:
        snap.cache_occupants(snapshot.structures.values(), snapshot.units.values())
    structures = sorted(snapshot.structures.values(), key=lambda s: (s.name, s.pk))
    floors = {}
    # Each structure's links, reversed once for all (the tags, three a structure, took a fifth of drawing
    # the map and the structure list).
    page, card, detail = (reverse("battle", args=[battle.pk]), reverse("battle_card", args=[battle.pk, "s0"]),
                          reverse("structure", args=[0]))
    for s in structures:
        s.sid = snap.structure_id(s)
        s.page_url, s.card_url = page, card.replace("/s0/", f"/{s.sid}/")
        s.detail_url = detail.replace("/0/", f"/{s.pk}/")
        s.weapons_lost = weapons_lost(s)
        s.riflemen = free_riflemen(s)
        for floor in s.floor_rows:
            # snapshot.load sets the occupants it found; an empty floor must be known empty, not looked up.
            if not Floor.occupant.is_cached(floor):
                Floor.occupant.related.set_cached_value(floor, None)
            floors[floor.pk] = floor
    units = sorted(snapshot.units.values(), key=lambda u: (u.army.side, u.name, u.pk))
    for u in units:
        u.uid = snap.unit_id(u)
        if u.floor_id in floors:
            u.floor = floors[u.floor_id]
            u.place = f"in {u.floor.structure.name}, {u.floor.label}"
        elif u.x is not None:
            u.place = f"at {float(u.x):g}″, {float(u.y):g}″"
        elif u.rejoined and f"s{u.crew_of_id}" in snapshot.structures:
            u.place = f"back in {snapshot.structures[f's{u.crew_of_id}'].name} as its crew"
        else:
            u.place = ""
    armies = sorted(snapshot.armies.values(), key=lambda a: (a.side, a.name))
    for army in armies:
        army.unit_rows = [u for u in units if u.army_id == army.pk]
    return Board(snapshot, structures, units, armies, map_of(battle, structures, units))


def viewer_for(user, battle, armies):
    role = getattr(battle, "viewer_role", None) or permissions.role_in(user, battle.club_id)
    return Viewer(user.pk, role, permissions.sides_commanded(user.pk, role, armies))


def map_of(battle, structures, units):
    """The table drawn to scale in inches: footprints centred on (x, y), rotated clockwise."""
    sized_fires = getattr(battle, "ruleset", "") != "ba"
    for s in structures:
        cx, cy, w, d = float(s.x), float(s.y), float(s.width), float(s.depth)
        held = [f.occupant for f in s.floor_rows if getattr(f, "occupant", None) is not None and not f.occupant.destroyed]
        inside = {}  # side: units (a Counter of these, checking its argument's type, was a tenth of the map)
        for u in held:
            inside[u.army.side] = inside.get(u.army.side, 0) + 1
        # A side's badge is ringed when a unit of it inside is pinned: the map showed pins only for a
        # Disposable Heroes crew, and a pinned squad looked the same as a fresh one until its card was opened.
        pinned = {u.army.side for u in held if u.pins}
        states = ["st-collapsed" if s.collapsed else "st-destroyed" if s.destroyed else
                  "st-damaged" if s.damage_taken else "st-intact"]
        states += [name for name, on in (("st-burning", s.burning), ("st-impassable", s.impassable),
                                         ("st-fort", s.sheet_id is not None)) if on]
        crew = crew_words(s.crew_routed, s.crew_men, s.crew_pins) if s.crewed else ""
        if crew:
            states.append("st-routed" if crew == "routed" else "st-empty" if crew == "0" else "st-pinned")
        turn = math.radians(float(s.rotation))
        cos, sin = math.cos(turn), math.sin(turn)
        half_d = (abs(w * sin) + abs(d * cos)) / 2
        room = NameRoom(tuple(side for side in ("A", "B") if side in inside), crew, s.burning)
        spots, badge_spots, marks = name_room(cx, cy, half_d, room)
        label = s.name if len(s.name) <= NAME_CHARS else s.name[:NAME_CHARS - 1] + "…"
        damage = damage_words(s.damage_taken, s.damage_percent, s.collapsed)
        s.map = Piece(
            cx=cx, cy=cy, fire_y=cy - MARK_OFF, crew_y=cy + MARK_OFF, x0=cx - w / 2, y0=cy - d / 2, w=w, d=d,
            name_x=cx, name_y=spots[0], name=label, label=label, half_d=half_d, room=room, name_spots=spots,
            corners=[(cx + x * cos - y * sin, cy + x * sin + y * cos)
                     for x, y in ((-w / 2, -d / 2), (w / 2, -d / 2), (w / 2, d / 2), (-w / 2, d / 2))],
            rotation=float(s.rotation),
            classes=" ".join(states),
            damage=damage, damage_box=damage_box(cx, cy, damage),
            # A Bolt Action fire has no size (seed 001: the building is on fire, all of it): its diamond
            # carries no number, where "36" read as a fire that could grow.
            fire=(f"{float(s.fire_size):g}" if sized_fires else "") if s.burning else None, crew=crew,
            badges=[SimpleNamespace(side=b.side, n=inside[b.side], x=b.x, y=b.y, pinned=b.side in pinned)
                    for b in badge_spots], marks=marks,
            title=", ".join(describe(s, sized_fires) + [f"{u.name} pinned ({u.pins})" for u in held if u.pins]),
        )
    # Initials on each dot: a phone shows no hover title, and a dot alone does not say whose it is.
    # Disposable Heroes: a unit's third pin is its rout (DH-6); Bolt Action's pins do not rout. (The
    # campaign's map has no battle, and its units no pins: they are one battle's.)
    routs = getattr(battle, "ruleset", "") == "dh"
    covered = place_names(structures, float(battle.table_width), float(battle.table_depth))
    # The dots keep off the names, badges, fires, crews' marks and damage figures, not the names off the dots
    # (`name_places`): a dot moved an inch or two still stands by its spot, where a name pushed off would
    # lose its building.
    on_table = fan_out([SimpleNamespace(x=float(u.x), y=float(u.y), side=u.army.side, name=u.name,
                                        initials="".join(word[0] for word in u.name.split()[:2]).upper(),
                                        pins=u.pins, routed=routs and u.pins >= rules.tables.DH_PINS_TO_ROUT)
                        for u in units if u.x is not None and u.y is not None and not u.destroyed],
                       float(battle.table_width), float(battle.table_depth),
                       keep_clear=labels([s.map for s in structures]))
    # Each piece's tap shape is worked out when the piece is drawn: an answer draws only the pieces
    # that changed. A shape depends on the footprints alone, which no log entry changes: once worked
    # out, it serves every page and answer of that table (`layout_reach`).
    reach = layout_reach(tuple((s.map.cx, s.map.cy, s.map.w, s.map.d, s.map.rotation) for s in structures),
                         float(battle.table_width), float(battle.table_depth))
    for index, s in enumerate(structures):
        s.map.reach, s.map.reach_index = reach, index
    return {"width": float(battle.table_width), "depth": float(battle.table_depth), "units": on_table,
            "units_svg": units_svg(on_table), "zones": deployment_zones(battle), "covered": covered,
            "grid_x": range(6, int(battle.table_width), 6), "grid_y": range(6, int(battle.table_depth), 6),
            "crews": any(s.crewed for s in structures), "sized_fires": sized_fires}  # the key explains the crew marks only where they can show


@dataclass(frozen=True)
class NameRoom:
    """What of a structure's state moves its name's spots and the units' dots: the sides holding it (their
    badges), a crew's mark under its middle (its words: "1 pin", "routed", "0", or ""), its fire's diamond
    above. A log entry changes these, never its footprint."""

    sides: tuple
    crew: str
    burning: bool


def crew_words(routed, men, pins):
    """A crew's mark on the map. Words, not P1 and R: a unit's initials (the PaK 40's "P4") read as a pin
    count beside them. "0": nobody left inside, the crew fell to the last man or walked out in good order
    (Crew leaves); neither routed, and the card says "Routed: no": the map must not say R."""
    return "routed" if routed else "0" if not men else f"{pins} pin{'s' * (pins != 1)}" if pins else ""


# How far a fire's diamond and a crew's mark stand above and below a footprint's middle; the diamond's
# half diagonal (2.3 inches a side) and its 0.2-inch stroke; a crew mark's size (battle.css).
MARK_OFF, FIRE_HALF, CREW_SIZE = 2.4, 1.77, 1.6


def name_room(cx, cy, half_d, room):
    """A name's spots (below the footprint, above it, a line lower than below), where the badges of who
    holds it stand, and the boxes of its fire's diamond and crew's mark, which the units' dots keep off
    as they do its name and badges (`labels`): a dot beside a pillbox hid its crew's "2 pins". For a footprint
    reaching `half_d` inches above and below its middle."""
    # Its name just below the footprint as rotated, so a phone shows what is what without a tap.
    # Under a footprint too small to hold them (a foxhole, a rifle pit), the badges of who is
    # inside and the crew's mark ("1 pin") would cover the name: it goes below them.
    # (Clear of the badges' foot, 3.5 inches down, and of a crew's mark, by half a name with its halo.)
    below = max(half_d + 1.3, 4.7 if room.sides or room.crew else 0)
    # Where that would overprint something, above the footprint, clear of its fire's diamond (its
    # top 2.4 + 1.63 inches up); else a line lower than below.
    above = max(half_d + 1.3, 5.1 if room.burning else 0)
    badges = [SimpleNamespace(side=side, x=cx + (-1.6 if side == "A" else 1.6), y=cy + 2.2) for side in room.sides]
    marks = []
    if room.burning:
        marks.append((cx - FIRE_HALF, cy - MARK_OFF - FIRE_HALF, cx + FIRE_HALF, cy - MARK_OFF + FIRE_HALF))
    if room.crew:
        half_w = sum(map(NAME_EMS.__getitem__, room.crew)) * CREW_SIZE / 2 + UNIT_MARK_HALO / 2
        half_h = NAME_LINE_EMS * CREW_SIZE / 2 + UNIT_MARK_HALO / 2
        marks.append((cx - half_w, cy + MARK_OFF - half_h, cx + half_w, cy + MARK_OFF + half_h))
    return (round(cy + below, 2), round(cy - above, 2), round(cy + below + NAME_LINE, 2)), badges, marks


def damage_words(taken, percent, collapsed):
    """A structure's damage figure on the map ("40%"): none undamaged, nor on rubble (its hatching says it)."""
    return f"{percent}%" if taken and not collapsed else ""


DAMAGE_SIZE = 2.1  # a damage figure's height in inches (`.map text`, battle.css)


def damage_box(cx, cy, damage):
    """The box of a damage figure drawn on a footprint's middle, its halo included, or None: the units'
    dots keep off it as off a crew's mark (`labels`), or a squad standing on a pillbox hid its "40%"."""
    if not damage:
        return None
    half_w = sum(NAME_EMS.get(ch, WIDEST_EM) for ch in damage) * DAMAGE_SIZE / 2 + UNIT_MARK_HALO / 2
    half_h = NAME_LINE_EMS * DAMAGE_SIZE / 2 + UNIT_MARK_HALO / 2
    return (cx - half_w, cy - half_h, cx + half_w, cy + half_h)


ZONE_LABEL_SIZE = 1.3  # a deployment zone's label: height in inches (battle.css)


def deployment_zones(battle):
    """The deployment zones of the scenario the battle was started from, as the builder draws them,
    each with its label placed. Drawn for the whole battle, faintly and under everything else, not only
    while it is set up: units held in reserve come on later from their side's edge, which the zones
    show. A map that changed its look when the battle starts would also go stale on the other phones:
    starting a battle changes no structure or unit, so their polls redraw no map.

    A campaign's session shows the campaign's own copy of the zones, taken when it was started from its
    scenario (as its ground and forces are), so every session has them and a designer's later change to
    the scenario moves none; a battle started from a scenario shows the scenario's as they stand.

    The campaign and scenario come with the battle row (`snapshot.member_battle` joins them; the polls
    and the spectator page select them): no query of their own. (An undo's or a turn's answer reads the
    battle row again, which drops them: the one needed is read once more there, as the breadcrumbs' and
    header's did already.) The campaign page's table (no campaign or scenario of its own here) and a
    battle started from neither have no zones."""
    if getattr(battle, "campaign_id", None):
        owner = battle.campaign
    elif getattr(battle, "scenario_id", None):
        owner = battle.scenario
    else:
        return []
    zones = []
    for zone in owner.deployment_zones or []:
        try:
            side = str(zone["side"])
            x, y, w, d = (float(zone[k]) for k in ("x", "y", "width", "depth"))
        except (KeyError, TypeError, ValueError):
            continue  # as the builder's map skips a zone it cannot read (an imported scenario's)
        if not (w > 0 and d > 0):
            continue
        zones.append(zone_piece(side, x, y, w, d, float(battle.table_width), float(battle.table_depth)))
    return zones


def zone_piece(side, x, y, w, d, table_w, table_d):
    """A zone's rectangle and its label: along the table edge the zone runs by (that side's own edge),
    inside it, so the words sit by the edge rather than in the zone's middle, where the ground's
    structures stand over them; turned a quarter in a strip down a side edge too narrow for the words."""
    label = f"Side {side} deploys"
    inset = min(ZONE_LABEL_SIZE / 2 + 0.6, d / 2)
    lx, ly, turn = x + w / 2, y + d / 2, 0
    if len(label) * ZONE_LABEL_SIZE * 0.6 <= w or d <= w:
        if y <= 0:
            ly = y + inset
        elif y + d >= table_d:
            ly = y + d - inset
    else:
        inset, turn = min(ZONE_LABEL_SIZE / 2 + 0.6, w / 2), -90
        if x <= 0:
            lx = x + inset
        elif x + w >= table_w:
            lx = x + w - inset
    g = _g
    return SimpleNamespace(
        side=side, x=g(x), y=g(y), width=g(w), depth=g(d), label=label, label_x=g(round(lx, 2)),
        label_y=g(round(ly, 2)), turn=turn, title=f"{label} here: {g(w)}″ × {g(d)}″ from ({g(x)}″, {g(y)}″)")


# The map's pieces are drawn here, not by template tags: a piece is a dozen numbers and a few words,
# and the tags (a filter for each number) took 2.5 ms a page for the demo's sixteen structures, 30 for
# two hundred. Numbers print as "%g" does (30.0 as 30), words escaped.

class Piece(SimpleNamespace):
    """A structure's piece of the map: where and how it is drawn (`map_of`), and `svg`, drawn only if it
    is (a poll's answer draws only the pieces that changed)."""

    @cached_property
    def svg(self):
        return piece_svg(self)

    @cached_property
    def hit(self):
        return self.reach.shape_at(self.reach_index)

    @property
    def hit_svg(self):
        """The shape that takes the piece's taps, drawn apart from the piece, under every piece (battle.html)."""
        return mark_safe(f'<polygon class="map-hit" points="{" ".join(f"{_g(x)},{_g(y)}" for x, y in self.hit)}"></polygon>')

    @property
    def cover_svg(self):
        """Its footprint again, taking its taps over a neighbour's name drawn across it (battle.html)."""
        g = _g
        turn = f' transform="rotate({g(self.rotation)} {g(self.cx)} {g(self.cy)})"' if self.rotation else ""
        return mark_safe(f'<rect class="map-hit" x="{g(self.x0)}" y="{g(self.y0)}" width="{g(self.w)}" '
                         f'height="{g(self.d)}"{turn}></rect>')


def piece_svg(m):
    """One structure on the map (inside its link or group): its footprint to scale and rotated, its
    name, damage, fire, crew and who holds it. The shape a tap hits is drawn apart (`Piece.hit_svg`)."""
    g, e = _g, conditional_escape
    cx, cy = g(m.cx), g(m.cy)
    turn = f' transform="rotate({g(m.rotation)} {cx} {cy})"' if m.rotation else ""
    out = [f"<title>{e(m.title)}</title>",
           f'<rect class="map-footprint" x="{g(m.x0)}" y="{g(m.y0)}" width="{g(m.w)}" height="{g(m.d)}"{turn}></rect>']
    if m.name:
        out.append(f'<text class="map-name" x="{g(m.name_x)}" y="{g(m.name_y)}">{e(m.name)}</text>')
    if m.damage:
        out.append(f'<text class="map-damage" x="{cx}" y="{cy}">{e(m.damage)}</text>')
    if m.fire is not None:
        out.append(f'<g class="map-fire"><rect x="-1.15" y="-1.15" width="2.3" height="2.3" rx="0.3" '
                   f'transform="translate({cx} {g(m.fire_y)}) rotate(45)"></rect>'
                   f'<text x="{cx}" y="{g(m.fire_y)}">{e(m.fire)}</text></g>')
    if m.crew:
        out.append(f'<text class="map-crew" x="{cx}" y="{g(m.crew_y)}">{e(m.crew)}</text>')
    out += [f'<g class="map-badge side-{e(b.side)}{" is-pinned" if b.pinned else ""}"><circle cx="{g(b.x)}" '
            f'cy="{g(b.y)}" r="1.3"></circle><text x="{g(b.x)}" y="{g(b.y)}">{b.n}</text></g>' for b in m.badges]
    return mark_safe("\n        ".join(out))


def units_svg(pieces):
    """The units standing on the table: a dot in their side's colour, initials on it, the name for a
    screen reader and as a hover title; a pinned or routed unit's "1 pin" or "routed" beside it, as a
    crew's, where `fan_out` found it room. A dot drawn off its spot by more than its radius, which no
    longer covers where the unit stands, has a line to it from a point there: the demo's mortar team,
    three inches below a bunker, had its dot pushed off the bunker's name up level with the bunker's
    edge, and nothing said it stood farther off. The lines go under every dot, so none crosses a unit's
    initials."""
    e = conditional_escape

    def leader(u):
        far = math.dist(u.spot, (u.x, u.y))
        if far <= 1:
            return ""
        # A ring on the spot, the line from its edge: a spot on a name leaves the letter under it readable.
        (sx, sy), side = u.spot, e(u.side)
        ex, ey = round(sx + (u.x - sx) * SPOT_RING / far, 2), round(sy + (u.y - sy) * SPOT_RING / far, 2)
        return (f'<line class="map-unit-leader side-{side}" x1="{_g(ex)}" y1="{_g(ey)}" x2="{_g(u.x)}" '
                f'y2="{_g(u.y)}" aria-hidden="true"></line><circle class="map-unit-spot side-{side}" cx="{_g(sx)}" '
                f'cy="{_g(sy)}" r="{SPOT_RING}" aria-hidden="true"></circle>')

    def unit(u):
        said, state = ("routed", " is-routed") if u.routed else \
            (f"pinned {u.pins}", " is-pinned") if u.pins else ("", "")
        who = f"{e(u.name)} (side {e(u.side)}{', ' + said if said else ''})"
        return (f'<circle class="map-unit side-{e(u.side)}{state}" cx="{_g(u.x)}" cy="{_g(u.y)}" r="1" role="img" '
                f'aria-label="{who}"><title>{who}</title></circle>'
                f'<text class="map-unit-initials" x="{_g(u.x)}" y="{_g(u.y)}" aria-hidden="true">{e(u.initials)}</text>'
                + (f'<text class="map-unit-state" x="{_g(u.mark_x)}" y="{_g(u.mark_y)}" aria-hidden="true">'
                   f'{u.mark}</text>' if u.mark else ""))
    return mark_safe("".join(leader(u) for u in pieces) + "".join(unit(u) for u in pieces))


def _g(number):
    return f"{number:g}"


def unit_mark(pins, routed):
    """The word beside a unit's dot: "1 pin", "2 pins", "routed", or none."""
    return "routed" if routed else f"{pins} pin{'s' * (pins != 1)}" if pins else ""


# A unit's dot as the map draws it (battle.css): radius 1 and half its 0.35 ring, rounded up; its mark's
# size and halo (`.map text`'s stroke).
UNIT_DOT, UNIT_MARK_SIZE, UNIT_MARK_HALO = 1.2, 1.3, 0.35
SPOT_RING = 0.5  # the radius of the ring on the spot of a unit whose dot is drawn off it (`units_svg`)


def fan_out(pieces, table_w, table_d, keep_clear=()):
    """Units standing on one spot (a crew's sections that left their bunker, a squad and the one that
    fled beside it) or nearly would draw as one dot, and a later dot over an earlier one's "1 pin": a
    player could not tell which was pinned. Each unit keeps its spot where its dot and its mark fit
    there clear of every other dot and mark; else it is drawn on the nearest ring around its spot, a
    dot's width apart, where both fit on the table. Nor does a dot or mark cover the structures' names,
    badges and marks, the boxes `keep_clear` (`labels`): a "PF" dot hid the Brick townhouse's "2", a
    "1 pin" ran into its name. A spot inside such a box, or a mark's, is also left straight out of it
    on each side, where that is nearer than a ring: a name is long and low, and the rings' first
    place straight up or down is 3.6 inches off. Its title keeps its name; `units_svg` draws a line to
    it from a spot it no longer covers. Sets each piece's x, y and its mark (`unit_mark`) and where that
    goes, `spot`, where it stands, and `searched`, how far from it a place was looked for."""
    crowd = _Crowd((0, 0, table_w, table_d))
    for box in keep_clear:
        crowd.add_mark(box)
    # The spots of the units that will stay on them (no earlier one's dot there) are held from the
    # first: an earlier unit's mark must not push a later one off the spot where it stands.
    for index, piece in enumerate(pieces):
        piece.mark = unit_mark(piece.pins, piece.routed)
        if crowd.dot_free(piece.x, piece.y, None):
            crowd.add_dot(piece.x, piece.y, index)
    for index, piece in enumerate(pieces):
        half_w = sum(map(NAME_EMS.__getitem__, piece.mark)) * UNIT_MARK_SIZE / 2 + UNIT_MARK_HALO / 2
        crowd.remove_dot(piece.x, piece.y, index)
        here = (piece.x, piece.y)
        spots = _unit_spots(*here, table_w, table_d)
        boxes = crowd.boxes_met(*here)
        if boxes:  # each list nearest first
            spots = heapq.merge(_escapes(*here, boxes, table_w, table_d), spots, key=lambda p: math.dist(p, here))
        for x, y in spots:
            if crowd.dot_free(x, y, index):
                place = next(((x, y, m) for m in _mark_places(x, y, half_w)
                              if not piece.mark or crowd.mark_free(m[2], index)), None)
                if place:
                    # The places are tried nearest first: none farther off than this one was looked at.
                    piece.searched = math.dist((x, y), here)
                    break
        else:  # a table packed tighter than any battle: its spot, and its mark under it
            place = (piece.x, piece.y, _mark_places(piece.x, piece.y, half_w)[0])
            piece.searched = math.inf
        piece.spot = (piece.x, piece.y)
        piece.x, piece.y, (piece.mark_x, piece.mark_y, box) = place
        crowd.add_dot(piece.x, piece.y, index)
        if piece.mark:
            crowd.add_mark(box)
    return pieces


def labels(pieces, places=None, rooms=None, damages=None):
    """The boxes of the structures' names, side badges, fires, crews' marks and damage figures as drawn,
    which the units keep off (`fan_out`); or, given `places` and `rooms` (`name_places`, `name_room`) and
    `damages` (some pieces' damage boxes by index), as they were drawn before a change."""
    boxes = []
    for index, m in enumerate(pieces):
        place = places[index] if places is not None else (m.name_x, m.name_y) if m.name else None
        if place is not None:
            boxes.append(name_box(m.label, *place))
        room = rooms[index] if rooms and index in rooms else (None, m.badges, m.marks)
        for b in room[1]:
            boxes.append((b.x - 1.3, b.y - 1.3, b.x + 1.3, b.y + 1.3))
        boxes += room[2]
        damage = damages[index] if damages and index in damages else m.damage_box
        if damage is not None:
            boxes.append(damage)
    return boxes


def _unit_spots(x, y, table_w, table_d, rings=24):
    """Where a unit at (x, y) may be drawn, the nearest first: its spot, then rings around it half a dot
    apart (a dot that overlaps another by a little moves a little), places on each a dot apart or more."""
    yield x, y
    for ring in range(1, rings + 1):
        step, count = UNIT_DOT * ring, 6 * ((ring + 1) // 2)
        for k in range(count):
            turn = math.tau * k / count
            dx, dy = round(x + step * math.cos(turn), 2), round(y + step * math.sin(turn), 2)
            # A dot moved off its spot stays on the table; one at the edge on its spot may overhang it.
            if UNIT_DOT <= dx <= table_w - UNIT_DOT and UNIT_DOT <= dy <= table_d - UNIT_DOT:
                yield dx, dy


def _escapes(x, y, boxes, table_w, table_d):
    """The places straight out of each box a dot at (x, y) meets, on its four sides, just clear of it
    (`_dot_meets`), nearest first, on the table as `_unit_spots`' are."""
    clear = UNIT_DOT + 0.4 + 0.01
    places = [(round(px, 2), round(py, 2)) for x0, y0, x1, y1 in boxes
              for px, py in ((x, y0 - clear), (x, y1 + clear), (x0 - clear, y), (x1 + clear, y))]
    return sorted(((px, py) for px, py in places
                   if UNIT_DOT <= px <= table_w - UNIT_DOT and UNIT_DOT <= py <= table_d - UNIT_DOT),
                  key=lambda p: math.dist(p, (x, y)))


def _mark_places(x, y, half_w):
    """The four places of a mark around a dot at (x, y), each (x, y, its box): under it, as a crew's
    under its bunker; over it, a little higher ("pin"'s descender hangs towards the dot); beside it."""
    h = NAME_LINE_EMS * UNIT_MARK_SIZE / 2 + UNIT_MARK_HALO / 2
    marks = [(round(mx, 2), round(my, 2)) for mx, my in (
        (x, y + 1.8), (x, y - 2), (x + UNIT_DOT + half_w, y), (x - UNIT_DOT - half_w, y))]
    return [(mx, my, (mx - half_w, my - h, mx + half_w, my + h)) for mx, my in marks]


class _Crowd:
    """The units' dots and marks placed so far, each filed under the squares of the table it covers and
    checked against those of its own squares only: fifty units on one spot, each place checked against
    every other, took over a second."""

    CELL = 6  # inches

    def __init__(self, table):
        self.table, self.dots, self.marks = table, {}, {}

    def _cells(self, box):
        c = self.CELL
        return [(i, j) for i in range(math.floor(box[0] / c), math.floor(box[2] / c) + 1)
                for j in range(math.floor(box[1] / c), math.floor(box[3] / c) + 1)]

    def _near(self, grid, box):
        return [item for cell in self._cells(box) for item in grid.get(cell, ())]

    def add_dot(self, x, y, owner):
        for cell in self._cells((x, y, x, y)):
            self.dots.setdefault(cell, []).append((x, y, owner))

    def remove_dot(self, x, y, owner):
        for cell in self._cells((x, y, x, y)):
            if (x, y, owner) in self.dots.get(cell, ()):
                self.dots[cell].remove((x, y, owner))

    def add_mark(self, box):
        for cell in self._cells(box):
            self.marks.setdefault(cell, []).append(box)

    def dot_free(self, x, y, owner):
        reach = 2 * UNIT_DOT
        around = (x - reach, y - reach, x + reach, y + reach)
        # A hundredth to spare: two dots a ring's step apart, worked out in floats, come out a hair nearer.
        return not any(o != owner and math.dist((x, y), (dx, dy)) < reach - 0.01
                       for dx, dy, o in self._near(self.dots, around)) \
            and not any(_dot_meets(x, y, mark) for mark in self._near(self.marks, around))

    def boxes_met(self, x, y):
        """The marks a dot at (x, y) comes too near (`_dot_meets`)."""
        reach = 2 * UNIT_DOT
        return list(dict.fromkeys(mark for mark in self._near(self.marks, (x - reach, y - reach, x + reach, y + reach))
                                  if _dot_meets(x, y, mark)))  # a mark is filed under each square it covers

    def mark_free(self, box, owner):
        x0, y0, x1, y1 = box
        r = 2 * UNIT_DOT
        return (self.table[0] <= x0 and self.table[1] <= y0 and x1 <= self.table[2] and y1 <= self.table[3]
                and not any(_boxes_meet(box, mark) for mark in self._near(self.marks, box))
                and not any(o != owner and _dot_meets(dx, dy, box)
                            for dx, dy, o in self._near(self.dots, (x0 - r, y0 - r, x1 + r, y1 + r))))


def _dot_meets(x, y, box):
    """Whether a dot at (x, y) comes nearer a mark's box than its own dot may (a side mark's is 1.2
    inches off it): with another dot as near, the mark would say neither's pins."""
    x0, y0, x1, y1 = box
    return math.dist((x, y), (min(max(x, x0), x1), min(max(y, y0), y1))) < UNIT_DOT + 0.4


def _boxes_meet(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


NAME_CHARS, NAME_SIZE, NAME_HALO = 18, 1.45, 0.3  # a name on the map: characters at most, height and halo in inches (battle.css)

# How wide each character of a name is drawn, in ems: the advances of DejaVu Sans Bold (what Debian's
# Chromium draws the font stack in; Roboto, San Francisco and Segoe UI are narrower), rounded up to a
# twentieth. A name counted as 0.6 em a letter came out a tenth longer than that and ran into its
# neighbour's. Accented letters count as their base letter; anything else as the widest letter, Ж.
NAME_EMS = MappingProxyType({ch: em for em, chars in (
    (0.35, " 'ijl"), (0.4, ",./:;IJ\\|’"), (0.45, "-f″"), (0.5, "!()[]_`rt"), (0.55, '"*'), (0.6, "?csz"),
    (0.65, "Lx"), (0.7, "0123456789$EFTaekovy"), (0.75, "CPSYZbdghnpqu{}"), (0.8, "ABKRVX"),
    (0.85, "#+<=>DGHNU^~"), (0.9, "&OQ"), (0.95, "w"), (1.0, "@M…—"), (1.05, "%m"), (1.15, "W"),
) for ch in chars})
WIDEST_EM = 1.25
# The box of a line of it (DejaVu's ascent and descent), centred on y (dominant-baseline: central).
NAME_LINE_EMS = 1.2
NAME_LINE = NAME_LINE_EMS * NAME_SIZE + NAME_HALO


def name_box(name, x, y):
    """The box a name drawn at (x, y) covers, its halo (the text's stroke, half outside each glyph) included."""
    half_w = _name_half_width(name)
    return (x - half_w, y - NAME_HALF_HEIGHT, x + half_w, y + NAME_HALF_HEIGHT)


def _name_half_width(name):
    try:
        ems = sum(map(NAME_EMS.__getitem__, name))
    except KeyError:  # an accented letter or one not listed
        ems = sum(NAME_EMS.get(ch) or NAME_EMS.get(unicodedata.normalize("NFD", ch)[0], WIDEST_EM) for ch in name)
    return ems * NAME_SIZE / 2 + NAME_HALO / 2


NAME_HALF_HEIGHT = NAME_LINE_EMS * NAME_SIZE / 2 + NAME_HALO / 2


def place_names(structures, table_w, table_d):
    """Put each name below its footprint, else above it, else a line lower, wherever it overprints
    nothing already there, the larger structures' first; leave out a name that fits nowhere: on a phone,
    overlapping words read as neither. A structure without its name still says it on a tap. Returns the
    structures a name is drawn over (`name_places`)."""
    covered = set()
    for s, place in zip(structures, name_places([s.map for s in structures], table_w, table_d, covered=covered)):
        if place is None:
            s.map.name = ""
        else:
            s.map.name_x, s.map.name_y = place
    return [s for index, s in enumerate(structures) if index in covered]


def name_places(pieces, table_w, table_d, rooms=None, covered=None):
    """Where `place_names` puts each piece's name: its (x, y), or None where it fits nowhere. `rooms` gives
    some pieces (by index) other name spots and badges than they have: where the names stood before a
    change to those pieces (`names_moved`). Adds to the set `covered` the pieces whose footprint a name is
    placed over (one drawn before the name's own)."""
    # Who holds each piece (its side badges) is drawn first: a neighbour's name must not hide it. Units
    # in the open are not: they stand beside buildings all game, and a map whose buildings lose their
    # names to them reads worse than a dot under a word. The footprints drawn after a name's own (later
    # in the map) are too, or they would cover it; its own never reaches its name's spots.
    # Each obstacle is filed under the squares of the table it covers, and a name is checked against
    # those of its own squares only: checked against every other, the 200-structure battle's names took
    # 277 ms a map. An obstacle is (box, turned corners or None, the index of the structure it is the
    # footprint of, or infinity: a badge or a name, which every name must keep off). An unturned
    # footprint is its box: no corners to check.
    rooms = rooms or {}
    grid, cell, inf = {}, NAME_CELL, math.inf
    # Names placed are filed apart, and checked first: in a crowd another name stops most spots.
    places, names, slides = [None] * len(pieces), {}, [0] * len(pieces)
    for index, m in enumerate(pieces):
        if m.rotation:
            corners = m.corners
            xs, ys = [x for x, _ in corners], [y for _, y in corners]
            obstacles = [((min(xs), min(ys), max(xs), max(ys)), corners, index)]
        else:
            (x0, y0), _, (x1, y1), _ = m.corners
            obstacles = [((x0, y0, x1, y1), None, index)]
        # How far a name may slide along it (`_name_candidates`): its middle an inch inside either end.
        slides[index] = int((obstacles[0][0][2] - obstacles[0][0][0]) / 2 - 1)
        badges = rooms[index][1] if index in rooms else m.badges
        obstacles += [((b.x - 1.3, b.y - 1.3, b.x + 1.3, b.y + 1.3), None, inf) for b in badges]
        for obstacle in obstacles:
            box = obstacle[0]
            for i in range(int(box[0] // cell), int(box[2] // cell) + 1):
                for j in range(int(box[1] // cell), int(box[3] // cell) + 1):
                    grid.setdefault((i, j), []).append(obstacle)
    order = sorted(range(len(pieces)), key=lambda index: -(pieces[index].w * pieces[index].d))
    for index in order:
        m = pieces[index]
        half_w, half_h = _name_half_width(getattr(m, "label", m.name)), NAME_HALF_HEIGHT
        for x, y in _name_candidates(m.cx, rooms[index][0] if index in rooms else m.name_spots, slides[index]):
            x0, x1, y0, y1 = x - half_w, x + half_w, y - half_h, y + half_h
            if x0 < 0 or x1 > table_w or y0 < 0 or y1 > table_d:
                continue
            box = (x0, y0, x1, y1)
            squares = [(i, j) for i in range(int(x0 // cell), int(x1 // cell) + 1)
                       for j in range(int(y0 // cell), int(y1 // cell) + 1)]
            if any(x0 < other[2] and other[0] < x1 and y0 < other[3] and other[1] < y1
                   for square in squares for other in names.get(square, ())):
                continue
            if all(drawn <= index or not (x0 < other[2] and other[0] < x1 and y0 < other[3] and other[1] < y1)
                   or corners is not None and not _overlap(_corners(box), corners)
                   for square in squares for other, corners, drawn in grid.get(square, ())):
                places[index] = (x, y)
                for square in squares:
                    names.setdefault(square, []).append(box)
                if covered is not None:
                    covered.update(drawn for square in squares for other, corners, drawn in grid.get(square, ())
                                   if drawn < index and x0 < other[2] and other[0] < x1 and y0 < other[3]
                                   and other[1] < y1 and (corners is None or _overlap(_corners(box), corners)))
                break
    return places


def _name_candidates(cx, spots, slides):
    """Where a name may go: each spot with the name centred on its piece; then, along a footprint long
    across the table (a trench, a wall, a long house), the same spots with the name slid along it an inch
    at a time (`slides` of them each way), nearest first. The demo's communication trench, 12 inches long
    under a 17-inch name, had its three spots taken by the loghouse at its left end and the cottage's
    name below it; slid right, its name sits above it, clear of both."""
    centred = [(cx, y) for y in spots]
    if slides < 1:
        return centred
    return centred + [(cx + way * step, y) for step in range(1, slides + 1) for y in spots for way in (1, -1)]


NAME_CELL = 8  # inches: the side of a square of the table in place_names' index


def _corners(box):
    x0, y0, x1, y1 = box
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def _overlap(p, q):
    """Whether two convex polygons overlap (more than touch): by the separating axis theorem, they do
    unless they lie apart along the normal of one of their edges. Footprints are turned; boxes are not."""
    for poly in (p, q):
        for (x1, y1), (x2, y2) in zip(poly, poly[1:] + poly[:1]):
            a = [(y1 - y2) * x + (x2 - x1) * y for x, y in p]
            b = [(y1 - y2) * x + (x2 - x1) * y for x, y in q]
            if max(a) <= min(b) or max(b) <= min(a):
                return False
    return True


# A finger needs 44 CSS px (WCAG 2.5.5). The map is as wide as the page less its padding: 344 px on the
# narrowest phone we draw for (360 px), so the table's inches shrink with its width.
TAP_PX, MAP_PX = 44, 344


def reach_out(structures, table_w, table_d):
    """Every piece's tap shape at once, worked out afresh (what the bench times)."""
    reach = Reach([s.map for s in structures], table_w, table_d)
    for s in structures:
        s.map.hit = reach.shape(s.map)


@lru_cache(maxsize=32)
def layout_reach(layout, table_w, table_d):
    """The `Reach` of a table's footprints, (x, y, width, depth, rotation) each, keeping the shapes it
    has worked out. With two hundred pieces crowded an inch apart (the query tests' large battle) they
    take some 30 ms: paid once per table by each worker, not by every page."""
    pieces = []
    for cx, cy, w, d, rotation in layout:
        cos, sin = math.cos(math.radians(rotation)), math.sin(math.radians(rotation))
        pieces.append(SimpleNamespace(cx=cx, cy=cy, w=w, d=d, rotation=rotation, corners=[
            (cx + x * cos - y * sin, cy + x * sin + y * cos)
            for x, y in ((-w / 2, -d / 2), (w / 2, -d / 2), (w / 2, d / 2), (-w / 2, d / 2))]))
    return Reach(pieces, table_w, table_d)


class Reach:
    """The table's pieces in order across it: the invisible shape that takes a piece's taps, worked out
    for that piece alone. It depends on the footprints only, which no log entry moves: an answer that
    draws three pieces of two hundred works out three shapes.

    A piece takes a thumb's width (44 px on a 360 px phone) each way round its footprint, as wide as
    the footprint where that is wider. Where a neighbour is nearer than that, the shape stops on the
    line halfway across the gap between the two footprints (between their middles where they overlap):
    a tap goes to the nearer piece, never to one whose footprint is not under the finger, and no two
    shapes meet (whichever was drawn later would take both's taps). A circle of one radius did that by
    shrinking all round: the demo's tower, two and a half inches from the church, took taps 38 px
    across on a 390 px phone, and its foxholes 29. A shape cut on one side only slides to the other,
    away from the neighbour or the table's edge, as far as its footprint leaves room: the tower's is 44
    px across beside the church. Three foxholes six inches (31 px) apart still share their row."""

    def __init__(self, pieces, table_w, table_d):
        self.given, self.shapes = list(pieces), {}
        self.thumb = TAP_PX * table_w / MAP_PX
        self.edges = ((-1, 0, 0), (1, 0, table_w), (0, -1, 0), (0, 1, table_d))
        self.pieces = sorted(pieces, key=lambda m: m.cx)
        self.at = {id(m): i for i, m in enumerate(self.pieces)}
        # Each footprint's box, half its diagonal, and whether it is its box (turned by a right angle).
        self.geometry = {}
        for m in self.pieces:
            xs, ys = [x for x, _ in m.corners], [y for _, y in m.corners]
            self.geometry[id(m)] = (min(xs), min(ys), max(xs), max(ys), math.hypot(m.w, m.d) / 2,
                                    not m.rotation % 90)
        self.widest_half = max(((g[2] - g[0]) / 2 for g in self.geometry.values()), default=0)
        self.boxes = [(m.cx, *self.geometry[id(m)][:4], self.geometry[id(m)][5], m) for m in self.pieces]

    def shape_at(self, index):
        """The shape of the index-th piece given, worked out once."""
        shape = self.shapes.get(index)
        if shape is None:
            shape = self.shapes[index] = self.shape(self.given[index])
        return shape

    def shape(self, m):
        """The corners of `m`'s tap shape, in order round it."""
        x0, y0, x1, y1 = self.geometry[id(m)][:4]
        half_w, half_h = max(x1 - x0, self.thumb) / 2, max(y1 - y0, self.thumb) / 2
        box = (m.cx - half_w, m.cy - half_h, m.cx + half_w, m.cy + half_h)
        lines = {}
        hit = self._cut(m, _corners(box), lines)
        if hit:
            lost = (min(x for x, _ in hit) - box[0], min(y for _, y in hit) - box[1],
                    box[2] - max(x for x, _ in hit), box[3] - max(y for _, y in hit))
            # Never past the footprint's own edge: the shape still covers the footprint's box.
            dx = max(min(_slide(lost[0], lost[2]), x0 - box[0]), x1 - box[2])
            dy = max(min(_slide(lost[1], lost[3]), y0 - box[1]), y1 - box[3])
            if dx or dy:
                hit = self._cut(m, _corners((box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)), lines) or hit
        shape = []
        for x, y in hit:
            point = (round(x, 2), round(y, 2))
            if not shape or point != shape[-1]:  # a cut through a corner leaves it twice
                shape.append(point)
        return shape if len(shape) > 2 else m.corners

    def _cut(self, m, polygon, lines):
        """`polygon` cut down to the table and to `m`'s side of the line between it and each neighbour
        whose line crosses it. Beyond a line halfway across a gap every point is half the gap or more
        from `m`'s footprint: a neighbour whose box is twice as far from `m`'s as the polygon's farthest
        corner reaches is passed over (footprints that overlap have no gap: those are always looked at),
        and the pieces are looked at outwards along the table only until none can be nearer (a battle
        has hundreds)."""
        polygon = _clip(polygon, self.edges)
        boxes, i, (gx0, gy0, gx1, gy1, _, square) = self.boxes, self.at[id(m)], self.geometry[id(m)]
        reach, beyond = self._reach(m, polygon), (gx1 - gx0) / 2 + self.widest_half
        left, right = min((x for x, _ in polygon), default=0), max((x for x, _ in polygon), default=0)
        for step in (-1, 1):
            j = i + step
            while polygon and 0 <= j < len(boxes):
                cx, x0, y0, x1, y1, o_square, o = boxes[j]
                k, j = j, j + step
                if abs(cx - m.cx) - beyond > 2 * reach:
                    break
                gap_x, gap_y = max(x0 - gx1, gx0 - x1), max(y0 - gy1, gy0 - y1)
                gap = math.hypot(max(gap_x, 0), max(gap_y, 0))
                if gap and gap >= 2 * reach:
                    continue
                if square and o_square and gap_x > 0 >= gap_y:
                    # Side by side: the line is upright, halfway across (`_line`), and cuts only
                    # what reaches past it. Most neighbours in a crowd are these.
                    if (right <= (gx1 + x0) / 2) if cx > m.cx else (left >= (x1 + gx0) / 2):
                        continue
                line = lines.get(k)
                if line is None:
                    line = lines[k] = self._line(m, o)
                a, b, c = line
                if any(a * x + b * y > c for x, y in polygon):
                    polygon = _clip(polygon, (line,))
                    reach = self._reach(m, polygon)
                    left, right = min((x for x, _ in polygon), default=0), max((x for x, _ in polygon), default=0)
        return polygon

    def _reach(self, m, polygon):
        """How far the polygon's farthest corner is from `m`'s footprint."""
        x0, y0, x1, y1, _, square = self.geometry[id(m)]
        if square:
            return max((math.hypot(max(x0 - x, x - x1, 0), max(y0 - y, y - y1, 0)) for x, y in polygon), default=0)
        return max((_distance_to_footprint(x, y, m) for x, y in polygon), default=0)

    def _line(self, m, o):
        """The line halfway across the gap between two footprints, as (a, b, c): `m`'s side is the
        points a·x + b·y ≤ c. Between their middles where they overlap or touch."""
        mx0, my0, mx1, my1, _, m_square = self.geometry[id(m)]
        ox0, oy0, ox1, oy1, _, o_square = self.geometry[id(o)]
        p = q = None
        if m_square and o_square:  # boxes: the gap along one axis, or between two corners
            gx, gy = max(ox0 - mx1, mx0 - ox1), max(oy0 - my1, my0 - oy1)
            right, below = o.cx > m.cx, o.cy > m.cy
            if gx > 0 and gy > 0:
                p = (mx1 if right else mx0, my1 if below else my0)
                q = (ox0 if right else ox1, oy0 if below else oy1)
            elif gx > 0:
                p, q = (mx1 if right else mx0, 0), (ox0 if right else ox1, 0)
            elif gy > 0:
                p, q = (0, my1 if below else my0), (0, oy0 if below else oy1)
        elif not _overlap(m.corners, o.corners):
            p, q = _closest(m.corners, o.corners)
            if p == q:
                p = None
        if p is None:
            p, q = (m.cx, m.cy), (o.cx, o.cy)
        a, b = q[0] - p[0], q[1] - p[1]
        return a, b, (a * (p[0] + q[0]) + b * (p[1] + q[1])) / 2


def _distance_to_footprint(x, y, m):
    turn = math.radians(m.rotation)
    dx, dy = x - m.cx, y - m.cy
    along, across = dx * math.cos(turn) + dy * math.sin(turn), -dx * math.sin(turn) + dy * math.cos(turn)
    return math.hypot(max(abs(along) - m.w / 2, 0), max(abs(across) - m.d / 2, 0))


def _slide(lost_low, lost_high, eps=1e-6):
    """How far to move a box cut on one side only (by a neighbour or the table's edge) to the other."""
    if lost_low > eps and lost_high <= eps:
        return lost_low
    if lost_high > eps and lost_low <= eps:
        return -lost_high
    return 0


def _clip(polygon, cuts):
    """A convex polygon cut down to the half-planes (a, b, c) of a·x + b·y ≤ c (Sutherland–Hodgman)."""
    for a, b, c in cuts:
        out = []
        for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1]):
            d1, d2 = a * x1 + b * y1 - c, a * x2 + b * y2 - c
            if d1 <= 0:
                out.append((x1, y1))
            if (d1 < 0 < d2) or (d2 < 0 < d1):
                t = d1 / (d1 - d2)
                out.append((x1 + t * (x2 - x1), y1 + t * (y2 - y1)))
        polygon = out
        if not polygon:
            return []
    return polygon


def _closest(p, q):
    """The nearest points of two convex polygons apart: one is a corner, the other on an edge."""
    best = (math.inf, None, None)
    for corners, edges, flip in ((p, q, False), (q, p, True)):
        for v in corners:
            for (x1, y1), (x2, y2) in zip(edges, edges[1:] + edges[:1]):
                ex, ey = x2 - x1, y2 - y1
                t = max(0.0, min(1.0, ((v[0] - x1) * ex + (v[1] - y1) * ey) / (ex * ex + ey * ey or 1)))
                w = (x1 + t * ex, y1 + t * ey)
                d = (v[0] - w[0]) ** 2 + (v[1] - w[1]) ** 2
                if d < best[0]:
                    best = (d, w, v) if flip else (d, v, w)
    return best[1], best[2]


def describe(s, sized_fires=True):
    words = [s.name]
    if s.collapsed:
        words.append("collapsed")
    elif s.destroyed:
        words.append("destroyed")
    elif s.damage_taken:
        words.append(f"damaged {s.damage_percent}%")
    else:
        words.append("intact")
    if s.burning:
        words.append(f"burning {float(s.fire_size):g} sq in" if sized_fires else "burning")
    if s.impassable:
        words.append("impassable")
    if s.crewed:
        words.append("crew routed" if s.crew_routed else "no crew left" if not s.crew_men else
                     f"crew pinned ({s.crew_pins})" if s.crew_pins else f"crew {s.crew_men}")
    return words


# The log ---------------------------------------------------------------------------------------

RESTORABLE = ExpressionWrapper(Q(undo__has_key="structures"), output_field=BooleanField())


def mark_turns(entries, turn_above=None, *, oob=False):
    """Newest first; an entry heads its turn's group unless the entry above it is of the same turn.
    Each gets what the log shows of it ready drawn: its dice, its time in the club's zone, and the
    whole entry (`entry_html`; with `oob`, to replace the one a page holds)."""
    for entry in entries:
        entry.action_label = action_label(entry.action)
        entry.turn_head = entry.turn != turn_above
        turn_above = entry.turn
        moment = timezone.localtime(entry.created_at)
        entry.time_iso, entry.time = moment.isoformat(), moment.strftime("%H:%M")
        entry.rolls = rolls_html(entry)
        entry.html = entry_html(entry, oob)
    return entries


def entry_html(entry, oob=False):
    """One entry as the log shows it (`battle.html#log_entry`). Drawn here for the reason its dice are:
    an attack's answer at a busy table carries every entry the other phones made since the page's
    newest, and the partial's dozen lookups on each model instance were most of drawing them."""
    side = f' <span class="muted">side {_text(entry.side)}</span>' if entry.side else ""
    undone = undoes = ""
    if entry.undone:
        try:
            by = entry.undone_by
        except ObjectDoesNotExist:  # cached as nobody (`snapshot.log_entries`): the template said nothing
            by = None
        undone = f'<p class="log-note state-routed">Undone{f" by #{by.seq}" if by else ""}</p>'
    if entry.undoes_id:
        undoes = f'<p class="log-note">Undoes #{_text(getattr(entry.undoes, "seq", ""))}</p>'
    return mark_safe(
        f'\n<li id="log-{entry.seq}" class="log-entry{" is-undone" if entry.undone else ""}" data-seq="{entry.seq}"'
        f'{" hx-swap-oob=\"true\"" if oob else ""}>\n'
        '  <header class="log-entry-header">\n'
        f'    <span class="log-seq">#{entry.seq}</span>\n'
        f'    <span class="log-actor">{_text(entry.actor_name or "Game")}{side}</span>\n'
        f'    <span class="tag">{_text(entry.action_label or entry.action)}</span>\n'
        f'    <time class="muted" datetime="{_text(entry.time_iso)}">{_text(entry.time)}</time>\n'
        '  </header>\n'
        f'  <p class="log-summary">{_text(entry.summary)}</p>\n'
        f'  {entry.rolls}\n'
        f'  {undone}\n'
        f'  {undoes}\n'
        '</li>\n')


def rolls_html(entry):
    """Each roll of the entry: its purpose, the faces as dice, what they add up to, what they decided
    and who rolled them. Drawn here rather than by a loop of loops in the template: that was a third
    of the time the battle page took to draw its fifty log entries.

    Every value is escaped and none is trusted to have its shape: a log imported from a campaign file
    carries whatever the file held (its hash chain says whether that was tampered with, it does not
    stop it), and the template this replaces drew nothing, rather than failing, for a value missing
    or of the wrong kind."""
    rows = []
    for roll in entry.dice if isinstance(entry.dice, list) else ():
        if not isinstance(roll, dict):
            continue
        sides, count = _text(roll.get("sides")), roll.get("count")
        faces = roll.get("faces") if isinstance(roll.get("faces"), list) else []
        many = isinstance(count, int) and count > 1
        dice = "".join(f'<span class="die die-d{sides}">{_text(face)}</span>' for face in faces)
        label = _text(f"{count}d{roll.get('sides')}: {', '.join(str(face) for face in faces)}")
        # The players' own dice: typed in by whoever acted, not always the one who threw them (both
        # sides' initiative dice come in on one phone).
        who = f"entered by {entry.actor_name or 'a player'}" if roll.get("source") == "player" else \
            "rolled by the server"
        rows.append(
            f'\n        <li class="roll">\n'
            f'          <span class="roll-purpose">{_text(capfirst(str(roll.get("purpose", ""))))}</span>\n'
            f'          <span class="faces" role="img" aria-label="{label}">{dice}</span>\n'
            + (f'          <span class="roll-value">→ {_text(roll.get("value"))}</span>\n' if many else "")
            + (f'          <span class="roll-target">{_text(roll["target"])}</span>\n' if roll.get("target") else "")
            + f'          <span class="roll-source roll-source-{_text(roll.get("source"))}">d{sides}'
              f'{f" ×{count}" if many else ""}, {_text(who)}</span>\n        </li>')
    return mark_safe(f'<ul class="rolls" aria-label="Dice">{"".join(rows)}\n    </ul>') if rows else ""


def _text(value):
    # conditional_escape to the character, without its check of each argument for a lazy string.
    return esc("" if value is None else value)


def log_page(battle, before=None, turn_above=None):
    """One page of the log, newest first: seq < before ORDER BY seq DESC LIMIT 50 (an index scan)."""
    entries = mark_turns(snap.log_entries(battle.pk, before=before or None, limit=LOG_PAGE_SIZE), turn_above)
    # Sequence numbers are gapless from 1, so there is more exactly when the oldest shown is not #1.
    more = entries[-1].seq > 1 if entries else False
    return SimpleNamespace(entries=entries, more=more, oldest=entries[-1].seq if entries else None,
                           last_turn=entries[-1].turn if entries else None)


def log_changes(battle, after, upto=None):
    """What a page holding entries up to #after lacks: the newer entries (each with `touched`, the
    undo record naming what it changed), the separator they displace, and the entries it holds that
    have been undone since; with `upto`, none newer than that. One query, two after an undo."""
    rows = snap.log_entries(battle.pk, after=after, upto=upto, limit=LOG_PAGE_SIZE + 1, touched=True)
    anchor = rows.pop() if after > 0 and rows and rows[-1].seq == after else None
    if len(rows) > LOG_PAGE_SIZE or (after > 0 and anchor is None):
        return SimpleNamespace(reset=True, new=[], undone=[], drop_head=None)
    new = mark_turns(rows)
    drop_head = anchor.seq if anchor is not None and new and new[-1].turn == anchor.turn else None
    # Every undo is a new entry naming what it undid: the held entries undone since are those.
    held = [e.undoes.seq for e in new if e.undoes_id and e.undoes.seq <= after]
    undone = mark_turns(snap.log_entries(battle.pk, seqs=held), oob=True) if held else []
    return SimpleNamespace(reset=False, new=new, undone=undone, drop_head=drop_head)


def touched_by(entries, board, *, map_known, map_version, card):
    """The structures and units a page holding map version `map_known` must redraw after `entries`
    (newest first), or None when only a whole redraw is safe: the page missed map changes that are
    not among these entries, or units were created (new rows in the armies panel).

    A unit that moved changes the structure it left and the one it entered (occupants, badges)."""
    if map_known is None:
        return None
    bumps, structures, units = 0, set(), set()
    for entry in entries:
        record = entry.touched or {}
        if record.get("created_units"):
            return None
        changed_structures, changed_units = record.get("structures") or {}, record.get("units") or {}
        if entry.touched_after and changed_units:
            # An old undo's record holds where its units stand again, not where it took them from.
            return None
        # services._bump moves the map version exactly when an entry changed structures or units.
        bumps += bool(changed_structures or changed_units)
        structures.update(changed_structures)
        units.update(changed_units)
        structures.update(u["structure"] for u in changed_units.values() if u.get("structure"))
    if map_known + bumps != map_version:
        return None
    unit_rows = [u for u in board.units if u.uid in units]
    structures.update(f"s{u.floor.structure_id}" for u in unit_rows if u.floor_id)
    moved = names_moved(entries, board)
    if moved is None:
        return None
    moved, before = moved
    structure_rows = [s for s in board.structures if s.sid in structures]
    # A changed piece's name may push a neighbour's elsewhere, or leave it room to come back where it
    # was: those neighbours are redrawn on the map too (their list rows have not changed).
    return SimpleNamespace(structures=structure_rows, units=unit_rows, card=bool(card) and card in structures,
                           pieces=[s for s in board.structures if s.sid in structures or s.sid in moved],
                           map_units=bool(unit_rows) or dots_moved(board, before),
                           # Which footprints lie under a name moves with the names alone.
                           map_over=bool(moved))


def dots_moved(board, before):
    """Whether the units' dots or marks, none of which moved, were drawn elsewhere before the names and
    badges moved from `before` (`labels`) to where they are: they keep off those (`fan_out`)."""
    dots = board.map["units"]
    if before is None or not dots:
        return False
    # A box that changed moves no dot unless some dot's search came near it: a place tried is no farther
    # from its spot than where the dot was put (`searched`), and what it checks (the dot, its mark's four
    # places) reaches SEARCH_REACH beyond. Every dot tried the same places then, met the same boxes, and
    # stands where it stood. Laying all the dots out again (a millisecond for the demo's five) was paid by
    # every attack that changed a damage figure.
    changed = set(before).symmetric_difference(labels([s.map for s in board.structures]))
    if not any(_box_distance(u.spot, box) < u.searched + SEARCH_REACH for box in changed for u in dots):
        return False
    then = fan_out([SimpleNamespace(x=u.spot[0], y=u.spot[1], pins=u.pins, routed=u.routed) for u in dots],
                   board.map["width"], board.map["depth"], keep_clear=before)
    return any((a.x, a.y, a.mark_x, a.mark_y) != (b.x, b.y, b.mark_x, b.mark_y) for a, b in zip(dots, then))


# How far beyond a place tried for a dot `fan_out` looks: a dot's keep-off (`_dot_meets`, 1.6 in) and its
# mark's farthest box beside it (a dot's width and "routed" twice over, 6.7 in), with room to spare.
SEARCH_REACH = 8


def _box_distance(point, box):
    x0, y0, x1, y1 = box
    return math.dist(point, (min(max(point[0], x0), x1), min(max(point[1], y0), y1)))


def names_moved(entries, board):
    """The structures whose name a page drew elsewhere (or left out, or showed) before `entries`
    (newest first) than the map draws now: the name's spots of a structure whose holders, crew letter
    or fire an entry changed move, and with them any name placed after it. None when that cannot be
    told: an undo written before undos kept what they took back holds only what it restored, and the
    page held the entry it undid (the poll then redraws the whole map). With them, the names' and
    badges' boxes as they were (`labels`), or None where none moved (nor any damage figure, which moves no
    name but a dot: `dots_moved`)."""
    rooms, figures, unknown = {}, {}, set()
    units = {u.uid: (f"s{u.floor.structure_id}" if u.floor_id else None, u.army.side, u.destroyed)
             for u in board.units}
    held_by = set()  # the structures a changed unit stood in, then or now
    for entry in entries:
        record = entry.touched or {}
        if entry.touched_after:
            unknown.update(record.get("structures") or {})
            continue
        for sid, before in (record.get("structures") or {}).items():
            crew = before.get("crew")
            rooms[sid] = (crew_words(crew.get("routed"), crew.get("men"), crew.get("pins")) if crew else "",
                          before.get("fire") is not None)
            taken, most = before.get("damage_taken") or 0, before.get("damage_max") or 0
            # Structure.damage_percent, from the record's numbers
            figures[sid] = damage_words(taken, 100 * taken // most if most else 0, before.get("collapsed"))
            unknown.discard(sid)
        for uid, before in (record.get("units") or {}).items():
            held_by.update(place for place in (units.get(uid, (None,))[0], before.get("structure")) if place)
            units[uid] = (before.get("structure"), before.get("side"), before.get("destroyed"))
    if unknown:
        return None
    sides = {}
    for place, side, destroyed in units.values():
        if place in held_by and not destroyed:
            sides.setdefault(place, set()).add(side)
    then, damages = {}, {}
    for index, s in enumerate(board.structures):
        m = s.map
        if s.sid in figures and figures[s.sid] != m.damage:
            damages[index] = damage_box(m.cx, m.cy, figures[s.sid])
        if s.sid not in rooms and s.sid not in held_by:
            continue
        crew, burning = rooms.get(s.sid, (m.room.crew, m.room.burning))
        room = NameRoom(tuple(side for side in ("A", "B") if side in sides.get(s.sid, ())) if s.sid in held_by
                        else m.room.sides, crew, burning)
        if room != m.room:
            then[index] = name_room(m.cx, m.cy, m.half_d, room)
    pieces = [s.map for s in board.structures]
    if not then:
        # The names stand where they stood: only a damage figure changed, if anything (no names placed again).
        return set(), labels(pieces, damages=damages) if damages else None
    before = name_places(pieces, board.map["width"], board.map["depth"], then)
    return ({s.sid for s, place in zip(board.structures, before)
             if place != ((s.map.name_x, s.map.name_y) if s.map.name else None)},
            labels(pieces, before, then, damages))


def last_undoable(battle, page=None):
    """What `services.undo_last` would undo (the newest entry that is not an undo or undone), if it can
    restore anything: seq, seqs (with, for an upkeep, the End turn that ran it: one Undo takes back
    both), actor and summary. Usually among the entries the page shows already; otherwise one query."""
    if page is not None:
        last = next((i for i, e in enumerate(page.entries) if not e.undone and e.action not in services.PASSED_OVER),
                    None)
        # An upkeep needs the entry below it too (`_undoable`).
        below = page.entries[last + 1:last + 2] if last is not None else []
        if last is not None and (below or page.entries[last].action != "upkeep") or not page.more:
            return last is not None and _undoable(page.entries[last], below, battle)
    rows = list(battle.log_entries.filter(undone=False).exclude(action__in=services.PASSED_OVER).order_by("-seq")
                .annotate(restorable=RESTORABLE)
                .values("seq", "actor_id", "actor_name", "summary", "restorable", "action", "undone")[:2])
    return rows and _undoable(SimpleNamespace(**rows[0]), [SimpleNamespace(**r) for r in rows[1:]], battle)


def _undoable(last, below, battle):
    """An upkeep right after the End turn that ran it is undone with it (`services.undo_last` reads the
    upkeep's `follows`; the log page does not load inputs, and an End turn always runs its upkeep at
    once, so the entry below tells the same)."""
    ended = next((e for e in below if e.action == "end_turn" and e.seq == last.seq - 1 and not e.undone), None)
    paired = last.action == "upkeep" and ended is not None
    return {"seq": last.seq, "seqs": f"#{ended.seq}–#{last.seq}" if paired else f"#{last.seq}",
            "actor_id": last.actor_id, "actor_name": last.actor_name,
            "restorable": last.restorable and last.seq > battle.imported_seq,
            "imported": bool(last.restorable) and last.seq <= battle.imported_seq,
            "reroll": last.action in permissions.REROLL_ONLY_BY_ORGANISERS, "action": last.action,
            "summary": f"{ended.summary} and its upkeep" if paired else last.summary}


def newest_seq(battle):
    return battle.log_entries.order_by("-seq").values_list("seq", flat=True).first() or 0


# Turns -----------------------------------------------------------------------------------------

# Which structures the upkeep's dice are for, in the order it reads them (rules.turns.in_list_order).
COLLAPSE_ORDER = "for each structure 10% or more damaged and still standing, in the order of the structure list"


EVENT_EFFECTS = MappingProxyType({row["roll"]: row["effect"] for row in rules.tables.UNCONTROLLED_EVENTS})


def turn_context(battle, board, viewer, page=None):
    state = board.snapshot.state
    seq = state.sequence
    names = {uid: u.label for uid, u in state.units.items()}
    lg = battle.ruleset == "lg"
    owing = [names.get(u, u) for u in seq.pending_morale
             if u in state.units and state.units[u].side == seq.initiative]
    pass_reason = ""
    team_holds = capfirst(rules.lg_sequence.team_holds(state)) if lg else ""
    if lg and seq.initiative is None:
        pass_reason = rules.initiative_first(state).capitalize()
    elif team_holds:
        pass_reason = team_holds
    elif owing:
        pass_reason = f"Side {seq.initiative} may not pass: {', '.join(owing)} must check morale first"
        # The check is made when the piece is activated (LG-36); one that cannot be any more would hold its
        # side's pass and the end of the turn for good unless its check is recorded by hand.
        stuck = [(u.label, "has had its initiative" if u.id in seq.activated else "was incapacitated by a blast")
                 for uid in seq.pending_morale if (u := state.units.get(uid)) is not None
                 and u.side == seq.initiative and (u.id in seq.activated or u.incapacitated)]
        if stuck:
            whose = "their checks" if len(stuck) > 1 else "its check"
            pass_reason += (f". {' and '.join(f'{name} {why}' for name, why in stuck)}: record {whose} with "
                            f"“{rules.spec('lg_morale').label}” (Owes a morale check? No)")
    elif lg and seq.initiative not in viewer.sides:
        pass_reason = f"Only side {seq.initiative} may pass now"
    upkeep_due = battle.status == BattleStatus.IN_PROGRESS and battle.upkeep_turn < battle.turn
    activatable = [u for u in state.units.values()
                   if lg and not team_holds and u.side == seq.initiative and u.side in viewer.sides and not u.destroyed
                   and not u.incapacitated and u.id not in seq.activated]
    last = last_undoable(battle, page)
    return {
        "lg": lg,
        # DH: a routed crew must leave (seed 003, "Rout 9\""); the attack's answer offers that to the side
        # that routed it only when the crew is its own, so the crew's side is reminded here until it is done.
        "routed_crews": [SimpleNamespace(label=s.label, query=urlencode({"action": "dh_leave", "structure": s.id}))
                         for s in state.structures.values() if battle.ruleset == "dh" and s.crew is not None
                         and s.crew.routed and s.crew.men and s.crew.side in viewer.sides],
        "upkeep_due": upkeep_due,
        # Rolls the table still owes: LG fire casualties from the upkeep and hits on the viewer's pieces, a DH
        # crew's Guts check.
        "owed": lg_upkeep_follow_ups(battle, state) + lg_hits_owed(battle, state, viewer)
        + guts_owed(battle, state, viewer) if viewer.plays else [],
        "initiative_reason": f"Run the start-of-turn upkeep for turn {battle.turn} first" if lg and upkeep_due else "",
        "sequence": seq,
        # What each uncontrolled event does, in the seed chart's words: its name alone sends the players to
        # the rulebook ("Friendly smart mine": which vehicle, what warhead?).
        "events": [(e, EVENT_EFFECTS.get(e.roll, "")) for e in seq.events],
        "activated": [names.get(u, u) for u in seq.activated],
        "team": [names.get(u, u) for u in seq.team],
        # The side whose fireteam is acting ends its initiative itself ("Team done"): the other waits.
        "team_done": bool(team_holds) and seq.initiative in viewer.sides,
        "pending": [names.get(u, u) for u in seq.pending_morale],
        "pass_reason": pass_reason,
        # As the rules refuse it (LG-39): say so on the button rather than after its confirm.
        "end_reason": capfirst(rules.turn_goes_on(state)) if lg else "",
        "activatable": sorted(activatable, key=lambda u: u.label),
        # Fireteam initiative (LG-38): one activation moves the piece's whole fireteam.
        "fireteams": state.options.fireteam_initiative and any(u.fireteam for u in activatable),
        "end_confirm": f"End turn {battle.turn}? The next turn's upkeep runs straight away.",
        # The upkeep rolls only for collapse checks: without them there is nothing to roll oneself.
        "upkeep_dice": f"One d10 per collapse check, {COLLAPSE_ORDER}; the answer names each die it still needs."
        if battle.collapse_check else "",
        "end_dice": f"For the next turn's upkeep: one d10 per collapse check, {COLLAPSE_ORDER}; the answer names "
                    "each die it still needs." if battle.collapse_check else "",
        "initiative_dice": "Side A's d10, then side B's; on a tie both roll again" + (
            ", and when a side has won, one d10 per tie for its uncontrolled event." if battle.uncontrolled_events
            else ".") + " Lowest wins.",
        "undo": last if last and last["restorable"] and permissions.may_undo(
            viewer.user_id, viewer.role, last["actor_id"], last["action"]) else None,
        "undo_blocked": last if last and last["restorable"] else None,
        "undo_imported": last if last and last["imported"] else None,
        # One token per button: two different buttons must never look like a double tap of one.
        "tokens": {name: battle_forms.client_token(None) for name in TURN_BUTTONS},
    }


# Odds ------------------------------------------------------------------------------------------

def percent(p):
    value = float(p) * 100
    if 0 < value < 0.1:
        return "<0.1%"
    if 99.9 < value < 100:
        return ">99.9%"
    return f"{value:.1f}".rstrip("0").rstrip(".") + "%"


def odds_rows(odds):
    rows = []
    marginals = [(m.label, m.kind, m.value) for m in odds.marginals]
    if not any(kind == "probability" for _, kind, _ in marginals) and any(o.effects for o, _ in odds.outcomes):
        # What it changes has no bar of its own (a breach's progress, a beam's hits): each outcome in words.
        marginals += [(o.summary, "probability", p) for o, p in odds.outcomes[:ODDS_OUTCOMES]]
    for label, kind, value in marginals:
        value = Fraction(value)
        if kind == "probability":
            exact = f"{value.numerator}/{value.denominator}" if 1 < value.denominator <= 10_000 else ""
            rows.append(SimpleNamespace(label=label, kind=kind, text=percent(value), exact=exact,
                                        width=f"{float(value) * 100:.2f}"))
        else:
            rows.append(SimpleNamespace(label=label, kind=kind, exact="",
                                        text=f"{float(value):.2f}".rstrip("0").rstrip("."), width=""))
    return rows


ODDS_OUTCOMES = 8  # outcomes shown in words at most, the likeliest first


# The attack form -------------------------------------------------------------------------------

# What a tap on the map must not carry over: the aim, which the tap chooses anew, and one-time things.
NOT_CARRIED = frozenset({"csrfmiddlewaretoken", "client_token", "structure", "target", "floor", "side", "preview", "card",
                         "m", "after", "v", "t", "result", "confirm", "dice_for", "dice", "before", "seq", "own", "turn",
                         "chosen", "activate", "finish_winner", "finish_result"})


def tap_query(form):
    """The form's choices as a query for the map's and lists' plain links: without JavaScript a tap
    follows the link, and the page it opens keeps the action, unit and weapon already chosen."""
    if form is None:
        return ""
    # An action aimed at a unit and at no structure (a damage roll) keeps its unit: the tap only opens a
    # card, as it does with JavaScript (battle_card). Dropped, the player had to choose the unit again.
    names = {f.name for f in form.spec.fields} if form.spec is not None else set()
    keep_unit = form.spec is not None and "structure" not in names
    # A move's typed spot goes before "Into": the tap picks the structure, so it must not carry the spot.
    spot = {"x", "y"} if {"structure", "x"} <= names else set()
    return urlencode([(k, v) for k, v in form.data.items()
                      if (k not in NOT_CARRIED or k == "target" and keep_unit and str(v).startswith("u"))
                      and k not in spot
                      and not DIE_FIELD.fullmatch(k) and isinstance(v, str) and v])


# A die typed into the attack form (dice_0, dice_1…): never carried to another page. `dice_mode` is a
# choice ("I rolled"), and is: matched by its "dice_", a tap put the form back on "Roll for me".
DIE_FIELD = re.compile(r"dice_\d+")


# What "Update the form" posts that is not a choice: the page's own address must not carry it.
NOT_CHOSEN = frozenset({"csrfmiddlewaretoken", "client_token", "preview", "card", "m", "after", "v", "t"})


def chosen_url(battle, data):
    """The page with the form's choices (and dice) in its address, opened at the form, and the card
    that was open (a damage roll's form names no structure of its own)."""
    return shown_url(battle, data, card=data.get("card", "")) + "#attack-panel"


def shown_url(battle, data, card=""):
    """The page's address holding the form's choices (and dice typed) and the structure whose card is
    open (`target`, when not the form's own structure): what a reload must open again. Answers to the
    htmx taps write it into the address bar (HX-Replace-Url), or a phone that reloads, or slept and was
    reloaded by its browser, lost the card, the action and "I rolled" mid-attack."""
    query = [(k, v) for k, values in data.lists() if k not in NOT_CHOSEN and k not in NOT_SHOWN
             for v in values if v]
    if card and card != data.get("structure"):
        query = [(k, v) for k, v in query if k != "target" or v.startswith("u")] + [("target", card)]
    query = urlencode(query)
    return reverse("battle", args=[battle.pk]) + (f"?{query}" if query else "")


# Sent by the page's script or links with a request, never a choice to keep (`changed`: the input the
# player just changed; `result`: a resolve's own address names it).
NOT_SHOWN = frozenset({"changed", "result", "confirm", "dice_for", "dice", "before", "seq", "own", "turn", "activate",
                       "finish_winner", "finish_result"})


def form_data(source, target=None):
    """The form's data from the page's address. There `target` names the structure tapped (its card),
    while the form's own `target` is the unit aimed at: a structure's id is not one."""
    data = source.copy()
    if target:
        # Only the structure's id goes: a unit aimed at may stand beside it in the address (`tap_query`).
        data.setlist("target", [v for v in data.getlist("target") if v != target])
        if not data.getlist("target"):
            del data["target"]
        if not data.get("structure"):
            data["structure"] = target
    return data


def attack_form(request, battle, board, viewer, data, *, error=None, odds=True, judge=True):
    """The form bound to `data`, with the dice the players still have to enter, the rules' error next
    to its field and the exact odds when the inputs are complete. Without `judge`, what the rules
    would refuse is left unsaid: the form drawn under a result has nobody's choice in it to put right."""
    if not viewer.plays:
        return None
    form = battle_forms.ActionForm(data, battle=battle, state=board.snapshot.state, sides=viewer.sides,
                                   organiser=viewer.organiser, submitted=error is not None)
    ask = dict(battle=battle, user=request.user, action=form.data["action"], inputs=form.inputs(),
               attacker=form.attacker() or form.data.get(form.acting_field or "", "") or None)
    if form.player_dice:
        if form.complete():
            try:
                form.dice = battle_forms.dice_rows(
                    lambda prefix: services.next_die(**ask, dice_values=prefix), battle_forms.dice_entered(form.data))
                if not form.dice:
                    form.dice_hint = "This action needs no dice."
            except rules.RulesError as problem:
                if error is None and judge and not _missing(problem):
                    form.add_rules_error(problem)
        else:
            form.dice_hint = "Fill in the inputs above: the dice to roll appear here, one field per die."
    if error is not None:
        form.add_rules_error(error)
    if odds and form.complete() and form.spec.exact:
        try:
            form.odds = odds_rows(services.preview(**ask))
        except rules.RulesError as problem:
            if error is None and judge and not _missing(problem) and not form.has_problems():
                form.add_rules_error(problem)
    elif odds and form.spec is not None and form.spec.exact:
        form.odds_hint = "Fill in the inputs to see the exact odds."
    if form.odds is None and form.has_problems() and form.spec is not None and form.spec.exact:
        form.odds_hint = "Put right what is marked above to see the exact odds."
    if "range" in form.fields:
        measured = measured_range(board, form)
        if measured:  # the bound field keeps the help it was made with (the form's checks made it already)
            form.fields["range"].help_text = form["range"].help_text = measured
    return form


def measured_range(board, form):
    """LaserGrenadiers' range (LG-55): what the map says, from the attacker standing in the open to the
    nearest wall of the target, and the band that puts the weapon in. The players measure on the table;
    the map is only as true as the pieces' recorded spots, so this is said, not filled in."""
    state = board.snapshot.state
    unit = state.units.get(form.attacker() or "")
    target = next((s for s in board.structures if s.sid == form.data.get("structure")), None)
    if unit is None or unit.position is None or target is None or getattr(target, "map", None) is None:
        return ""
    inches = round(_distance_to_footprint(*unit.position, target.map) * 2) / 2
    words = f"On the map: about {inches:g}″ from {unit.label} to {target.name}"
    weapon = state.weapons.get(str(form.data.get("weapon", "")))
    if weapon is not None and weapon.range_factor:
        band = rules.lg.range_band(weapon, inches).replace("_", " ")
        words += f": {band}{' range' if band in ('short', 'medium', 'long') else ''} for {weapon.name}"
    return words + ". Measure on the table: that decides."


def _missing(problem):
    return isinstance(problem, rules.MissingDie) or problem.message.endswith("is required")


def fresh_form(request, battle, board, viewer, data):
    """After a resolved attack: same action and target, a new token, nothing else. The action may
    have left nothing to do to that target (a crew that left, a wall breached): that is not an error
    to show beside the result that just succeeded; it shows if the player resolves it again."""
    keep = {k: data.get(k) for k in ("action", "structure", "dice_mode") if data.get(k)}
    return attack_form(request, battle, board, viewer, _query(keep), judge=False)


def _query(values):
    q = QueryDict(mutable=True)
    for k, v in values.items():
        q[k] = v
    return q


# Context for the page and its partials ---------------------------------------------------------

def battle_context(battle, viewer=None, *, board=None, before=None, turn_above=None):
    """Everything battles/battle.html and its partials need, in a fixed number of queries
    however many structures, units and log entries the battle has."""
    board = board or load_board(battle)
    viewer = viewer or Viewer(None, None)
    log = log_page(battle, before, turn_above)
    return {
        "battle": battle,
        "viewer": viewer,
        "board": board,
        "structures": board.structures,
        "armies": board.armies,
        "map": board.map,
        "log": log.entries,
        "log_more": log.more,
        "log_oldest": log.oldest,
        "log_last_turn": log.last_turn,
        "log_before": before,
        "log_shown": len(log.entries),
        # Sequence numbers are gapless from 1, so the newest one is the number of entries.
        "log_total": newest_seq(battle) if before else (log.entries[0].seq if log.entries else 0),
        "turns": turn_context(battle, board, viewer, None if before else log),
    }


def poll_token(request, battle):
    """The page's poll token, under the membership `scoped_battle` read with the battle."""
    return watch.issue(battle.pk, request.user.pk, battle.viewer_watch)


def poller_context(battle, after, token):
    return {"poll": {"v": battle.version, "m": battle.map_version, "after": after, "t": token}}


def updates_context(battle, viewer, *, after, map_known, card, token, board=None, form=None, upto=None):
    """The bundle an HTMX caller or a polling phone gets after a change: only what changed."""
    board = board or load_board(battle)
    # Without knowing what the caller holds, send the whole log panel rather than risk duplicates.
    changes = log_changes(battle, after, upto) if after is not None else \
        SimpleNamespace(reset=True, new=[], undone=[], drop_head=None)
    newest = changes.new[0].seq if changes.new else (after or 0)
    map_changed = map_known != battle.map_version
    log = log_page(battle) if changes.reset else None
    # The newest undoable entry is usually among the new ones: no need to ask the database again.
    page = log or SimpleNamespace(entries=changes.new, more=True)
    context = {
        "battle": battle, "viewer": viewer, "board": board, "structures": board.structures, "armies": board.armies,
        "map": board.map, "turns": turn_context(battle, board, viewer, page), "changes": changes,
        "map_changed": map_changed,
        "touched": touched_by(changes.new, board, map_known=map_known, map_version=battle.map_version, card=card)
        if map_changed and not changes.reset else None,
        "card_structure": board.structure(card) if card else None,
        "card_sid": card or "", "form": form, "oob": True,
        **poller_context(battle, newest, token),
    }
    if changes.reset:
        context.update(log=log.entries, log_more=log.more, log_oldest=log.oldest, log_last_turn=log.last_turn,
                       log_total=log.entries[0].seq if log.entries else 0, log_shown=len(log.entries))
        context["poll"]["after"] = context["log_total"]
    else:
        context["log_total"] = newest
    return context


def reread(battle):
    """The battle row read again after an action. Its campaign stays cached: play never changes it, and
    the map reads a campaign's session's deployment zones from it (`deployment_zones`), which would
    otherwise cost a query on every undo's or turn's answer."""
    field = Battle.campaign.field
    campaign = field.get_cached_value(battle) if field.is_cached(battle) else None
    battle.refresh_from_db()
    if campaign is not None and battle.campaign_id == campaign.pk:
        field.set_cached_value(battle, campaign)


# What an action writes on the battle row (services._bump and log.append_entry).
COMMITTED_FIELDS = ("version", "map_version", "turn", "upkeep_turn", "sequence", "log_head")


@contextmanager
def one_moment():
    """Read the battle row, its pieces and its log as of one moment (PostgreSQL repeatable read).
    Read one after another, an action committed in between would hand the page a map version older
    than its newest entry, and its next answer would have to redraw the whole map."""
    # Inside a transaction already (a test's), the reads share that one.
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def updates_response(request, context):
    response = render(request, "battles/battle.html#updates", context)
    response["X-Battle-Version"] = str(context["battle"].version)
    if context.get("form") is None:
        # The answer does not redraw the attack form, yet what it offers may have changed (a unit
        # acted or fell, a new turn, the battle ended, the side changed hands): the form asks again
        # with what it holds. A page without the form does not listen.
        response["HX-Trigger"] = "battle-changed"
    return response


def _int(value, default=None):
    """A query or form value as an integer; anything else, or beyond what a database integer holds
    (psycopg refuses such a parameter outright), is `default`."""
    try:
        number = int(str(value))
    except (TypeError, ValueError):
        return default
    return number if -2 ** 63 < number < 2 ** 63 else default


def page_url(battle, chosen=(), **params):
    query = urlencode(list(chosen) + [(k, v) for k, v in params.items() if v])
    return reverse("battle", args=[battle.pk]) + (f"?{query}" if query else "")


# Views -----------------------------------------------------------------------------------------

@login_required
@require_GET
@never_cache
def battle_detail(request, pk):
    # Never kept by the browser: a page brought back by the back button would hold the one-time tokens
    # of actions already made (the next one sent from it would be taken for that one again and
    # dropped), and the battle as it stood when the page was first drawn.
    battle = scoped_battle(request, pk)
    board = load_board(battle)
    viewer = viewer_for(request.user, battle, board.armies)
    before = _int(request.GET.get("before"))
    context = battle_context(battle, viewer, board=board, before=before)
    # The structure tapped; an address the form wrote itself ("Update the form", a follow-up link)
    # names in `target` the unit aimed at, and the card is its structure's. A tap's link may name both.
    target = next((t for t in reversed(request.GET.getlist("target")) if t.startswith("s")), "")
    form = None
    if battle.status == BattleStatus.IN_PROGRESS:
        data = form_data(request.GET, target)
        spec = rules.ACTIONS.get(str(data.get("action", "")))
        # A tap (its link names the structure tapped and no structure of the form's) aims at the one
        # enemy inside, as the tap does with JavaScript (battle_card): left on "none", a shot at a
        # building its squad held hit nobody unless the player noticed.
        if target and "structure" not in request.GET and not data.get("target") and spec is not None and \
                any(f.name == "target" and f.type == "unit" for f in spec.fields):
            enemy = likely_target(board.snapshot.state, target, viewer)
            if enemy:
                data["target"] = enemy
        form = attack_form(request, battle, board, viewer, data)
    card = board.structure(target or (form.data.get("structure") if form else ""))
    context.update(form=form, card_structure=card, card_sid=card.sid if card else "", tap_query=tap_query(form),
                   **poller_context(battle, context["log_total"], poll_token(request, battle)))
    # What a POST without JavaScript hands on to the page it redirects to (see battle_resolve, _after_change).
    result = _int(request.GET.get("result"))
    if form is not None and result:
        entry = battle.log_entries.filter(seq=result, undone=False).first()
        form.follow_ups = not_taken(battle, entry, damage_follow_ups(battle, entry, board.snapshot.state, form.sides)) \
            if entry else []
    if viewer.organiser and battle.status != BattleStatus.FINISHED:
        # Who may play a side (the page only: answers and polls never redraw this form).
        context["commanders"] = permissions.club_members(battle.club_id)
    # A refused "Activate": the piece chosen stays chosen (`_after_change`), not the list's first.
    context["turns"]["activate_unit"] = request.GET.get("activate", "")
    if request.GET.get("dice_for") in TURN_BUTTONS:
        context["turns"].update(dice_for=request.GET["dice_for"], dice_entered=request.GET.get("dice", ""))
    # A turn button's or an undo's refusal, handed on by the POST without JavaScript (`_after_change`):
    # in the turns panel (by the dice field it is about) as the HTMX answer shows it, not at the page's
    # top, screens above the field the redirect opens at.
    shown = list(messages.get_messages(request))
    problems = [m.message for m in shown if TURN_PROBLEM in m.tags.split()]
    if problems:
        context["turns"]["problem"] = " ".join(problems)
    # "Finish battle"'s refusal, the same way: beside its field, the choices made kept (battle_finish).
    finishing = viewer.organiser and finish_offered(battle)
    refusals = [m for m in shown if FINISH_PROBLEM in m.tags.split()] if finishing else []
    if finishing:
        context["finish"] = finish_shown(
            request.GET.get("finish_winner", ""), request.GET.get("finish_result", ""),
            problem=" ".join(m.message for m in refusals),
            field="result" if any("result" in m.tags.split() for m in refusals) else "winner",
            confirm=request.GET.get("confirm") == "finish")
    if problems or refusals:
        context["messages"] = [m for m in shown if not {TURN_PROBLEM, FINISH_PROBLEM} & set(m.tags.split())]
    if request.GET.get("confirm") in CONFIRMED_ACTIONS and viewer.plays and still_asked(request.GET, battle, context):
        context["turns"].update(confirm_for=request.GET["confirm"], confirm_own=request.GET.get("own") == "1",
                                confirm_dice=request.GET.get("dice", ""))
    return render(request, "battles/battle.html", context)


@login_required
@require_GET
def battle_form(request, pk):
    """The attack form re-rendered as the player fills it in: next die, odds, errors."""
    battle = scoped_battle(request, pk)
    if not request.htmx:
        return redirect(reverse("battle", args=[pk]) + "?" + request.GET.urlencode())
    board = load_board(battle)
    viewer = viewer_for(request.user, battle, board.armies)
    if battle.status != BattleStatus.IN_PROGRESS and viewer.plays:
        return render(request, "battles/battle.html#attack_closed", {"battle": battle})
    form = attack_form(request, battle, board, viewer, form_data(request.GET))
    if form is None:
        # A phone whose player no longer commands a side here (the organiser gave it to someone else):
        # it reloads, as a watcher, rather than keep a form it may not use.
        response = HttpResponseForbidden("Only this battle's players and the club's organisers act.", content_type=PLAIN)
        response["HX-Refresh"] = "true"
        return response
    # Move the focus to the next die only while the player is entering dice.
    if not request.GET.get("changed", "").startswith("dice_"):
        for row in form.dice:
            row.focus = False
    sid = form.data.get("structure", "")
    response = render(request, "battles/battle.html#form_update", {
        "battle": battle, "viewer": viewer, "board": board, "form": form, "oob": True,
        "card_structure": board.structure(sid), "card_sid": sid,
    })
    response["HX-Replace-Url"] = shown_url(battle, request.GET)
    return response


@login_required
@require_GET
def battle_card(request, pk, sid):
    """A structure's card; tapping it on the map also makes it the attack form's target."""
    battle = scoped_battle(request, pk)
    number = _int(sid[1:]) if sid.startswith("s") else None
    if number is None or not battle.structures.filter(pk=number).exists():
        raise Http404("No such structure in this battle.")
    if not request.htmx:
        return redirect(page_url(battle, target=sid) + "#card")
    board = load_board(battle)
    viewer = viewer_for(request.user, battle, board.armies)
    data = request.GET.copy()
    spec = rules.ACTIONS.get(data.get("action", ""))
    fields = {f.name: f.type for f in spec.fields} if spec is not None else {}
    if "structure" in fields and "x" in fields:
        # A move's typed spot goes before "Into" (turns._placed): a tap, the newer choice, clears it.
        for key in ("x", "y"):
            data.pop(key, None)
    if data.get("structure") != sid:
        aims_at_structure = "structure" in fields
        if aims_at_structure:
            # A new target structure: what was chosen inside the old one no longer applies.
            for key in [k for k in data if k in PER_STRUCTURE or battle_forms.SUBFIELD in k]:
                del data[key]
        # Without a structure of its own (a damage roll on a unit) the tap only lists the units inside
        # first; a unit the player already chose stays chosen.
        data["structure"] = sid
        enemy = likely_target(board.snapshot.state, sid, viewer)
        if enemy and fields.get("target") == "unit" and (aims_at_structure or not data.get("target")):
            data["target"] = enemy
    form = attack_form(request, battle, board, viewer, data) if "action" in request.GET else None
    response = render(request, "battles/battle.html#card_update", {
        "battle": battle, "viewer": viewer, "board": board, "form": form, "oob_form": True,
        "card_structure": board.structure(sid), "card_sid": sid,
    })
    response["HX-Replace-Url"] = shown_url(battle, data, card=sid) if form is not None else page_url(battle, target=sid)
    return response


@login_required
@require_GET
def battle_log(request, pk):
    """Older entries for "load more": seq < before, newest first, 50 at a time."""
    battle = scoped_battle(request, pk)
    before = _int(request.GET.get("before"))
    if not request.htmx:
        return redirect(page_url(battle, before=before) + "#battle-log")
    log = log_page(battle, before, _int(request.GET.get("turn")))
    return render(request, "battles/battle.html#log_more", {
        "battle": battle, "log": log.entries, "log_more": log.more, "log_oldest": log.oldest,
        "log_last_turn": log.last_turn,
    })


@login_required
@post_or_back("battle")
def battle_resolve(request, pk):
    """Resolve the attack form's action on the server."""
    battle = scoped_battle(request, pk)
    data = request.POST
    if data.get("preview"):  # "Update the form" without JavaScript: show the fields, dice and odds
        if request.htmx:
            return _form_again(request, battle, data)
        # The page at its own address, opened at the form: answered here, a reload or the back button
        # would ask to post the form again, and the page opened at its top, screens above the form.
        return see_other(chosen_url(battle, data))
    action = str(data.get("action", ""))
    spec = rules.ACTIONS.get(action)
    acting = battle_forms.acting_unit_field(action)
    token = _token(data.get("client_token"))
    unasked = battle_forms.unanswered(spec, data)
    if unasked is not None:
        # The rules would take their default (no penetration, no hits): the player has not said so.
        field, why = unasked
        return _form_again(request, battle, data, rules.InputError(
            field.name, None, f"{field.label} is required after a hit: {why}"))
    try:
        entry = services.perform(
            battle_id=battle.pk, user=request.user, action=action, inputs=battle_forms.raw_inputs(spec, data),
            attacker=(str(data.get("attacker", "")).strip() or None) if acting == "attacker" else None,
            dice_values=battle_forms.dice_values(data) if data.get("dice_mode") == "player" else None,
            client_token=token,
        )
    except rules.RulesError as error:
        return _form_again(request, battle, data, error)
    target = data.get("structure", "")
    if not request.htmx:
        messages.success(request, f"#{entry.seq}: {entry.summary}")
        # Hits to roll damage for: the page offers that roll ready filled in, as the HTMX answer does.
        snapshot = getattr(entry, "snapshot", None)
        follow = damage_follow_ups(battle, entry, snapshot.state if snapshot is not None else snap.load(battle).state)
        # The same action and dice mode again, as the form in the HTMX answer keeps them (fresh_form),
        # and the card that was open, as the HTMX answer keeps it (a damage roll names no structure).
        card = str(data.get("card") or target)
        return see_other(page_url(battle, target=card, structure=target if target != card else None, action=action,
                                  dice_mode="player" if data.get("dice_mode") == "player" else None,
                                  result=entry.seq if follow else None))
    snapshot = getattr(entry, "snapshot", None)
    if snapshot is not None:
        # The battle as this action left it, and the log up to its entry: versions and entries that
        # belong together. Actions committed since arrive with the next poll.
        for name in COMMITTED_FIELDS:
            setattr(battle, name, getattr(snapshot.battle, name))
        board, upto = load_board(battle, snapshot), entry.seq
    else:
        with one_moment():
            reread(battle)
            board, upto = load_board(battle), None
    viewer = viewer_for(request.user, battle, board.armies)
    form = fresh_form(request, battle, board, viewer, data)
    if form is not None:
        form.result = entry
        form.follow_ups = damage_follow_ups(battle, entry, board.snapshot.state, form.sides)
    context = updates_context(battle, viewer, after=_after(data, entry.seq - 1), upto=upto,
                              map_known=_int(data.get("m")), card=data.get("card") or target, board=board, form=form,
                              token=poll_token(request, battle))
    response = updates_response(request, context)
    # The address names this result while it has follow-ups (a damage roll owed): a reload, or a phone
    # that slept, opens the page with them still offered (battle_detail's `result`).
    # The same action and dice mode as the form now drawn, as the plain form's redirect keeps them.
    response["HX-Replace-Url"] = page_url(battle, target=target, action=action,
                                          dice_mode="player" if data.get("dice_mode") == "player" else None,
                                          result=entry.seq if form is not None and form.follow_ups else None)
    return response


def damage_follow_ups(battle, entry, state, sides=None):
    """Bolt Action: hits on a unit are rolled for damage next. For each unit still standing that the
    entry hit, the damage roll ready filled in (unit, hits, HE or flamethrower, who fired). Disposable
    Heroes: hits on a fortification's crew are rolled to wound with the rulebook, then entered; a
    penetrating hit's Guts check is rolled once its row and casualties are known, then entered; a crew
    that routs must leave its fortification (seed 003: "Rout 9\""), which its own side (`sides`, all
    when None) records."""
    if battle.ruleset == "dh":
        links = []
        for e in (entry.outcome or {}).get("effects", []):
            s = state.structures.get(e["target"])
            if s is None or s.crew is None:
                continue
            if e["type"] == "crew_hits" and e.get("n"):
                links.append(SimpleNamespace(
                    label=f"Enter the casualties: {e['n']} hit{pluralize(e['n'])} on {s.label}'s crew",
                    query=urlencode({"action": "dh_crew_casualties", "structure": s.id, "hits": e["n"]})))
            elif e["type"] == "guts_check" and s.crew.men and not s.crew.routed:
                # The penetrating hit's Guts check, rolled now that the row and the blast are known.
                flame = e.get("note") == "flamethrower"
                links.append(SimpleNamespace(
                    label=f"Enter the Guts check of {s.label}'s crew" + (" (against a flamethrower)" if flame else ""),
                    query=urlencode({"action": "dh_guts", "structure": s.id, "flamethrower": "yes" if flame else "no"})))
            elif e["type"] == "rout" and s.crew.men and s.crew.routed and (sides is None or s.crew.side in sides):
                links.append(SimpleNamespace(
                    label=f"{s.label}'s crew routs 9″: record it leaving as infantry sections",
                    query=urlencode({"action": "dh_leave", "structure": s.id})))
        return links
    if battle.ruleset == "lg":
        return lg_hit_follow_ups(entry, state) + lg_fire_follow_ups(entry, state)
    if battle.ruleset != "ba":
        return []
    links = tank_in_the_rubble(battle, entry, state)
    # Players who rolled the hits with their own dice roll the damage with them too: opened on "Roll
    # for me", the next tap on Resolve had the server roll what they meant to roll at the table.
    own = any(die.get("source") == "player" for die in entry.dice or [])
    for effect in (entry.outcome or {}).get("effects", []):
        unit = state.units.get(effect["target"])
        if effect["type"] != "hits" or not effect.get("n") or unit is None or unit.destroyed:
            continue
        query = {"action": "ba_damage", "target": unit.id, "hits": effect["n"],
                 "source": "flamethrower" if entry.action == "ba_flamethrower" else "he",
                 "structure": unit.structure or "", "attacker": (entry.inputs or {}).get("attacker", ""),
                 "dice_mode": "player" if own else ""}
        links.append(SimpleNamespace(label=f"Roll damage: {effect['n']} hit{pluralize(effect['n'])} on {unit.label}",
                                     query=urlencode({k: v for k, v in query.items() if v})))
    return links


def lg_hit_follow_ups(entry, state):
    """LaserGrenadiers: the pieces a shot into a structure hit take the rulebook's damage roll (Rule 16, not
    in the seeds); the answer offers to record who it eliminated, and a blast warhead's survivors are
    incapacitated for the rest of the turn (seed 004, LG-63), which nothing had reminded the players of."""
    if entry.action != "lg_attack_structure":
        return []
    hit = [e for e in (entry.outcome or {}).get("effects", []) if e["type"] == "hits"
           and (u := state.units.get(e["target"])) is not None and not u.destroyed]
    if not hit:
        return []
    weapon = state.weapons.get(hit[0].get("ref", ""))
    names = ", ".join(state.units[e["target"]].label for e in hit)
    blast = weapon is not None and weapon.weapon_type in rules.tables.BLAST_WARHEADS
    label = f"Enter who {'the blast' if blast else 'the hit'} eliminated: {names}" + (
        " (survivors are incapacitated this turn)" if blast else "")
    query = [("action", "lg_blast"), *([("weapon", weapon.key)] if weapon else []),
             *[("caught", e["target"]) for e in hit]]
    return [SimpleNamespace(label=label, query=urlencode(query))]


def lg_fire_follow_ups(entry, state):
    """LaserGrenadiers: a burning structure attacks the pieces inside at the start of each turn, and a piece
    passing through one, with attack factor 5 (seed 000, 'Fires' 5); the rulebook's penetration and damage
    (Rule 16) decide who it eliminated. One link per fire, filled in with it and the pieces it attacked, to
    enter that: the upkeep's answer in the turn panel had nowhere to offer it."""
    attacked = {}
    for e in (entry.outcome or {}).get("effects", []):
        if e["type"] == "fire_attack" and (u := state.units.get(e["target"])) is not None and not u.destroyed \
                and e.get("ref") in state.structures:
            attacked.setdefault(e["ref"], []).append(u)
    return [SimpleNamespace(label=f"Enter who the fire in {state.structures[sid].label} eliminated: "
                                  f"{', '.join(u.label for u in pieces)}",
                            query=urlencode([("action", "lg_fire_casualties"), ("structure", sid),
                                             *[("caught", u.id) for u in pieces]]))
            for sid, pieces in attacked.items()]


def lg_upkeep_follow_ups(battle, state):
    """The fire attacks of this turn's upkeep whose casualties nobody has entered yet: the turn panel offers
    them on the answer, on a reload and on the other phone, until they are."""
    if battle.ruleset != "lg" or not battle.fires or battle.status != BattleStatus.IN_PROGRESS \
            or battle.upkeep_turn < battle.turn:
        return []
    entry = battle.log_entries.filter(action="upkeep", undone=False, turn=battle.turn).order_by("-seq").first()
    return not_taken(battle, entry, lg_fire_follow_ups(entry, state)) if entry else []


# What names a follow-up's piece, in its query and in the inputs the log keeps of it: for a fire's
# casualties, the structure that burned (one entry per fire, whoever the players ticked).
FOLLOW_UP_PIECE = MappingProxyType({"ba_damage": "target", "dh_crew_casualties": "structure", "dh_guts": "structure",
                                    "move": "unit", "lg_blast": "caught", "lg_fire_casualties": "structure"})


# How far back the turns panel looks for a penetrating hit whose Guts check is still to be entered: a fixed
# cost on every answer of a long battle, and a check forgotten for longer is in the log's words.
GUTS_LOOKBACK = 40


def guts_owed(battle, state, viewer):
    """Disposable Heroes: a penetrating hit's Guts check (seed 003) is the crew's roll. The attack's answer
    offers it on the phone that attacked; the crew's side is reminded here, on every phone of theirs, until it
    is entered (or the attack undone, or the crew has routed or fallen). One query, and none while the
    viewer's side holds no crewed fortification."""
    if battle.ruleset != "dh" or battle.status != BattleStatus.IN_PROGRESS:
        return []
    ours = {s.id: s for s in state.structures.values()
            if s.crew is not None and s.crew.men and not s.crew.routed and s.crew.side in viewer.sides}
    if not ours:
        return []
    decided, links = set(), []
    entries = (battle.log_entries.filter(action__in=("dh_main_gun", "dh_flamethrower", "dh_guts"), undone=False)
               .order_by("-seq").only("seq", "action", "inputs", "outcome")[:GUTS_LOOKBACK])
    for entry in entries:
        if entry.action == "dh_guts":
            decided.add((entry.inputs or {}).get("structure"))
            continue
        for e in (entry.outcome or {}).get("effects", []):
            s = ours.get(e.get("target"))
            if e.get("type") != "guts_check" or s is None or s.id in decided:
                continue
            decided.add(s.id)
            flame = e.get("note") == "flamethrower"
            links.append(SimpleNamespace(
                label=f"{s.label}'s crew owes the Guts check of #{entry.seq}" + (" (a flamethrower's)" if flame else "")
                + ": enter it",
                query=urlencode({"action": "dh_guts", "structure": s.id, "flamethrower": "yes" if flame else "no"})))
    return links


def lg_hits_owed(battle, state, viewer):
    """LaserGrenadiers: the pieces a shot into a structure hit take the rulebook's damage roll (Rule 16), and a
    blast's survivors are incapacitated (LG-63). The attack's answer offers to enter that on the phone that
    fired; the side whose pieces were hit is reminded here, on every phone of theirs, until it is entered (or
    the attack undone, or the piece eliminated since). One query, as `guts_owed`."""
    if battle.ruleset != "lg" or battle.status != BattleStatus.IN_PROGRESS:
        return []
    entered, links = set(), []
    entries = (battle.log_entries.filter(action__in=("lg_attack_structure", "lg_blast"), undone=False)
               .order_by("-seq").only("seq", "action", "inputs", "outcome")[:GUTS_LOOKBACK])
    for entry in entries:
        if entry.action == "lg_blast":
            entered.update(str((entry.inputs or {}).get("caught", "")).split(","))
            continue
        hits = [e for e in (entry.outcome or {}).get("effects", []) if e.get("type") == "hits"]
        owed = [u for e in hits if (u := state.units.get(e.get("target"))) is not None and not u.destroyed
                and u.side in viewer.sides and u.id not in entered]
        if not owed:
            continue
        entered.update(u.id for u in owed)  # an older hit on the same piece is entered with this one
        weapon = state.weapons.get(hits[0].get("ref", ""))
        blast = weapon is not None and weapon.weapon_type in rules.tables.BLAST_WARHEADS
        links.append(SimpleNamespace(
            label=f"{', '.join(u.label for u in owed)} hit by {'the blast of ' if blast else ''}#{entry.seq}: "
                  "enter who it eliminated" + (" (survivors are incapacitated this turn)" if blast else ""),
            query=urlencode([("action", "lg_blast"), *([("weapon", weapon.key)] if weapon else []),
                             *[("caught", u.id) for u in owed]])))
    return links


def not_taken(battle, entry, links):
    """The follow-ups of `entry` the log does not show done since: the page's address keeps the result
    it follows (`result`), and opened again later (the back button, a reload) it offered the same
    damage roll after it had been rolled, one tap from rolling it twice."""
    if not links:
        return links
    later = battle.log_entries.filter(seq__gt=entry.seq, undone=False, action__in=list(FOLLOW_UP_PIECE))
    done = {(action, str((inputs or {}).get(FOLLOW_UP_PIECE[action], ""))) for action, inputs in
            later.values_list("action", "inputs")}

    def piece(link):
        query = QueryDict(link.query)
        # Several pieces (a blast's) are logged as one "u1,u2".
        return query.get("action"), ",".join(query.getlist(FOLLOW_UP_PIECE.get(query.get("action"), "")))

    return [link for link in links if piece(link) not in done]


def tank_in_the_rubble(battle, entry, state):
    """A tank that brought a building down halts in its rubble (BA-47): the rules know no positions, so
    the answer offers to record it there, the Move form filled in with the spot the building stood on."""
    effects = (entry.outcome or {}).get("effects", [])
    tank = next((state.units.get(e["target"]) for e in effects if e["type"] == "went_down"), None)
    fell = next((e["target"] for e in effects if e["type"] == "collapse"), None)
    if entry.action != "ba_tank_ram" or tank is None or tank.destroyed or fell is None:
        return []
    spot = battle.structures.filter(pk=_int(fell[1:])).values("x", "y", "name").first()
    if spot is None:
        return []
    query = {"action": "move", "unit": tank.id, "x": f"{float(spot['x']):g}", "y": f"{float(spot['y']):g}"}
    return [SimpleNamespace(label=f"Record {tank.label} in the rubble of {spot['name']}", query=urlencode(query))]


def _form_again(request, battle, data, error=None):
    """The form again, with the rules' message next to the field at fault; nothing was changed."""
    board = load_board(battle)
    viewer = viewer_for(request.user, battle, board.armies)
    form = attack_form(request, battle, board, viewer, data.copy(), error=error)
    if form is None:  # a member who plays no side here: the page never offered them the form
        message = error.message if error else "Only this battle's players and the club's organisers act."
        return refused(request, message)
    form.submitted = error is not None
    if request.htmx:
        return render(request, "battles/battle.html#form_update", {
            "battle": battle, "viewer": viewer, "board": board, "form": form, "oob": True,
            "card_structure": board.structure(form.data.get("structure", "")),
            "card_sid": form.data.get("structure", ""),
        })
    # A whole page again: the browser opens it at the top, screens above the form on a phone. It
    # scrolls to an autofocus field: the first one at fault (a die at fault has its own).
    wrong = next((name for name in form.errors if name in form.fields), None)
    if wrong is not None and not any(r.error for r in form.dice):
        form.fields[wrong].widget.attrs["autofocus"] = True
    context = battle_context(battle, viewer, board=board)
    card = board.structure(data.get("card") or form.data.get("structure", ""))
    context.update(form=form, card_structure=card, card_sid=card.sid if card else "", tap_query=tap_query(form),
                   **poller_context(battle, context["log_total"], poll_token(request, battle)))
    return render(request, "battles/battle.html", context, status=422 if error else 200)


@login_required
@post_or_back("battle")
def battle_undo(request, pk):
    """Undo the newest action (an organiser, or the player who made it)."""
    battle = scoped_battle(request, pk)
    if unconfirmed(request):
        # The card open stays open through the question, as it does through the answer.
        return see_other(page_url(battle, kept_choices(request.POST), target=request.POST.get("target"),
                                  confirm="undo", seq=_int(request.POST.get("seq"))) + "#turns")
    try:
        entry = services.undo_last(battle_id=battle.pk, user=request.user, seq=_int(request.POST.get("seq")))
        done, problem = "; ".join(f"#{e.seq}: {e.summary}" for e in entry.undos), ""
    except rules.RulesError as error:
        done, problem = "", error.message
    return _after_change(request, battle, done, problem, after=_after(request.POST, None))


@login_required
@post_or_back("battle")
def battle_turn(request, pk):
    """The turn buttons: start the battle, upkeep, end the turn, and LaserGrenadiers' initiative."""
    battle = scoped_battle(request, pk)
    action = str(request.POST.get("action", ""))
    if action in CONFIRMED_ACTIONS and unconfirmed(request):
        own = request.POST.get("dice_mode") == "player"
        return see_other(page_url(battle, kept_choices(request.POST), target=request.POST.get("target"),
                                  confirm=action, turn=battle.turn, own="1" if own else None,
                                  dice=request.POST.get("dice", "") if own else None) + "#turns")
    token = _token(request.POST.get("client_token"))
    try:
        if action == "start":
            services.start(battle_id=battle.pk, user=request.user)
            entries = []
        elif action in services.TURN_ACTIONS:
            entries = services.turn_action(battle_id=battle.pk, user=request.user, action=action, client_token=token,
                                           dice_values=own_dice(request.POST), turn=_int(request.POST.get("turn")))
        elif action in ("lg_pass", "lg_activate", "lg_team_done"):
            inputs = {"unit": request.POST.get("unit", ""), "fireteam": request.POST.get("fireteam", "")} \
                if action == "lg_activate" else {}
            entries = [services.perform(battle_id=battle.pk, user=request.user, action=action, inputs=inputs,
                                        client_token=token)]
        else:
            raise rules.UnknownReference("action", action, "That is not a turn button")
        done = "; ".join(f"#{e.seq}: {e.summary}" for e in entries) or "The battle has started"
        problem = ""
    except rules.RulesError as error:
        done, problem = "", error.message
    return _after_change(request, battle, done, problem, after=_after(request.POST, None))


# Asked first, as a slip of the thumb would cost the table: by hx-confirm's dialog, or without
# JavaScript by the page (`unconfirmed`).
CONFIRMED_ACTIONS = frozenset({"undo", "end_turn"})


def still_asked(query, battle, context):
    """A confirmation's address names what it asks about: the entry to undo, the turn to end. Opened
    again once that is done (the back button, a reload), it must not ask the same of the next one."""
    if query["confirm"] == "undo":
        seq, undo = _int(query.get("seq")), context["turns"]["undo"]
        return seq is None or bool(undo) and undo["seq"] == seq
    turn = _int(query.get("turn"))
    return turn is None or turn == battle.turn


def unconfirmed(request):
    """A plain POST (no JavaScript, so no dialog asked first) that the page has not had confirmed yet."""
    return not request.htmx and request.POST.get("confirmed") != "1"


def own_dice(data):
    """The faces the players rolled for a turn button ("3 7", "3, 7"), or None to let the server roll."""
    if data.get("dice_mode") != "player":
        return None
    text = str(data.get("dice", ""))
    # Nothing typed yet is fine: the rules' answer names the first die they need.
    if re.search(r"[^\d\s.,;/-]", text):
        raise rules.InputError("dice", text, f"Enter the dice as numbers, e.g. 3 7 (not {text.strip()!r})")
    return re.findall(r"\d+", text)


TURN_PROBLEM = "turns"  # a refusal's message tag: the battle page shows it in its turns panel
FINISH_PROBLEM = "finish"  # the same for "Finish battle": shown beside its field (`finish_shown`)


def finish_offered(battle):
    """Whether the turns panel has "Finish battle" (for organisers): a campaign's session once started."""
    return battle.status != BattleStatus.FINISHED and not (battle.campaign_id and battle.status == BattleStatus.SETUP)


def finish_shown(winner="", result="", *, problem="", field="winner", confirm=False):
    """What the "Finish battle" form shows again: the result chosen and its text, a refusal beside
    `field`, and without JavaScript the question a dialog would have asked (`confirm`)."""
    return {
        "winner": winner, "result": result, "problem": problem, "field": field,
        "confirm": confirm and not problem and winner in ("A", "B", "D"),
        "open": bool(winner or result or problem),
        # "No, not yet": the form again with what was chosen.
        "query": urlencode([(k, v) for k, v in (("finish_winner", winner), ("finish_result", result)) if v]),
    }


def _after_change(request, battle, done, problem, *, after):
    target = request.POST.get("card") or request.POST.get("target", "")
    if not request.htmx:
        if problem:
            messages.error(request, problem, extra_tags=TURN_PROBLEM)
        else:
            messages.success(request, done)
        if problem and request.POST.get("dice_mode") == "player":
            # Open again where the players typed their dice, with what they typed.
            action = request.POST.get("action")
            return see_other(page_url(battle, kept_choices(request.POST), target=target, dice_for=action,
                                      dice=request.POST.get("dice", "")) + f"#dice-{action}")
        return see_other(page_url(battle, kept_choices(request.POST), target=target,
                                  activate=refused_activation(request, problem)))
    battle.refresh_from_db(fields=["status"])
    if not problem and request.POST.get("action") == "start":
        # A battle that starts gains its attack form and turn buttons: simplest to load the page anew.
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    with one_moment():
        reread(battle)
        board = load_board(battle)
        viewer = viewer_for(request.user, battle, board.armies)
        context = updates_context(battle, viewer, after=after, map_known=_int(request.POST.get("m")),
                                  card=target, board=board, token=poll_token(request, battle))
    context["turns"].update(done=done, problem=problem, activate_unit=refused_activation(request, problem))
    if problem and request.POST.get("dice_mode") == "player":
        # Open again where the players typed their dice, with what they typed.
        context["turns"].update(dice_for=request.POST.get("action"), dice_entered=request.POST.get("dice", ""))
    return updates_response(request, context)


def refused_activation(request, problem):
    """The piece a refused "Activate" named: the panel drawn again offers it chosen."""
    if problem and request.POST.get("action") == "lg_activate":
        return str(request.POST.get("unit", ""))
    return ""


def poll_refused(message):
    """403 for a poll that may no longer watch (token expired, access withdrawn, link revoked). htmx
    reloads the page on HX-Refresh before it treats the status as an error, so the phone lands on a
    fresh page or the refusal, with nothing logged as broken."""
    response = HttpResponseForbidden(message, content_type=PLAIN)
    response["HX-Refresh"] = "true"
    return response


@require_GET
def battle_poll(request, pk):
    """Has anything changed? Answered from the signed token and one small query when nothing has:
    no session, no user row. Only a change costs an access check and the panels that changed."""
    try:
        user_id, membership_id, held_epoch = watch.read(request.GET.get("t"), pk)
    except watch.InvalidToken:
        return poll_refused("This page's watch token is invalid or has expired: reload the page.")
    row = Battle.objects.versions(pk, watcher=(membership_id, user_id))
    if row is None:
        raise Http404("No such battle.")
    version, map_version, epoch = row
    # Before "unchanged": a page that may no longer watch must not learn even that nothing happened.
    refusal = permissions.watch_refused(held_epoch, epoch)
    if refusal:
        return poll_refused(refusal)
    if (version, map_version) == (_int(request.GET.get("v")), _int(request.GET.get("m"))):
        return HttpResponse(status=204)
    role = permissions.watcher_role(user_id, pk)
    if role is None:
        return poll_refused("You are no longer a member of this battle's club.")
    with one_moment():
        battle = Battle.objects.select_related("campaign", "scenario").get(pk=pk)
        board = load_board(battle)
        viewer = Viewer(user_id, role, permissions.sides_commanded(user_id, role, board.armies))
        context = updates_context(battle, viewer, after=_int(request.GET.get("after"), 0),
                                  map_known=_int(request.GET.get("m")), card=request.GET.get("card", ""),
                                  board=board, token=request.GET.get("t"))
    return updates_response(request, context)


def likely_target(state, sid, viewer):
    """The one enemy unit inside a structure just tapped: what the player most likely means to hit."""
    structure = state.structures.get(sid)
    if structure is None:
        return None
    enemies = [f.unit for f in structure.floors
               if f.unit in state.units and state.units[f.unit].side not in viewer.sides]
    return enemies[0] if len(enemies) == 1 else None


def kept_choices(data):
    """The attack form's choices a plain turn or undo form sends (`chosen`: its page's `tap_query`), as
    pairs for the address it answers with: the page comes back with them, as with JavaScript the form
    stays as it was. Only what a tap may carry is kept."""
    query = QueryDict(str(data.get("chosen", "")))
    return [(k, v) for k, values in query.lists() if k not in NOT_CARRIED and not DIE_FIELD.fullmatch(k)
            for v in values if v and (k != "target" or v.startswith("u"))]


def _after(data, default):
    after = _int(data.get("after"))
    return default if after is None or after < 0 else after


def _token(value):
    """A client token as the log stores it, or None for a missing or malformed one."""
    if not value:
        return None
    token = battle_forms.client_token(value)
    return token if token == str(value).strip().lower() else None
