"""Errors the rules raise. Each names the form field and the value that caused it, so the battle
screen can put the message next to the right input, and none is ever raised after part of an
outcome was produced: an action either returns a whole outcome or raises."""


class RulesError(ValueError):
    def __init__(self, field, value, message):
        super().__init__(message)
        self.field = field
        self.value = value
        self.message = message

    def to_dict(self):
        return {"error": type(self).__name__, "field": self.field, "value": _jsonable(self.value),
                "message": self.message}


class InputError(RulesError):
    """A form value that is missing, malformed or outside what the field accepts."""


class UnknownReference(InputError):
    """A weapon, unit, structure, floor or action that does not exist in this battle."""


class ActionRefused(RulesError):
    """The inputs are well-formed but the rules forbid the action (a pass while morale is owed,
    a medium tank ramming a house, a small arm against a fortification…)."""


class DiceError(RulesError):
    """Something wrong with the players' own dice."""


class MissingDie(DiceError):
    """The players have not entered the next die yet; `spec` says exactly which one."""

    def __init__(self, spec, index):
        super().__init__(f"dice[{index}]", None, f"{spec.label}: roll it and enter the result")
        self.spec = spec


class DieValueError(DiceError):
    pass


class UnusedDice(DiceError):
    pass


class OutcomeError(RulesError):
    """An outcome that does not fit the state it is applied to (stale, or from another battle)."""


def _jsonable(value):
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)
