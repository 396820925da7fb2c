"""How cost grows with the game: size, build time, time per CFR+ iteration, time to NashConv 1e-5 and
memory, per game, beside OpenSpiel's C++ CFR+ and LiteEFG where they run.

Run from the repository root (``make bench`` installs LiteEFG; without it its column is empty)::

    .venv/bin/python benchmarks/cost.py [--games NAMES] [--budget SECONDS] [--out FILE.md] [--merge]

``--merge`` measures only ``--games`` and keeps the other rows of ``--out``'s JSON as they were measured (each row
says when, and at what load).

Each game runs in a fresh process, which reports:

* its infosets and nodes (chance, decision and terminal);
* the cold build (``compile_tree(game, cache=False)``) and, after the tree cache is filled, a cached load;
* the full-tree solver's set-up (laying out its payoff blocks, :mod:`cfr_agents.solvers.payoff_blocks`),
  cold and from the tree cache;
* µs per CFR+ iteration: ours (kernel compiled first), OpenSpiel's C++ ``CFRPlusSolver`` and LiteEFG's
  ``CFRplus`` (small games only: it builds its tree in Python), each timed over batches of at least
  ``--batch-seconds``, the best of ``--rounds``;
* the solve seconds to NashConv 1e-5 of our fastest rule of ``dcfr``, ``dcfr+`` and ``pdcfr+`` (the fastest
  in ``benchmarks/convergence.py``), checked twenty times per decade, within ``--budget`` seconds per rule;
* the process's peak RSS.

The table ends with the answer a user asks first: the largest of these games solved to 1e-5 within one
minute of solve time on this machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

from benchmarks.kernel import LEDUC13
from benchmarks.report import OneLineParser, Table, load_average, machine_facts, now, one_line_errors, progress
from cfr_agents.files import write_atomic

UNIVERSAL = (
    "universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=1 1,raiseSize=2 4,firstPlayer=1 1,"
    "maxRaises=2 2,numSuits=4,numRanks=6,numHoleCards=1,numBoardCards=0 1)"
)
"""A Leduc-like limit game on a 24-card deck (4 suits of 6 ranks): 16,704 infosets, 919,105 nodes."""
UNIVERSAL_52 = UNIVERSAL.replace("numSuits=4,numRanks=6", "numSuits=4,numRanks=13")
"""The same on a full 52-card deck: 79,872 infosets, 9,984,833 nodes."""
GAMES: dict[str, str] = {
    "kuhn": "openspiel:kuhn_poker",
    "leduc": "openspiel:leduc_poker",
    "rlcard-leduc": "rlcard:leduc-holdem",
    "leduc-iso": "openspiel:leduc_poker(suit_isomorphism=True)",
    "liars_dice": "openspiel:liars_dice",
    "leduc13": f"openspiel:{LEDUC13}",
    "universal-24": f"openspiel:{UNIVERSAL}",
    "universal-52": f"openspiel:{UNIVERSAL_52}",
    "kuhn3": "openspiel:kuhn_poker(players=3)",
    "kuhn4": "openspiel:kuhn_poker(players=4)",
    "leduc3": "openspiel:leduc_poker(players=3)",
}
LITEEFG_GAMES = ("kuhn", "leduc", "leduc-iso")
RULES = ("dcfr", "dcfr+", "pdcfr+")
TARGET = 1e-5
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "cost.md"


def best_of(step: Callable[[int], None], rounds: int, batch_seconds: float) -> float:
    """Seconds per iteration: the best of ``rounds`` batches of at least ``batch_seconds`` each."""
    step(1)  # warm-up
    best = float("inf")
    for _ in range(rounds):
        iterations, started = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - started) < batch_seconds:
            step(max(1, iterations))
            iterations += max(1, iterations)
        best = min(best, elapsed / iterations)
    return best


def measure(name: str, budget: float, rounds: int, batch_seconds: float) -> dict[str, Any]:
    """In this (fresh) process: every figure of ``name``'s row."""
    import os

    import pyspiel

    import adapters
    import cfr_agents
    from benchmarks.convergence import converge
    from cfr_agents.solvers import FullTreeSolver
    from cfr_agents.training import peak_rss_mb
    from cfr_agents.tree import compile_tree

    game = adapters.load_game(GAMES[name], any_players=True)
    started = time.perf_counter()
    tree = compile_tree(game, cache=False)
    cold = time.perf_counter() - started
    started = time.perf_counter()
    solver = cfr_agents.make_solver(tree, "cfr+")  # the tree is not cached: its blocks are laid out
    setup_cold = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache
        os.environ.pop("CFR_AGENTS_NO_TREE_CACHE", None)
        cfr_agents.make_solver(compile_tree(game), "cfr+")  # fills the cache: the tree and its blocks
        started = time.perf_counter()
        loaded = compile_tree(game)
        cached = time.perf_counter() - started
        started = time.perf_counter()
        cfr_agents.make_solver(loaded, "cfr+")
        setup_cached = time.perf_counter() - started
        del loaded
    figures: dict[str, Any] = {
        "game": GAMES[name],
        "infosets": tree.num_infosets,
        "nodes": len(tree.node_kind),
        "cold_build": cold,
        "cached_load": cached,
        "setup_cold": setup_cold,
        "setup_cached": setup_cached,
    }
    assert isinstance(solver, FullTreeSolver)
    solver.compile()
    figures["ours_us"] = best_of(solver.run, rounds, batch_seconds) * 1e6
    if GAMES[name].startswith("openspiel:"):
        cpp = pyspiel.CFRPlusSolver(pyspiel.load_game(GAMES[name].removeprefix("openspiel:")))

        def cpp_step(iterations: int) -> None:
            for _ in range(iterations):
                cpp.evaluate_and_update_policy()

        figures["openspiel_us"] = best_of(cpp_step, max(1, rounds // 2), batch_seconds) * 1e6
    if name in LITEEFG_GAMES:
        try:
            from functools import partial

            from benchmarks.full_tree import LITEEFG_BASELINES, LiteEFGRunner, import_liteefg

            runner = partial(
                LiteEFGRunner,
                tree,
                pyspiel.load_game(GAMES[name].removeprefix("openspiel:")),
                import_liteefg(),
                LITEEFG_BASELINES["cfr+"],
            )()
            figures["liteefg_us"] = best_of(runner.step, rounds, batch_seconds) * 1e6
        except ImportError:
            pass
    reached = []
    for rule in RULES:
        run = converge(tree, rule, budget, stop=TARGET)
        point = run.reached[list((1e-3, 1e-5, 1e-7)).index(TARGET)]
        if point is not None:
            reached.append((point.seconds, point.iterations, rule))
    if reached:
        seconds, iterations, rule = min(reached)
        figures |= {"to_target_seconds": seconds, "to_target_iterations": iterations, "to_target_rule": rule}
    figures["peak_rss_mb"] = peak_rss_mb()
    figures["measured"] = f"{now()}, load {load_average()}"
    return figures


def fresh(name: str, budget: float, rounds: int, batch_seconds: float) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--one", name, "--budget", str(budget)]
    argv += ["--rounds", str(rounds), "--batch-seconds", str(batch_seconds)]
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    figures: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return figures


def _us(value: Any) -> str:
    return f"{float(value):,.1f}" if isinstance(value, int | float) else "-"


def table(rows: dict[str, dict[str, Any]], budget: float) -> Table:
    lines = []
    for name, f in rows.items():
        seconds = f.get("to_target_seconds")
        to_target = (
            f"{float(seconds):.3g} s ({f['to_target_rule']}, {int(f['to_target_iterations']):,} it)"
            if isinstance(seconds, float)
            else f"> {budget:g} s"
        )
        lines.append(
            (
                name,
                f"{int(f['infosets']):,}",
                f"{int(f['nodes']):,}",
                f"{float(f['cold_build']):.3f} / {float(f['cached_load']):.3f}",
                f"{float(f['setup_cold']):.3f} / {float(f['setup_cached']):.3f}",
                _us(f.get("ours_us")),
                _us(f.get("openspiel_us")),
                _us(f.get("liteefg_us")),
                to_target,
                f"{float(f['peak_rss_mb']):,.0f}",
            )
        )
    within = [
        (int(f["nodes"]), name)
        for name, f in rows.items()
        if isinstance(f.get("to_target_seconds"), float) and float(f["to_target_seconds"]) <= 60.0
    ]
    stamps = {str(f.get("measured", "")).split(", load")[0] for f in rows.values()}
    when = (
        tuple(f"{name}: measured {f['measured']}." for name, f in rows.items() if "measured" in f)
        if len(stamps) > 1
        else ()
    )
    answer = f"The largest of these games solved to NashConv {TARGET:g} within one minute of solve time: " + (
        f"{max(within)[1]} ({max(within)[0]:,} nodes)." if within else "none."
    )
    headers = (
        "game",
        "infosets",
        "nodes",
        "build s, cold / cached",
        "solver set-up s, cold / cached",
        "µs/it CFR+ (ours)",
        "µs/it OpenSpiel C++",
        "µs/it LiteEFG",
        f"to NashConv {TARGET:g}",
        "peak RSS MiB",
    )
    return Table("Cost against game size", headers, tuple(lines), (answer, *when))


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(GAMES), help=f"comma-separated, of {', '.join(GAMES)}")
    parser.add_argument("--budget", type=float, default=60.0, help="solve seconds per rule toward 1e-5")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-seconds", type=float, default=0.5)
    parser.add_output("--out", suffixes=("", ".json"), default=DEFAULT_OUT)
    parser.add_argument("--merge", action="store_true", help="keep the other games' rows of --out's JSON")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    options = parser.parse(argv, child="one")
    if options.one:
        print(json.dumps(measure(options.one, options.budget, options.rounds, options.batch_seconds)))
        return 0
    names = [name for name in options.games.split(",") if name]
    unknown = [name for name in names if name not in GAMES]
    if unknown:
        parser.error(f"unknown games {unknown}; choose from {', '.join(GAMES)}")
    started_load = load_average()
    kept = options.out.with_suffix(".json")
    rows: dict[str, dict[str, Any]] = json.loads(kept.read_text()) if options.merge and kept.exists() else {}
    earlier = options.out.read_text().splitlines()[0].removeprefix("# ") if rows and options.out.exists() else ""
    for row in rows.values():
        row.setdefault("measured", f"in an earlier run: {earlier}")
    for name in names:
        progress(f"cost: {name}")
        rows[name] = fresh(name, options.budget, options.rounds, options.batch_seconds)
    rows = {name: rows[name] for name in GAMES if name in rows}  # the table's order
    result = table(rows, options.budget)
    print(result.text())
    facts = {**machine_facts(), "load average before / after": f"{started_load} / {load_average()}"}
    command = "benchmarks/cost.py " + " ".join(argv if argv is not None else sys.argv[1:])
    header = [f"# Cost against game size ({now()})", "", f"Command: `{command.strip()}`", ""]
    header += [f"- {key}: {value}" for key, value in facts.items()]
    write_atomic(options.out, "\n".join(header) + "\n\n" + result.markdown())
    write_atomic(options.out.with_suffix(".json"), json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
