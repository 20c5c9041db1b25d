"""Small builders for tests that need a battle: a club with an organiser and two players, two
armies, and whatever structures and units the test asks for."""

from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth.models import User

from apps.armies.models import Army, Unit, UnitWeapon, Weapon
from apps.battles.models import Battle, BattleStatus
from apps.campaigns.models import Club, Membership, Role
from apps.structures.models import Floor, Material, Opening, Structure


def material(slug, armor_class, surface="wall", *, flammable=False, construction="other"):
    return Material.objects.get_or_create(
        slug=slug, surface=surface,
        defaults={"name": slug.replace("_", " "), "armor_class": armor_class, "flammable": flammable,
                  "construction": construction},
    )[0]


@dataclass
class World:
    club: Club
    organiser: User
    alice: User
    bob: User
    battle: Battle
    armies: dict = field(default_factory=dict)

    def structure(self, name="House", *, floors=2, damage_max=24, wall=("brick", 6, "brick"), kind="building",
                  x=20, y=20, width=6, depth=6, **extra):
        slug, ac, construction = wall
        s = Structure.objects.create(
            battle=self.battle, name=name, kind=kind, damage_max=damage_max, x=Decimal(x), y=Decimal(y),
            width=Decimal(width), depth=Decimal(depth),
            wall_material=material(slug, ac, construction=construction), **extra,
        )
        for level in range(floors):
            floor = Floor.objects.create(structure=s, level=level)
            Opening.objects.create(floor=floor, side="front", kind="window", count=2)
        return s

    def unit(self, side, name, *, weapons=(), floor=None, x=None, y=None, models=10, **extra):
        if floor is None and x is None:
            x, y = 10, 10
        u = Unit.objects.create(army=self.armies[side], name=name, models_start=models, models_left=models,
                                floor=floor, x=x, y=y, **extra)
        for weapon in weapons:
            UnitWeapon.objects.create(unit=u, weapon=weapon)
        return u


def weapon(ruleset, slug, **fields):
    return Weapon.objects.get_or_create(ruleset=ruleset, slug=slug, defaults={"name": slug, **fields})[0]


def make_world(*, ruleset="ba", status=BattleStatus.IN_PROGRESS, club_name="Test club", **options):
    club = Club.objects.create(name=club_name, slug=club_name.lower().replace(" ", "-"))
    users = {}
    for name, role in (("organiser", Role.ORGANISER), ("alice", Role.PLAYER), ("bob", Role.PLAYER)):
        user = User.objects.create_user(f"{name}-{club.slug}", password="x")
        Membership.objects.create(club=club, user=user, role=role)
        users[name] = user
    battle = Battle.objects.create(club=club, name=f"{club_name} battle", ruleset=ruleset, status=status,
                                   **options)
    world = World(club, users["organiser"], users["alice"], users["bob"], battle)
    world.armies = {
        "A": Army.objects.create(battle=battle, side="A", name="Side A", owner=users["alice"]),
        "B": Army.objects.create(battle=battle, side="B", name="Side B", owner=users["bob"]),
    }
    return world
