"""snapshot.load reads a battle with plain SELECTs: the rows must be what the ORM would have built,
with every relation the battle screen follows already in hand."""

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from apps.armies.models import Army, Unit, Weapon
from apps.battles import snapshot as snap
from apps.battles.log import first_broken_entry
from apps.battles.models import Battle, LogEntry
from apps.structures.models import Structure

pytestmark = pytest.mark.django_db

from tests.battles.test_concurrency import fort  # noqa: E402,F401 - a fixture
from tests.demo_rows import load_demo


@pytest.fixture
def battle():
    load_demo()
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


def test_rows_are_built_as_from_db_builds_them(battle):
    """`_Reader.build` skips Model.__init__: the instance must hold what from_db's would, no more."""
    loaded = snap.load(battle)
    row = next(s for s in loaded.structures.values() if s.sheet_id)
    orm = Structure.from_db("default", [f.attname for f in Structure._meta.concrete_fields],
                            [getattr(row, f.attname) for f in Structure._meta.concrete_fields])

    def own(instance):
        return {k: v for k, v in vars(instance).items() if k in {f.attname for f in Structure._meta.concrete_fields}}

    assert own(row) == own(orm) and len(own(row)) == len(Structure._meta.concrete_fields)
    assert (row._state.adding, row._state.db) == (False, "default")
    # The log panel's entries leave the large JSON columns out: deferred, as the ORM's .only() would.
    entry = snap.ENTRIES.build([None] * snap.ENTRIES.width)
    assert {"inputs", "outcome", "undo"} <= entry.get_deferred_fields()


def test_a_model_someone_listens_to_is_built_by_the_orm(battle):
    from django.db.models.signals import post_init

    seen = []

    def listener(sender, instance, **kwargs):
        seen.append(instance.pk)

    post_init.connect(listener, sender=Structure)
    try:
        reader = snap._Reader(Structure)
        with connection.cursor() as cursor:
            cursor.execute(snap._sql("SELECT {s} FROM {structure} s WHERE s.battle_id = %s", s=reader.columns("s")),
                           [battle.pk])
            built = reader.build(cursor.fetchone())
    finally:
        post_init.disconnect(listener, sender=Structure)
    assert seen == [built.pk]


def test_the_rules_see_each_floors_openings_and_firing_slits_by_side(battle):
    """Bolt Action fires into a bunker through its slits only (BA-52): the state must tell them apart."""
    state = snap.load(battle).state
    seen = 0
    for orm in Structure.objects.filter(battle=battle).prefetch_related("floors__openings"):
        for orm_floor, floor in zip(orm.floors.all(), state.structures[f"s{orm.pk}"].floors):
            openings, slits = {}, {}
            for o in orm_floor.openings.all():
                openings[o.side] = openings.get(o.side, 0) + o.count
                if o.kind == "firing_slit":
                    slits[o.side] = slits.get(o.side, 0) + o.count
            assert (floor.openings, floor.slits) == (openings, slits)
            seen += bool(slits) and openings != slits
    assert seen, "the demo has a bunker with a door beside its slits"


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


@pytest.mark.postgres
def test_load_is_one_round_trip_on_postgresql(battle):
    with CaptureQueriesContext(connection) as queries, transaction.atomic():
        loaded = snap.load(battle, lock=True)
        snap.lock_and_load(battle.pk)
    statements = [q["sql"].count(";\n") + 1 for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert statements == [7, 9]
    assert loaded.structures and loaded.units and loaded.state.weapons


@pytest.mark.postgres
def test_an_action_reads_in_one_round_trip_and_writes_in_another(fort):
    from tests.battles.test_concurrency import attack
    with CaptureQueriesContext(connection) as queries:
        entry = attack(fort, fort.guns[0], fort.alice)()
    trips = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]
    # Lock, double-tap check and load; the player's role (a view has it already, from battle_or_404);
    # then the bunker's UPDATE, the unit's (it acted), the entry and the battle's.
    assert [sql.count(";\n") + 1 for sql in trips] == [9, 1, 4], trips
    assert "membership" in trips[1]
    assert [sql.split()[0] for sql in trips[2].split(";\n")] == ["UPDATE", "UPDATE", "INSERT", "UPDATE"]
    fort.bunker.refresh_from_db()
    stored = LogEntry.objects.get(battle=fort.battle)
    assert (stored.pk, stored.seq, stored.entry_hash) == (entry.pk, 1, entry.entry_hash)
    assert fort.bunker.crew_penetrating_hits == 1 and first_broken_entry(stored.battle) is None
    assert Battle.objects.get(pk=fort.battle.pk).version == fort.battle.version + 1



def test_a_catalogue_weapon_is_built_once_until_its_row_changes(battle):
    """Every load reads the ruleset's catalogue: a row read before gives the profile built then; a row
    edited since (a club correcting a weapon) gives the edited one on the next load."""
    first = snap.load(battle).state.weapons
    again = snap.load(battle).state.weapons
    assert first and all(again[key] is profile for key, profile in first.items())
    key, profile = next(iter(first.items()))
    Weapon.objects.filter(pk=int(key[1:])).update(name=profile.name + " (corrected)")
    edited = snap.load(battle).state.weapons
    assert edited[key].name == profile.name + " (corrected)" and edited[key] is not profile
    assert all(edited[k] is p for k, p in first.items() if k != key)
    assert snap.load(battle).state.weapons[key] is edited[key]

@pytest.mark.postgres
def test_postgresql_plans_the_hot_statements_once_per_connection(battle):
    for _ in range(3):
        snap.load(battle)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any('FROM "structures_structure" s' in sql for sql in prepared), prepared


def test_lock_and_load_reads_what_lock_battle_and_load_read(battle):
    with transaction.atomic():
        together = snap.lock_and_load(battle.pk, "no-such-token")
        locked = snap.lock_battle(battle.pk, "no-such-token")
        apart = snap.load(locked, lock=True)
    assert fields(together.battle) == fields(locked)
    assert (together.battle.log_last, together.battle.done_entry_id) == (locked.log_last, None)
    assert together.state == apart.state
    assert {k: fields(s) for k, s in together.structures.items()} == {k: fields(s) for k, s in apart.structures.items()}
    assert {k: fields(u) for k, u in together.units.items()} == {k: fields(u) for k, u in apart.units.items()}
    with pytest.raises(Battle.DoesNotExist), transaction.atomic():
        snap.lock_and_load(battle.pk + 1000)


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


# The log panel's reads -------------------------------------------------------------------------

def orm_entries(battle):
    """What log_entries replaced: the ORM's query with its two self-joins and two annotations."""
    from django.db.models import BooleanField, Case, ExpressionWrapper, F, Q, When
    from django.db.models.fields.json import KeyTransform

    return (battle.log_entries.select_related("undoes", "undone_by")
            .annotate(restorable=ExpressionWrapper(Q(undo__has_key="structures"), output_field=BooleanField()),
                      touched=Case(When(undoes__isnull=True, then=F("undo")),
                                   When(undo__has_key="took_back", then=KeyTransform("took_back", "undo")),
                                   default=F("undoes__undo")))
            .order_by("-seq"))


def shown(entry):
    return ({name: getattr(entry, name) for name in sorted(snap.ENTRIES.names)},
            entry.restorable, entry.undoes.seq if entry.undoes_id else None,
            getattr(entry, "undone_by", None) and entry.undone_by.seq)


@pytest.fixture
def logged(battle):
    """The demo battle with an undone entry and the undo that names it, beside never-undone ones."""
    from apps.battles import services
    from apps.campaigns.models import Membership, Role

    organiser = Membership.objects.filter(club_id=battle.club_id, role=Role.ORGANISER).first().user
    if battle.status != "in_progress":
        services.start(battle_id=battle.pk, user=organiser)
    services.turn_action(battle_id=battle.pk, user=organiser, action="end_turn")
    services.undo_last(battle_id=battle.pk, user=organiser)
    return battle


def test_log_entries_are_what_the_orm_builds(logged):
    entries = snap.log_entries(logged.pk, touched=True)
    orm = list(orm_entries(logged))
    assert [shown(e) for e in entries] == [shown(e) for e in orm]
    assert [e.touched for e in entries] == [e.touched for e in orm]
    # An undo's is what it took back: the rows the undone entry changed, as that entry left them.
    undos = [e for e in entries if e.undoes_id]
    assert undos and all(not e.touched_after and set(e.touched) == {"structures", "units", "created_units"}
                         for e in undos)
    assert any(e.undoes_id for e in entries) and any(getattr(e, "undone_by", None) for e in entries)
    assert {e.restorable for e in entries} == {True, False}
    # Nothing the panel shows is left to a query, and the large JSON columns were not read.
    with CaptureQueriesContext(connection) as queries:
        for e in entries:
            e.undoes and e.undoes.seq, getattr(e, "undone_by", None), e.dice, e.created_at
    assert queries.captured_queries == []
    assert entries[0].get_deferred_fields() == {"inputs", "outcome", "undo", "client_token", "prev_hash", "entry_hash"}


def test_log_entries_filter_like_the_orm(logged):
    orm = orm_entries(logged)
    newest = orm.first().seq
    cases = [
        (dict(before=newest - 1, limit=3), orm.filter(seq__lt=newest - 1)[:3]),
        (dict(after=2, upto=newest - 1), orm.filter(seq__gte=2, seq__lte=newest - 1)),
        (dict(seqs=[1, newest]), orm.filter(seq__in=[1, newest])),
        (dict(seqs=[]), orm.none()),
    ]
    for kwargs, expected in cases:
        assert [e.seq for e in snap.log_entries(logged.pk, **kwargs)] == [e.seq for e in expected], kwargs
    assert snap.log_entries(logged.pk + 1000) == []


def test_member_battle_scopes_to_the_club_and_carries_the_role(battle):
    from django.contrib.auth import get_user_model

    from apps.campaigns.models import Membership

    membership = Membership.objects.filter(club_id=battle.club_id).first()
    Membership.objects.filter(pk=membership.pk).end_watches()
    membership.refresh_from_db()
    outsider = get_user_model().objects.create_user("outsider")
    with CaptureQueriesContext(connection) as queries:
        read = snap.member_battle(membership.user_id, battle.pk)
        read.campaign, read.scenario
    assert len(queries.captured_queries) == 1
    assert fields(read) == fields(Battle.objects.get(pk=battle.pk))
    assert read.viewer_role == membership.role
    assert read.viewer_watch == (membership.pk, membership.watch_epoch)
    assert read.campaign == battle.campaign and read.scenario == battle.scenario
    assert snap.member_battle(outsider.pk, battle.pk) is None
    assert snap.member_battle(membership.user_id, battle.pk + 1000) is None


def test_lock_battle_reads_the_double_tap_and_the_log_head(logged):
    newest = logged.log_entries.order_by("-seq").first()
    with transaction.atomic():
        locked = snap.lock_battle(logged.pk)
    assert fields(locked) == fields(Battle.objects.get(pk=logged.pk))
    assert locked.log_last == (newest.seq, newest.entry_hash) and locked.done_entry_id is None
    logged.log_entries.filter(pk=newest.pk).update(client_token="tap-1")
    with transaction.atomic():
        assert snap.lock_battle(logged.pk, "tap-1").done_entry_id == newest.pk
        assert snap.lock_battle(logged.pk, "tap-2").done_entry_id is None
    empty = Battle.objects.create(club_id=logged.club_id, name="Nothing logged yet")
    with transaction.atomic():
        assert snap.lock_battle(empty.pk).log_last is None
    with pytest.raises(Battle.DoesNotExist), transaction.atomic():
        snap.lock_battle(logged.pk + 1000)


def test_a_unit_leaving_a_structure_as_large_as_the_table_stands_at_its_rear_on_the_table():
    """No way out has the table beyond it: the rear, kept at the table's edge."""
    table = SimpleNamespace(table_width=Decimal(72), table_depth=Decimal(48))
    hall = SimpleNamespace(x=36, y=24, width=72, depth=48, rotation=0, facing=0, sheet_id=None)
    assert snap.outside(hall, "A", table) == (36, 0)
    assert snap.outside(hall, "B", table) == (36, 48)
    assert snap.outside(SimpleNamespace(**{**vars(hall), "sheet_id": 1, "facing": 90}), "B", table) == (0, 24)
