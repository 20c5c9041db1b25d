"""An organiser's two tabs on one campaign at the same moment, on real PostgreSQL: finishing the open
session while the other tab chooses a side's commander or discards the session. Every campaign use
case takes the campaign's row before the battle's, so they queue instead of deadlocking (PostgreSQL
would end one of them with an error: a server error on the page)."""

import threading

import pytest

from apps.battles.models import Battle, BattleStatus
from apps.campaigns import permissions, services
from apps.rules import ActionRefused
from tests.battles.test_concurrency import run_together
from tests.campaigns.test_sessions import campaign  # noqa: F401 - the fixture

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def both_hold_their_first_lock(monkeypatch):
    """Each use case asks whether its user is an organiser right after taking its first row lock: there,
    wait (up to two seconds) until the other has taken its own, which is the moment a deadlock needs."""
    barrier = threading.Barrier(2)
    asked = permissions.is_organiser

    def is_organiser(user, club_id):
        if threading.current_thread() is threading.main_thread():  # setting up the test
            return asked(user, club_id)
        try:
            barrier.wait(timeout=2)
        except threading.BrokenBarrierError:  # the other waits for our lock: no deadlock to set up
            pass
        return asked(user, club_id)

    monkeypatch.setattr(permissions, "is_organiser", is_organiser)


def open_session(ctx):
    battle = services.start_session(campaign_id=ctx["campaign"].pk, user=ctx["org"])
    Battle.objects.filter(pk=battle.pk).update(status=BattleStatus.IN_PROGRESS)
    return battle


def test_finishing_while_another_tab_chooses_a_commander(campaign, both_hold_their_first_lock):  # noqa: F811
    battle = open_session(campaign)
    run_together(
        lambda: services.finish_battle(battle_id=battle.pk, user=campaign["org"], winner="A"),
        lambda: services.set_commander(campaign_id=campaign["campaign"].pk, user=campaign["org"], side="A",
                                       owner_id=campaign["bob"].pk),
    )
    battle.refresh_from_db()
    assert battle.status == BattleStatus.FINISHED
    assert campaign["campaign"].armies.get(side="A").owner == campaign["bob"]


def test_finishing_while_another_tab_discards_the_session(campaign, both_hold_their_first_lock):  # noqa: F811
    battle = open_session(campaign)
    Battle.objects.filter(pk=battle.pk).update(status=BattleStatus.SETUP)
    results = run_together(
        lambda: services.finish_battle(battle_id=battle.pk, user=campaign["org"], winner="A"),
        lambda: services.discard_session(campaign_id=campaign["campaign"].pk, user=campaign["org"]),
        tolerate=(ActionRefused, Battle.DoesNotExist),
    )
    # One of them happened, the other was refused in words (or found the battle gone).
    finished = Battle.objects.filter(pk=battle.pk, status=BattleStatus.FINISHED).exists()
    discarded = not Battle.objects.filter(pk=battle.pk).exists()
    assert finished != discarded, results
