"""The database itself refuses impossible armies, units and weapons.

Every write here bypasses model validation (queryset update, bulk_create) on purpose.
"""

import pytest

from apps.armies.models import Army, Unit, UnitWeapon, Weapon, WeaponType
from apps.battles.models import Battle
from apps.campaigns.models import Campaign
from apps.structures.models import Floor, Material, Structure
from tests.constraints import club, rejected, scenario  # noqa: F401 - fixtures


@pytest.fixture
def army(scenario):
    return Army.objects.create(scenario=scenario, side="A", name="Soviets")


@pytest.fixture
def floor(scenario):
    wall = Material.objects.create(slug="brick", name="Brick", surface="wall", armor_class=6)
    house = Structure.objects.create(scenario=scenario, name="House", wall_material=wall)
    return Floor.objects.create(structure=house, level=0)


@pytest.fixture
def squad(army):
    return Unit.objects.create(army=army, name="Squad", models_start=10, models_left=10)


def units(unit):
    return Unit.objects.filter(pk=unit.pk)


def test_more_models_left_than_at_the_start_is_rejected(squad):
    rejected(lambda: units(squad).update(models_left=11))
    rejected(lambda: Unit.objects.bulk_create([Unit(army=squad.army, name="Ghosts", models_start=5, models_left=6)]))


def test_lowering_the_start_below_the_models_left_is_rejected(squad):
    rejected(lambda: units(squad).update(models_start=9))


def test_two_units_on_one_floor_are_rejected(army, squad, floor):
    units(squad).update(floor=floor)
    other = Unit.objects.create(army=army, name="Second squad")
    rejected(lambda: units(other).update(floor=floor))
    rejected(lambda: Unit.objects.bulk_create([Unit(army=army, name="Third squad", floor=floor)]))


@pytest.mark.parametrize("change", [
    {"x": 10, "y": 10, "on_floor": True},
    {"x": 10},
    {"y": 10},
    {"tank_class": "heavy"},
    {"kind": "cavalry"},
    {"experience": "legendary"},
    {"pins": -1},
], ids=["floor-and-point", "x-without-y", "y-without-x", "tank-class-on-infantry", "unknown-kind",
        "unknown-experience", "negative-pins"])
def test_impossible_unit_state_is_rejected(squad, floor, change):
    change = dict(change)
    if change.pop("on_floor", False):
        change["floor"] = floor
    rejected(lambda: units(squad).update(**change))


def test_a_tank_class_is_fine_on_a_vehicle(squad):
    units(squad).update(kind="vehicle", tank_class="super_heavy")


def test_army_with_two_owners_or_none_is_rejected(army, club):
    campaign = Campaign.objects.create(club=club, name="Campaign")
    rejected(lambda: Army.objects.filter(pk=army.pk).update(campaign=campaign))
    rejected(lambda: Army.objects.filter(pk=army.pk).update(scenario=None))


def test_one_army_per_side_wherever_it_belongs(army, scenario, club):
    rejected(lambda: Army.objects.bulk_create([Army(scenario=scenario, side="A", name="More Soviets")]))
    campaign = Campaign.objects.create(club=club, name="Campaign")
    battle = Battle.objects.create(club=club, name="Battle")
    for owner in ({"campaign": campaign}, {"battle": battle}):
        Army.objects.create(side="A", name="Soviets", **owner)
        Army.objects.create(side="B", name="Germans", **owner)
        rejected(lambda: Army.objects.bulk_create([Army(side="B", name="More Germans", **owner)]))


def test_unknown_side_is_rejected(army):
    rejected(lambda: Army.objects.filter(pk=army.pk).update(side="C"))


@pytest.mark.parametrize("change", [{"attack_factor": 0}, {"attack_factor": 10}, {"barrels": 0},
                                    {"ruleset": "xx"}],
                         ids=["af=0", "af=10", "barrels=0", "unknown-ruleset"])
def test_impossible_weapon_is_rejected(db, change):
    weapon = Weapon.objects.create(ruleset="lg", slug="laser-rifle", name="Laser rifle", attack_factor=5)
    rejected(lambda: Weapon.objects.filter(pk=weapon.pk).update(**change))


def test_weapon_slug_is_unique_per_ruleset(db):
    Weapon.objects.create(ruleset="dh", slug="flamethrower", name="Flamethrower")
    rejected(lambda: Weapon.objects.bulk_create([Weapon(ruleset="dh", slug="flamethrower", name="Again")]))
    Weapon.objects.create(ruleset="ba", slug="flamethrower", name="Flamethrower")


def test_weapon_type_attack_factor_is_1_to_9_or_empty(db):
    WeaponType.objects.create(slug="anti-matter", name="anti-matter", attack_factor=None)
    rejected(lambda: WeaponType.objects.bulk_create([WeaponType(slug="overkill", name="overkill", attack_factor=10)]))
    rejected(lambda: WeaponType.objects.bulk_create([WeaponType(slug="anti-matter", name="again", attack_factor=9)]))


def test_unit_weapons(squad):
    rifle = Weapon.objects.create(ruleset="ba", slug="rifles", name="Rifles")
    carried = UnitWeapon.objects.create(unit=squad, weapon=rifle, count=7)
    rejected(lambda: UnitWeapon.objects.filter(pk=carried.pk).update(count=0))
    rejected(lambda: UnitWeapon.objects.bulk_create([UnitWeapon(unit=squad, weapon=rifle, count=1)]))
