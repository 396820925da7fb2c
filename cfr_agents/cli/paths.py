"""Which arguments name files a command reads and which name files it writes; no output may be an input.

Every path argument of every command is declared with :func:`add_input` or :func:`add_output` (a
directory of outputs names the files it will hold; the path itself is checked too, for a command whose
output is a file in one mode and a directory in another). :func:`check_no_overwrite` runs in
:func:`cfr_agents.cli.main` before any command does work, so a command cannot skip it: an output that
resolves to one of the command's inputs -- through symlinks and hard links, as
:func:`cfr_agents.files.check_outputs` resolves outputs -- is refused with one line. A model file's
weights (``model.json`` -> ``model.safetensors``) count as an input beside it.
"""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from adapters.inputs import InputError

ROLE = "path_role"
"""The attribute an argument's :class:`argparse.Action` carries: ``"input"`` or ``"output"``."""
HOLDS = "path_holds"
"""On an output directory's action: the names of the files the command writes in it."""
UPDATES = "path_updates"
"""On an output's action: the ``dest`` of the one input it may name too (a file updated in place)."""


def add_input(command: argparse.ArgumentParser, *flags: str, **options: Any) -> argparse.Action:
    """``command.add_argument(*flags, **options)`` for files the command reads (an agent argument may
    also be a name; only a path that exists as a file counts)."""
    action = command.add_argument(*flags, **options)
    setattr(action, ROLE, "input")
    return action


def add_output(
    command: argparse.ArgumentParser,
    *flags: str,
    holds: Sequence[str] = (),
    updates: str | None = None,
    **options: Any,
) -> argparse.Action:
    """``command.add_argument(*flags, **options)`` for a file the command writes, or, with ``holds``,
    a directory it writes the files ``holds`` into. ``updates`` names the ``dest`` of an input this
    output may be, as ``train --checkpoint F --resume F`` continues one checkpoint file."""
    action = command.add_argument(*flags, **options)
    setattr(action, ROLE, "output")
    setattr(action, HOLDS, tuple(holds))
    setattr(action, UPDATES, updates)
    return action


def path_actions(parser: argparse.ArgumentParser, role: str) -> list[argparse.Action]:
    """The actions of ``parser`` (one command, not its sub-commands) declared with ``role``."""
    return [action for action in parser._actions if getattr(action, ROLE, None) == role]


def check_no_overwrite(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, in one line, an output of the command ``args`` were parsed for that is one of its inputs."""
    command = _command_parser(parser, args)
    inputs: dict[tuple[int, int], tuple[str, str]] = {}
    for action in path_actions(command, "input"):
        for shown in _values(args, action):
            given = Path(shown)
            for path in (given, given.with_suffix(".safetensors")) if given.name else (given,):  # "", ".", "/"
                identity = _identity(path)
                if identity is not None:
                    inputs.setdefault(identity, (action.dest, os.fspath(path)))
    for action in path_actions(command, "output"):
        holds: tuple[str, ...] = getattr(action, HOLDS)
        for shown in _values(args, action):
            for path in [Path(shown), *(Path(shown) / name for name in holds)]:
                identity = _identity(path)
                if identity is None or identity not in inputs:
                    continue
                dest, input_path = inputs[identity]
                if dest != getattr(action, UPDATES):
                    raise InputError(
                        f"{action.option_strings[0] if action.option_strings else action.dest} {shown!r} "
                        f"would overwrite the input {input_path!r}"
                        + (f" (it writes {path.name!r} there)" if path != Path(shown) else "")
                    )


def _command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost sub-command's parser that ``args`` came from (``plot curves`` -> its parser)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest, None)
            if chosen in action.choices:
                return _command_parser(action.choices[chosen], args)
    return parser


def _values(args: argparse.Namespace, action: argparse.Action) -> Iterator[str]:
    value = getattr(args, action.dest, None)
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        yield from (item for item in value if isinstance(item, str))


def _identity(path: Path) -> tuple[int, int] | None:
    """``(device, inode)`` of the regular file ``path`` resolves to, else ``None`` (missing, not a
    regular file, or a name the file system cannot look up)."""
    try:
        info = path.stat()
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None
