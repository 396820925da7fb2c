"""Errors caused by what a user asked for; each message is one line that names the problem."""

import importlib
from types import ModuleType


class InputError(ValueError):
    """A request the user can fix: unknown game, illegal action, bad policy file, ..."""


class UnknownGameError(InputError):
    """A game id that no adapter recognises."""


class UnsupportedGameError(InputError):
    """A game the interface cannot represent (not two-player zero-sum sequential perfect-recall)."""


class IllegalActionError(InputError):
    """An action that is not legal in the state it was applied to."""


class MissingExtraError(InputError):
    """An optional dependency is not installed: ``torch`` (``[nfsp]``), ``matplotlib`` (``[plot]``),
    ``ray`` (``[ray]``), ... The message names the extra to install."""


def require_extra(module: str, extra: str, needed_by: str) -> ModuleType:
    """``import module``, or a one-line :class:`MissingExtraError`:
    ``"<needed_by> needs <module>, which is not installed: pip install 'cfr-agents[<extra>]'"``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{needed_by} needs {module}, which is not installed: pip install 'cfr-agents[{extra}]'"
        ) from None
