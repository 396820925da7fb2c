"""Flop Hold'em on this machine: the public tree's size and build time, exact best response, and full-game CFR
with its exact exploitability against time.

    python -m benchmarks.flop_holdem --game fhp --algo dcfr --seconds 3600 --every 300 \\
        --out benchmarks/results/flop_holdem

writes ``<out>.md`` (the cost table and the curve), ``<out>.csv`` (the curve), ``<out>.json`` and ``<out>.png``.
Exploitability is NashConv / 2 in mbb per game (thousandths of a big blind); the time axis is solve time only, the
best responses that score the average strategy are timed apart. Peak memory is the process's maximum resident set.

    python -m benchmarks.flop_holdem --cost holdem-6 holdem-8 holdem-12 fhp-acpc fhp --out benchmarks/results/cost

measures each game in its own process (so each peak memory is its own) and writes the cost table, with an estimate
of one CFR iteration of heads-up limit hold'em from the measured throughput.
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pyspiel

from adapters.games import canonical_game_id
from adapters.holdem.rules import limit_rules
from adapters.openspiel import PREFIX
from benchmarks.report import OneLineParser, Table, one_line_errors
from cfr_agents.files import write_atomic
from cfr_agents.public_tree import public_tree
from cfr_agents.public_tree.engine import Engine, own_placement, profile
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.tree import build_public_tree, game_nodes
from cfr_agents.solvers import ALGORITHMS
from eval.plots import pyplot, save_figure


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def measure(game: str, algorithm: str) -> dict[str, float]:
    """One game's cost: sizes, build, compile, CFR iterations (at least 3 and 2 seconds' worth), both seats' best
    responses, peak memory."""
    started = time.perf_counter()
    tree = public_tree(canonical_game_id(game))
    build = time.perf_counter() - started
    solver = PublicTreeSolver(tree, ALGORITHMS[algorithm], algorithm)
    compile_seconds = solver.compile()
    solver.run(1)  # the thread pool's start, outside the timing
    began = time.perf_counter()
    runs = 0
    while runs < 3 or time.perf_counter() - began < 2.0:  # at least 3 iterations and 2 seconds
        solver.run(1)
        runs += 1
    per_iteration = (time.perf_counter() - began) / runs
    average = solver.average_strategy()
    engine = Engine(tree)
    placement = own_placement(tree)
    began = time.perf_counter()
    for player in range(2):
        engine.best_response_value(player, profile(average, average, placement, placement))
    nodes, decisions = tree.game_nodes
    return {
        "game_nodes": nodes,
        "game_decision_nodes": decisions,
        "public_nodes": tree.num_public_nodes,
        "segments": tree.segments.count,
        "hands": tree.num_hands,
        "infosets": tree.num_infosets,
        "strategy_entries": tree.size,
        "build_seconds": build,
        "compile_seconds": compile_seconds,
        "seconds_per_iteration": per_iteration,
        "best_response_seconds": time.perf_counter() - began,
        "peak_gb": _peak_gb(),
    }


def hulh_estimate(per_node_second: float) -> dict[str, float]:
    """Heads-up limit hold'em's public tree counted from its betting tree and its boards (canonical flops, then
    every turn and river), and one CFR iteration's time at the measured seconds per public node and hand."""
    from adapters.holdem import board_orbits
    from adapters.holdem.betting import DECISION, betting_tree

    game = pyspiel.load_game(canonical_game_id("hulh").removeprefix(PREFIX))
    betting = betting_tree(game)
    rules = limit_rules(game)
    assert rules is not None
    flops = len(board_orbits(13, 4, 3)[1])
    histories = [1, flops, flops * 49, flops * 49 * 48]
    public_nodes = sum(int((betting.round == r).sum()) * histories[r] for r in range(4))
    entries = sum(
        int(betting.num_children[(betting.kind == DECISION) & (betting.round == r)].sum()) * histories[r] * 1326
        for r in range(4)
    )
    return {
        "game_nodes": game_nodes(rules, betting)[0],
        "public_nodes": public_nodes,
        "strategy_entries": entries,
        "seconds_per_iteration": public_nodes * 1326 * per_node_second,
        "state_bytes": entries * 8 * 3,
    }


def cost_table(games: list[str], algorithm: str, out: Path) -> None:
    rows = []
    for game in games:
        result = subprocess.run(
            [sys.executable, "-m", "benchmarks.flop_holdem", "--measure", game, "--algo", algorithm],
            check=True,
            capture_output=True,
            text=True,
        )
        rows.append((game, json.loads(result.stdout.strip().splitlines()[-1])))
        print(game, rows[-1][1], flush=True)
    largest = max(rows, key=lambda row: row[1]["public_nodes"])[1]
    per_node_second = largest["seconds_per_iteration"] / (largest["public_nodes"] * largest["hands"])
    hulh = hulh_estimate(per_node_second)
    table = Table(
        title=f"Cost of full-game CFR ({algorithm}) on the public tree, this machine (2 cores)",
        headers=(
            "game",
            "game nodes (OpenSpiel's count)",
            "public nodes",
            "hands",
            "strategy entries",
            "build s",
            "s/iteration",
            "s per best response (both seats)",
            "peak GB",
        ),
        rows=(
            *(
                (
                    game,
                    f"{row['game_nodes']:.3g}",
                    f"{row['public_nodes']:,}",
                    f"{row['hands']:,}",
                    f"{row['strategy_entries']:,}",
                    f"{row['build_seconds']:.1f}",
                    f"{row['seconds_per_iteration']:.3g}",
                    f"{row['best_response_seconds']:.3g}",
                    f"{row['peak_gb']:.2f}",
                )
                for game, row in rows
            ),
            (
                "hulh (estimate)",
                f"{hulh['game_nodes']:.3g}",
                f"{hulh['public_nodes']:.3g}",
                "1,326",
                f"{hulh['strategy_entries']:.3g}",
                "",
                f"{hulh['seconds_per_iteration']:.3g}",
                "",
                f"{hulh['state_bytes'] / 1e12:.3g} TB of state",
            ),
        ),
        notes=(
            f"The hulh row scales the largest measured game's {per_node_second * 1e9:.3g} ns per public node and hand "
            "to heads-up limit hold'em's public tree (canonical flops, every turn and river) and counts three float64 "
            "arrays (regrets, average, strategy). Cepheus (Bowling et al. 2015) solved it to 0.986 mbb/g with CFR+ in "
            "about 900 core-years, its regrets and average compressed into 11 TB.",
        ),
    )
    write_atomic(out.with_suffix(".md"), table.markdown())
    write_atomic(out.with_suffix(".json"), json.dumps({"rows": dict(rows), "hulh_estimate": hulh}, indent=2) + "\n")
    print(table.text())


DEEP_CFR_EXPLOITABILITY = 37 / 2
NFSP_EXPLOITABILITY = 47 / 2
"""Brown et al. (2019) report FHP NashConv 37 (Deep CFR) and 47 mbb/g (NFSP's best): halved, our scale."""


def plot_curve(csv_path: Path, png: Path) -> None:
    """Exploitability (mbb/g, log scale) against solve time from a curve CSV, beside Deep CFR's and NFSP's."""
    plt = pyplot()
    with csv_path.open() as handle:
        rows = list(csv.DictReader(handle))
    seconds = [float(row["solve_seconds"]) / 60 for row in rows]
    values = [float(row["exploitability_mbb"]) for row in rows]
    figure, axes = plt.subplots(figsize=(6.4, 4.0))
    axes.plot(seconds, values, marker="o", label="ours: full-game DCFR, exact exploitability")
    axes.axhline(DEEP_CFR_EXPLOITABILITY, color="tab:red", linestyle="--", label="Deep CFR (Brown et al. 2019)")
    axes.axhline(NFSP_EXPLOITABILITY, color="tab:gray", linestyle=":", label="NFSP, best of a sweep (same paper)")
    axes.set_yscale("log")
    axes.set_xlabel("solve time on 2 cores (minutes)")
    axes.set_ylabel("exploitability (mbb/g, NashConv / 2)")
    axes.set_title("Flop Hold'em")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    save_figure(figure, png)


@one_line_errors
def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cost", nargs="+", metavar="GAME", help="measure the cost of these games")
    parser.add_argument("--measure", metavar="GAME", help=argparse.SUPPRESS)
    parser.add_argument("--plot", type=Path, metavar="CSV", help="plot a curve CSV to --out's .png")
    parser.add_argument("--game", default="fhp")
    parser.add_argument("--algo", default="dcfr", choices=sorted(ALGORITHMS))
    parser.add_argument("--seconds", type=float, default=3600.0, help="solve time budget")
    parser.add_argument("--every", type=float, default=300.0, help="solve seconds between exact scores")
    parser.add_output(
        "--out", suffixes=(".md", ".csv", ".json", ".png"), default=Path("benchmarks/results/flop_holdem")
    )
    args = parser.parse(argv, child="measure")
    if args.measure:
        print(json.dumps(measure(args.measure, args.algo)))
        return
    if args.cost:
        cost_table(args.cost, args.algo, args.out)
        return
    if args.plot:
        plot_curve(args.plot, args.out.with_suffix(".png"))
        return
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
            f"Deep CFR (Brown et al. 2019) reports NashConv 37 mbb/g on FHP, NFSP 47: exploitability "
            f"{DEEP_CFR_EXPLOITABILITY} and {NFSP_EXPLOITABILITY}.",
        ),
    )
    write_atomic(args.out.with_suffix(".md"), cost.markdown() + "\n" + curve.markdown())
    header = "iterations,solve_seconds,nash_conv_mbb,exploitability_mbb,best_response_seconds\n"
    lines = [",".join(f"{row[key]:g}" for key in header.strip().split(",")) for row in rows]
    write_atomic(args.out.with_suffix(".csv"), header + "\n".join(lines) + "\n")
    plot_curve(args.out.with_suffix(".csv"), args.out.with_suffix(".png"))
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
