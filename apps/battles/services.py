"""Use cases of a battle: resolve an action, undo the last one, move to the next turn.

Each runs in one transaction: lock the battle row (so actions on one battle queue up), load and
lock its structures and units, call the rules, write back what changed, append the log entry and
bump the battle's version.
"""

import math
from dataclasses import dataclass

from django.db import transaction

from apps import rules
from apps.battles import snapshot as snap
from apps.battles.log import append_entry, new_entry
from apps.armies.models import Unit
from apps.battles.models import Battle, BattleStatus, LogEntry
from apps.campaigns import permissions
from apps.rules import ActionRefused, Effect, InputError, Outcome, UnknownReference

# Attacks made by a unit on the table: it must be the acting player's, carry the weapon and not have
# acted yet this turn; the attack uses up its action (in LaserGrenadiers, its initiative).
ATTACKS = {"ba_he", "ba_flamethrower", "dh_main_gun", "dh_flamethrower", "dh_small_arms", "lg_attack_structure",
           "lg_breach"}
# Fire at a fortification's crew: never at one's own.
DH_ATTACKS = {"dh_main_gun", "dh_flamethrower", "dh_small_arms"}
# A unit may be named, but need not be: fire called in from off the table (a spotter or gun), and
# damage rolls, which follow up an attack already logged or small-arms hits from the core rules.
ATTACKER_OPTIONAL = {"ba_indirect", "ba_barrage", "ba_damage"}
# Follow-ups of an attack already logged: the unit named fired then, so this needs and uses no action.
FOLLOW_UPS = {"ba_damage"}
# Actions a unit makes whether or not it has acted this turn: they neither need nor use its action.
USES_NO_ACTION = FOLLOW_UPS | {"move", "lg_morale", "correct_position"}
# Neither moving nor firing: a piece a blast incapacitated still makes its morale check, and is put right.
NOT_MOVING_OR_FIRING = {"lg_morale", "correct_position"}
# Actions whose own input names the unit that acts.
UNIT_ACTIONS = {"ba_tank_ram": "tank", "lg_fire_through": "unit", "lg_activate": "unit", "lg_morale": "unit",
                "move": "unit", "correct_position": "unit"}
# Unit fields that name the other side's piece, never the player's own: the piece that fired, to detect;
# the unit a Bolt Action shell, bomb or flame is aimed at (the core rules target enemy units).
# LaserGrenadiers fire into a structure hits "enemy troops" inside (seed 000), a list of them.
ENEMY_PIECE = {"lg_detect": "target", "ba_he": "target", "ba_indirect": "target", "ba_flamethrower": "target",
               "lg_attack_structure": "targets"}
# What Undo passes over to reach the newest action: undos themselves, and what the app logs about the
# battle rather than done to its pieces. A campaign session finished and reopened logs both on top of
# its last action; that action must stay undoable (a club reopens a session to put a roll right).
PASSED_OVER = frozenset({"undo", "setup", "session_start", "start", "finish", "reopen", "note"})
# Run by the server between turns, never chosen from the attack form.
TURN_ACTIONS = {"end_turn", "upkeep", "lg_initiative"}


@dataclass
class Prepared:
    """An action checked against the battle, ready to resolve or to price with exact odds."""

    action: str
    state: rules.BattleState  # the state the attack is resolved on (after any implicit activation)
    inputs: dict
    pre_effects: tuple  # effects before the attack's own: the LG activation, or marking the unit acted
    side: str
    attacker: str | None


def prepare(snapshot, user, action, inputs, attacker=None):
    """Check who may do what before any die is rolled; raise a RulesError naming the field."""
    spec = rules.spec(action)
    if action not in rules.ACTIONS or spec.ruleset not in (snapshot.battle.ruleset, "any"):
        raise UnknownReference("action", action, f"{action!r} is not an action of this battle's ruleset")
    state = snapshot.state
    inputs = {k: v for k, v in (inputs or {}).items() if v not in (None, "")}
    _finite_numbers(spec, inputs)
    role = permissions.role_in(user, snapshot.battle.club_id)
    mine = permissions.sides_commanded(user.pk, role, snapshot.armies.values())  # organisers command both
    if not mine:
        raise ActionRefused("action", action, "only the players of this battle and the club's organisers may act")
    if not permissions.may_take_action(role, action):
        # The correction is the one such action: said beside the piece chosen, with what moves a player's own.
        raise InputError("unit", inputs.get("unit"),
                         "Only the club's organisers correct a piece's position: it puts a piece where it stands "
                         "outside any activation, and nothing changed. Record your own piece's move with “Move a "
                         "unit”")
    pre, side = (), None

    attacker = str(attacker).strip() if attacker not in (None, "") else None
    if action in UNIT_ACTIONS:
        attacker = str(inputs.get(UNIT_ACTIONS[action], "")) or None
    if action in ATTACKS and attacker is None:
        raise InputError("attacker", None, "Choose the unit that attacks")
    if attacker is not None and action not in TURN_ACTIONS:
        unit = state.units.get(attacker)
        if unit is None:
            raise UnknownReference("attacker", attacker, f"there is no unit {attacker!r} in this battle")
        if unit.side not in mine:
            raise InputError("attacker", attacker, f"{unit.label} is side {unit.side}'s: you command "
                                                   f"side {' and '.join(sorted(mine))} in this battle")
        if unit.destroyed:
            raise InputError("attacker", attacker, f"{unit.label} has been destroyed")
        # Moving and firing; a morale check is neither, and an incapacitated piece still makes its own.
        if unit.incapacitated and action not in NOT_MOVING_OR_FIRING:
            raise InputError("attacker", attacker, rules.INCAPACITATED.format(unit.label))
        side = unit.side
        stuck = lg_cannot_fire_from(state, unit, action) if snapshot.battle.ruleset == "lg" else None
        if stuck:
            raise InputError("attacker", unit.id, stuck[1])
        target = state.structures.get(str(inputs.get("structure", "")))
        if action in DH_ATTACKS and target is not None and target.crew is not None and target.crew.side == side:
            raise InputError("structure", target.id, f"{target.label}'s crew is side {side}'s, as {unit.label} is: "
                                                     "choose an enemy fortification")
        weapon = inputs.get("weapon")
        called_in = action in ATTACKER_OPTIONAL and inputs.get("mode") == "air_strike"
        if weapon not in (None, "") and not called_in and str(weapon) not in unit.weapons:
            name = state.weapons[str(weapon)].name if str(weapon) in state.weapons else repr(weapon)
            raise InputError("weapon", weapon, f"{unit.label} does not carry {name}")
        if action in ATTACKS or (action in ATTACKER_OPTIONAL and action not in FOLLOW_UPS) or action == "ba_tank_ram":
            # A club that tracks orders with its own order dice may switch this check off.
            tracked = (snapshot.battle.options or {}).get("track_actions", True)
            if snapshot.battle.ruleset == "lg" and unit.id in state.sequence.team:
                # Activated with its fireteam, which moves and fires in that one initiative (seed 002).
                fires = rules.Outcome("lg_activate", tuple(rules.lg_sequence.fireteam_fires(state, unit)), (), "")
                pre, state = fires.effects, rules.apply(state, fires)
            elif tracked and (unit.acted or unit.id in state.sequence.activated):
                raise InputError("attacker", attacker, f"{unit.label} has already acted this turn")
            elif snapshot.battle.ruleset == "lg":
                try:
                    activation = rules.resolve("lg_activate", state, {"unit": unit.id}, rules.ScriptedDice(()))
                except ActionRefused as error:
                    # Whose initiative it is decides who may fire: said beside the attacker, not above the form.
                    raise InputError("attacker", unit.id, error.message) from None
                pre = activation.effects
                state = rules.apply(state, activation)
            elif tracked:
                pre = (Effect("activated", unit.id),)
    elif action in ("lg_pass", "lg_team_done") and state.sequence.initiative and state.sequence.initiative not in mine:
        what = "pass" if action == "lg_pass" else "say its fireteam is done"
        raise ActionRefused("action", action, f"only side {state.sequence.initiative} may {what} now")
    elif action == "dh_leave":
        structure = state.structures.get(str(inputs.get("structure")))
        if structure is not None and structure.crew is not None and structure.crew.side not in mine:
            raise InputError("structure", inputs.get("structure"), f"{structure.label}'s crew is not yours")
    if action in ENEMY_PIECE and len(mine) == 1:
        named = inputs.get(ENEMY_PIECE[action], "")
        for key in (named if isinstance(named, (list, tuple)) else str(named).split(",")):
            piece = state.units.get(str(key).strip())
            if piece is not None and piece.side in mine:
                raise InputError(ENEMY_PIECE[action], piece.id, f"{piece.label} is your own piece: choose one of "
                                                                "the other side's")
    if action in ("move", "correct_position"):
        _on_the_table(snapshot.battle, inputs)
    # Weapons must come from this battle's catalogue, never the rules' built-in examples.
    if "weapon" in inputs and str(inputs["weapon"]) not in state.weapons:
        raise UnknownReference("weapon", inputs["weapon"], f"unknown weapon {inputs['weapon']!r}")
    if side is None and len(mine) == 1:
        side = next(iter(mine))  # the log says whose action it was, even with no unit named
    return Prepared(action, state, inputs, tuple(pre), side or "", attacker)


def lg_cannot_fire_from(state, unit, action):
    """Why where a LaserGrenadiers piece stands forbids its attack, as (a note for the attacker list, the
    refusal), or None (`rules.lg.cannot_fire_from`; a breach is made at a wall, not fired out of a bunker)."""
    if action not in ATTACKS:
        return None
    stuck = rules.lg.cannot_fire_from(state, unit, shooting=action == "lg_attack_structure")
    return (stuck[0], stuck[1] + ". Move it out first") if stuck else None


def _finite_numbers(spec, inputs):
    """"nan" and "inf" parse as floats, and NaN passes every bound the rules check (each comparison is
    false): a spot at x = NaN got as far as the database write and failed there with a 500. Refused here,
    next to the field, like any other number out of bounds."""
    for f in spec.fields:
        if f.type != "float" or f.name not in inputs:
            continue
        try:
            number = float(str(inputs[f.name]).strip())
        except ValueError:
            continue  # not a number at all: the rules' own check says so
        if not math.isfinite(number):
            raise InputError(f.name, inputs[f.name], f"{f.label} must be a number, not {inputs[f.name]!r}")


def _on_the_table(battle, inputs):
    """The rules know no table: a spot to move to must be on this battle's. Moving into a structure,
    a spot left in the form is not where the unit goes."""
    if inputs.get("structure"):
        return
    for name, size in (("x", battle.table_width), ("y", battle.table_depth)):
        try:
            value = float(str(inputs.get(name, "")))
        except ValueError:
            continue  # missing or not a number: the rule's own checks say so
        if value > float(size):
            raise InputError(name, inputs[name], f"{value:g}″ is off the {float(size):g}″ table")


def _dice(dice_values, seed=None):
    if dice_values is None:
        return rules.RandomDice(seed)
    return rules.ScriptedDice([v for v in dice_values])


def _check_open(battle):
    if battle.status == BattleStatus.FINISHED:
        raise ActionRefused("action", None, "This battle has ended: nothing more can happen in it")
    if battle.status != BattleStatus.IN_PROGRESS:
        raise ActionRefused("action", None, "This battle has not started yet")


def _commit(snapshot, outcome, *, user, side, inputs, client_token=None):
    """Apply the outcome to the rows, log it with what undoing needs, and bump the version."""
    battle, before = snapshot.battle, snapshot.state
    after = rules.apply(before, outcome)
    structure_ids, unit_ids = snap.changed_ids(before, after)
    new_units = [u for u in unit_ids if u not in before.units]
    old_units = [u for u in unit_ids if u in before.units]
    statements = (snap.structure_updates(snapshot, [after.structures[k] for k in structure_ids])
                  + snap.unit_updates(snapshot, [after.units[k] for k in old_units]))
    sources = {e.target: e.ref for e in outcome.effects if e.type == "unit_created"}
    counts = {(e.target, e.ref): int(e.n) for e in outcome.effects if e.type == "carries"}
    created = snap.create_units(snapshot, [after.units[k] for k in new_units], sources, counts)
    undo = {
        "structures": {k: _without_sheet(before.structures[k].to_dict()) for k in structure_ids},
        "units": {k: before.units[k].to_dict() for k in old_units},
        "created_units": created,
        "battle": _battle_fields(battle),
    }
    battle.turn, battle.upkeep_turn = after.turn, after.upkeep_turn
    battle.sequence = after.sequence.to_dict()
    entry = new_entry(
        battle, action=outcome.action, summary=outcome.summary, turn=before.turn, actor=user, side=side,
        inputs=inputs, dice=[d.to_dict() for d in outcome.dice],
        outcome={"effects": [e.to_dict() for e in outcome.effects]}, undo=undo, client_token=client_token,
        last=getattr(battle, "log_last", False),
    )
    _write(battle, statements, entry, map_changed=bool(structure_ids or unit_ids))
    battle.log_last = (entry.seq, entry.entry_hash)
    # The rows now hold the state after the action: the answer can be drawn from them without loading
    # the battle again. Not when units were created: the snapshot does not hold those rows.
    snapshot.state = after
    entry.snapshot = None if created else snapshot
    return entry


def _without_sheet(d):
    d.pop("sheet", None)
    return d


BATTLE_UNDO_FIELDS = ("turn", "upkeep_turn", "sequence")


def _battle_fields(battle):
    return {name: getattr(battle, name) for name in BATTLE_UNDO_FIELDS}


def _write(battle, statements, entry, *, map_changed):
    """The rows' UPDATEs, the new log entry and the battle's version bump, in one round trip."""
    battle.version += 1
    fields = ["version", "turn", "upkeep_turn", "sequence", "log_head"]
    if map_changed:
        battle.map_version += 1
        fields.append("map_version")
    results = snap.run([*statements, snap.insert_statement(entry), snap.update_statement(battle, fields)])
    snap.saved(entry, results[-2][0][0])


def perform(*, battle_id, user, action, inputs, attacker=None, dice_values=None, client_token=None, seed=None):
    """Resolve one action and log it. `dice_values` are the players' own rolls in the order the rule
    asks for them; None lets the server roll. The same `client_token` twice resolves once: the second
    call returns the first call's entry.

    Raises a RulesError (with the field at fault) and changes nothing when the action is refused.
    """
    with transaction.atomic():
        snapshot = snap.lock_and_load(battle_id, client_token)
        battle = snapshot.battle
        if battle.done_entry_id is not None:
            return LogEntry.objects.get(pk=battle.done_entry_id)
        _check_open(battle)
        prepared = prepare(snapshot, user, action, inputs, attacker)
        if action in TURN_ACTIONS:
            raise ActionRefused("action", action, "turns are moved on with the turn buttons, not the attack form")
        outcome = rules.resolve(action, prepared.state, prepared.inputs, _dice(dice_values, seed))
        combined = Outcome(action, prepared.pre_effects + outcome.effects, outcome.dice,
                           _with_activation(prepared, outcome.summary))
        logged_inputs = {**prepared.inputs, **({"attacker": prepared.attacker} if prepared.attacker else {}),
                         "dice": "player" if dice_values is not None else "server"}
        return _commit(snapshot, combined, user=user, side=prepared.side, inputs=logged_inputs,
                       client_token=client_token)


def _with_activation(prepared, summary):
    """A LaserGrenadiers attack is its piece's activation (prepare): the log names the piece that fired —
    the one the other side may try to detect — and, as an "Activate" entry does, an owed morale check it
    made and who holds the initiative now."""
    activated = [e for e in prepared.pre_effects if e.type in ("activated", "fireteam_fires")]
    if not activated or prepared.action not in ATTACKS or prepared.state.options.ruleset != "lg":
        return summary
    unit = prepared.state.units[activated[0].target]
    words = [f"{unit.label}: {summary}"]
    if any(e.type == "morale_checked" for e in prepared.pre_effects):
        words.append("owed morale check made")
    words += [rules.lg_sequence.handed_to(prepared.state, e.target) for e in prepared.pre_effects if e.type == "initiative"]
    team = [prepared.state.units[t].label for t in prepared.state.sequence.team]
    if team:
        words.append(f"the fireteam keeps the initiative: {', '.join(team)} may still fire")
    return "; ".join(words)


def turn_action(*, battle_id, user, action, dice_values=None, client_token=None, seed=None, turn=None):
    """End the turn (and run the new turn's upkeep), run upkeep, or roll LaserGrenadiers initiative.

    `turn`, the turn the player was shown and confirmed ending: an End turn is refused once that turn
    has ended. Two phones tapping "End turn 2" a moment apart (both players agreeing the turn is over)
    must end turn 2, not turn 2 and then turn 3."""
    if action not in TURN_ACTIONS:
        raise UnknownReference("action", action, f"{action!r} is not a turn action")
    with transaction.atomic():
        snapshot = snap.lock_and_load(battle_id, client_token)
        battle = snapshot.battle
        if battle.done_entry_id is not None:
            return list(battle.log_entries.filter(client_token=client_token))
        _check_open(battle)
        if action == "end_turn" and turn is not None and turn != battle.turn:
            raise ActionRefused("action", action, f"Turn {turn} has already ended: nothing more was ended. This is "
                                                  f"turn {battle.turn}")
        prepare(snapshot, user, action, {})
        dice = _dice(dice_values, seed)
        entries = []
        steps = [action, "upkeep"] if action == "end_turn" else [action]
        for i, step in enumerate(steps):
            if step == "upkeep" and snapshot.state.upkeep_turn >= snapshot.state.turn:
                continue
            # Ending the turn rolls nothing: the players' dice are for the upkeep it runs.
            step_dice = _dice(None if dice_values is None else [], seed) if step == "end_turn" else dice
            outcome = rules.resolve(step, snapshot.state, {}, step_dice)
            token = client_token if i == 0 else None
            # The upkeep an "End turn" ran is part of it: one Undo takes both back (undo_last).
            inputs = {"follows": "end_turn"} if i > 0 else {}
            entries.append(_commit(snapshot, outcome, user=user, side="", inputs=inputs, client_token=token))
            if i + 1 < len(steps):
                snapshot = snap.load(battle, lock=True)
        return entries


def undo_last(*, battle_id, user, seq=None):
    """Undo the newest action that is not undone yet: restore the rows it changed to exactly what they
    were, mark it undone and log the undo. Only an organiser or the player who acted may undo. An
    "End turn" and the upkeep it ran are one action: both are undone, newest first, each logging its
    own undo. Returns the last undo entry, with all of them in `undos`.

    `seq`, the entry the player was shown and confirmed: only that one is undone. Two phones tapping
    "Undo #12" at once, or one tap sent again after a lost answer, must not undo #12 and then #11."""
    with transaction.atomic():
        battle = snap.lock_battle(battle_id)
        _check_open(battle)
        last = (battle.log_entries.filter(undone=False).exclude(action__in=PASSED_OVER)
                .select_related("actor").order_by("-seq").first())
        if seq is not None and (last is None or last.seq != seq):
            raise ActionRefused("undo", seq, _not_the_newest(battle, seq, last))
        if last is None:
            raise ActionRefused("undo", None, "There is nothing to undo")
        if not {"structures", "units"} & set(last.undo or {}):
            raise ActionRefused("undo", last.seq, f"#{last.seq} ({last.action.replace('_', ' ')}) cannot be undone")
        if last.seq <= battle.imported_seq:
            raise ActionRefused("undo", last.seq, f"#{last.seq} was played before this battle was imported: what it "
                                                  "changed is named as the old host's rows, so it cannot be undone here")
        if not permissions.may_undo(user.pk, permissions.role_in(user, battle.club_id), last.actor_id, last.action):
            if last.action in permissions.REROLL_ONLY_BY_ORGANISERS:
                raise ActionRefused("undo", last.seq, f"Only an organiser may undo #{last.seq}: undone, the roll "
                                                      "could be made again until it suits")
            raise ActionRefused("undo", last.seq, f"Only an organiser or {last.actor_name or 'the player who acted'} "
                                                  f"may undo #{last.seq}")
        targets = [last]
        if (last.inputs or {}).get("follows") == "end_turn":
            ended = battle.log_entries.filter(seq=last.seq - 1, action="end_turn", undone=False).first()
            if ended is not None:
                targets.append(ended)
        undos = [_undo(battle, target, user) for target in targets]
        entry = undos[-1]
        entry.undos = undos  # an End turn's takes two: the answer names both
        return entry


def _not_the_newest(battle, seq, last):
    asked = battle.log_entries.filter(seq=seq).first()
    if asked is not None and asked.undone:
        return f"#{seq} has already been undone: nothing more was undone"
    if last is not None and last.seq > seq:
        return (f"#{last.seq} was logged after #{seq}: nothing was undone. Undo #{last.seq} first "
                f"if that is what you mean")
    return f"#{seq} is not the newest action that can be undone: nothing was undone"


def _undo(battle, last, user):
    undo = last.undo
    Unit.objects.filter(pk__in=undo.get("created_units", []), army__battle=battle).delete()
    snapshot = snap.load(battle, lock=True)
    # Written by _commit on this host, so always this battle's rows; checked all the same, as a wrong
    # id would overwrite another piece (or battle) without a word.
    strangers = (set(undo.get("structures", {})) - set(snapshot.state.structures)) | \
        (set(undo.get("units", {})) - set(snapshot.state.units))
    if strangers:
        raise ActionRefused("undo", last.seq, f"#{last.seq} names pieces that are not in this battle "
                                              f"({', '.join(sorted(strangers))}): it cannot be undone")
    statements = (
        snap.structure_updates(snapshot, [rules.StructureState.from_dict(d) for d in undo.get("structures", {}).values()])
        + snap.unit_updates(snapshot, [rules.UnitState.from_dict(d) for d in undo.get("units", {}).values()])
        + [snap.update_statement(LogEntry(pk=last.pk, undone=True), ["undone"])])
    for name in BATTLE_UNDO_FIELDS:
        if name in undo.get("battle", {}):
            setattr(battle, name, undo["battle"][name])
    # What the undo takes back, as an action's record holds what it changed: a phone that drew the
    # undone entry redraws from it only the pieces it touched (views.touched_by), not the whole map.
    took_back = {
        "structures": {k: _without_sheet(snapshot.state.structures[k].to_dict()) for k in undo.get("structures", {})},
        "units": {k: snapshot.state.units[k].to_dict() for k in undo.get("units", {})},
        "created_units": undo.get("created_units", []),
    }
    entry = new_entry(battle, action="undo", summary=f"Undid #{last.seq}: {last.summary}", actor=user,
                      side=last.side, undoes=last, last=battle.log_last, undo={"took_back": took_back})
    _write(battle, statements, entry,
           map_changed=bool(undo.get("structures") or undo.get("units") or undo.get("created_units")))
    battle.log_last = (entry.seq, entry.entry_hash)
    return entry


def start(*, battle_id, user):
    """Move a battle from setting up to in progress (organisers only)."""
    with transaction.atomic():
        battle = Battle.objects.select_for_update().get(pk=battle_id)
        if not permissions.is_organiser(user, battle.club_id):
            raise ActionRefused("action", "start", "Only an organiser may start the battle")
        if battle.status != BattleStatus.SETUP:
            raise ActionRefused("action", "start", "The battle has already started")
        battle.status = BattleStatus.IN_PROGRESS
        append_entry(battle, action="start", summary=f"Battle starts (turn {battle.turn})", actor=user)
        battle.version += 1
        battle.save(update_fields=["status", "version"])
        return battle


def preview(*, battle, user, action, inputs, attacker=None):
    """Exact odds of the action as the form stands, from the same rule code that will resolve it."""
    snapshot = snap.load(battle)
    prepared = prepare(snapshot, user, action, inputs, attacker)
    return rules.odds(action, prepared.state, prepared.inputs)


def next_die(*, battle, user, action, inputs, attacker=None, dice_values=()):
    """The next physical die the players must roll for this action, or None when they have entered all."""
    snapshot = snap.load(battle)
    prepared = prepare(snapshot, user, action, inputs, attacker)
    return rules.next_die(action, prepared.state, prepared.inputs, list(dice_values))

