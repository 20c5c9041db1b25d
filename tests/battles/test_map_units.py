"""Units in the open on the map (views.fan_out, views.units_svg): where several stand on one spot, or
nearly, each dot and each unit's "1 pin" or "routed" must stay readable. A later dot was drawn over an
earlier unit's mark, and on a crowded spot a player could not tell which unit was pinned."""

import math
import random
import re
import uuid
from types import SimpleNamespace

from apps.armies.models import Unit
from apps.battles.models import Battle
from apps.battles.views import dots_moved, fan_out, load_board, map_of, name_box, names_moved, touched_by
from apps.structures.models import Structure
from tests import factories
from tests.battles.test_poll import HTMX, held
from tests.battles.test_views import signed, uid, url, w  # noqa: F401 - w is the battle fixture
from tests.campaigns.test_pages import body

# What Debian's Chromium draws (getBBox of the demo's marks, DejaVu Sans Bold at 1.3 inches), the halo
# (the text's 0.35-inch stroke) added; a dot's radius and half its ring.
MARK_WIDTH = {"1 pin": 3.70, "2 pins": 4.44, "3 pins": 4.44, "routed": 4.89}
MARK_HEIGHT, HALO, DOT = 1.54, 0.35, 1.175

UNIT = re.compile(r'<circle class="map-unit[^"]*" cx="([\d.]+)" cy="([\d.]+)" r="1" role="img" aria-label="([^"(]+) '
                  r'\([^"]*"><title>[^<]*</title></circle><text class="map-unit-initials"[^>]*>[^<]*</text>'
                  r'(?:<text class="map-unit-state" x="([\d.-]+)" y="([\d.-]+)" aria-hidden="true">([^<]+)</text>)?')


def drawn(html):
    """Each unit's dot and its mark's box as the page draws them: {name: ((x, y), box or None)}."""
    group = re.search(r'<g id="map-units"[^>]*>(.*?)</g>', html, re.S).group(1)
    units = {}
    for x, y, name, mx, my, mark in UNIT.findall(group):
        box = None
        if mark:
            half_w, half_h = (MARK_WIDTH[mark] + HALO) / 2, (MARK_HEIGHT + HALO) / 2
            box = (float(mx) - half_w, float(my) - half_h, float(mx) + half_w, float(my) + half_h)
        units[name] = ((float(x), float(y)), box)
    assert len(units) == group.count('<circle class="map-unit '), "every dot parsed"
    return units


def gap(spot, box):
    """How far a dot's centre is from a box (0 inside it)."""
    x0, y0, x1, y1 = box
    return math.dist(spot, (min(max(spot[0], x0), x1), min(max(spot[1], y0), y1)))


def boxes_meet(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def assert_readable(units, table=(72, 48)):
    for name, (spot, box) in units.items():
        for other, (other_spot, other_box) in units.items():
            if other == name:
                continue
            if box:
                assert gap(other_spot, box) >= DOT, f"{other}'s dot over {name}'s mark"
                assert not (other_box and boxes_meet(box, other_box)), (name, other)
                # Read as its own: nearer its dot than any other.
                assert gap(spot, box) < gap(other_spot, box), (name, other)
            # Nor a dot's ring under another dot (the initials are on the dots).
            assert math.dist(spot, other_spot) >= 2 * DOT, (name, other)
        if box:
            assert 0 <= box[0] and 0 <= box[1] and box[2] <= table[0] and box[3] <= table[1], name


def test_units_on_one_spot_keep_each_mark_clear_of_every_other_dot(client, db):
    """Disposable Heroes: a crew's three sections leave their bunker onto one spot, all routed, beside a
    pinned squad and a fresh one; another pinned squad stands an inch off. The second and third dots were
    drawn over the first's "routed", and the pinned squad's "1 pin" lay under the next dot."""
    dh = factories.make_world(ruleset="dh", club_name="Heroes club")
    for name, pins in (("Section 1", 3), ("Section 2", 3), ("Section 3", 3), ("Squad pinned", 1), ("Squad fresh", 0)):
        dh.unit("A", name, x=30, y=20, pins=pins)
    dh.unit("B", "Near squad", x=31, y=20.5, pins=2)
    dh.unit("B", "Far squad", x=60, y=40, pins=1)
    units = drawn(body(signed(client, dh.alice).get(url(dh, "battle"))))
    assert len(units) == 7 and sum(box is not None for _, box in units.values()) == 6
    assert_readable(units)
    # Nobody moves who need not: the first on the spot, and a unit alone with its mark under it.
    assert units["Far squad"] == ((60, 40), (60 - 2.025, 41.8 - 0.945, 60 + 2.025, 41.8 + 0.945))
    assert units["Section 1"][0] == (30, 20)
    # The crowd stays round its spot.
    assert all(math.dist(spot, (30, 20)) < 8 for spot, _ in units.values() if spot != (60, 40))


def test_a_unit_moved_onto_a_crowded_spot_is_redrawn_clear_in_the_answer(client, w):
    """The live update redraws only the units' group: the answer to a move draws the crowd as the page does."""
    Unit.objects.filter(pk=w.pioneers.pk).update(x=10, y=5, pins=1)
    Unit.objects.filter(pk=w.rifles.pk).update(pins=2)
    signed(client, w.alice)
    page_held = held(w)
    answer = body(client.post(url(w, "battle_resolve"), {
        "action": "move", "unit": uid(w.gun), "x": "10", "y": "5", "client_token": str(uuid.uuid4()),
        "m": page_held["m"], "after": page_held["after"], "v": page_held["v"]}, **HTMX))
    assert '<g id="map-units" hx-swap-oob="true">' in answer and 'id="map"' not in answer
    units = drawn(answer)
    assert set(units) == {"Field gun", "Rifles", "Pioneers"}
    assert_readable(units)
    assert units == drawn(body(client.get(url(w, "battle"))))


def test_a_mark_at_the_tables_edge_goes_where_it_can_be_read(client, w):
    """A pinned unit on the bottom edge: its "1 pin" under it fell off the table."""
    Unit.objects.filter(pk=w.pioneers.pk).update(y=47.5, pins=1)
    spot, box = drawn(body(signed(client, w.alice).get(url(w, "battle"))))["Pioneers"]
    assert spot == (40, 47.5) and box[3] <= 48 and (box[1] + box[3]) / 2 < 47.5 - DOT  # over the dot


def test_any_crowd_keeps_every_dot_and_mark_apart():
    """Two hundred seeded crowds: units dropped on a few spots of a small table, pinned or not."""
    rng = random.Random(6)
    for _ in range(200):
        spots = [(rng.uniform(0, 40), rng.uniform(0, 30)) for _ in range(rng.randint(1, 4))]
        pieces = []
        for i in range(rng.randint(2, 12)):
            x, y = rng.choice(spots)
            pins = rng.choice([0, 0, 1, 2, 3])
            pieces.append(SimpleNamespace(name=f"U{i}", x=round(x + rng.choice([0, 0, 0.5, 1.5]), 2), y=round(y, 2),
                                          pins=pins, routed=pins >= 3 and rng.random() < 0.5))
        fan_out(pieces, 40, 30)
        units = {}
        for p in pieces:
            box = None
            if p.mark:
                half_w, half_h = (MARK_WIDTH[p.mark] + HALO) / 2, (MARK_HEIGHT + HALO) / 2
                box = (p.mark_x - half_w, p.mark_y - half_h, p.mark_x + half_w, p.mark_y + half_h)
            units[p.name] = ((p.x, p.y), box)
        assert_readable(units, table=(40, 30))


# Units beside the structures' names and badges ------------------------------------------------------

def labels_drawn(html):
    """The boxes of the names and side badges the page draws: those the units must keep off."""
    boxes = [name_box(name, float(x), float(y)) for x, y, name in
             re.findall(r'<text class="map-name" x="([\d.]+)" y="([\d.]+)">([^<]+)</text>', html)]
    boxes += [(float(x) - 1.3, float(y) - 1.3, float(x) + 1.3, float(y) + 1.3) for x, y in
              re.findall(r'<g class="map-badge[^"]*"><circle cx="([\d.]+)" cy="([\d.]+)"', html)]
    return boxes


def test_units_beside_a_structure_keep_off_its_name_and_badge(client, w):
    """The demo's "PF" dot stood over the Brick townhouse's "2" badge and a "1 pin" ran into a name: the
    grenadiers hold the brick house (side B's badge under its right side); the pioneers, pinned, stand on
    that badge, the rifles, pinned, on the house's name. Both stay by their spots, clear of both."""
    Unit.objects.filter(pk=w.pioneers.pk).update(x=31.6, y=22.2, pins=1)
    Unit.objects.filter(pk=w.rifles.pk).update(x=30, y=24.7, pins=1)
    html = body(signed(client, w.alice).get(url(w, "battle")))
    boxes = labels_drawn(html)
    assert len(boxes) == 2  # the house's name and its badge
    units = drawn(html)
    assert_readable(units)
    for name, spot in (("Pioneers", (31.6, 22.2)), ("Rifles", (30, 24.7))):
        at, mark = units[name]
        assert mark and math.dist(at, spot) < 5
        for box in boxes:
            assert gap(at, box) >= DOT, f"{name}'s dot over {box}"
            assert not boxes_meet(mark, box), f"{name}'s mark over {box}"


def test_a_name_moved_by_a_fire_redraws_the_dot_it_now_stands_on(client, w):
    """Units never move names, but the names move the dots: a hut caught fire, which moves its name
    (above it, the yard wall below) up over the scouts' dot. A page that held the hut unburnt redraws the
    units with the hut, as a fresh page draws them, though no unit changed."""
    hut = w.structure("Hut", floors=1, x=50, y=20, width=2, depth=2)
    w.structure("Yard wall", floors=1, x=50, y=22.5, width=8, depth=1)
    w.unit("A", "Scouts", x=50, y=14.9)
    Structure.objects.filter(pk=hut.pk).update(fire_size=2, fire_started_turn=1, flammable=True)
    battle = Battle.objects.get(pk=w.battle.pk)
    board = load_board(battle)
    html = body(signed(client, w.alice).get(url(w, "battle")))
    assert drawn(html)["Scouts"][0] != (50, 14.9)  # off the hut's name
    fire = [SimpleNamespace(touched={"structures": {f"s{hut.pk}": {"fire": None}}}, touched_after=False)]
    touched = touched_by(fire, board, map_known=battle.map_version - 1, map_version=battle.map_version, card="")
    assert touched.units == [] and touched.map_units
    # Far from the scouts, the fire leaves the units as they were: not redrawn.
    Unit.objects.filter(name="Scouts").update(x=10, y=40)
    board = load_board(battle)
    touched = touched_by(fire, board, map_known=battle.map_version - 1, map_version=battle.map_version, card="")
    assert touched.pieces and not touched.map_units


# Units beside a structure's fire and its crew's mark -------------------------------------------------

# A crew's mark as Debian's Chromium draws it at 1.6 inches (MARK_WIDTH's, measured at 1.3, scaled), the
# halo added; a fire's diamond, 2.3 inches a side turned a quarter, its 0.2-inch stroke added.
CREW_WIDTH = {mark: width * 1.6 / 1.3 + HALO for mark, width in MARK_WIDTH.items()}
CREW_HEIGHT, FIRE_HALF = MARK_HEIGHT * 1.6 / 1.3 + HALO, 2.3 * math.sqrt(2) / 2 + 0.1


def structure_row(name, x, y, w, d, *, crew_pins=None, fire=None, damage=0):
    """A structure as load_board hands it to map_of (the one on the table): no floors (no one inside); a
    crewed bunker's crew with `crew_pins` pins; burning with a fire of `fire` square inches; `damage`
    points taken of 10."""
    return SimpleNamespace(
        name=name, pk=1, sid="s1", x=x, y=y, width=w, depth=d, rotation=0,
        floor_rows=[], collapsed=False, destroyed=False, damage_taken=damage, damage_max=10,
        damage_percent=10 * damage, impassable=False,
        burning=fire is not None, fire_size=fire, sheet_id=1 if crew_pins is not None else None,
        crewed=crew_pins is not None, crew_routed=False, crew_men=4, crew_pins=crew_pins or 0)


def unit_row(name, x, y, side="A"):
    return SimpleNamespace(name=name, uid=f"u-{name}", x=x, y=y, pins=0, destroyed=False,
                           floor_id=None, army=SimpleNamespace(side=side))


def table(structures, units):
    battle = SimpleNamespace(ruleset="dh", table_width=72, table_depth=48)
    return SimpleNamespace(structures=structures, units=units, map=map_of(battle, structures, units))


def test_a_dot_keeps_off_a_bunkers_crew_mark_and_its_fire():
    """A pillbox, its crew pinned twice and on fire: its "2 pins" under its middle, its fire's diamond above.
    A squad standing just below it and another just above drew their dots over both: a player read
    neither how pinned the crew was nor how big the fire. Each dot moves off them, no further than it must."""
    pillbox = structure_row("Pillbox", 30, 20, 2, 2, crew_pins=2, fire=4)
    below, above = unit_row("Squad below", 30, 22.6), unit_row("Squad above", 30.5, 17.5)
    board = table([pillbox], [below, above])
    assert (pillbox.map.crew, pillbox.map.fire) == ("2 pins", "4")
    half_w = CREW_WIDTH["2 pins"] / 2
    crew = (30 - half_w, 22.4 - CREW_HEIGHT / 2, 30 + half_w, 22.4 + CREW_HEIGHT / 2)
    fire = (30 - FIRE_HALF, 17.6 - FIRE_HALF, 30 + FIRE_HALF, 17.6 + FIRE_HALF)
    dots = {u.name: u for u in board.map["units"]}
    for name, spot in (("Squad below", (30, 22.6)), ("Squad above", (30.5, 17.5))):
        dot = dots[name]
        assert dot.spot == spot
        for box in (crew, fire):
            assert gap((dot.x, dot.y), box) >= DOT, f"{name}'s dot over {box}"
        assert math.dist(spot, (dot.x, dot.y)) < 5


def test_a_fire_or_a_crews_new_pin_that_moves_a_dot_redraws_the_units():
    """No unit moved, but the pillbox caught fire, or its crew took a second pin ("2 pins" is wider than
    "1 pin"): a dot beside it now keeps off the new diamond or the longer mark, and a page that held the
    map before the change must redraw the units as a fresh page draws them."""
    squad = unit_row("Squad", 33.2, 22.4)
    pillbox = structure_row("Pillbox", 30, 20, 2, 2, crew_pins=2, fire=4)
    board = table([pillbox], [squad])
    crew_then = {"men": 4, "pins": 1, "routed": False}
    dot = board.map["units"][0]
    assert (dot.x, dot.y) != (33.2, 22.4)  # off the "2 pins", which reaches 33.1
    pin = [SimpleNamespace(touched={"structures": {pillbox.sid: {"fire": 4, "crew": crew_then}}}, touched_after=False)]
    assert dots_moved(board, names_moved(pin, board)[1])  # "1 pin" reached 32.6: it stood on its spot
    squad = unit_row("Squad", 29, 16)
    board = table([structure_row("Pillbox", 30, 20, 2, 2, crew_pins=0, fire=4)], [squad])
    fire = [SimpleNamespace(touched={"structures": {pillbox.sid: {"fire": None, "crew": {"men": 4, "pins": 0}}}},
                            touched_after=False)]
    assert dots_moved(board, names_moved(fire, board)[1])
    # Far from both, neither change moves the dot.
    board = table([structure_row("Pillbox", 30, 20, 2, 2, crew_pins=2, fire=4)], [unit_row("Squad", 50, 30)])
    assert not dots_moved(board, names_moved(pin, board)[1]) and not dots_moved(board, names_moved(fire, board)[1])


# A dot pushed off a long name ---------------------------------------------------------------------------

LEADER = re.compile(r'<line class="map-unit-leader side-(\w)" x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" '
                    r'y2="([\d.]+)" aria-hidden="true"></line><circle class="map-unit-spot side-\w" cx="([\d.]+)" '
                    r'cy="([\d.]+)" r="([\d.]+)" aria-hidden="true"></circle>')


def test_a_dot_pushed_off_a_long_name_goes_straight_off_it_and_points_to_where_the_unit_stands():
    """The demo's mortar team stands three inches below the German Concrete Blockhouse, on its name (18
    inches long, under it). Its dot was drawn 3.6 inches off, up and to the left, level with the
    blockhouse's edge: the nearest of the rings round its spot with room (none straight up under four
    inches), where 2.9 straight up was clear. A player could not tell it stood three inches off the
    bunker. It goes straight off the name, as near as it fits, and a line runs from where it stands to
    its dot. A unit drawn on its own spot has no line."""
    blockhouse = structure_row("German Concrete Blockhouse", 33, 40, 6, 4, crew_pins=1)
    mortar, scouts = unit_row("Mortar team", 26, 45), unit_row("Scouts", 60, 10, side="B")
    board = table([blockhouse], [mortar, scouts])
    name = name_box(blockhouse.map.label, blockhouse.map.name_x, blockhouse.map.name_y)
    assert name[1] < 45 < name[3] and name[0] < 26 < name[2]  # the mortar team stands on the name
    dots = {u.name: u for u in board.map["units"]}
    dot = dots["Mortar team"]
    assert gap((dot.x, dot.y), name) >= DOT
    # Straight up (below it the table ends), a hair clear of the name: no farther.
    assert dot.x == 26 and 45 - dot.y <= 45 - name[1] + DOT + 0.45
    assert (dots["Scouts"].x, dots["Scouts"].y) == (60, 10)
    # A ring on its spot, the line from the ring's edge to the dot.
    (side, x1, y1, x2, y2, cx, cy, r), = LEADER.findall(board.map["units_svg"])
    assert (side, cx, cy, x2, y2) == ("A", "26", "45", f"{dot.x:g}", f"{dot.y:g}")
    assert float(x1) == 26 and abs(45 - float(y1) - float(r)) < 0.01 and float(y1) > dot.y
    # Under the dots, so a line never crosses another unit's initials.
    assert board.map["units_svg"].index("map-unit-leader") < board.map["units_svg"].index('class="map-unit ')


# A dot on a structure's damage figure ------------------------------------------------------------------

# "40%" as Debian's Chromium draws it (DejaVu Sans Bold at 2.1 inches: `.map text`), the halo added.
DAMAGE_WIDTH, DAMAGE_HEIGHT = 2.45 * 2.1 + HALO, 1.2 * 2.1 + HALO


def test_a_dot_keeps_off_a_structures_damage_figure_and_a_new_figure_redraws_the_units():
    """A squad standing on a damaged pillbox's middle drew its dot over the pillbox's "40%": a player read
    the squad, not how near the pillbox was to falling. The dot moves off the figure, no farther than it
    must. A page that held the map before the pillbox was first damaged drew the dot on its spot: the
    attack's answer must redraw the units, and a figure that changed far from every dot must not."""
    pillbox = structure_row("Pillbox", 30, 20, 8, 6, damage=4)
    board = table([pillbox], [unit_row("Squad", 30.5, 20.3)])
    assert pillbox.map.damage == "40%"
    figure = (30 - DAMAGE_WIDTH / 2, 20 - DAMAGE_HEIGHT / 2, 30 + DAMAGE_WIDTH / 2, 20 + DAMAGE_HEIGHT / 2)
    dot = board.map["units"][0]
    assert dot.spot == (30.5, 20.3)
    assert gap((dot.x, dot.y), figure) >= DOT
    assert math.dist(dot.spot, (dot.x, dot.y)) < 4
    first = [SimpleNamespace(touched={"structures": {pillbox.sid: {"damage_taken": 0, "damage_max": 10}}},
                             touched_after=False)]
    assert dots_moved(board, names_moved(first, board)[1])
    # 30% before: "30%" is as wide as "40%", so the dot stood where it stands.
    more = [SimpleNamespace(touched={"structures": {pillbox.sid: {"damage_taken": 3, "damage_max": 10}}},
                            touched_after=False)]
    assert not dots_moved(board, names_moved(more, board)[1])
    # Rubble shows no figure: the pillbox collapsed at the attack, and the dot went back to its spot.
    rubble = structure_row("Pillbox", 30, 20, 8, 6, damage=10)
    rubble.collapsed = True
    board = table([rubble], [unit_row("Squad", 30.5, 20.3)])
    assert rubble.map.damage == "" and (board.map["units"][0].x, board.map["units"][0].y) == (30.5, 20.3)
    assert dots_moved(board, names_moved(more, board)[1])
    # Far from the figure, the first damage leaves the dot where it was.
    board = table([structure_row("Pillbox", 30, 20, 8, 6, damage=4)], [unit_row("Squad", 50, 30)])
    assert not dots_moved(board, names_moved(first, board)[1])
