"""Taps on the map's words and dots, in a real Chromium at a phone's size. A structure's name took no
tap: the tap went to whatever tap shape lay under it, often a neighbour's (drawn later, over the name),
whose card opened. A unit's dot took the tap and did nothing, even standing on a structure's shape."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser.conftest import sign_in
from tests.browser.test_battle_screen import swapped

pytestmark = [pytest.mark.browser]

# Whose tap shape lies under a point of the page (drawn in its piece, or apart under every piece).
UNDER = """(x, y) => {
  const hit = document.elementsFromPoint(x, y).find(el => el.classList.contains('map-hit'));
  const owner = hit && hit.closest('[data-tap], .map-structure');
  return owner && (owner.dataset.tap || owner.dataset.structure);
}"""

# Each drawn name's structure, full name and middle on the page; whose tap shape is under it.
NAMES = """() => Array.from(document.querySelectorAll('#map .map-structure'), piece => {
  const name = piece.querySelector('.map-name');
  if (!name) return null;
  const r = name.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
  return [piece.getAttribute('aria-label').split(',')[0], x, y, (UNDER)(x, y), piece.dataset.structure];
}).filter(Boolean)""".replace("UNDER", UNDER)

# Each unit's dot standing on a structure's tap shape: where, and that structure's name.
DOTS = """() => Array.from(document.querySelectorAll('#map .map-unit'), dot => {
  const r = dot.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
  const sid = (UNDER)(x, y);
  if (!sid) return null;
  return [dot.getAttribute('aria-label'), x, y,
          document.getElementById('map-' + sid).getAttribute('aria-label').split(',')[0]];
}).filter(Boolean)""".replace("UNDER", UNDER)


def battle_page(live_server, demo, watch, **kwargs):
    page = sign_in(watch("alice", **kwargs), live_server.url, "alice")
    page.goto(live_server.url + reverse("battle", args=[demo.pk]))
    page.locator("#map svg").scroll_into_view_if_needed()
    page.map_scroll = page.evaluate("scrollY")  # where the taps' points are measured (see tap_map)
    return page


def tap_map(page, x, y):
    """A thumb on the map at (x, y), measured with the page scrolled to the map: a tap's card comes into view
    (battle.js), so the page is scrolled back before the next."""
    page.evaluate("y => window.scrollTo(0, y)", page.map_scroll)
    with swapped(page, "#card"):
        page.touchscreen.tap(x, y)


def test_a_tap_on_the_map_brings_the_card_and_the_attack_form_into_view_on_a_phone(live_server, demo, watch):
    """Exploratory test at 390x844: after a tap on a structure, its card and the attack form began at about
    y=770, at the foot of the screen, and the page did not move: the player saw nothing happen."""
    page = battle_page(live_server, demo, watch)
    assert page.viewport_size == {"width": 390, "height": 844}
    name, x, y, *_ = page.evaluate(NAMES)[0]
    assert page.locator("#card").evaluate("card => card.getBoundingClientRect().top") > 844 / 2
    tap_map(page, x, y)
    expect(page.locator("#card-title")).to_have_text(name)
    expect(page.locator("#card-title")).to_be_in_viewport()
    top = page.locator("#card").evaluate("card => card.getBoundingClientRect().top")
    assert 0 <= top < 844 / 2, top


def test_a_tap_on_a_structures_name_opens_that_structures_card(live_server, demo, watch):
    page = battle_page(live_server, demo, watch)
    names = page.evaluate(NAMES)
    assert len(names) >= 12, names
    # The demo has names over a neighbour's tap shape: those went to the neighbour.
    assert any(under != sid for *_, under, sid in names), names
    for name, x, y, *_ in names:
        tap_map(page, x, y)
        expect(page.locator("#card-title")).to_have_text(name)


def test_a_tap_on_a_name_opens_its_card_without_javascript(live_server, demo, watch):
    page = battle_page(live_server, demo, watch, javascript=False)
    name, x, y, under, sid = next(n for n in page.evaluate(NAMES) if n[3] != n[4])
    with page.expect_navigation():
        page.mouse.click(x, y)
    assert f"target={sid}" in page.url
    expect(page.locator("#card-title")).to_have_text(name)


def test_a_tap_on_a_units_dot_opens_the_card_of_the_structure_under_it(live_server, demo, watch):
    """A dot in the open stands beside a building: a tap on it is meant for what is there, as the tap
    beside it is. (A unit's own card is its row in the armies list; the dot says its name.)"""
    page = battle_page(live_server, demo, watch)
    dots = page.evaluate(DOTS)
    assert dots, "some dot stands on a structure's tap shape"
    for _, x, y, name in dots:
        tap_map(page, x, y)
        expect(page.locator("#card-title")).to_have_text(name)


# For each tap shape, a point of the page where it is what a finger lands on (round the footprint, not
# on any piece's footprint, name or badge): its structure and that point.
MARGINS = """() => Array.from(document.querySelectorAll('#map .map-taps [data-tap]'), tap => {
  const r = tap.querySelector('.map-hit').getBoundingClientRect();
  for (const [fx, fy] of [[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0], [1, 0.5], [0.5, 1], [0, 0.5]]) {
    const x = r.left + 3 + fx * (r.width - 6), y = r.top + 3 + fy * (r.height - 6);
    const top = document.elementFromPoint(x, y);
    if (top && top.closest('a') === tap) return [tap.dataset.tap, x, y];
  }
  return null;
}).filter(Boolean)"""


def links_heard(page):
    """Every link in Chromium's accessibility tree (what a screen reader lists), by name: how many each."""
    tree = page.context.new_cdp_session(page).send("Accessibility.getFullAXTree")["nodes"]
    heard = {}
    for node in tree:
        if not node.get("ignored") and node.get("role", {}).get("value") == "link":
            name = node.get("name", {}).get("value", "")
            heard[name] = heard.get(name, 0) + 1
    return heard


def test_each_structure_is_one_link_to_a_screen_reader_and_its_margin_still_takes_a_tap(live_server, demo, watch):
    """Each tap shape round a footprint was a link named by its structure's piece: a screen reader listed
    every structure twice on the map. In the accessibility tree each structure is one link, its piece's,
    and one Tab stop; the thumb's width round its footprint still opens its card for a sighted tap."""
    page = battle_page(live_server, demo, watch)
    pieces = page.locator("#map .map-structure")
    words = pieces.evaluate_all("links => links.map(a => a.getAttribute('aria-label'))")
    assert len(words) >= 12
    expect(page.locator("#map svg").get_by_role("link")).to_have_count(len(words))
    heard = links_heard(page)
    assert {w: heard.get(w, 0) for w in words} == {w: 1 for w in words}
    margins = page.evaluate(MARGINS)
    assert len(margins) >= 12, margins
    for tap, x, y in margins[:4]:
        piece = page.locator(f"#map-{tap}")
        name = piece.get_attribute("aria-label").split(",")[0]
        tap_map(page, x, y)
        expect(page.locator("#card-title")).to_have_text(name)
        # The keyboard: from the piece before it, Tab lands on this structure's own link, not its shape,
        # and Enter opens its card.
        at = page.evaluate("tap => [...document.querySelectorAll('#map .map-structure')]"
                           ".indexOf(document.getElementById('map-' + tap))", tap)
        if at > 0:
            pieces.nth(at - 1).focus()
            page.keyboard.press("Tab")
            expect(piece).to_be_focused()
            with swapped(page, "#card"):
                page.keyboard.press("Enter")
            expect(page.locator("#card-title")).to_have_text(name)


# Where on the page a point of the table (in inches) is drawn.
ON_PAGE = """([x, y]) => {
  const svg = document.querySelector('#map svg.map');
  const point = svg.createSVGPoint();
  point.x = x; point.y = y;
  const at = point.matrixTransform(svg.getScreenCTM());
  return [at.x, at.y, Boolean(document.elementFromPoint(at.x, at.y).closest('a'))];
}"""


def test_a_tap_on_open_ground_gives_the_move_its_spot(live_server, demo, watch):
    """Moving a unit to a spot on the table asked a thumb to type its x and y in inches, read off a tape
    measure against the map. With the Move form open, a tap on open ground fills them in, to the half inch;
    Record moves the unit there. A tap on a structure still opens its card and fills in nothing."""
    from apps.armies.models import Unit

    gun = Unit.objects.get(army__battle=demo, name="Field gun team")
    page = sign_in(watch("alice"), live_server.url, "alice")
    page.goto(live_server.url + reverse("battle", args=[demo.pk]) + f"?action=move&unit=u{gun.pk}")
    expect(page.locator("#id_unit")).to_have_value(f"u{gun.pk}")
    page.locator("#map svg").scroll_into_view_if_needed()
    x, y, on_a_link = page.evaluate(ON_PAGE, [60.0, 33.0])
    assert not on_a_link, "the spot chosen is open ground"
    with swapped(page, "#attack-form"):
        page.touchscreen.tap(x, y)
    expect(page.locator("#id_x")).to_have_value("60")
    expect(page.locator("#id_y")).to_have_value("33")
    expect(page.locator("#map .map-spot-chosen")).to_have_count(1)
    with swapped(page, "#attack-form"):
        page.locator("#attack-form button.resolve").click()
    expect(page.locator("#attack-form .result")).to_contain_text("Field gun team moves to 60″, 33″")
    gun.refresh_from_db()
    assert (float(gun.x), float(gun.y), gun.floor_id) == (60, 33, None)

    # Still moving (the form keeps its action): a tap on a structure opens its card, no spot.
    expect(page.locator("#id_action")).to_have_value("move")
    page.locator("#map svg").scroll_into_view_if_needed()
    box = page.locator("#map .map-structure[aria-label^='Stone church'] .map-footprint").bounding_box()
    with swapped(page, "#card"):
        page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(page.locator("#card-title")).to_have_text("Stone church")
    expect(page.locator("#id_x")).to_have_value("")
    expect(page.locator("#map .map-spot-chosen")).to_have_count(0)
