"""Redoubt's rules engine: plain Python, no Django.

    from apps.rules import resolve, odds, apply, RandomDice, ScriptedDice
    outcome = resolve("ba_he", state, {"weapon": "he_3d6", "structure": "house", ...}, RandomDice())
    state = apply(state, outcome)
"""

from .actions import ACTIONS, ActionSpec, Field, available_actions, check_inputs, next_die, resolve, spec
from .dice import Dice, DieRoll, DieSpec, ExactDice, RandomDice, ScriptedDice, exact_odds
from .lg_sequence import INCAPACITATED, initiative_first, turn_goes_on
from .errors import (ActionRefused, DiceError, DieValueError, InputError, MissingDie, OutcomeError, RulesError,
                     UnknownReference, UnusedDice)
from .odds import Marginal, Odds, odds
from .outcome import Effect, Outcome, apply
from .state import (BattleOptions, BattleState, CrewState, CrewWeapon, EventRecord, Fire, Floor, FortSheet,
                    SequenceState, SheetLocation, SheetWeapon, StructureState, UnitState, WeaponProfile)

__all__ = [
    "ACTIONS", "ActionSpec", "Field", "available_actions", "check_inputs", "next_die", "resolve", "spec",
    "Dice", "DieRoll", "DieSpec", "ExactDice", "RandomDice", "ScriptedDice", "exact_odds",
    "ActionRefused", "DiceError", "DieValueError", "InputError", "MissingDie", "OutcomeError", "RulesError",
    "UnknownReference", "UnusedDice", "Marginal", "Odds", "odds", "Effect", "Outcome", "apply",
    "BattleOptions", "BattleState", "CrewState", "CrewWeapon", "EventRecord", "Fire", "Floor", "FortSheet",
    "SequenceState", "SheetLocation", "SheetWeapon", "StructureState", "UnitState", "WeaponProfile",
    "INCAPACITATED", "initiative_first", "turn_goes_on",
]
