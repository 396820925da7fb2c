"""Errors caused by what a user asked for; each message is one line that names the problem."""


class InputError(ValueError):
    """A request the user can fix: unknown game, illegal action, bad policy file, ..."""


class UnknownGameError(InputError):
    """A game id that no adapter recognises."""


class UnsupportedGameError(InputError):
    """A game the interface cannot represent (not two-player zero-sum sequential perfect-recall)."""


class IllegalActionError(InputError):
    """An action that is not legal in the state it was applied to."""
