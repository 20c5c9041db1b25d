"""Layout a club runs into away from the battle screen's happy path, in real Chromium on a phone:
names a club typed without spaces, and the places a page jumps to."""

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from apps.armies.models import Unit
from apps.battles.models import Battle
from apps.campaigns.models import Campaign
from apps.structures.models import BunkerSheet, Structure
from tests.browser.conftest import sign_in
from tests.browser.test_battle_screen import die, swapped

pytestmark = [pytest.mark.browser]


def test_names_without_spaces_do_not_widen_any_page(live_server, demo, watch):
    """A session named with 120 letters and no space (the field allows it), a structure, a unit on the
    campaign's roster and a sheet likewise: every page they appear on still fits a 390 px phone, so nothing needs sideways scrolling
    and no tap lands on the wrong panel."""
    Battle.objects.filter(pk=demo.pk).update(name="Crossroads" + "Z" * 110)
    house = Structure.objects.get(battle=demo, name="Brick house at the crossroads")
    Structure.objects.filter(pk=house.pk).update(name="Brick" + "H" * 60)
    Unit.objects.filter(army__campaign_id=demo.campaign_id, name="Grenadier Squad 1").update(name="Grenadier" + "G" * 100)
    sheet = BunkerSheet.objects.order_by("pk").first()
    BunkerSheet.objects.filter(pk=sheet.pk).update(name="Sheet" + "S" * 60)
    campaign = Campaign.objects.get(pk=demo.campaign_id)
    page = sign_in(watch("demo"), live_server.url, "demo")
    for path in ("/", reverse("club", args=[campaign.club.slug]), reverse("campaign", args=[campaign.pk]),
                 reverse("battle", args=[demo.pk]) + f"?target=s{house.pk}", reverse("sheet", args=[sheet.pk]),
                 reverse("sheet_print", args=[sheet.pk])):
        page.goto(live_server.url + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width} px wide on a 390 px phone"


def test_a_jump_to_a_fragment_is_not_hidden_under_the_header(live_server, demo, watch):
    """Where the header stays on screen (one line, wider than a phone), a #fragment's target must
    show below it; on a phone the header scrolls away with the page."""
    campaign = Campaign.objects.get(pk=demo.campaign_id)
    url = live_server.url + reverse("club", args=[campaign.club.slug]) + "#members"
    phone = sign_in(watch("demo on a phone"), live_server.url, "demo")
    phone.goto(url)
    assert phone.evaluate("getComputedStyle(document.querySelector('.site-header')).position") == "static"
    desk = sign_in(watch("demo at a desk"), live_server.url, "demo")
    desk.set_viewport_size({"width": 1280, "height": 800})
    desk.goto(url)
    header = desk.evaluate("document.querySelector('.site-header').getBoundingClientRect().bottom")
    target = desk.evaluate("document.getElementById('members').getBoundingClientRect().top")
    assert desk.evaluate("window.scrollY") > 0 and target >= header, (target, header)
    expect(desk.locator("#members")).to_be_in_viewport()


def test_the_message_of_an_action_that_lands_far_down_the_page_is_on_screen(live_server, demo, watch):
    """"Change role" lands on the member's row, far below the message at the top of the page: the
    message stays in view (on a phone and at a desk) until it fades, above the row, not over its name."""
    campaign = Campaign.objects.get(pk=demo.campaign_id)
    for who, width in (("demo on a phone", 390), ("demo at a desk", 1280)):
        page = sign_in(watch(who), live_server.url, "demo")
        page.set_viewport_size({"width": width, "height": 700})
        page.goto(live_server.url + reverse("club", args=[campaign.club.slug]))
        row = page.locator(".member", has_text="bob")
        row.locator("select[name=role]").select_option("designer")
        with page.expect_navigation():
            row.get_by_role("button", name="Change role").click()
        assert "#member-" in page.url and page.evaluate("window.scrollY") > 0
        message = page.locator(".messages .message-success")
        expect(message).to_have_text("bob is now designer.")
        expect(message).to_be_in_viewport()
        # …and not over the row it landed on: the row's name showed under the message.
        covered = page.evaluate("""() => [document.querySelector('.messages').getBoundingClientRect().bottom,
                                          document.querySelector(':target').getBoundingClientRect().top]""")
        assert covered[1] >= covered[0], f"the message (bottom {covered[0]}) covers the row (top {covered[1]})"
        row.locator("select[name=role]").select_option("player")  # back, for the next width
        with page.expect_navigation():
            row.get_by_role("button", name="Change role").click()


@pytest.mark.parametrize("width", [320, 640])
def test_the_campaign_page_fits_the_narrowest_phone_and_two_columns(live_server, demo, watch, width):
    """At 320 px a session's title once pushed its card off the screen and the menu broke its words
    ("Club / s"); at 640 px (two cards a row) the tally's table was wider than its card. The page
    never scrolls sideways: a table too wide scrolls inside its card."""
    page = watch("demo")
    page.set_viewport_size({"width": width, "height": 800})
    sign_in(page, live_server.url, "demo")
    page.goto(live_server.url + reverse("campaign", args=[demo.campaign_id]))
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    heights = page.evaluate("""() => Array.from(document.querySelectorAll('.site-nav > a, .menu > summary'))
                                 .map(el => el.getBoundingClientRect().height)""")
    assert heights and max(heights) < 60, heights  # one line each: no word broken over two


def test_a_bunker_crews_losses_leave_the_tallys_last_column_on_a_phone(live_server, demo, watch):
    """A Disposable Heroes campaign's tally says under a side's losses how many were bunker crew. The
    line was kept on one line with its figures, and "5 of them bunker crew" beside "Panzergrenadier
    platoon" pushed "Units destroyed" 70 px past a 390 px phone's card: the organiser had to scroll the
    table sideways to see it."""
    campaign = Campaign.objects.get(name="Winter Line")
    bunker = campaign.structures.get(sheet__isnull=False)
    Structure.objects.filter(pk=bunker.pk).update(crew_men=bunker.crew_start - 5)
    page = sign_in(watch("olga"), live_server.url, "olga")
    page.goto(live_server.url + reverse("campaign", args=[campaign.pk]))
    expect(page.locator("#tally-sides")).to_contain_text("5 of them bunker crew")
    inside, wide = page.locator("#tally .table-scroll").evaluate("e => [e.clientWidth, e.scrollWidth]")
    assert wide <= inside, f"the tally is {wide} px wide in a {inside} px card"


def test_a_choice_whose_words_wrap_keeps_a_full_size_box_to_tap(live_server, demo, watch):
    """A piece's choice names it with its side, models and place, which wraps on a phone: the
    checkbox beside it shrank to 13 px (flex gave the words its room), a smaller box than its
    neighbours' and hard to hit. Every radio and checkbox of the attack form stays 1.2rem square.
    LaserGrenadiers' blast lists every piece as a checkbox, so the demo battle plays it here."""
    Battle.objects.filter(pk=demo.pk).update(ruleset="lg")
    page = watch("alice")
    page.set_viewport_size({"width": 360, "height": 800})
    sign_in(page, live_server.url, "alice")
    page.goto(live_server.url + reverse("battle", args=[demo.pk]) + "?action=lg_blast")
    boxes = page.evaluate("""() => Array.from(document.querySelectorAll(
        '#attack-form input[type=checkbox], #attack-form input[type=radio]'), el => {
          const r = el.getBoundingClientRect(); return [el.name, Math.round(r.width), Math.round(r.height)]; })""")
    wrapped = page.evaluate("""() => Array.from(document.querySelectorAll('#field-caught label'))
                                 .filter(label => label.getBoundingClientRect().height > 50).length""")
    assert wrapped, "no choice wraps at 360 px: the test no longer tests anything"
    assert boxes and all(w == h == 19 for _, w, h in boxes), boxes


def test_a_turn_button_is_as_tall_as_its_words_not_as_its_neighbours_reason(live_server, demo, watch):
    """LaserGrenadiers before the upkeep: End turn's reason runs to nine lines on a phone, and the Pass
    button beside it (disabled, its own reason three lines) was stretched to fill the row, three lines
    of empty button. Each button is as tall as its label; the reasons sit under them."""
    Battle.objects.filter(pk=demo.pk).update(ruleset="lg", upkeep_turn=demo.turn - 1, sequence={})
    page = watch("alice")
    page.set_viewport_size({"width": 390, "height": 800})
    sign_in(page, live_server.url, "alice")
    page.goto(live_server.url + reverse("battle", args=[demo.pk]))
    heights = page.evaluate("""() => Object.fromEntries(Array.from(document.querySelectorAll('#turns .turn-button'),
                                 b => [b.dataset.action, Math.round(b.getBoundingClientRect().height)]))""")
    reasons = page.evaluate("() => Array.from(document.querySelectorAll('#turns .turn-reason'), p => p.id)")
    assert {"why-lg_pass", "why-end_turn"} <= set(reasons), reasons  # both disabled, each with its reason
    assert heights["lg_pass"] == heights["end_turn"] < 60, heights


@pytest.mark.parametrize("width", [320, 390, 1280])
def test_the_clubs_menu_opens_on_the_screen(live_server, demo, watch, width):
    """On a phone the nav wraps to a second line and "Clubs" starts it at the left: its list, hung from
    the right of "Clubs", ran off the screen's left edge ("o Club" of "Redoubt Demo Club")."""
    page = watch("alice")
    page.set_viewport_size({"width": width, "height": 700})
    sign_in(page, live_server.url, "alice")
    page.locator(".menu > summary").click()
    link = page.locator(".menu-list a", has_text="Redoubt Demo Club")
    expect(link).to_be_visible()
    box = page.locator(".menu-list").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, (box, width)
    link.click()
    expect(page).to_have_url(re.compile(r"/clubs/redoubt-demo-club/$"))


def test_a_phone_enters_seven_dice_two_a_row_each_row_level(live_server, demo, watch):
    """Seven damage dice stood in one column of seven on a 360 px phone (the grid asked 9.5rem a die).
    Two a row now; and as the first die's label names the roll and wraps, and a die may carry an error
    under it, the inputs of a row still line up (a subgrid of label, input, error)."""
    mg = Unit.objects.get(army__battle=demo, name="MG team")
    page = watch("alice")
    page.set_viewport_size({"width": 360, "height": 800})
    sign_in(page, live_server.url, "alice")
    page.goto(live_server.url + reverse("battle", args=[demo.pk]) + f"?action=ba_damage&target=u{mg.pk}&hits=7"
              "&dice_mode=player")

    def inputs():
        return page.evaluate("""() => Array.from(document.querySelectorAll('.die-input'),
                                  el => { const r = el.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top)]; })""")
    before = inputs()
    assert len(before) == 7
    assert len({left for left, _ in before}) == 2, before  # two columns
    assert len({top for _, top in before}) == 4, before  # four rows, each pair level
    assert page.evaluate("document.documentElement.scrollWidth") <= 360

    for i in range(7):
        if i == 1:  # no d6 face: battle.js waits for more, and "Go" moves on
            with swapped(page, "#attack-form"):
                page.locator("#id_dice_1").press_sequentially("7")
                page.locator("#id_dice_1").press("Enter")
        else:
            die(page, i, 3)
    page.locator("#attack-form .resolve").click()
    expect(page.locator("#error-dice_1")).to_contain_text("7 is not a d6 result")
    after = inputs()
    assert after[0][1] == after[1][1], after  # the error under the second die does not lift its input
    assert len({top for _, top in after}) == 4, after


MAP_NAME_BOXES = """() => {
  const svg = document.querySelector('#map svg.map');
  const scale = svg.getScreenCTM().a;  // screen px per inch of table
  return Array.from(svg.querySelectorAll('.map-name'), t => {
    // The white halo is the text's stroke, painted outside the glyphs' box by half its width.
    const halo = parseFloat(getComputedStyle(t).strokeWidth) / 2 * scale;
    const r = t.getBoundingClientRect();
    return [t.textContent, r.left - halo, r.top - halo, r.right + halo, r.bottom + halo];
  });
}"""


@pytest.mark.parametrize("width", [360, 390, 430, 1280])
def test_no_two_names_on_the_map_touch(live_server, demo, watch, width):
    """"Stone church" and "Church tower" ran into each other on a 390 px phone: their names were placed
    as if a letter were 0.6 of the font size wide and the white halo took no room. Measured as Chromium
    draws them, halo included, no two names on the demo's map meet, on a phone or at a desk."""
    page = watch("alice")
    page.set_viewport_size({"width": width, "height": 800})
    sign_in(page, live_server.url, "alice")
    page.goto(live_server.url + reverse("battle", args=[demo.pk]))
    boxes = page.evaluate(MAP_NAME_BOXES)
    names = [b[0] for b in boxes]
    assert {"Stone church", "Church tower"} <= set(names), names
    meeting = [(a[0], b[0]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
               if a[1] < b[3] and b[1] < a[3] and a[2] < b[4] and b[2] < a[4]]
    assert meeting == [], (meeting, boxes)


MAP_TAPS = """() => {
  // For each piece: its tap shape's size on screen, and what a tap lands on at its footprint's middle,
  // just inside its footprint's corners and edges, and just inside each corner of its tap shape: the
  // piece itself, or a unit's dot drawn over it (units take no tap). And where to tap it as a thumb
  // would, from the map's top left (a card that opens takes the focus, and the page scrolls).
  const svg = document.querySelector('#map svg'), scale = svg.getScreenCTM().a, map = svg.getBoundingClientRect();
  const on = (el, x, y) => new DOMPoint(x, y).matrixTransform(el.getScreenCTM());
  return Array.from(document.querySelectorAll('#map .map-structure'), piece => {
    const sid = piece.dataset.structure, foot = piece.querySelector('.map-footprint');
    const hit = document.querySelector(`#map [data-tap="${sid}"] .map-hit`);
    const box = hit.getBoundingClientRect();
    const points = [], inset = 2 / scale;
    const fx = foot.x.baseVal.value, fy = foot.y.baseVal.value;
    const fw = foot.width.baseVal.value, fd = foot.height.baseVal.value;
    for (const [u, v] of [[0.5, 0.5], [0, 0], [0.5, 0], [1, 0], [1, 0.5], [1, 1], [0.5, 1], [0, 1], [0, 0.5]])
      points.push(on(foot, fx + inset + u * (fw - 2 * inset), fy + inset + v * (fd - 2 * inset)));
    const corners = Array.from(hit.points || [], p => on(hit, p.x, p.y));  // (a circle has none)
    if (!corners.length) corners.push(points[0]);
    const mx = corners.reduce((a, p) => a + p.x, 0) / corners.length;
    const my = corners.reduce((a, p) => a + p.y, 0) / corners.length;
    for (const p of corners) {  // 3 px in from the corner, towards the middle: inside a convex shape
      const d = Math.hypot(mx - p.x, my - p.y) || 1;
      points.push(new DOMPoint(p.x + 3 * (mx - p.x) / d, p.y + 3 * (my - p.y) / d));
    }
    // A thumb's taps: the footprint's middle and edges, and halfway out to each corner of the shape.
    // (Not at its very edge: where a finger's width covers two pieces, Chromium picks one by their
    // boxes, names included, as it did with circles; a person tapping there meant neither for sure.)
    const thumb = [0, 2, 4, 6, 8].map(i => points[i]);
    for (const p of corners) thumb.push(new DOMPoint((p.x + mx) / 2, (p.y + my) / 2));
    const elsewhere = [], taps = [], named = [];
    points.concat(thumb).forEach((p, i) => {
      // Its tap shape (under every piece) or the piece itself.
      const found = document.elementFromPoint(p.x, p.y), landed = found && found.closest('.map-structure, [data-tap]');
      const whose = landed && (landed.dataset.structure || landed.dataset.tap);
      if (whose === sid && i >= points.length) taps.push([p.x - map.left, p.y - map.top]);
      // A neighbour's name over the shape takes the tap for its own piece (test_map_taps), off the footprint.
      else if (whose !== sid && found && found.classList.contains('map-name') && i >= 9) named.push(whose);
      else if (whose !== sid && !(found && found.classList.contains('map-unit')))
        elsewhere.push([Math.round(p.x), Math.round(p.y), whose || found && found.tagName]);
    });
    return [piece.getAttribute('aria-label').split(',')[0], Math.round(box.width), Math.round(box.height),
            taps, elsewhere, named];
  });
}"""

FOXHOLES = ("Foxhole west", "Foxhole centre", "Foxhole east")


@pytest.mark.parametrize("width", [360, 390])
def test_every_piece_on_the_map_takes_a_thumbs_taps_and_none_of_its_neighbours(live_server, demo, watch, width):
    """On a 390 px phone the demo's Church tower took taps on a circle 38 px across and its foxholes
    29 px: one circle per piece, shrunk all round to stay off the nearest neighbour. A piece's tap shape
    is now 44 px each way (more at 390) round its footprint, cut only on the line halfway to a nearer
    neighbour's footprint and slid away from it: the tower's is 44 px across beside the church. Three
    foxholes six inches (31 px) apart share their row: each is 44 px tall and as wide as the halfway
    lines leave it. Every tap on a footprint, and inside any piece's shape, lands on that piece."""
    page = watch("alice")
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, live_server.url, "alice")
    page.goto(live_server.url + reverse("battle", args=[demo.pk]))
    page.locator("#map svg").scroll_into_view_if_needed()
    pieces = {name: rest for name, *rest in page.evaluate(MAP_TAPS)}
    assert len(pieces) == 13
    assert {name: e for name, (*_, e, _) in pieces.items() if e} == {}, pieces
    sizes = {name: (w, h) for name, (w, h, *_) in pieces.items()}
    assert {name: size for name, size in sizes.items()
            if name not in FOXHOLES and min(size) < 44} == {}, sizes
    assert all(sizes[name][1] >= 44 and sizes[name][0] >= 31 for name in FOXHOLES), sizes
    assert sizes["Foxhole west"][0] >= 44 and sizes["Church tower"] >= (44, 44), sizes

    # And as a thumb taps: the card that opens is the piece's, at its footprint's middle and edges and
    # out towards each corner of its shape (off the footprint, some beside a neighbour's), for the
    # small pieces.
    for name in ("Church tower", *FOXHOLES):
        taps, named = pieces[name][2], pieces[name][4]
        assert len(taps) + len(named) >= 9 and len(taps) >= 5, (name, taps, named)
        for x, y in taps:
            page.locator("#map svg").scroll_into_view_if_needed()
            left, top = page.evaluate("() => { const r = document.querySelector('#map svg').getBoundingClientRect(); return [r.left, r.top]; }")
            with swapped(page, "#card"):
                page.touchscreen.tap(left + x, top + y)
            expect(page.locator("#card-title")).to_have_text(name)


FIELDS_OUTSIDE = """() => Array.from(document.querySelectorAll('form'), form => {
  // Each field's box inside its form's, and the words it comes filled with inside its box.
  const f = form.getBoundingClientRect();
  return Array.from(form.querySelectorAll('input:not([type=hidden]), select, textarea'), el => {
    const r = el.getBoundingClientRect();
    if (!r.width) return null;  // in a closed <details>
    const past = Math.max(f.left - r.left, r.right - f.right, el.scrollWidth - el.clientWidth);
    return past > 0.5 ? [el.name, el.value, Math.round(past)] : null;
  }).filter(Boolean);
}).flat()"""


def test_no_field_of_the_scenario_builder_runs_past_its_form_on_the_narrowest_phone(live_server, demo, watch):
    """At 360 px the builder's "Start a battle" name came filled with "Village crossroads — 27 Nov 2026",
    9 px longer than its box: the date was cut. On a phone the fields now take 16 px words and a
    narrower padding."""
    page = sign_in(watch("demo"), live_server.url, "demo")
    page.set_viewport_size({"width": 360, "height": 800})
    page.goto(live_server.url + reverse("scenario", args=[demo.scenario_id]))
    expect(page.locator("#start input[name=name]")).to_have_value(re.compile("^Village crossroads — "))
    assert page.evaluate(FIELDS_OUTSIDE) == []
