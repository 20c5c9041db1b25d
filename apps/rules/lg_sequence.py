"""LaserGrenadiers sequence of play (seed 002): initiative, uncontrolled events, activation, passing."""

from __future__ import annotations

from . import tables
from .inputs import Field, action, refuse
from .outcome import Effect

SOURCE = "seed 002_036456bcf1519ecb.txt"
# LG-57: a piece a blast incapacitated "may not move or fire for the rest of the turn".
INCAPACITATED = "{} was incapacitated by a blast: it may not move or fire until the turn ends"


def _owing(state, side):
    return [state.units[uid] for uid in state.sequence.pending_morale
            if uid in state.units and state.units[uid].side == side]


def initiative_first(state):
    """What must come before anyone acts this turn: its upkeep (a turn ended by four passes starts with
    it), then the initiative roll."""
    if state.upkeep_turn < state.turn:
        return f"run the start-of-turn upkeep for turn {state.turn}, then roll for initiative"
    return "roll for initiative first"


def still_to_act(state):
    """The pieces that may still have their initiative this turn, by side and name: neither destroyed,
    nor activated, nor incapacitated by a blast (it may not move or fire until the turn ends)."""
    seq = state.sequence
    return sorted((u for u in state.units.values() if not u.destroyed and not u.incapacitated
                   and u.id not in seq.activated), key=lambda u: (u.side, u.label))


def team_holds(state):
    """Why a fireteam activated together still holds its side's initiative, or "": its members "may move
    and fire before the opposing player gets the initiative again" (seed 002, Fireteam Initiative 2), so
    nobody else acts, passes or ends the turn until each has fired or its side says the team is done."""
    team = [state.units[t] for t in state.sequence.team if t in state.units]
    if not team:
        return ""
    side, names = team[0].side, ", ".join(u.label for u in team)
    return (f"side {side}'s fireteam holds the initiative while {names} may still fire: side {side} fires with "
            f"{'them' if len(team) > 1 else 'it'} or says “Team done” first")


def activations(state):
    """This turn's activations in order, each the ids of the pieces it activated: one piece, or a fireteam
    activated together (`SequenceState.starts`). The pieces of a turn begun before activations were
    recorded apart have no start: those are grouped as they were then, a run of one side's fireteam as one."""
    seq = state.sequence
    cuts = []
    for i, uid in enumerate(seq.activated[:seq.starts[0] if seq.starts else None]):
        u, prev = state.units.get(uid), state.units.get(seq.activated[i - 1]) if i else None
        if not (u and prev and u.fireteam and (u.side, u.fireteam) == (prev.side, prev.fireteam)):
            cuts.append(i)
    cuts = sorted(set(cuts) | set(seq.starts))
    return [seq.activated[a:b] for a, b in zip(cuts, cuts[1:] + [len(seq.activated)])]


def moving_now(state, side):
    """The pieces of `side` whose activation is its latest this turn: the piece it activated last, or the
    members of the fireteam it activated together last."""
    for ids in reversed(activations(state)):
        mine = [state.units[x] for x in ids if x in state.units and state.units[x].side == side]
        if mine:
            return mine
    return []


def cannot_move(state, u):
    """Why a LaserGrenadiers piece may not be recorded as moving now, or "". Moving is what a piece does
    with its initiative (seed 002, 1a: "Having the initiative means that a player can move and/or fire one
    of his pieces"; 2d; a marked piece "can perform no further action during the current turn"), so a move
    belongs to its side's latest activation. Not the side's previous ones: once that side has selected
    another piece, the earlier one is done. Before turn 1's initiative roll nobody has acted yet, and moves
    place the pieces for the start."""
    seq = state.sequence
    if not seq.rolled:
        if state.turn == 1 and not seq.activated:
            return ""
        return f"{u.label} moves with its initiative, and nobody has it yet: {initiative_first(state)}"
    if seq.team and u.id not in {x.id for x in moving_now(state, state.units[seq.team[0]].side)}:
        return team_holds(state)
    if u.id in {x.id for x in moving_now(state, u.side)}:
        return ""
    if u.id in seq.activated:
        return (f"{u.label} has had its initiative this turn, and side {u.side} has activated another piece "
                "since: a moved piece can do nothing more this turn (seed 002)")
    return (f"{u.label} moves with its own initiative: side {u.side} activates it first (“Activate (move only)”), "
            "then records its move (seed 002, 2a–d)")


def next_side(state, side, done=()):
    """Who has the initiative once `side` has acted: the other side, unless it has no piece left to
    activate (A-LG-22); `done`, pieces acting now that `state` does not mark yet."""
    other = state.sequence.other(side)
    return other if any(x.side == other and x.id not in done for x in still_to_act(state)) else side


def handed_to(state, side, done=()):
    """How an entry that hands the initiative on ends: to whom, or that the turn may end."""
    if not any(x.id not in done for x in still_to_act(state)):
        return "every piece has had its initiative: the turn may end"
    return f"side {side} has the initiative"


def fireteam_fires(state, unit):
    """A member of the fireteam acting now makes its attack, in the team's initiative (no activation of
    its own); the last of them to fire hands the initiative on, as a single piece's activation does."""
    effects = [Effect("fireteam_fires", unit.id)]
    if not [t for t in state.sequence.team if t != unit.id]:
        effects.append(Effect("initiative", next_side(state, unit.side)))
    return effects


def turn_goes_on(state):
    """Why a LaserGrenadiers turn may not be ended yet (LG-39), or "": it ends when both sides have
    moved or fired all their pieces, or when both pass twice in a row (which ends it by itself:
    lg_pass), and never while a morale check is owed. A side that leaves pieces idle passes."""
    seq = state.sequence
    if team_holds(state):
        return team_holds(state)
    if seq.pending_morale:
        owing = [state.units[u].label for u in seq.pending_morale if u in state.units]
        return f"the turn cannot end while morale checks are owed ({', '.join(owing)})"
    left = still_to_act(state)
    if left:
        names = ", ".join(u.label for u in left[:4]) + (f" and {len(left) - 4} more" if len(left) > 4 else "")
        return (f"the turn goes on while pieces may still act ({names}): it ends when every piece has had its "
                "initiative, or when both sides pass twice in a row")
    return ""


@action(
    "lg_initiative", "lg", "Roll for initiative",
    source=f"{SOURCE} 'Determining initiative', 'Uncontrolled Events' (LG-32, LG-33, LG-41..44, A-LG-20)",
    exact=False,
    help="Each side rolls a d10, lowest wins; ties are re-rolled (each tie is an uncontrolled event when that "
         "option is on)",
)
def resolve_lg_initiative(state, inp, dice):
    seq, events_on = state.sequence, state.options.uncontrolled_events
    if seq.rolled:
        refuse("action", "lg_initiative", f"initiative was already rolled in turn {state.turn}")
    if state.upkeep_turn < state.turn:
        # A turn opens with its upkeep (fires grow, burning structures attack, collapse checks), then
        # initiative; "End turn" runs both in order, a turn ended by four passes leaves the upkeep to its
        # own button, so the players may still roll its dice themselves.
        refuse("action", "lg_initiative", f"run the start-of-turn upkeep for turn {state.turn} first")
    a, b = seq.sides
    ties, rolls = 0, []
    while True:
        again = f" (re-roll {len(rolls)})" if rolls else ""
        ra = dice.die(10, f"Initiative, side {a}{again}")
        rb = dice.die(10, f"Initiative, side {b}{again}")
        rolls.append(f"{ra}/{rb}")
        if ra != rb:
            dice.decided(f"lowest wins: side {a if ra < rb else b}", last=2)
            break
        ties += events_on
        dice.decided("a tie: both roll again" + (f", uncontrolled event {ties}" if events_on else ""), last=2)
    winner = a if ra < rb else b
    effects = [Effect("initiative", winner)]
    words = [f"Initiative {', '.join(rolls)}: side {winner} wins"]
    # Event 1 affects the winner, event 2 the other side, and so on alternately (LG-42).
    for i in range(ties):
        affected = winner if i % 2 == 0 else seq.other(winner)
        roll = dice.die(10, f"Uncontrolled event {i + 1} for side {affected}")
        row = tables.UNCONTROLLED_EVENTS[roll - 1]
        helped = affected if row["beneficiary"] == "player" else seq.other(affected)
        dice.decided(f"{row['name']} (benefits side {helped})")
        effects.append(Effect("uncontrolled_event", affected, roll, ref=helped, note=row["name"]))
        words.append(f"event {i + 1} for side {affected}: {roll} {row['name']} (benefits side {helped})")
    return effects, "; ".join(words)


@action(
    "lg_activate", "lg", "Activate a piece",
    Field("unit", "unit", "Piece"),
    Field("fireteam", "bool", "Whole fireteam?", default=False, help="Fireteam initiative (optional rule)"),
    source=f"{SOURCE} 'Using the initiative', 'Marking moved pieces', 'Fireteam Initiative' (LG-36..38, "
           "LG-45, LG-48, A-LG-22)",
    rolls=False,  # marks who acts: nothing to roll, no odds
)
def resolve_lg_activate(state, inp, dice):
    seq, u = state.sequence, inp["unit"]
    if seq.initiative is None:
        refuse("action", "lg_activate", initiative_first(state))
    if seq.team:
        refuse("unit", u.id, team_holds(state))
    if u.side != seq.initiative:
        refuse("unit", u.id, f"side {seq.initiative} holds the initiative, not side {u.side}")
    if u.id in seq.activated:
        refuse("unit", u.id, f"{u.label} has already had its initiative this turn")
    if u.incapacitated:
        refuse("unit", u.id, INCAPACITATED.format(u.label))
    team = [u]
    if inp["fireteam"]:
        if not state.options.fireteam_initiative:
            refuse("fireteam", True, "fireteam initiative is not in use in this battle")
        if not u.fireteam:
            refuse("fireteam", True, f"{u.label} is not in a fireteam")
        # A member a blast incapacitated may not move or fire this turn (LG-63): it sits the team's turn out.
        team = sorted((x for x in state.units.values() if x.side == u.side and x.fireteam == u.fireteam
                       and not x.destroyed and not x.incapacitated and x.id not in seq.activated),
                      key=lambda x: x.id)
    effects = []
    for x in team:
        # The piece's owed morale check is made as part of its activation (LG-36).
        if x.id in seq.pending_morale:
            effects.append(Effect("morale_checked", x.id))
        effects.append(Effect("activated", x.id, note=f"fireteam {u.fireteam}" if inp["fireteam"] else ""))
    done = {x.id for x in team}
    names = ", ".join(x.label for x in team)
    checked = [x.label for x in team if x.id in seq.pending_morale]
    # The log is the table's record: say that the owed check was made, or nobody can tell why the
    # side may pass again.
    morale = f" (owed morale check made: {', '.join(checked)})" if checked else ""
    if inp["fireteam"]:
        # The team moves and fires before the other side gets the initiative again (seed 002): it stays
        # with this side until every member has fired or the side says the team is done (lg_team_done).
        effects.append(Effect("initiative", u.side))
        return effects, (f"Side {u.side} activates {names}{morale}; fireteam {u.fireteam} keeps the initiative "
                         f"until {'they have' if len(team) > 1 else 'it has'} fired or side {u.side} says “Team done”")
    nxt = next_side(state, u.side, done)
    effects.append(Effect("initiative", nxt))
    return effects, f"Side {u.side} activates {names}{morale}; {handed_to(state, nxt, done)}"


@action(
    "lg_team_done", "lg", "Team done",
    source=f"{SOURCE} 'Fireteam Initiative' 2, 7 (LG-45, LG-48)",
    rolls=False,  # ends the team's initiative: nothing to roll, no odds
    help="The fireteam activated together has moved and fired all it will: the initiative passes on",
)
def resolve_lg_team_done(state, inp, dice):
    seq = state.sequence
    team = [state.units[t] for t in seq.team if t in state.units]
    if not team:
        refuse("action", "lg_team_done", "no fireteam is acting now: “Team done” ends a fireteam's initiative")
    side = team[0].side
    nxt = next_side(state, side)
    # Its members stay marked (LG-48: "when the team is done with its move all of its members are done for
    # the turn"); only the chance to fire ends.
    return [Effect("team_done", side), Effect("initiative", nxt)], \
        f"Side {side}'s fireteam is done ({', '.join(u.label for u in team)} did not fire); {handed_to(state, nxt)}"


@action(
    "lg_pass", "lg", "Pass the initiative",
    source=f"{SOURCE} 'Determining initiative' d, 'The Tactics of Passing', end of turn (LG-34, LG-35, LG-39, "
           "A-LG-7, A-LG-21)",
    rolls=False,  # hands the initiative over: nothing to roll, no odds
)
def resolve_lg_pass(state, inp, dice):
    seq = state.sequence
    side = seq.initiative
    if side is None:
        refuse("action", "lg_pass", initiative_first(state))
    if seq.team:
        refuse("action", "lg_pass", team_holds(state))
    owing = _owing(state, side)
    if owing:
        refuse("action", "lg_pass", f"side {side} may not pass: {', '.join(u.label for u in owing)} must still "
                                    "check morale")
    streak = seq.pass_streak + 1
    effects = [Effect("passed", side, streak), Effect("initiative", seq.other(side))]
    words = f"Side {side} passes ({streak} in a row)"
    if streak >= tables.LG_PASSES_TO_END_TURN:
        if seq.pending_morale:
            return effects, words + "; the turn cannot end while morale checks are owed"
        return effects + [Effect("turn_ended", side)], words + f": both sides passed twice, turn {state.turn} ends"
    return effects, words


@action(
    "lg_morale", "lg", "Mark a morale check owed or made",
    Field("unit", "unit", "Piece"),
    Field("owed", "bool", "Owes a morale check?", default=True),
    source=f"{SOURCE} 'Morale Check', passing restriction (LG-35, LG-36)",
    rolls=False,  # the players' results, entered: nothing to roll, no odds
)
def resolve_lg_morale(state, inp, dice):
    u, owed = inp["unit"], inp["owed"]
    return [Effect("morale_owed" if owed else "morale_checked", u.id)], \
        f"{u.label} {'owes' if owed else 'has made'} a morale check"
