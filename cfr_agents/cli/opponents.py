"""``cfr-agents opponents --game G [--table [NAME ...]] [--json]``: the named opponents of a game,
or the exact opponent table."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import Any

from cfr_agents.cli.paths import add_input


def register(commands: Any) -> None:
    command = commands.add_parser("opponents", help="list a game's named opponents, or score them all (--table)")
    command.add_argument("--game", required=True, help="openspiel:<game string> or rlcard:<env id>")
    add_input(
        command,
        "--table",
        nargs="*",
        metavar="NAME",
        help="score the named opponents (default: all available) exactly against random, DCFR and each other",
    )
    command.add_argument("--json", action="store_true", help="print one JSON object")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from adapters.games import canonical_game_id
    from eval.holdem import on_public_tree
    from eval.opponents import RESOLVE_SUMMARY, available, resolves

    families = available(args.game, any_players=args.table is None)  # the table scores two-player games
    public = on_public_tree(canonical_game_id(args.game))
    if public:  # there an agent answers for every hand at once: random, or a strategy file
        families = [family for family in families if family.name == "random"]
    if args.table is None:
        if args.json:
            entries = [_entry(f) for f in families]
            print(json.dumps({"game": args.game, "opponents": entries, "resolving": resolves(args.game)}))
        else:
            for family in families:
                name = f"{family.name}[:N]" if family.takes_iterations else family.name
                print(f"{name:24} {family.summary}{'  [needs torch]' if family.needs_torch else ''}")
            files = (
                ("FILE.npz", "a public-tree strategy file written by train (with its FILE.json)")
                if public
                else ("FILE.json", "a policy file, or a model file written by train-opponent")
            )
            print(f"{files[0]:24} {files[1]}")
            if resolves(args.game):
                print(f"{'resolve[-safe]:[N:]AGENT':24} {RESOLVE_SUMMARY}")
        return 0
    from eval.opponents.table import opponent_table

    table = opponent_table(args.game, args.table or [family.name for family in families])
    if args.json:
        print(json.dumps(asdict(table)))
        return 0
    print(f"{table.game_id}: exact values per hand in {table.units}, row against column, seats swapped")
    print(f"DCFR column: {table.equilibrium}")
    if table.distinct_observations is not None:
        print(f"RLCard's obs: {table.distinct_observations} distinct observations for {table.infosets:,} infosets")
    print(table.markdown())
    return 0


def _entry(family: Any) -> dict[str, Any]:
    return {
        "name": family.name,
        "summary": family.summary,
        "needs_torch": family.needs_torch,
        "takes_iterations": family.takes_iterations,
    }
