"""Local best response calibrated against the exact best response: limit hold'em games small and large.

    python -m benchmarks.lbr --games holdem-6 holdem-8 holdem-12 fhp --iterations 0 2 30 --hands 10000 \\
        [--file fhp=PATH.npz ...] --out benchmarks/results/lbr

For each game, the agents are ``random`` and full-game DCFR after each number of ``--iterations`` (0 is the uniform
strategy, which ``random`` already is, so it is skipped), trained here on the public tree, plus any strategy file
given with ``--file GAME=PATH``. For each agent and each ``--call-until`` round, it writes LBR's exact value, the
exact best response's, their ratio, and LBR played in OpenSpiel's ``universal_poker`` over ``--hands`` hands in
duplicate pairs (mean and standard error), with the seconds each part took. Values are in mbb per hand, over both
seats. Writes ``<out>.md`` and ``<out>.json``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from adapters.games import canonical_game_id
from benchmarks.report import OneLineParser, Table, one_line_errors, progress, write_table_report
from cfr_agents.public_tree import public_tree
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.strategy_file import save_strategy
from cfr_agents.solvers import ALGORITHMS
from eval.lbr import lbr_report


def trained(game: str, iterations: int, folder: Path) -> str:
    """A DCFR strategy file of ``game`` after ``iterations`` iterations on its public tree."""
    tree = public_tree(canonical_game_id(game))
    solver = PublicTreeSolver(tree, ALGORITHMS["dcfr"], "dcfr")
    solver.run(iterations)
    path = folder / f"{game}-dcfr-{iterations}.npz"
    save_strategy(path, tree, solver.average_strategy(), algorithm="dcfr", parameters={}, iterations=iterations)
    return str(path)


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", nargs="+", default=["holdem-6", "holdem-8", "holdem-12", "fhp"])
    parser.add_argument("--iterations", nargs="*", type=int, default=[2, 30])
    parser.add_argument("--file", action="append", default=[], metavar="GAME=PATH", help="a strategy file to add")
    parser.add_argument("--call-until", nargs="+", type=int, default=[0], dest="call_until")
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_output("--out", suffixes=(".md", ".json"), required=True)
    args = parser.parse(argv)
    files: dict[str, list[str]] = {}
    for item in args.file:
        game, _, path = item.partition("=")
        if game not in args.games or not path:
            parser.error(f"--file {item}: give GAME=PATH with GAME one of --games ({', '.join(args.games)})")
        if not Path(path).is_file():
            parser.error(f"--file {item}: {path} does not exist")
        files.setdefault(game, []).append(path)
    rows, records = [], []
    with tempfile.TemporaryDirectory() as folder:
        for game in args.games:
            agents = [("random", "random")]
            for iterations in (i for i in args.iterations if i > 0):
                progress(f"{game}: DCFR, {iterations} iterations")
                agents.append((f"DCFR, {iterations} it", trained(game, iterations, Path(folder))))
            agents += [(Path(path).name, path) for path in files.get(game, [])]
            for label, agent in agents:
                for call_until in args.call_until:
                    progress(f"{game}: LBR against {label}, calling before round {call_until}")
                    started = time.perf_counter()
                    report = lbr_report(agent, game, hands=args.hands, seed=args.seed, call_until=call_until)
                    sampled = report.sampled
                    assert sampled is not None
                    record = {
                        **report.to_json(),
                        "agent": label,
                        "game_name": game,
                        "wall": time.perf_counter() - started,
                    }
                    records.append(record)
                    rows.append(
                        (
                            game,
                            label,
                            str(call_until),
                            f"{report.mbb(report.best_response):.4g}",
                            f"{report.mbb(report.exact):.4g}",
                            "-" if report.ratio is None else f"{report.ratio:.3f}",
                            f"{report.mbb(sampled.mean):.4g} ± {report.mbb(sampled.standard_error):.2g}",
                            f"{(sampled.mean - report.exact) / sampled.standard_error:+.2f}",
                            f"{report.exact_seconds:.1f}",
                            f"{report.play_seconds:.1f}",
                        )
                    )
    table = Table(
        "LBR against the exact best response (mbb per hand, both seats)",
        ("game", "agent", "calls before round", "exact BR", "LBR exact", "LBR / BR",
         f"LBR played ({args.hands:,} hands)", "z", "exact s", "play s"),
        tuple(rows),
        (
            "exact BR: the agent's exploitability (NashConv / 2); LBR exact: the engine's value of LBR's pure strategy;"
            " z: (played - exact) / standard error.",
            "exact s: building the tree, reading the agent, LBR in both seats and four exact values; play s: the hands"
            " in universal_poker.",
        ),
    )  # fmt: skip
    shown = sys.argv[1:] if argv is None else argv
    write_table_report(args.out, "Local best response", "benchmarks.lbr", shown, table, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
