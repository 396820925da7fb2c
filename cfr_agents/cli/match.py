"""``cfr-agents match A B [C ...] --game G --hands N [--seed S] [--log HANDS.jsonl] [--aivat] [--json] [--out F]``: a
duplicate match between two agents, every hand appended to a hand log with ``--log``, and estimated with AIVAT as
well with ``--aivat`` (:mod:`eval.aivat`); with ``--out``, the report written as the JSON object ``--json`` prints.

On an n-player or general-sum game (``openspiel:kuhn_poker(players=3)``) it seats one agent per player and plays
every deal in every seat order (:mod:`eval.table`, run by :mod:`cfr_agents.cli.tables`).

On a hold'em game past 12 cards (``fhp``) the agents are public-tree strategy files and ``random``, the exact
value comes from the public tree, and ``--log`` is refused (hand logs are read on the compiled tree)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from cfr_agents.cli.common import MAX_HANDS, hands, magnitude, non_negative_int
from cfr_agents.cli.paths import add_input, add_output


def register(commands: Any) -> None:
    command = commands.add_parser(
        "match", help="play two agents in duplicate pairs in the real environment, beside the exact value"
    )
    add_input(command, "agent_a", metavar="A", help="a named agent (cfr-agents opponents --game G) or a file")
    add_input(command, "agent_b", metavar="B", help="the other agent")
    add_input(command, "agent_more", nargs="*", metavar="C", help="one more agent per further seat of an n-player game")
    command.add_argument("--game", help="the game (a file names its own)")
    command.add_argument(
        "--hands", type=hands, required=True, help=f"hands to play: an even number, from 4 to {magnitude(MAX_HANDS)}"
    )
    command.add_argument("--seed", type=non_negative_int, default=0, help="seed of deals and agents (default 0)")
    add_output(
        command,
        "--log",
        metavar="HANDS.jsonl",
        help="append every hand to this hand log, one JSON line per hand (docs/formats.md)",
    )
    command.add_argument(
        "--aivat",
        action="store_true",
        help="also estimate with AIVAT, using the strategy of A (or else B): exact on a compiled tree, asked on "
        "the hold'em engine",
    )
    command.add_argument("--json", action="store_true", help="print one JSON object")
    add_output(command, "--out", metavar="F", help="also write the report to F as the JSON object --json prints")
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from adapters.inputs import InputError
    from cfr_agents.cli.tables import run_match
    from cfr_agents.files import check_outputs, write_atomic
    from eval.match import Agents, MatchSpec, check_hands, describe, play_match

    names = (args.agent_a, args.agent_b, *args.agent_more)
    seated = _seated_game(args.game, names)
    if seated is not None:
        return run_match(args, seated, names)
    check_hands(args.hands)
    check_outputs(args.log, args.out)
    agents = Agents()
    game_id = args.game or _game_of(args.agent_a, args.agent_b)
    if args.agent_more:
        raise InputError(f"{game_id} has 2 players: give 2 agents, one per seat, got {len(names)}")
    for name in (args.agent_a, args.agent_b):
        agents.opponent(name, game_id)
    spec = MatchSpec(game_id, (args.agent_a, args.agent_b), args.hands, args.seed, aivat=args.aivat)
    show = not (args.quiet or args.json) and sys.stderr.isatty()
    report = play_match(spec, agents, show_progress=show, log=args.log)
    document = {**report.to_json(), "seed": args.seed}
    if args.out is not None:
        write_atomic(args.out, json.dumps(document, indent=2) + "\n")
    print(json.dumps(document) if args.json else describe(report))
    return 0


def _seated_game(game: str | None, names: Sequence[str]) -> str | None:
    """The game, when its matches seat one agent per player of an n-player or general-sum game
    (:func:`eval.table.takes_seats`); ``None`` for a two-player zero-sum game, or when the game cannot be told
    here (the two-player path then refuses in its own words)."""
    from adapters.inputs import InputError
    from eval.table import takes_seats

    try:
        game_id = game or _game_of(*names)
    except InputError:
        return None
    return game_id if takes_seats(game_id) else None


def _game_of(*names: str) -> str:
    """The game named by the first agent that is a file (files carry their game; a public-tree strategy's
    sidecar is read alone, not its archive)."""
    from adapters.inputs import InputError
    from eval.holdem import file_game
    from eval.opponents import is_file_name, load_opponent

    for name in names:
        if is_file_name(name):
            return file_game(name) or load_opponent(name).game_id
    raise InputError("give --game: neither agent is a file that names its game")
