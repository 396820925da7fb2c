"""What users hand us, checked at the lowest layer: the errors they can fix (each message one line that names
the problem), optional extras that may be missing, and strict reading of their JSON files."""

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any


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


def read_json(path: str | Path, what: str, error: type[InputError] = InputError) -> Any:
    """The JSON value in the file ``path``; refused in one line, an ``error`` that calls the file ``what``
    (``"policy file"``), when the file is missing, a directory or unreadable, or its name is longer than
    the file system allows; when it is not UTF-8 or not JSON; or when it is JSON that Python will not
    hold: a key given twice, a number of more than 4,300 digits, nesting deeper than the recursion limit."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{what} {source!r} does not exist") from None
    except IsADirectoryError:
        raise error(f"{what} {source!r} is a directory") from None
    except (OSError, ValueError) as problem:  # ValueError: undecodable bytes, a NUL in the path
        raise error(f"cannot read {what} {source!r}: {getattr(problem, 'strerror', None) or problem}") from None
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as problem:
        raise error(f"{what} {source!r} is not valid JSON (line {problem.lineno}: {problem.msg})") from None
    except RecursionError:
        raise error(f"{what} {source!r} is not valid JSON (nested too deeply)") from None
    except ValueError as problem:  # a duplicate key, a 5,000-digit number
        raise error(f"{what} {source!r} is not valid JSON ({problem})") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict; a key given twice (JSON would keep the last) is refused."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen.add(key)
    return dict(pairs)
