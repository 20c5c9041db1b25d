"""The database itself refuses impossible structures, whatever code (or a raw UPDATE) tries.

Every write here bypasses model validation (queryset update, bulk_create) on purpose.
"""

import pytest
from django.db.models import F

from apps.campaigns.models import Campaign
from apps.structures.models import BunkerSheet, FireChance, Floor, Material, Opening, Structure, WeatherEffect
from tests.constraints import club, rejected, scenario  # noqa: F401 - fixtures


@pytest.fixture
def brick(db):
    return Material.objects.create(slug="brick", name="Brick", surface="wall", armor_class=6)


@pytest.fixture
def house(scenario, brick):
    return Structure.objects.create(scenario=scenario, name="House", wall_material=brick, damage_max=10)


def structures(house):
    return Structure.objects.filter(pk=house.pk)


def test_damage_up_to_the_maximum_is_accepted(house):
    structures(house).update(damage_taken=F("damage_max"))
    house.refresh_from_db()
    assert house.damage_taken == 10


def test_damage_taken_above_the_maximum_is_rejected(house):
    rejected(lambda: structures(house).update(damage_taken=11))


def test_negative_damage_taken_is_rejected(house):
    rejected(lambda: structures(house).update(damage_taken=-1))


def test_lowering_the_maximum_below_the_damage_taken_is_rejected(house):
    structures(house).update(damage_taken=8)
    rejected(lambda: structures(house).update(damage_max=7))


def test_structure_with_two_owners_is_rejected(house, club):
    campaign = Campaign.objects.create(club=club, name="Campaign")
    rejected(lambda: structures(house).update(campaign=campaign))


def test_structure_without_an_owner_is_rejected(house, brick):
    rejected(lambda: structures(house).update(scenario=None))
    rejected(lambda: Structure.objects.bulk_create([Structure(name="Stray", wall_material=brick)]))


@pytest.mark.parametrize("change", [
    {"fire_size": 0},
    {"fire_size": -4},
    {"width": 0},
    {"depth": -1},
    {"crew_pins": 4},
    {"breach_needed": 3, "breach_scored": 4},
], ids=lambda change: ",".join(f"{k}={v}" for k, v in change.items()))
def test_impossible_structure_state_is_rejected(house, change):
    rejected(lambda: structures(house).update(**change))


def test_breach_counter_is_free_while_no_breach_is_needed(house):
    structures(house).update(breach_needed=0, breach_scored=2)


def test_a_sheet_only_goes_on_a_fortification(house):
    sheet = BunkerSheet.objects.create(slug="loghouse", name="Loghouse")
    rejected(lambda: structures(house).update(sheet=sheet))
    structures(house).update(sheet=sheet, kind="bunker")


def test_armor_class_above_9_is_rejected(brick):
    rejected(lambda: Material.objects.filter(pk=brick.pk).update(armor_class=10))
    rejected(lambda: Material.objects.bulk_create([Material(slug="unobtainium", name="U", surface="wall", armor_class=12)]))


def test_material_slug_is_unique_per_surface(brick):
    rejected(lambda: Material.objects.bulk_create([Material(slug="brick", name="Brick 2", surface="wall", armor_class=6)]))
    Material.objects.create(slug="brick", name="Brick roof", surface="roof", armor_class=6)


def test_two_floors_at_the_same_level_are_rejected(house):
    Floor.objects.create(structure=house, level=0)
    rejected(lambda: Floor.objects.bulk_create([Floor(structure=house, level=0)]))


def test_opening_rows(house):
    floor = Floor.objects.create(structure=house, level=0)
    window = Opening.objects.create(floor=floor, side="front", kind="window", count=2)
    rejected(lambda: Opening.objects.bulk_create([Opening(floor=floor, side="front", kind="window")]))
    rejected(lambda: Opening.objects.filter(pk=window.pk).update(count=0))
    rejected(lambda: Opening.objects.bulk_create([Opening(floor=floor, side="left", kind="made_opening", count=2)]))


def test_library_sheet_slugs_are_unique_though_club_is_null(club):
    BunkerSheet.objects.create(slug="pillbox", name="Pillbox")
    rejected(lambda: BunkerSheet.objects.bulk_create([BunkerSheet(slug="pillbox", name="Another pillbox")]))
    # A club may keep its own sheet under a library slug, but only once.
    BunkerSheet.objects.create(club=club, slug="pillbox", name="Our pillbox")
    rejected(lambda: BunkerSheet.objects.bulk_create([BunkerSheet(club=club, slug="pillbox", name="Twice")]))


@pytest.mark.parametrize("change", [{"dm": 11}, {"dm": -11}, {"kind": "castle"}],
                         ids=["dm=11", "dm=-11", "kind=castle"])
def test_impossible_sheet_is_rejected(db, change):
    sheet = BunkerSheet.objects.create(slug="s", name="S")
    rejected(lambda: BunkerSheet.objects.filter(pk=sheet.pk).update(**change))


@pytest.mark.parametrize("d10_max", [0, 11])
def test_fire_chance_outside_a_d10_is_rejected(db, d10_max):
    rejected(lambda: FireChance.objects.bulk_create([FireChance(weapon_type="laser", d10_max=d10_max)]))


def test_reference_rows_are_unique(db):
    FireChance.objects.create(weapon_type="Laser", d10_max=8)
    rejected(lambda: FireChance.objects.bulk_create([FireChance(weapon_type="Laser", d10_max=7)]))
    WeatherEffect.objects.create(condition="mist", fire_modifier=2)
    rejected(lambda: WeatherEffect.objects.bulk_create([WeatherEffect(condition="mist", fire_modifier=3)]))
