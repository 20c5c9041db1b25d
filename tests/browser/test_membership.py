"""A player removed from the club in the middle of a battle, on their phone: the poll, not a reload,
takes the battle away from them, and what they land on is a page of the site that says why."""

import pytest
from playwright.sync_api import expect

from apps.armies.models import Army
from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser]

POLL_WAIT_MS = 6_000  # the page polls every 2 s


def test_a_player_removed_mid_battle_loses_the_battle_screen_at_the_next_poll(live_server, demo, watch):
    battle_url = f"{live_server.url}/battles/{demo.pk}/"
    bob = sign_in(watch("bob"), live_server.url, "bob")
    bob.goto(battle_url)
    expect(bob.locator("#attack-form")).to_be_visible()

    organiser = sign_in(watch("demo"), live_server.url, "demo")
    organiser.goto(f"{live_server.url}/clubs/{demo.club.slug}/#members")
    row = organiser.locator(".member", has_text="bob")
    row.locator("summary", has_text="Remove").click()
    with organiser.expect_navigation():
        row.get_by_role("button", name="Remove bob from the club").click()
    expect(organiser.locator(".messages")).to_contain_text("The organisers now act for what they commanded")
    assert Army.objects.get(battle=demo, side="B").owner_id is None

    # Nothing happened in the battle itself: the sides he gave up are what tells his phone.
    expect(bob.locator("h1")).to_have_text("Not found", timeout=POLL_WAIT_MS)
    expect(bob.locator(".site-header .brand")).to_be_visible()
    expect(bob.locator("main")).to_contain_text("belongs to a club you are not a member of")
    # The refused poll and the page's own 404 are the only failed loads on his phone.
    problems = watch.problems.items
    expected = [p for p in problems if p.startswith("bob console error: Failed to load resource") and
                ("403" in p or "404" in p)]
    assert expected and problems == expected, problems
    problems.clear()


def test_a_phone_left_on_the_battle_screen_goes_to_sign_in_when_its_player_signs_out(live_server, demo, watch):
    """Bob signs out in another tab and leaves the first open (a club's shared phone): within a poll
    that tab stops showing the battle, though nothing happened in it, and asks for a sign-in."""
    battle_url = f"{live_server.url}/battles/{demo.pk}/"
    bob = sign_in(watch("bob"), live_server.url, "bob")
    bob.goto(battle_url)
    expect(bob.locator("#attack-form")).to_be_visible()

    other_tab = bob.context.new_page()
    watch.problems.attach(other_tab, "bob's other tab")
    other_tab.goto(f"{live_server.url}/")
    with other_tab.expect_navigation():
        other_tab.get_by_role("button", name="Sign out").click()

    expect(bob.locator("#id_username")).to_be_visible(timeout=POLL_WAIT_MS)
    assert "/accounts/login/" in bob.url and f"/battles/{demo.pk}/" in bob.url  # back here once signed in
    problems = watch.problems.items
    expected = [p for p in problems if p.startswith("bob console error: Failed to load resource") and "403" in p]
    assert expected and problems == expected, problems
    problems.clear()


def test_a_member_given_a_side_on_the_campaign_page_gets_the_attack_form_at_the_next_poll(live_server, demo, watch):
    """Exploratory test: the organiser gave dora (who played no side) side A with "Commanded by" on the
    campaign page; her open battle page kept saying "You are watching…" until she reloaded it by hand."""
    battle_url = f"{live_server.url}/battles/{demo.pk}/"
    dora = sign_in(watch("dora"), live_server.url, "dora")
    dora.goto(battle_url)
    expect(dora.locator("#attack-form")).to_contain_text("You are watching")

    organiser = sign_in(watch("demo"), live_server.url, "demo")
    organiser.goto(f"{live_server.url}/campaigns/{demo.campaign_id}/")
    form = organiser.locator("form.commander-form", has=organiser.locator("#commander-A"))
    form.locator("select").select_option(label="dora")
    with organiser.expect_navigation():
        form.get_by_role("button", name="Change").click()
    assert Army.objects.get(battle=demo, side="A").owner.username == "dora"

    # Nothing happened in the battle: her next poll reloads the page, drawn for the side she plays now.
    expect(dora.locator("form#attack-form")).to_be_visible(timeout=POLL_WAIT_MS)
    expect(dora.locator("#attack-panel")).not_to_contain_text("You are watching")
    problems = watch.problems.items
    expected = [p for p in problems if p.startswith("dora console error: Failed to load resource") and "403" in p]
    assert expected and problems == expected, problems
    problems.clear()
