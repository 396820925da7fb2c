"""Endgame solving measured exactly: a blueprint's NashConv and the NashConv of the blueprint with every endgame
(every public state of the last round) re-solved, unsafely from the ranges it leads to and safely through the
re-solving gadget, the exact value of each re-solved agent against the blueprint in both seats, and each agent's
exact local best response.

    python -m benchmarks.endgame --game holdem-12 --blueprint dcfr:3,dcfr:10,dcfr:30,m.json \\
        --out benchmarks/results/endgame_holdem12
    python -m benchmarks.endgame --game fhp --blueprint sdcfr.json --out benchmarks/results/endgame_fhp

``--blueprint`` lists agent files of the game (a model, a strategy file, an abstraction agent), each read on the tree
with suit-canonical boards as matches on it play it (a network reads each hand's canonical image), or ``dcfr:N``,
full-game DCFR stopped after N iterations. The endgames are solved by DCFR (:mod:`cfr_agents.public_tree.endgame`,
:mod:`cfr_agents.public_tree.safe_endgame`, whose two re-solves, one per player, run as many iterations each) on
the game's public tree with suit-canonical boards; the endgame gap is what both players gain at most by changing
their play in the last round alone (0 when every endgame is solved for its ranges). ``m.json`` above is the SD-CFR
model of ``train --game holdem-12 --engine public-tree --algo sd-cfr --preset fast --traversals 1000
--advantage-batches 20 --advantage-batch-size 4096 --hidden 64,64 --iterations 20 --inputs strength --out m.json``.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from adapters.games import canonical_game_id
from adapters.inputs import InputError
from benchmarks.report import OneLineParser, at_least, one_line_errors, progress
from cfr_agents.cli.common import check_memory
from cfr_agents.files import write_atomic
from cfr_agents.public_tree.endgame import EndgameSolver
from cfr_agents.public_tree.engine import Engine, FloatArray, own_placement, profile
from cfr_agents.public_tree.kernels import BEST_RESPONSE, EVALUATE
from cfr_agents.public_tree.safe_endgame import resolve_peak_bytes, safe_resolve
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers import ALGORITHMS
from eval.agents import Agent
from eval.holdem import Placed, batched, exact_head_to_head, game_tree, strategy_array
from eval.lbr import local_best_response
from eval.opponents import load_opponent

KINDS = {"blueprint": "blueprint", "resolved": "unsafe re-solving", "safe": "safe re-solving"}
"""The agents of each row, as the JSON's keys name them."""


@one_line_errors
def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="holdem-12")
    parser.add_argument("--blueprint", default="dcfr:3", help="blueprints, comma-separated")
    parser.add_argument("--iterations", type=at_least(1), default=200)
    parser.add_output("--out", suffixes=(".json", ".md"), default=Path("benchmarks/results/endgame"))
    args = parser.parse(argv)
    names = [name.strip() for name in args.blueprint.split(",")]
    for name in names:
        parser.refuse_overwriting(args, (Path(name), Path(name).with_suffix(".json")), f"the agent's file {name}")
    agents = {name: blueprint_agent(parser, "--blueprint", name, args.game) for name in names}
    tree = game_tree(args.game)
    print(check_memory(f"endgame solving on {args.game}", resolve_peak_bytes(tree)), file=sys.stderr)
    rows = [measure(tree, args.game, name, agents[name], args.iterations) for name in names]
    lines = [
        f"# Endgame solving on {args.game}: every endgame by {args.iterations} DCFR iterations",
        "",
        "| blueprint | agent | NashConv | LBR | endgame gap | vs blueprint (seats) | solving |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        for kind, label in KINDS.items():
            duel, seconds = "", ""
            if kind != "blueprint":
                seats = ", ".join(f"{value:+.1f}" for value in row[f"{kind}_against_blueprint_seats_mbb"])
                duel = f"{row[f'{kind}_against_blueprint_mbb']:+.1f} ({seats})"
                seconds = f"{row[f'{kind}_solve_seconds']:.1f} s"
            lines.append(
                f"| {row['blueprint']} | {label} | {row[f'{kind}_nash_conv']:.1f} | {row[f'{kind}_lbr']:.1f} "
                f"| {row[f'{kind}_endgame_gap']:.3f} | {duel} | {seconds} |"
            )
    lines += [
        "",
        "All in mbb/g, exact, on the public tree with suit-canonical boards. NashConv is the sum of both best "
        "responses' values; LBR (`eval.lbr.local_best_response`, checking and calling in no round) the mean of its "
        "two seats', a lower bound on half the NashConv.",
    ]
    print("\n".join(lines))
    write_atomic(args.out.with_suffix(".json"), json.dumps(rows, indent=1) + "\n")
    write_atomic(args.out.with_suffix(".md"), "\n".join(lines) + "\n")


def measure(tree: PublicTree, game: str, name: str, agent: Agent | None, iterations: int) -> dict[str, Any]:
    """One blueprint's figures, in mbb/g: ``agent``'s, or ``dcfr:N``'s where it is ``None``. Each re-solved strategy
    is scored as soon as it is made and dropped, so the blueprint and one re-solve's arrays are held at once
    (:func:`~cfr_agents.public_tree.safe_endgame.resolve_peak_bytes`)."""
    started = time.perf_counter()
    progress(f"{name}: {'full-game DCFR' if agent is None else 'laying its strategy out over the public tree'}")
    blueprint = make_blueprint(tree, game, name, agent)
    made = time.perf_counter() - started
    mbb, own = 1000 / tree.rules.big_blind, own_placement(tree)
    progress(f"{name}: scoring the blueprint (NashConv, endgame gap, LBR)")
    scores, duels, seconds = {"blueprint": score(tree, blueprint)}, {}, {}
    for kind in ("resolved", "safe"):
        started = time.perf_counter()
        strategy = resolve(tree, blueprint, iterations, safe=kind == "safe")
        seconds[kind] = time.perf_counter() - started
        progress(f"{name}: scoring {KINDS[kind]} and playing it against the blueprint")
        scores[kind] = score(tree, strategy)
        duels[kind] = exact_head_to_head(tree, Placed(strategy, own), Placed(blueprint, own))
        del strategy
    return {
        "game": canonical_game_id(game),
        "blueprint": name,
        "iterations": iterations,
        "blueprint_seconds": made,
        **{f"{kind}_solve_seconds": value for kind, value in seconds.items()},
        **{f"{key}_{part}": value * mbb for key, values in scores.items() for part, value in values.items()},
        **{f"{key}_against_blueprint_mbb": duel.value * mbb for key, duel in duels.items()},
        **{
            f"{key}_against_blueprint_seats_mbb": [value * mbb for value in duel.seat_values]
            for key, duel in duels.items()
        },
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
    }


def resolve(tree: PublicTree, blueprint: FloatArray, iterations: int, *, safe: bool) -> FloatArray:
    """``blueprint`` with every endgame re-solved by ``iterations`` DCFR iterations, unsafely or safely (each
    player's re-solve in turn), with a progress bar."""
    label = KINDS["safe" if safe else "resolved"]
    with tqdm(total=2 * iterations if safe else iterations, desc=label, unit="iteration", mininterval=1.0) as bar:
        if safe:
            return safe_resolve(tree, ALGORITHMS["dcfr"], "dcfr", blueprint, iterations, lambda *_: bar.update())
        solver = EndgameSolver(tree, ALGORITHMS["dcfr"], "dcfr", blueprint)
        for _ in range(iterations):
            solver.iterate()
            bar.update()
        return solver.average_strategy(release=True)


def blueprint_agent(parser: OneLineParser, flag: str, name: str, game: str) -> Agent | None:
    """The agent the file ``name`` holds, or ``None`` for ``dcfr:N`` (:func:`make_blueprint` solves it), whose N must
    be at least 1: else the run ends in one line naming ``flag``."""
    if not name.startswith("dcfr:"):
        return load_opponent(name, game).agent
    count = name.removeprefix("dcfr:")
    if not (count.isdigit() and int(count) > 0):
        parser.error(f"{flag} {name}: dcfr:N takes a number of iterations N, at least 1")
    return None


def make_blueprint(tree: PublicTree, game: str, name: str, agent: Agent | None) -> FloatArray:
    """``dcfr:N``'s average strategy (``agent`` ``None``), or the agent ``name``'s strategy laid out over
    ``tree``'s own segments."""
    if agent is None:
        solver = PublicTreeSolver(tree, ALGORITHMS["dcfr"], "dcfr")
        solver.run(int(name.removeprefix("dcfr:")))
        return solver.average_strategy(release=True)
    placed = strategy_array(tree, batched(agent, name, game))
    if not np.array_equal(placed.placement.offset, tree.segments.offset) or placed.placement.permutation.any():
        raise InputError(f"{name} is not laid out over the public tree with suit-canonical boards")
    return placed.strategy


def score(tree: PublicTree, strategy: FloatArray) -> dict[str, float]:
    """NashConv, the endgame gap and the exact LBR value, in chips."""
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
    _, lbr = local_best_response(tree, Placed(strategy, own), engine=engine)
    nash_conv = sum(lbr.best_response_values)  # zero-sum: NashConv is the sum of the best responses' values
    return {"nash_conv": nash_conv, "endgame_gap": gap, "lbr": lbr.value}


if __name__ == "__main__":
    main()
