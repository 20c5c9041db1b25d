"""Done when: two sessions of the demo campaign are played one after the other, the second starting
from the first's end state — end to end through the test client, as the organiser and the players
would at the table: the battle views with "I rolled" dice, the battle page's Finish control, the
campaign page's session controls. Every step is checked in the pages and in the database."""

import uuid
from decimal import Decimal

from django.urls import reverse

from apps.armies.models import Unit
from apps.battles.log import first_broken_entry
from apps.battles.models import Battle, BattleStatus
from apps.structures.models import Structure
from tests.campaigns.test_campaign_page import demo, demo_data, signed  # noqa: F401
from tests.campaigns.test_pages import body, fast_passwords, table_rows, text_of  # noqa: F401

HOUSE, BARN, COTTAGE = "Brick house at the crossroads", "Thatched barn", "Timber cottage"
TOWNHOUSE, TOWER, LOGHOUSE = "Brick townhouse", "Church tower", "Soviet AT/HMG Loghouse"
WORKSHOP = "Timber workshop"
CARRIED = ("damage_taken", "fire_size", "fire_started_turn", "collapsed", "destroyed", "impassable", "crew_men",
           "crew_pins", "crew_penetrating_hits", "weapons_destroyed")


def resolve(client, battle, user, dice, **inputs):
    """One action through the battle page's form, with the players' own dice ("I rolled")."""
    entries = battle.log_entries.count()
    data = {**inputs, "dice_mode": "player", "client_token": str(uuid.uuid4()),
            **{f"dice_{i}": str(d) for i, d in enumerate(dice)}}
    response = signed(client, user).post(reverse("battle_resolve", args=[battle.pk]), data)
    assert response.status_code == 303, body(response)
    assert battle.log_entries.count() == entries + 1
    return battle.log_entries.order_by("-seq").first()


def campaign_rows(demo):
    """The campaign's memory: its ground and rosters, every row and field."""
    return (list(Structure.objects.filter(campaign=demo.campaign).order_by("pk").values()),
            list(Unit.objects.filter(army__campaign=demo.campaign).order_by("pk").values()))


def test_two_sessions_of_the_demo_campaign_one_after_the_other(client, demo):
    one = demo.session1
    campaign_url = reverse("campaign", args=[demo.campaign.pk])
    ids = demo.ids(one)

    # Session 1, turn 2: a little more of the fight, with the players' dice.
    collapse = resolve(client, one, demo.alice, [6, 5], action="ba_he", attacker=ids.u["A", "Field gun team"],
                       weapon=ids.w["he-2d6"], structure=ids.s[HOUSE], target=ids.u["B", "Grenadier Squad 1"],
                       hit="yes", went_down="no", pins="1")
    assert "collapses" in collapse.summary
    resolve(client, one, demo.bob, [1, 2], action="ba_he", attacker=ids.u["B", "Tiger I"], weapon=ids.w["he-2d6"],
            structure=ids.s[COTTAGE], target=ids.u["A", "2nd Rifle Squad"], hit="yes", went_down="no", pins="1")
    casualties = resolve(client, one, demo.bob, [6, 5, 1], action="ba_damage", target=ids.u["A", "2nd Rifle Squad"],
                         hits="3", source="he")
    assert "2 casualties" in casualties.summary
    # Bolt Action counts no damage points: the umpire's tally of the tower's damage is written to the
    # battle's row directly.
    Structure.objects.filter(battle=one, name=TOWER).update(damage_taken=12)

    # The organiser finishes it from the battle page: side A wins.
    battle_page = body(signed(client, demo.organiser).get(reverse("battle", args=[one.pk])))
    assert 'id="finish-battle"' in battle_page
    response = client.post(reverse("battle_finish", args=[one.pk]),
                           {"confirmed": "1", "winner": "A", "result": "The crossroads house is rubble"})
    assert response.status_code == 303 and response["Location"] == campaign_url
    one.refresh_from_db()
    assert (one.status, one.winner) == (BattleStatus.FINISHED, "A")

    # The campaign page shows session 1's end state as the campaign's own.
    page = client.get(campaign_url)
    assert "Side A won: The crossroads house is rubble" in text_of(page, f"session-{one.pk}")
    house = demo.structure(HOUSE)
    assert house.collapsed and "Collapsed – rubble" in text_of(page, f"ground-{house.pk}")
    assert "Burning 40 sq in" in text_of(page, f"ground-{demo.structure(BARN).pk}")
    # A Bolt Action bunker is held by units, not a sheet crew (a Disposable Heroes crew's carry-over:
    # tests/campaigns/test_dh_campaign.py, test_sessions.py).
    loghouse = text_of(page, f"ground-{demo.structure(LOGHOUSE).pk}")
    assert "Anti-tank gun team" in loghouse and "Crew" not in loghouse
    soviets = {row[0].split(" Infantry")[0]: row[1:] for row in table_rows(page, "roster-A")}
    assert soviets["2nd Rifle Squad"] == ["8/10", "2"] and soviets["1st Rifle Squad"] == ["8/10", "2"]
    assert "<s>Grenadier Squad 1</s>" in body(page)
    end_of_one = campaign_rows(demo)

    # Fires keep burning into the next session (the campaign option), then session 2 is set up.
    client.post(reverse("campaign_settings", args=[demo.campaign.pk]),
                {"fires_persist": "on", "single_open_battle": "on"})
    response = client.post(reverse("campaign_session_start", args=[demo.campaign.pk]),
                           {"name": "", "weather": "rain"})
    two = Battle.objects.get(campaign=demo.campaign, session_number=2)
    assert response["Location"] == reverse("battle", args=[two.pk])
    assert (two.status, two.weather, two.turn) == (BattleStatus.SETUP, "rain", 1)
    assert campaign_rows(demo) == end_of_one
    client.post(reverse("battle_turn", args=[two.pk]), {"action": "start"})
    two.refresh_from_db()
    assert two.status == BattleStatus.IN_PROGRESS

    # Session 2 starts from session 1's end state: damage, fire (the option is on), rubble, the
    # rosters' losses and places; units' pins, Down and activations cleared.
    for original in Structure.objects.filter(campaign=demo.campaign):
        copy = Structure.objects.get(battle=two, origin=original)
        expected = {f: getattr(original, f) for f in CARRIED}
        if original.fire_size is not None:
            expected["fire_started_turn"] = 1
        assert {f: getattr(copy, f) for f in CARRIED} == expected, original.name
    barn = Structure.objects.get(battle=two, name=BARN)
    assert (barn.fire_size, barn.impassable) == (Decimal("40.00"), True)
    assert Structure.objects.get(battle=two, name=HOUSE).collapsed
    # The gun set up in the loghouse is still there, its pin from session 1's shell cleared.
    gun = demo.unit("A", "Anti-tank gun team", two)
    assert (gun.floor.structure.name, gun.pins) == (LOGHOUSE, 0)
    assert (demo.unit("A", "Anti-tank gun team", one).pins, demo.structure(LOGHOUSE).crew_men) == (1, 0)
    assert Structure.objects.get(battle=two, name=TOWER).damage_taken == 12
    for original in Unit.objects.filter(army__campaign=demo.campaign):
        copy = Unit.objects.get(army__battle=two, origin=original)
        assert (copy.models_left, copy.destroyed) == (original.models_left, original.destroyed), original.name
        assert (copy.pins, copy.down, copy.acted) == (0, False, False), original.name
    assert demo.unit("A", "2nd Rifle Squad", two).models_left == 8
    assert demo.unit("B", "Grenadier Squad 1", two).destroyed
    # …and its battle page says so.
    page = signed(client, demo.alice).get(reverse("battle", args=[two.pk]))
    structures = text_of(page, "structures")
    assert "Collapsed – rubble" in structures and "Burning" in structures and "sq in" not in structures
    assert "Pinned" not in text_of(page, "armies")

    # An action in session 2, then side B wins it.
    ids = demo.ids(two)
    shell_the_townhouse(client, two, demo.alice, ids)
    before_finish = campaign_rows(demo)
    response = signed(client, demo.organiser).post(reverse("battle_finish", args=[two.pk]),
                                                   {"confirmed": "1", "winner": "B", "result": "The tower held"})
    assert response.status_code == 303
    assert demo.unit("B", "Grenadier Squad 2").models_left == 7

    # The campaign page shows both sessions and the tally.
    page = client.get(campaign_url)
    assert "Side A won" in text_of(page, f"session-{one.pk}")
    assert "Side B won: The tower held" in text_of(page, f"session-{two.pk}")
    assert "2 sessions played." in text_of(page, "tally")
    tally = {row[0][:6]: row[1:] for row in table_rows(page, "tally-sides")}
    assert tally["Side A"] == ["1", "4 of 29", "0 of 5"]
    # Grenadier Squad 1 went down with the house: all ten of its models count as lost.
    assert tally["Side B"] == ["1", "13 of 36", "1 of 8"]
    assert "Collapsed (rubble) 1" in text_of(page, "tally-ground")

    # Reopen session 2: the campaign is exactly as it was before it ended.
    response = client.post(reverse("campaign_session_reopen", args=[demo.campaign.pk]), {"confirm": "on"})
    assert response.status_code == 303
    assert campaign_rows(demo) == before_finish
    two.refresh_from_db()
    assert (two.status, two.winner, two.result, two.finished_at) == (BattleStatus.IN_PROGRESS, "", "", None)
    assert "In progress" in text_of(client.get(campaign_url), f"session-{two.pk}")
    for battle in (one, two):
        assert first_broken_entry(battle) is None


def shell_the_townhouse(client, battle, user, ids):
    """The field gun's 2D6 shell on the townhouse: four hits on Grenadier Squad 2, three of them kill."""
    resolve(client, battle, user, [2, 2], action="ba_he", attacker=ids.u["A", "Field gun team"],
            weapon=ids.w["he-2d6"], structure=ids.s[TOWNHOUSE], target=ids.u["B", "Grenadier Squad 2"],
            hit="yes", went_down="no", pins="1")
    resolve(client, battle, user, [6, 6, 6, 1], action="ba_damage", target=ids.u["B", "Grenadier Squad 2"],
            hits="4", source="he")


def move(client, battle, user, unit, **where):
    data = {"action": "move", "unit": unit, "client_token": str(uuid.uuid4()), **where}
    response = signed(client, user).post(reverse("battle_resolve", args=[battle.pk]), data)
    assert response.status_code == 303, body(response)


def test_two_sessions_open_at_once_each_write_back_what_they_changed(client, demo):
    """The club lets two tables play at once: session 2 is set up while session 1 (the barn set alight,
    Grenadier Squad 1 down to 7, the 1st Rifle Squad to 8) is still being fought. Session 1 ends, then
    session 2. Finishing session 2 wrote its whole end state back: the barn stood unburnt and passable
    again, and every squad session 1 had hurt was back at full strength."""
    one, campaign_url = demo.session1, reverse("campaign", args=[demo.campaign.pk])
    client.force_login(demo.organiser)
    client.post(reverse("campaign_settings", args=[demo.campaign.pk]), {"fires_persist": "on"})
    assert client.post(reverse("campaign_session_start", args=[demo.campaign.pk]),
                       {"weather": "clear"}).status_code == 303
    two = Battle.objects.get(campaign=demo.campaign, session_number=2)
    client.post(reverse("battle_turn", args=[two.pk]), {"action": "start"})

    # Session 1: the sniper team takes the workshop's ground floor.
    ids = demo.ids(one)
    move(client, one, demo.alice, ids.u["A", "Sniper team"], structure=ids.s[WORKSHOP], floor="0")
    # Session 2: shells on the townhouse cost Grenadier Squad 2 three men; the 1st Rifle Squad takes
    # the same ground floor, free at that table.
    ids = demo.ids(two)
    shell_the_townhouse(client, two, demo.alice, ids)
    move(client, two, demo.alice, ids.u["A", "1st Rifle Squad"], structure=ids.s[WORKSHOP], floor="0")

    client.force_login(demo.organiser)
    assert client.post(reverse("battle_finish", args=[one.pk]), {"confirmed": "1", "winner": "A"}).status_code == 303
    after_one = campaign_rows(demo)
    assert client.post(reverse("battle_finish", args=[two.pk]), {"confirmed": "1", "winner": "B"}).status_code == 303

    barn, workshop = demo.structure(BARN), demo.structure(WORKSHOP)
    assert (barn.fire_size, barn.impassable) == (Decimal("40.00"), True)  # session 1's fire
    assert demo.unit("B", "Grenadier Squad 1").models_left == 7  # session 1's losses
    assert demo.unit("B", "Grenadier Squad 2").models_left == 7  # session 2's
    assert demo.unit("A", "1st Rifle Squad").models_left == 8  # hurt in 1, moved in 2: both kept
    # One unit a floor: session 1's sniper team holds it; session 2's squad stands at the workshop.
    assert demo.unit("A", "Sniper team").floor == workshop.floors.get(level=0)
    squad = demo.unit("A", "1st Rifle Squad")
    assert (squad.floor, squad.x, squad.y) == (None, workshop.x, workshop.y)
    page = client.get(campaign_url)
    assert "Burning 40 sq in" in text_of(page, f"ground-{barn.pk}")
    tally = {row[0][:6]: row[1:] for row in table_rows(page, "tally-sides")}
    assert tally["Side B"] == ["1", "6 of 36", "0 of 8"]

    # Reopened, session 2 puts the campaign back exactly as session 1 left it.
    assert client.post(reverse("campaign_session_reopen", args=[demo.campaign.pk]),
                       {"confirm": "on"}).status_code == 303
    assert campaign_rows(demo) == after_one


def second_table_opened(client, demo):
    """The organiser sends the campaign's settings with nothing ticked (several sessions may be open at
    once; fires go out between sessions), then sets session 2 up and starts it while session 1 is still
    being fought."""
    client.force_login(demo.organiser)
    client.post(reverse("campaign_settings", args=[demo.campaign.pk]), {})
    client.post(reverse("campaign_session_start", args=[demo.campaign.pk]), {"weather": "clear"})
    two = Battle.objects.get(campaign=demo.campaign, session_number=2)
    client.post(reverse("battle_turn", args=[two.pk]), {"action": "start"})
    return demo.session1, two


def test_a_squad_wiped_out_at_one_table_and_moved_at_the_other_holds_no_floor(client, demo):
    """Both sessions open at once: session 1 wipes out Grenadier Squad 2 in the townhouse; at session
    2's table it had moved up to the townhouse's first floor. Session 2 finishes last: the squad stays
    destroyed (session 1's) and, dead, holds no floor."""
    one, two = second_table_opened(client, demo)
    ids = demo.ids(one)
    resolve(client, one, demo.alice, [2, 2], action="ba_he", attacker=ids.u["A", "Field gun team"],
            weapon=ids.w["he-2d6"], structure=ids.s[TOWNHOUSE], target=ids.u["B", "Grenadier Squad 2"],
            hit="yes", went_down="no", pins="1")
    resolve(client, one, demo.alice, [6] * 10, action="ba_damage", target=ids.u["B", "Grenadier Squad 2"],
            hits="10", source="he")
    assert demo.unit("B", "Grenadier Squad 2", one).destroyed
    ids = demo.ids(two)
    move(client, two, demo.bob, ids.u["B", "Grenadier Squad 2"], structure=ids.s[TOWNHOUSE], floor="1")
    client.force_login(demo.organiser)
    assert client.post(reverse("battle_finish", args=[one.pk]), {"confirmed": "1", "winner": "A"}).status_code == 303
    assert client.post(reverse("battle_finish", args=[two.pk]), {"confirmed": "1", "winner": "B"}).status_code == 303
    squad, townhouse = demo.unit("B", "Grenadier Squad 2"), demo.structure(TOWNHOUSE)
    assert (squad.destroyed, squad.models_left, squad.floor, squad.x, squad.y) == (
        True, 0, None, townhouse.x, townhouse.y)
    assert not townhouse.collapsed
    assert not townhouse.floors.filter(occupant__isnull=False, level=1).exists()


def test_two_tables_damage_and_losses_add_up(client, demo):
    """Two tables at once: at table 1 the church tower takes 3 damage and Grenadier Squad 2 loses three
    men to shells on the townhouse; at table 2 the tower takes 2 and the squad loses three more. The last
    finisher's values had won: the tower at 2, the squad at 7. Both tables' count now: 5, and 4 men.
    Reopening the last session puts back exactly what table 1 left, and finishing it again adds up again."""
    one, two = second_table_opened(client, demo)
    tower = demo.structure(TOWER).damage_taken
    squad = demo.unit("B", "Grenadier Squad 2").models_left
    # Bolt Action counts no damage points: the umpire's tally is written to each battle's row.
    Structure.objects.filter(battle=one, name=TOWER).update(damage_taken=tower + 3)
    shell_the_townhouse(client, one, demo.alice, demo.ids(one))
    Structure.objects.filter(battle=two, name=TOWER).update(damage_taken=tower + 2)
    shell_the_townhouse(client, two, demo.alice, demo.ids(two))
    assert demo.unit("B", "Grenadier Squad 2", two).models_left == squad - 3

    client.force_login(demo.organiser)
    assert client.post(reverse("battle_finish", args=[one.pk]), {"confirmed": "1", "winner": "A"}).status_code == 303
    after_one = campaign_rows(demo)
    assert demo.structure(TOWER).damage_taken == tower + 3
    assert client.post(reverse("battle_finish", args=[two.pk]), {"confirmed": "1", "winner": "B"}).status_code == 303
    assert demo.structure(TOWER).damage_taken == tower + 5
    assert demo.unit("B", "Grenadier Squad 2").models_left == squad - 6
    tally = {row[0][:6]: row[1:] for row in table_rows(client.get(reverse("campaign", args=[demo.campaign.pk])),
                                                       "tally-sides")}
    assert tally["Side B"][1] == "9 of 36"  # Grenadier Squad 1's three men in the demo, and these six
    after_both = campaign_rows(demo)

    assert client.post(reverse("campaign_session_reopen", args=[demo.campaign.pk]),
                       {"confirm": "on"}).status_code == 303
    assert campaign_rows(demo) == after_one
    assert client.post(reverse("battle_finish", args=[two.pk]), {"confirmed": "1", "winner": "B"}).status_code == 303
    assert campaign_rows(demo) == after_both
