"""``cfr-agents best-response AGENT --game G --out FILE``: the exact best response as a policy file."""

from __future__ import annotations

import argparse
import json
from typing import Any

from cfr_agents.cli.common import mbb
from cfr_agents.cli.paths import add_input, add_output
from cfr_agents.files import check_writable


def register(commands: Any) -> None:
    command = commands.add_parser("best-response", help="write the exact best response to an agent as a policy")
    add_input(command, "agent", help="a named opponent (cfr-agents opponents --game G) or a policy/model file")
    command.add_argument("--game", help="the game (a file names its own)")
    add_output(command, "--out", required=True, metavar="FILE", help="policy file to write")
    command.add_argument("--json", action="store_true", help="print one JSON object")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from adapters import load_game
    from adapters.games import canonical_game_id
    from cfr_agents.tree import compile_tree
    from eval.best_response import best_response_policy
    from eval.exploitability import exploitability_of_strategy
    from eval.head_to_head import exact_head_to_head
    from eval.holdem import file_game, on_public_tree, save_best_response
    from eval.opponents import load_opponent

    check_writable(args.out)
    game_id = canonical_game_id(args.game) if args.game is not None else file_game(args.agent)
    if game_id is not None and on_public_tree(game_id):
        response = save_best_response(args.agent, args.game, args.out)
        public = response.strategy.tree
        first, second = response.values
        if args.json:
            print(json.dumps({"agent": args.agent, "game": public.game_id, "units": public.units,
                              "best_response_values": [first, second], "value": response.value,
                              "seat_values": [first, second], "out": args.out}))  # fmt: skip
        else:
            print(
                f"best response to {args.agent} on {public.game_id}: {response.value:+.6g} {public.units} per hand "
                f"({response.value / public.rules.big_blind * 1000:+.4g} mbb) (seat 0 {first:+.6g}, seat 1 "
                f"{second:+.6g}); saved {args.out}"
            )
        return 0
    opponent = load_opponent(args.agent, args.game)
    tree = compile_tree(load_game(opponent.game_id))
    strategy = opponent.agent.strategy(tree)
    policy = best_response_policy(tree, strategy, against=opponent.name)
    policy.save(args.out)
    value = exact_head_to_head(tree, policy.strategy_on(tree), strategy)
    best = exploitability_of_strategy(tree, strategy).best_response_values
    if args.json:
        print(
            json.dumps(
                {
                    "agent": opponent.name,
                    "game": tree.game_id,
                    "units": tree.units,
                    "best_response_values": list(best),
                    "value": value.value,
                    "seat_values": list(value.seat_values),
                    "out": args.out,
                }
            )
        )
    else:
        print(
            f"best response to {opponent.name} on {tree.game_id}: {value.value:+.6g} {tree.units} per hand"
            f"{mbb(value.value, tree.units)} (seat 0 {value.seat_values[0]:+.6g}, seat 1 "
            f"{value.seat_values[1]:+.6g}); saved {args.out}"
        )
    return 0
