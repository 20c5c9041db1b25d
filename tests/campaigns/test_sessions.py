"""A campaign's sessions: each battle starts from the campaign's state, finishing writes back, and
reopening restores the campaign exactly."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from apps.armies.models import Army, Unit, UnitWeapon
from apps.battles import services as battles
from apps.battles.log import append_entry, first_broken_entry
from apps.battles.models import BattleStatus, LogEntry
from apps.campaigns import services
from apps.campaigns.models import Campaign, Club, Membership, Role
from apps.rules import ActionRefused
from apps.rules.tables import DH_SHEETS
from apps.structures.models import BunkerSheet, Floor, Opening, Structure
from tests.factories import material, weapon

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign():
    club = Club.objects.create(name="Club", slug="club")
    users = {}
    for name, role in (("org", Role.ORGANISER), ("alice", Role.PLAYER), ("bob", Role.PLAYER)):
        users[name] = User.objects.create_user(name, password="x")
        Membership.objects.create(club=club, user=users[name], role=role)
    c = Campaign.objects.create(club=club, name="Crossroads", ruleset="ba")
    house = Structure.objects.create(campaign=c, name="House", damage_max=20, wall_material=material("brick", 6),
                                     flammable=True)
    for level in range(2):
        floor = Floor.objects.create(structure=house, level=level)
        Opening.objects.create(floor=floor, side="front", kind="window")
    sheet = BunkerSheet.objects.create(**next(s for s in DH_SHEETS if s["slug"] == "german-hmg-loghouse"))
    # A Bolt Action bunker with a sheet for its kind and shape: units hold it, it has no crew.
    bunker = Structure.objects.create(campaign=c, name="Loghouse", kind="bunker", sheet=sheet,
                                      wall_material=material("logs", 6))
    Floor.objects.create(structure=bunker, level=0)
    a = Army.objects.create(campaign=c, side="A", name="Reds", owner=users["alice"])
    b = Army.objects.create(campaign=c, side="B", name="Greys", owner=users["bob"])
    he = weapon("ba", "he-2d6", he_value="2D6", heavy_weapon=True)
    gun = Unit.objects.create(army=a, name="Gun", kind="artillery", models_start=4, models_left=4, x=5, y=5)
    UnitWeapon.objects.create(unit=gun, weapon=he)
    Unit.objects.create(army=b, name="Squad", models_start=10, models_left=10, floor=house.floors.get(level=1))
    return {"campaign": c, "house": house, "bunker": bunker, "gun": gun, "he": he, **users}


def battle_copy(battle, original):
    return battle.structures.get(origin=original)


def play_session_one(ctx):
    c = ctx["campaign"]
    battle = services.start_session(campaign_id=c.pk, user=ctx["org"])
    battles.start(battle_id=battle.pk, user=ctx["org"])
    house = battle_copy(battle, ctx["house"])
    squad = Unit.objects.get(army__battle=battle, name="Squad")
    gun = Unit.objects.get(army__battle=battle, name="Gun")
    battles.perform(battle_id=battle.pk, user=ctx["alice"], action="ba_he", attacker=f"u{gun.pk}",
                    inputs={"weapon": f"w{ctx['he'].pk}", "structure": f"s{house.pk}", "target": f"u{squad.pk}",
                            "hit": "yes"}, dice_values=["6", "5"])
    Structure.objects.filter(pk=house.pk).update(fire_size=Decimal("4"), fire_started_turn=1)
    return battle


def test_second_session_starts_from_the_first_sessions_end_state(campaign):
    one = play_session_one(campaign)
    services.finish_battle(battle_id=one.pk, user=campaign["org"], winner="A", result="The house fell")
    house = campaign["house"]
    house.refresh_from_db()
    assert house.collapsed and house.fire_size == 4
    squad = Unit.objects.get(army__campaign=campaign["campaign"], name="Squad")
    assert squad.destroyed and squad.floor is None

    two = services.start_session(campaign_id=campaign["campaign"].pk, user=campaign["org"])
    assert two.session_number == 2 and two.status == BattleStatus.SETUP
    house2 = battle_copy(two, house)
    assert house2.collapsed, "rubble stays rubble"
    assert house2.fire_size is None, "fires go out between sessions unless the campaign keeps them"
    assert Unit.objects.get(army__battle=two, name="Squad").destroyed
    assert not Unit.objects.get(army__battle=two, name="Gun").acted
    # The first battle's copies are untouched by the second session.
    assert battle_copy(one, house).fire_size == 4


def test_a_disposable_heroes_bunker_keeps_its_pinned_half_dead_crew_into_the_next_session(campaign):
    c, bunker = campaign["campaign"], campaign["bunker"]
    Campaign.objects.filter(pk=c.pk).update(ruleset="dh")
    Structure.objects.filter(pk=bunker.pk).update(crew_side="B", crew_men=10)
    one = services.start_session(campaign_id=c.pk, user=campaign["org"])
    battles.start(battle_id=one.pk, user=campaign["org"])
    assert (battle_copy(one, bunker).crew_side, battle_copy(one, bunker).crew_men) == ("B", 10)
    Structure.objects.filter(pk=battle_copy(one, bunker).pk).update(crew_men=6, crew_pins=2, crew_penetrating_hits=3,
                                                                    weapons_destroyed=[0])
    services.finish_battle(battle_id=one.pk, user=campaign["org"], winner="A")
    bunker.refresh_from_db()
    assert (bunker.crew_men, bunker.crew_pins, bunker.crew_penetrating_hits, bunker.weapons_destroyed) == (6, 2, 3, [0])

    two = services.start_session(campaign_id=c.pk, user=campaign["org"])
    bunker2 = battle_copy(two, bunker)
    assert (bunker2.crew_side, bunker2.crew_men, bunker2.crew_pins, bunker2.crew_penetrating_hits,
            bunker2.weapons_destroyed) == ("B", 6, 2, 3, [0])
    Structure.objects.filter(pk=bunker2.pk).update(crew_pins=3)
    # The first battle's copy is untouched by the second session.
    assert battle_copy(one, bunker).crew_pins == 2


def test_a_bolt_action_bunker_gets_no_crew_in_its_sessions(campaign):
    """Sheet crews are Disposable Heroes': even a campaign row an earlier reading gave one (the
    migration clears those) is copied into the session without it, and the rules state has none."""
    from apps.battles import snapshot

    c, bunker = campaign["campaign"], campaign["bunker"]
    Structure.objects.filter(pk=bunker.pk).update(crew_side="B", crew_men=10, crew_pins=1)
    battle = services.start_session(campaign_id=c.pk, user=campaign["org"])
    copy = battle_copy(battle, bunker)
    assert (copy.crew_side, copy.crew_men, copy.crew_pins, copy.sheet_id) == ("", 0, 0, bunker.sheet_id)
    Structure.objects.filter(pk=copy.pk).update(crew_side="B", crew_men=10)  # as an old undo record might
    state = snapshot.load(battle).state
    assert state.structures[f"s{copy.pk}"].crew is None and state.structures[f"s{copy.pk}"].sheet is not None


def test_units_keep_the_places_the_battle_left_them_in(campaign):
    """A squad that fled the house stands outside next session; two squads that swapped floors hold
    the swapped floors (each floor holds one unit, so the write must not clash halfway); reopening
    puts everyone back."""
    c, house = campaign["campaign"], campaign["house"]
    greys = Army.objects.get(campaign=c, side="B")
    bunker_floor = campaign["bunker"].floors.get()
    Unit.objects.create(army=greys, name="Crew", models_start=4, models_left=4, floor=bunker_floor)
    Unit.objects.create(army=greys, name="Rifles", models_start=5, models_left=5, floor=house.floors.get(level=0))
    before = list(Unit.objects.filter(army__campaign=c).order_by("pk").values("name", "floor_id", "x", "y"))
    battle = services.start_session(campaign_id=c.pk, user=campaign["org"])
    copies = {u.name: u for u in Unit.objects.filter(army__battle=battle)}
    house_copy, bunker_copy = battle_copy(battle, house), battle_copy(battle, campaign["bunker"])
    # The squad leaves the house for the open; the crew and the rifles swap places.
    Unit.objects.filter(pk=copies["Squad"].pk).update(floor=None, x=Decimal("12.5"), y=Decimal("30"))
    Unit.objects.filter(pk=copies["Crew"].pk).update(floor=None)
    Unit.objects.filter(pk=copies["Rifles"].pk).update(floor=bunker_copy.floors.get())
    Unit.objects.filter(pk=copies["Crew"].pk).update(floor=house_copy.floors.get(level=0))

    battles.start(battle_id=battle.pk, user=campaign["org"])
    services.finish_battle(battle_id=battle.pk, user=campaign["org"], winner="A")
    after = {u.name: u for u in Unit.objects.filter(army__campaign=c)}
    assert (after["Squad"].floor_id, after["Squad"].x, after["Squad"].y) == (None, Decimal("12.5"), Decimal("30"))
    assert after["Crew"].floor_id == house.floors.get(level=0).pk
    assert after["Rifles"].floor_id == bunker_floor.pk
    assert after["Gun"].floor_id is None and (after["Gun"].x, after["Gun"].y) == (5, 5)

    services.reopen_last(campaign_id=c.pk, user=campaign["org"])
    assert list(Unit.objects.filter(army__campaign=c).order_by("pk").values("name", "floor_id", "x", "y")) == before


def test_a_unit_that_moved_into_a_building_is_inside_it_next_session(campaign):
    """From the open into the house with "Move a unit": the campaign's unit is on the floor, with no
    spot on the table left over (a unit is on a floor or on the table, never both)."""
    c = campaign["campaign"]
    battle = services.start_session(campaign_id=c.pk, user=campaign["org"])
    battles.start(battle_id=battle.pk, user=campaign["org"])
    gun = Unit.objects.get(army__battle=battle, name="Gun")
    Unit.objects.filter(army__battle=battle, name="Gun").update(kind="infantry")  # BA-1: infantry only
    house = battle_copy(battle, campaign["house"])
    battles.perform(battle_id=battle.pk, user=campaign["alice"], action="move",
                    inputs={"unit": f"u{gun.pk}", "structure": f"s{house.pk}", "floor": "0"})
    services.finish_battle(battle_id=battle.pk, user=campaign["org"], winner="A")
    original = Unit.objects.get(pk=campaign["gun"].pk)
    assert (original.floor, original.x, original.y) == (campaign["house"].floors.get(level=0), None, None)
    two = services.start_session(campaign_id=c.pk, user=campaign["org"])
    assert Unit.objects.get(army__battle=two, name="Gun").floor.structure == battle_copy(two, campaign["house"])


def test_fires_can_keep_burning_into_the_next_session(campaign):
    Campaign.objects.filter(pk=campaign["campaign"].pk).update(fires_persist=True)
    one = play_session_one(campaign)
    services.finish_battle(battle_id=one.pk, user=campaign["org"], winner="B")
    two = services.start_session(campaign_id=campaign["campaign"].pk, user=campaign["org"])
    house2 = battle_copy(two, campaign["house"])
    assert house2.fire_size == 4 and house2.fire_started_turn == 1


def test_a_second_open_battle_is_refused_when_the_campaign_forbids_it(campaign):
    services.start_session(campaign_id=campaign["campaign"].pk, user=campaign["org"])
    with pytest.raises(ActionRefused, match="still open"):
        services.start_session(campaign_id=campaign["campaign"].pk, user=campaign["org"])
    assert campaign["campaign"].battles.count() == 1


def test_only_organisers_run_sessions(campaign):
    with pytest.raises(ActionRefused):
        services.start_session(campaign_id=campaign["campaign"].pk, user=campaign["alice"])
    one = services.start_session(campaign_id=campaign["campaign"].pk, user=campaign["org"])
    with pytest.raises(ActionRefused):
        services.finish_battle(battle_id=one.pk, user=campaign["bob"], winner="B")
    assert campaign["campaign"].battles.get().status == BattleStatus.SETUP


def test_reopening_restores_the_campaign_exactly(campaign):
    def campaign_rows():
        c = campaign["campaign"]
        return (list(Structure.objects.filter(campaign=c).order_by("pk").values()),
                list(Unit.objects.filter(army__campaign=c).order_by("pk").values()))

    before = campaign_rows()
    one = play_session_one(campaign)
    services.finish_battle(battle_id=one.pk, user=campaign["org"], winner="A")
    assert campaign_rows() != before
    reopened = services.reopen_last(campaign_id=campaign["campaign"].pk, user=campaign["org"])
    assert campaign_rows() == before
    assert reopened.status == BattleStatus.IN_PROGRESS and reopened.winner == ""
    assert list(LogEntry.objects.filter(battle=one).values_list("action", flat=True).order_by("seq"))[-2:] == [
        "finish", "reopen"]


def test_a_session_set_up_by_mistake_is_discarded_and_the_one_before_reopens(campaign):
    def campaign_rows():
        c = campaign["campaign"]
        return (list(Structure.objects.filter(campaign=c).order_by("pk").values()),
                list(Unit.objects.filter(army__campaign=c).order_by("pk").values()))

    c = campaign["campaign"]
    one = play_session_one(campaign)
    services.finish_battle(battle_id=one.pk, user=campaign["org"], winner="A")
    after_one = campaign_rows()
    two = services.start_session(campaign_id=c.pk, user=campaign["org"])
    with pytest.raises(ActionRefused, match="Only the last session"):
        services.reopen_last(campaign_id=c.pk, user=campaign["org"])
    with pytest.raises(ActionRefused, match="Only an organiser"):
        services.discard_session(campaign_id=c.pk, user=campaign["alice"])

    assert services.discard_session(campaign_id=c.pk, user=campaign["org"]) == two.name
    assert not c.battles.filter(pk=two.pk).exists() and not Structure.objects.filter(battle_id=two.pk).exists()
    assert not Unit.objects.filter(army__battle_id=two.pk).exists()
    assert campaign_rows() == after_one
    services.reopen_last(campaign_id=c.pk, user=campaign["org"])
    assert c.battles.get(pk=one.pk).status == BattleStatus.IN_PROGRESS


def test_a_session_that_has_begun_is_not_discarded(campaign):
    c = campaign["campaign"]
    with pytest.raises(ActionRefused, match="still being set up"):
        services.discard_session(campaign_id=c.pk, user=campaign["org"])  # none at all
    one = play_session_one(campaign)  # started and played
    with pytest.raises(ActionRefused, match="still being set up"):
        services.discard_session(campaign_id=c.pk, user=campaign["org"])
    assert c.battles.filter(pk=one.pk).exists()
    services.finish_battle(battle_id=one.pk, user=campaign["org"], winner="A")
    two = services.start_session(campaign_id=c.pk, user=campaign["org"])
    append_entry(two, action="note", summary="Deployment agreed", actor=campaign["org"])
    with pytest.raises(ActionRefused, match="has entries in its log"):
        services.discard_session(campaign_id=c.pk, user=campaign["org"])
    assert c.battles.filter(pk=two.pk).exists()


def test_a_discard_sent_twice_discards_one_session(campaign):
    """With several sessions open at once, the newest being set up is always the one discarded: the
    form names it, so a second send (a double tap, a resend after a lost answer) is refused instead of
    discarding the session before it too."""
    c = campaign["campaign"]
    Campaign.objects.filter(pk=c.pk).update(single_open_battle=False)
    two = services.start_session(campaign_id=c.pk, user=campaign["org"])
    three = services.start_session(campaign_id=c.pk, user=campaign["org"])
    assert services.discard_session(campaign_id=c.pk, user=campaign["org"], number=three.session_number) == three.name
    with pytest.raises(ActionRefused, match=f"Session {three.session_number} has already been discarded"):
        services.discard_session(campaign_id=c.pk, user=campaign["org"], number=three.session_number)
    assert c.battles.filter(pk=two.pk).exists()
    four = services.start_session(campaign_id=c.pk, user=campaign["org"])
    with pytest.raises(ActionRefused, match=f"Session {four.session_number} was set up after session "
                                            f"{two.session_number}"):
        services.discard_session(campaign_id=c.pk, user=campaign["org"], number=two.session_number)
    assert set(c.battles.values_list("pk", flat=True)) == {two.pk, four.pk}


def test_a_reopened_sessions_last_action_can_still_be_undone(campaign, client):
    """A club reopens a session to put its last roll right: the finish and the reopening sit on top of
    that action in the log, and Undo passes over them to it (they change no piece of the battle)."""
    c = campaign["campaign"]
    one = play_session_one(campaign)
    shot = LogEntry.objects.get(battle=one, action="ba_he")
    house = battle_copy(one, campaign["house"])
    assert Structure.objects.get(pk=house.pk).collapsed
    services.finish_battle(battle_id=one.pk, user=campaign["org"], winner="A")
    services.reopen_last(campaign_id=c.pk, user=campaign["org"])
    assert list(one.log_entries.order_by("-seq").values_list("action", flat=True)[:2]) == ["reopen", "finish"]
    client.force_login(campaign["alice"])
    page = client.get(reverse("battle", args=[one.pk])).content.decode()
    assert f'<button type="submit" class="undo-button">Undo #{shot.seq}</button>' in page
    undo = battles.undo_last(battle_id=one.pk, user=campaign["alice"], seq=shot.seq)
    assert undo.undoes_id == shot.pk and LogEntry.objects.get(pk=shot.pk).undone
    assert not Structure.objects.get(pk=house.pk).collapsed
    assert first_broken_entry(one) is None


def test_nothing_to_reopen_is_a_clear_refusal(campaign):
    with pytest.raises(ActionRefused, match="No finished battle"):
        services.reopen_last(campaign_id=campaign["campaign"].pk, user=campaign["org"])


def test_a_crew_section_born_in_a_battle_keeps_the_floor_it_moved_into(campaign):
    """A section that left its fortification and took cover in the house joins the roster in the
    house, not off the table."""
    c = campaign["campaign"]
    battle = services.start_session(campaign_id=c.pk, user=campaign["org"])
    battles.start(battle_id=battle.pk, user=campaign["org"])
    greys = Army.objects.get(battle=battle, side="B")
    # As the rules' "crew leaves its fortification" makes it: no origin, just outside the bunker.
    section = Unit.objects.create(army=greys, name="Loghouse crew 1", models_start=2, models_left=2,
                                  x=Decimal("30"), y=Decimal("12.5"))
    house = battle_copy(battle, campaign["house"])
    battles.perform(battle_id=battle.pk, user=campaign["bob"], action="move",
                    inputs={"unit": f"u{section.pk}", "structure": f"s{house.pk}", "floor": "0"})
    services.finish_battle(battle_id=battle.pk, user=campaign["org"], winner="B")
    joined = Unit.objects.get(army__campaign=c, name="Loghouse crew 1")
    assert (joined.floor, joined.x, joined.y) == (campaign["house"].floors.get(level=0), None, None)
    two = services.start_session(campaign_id=c.pk, user=campaign["org"])
    assert Unit.objects.get(army__battle=two, name="Loghouse crew 1").floor.structure == battle_copy(two, campaign["house"])


def test_two_open_sessions_add_up_a_crews_losses_pins_and_hits(campaign):
    """A Disposable Heroes bunker fought over at two tables at once. Table 1: two of its nine men fall, a
    pin, a penetrating hit, its first weapon lost. Table 2: one man, two pins, two hits, its second weapon.
    The campaign keeps both: six men, three pins (the most a crew carries), three hits, both weapons lost;
    the last to finish no longer puts back its own counts alone. Flags raised at either table stay raised,
    and the house one table set alight and the other brought down is rubble, the fire out with it."""
    c, org = campaign["campaign"], campaign["org"]
    Campaign.objects.filter(pk=c.pk).update(ruleset="dh", single_open_battle=False)
    Structure.objects.filter(pk=campaign["bunker"].pk).update(crew_side="B", crew_men=9, crew_start=9)
    one = services.start_session(campaign_id=c.pk, user=org)
    two = services.start_session(campaign_id=c.pk, user=org)
    for battle in (one, two):
        battles.start(battle_id=battle.pk, user=org)
    bunker, house = campaign["bunker"], campaign["house"]
    Structure.objects.filter(battle=one, origin=bunker).update(
        crew_men=7, crew_pins=1, crew_penetrating_hits=1, weapons_destroyed=[0])
    Structure.objects.filter(battle=two, origin=bunker).update(
        crew_men=8, crew_pins=2, crew_penetrating_hits=2, weapons_destroyed=[1])
    Structure.objects.filter(battle=one, origin=house).update(fire_size=Decimal("6"), fire_started_turn=2)
    Structure.objects.filter(battle=two, origin=house).update(collapsed=True, destroyed=True, damage_taken=5)

    services.finish_battle(battle_id=one.pk, user=org, winner="A")
    after_one = rows_of(c)
    services.finish_battle(battle_id=two.pk, user=org, winner="B")
    bunker.refresh_from_db()
    assert (bunker.crew_men, bunker.crew_pins, bunker.crew_penetrating_hits, bunker.weapons_destroyed) == (
        6, 3, 3, [0, 1])
    house.refresh_from_db()
    assert (house.collapsed, house.destroyed, house.damage_taken, house.fire_size) == (True, True, 5, None)
    after_both = rows_of(c)

    # Reopened, session 2 gives back exactly what table 1 left; finished again, it adds up again.
    services.reopen_last(campaign_id=c.pk, user=org)
    assert rows_of(c) == after_one
    services.finish_battle(battle_id=two.pk, user=org, winner="B")
    assert rows_of(c) == after_both


def rows_of(c):
    return (list(Structure.objects.filter(campaign=c).order_by("pk").values()),
            list(Unit.objects.filter(army__campaign=c).order_by("pk").values()))


def test_a_fire_lit_at_both_tables_keeps_the_larger_and_two_tables_losses_wipe_a_squad_out(campaign):
    """The house set alight at both tables (6 and 4 square inches): the larger burns on, whichever table
    finishes last. The squad loses six of its ten men at one table and five at the other: none is left, so
    it is destroyed, as it would be had one table killed them all."""
    c, org = campaign["campaign"], campaign["org"]
    Campaign.objects.filter(pk=c.pk).update(single_open_battle=False, fires_persist=True)
    one = services.start_session(campaign_id=c.pk, user=org)
    two = services.start_session(campaign_id=c.pk, user=org)
    for battle in (one, two):
        battles.start(battle_id=battle.pk, user=org)
    house = campaign["house"]
    Structure.objects.filter(battle=one, origin=house).update(fire_size=Decimal("6"), fire_started_turn=2)
    Structure.objects.filter(battle=two, origin=house).update(fire_size=Decimal("4"), fire_started_turn=3)
    Unit.objects.filter(army__battle=one, name="Squad").update(models_left=4)
    Unit.objects.filter(army__battle=two, name="Squad").update(models_left=5)
    services.finish_battle(battle_id=one.pk, user=org, winner="A")
    services.finish_battle(battle_id=two.pk, user=org, winner="B")
    house.refresh_from_db()
    assert (house.fire_size, house.fire_started_turn) == (Decimal("6"), 2)
    squad = Unit.objects.get(army__campaign=c, name="Squad")
    assert (squad.models_left, squad.destroyed, squad.floor) == (0, True, None)
