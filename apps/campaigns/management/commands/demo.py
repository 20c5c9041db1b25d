"""`python manage.py demo`: load the reference data transcribed from the seeds, and a demo so the
app is alive on first run.

Safe to run again. The reference fixtures are applied every time (they are the seeds' tables, so a
library row edited by hand is put back), and each demo club is built only when it is missing —
all inside one transaction, so an interrupted run leaves nothing half-built.
"""

import json
import re
import secrets
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError, OperationalError, transaction

from apps.armies.models import Army, Unit, UnitWeapon, Weapon, WeaponType
from apps.battles.models import Battle, BattleStatus
from apps.campaigns.copying import copy_battlefield
from apps.campaigns.models import Campaign, Club, Membership, Role, Scenario
from apps.campaigns.services import record_setup
from apps.structures.models import (NO_CREW, BunkerSheet, FireChance, Floor, Material, Opening, Structure,
                                    WeatherEffect, has_crews)

FIXTURES = ["materials.json", "fire.json", "weapon_types.json", "bunker_sheets.json", "weapons.json"]
REFERENCE_MODELS = [Material, FireChance, WeatherEffect, WeaponType, BunkerSheet, Weapon]
# What a fixture row is, whatever its pk: loading must never overwrite a club's own row that
# happens to hold a pk the fixture uses.
IDENTITY = {
    "structures.material": ("slug", "surface"),
    "structures.firechance": ("weapon_type",),
    "structures.weathereffect": ("condition",),
    "structures.bunkersheet": ("club", "slug"),
    "armies.weapontype": ("slug",),
    "armies.weapon": ("ruleset", "slug"),
}
# Library rows whose names were aligned with apps.rules.tables (hyphens and words became the rules'
# underscore keys, e.g. "concrete-reinforced" -> "concrete_reinforced", "Conversion beam" ->
# "conversion_beam"). A database loaded before that holds the old name at the same pk: it is the
# same row, renamed in place, not a club's row to protect. These models have no club rows.
RENAMED_MODELS = {"structures.material", "structures.firechance", "armies.weapontype"}
RENAMED = {("structures.material", ("concrete-reinforced", "roof")): ("concrete_reinforced_any_surface", "roof")}


def legacy_name(value):
    return re.sub(r"[\s-]+", "_", value.strip().lower()) if isinstance(value, str) else value


def same_row(label, existing, wanted):
    if existing == wanted or RENAMED.get((label, existing)) == wanted:
        return True
    return label in RENAMED_MODELS and tuple(map(legacy_name, existing)) == wanted


PASSWORD = "redoubt-demo"
URL = "http://127.0.0.1:8000"
DEMO_CLUB = ("redoubt-demo-club", "Redoubt Demo Club")
OLGA_CLUB = ("olgas-wargames-society", "Olga's Wargames Society")
SIGN_INS = [
    ("demo", "organiser of Redoubt Demo Club"),
    ("alice", "player, side A (Soviet) in Operation Crossroads, marines in Relay Station"),
    ("bob", "player, side B (German) in Operation Crossroads, raiders in Relay Station"),
    ("dora", "designer in Redoubt Demo Club"),
    ("olga", "organiser of Olga's Wargames Society, a separate club"),
]
RULES_FIELDS = ["ruleset", "damage_variant", "collapse_check", "fires", "uncontrolled_events",
                "fireteam_initiative", "weather", "options"]

# Floors are listed from the ground up: {side: {opening kind: count}}; "roof" marks an accessible
# flat roof (the top floor). Footprints are (x, y, width, depth, rotation) in inches and degrees;
# they are spaced so that they stay apart whether a map rotates about the corner or the centre.
# Sheet facings: 0 = the front looks at the top table edge (side A's), 180 = at side B's.
VILLAGE = [
    dict(name="Brick house at the crossroads", wall="brick", roof="wood_and_tile", at=(24, 16, 6, 6, 0),
         damage_max=24, floors=[
             {"front": {"door": 1, "window": 2}, "left": {"window": 1}, "right": {"window": 1}, "rear": {"door": 1}},
             {"front": {"window": 2}, "left": {"window": 1}, "right": {"window": 1}, "rear": {"window": 2}},
         ]),
    dict(name="Timber cottage", wall="timber_medium", roof="wood_and_shingle", at=(42, 15, 5, 4, 350),
         damage_max=16, floors=[
             {"front": {"door": 1, "window": 1}, "left": {"window": 1}, "rear": {"window": 1}},
         ]),
    dict(name="Brick townhouse", wall="brick", roof="concrete_reinforced_any_surface", at=(24, 27, 6, 6, 0),
         damage_max=30, floors=[
             {"front": {"door": 1, "window": 2}, "right": {"window": 1}, "rear": {"door": 1, "window": 1}},
             {"front": {"window": 2}, "left": {"window": 1}, "right": {"window": 1}, "rear": {"window": 2}},
             "roof",
         ]),
    dict(name="Timber workshop", wall="timber_heavy", roof="wood_and_shingle", at=(42, 27, 6, 5, 10),
         damage_max=20, floors=[
             {"front": {"door": 2}, "left": {"window": 2}, "rear": {"door": 1}},
             {"front": {"window": 2}, "right": {"window": 1}},
         ]),
    dict(name="Stone church", wall="stone_masonry_medium", roof="wood_and_tile", at=(54, 16, 8, 6, 0),
         damage_max=36, floors=[
             {"front": {"door": 1}, "left": {"window": 3}, "right": {"window": 3}},
         ]),
    dict(name="Church tower", wall="stone_masonry_heavy", roof="wood_and_tile", at=(62, 17.5, 3, 3, 0),
         damage_max=30, floors=[
             {"rear": {"door": 1}},
             {"front": {"window": 1}},
             {"left": {"window": 1}, "right": {"window": 1}},
             {"front": {"window": 1}, "left": {"window": 1}, "right": {"window": 1}, "rear": {"window": 1}},
         ]),
    dict(name="Thatched barn", wall="timber_light", roof="thatch", at=(8, 18, 8, 5, 20),
         damage_max=16, floors=[
             {"front": {"door": 1}, "left": {"window": 1}, "right": {"window": 1}, "rear": {"door": 1}},
         ]),
    # Bolt Action bunkers take their kind and shape from a sheet but no crew: units hold them (seed 001
    # 'Bunkers'), the anti-tank gun set up in the loghouse, a German section in the blockhouse.
    dict(name="Soviet AT/HMG Loghouse", sheet="soviet-at-hmg-loghouse", wall="logs", roof=None,
         at=(31, 4, 5, 4, 0), facing=180, damage_max=40, floors=[
             {"front": {"firing_slit": 2}, "rear": {"door": 1}},
         ]),
    dict(name="German Concrete Blockhouse", sheet="german-concrete-blockhouse", wall="concrete_reinforced",
         roof="concrete_reinforced_any_surface", at=(33, 40, 6, 4, 0), facing=0, damage_max=80, floors=[
             {"front": {"firing_slit": 2}, "rear": {"door": 1}},
         ]),
    dict(name="Foxhole west", kind="foxhole", wall="sandbags", roof=None, at=(12, 9, 2, 2, 0), damage_max=6,
         floors=[{}]),
    dict(name="Foxhole centre", kind="foxhole", wall="sandbags", roof=None, at=(18, 9.5, 2, 2, 15), damage_max=6,
         floors=[{}]),
    dict(name="Foxhole east", kind="foxhole", wall="sandbags", roof=None, at=(24, 9, 2, 2, 0), damage_max=6,
         floors=[{}]),
    dict(name="Communication trench", kind="trench", wall="earthen_embankment", roof=None, at=(40, 8, 12, 1.5, 5),
         damage_max=10, floors=[{}]),
]
VILLAGE_CONNECTIONS = [("Stone church", "Church tower")]

# (name, kind, experience, models, {weapon slug: count}, where, tank class); where is
# (structure name, floor level) or (x, y) on the table.
SOVIETS = [
    ("1st Rifle Squad", "infantry", "regular", 10, {"rifles": 6, "submachine-guns": 3, "light-machine-gun": 1},
     ("Thatched barn", 0), ""),
    ("2nd Rifle Squad", "infantry", "regular", 10, {"rifles": 7, "submachine-guns": 2, "light-machine-gun": 1},
     ("Timber cottage", 0), ""),
    ("Sniper team", "infantry", "veteran", 2, {"rifles": 2}, ("Foxhole centre", 0), ""),
    ("Field gun team", "artillery", "regular", 4, {"he-2d6": 1}, (20, 5), ""),
    # Artillery in a building is placed there at deployment and stays (seed 001 'Artillery in buildings').
    ("Anti-tank gun team", "artillery", "regular", 3, {"anti-tank-gun": 1}, ("Soviet AT/HMG Loghouse", 0), ""),
]
GERMANS = [
    ("Grenadier Squad 1", "infantry", "regular", 10, {"rifles": 7, "submachine-guns": 1, "light-machine-gun": 2},
     ("Brick house at the crossroads", 1), ""),
    ("Grenadier Squad 2", "infantry", "regular", 10, {"rifles": 8, "submachine-guns": 1, "light-machine-gun": 1},
     ("Brick townhouse", 0), ""),
    ("MG team", "infantry", "veteran", 3, {"light-machine-gun": 1, "rifles": 2}, ("Brick townhouse", 2), ""),
    ("Sniper team", "infantry", "veteran", 2, {"rifles": 2}, ("Church tower", 3), ""),
    ("Pioneer flamethrower team", "infantry", "regular", 2, {"flamethrower": 1}, (18, 28), ""),
    ("Mortar team", "infantry", "regular", 3, {"indirect-he-2d6": 1}, (26, 45), ""),
    ("Tiger I", "vehicle", "veteran", 1, {"he-2d6": 1, "light-machine-gun": 2}, (50, 40), "heavy"),
    ("Blockhouse section", "infantry", "regular", 5, {"rifles": 4, "light-machine-gun": 1},
     ("German Concrete Blockhouse", 0), ""),
]

FARM = [
    dict(name="Stone farmhouse", wall="stone_masonry_light", roof="wood_and_tile", at=(20, 18, 6, 5, 12),
         damage_max=24, floors=[
             {"front": {"door": 1, "window": 2}, "rear": {"door": 1}, "left": {"window": 1}},
             {"front": {"window": 2}, "rear": {"window": 1}},
         ]),
    dict(name="Soviet Rifle Pit", sheet="soviet-rifle-pit", wall="earthen_embankment", roof=None,
         at=(30, 8, 4, 3, 0), facing=180, crew_side="A", damage_max=20, floors=[{"front": {"firing_slit": 3}, "rear": {"door": 1}}]),
]
OLGA_SOVIETS = [
    ("Guards Rifle Squad", "infantry", "veteran", 10, {"rifles": 7, "smg": 2, "lmg": 1}, ("Stone farmhouse", 0), ""),
]
OLGA_GERMANS = [
    ("Panzergrenadier Squad", "infantry", "regular", 10, {"rifles": 8, "lmg": 2}, (24, 40), ""),
    ("Pioneer Team", "infantry", "regular", 4, {"flamethrower": 1, "explosives": 1}, (34, 42), ""),
]


# LaserGrenadiers, in the demo club: a raider band holds a relay station; the marines must take it.
# Every LG unit is one piece (one figure): the seed's chances to hit troops inside are per piece.
RELAY = [
    dict(name="Relay station", wall="concrete", roof="concrete_reinforced_any_surface", at=(24, 22, 8, 6, 0),
         damage_max=40, floors=[
             {"front": {"door": 1, "window": 2}, "rear": {"door": 1}, "left": {"window": 1}, "right": {"window": 1}},
             {"front": {"window": 2}, "rear": {"window": 2}},
             "roof",
         ]),
    dict(name="North pillbox", kind="pillbox", wall="concrete_reinforced", roof="concrete_reinforced_any_surface",
         at=(14, 14, 3, 3, 0), damage_max=30, floors=[{"front": {"firing_slit": 2}, "rear": {"door": 1}}]),
    dict(name="Supply bunker", kind="bunker", wall="concrete_reinforced", roof="concrete_reinforced_any_surface",
         at=(36, 30, 4, 3, 0), damage_max=30, floors=[{"rear": {"door": 1}}]),
    dict(name="Timber barracks", wall="timber_medium", roof="wood_and_shingle", at=(10, 32, 7, 4, 8),
         damage_max=16, floors=[{"front": {"door": 1, "window": 3}, "rear": {"window": 2}}]),
]
MARINES = [
    ("Sergeant Okafor", "infantry", "veteran", 1, {"laser-rifle": 1}, (20, 6), ""),
    ("Marine Reyes", "infantry", "regular", 1, {"laser-rifle": 1}, (16, 5), ""),
    ("Marine Lindqvist", "infantry", "regular", 1, {"ray-rifle": 1}, (26, 5), ""),
    ("Gunner Haas", "infantry", "regular", 1, {"minigun-6-barrel": 1}, (30, 7), ""),
    ("Grenadier Moreau", "infantry", "regular", 1, {"laser-rifle": 1, "high-explosive-grenade": 2}, (12, 7), ""),
    ("Sapper Ito", "infantry", "regular", 1, {"chainsaw": 1, "laser-rifle": 1}, (34, 6), ""),
    ("Laser cannon team", "artillery", "regular", 2, {"light-laser-cannon": 1}, (40, 4), ""),
]
RAIDERS = [
    ("Raider chief", "infantry", "veteran", 1, {"heavy-fusion-rifle": 1}, ("Relay station", 0), ""),
    ("Raider Vask", "infantry", "regular", 1, {"bolt-rifle": 1}, ("Relay station", 1), ""),
    ("Raider Mirel", "infantry", "regular", 1, {"ray-rifle": 1}, ("Relay station", 2), ""),
    ("Pillbox gunner", "infantry", "regular", 1, {"bolt-rifle": 1}, ("North pillbox", 0), ""),
    ("Quartermaster", "infantry", "regular", 1, {"laser-rifle": 1}, ("Supply bunker", 0), ""),
    ("Raider Dace", "infantry", "regular", 1, {"laser-rifle": 1}, ("Timber barracks", 0), ""),
]


class Command(BaseCommand):
    help = "Load the reference data (seed tables, bunker sheets, weapon catalogue) and the demo clubs. Safe to run twice."

    def handle(self, *args, **options):
        self.verbosity = options["verbosity"]
        # The README's password is public: on a production server (DEBUG=0) anyone could sign in as
        # the demo's organisers with it. There each account the demo creates gets its own random one.
        self.public = getattr(settings, "DEMO_PUBLIC_PASSWORD", False)
        self.passwords = {}
        try:
            with transaction.atomic():
                reference_changed = self.load_reference_data()
                built = []
                demo_club = None
                if not Club.objects.filter(slug=DEMO_CLUB[0]).exists():
                    demo_club = self.build_demo_club()
                    built.append(DEMO_CLUB[1])
                if not Club.objects.filter(slug=OLGA_CLUB[0]).exists():
                    self.build_olga_club()
                    built.append(OLGA_CLUB[1])
                # After Olga's club, so the first two battles keep the ids they have always had.
                if demo_club is not None:
                    self.build_relay_station(demo_club)
        except OperationalError:
            raise  # config.startup explains an unreachable database in one line
        except DatabaseError as exc:
            # One line, not a traceback: the demo is the newcomer's first command.
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CommandError(f"the demo could not be written to the database: {first}") from exc

        if self.verbosity == 0:
            return
        if reference_changed:
            self.stdout.write(f"Reference data loaded from fixtures/ ({', '.join(FIXTURES)}).")
        if built:
            self.stdout.write(f"Demo created: {' and '.join(built)}.")
        if not reference_changed and not built:
            self.stdout.write("Nothing changed: the reference data and the demo are already loaded.")
        if self.public:
            self.stdout.write(f"\nOpen {URL} and sign in with password {PASSWORD!r}:")
            for username, role in SIGN_INS:
                self.stdout.write(f"  {username:<6} {role}")
        elif self.passwords:
            self.stdout.write("\nDEBUG is off, so the demo accounts did not get the public password. Their "
                              "passwords, shown only this once:")
            for username, role in SIGN_INS:
                if username in self.passwords:
                    self.stdout.write(f"  {username:<6} {self.passwords[username]}  {role}")

    # Reference data ---------------------------------------------------------------------------

    def load_reference_data(self):
        """Apply the fixtures; True when that changed any row."""
        before = self.snapshot()
        for name in FIXTURES:
            path = settings.BASE_DIR / "fixtures" / name
            self.check_fixture(path)
            try:
                call_command("loaddata", str(path), verbosity=0)
            except Exception as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise CommandError(f"fixtures/{name} could not be loaded: {first}") from exc
        return self.snapshot() != before

    def snapshot(self):
        return [list(model.objects.order_by("pk").values()) for model in REFERENCE_MODELS]

    def check_fixture(self, path):
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CommandError(f"fixtures/{path.name} is missing") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise CommandError(f"fixtures/{path.name} is not valid JSON: {exc}") from None
        if not isinstance(rows, list):
            raise CommandError(f"fixtures/{path.name} must hold a JSON list of rows")
        models = {f"{m._meta.app_label}.{m._meta.model_name}": m for m in REFERENCE_MODELS}
        for row in rows:
            label = str(row.get("model", "")).lower() if isinstance(row, dict) else ""
            if label not in models or "pk" not in row or not isinstance(row.get("fields"), dict):
                raise CommandError(f"fixtures/{path.name}: every row needs a known model, a pk and fields ({row!r:.80})")
            keys = IDENTITY[label]
            existing = models[label].objects.filter(pk=row["pk"]).values(
                *[f"{k}_id" if k == "club" else k for k in keys]
            ).first()
            wanted = tuple(row["fields"].get(k) for k in keys)
            if existing is not None and not same_row(label, tuple(existing.values()), wanted):
                raise CommandError(
                    f"fixtures/{path.name}: {label} pk {row['pk']} already holds {tuple(existing.values())}, "
                    f"not {wanted}; refusing to overwrite it"
                )

    # Demo -------------------------------------------------------------------------------------

    def user(self, username):
        user, created = get_user_model().objects.get_or_create(
            username=username, defaults={"first_name": username.capitalize()}
        )
        if created:
            password = PASSWORD if self.public else secrets.token_urlsafe(12)
            if not self.public:
                self.passwords[username] = password
            user.set_password(password)
            user.save(update_fields=["password"])
        elif self.verbosity:
            self.stdout.write(f"User {username} already existed; its password was left as it was.")
        return user

    def build_demo_club(self):
        demo, alice, bob, dora = (self.user(name) for name in ("demo", "alice", "bob", "dora"))
        club = Club.objects.create(slug=DEMO_CLUB[0], name=DEMO_CLUB[1])
        for user, role in ((demo, Role.ORGANISER), (alice, Role.PLAYER), (bob, Role.PLAYER), (dora, Role.DESIGNER)):
            Membership.objects.create(club=club, user=user, role=role)

        rules = dict(ruleset="ba", damage_variant=0, fires=True, weather="clear")
        scenario = build_scenario(
            club, name="Village crossroads", author=dora, table=(72, 48), rules=rules, zones=(12, 12),
            description=(
                "A crossroads village between two lines. The Soviets hold the north edge behind a log "
                "bunker and a foxhole line; the Germans hold the south around a concrete blockhouse. "
                "Whoever holds the brick house at the crossroads at the end holds the road."
            ),
            ground=VILLAGE, connections=VILLAGE_CONNECTIONS,
            armies={"A": ("Red Army rifle company", alice, SOVIETS), "B": ("Grenadier company", bob, GERMANS)},
        )

        campaign = Campaign.objects.create(
            club=club, name="Operation Crossroads", deployment_zones=scenario.deployment_zones, **rules,
            table_width=scenario.table_width, table_depth=scenario.table_depth,
            description="Three sessions to take the village. The ground and both companies carry their "
                        "damage, fires and losses from one session to the next.",
        )
        copy_battlefield(scenario, campaign=campaign)

        battle = Battle.objects.create(
            club=club, campaign=campaign, scenario=scenario, name="Village crossroads — session 1",
            session_number=1, turn=1, status=BattleStatus.SETUP,
            table_width=scenario.table_width, table_depth=scenario.table_depth,
            **{name: getattr(campaign, name) for name in RULES_FIELDS},
        )
        copy_battlefield(campaign, battle=battle)
        # As start_session records it: finished while another session is open, it writes back only its own.
        record_setup(battle, campaign, demo)
        play_first_turn(battle, organiser=demo, side_a=alice, side_b=bob)
        return club

    def build_relay_station(self, club):
        """A LaserGrenadiers campaign started as an organiser starts one, its first session under way at
        turn 1 with nothing done yet: the phones begin with the initiative roll (seed 002)."""
        from apps.battles import services
        from apps.campaigns.services import start_campaign

        demo, alice, bob, dora = (get_user_model().objects.get(username=name) for name in ("demo", "alice", "bob", "dora"))
        scenario = build_scenario(
            club, name="Relay station", author=dora, table=(48, 40), zones=(8, 28),
            rules=dict(ruleset="lg", damage_variant=1, collapse_check=True, fires=True, weather="clear"),
            description=(
                "LaserGrenadiers. A raider band holds a relay station, a pillbox covering the north road and "
                "a supply bunker; a marine section comes in from the north edge to take the station."
            ),
            ground=RELAY, armies={"A": ("Marine section", alice, MARINES), "B": ("Raider band", bob, RAIDERS)},
        )
        campaign = start_campaign(scenario_id=scenario.pk, user=demo, name="Relay Station")
        services.start(battle_id=campaign.battles.get().pk, user=demo)

    def build_olga_club(self):
        olga = self.user("olga")
        club = Club.objects.create(slug=OLGA_CLUB[0], name=OLGA_CLUB[1])
        Membership.objects.create(club=club, user=olga, role=Role.ORGANISER)
        rules = dict(ruleset="dh", weather="mist")
        scenario = build_scenario(
            club, name="Farm by the ford", author=olga, table=(48, 48), rules=rules, zones=(14, 12),
            description="A Guards squad holds a farmhouse and a rifle pit covering the ford.",
            ground=FARM, armies={"A": ("Guards rifle platoon", olga, OLGA_SOVIETS),
                                 "B": ("Panzergrenadier platoon", None, OLGA_GERMANS)},
        )
        campaign = Campaign.objects.create(club=club, name="Winter Line", description="A small DH campaign.",
                                           deployment_zones=scenario.deployment_zones, **rules,
                                           table_width=scenario.table_width, table_depth=scenario.table_depth)
        copy_battlefield(scenario, campaign=campaign)
        battle = Battle.objects.create(
            club=club, campaign=campaign, scenario=scenario, name="Farm by the ford — session 1",
            session_number=1, status=BattleStatus.SETUP,
            table_width=scenario.table_width, table_depth=scenario.table_depth,
            **{name: getattr(campaign, name) for name in RULES_FIELDS},
        )
        copy_battlefield(campaign, battle=battle)
        record_setup(battle, campaign, olga)


def material(slug, surface):
    try:
        return Material.objects.get(slug=slug, surface=surface)
    except Material.DoesNotExist:
        raise CommandError(f"material {slug!r} ({surface}) is not in fixtures/materials.json") from None


def build_scenario(club, *, name, author, table, rules, description, zones, ground, armies, connections=()):
    """A scenario on a `table` (width, depth) with its ground and both sides' forces ({side: (name, owner,
    units)}); `zones` are the depths of side A's deployment zone along the top edge and side B's along the
    bottom, each the table's width."""
    width, depth = table
    scenario = Scenario.objects.create(
        club=club, name=name, author=author, table_width=width, table_depth=depth, description=description,
        deployment_zones=[{"side": "A", "x": 0, "y": 0, "width": width, "depth": zones[0]},
                          {"side": "B", "x": 0, "y": depth - zones[1], "width": width, "depth": zones[1]}],
        **rules,
    )
    build_ground(scenario, ground, connections)
    for side, (army_name, owner, units) in armies.items():
        build_army(scenario, side, army_name, owner, units)
    return scenario


def build_ground(scenario, specs, connections):
    by_name = {}
    for spec in specs:
        x, y, width, depth, rotation = spec["at"]
        wall = material(spec["wall"], "wall")
        roof = material(spec["roof"], "roof") if spec["roof"] else None
        sheet = BunkerSheet.objects.get(club=None, slug=spec["sheet"]) if spec.get("sheet") else None
        structure = Structure.objects.create(
            scenario=scenario, name=spec["name"],
            kind=sheet.kind if sheet else spec.get("kind", "building"),
            wall_material=wall, roof_material=roof,
            flammable=wall.flammable or bool(roof and roof.flammable),
            x=Decimal(str(x)), y=Decimal(str(y)), width=Decimal(str(width)), depth=Decimal(str(depth)),
            rotation=Decimal(str(rotation)), damage_max=spec["damage_max"],
            sheet=sheet, facing=spec.get("facing", 0),
            **({"crew_men": sheet.crew_total, "crew_side": spec.get("crew_side", "")}
               if sheet and has_crews(scenario.ruleset) else dict(NO_CREW, weapons_destroyed=[])),
        )
        for level, floor_spec in enumerate(spec["floors"]):
            floor = Floor.objects.create(structure=structure, level=level, is_roof=floor_spec == "roof")
            if floor_spec == "roof":
                continue
            Opening.objects.bulk_create([
                Opening(floor=floor, side=side, kind=kind, count=count)
                for side, kinds in floor_spec.items() for kind, count in kinds.items()
            ])
        by_name[spec["name"]] = structure
    for a, b in connections:
        by_name[a].connections.add(by_name[b])
    return by_name


def build_army(scenario, side, name, owner, units):
    army = Army.objects.create(scenario=scenario, side=side, name=name, owner=owner)
    weapons = {w.slug: w for w in Weapon.objects.filter(ruleset=scenario.ruleset)}
    for unit_name, kind, experience, models, carried, where, tank_class in units:
        unit = Unit(army=army, name=unit_name, kind=kind, experience=experience, tank_class=tank_class,
                    models_start=models, models_left=models)
        if isinstance(where[0], str):
            unit.floor = Floor.objects.get(structure__scenario=scenario, structure__name=where[0], level=where[1])
        else:
            unit.x, unit.y = Decimal(str(where[0])), Decimal(str(where[1]))
        unit.save()
        UnitWeapon.objects.bulk_create([UnitWeapon(unit=unit, weapon=weapons[slug], count=n) for slug, n in carried.items()])
    return army


def play_first_turn(battle, *, organiser, side_a, side_b):
    """Turn 1 of session 1, played through the battle services exactly as players would at the table
    (their own dice entered), so the log, its hash chain and the undo data are the real thing: an HE
    hit on the crossroads house and its damage rolls, a flamethrower that burns the barn and drives
    the squad out, an HE shell on the log bunker, which only pins the gun team set up inside it (seed
    001 'Bunkers'). Then the turn ends and turn 2's upkeep runs."""
    from apps.battles import services

    structures = {s.name: f"s{s.pk}" for s in battle.structures.all()}
    units = {(u.army.side, u.name): f"u{u.pk}" for u in Unit.objects.filter(army__battle=battle).select_related("army")}
    weapons = {w.slug: f"w{w.pk}" for w in Weapon.objects.filter(ruleset=battle.ruleset)}

    def act(user, action, inputs, dice, attacker=None):
        services.perform(battle_id=battle.pk, user=user, action=action, inputs=inputs, attacker=attacker,
                         dice_values=dice)

    services.start(battle_id=battle.pk, user=organiser)
    grenadiers = units[("B", "Grenadier Squad 1")]
    act(side_a, "ba_he", {"weapon": weapons["he-2d6"], "structure": structures["Brick house at the crossroads"],
                          "target": grenadiers, "hit": "yes", "pins": 1},
        ["4", "3"], attacker=units[("A", "Field gun team")])
    act(side_a, "ba_damage", {"target": grenadiers, "hits": 7, "source": "he"}, ["1", "4", "6", "2", "5", "3", "2"])
    squad = units[("A", "1st Rifle Squad")]
    act(side_b, "ba_flamethrower", {"weapon": weapons["flamethrower"], "structure": structures["Thatched barn"],
                                    "target": squad, "hit": "yes", "hits": 4},
        ["5"], attacker=units[("B", "Pioneer flamethrower team")])
    act(side_b, "ba_damage", {"target": squad, "hits": 4, "source": "flamethrower"}, ["5", "2", "6", "3"])
    act(side_b, "ba_he", {"weapon": weapons["he-2d6"], "structure": structures["Soviet AT/HMG Loghouse"],
                          "target": units[("A", "Anti-tank gun team")], "hit": "yes", "pins": 1},
        ["6", "3"], attacker=units[("B", "Tiger I")])
    services.turn_action(battle_id=battle.pk, user=organiser, action="end_turn")
