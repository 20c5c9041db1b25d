"""Real headless Chromium (Debian's /usr/bin/chromium) driven by Playwright's sync API against
pytest-django's live server, with the demo loaded into the (committed, transactional) test database.

Every page a test opens records what must never happen on the battle screen — console errors
(which include the resources that failed to load), uncaught exceptions and Content-Security-Policy
violations — and the `watch` fixture asserts at the end of the test that none did.
"""

from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Error as PlaywrightError
from tests.demo_rows import load_demo

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3, "is_mobile": True, "has_touch": True}
PASSWORD = "redoubt-demo"
DEMO_BATTLE = "Village crossroads — session 1"

# Runs in every document before its own scripts: CSP violations go to the console (so the listener
# below sees them across navigations), and htmx requests in flight are counted so a test can wait for
# the page to be quiet instead of sleeping. Each request is counted off by its own XHR's loadend
# (after htmx's load handler has swapped the answer and started any queued request), not by
# htmx:afterRequest, which never reaches the document when the element that asked was swapped out
# meanwhile (a poll in flight while an action's answer replaces #poller).
INIT_SCRIPT = """
document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline") +
                " at " + e.sourceFile + ":" + e.lineNumber);
});
window.__htmxBusy = 0;
// A read replaced by a newer one is dropped by design (hx-sync replace: Resolve over the attack form's
// refresh, the last structure tapped over the card asked for before), and htmx logs it as an error. An
// aborted POST is an error: a tap's action lost.
document.addEventListener("htmx:sendAbort", function (e) {
  var c = e.detail.requestConfig || {};
  if (c.verb === "get") return;
  console.error("request aborted: " + c.verb + " " + c.path);
});
document.addEventListener("htmx:beforeRequest", function (e) {
  window.__htmxBusy += 1;
  e.detail.xhr.addEventListener("loadend", function () { window.__htmxBusy -= 1; });
});
"""
# htmx's own lines for an aborted request; INIT_SCRIPT reports the aborts that are not by design.
HTMX_ABORT_LOG = ("htmx:sendAbort,", "htmx:afterRequest,")
QUIET = "() => window.__htmxBusy === 0 && !document.querySelector('.htmx-added, .htmx-settling, .htmx-swapping')"


@dataclass
class Problems:
    """What went wrong in one browser context, per page."""

    items: list = field(default_factory=list)

    def attach(self, page, who):
        def on_console(message):
            if message.type == "error" and not message.text.startswith(HTMX_ABORT_LOG):
                self.items.append(f"{who} console error: {message.text} ({message.location.get('url', '')})")

        page.on("console", on_console)
        page.on("pageerror", lambda error: self.items.append(f"{who} uncaught: {error}"))


@pytest.fixture
def demo(transactional_db):
    """The demo campaign, committed so the live server's threads see it."""
    load_demo()
    from apps.battles.models import Battle

    return Battle.objects.get(name=DEMO_BATTLE)


@pytest.fixture
def watch(browser):
    """Opens phone-sized browser contexts and checks, after the test, that nothing went wrong in them."""
    problems = Problems()
    contexts = []

    def open_phone(who, *, javascript=True):
        context = browser.new_context(**PHONE, java_script_enabled=javascript)
        context.set_default_timeout(15_000)
        context.add_init_script(INIT_SCRIPT)
        contexts.append(context)
        page = context.new_page()
        problems.attach(page, who)
        return page

    open_phone.problems = problems
    yield open_phone
    for context in contexts:
        for page in context.pages:
            # Nothing of the page may still be on its way when the test database is emptied: a request the
            # live server is still answering holds row locks, and the flush's TRUNCATE and it waited on each
            # other (PostgreSQL's "deadlock detected" at teardown, now and then). Stop the poll, then wait.
            try:
                page.evaluate("() => { const poller = document.getElementById('poller'); if (poller) poller.remove(); }")
                page.wait_for_function(QUIET, timeout=5_000)
            except PlaywrightError:  # a page without scripts has no requests of its own in flight
                pass
        context.close()
    assert not problems.items, "\n".join(problems.items)


def sign_in(page, base_url, username):
    """Through the real sign-in form, as a person would."""
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()
    assert "/accounts/login/" not in page.url, f"{username} could not sign in"
    return page
