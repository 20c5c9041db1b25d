"""A pinned unit's mark on the map, in a real Chromium at a phone's size. It read "P1" under the dot, and a
unit's initials on the dot ("P4", the PaK 40's) read the same: a player took a gun for four pins."""

import pytest
from django.urls import reverse

from apps.armies.models import Unit
from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser]

BOXES = """(uid) => {
  const dot = document.querySelector(`#map circle.map-unit[aria-label^="${uid} "]`);
  const box = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const initials = dot.nextElementSibling, mark = initials.nextElementSibling;
  return {initials: initials.textContent, mark: mark.textContent, dot: box(dot), markBox: box(mark),
          fontPx: parseFloat(getComputedStyle(mark).fontSize), initialsPx: parseFloat(getComputedStyle(initials).fontSize)};
}"""


def test_a_pinned_guns_mark_reads_as_pins_not_initials_on_a_phone(live_server, demo, watch):
    gun = Unit.objects.filter(army__battle=demo, x__isnull=False).first()
    Unit.objects.filter(pk=gun.pk).update(name="PaK 40", pins=1)
    phone = sign_in(watch("alice"), live_server.url, "alice")
    phone.goto(live_server.url + reverse("battle", args=[demo.pk]))
    seen = phone.evaluate(BOXES, "PaK 40")
    assert (seen["initials"], seen["mark"]) == ("P4", "1 pin")
    left, top, right, bottom = seen["dot"]
    # Under the dot or, where that is taken, over it (the demo's first squad stands on the barn's fire,
    # kept clear below it), clear of it, and wider than it: it reads as a word, not as two more initials.
    assert seen["markBox"][1] >= bottom - 1 or seen["markBox"][3] <= top + 1
    assert seen["markBox"][2] - seen["markBox"][0] > right - left
    # No smaller than the initials on the dot: a phone shows the table a few pixels to the inch.
    assert seen["fontPx"] > seen["initialsPx"]
