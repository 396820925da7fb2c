"""Side-by-side benchmark of our full-tree CFR family against OpenSpiel's and LiteEFG's C++ solvers.

Run from the repository root::

    .venv/bin/python benchmarks/solvers.py [--games kuhn,leduc] [--budget SECONDS] [--quick] [--out DIR]

What is measured, on OpenSpiel ``kuhn_poker`` and ``leduc_poker``, in one process:

1. **ms per iteration** of every solver: after a warm-up, each solver runs batches of
   iterations sized to about ``batch_seconds``; the batches of all solvers are
   interleaved round by round, so load drift on a shared machine hits all of them alike,
   and the median over the rounds is reported. Nothing else runs in the timed region.
2. **Convergence**: NashConv (chips) of each solver's *average* strategy against solve
   time, at log-spaced iteration counts, until NashConv <= 1e-5 or the per-solver time
   budget is spent. Only the solver's own iterations are timed; reading its average
   policy and evaluating it are not. One NashConv function serves every solver: each
   policy is converted to an ``(N, A)`` array on our compiled tree and evaluated exactly
   by :func:`eval.exploitability_of_strategy`. At the end of each run the same policy is
   evaluated by OpenSpiel too (and, for LiteEFG, by LiteEFG itself) as a cross-check.
3. **Speed-up ratios** (anchor ms/iteration over ours) with PASS/FAIL against the targets.
4. **Time targets** on Leduc for DCFR and predictive CFR+.
5. **Tree build times** of OpenSpiel and RLCard Leduc.
6. **Memory**: resident set size after 100 and after 10,000 iterations must not grow.

Results go to stdout as plain-text tables and to ``--out`` as ``results.md``, ``curves.csv``
and one ``nash_conv_vs_time_<game>.png`` per game, each written atomically.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import io
import math
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn, Protocol
from urllib.parse import unquote

import numpy as np
import pyspiel
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import adapters
import cfr_agents
from cfr_agents.files import replacing, write_atomic
from cfr_agents.training import CurvePoint, current_rss_mb, log_spaced, peak_rss_mb
from cfr_agents.tree import CompiledTree, FloatArray
from eval import exploitability_of_strategy

GAMES: dict[str, str] = {"kuhn": "kuhn_poker", "leduc": "leduc_poker"}
"""``--games`` names and the OpenSpiel game each stands for."""
OUR_ALGORITHMS = ("cfr", "cfr+", "lcfr", "dcfr", "pcfr+")
THRESHOLDS = (1e-3, 1e-5)
STOP_NASH_CONV = 1e-5
CHECKPOINTS_PER_DECADE = 40
"""NashConv is measured at ``round(10 ** (k / 40))`` iterations: every ~6%, every iteration below 17."""
DEFAULT_BUDGET = 30.0
QUICK_BUDGET = 2.0
CROSS_CHECK_TOLERANCE = 1e-9
SPEEDUP_TARGETS: dict[str, float] = {"openspiel-cpp": 40.0, "liteefg": 5.0}
"""Least acceptable ``anchor ms/iteration / our ms/iteration`` on Leduc, per anchor family."""
SPEEDUP_PAIRS = (("cfr+", "cfr+"), ("cfr", "cfr"), ("dcfr", "dcfr"))
"""``(our algorithm, anchor algorithm)``; a pair is compared with every anchor family that has it."""
TIME_TARGET_SOLVERS = ("dcfr", "pcfr+")
TIME_TARGETS = ((1e-3, 0.25), (1e-5, 5.0))
"""``(NashConv, seconds)``: on Leduc, one of :data:`TIME_TARGET_SOLVERS` must get there that fast."""
BUILD_TARGETS = (("openspiel:leduc_poker", 2.0), ("rlcard:leduc-holdem", 5.0))
MEMORY_ALGORITHMS = ("cfr+", "dcfr")
MEMORY_ITERATIONS = (100, 10_000)
MEMORY_TOLERANCE_MB = 1.0
DEFAULT_OUT = Path(__file__).resolve().parent / "results"


# --------------------------------------------------------------------------------------------
# Options


@dataclass(frozen=True)
class Settings:
    games: tuple[str, ...]
    budget: float
    """Solve seconds per solver per game for the convergence runs."""
    speed_rounds: int
    batch_seconds: float
    out: Path
    command: str


class _Parser(argparse.ArgumentParser):
    """Bad options end the run with one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def parse_settings(argv: Sequence[str]) -> Settings:
    parser = _Parser(prog="benchmarks/solvers.py", description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="kuhn,leduc", help="comma-separated subset of: kuhn, leduc")
    parser.add_argument("--budget", type=float, help=f"solve seconds per solver per game (default {DEFAULT_BUDGET:g})")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: budget {QUICK_BUDGET:g} s unless --budget is given, fewer speed rounds",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default benchmarks/results)")
    options = parser.parse_args(argv)
    games = tuple(name.strip() for name in options.games.split(",") if name.strip())
    unknown = [name for name in games if name not in GAMES]
    if not games or unknown:
        parser.error(f"--games takes a comma-separated subset of {', '.join(GAMES)}, not {options.games!r}")
    budget = options.budget if options.budget is not None else (QUICK_BUDGET if options.quick else DEFAULT_BUDGET)
    if not (math.isfinite(budget) and budget > 0):
        parser.error(f"--budget must be a positive number of seconds, not {budget}")
    if options.out.exists() and not options.out.is_dir():
        parser.error(f"--out {str(options.out)!r} exists and is not a directory")
    return Settings(
        games=tuple(dict.fromkeys(games)),
        budget=budget,
        speed_rounds=3 if options.quick else 9,
        batch_seconds=0.03 if options.quick else 0.1,
        out=options.out,
        command=shlex.join(sys.orig_argv),
    )


# --------------------------------------------------------------------------------------------
# Solvers behind one surface


@dataclass(frozen=True)
class ReferenceCheck:
    """Our NashConv of a final average policy beside other implementations' NashConv of it."""

    ours: float
    reference: float
    """The same policy's NashConv computed by OpenSpiel."""
    reference_name: str
    native: float | None = None
    """The solver's own NashConv of its policy (LiteEFG's ``sum(env.exploitability(...))``)."""
    conversion_gap: float | None = None
    """Largest difference between the fast policy read-out used for the curve and the public one."""

    @property
    def difference(self) -> float:
        return abs(self.ours - self.reference)

    @property
    def agrees(self) -> bool:
        return self.difference <= CROSS_CHECK_TOLERANCE and (self.conversion_gap or 0.0) <= CROSS_CHECK_TOLERANCE


class Runner(Protocol):
    """One solver instance: iterate it (timed), read its average strategy (not timed)."""

    def step(self, iterations: int) -> None: ...

    def average_strategy(self) -> FloatArray:
        """The average policy as an ``(N, A)`` array on our compiled tree."""
        ...

    def reference_check(self) -> ReferenceCheck: ...


@dataclass(frozen=True)
class Contender:
    """A named solver; ``make`` returns a fresh instance."""

    name: str
    family: str
    """``ours``, ``openspiel-cpp`` or ``liteefg``."""
    algorithm: str
    label: str
    make: Callable[[], Runner]


def nash_conv(tree: CompiledTree, strategy: FloatArray) -> float:
    """The one NashConv used for every solver: exact, on our compiled tree, in chips."""
    return exploitability_of_strategy(tree, strategy).nash_conv


def strategy_from_table(tree: CompiledTree, table: Mapping[str, Sequence[tuple[int, float]]]) -> FloatArray:
    """``{information_state_string: [(action id, probability), ...]}`` as an ``(N, A)`` array."""
    if len(table) != tree.num_infosets or any(key not in tree.index for key in table):
        raise ValueError(f"the policy's {len(table)} infosets are not the tree's {tree.num_infosets}")
    strategy = np.zeros(tree.action_mask.shape)
    for key, pairs in table.items():
        row = tree.index[key]
        actions = tree.infoset_actions[row]
        for action, probability in pairs:
            strategy[row, actions.index(action)] = probability
    return strategy


class OurRunner:
    def __init__(self, tree: CompiledTree, game: Any, algorithm: str) -> None:
        self._tree = tree
        self._game = game
        self._solver = cfr_agents.make_solver(tree, algorithm)

    def step(self, iterations: int) -> None:
        self._solver.run(iterations)

    def average_strategy(self) -> FloatArray:
        return self._solver.average_strategy()

    def reference_check(self) -> ReferenceCheck:
        policy = self._solver.average_policy()
        return ReferenceCheck(
            ours=nash_conv(self._tree, self.average_strategy()),
            reference=float(openspiel_exploitability.nash_conv(self._game, policy.openspiel_policy())),
            reference_name="open_spiel.python exploitability.nash_conv",
        )


class OpenSpielRunner:
    """``pyspiel.CFRSolver`` or ``pyspiel.CFRPlusSolver``; one iteration = ``evaluate_and_update_policy()``."""

    def __init__(self, tree: CompiledTree, game: Any, solver_class: Any) -> None:
        self._tree = tree
        self._game = game
        self._solver = solver_class(game)

    def step(self, iterations: int) -> None:
        update = self._solver.evaluate_and_update_policy
        for _ in range(iterations):
            update()

    def average_strategy(self) -> FloatArray:
        return strategy_from_table(self._tree, self._solver.tabular_average_policy().policy_table())

    def reference_check(self) -> ReferenceCheck:
        return ReferenceCheck(
            ours=nash_conv(self._tree, self.average_strategy()),
            reference=float(pyspiel.nash_conv(self._game, self._solver.average_policy())),
            reference_name="pyspiel.nash_conv of average_policy()",
        )


@dataclass(frozen=True)
class LiteEFGBaseline:
    """How LiteEFG's own ``baselines.utils.train`` runs a baseline."""

    module: str
    strategy_type: str | None
    """Argument of ``graph.current_strategy``; ``None`` = its default."""
    averaging: str
    """The environment's averaging of that strategy (``convergence_type`` in ``train``)."""


LITEEFG_BASELINES: dict[str, LiteEFGBaseline] = {
    "cfr": LiteEFGBaseline("CFR", None, "avg-iterate"),
    "cfr+": LiteEFGBaseline("CFRplus", None, "linear-avg-iterate"),
    "dcfr": LiteEFGBaseline("DCFR", "average-iterate", "last-iterate"),
}


@contextlib.contextmanager
def silenced_stdout() -> Iterator[None]:
    """Send file descriptor 1 to /dev/null (LiteEFG prints banners, some from C++)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 1)
            yield
            sys.stdout.flush()
    finally:
        os.dup2(saved, 1)
        os.close(saved)


class LiteEFGRunner:
    """A LiteEFG baseline graph on ``LiteEFG.OpenSpielEnv``, stepped as its ``train`` does."""

    def __init__(self, tree: CompiledTree, game: Any, liteefg: ModuleType, baseline: LiteEFGBaseline) -> None:
        self._tree = tree
        self._game = game
        self._liteefg = liteefg
        self._averaging = baseline.averaging
        with silenced_stdout():
            module = getattr(liteefg.baselines, baseline.module)
            self._graph = module.graph()
            self._env = liteefg.OpenSpielEnv(game, traverse_type="Enumerate", regenerate=False)
            self._env.set_graph(self._graph)
        strategy_type = baseline.strategy_type
        self._node = (
            self._graph.current_strategy() if strategy_type is None else self._graph.current_strategy(strategy_type)
        )

    def step(self, iterations: int) -> None:
        graph, env, node = self._graph, self._env, self._node
        for _ in range(iterations):
            graph.update_graph(env)
            env.update_strategy(node, update_best=False)

    def average_strategy(self) -> FloatArray:
        """Read LiteEFG's per-infoset rows directly; the public ``get_strategy`` costs ~40 ms on Leduc.

        Row names are ``pl<p>_<i>__<percent-quoted information_state_string>`` and the
        probabilities follow the legal actions in ascending order (OpenSpiel's, as our columns).
        """
        strategy = np.zeros(self._tree.action_mask.shape)
        seen = 0
        for player in (1, 2):
            for name, probabilities in self._liteefg.FileEnv.get_strategy(
                self._env, player, self._node, self._averaging
            ):
                row = self._tree.index[unquote(name[name.index("__") + 2 :])]
                strategy[row, : len(probabilities)] = probabilities
                seen += 1
        if seen != self._tree.num_infosets:
            raise ValueError(f"LiteEFG reported {seen} infosets, the tree has {self._tree.num_infosets}")
        return strategy

    def reference_check(self) -> ReferenceCheck:
        policy, _ = self._env.get_strategy(self._node, self._averaging)
        public = np.zeros(self._tree.action_mask.shape)
        for key, index in policy.state_lookup.items():
            row = self._tree.index[key]
            public[row, : len(self._tree.infoset_actions[row])] = policy.action_probability_array[
                index, list(self._tree.infoset_actions[row])
            ]
        fast = self.average_strategy()
        return ReferenceCheck(
            ours=nash_conv(self._tree, fast),
            reference=float(openspiel_exploitability.nash_conv(self._game, policy)),
            reference_name="open_spiel.python exploitability.nash_conv of env.get_strategy()",
            native=float(sum(self._env.exploitability(self._node, self._averaging))),
            conversion_gap=float(np.abs(fast - public).max()),
        )


def import_liteefg() -> tuple[ModuleType | None, str]:
    """LiteEFG if it imports, else ``None`` and why."""
    try:
        with silenced_stdout():
            import LiteEFG
    except (ImportError, OSError) as error:
        return None, f"LiteEFG skipped: it does not import ({error})"
    return LiteEFG, ""


def contenders(tree: CompiledTree, game: Any, liteefg: ModuleType | None) -> list[Contender]:
    """Our five solvers, OpenSpiel's two C++ solvers and LiteEFG's three baselines (if present)."""
    entries = [
        Contender(algo, "ours", algo, f"{algo} (ours)", partial(OurRunner, tree, game, algo)) for algo in OUR_ALGORITHMS
    ]
    for algo, solver_class, label in (
        ("cfr", pyspiel.CFRSolver, "OpenSpiel C++ CFRSolver"),
        ("cfr+", pyspiel.CFRPlusSolver, "OpenSpiel C++ CFRPlusSolver"),
    ):
        entries.append(
            Contender(
                f"openspiel-cpp:{algo}",
                "openspiel-cpp",
                algo,
                label,
                partial(OpenSpielRunner, tree, game, solver_class),
            )
        )
    if liteefg is not None:
        for algo, baseline in LITEEFG_BASELINES.items():
            entries.append(
                Contender(
                    f"liteefg:{algo}",
                    "liteefg",
                    algo,
                    f"LiteEFG {baseline.module}",
                    partial(LiteEFGRunner, tree, game, liteefg, baseline),
                )
            )
    return entries


# --------------------------------------------------------------------------------------------
# Measurements


@dataclass(frozen=True)
class Speed:
    solver: str
    game: str
    batch_iterations: int
    samples_ms: tuple[float, ...]
    """ms per iteration of each timed batch."""

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def range_ms(self) -> str:
        return f"{_ms(min(self.samples_ms))}-{_ms(max(self.samples_ms))}"


def _timed_step(runner: Runner, iterations: int) -> float:
    started = time.perf_counter()
    runner.step(iterations)
    return time.perf_counter() - started


def _calibrate(runner: Runner, batch_seconds: float) -> int:
    """Warm up, then the batch size that takes about ``batch_seconds``."""
    runner.step(2)
    iterations = 1
    while True:
        elapsed = _timed_step(runner, iterations)
        if elapsed >= batch_seconds / 4:
            return max(1, round(iterations * batch_seconds / elapsed))
        iterations *= 2


def measure_speed(entries: Sequence[Contender], game: str, rounds: int, batch_seconds: float) -> list[Speed]:
    """Median ms/iteration of each solver over ``rounds`` rounds of interleaved batches."""
    runners = [entry.make() for entry in entries]
    batches = [_calibrate(runner, batch_seconds) for runner in runners]
    samples: list[list[float]] = [[] for _ in entries]
    for _ in range(rounds):
        for runner, batch, sample in zip(runners, batches, samples, strict=True):
            sample.append(_timed_step(runner, batch) / batch * 1e3)
    return [
        Speed(entry.name, game, batch, tuple(sample))
        for entry, batch, sample in zip(entries, batches, samples, strict=True)
    ]


@dataclass(frozen=True)
class Convergence:
    solver: str
    label: str
    family: str
    algorithm: str
    game: str
    budget: float
    points: tuple[CurvePoint, ...]
    check: ReferenceCheck

    @property
    def final(self) -> CurvePoint:
        return self.points[-1]

    def first_reaching(self, threshold: float) -> CurvePoint | None:
        """The first checkpoint with NashConv <= ``threshold``, if any."""
        return next((point for point in self.points if point.nash_conv <= threshold), None)


def measure_convergence(entry: Contender, tree: CompiledTree, game: str, budget: float) -> Convergence:
    """Run one fresh solver until NashConv <= :data:`STOP_NASH_CONV` or ``budget`` solve seconds."""
    runner = entry.make()
    points: list[CurvePoint] = []
    solve, done = 0.0, 0
    for mark in log_spaced(CHECKPOINTS_PER_DECADE):
        solve += _timed_step(runner, mark - done)
        done = mark
        points.append(CurvePoint(mark, solve, nash_conv(tree, runner.average_strategy())))
        if points[-1].nash_conv <= STOP_NASH_CONV or solve >= budget:
            break
    check = runner.reference_check()
    return Convergence(entry.name, entry.label, entry.family, entry.algorithm, game, budget, tuple(points), check)


@dataclass(frozen=True)
class BuildTime:
    game_id: str
    seconds: float
    target: float
    summary: str

    @property
    def passed(self) -> bool:
        return self.seconds <= self.target


def measure_build(game_id: str, target: float) -> BuildTime:
    """Wall time of ``compile_tree`` (the game object is loaded first, untimed)."""
    game = adapters.load_game(game_id)
    started = time.perf_counter()
    tree = cfr_agents.compile_tree(game)
    return BuildTime(game_id, time.perf_counter() - started, target, tree.summary())


@dataclass(frozen=True)
class MemoryCheck:
    solver: str
    iterations: tuple[int, int]
    rss_mb: tuple[float, float]
    """Current RSS after each of :attr:`iterations`, after a garbage collection."""

    @property
    def growth_mb(self) -> float:
        return self.rss_mb[1] - self.rss_mb[0]

    @property
    def passed(self) -> bool:
        return self.growth_mb <= MEMORY_TOLERANCE_MB


def measure_memory(tree: CompiledTree, algorithm: str) -> MemoryCheck:
    solver = cfr_agents.make_solver(tree, algorithm)
    readings = []
    for iterations in MEMORY_ITERATIONS:
        solver.run(iterations - solver.iteration)
        gc.collect()
        readings.append(current_rss_mb())
    return MemoryCheck(algorithm, MEMORY_ITERATIONS, (readings[0], readings[1]))


# --------------------------------------------------------------------------------------------
# Verdicts


@dataclass(frozen=True)
class Ratio:
    game: str
    ours: str
    anchor: str
    ours_ms: float
    anchor_ms: float
    target: float | None
    """``None``: reported for information, no target."""

    @property
    def value(self) -> float:
        return self.anchor_ms / self.ours_ms

    @property
    def verdict(self) -> str:
        if self.target is None:
            return "info"
        return "PASS" if self.value >= self.target else "FAIL"


def speed_ratios(speeds: Sequence[Speed], game: str) -> list[Ratio]:
    by_name = {speed.solver: speed.median_ms for speed in speeds}
    ratios = []
    for ours, anchor_algorithm in SPEEDUP_PAIRS:
        for family, target in SPEEDUP_TARGETS.items():
            anchor = f"{family}:{anchor_algorithm}"
            if ours in by_name and anchor in by_name:
                applies = game == "leduc" and ours in ("cfr", "cfr+")
                ratios.append(Ratio(game, ours, anchor, by_name[ours], by_name[anchor], target if applies else None))
    return ratios


@dataclass(frozen=True)
class TimeTarget:
    threshold: float
    target_seconds: float
    reached: tuple[tuple[str, CurvePoint | None], ...]
    """Per solver of :data:`TIME_TARGET_SOLVERS`: its first checkpoint at ``threshold``."""

    @property
    def passed(self) -> bool:
        return any(point is not None and point.seconds <= self.target_seconds for _, point in self.reached)


def time_targets(runs: Sequence[Convergence]) -> list[TimeTarget]:
    chosen = [run for run in runs if run.game == "leduc" and run.solver in TIME_TARGET_SOLVERS]
    return [
        TimeTarget(threshold, seconds, tuple((run.solver, run.first_reaching(threshold)) for run in chosen))
        for threshold, seconds in TIME_TARGETS
    ]


# --------------------------------------------------------------------------------------------
# Presentation


@dataclass(frozen=True)
class Table:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        widths = [max(len(cell) for cell in column) for column in zip(self.headers, *self.rows, strict=True)]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()

        body = [line(self.headers), line(["-" * width for width in widths]), *(line(row) for row in self.rows)]
        return "\n".join([f"== {self.title}", *body, *self.notes]) + "\n"

    def markdown(self) -> str:
        def line(cells: Sequence[str]) -> str:
            return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

        body = [line(self.headers), line(["---"] * len(self.headers)), *(line(row) for row in self.rows)]
        notes = ["", *self.notes] if self.notes else []
        return "\n".join([f"## {self.title}", "", *body, *notes]) + "\n"


def _ms(value: float) -> str:
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def _reached(run: Convergence, threshold: float) -> str:
    point = run.first_reaching(threshold)
    if point is None:
        return f"not reached (NashConv {run.final.nash_conv:.2e} after {run.final.seconds:.1f} s)"
    return f"{point.iteration:,} it / {point.seconds:.3f} s"


def _check_cell(check: ReferenceCheck) -> str:
    return f"{'ok' if check.agrees else 'MISMATCH'} ({check.difference:.0e})"


def game_table(game: str, speeds: Sequence[Speed], runs: Sequence[Convergence], budget: float) -> Table:
    speed_by_name = {speed.solver: speed for speed in speeds}
    rows = []
    for run in runs:
        speed = speed_by_name[run.solver]
        rows.append(
            (
                run.solver,
                _ms(speed.median_ms),
                speed.range_ms,
                _reached(run, THRESHOLDS[0]),
                _reached(run, THRESHOLDS[1]),
                f"{run.final.nash_conv:.2e} ({run.final.iteration:,} it, {run.final.seconds:.2f} s)",
                _check_cell(run.check),
            )
        )
    return Table(
        f"OpenSpiel {GAMES[game]}: speed and convergence (budget {budget:g} s solve time per solver)",
        ("solver", "ms/iter", "range", "to NashConv 1e-3", "to NashConv 1e-5", "last NashConv", "vs OpenSpiel"),
        tuple(rows),
        (
            "ms/iter: median (range: min-max) of interleaved timed batches. Times to a NashConv are solve seconds"
            " (evaluation excluded) at the first of 40 log-spaced checkpoints per decade.",
        ),
    )


def ratio_table(ratios: Sequence[Ratio]) -> Table:
    rows = tuple(
        (
            ratio.game,
            f"{ratio.ours} vs {ratio.anchor}",
            _ms(ratio.ours_ms),
            _ms(ratio.anchor_ms),
            f"{ratio.value:.1f}x",
            "-" if ratio.target is None else f">= {ratio.target:g}x",
            ratio.verdict,
        )
        for ratio in ratios
    )
    return Table(
        "Speed-up (anchor ms/iteration / ours), measured in this run",
        ("game", "pair", "ours ms", "anchor ms", "speed-up", "target", "verdict"),
        rows,
    )


def time_target_table(targets: Sequence[TimeTarget]) -> Table:
    rows = []
    for target in targets:
        measured = "; ".join(
            f"{solver} {'not reached' if point is None else f'{point.seconds:.3f} s ({point.iteration:,} it)'}"
            for solver, point in target.reached
        )
        rows.append(
            (
                f"NashConv <= {target.threshold:g}",
                f"<= {target.target_seconds:g} s",
                measured,
                "PASS" if target.passed else "FAIL",
            )
        )
    return Table(
        f"Time targets on Leduc ({' or '.join(TIME_TARGET_SOLVERS)})",
        ("goal", "target", "measured solve time", "verdict"),
        tuple(rows),
    )


def build_table(builds: Sequence[BuildTime]) -> Table:
    rows = tuple(
        (build.game_id, f"{build.seconds:.3f} s", f"<= {build.target:g} s", "PASS" if build.passed else "FAIL")
        for build in builds
    )
    notes = tuple(build.summary for build in builds)
    return Table("Tree build time (compile_tree)", ("game", "seconds", "target", "verdict"), rows, notes)


def memory_table(checks: Sequence[MemoryCheck], peak_mb: float) -> Table:
    rows = tuple(
        (
            f"{check.solver} on leduc",
            f"{check.rss_mb[0]:.1f} MiB",
            f"{check.rss_mb[1]:.1f} MiB",
            f"{check.growth_mb:+.2f} MiB",
            "PASS" if check.passed else "FAIL",
        )
        for check in checks
    )
    first, last = MEMORY_ITERATIONS
    return Table(
        f"Memory: current RSS after {first:,} and {last:,} iterations (growth allowed <= {MEMORY_TOLERANCE_MB:g} MiB)",
        ("solver", f"RSS at {first:,}", f"RSS at {last:,}", "growth", "verdict"),
        rows,
        (f"Peak RSS of the whole benchmark process (ru_maxrss, all libraries loaded): {peak_mb:.1f} MiB",),
    )


def cross_check_table(runs: Sequence[Convergence]) -> Table:
    rows = []
    for run in runs:
        check = run.check
        rows.append(
            (
                f"{run.game} {run.solver}",
                f"{check.ours:.12e}",
                f"{check.reference:.12e}",
                f"{check.difference:.1e}",
                "-" if check.native is None else f"{check.native:.12e} ({abs(check.native - check.ours):.1e})",
                "-" if check.conversion_gap is None else f"{check.conversion_gap:.1e}",
                "ok" if check.agrees else "MISMATCH",
            )
        )
    return Table(
        f"Cross-check of the final average policies (tolerance {CROSS_CHECK_TOLERANCE:g})",
        ("run", "our NashConv", "OpenSpiel NashConv", "|diff|", "LiteEFG own (|diff|)", "read-out gap", "verdict"),
        tuple(rows),
        (
            "OpenSpiel anchors: pyspiel.nash_conv of solver.average_policy(). LiteEFG and ours: OpenSpiel's Python"
            " exploitability.nash_conv of the public TabularPolicy. Read-out gap: the curve's fast LiteEFG"
            " read-out against env.get_strategy().",
        ),
    )


# --------------------------------------------------------------------------------------------
# Files


def machine_facts() -> dict[str, str]:
    model = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), model)
    versions = {}
    for distribution in ("open_spiel", "liteefg", "numpy", "cfr-agents"):
        try:
            versions[distribution] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            versions[distribution] = "not installed"
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return {
        "CPU": model,
        "cores": str(os.cpu_count()),
        "load average at start": load,
        "Python": platform.python_version(),
        **{f"{name} version": version for name, version in versions.items()},
    }


def write_curves(path: Path, runs: Sequence[Convergence]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("solver", "game", "iteration", "seconds", "nash_conv"))
    for run in runs:
        for point in run.points:
            writer.writerow((run.solver, run.game, point.iteration, f"{point.seconds:.6f}", f"{point.nash_conv:.9e}"))
    write_atomic(path, buffer.getvalue())


_STYLES = {"ours": "-", "openspiel-cpp": "--", "liteefg": ":"}
"""Line style per implementation; the colour is the algorithm's (tab10 order of :data:`OUR_ALGORITHMS`)."""


def write_plot(path: Path, game: str, runs: Sequence[Convergence]) -> None:
    """Log-log NashConv against solve seconds, one line per solver; saved to a temporary file, then renamed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(9, 6))
    for run in runs:
        seconds = [point.seconds for point in run.points]
        values = [max(point.nash_conv, 1e-12) for point in run.points]
        width = 2.0 if run.family == "ours" else 1.5
        colour = f"C{OUR_ALGORITHMS.index(run.algorithm)}"
        axes.plot(seconds, values, _STYLES[run.family], color=colour, linewidth=width, label=run.label)
    for threshold in THRESHOLDS:
        axes.axhline(threshold, color="grey", linewidth=0.8, alpha=0.6)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("solve time (s), evaluation excluded")
    axes.set_ylabel("NashConv of the average strategy (chips)")
    axes.set_title(f"CFR algorithms compared: OpenSpiel {GAMES[game]}")
    axes.grid(True, which="both", alpha=0.25)
    axes.legend(fontsize=8)
    figure.tight_layout()
    try:
        with replacing(path) as temporary:
            figure.savefig(temporary, format="png", dpi=120)
    finally:
        plt.close(figure)


METHOD = (
    "NashConv is in chips (OpenSpiel's convention: sum over players of best-response value minus value;"
    " exploitability = NashConv / 2), of each solver's average strategy, computed exactly on our compiled"
    " tree for every solver.",
    "ms/iter: after a warm-up, batches of about equal duration, interleaved across all solvers round by"
    " round; the median batch is reported. One iteration updates both players (ours and OpenSpiel:"
    " alternating; LiteEFG: as its own baselines do).",
    "Convergence: a fresh solver per run; only its iterations are timed, never the policy read-out or the"
    " NashConv evaluation. Runs stop at NashConv <= 1e-5 or when the solve-time budget is spent.",
)


def markdown_report(settings: Settings, facts: Mapping[str, str], tables: Sequence[Table], notes: Sequence[str]) -> str:
    lines = ["# Solver benchmark", "", f"- Date: {_now()}", f"- Command: `{settings.command}`"]
    lines += [f"- {name}: {value}" for name, value in facts.items()]
    lines += [f"- {note}" for note in notes]
    lines += ["", "## Method", "", *(f"- {item}" for item in METHOD)]
    return "\n".join(lines) + "\n\n" + "\n".join(table.markdown() for table in tables)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


# --------------------------------------------------------------------------------------------
# Main


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class GameResult:
    game: str
    speeds: tuple[Speed, ...]
    runs: tuple[Convergence, ...]


def benchmark_game(game: str, settings: Settings, liteefg: ModuleType | None) -> GameResult:
    pyspiel_game = pyspiel.load_game(GAMES[game])
    tree = cfr_agents.compile_tree(adapters.load_game(f"openspiel:{GAMES[game]}"))
    entries = contenders(tree, pyspiel_game, liteefg)
    progress(f"[{game}] timing {len(entries)} solvers, {settings.speed_rounds} interleaved rounds")
    speeds = measure_speed(entries, game, settings.speed_rounds, settings.batch_seconds)
    runs = []
    for entry in entries:
        run = measure_convergence(entry, tree, game, settings.budget)
        progress(
            f"[{game}] {entry.name}: NashConv {run.final.nash_conv:.2e} after {run.final.iteration:,} iterations,"
            f" {run.final.seconds:.2f} s"
        )
        runs.append(run)
    return GameResult(game, tuple(speeds), tuple(runs))


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    facts = machine_facts()
    liteefg, liteefg_note = import_liteefg()
    notes = [liteefg_note] if liteefg_note else []
    progress("building trees")
    builds = [measure_build(game_id, target) for game_id, target in BUILD_TARGETS]
    results = [benchmark_game(game, settings, liteefg) for game in settings.games]
    progress("memory check")
    leduc_tree = cfr_agents.compile_tree(adapters.load_game("openspiel:leduc_poker"))
    memory = [measure_memory(leduc_tree, algorithm) for algorithm in MEMORY_ALGORITHMS]
    runs = [run for result in results for run in result.runs]
    ratios = [ratio for result in results for ratio in speed_ratios(result.speeds, result.game)]
    if "leduc" not in settings.games:
        notes.append("Leduc not run: speed-up and time targets not evaluated.")
    tables = [
        *(game_table(result.game, result.speeds, result.runs, settings.budget) for result in results),
        *([ratio_table(ratios)] if ratios else []),
        *([time_target_table(time_targets(runs))] if "leduc" in settings.games else []),
        build_table(builds),
        memory_table(memory, peak_rss_mb()),
        cross_check_table(runs),
    ]
    header = [f"date: {_now()}", f"command: {settings.command}"]
    header += [f"{name}: {value}" for name, value in facts.items()] + notes
    print("\n".join(header) + "\n")
    print("\n".join(table.text() for table in tables), end="")
    settings.out.mkdir(parents=True, exist_ok=True)
    write_atomic(settings.out / "results.md", markdown_report(settings, facts, tables, notes))
    write_curves(settings.out / "curves.csv", runs)
    for result in results:
        write_plot(settings.out / f"nash_conv_vs_time_{result.game}.png", result.game, result.runs)
    print(f"\nwrote {settings.out}/results.md, curves.csv and the plots; {time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
