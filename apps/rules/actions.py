"""The registry of every action and the one entry point the battle screen calls."""

from __future__ import annotations

from . import ba, dh, lg, lg_sequence, turns  # noqa: F401  (registers their actions)
from .dice import ScriptedDice
from .errors import MissingDie, UnknownReference
from .inputs import ACTIONS, ActionSpec, Field, Inputs, parse

__all__ = ["ACTIONS", "ActionSpec", "Field", "Inputs", "resolve", "available_actions", "spec", "next_die",
           "check_inputs"]


def spec(action_key) -> ActionSpec:
    try:
        return ACTIONS[action_key]
    except KeyError:
        raise UnknownReference("action", action_key, f"unknown action {action_key!r}") from None


def resolve(action_key, state, inputs, dice):
    """Resolve one action: an Outcome, or a RulesError naming the field at fault (never half an outcome)."""
    return spec(action_key).resolve(state, inputs, dice)


def check_inputs(action_key, state, inputs) -> Inputs:
    """The checked inputs, or the RulesError the form should show."""
    return parse(spec(action_key), state, inputs)


def available_actions(ruleset):
    return [s for s in ACTIONS.values() if s.ruleset in (ruleset, "any")]


def next_die(action_key, state, inputs, values=()):
    """The next die the players must roll after `values`, or None when those are all the action needs.

    The dice an action asks for can depend on earlier faces (the floor roll of indirect fire, a location
    that is not penetrated), so the form asks for them one at a time.
    """
    try:
        resolve(action_key, state, inputs, ScriptedDice(values))
    except MissingDie as missing:
        return missing.spec
    return None
