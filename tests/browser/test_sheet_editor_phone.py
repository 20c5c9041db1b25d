"""The bunker sheet editor on a designer's phone, in real Chromium: every label and value of the card
can be read, and what a save says does not cover what is being edited."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from apps.structures.formats import sheet_body
from apps.structures.models import BunkerSheet
from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser]

# Every label and filled-in box of the editor whose text is wider than the box shows of it.
CLIPPED = """() => Array.from(document.querySelectorAll(
    '#sheet-form label, #sheet-form input:not([type=checkbox]):not([type=hidden]), #sheet-form select'))
  .filter(e => e.offsetParent !== null && !e.closest('.visually-hidden') && e.scrollWidth > e.clientWidth)
  .map(e => `${e.id || e.htmlFor || e.tagName}: ${JSON.stringify(e.value ?? e.textContent.trim())} ` +
            `needs ${e.scrollWidth} px, shows ${e.clientWidth}`)"""


def club_sheet(demo):
    """The club's own copy of the Soviet AT/HMG loghouse, whose rear has an Entrance."""
    library = BunkerSheet.objects.get(club=None, slug="soviet-at-hmg-loghouse")
    return BunkerSheet.objects.create(club=demo.campaign.club, **sheet_body(library))


@pytest.mark.parametrize("width", [360, 390, 430, 640, 960, 1280, 1440])
def test_every_label_and_value_of_the_sheet_editor_is_readable(live_server, demo, watch, width):
    """A location named "Entrance" showed as "Entranc" on a 360–390 px phone; at a desk a weapon's "Main
    Gun" showed as "Main" (1280 px) and the penetration row's 108 and 120 were cut (960 px). Nothing is
    cut, and the page does not scroll sideways."""
    sheet = club_sheet(demo)
    page = sign_in(watch("demo"), live_server.url, "demo")
    page.set_viewport_size({"width": width, "height": 844})
    page.goto(live_server.url + reverse("sheet_edit", args=[sheet.pk]))
    assert page.input_value("#id_rear-1-location") == "Entrance"
    clipped = page.evaluate(CLIPPED)
    assert not clipped, "\n".join(clipped)
    assert page.evaluate("document.documentElement.scrollWidth") <= width


# Every visible input, select and textarea of the page whose box the messages' box overlaps.
COVERED = """() => {
  const m = document.querySelector('.messages').getBoundingClientRect();
  return Array.from(document.querySelectorAll('main input:not([type=hidden]), main select, main textarea'))
    .filter(e => e.offsetParent !== null)
    .filter(e => { const r = e.getBoundingClientRect();
                   return r.width > 0 && r.left < m.right && m.left < r.right && r.top < m.bottom && m.top < r.bottom; })
    .map(e => e.id || e.name);
}"""


def test_what_a_save_says_does_not_cover_the_fields_of_the_sheet_editor(live_server, demo, watch):
    """After a save the message 'Saved … (version 2)' stayed on screen over the editor's fields for
    eight seconds as the designer scrolled down to go on editing. It now sits at the top of the page, in
    its flow, still announced (role=status) and still there to read."""
    sheet = club_sheet(demo)
    page = sign_in(watch("demo"), live_server.url, "demo")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(live_server.url + reverse("sheet_edit", args=[sheet.pk]))
    page.fill("#id_name", "Hill 112 loghouse")
    with page.expect_navigation():
        page.locator(".save-bar").get_by_role("button", name="Save sheet").click()
    message = page.locator(".messages")
    assert message.get_attribute("role") == "status"
    assert message.inner_text().strip() == "Saved Hill 112 loghouse (version 2)."
    assert page.evaluate(COVERED) == []
    for field in ("#id_crew_total", "#id_rear-1-location", "#id_weapons-0-name", "#id_note"):
        page.locator(field).scroll_into_view_if_needed()
        page.locator(field).focus()
        assert page.evaluate(COVERED) == [], field
    page.evaluate("window.scrollTo(0, 0)")
    assert message.is_visible()
    # A jump within the page is not a page that landed at a fragment: the message stays at the top.
    page.get_by_role("link", name="Preview ↓").click()
    page.wait_for_function("location.hash === '#preview-heading'")
    expect(message).not_to_be_in_viewport()
    assert page.evaluate(COVERED) == []


def test_the_live_preview_goes_on_while_a_box_holds_what_the_browser_would_refuse(live_server, demo, watch):
    """The preview was the form's own htmx request, and htmx checks a form as the browser does before it
    sends it: with a DM of 11 (or a required box emptied) no preview was sent at all. The card and its odds
    stayed as they were while the designer went on changing the armour, and the DM's own message never
    showed. The preview goes on, saying what is wrong beside the box, and saves nothing."""
    sheet = club_sheet(demo)
    page = sign_in(watch("demo"), live_server.url, "demo")
    page.goto(live_server.url + reverse("sheet_edit", args=[sheet.pk]))
    page.fill("#id_dm", "11")
    expect(page.locator("#err-id_dm")).to_have_text("Ensure this value is less than or equal to 10.")
    page.fill("#id_front-0-av", "95")
    expect(page.locator("#preview-locations")).to_contain_text("95 AV")
    page.fill("#id_crew_total", "")
    expect(page.locator("#err-id_crew_total")).to_have_text("This field is required.")
    page.fill("#id_front-0-av", "96")
    expect(page.locator("#preview-locations")).to_contain_text("96 AV")
    sheet.refresh_from_db()
    assert (sheet.version, sheet.dm, sheet.locations["front"][0]["av"]) == (1, 0, 75)
