"""Iterations and seconds to NashConv 1e-3, 1e-5 and 1e-7 for every full-tree update rule, per game.

Run from the repository root::

    .venv/bin/python benchmarks/convergence.py [--games NAMES] [--algos NAMES] [--budget-scale X] [--out FILE.md]

Each (game, rule) runs one fresh :class:`~cfr_agents.solvers.FullTreeSolver`, its kernel compiled first and
untimed, and measures exact NashConv (:func:`benchmarks.measure.nash_conv`) at ``round(10 ** (k / 20))``
iterations, twenty checks per decade, until NashConv is at most 1e-7 or the game's solve-time budget is
spent. A threshold's figures are those of the first check at or below it: the iterations, and the solve
seconds up to there (the time in the solver's ``run`` only; the NashConv checks are not counted). One
process runs everything in sequence, so the figures are comparable within a run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

import adapters
import cfr_agents
from benchmarks.kernel import LEDUC13
from benchmarks.measure import nash_conv
from benchmarks.report import OneLineParser, Table, load_average, machine_facts, now, one_line_errors, progress, verdict
from cfr_agents.files import write_atomic
from cfr_agents.solvers import ALGORITHMS, FullTreeSolver
from cfr_agents.training import log_spaced
from cfr_agents.tree import IntArray, lifted_rows

THRESHOLDS = (1e-3, 1e-5, 1e-7)
PER_DECADE = 20


@dataclass(frozen=True)
class Game:
    game_id: str
    budget: float
    """Solve seconds per rule before giving up on the thresholds not yet reached."""
    reduced: bool = False
    """Solve the game's lossless reduction (:meth:`adapters.Game.reduction`) and check its lifted strategy."""


GAMES: dict[str, Game] = {
    "kuhn": Game("openspiel:kuhn_poker", 2.0),
    "leduc": Game("openspiel:leduc_poker", 10.0),
    "leduc-reduced": Game("openspiel:leduc_poker", 10.0, reduced=True),
    "rlcard-leduc": Game("rlcard:leduc-holdem", 10.0),
    "leduc13": Game(f"openspiel:{LEDUC13}", 60.0),
    "liars_dice": Game("openspiel:liars_dice", 30.0),
}
TARGET = (("leduc", "leduc-reduced"), 1e-5, 0.050)
"""OpenSpiel Leduc to NashConv 1e-5 within 50 ms of solve time, by the fastest rule: on its own tree, and through
its suit-isomorphic reduction (equal iterates in exact arithmetic, lifted; NashConv checked on the full game)."""
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "convergence.md"


@dataclass(frozen=True)
class Reached:
    iterations: int
    seconds: float


@dataclass(frozen=True)
class Run:
    algorithm: str
    reached: tuple[Reached | None, ...]
    """Per threshold of :data:`THRESHOLDS`."""
    iterations: int
    seconds: float
    nash_conv: float
    compile_seconds: float


def converge(
    tree: cfr_agents.CompiledTree,
    algorithm: str,
    budget: float,
    stop: float = THRESHOLDS[-1],
    lift: tuple[cfr_agents.CompiledTree, IntArray] | None = None,
) -> Run:
    """One fresh solver, checked twenty times per decade, until NashConv <= ``stop`` or ``budget`` solve seconds.

    With ``lift = (reduced, rows)``, the solver runs on ``tree``'s reduction and each check plays its strategy on
    ``tree`` through :func:`~cfr_agents.tree.lifted_rows`' ``rows``.
    """
    rows = None if lift is None else lift[1]
    solver = cfr_agents.make_solver(tree if lift is None else lift[0], algorithm)
    assert isinstance(solver, FullTreeSolver)
    compile_seconds = solver.compile()
    reached: list[Reached | None] = [None] * len(THRESHOLDS)
    solve, value = 0.0, float("inf")
    for mark in log_spaced(PER_DECADE):
        started = time.perf_counter()
        solver.run(mark - solver.iteration)
        solve += time.perf_counter() - started
        strategy = solver.average_strategy()
        value = nash_conv(tree, strategy if rows is None else strategy[rows])
        for index, threshold in enumerate(THRESHOLDS):
            if reached[index] is None and value <= threshold:
                reached[index] = Reached(mark, solve)
        if value <= stop or solve >= budget:
            break
    return Run(algorithm, tuple(reached), solver.iteration, solve, value, compile_seconds)


def tree_reduction(tree: cfr_agents.CompiledTree) -> adapters.Reduction:
    reduction = adapters.load_game(tree.game_id).reduction()
    if reduction is None:
        raise SystemExit(f"{tree.game_id} has no lossless reduction")
    return reduction


def cell(reached: Reached | None) -> str:
    if reached is None:
        return "-"
    return f"{reached.iterations:,} / {reached.seconds * 1e3:,.1f} ms"


def game_table(name: str, tree: cfr_agents.CompiledTree, runs: Sequence[Run]) -> Table:
    headers = ("rule", *(f"to {threshold:g}: iterations / solve time" for threshold in THRESHOLDS), "last check")
    rows = tuple(
        (
            run.algorithm,
            *(cell(reached) for reached in run.reached),
            f"{run.nash_conv:.3g} at {run.iterations:,} ({run.seconds:.2f} s)",
        )
        for run in runs
    )
    notes = [f"Budget {GAMES[name].budget:g} s of solve time per rule; '-': not reached within it."]
    if name in TARGET[0]:
        index = THRESHOLDS.index(TARGET[1])
        times = [(reached.seconds, run.algorithm) for run in runs if (reached := run.reached[index]) is not None]
        best = min(times) if times else None
        passed = best is not None and best[0] <= TARGET[2]
        shown = "not reached" if best is None else f"{best[1]} in {best[0] * 1e3:.1f} ms"
        notes.append(f"Target NashConv {TARGET[1]:g} in <= {TARGET[2] * 1e3:g} ms: {shown}: {verdict(passed)}.")
    title = f"{name} ({tree.game_id}; {tree.num_infosets:,} infosets, {tree.units})"
    if GAMES[name].reduced:
        reduced = tree_reduction(tree).game_id
        title = f"{name} ({tree.game_id} solved as {reduced}, its strategy lifted to the full game; {tree.units})"
    return Table(title, headers, rows, tuple(notes))


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(GAMES), help=f"comma-separated, of {', '.join(GAMES)}")
    parser.add_argument("--algos", default=",".join(ALGORITHMS), help="comma-separated update rules")
    parser.add_argument("--budget-scale", type=float, default=1.0, help="multiply every game's budget")
    parser.add_output("--out", default=DEFAULT_OUT)
    options = parser.parse(argv)
    games = options.games.split(",")
    algorithms = options.algos.split(",")
    unknown = [name for name in games if name not in GAMES] + [name for name in algorithms if name not in ALGORITHMS]
    if unknown:
        parser.error(f"unknown game or rule: {', '.join(unknown)}")
    started_load = load_average()
    tables = []
    for name in games:
        tree = cfr_agents.compile_tree(adapters.load_game(GAMES[name].game_id))
        lift = None
        if GAMES[name].reduced:
            reduction = tree_reduction(tree)
            reduced = cfr_agents.compile_tree(adapters.load_game(reduction.game_id))
            lift = (reduced, lifted_rows(tree, reduced, reduction))
        runs = []
        for algorithm in algorithms:
            progress(f"convergence: {name} {algorithm}")
            runs.append(converge(tree, algorithm, GAMES[name].budget * options.budget_scale, lift=lift))
        table = game_table(name, tree, runs)
        print(table.text(), flush=True)
        tables.append(table)
    facts = {**machine_facts(), "load average before / after": f"{started_load} / {load_average()}"}
    command = "benchmarks/convergence.py " + " ".join(argv if argv is not None else sys.argv[1:])
    header = [
        "# Convergence of the full-tree update rules",
        "",
        f"`{command.strip()}`, {now()}. " + "; ".join(f"{key}: {value}" for key, value in facts.items()) + ".",
        "",
        "Iterations and solve time (kernel compiled first, NashConv checks not counted) to the first of twenty "
        "checks per decade at or below each NashConv.",
    ]
    write_atomic(options.out, "\n".join(header) + "\n\n" + "\n".join(table.markdown() for table in tables))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
