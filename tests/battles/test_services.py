"""The battle use cases against a real database: what an action writes, what a refused action leaves
alone, and that undo puts every row back exactly."""

import pytest
from django.utils import timezone

from apps.armies.models import Unit
from apps.battles import services, snapshot
from apps.battles.log import first_broken_entry
from apps.battles.models import Battle, BattleStatus, LogEntry
from apps.rules import ActionRefused, DieValueError, InputError, MissingDie, RulesError, UnknownReference
from apps.structures.models import Structure
from tests.factories import make_world, weapon

pytestmark = pytest.mark.django_db


@pytest.fixture
def ba():
    """A Bolt Action battle: a two-floor brick house held by side B, a field gun of side A."""
    world = make_world(ruleset="ba")
    world.he = weapon("ba", "he-2d6", he_value="2D6", heavy_weapon=True)
    world.rifles = weapon("ba", "rifles")
    world.house = world.structure("Brick house", floors=2)
    world.squad = world.unit("B", "Grenadiers", floor=world.house.floors.get(level=1), weapons=[world.rifles])
    world.gun = world.unit("A", "Field gun", kind="artillery", models=4, weapons=[world.he])
    return world


def he_inputs(w, **extra):
    return {"weapon": f"w{w.he.pk}", "structure": f"s{w.house.pk}", "target": f"u{w.squad.pk}", "hit": "yes",
            **extra}


def state_of(battle):
    return snapshot.load(battle).state


def test_player_dice_collapse_the_house_and_are_logged(ba):
    entry = services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                             attacker=f"u{ba.gun.pk}", dice_values=["6", "5"])
    ba.house.refresh_from_db()
    ba.squad.refresh_from_db()
    ba.gun.refresh_from_db()
    assert ba.house.collapsed and ba.squad.destroyed and ba.squad.floor is None
    assert ba.gun.acted
    assert entry.seq == 1 and entry.actor == ba.alice and entry.side == "A"
    assert entry.dice == [{"purpose": entry.dice[0]["purpose"], "sides": 6, "count": 2, "faces": [6, 5], "value": 11,
                           "source": "player", "target": "sum"}]
    assert "collapses" in entry.summary
    battle = Battle.objects.get(pk=ba.battle.pk)
    assert battle.version == 2 and battle.map_version == 2
    assert first_broken_entry(battle) is None


def test_server_dice_are_marked_as_rolled_by_the_server(ba):
    entry = services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                             attacker=f"u{ba.gun.pk}", seed=3)
    assert entry.dice and all(d["source"] == "server" for d in entry.dice)
    assert entry.inputs["dice"] == "server"


REFUSALS = [
    # (who acts, attacker, inputs change, dice, field at fault, error class)
    ("bob", "gun", {}, ["3", "3"], "attacker", InputError),
    ("alice", "gun", {"weapon": "rifles"}, ["3", "3"], "weapon", InputError),
    ("alice", "gun", {"floor": "7"}, ["3", "3"], "floor", UnknownReference),
    ("alice", "gun", {}, ["3", "7"], "dice[1]", DieValueError),
    ("alice", "gun", {}, ["3"], "dice[1]", MissingDie),
    ("alice", "gun", {}, ["3", "3", "3"], "dice", RulesError),
    ("alice", "gun", {"structure": "elsewhere"}, ["3", "3"], "structure", UnknownReference),
    ("alice", None, {}, ["3", "3"], "attacker", InputError),
]


@pytest.mark.parametrize("who, attacker, change, dice, field, error", REFUSALS)
def test_refused_actions_change_nothing(ba, who, attacker, change, dice, field, error):
    inputs = he_inputs(ba)
    if change.get("weapon") == "rifles":
        inputs["weapon"] = f"w{ba.rifles.pk}"
    elif "floor" in change:
        inputs["floor"] = change["floor"]
    elif change.get("structure") == "elsewhere":
        other = make_world(club_name="Other club")
        inputs["structure"] = f"s{other.structure('Their house').pk}"
    before = state_of(ba.battle)
    with pytest.raises(error) as refused:
        services.perform(battle_id=ba.battle.pk, user=getattr(ba, who), action="ba_he", inputs=inputs,
                         attacker=f"u{getattr(ba, attacker).pk}" if attacker else None, dice_values=dice)
    assert refused.value.field == field
    assert str(refused.value)
    assert state_of(ba.battle) == before
    assert not LogEntry.objects.filter(battle=ba.battle).exists()
    assert Battle.objects.get(pk=ba.battle.pk).version == 1


def test_a_unit_acts_once_per_turn(ba):
    services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                     attacker=f"u{ba.gun.pk}", dice_values=["1", "2"])
    with pytest.raises(InputError, match="already acted"):
        services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                         attacker=f"u{ba.gun.pk}", dice_values=["1", "2"])
    services.turn_action(battle_id=ba.battle.pk, user=ba.alice, action="end_turn")
    services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                     attacker=f"u{ba.gun.pk}", dice_values=["1", "2"])
    assert LogEntry.objects.filter(battle=ba.battle, action="ba_he").count() == 2


@pytest.mark.parametrize("status", [BattleStatus.FINISHED, BattleStatus.SETUP])
def test_no_action_outside_a_running_battle(ba, status):
    Battle.objects.filter(pk=ba.battle.pk).update(status=status, finished_at=timezone.now())
    with pytest.raises(ActionRefused):
        services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                         attacker=f"u{ba.gun.pk}", dice_values=["1", "2"])
    assert not LogEntry.objects.exists()


def test_a_member_of_another_club_cannot_act(ba):
    stranger = make_world(club_name="Strangers").organiser
    with pytest.raises(ActionRefused):
        services.perform(battle_id=ba.battle.pk, user=stranger, action="ba_he", inputs=he_inputs(ba),
                         attacker=f"u{ba.gun.pk}", dice_values=["1", "2"])


def test_the_same_form_token_resolves_once(ba):
    first = services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                             attacker=f"u{ba.gun.pk}", dice_values=["1", "2"], client_token="tap-1")
    again = services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                             attacker=f"u{ba.gun.pk}", dice_values=["6", "6"], client_token="tap-1")
    assert again.pk == first.pk
    assert LogEntry.objects.filter(battle=ba.battle).count() == 1
    ba.house.refresh_from_db()
    assert not ba.house.collapsed


def test_undo_restores_every_row_exactly_and_keeps_the_entry(ba):
    before = state_of(ba.battle)
    entry = services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                             attacker=f"u{ba.gun.pk}", dice_values=["6", "6"])
    assert state_of(ba.battle) != before
    undo = services.undo_last(battle_id=ba.battle.pk, user=ba.alice)
    assert state_of(ba.battle) == before
    entry.refresh_from_db()
    assert entry.undone and undo.undoes == entry and undo.seq == entry.seq + 1
    assert undo.summary.startswith(f"Undid #{entry.seq}")
    battle = Battle.objects.get(pk=ba.battle.pk)
    assert first_broken_entry(battle) is None
    with pytest.raises(ActionRefused, match="nothing to undo"):
        services.undo_last(battle_id=ba.battle.pk, user=ba.alice)


def test_undo_of_a_named_entry_never_undoes_the_one_below(ba):
    """Undo names the entry the player confirmed: the same tap sent again (an answer lost on the club's
    wifi) or a second phone's tap on the same "Undo #2" is refused and changes nothing."""
    first = services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                             attacker=f"u{ba.gun.pk}", dice_values=["1", "1"])
    moved = services.perform(battle_id=ba.battle.pk, user=ba.bob, action="move",
                             inputs={"unit": f"u{ba.squad.pk}", "x": "3", "y": "4"})
    services.undo_last(battle_id=ba.battle.pk, user=ba.bob, seq=moved.seq)
    after_one = (state_of(ba.battle), Battle.objects.get(pk=ba.battle.pk).version, LogEntry.objects.count())
    with pytest.raises(ActionRefused, match=f"#{moved.seq} has already been undone: nothing more was undone"):
        services.undo_last(battle_id=ba.battle.pk, user=ba.organiser, seq=moved.seq)
    assert (state_of(ba.battle), Battle.objects.get(pk=ba.battle.pk).version, LogEntry.objects.count()) == after_one
    assert not LogEntry.objects.get(pk=first.pk).undone


def test_undo_refuses_an_entry_older_than_the_newest(ba):
    first = services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                             attacker=f"u{ba.gun.pk}", dice_values=["1", "1"])
    newer = services.perform(battle_id=ba.battle.pk, user=ba.bob, action="move",
                             inputs={"unit": f"u{ba.squad.pk}", "x": "3", "y": "4"})
    with pytest.raises(ActionRefused, match=f"#{newer.seq} was logged after #{first.seq}: nothing was undone"):
        services.undo_last(battle_id=ba.battle.pk, user=ba.organiser, seq=first.seq)
    assert not LogEntry.objects.filter(undone=True).exists()
    assert not LogEntry.objects.filter(action="undo").exists()


def test_undo_writes_only_its_own_battles_turn_fields_and_pieces(ba):
    """An entry's undo data is written by this host for this battle; were it ever otherwise (a bad
    restore, a hand-edited row), an undo still writes nothing but this battle's turn fields and rows."""
    other = make_world(ruleset="ba", club_name="Another club")
    entry = services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                             attacker=f"u{ba.gun.pk}", dice_values=["1", "1"])
    stranger = other.unit("A", "Somebody else's", x=5, y=5)
    undo = {**entry.undo, "units": {**entry.undo["units"], f"u{stranger.pk}": entry.undo["units"][f"u{ba.gun.pk}"]}}
    LogEntry.objects.filter(pk=entry.pk).update(undo=undo)
    with pytest.raises(ActionRefused, match=f"not in this battle \\(u{stranger.pk}\\)"):
        services.undo_last(battle_id=ba.battle.pk, user=ba.alice)
    assert not LogEntry.objects.get(pk=entry.pk).undone

    undo = {**entry.undo, "battle": {**entry.undo["battle"], "id": other.battle.pk, "version": 99, "turn": 1}}
    LogEntry.objects.filter(pk=entry.pk).update(undo=undo)
    services.undo_last(battle_id=ba.battle.pk, user=ba.alice)
    assert Battle.objects.get(pk=other.battle.pk).version == 1 and not other.battle.log_entries.exists()
    assert LogEntry.objects.get(pk=entry.pk).undone and Battle.objects.get(pk=ba.battle.pk).version == 3


def test_only_the_player_who_acted_or_an_organiser_may_undo(ba):
    services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                     attacker=f"u{ba.gun.pk}", dice_values=["1", "1"])
    with pytest.raises(ActionRefused):
        services.undo_last(battle_id=ba.battle.pk, user=ba.bob)
    services.undo_last(battle_id=ba.battle.pk, user=ba.organiser)
    assert LogEntry.objects.get(seq=1).undone


def test_end_turn_runs_upkeep_and_clears_who_acted(ba):
    services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                     attacker=f"u{ba.gun.pk}", dice_values=["1", "1"])
    entries = services.turn_action(battle_id=ba.battle.pk, user=ba.bob, action="end_turn")
    assert [e.action for e in entries] == ["end_turn", "upkeep"]
    assert [e.turn for e in entries] == [1, 2]
    battle = Battle.objects.get(pk=ba.battle.pk)
    assert battle.turn == 2 and battle.upkeep_turn == 2
    assert not Unit.objects.get(pk=ba.gun.pk).acted


def test_one_undo_takes_back_an_end_of_turn_and_the_upkeep_it_ran(ba):
    before = Battle.objects.get(pk=ba.battle.pk)
    services.turn_action(battle_id=ba.battle.pk, user=ba.alice, action="end_turn")
    ended, upkeep = LogEntry.objects.filter(battle=ba.battle).order_by("seq")
    assert (ended.action, upkeep.action, upkeep.inputs) == ("end_turn", "upkeep", {"follows": "end_turn"})
    last = services.undo_last(battle_id=ba.battle.pk, user=ba.alice)
    battle = Battle.objects.get(pk=ba.battle.pk)
    assert (battle.turn, battle.upkeep_turn, battle.sequence) == (before.turn, before.upkeep_turn, before.sequence)
    entries = list(LogEntry.objects.filter(battle=ba.battle).order_by("seq"))
    # Newest first, each with its own undo entry; nothing deleted, the chain intact.
    assert [(e.action, e.undone, e.undoes_id) for e in entries] == [
        ("end_turn", True, None), ("upkeep", True, None), ("undo", False, upkeep.pk), ("undo", False, ended.pk)]
    assert last.pk == entries[-1].pk and first_broken_entry(battle) is None


def test_upkeep_grows_a_fire_and_undo_shrinks_it_back(ba):
    ba.house.fire_size, ba.house.fire_started_turn, ba.house.flammable = 2, 1, True
    ba.house.save()
    services.turn_action(battle_id=ba.battle.pk, user=ba.alice, action="end_turn")  # turn 2: no growth yet
    services.turn_action(battle_id=ba.battle.pk, user=ba.alice, action="end_turn")  # turn 3: doubles
    ba.house.refresh_from_db()
    assert ba.house.fire_size == 4
    services.undo_last(battle_id=ba.battle.pk, user=ba.alice)
    ba.house.refresh_from_db()
    assert ba.house.fire_size == 2


@pytest.fixture
def dh():
    world = make_world(ruleset="dh")
    from apps.structures.models import BunkerSheet
    from apps.rules.tables import DH_SHEETS

    data = next(s for s in DH_SHEETS if s["slug"] == "german-hmg-loghouse")
    world.sheet = BunkerSheet.objects.create(**data)
    world.bunker = world.structure("Loghouse", floors=1, kind="bunker", wall=("logs", 6, "wooden"),
                                   sheet=world.sheet, crew_men=10, crew_side="B")
    world.gun = weapon("dh", "45mm", dh_category="main_gun", dm=-1,
                       penetration_row=[12, 24, 36, 48, 60, 72, 84, 96, 108, 120])
    world.crew_gun = world.unit("A", "AT gun", kind="artillery", models=3, weapons=[world.gun])
    return world


def test_a_crew_that_leaves_becomes_units_and_undo_takes_them_away(dh):
    before = state_of(dh.battle)
    entry = services.perform(battle_id=dh.battle.pk, user=dh.bob, action="dh_leave",
                             inputs={"structure": f"s{dh.bunker.pk}", "section_size": "5"})
    made = Unit.objects.filter(army=dh.armies["B"])
    assert sum(u.models_left for u in made) == 10 and made.count() == 2
    assert all(u.x is not None for u in made)
    assert entry.undo["created_units"] == sorted(u.pk for u in made) or set(entry.undo["created_units"]) == {
        u.pk for u in made}
    services.undo_last(battle_id=dh.battle.pk, user=dh.bob)
    assert not Unit.objects.filter(army=dh.armies["B"]).exists()
    assert state_of(dh.battle) == before


def spots(units):
    return sorted((float(u.x), float(u.y)) for u in units)


@pytest.mark.parametrize("facing, spot", [(0, (20, 25)), (90, (17, 20)), (180, (20, 15)), (270, (23, 20))])
def test_a_crew_comes_out_behind_its_bunker_whichever_way_it_faces(dh, facing, spot):
    """Seed 003's sheets have their Entrance in the rear: the sections stand an inch behind the bunker,
    the side its front turns away from. A long bunker (8″ × 4″) turned a quarter covers 4″ across and
    8″ down the table from its centre (20″, 20″); its front faces `facing` degrees from the top edge."""
    Structure.objects.filter(pk=dh.bunker.pk).update(width=8, depth=4, rotation=90, facing=facing)
    services.perform(battle_id=dh.battle.pk, user=dh.bob, action="dh_leave",
                     inputs={"structure": f"s{dh.bunker.pk}", "section_size": "5"})
    assert spots(Unit.objects.filter(army=dh.armies["B"])) == [spot, spot]


def test_a_crew_whose_bunker_backs_onto_the_table_edge_comes_out_by_a_flank(dh):
    """The loghouse's rear is an inch from the bottom edge of the 72″ × 48″ table: the crew comes out
    beside it (its right flank first), not off the table."""
    Structure.objects.filter(pk=dh.bunker.pk).update(y=44.5, facing=0)
    services.perform(battle_id=dh.battle.pk, user=dh.bob, action="dh_leave", inputs={"structure": f"s{dh.bunker.pk}"})
    assert spots(Unit.objects.filter(army=dh.armies["B"])) == [(24, 44.5)]


def test_units_abandoning_a_burning_building_come_out_towards_their_own_table_edges(ba):
    """A building has no front: a unit driven out stands behind it as its side sees it, side A's above
    it (its edge is the top), side B's below."""
    flamer = weapon("ba", "flamethrower", flamethrower=True)
    team = ba.unit("B", "Flamethrower team", models=2, weapons=[flamer])
    scouts = ba.unit("A", "Scouts", floor=ba.house.floors.get(level=0))
    services.perform(battle_id=ba.battle.pk, user=ba.bob, action="ba_flamethrower", attacker=f"u{team.pk}",
                     inputs={"weapon": f"w{flamer.pk}", "structure": f"s{ba.house.pk}", "target": f"u{scouts.pk}",
                             "hit": "yes", "hits": "1"}, dice_values=["5"])
    ba.house.refresh_from_db()
    assert ba.house.impassable
    assert spots([Unit.objects.get(pk=scouts.pk)]) == [(20, 16)]
    assert spots([Unit.objects.get(pk=ba.squad.pk)]) == [(20, 24)]


def test_main_gun_penetrating_hits_are_kept_on_the_crew(dh):
    # Front facing: location d10 3 = walls (AV 90); penetration d10 8 = 96 penetrates; PH d10 6,
    # 45mm DM -1 → 5: blast 10D10 at AP 6, guts check, 2 PH.
    blast = ["1", "2", "7", "8", "9", "10", "10", "9", "8", "7"]
    services.perform(battle_id=dh.battle.pk, user=dh.alice, action="dh_main_gun", attacker=f"u{dh.crew_gun.pk}",
                     inputs={"weapon": f"w{dh.gun.pk}", "structure": f"s{dh.bunker.pk}", "facing": "front",
                             "hit": "yes", "guts_passed": "no"},
                     dice_values=["3", "8", "6", *blast])
    dh.bunker.refresh_from_db()
    assert dh.bunker.crew_penetrating_hits == 2
    assert dh.bunker.crew_men == 8  # two dice at or under AP 6
    # The Guts check the 5–6 row calls for is rolled now, and entered: failed, the crew is pinned.
    assert dh.bunker.crew_pins == 0
    services.perform(battle_id=dh.battle.pk, user=dh.bob, action="dh_guts",
                     inputs={"structure": f"s{dh.bunker.pk}", "guts_passed": "no"})
    dh.bunker.refresh_from_db()
    assert dh.bunker.crew_pins == 1


def test_no_side_fires_on_its_own_fortification(dh):
    """The loghouse's crew is side B's: B's own gun may not shell it or shoot at its crew; nothing changes."""
    friendly = dh.unit("B", "Friendly AT gun", kind="artillery", models=3, weapons=[dh.gun])
    before = state_of(dh.battle)
    for action, extra in (("dh_main_gun", {"weapon": f"w{dh.gun.pk}", "facing": "front", "hit": "yes"}),
                          ("dh_small_arms", {"shots": "6"})):
        with pytest.raises(InputError) as refused:
            services.perform(battle_id=dh.battle.pk, user=dh.bob, action=action, attacker=f"u{friendly.pk}",
                             inputs={"structure": f"s{dh.bunker.pk}", **extra}, dice_values=["3", "8", "6"])
        assert refused.value.field == "structure"
        assert refused.value.message == ("Loghouse's crew is side B's, as Friendly AT gun is: "
                                         "choose an enemy fortification")
    assert state_of(dh.battle) == before and not LogEntry.objects.filter(battle=dh.battle).exists()


def test_a_club_using_its_own_order_dice_may_switch_action_tracking_off(ba):
    Battle.objects.filter(pk=ba.battle.pk).update(options={"track_actions": False})
    for _ in range(2):
        services.perform(battle_id=ba.battle.pk, user=ba.alice, action="ba_he", inputs=he_inputs(ba),
                         attacker=f"u{ba.gun.pk}", dice_values=["1", "1"])
    assert LogEntry.objects.filter(battle=ba.battle).count() == 2


@pytest.mark.parametrize("field, value", [("x", "nan"), ("y", "NaN"), ("x", "-nan"), ("y", "inf")])
def test_a_spot_that_is_not_a_finite_number_is_refused_by_its_field(ba, field, value):
    """NaN passes every bound (each comparison is false): it reached the database write and failed
    there with a 500. It is refused next to its field, and nothing changes."""
    spot = {"unit": f"u{ba.gun.pk}", "x": "10", "y": "10", field: value}
    before = state_of(ba.battle)
    with pytest.raises(InputError) as refused:
        services.perform(battle_id=ba.battle.pk, user=ba.alice, action="move", inputs=spot)
    assert refused.value.field == field
    assert state_of(ba.battle) == before
    assert not LogEntry.objects.filter(battle=ba.battle).exists()


def leave_and_return(dh, casualties=0):
    """The loghouse's ten walk out as one section, lose `casualties` outside, and move back in."""
    services.perform(battle_id=dh.battle.pk, user=dh.bob, action="dh_leave",
                     inputs={"structure": f"s{dh.bunker.pk}", "section_size": "10"})
    section = Unit.objects.get(army=dh.armies["B"])
    if casualties:
        services.perform(battle_id=dh.battle.pk, user=dh.bob, action="dh_casualties",
                         inputs={"target": f"u{section.pk}", "casualties": str(casualties), "guts_passed": "yes"})
    before = state_of(dh.battle)
    entry = services.perform(battle_id=dh.battle.pk, user=dh.bob, action="move",
                             inputs={"unit": f"u{section.pk}", "structure": f"s{dh.bunker.pk}"})
    return section, before, entry


def test_a_section_moved_back_into_its_own_bunker_rejoins_its_crew(dh):
    section, _, entry = leave_and_return(dh, casualties=3)
    assert section.crew_of_id == dh.bunker.pk
    dh.bunker.refresh_from_db()
    section.refresh_from_db()
    # The seven who came back are the crew again; the three who fell outside stay counted as walked
    # out: the section's own losses on the roster hold them.
    assert (dh.bunker.crew_men, dh.bunker.crew_left) == (7, 3)
    assert section.rejoined and (section.floor_id, section.x, section.y) == (None, None, None)
    assert entry.summary == "Loghouse crew 1 moves back into Loghouse and rejoins its crew: 7 men, the crew now 7"
    # Fire at the crew now reaches them.
    services.perform(battle_id=dh.battle.pk, user=dh.alice, action="dh_crew_casualties",
                     inputs={"structure": f"s{dh.bunker.pk}", "casualties": "2", "guts_passed": "yes"})
    dh.bunker.refresh_from_db()
    assert dh.bunker.crew_men == 5


def test_a_section_that_rejoined_its_crew_no_longer_acts_as_a_unit(dh):
    section, _, _ = leave_and_return(dh)
    before = state_of(dh.battle)
    with pytest.raises(InputError, match="has rejoined its fortification's crew"):
        services.perform(battle_id=dh.battle.pk, user=dh.bob, action="move",
                         inputs={"unit": f"u{section.pk}", "x": "3", "y": "3"})
    assert state_of(dh.battle) == before


def test_undo_of_a_rejoining_move_puts_the_section_back_outside(dh):
    section, before, _ = leave_and_return(dh, casualties=1)
    outside = before.units[f"u{section.pk}"].position
    services.undo_last(battle_id=dh.battle.pk, user=dh.bob)
    assert state_of(dh.battle) == before
    dh.bunker.refresh_from_db()
    back = Unit.objects.get(pk=section.pk)
    assert (dh.bunker.crew_men, dh.bunker.crew_left) == (0, 10)
    assert not back.rejoined and (float(back.x), float(back.y), back.models_left) == (*outside, 9)


def test_a_section_moved_into_another_bunker_stays_a_unit(dh):
    other = dh.structure("Second loghouse", floors=1, kind="bunker", wall=("logs", 6, "wooden"),
                         sheet=dh.sheet, crew_men=0, crew_side="B", x=40, y=20)
    services.perform(battle_id=dh.battle.pk, user=dh.bob, action="dh_leave",
                     inputs={"structure": f"s{dh.bunker.pk}", "section_size": "10"})
    section = Unit.objects.get(army=dh.armies["B"])
    entry = services.perform(battle_id=dh.battle.pk, user=dh.bob, action="move",
                             inputs={"unit": f"u{section.pk}", "structure": f"s{other.pk}"})
    section.refresh_from_db()
    other.refresh_from_db()
    assert "rejoins" not in entry.summary
    assert not section.rejoined and section.floor.structure_id == other.pk and other.crew_men == 0


def test_a_section_that_went_in_as_an_ordinary_unit_before_rejoins_when_moved_in_again(dh):
    """Moved into its bunker before sections kept their link (it held the floor, the crew at 0/10), then
    linked by migration armies 0006: moving it into the bunker again makes it the crew and frees the floor."""
    services.perform(battle_id=dh.battle.pk, user=dh.bob, action="dh_leave",
                     inputs={"structure": f"s{dh.bunker.pk}", "section_size": "10"})
    section = Unit.objects.get(army=dh.armies["B"])
    Unit.objects.filter(pk=section.pk).update(crew_of=None)
    services.perform(battle_id=dh.battle.pk, user=dh.bob, action="move",
                     inputs={"unit": f"u{section.pk}", "structure": f"s{dh.bunker.pk}"})
    assert Unit.objects.get(pk=section.pk).floor.structure_id == dh.bunker.pk
    Unit.objects.filter(pk=section.pk).update(crew_of=dh.bunker)
    entry = services.perform(battle_id=dh.battle.pk, user=dh.bob, action="move",
                             inputs={"unit": f"u{section.pk}", "structure": f"s{dh.bunker.pk}"})
    assert "rejoins its crew" in entry.summary
    dh.bunker.refresh_from_db()
    assert (dh.bunker.crew_men, dh.bunker.crew_left) == (10, 0)
    assert Unit.objects.get(pk=section.pk).floor_id is None
    assert not any(f.unit for f in state_of(dh.battle).structures[f"s{dh.bunker.pk}"].floors)


@pytest.fixture
def lg_garrison():
    """A LaserGrenadiers battle, side B holding the initiative: a sentry in a concrete bunker, a gunner
    in a pillbox, a house for them to fire at."""
    world = make_world(ruleset="lg", upkeep_turn=1, sequence={"initiative": "B", "rolled": True})
    world.rifle = weapon("lg", "laser-rifle", weapon_type="laser_small_arms", rof_code="P")
    concrete = ("concrete_reinforced", 9, "concrete")
    world.bunker = world.structure("Bunker", kind="bunker", floors=1, wall=concrete)
    world.pillbox = world.structure("Pillbox", kind="pillbox", floors=1, wall=concrete)
    world.house = world.structure("House", floors=1)
    world.sentry = world.unit("B", "Sentry", floor=world.bunker.floors.get(), weapons=[world.rifle], models=1)
    world.gunner = world.unit("B", "Gunner", floor=world.pillbox.floors.get(), weapons=[world.rifle], models=1)
    return world


def fire_at_house(w, unit):
    return services.perform(battle_id=w.battle.pk, user=w.bob, action="lg_attack_structure", attacker=f"u{unit.pk}",
                            inputs={"weapon": f"w{w.rifle.pk}", "structure": f"s{w.house.pk}", "hit": "no"})


def assert_may_not_fire(w, piece, message):
    """Refused at the attacker, the message beside it; nothing logged and the initiative not spent."""
    with pytest.raises(InputError) as error:
        fire_at_house(w, piece)
    assert (error.value.field, error.value.message) == ("attacker", message)
    assert not LogEntry.objects.filter(battle=w.battle).exists()
    assert Battle.objects.get(pk=w.battle.pk).sequence["initiative"] == "B"


def test_lg_pieces_in_a_bunker_cannot_fire_out_but_a_pillbox_is_fought_from(lg_garrison):
    """Seed 000: bunkers "lack firing slits and embrasures. They are not meant to be fighting positions";
    pillboxes are built "so that the defenders may fight from within them" (LG-2). A sentry in a bunker
    fired a laser rifle out of it, and the attack used his initiative."""
    w = lg_garrison
    assert_may_not_fire(w, w.sentry, "Sentry is in Bunker, a bunker: it has no firing slits or embrasures, so "
                                     "pieces inside cannot fire out (seed 000). Move it out first")
    fire_at_house(w, w.gunner)
    assert LogEntry.objects.filter(battle=w.battle, action="lg_attack_structure").count() == 1


def test_lg_pieces_in_ruins_must_leave_before_they_fire(lg_garrison):
    """A-LG-3: the pieces inside a structure made untenable (collapsed, or its points all lost) must leave
    it on their next activation. The gunner in a collapsed pillbox fired from the rubble as before."""
    w = lg_garrison
    Structure.objects.filter(pk=w.pillbox.pk).update(collapsed=True, destroyed=True, impassable=True)
    assert_may_not_fire(w, w.gunner, "Gunner is in Pillbox, which is rubble: nobody may occupy it, so it must "
                                     "leave on this activation (A-LG-3). Move it out first")
    Unit.objects.filter(pk=w.gunner.pk).update(floor=None, x=5, y=5)
    fire_at_house(w, w.gunner)
    assert LogEntry.objects.filter(battle=w.battle, action="lg_attack_structure").count() == 1


def test_an_lg_attack_is_logged_with_the_piece_that_fired_and_who_holds_the_initiative_next(lg_garrison):
    """Every phone reads the log: "laser-rifle missed House" said neither which piece fired (the one the
    other side may now try to detect, seed 000) nor that its initiative was used and passed on. A check it
    owed is made with the activation (LG-36), and the log says so as an "Activate" does."""
    w = lg_garrison
    w.unit("A", "Trooper", models=1)
    Battle.objects.filter(pk=w.battle.pk).update(sequence={"initiative": "B", "rolled": True,
                                                           "pending_morale": [f"u{w.gunner.pk}"]})
    entry = fire_at_house(w, w.gunner)
    assert entry.summary == ("Gunner: laser-rifle missed House; owed morale check made; side A has the "
                             "initiative")
