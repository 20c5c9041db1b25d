"""An organiser's correction of a piece's position (`correct_position`), end to end through the test client:
a piece placed wrong or knocked over at the table is put where it stands outside any activation, logged as
a correction, undone like any entry; a player is refused beside the piece and nothing changes."""

import uuid

import pytest

from apps.armies.models import Unit
from apps.battles.models import Battle, LogEntry
from apps.rules import SequenceState
from tests.battles.test_views import HTMX, lg, page, signed, text_of, uid, url, w  # noqa: F401 - fixtures

CORRECT = "Correct a piece's position (organisers)"


def where(unit):
    unit = Unit.objects.get(pk=unit.pk)
    return unit.x, unit.y, unit.floor_id


def offered_actions(client, world):
    form = page(client.get(url(world, "battle_form"), **HTMX)).find("attack-form")
    return [o.text() for o in form.find("id_action").find_all("option")]


def test_an_organiser_puts_a_piece_right_outside_its_activation_and_can_undo_it(client, lg):
    """In LaserGrenadiers "Move a unit" belongs to the piece's activation, organisers included: Alpha one,
    whose activation ended when side A activated Alpha two, could not be put back where it stood."""
    sequence = SequenceState(initiative="B", rolled=True, activated=(uid(lg.a1), uid(lg.a2)), starts=(0, 1)).to_dict()
    Battle.objects.filter(pk=lg.battle.pk).update(sequence=sequence, upkeep_turn=1)
    house = lg.structure("Farmhouse", floors=2, x=40, y=20)
    before = Battle.objects.get(pk=lg.battle.pk)
    signed(client, lg.organiser)
    assert CORRECT in offered_actions(client, lg)
    refused = client.post(url(lg, "battle_resolve"), {"action": "move", "unit": uid(lg.a1), "x": "12", "y": "8",
                                                      "client_token": str(uuid.uuid4())}, **HTMX)
    assert "side A has activated another piece since" in text_of(refused, "attack-form")

    response = client.post(url(lg, "battle_resolve"), {
        "action": "correct_position", "unit": uid(lg.a1), "x": "12", "y": "8", "client_token": str(uuid.uuid4())},
        **HTMX)
    assert response.status_code == 200
    entry = LogEntry.objects.get(battle=lg.battle, action="correct_position")
    assert entry.summary == ("Organiser corrected Alpha one's position to 12″, 8″ (it was at 10″, 10″) — not a "
                             "move: no initiative used")
    assert entry.summary in text_of(response, "attack-form")
    assert where(lg.a1) == (12, 8, None)
    after = Battle.objects.get(pk=lg.battle.pk)
    # Not a move: nobody's initiative, activation or pass streak changes, and no piece is marked.
    assert after.sequence == before.sequence
    assert not Unit.objects.filter(pk__in=[lg.a1.pk, lg.b1.pk], acted=True).exists()

    # Into a structure: its floor, as a move records it.
    client.post(url(lg, "battle_resolve"), {"action": "correct_position", "unit": uid(lg.b1), "structure":
                                            f"s{house.pk}", "floor": "1", "client_token": str(uuid.uuid4())}, **HTMX)
    assert where(lg.b1) == (None, None, house.floors.get(level=1).pk)
    assert Battle.objects.get(pk=lg.battle.pk).sequence == before.sequence

    # Undone like any entry: the newest first, each putting its piece back.
    for expected, unit in (((10, 10, None), lg.b1), ((10, 10, None), lg.a1)):
        undo_form = next(f for f in page(client.get(url(lg, "battle"))).find("turns").find_all("form")
                         if "undo-form" in f.attrs.get("class", ""))
        client.post(url(lg, "battle_undo"), {i.attrs["name"]: i.attrs.get("value", "")
                                             for i in undo_form.find_all("input")}, **HTMX)
        assert where(unit) == expected
    assert list(LogEntry.objects.filter(battle=lg.battle, action="correct_position")
                .values_list("undone", flat=True)) == [True, True]
    assert Battle.objects.get(pk=lg.battle.pk).sequence == before.sequence


@pytest.mark.parametrize("htmx", [True, False], ids=["htmx", "plain form"])
def test_a_player_is_refused_beside_the_piece_and_nothing_changes(client, w, htmx):
    """Bolt Action's "Move a unit" is open to a player for their own units; the correction, which sets a
    piece anywhere outside its turn, is the organisers' in every ruleset. A player's form does not offer it;
    one sent anyway is refused beside the piece."""
    signed(client, w.alice)
    assert CORRECT not in offered_actions(client, w)
    version, spot = Battle.objects.get(pk=w.battle.pk).version, where(w.rifles)
    response = client.post(url(w, "battle_resolve"), {
        "action": "correct_position", "unit": uid(w.rifles), "x": "2", "y": "3", "client_token": str(uuid.uuid4())},
        **(HTMX if htmx else {}))
    assert response.status_code == (200 if htmx else 422)
    form = page(response).find("attack-form")
    assert "id_unit_error" in form.find("id_unit").attrs["aria-describedby"]
    assert form.find("id_unit_error").text().strip() == (
        "Only the club's organisers correct a piece's position: it puts a piece where it stands outside any "
        "activation, and nothing changed. Record your own piece's move with “Move a unit”")
    assert where(w.rifles) == spot and Battle.objects.get(pk=w.battle.pk).version == version
    assert not LogEntry.objects.filter(battle=w.battle, action="correct_position").exists()
    # The organiser may, in Bolt Action too.
    signed(client, w.organiser)
    client.post(url(w, "battle_resolve"), {
        "action": "correct_position", "unit": uid(w.rifles), "x": "2", "y": "3", "client_token": str(uuid.uuid4())},
        **HTMX)
    assert where(w.rifles) == (2, 3, None)
    assert LogEntry.objects.get(battle=w.battle, action="correct_position").summary.endswith(
        "— not a move: no action used")
