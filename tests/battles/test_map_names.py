"""Where the map writes each structure's name (views.place_names) and how far round it a piece takes a
tap (views.reach_out, views.Reach): plain functions of the pieces; and the answers and polls that redraw a neighbour
whose name a change moved (views.names_moved)."""

import random
import re
import uuid
from types import SimpleNamespace

import pytest
from django.urls import reverse

from apps.battles import services
from apps.battles.views import NAME_LINE, Reach, _overlap, layout_reach, name_box, place_names, reach_out
from apps.structures.models import Structure
from tests.battles.test_poll import HTMX, held
from tests.battles.test_views import he_attack, sid, signed, uid, w  # noqa: F401 - w is the battle fixture
from tests.campaigns.test_pages import body


def piece(name, cx, cy, w, d, badges=()):
    """A structure's map piece as map_of leaves it: an unturned footprint, its name's spots below, above
    and a line lower (no badges or crew that push it further down)."""
    below = d / 2 + 1.3
    return SimpleNamespace(name=name, map=SimpleNamespace(
        name=name, cx=cx, cy=cy, w=w, d=d, rotation=0, name_y=cy + below,
        badges=list(badges),
        name_spots=(cy + below, cy - below, cy + below + NAME_LINE),
        corners=[(cx - w / 2, cy - d / 2), (cx + w / 2, cy - d / 2), (cx + w / 2, cy + d / 2), (cx - w / 2, cy + d / 2)]))


def boxes_meet(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_a_name_is_counted_at_least_as_wide_as_chromium_draws_it():
    """Widths Debian's Chromium measured for the demo's names (getBBox, DejaVu Sans Bold at 1.45 inches):
    counted at 0.6 of the font size a letter, "Church tower" came out 10.44 of its 11.0 inches."""
    measured = {"Stone church": 10.763, "Church tower": 11.001, "Timber workshop": 14.272,
                "German Concrete B…": 17.266, "Communication tre…": 17.011}
    for name, width in measured.items():
        x0, _, x1, _ = name_box(name, 0, 0)
        assert x1 - x0 >= width + 0.3, name  # and the halo, 0.15 inches each side
    assert name_box("WWW", 0, 0)[2] > name_box("iii", 0, 0)[2]


def test_the_church_and_its_tower_both_keep_their_names_apart():
    """The demo's Stone church and Church tower, the tower (smaller, so placed second) just right of the
    church: below, its name would run into the church's; it goes elsewhere, and both still show."""
    church, tower = piece("Stone church", 54, 16, 8, 6), piece("Church tower", 62, 17.5, 3, 3)
    place_names([church, tower], 72, 48)
    assert church.map.name == "Stone church" and church.map.name_y == 16 + 3 + 1.3
    assert tower.map.name == "Church tower" and tower.map.name_y != tower.map.name_spots[0]
    assert not boxes_meet(name_box("Stone church", 54, church.map.name_y), name_box("Church tower", 62, tower.map.name_y))


def test_a_name_that_fits_nowhere_is_left_out():
    """A shed on the table's bottom edge (nothing fits below it) under a larger neighbour's name."""
    house = piece("Long house name", 30, 38, 6, 6)
    shed = piece("Shed", 30, 46.5, 2, 2)
    place_names([house, shed], 72, 48)
    assert house.map.name == "Long house name" and shed.map.name == ""


def test_a_name_stays_off_a_footprint_drawn_after_it_not_one_drawn_before():
    """The map draws the structures in order, so a later footprint would cover the name; over an earlier one
    the name is drawn on top and reads."""
    shed = piece("Shed", 30, 20, 2, 2)
    barn = piece("Barn", 30, 26, 6, 6)  # across where the shed's name would go below it
    place_names([shed, barn], 72, 48)
    assert shed.map.name_y == shed.map.name_spots[1]  # above: the barn is drawn after it
    shed, barn = piece("Shed", 30, 20, 2, 2), piece("Barn", 30, 26, 6, 6)
    place_names([barn, shed], 72, 48)
    assert shed.map.name_y == shed.map.name_spots[0]


def test_a_long_thin_footprints_name_slides_along_it_to_a_free_spot():
    """The demo's communication trench: 12 inches long, its name 17. The loghouse at its left end (drawn
    after it) takes the spot above, the cottage's name the spots below; centred, its name fitted nowhere
    and showed only on a tap. Slid along the trench, it sits above it, clear of both."""
    trench = piece("Communication tre…", 40, 8, 12, 1.5)
    cottage = piece("Timber cottage", 42, 15, 5, 4)
    cottage.map.name_spots = (11.3,)  # where the demo's cottage has its name: above it, just under the trench
    loghouse = piece("Soviet AT/HMG Log…", 31, 4, 5, 4, badges=[SimpleNamespace(x=29.4, y=6.2)])
    loghouse.map.name_spots = (8.7,)  # below its badge
    place_names([trench, cottage, loghouse], 72, 48)
    assert cottage.map.name_y == 11.3 and trench.map.name == "Communication tre…"
    box = name_box(trench.map.name, trench.map.name_x, trench.map.name_y)
    for other in (cottage, loghouse):
        assert not boxes_meet(box, name_box(other.map.name, other.map.name_x, other.map.name_y))
    assert not boxes_meet(box, (28.5, 2, 33.5, 6))  # the loghouse's footprint
    assert 34 < trench.map.name_x < 46  # still over its own trench


THUMB = 44 * 72 / 344  # inches of a 72-inch table under 44 px of a 360 px phone's map: 9.2


def extent(shape):
    xs, ys = [x for x, _ in shape], [y for _, y in shape]
    return min(xs), min(ys), max(xs), max(ys)


def test_a_lone_small_piece_takes_a_thumbs_width_of_taps_on_the_narrowest_phone():
    (hut,) = pieces = [piece("Hut", 30, 20, 2, 2)]
    reach_out(pieces, 72, 48)
    assert extent(hut.map.hit) == pytest.approx((30 - THUMB / 2, 20 - THUMB / 2, 30 + THUMB / 2, 20 + THUMB / 2), abs=0.01)


def test_a_piece_by_the_tables_edge_takes_its_thumbs_width_inside_the_table():
    """Off the table a tap meets nothing: the shape slides in, still a thumb's width each way."""
    (hut,) = pieces = [piece("Hut", 1.5, 46.5, 2, 2)]
    reach_out(pieces, 72, 48)
    assert extent(hut.map.hit) == pytest.approx((0, 48 - THUMB, THUMB, 48), abs=0.01)


def test_a_piece_takes_no_tap_from_its_neighbour_and_slides_away_from_it():
    """The demo's tower, two and a half inches from the church's wall, took taps on a circle 38 px
    across on a 390 px phone: one radius, stopped by the wall. Its shape now stops on the line halfway
    across the gap (a tap there goes to the nearer piece) and slides right, the whole thumb's width
    across; the church's stops on the same line, so the two never meet."""
    church, tower = pieces = [piece("Stone church", 54, 16, 8, 6), piece("Church tower", 62, 17.5, 3, 3)]
    reach_out(pieces, 72, 48)
    halfway = (58 + 60.5) / 2
    assert extent(tower.map.hit) == pytest.approx((halfway, 17.5 - THUMB / 2, halfway + THUMB, 17.5 + THUMB / 2), abs=0.01)
    assert extent(church.map.hit)[2] <= halfway
    assert not _overlap(church.map.hit, tower.map.hit)


def test_pieces_closer_than_a_thumb_share_the_gaps_between_them():
    """Blocks an inch apart (the query tests' large battle): each takes the half-inch of gap on its side
    and a thumb's height, and no shape reaches another block or its shape."""
    pieces = [piece(f"Block {n}", 3 * n + 5, 30, 2, 2) for n in range(10)]
    reach_out(pieces, 72, 48)
    for n, p in enumerate(pieces):
        x0, y0, x1, y1 = extent(p.map.hit)
        assert (y1 - y0) == pytest.approx(THUMB, abs=0.01)
        if 0 < n < 9:
            assert (x0, x1) == pytest.approx((3 * n + 3.5, 3 * n + 6.5), abs=0.01)
        for other in pieces[n + 1:]:
            assert not _overlap(p.map.hit, other.map.hit)
            assert not _overlap(p.map.hit, other.map.corners)


def test_no_tap_shape_meets_another_or_another_footprint_on_random_tables():
    """200 seeded tables of 2 to 14 pieces, some turned, of the demo's sizes: every two shapes lie apart
    (a hundredth of an inch of rounding aside), and none covers another piece's footprint, except where
    the two footprints themselves overlap."""
    rng = random.Random(7)
    for _ in range(200):
        pieces = [layout_reach(((rng.uniform(2, 70), rng.uniform(2, 46), rng.choice((2, 3, 5, 8, 12)),
                                 rng.choice((1.5, 2, 4, 6)), rng.choice((0, 0, 90, 15, 350, 20))),), 72, 48).given[0]
                  for _ in range(rng.randint(2, 14))]
        reach = Reach(pieces, 72, 48)
        shapes = [shrunk(reach.shape(p)) for p in pieces]
        for i, p in enumerate(pieces):
            for j, o in enumerate(pieces[i + 1:], i + 1):
                if not _overlap(p.corners, o.corners):
                    assert not _overlap(shapes[i], shapes[j])
                    assert not _overlap(shapes[i], o.corners) and not _overlap(shapes[j], p.corners)


def shrunk(shape, by=0.02):
    mx, my = sum(x for x, _ in shape) / len(shape), sum(y for _, y in shape) / len(shape)
    return [(x + (mx - x) * by, y + (my - y) * by) for x, y in shape]


# Live updates: an answer redraws the pieces whose names moved -----------------------------------

def drawn_piece(html, structure):
    """What the map draws of a structure (inside its link): its circle, footprint, name and badges."""
    found = re.search(r'<a id="map-s%d"[^>]*>(.*?)</a>' % structure.pk, html, re.S)
    return found and found.group(1).strip()


def name_y(piece):
    found = re.search(r'<text class="map-name" x="[^"]*" y="([^"]*)"', piece or "")
    return found and float(found.group(1))


@pytest.fixture
def huts(w):
    """Beside the house: a hut, and a woodshed whose name sits below it, clear of the hut's. Rifles moving
    into the hut bring side A's badge under its left side, over where the woodshed's name reaches: that
    name must go above its footprint, on every phone."""
    w.hut = w.structure("Hut", floors=1, x=50, y=20, width=2, depth=2)
    w.woodshed = w.structure("Woodshed", floors=1, x=43, y=20, width=2, depth=2)
    return w


def move_in(w, client, params):
    return client.post(reverse("battle_resolve", args=[w.battle.pk]), {
        "action": "move", "unit": uid(w.rifles), "structure": sid(w.hut), "floor": "0",
        "client_token": str(uuid.uuid4()), "m": params["m"], "after": params["after"], "v": params["v"]}, **HTMX)


def test_a_move_that_pushes_a_neighbours_name_redraws_it_where_the_page_would(client, huts):
    w = huts
    signed(client, w.alice)
    before = body(client.get(reverse("battle", args=[w.battle.pk])))
    assert name_y(drawn_piece(before, w.woodshed)) == 20 + 1 + 1.3  # below its footprint
    params = held(w)
    answer = body(move_in(w, client, params))
    assert "Resolved #" in answer
    page_now = body(client.get(reverse("battle", args=[w.battle.pk])))
    woodshed = drawn_piece(page_now, w.woodshed)
    assert name_y(woodshed) < 20  # above it now: the hut's badge stands where it was
    # The mover's own answer and another phone's poll (one change behind) redraw the woodshed as the
    # page draws it, though the move changed neither it nor its row in the list.
    poll = body(client.get(reverse("battle_poll", args=[w.battle.pk]), params, **HTMX))
    for html in (answer, poll):
        assert "<template><svg>" in html and '<div id="map"' not in html  # pieces, not the whole map
        assert drawn_piece(html, w.woodshed) == woodshed
        assert drawn_piece(html, w.hut) == drawn_piece(page_now, w.hut)
        assert f'id="structure-{w.woodshed.pk}"' not in html
        assert drawn_piece(html, w.house) is None  # its name stays where it was: not redrawn


def test_a_move_out_again_brings_the_neighbours_name_back(client, huts):
    w = huts
    signed(client, w.alice)
    move_in(w, client, held(w))
    params = held(w)
    services.perform(battle_id=w.battle.pk, user=w.alice, action="move",
                     inputs={"unit": uid(w.rifles), "x": "10", "y": "5"})
    poll = body(client.get(reverse("battle_poll", args=[w.battle.pk]), params, **HTMX))
    page_now = body(client.get(reverse("battle", args=[w.battle.pk])))
    assert name_y(drawn_piece(page_now, w.woodshed)) == 20 + 1 + 1.3
    assert drawn_piece(poll, w.woodshed) == drawn_piece(page_now, w.woodshed)


def redrawn(html):
    """The pieces of the map an answer redraws on their own (not the whole map)."""
    assert '<div id="map"' not in html and "<template><svg>" in html
    return set(re.findall(r'<a id="map-(s\d+)"', html))


def test_a_page_that_held_what_an_undo_took_back_gets_only_that_piece(client, w):
    """The upkeep had doubled the house's fire; the undo takes it back. The undo keeps what it took back
    (as an action keeps what it changed): a phone that held the upkeep redraws the house alone, as the
    page now draws it. It got the whole map, as the undo's record said only what it restored."""
    signed(client, w.alice)
    Structure.objects.filter(pk=w.house.pk).update(fire_size=2, fire_started_turn=1, flammable=True)
    for _ in range(2):  # the second turn's upkeep doubles the fire: a change to the house alone
        services.turn_action(battle_id=w.battle.pk, user=w.alice, action="end_turn")
    params = held(w)
    services.undo_last(battle_id=w.battle.pk, user=w.alice)
    poll = body(client.get(reverse("battle_poll", args=[w.battle.pk]), params, **HTMX))
    page_now = body(client.get(reverse("battle", args=[w.battle.pk])))
    assert redrawn(poll) == {sid(w.house)}
    assert drawn_piece(poll, w.house) == drawn_piece(page_now, w.house)
    assert '<g class="map-fire">' in drawn_piece(poll, w.house)


def test_an_undone_move_redraws_where_the_unit_was_and_the_neighbour_whose_name_comes_back(client, huts):
    """The rifles moved into the hut, pushing the woodshed's name above it; the undo takes them back
    to the table. The phone that undid it and one that polls each redraw the hut (its badge gone), the
    woodshed (its name back below) and the units on the table, as the page now draws them: no more."""
    w = huts
    signed(client, w.alice)
    move_in(w, client, held(w))
    params = held(w)
    answer = body(client.post(reverse("battle_undo", args=[w.battle.pk]),
                              {"seq": params["after"], "after": params["after"], "m": params["m"]}, **HTMX))
    assert "Undid #" in answer
    poll = body(client.get(reverse("battle_poll", args=[w.battle.pk]), params, **HTMX))
    page_now = body(client.get(reverse("battle", args=[w.battle.pk])))
    assert name_y(drawn_piece(page_now, w.woodshed)) == 20 + 1 + 1.3
    for html in (answer, poll):
        assert redrawn(html) == {sid(w.hut), sid(w.woodshed)}
        for structure in (w.hut, w.woodshed):
            assert drawn_piece(html, structure) == drawn_piece(page_now, structure)
        assert '<g id="map-units" hx-swap-oob="true">' in html and "Rifles (side A)" in html
        assert f'id="structure-{w.hut.pk}"' in html and f'id="unit-{w.rifles.pk}"' in html


def over_group(html):
    """The footprints #map-over draws again (their links' addresses carry the page's form choices, which an
    answer's do not: with JavaScript, a tap asks for the card with the form's choices as they are)."""
    found = re.search(r'<g id="map-over"[^>]*>(.*?)</g>', html, re.S)
    return found and re.findall(r'data-tap="[^"]*">.*?</a>', found.group(1))


def test_a_name_moved_over_a_footprint_hands_the_footprint_its_taps_on_every_phone(client, huts):
    """A barrel stands above the woodshed. The rifles moving into the hut push the woodshed's name above
    it, across the barrel (drawn before it): the barrel's footprint is drawn again over the names, in
    #map-over, or a tap on it opened the woodshed. The mover's answer and a watching phone's poll redraw
    that group as a page opened afresh draws it."""
    w = huts
    barrel = w.structure("Barrel", floors=1, x=43, y=17.5, width=1, depth=1)
    signed(client, w.alice)
    before = body(client.get(reverse("battle", args=[w.battle.pk])))
    assert over_group(before) == []
    params = held(w)
    answer = body(move_in(w, client, params))
    poll = body(client.get(reverse("battle_poll", args=[w.battle.pk]), params, **HTMX))
    page_now = body(client.get(reverse("battle", args=[w.battle.pk])))
    assert name_y(drawn_piece(page_now, w.woodshed)) < 20
    assert over_group(page_now) == [f'data-tap="{sid(barrel)}"><rect class="map-hit" x="42.5" y="17" width="1" height="1">'
                                    '</rect></a>']
    for html in (answer, poll):
        assert '<g id="map-over" aria-hidden="true" hx-swap-oob="true">' in html
        assert over_group(html) == over_group(page_now)
    # A move in the open, which moves no name, leaves the group as it is.
    params = held(w)
    services.perform(battle_id=w.battle.pk, user=w.alice, action="move", inputs={"unit": uid(w.gun), "x": "31", "y": "5"})
    assert over_group(body(client.get(reverse("battle_poll", args=[w.battle.pk]), params, **HTMX))) is None


# One entry a structure ------------------------------------------------------------------------------

def map_links(html):
    """Each link on the map, with whether a screen reader finds it (no aria-hidden on it or on the group
    it is in): (the link's attributes, found)."""
    svg = re.search(r'<svg class="map".*?</svg>', html, re.S).group(0)
    found = []
    for group, links in re.findall(r'<g (class="map-taps"[^>]*|id="map-over"[^>]*)>(.*?)</g>', svg, re.S):
        found += [(a, "aria-hidden" not in group + a) for a in re.findall(r"<a ([^>]*)>", links)]
    rest = re.sub(r'<g (?:class="map-taps"|id="map-over")[^>]*>.*?</g>', "", svg, flags=re.S)
    return found + [(a, "aria-hidden" not in a) for a in re.findall(r"<a ([^>]*)>", rest)]


def named(html, element_id):
    """The aria-label of the element with that id."""
    return re.search(rf'id="{element_id}"[^>]*aria-label="([^"]*)"', html).group(1)


def test_each_structure_is_one_named_link_and_one_keyboard_stop_on_the_map(client, huts):
    """Each tap shape (the thumb's width round a footprint, a footprint under a neighbour's name in
    #map-over) was a link named by its piece: a screen reader listed every structure twice, the shape and
    the piece. The piece's own link is its one entry, named with the state an answer redraws it with, and
    its one Tab stop; the shapes still take a sighted tap (a link each, hidden and out of the Tab order)."""
    w = huts
    barrel = w.structure("Barrel", floors=1, x=43, y=17.5, width=1, depth=1)
    signed(client, w.alice)
    move_in(w, client, held(w))  # the woodshed's name now lies across the barrel: #map-over draws it
    html = body(client.get(reverse("battle", args=[w.battle.pk])))
    links = map_links(html)
    structures = Structure.objects.filter(battle=w.battle)
    shown = [a for a, found in links if found]
    # Each structure once: its piece's link (data-structure), no shape's (data-tap).
    assert sorted(re.search(r'data-(?:structure|tap)="(\w+)"', a).group(0) for a in shown) == \
        sorted(f'data-structure="{sid(s)}"' for s in structures)
    for attributes in shown:
        tap = re.search(r'data-structure="(\w+)"', attributes).group(1)
        assert f'id="map-{tap}"' in attributes and "tabindex" not in attributes
        assert named(html, f"map-{tap}").startswith(f"{Structure.objects.get(pk=tap[1:]).name}, ")
    hidden = [a for a, found in links if not found]
    assert sorted(re.search(r'data-tap="(\w+)"', a).group(1) for a in hidden) == \
        sorted([sid(s) for s in structures] + [sid(barrel)])
    for attributes in hidden:
        assert 'tabindex="-1"' in attributes and 'href="' in attributes and "aria-labelledby" not in attributes
    house = f"map-{sid(w.house)}"
    # An attack on the house: its piece comes back out of band with its new state, under the same id.
    answer = body(client.post(reverse("battle_resolve", args=[w.battle.pk]), {
        **he_attack(w, dice_0="6", dice_1="6"), **held(w)}, **HTMX))
    assert "Resolved #" in answer and "map-taps" not in answer
    assert named(answer, house) != named(html, house)
    assert named(answer, house) == named(body(client.get(reverse("battle", args=[w.battle.pk]))), house)
