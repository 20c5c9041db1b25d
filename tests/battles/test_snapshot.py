"""snapshot.load reads a battle with plain SELECTs: the rows must be what the ORM would have built,
with every relation the battle screen follows already in hand."""

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from apps.armies.models import Army, Unit
from apps.battles import snapshot as snap
from apps.battles.models import Battle
from apps.structures.models import Structure

pytestmark = pytest.mark.django_db


@pytest.fixture
def battle():
    call_command("demo", verbosity=0)
    # The demo battle with the most in it: bunkers with sheets, roofs, units inside and outside.
    return max(Battle.objects.all(), key=lambda b: (b.structures.filter(sheet__isnull=False).count(),
                                                   b.structures.count()))


def fields(row):
    """Every concrete field, by attname (JSON decoded, decimals as decimals), as the ORM loads it."""
    return {f.attname: getattr(row, f.attname) for f in type(row)._meta.concrete_fields}


def test_rows_are_what_the_orm_builds(battle):
    loaded = snap.load(battle)
    orm_structures = Structure.objects.filter(battle=battle).select_related("wall_material", "roof_material", "sheet")
    assert [s.pk for s in loaded.structures.values()] == [s.pk for s in orm_structures]  # Meta ordering kept
    assert any(s.sheet_id for s in orm_structures) and any(s.roof_material_id for s in orm_structures)
    for orm in orm_structures.prefetch_related("floors__openings"):
        row = loaded.structures[f"s{orm.pk}"]
        assert fields(row) == fields(orm)
        assert fields(row.wall_material) == fields(orm.wall_material)
        assert (row.roof_material and fields(row.roof_material)) == (orm.roof_material and fields(orm.roof_material))
        assert (row.sheet and fields(row.sheet)) == (orm.sheet and fields(orm.sheet))
        assert [fields(f) for f in row.floor_rows] == [fields(f) for f in orm.floors.all()]
        for floor, orm_floor in zip(row.floor_rows, orm.floors.all()):
            assert [fields(o) for o in floor.opening_rows] == [fields(o) for o in orm_floor.openings.all()]
    orm_units = Unit.objects.filter(army__battle=battle).prefetch_related("unit_weapons")
    assert {k: fields(u) for k, u in loaded.units.items()} == {f"u{u.pk}": fields(u) for u in orm_units}
    for u in orm_units:
        assert sorted(loaded.units[f"u{u.pk}"].weapon_ids) == sorted(uw.weapon_id for uw in u.unit_weapons.all())
    assert {side: fields(a) for side, a in loaded.armies.items()} == {
        a.side: fields(a) for a in Army.objects.filter(battle=battle)}
    # JSON arrives as text from PostgreSQL: the converters must have decoded it.
    assert all(isinstance(s.sheet.weapons, list) for s in loaded.structures.values() if s.sheet_id)


def test_every_relation_the_screen_follows_is_in_hand(battle):
    loaded = snap.load(battle)
    with CaptureQueriesContext(connection) as queries:
        for s in loaded.structures.values():
            s.wall_material.name, s.roof_material, s.sheet
            for floor in s.floor_rows:
                assert floor.structure is s
                for opening in floor.opening_rows:
                    assert opening.floor is floor
                    opening.get_kind_display()
                occupant = getattr(floor, "occupant", None)  # reverse one-to-one: raises when empty
                if occupant is not None:
                    assert occupant.floor is floor
                    occupant.army.side
        for u in loaded.units.values():
            u.army.owner, u.floor
        for army in loaded.armies.values():
            army.owner
    assert queries.captured_queries == []
    assert any(getattr(f, "occupant", None) for s in loaded.structures.values() for f in s.floor_rows)


def test_loaded_rows_save_like_orm_rows(battle):
    loaded = snap.load(battle)
    unit = next(u for u in loaded.units.values() if u.floor_id)
    unit.pins += 2
    unit.save(update_fields=["pins"])
    assert Unit.objects.get(pk=unit.pk).pins == unit.pins
    assert model_to_dict(Unit.objects.get(pk=unit.pk)) == model_to_dict(unit)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_lock_takes_the_structure_and_unit_rows(battle):
    """With lock=True another transaction cannot change a structure or unit until this one ends."""
    import threading

    from django.db import OperationalError

    structure = Structure.objects.filter(battle=battle).first()
    unit = Unit.objects.filter(army__battle=battle).first()
    outcome = {}

    def other():
        try:
            with transaction.atomic():
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL lock_timeout = '200ms'")
                for model, pk in ((Structure, structure.pk), (Unit, unit.pk)):
                    try:
                        with transaction.atomic():
                            model.objects.filter(pk=pk).update(name="Changed")
                        outcome[model.__name__] = "changed"
                    except OperationalError:
                        outcome[model.__name__] = "blocked"
        finally:
            connection.close()

    with transaction.atomic():
        snap.load(Battle.objects.select_for_update().get(pk=battle.pk), lock=True)
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert outcome == {"Structure": "blocked", "Unit": "blocked"}
