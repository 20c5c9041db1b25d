"""A club after years of play (tests/year_club.py): the pages and files outside the battle screen
cost the same number of queries for a small club as for one with many campaigns, sessions, battles,
members, scenarios and sheets, and the lists that grow without end stay a readable length."""

import json

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


def count(call):
    with CaptureQueriesContext(connection) as queries:
        response = call()
    assert response.status_code == 200, response.status_code
    return len(queries.captured_queries), response


@pytest.mark.django_db
def test_campaign_export_reads_every_battle_in_the_same_queries():
    small, large = build_club("Small club"), build_club("Large club", **LARGE)
    counts, files = {}, {}
    for name, y in (("small", small), ("large", large)):
        client = signed_in(y.player)
        counts[name], response = count(lambda: client.get(reverse("campaign_export", args=[y.campaigns[0].pk])))
        files[name] = json.loads(b"".join(response.streaming_content) if response.streaming else response.content)
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
