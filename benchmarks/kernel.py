"""The compiled full-tree kernel: µs per CFR+ iteration beside OpenSpiel's C++ CFR+ and LiteEFG, and memory.

Run from the repository root (``make bench`` installs LiteEFG; without it its column is empty)::

    .venv/bin/python benchmarks/kernel.py [--games NAMES] [--rounds N] [--batch-seconds S] [--out FILE.md]

For each game: the speed of every solver as :func:`benchmarks.measure.measure_speed` measures it (warm-up,
then batches of about ``--batch-seconds`` interleaved across solvers, median of ``--rounds``), the
ratios of the others' time to ours in this same run, our targets, and in a fresh process per game the
kernel's compile time (from Numba's cache after the first run), the bytes per tree node of the
solver's arrays, and the process's peak RSS after building the tree and running 100 iterations.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

import numpy as np
import pyspiel

import adapters
import cfr_agents
from benchmarks.full_tree import LITEEFG_BASELINES, LiteEFGRunner, OpenSpielRunner, import_liteefg
from benchmarks.measure import Contender, Speed, measure_speed, our_runner
from benchmarks.report import OneLineParser, Table, load_average, machine_facts, now, one_line_errors, progress, verdict
from cfr_agents.files import write_atomic
from cfr_agents.solvers import FullTreeSolver
from cfr_agents.training import peak_rss_mb

LEDUC13 = (
    "universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=1 1,raiseSize=2 4,firstPlayer=1 1,"
    "maxRaises=2 2,numSuits=2,numRanks=13,numHoleCards=1,numBoardCards=0 1)"
)


@dataclass(frozen=True)
class Game:
    openspiel: str
    target_us: float
    """Our CFR+ µs per iteration must be at most this."""
    liteefg: bool
    """LiteEFG runs here (it builds its tree in Python: too slow for the large games)."""


GAMES: dict[str, Game] = {
    "kuhn": Game("kuhn_poker", 5.0, True),
    "leduc-iso": Game("leduc_poker(suit_isomorphism=True)", 10.0, True),
    "leduc": Game("leduc_poker", 30.0, True),
    "leduc13": Game(LEDUC13, 1000.0, False),
    "liars_dice": Game("liars_dice", 2000.0, False),
}
OPENSPIEL_RATIO_TARGET = ("leduc", 250.0)
"""On OpenSpiel Leduc our CFR+ must be at least this many times faster than OpenSpiel's C++ CFR+."""
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "kernel.md"


def contenders(name: str, liteefg: ModuleType | None) -> list[Contender]:
    game = GAMES[name]
    tree = cfr_agents.compile_tree(adapters.load_game(f"openspiel:{game.openspiel}"))
    pyspiel_game = pyspiel.load_game(game.openspiel)
    entries = [
        Contender("ours", "ours", "cfr+", "none", "cfr+ (ours)", partial(our_runner, tree, pyspiel_game, "cfr+")),
        Contender(
            "openspiel-cpp",
            "openspiel-cpp",
            "cfr+",
            "none",
            "OpenSpiel C++ CFRPlusSolver",
            partial(OpenSpielRunner, tree, pyspiel_game, pyspiel.CFRPlusSolver),
        ),
    ]
    if liteefg is not None and game.liteefg:
        runner = partial(LiteEFGRunner, tree, pyspiel_game, liteefg, LITEEFG_BASELINES["cfr+"])
        entries.append(Contender("liteefg", "liteefg", "cfr+", "none", "LiteEFG CFRplus", runner))
    return entries


def memory(name: str) -> dict[str, float]:
    """In this (fresh) process: build ``name``'s tree, compile, run 100 CFR+ iterations; the figures."""
    tree = cfr_agents.compile_tree(adapters.load_game(f"openspiel:{GAMES[name].openspiel}"))
    started = time.perf_counter()
    solver = cfr_agents.make_solver(tree, "cfr+")  # its payoff blocks are laid out here
    setup_seconds = time.perf_counter() - started
    assert isinstance(solver, FullTreeSolver)
    compile_seconds = solver.compile()
    solver.run(100)
    nodes = len(tree.node_kind)
    solver_bytes = solver.nbytes
    tree_bytes = sum(value.nbytes for value in vars(tree).values() if isinstance(value, np.ndarray))
    return {
        "infosets": tree.num_infosets,
        "nodes": nodes,
        "terminals": tree.num_terminals,
        "build_seconds": tree.build_seconds,
        "setup_seconds": setup_seconds,
        "compile_seconds": compile_seconds,
        "solver_bytes_per_node": solver_bytes / nodes,
        "tree_bytes_per_node": tree_bytes / nodes,
        "peak_rss_mb": peak_rss_mb(),
    }


def fresh_memory(name: str) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--memory", name], check=True, capture_output=True, text=True)
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def speed_table(name: str, speeds: Sequence[Speed]) -> tuple[Table, list[bool]]:
    by = {speed.solver: speed.median_ms * 1e3 for speed in speeds}
    ours = by["ours"]
    checks = [ours <= GAMES[name].target_us]
    rows = [("cfr+ (ours)", f"{ours:.2f}", "1", f"<= {GAMES[name].target_us:g} µs: {verdict(checks[0])}")]
    for solver, label in (("openspiel-cpp", "OpenSpiel C++ CFRPlusSolver"), ("liteefg", "LiteEFG CFRplus")):
        if solver not in by:
            rows.append((label, "not run", "", ""))
            continue
        ratio = by[solver] / ours
        note = ""
        if (name, solver) == (OPENSPIEL_RATIO_TARGET[0], "openspiel-cpp"):
            checks.append(ratio >= OPENSPIEL_RATIO_TARGET[1])
            note = f">= {OPENSPIEL_RATIO_TARGET[1]:g}x: {verdict(checks[-1])}"
        rows.append((label, f"{by[solver]:.2f}", f"{ratio:,.1f}", note))
    title = f"{name} (openspiel:{GAMES[name].openspiel}): µs per CFR+ iteration, median of interleaved batches"
    return Table(title, ("solver", "µs/iteration", "its time / ours", "target"), tuple(rows)), checks


def memory_table(figures: dict[str, dict[str, float]]) -> Table:
    rows = tuple(
        (
            name,
            f"{int(f['infosets']):,}",
            f"{int(f['nodes']):,}",
            f"{f['build_seconds']:.2f}",
            f"{f['setup_seconds']:.2f}",
            f"{f['compile_seconds']:.2f}",
            f"{f['solver_bytes_per_node']:.1f}",
            f"{f['tree_bytes_per_node']:.1f}",
            f"{f['peak_rss_mb']:.0f}",
        )
        for name, f in figures.items()
    )
    headers = (
        *("game", "infosets", "nodes", "build s", "setup s", "compile s"),
        *("solver B/node", "tree B/node", "peak RSS MiB"),
    )
    notes = (
        "Fresh process per game: build the tree (or load it from the tree cache), set the solver up (its payoff "
        "blocks), compile the kernel (Numba's cache after the first run), run 100 CFR+ iterations. Nodes count "
        "chance, decision and terminal nodes; the solver's bytes are its state, scratch and payoff blocks.",
    )
    return Table("Memory and start-up, per game", headers, rows, notes)


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(GAMES), help=f"comma-separated, of {', '.join(GAMES)}")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch-seconds", type=float, default=0.3)
    parser.add_output("--out", default=DEFAULT_OUT)
    parser.add_argument("--memory", metavar="GAME", help=argparse.SUPPRESS)
    options = parser.parse(argv, child="memory")
    if options.memory:
        print(json.dumps(memory(options.memory)))
        return 0
    names = [name for name in options.games.split(",") if name]
    unknown = [name for name in names if name not in GAMES]
    if unknown:
        parser.error(f"unknown games {unknown}; choose from {', '.join(GAMES)}")
    try:
        liteefg = import_liteefg()
    except ImportError:
        liteefg = None
    started_load = load_average()
    tables: list[Table] = []
    passed: list[bool] = []
    figures: dict[str, dict[str, float]] = {}
    for name in names:
        progress(f"kernel benchmark: {name}")
        figures[name] = fresh_memory(name)
        table, checks = speed_table(
            name, measure_speed(contenders(name, liteefg), name, options.rounds, options.batch_seconds)
        )
        tables.append(table)
        passed += checks
    tables.append(memory_table(figures))
    facts = {**machine_facts(), "load average before / after": f"{started_load} / {load_average()}"}
    command = "python benchmarks/kernel.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = "\n".join(table.text() for table in tables)
    print(text)
    header = [f"# Full-tree kernel benchmark ({now()})", "", f"Command: `{command.strip()}`", ""]
    header += [f"- {key}: {value}" for key, value in facts.items()]
    write_atomic(options.out, "\n".join(header) + "\n\n" + "\n".join(table.markdown() for table in tables))
    print(f"targets met: {sum(passed)}/{len(passed)}; wrote {options.out}")
    return 0 if all(passed) else 1


if __name__ == "__main__":
    sys.exit(main())
