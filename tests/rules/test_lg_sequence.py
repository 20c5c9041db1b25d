"""LaserGrenadiers sequence of play: seed 002."""

from dataclasses import replace

import pytest

from apps.rules import ActionRefused, ScriptedDice, apply, odds, resolve

from .builders import battle, unit


def play(state, key, inputs=None, dice=()):
    out = resolve(key, state, inputs or {}, ScriptedDice(dice))
    return apply(state, out), out


def game(events=False, fireteams=False, **kw):
    units = [unit("a1", "A", models=1, fireteam="red"), unit("a2", "A", models=1, fireteam="red"),
             unit("a3", "A", models=1), unit("b1", "B", models=1), unit("b2", "B", models=1)]
    # Turn 1's upkeep done: initiative comes after it (tested below).
    return replace(battle("lg", [], units, uncontrolled_events=events, fireteam_initiative=fireteams, **kw),
                   upkeep_turn=1)


def all_acted(state):
    """Every piece has had its initiative: the turn may end (LG-39)."""
    return state.replace(sequence=state.sequence.replace(activated=tuple(state.units)))


def test_lowest_roll_wins():
    state, out = play(game(), "lg_initiative", dice=[3, 7])
    assert state.sequence.initiative == "A" and out.effects[0].type == "initiative"
    state, _ = play(game(), "lg_initiative", dice=[9, 2])
    assert state.sequence.initiative == "B"


def test_ties_reroll_without_events_when_the_option_is_off():
    state, out = play(game(), "lg_initiative", dice=[6, 6, 2, 9])
    assert state.sequence.initiative == "A" and [e.type for e in out.effects] == ["initiative"]


def test_each_tie_is_an_event_alternating_from_the_winner():
    """Catalogue LG-42: 5/5, 2/2, 8/4 → B wins; event 1 affects B, event 2 affects A."""
    state, out = play(game(events=True), "lg_initiative", dice=[5, 5, 2, 2, 8, 4, 4, 7])
    events = [e for e in out.effects if e.type == "uncontrolled_event"]
    assert state.sequence.initiative == "B"
    assert [(e.target, e.n, e.note, e.ref) for e in events] == [
        ("B", 4, "Friendly smart mine", "B"), ("A", 7, "Enemy sniper", "B")]
    assert [x.affects for x in state.sequence.events] == ["B", "A"]


def test_each_initiative_die_says_what_it_decided():
    """The log shows every die with what it decided: the initiative pairs (a tie, or who won) and the
    event each event die picked. They showed only their faces, the outcome in the summary alone."""
    _, out = play(game(events=True), "lg_initiative", dice=[4, 4, 2, 7, 3])
    assert [(d.purpose, d.value, d.target) for d in out.dice] == [
        ("Initiative, side A", 4, "a tie: both roll again, uncontrolled event 1"),
        ("Initiative, side B", 4, "a tie: both roll again, uncontrolled event 1"),
        ("Initiative, side A (re-roll 1)", 2, "lowest wins: side A"),
        ("Initiative, side B (re-roll 1)", 7, "lowest wins: side A"),
        ("Uncontrolled event 1 for side A", 3, "Friendly jamming (benefits side A)")]
    _, out = play(game(), "lg_initiative", dice=[6, 6, 9, 2])
    assert [d.target for d in out.dice] == ["a tie: both roll again"] * 2 + ["lowest wins: side B"] * 2


def test_three_ties_come_back_to_the_winner():
    _, out = play(game(events=True), "lg_initiative", dice=[1, 1, 1, 1, 1, 1, 3, 2, 1, 10, 6])
    assert [(e.target, e.n) for e in out.effects if e.type == "uncontrolled_event"] == [("B", 1), ("A", 10), ("B", 6)]


def test_artillery_support_lasts_this_turn_and_the_next():
    state, _ = play(game(events=True), "lg_initiative", dice=[4, 4, 1, 2, 1])
    assert state.sequence.events[0].until_turn == 2
    state, _ = play(all_acted(state), "end_turn")
    assert len(state.sequence.events) == 1
    state, _ = play(all_acted(state), "end_turn")
    assert state.sequence.events == ()


def test_initiative_once_per_turn_and_no_exact_odds():
    state, _ = play(game(), "lg_initiative", dice=[1, 2])
    with pytest.raises(ActionRefused):
        play(state, "lg_initiative", dice=[1, 2])
    with pytest.raises(ActionRefused):
        odds("lg_initiative", game(), {})


def test_activation_alternates_and_marks_the_piece():
    state, _ = play(game(), "lg_initiative", dice=[1, 2])
    state, _ = play(state, "lg_activate", {"unit": "a1"})
    assert state.sequence.initiative == "B" and state.units["a1"].acted and "a1" in state.sequence.activated
    with pytest.raises(ActionRefused) as err:
        play(state, "lg_activate", {"unit": "a2"})
    assert err.value.field == "unit"
    state, _ = play(state, "lg_activate", {"unit": "b1"})
    with pytest.raises(ActionRefused):
        play(state, "lg_activate", {"unit": "a1"})


def test_a_piece_a_blast_incapacitated_is_not_activated():
    """LG-63: no move or fire for the rest of the turn."""
    state, _ = play(game(), "lg_initiative", dice=[1, 2])
    state = replace(state, units={**state.units, "a1": replace(state.units["a1"], incapacitated=True)})
    with pytest.raises(ActionRefused) as err:
        play(state, "lg_activate", {"unit": "a1"})
    assert err.value.field == "unit" and "may not move or fire until the turn ends" in err.value.message
    state, _ = play(state, "lg_activate", {"unit": "a3"})
    assert "a3" in state.sequence.activated


def test_a_side_with_nothing_left_lets_the_other_keep_going():
    state, _ = play(game(), "lg_initiative", dice=[2, 1])
    state, _ = play(state, "lg_activate", {"unit": "b1"})
    state, _ = play(state, "lg_activate", {"unit": "a3"})
    state, _ = play(state, "lg_activate", {"unit": "b2"})
    state, _ = play(state, "lg_activate", {"unit": "a1"})
    assert state.sequence.initiative == "A"  # B has activated everything


def test_the_last_activation_says_the_turn_may_end():
    """Once the last piece had its initiative the log read "Side A activates a2; side A has the initiative",
    leaving side A to wonder what it was to do with it: every piece has acted, and the turn may end (LG-39)."""
    state, _ = play(game(), "lg_initiative", dice=[2, 1])
    for piece in ("b1", "a1", "b2", "a3"):
        state, _ = play(state, "lg_activate", {"unit": piece})
    state, out = play(state, "lg_activate", {"unit": "a2"})
    assert out.summary == "Side A activates a2; every piece has had its initiative: the turn may end"
    assert play(state, "end_turn")[0].turn == 2


def test_a_side_whose_last_pieces_a_blast_incapacitated_has_nothing_left_to_move():
    """A-LG-22 with LG-63: b2 may not move or fire this turn, so once b1 has acted the initiative stays
    with A; it went to B, whose only choice was to pass."""
    state, _ = play(game(), "lg_initiative", dice=[2, 1])
    state = state.replace(units={**state.units, "b2": replace(state.units["b2"], incapacitated=True)})
    state, _ = play(state, "lg_activate", {"unit": "b1"})
    state, _ = play(state, "lg_activate", {"unit": "a1"})
    assert state.sequence.initiative == "A"


def test_fireteam_initiative_marks_the_whole_team():
    state, _ = play(game(fireteams=True), "lg_initiative", dice=[1, 2])
    state, out = play(state, "lg_activate", {"unit": "a1", "fireteam": "yes"})
    assert [e.target for e in out.effects if e.type == "activated"] == ["a1", "a2"]
    assert state.units["a2"].acted and not state.units["a3"].acted
    with pytest.raises(ActionRefused):
        play(play(game(), "lg_initiative", dice=[1, 2])[0], "lg_activate", {"unit": "a1", "fireteam": "yes"})


def test_a_fireteam_activated_together_keeps_the_initiative_until_every_member_has_fired():
    """Seed 002: "all members of a fireteam have the initiative at the same time and may move and fire
    before the opposing player gets the initiative again". The initiative went to side B at the team's
    activation, so B could act first and any action of B's ended the team's turn. It now stays with A:
    B may neither activate nor pass, A activates nobody else and nobody ends the turn, until each member
    has fired once (`fireteam_fires`); the last one hands the initiative on."""
    from apps.rules import Outcome, OutcomeError
    from apps.rules.lg_sequence import fireteam_fires

    state, _ = play(game(fireteams=True), "lg_initiative", dice=[1, 2])
    state, out = play(state, "lg_activate", {"unit": "a1", "fireteam": "yes"})
    assert state.sequence.team == ("a1", "a2") and state.sequence.initiative == "A"
    assert out.summary == "Side A activates a1, a2; fireteam red keeps the initiative until they have fired or " \
                          "side A says “Team done”"
    for key, inputs in (("lg_activate", {"unit": "b1"}), ("lg_activate", {"unit": "a3"}), ("lg_pass", {})):
        with pytest.raises(ActionRefused) as err:
            play(state, key, inputs)
        assert "side A's fireteam holds the initiative while a1, a2 may still fire" in err.value.message
    with pytest.raises(ActionRefused):  # not even once every piece has had its initiative
        play(all_acted(state), "end_turn")

    def fire(state, uid):
        return apply(state, Outcome("lg_attack_structure", tuple(fireteam_fires(state, state.units[uid])), (), ""))

    fired = fire(state, "a2")
    assert fired.sequence.team == ("a1",) and fired.sequence.initiative == "A"
    with pytest.raises(OutcomeError):  # it fires once
        fire(fired, "a2")
    with pytest.raises(ActionRefused):
        play(fired, "lg_activate", {"unit": "b1"})
    both = fire(fired, "a1")
    assert both.sequence.team == () and both.sequence.initiative == "B"
    assert play(both, "lg_activate", {"unit": "b1"})[0].sequence.initiative == "A"
    # A piece activated alone has no team to fire with, and the initiative passes at once.
    alone, _ = play(play(game(fireteams=True), "lg_initiative", dice=[1, 2])[0], "lg_activate", {"unit": "a1"})
    assert alone.sequence.team == () and alone.sequence.initiative == "B"


def test_team_done_hands_the_initiative_on_as_a_single_activation_would():
    """The side may stop before every member has fired (seed 002, Fireteam Initiative 7: "when the team
    is done with its move all of its members are done for the turn"): "Team done" ends the team's
    initiative, its members stay marked, and the initiative passes on; to nobody when B has nothing left
    to activate (A-LG-22)."""
    state, _ = play(game(fireteams=True), "lg_initiative", dice=[1, 2])
    state, _ = play(state, "lg_activate", {"unit": "a1", "fireteam": "yes"})
    done, out = play(state, "lg_team_done")
    assert [(e.type, e.target) for e in out.effects] == [("team_done", "A"), ("initiative", "B")]
    assert out.summary == "Side A's fireteam is done (a1, a2 did not fire); side B has the initiative"
    assert done.sequence.team == () and done.sequence.initiative == "B"
    assert {"a1", "a2"} <= set(done.sequence.activated)
    with pytest.raises(ActionRefused):  # no team is acting any more
        play(done, "lg_team_done")
    with pytest.raises(ActionRefused):
        play(done, "lg_activate", {"unit": "a2"})
    b_done = state.replace(sequence=state.sequence.replace(activated=state.sequence.activated + ("b1", "b2")))
    kept, out = play(b_done, "lg_team_done")
    assert kept.sequence.initiative == "A" and out.summary.endswith("; side A has the initiative")
    last = b_done.replace(sequence=b_done.sequence.replace(activated=b_done.sequence.activated + ("a3",)))
    ended, out = play(last, "lg_team_done")
    assert out.summary.endswith("every piece has had its initiative: the turn may end")
    assert play(ended, "end_turn")[0].turn == 2


def test_a_fireteam_activation_leaves_out_a_member_a_blast_incapacitated():
    """LG-63: an incapacitated piece "may not move or fire" this turn, so it takes no part in its team's
    initiative. It was marked as activating with the team and named in "Side A activates a1, a2"."""
    state, _ = play(game(fireteams=True), "lg_initiative", dice=[1, 2])
    state = state.replace(units={**state.units, "a2": state.units["a2"].replace(incapacitated=True)})
    state, out = play(state, "lg_activate", {"unit": "a1", "fireteam": "yes"})
    assert [e.target for e in out.effects if e.type == "activated"] == ["a1"]
    assert out.summary.startswith("Side A activates a1;")


def test_a_piece_eliminated_while_it_owes_a_morale_check_owes_it_no_more():
    """Eliminated by a blast (LG-63) with a morale check owed, a piece kept its side from passing and the
    turn from ending for good: it could not be activated, and "Mark a morale check" refuses a destroyed
    piece. The dead check no morale."""
    state, _ = play(game(), "lg_initiative", dice=[2, 1])
    state, _ = play(state, "lg_morale", {"unit": "b1"})
    state, _ = play(state, "lg_blast", {"weapon": "he_shell", "caught": "b1", "eliminated": "b1"})
    assert state.sequence.pending_morale == () and not state.units["b1"].morale_check_pending
    state, out = play(state, "lg_pass")
    assert out.summary == "Side B passes (1 in a row)"


def test_no_pass_while_morale_is_owed():
    state, _ = play(game(), "lg_initiative", dice=[1, 2])
    state, _ = play(state, "lg_morale", {"unit": "a3"})
    with pytest.raises(ActionRefused) as err:
        play(state, "lg_pass")
    assert "morale" in err.value.message
    # Activating the piece makes its check; then passing is allowed again.
    state, out = play(state, "lg_activate", {"unit": "a3"})
    assert "morale_checked" in [e.type for e in out.effects] and state.sequence.pending_morale == ()
    assert out.summary == "Side A activates a3 (owed morale check made: a3); side B has the initiative"


def test_four_passes_in_a_row_end_the_turn():
    """A-LG-7: A, B, A, B with no action between."""
    state, _ = play(game(), "lg_initiative", dice=[1, 2])
    state, _ = play(state, "lg_activate", {"unit": "a1"})
    for expected in ("B", "A", "B"):
        assert state.sequence.initiative == expected
        state, out = play(state, "lg_pass")
        assert "turn_ended" not in [e.type for e in out.effects]
    state, out = play(state, "lg_pass")
    assert out.effects[-1].type == "turn_ended"
    assert state.turn == 2 and state.sequence.initiative is None and not state.units["a1"].acted


def test_an_activation_breaks_the_pass_streak():
    state, _ = play(game(), "lg_initiative", dice=[1, 2])
    state, _ = play(state, "lg_pass")
    state, _ = play(state, "lg_pass")
    state, _ = play(state, "lg_activate", {"unit": "a1"})
    assert state.sequence.pass_streak == 0


def test_turn_cannot_end_while_morale_is_owed():
    state, _ = play(game(), "lg_initiative", dice=[1, 2])
    state, _ = play(state, "lg_morale", {"unit": "b1"})
    with pytest.raises(ActionRefused):
        play(state, "end_turn")
    for _ in range(3):
        state, _ = play(state, "lg_pass") if state.sequence.initiative == "A" else \
            play(state, "lg_activate", {"unit": "b1"})
    assert state.turn == 1


def test_the_turn_goes_on_while_a_piece_may_still_act():
    """LG-39: the turn is over when both sides have moved or fired all their pieces, or when both pass twice
    in a row; "End turn" tapped on one phone is neither, while the other side still has pieces to move."""
    state, _ = play(game(), "lg_initiative", dice=[1, 2])
    state, _ = play(state, "lg_activate", {"unit": "a1"})
    with pytest.raises(ActionRefused) as err:
        play(state, "end_turn")
    assert err.value.field == "action" and "a2, a3, b1, b2" in err.value.message
    assert "both sides pass twice in a row" in err.value.message
    for piece in ("b1", "a2", "b2"):
        state, _ = play(state, "lg_activate", {"unit": piece})
    # a3 is left: destroyed or incapacitated, it can no longer act and holds nothing open.
    for left in ({"destroyed": True}, {"incapacitated": True}):
        done = state.replace(units={**state.units, "a3": replace(state.units["a3"], **left)})
        after, out = play(done, "end_turn")
        assert out.effects[0].type == "turn_ended" and after.turn == 2
    after, _ = play(state, "lg_activate", {"unit": "a3"})
    assert play(after, "end_turn")[0].turn == 2


def test_a_turn_opens_with_its_upkeep_then_initiative():
    """Fires grow and collapse checks come at the start of the turn, before the sides roll for it: a turn
    ended by four passes must run its upkeep before the next initiative, as "End turn" does."""
    state = game().replace(upkeep_turn=0)
    with pytest.raises(ActionRefused, match="run the start-of-turn upkeep for turn 1 first"):
        resolve("lg_initiative", state, {}, ScriptedDice([3, 7]))
    state, _ = play(state, "upkeep")
    state, _ = play(state, "lg_initiative", dice=[3, 7])
    for _ in range(4):
        state, _ = play(state, "lg_pass")
    assert state.turn == 2 and state.upkeep_turn == 1
    with pytest.raises(ActionRefused, match="for turn 2 first"):
        resolve("lg_initiative", state, {}, ScriptedDice([3, 7]))
    # A piece's player asking to act (or pass) meanwhile is told the same order, not only "roll first".
    for action, inputs in (("lg_activate", {"unit": "a1"}), ("lg_pass", {})):
        with pytest.raises(ActionRefused, match="run the start-of-turn upkeep for turn 2, then roll for initiative"):
            resolve(action, state, inputs, ScriptedDice([]))
    state, _ = play(state, "upkeep")
    with pytest.raises(ActionRefused, match="roll for initiative first"):
        resolve("lg_pass", state, {}, ScriptedDice([]))
    assert play(state, "lg_initiative", dice=[9, 2])[0].sequence.initiative == "B"


def test_a_piece_moves_only_in_its_sides_latest_activation():
    """"Move a unit" never asked whose initiative it was: with side A's piece mid-activation, side B
    recorded a move of a piece it had not activated, and a fireteam's turn could be moved through. Moving
    is what a piece does with its initiative (seed 002, 1a, 2d), so a move belongs to its side's latest
    activation; a piece done earlier in the turn does nothing more."""
    def move(state, who):
        return play(state, "move", {"unit": who, "x": "3", "y": "4"})

    start = game()
    # Before turn 1's initiative roll, the players place their pieces.
    assert move(start, "b1")[1].effects
    state, _ = play(start, "lg_initiative", dice=[1, 2])  # side A wins
    with pytest.raises(ActionRefused, match="side A activates it first") as err:
        move(state, "a3")
    assert err.value.field == "unit"
    state, _ = play(state, "lg_activate", {"unit": "a3"})  # side B has the initiative now
    assert move(state, "a3")[1].effects  # recorded after the initiative passed on: still a3's activation
    with pytest.raises(ActionRefused, match="side B activates it first"):
        move(state, "b1")
    state, _ = play(state, "lg_activate", {"unit": "b1"})
    assert move(state, "b1")[1].effects and move(state, "a3")[1].effects
    state, _ = play(state, "lg_activate", {"unit": "a1"})
    with pytest.raises(ActionRefused, match="a3 has had its initiative this turn, and side A has activated "
                                            "another piece since"):
        move(state, "a3")


def test_no_move_outside_a_fireteam_holding_the_initiative():
    state, _ = play(game(fireteams=True), "lg_initiative", dice=[2, 1])  # side B wins
    state, _ = play(state, "lg_activate", {"unit": "b1"})
    state, _ = play(state, "lg_activate", {"unit": "a1", "fireteam": "yes"})
    assert play(state, "move", {"unit": "a2", "x": "3", "y": "4"})[1].effects
    with pytest.raises(ActionRefused, match="side A's fireteam holds the initiative while a1, a2 may still fire"):
        play(state, "move", {"unit": "b1", "x": "3", "y": "4"})
    state, _ = play(state, "lg_team_done")
    # The team is done firing; its members' moves are still that activation's.
    assert play(state, "move", {"unit": "a1", "x": "3", "y": "4"})[1].effects
    assert play(state, "move", {"unit": "b1", "x": "3", "y": "4"})[1].effects


def test_between_turns_nobody_moves():
    state = game().replace(turn=2, upkeep_turn=1)
    with pytest.raises(ActionRefused, match="nobody has it yet: run the start-of-turn upkeep for turn 2"):
        play(state, "move", {"unit": "a1", "x": "3", "y": "4"})


@pytest.mark.parametrize("together", [False, True], ids=["a2 alone", "a2 with its fireteam"])
def test_two_activations_of_one_fireteam_in_a_row_are_two_activations(together):
    """`moving_now` took the trailing run of one fireteam among a side's activations for one activation: a1
    activated alone, then its teammate a2 (alone, or its fireteam together, which by then is a2 alone), and
    a1 could be moved again, though side A had selected another piece since (seed 002, 2d)."""
    state, _ = play(game(fireteams=True), "lg_initiative", dice=[1, 2])  # side A wins
    state, _ = play(state, "lg_activate", {"unit": "a1"})
    state, _ = play(state, "lg_activate", {"unit": "b1"})
    state, _ = play(state, "lg_activate", {"unit": "a2", "fireteam": "yes" if together else "no"})
    assert play(state, "move", {"unit": "a2", "x": "3", "y": "4"})[1].effects
    if together:
        state, _ = play(state, "lg_team_done")
        assert play(state, "move", {"unit": "a2", "x": "3", "y": "4"})[1].effects
    with pytest.raises(ActionRefused, match="a1 has had its initiative this turn, and side A has activated "
                                            "another piece since") as err:
        play(state, "move", {"unit": "a1", "x": "3", "y": "4"})
    assert err.value.field == "unit"

