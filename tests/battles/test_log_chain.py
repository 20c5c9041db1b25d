"""The battle log is tamper-evident: editing, deleting or reordering any entry is detected, and
`manage.py verify_log` names the first entry that no longer matches."""

import pytest
from django.core.management import CommandError, call_command

from apps.battles import services
from apps.battles.log import first_broken_entry
from apps.battles.models import LogEntry
from tests.factories import make_world, weapon

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged():
    """A battle with five entries: two attacks, an undo, and a turn change with its upkeep."""
    w = make_world(ruleset="ba")
    he = weapon("ba", "he-d6", he_value="D6", heavy_weapon=True)
    house = w.structure("House")
    squad = w.unit("B", "Squad", floor=house.floors.get(level=0))
    guns = [w.unit("A", f"Gun {i}", kind="artillery", models=3, weapons=[he]) for i in range(2)]
    for gun, dice in zip(guns, (["2"], ["5"])):
        services.perform(battle_id=w.battle.pk, user=w.alice, action="ba_he", attacker=f"u{gun.pk}", dice_values=dice,
                         inputs={"weapon": f"w{he.pk}", "structure": f"s{house.pk}", "target": f"u{squad.pk}",
                                 "hit": "yes"})
    services.undo_last(battle_id=w.battle.pk, user=w.alice)
    services.turn_action(battle_id=w.battle.pk, user=w.alice, action="end_turn")
    assert LogEntry.objects.filter(battle=w.battle).count() == 5
    return w.battle


def verify(battle):
    try:
        call_command("verify_log", battle.pk)
    except CommandError as error:
        return str(error)
    return None


def test_an_untouched_log_verifies(logged, capsys):
    assert first_broken_entry(logged) is None
    assert verify(logged) is None
    assert "all 5 log entries match" in capsys.readouterr().out


@pytest.mark.parametrize("seq", [1, 3, 5])
@pytest.mark.parametrize("field, value", [("summary", "Nothing happened"), ("dice", [{"purpose": "forged", "faces": [6]}]), ("turn", 9),
                                          ("outcome", {"effects": [{"type": "collapse"}]}), ("actor_name", "mallory")])
def test_editing_any_entry_is_detected_at_that_entry(logged, seq, field, value):
    LogEntry.objects.filter(battle=logged, seq=seq).update(**{field: value})
    assert first_broken_entry(logged)[0] == seq
    assert f"first bad entry #{seq}" in verify(logged)


@pytest.mark.parametrize("seq", [1, 2, 4])
def test_deleting_an_entry_is_detected(logged, seq):
    LogEntry.objects.filter(battle=logged, seq=seq).update(undoes=None)
    LogEntry.objects.filter(battle=logged, undoes__seq=seq).update(undoes=None)
    LogEntry.objects.filter(battle=logged, seq=seq).delete()
    assert first_broken_entry(logged)[0] == seq
    assert f"#{seq}" in verify(logged)


def test_deleting_the_newest_entries_is_detected(logged):
    LogEntry.objects.filter(battle=logged, seq__gte=4).delete()
    assert first_broken_entry(logged)[0] == 4
    assert "#4" in verify(logged)


def test_reordering_entries_is_detected(logged):
    one, two = LogEntry.objects.get(battle=logged, seq=1), LogEntry.objects.get(battle=logged, seq=2)
    LogEntry.objects.filter(pk=one.pk).update(seq=99)
    LogEntry.objects.filter(pk=two.pk).update(seq=1)
    LogEntry.objects.filter(pk=one.pk).update(seq=2)
    assert first_broken_entry(logged)[0] == 1


def test_rewriting_an_entry_with_a_fresh_hash_breaks_the_next_one(logged):
    """Recomputing the edited entry's own hash is not enough: its successor names the old hash."""
    from apps.battles.log import entry_hash

    entry = LogEntry.objects.get(battle=logged, seq=2)
    entry.summary = "A different story"
    LogEntry.objects.filter(pk=entry.pk).update(summary=entry.summary, entry_hash=entry_hash(entry, entry.prev_hash))
    assert first_broken_entry(logged)[0] == 3


def test_marking_undone_does_not_break_the_chain(logged):
    """Undo marks an earlier entry; that flag is outside the hash on purpose (the undo entry itself is
    in the chain and names what it undid)."""
    assert LogEntry.objects.get(battle=logged, seq=2).undone
    assert first_broken_entry(logged) is None


def test_unknown_battle_is_a_clear_error():
    with pytest.raises(CommandError, match="no battle 424242"):
        call_command("verify_log", 424242)
