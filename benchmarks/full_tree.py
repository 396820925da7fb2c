"""Full-tree yardsticks: our CFR family against OpenSpiel's C++ CFR/CFR+ and LiteEFG's C++ baselines.

On OpenSpiel ``kuhn_poker`` and ``leduc_poker``:

1. **ms per iteration** of every solver (interleaved batches, median; :mod:`benchmarks.measure`).
2. **Convergence**: NashConv of the average strategy against solve time, at 40 log-spaced
   checkpoints per decade, until NashConv <= 1e-5 or the time budget is spent.
3. **Speed-up ratios** (anchor ms/iteration over ours) with PASS/FAIL against the targets.
4. **Time targets** on Leduc for DCFR and predictive CFR+.
5. **Tree build times** of OpenSpiel and RLCard Leduc.
6. **Memory**: resident set size after 100 and after 10,000 iterations must not grow.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyspiel
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import adapters
import cfr_agents
from benchmarks.measure import (
    CROSS_CHECK_TOLERANCE,
    Contender,
    Convergence,
    ReferenceCheck,
    Settings,
    Speed,
    measure_convergence,
    measure_speed,
    nash_conv,
    our_runner,
)
from benchmarks.report import FamilyResult, Figure, Section, Table, check_cell, cross_check_table, ms, progress, verdict
from cfr_agents.training import CurvePoint, current_rss_mb, peak_rss_mb
from cfr_agents.tree import CompiledTree, FloatArray

GAMES: dict[str, str] = {"kuhn": "kuhn_poker", "leduc": "leduc_poker"}
"""Game names this family runs and the OpenSpiel game each stands for."""
OUR_ALGORITHMS = ("cfr", "cfr+", "lcfr", "dcfr", "pcfr+")
THRESHOLDS = (1e-3, 1e-5)
STOP_NASH_CONV = 1e-5
CHECKPOINTS_PER_DECADE = 40
"""NashConv is measured at ``round(10 ** (k / 40))`` iterations: every ~6%, every iteration below 17."""
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


# --------------------------------------------------------------------------------------------
# Solvers behind one surface


def strategy_from_table(tree: CompiledTree, table: dict[str, list[tuple[int, float]]]) -> FloatArray:
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


def import_liteefg() -> ModuleType:
    """LiteEFG, imported with its banners silenced (an ImportError if it is not installed)."""
    with silenced_stdout():
        module = importlib.import_module("LiteEFG")
    return module


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


def contenders(tree: CompiledTree, game: Any, liteefg: ModuleType) -> list[Contender]:
    """Our five solvers, OpenSpiel's two C++ solvers and LiteEFG's three baselines."""
    entries = [
        Contender(algo, "ours", algo, "none", f"{algo} (ours)", partial(our_runner, tree, game, algo))
        for algo in OUR_ALGORITHMS
    ]
    for algo, solver_class, label in (
        ("cfr", pyspiel.CFRSolver, "OpenSpiel C++ CFRSolver"),
        ("cfr+", pyspiel.CFRPlusSolver, "OpenSpiel C++ CFRPlusSolver"),
    ):
        anchor = partial(OpenSpielRunner, tree, game, solver_class)
        entries.append(Contender(f"openspiel-cpp:{algo}", "openspiel-cpp", algo, "none", label, anchor))
    for algo, baseline in LITEEFG_BASELINES.items():
        lite = partial(LiteEFGRunner, tree, game, liteefg, baseline)
        entries.append(Contender(f"liteefg:{algo}", "liteefg", algo, "none", f"LiteEFG {baseline.module}", lite))
    return entries


# --------------------------------------------------------------------------------------------
# Measurements beyond speed and convergence


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
    """Wall time of a cold ``compile_tree``, the tree cache bypassed (the game object is loaded first, untimed)."""
    game = adapters.load_game(game_id)
    started = time.perf_counter()
    tree = cfr_agents.compile_tree(game, cache=False)
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
        return "info" if self.target is None else verdict(self.value >= self.target)


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
# Tables


def _reached(run: Convergence, threshold: float) -> str:
    point = run.first_reaching(threshold)
    if point is None:
        return f"not reached (NashConv {run.final.nash_conv:.2e} after {run.final.seconds:.1f} s)"
    return f"{point.iteration:,} it / {point.seconds:.3f} s"


def game_table(game: str, speeds: Sequence[Speed], runs: Sequence[Convergence], budget: float) -> Table:
    speed_by_name = {speed.solver: speed for speed in speeds}
    rows = []
    for run in runs:
        speed = speed_by_name[run.solver]
        rows.append(
            (
                run.solver,
                ms(speed.median_ms),
                f"{ms(min(speed.samples_ms))}-{ms(max(speed.samples_ms))}",
                _reached(run, THRESHOLDS[0]),
                _reached(run, THRESHOLDS[1]),
                f"{run.final.nash_conv:.2e} ({run.final.iteration:,} it, {run.final.seconds:.2f} s)",
                check_cell(run.check),
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
            ms(ratio.ours_ms),
            ms(ratio.anchor_ms),
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
                verdict(target.passed),
            )
        )
    return Table(
        f"Time targets on Leduc ({' or '.join(TIME_TARGET_SOLVERS)})",
        ("goal", "target", "measured solve time", "verdict"),
        tuple(rows),
    )


def build_table(builds: Sequence[BuildTime]) -> Table:
    rows = tuple(
        (build.game_id, f"{build.seconds:.3f} s", f"<= {build.target:g} s", verdict(build.passed)) for build in builds
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
            verdict(check.passed),
        )
        for check in checks
    )
    first, last = MEMORY_ITERATIONS
    return Table(
        f"Memory: current RSS after {first:,} and {last:,} iterations (growth allowed <= {MEMORY_TOLERANCE_MB:g} MiB)",
        ("solver", f"RSS at {first:,}", f"RSS at {last:,}", "growth", "verdict"),
        rows,
        (f"Peak RSS of the benchmark process so far (ru_maxrss, all libraries loaded): {peak_mb:.1f} MiB",),
    )


CROSS_CHECK_NOTES = (
    "OpenSpiel anchors: pyspiel.nash_conv of solver.average_policy(). LiteEFG and ours: OpenSpiel's Python"
    " exploitability.nash_conv of the public TabularPolicy. Read-out gap: the curve's fast LiteEFG"
    " read-out against env.get_strategy().",
)


# --------------------------------------------------------------------------------------------
# The family


@dataclass(frozen=True)
class GameResult:
    game: str
    speeds: tuple[Speed, ...]
    runs: tuple[Convergence, ...]


def benchmark_game(game: str, settings: Settings, liteefg: ModuleType) -> GameResult:
    pyspiel_game = pyspiel.load_game(GAMES[game])
    tree = cfr_agents.compile_tree(adapters.load_game(f"openspiel:{GAMES[game]}"))
    entries = contenders(tree, pyspiel_game, liteefg)
    progress(f"[full-tree {game}] timing {len(entries)} solvers, {settings.speed_rounds} interleaved rounds")
    speeds = measure_speed(entries, game, settings.speed_rounds, settings.batch_seconds)
    runs = []
    for entry in entries:
        run = measure_convergence(
            entry, tree, game, settings.budget, stop_nash_conv=STOP_NASH_CONV, per_decade=CHECKPOINTS_PER_DECADE
        )
        progress(
            f"[full-tree {game}] {entry.name}: NashConv {run.final.nash_conv:.2e} after"
            f" {run.final.iteration:,} iterations, {run.final.seconds:.2f} s"
        )
        runs.append(run)
    return GameResult(game, tuple(speeds), tuple(runs))


def run(games: Sequence[str], settings: Settings) -> FamilyResult:
    """Every measurement of this family on ``games`` (names of :data:`GAMES`)."""
    liteefg = import_liteefg()
    progress("[full-tree] building trees")
    builds = [measure_build(game_id, target) for game_id, target in BUILD_TARGETS]
    results = [benchmark_game(game, settings, liteefg) for game in games]
    progress("[full-tree] memory check")
    leduc_tree = cfr_agents.compile_tree(adapters.load_game("openspiel:leduc_poker"))
    memory = [measure_memory(leduc_tree, algorithm) for algorithm in MEMORY_ALGORITHMS]
    runs = [run for result in results for run in result.runs]
    ratios = [ratio for result in results for ratio in speed_ratios(result.speeds, result.game)]
    notes = () if "leduc" in games else ("Leduc not run: full-tree speed-up and time targets not evaluated.",)
    tables = (
        *(game_table(result.game, result.speeds, result.runs, settings.budget) for result in results),
        *([ratio_table(ratios)] if ratios else []),
        *([time_target_table(time_targets(runs))] if "leduc" in games else []),
        build_table(builds),
        memory_table(memory, peak_rss_mb()),
        cross_check_table(runs, CROSS_CHECK_TOLERANCE, CROSS_CHECK_NOTES),
    )
    title = "openspiel:{}: NashConv against solve time"
    figures = tuple(Figure(game, title.format(GAMES[game]), "chips", THRESHOLDS) for game in games)
    return FamilyResult(Section("Full-tree solvers", METHOD, tables), tuple(runs), figures, notes)
