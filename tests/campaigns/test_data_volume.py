"""A club after years of play (tests/year_club.py): the pages and files outside the battle screen
cost the same number of queries for a small club as for one with many campaigns, sessions, battles,
members, scenarios and sheets, and the lists that grow without end stay a readable length."""

import json
import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.year_club import build_club

# Enough of everything to show a query per row: sessions, battles, structures, units, log entries.
LARGE = dict(members=8, sheets=4, scenarios=3, structures=10, units=4, campaigns=2, sessions=8, battles=10,
             entries=12, invites=5)


def signed_in(user):
    client = Client()
    client.force_login(user)
    client.get(reverse("home"))  # the first request after signing in may touch the session differently
    return client


def count(call, status=200):
    with CaptureQueriesContext(connection) as queries:
        response = call()
        if response.streaming:
            # A download is read while it is sent: its queries are made as it is consumed.
            response.streaming_content = [response.getvalue()]
    assert response.status_code == status, response.content.decode()[-3000:]
    return len(queries.captured_queries), response


def export_and_import_again(client, kind, pk, club):
    """The file of the `kind` ("scenario" or "campaign") `pk`, and the queries importing it into `club` cost."""
    text = client.get(reverse(f"{kind}_export", args=[pk])).getvalue().decode()
    queries, _ = count(lambda: client.post(reverse(f"{kind}_import"), {"club": club.pk, "text": text}),
                       status=302 if kind == "scenario" else 303)
    return text, queries


def pages(y):
    """(name, who, method, url, data, headers) of every page and HTMX partial outside the battle
    screen, for the club `y`: the first scenario, campaign, sheet and link stand for all of them."""
    from apps.armies.models import Unit
    from apps.battles import watch

    scenario, campaign, sheet = y.scenarios[0], y.campaigns[0], y.sheets[0]
    structure = scenario.structures.order_by("pk").first()
    unit = Unit.objects.filter(army__scenario=scenario, floor__isnull=True).order_by("pk").first()
    army = scenario.armies.order_by("side").first()
    ground = campaign.structures.order_by("pk").first()
    htmx = {"HTTP_HX_REQUEST": "true"}
    o, d, p = y.organiser, y.designer, y.player
    return [
        ("home", o, "get", reverse("home"), {}, {}),
        ("club list", p, "get", reverse("club_list"), {}, {}),
        ("club page, organiser", o, "get", reverse("club", args=[y.club.slug]), {}, {}),
        ("club page, player", p, "get", reverse("club", args=[y.club.slug]), {}, {}),
        ("campaign, organiser", o, "get", reverse("campaign", args=[campaign.pk]), {}, {}),
        ("campaign, player", p, "get", reverse("campaign", args=[campaign.pk]), {}, {}),
        ("campaign settings (htmx)", o, "post", reverse("campaign_settings", args=[campaign.pk]),
         {"single_open_battle": "on"}, htmx),
        ("session refused (htmx)", o, "post", reverse("campaign_session_start", args=[campaign.pk]),
         {"weather": "clear"}, htmx),
        ("campaign download", p, "get", reverse("campaign_export", args=[campaign.pk]), {}, {}),
        ("campaign import", o, "get", reverse("campaign_import"), {}, {}),
        ("scenario list", p, "get", reverse("scenario_list"), {}, {}),
        ("new scenario", d, "get", reverse("scenario_new"), {}, {}),
        ("builder, designer", d, "get", reverse("scenario", args=[scenario.pk]), {}, {}),
        ("builder, player", p, "get", reverse("scenario", args=[scenario.pk]), {}, {}),
        ("structure editor", d, "get", reverse("scenario_structure", args=[scenario.pk, structure.pk]), {}, {}),
        ("structure dragged (htmx)", d, "post", reverse("scenario_structure_move", args=[scenario.pk, structure.pk]),
         {"x": str(structure.x), "y": str(structure.y)}, htmx),
        ("unit dragged (htmx)", d, "post", reverse("scenario_unit_move", args=[scenario.pk, unit.pk]),
         {"x": "5", "y": "3"}, htmx),
        ("unit editor", d, "get", reverse("scenario_unit", args=[scenario.pk, unit.pk]), {}, {}),
        ("new unit", d, "get", reverse("scenario_unit_new", args=[scenario.pk, army.pk]), {}, {}),
        ("scenario download", d, "get", reverse("scenario_export", args=[scenario.pk]), {}, {}),
        ("scenario print", d, "get", reverse("scenario_print", args=[scenario.pk]), {}, {}),
        ("scenario import", d, "get", reverse("scenario_import"), {}, {}),
        ("sheet list", d, "get", reverse("sheet_list"), {}, {}),
        ("sheet", d, "get", reverse("sheet", args=[sheet.pk]), {}, {}),
        ("sheet editor", d, "get", reverse("sheet_edit", args=[sheet.pk]), {}, {}),
        ("sheet print", d, "get", reverse("sheet_print", args=[sheet.pk]), {}, {}),
        ("sheet download", d, "get", reverse("sheet_export", args=[sheet.pk]), {}, {}),
        ("sheet import", d, "get", reverse("sheet_import"), {}, {}),
        ("reference", d, "get", reverse("sheet_reference"), {}, {}),
        ("structure card", p, "get", reverse("structure", args=[ground.pk]), {}, {}),
        ("password change", p, "get", reverse("password_change"), {}, {}),
        ("join", p, "get", reverse("join"), {}, {}),
        ("new club", p, "get", reverse("club_new"), {}, {}),
        ("spectator", None, "get", reverse("spectator", args=[watch.link_token(y.links[0])]), {}, {}),
    ]


@pytest.mark.django_db
def test_no_page_outside_the_battle_screen_grows_with_the_club(capsys):
    """Every page and partial costs the same queries for a club of three members, one campaign and a
    scenario of three structures as for one with many of everything. A page that reads a row per
    session, structure, unit, member or sheet fails here (the battle screen has its own test)."""
    measured = {}
    for name, y in (("small", build_club("Small club", structures=3, battles=3)), ("large", build_club(
            "Large club", **LARGE))):
        clients, measured[name] = {}, {}
        for page, who, method, url, data, headers in pages(y):
            if who not in clients:
                clients[who] = signed_in(who) if who else Client()
            measured[name][page] = count(lambda: getattr(clients[who], method)(url, data, **headers))
    with capsys.disabled():
        print(f"\n  {'page':<28}{'queries':>8}{'kB small':>10}{'kB large':>10}")
        for page, (queries, response) in measured["large"].items():
            print(f"  {page:<28}{queries:>8}{len(measured['small'][page][1].getvalue()) / 1000:>10.1f}"
                  f"{len(response.getvalue()) / 1000:>10.1f}")
    grew = {page: (measured["small"][page][0], queries) for page, (queries, _) in measured["large"].items()
            if queries != measured["small"][page][0]}
    assert not grew, f"queries (small club, large club) of the pages that grew: {grew}"

@pytest.mark.django_db
def test_campaign_export_reads_every_battle_in_the_same_queries():
    small, large = build_club("Small club"), build_club("Large club", **LARGE)
    counts, files = {}, {}
    for name, y in (("small", small), ("large", large)):
        client = signed_in(y.player)
        counts[name], response = count(lambda: client.get(reverse("campaign_export", args=[y.campaigns[0].pk])))
        files[name] = json.loads(response.getvalue())
    # Four sessions of ten structures, each with its own forces, scenario and log.
    battles = files["large"]["battles"]
    assert len(battles) == 4 and {len(b["structures"]) for b in battles} == {10}
    assert {len(b["log"]) for b in battles} == {12} and len(files["large"]["scenarios"]) == 3
    assert all(b["armies"][0]["units"][0]["weapons"] for b in battles)
    assert any(s["connections"] for s in battles[0]["structures"])
    assert counts["large"] == counts["small"]


@pytest.mark.django_db
def test_scenario_export_reads_the_ground_in_the_same_queries():
    small, large = build_club("Small club"), build_club("Large club", **LARGE)
    counts = {}
    for name, y in (("small", small), ("large", large)):
        client = signed_in(y.designer)
        counts[name], response = count(lambda: client.get(reverse("scenario_export", args=[y.scenarios[0].pk])))
    doc = json.loads(response.content)
    assert len(doc["structures"]) == 10 and len(doc["armies"][1]["units"]) == 4
    assert counts["large"] == counts["small"]



@pytest.mark.django_db
def test_a_scenario_file_is_imported_in_the_same_queries_however_much_ground_it_has():
    """The import wrote each structure, floor, army and unit with a statement of its own, and looked
    up each of the file's sheets twice: two hundred statements for a scenario of forty structures."""
    from apps.campaigns.models import Scenario

    small, large = build_club("Small club", structures=3), build_club("Large club", **LARGE)
    counts = {}
    for name, y in (("small", small), ("large", large)):
        client = signed_in(y.designer)
        text, counts[name] = export_and_import_again(client, "scenario", y.scenarios[0].pk, y.club)
        imported = Scenario.objects.get(club=y.club, name="Scenario 0 (2)")
        # The copy exports as the original did: ground, floors, openings, connections, forces, sheets.
        original = json.loads(text)
        again = json.loads(client.get(reverse("scenario_export", args=[imported.pk])).content)
        assert {**again, "name": "Scenario 0"} == original
    assert len(original["structures"]) == 10 and len(original["sheets"]) == 2
    assert any(s["connections"] for s in original["structures"])
    assert any(u["at"] and "structure" in u["at"] for u in original["armies"][0]["units"])
    assert counts["large"] == counts["small"]


@pytest.mark.django_db
def test_a_campaign_file_is_imported_in_the_same_queries_however_many_sessions_it_has():
    """The import wrote each session on its own: the battle, then its ground, forces and log, about
    ten statements a session. All sessions now go in together, one statement per table."""
    from apps.battles.models import Battle
    from apps.campaigns.models import Campaign

    small = build_club("Small club", structures=3, battles=1)
    large = build_club("Large club", **{**LARGE, "campaigns": 1, "sessions": 6, "battles": 6, "scenarios": 1})
    counts = {}
    for name, y in (("small", small), ("large", large)):
        client = signed_in(y.organiser)
        text, counts[name] = export_and_import_again(client, "campaign", y.campaigns[0].pk, y.club)
        imported = Campaign.objects.get(club=y.club, name="Campaign 0 (2)")
        # It exports as the original did: every session with its ground, forces, log and times.
        again = json.loads(client.get(reverse("campaign_export", args=[imported.pk])).getvalue())
        original = json.loads(text)
        for doc in (again, original):
            doc.pop("name"), doc.pop("created_at")
            for b in doc["battles"]:
                b["name"] = b["name"].replace(" (2)", "")
        assert again == original
    assert Battle.objects.filter(campaign=imported).count() == 6 and len(original["battles"][3]["log"]) == 12
    assert all(b["structures"] and b["armies"] for b in original["battles"])
    assert counts["large"] == counts["small"]

    # Sessions of their own name, written together, still get names of their own in the club.
    doc = json.loads(text)
    doc["battles"][0]["name"] = doc["battles"][1]["name"] = "Night raid"
    response = client.post(reverse("campaign_import"), {"club": large.club.pk, "text": json.dumps(doc)})
    assert response.status_code == 303
    names = sorted(Battle.objects.filter(campaign__name="Campaign 0 (3)").values_list("name", flat=True))
    assert names[-2:] == ["Night raid", "Night raid (2)"]

# ---------------------------------------------------------------------------------- the home page

@pytest.mark.django_db
def test_the_home_page_lists_the_newest_open_battles_a_page_at_a_time():
    """Every open battle of every club was on the home page: a club that leaves friendlies unfinished
    listed each one it ever set up, above the player's clubs, on a phone. The newest ten come first;
    the rest are a plain link away, and any page costs the same queries for any number of battles."""
    from apps.battles.models import Battle, BattleStatus

    small, large = build_club("Small club", battles=3), build_club("Large club", **{**LARGE, "battles": 40})
    open_battles = list(Battle.objects.filter(club=large.club).exclude(status=BattleStatus.FINISHED)
                        .order_by("-created_at", "-pk"))
    assert len(open_battles) == 13
    counts = {}
    for name, y in (("small", small), ("large", large)):
        client = signed_in(y.organiser)
        counts[name], response = count(lambda: client.get(reverse("home")))
        counts[name, 2], _ = count(lambda: client.get(reverse("home"), {"open": 2}))
    assert counts["small"] == counts["large"] and counts["small", 2] == counts["large", 2]

    def listed(response):
        section = response.content.decode().split('id="open-battles-title"')[1].split("</section>")[0]
        return section, [int(pk) for pk in re.findall(r'href="/battles/(\d+)/"', section)]

    section, shown = listed(response)
    assert shown == [b.pk for b in open_battles[:10]]
    assert "13 open battles, the newest first; page 1 of 2." in section
    assert 'href="?open=2#open-battles">Older battles</a>' in section and "Newer battles" not in section

    section, shown = listed(client.get(reverse("home"), {"open": 2}))
    assert shown == [b.pk for b in open_battles[10:]]
    assert 'href="?open=1#open-battles">Newer battles</a>' in section and "Older battles" not in section

    # A handful fit on one page, with nothing to page through.
    section, shown = listed(signed_in(small.organiser).get(reverse("home")))
    assert len(shown) == 2 and "page 1 of" not in section and "pager" not in section


# ---------------------------------------------------------------------------------- the club page

def club_page(client, y, **params):
    return count(lambda: client.get(reverse("club", args=[y.club.slug]), params))


@pytest.mark.django_db
def test_every_working_invitation_stays_on_the_club_page_however_many_were_made():
    """A club that gives each newcomer a one-use code makes dozens a month: the page listed the newest 30,
    so an older code that still worked could no longer be seen or withdrawn."""
    from datetime import timedelta

    from django.utils import timezone

    from apps.campaigns.account_forms import new_invite_code, pretty_code
    from apps.campaigns.models import Invite

    y = build_club("Busy club", invites=0)
    now = timezone.now()
    oldest = Invite.objects.create(club=y.club, code=new_invite_code(), expires_at=now + timedelta(days=25),
                                   created_by=y.organiser)
    Invite.objects.filter(pk=oldest.pk).update(created_at=now - timedelta(days=5))
    Invite.objects.bulk_create([Invite(club=y.club, code=new_invite_code(), expires_at=now + timedelta(days=30),
                                       created_by=y.organiser, uses=n % 2, max_uses=1) for n in range(40)])
    Invite.objects.bulk_create([Invite(club=y.club, code=new_invite_code(), expires_at=now - timedelta(days=n + 1),
                                       created_by=y.organiser) for n in range(30)])
    client = signed_in(y.organiser)
    _, response = club_page(client, y)
    html = response.content.decode()
    assert pretty_code(oldest.code) in html
    assert reverse("club_invite_revoke", args=[y.club.slug, oldest.pk]) in html
    # Every working one with its Withdraw button, and the newest few of those that no longer work.
    assert html.count('class="card invite"') == 21 + 10
    assert html.count(">Withdraw</button>") == 21 and html.count("No longer works") == 10

    response = client.post(reverse("club_invite_revoke", args=[y.club.slug, oldest.pk]))
    assert response.status_code == 303
    oldest.refresh_from_db()
    assert oldest.revoked_at is not None


@pytest.mark.django_db
def test_the_club_page_lists_open_battles_and_pages_through_finished_ones_live_links_first():
    """Years of play: the spectator section drew a card and a form for every battle the club ever played
    (60 battles: 150 kB, forty phone screens). Battles not finished are all there; finished ones come
    ten at a time, those with a live link first, and the page costs the same queries for any number."""
    from apps.battles.models import Battle, BattleStatus
    from apps.campaigns.models import SpectatorLink

    small, large = build_club("Small club", battles=3), build_club("Large club", **{**LARGE, "battles": 40})
    # Links for the battles being fought, and one kept from the first session.
    SpectatorLink.objects.exclude(battle__status=BattleStatus.IN_PROGRESS).exclude(pk=large.links[0].pk).delete()
    counts = {}
    for name, y in (("small", small), ("large", large)):
        counts[name], response = club_page(signed_in(y.organiser), y)
    assert counts["small"] == counts["large"]

    battles = Battle.objects.filter(club=large.club)
    held = large.links[0].battle
    open_battles = [b for b in battles if b.status != BattleStatus.FINISHED]
    finished = list(battles.filter(status=BattleStatus.FINISHED).exclude(pk=held.pk).order_by("-created_at", "-pk"))
    assert held.status == BattleStatus.FINISHED and len(open_battles) == 13 and len(finished) == 26
    client = signed_in(large.organiser)
    _, response = club_page(client, large)
    html = response.content.decode()
    for battle in [*open_battles, held, *finished[:9]]:
        assert f'id="spectators-{battle.pk}"' in html, battle.name
    assert html.count('class="card" id="spectators-') == 13 + 10
    # The finished battle with a live link comes first, its link revocable.
    assert html.index(f'id="spectators-{held.pk}"') < html.index(f'id="spectators-{finished[0].pk}"')
    assert reverse("spectator_link_revoke", args=[large.links[0].pk]) in html
    assert "27 finished battles, 1 with a live spectator link (listed first); page 1 of 3." in html
    assert 'href="?finished=2#finished-battles"' in html

    _, response = club_page(client, large, finished=3)
    html = response.content.decode()
    assert [f'id="spectators-{b.pk}"' in html for b in finished[19:]] == [True] * 7
    assert f'id="spectators-{finished[0].pk}"' not in html and 'href="?finished=2#finished-battles"' in html

    # A link for the oldest battle: it then comes first among the finished ones.
    oldest = finished[-1]
    response = client.post(reverse("spectator_link_new", args=[oldest.pk]), {f"b{oldest.pk}-label": "Replay"})
    assert response.status_code == 303 and response["Location"].endswith(f"#spectators-{oldest.pk}")
    assert SpectatorLink.objects.filter(battle=oldest, revoked_at__isnull=True, label="Replay").count() == 1
    _, response = club_page(client, large)
    assert f'id="spectators-{oldest.pk}"' in response.content.decode()

    # A refused label comes back beside its battle's form, wherever that battle was listed.
    response = client.post(reverse("spectator_link_new", args=[finished[-2].pk]), {f"b{finished[-2].pk}-label": "x" * 81})
    assert response.status_code == 400
    card = response.content.decode().split(f'id="spectators-{finished[-2].pk}"')[1].split("</article>")[0]
    assert "at most 80 characters" in card


# ---------------------------------------------------------------------------------- the campaign page

@pytest.mark.django_db
@pytest.mark.parametrize("who", ["organiser", "player"])
def test_a_long_campaign_folds_its_earlier_sessions_and_keeps_its_queries(who):
    """Forty sessions drew forty timeline entries (about 7,600 px on a phone) before the newest
    session and the organiser's controls for the next one. The newest five stay in view; the earlier
    ones are folded in a <details> (no script needed), every one still linked."""
    from apps.battles.models import Battle

    small = build_club("Small club")
    large = build_club("Large club", **{**LARGE, "campaigns": 1, "sessions": 12, "battles": 12})
    counts = {}
    for name, y in (("small", small), ("large", large)):
        counts[name], response = count(lambda: signed_in(getattr(y, who)).get(
            reverse("campaign", args=[y.campaigns[0].pk])))
    assert counts["small"] == counts["large"]
    html = response.content.decode()
    sessions = list(Battle.objects.filter(campaign=large.campaigns[0]).order_by("session_number"))
    assert len(sessions) == 12
    folded, shown = html.split('<details class="earlier-sessions">')[1].split("</details>")
    assert "7 earlier sessions" in folded
    for battle in sessions[:7]:
        assert f'id="session-{battle.pk}"' in folded and reverse("battle", args=[battle.pk]) in folded
    for battle in sessions[7:]:
        assert f'id="session-{battle.pk}"' in shown.split('id="campaign-settings"')[0]
    if who == "organiser":  # the newest session, then what to do about it
        assert shown.index(f'id="session-{sessions[-1].pk}"') < shown.index('id="start-blocked"')

    # A short campaign folds nothing.
    html = signed_in(small.organiser).get(reverse("campaign", args=[small.campaigns[0].pk])).content.decode()
    assert "earlier-sessions" not in html and f'id="session-{small.battles[0].pk}"' in html
