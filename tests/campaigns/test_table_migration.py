"""Migration campaigns 0006: each existing campaign's table is its first session's."""

import importlib

import pytest
from django.apps import apps

from apps.battles.models import Battle
from apps.campaigns.models import Campaign, Club

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("apps.campaigns.migrations.0006_campaign_table")


def test_existing_campaigns_take_their_first_sessions_table():
    club = Club.objects.create(name="Club", slug="club")
    played, none_left = (Campaign.objects.create(club=club, name=name) for name in ("played", "none left"))
    # Session 2 on a table grown since, session 1 on the scenario's 48″ × 48″ (set up after it, as a
    # discarded and set up again session 1 would be).
    Battle.objects.create(club=club, campaign=played, name="Two", session_number=2, table_width=60, table_depth=48)
    Battle.objects.create(club=club, campaign=played, name="One", session_number=1, table_width=48, table_depth=48)
    Battle.objects.create(club=club, name="A friendly", table_width=30, table_depth=30)

    MIGRATION.tables_from_first_sessions(apps, None)

    tables = {name: (w, d) for name, w, d in Campaign.objects.values_list("name", "table_width", "table_depth")}
    assert tables == {"played": (48, 48), "none left": (None, None)}
