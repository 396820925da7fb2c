"""Flop Hold'em on this machine: the public tree's size and build time, exact best response, and full-game CFR
with its exact exploitability against time.

    python -m benchmarks.flop_holdem --game fhp --algo dcfr --seconds 3600 --every 300 \\
        --out benchmarks/results/flop_holdem

writes ``<out>.md`` (the cost table and the curve), ``<out>.csv`` (the curve) and ``<out>.json``. Exploitability is
NashConv / 2 in mbb per game (thousandths of a big blind); the time axis is solve time only, the best responses
that score the average strategy are timed apart. Peak memory is the process's maximum resident set.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from adapters.games import canonical_game_id
from adapters.openspiel import PREFIX
from benchmarks.report import Table
from cfr_agents.files import write_atomic
from cfr_agents.public_tree.engine import Engine, own_placement, profile
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.tree import build_public_tree
from cfr_agents.solvers import ALGORITHMS


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="fhp")
    parser.add_argument("--algo", default="dcfr", choices=sorted(ALGORITHMS))
    parser.add_argument("--seconds", type=float, default=3600.0, help="solve time budget")
    parser.add_argument("--every", type=float, default=300.0, help="solve seconds between exact scores")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/flop_holdem"))
    args = parser.parse_args(argv)
    game_id = canonical_game_id(args.game)
    started = time.perf_counter()
    tree = build_public_tree(game_id.removeprefix(PREFIX), canonical=True)
    build = time.perf_counter() - started
    big_blind = tree.rules.big_blind
    print(f"{args.game}: {tree.summary()}; built in {build:.1f} s", flush=True)
    solver = PublicTreeSolver(tree, ALGORITHMS[args.algo], args.algo)
    compile_seconds = solver.compile()
    engine = Engine(tree)
    placement = own_placement(tree)
    rows: list[dict[str, float]] = []
    solve = 0.0
    best_response = 0.0

    def score() -> None:
        nonlocal best_response
        average = solver.average_strategy()
        began = time.perf_counter()
        strategies = profile(average, average, placement, placement)
        values = [engine.best_response_value(player, strategies) for player in range(2)]
        best_response = time.perf_counter() - began
        nash_conv = sum(values)
        rows.append(
            {
                "iterations": solver.iteration,
                "solve_seconds": solve,
                "nash_conv_mbb": nash_conv / big_blind * 1000,
                "exploitability_mbb": nash_conv / 2 / big_blind * 1000,
                "best_response_seconds": best_response,
            }
        )
        print(
            f"{solver.iteration:6d} it  {solve:8.1f} s  NashConv {rows[-1]['nash_conv_mbb']:10.3f} mbb/g  "
            f"exploitability {rows[-1]['exploitability_mbb']:10.3f} mbb/g  (best responses {best_response:.1f} s, "
            f"peak {_peak_gb():.1f} GB)",
            flush=True,
        )

    next_score = args.every
    while solve < args.seconds:
        began = time.perf_counter()
        solver.run(1)
        solve += time.perf_counter() - began
        if solve >= next_score or solve >= args.seconds:
            score()
            next_score += args.every
    per_iteration = solve / max(solver.iteration, 1)
    cost = Table(
        title=f"{args.game}: cost on this machine",
        headers=(
            "public nodes",
            "segments",
            "hands",
            "strategy entries",
            "build s",
            "compile s",
            "s/iteration",
            "s per best response (both seats)",
            "peak GB",
        ),
        rows=(
            (
                f"{tree.num_public_nodes:,}",
                f"{tree.segments.count:,}",
                f"{tree.num_hands:,}",
                f"{tree.size:,}",
                f"{build:.1f}",
                f"{compile_seconds:.1f}",
                f"{per_iteration:.2f}",
                f"{best_response:.1f}",
                f"{_peak_gb():.1f}",
            ),
        ),
    )
    curve = Table(
        title=f"{args.game}: {args.algo} average strategy, exact exploitability against solve time",
        headers=("iterations", "solve s", "NashConv mbb/g", "exploitability mbb/g"),
        rows=tuple(
            (
                f"{int(row['iterations'])}",
                f"{row['solve_seconds']:.0f}",
                f"{row['nash_conv_mbb']:.3f}",
                f"{row['exploitability_mbb']:.3f}",
            )
            for row in rows
        ),
        notes=(
            "Deep CFR (Brown et al. 2019) reports NashConv 37 mbb/g on FHP, NFSP 47: exploitability 18.5 and 23.5.",
        ),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out.with_suffix(".md"), cost.markdown() + "\n" + curve.markdown())
    header = "iterations,solve_seconds,nash_conv_mbb,exploitability_mbb,best_response_seconds\n"
    lines = [",".join(f"{row[key]:g}" for key in header.strip().split(",")) for row in rows]
    write_atomic(args.out.with_suffix(".csv"), header + "\n".join(lines) + "\n")
    summary = {
        "game": game_id,
        "algorithm": args.algo,
        "build_seconds": build,
        "compile_seconds": compile_seconds,
        "seconds_per_iteration": per_iteration,
        "peak_gb": _peak_gb(),
        "curve": rows,
    }
    write_atomic(args.out.with_suffix(".json"), json.dumps(summary, indent=2) + "\n")
    print(cost.text() + curve.text())


if __name__ == "__main__":
    main()
