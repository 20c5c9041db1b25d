"""Migration campaigns 0005: the deployment zones of each campaign started before campaigns kept their
own copy, taken from the scenario its ground or forces were copied from."""

import importlib

import pytest
from django.apps import apps

from apps.armies.models import Army
from apps.campaigns.models import Campaign, Club, Scenario
from apps.structures.models import Structure
from tests.factories import material

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("apps.campaigns.migrations.0005_campaign_deployment_zones")
ZONES = [{"side": "A", "x": 0, "y": 0, "width": 72, "depth": 12}]


def test_existing_campaigns_take_the_zones_of_the_scenario_they_were_copied_from():
    club = Club.objects.create(name="Club", slug="club")
    scenario = Scenario.objects.create(club=club, name="Hill", deployment_zones=ZONES)
    house = Structure.objects.create(scenario=scenario, name="House", wall_material=material("brick", 6))
    army = Army.objects.create(scenario=scenario, side="A", name="Reds")
    by_ground, by_forces, from_a_file = (Campaign.objects.create(club=club, name=name) for name in "abc")
    Structure.objects.create(campaign=by_ground, origin=house, name="House", wall_material=house.wall_material)
    Army.objects.create(campaign=by_forces, origin=army, side="A", name="Reds")
    Structure.objects.create(campaign=from_a_file, name="House", wall_material=house.wall_material)

    MIGRATION.zones_from_scenarios(apps, None)

    zones = dict(Campaign.objects.values_list("name", "deployment_zones"))
    assert zones == {"a": ZONES, "b": ZONES, "c": []}
