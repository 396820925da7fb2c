"""Which arguments name files a command reads and which name files it writes; no output may be an input.

Every path argument of every command is declared with :func:`add_input` or :func:`add_output` (a
directory of outputs names the files it will hold; the path itself is checked too, for a command whose
output is a file in one mode and a directory in another). :func:`check_no_overwrite` runs in
:func:`cfr_agents.cli.main` before any command does work, so a command cannot skip it: it gathers the
files the command reads and hands each output to :func:`cfr_agents.files.check_no_overwrite`. The files
read are each input argument's file and what loading it reads beside it -- a model sidecar's weights, found
as the loader finds them (:func:`eval.opponents.nfsp.weights_read`) -- and the tree cache's entries.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cfr_agents import files, tree_cache

ROLE = "path_role"
"""The attribute an argument's :class:`argparse.Action` carries: ``"input"`` or ``"output"``."""
HOLDS = "path_holds"
"""On an output directory's action: the names of the files the command writes in it."""
BESIDE = "path_beside"
"""On an output's action: the suffixes of the files the command may write beside it (``model.safetensors``)."""
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
    beside: Sequence[str] = (),
    updates: str | None = None,
    **options: Any,
) -> argparse.Action:
    """``command.add_argument(*flags, **options)`` for a file the command writes, or, with ``holds``,
    a directory it writes the files ``holds`` into. ``beside`` lists the suffixes of files it may write
    next to it (a model sidecar's weights: ``model.json`` -> ``model.safetensors``). ``updates`` names the
    ``dest`` of an input this output may be, as ``train --checkpoint F --resume F`` continues one
    checkpoint file."""
    action = command.add_argument(*flags, **options)
    setattr(action, ROLE, "output")
    setattr(action, HOLDS, tuple(holds))
    setattr(action, BESIDE, tuple(beside))
    setattr(action, UPDATES, updates)
    return action


def path_actions(parser: argparse.ArgumentParser, role: str) -> list[argparse.Action]:
    """The actions of ``parser`` (one command, not its sub-commands) declared with ``role``."""
    return [action for action in parser._actions if getattr(action, ROLE, None) == role]


def check_no_overwrite(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, in one line, an output of the command ``args`` were parsed for that is one of the files it reads."""
    command = command_parser(parser, args)
    outputs = path_actions(command, "output")
    if not outputs:
        return
    reads = [read for action in path_actions(command, "input") for read in _reads(args, action)]
    reads += [files.Read(entry, "", "a tree-cache entry") for entry in _cache_entries()]
    for action in outputs:
        flag = action.option_strings[0] if action.option_strings else action.dest
        for shown in _values(args, action):
            files.check_no_overwrite(
                reads,
                flag,
                shown,
                holds=getattr(action, HOLDS),
                beside=getattr(action, BESIDE),
                updates=getattr(action, UPDATES),
            )


def _reads(args: argparse.Namespace, action: argparse.Action) -> Iterator[files.Read]:
    """The files the values of the input ``action`` make the command read: each one that is a regular file, the
    files a directory holds (a card abstraction's), the weights a model sidecar names, and the other file of an
    abstract strategy's pair with the files of its abstraction."""
    for shown in _values(args, action):
        if _is_directory(shown):
            held = (entry for entry in sorted(Path(shown).iterdir()) if files.file_identity(entry) is not None)
            yield from (files.Read(entry, action.dest, f"a file of {shown!r}") for entry in held)
            continue
        if files.file_identity(shown) is None:
            continue  # an agent's name, or a file its reader will refuse
        yield files.Read(Path(shown), action.dest)
        from cfr_agents.abstract_strategy import files_read
        from eval.opponents.nfsp import weights_read

        weights = weights_read(shown)
        if weights is not None:
            yield files.Read(weights, action.dest, f"the weights of {shown!r}")
        yield from (files.Read(path, action.dest, f"read with {shown!r}") for path in files_read(shown))


def _is_directory(shown: str) -> bool:
    """Whether ``shown`` names a directory (a name the system cannot look up -- too long, say -- names none)."""
    try:
        return Path(shown).is_dir()
    except OSError:
        return False


def _cache_entries() -> list[Path]:
    """The files in the tree cache's directory (none when it is missing or cannot be listed)."""
    try:
        return sorted(tree_cache.directory().iterdir())
    except OSError:
        return []


def command_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost sub-command's parser that ``args`` came from (``plot curves`` -> its parser)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(args, action.dest, None)
            if chosen in action.choices:
                return command_parser(action.choices[chosen], args)
    return parser


def _values(args: argparse.Namespace, action: argparse.Action) -> Iterator[str]:
    value = getattr(args, action.dest, None)
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        yield from (item for item in value if isinstance(item, str))
