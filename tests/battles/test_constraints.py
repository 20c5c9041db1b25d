"""The database itself refuses impossible battles and log entries.

Every write here bypasses model validation (queryset update, bulk_create) on purpose.
"""

import pytest

from apps.battles.log import append_entry
from apps.battles.models import Battle, LogEntry
from apps.campaigns.models import Campaign, Scenario
from tests.constraints import club, rejected  # noqa: F401 - fixtures


@pytest.fixture
def battle(club):
    return Battle.objects.create(club=club, name="Battle")


def entry(battle, seq, **fields):
    return LogEntry(battle=battle, seq=seq, turn=1, action="note", summary=f"entry {seq}", **fields)


def test_log_entries_appended_get_consecutive_sequence_numbers(battle):
    assert [append_entry(battle, action="note", summary=str(n)).seq for n in range(3)] == [1, 2, 3]


def test_duplicate_sequence_number_in_a_battle_is_rejected(battle, club):
    append_entry(battle, action="note", summary="first")
    rejected(lambda: LogEntry.objects.bulk_create([entry(battle, 1)]))
    second = append_entry(battle, action="note", summary="second")
    rejected(lambda: LogEntry.objects.filter(pk=second.pk).update(seq=1))
    # Each battle numbers its own log.
    other = Battle.objects.create(club=club, name="Other battle")
    LogEntry.objects.bulk_create([entry(other, 1)])


def test_sequence_numbers_start_at_1(battle):
    rejected(lambda: LogEntry.objects.bulk_create([entry(battle, 0)]))


def test_a_form_token_resolves_once_per_battle(battle, club):
    LogEntry.objects.bulk_create([entry(battle, 1, client_token="tap-1"), entry(battle, 2), entry(battle, 3)])
    rejected(lambda: LogEntry.objects.bulk_create([entry(battle, 4, client_token="tap-1")]))
    other = Battle.objects.create(club=club, name="Other battle")
    LogEntry.objects.bulk_create([entry(other, 1, client_token="tap-1")])


@pytest.mark.parametrize("change", [{"turn": 0}, {"status": "abandoned"}, {"status": "finished"}],
                         ids=["turn=0", "unknown-status", "finished-without-time"])
def test_impossible_battle_state_is_rejected(battle, change):
    rejected(lambda: Battle.objects.filter(pk=battle.pk).update(**change))


def test_session_numbers_are_unique_within_a_campaign(club):
    campaign = Campaign.objects.create(club=club, name="Campaign")
    Battle.objects.create(club=club, campaign=campaign, name="Session 1", session_number=1)
    rejected(lambda: Battle.objects.bulk_create([Battle(club=club, campaign=campaign, name="Again", session_number=1)]))
    # One-off battles have no campaign and no number to clash.
    Battle.objects.bulk_create([Battle(club=club, name="One-off", session_number=1),
                                Battle(club=club, name="Another one-off", session_number=1)])


@pytest.mark.parametrize("model", [Battle, Campaign, Scenario])
@pytest.mark.parametrize("change", [{"damage_variant": 4}, {"ruleset": "xx"}, {"weather": "fog"}],
                         ids=["damage-variant=4", "unknown-ruleset", "unknown-weather"])
def test_impossible_rules_options_are_rejected(club, model, change):
    row = model.objects.create(club=club, name="Row")
    rejected(lambda: model.objects.filter(pk=row.pk).update(**change))
