"""Simultaneous players on real PostgreSQL: row locks make concurrent actions queue up, so nothing
is lost and a double tap still resolves once."""

import threading

import pytest
from django.db import connection

from apps.battles import services
from apps.battles.log import first_broken_entry
from apps.battles.models import Battle, LogEntry
from apps.rules import RulesError
from apps.rules.tables import DH_SHEETS
from apps.structures.models import BunkerSheet
from tests.factories import make_world, weapon

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def run_together(*calls, tolerate=()):
    """Start every call at the same instant on its own thread (and database connection); exceptions
    of the `tolerate` classes come back as results."""
    barrier = threading.Barrier(len(calls))
    results, errors = [None] * len(calls), []

    def run(i, call):
        try:
            barrier.wait()
            results[i] = call()
        except tolerate as refused:
            results[i] = refused
        except Exception as exc:  # noqa: BLE001 - reported to the test below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    return results


@pytest.fixture
def fort():
    w = make_world(ruleset="dh")
    data = next(s for s in DH_SHEETS if s["slug"] == "german-hmg-loghouse")
    sheet = BunkerSheet.objects.create(**data)
    w.bunker = w.structure("Loghouse", floors=1, kind="bunker", wall=("logs", 6, "wooden"), sheet=sheet,
                           crew_men=10, crew_side="B")
    w.gun = weapon("dh", "45mm", dh_category="main_gun", dm=-1,
                   penetration_row=[12, 24, 36, 48, 60, 72, 84, 96, 108, 120])
    w.guns = [w.unit("A", f"AT gun {i}", kind="artillery", models=3, weapons=[w.gun]) for i in range(4)]
    return w


PLAYER_DICE = ["9", "1", "1"]


def attack(w, gun, user, token=None, dice=PLAYER_DICE):
    # Front d10 9 = vision (AV 10); penetration d10 1 = 12 penetrates; PH d10 1 - 1 (45mm DM) + previous
    # hits is at most 2 while few hits are on it: no blast, a Guts check owed, 1 penetrating hit.
    return lambda: services.perform(
        battle_id=w.battle.pk, user=user, action="dh_main_gun", attacker=f"u{gun.pk}", client_token=token,
        inputs={"weapon": f"w{w.gun.pk}", "structure": f"s{w.bunker.pk}", "facing": "front", "hit": "yes"},
        dice_values=dice, seed=None,
    )


def logged_penetrating_hits(battle):
    return sum(e["n"] for entry in LogEntry.objects.filter(battle=battle) for e in entry.outcome["effects"]
               if e["type"] == "penetrating_hits")


def test_two_players_hitting_the_same_bunker_at_once_both_count(fort):
    run_together(attack(fort, fort.guns[0], fort.alice), attack(fort, fort.guns[1], fort.organiser))
    fort.bunker.refresh_from_db()
    entries = list(LogEntry.objects.filter(battle=fort.battle).order_by("seq"))
    assert [e.seq for e in entries] == [1, 2]
    assert fort.bunker.crew_penetrating_hits == logged_penetrating_hits(fort.battle) == 2
    battle = Battle.objects.get(pk=fort.battle.pk)
    assert battle.version == 3
    assert first_broken_entry(battle) is None


def test_four_attacks_at_once_lose_nothing(fort):
    """The server rolls, so results differ run to run; whatever they are, the bunker carries exactly
    the penetrating hits its log records."""
    users = [fort.alice, fort.organiser, fort.alice, fort.organiser]
    results = run_together(*(attack(fort, gun, user, dice=None) for gun, user in zip(fort.guns, users)),
                           tolerate=(RulesError,))
    # Once a result destroys the loghouse, the attacks still queued behind it are refused, unlogged.
    resolved = [r for r in results if not isinstance(r, RulesError)]
    assert all("destroyed" in str(r) for r in results if isinstance(r, RulesError))
    fort.bunker.refresh_from_db()
    assert LogEntry.objects.filter(battle=fort.battle).count() == len(resolved) >= 1
    assert fort.bunker.crew_penetrating_hits == logged_penetrating_hits(fort.battle)
    assert first_broken_entry(Battle.objects.get(pk=fort.battle.pk)) is None


def test_a_double_tap_arriving_at_once_resolves_once(fort):
    first, second = run_together(attack(fort, fort.guns[0], fort.alice, token="tap"),
                                 attack(fort, fort.guns[0], fort.alice, token="tap"))
    assert first.pk == second.pk
    assert LogEntry.objects.filter(battle=fort.battle).count() == 1
    fort.bunker.refresh_from_db()
    assert fort.bunker.crew_penetrating_hits == 1


def test_two_phones_undoing_the_same_entry_at_once_undo_it_once(fort):
    """Both phones show "Undo #2" and both tap it: #2 is undone once and #1 stays; the second tap is
    refused with a message instead of undoing the entry below."""
    first = attack(fort, fort.guns[0], fort.alice)()
    second = attack(fort, fort.guns[1], fort.alice)()
    results = run_together(lambda: services.undo_last(battle_id=fort.battle.pk, user=fort.alice, seq=second.seq),
                           lambda: services.undo_last(battle_id=fort.battle.pk, user=fort.organiser, seq=second.seq),
                           tolerate=(RulesError,))
    refused = [r for r in results if isinstance(r, RulesError)]
    assert len(refused) == 1 and "already been undone" in str(refused[0])
    assert list(LogEntry.objects.filter(battle=fort.battle, undone=True).values_list("seq", flat=True)) == [second.seq]
    assert LogEntry.objects.filter(battle=fort.battle, action="undo").count() == 1
    assert not LogEntry.objects.get(pk=first.pk).undone
    fort.bunker.refresh_from_db()
    assert fort.bunker.crew_penetrating_hits == 1
    assert first_broken_entry(Battle.objects.get(pk=fort.battle.pk)) is None
