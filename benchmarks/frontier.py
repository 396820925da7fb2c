"""Safe exploitation speed: one restricted Nash response, and a whole exact frontier, against one opponent.

Run from the repository root::

    .venv/bin/python benchmarks/frontier.py [--game G] [--opponent NAME] [--precision NASHCONV]
        [--algorithm RULE] [--points N] [--lp]

Both exploiter seats are solved. The opponent's exact strategy is read once (its time is printed apart);
the solver's kernel is compiled first and untimed. Then, timed: one RNR point (``p = 0.5``, both seats'
transforms built and solved to NashConv at most ``--precision``), and an ``--points``-point frontier
(``p = 0, 1/(N-1), ..., 1``: every transform built and solved, every point scored exactly, the naive line
and the shares). ``--lp`` adds the ε-safe LP check of every point (the ``verify`` extra) to the frontier's time.
Targets on RLCard Leduc at 1e-4 BB: one point in at most 2 s, 21 points in at most 1 minute.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

from benchmarks.report import OneLineParser, Table, at_least, load_average, now, one_line_errors, verdict
from cfr_agents.solvers import make_solver
from eval.exploitation.frontier import LEVELS, Frontier, exact_frontier
from eval.exploitation.model import exact_model
from eval.exploitation.response import DEFAULT_ALGORITHM, solve_rnr
from eval.exploitation.safe_lp import SafeLP

POINT_TARGET = 2.0
FRONTIER_TARGET = 60.0
"""Seconds, on RLCard Leduc at precision 1e-4 BB with 21 points."""


def parse_options(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="rlcard:leduc-holdem")
    parser.add_argument("--opponent", default="rlcard-rule-v1", help="a registry opponent or an agent file")
    parser.add_argument("--precision", type=float, default=1e-4, help="NashConv of each RNR game (default 1e-4)")
    parser.add_argument("--algorithm", default=DEFAULT_ALGORITHM)
    parser.add_argument("--points", type=at_least(2), default=21, help="values of p in the frontier (default 21)")
    parser.add_argument("--lp", action="store_true", help="also check every point against the ε-safe LP")
    options = parser.parse(argv)
    if not options.precision > 0:
        parser.error("--precision must be positive")
    return options


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(argv)
    started = time.perf_counter()
    model = exact_model(options.opponent, options.game)
    model_seconds = time.perf_counter() - started
    make_solver(model.tree, options.algorithm).compile()
    units = model.tree.units
    print(f"{now()}; load average {load_average()}")
    print(f"{options.opponent} on {model.tree.game_id}: exact strategy read in {model_seconds:.2f} s ({model.source})")

    started = time.perf_counter()
    point = solve_rnr(model, 0.5, algorithm=options.algorithm, precision=options.precision)
    point_seconds = time.perf_counter() - started
    solved = ", ".join(
        f"seat {s.seat}: {s.iterations:,} iterations, NashConv {s.nash_conv:.2e}, built in {s.build_seconds:.3f} s"
        for s in point.solutions
    )
    print(
        f"one RNR point (p = 0.5, both seats, {options.algorithm} to NashConv {options.precision:g} {units}): "
        f"{point_seconds:.2f} s ({solved})"
    )

    grid = [k / (options.points - 1) for k in range(options.points)]
    lp = None
    if options.lp:
        started = time.perf_counter()
        lp = SafeLP(model, (0, 1))
        print(f"ε-safe LP built and its game value solved in {time.perf_counter() - started:.2f} s")
    started = time.perf_counter()
    frontier = exact_frontier(
        model, ps=grid, weights=grid, algorithm=options.algorithm, precision=options.precision, lp=lp
    )
    frontier_seconds = time.perf_counter() - started
    print(
        f"{options.points}-point frontier{' with the LP check of every point' if lp else ''}: {frontier_seconds:.2f} s"
    )
    print(frontier_table(frontier).text())
    print(shares_table(frontier).text())
    if options.game == "rlcard:leduc-holdem" and options.precision == 1e-4 and options.points == 21 and not lp:
        print(f"one point in at most {POINT_TARGET:g} s: {verdict(point_seconds <= POINT_TARGET)}")
        print(f"21-point frontier in at most {FRONTIER_TARGET:g} s: {verdict(frontier_seconds <= FRONTIER_TARGET)}")
    return 0


def frontier_table(frontier: Frontier) -> Table:
    rows = []
    naive = {point.weight: point for point in frontier.naive}
    for point in frontier.rnr:
        line = naive.get(point.p)
        gap = "" if point.lp_exploitation is None else f"{point.lp_exploitation - point.exploitation:+.1e}"
        rows.append(
            (
                f"{point.p:.2f}",
                f"{point.exploitation:+.5f}",
                f"{point.exploitability:.5f}",
                f"{point.nash_conv:.1e}",
                f"{point.iterations:,}",
                f"{point.seconds:.2f}",
                gap,
                "" if line is None else f"{line.exploitation:+.5f} / {line.exploitability:.5f}",
            )
        )
    notes = (
        f"Exploiter in both seats against {frontier.opponent}, in {frontier.units}; "
        f"game value {frontier.game_value:g}.",
        f"Best response: exploitation {frontier.best_response_exploitation:+.5f}, "
        f"exploitability {frontier.best_response_exploitability:.5f}.",
        "LP gap: the ε-safe LP's exploitation at the point's guarantee minus the point's (at most NashConv / p).",
        "Naive: λ·BR + (1-λ)·Nash at λ = p, exploitation / exploitability.",
    )
    headers = ("p", "exploitation", "exploitability", "NashConv", "iterations", "seconds", "LP gap", "naive")
    return Table(f"RNR frontier of {frontier.game_id}", headers, tuple(rows), notes)


def shares_table(frontier: Frontier) -> Table:
    rows = tuple(
        (
            f"{share.level:g}",
            f"{share.exploitation:+.5f}",
            "" if share.share is None else f"{share.share:.1%}",
            "" if share.lp_share is None else f"{share.lp_share:.1%}",
        )
        for share in frontier.shares
    )
    title = f"Share of the best response's gain at exploitability levels {', '.join(map(str, LEVELS))}"
    return Table(title, ("level", "exploitation (RNR)", "share (RNR)", "share (LP)"), rows)


if __name__ == "__main__":
    sys.exit(main())
