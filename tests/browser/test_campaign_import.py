"""An organiser on their phone restores the club's campaign file: a file over the server's limit is
refused beside the file field with what to do, nothing imported; within it, the campaign is back."""

import pytest
from playwright.sync_api import expect

from apps.campaigns.export import campaign_text, export_campaign
from apps.campaigns.models import Campaign
from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser]


def test_an_organiser_uploads_a_campaign_file_over_the_limit_then_within_it(live_server, demo, watch, settings):
    campaign = demo.campaign
    file = campaign_text(export_campaign(campaign)).encode()
    settings.CAMPAIGN_FILE_MAX_BYTES = len(file) - 1
    before = Campaign.objects.count()

    phone = sign_in(watch("demo"), live_server.url, "demo")
    phone.goto(f"{live_server.url}/campaigns/import/")
    phone.set_input_files("#id_file", {"name": "crossroads.json", "mimeType": "application/json", "buffer": file})
    with phone.expect_navigation():
        phone.get_by_role("button", name="Import").click()
    said = phone.locator("#id_file_error")
    expect(said).to_contain_text(f"This is {len(file):,} bytes; this server imports campaign files of at most "
                                 f"{len(file) - 1:,} bytes, so nothing was imported")
    expect(said).to_be_in_viewport()
    assert Campaign.objects.count() == before

    settings.CAMPAIGN_FILE_MAX_BYTES = len(file)
    phone.set_input_files("#id_file", {"name": "crossroads.json", "mimeType": "application/json", "buffer": file})
    with phone.expect_navigation():
        phone.get_by_role("button", name="Import").click()
    expect(phone.locator(".messages")).to_contain_text(f"Imported the campaign {campaign.name} (2)")
    assert Campaign.objects.count() == before + 1
    # The refused form's own 400 is the one failed load.
    problems = watch.problems.items
    assert problems == [p for p in problems if "status of 400" in p and p.endswith("/campaigns/import/)")] \
        and len(problems) == 1, problems
    problems.clear()
