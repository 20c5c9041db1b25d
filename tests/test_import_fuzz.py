"""Property tests: thousands of malformed documents through the import pages (the test client, as a
browser posts them). Whatever arrives, the server never fails (the test client re-raises any
exception a view lets escape), a rejection is a 400 whose list names a field path for every error,
and a rejected file saves nothing."""

import json
import re

import pytest
from django.db import connection
from django.urls import reverse
from hypothesis import HealthCheck, given, settings, strategies as st

from apps.armies.models import Unit
from apps.battles.models import Battle, LogEntry
from apps.campaigns.export import export_campaign
from apps.campaigns.formats import export_scenario
from apps.campaigns.models import Campaign, Club, Role, Scenario
from apps.structures.formats import export_sheet
from apps.structures.models import BunkerSheet, Structure
from tests.campaigns.test_pages import body, fast_passwords, user  # noqa: F401
from tests.demo_rows import load_demo

PATH = re.compile(r"^(document$|[A-Za-z_]|\[)")  # the file, a field name, or a quoted odd key

FUZZ = settings(max_examples=1000, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**6, max_value=10**6), st.integers(),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
    st.sampled_from(["", "all", "front", "brick", "A", "bunker", "redoubt.sheet", "\x00", "\ud800", "Walls", "1e3"]),
)
json_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)


def paths(value, prefix=()):
    """Every place in a document a mutation can hit."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths(child, prefix + (key,))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from paths(child, prefix + (index,))


def mutate(document, where, how, replacement, new_key):
    doc = json.loads(json.dumps(document))
    if not where:
        return replacement if how == "replace" else doc
    parent = doc
    for step in where[:-1]:
        parent = parent[step]
    last = where[-1]
    if how == "replace":
        parent[last] = replacement
    elif how == "delete":
        del parent[last]
    elif how == "add" and isinstance(parent, dict):
        parent[new_key] = replacement
    elif how == "add":
        parent.insert(last, replacement)
    return doc


@st.composite
def malformed(draw, base):
    """The exported document with one to three parts replaced, deleted or added to."""
    doc = base
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        spots = list(paths(doc))
        where = draw(st.sampled_from(spots))
        doc = mutate(doc, where, draw(st.sampled_from(["replace", "replace", "delete", "add"])), draw(json_values),
                     draw(st.text(min_size=1, max_size=6)))
    return doc


def as_text(doc):
    # ASCII escapes: a lone surrogate travels as \ud800, as a browser would send it.
    return json.dumps(doc, allow_nan=True)


raw_texts = st.one_of(
    st.text(max_size=60),
    st.sampled_from(['{"format": "redoubt.sheet", "version": 1, "a": NaN}', '{"a": 1, "a": 1}', "[" * 5000,
                     '{"format": "redoubt.scenario", "version": 1e400}', "\ufeff{}", "null", "1" * 4400]),
)


@pytest.fixture
def world(db, settings):
    # Sessions in a signed cookie: one query less per request, over thousands of requests.
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
    load_demo()
    w = type("World", (), {})()
    w.club = Club.objects.create(name="Fuzz Club", slug="fuzz")
    w.sheet = export_sheet(BunkerSheet.objects.get(club=None, slug="german-concrete-blockhouse"))
    w.scenario = export_scenario(Scenario.objects.get(name="Village crossroads"))
    # a smaller scenario keeps each example fast while every kind of row is still there
    keep = 2
    w.scenario["structures"] = w.scenario["structures"][:keep] + [
        s for s in w.scenario["structures"] if s["sheet"]][:1]
    for army in w.scenario["armies"]:
        army["units"] = [u for u in army["units"] if not (u["at"] and "structure" in u["at"]
                                                            and u["at"]["structure"] >= keep)][:2]
    for s in w.scenario["structures"]:
        s["connections"] = [c for c in s["connections"] if c < keep]
    w.scenario["sheets"] = [sh for sh in w.scenario["sheets"]
                            if any(s["sheet"] == sh["slug"] for s in w.scenario["structures"])]
    w.organiser = user("fuzz-organiser", w.club, Role.ORGANISER)
    # Olga's small Disposable Heroes campaign: a session with its battle, ground, rosters and sheets.
    w.campaign = export_campaign(Campaign.objects.get(name="Winter Line"))
    w.rows = rows()
    return w


ERROR = re.compile(r'<li><code class="error-path">(.*?)</code> <span class="error-message">(.*?)</span></li>', re.S)


def check(client, url, world, text):
    response = client.post(url, {"club": world.club.pk, "text": text})
    assert response.status_code in (302, 303, 400), response.status_code
    if response.status_code in (302, 303):  # a mutation that left a valid file: it was imported
        world.rows = rows()
    else:
        assert rows() == world.rows, "a rejected file saved something"
        html = body(response)
        if 'id="import-errors"' not in html:  # refused by the form itself: nothing was sent to import
            assert "Choose a file or paste the JSON." in html
            return
        errors = ERROR.findall(html)
        assert errors and len(errors) == html.count('<code class="error-path">')
        for path, message in errors:
            assert PATH.match(path), path
            assert message.strip(), path


def rows():
    """Rows an import can write, counted in one query (thousands of examples add up)."""
    tables = [m._meta.db_table for m in (Campaign, Battle, LogEntry, Scenario, Structure, Unit, BunkerSheet)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {t})" for t in tables))
        return cursor.fetchone()


@pytest.mark.parametrize("kind, url_name, examples", [
    ("sheet", "sheet_import", 1000), ("scenario", "scenario_import", 800), ("campaign", "campaign_import", 500)])
def test_malformed_documents_never_fail_the_server(client, world, kind, url_name, examples):
    client.force_login(world.organiser)  # an organiser may import all three kinds
    url = reverse(url_name)

    @settings(FUZZ, max_examples=examples)
    @given(malformed(getattr(world, kind)))
    def run(doc):
        check(client, url, world, as_text(doc))

    run()


def test_arbitrary_text_and_json_never_fail_the_server(client, world):
    client.force_login(world.organiser)  # an organiser may import all three kinds
    urls = [reverse("sheet_import"), reverse("scenario_import"), reverse("campaign_import")]

    @settings(FUZZ, max_examples=300)
    @given(st.sampled_from(urls), st.one_of(raw_texts, json_values.map(as_text)))
    def run(url, text):
        check(client, url, world, text)

    run()


@pytest.mark.parametrize("kind, url_name", [
    ("sheet", "sheet_import"), ("scenario", "scenario_import"), ("campaign", "campaign_import")])
def test_a_file_of_countless_mistakes_lists_the_first_and_counts_the_rest(client, world, kind, url_name):
    """A file can hold millions of errors (50 MB of unknown keys, for a campaign): listing every one
    drew a page of gigabytes over minutes, from one request by anyone who organises a club. The page
    lists the first MAX_ERRORS and counts the rest; nothing is saved."""
    from apps.structures.formats import MAX_ERRORS

    odd = {f"odd{i}": 0 for i in range(3000)}  # each "is not a field here"
    doc = {**getattr(world, kind), **odd}
    client.force_login(world.organiser)
    response = client.post(reverse(url_name), {"club": world.club.pk, "text": json.dumps(doc)})
    assert response.status_code == 400
    html = body(response)
    assert "Nothing was imported: 3000 problems" in html
    assert f"The first {MAX_ERRORS} are listed." in html
    errors = ERROR.findall(html)
    assert len(errors) == MAX_ERRORS and errors[0][0] == "odd0"
    assert len(response.content) < 150_000
    assert rows() == world.rows
    if kind != "campaign":
        return
    # A campaign's scenarios are checked by a checker of their own: what it counted counts too.
    doc = json.loads(json.dumps(world.campaign))
    doc["scenarios"][0].update(odd)
    html = body(client.post(reverse("campaign_import"), {"club": world.club.pk, "text": json.dumps(doc)}))
    assert "Nothing was imported: 3000 problems" in html and ERROR.findall(html)[0][0] == "scenarios[0].odd0"
