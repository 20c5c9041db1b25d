"""Hardening: production settings have secure cookies, HSTS and SMTP mail (the deploy check itself
is in test_settings); every
page carries a Content-Security-Policy with a fresh nonce that its scripts use, and a real browser
meets no violation and no console error on any kind of page (HTMX swaps and the poll included);
every POST endpoint refuses a request without the CSRF token and accepts the one its page gives
htmx (the body's hx-headers)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from config.views import CSRF_TITLE, STALE_PAGE
from tests.test_permission_matrix import HTMX, ROWS, USERS, client_for, demo_world, fingerprint, url_of
from tests.test_settings import PRODUCTION as DEPLOY
from tests.test_settings import fresh_env
from tests.demo_rows import load_demo

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = {
    **DEPLOY,
    "EMAIL_HOST": "smtp.example.org",
    "EMAIL_PORT": "2525",
    "EMAIL_HOST_USER": "mailer",
}
CSRF_HEADER = re.compile(r"""hx-headers='\{"X-CSRFToken": "([^"]+)"\}'""")


def production(probe):
    """Evaluate `probe` (Python printing JSON) with the production settings, in a fresh process."""
    code = "import django, json, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); " \
           "django.setup(); from django.conf import settings; " + probe
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=fresh_env(**PRODUCTION), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# ---------------------------------------------------------------------------------- settings

def test_production_cookies_hsts_and_mail():
    values = production(
        "print(json.dumps({k: getattr(settings, k) for k in ['SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', "
        "'SESSION_COOKIE_HTTPONLY', 'SECURE_HSTS_SECONDS', 'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_SSL_REDIRECT', "
        "'X_FRAME_OPTIONS', 'SECURE_CONTENT_TYPE_NOSNIFF']} | {'mail': settings.MAILERS['default']}))")
    assert values["SESSION_COOKIE_SECURE"] and values["CSRF_COOKIE_SECURE"] and values["SESSION_COOKIE_HTTPONLY"]
    assert values["SECURE_HSTS_SECONDS"] >= 31536000 and values["SECURE_HSTS_INCLUDE_SUBDOMAINS"]
    assert values["SECURE_SSL_REDIRECT"] and values["X_FRAME_OPTIONS"] == "DENY" and values["SECURE_CONTENT_TYPE_NOSNIFF"]
    mail = values["mail"]
    assert mail["BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    assert mail["OPTIONS"]["host"] == "smtp.example.org" and mail["OPTIONS"]["port"] == 2525
    assert mail["OPTIONS"]["username"] == "mailer"


def test_development_prints_mail_to_the_console():
    code = ("import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); django.setup(); "
            "from django.conf import settings; print(settings.MAILERS['default']['BACKEND'])")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=fresh_env(), capture_output=True, text=True,
                            timeout=60)
    assert result.stdout.strip() == "django.core.mail.backends.console.EmailBackend", result.stderr


# ---------------------------------------------------------------------------------- CSP

def page_urls(d):
    """One page of every kind, and who opens it."""
    o = d.mine
    return [
        ("anonymous", reverse("login")), ("anonymous", reverse("signup")), ("anonymous", reverse("password_reset")),
        ("anonymous", reverse("join")), ("anonymous", reverse("join_code", args=[o.invite.code])),
        ("spectator", reverse("spectator", args=[o.link_token])),
        ("organiser", reverse("home")), ("organiser", reverse("club_list")),
        ("organiser", reverse("club", args=[o.club.slug])), ("organiser", reverse("campaign", args=[o.campaign.pk])),
        ("player A", reverse("battle", args=[o.battle.pk])), ("organiser", reverse("structure", args=[o.battle_structure.pk])),
        ("organiser", reverse("sheet_list")), ("organiser", reverse("sheet", args=[o.sheet.pk])),
        ("designer", reverse("sheet_edit", args=[o.sheet.pk])), ("designer", reverse("scenario", args=[o.scenario.pk])),
        ("organiser", reverse("password_change")),
    ]


def acting_role(row):
    """Who the CSRF test posts as: someone the matrix lets in."""
    cells = row.cells
    for wanted in ("ok", "no", "409", "422", "400"):
        for role in ("organiser", "player A", "designer", "player B", "other club", "anonymous"):
            if cells[role] == wanted:
                return role
    raise AssertionError(f"nobody may post to {row.name}")


@pytest.fixture(scope="class")
def d(django_db_setup, django_db_blocker):
    """The demo, loaded once for the class below inside a transaction rolled back at its end: gone
    before the browser test, whose live server must see committed data and no held locks."""
    with demo_world(django_db_blocker) as world:
        yield world


class TestWithTheDemo:
    def test_every_page_has_a_csp_with_a_fresh_nonce_its_scripts_carry(self, d, db):
        nonces = set()
        for role, url in page_urls(d):
            response = client_for(d, role).get(url)
            assert response.status_code == 200, (role, url, response.status_code)
            policy = response["Content-Security-Policy"]
            directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
            found = re.search(r"'nonce-([^']+)'", directives["script-src"])
            assert found, policy
            nonce = found.group(1)
            assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
            assert directives["frame-ancestors"] == "'none'" and directives["object-src"] == "'none'"
            html = response.content.decode()
            scripts = re.findall(r"<script\b[^>]*>", html)
            assert scripts, url
            for tag in scripts:
                assert f'nonce="{nonce}"' in tag and "src=" in tag, (url, tag)
            assert not re.search(r"<[^>]*\s(on[a-z]+|style)\s*=", html, re.IGNORECASE), url
            nonces.add(nonce)
        assert len(nonces) == len(page_urls(d)), "a nonce was reused"


    # CSRF: every POST, as someone the matrix lets in

    def test_every_post_needs_the_csrf_token_and_works_with_the_pages(self, d, db):
        wrong = []
        for row in [r for r in ROWS if r.method == "POST"]:
            role = acting_role(row)
            expected = row.cells[role]
            extra = HTMX if row.htmx else {}
            with transaction.atomic():
                client = Client(enforce_csrf_checks=True)
                if role in USERS:
                    client.cookies[settings.SESSION_COOKIE_NAME] = d.sessions[role]
                page = client.get(reverse("home") if role in USERS else reverse("login"))
                token = CSRF_HEADER.search(page.content.decode()).group(1)
                url = url_of(d, row, d.mine, role)
                data = row.data(d, role) if row.data else {}
                refused = client.post(url, data, **extra)
                # htmx gets one plain sentence (config.views.csrf_failure), a page the site's refusal page.
                said = STALE_PAGE.encode() if row.htmx else CSRF_TITLE.encode()
                if refused.status_code != 403 or said not in refused.content:
                    wrong.append(f"{row.name} as {role} without the token: {refused.status_code}")
                if fingerprint() != d.before:
                    wrong.append(f"{row.name} as {role} without the token changed the database")
                accepted = client.post(url, data, HTTP_X_CSRFTOKEN=token, **extra)
                if accepted.status_code == 403 and said in accepted.content:
                    wrong.append(f"{row.name} as {role} with the page's token: refused by CSRF")
                changed = fingerprint() != d.before
                if row.changes and expected == "ok" and not changed:
                    wrong.append(f"{row.name} as {role} with the page's token: {accepted.status_code}, nothing changed")
                transaction.set_rollback(True)
        assert not wrong, "\n".join(wrong)


# ---------------------------------------------------------------------------------- a real browser

# Violations go to the console, so one listener catches them on every page and across navigations.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline") +
                " at " + e.sourceFile + ":" + e.lineNumber);
});
"""


def browser_page(browser, opened, live_server, problems, who, session=None):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    opened.append(context)
    context.set_default_timeout(15_000)
    context.add_init_script(REPORT_VIOLATIONS)
    if session:
        host = live_server.url.split("//", 1)[1].split(":")[0]
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": session, "domain": host, "path": "/"}])
    page = context.new_page()
    page.on("console", lambda m: m.type == "error" and problems.append(f"{who} {page.url}: {m.text}"))
    page.on("pageerror", lambda e: problems.append(f"{who} {page.url}: uncaught {e}"))
    return page


@pytest.fixture
def opened():
    """The browser contexts a test opens, closed when it ends: a page left open would go on polling
    the live server after the test's database access has ended."""
    contexts = []
    yield contexts
    for context in contexts:
        context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_no_page_breaks_its_content_security_policy_in_a_real_browser(browser, opened, live_server, settings):
    """Every kind of page as the person who would open it, a few HTMX requests on each that has them,
    and the poll bringing a change to a spectator: no CSP violation, no console error."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    from apps.armies.models import Unit, Weapon
    from apps.battles import services, watch
    from apps.battles.models import Battle
    from apps.campaigns.models import Club, SpectatorLink
    from apps.structures.models import BunkerSheet
    from django.contrib.auth.models import User

    load_demo()
    battle = Battle.objects.get(name="Village crossroads — session 1")
    club = battle.club
    link = SpectatorLink.objects.create(battle=battle, secret=watch.new_link_secret(), created_by=None)
    library = BunkerSheet.objects.filter(club__isnull=True, is_blank=False).order_by("pk").first()
    from apps.structures.formats import sheet_body
    from apps.structures.views import clone_into
    sheet = clone_into(sheet_body(library), club)
    sessions = {}
    for name in ("demo", "alice", "dora"):
        client = Client()
        client.force_login(User.objects.get(username=name))
        sessions[name] = client.cookies[settings.SESSION_COOKIE_NAME].value
    problems = []
    base = live_server.url

    def visit(page, path):
        response = page.goto(base + path)
        assert response.status == 200, (path, response.status)
        page.wait_for_load_state("networkidle")

    # Signed out: sign-in, sign-up, the password reset and join pages; then sign in for real.
    anon = browser_page(browser, opened, live_server, problems, "anonymous")
    for path in (reverse("signup"), reverse("password_reset"), reverse("join"), reverse("login")):
        visit(anon, path)
    anon.fill("#id_username", "dora")
    anon.fill("#id_password", "redoubt-demo")
    with anon.expect_navigation():
        anon.click("form.stack button[type=submit]")
    assert reverse("login") not in anon.url

    organiser = browser_page(browser, opened, live_server, problems, "demo", sessions["demo"])
    o_structure = battle.structures.order_by("pk").first()
    for path in (reverse("home"), reverse("club_list"), reverse("club", args=[club.slug]),
                 reverse("campaign", args=[battle.campaign_id]), reverse("structure", args=[o_structure.pk]),
                 reverse("sheet_list"), reverse("sheet", args=[sheet.pk]), reverse("sheet_reference")):
        visit(organiser, path)

    designer = browser_page(browser, opened, live_server, problems, "dora", sessions["dora"])
    visit(designer, reverse("sheet_edit", args=[sheet.pk]))
    designer.fill("input[name=name]", "Edited in the browser")  # the live preview is an HTMX request
    designer.wait_for_load_state("networkidle")
    visit(designer, reverse("scenario", args=[battle.scenario_id]))

    # The battle page: tap a structure (an HTMX card) and let the poll run.
    player = browser_page(browser, opened, live_server, problems, "alice", sessions["alice"])
    visit(player, reverse("battle", args=[battle.pk]))
    # force: where a later name covers this piece, its footprint is drawn again over the pieces (#map-over,
    # the same structure's link), which takes the tap instead of the element Playwright aimed at.
    player.locator("#map a.map-structure").first.click(force=True)
    player.wait_for_selector("#card h2#card-title:not(.visually-hidden)")
    player.wait_for_timeout(2500)

    # The spectator page: a change made meanwhile arrives by the poll, out of band.
    spectator = browser_page(browser, opened, live_server, problems, "spectator")
    visit(spectator, reverse("spectator", args=[watch.link_token(link)]))
    units = {(u.army.side, u.name): f"u{u.pk}" for u in Unit.objects.filter(army__battle=battle).select_related("army")}
    townhouse = battle.structures.get(name="Brick townhouse")
    he = Weapon.objects.get(ruleset="ba", slug="he-2d6")
    entry = services.perform(
        battle_id=battle.pk, user=User.objects.get(username="alice"), action="ba_he", attacker=units[("A", "Field gun team")],
        inputs={"weapon": f"w{he.pk}", "structure": f"s{townhouse.pk}", "target": units[("B", "Grenadier Squad 2")],
                "hit": "yes", "pins": 1}, dice_values=["4", "3"])
    spectator.wait_for_selector(f"#log-{entry.seq}", timeout=8_000)
    assert spectator.locator("form").count() == 0
    assert not problems, "\n".join(problems)

    # Revoked: the next poll is refused with HX-Refresh and the page reloads into the refusal. The
    # browser reports those two 403s as failed loads; nothing else may appear (htmx logs no error).
    SpectatorLink.objects.filter(pk=link.pk).update(revoked_at=timezone.now())
    spectator.wait_for_selector("text=This spectator link was revoked", timeout=8_000)
    others = [p for p in problems if "status of 403" not in p]
    assert not others, "\n".join(others)
    assert Club.objects.filter(pk=club.pk).exists()


# ---------------------------------------------------------------------------------- htmx answers


def test_an_htmx_request_from_a_signed_out_page_sends_the_browser_to_sign_in(client, db):
    """Signed out in another tab, the battle page's next tap must not get the sign-in page swapped
    into its card: the browser goes to sign in, and comes back to the page it was on."""
    from tests.factories import make_world

    w = make_world(ruleset="ba")
    page = reverse("battle", args=[w.battle.pk])
    form = reverse("battle_form", args=[w.battle.pk])
    answer = client.get(f"{form}?action=ba_he", HTTP_HX_REQUEST="true",
                        HTTP_HX_CURRENT_URL=f"http://testserver{page}?target=s1")
    assert answer.status_code == 204
    assert answer["HX-Redirect"] == f"{reverse('login')}?next=%2Fbattles%2F{w.battle.pk}%2F%3Ftarget%3Ds1"
    # Only a path of this site comes back as `next`, whatever the header says.
    elsewhere = client.get(form, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="https://evil.example/x")
    assert elsewhere["HX-Redirect"] == f"{reverse('login')}?next=%2Fx"
    sneaky = client.get(form, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver//evil.example/")
    assert sneaky["HX-Redirect"] == f"{reverse('login')}?next=%2F"
    # Without htmx, the usual redirect.
    plain = client.get(form)
    assert plain.status_code == 302 and plain.url.startswith(reverse("login"))
    # Signed in, the form is the form.
    client.force_login(w.alice)
    assert client.get(form, HTTP_HX_REQUEST="true").status_code == 200


def test_an_htmx_post_with_an_outdated_csrf_token_is_told_in_one_sentence(db):
    """Signing in again elsewhere changes the CSRF token: the page left open says why its tap failed."""
    from tests.factories import make_world

    w = make_world(ruleset="ba")
    client = Client(enforce_csrf_checks=True)
    client.force_login(w.alice)
    client.get(reverse("battle", args=[w.battle.pk]))
    resolve = reverse("battle_resolve", args=[w.battle.pk])
    answer = client.post(resolve, {"action": "move"}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN="x" * 64)
    assert answer.status_code == 403 and answer["Content-Type"].startswith("text/plain")
    assert answer.content.decode() == STALE_PAGE
    page = client.post(resolve, {"action": "move"})
    assert page.status_code == 403 and CSRF_TITLE.encode() in page.content
    assert not w.battle.log_entries.exists()


def test_an_htmx_answers_address_keeps_the_forms_choices_and_never_a_token(client, db):
    """The battle screen's answers write the page's address from what the request sent (HX-Replace-Url,
    views.shown_url): the address bar, the history and whatever logs addresses must never get the CSRF
    token, the form's one-time token or the poll's watch token, and a header built from request data
    must not break into another header."""
    from urllib.parse import parse_qs, urlsplit

    from tests.factories import make_world

    w = make_world(ruleset="ba")
    house = w.structure("House", x=30, y=20)
    client.force_login(w.alice)
    secrets = {"csrfmiddlewaretoken": "CSRF-SECRET", "client_token": "ONE-TIME", "t": "WATCH-TOKEN"}
    for address in (reverse("battle_form", args=[w.battle.pk]), reverse("battle_card", args=[w.battle.pk, f"s{house.pk}"])):
        answer = client.get(address, {"action": "move", "structure": f"s{house.pk}", "note": "a\r\nSet-Cookie: x=1",
                                      **secrets}, HTTP_HX_REQUEST="true")
        assert answer.status_code == 200
        shown = answer["HX-Replace-Url"]
        assert shown.startswith(reverse("battle", args=[w.battle.pk]) + "?") and "\r" not in shown and "\n" not in shown
        query = parse_qs(urlsplit(shown).query)
        assert not set(secrets) & set(query) and query["action"] == ["move"], shown
        assert not any(secret in shown for secret in secrets.values())
        assert "Set-Cookie" not in answer.headers and "x" not in answer.cookies
