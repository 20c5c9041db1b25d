"""Migration structures 0006: the crew each Disposable Heroes campaign's bunker started with, for the
rows that were there before the app kept it."""

import importlib

import pytest
from django.apps import apps

from apps.battles.models import Battle
from apps.campaigns.models import Campaign, Club, Scenario
from apps.rules.tables import DH_SHEETS
from apps.structures.models import BunkerSheet, Structure
from tests.factories import material

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("apps.structures.migrations.0006_structure_crew_start")


def test_existing_bunkers_start_from_their_scenario_or_else_their_sheet_and_never_below_what_is_left():
    sheet = BunkerSheet.objects.create(**next(s for s in DH_SHEETS if s["slug"] == "soviet-rifle-pit"))  # 9 men
    club = Club.objects.create(name="Club", slug="club")
    owners = {ruleset: (Scenario.objects.create(club=club, name=f"S {ruleset}", ruleset=ruleset),
                        Campaign.objects.create(club=club, name=f"C {ruleset}", ruleset=ruleset))
              for ruleset in ("dh", "ba")}
    scenario, campaign = owners["dh"]
    session = Battle.objects.create(club=club, campaign=campaign, name="Session 1", ruleset="dh")
    one_off = Battle.objects.create(club=club, name="One-off", ruleset="dh")

    def pit(name, origin=None, men=0, left=0, **owner):
        return Structure.objects.create(name=name, kind="bunker", sheet=sheet, wall_material=material("logs", 6),
                                        origin=origin, crew_side="A", crew_men=men, crew_left=left, **owner)

    half = pit("Half-manned", men=5, scenario=scenario)
    cut = pit("Cut after the start", men=2, scenario=scenario)  # the designer took men away since
    rows = {
        "campaign, from its scenario": (pit("a", half, men=3, campaign=campaign), 5),
        "campaign, scenario cut since": (pit("b", cut, men=3, left=1, campaign=campaign), 4),
        "campaign, scenario gone": (pit("c", None, men=3, campaign=campaign), 9),
        "scenario": (half, 0),
        "bolt action": (pit("d", None, men=0, campaign=owners["ba"][1]), 0),
        "one-off battle, from its scenario": (pit("e", half, men=4, battle=one_off), 5),
    }
    rows["session, from its campaign row"] = (pit("f", rows["campaign, from its scenario"][0], men=1, left=2,
                                                  battle=session), 5)
    Structure.objects.update(crew_start=0)  # as the rows were before the field

    MIGRATION.starting_crews(apps, None)

    starts = dict(Structure.objects.values_list("pk", "crew_start"))
    assert {what: starts[row.pk] for what, (row, _) in rows.items()} == {what: want for what, (_, want) in rows.items()}
