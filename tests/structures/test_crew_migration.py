"""Migration structures 0005: the crew an earlier reading gave Bolt Action (and LaserGrenadiers)
structures is cleared, in scenarios, campaigns and battles alike; Disposable Heroes crews stay."""

import importlib

import pytest
from django.apps import apps

from apps.campaigns.models import Campaign, Club, Scenario
from apps.rules.tables import DH_SHEETS
from apps.structures.models import BunkerSheet, Structure
from tests.factories import make_world, material

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("apps.structures.migrations.0005_no_crews_outside_disposable_heroes")
NO_CREW = MIGRATION.NO_CREW  # the crew fields as they were then (crew_start came later, in 0006)
CREW = {"crew_side": "A", "crew_men": 9, "crew_pins": 2, "crew_routed": True, "crew_penetrating_hits": 1,
        "weapons_destroyed": [0], "crew_left": 3}


def test_crews_outside_disposable_heroes_are_cleared_and_theirs_are_kept():
    sheet = BunkerSheet.objects.create(**next(s for s in DH_SHEETS if s["slug"] == "soviet-at-hmg-loghouse"))
    logs = material("logs", 6)
    club = Club.objects.create(name="Club", slug="club")
    bunkers = {}
    for ruleset in ("ba", "lg", "dh"):
        owners = {
            "scenario": Scenario.objects.create(club=club, name=f"S {ruleset}", ruleset=ruleset),
            "campaign": Campaign.objects.create(club=club, name=f"C {ruleset}", ruleset=ruleset),
            "battle": make_world(ruleset=ruleset, club_name=f"Club {ruleset}").battle,
        }
        for kind, owner in owners.items():
            bunkers[ruleset, kind] = Structure.objects.create(
                **{kind: owner}, name=f"{ruleset} {kind}", kind="bunker", sheet=sheet, wall_material=logs, **CREW)

    MIGRATION.clear_crews(apps, None)

    for (ruleset, kind), bunker in bunkers.items():
        row = Structure.objects.values(*NO_CREW, "sheet_id").get(pk=bunker.pk)
        assert row == {**(CREW if ruleset == "dh" else NO_CREW), "sheet_id": sheet.pk}, (ruleset, kind)
