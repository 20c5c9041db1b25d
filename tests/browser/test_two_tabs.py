"""Two tabs of one organiser, each showing the same form: a save that would put back what the other
tab changed comes back refused in the panel it was sent from (htmx swaps no error answer by itself),
and sent again it saves."""

import pytest
from playwright.sync_api import expect

from apps.campaigns.models import Campaign
from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser]


def test_campaign_settings_saved_over_another_tabs_change_are_refused_in_the_panel(live_server, demo, watch):
    url = f"{live_server.url}/campaigns/{demo.campaign_id}/"
    first, second = sign_in(watch("tab 1"), live_server.url, "demo"), sign_in(watch("tab 2"), live_server.url, "demo")
    first.goto(url)
    second.goto(url)

    first.get_by_label("Fires keep burning into the next session").check()
    first.get_by_role("button", name="Save settings").click()
    expect(first.locator("#campaign-settings")).to_contain_text("Saved.")

    second.get_by_label("One open battle at a time").uncheck()
    second.get_by_role("button", name="Save settings").click()
    panel = second.locator("#campaign-settings")
    expect(panel).to_contain_text("These settings were changed since this page was opened (in another tab, or by "
                                  "another organiser), so nothing was saved. Changed meanwhile: Fires keep burning "
                                  "into the next session (now on).")
    expect(second.get_by_label("One open battle at a time")).not_to_be_checked()
    campaign = Campaign.objects.get(pk=demo.campaign_id)
    assert (campaign.fires_persist, campaign.single_open_battle) == (True, True)

    second.get_by_role("button", name="Save settings").click()
    expect(panel).to_contain_text("Saved.")
    expect(panel).not_to_contain_text("changed since")
    campaign.refresh_from_db()
    assert (campaign.fires_persist, campaign.single_open_battle) == (False, False)
    # The refused answer is the only failed load.
    problems = watch.problems.items
    assert problems and all(p.startswith("tab 2 console error: Failed to load resource") and "409" in p
                            for p in problems), problems
    problems.clear()
