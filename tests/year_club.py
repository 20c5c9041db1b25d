"""A club after years of play, for the tests that hold a page's queries to the same count however
much a club has: members, bunker sheets, scenarios with their ground and forces, campaigns with
their sessions, one-off battles with logs, invitations and spectator links.

`build_club(name)` makes a small one by default; `YEARS` are the figures of a club after three years
(bench-sized: the query tests use a fraction of them, which already shows anything that grows).
Rows are written in bulk; ground and forces are copied scenario -> campaign -> battle with the app's
own `copy_battlefield`, as starting a campaign and its sessions does.
"""

from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.utils import timezone

from apps.armies.models import Army, Unit, UnitWeapon
from apps.battles.models import Battle, BattleStatus, LogEntry
from apps.campaigns.copying import copy_battlefield
from apps.campaigns.models import Campaign, Club, Invite, Membership, Role, Scenario, SpectatorLink
from apps.structures.models import BunkerSheet, Floor, Opening, Structure
from tests import factories
from tests.campaigns.test_pages import LOGHOUSE

PASSWORD = "year-club-pw"

# Three years of a club: 10 campaigns, 40 sessions, 60 battles, 30 members, 25 scenarios of 40
# structures each, 30 bunker sheets.
YEARS = dict(members=30, sheets=30, scenarios=25, structures=40, units=6, campaigns=10, sessions=40, battles=60,
             entries=100, invites=40)
SMALL = dict(members=3, sheets=1, scenarios=1, structures=2, units=2, campaigns=1, sessions=1, battles=2,
             entries=3, invites=1)

# The library loghouse the page tests use, under each sheet's own slug and name.
SHEET = {key: value for key, value in LOGHOUSE.items() if key not in ("slug", "name")}


@dataclass
class YearClub:
    club: Club
    organiser: User
    designer: User
    player: User
    users: list = field(default_factory=list)
    sheets: list = field(default_factory=list)
    scenarios: list = field(default_factory=list)
    campaigns: list = field(default_factory=list)
    battles: list = field(default_factory=list)
    links: list = field(default_factory=list)


def build_club(name="Year club", **sizes):
    """A club with `sizes` (see YEARS) of everything; the first member organises, the second
    designs, the rest play. Usernames are the club's slug and a number."""
    n = {**SMALL, **sizes}
    slug = name.lower().replace(" ", "-")
    club = Club.objects.create(name=name, slug=slug)
    password = make_password(PASSWORD)
    users = User.objects.bulk_create([User(username=f"{slug}-{i}", password=password) for i in range(n["members"])])
    roles = [Role.ORGANISER, Role.DESIGNER] + [Role.PLAYER] * (n["members"] - 2)
    Membership.objects.bulk_create([Membership(club=club, user=u, role=r) for u, r in zip(users, roles)])
    y = YearClub(club, users[0], users[1], users[2], users)

    y.sheets = BunkerSheet.objects.bulk_create([
        BunkerSheet(club=club, slug=f"bunker-{i}", name=f"Bunker {i}", **SHEET) for i in range(n["sheets"])])
    brick = factories.material("brick", 6, construction="brick")
    concrete = factories.material("concrete", 8, construction="concrete")
    rifle = factories.weapon("ba", "rifle", name="Rifle")
    mg = factories.weapon("ba", "mmg", name="MMG")

    y.scenarios = Scenario.objects.bulk_create([
        Scenario(club=club, name=f"Scenario {i}", description="Hold the village.", author=users[i % 2],
                 deployment_zones=[{"side": "A", "x": 0, "y": 0, "width": 72, "depth": 12}])
        for i in range(n["scenarios"])])
    structures = Structure.objects.bulk_create([
        Structure(scenario=sc, name=f"House {k}", wall_material=brick, damage_max=24, x=Decimal(4 + k % 10 * 7),
                  y=Decimal(4 + k // 10 * 10), width=4, depth=4)
        if k % 8 else
        Structure(scenario=sc, name=f"Bunker {k}", kind="bunker", wall_material=concrete,
                  sheet=y.sheets[(i + k // 8) % len(y.sheets)], crew_men=12, crew_side="B",
                  x=Decimal(4 + k % 10 * 7), y=Decimal(4 + k // 10 * 10), width=4, depth=4)
        for i, sc in enumerate(y.scenarios) for k in range(n["structures"])])
    # Every fifth house is a section joined to the next one (both directions, as the relation keeps them).
    through = Structure.connections.through
    through.objects.bulk_create([
        through(from_structure_id=a.pk, to_structure_id=b.pk)
        for i, (one, two) in enumerate(zip(structures, structures[1:])) if i % 5 == 1 and one.scenario_id == two.scenario_id
        for a, b in ((one, two), (two, one))])
    floors = Floor.objects.bulk_create([Floor(structure=s, level=level) for s in structures for level in range(2)])
    Opening.objects.bulk_create([Opening(floor=f, side=side, kind="window", count=2)
                                 for f in floors for side in ("front", "rear")])
    armies = Army.objects.bulk_create([Army(scenario=sc, side=side, name=f"Side {side} of {sc.name}",
                                            owner=users[2 + (side == "B")] if n["members"] > 3 else None)
                                       for sc in y.scenarios for side in "AB"])
    first_floor = {}
    for f in floors:
        first_floor.setdefault(f.structure.scenario_id, []).append(f)
    units = Unit.objects.bulk_create([
        Unit(army=a, name=f"Squad {a.side}{j}", models_start=10, models_left=10 - j % 4,
             **({"floor": first_floor[a.scenario_id][2 * j + (a.side == "B")]}
                if j % 2 and 2 * j + 1 < len(first_floor[a.scenario_id]) else {"x": Decimal(5 + j), "y": Decimal(3)}))
        for a in armies for j in range(n["units"])])
    UnitWeapon.objects.bulk_create([UnitWeapon(unit=u, weapon=w) for u in units for w in (rifle, mg)])

    now = timezone.now()
    y.campaigns = []
    for i in range(n["campaigns"]):
        scenario = y.scenarios[i % len(y.scenarios)]
        campaign = Campaign.objects.create(club=club, name=f"Campaign {i}", description="Three villages.")
        copy_battlefield(scenario, campaign=campaign)
        y.campaigns.append(campaign)
    # Sessions spread over the campaigns; every campaign's newest one is still open.
    per = {c.pk: 0 for c in y.campaigns}
    for s in range(n["sessions"]):
        campaign = y.campaigns[s % len(y.campaigns)]
        per[campaign.pk] += 1
        last = s + len(y.campaigns) >= n["sessions"]
        battle = Battle.objects.create(
            club=club, campaign=campaign, scenario=y.scenarios[s // len(y.campaigns) % len(y.scenarios)],
            name=f"{campaign.name} — session {per[campaign.pk]}", session_number=per[campaign.pk],
            status=BattleStatus.IN_PROGRESS if last else BattleStatus.FINISHED,
            finished_at=None if last else now - timedelta(days=n["sessions"] - s),
            winner="" if last else "AB"[s % 2], result="" if last else f"Side {'AB'[s % 2]} took the ridge")
        copy_battlefield(campaign, battle=battle)
        y.battles.append(battle)
    for b in range(n["battles"] - n["sessions"]):
        scenario = y.scenarios[b % len(y.scenarios)]
        battle = Battle.objects.create(club=club, scenario=scenario, name=f"Friendly {b}",
                                       status=BattleStatus.FINISHED if b % 3 else BattleStatus.IN_PROGRESS,
                                       finished_at=now if b % 3 else None)
        copy_battlefield(scenario, battle=battle)
        y.battles.append(battle)
    # The hash chain is not what is measured here, so the entries are written directly.
    LogEntry.objects.bulk_create([
        LogEntry(battle=battle, seq=e, turn=1 + e // 20, action="note", summary=f"Entry {e}",
                 actor=users[e % len(users)], actor_name=users[e % len(users)].username, side="AB"[e % 2])
        for battle in y.battles for e in range(1, n["entries"] + 1)], batch_size=2000)

    Invite.objects.bulk_create([
        Invite(club=club, role=Role.PLAYER, code=f"{slug[:4].upper()}{i:04d}", expires_at=now + timedelta(days=i - 5),
               created_by=users[0], uses=min(i % 3, 1)) for i in range(n["invites"])])
    y.links = SpectatorLink.objects.bulk_create([
        SpectatorLink(battle=battle, secret=f"s{battle.pk}", label=f"Screen {battle.pk}", created_by=users[0])
        for battle in y.battles])
    return y
