"""``cfr-agents``: train CFR-family policies and measure their exploitability.

One module per command; each has ``register(commands)``, which adds its sub-parser, and
``run(args) -> exit status``. Bad input (unknown game or algorithm, bad numbers, a missing,
corrupt or mismatched file) prints one line ``cfr-agents: error: ...`` and exits with status 2; a library
refusal that names its parameters (:class:`~adapters.inputs.ParameterError`) names them as the command's
options (:func:`options`).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType

from adapters.games import canonical_game_id
from adapters.inputs import InputError, ParameterError
from cfr_agents.cli import (
    abstraction,
    best_response,
    exploitability,
    exploitation,
    lbr,
    match,
    opponents,
    play,
    plot,
    report,
    serve,
    sweep,
    tournament,
    train,
    train_opponent,
)
from cfr_agents.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, CommandParser, Parser, one_line
from cfr_agents.cli.paths import check_no_overwrite, command_parser
from cfr_agents.tree_cache import DISABLE_VARIABLE

DESCRIPTION = (
    "Train CFR-family policies, score any agent exactly, play matches and tournaments, exploit opponents "
    "safely, sweep parameters."
)
COMMANDS: tuple[ModuleType, ...] = (
    train,
    exploitability,
    opponents,
    best_response,
    train_opponent,
    match,
    tournament,
    play,
    exploitation,
    lbr,
    abstraction,
    plot,
    report,
    serve,
    sweep,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="cfr-agents", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    parser.add_argument(
        "--no-tree-cache",
        action="store_true",
        help=f"build every game tree afresh, neither reading nor writing the tree cache (as {DISABLE_VARIABLE}=1 does)",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=CommandParser)
    for module in COMMANDS:
        module.register(commands)
    return parser


def version() -> str:
    """The installed distribution's version."""
    try:
        return importlib.metadata.version("cfr-agents")
    except importlib.metadata.PackageNotFoundError:
        return "(not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    parser: argparse.ArgumentParser | None = None
    args: argparse.Namespace | None = None
    try:  # also Ctrl-C while the parser is built (train-opponent loads the opponent registry) or reads argv
        parser = build_parser()
        args = parser.parse_args(argv)
        if getattr(args, "game", None) is not None:  # a named game (fhp) as its canonical id, for every command
            args.game = canonical_game_id(args.game)
        run: Callable[[argparse.Namespace], int] = args.run
        check_no_overwrite(parser, args)
        with _tree_cache(on=not args.no_tree_cache):
            return run(args)
    except InputError as error:
        message = str(error)
        if isinstance(error, ParameterError) and parser is not None and args is not None:
            message = error.render(options(parser, args))
        print(f"cfr-agents: error: {one_line(message)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt as interrupt:
        print(f"cfr-agents: interrupted{f'; {interrupt}' if str(interrupt) else ''}", file=sys.stderr)
        return EXIT_INTERRUPTED


def options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Callable[[str], str]:
    """How the command ``args`` were parsed for writes a library parameter: as the option that sets it,
    the program's or the command's whose ``dest`` it is (``chance_draws`` -> ``--chance-draws``); a
    parameter the command sets otherwise (a ``--grid`` key of ``sweep``) keeps its name."""
    flags = {
        action.dest: max(action.option_strings, key=len)
        for command in (parser, command_parser(parser, args))
        for action in command._actions
        if action.option_strings
    }
    return lambda name: flags.get(name, name)


@contextlib.contextmanager
def _tree_cache(*, on: bool) -> Iterator[None]:
    """``--no-tree-cache``: the environment variable the tree cache reads (where trees are compiled, in
    worker processes too), set for the command and restored after it."""
    if on:
        yield
        return
    before = os.environ.get(DISABLE_VARIABLE)
    os.environ[DISABLE_VARIABLE] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[DISABLE_VARIABLE]
        else:
            os.environ[DISABLE_VARIABLE] = before


__all__ = ["COMMANDS", "build_parser", "main", "options", "version"]
