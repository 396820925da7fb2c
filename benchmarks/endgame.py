"""Endgame solving measured exactly: a blueprint's NashConv and the NashConv of the blueprint with every endgame
(every public state of the last round) re-solved from the ranges it leads to, and the exact value of the re-solved
agent against the blueprint, in both seats.

    python -m benchmarks.endgame --game holdem-12 --blueprint dcfr:3,dcfr:10,dcfr:30,m.json \\
        --out benchmarks/results/endgame_holdem12
    python -m benchmarks.endgame --game fhp --blueprint sdcfr.json --out benchmarks/results/endgame_fhp

``--blueprint`` lists agent files of the game (a model, a strategy file, an abstraction agent), each read on the tree
with suit-canonical boards as matches on it play it (a network reads each hand's canonical image), or ``dcfr:N``,
full-game DCFR stopped after N iterations. The endgames are solved by DCFR (:mod:`cfr_agents.public_tree.endgame`)
on the game's public tree with suit-canonical boards; the endgame gap is what both players gain at most by changing
their play in the last round alone (0 when every endgame is solved for its ranges). ``m.json`` above is the SD-CFR
model of ``train --game holdem-12 --engine public-tree --algo sd-cfr --preset fast --traversals 1000
--advantage-batches 20 --advantage-batch-size 4096 --hidden 64,64 --iterations 20 --inputs strength --out m.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

from adapters.games import canonical_game_id
from cfr_agents.files import write_atomic
from cfr_agents.public_tree.endgame import EndgameSolver
from cfr_agents.public_tree.engine import Engine, FloatArray, own_placement, profile
from cfr_agents.public_tree.kernels import BEST_RESPONSE, EVALUATE
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers import ALGORITHMS
from eval.exploitability import public_exploitability
from eval.holdem import Placed, batched, exact_head_to_head, game_tree, strategy_array
from eval.opponents import load_opponent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="holdem-12")
    parser.add_argument("--blueprint", default="dcfr:3", help="blueprints, comma-separated")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/endgame"))
    args = parser.parse_args(argv)
    tree = game_tree(args.game)
    rows = [measure(tree, args.game, name, args.iterations) for name in args.blueprint.split(",")]
    lines = [
        f"# Endgame solving on {args.game}: every endgame by {args.iterations} DCFR iterations",
        "",
        "| blueprint | NashConv | re-solved NashConv | endgame gap | re-solved gap | re-solved vs blueprint (seats) "
        "| solving |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        seats = ", ".join(f"{value:+.1f}" for value in row["resolved_against_blueprint_seats_mbb"])
        lines.append(
            f"| {row['blueprint']} | {row['blueprint_nash_conv']:.1f} | {row['resolved_nash_conv']:.1f} "
            f"| {row['blueprint_endgame_gap']:.1f} | {row['resolved_endgame_gap']:.3f} "
            f"| {row['resolved_against_blueprint_mbb']:+.1f} ({seats}) | {row['solve_seconds']:.1f} s |"
        )
    lines += ["", "All in mbb/g, exact, on the public tree with suit-canonical boards."]
    print("\n".join(lines))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out.with_suffix(".json"), json.dumps(rows, indent=1) + "\n")
    write_atomic(args.out.with_suffix(".md"), "\n".join(lines) + "\n")


def measure(tree: PublicTree, game: str, name: str, iterations: int) -> dict[str, Any]:
    """One blueprint's figures, in mbb/g."""
    started = time.perf_counter()
    blueprint = make_blueprint(tree, game, name)
    made = time.perf_counter() - started
    solver = EndgameSolver(tree, ALGORITHMS["dcfr"], "dcfr", blueprint)
    started = time.perf_counter()
    solver.run(iterations)
    resolved = solver.average_strategy()
    solving = time.perf_counter() - started
    mbb = 1000 / tree.rules.big_blind
    scores = {key: score(tree, strategy) for key, strategy in (("blueprint", blueprint), ("resolved", resolved))}
    own = own_placement(tree)
    duel = exact_head_to_head(tree, Placed(resolved, own), Placed(blueprint, own))
    return {
        "game": canonical_game_id(game),
        "blueprint": name,
        "iterations": iterations,
        "blueprint_seconds": made,
        "solve_seconds": solving,
        **{f"{key}_{part}": value * mbb for key, values in scores.items() for part, value in values.items()},
        "resolved_against_blueprint_mbb": duel.value * mbb,
        "resolved_against_blueprint_seats_mbb": [value * mbb for value in duel.seat_values],
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
    }


def make_blueprint(tree: PublicTree, game: str, name: str) -> FloatArray:
    """``dcfr:N``'s average strategy, or an agent file's strategy laid out over ``tree``'s own segments."""
    if name.startswith("dcfr:"):
        solver = PublicTreeSolver(tree, ALGORITHMS["dcfr"], "dcfr")
        solver.run(int(name.removeprefix("dcfr:")))
        return solver.average_strategy()
    placed = strategy_array(tree, batched(load_opponent(name, game).agent, name, game))
    if not np.array_equal(placed.placement.offset, tree.segments.offset) or placed.placement.permutation.any():
        raise SystemExit(f"{name} is not laid out over the public tree with suit-canonical boards")
    return placed.strategy


def score(tree: PublicTree, strategy: FloatArray) -> dict[str, float]:
    """NashConv and the endgame gap, in chips."""
    engine, own = Engine(tree), own_placement(tree)
    both = profile(strategy, strategy, own, own)
    last = tree.rules.num_rounds - 1
    gap = sum(
        tree.chance
        * float(
            engine.root_values(p, BEST_RESPONSE, both, frozen_rounds=last).sum()
            - engine.root_values(p, EVALUATE, both).sum()
        )
        for p in range(2)
    )
    return {"nash_conv": public_exploitability(tree, strategy, own, engine).nash_conv, "endgame_gap": gap}


if __name__ == "__main__":
    main()
