"""The bunker sheet editor on a designer's phone, in real Chromium: every label and value of the card
can be read, and what a save says does not cover what is being edited."""

import pytest
from django.urls import reverse

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


@pytest.mark.parametrize("width", [360, 390, 430])
def test_every_label_and_value_of_the_sheet_editor_is_readable_on_a_phone(live_server, demo, watch, width):
    """A location named "Entrance" showed as "Entranc" at 390 px; the weapon's "Main Gun" and the
    labels of the narrow number cells were cut likewise. Nothing is cut, and the page does not scroll sideways."""
    sheet = club_sheet(demo)
    page = sign_in(watch("demo"), live_server.url, "demo")
    page.set_viewport_size({"width": width, "height": 844})
    page.goto(live_server.url + reverse("sheet_edit", args=[sheet.pk]))
    assert page.input_value("#id_rear-1-location") == "Entrance"
    clipped = page.evaluate(CLIPPED)
    assert not clipped, "\n".join(clipped)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
