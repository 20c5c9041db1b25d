"""Redoubt as a phone at a club table really uses it: the browser's back button, answers that never
arrive, a connection slow enough for the player to tap again meanwhile. Nothing may be lost, done
twice or left half-drawn."""

import re

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from apps.armies.models import Unit
from apps.battles.models import Battle, LogEntry
from apps.campaigns.models import Scenario
from apps.structures.models import Structure
from tests.browser.conftest import QUIET, sign_in
from tests.browser.test_battle_screen import aim_the_field_gun, choose, ids, newest_seq, swapped

pytestmark = [pytest.mark.browser]


def record_move(page, unit, x, y):
    """The Move form filled in, a field at a time as a thumb would, and recorded."""
    choose(page, "#id_action", "move")
    choose(page, "#id_unit", unit)
    for field, value in (("#id_x", x), ("#id_y", y)):
        with swapped(page, "#attack-form"):
            page.fill(field, str(value))
            page.locator(field).dispatch_event("change")
    with swapped(page, "#attack-form"):
        page.click("button.resolve")


def test_back_to_the_battle_after_leaving_it_records_the_next_move_too(live_server, demo, watch):
    """The page's forms carry one-time tokens: a form sent twice is resolved once. A page the browser
    kept from before (the back button) held the token of a move already made, so the next move made
    from it was taken for that one again and silently dropped. The page is never kept: back, it is
    asked for anew, and it is drawn as the server draws it (not with the choices the browser put back
    into a form whose fields belong to another action)."""
    _, _, units, _ = ids(demo)
    rifles = units[("A", "1st Rifle Squad")]
    page = sign_in(watch("alice"), live_server.url, "alice")
    page.goto(f"{live_server.url}/battles/{demo.pk}/")
    before = newest_seq(demo)
    record_move(page, rifles, 30, 30)
    assert newest_seq(demo) == before + 1

    # Off to the campaign page and back.
    with page.expect_navigation():
        page.locator(".breadcrumbs a").last.click()
    page.go_back()
    page.wait_for_selector("#attack-form")
    page.wait_for_function(QUIET)
    # The form shows the action its fields are for.
    action = page.input_value("#id_action")
    expect(page.locator("#id_x")).to_have_count(1 if action == "move" else 0)

    record_move(page, rifles, 12, 34)
    moves = list(LogEntry.objects.filter(battle=demo, seq__gt=before).order_by("seq").values_list("inputs", flat=True))
    assert [(m["x"], m["y"]) for m in moves] == [("30", "30"), ("12", "34")]
    rifles_row = Unit.objects.get(pk=rifles[1:])
    assert (float(rifles_row.x), float(rifles_row.y)) == (12, 34)
    expect(page.locator("#attack-form .result")).to_contain_text(re.compile(r"moves to 12″, 34″"))


def held_back(page, pattern):
    """Hold the first request to `pattern` (a slow connection, made certain); the rest go."""
    held = []
    page.route(pattern, lambda route: held.append(route) if not held else route.continue_())
    return held


def forgive_aborts(watch, since):
    """htmx reports as console errors the requests the page itself gave up: those, and only those, are
    what the test made happen."""
    reported = watch.problems.items
    made = [p for p in reported[since:] if re.search(r"htmx:(sendAbort|afterRequest), \[object HTML\w*Element\]", p)]
    reported[since:] = [p for p in reported[since:] if p not in made]


def test_resolve_tapped_while_the_form_still_answers_the_dice_is_resolved(live_server, demo, watch):
    """The last die typed and Resolve tapped at once, on a slow connection: the form's answer to the
    first die is still on its way and the second die's waits behind it. Resolve replaces the answer
    in flight, which let the waiting one go first; its answer replaced the form, and htmx dropped the
    Resolve of a form no longer on the page. The tap was lost without a word."""
    townhouse, sid, units, shell = ids(demo)
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/?target={sid}")
    aim_the_field_gun(alice, units, shell, own_dice=True)
    seq = newest_seq(demo) + 1
    since = len(watch.problems.items)

    held = held_back(alice, "**/form/**")
    alice.locator("#id_dice_0").press_sequentially("6")
    alice.wait_for_function("() => document.activeElement && document.activeElement.id === 'id_dice_1'")
    alice.keyboard.type("5")
    alice.wait_for_timeout(100)
    assert len(held) == 1
    with swapped(alice, "#attack-form"):
        alice.click("button.resolve")
    alice.unroute("**/form/**")
    expect(alice.locator("#attack-form .result")).to_contain_text(f"Resolved #{seq}")
    assert [d["faces"] for d in LogEntry.objects.get(battle=demo, seq=seq).dice] == [[6, 5]]
    forgive_aborts(watch, since)


def test_the_last_structure_tapped_is_the_target_however_the_answers_arrive(live_server, demo, watch):
    """Two structures tapped one after the other on a slow connection, the first answer arriving last:
    it drew its card into a card already replaced (so nothing showed) but its attack form out of band,
    aimed at the first. The screen showed the second structure's card, and Resolve hit the first."""
    townhouse, sid, units, shell = ids(demo)
    church = Structure.objects.get(battle=demo, name="Stone church")
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    alice.wait_for_function(QUIET)
    since = len(watch.problems.items)
    held = held_back(alice, "**/card/**")
    alice.locator(f'#map [data-structure="{sid}"]').tap()
    alice.wait_for_timeout(100)
    assert len(held) == 1
    alice.locator(f'#structure-{church.pk} .target-link').tap()
    expect(alice.locator("#card-title")).to_have_text("Stone church")
    try:
        held[0].continue_()  # the first answer, late (if the page still wants it)
    except PlaywrightError:
        pass
    alice.wait_for_timeout(500)
    alice.wait_for_function(QUIET)
    alice.unroute("**/card/**")
    expect(alice.locator("#card-title")).to_have_text("Stone church")
    expect(alice.locator("#card-target")).to_have_value(f"s{church.pk}")
    expect(alice.locator("#id_structure")).to_have_value(f"s{church.pk}")
    forgive_aborts(watch, since)


def test_a_form_refresh_that_got_no_answer_is_asked_again_once_the_connection_is_back(live_server, demo, watch):
    """A new action chosen while the wifi is down: the form stayed drawn for the old action under the
    new one's name, and choosing it again fires no change, so nothing ever redrew it: Resolve sent the
    new action with the old one's fields. Once the poll gets an answer again, the form asks again."""
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/")
    alice.wait_for_function(QUIET)
    since = len(watch.problems.items)
    cut = []
    alice.route("**/form/**", lambda route: (cut.append(route.request.url), route.abort("internetdisconnected"))
                if not cut else route.continue_())
    alice.select_option("#id_action", "move")
    notice = alice.locator("#connection")
    expect(notice).to_contain_text("Your last tap got no answer")
    assert len(cut) == 1
    expect(alice.locator("#id_x")).to_have_count(0)  # drawn for the old action
    # The connection is back (the next form request goes through): the next poll's answer says so.
    expect(alice.locator("#id_x")).to_have_count(1, timeout=6_000)
    expect(alice.locator("#id_action")).to_have_value("move")
    expect(notice).to_be_hidden()
    alice.unroute("**/form/**")
    reported = watch.problems.items
    reported[since:] = [p for p in reported[since:]
                        if not re.search(r"ERR_INTERNET_DISCONNECTED|htmx:(sendError|afterRequest), ", p)]


def test_a_plain_form_tapped_twice_on_a_slow_connection_is_sent_once(live_server, demo, watch):
    """"Start the battle" on the scenario page is a plain form: nothing shows until the battle page
    arrives, and a second tap meanwhile sent it again, so the club had two battles."""
    scenario = Scenario.objects.get(name="Village crossroads")
    page = sign_in(watch("demo"), live_server.url, "demo")
    page.goto(f"{live_server.url}/scenarios/{scenario.pk}/")
    posts = []

    def slow_answer(route):
        if route.request.method != "POST":
            return route.continue_()
        posts.append(route.request.url)
        answer = route.fetch(max_redirects=0)  # the server has it ...
        page.wait_for_timeout(1500)  # ... and its answer is slow to come back
        route.fulfill(response=answer)

    page.route("**/start/", slow_answer)
    form = page.locator("form:has(button:has-text('Start the battle'))")
    form.locator("input[name=name]").fill("Tapped twice")
    button = form.locator("button")
    button.scroll_into_view_if_needed()
    box = button.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_timeout(300)  # nothing to see yet: the thumb taps again
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_url(re.compile(r"/battles/\d+/$"))
    assert len(posts) == 1, posts
    assert Battle.objects.filter(name="Tapped twice").count() == 1


@pytest.mark.parametrize("screen", ["battle", "sheet"])
def test_a_page_whose_htmx_did_not_load_keeps_its_no_javascript_buttons(live_server, demo, watch, screen):
    """htmx is the larger script: on a bad connection it can fail to load while the page's own small
    script arrives. That script marked the page as having JavaScript, which hides the buttons kept for
    pages without it ("Update the form", "Update the preview"), and nothing else redrew the form: a
    new action stayed drawn with the old one's fields, with no way to redraw it."""
    page = sign_in(watch("alice" if screen == "battle" else "dora"), live_server.url,
                   "alice" if screen == "battle" else "dora")
    page.route("**/htmx-2*.js", lambda route: route.abort("connectionreset"))
    if screen == "battle":
        page.goto(f"{live_server.url}/battles/{demo.pk}/")
        button = page.locator("button[name=preview]")
    else:
        from apps.structures.formats import sheet_body
        from apps.structures.models import BunkerSheet

        library = BunkerSheet.objects.get(club=None, slug="soviet-at-hmg-loghouse")
        sheet = BunkerSheet.objects.create(club=demo.club, **sheet_body(library))
        page.goto(f"{live_server.url}/sheets/{sheet.pk}/edit/")
        button = page.get_by_role("button", name="Update the preview")
    page.wait_for_load_state("load")
    assert page.evaluate("typeof window.htmx") == "undefined"
    expect(button).to_be_visible()
    if screen == "battle":
        expect(page.get_by_text("JavaScript is off: this page does not update by itself")).to_be_visible()
        page.select_option("#id_action", "move")
        with page.expect_navigation():
            button.click()
        expect(page.locator("#id_x")).to_be_visible()
    # The script that did not load is the only problem there was.
    watch.problems.items[:] = [p for p in watch.problems.items if "htmx-2" not in p and "ERR_CONNECTION_RESET" not in p]


def test_an_answer_that_arrives_after_the_poll_brought_the_same_entry(live_server, demo, watch):
    """A slow answer to the player's own attack can arrive after the poll has already brought its
    entry: both say to drop the turn heading the new entry replaces, and the second found nothing to
    drop (htmx reported an error). The log shows the entry once."""
    townhouse, sid, units, shell = ids(demo)
    alice = sign_in(watch("alice"), live_server.url, "alice")
    alice.goto(f"{live_server.url}/battles/{demo.pk}/?target={sid}")
    aim_the_field_gun(alice, units, shell)
    seq = newest_seq(demo) + 1
    assert LogEntry.objects.get(battle=demo, seq=seq - 1).turn == demo.turn  # the heading above it goes
    held = []
    alice.route("**/resolve/", lambda route: held.append((route, route.fetch())))
    alice.click("button.resolve")
    expect(alice.locator(f"#log-{seq}")).to_have_count(1, timeout=6_000)  # brought by the poll
    route, answer = held[0]
    with swapped(alice, "#attack-form"):
        route.fulfill(response=answer)
    expect(alice.locator("#attack-form .result")).to_contain_text(f"Resolved #{seq}")
    expect(alice.locator(f"#log-{seq}")).to_have_count(1)
    expect(alice.locator("#log-list > li.log-turn")).to_have_count(
        len(set(LogEntry.objects.filter(battle=demo).values_list("turn", flat=True))))


def test_the_campaign_page_says_when_a_button_got_no_good_answer(live_server, demo, watch):
    """The campaign page's buttons are htmx forms too: a session set up or settings saved while the
    club's wifi is down got no answer, and the button simply woke up again as if it had been done. The
    foot of the screen says so, in the page's own words (not the battle screen's promise that a form
    sent twice is resolved once), as it does for a server that failed or a refusal in words, until
    the next tap that gets an answer."""
    from apps.campaigns.models import Campaign
    from config.views import STALE_PAGE

    Campaign.objects.filter(pk=demo.campaign_id).update(single_open_battle=False)  # session 2 may be set up
    campaign = Campaign.objects.get(pk=demo.campaign_id)
    page = sign_in(watch("demo"), live_server.url, "demo")
    page.goto(f"{live_server.url}/campaigns/{campaign.pk}/")
    notice = page.locator("#connection")
    expect(notice).to_be_hidden()
    since = len(watch.problems.items)

    def save_settings():
        with swapped(page, "#campaign-settings"):
            page.get_by_role("button", name="Save settings").click()
        expect(page.locator("#campaign-settings .result")).to_have_text("Saved.")

    # Lost on its way: no session was set up, and the page says so.
    page.route("**/sessions/start/", lambda route: route.abort("internetdisconnected"))
    start = page.get_by_role("button", name="Set up session 2")
    start.click()
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("Your last tap got no answer")
    expect(notice).to_contain_text("Reload the page once you are back to see whether it arrived.")
    expect(notice).not_to_contain_text("resolved once")
    expect(start).to_be_enabled()
    assert not Battle.objects.filter(campaign=campaign, session_number=2).exists()
    page.unroute("**/sessions/start/")

    # The next tap that gets an answer clears it.
    page.check("#id_fires_persist")
    save_settings()
    expect(notice).to_be_hidden()
    campaign.refresh_from_db()
    assert campaign.fires_persist

    # A server that failed, then a refusal in words (the page's token is stale: signed in elsewhere).
    page.route("**/settings/", lambda route: route.fulfill(status=502, body="<h1>Bad gateway</h1>",
                                                             content_type="text/html"))
    page.get_by_role("button", name="Save settings").click()
    expect(notice).to_contain_text("The server failed on your last tap (error 502). Reload the page to see whether "
                                   "it was done before you try again.")
    page.unroute("**/settings/")
    [token] = [c for c in page.context.cookies() if c["name"] == "csrftoken"]
    page.context.add_cookies([{**token, "value": "x" * 32}])
    page.get_by_role("button", name="Save settings").click()
    expect(notice).to_have_text(re.compile("^" + re.escape(STALE_PAGE)))
    page.context.add_cookies([token])
    save_settings()
    expect(notice).to_be_hidden()

    # The browser and htmx report each request the test cut off or failed; only those are forgiven.
    made = re.compile(r"ERR_INTERNET_DISCONNECTED|htmx:(sendError|afterRequest), \[object HTML\w*Element\]|"
                      r"(Response Status Error Code|responded with a status of) (502|403)\b.*/campaigns/\d+/settings/")
    reported = watch.problems.items
    forgiven = [p for p in reported[since:] if made.search(p)]
    assert forgiven, "the failed requests went unreported: the filter below would hide nothing"
    reported[since:] = [p for p in reported[since:] if p not in forgiven]
