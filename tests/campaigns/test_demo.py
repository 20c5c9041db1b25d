"""`manage.py demo` and the copy functions it is built on."""

import io
import json
import math
import shutil

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import transaction
from django.test import override_settings

from apps.armies.models import Army, Unit, Weapon, WeaponType
from apps.battles.log import first_broken_entry
from apps.battles.models import Battle
from apps.campaigns import permissions
from apps.campaigns.copying import copy_armies, copy_battlefield, copy_ground
from apps.campaigns.models import Campaign, Club, Scenario
from apps.structures.models import BunkerSheet, FireChance, Material, Structure, WeatherEffect

PASSWORD = "redoubt-demo"
DEMO_USERS = ["demo", "alice", "bob", "dora"]
# The demo hashes five passwords per run; the real hasher would dominate the test time.
FAST_HASHING = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def run_demo():
    out = io.StringIO()
    call_command("demo", stdout=out)
    return out.getvalue()


@pytest.fixture(scope="module")
def demo_output(django_db_setup, django_db_blocker):
    """Built once for the module, in a transaction rolled back at its end. Each test still runs in
    its own savepoint (the `db` fixture), so what one test changes never reaches another."""
    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHING), transaction.atomic():
        yield run_demo()
        transaction.set_rollback(True)


@pytest.fixture
def demo(demo_output, db, settings):
    settings.PASSWORD_HASHERS = FAST_HASHING
    return demo_output


@pytest.fixture
def empty_db(db, settings):
    """No demo and no reference data, whether or not the module's demo is loaded underneath."""
    settings.PASSWORD_HASHERS = FAST_HASHING
    Club.objects.all().delete()
    get_user_model().objects.all().delete()
    for model in (Weapon, WeaponType, BunkerSheet, FireChance, WeatherEffect, Material):
        model.objects.all().delete()


@pytest.fixture
def battle(demo):
    return Battle.objects.get(name="Village crossroads — session 1")


def everything():
    """Every row of every Redoubt and auth model, for before/after comparisons."""
    models = [m for m in apps.get_models() if m._meta.app_label in {"auth", "campaigns", "structures", "armies", "battles"}]
    return {m._meta.label: list(m.objects.order_by("pk").values()) for m in models}


# Running it --------------------------------------------------------------------------------------

def test_second_run_changes_nothing_and_says_so(demo):
    before = everything()
    output = run_demo()
    assert everything() == before
    assert "Nothing changed" in output


def test_output_gives_the_address_and_the_sign_ins(demo):
    assert "http://127.0.0.1:8000" in demo
    assert PASSWORD in demo
    for username in DEMO_USERS + ["olga"]:
        assert f"  {username} " in demo


def test_every_demo_sign_in_works(demo, client):
    for username in DEMO_USERS + ["olga"]:
        assert client.login(username=username, password=PASSWORD), username
        client.logout()


def test_roles(demo):
    club = Club.objects.get(name="Redoubt Demo Club")
    assert dict(club.memberships.values_list("user__username", "role")) == {
        "demo": "organiser", "alice": "player", "bob": "player", "dora": "designer"}
    campaign = club.campaigns.get(name="Operation Crossroads")
    assert dict(campaign.armies.values_list("side", "owner__username")) == {"A": "alice", "B": "bob"}


@pytest.mark.parametrize("name, content", [
    ("weapons.json", '[{"model": "armies.weapon", "pk": 1,'),
    ("materials.json", json.dumps([{"model": "structures.material", "pk": 1, "fields": {
        "slug": "brick", "name": "Brick", "surface": "wall", "armor_class": 12}}])),
    ("fire.json", json.dumps([{"model": "structures.firechance", "fields": {"weapon_type": "Laser", "d10_max": 8}}])),
], ids=["not-json", "armour-class-12", "no-pk"])
def test_a_broken_fixture_stops_the_demo_with_one_line_and_writes_nothing(empty_db, settings, tmp_path, name, content):
    shutil.copytree(settings.BASE_DIR / "fixtures", tmp_path / "fixtures")
    (tmp_path / "fixtures" / name).write_text(content)
    settings.BASE_DIR = tmp_path
    with pytest.raises(CommandError) as error:
        run_demo()
    assert f"fixtures/{name}" in str(error.value) and "\n" not in str(error.value)
    assert not Club.objects.exists() and not Material.objects.exists() and not BunkerSheet.objects.exists()


def test_a_fixture_never_overwrites_a_clubs_own_row(empty_db, settings):
    club = Club.objects.create(name="Early club", slug="early")
    rows = json.loads((settings.BASE_DIR / "fixtures" / "bunker_sheets.json").read_text())
    BunkerSheet.objects.create(pk=rows[0]["pk"], club=club, slug="our-bunker", name="Our bunker")
    with pytest.raises(CommandError, match="refusing to overwrite"):
        run_demo()
    assert BunkerSheet.objects.get(pk=rows[0]["pk"]).name == "Our bunker"


def test_a_database_loaded_with_the_old_hyphenated_names_is_renamed_in_place(empty_db, settings):
    """Before the fixtures took the rules engine's keys, the same library rows were loaded under
    hyphenated slugs and printed words. They are the same rows: renamed, not refused."""
    fixtures = settings.BASE_DIR / "fixtures"
    call_command("loaddata", *[str(fixtures / name) for name in ("materials.json", "fire.json", "weapon_types.json")],
                 verbosity=0)
    wall = Material.objects.get(slug="concrete_reinforced", surface="wall")
    roof = Material.objects.get(slug="concrete_reinforced_any_surface", surface="roof")
    Material.objects.filter(pk__in=[wall.pk, roof.pk]).update(slug="concrete-reinforced")
    Material.objects.filter(slug="stone_masonry_light").update(slug="stone-masonry-light")
    FireChance.objects.filter(weapon_type="conversion_beam").update(weapon_type="Conversion beam")
    WeaponType.objects.filter(slug="anti_matter").update(slug="anti-matter")

    run_demo()
    assert Material.objects.get(pk=wall.pk).slug == "concrete_reinforced"
    assert Material.objects.get(pk=roof.pk).slug == "concrete_reinforced_any_surface"
    assert Material.objects.filter(slug="stone_masonry_light").exists()
    assert FireChance.objects.filter(weapon_type="conversion_beam").exists()
    assert WeaponType.objects.get(slug="anti_matter").attack_factor is None
    assert not Material.objects.filter(slug__contains="-").exists()


def test_an_unrelated_name_at_a_library_pk_is_still_refused(empty_db, settings):
    rows = json.loads((settings.BASE_DIR / "fixtures" / "materials.json").read_text())
    Material.objects.create(pk=rows[0]["pk"], slug="home-made-brick", name="Home-made brick", surface="wall",
                            armor_class=5)
    with pytest.raises(CommandError, match="refusing to overwrite"):
        run_demo()
    assert Material.objects.get(pk=rows[0]["pk"]).slug == "home-made-brick"


# What it builds ----------------------------------------------------------------------------------

def test_the_village(demo):
    scenario = Scenario.objects.get(name="Village crossroads")
    assert (scenario.table_width, scenario.table_depth) == (72, 48)
    village = {s.name: s for s in scenario.structures.with_layout()}

    houses = [s for s in village.values() if s.kind == "building"]
    walls = {s.wall_material.construction for s in houses}
    assert {"brick", "wooden", "stone"} <= walls
    assert {len(s.floors.all()) for s in houses if s.wall_material.construction in {"brick", "wooden"}} >= {1, 2, 3}
    flat_roofed = [s for s in houses if any(f.is_roof for f in s.floors.all())]
    assert flat_roofed and all(max(s.floors.all(), key=lambda f: f.level).is_roof for s in flat_roofed)
    assert all(f.openings.all() for s in houses for f in s.floors.all() if not f.is_roof)

    church, tower = village["Stone church"], village["Church tower"]
    assert church.wall_material.construction == tower.wall_material.construction == "stone"
    assert tower in church.connections.all() and len(tower.floors.all()) >= 3

    barn = village["Thatched barn"]
    assert barn.roof_material.slug == "thatch" and barn.flammable

    # Bolt Action bunkers take their kind and shape from a sheet, but units hold them, not its crew
    # (seed 001 'Bunkers'): the anti-tank gun set up in the loghouse, a German section in the blockhouse.
    for name, slug, kind, side, unit, unit_kind in (
            ("Soviet AT/HMG Loghouse", "soviet-at-hmg-loghouse", "bunker", "A", "Anti-tank gun team", "artillery"),
            ("German Concrete Blockhouse", "german-concrete-blockhouse", "fort", "B", "Blockhouse section",
             "infantry")):
        fort = village[name]
        assert fort.sheet.slug == slug and fort.sheet.club is None and fort.kind == kind
        assert (fort.crew_side, fort.crew_men, fort.crewed) == ("", 0, False)
        (held,) = [f.occupant for f in fort.floors.all()]
        assert (held.name, held.kind, held.army.side) == (unit, unit_kind, side)

    assert {"foxhole", "trench"} <= {s.kind for s in village.values()}
    assert all(s.damage_max > 0 for s in village.values())


def test_only_the_disposable_heroes_demo_has_a_sheet_crew(demo):
    """The village's bunkers have no crew in the campaign or its battle either, and the rules state
    says so; the shell on the loghouse pins the gun team inside. The farm's rifle pit (Disposable
    Heroes) keeps its crew."""
    from apps.battles import snapshot

    for owner in (Campaign.objects.get(name="Operation Crossroads"), Battle.objects.get(name__startswith="Village")):
        forts = owner.structures.filter(sheet__isnull=False)
        assert forts.count() == 2 and not forts.exclude(crew_side="", crew_men=0).exists()
    battle = Battle.objects.get(name__startswith="Village")
    state = snapshot.load(battle).state
    assert [s.crew for s in state.structures.values() if s.sheet is not None] == [None, None]
    shell = battle.log_entries.filter(action="ba_he").order_by("seq").last()
    assert shell.summary.endswith("Anti-tank gun team +1 pin, no damage inside a bunker")

    farm = Battle.objects.get(name__startswith="Farm by the ford")
    (pit,) = [s for s in snapshot.load(farm).state.structures.values() if s.sheet is not None]
    assert (pit.crew.side, pit.crew.men) == ("A", pit.sheet.crew_total)


def test_both_armies_have_units_in_buildings_and_in_the_open(demo):
    scenario = Scenario.objects.get(name="Village crossroads")
    armies = {a.side: a for a in scenario.armies.select_related("owner")}
    assert set(armies) == {"A", "B"}
    for army in armies.values():
        units = list(army.units.prefetch_related("unit_weapons__weapon"))
        assert any(u.floor_id for u in units) and any(u.x is not None for u in units)
        assert all(u.unit_weapons.all() for u in units)
        assert all(uw.weapon.ruleset == scenario.ruleset for u in units for uw in u.unit_weapons.all())
    units = Unit.objects.filter(army__scenario=scenario)
    assert {"infantry", "artillery", "vehicle"} <= set(units.values_list("kind", flat=True))
    assert units.filter(tank_class="heavy").exists()
    assert units.filter(unit_weapons__weapon__flamethrower=True).exists()


def corners(structure, about, clockwise):
    x, y, w, d = (float(v) for v in (structure.x, structure.y, structure.width, structure.depth))
    angle = math.radians(float(structure.rotation)) * (1 if clockwise else -1)
    cx, cy = (x + w / 2, y + d / 2) if about == "centre" else (x, y)
    cos, sin = math.cos(angle), math.sin(angle)
    return [(cx + (px - cx) * cos - (py - cy) * sin, cy + (px - cx) * sin + (py - cy) * cos)
            for px, py in ((x, y), (x + w, y), (x + w, y + d), (x, y + d))]


def overlap(a, b):
    """Do two convex polygons share any area? (Separating axis test; touching edges don't count.)"""
    for polygon in (a, b):
        for (x1, y1), (x2, y2) in zip(polygon, polygon[1:] + polygon[:1]):
            axis = (y1 - y2, x2 - x1)
            pa = [axis[0] * x + axis[1] * y for x, y in a]
            pb = [axis[0] * x + axis[1] * y for x, y in b]
            if max(pa) <= min(pb) + 1e-9 or max(pb) <= min(pa) + 1e-9:
                return False
    return True


def inside(point, polygon):
    return overlap(polygon, [(point[0] + dx, point[1] + dy) for dx, dy in ((0, 0), (0.01, 0), (0.01, 0.01), (0, 0.01))])


@pytest.mark.parametrize("about", ["corner", "centre"])
@pytest.mark.parametrize("clockwise", [True, False])
def test_footprints_stay_apart_and_on_the_table(demo, about, clockwise):
    # The map may rotate a footprint about its corner or its centre; the layout holds either way.
    for scenario in Scenario.objects.all():
        shapes = {s.name: corners(s, about, clockwise) for s in scenario.structures.all()}
        assert any(float(s.rotation) % 90 for s in scenario.structures.all())
        for name, shape in shapes.items():
            assert all(0 <= x <= float(scenario.table_width) and 0 <= y <= float(scenario.table_depth)
                       for x, y in shape), name
        names = sorted(shapes)
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                assert not overlap(shapes[a], shapes[b]), (a, b)
        for unit in Unit.objects.filter(army__scenario=scenario, x__isnull=False):
            point = (float(unit.x), float(unit.y))
            assert not any(inside(point, shape) for shape in shapes.values()), unit.name


def test_battle_is_in_progress_with_its_first_turn_logged(battle):
    assert battle.status == "in_progress" and battle.turn == 2 and battle.version > 1
    entries = list(battle.log_entries.order_by("seq"))
    assert len(entries) >= 4 and first_broken_entry(battle) is None
    # Set up as start_session sets a session up: what it started from is its first entry.
    assert [e.action for e in entries] == ["session_start", "start", "ba_he", "ba_damage", "ba_flamethrower",
                                           "ba_damage", "ba_he", "end_turn", "upkeep"]
    assert all(die["faces"] and die["source"] == "player" for e in entries for die in e.dice)
    assert entries[0].outcome["campaign_at_setup"]["structures"]


def test_the_logged_results_show_on_the_battle_ground(battle):
    ground = {s.name: s for s in battle.structures.all()}
    barn = ground["Thatched barn"]
    assert barn.burning and barn.impassable and barn.fire_started_turn == 1
    grenadiers = Unit.objects.get(army__battle=battle, name="Grenadier Squad 1")
    assert (grenadiers.models_left, grenadiers.pins) == (7, 1)
    # Whoever was in the burning barn got out.
    assert not barn.floors.filter(occupant__isnull=False).exists()
    # Undo data names rows of this battle only.
    structure_ids = {f"s{s.pk}" for s in ground.values()}
    unit_ids = {f"u{pk}" for pk in Unit.objects.filter(army__battle=battle).values_list("pk", flat=True)}
    for entry in battle.log_entries.all():
        assert set(entry.undo.get("structures", {})) <= structure_ids
        assert set(entry.undo.get("units", {})) <= unit_ids


def test_the_mortar_team_can_shell_a_building_by_indirect_fire(battle):
    """Every action the demo offers can be played with the weapons it hands out: the Mortar team's
    indirect HE lands on the Stone church and rolls its hits (a weapon with no HE value could not)."""
    from apps.battles import services

    mortar = Unit.objects.get(army__battle=battle, name="Mortar team")
    [weapon] = mortar.unit_weapons.all()
    church = Structure.objects.get(battle=battle, name="Stone church")
    bob = get_user_model().objects.get(username="bob")  # side B's
    entry = services.perform(
        battle_id=battle.pk, user=bob, action="ba_indirect", attacker=f"u{mortar.pk}",
        inputs={"weapon": f"w{weapon.weapon_id}", "mode": "indirect", "structure": f"s{church.pk}", "floor": "0", "hit": "yes"},
        dice_values=["3", "4"])
    assert entry.action == "ba_indirect" and weapon.weapon.he_value == "2D6"
    assert [d["faces"] for d in entry.dice] == [[3, 4]] and "7 hits" in entry.summary, entry.summary
    # Its form asks for the to-hit roll in its own words, not those of HE over open sights.
    from apps import rules
    hit = next(f for f in rules.ACTIONS["ba_indirect"].fields if f.name == "hit")
    assert "open sights" not in hit.help and "indirect" in hit.help


def test_the_relay_station_is_a_laser_grenadiers_campaign_started_as_an_organiser_starts_one(demo):
    """The demo's third battle: LaserGrenadiers, the seeds' main rules, ready for the first initiative roll,
    with a pillbox the raiders fight from, a bunker they cannot (seed 000) and a flammable barracks."""
    campaign = Campaign.objects.get(name="Relay Station")
    assert campaign.club.name == "Redoubt Demo Club" and campaign.ruleset == "lg"
    assert (campaign.damage_variant, campaign.collapse_check, campaign.fires) == (1, True, True)
    battle = campaign.battles.get()
    assert (battle.status, battle.turn, battle.session_number, battle.upkeep_turn) == ("in_progress", 1, 1, 0)
    assert [e.action for e in battle.log_entries.order_by("seq")] == ["session_start", "start"]
    assert first_broken_entry(battle) is None
    kinds = {s.name: s.kind for s in battle.structures.all()}
    assert kinds == {"Relay station": "building", "North pillbox": "pillbox", "Supply bunker": "bunker",
                     "Timber barracks": "building"}
    assert battle.structures.get(name="Timber barracks").flammable
    armies = {a.side: a for a in battle.armies.select_related("owner")}
    assert (armies["A"].owner.username, armies["B"].owner.username) == ("alice", "bob")
    units = Unit.objects.filter(army__battle=battle).prefetch_related("unit_weapons__weapon")
    assert all(uw.weapon.ruleset == "lg" for u in units for uw in u.unit_weapons.all())
    inside = {u.name: u.floor.structure.name for u in units if u.floor_id}
    assert inside["Pillbox gunner"] == "North pillbox" and inside["Quartermaster"] == "Supply bunker"
    assert all(u.army.side == "B" for u in units if u.floor_id)
    assert all(u.x is not None for u in units if u.army.side == "A")


def test_the_relay_station_plays_its_first_activation(demo):
    """Upkeep, the initiative roll (lowest wins) and the marines' laser cannon on the pillbox, through the
    services the phones call, with the players' own dice."""
    from apps.battles import services

    battle = Battle.objects.get(name="Relay Station — session 1")
    users = {name: get_user_model().objects.get(username=name) for name in ("alice", "bob")}
    unit = {u.name: f"u{u.pk}" for u in Unit.objects.filter(army__battle=battle)}
    pillbox = Structure.objects.get(battle=battle, name="North pillbox")
    services.turn_action(battle_id=battle.pk, user=users["alice"], action="upkeep", dice_values=[])
    initiative = services.turn_action(battle_id=battle.pk, user=users["bob"], action="lg_initiative",
                                      dice_values=["2", "8"])
    assert [e.summary for e in initiative] == ["Initiative 2/8: side A wins"]
    cannon = Unit.objects.get(army__battle=battle, name="Laser cannon team")
    [carried] = cannon.unit_weapons.all()
    entry = services.perform(
        battle_id=battle.pk, user=users["alice"], action="lg_attack_structure", attacker=unit["Laser cannon team"],
        inputs={"weapon": f"w{carried.weapon_id}", "structure": f"s{pillbox.pk}", "hit": "yes", "penetrated": 1,
                "troops": "known", "targets": unit["Pillbox gunner"]},
        dice_values=["3"])
    assert entry.summary == ("Laser cannon team: Light laser cannon (AF 7) hit North pillbox's wall, 1 penetrating; "
                             "1 damage (1/30); hits Pillbox gunner; side B has the initiative"), entry.summary
    pillbox.refresh_from_db()
    assert pillbox.damage_taken == 1
    assert Battle.objects.get(pk=battle.pk).sequence["initiative"] == "B"


def test_scenario_and_campaign_ground_stay_untouched(battle):
    for owner in (battle.scenario, battle.campaign):
        for structure in owner.structures.all():
            assert (structure.damage_taken, structure.fire_size, structure.crew_pins, structure.impassable) == (
                0, None, 0, False), structure.name
        assert all(u.models_left == u.models_start and u.pins == 0
                   for u in Unit.objects.filter(**{f"army__{owner._meta.model_name}": owner}))


def test_battle_copies_the_campaign_which_copies_the_scenario(battle):
    assert battle.structures.count() == battle.campaign.structures.count() == battle.scenario.structures.count()
    assert not battle.scenario.structures.filter(origin__isnull=False).exists()
    for structure in battle.structures.select_related("origin__origin"):
        assert structure.origin.campaign_id == battle.campaign_id
        assert structure.origin.origin.scenario_id == battle.scenario_id
    for army in battle.armies.select_related("origin__origin"):
        assert army.origin.campaign_id == battle.campaign_id and army.origin.origin.scenario_id == battle.scenario_id
    for unit in Unit.objects.filter(army__battle=battle).select_related("origin__army"):
        assert unit.origin.army.campaign_id == battle.campaign_id


def layout(structure):
    return sorted(
        (f.level, f.is_roof, sorted((o.side, o.kind, o.count) for o in f.openings.all())) for f in structure.floors.all()
    )


def test_copies_keep_floors_openings_connections_positions_and_weapons(battle):
    for copy in battle.structures.with_layout().select_related("origin"):
        source = Structure.objects.with_layout().get(pk=copy.origin_id)
        assert layout(copy) == layout(source)
        assert {c.origin_id for c in copy.connections.all()} == {c.pk for c in source.connections.all()}
        assert (copy.x, copy.y, copy.rotation, copy.sheet_id, copy.crew_men) == (
            source.x, source.y, source.rotation, source.sheet_id, source.crew_men)

    for unit in Unit.objects.filter(army__campaign=battle.campaign).select_related("floor__structure", "origin__floor"):
        source = unit.origin
        if source.floor_id is None:
            assert unit.floor_id is None and (unit.x, unit.y) == (source.x, source.y)
        else:
            assert unit.floor.structure.origin_id == source.floor.structure_id
            assert unit.floor.level == source.floor.level
        assert sorted(unit.unit_weapons.values_list("weapon_id", "count")) == sorted(
            source.unit_weapons.values_list("weapon_id", "count"))


def test_the_second_club_is_separate(demo):
    olga = get_user_model().objects.get(username="olga")
    theirs = Club.objects.get(name="Olga's Wargames Society")
    ours = Club.objects.get(name="Redoubt Demo Club")
    assert list(permissions.clubs_for(olga)) == [theirs]
    for username in DEMO_USERS:
        assert theirs not in permissions.clubs_for(get_user_model().objects.get(username=username))

    assert Campaign.objects.filter(club=theirs).count() == 1
    battle = Battle.objects.get(club=theirs)
    assert battle.campaign.club == theirs and battle.scenario.club == theirs
    assert battle.structures.exists() and battle.armies.exists()
    for structure in battle.structures.select_related("origin__origin"):
        assert structure.origin.campaign.club == theirs and structure.origin.origin.scenario.club == theirs
    assert not permissions.structures_for(olga).filter(
        pk__in=Structure.objects.filter(battle__club=ours).values("pk")).exists()
    assert set(permissions.structures_for(olga)) == set(
        Structure.objects.filter(battle__club=theirs) | Structure.objects.filter(campaign__club=theirs)
        | Structure.objects.filter(scenario__club=theirs))


# The copy functions ------------------------------------------------------------------------------

def test_a_copy_needs_exactly_one_owner(battle):
    structures = battle.scenario.structures.all()
    with pytest.raises(ValueError):
        copy_ground(structures)
    with pytest.raises(ValueError):
        copy_ground(structures, campaign=battle.campaign, battle=battle)
    with pytest.raises(TypeError):
        copy_ground(structures, club=battle.club)


def test_a_unit_is_never_copied_off_its_floor_silently(battle):
    target = Campaign.objects.create(club=battle.club, name="Second front")
    with pytest.raises(ValueError, match="not part of the ground"):
        copy_armies(battle.scenario.armies.all(), campaign=target)
    assert not Army.objects.filter(campaign=target).exists()


def test_copying_from_a_battle_starts_the_next_session(battle):
    nxt = Battle.objects.create(club=battle.club, campaign=battle.campaign, scenario=battle.scenario,
                                name="Village crossroads — session 2", session_number=2)
    copied = copy_battlefield(battle, battle=nxt)
    assert len(copied.structures) == battle.structures.count() and len(copied.units) == Unit.objects.filter(
        army__battle=battle).count()
    barn = nxt.structures.get(name="Thatched barn")
    assert barn.burning and barn.origin.battle == battle


def test_with_debug_off_the_demo_accounts_do_not_get_the_public_password(empty_db, settings, client):
    """The demo is also how a production server gets its reference data (materials, weapons, library
    sheets). There the README's public password would let anyone in as the demo's organisers: each
    account gets a random password instead, shown once in the command's output."""
    settings.DEMO_PUBLIC_PASSWORD = False
    out = run_demo()
    assert PASSWORD not in out
    for username in [*DEMO_USERS, "olga"]:
        assert not client.login(username=username, password=PASSWORD), username
        line = next(line for line in out.splitlines() if line.split()[:1] == [username])
        assert client.login(username=username, password=line.split()[1]), username
        client.logout()
    # A second run creates no accounts, so it shows no passwords (nor a password that was never set).
    assert "passwords" not in run_demo().lower()


def test_production_settings_keep_the_demo_password_private():
    import subprocess
    import sys

    from tests.test_settings import PRODUCTION, ROOT, fresh_env

    code = ("import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); django.setup(); "
            "from django.conf import settings; print(settings.DEMO_PUBLIC_PASSWORD)")
    production = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=fresh_env(**PRODUCTION),
                                capture_output=True, text=True, timeout=60)
    development = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=fresh_env(), capture_output=True,
                                 text=True, timeout=60)
    assert (production.stdout.strip(), development.stdout.strip()) == ("False", "True"), production.stderr
