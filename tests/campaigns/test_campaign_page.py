"""The campaign page: the timeline of sessions, the ground as it stands on a map, each army's roster
with its losses, the running tally, the organisers' controls, and a query count that does not grow
with the campaign.

`demo` (the demo data, built once per module and rolled back after it) and `Demo` are shared by the
other campaign session tests, which import them.
"""

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from apps.armies.models import Army, Unit, Weapon
from apps.battles.models import Battle, BattleStatus, LogEntry
from apps.battles import services as battles
from apps.campaigns import services
from apps.campaigns.export import BYTES_PER_ENTRY, file_estimate
from apps.campaigns.models import Campaign, Club, Membership, Role
from apps.structures.models import Floor, Material, Structure
from tests.campaigns.test_pages import assert_csp_clean, body, page, table_rows, text_of  # noqa: F401
from tests.campaigns.test_pages import fast_passwords  # noqa: F401 - autouse: cheap password hashing
from tests.demo_rows import load_demo

FAST_HASHING = ["django.contrib.auth.hashers.MD5PasswordHasher"]
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture(scope="module")
def demo_data(django_db_setup, django_db_blocker):
    """`manage.py demo` once for the module, in a transaction rolled back at its end; each test runs in
    its own savepoint inside it, so what one test changes never reaches another."""
    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=FAST_HASHING), transaction.atomic():
        load_demo()
        yield
        transaction.set_rollback(True)


class Demo(SimpleNamespace):
    """The demo campaign "Operation Crossroads" (Bolt Action): session 1 in progress at turn 2;
    demo organises, alice commands side A, bob side B, dora designs; olga is in another club."""

    def ids(self, battle):
        """The rules' names for a battle's rows: structures and units by name, weapons by slug."""
        return SimpleNamespace(
            s={s.name: f"s{s.pk}" for s in battle.structures.all()},
            u={(u.army.side, u.name): f"u{u.pk}" for u in Unit.objects.filter(army__battle=battle)
               .select_related("army")},
            w={w.slug: f"w{w.pk}" for w in Weapon.objects.filter(ruleset=battle.ruleset)},
        )

    def structure(self, name, battle=None):
        return Structure.objects.get(name=name, **({"battle": battle} if battle else {"campaign": self.campaign}))

    def unit(self, side, name, battle=None):
        owner = {"army__battle": battle} if battle else {"army__campaign": self.campaign}
        return Unit.objects.get(army__side=side, name=name, **owner)


@pytest.fixture
def demo(demo_data, db, settings):
    settings.PASSWORD_HASHERS = FAST_HASHING
    campaign = Campaign.objects.get(name="Operation Crossroads")
    users = {u.username: u for u in User.objects.filter(username__in=["demo", "alice", "bob", "dora", "olga"])}
    return Demo(campaign=campaign, session1=campaign.battles.get(session_number=1), organiser=users["demo"],
                alice=users["alice"], bob=users["bob"], dora=users["dora"], olga=users["olga"])


def signed(client, account):
    client.force_login(account)
    return client


def campaign_url(demo):
    return reverse("campaign", args=[demo.campaign.pk])


def finish_first_session(demo):
    """Session 1 ends (side A wins) through the services; the campaign takes its end state."""
    return services.finish_battle(battle_id=demo.session1.pk, user=demo.organiser, winner="A",
                                  result="The crossroads are ours")


# ---------------------------------------------------------------------------------- the page

def test_timeline_lists_each_session_with_its_result_turn_and_links(client, demo):
    finish_first_session(demo)
    two = services.start_session(campaign_id=demo.campaign.pk, user=demo.organiser, name="Dawn attack")
    response = signed(client, demo.alice).get(campaign_url(demo))
    assert response.status_code == 200
    one = text_of(response, f"session-{demo.session1.pk}")
    assert "Village crossroads — session 1" in one and "Session 1 ·" in one and "Finished" in one
    assert "reached turn 2" in one and "Side A won: The crossroads are ours" in one
    assert f"finished {timezone.now():%-d %b %Y}" in one
    second = text_of(response, f"session-{two.pk}")
    assert "Dawn attack" in second and "Session 2 ·" in second and "Setting up" in second and "turn 1" in second
    html = body(response)
    assert html.index("Village crossroads — session 1") < html.index("Dawn attack")
    for battle in (demo.session1, two):
        assert f'href="{reverse("battle", args=[battle.pk])}"' in html
        assert f'href="{reverse("battle", args=[battle.pk])}#battle-log"' in html


def test_map_and_ground_show_every_structure_in_its_state(client, demo):
    house = demo.structure("Brick house at the crossroads")
    Structure.objects.filter(pk=house.pk).update(collapsed=True, impassable=True)
    barn = demo.structure("Thatched barn")
    Structure.objects.filter(pk=barn.pk).update(fire_size=Decimal("40"), fire_started_turn=1, impassable=True)
    tower = demo.structure("Church tower")
    Structure.objects.filter(pk=tower.pk).update(damage_taken=15)
    # A Bolt Action bunker has no sheet crew (units hold it), whatever an old row still says of one.
    loghouse = demo.structure("Soviet AT/HMG Loghouse")
    Structure.objects.filter(pk=loghouse.pk).update(crew_side="A", crew_men=9, crew_pins=2, crew_penetrating_hits=1,
                                                    weapons_destroyed=[0])
    blockhouse = demo.structure("German Concrete Blockhouse")
    Structure.objects.filter(pk=blockhouse.pk).update(crew_side="B", crew_routed=True)

    response = signed(client, demo.bob).get(campaign_url(demo))
    tree = page(response)
    svg_links = {n.attrs["data-structure"]: n.attrs["class"] for n in tree.find("campaign-map").find_all("a") if "data-structure" in n.attrs}
    assert set(svg_links) == {str(pk) for pk in demo.campaign.structures.values_list("pk", flat=True)}
    assert "st-collapsed" in svg_links[str(house.pk)] and "st-impassable" in svg_links[str(house.pk)]
    assert "st-burning" in svg_links[str(barn.pk)]
    assert "st-damaged" in svg_links[str(tower.pk)]
    assert svg_links[str(loghouse.pk)] == svg_links[str(blockhouse.pk)] == "map-structure st-intact st-fort"
    assert "crew “1 pin”" not in body(response)  # nor does the map's key explain crew markers

    assert "Collapsed – rubble" in text_of(response, f"ground-{house.pk}")
    assert "Impassable" in text_of(response, f"ground-{house.pk}")
    assert "Burning 40 sq in" in text_of(response, f"ground-{barn.pk}")
    # This campaign puts fires out between sessions: the page says so rather than show a fire that
    # the next session will not have.
    assert not demo.campaign.fires_persist
    assert "the fire was out when Village crossroads — session 1 began" in text_of(response, f"ground-{barn.pk}")
    held = list(Battle.objects.filter(campaign=demo.campaign).values("pk", "status", "finished_at"))
    Battle.objects.filter(campaign=demo.campaign).update(status=BattleStatus.FINISHED, finished_at=timezone.now())
    assert "the fire is out when the next one starts" in text_of(client.get(campaign_url(demo)), f"ground-{barn.pk}")
    for row in held:
        Battle.objects.filter(pk=row.pop("pk")).update(**row)
    # The flamethrower's fire left it impassable, and that outlasts the fire.
    assert "stays impassable (burnt out: the seed makes a set-alight building" in text_of(response, f"ground-{barn.pk}")
    # The Bolt Action reading is not given for another ruleset's campaign, where impassable has other causes.
    type(demo.campaign).objects.filter(pk=demo.campaign.pk).update(ruleset="lg")
    lg_text = text_of(client.get(campaign_url(demo)), f"ground-{barn.pk}")
    assert "stays impassable" in lg_text and "set-alight" not in lg_text
    type(demo.campaign).objects.filter(pk=demo.campaign.pk).update(ruleset="ba")
    Structure.objects.filter(pk=barn.pk).update(impassable=False)
    assert "stays impassable" not in text_of(client.get(campaign_url(demo)), f"ground-{barn.pk}")
    assert "Burning when the last session ended (out by the next)" in text_of(response, "tally-ground")
    type(demo.campaign).objects.filter(pk=demo.campaign.pk).update(fires_persist=True)
    kept = client.get(campaign_url(demo))
    assert "the fire is out" not in text_of(kept, f"ground-{barn.pk}") and "Burning 40 sq in" in text_of(kept, f"ground-{barn.pk}")
    assert "Damaged 50%" in text_of(response, f"ground-{tower.pk}")
    assert "Damage 15/30" in text_of(response, f"ground-{tower.pk}")
    # Bolt Action counts no damage points: an undamaged building shows no "Damage 0/24" meter.
    assert "Damage" not in text_of(response, f"ground-{barn.pk}")
    for bunker, unit in ((loghouse, "Anti-tank gun team"), (blockhouse, "Blockhouse section")):
        ground = text_of(response, f"ground-{bunker.pk}")
        assert "Crew" not in ground and "routed" not in ground and "pin" not in ground and unit in ground
    assert "Grenadier Squad 1" in text_of(response, f"ground-{demo.structure('Brick house at the crossroads').pk}")


def test_the_ground_and_map_show_a_disposable_heroes_crew_in_its_state(client, demo):
    """The demo's "Winter Line": the Soviet Rifle Pit's crew as a session left it."""
    winter = Campaign.objects.get(name="Winter Line")
    pit = Structure.objects.get(campaign=winter, name="Soviet Rifle Pit")
    Structure.objects.filter(pk=pit.pk).update(crew_men=6, crew_pins=2, crew_penetrating_hits=1, weapons_destroyed=[0])
    url = reverse("campaign", args=[winter.pk])
    response = signed(client, demo.olga).get(url)
    svg_links = {n.attrs["data-structure"]: n.attrs["class"] for n in page(response).find("campaign-map").find_all("a") if "data-structure" in n.attrs}
    assert "st-pinned" in svg_links[str(pit.pk)] and "crew “1 pin” / “routed” / none left “0”" in body(response)
    crew = text_of(response, f"ground-{pit.pk}")
    assert "Crew 6/9 (side A)" in crew and "2 pins" in crew and "1 penetrating hit" in crew and "lost (Rifles)" in crew
    # Its three dead count with side A's losses: the Guards squad's 10 and the pit's 9 men.
    tally = {row[0][:6]: row[1:] for row in table_rows(response, "tally-sides")}
    assert tally["Side A"] == ["0", "3 of 19 3 of them bunker crew", "0 of 1"]

    Structure.objects.filter(pk=pit.pk).update(crew_routed=True)
    response = client.get(url)
    links = {n.attrs["data-structure"]: n.attrs["class"] for n in page(response).find("campaign-map").find_all("a") if "data-structure" in n.attrs}
    assert "st-routed" in links[str(pit.pk)]
    assert "routed" in text_of(response, f"ground-{pit.pk}")


def test_the_next_session_says_what_carries_over(client, demo):
    """Bunker crews carry over in Disposable Heroes; a Bolt Action campaign has none to mention."""
    finish_first_session(demo)
    text = text_of(signed(client, demo.organiser).get(campaign_url(demo)), "start-session")
    assert "damage, rubble, losses carry over, units' pins are cleared" in text
    winter = Campaign.objects.get(name="Winter Line")
    battles.start(battle_id=winter.battles.get().pk, user=demo.olga)
    services.finish_battle(battle_id=winter.battles.get().pk, user=demo.olga, winner="A")
    text = text_of(signed(client, demo.olga).get(reverse("campaign", args=[winter.pk])), "start-session")
    assert "damage, rubble, losses and bunker crews (their pins too) carry over" in text


def test_rosters_show_losses_and_strike_through_destroyed_units(client, demo):
    Unit.objects.filter(pk=demo.unit("B", "Grenadier Squad 1").pk).update(models_left=0, destroyed=True, floor=None)
    Unit.objects.filter(pk=demo.unit("A", "1st Rifle Squad").pk).update(models_left=6)
    response = signed(client, demo.alice).get(campaign_url(demo))
    soviet = {row[0].split(" Infantry")[0].split(" Artillery")[0]: row[1:] for row in table_rows(response, "roster-A")}
    assert soviet["1st Rifle Squad"] == ["6/10", "4"]
    assert soviet["Field gun team"] == ["4/4", "0"]
    german = table_rows(response, "roster-B")
    grenadiers = next(row for row in german if row[0].startswith("Grenadier Squad 1"))
    assert grenadiers[1:] == ["0/10", "10"] and "destroyed" in grenadiers[0]
    assert "<s>Grenadier Squad 1</s>" in body(response)
    assert "in Brick townhouse, ground floor" in text_of(response, "roster-B")
    # A vehicle says what class of tank it is (Bolt Action: only heavy and super-heavy ones ram buildings).
    tiger = next(row for row in german if row[0].startswith("Tiger I"))
    assert tiger[0] == "Tiger I Vehicle, heavy tank · veteran · at 50″, 40″"


def test_experience_is_shown_only_where_the_rules_read_it_and_breach_progress_is(client, demo):
    """Bolt Action reads a unit's experience (its damage roll); the other rulesets do not, so their
    rosters leave it out. A wall's breach progress carries across sessions: the ground shows it."""
    response = signed(client, demo.alice).get(campaign_url(demo))
    assert "· regular" in text_of(response, "roster-A")
    house = demo.structure("Brick townhouse")
    Structure.objects.filter(pk=house.pk).update(breach_needed=3, breach_scored=2)
    Campaign.objects.filter(pk=demo.campaign.pk).update(ruleset="lg")
    response = signed(client, demo.alice).get(campaign_url(demo))
    assert "regular" not in text_of(response, "roster-A")
    assert "Breach 2/3 attacks" in body(response)


def test_tally_counts_wins_losses_and_what_was_knocked_down(client, demo):
    finish_first_session(demo)
    two = services.start_session(campaign_id=demo.campaign.pk, user=demo.organiser)
    battles.start(battle_id=two.pk, user=demo.organiser)
    services.finish_battle(battle_id=two.pk, user=demo.organiser, winner="B")
    three = services.start_session(campaign_id=demo.campaign.pk, user=demo.organiser)
    battles.start(battle_id=three.pk, user=demo.organiser)
    services.finish_battle(battle_id=three.pk, user=demo.organiser, winner="D")
    services.start_session(campaign_id=demo.campaign.pk, user=demo.organiser)
    Structure.objects.filter(pk=demo.structure("Timber cottage").pk).update(collapsed=True)
    Structure.objects.filter(pk=demo.structure("Church tower").pk).update(destroyed=True)

    response = signed(client, demo.dora).get(campaign_url(demo))
    summary = text_of(response, "tally")
    assert "3 sessions played, 1 open, 1 draw." in summary
    rows = {row[0][:6]: row[1:] for row in table_rows(response, "tally-sides")}
    # Session 1's two casualties on each side (the demo's first turn) are in the campaign's rosters now.
    # The village's bunkers have no crews to count (units hold them); a Disposable Heroes crew counts
    # with its side (test_the_ground_and_map_show_a_disposable_heroes_crew_in_its_state).
    assert rows["Side A"] == ["1", "2 of 29", "0 of 5"]
    assert rows["Side B"] == ["1", "3 of 36", "0 of 8"]
    ground = text_of(response, "tally-ground")
    assert "Collapsed (rubble) 1" in ground and "Destroyed 1" in ground and "Still standing 11 of 13" in ground


def test_the_file_section_warns_before_a_download_the_import_would_refuse(client, demo, settings):
    """Beyond some 58,000 log entries the download passes CAMPAIGN_FILE_MAX_BYTES and the file will not
    import again: the page says so, from the entry count, before anyone downloads it. Any member may
    download, so a player is told too."""
    entries = LogEntry.objects.filter(battle__campaign=demo.campaign).count()
    assert entries > 0
    said = page(signed(client, demo.alice).get(campaign_url(demo))).find("file-too-big")
    assert said is None
    # The estimate just over the limit: it will not import again.
    settings.CAMPAIGN_FILE_MAX_BYTES = entries * BYTES_PER_ENTRY - 1
    warning = text_of(client.get(campaign_url(demo)), "file-too-big")
    assert f"Its battle logs hold {entries} entries" in warning and "more than the" in warning
    assert "will not import again" in warning and "CAMPAIGN_FILE_MAX_BYTES" in warning
    # Just under it: the estimate is an average, so it may not.
    settings.CAMPAIGN_FILE_MAX_BYTES = entries * BYTES_PER_ENTRY + 1
    warning = text_of(client.get(campaign_url(demo)), "file-too-big")
    assert "close to the" in warning and "may not import again" in warning
    # Far under it: nothing to say.
    settings.CAMPAIGN_FILE_MAX_BYTES = round(entries * BYTES_PER_ENTRY / 0.8)
    assert page(client.get(campaign_url(demo))).find("file-too-big") is None


def test_the_file_size_estimate_is_of_the_default_limits_scale(settings):
    """With the default 100 MB, the warning comes at about 53,000 entries and the limit at 58,800 (the
    figure docs/formats.md and README give)."""
    settings.CAMPAIGN_FILE_MAX_BYTES = 100_000_000
    assert not file_estimate(52_000).near and not file_estimate(52_000).over
    assert file_estimate(53_000).near and not file_estimate(53_000).over
    assert file_estimate(58_900).over
    assert file_estimate(58_900).entries == "58,900" and round(file_estimate(58_900).megabytes) == 100


def test_organisers_get_the_session_controls_and_players_do_not(client, demo):
    html = body(signed(client, demo.organiser).get(campaign_url(demo)))
    assert "Village crossroads — session 1 is still open: finish it before starting the next session" in html
    assert reverse("campaign_settings", args=[demo.campaign.pk]) in html
    assert reverse("campaign_import") in html and reverse("campaign_export", args=[demo.campaign.pk]) in html
    finish_first_session(demo)
    html = body(signed(client, demo.organiser).get(campaign_url(demo)))
    assert 'id="start-session"' in html and "Set up session 2" in html
    assert 'id="reopen-session"' in html and "Reopen session 1" in html

    for player in (demo.alice, demo.dora):
        html = body(signed(client, player).get(campaign_url(demo)))
        assert 'id="start-session"' not in html and 'id="reopen-session"' not in html
        assert reverse("campaign_settings", args=[demo.campaign.pk]) not in html
        assert reverse("campaign_import") not in html
        assert reverse("campaign_export", args=[demo.campaign.pk]) in html
        assert "backup" in html and "move to another host" in html


def test_page_runs_under_the_content_security_policy(client, demo):
    finish_first_session(demo)
    assert_csp_clean(signed(client, demo.organiser).get(campaign_url(demo)))


def test_other_clubs_do_not_see_the_campaign(client, demo):
    assert signed(client, demo.olga).get(campaign_url(demo)).status_code == 404


# ---------------------------------------------------------------------------------- queries

def grow(demo, sessions, structures, units):
    """More of everything the page lists: finished sessions, structures with floors held, units."""
    for _ in range(sessions):
        battle = services.start_session(campaign_id=demo.campaign.pk, user=demo.organiser)
        battles.start(battle_id=battle.pk, user=demo.organiser)
        services.finish_battle(battle_id=battle.pk, user=demo.organiser, winner="A")
    brick = Material.objects.get(slug="brick", surface="wall")
    army = Army.objects.get(campaign=demo.campaign, side="A")
    for n in range(structures):
        s = Structure.objects.create(campaign=demo.campaign, name=f"Hut {n}", wall_material=brick, x=n, y=n,
                                     damage_max=10, damage_taken=n % 10, collapsed=n % 3 == 0)
        floor = Floor.objects.create(structure=s, level=0)
        Unit.objects.create(army=army, name=f"Holders {n}", models_start=5, models_left=n % 5, floor=floor)
    for n in range(units):
        Unit.objects.create(army=army, name=f"Squad {n}", models_start=5, models_left=4, x=n, y=1,
                            destroyed=n % 2 == 0)


def page_queries(client, demo, user):
    signed(client, user)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(campaign_url(demo))
    assert response.status_code == 200
    return len(queries.captured_queries)


@pytest.mark.parametrize("who", ["organiser", "alice"])
def test_query_count_does_not_grow_with_sessions_structures_or_units(client, demo, who):
    user = getattr(demo, who)
    before = page_queries(client, demo, user)
    finish_first_session(demo)
    grow(demo, sessions=6, structures=15, units=20)
    assert Battle.objects.filter(campaign=demo.campaign).count() == 7
    after = page_queries(client, demo, user)
    # Session and user, the campaign with the viewer's role, its battles, structures, armies and
    # units, and the clubs menu of the page's header; for an organiser, the club's members (who may
    # command a side).
    assert before == after == (9 if who == "organiser" else 8)


def test_a_campaign_with_nothing_yet(client, db):
    club = Club.objects.create(name="New club", slug="new-club")
    organiser = User.objects.create_user("newbie", password="x")
    Membership.objects.create(club=club, user=organiser, role=Role.ORGANISER)
    campaign = Campaign.objects.create(club=club, name="Blank", ruleset="lg")
    response = signed(client, organiser).get(reverse("campaign", args=[campaign.pk]))
    assert response.status_code == 200
    html = body(response)
    assert "No session played yet." in html and "Set up session 1" in html and "No armies yet." in html
