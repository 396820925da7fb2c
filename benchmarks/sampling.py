"""Monte Carlo CFR yardsticks: our compiled sampling kernels against OpenSpiel's C++ and Python MCCFR.

In one process, per game:

1. **iterations/s** of every solver (interleaved batches, median; :mod:`benchmarks.measure`). One
   iteration is one traversal per player, for ours and OpenSpiel's alike.
2. **NashConv at equal solve time**: each solver runs until ``budget`` solve seconds, with checkpoints
   at log-spaced iterations and at iteration counts aimed at ``budget / 6`` and ``budget`` seconds
   (5 s and 30 s by default); only iterations are timed. Our external sampling and OpenSpiel's C++
   external sampling run with several seeds and report the median, as does the best of our
   sampled configurations (chosen on the first seed).
3. **Targets** on OpenSpiel Leduc: speed ratios, NashConv ratios, the best configuration's NashConv.
4. **JIT compile time** of each kernel in a fresh process with an empty ``NUMBA_CACHE_DIR``, then in a
   second process with the same directory (from cache).

OpenSpiel's MCCFR policies are read through ``average_policy().action_probabilities(state)`` at one
state per information set and evaluated by the same exact NashConv as ours.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from open_spiel.python.algorithms import external_sampling_mccfr, outcome_sampling_mccfr

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
from benchmarks.report import FamilyResult, Figure, Section, Table, check_cell, cross_check_table, progress, verdict
from cfr_agents.solvers import SCHEMES
from cfr_agents.solvers.sampling import DEFAULT_EPSILON, SampledSolver
from cfr_agents.solvers.update_rule import UpdateRule
from cfr_agents.tree import CompiledTree, FloatArray

TARGET_GAME = "leduc"
TARGET_TIMES = (5.0, 30.0)
"""The solve times the NashConv targets are set at; judged only when the run reports at these times."""
SHORT_FRACTION = 1 / 6
"""The short report time is this fraction of the budget (5 s of 30 s)."""
SPEED_TARGETS = {"external": 30.0, "outcome": 10.0}
"""Least acceptable ``our iterations/s / OpenSpiel C++ iterations/s`` on Leduc, per scheme (algorithm cfr)."""
NASH_CONV_RATIO_TARGET = 1 / 5
"""Our external sampling's median NashConv over OpenSpiel C++ external sampling's, at each report time."""
BEST_TARGETS = (0.02, 5e-3)
"""NashConv the best sampled configuration must reach within each of :data:`TARGET_TIMES`."""
COMPILE_TARGETS = (10.0, 1.0)
"""Seconds to compile a kernel in a fresh process: cold, and from Numba's cache."""
CHECKPOINTS_PER_DECADE = 10
STOP_NASH_CONV = 1e-9
FULL_TREE_REFERENCE = "dcfr"
"""Our full-tree solver drawn beside the sampled ones where the full-tree family does not run the game."""
COMPILE_GAME = "openspiel:leduc_poker"
METHOD = (
    "One iteration is one traversal per player (OpenSpiel's convention), for ours and OpenSpiel's MCCFR alike;"
    " iterations/s is the median of timed batches interleaved across all solvers of the game.",
    "NashConv (in the game's units) of each solver's average strategy, computed exactly on our compiled tree;"
    " OpenSpiel's policies are read through average_policy().action_probabilities(state). Only solver"
    " iterations are timed. 'At t s' is the checkpoint aimed at t seconds of solve time (within 1%).",
    "Medians are over seeds 0, 1, ... for our external sampling, OpenSpiel C++ external sampling and the best"
    " configuration (chosen by seed 0 at each time); other rows are seed 0.",
    "OpenSpiel C++: ExternalSamplingMCCFRSolver(game, seed, MCCFRAverageType.SIMPLE) and"
    f" OutcomeSamplingMCCFRSolver(game, {DEFAULT_EPSILON}, seed). OpenSpiel Python: external_sampling_mccfr"
    ".ExternalSamplingSolver (AverageType.SIMPLE) and outcome_sampling_mccfr.OutcomeSamplingSolver, seeded by"
    " numpy.random.seed. Ours: external sampling with simple averaging, outcome sampling with epsilon"
    f" {DEFAULT_EPSILON} and stochastically-weighted averaging, chance and pure sampling as documented;"
    " 'stratified' rows draw chance outcomes with --chance-draws stratified, the others independently.",
)


@dataclass(frozen=True)
class Yardstick:
    """One of OpenSpiel's MCCFR solvers."""

    name: str
    family: str
    """``openspiel-cpp`` or ``openspiel-python``."""
    sampling: str
    label: str
    make: Callable[[Any, int], Any]
    """``(pyspiel game, seed)`` to a fresh solver."""


def _python_solver(solver_class: Callable[[Any], Any], game: Any, seed: int) -> Any:
    np.random.seed(seed)  # OpenSpiel's Python MCCFR samples from NumPy's global generator
    return solver_class(game)


YARDSTICKS: dict[str, Yardstick] = {
    yardstick.name: yardstick
    for yardstick in (
        Yardstick(
            "openspiel-cpp:external",
            "openspiel-cpp",
            "external",
            "OpenSpiel C++ ExternalSamplingMCCFRSolver",
            lambda game, seed: pyspiel.ExternalSamplingMCCFRSolver(game, seed, pyspiel.MCCFRAverageType.SIMPLE),
        ),
        Yardstick(
            "openspiel-cpp:outcome",
            "openspiel-cpp",
            "outcome",
            "OpenSpiel C++ OutcomeSamplingMCCFRSolver",
            lambda game, seed: pyspiel.OutcomeSamplingMCCFRSolver(game, DEFAULT_EPSILON, seed),
        ),
        Yardstick(
            "openspiel-python:external",
            "openspiel-python",
            "external",
            "OpenSpiel Python ExternalSamplingSolver",
            partial(_python_solver, external_sampling_mccfr.ExternalSamplingSolver),
        ),
        Yardstick(
            "openspiel-python:outcome",
            "openspiel-python",
            "outcome",
            "OpenSpiel Python OutcomeSamplingSolver",
            partial(_python_solver, outcome_sampling_mccfr.OutcomeSamplingSolver),
        ),
    )
}

EVERY_SCHEME_CFR = (
    *((scheme, "cfr", "independent") for scheme in SCHEMES),
    *((scheme, "cfr", "stratified") for scheme in SCHEMES),
)
VARIANTS = (
    *EVERY_SCHEME_CFR,
    ("external", "cfr+", "independent"),
    ("external", "lcfr", "independent"),
    ("external", "dcfr", "independent"),
    ("chance", "cfr+", "independent"),
    ("chance", "dcfr", "independent"),
    ("outcome", "cfr+", "independent"),
    ("pure", "cfr+", "independent"),
)
"""``(sampling, algorithm, chance draws)`` of our configurations on the target game."""


@dataclass(frozen=True)
class SampledGame:
    game_id: str
    """Our adapter's game id."""
    pyspiel_name: str
    """The pyspiel game the yardsticks run on (native, or bridged by ``import adapters``)."""
    configurations: tuple[tuple[str, str, str], ...]
    yardsticks: tuple[str, ...]
    seeded: bool
    """Run :data:`SEEDED` and the best configuration with every seed (else seed 0 only)."""


GAMES: dict[str, SampledGame] = {
    "kuhn": SampledGame("openspiel:kuhn_poker", "kuhn_poker", VARIANTS, tuple(YARDSTICKS), True),
    "leduc": SampledGame("openspiel:leduc_poker", "leduc_poker", VARIANTS, tuple(YARDSTICKS), True),
    "rlcard-leduc": SampledGame(
        "rlcard:leduc-holdem", "python_rlcard_leduc_holdem", EVERY_SCHEME_CFR, ("openspiel-python:external",), False
    ),
    "liars-dice": SampledGame(
        "openspiel:liars_dice",
        "liars_dice",
        EVERY_SCHEME_CFR,
        ("openspiel-cpp:external", "openspiel-cpp:outcome"),
        False,
    ),
}
"""Game names this family runs. ``kuhn`` is for smoke tests; the others run by default."""
DEFAULT_GAMES = ("leduc", "rlcard-leduc", "liars-dice")
SEEDED = ("external cfr", "openspiel-cpp:external")
"""Solvers run with every seed on the games marked ``seeded``."""


# --------------------------------------------------------------------------------------------
# OpenSpiel's MCCFR behind the runner surface


def infoset_states(tree: CompiledTree, game: Any) -> list[tuple[int, Any]]:
    """One pyspiel state per information set, as ``(row of the tree, state)``: a walk of the whole game."""
    found: dict[int, Any] = {}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            actions = [action for action, _ in state.chance_outcomes()]
        else:
            found.setdefault(tree.index[state.information_state_string()], state)
            actions = state.legal_actions()
        stack.extend(state.child(action) for action in actions)
    if len(found) != tree.num_infosets:
        raise ValueError(f"the pyspiel game has {len(found)} information sets, the tree {tree.num_infosets}")
    return sorted(found.items(), key=lambda item: item[0])


class MCCFRRunner:
    """An OpenSpiel MCCFR solver; one iteration = ``run_iteration()`` (C++) or ``iteration()`` (Python)."""

    def __init__(
        self, tree: CompiledTree, game: Any, states: Sequence[tuple[int, Any]], yardstick: Yardstick, seed: int
    ) -> None:
        self._tree = tree
        self._game = game
        self._states = states
        self._python = yardstick.family == "openspiel-python"
        self._solver = yardstick.make(game, seed)

    def step(self, iterations: int) -> None:
        iterate = self._solver.iteration if self._python else self._solver.run_iteration
        for _ in range(iterations):
            iterate()

    def average_strategy(self) -> FloatArray:
        policy = self._solver.average_policy()
        strategy = np.zeros(self._tree.action_mask.shape)
        for row, state in self._states:
            actions = self._tree.infoset_actions[row]
            for action, probability in policy.action_probabilities(state).items():
                strategy[row, actions.index(action)] = probability
        return strategy

    def reference_check(self) -> ReferenceCheck:
        policy = self._solver.average_policy()
        if self._python:
            reference = openspiel_exploitability.nash_conv(self._game, policy)
            name = "open_spiel.python exploitability.nash_conv of average_policy()"
        else:
            reference = pyspiel.nash_conv(self._game, policy, True)
            name = "pyspiel.nash_conv(game, average_policy(), True)"
        return ReferenceCheck(nash_conv(self._tree, self.average_strategy()), float(reference), name)


# --------------------------------------------------------------------------------------------
# Contenders and runs


def configuration_name(sampling: str, algorithm: str, chance_draws: str = "independent") -> str:
    """``external cfr``; with stratified chance draws, ``external cfr stratified``."""
    return f"{sampling} {algorithm}" + ("" if chance_draws == "independent" else f" {chance_draws}")


def contenders(
    spec: SampledGame,
    tree: CompiledTree,
    game: Any,
    states: Sequence[tuple[int, Any]],
    seed: int,
    full_tree_reference: bool,
) -> list[Contender]:
    """Our configurations, OpenSpiel's yardsticks (reading policies at ``states``) and, if asked, our
    full-tree reference, with ``seed``."""
    entries = [
        Contender(
            configuration_name(sampling, algorithm, draws),
            "ours",
            algorithm,
            sampling,
            f"{configuration_name(sampling, algorithm, draws)} (ours)",
            partial(our_runner, tree, game, algorithm, sampling, seed, draws),
            seed,
        )
        for sampling, algorithm, draws in spec.configurations
    ]
    for name in spec.yardsticks:
        yardstick = YARDSTICKS[name]
        make = partial(MCCFRRunner, tree, game, states, yardstick, seed)
        entries.append(Contender(name, yardstick.family, "cfr", yardstick.sampling, yardstick.label, make, seed))
    if full_tree_reference:
        name = f"{FULL_TREE_REFERENCE} full tree"
        make_ours = partial(our_runner, tree, game, FULL_TREE_REFERENCE)
        entries.append(Contender(name, "ours", FULL_TREE_REFERENCE, "none", f"{name} (ours)", make_ours))
    return entries


def report_times(budget: float) -> tuple[float, float]:
    return budget * SHORT_FRACTION, budget


@dataclass(frozen=True)
class SolverRuns:
    """One solver's runs on one game, one per seed."""

    name: str
    runs: tuple[Convergence, ...]

    def median_at(self, seconds: float) -> float | None:
        """Median over seeds of NashConv at ``seconds`` of solve time (``None`` if a run has no checkpoint)."""
        points = [run.at(seconds) for run in self.runs]
        if any(point is None for point in points):
            return None
        return statistics.median(point.nash_conv for point in points if point is not None)

    def cell(self, seconds: float) -> str:
        value = self.median_at(seconds)
        if value is None:
            return "-"
        return f"{value:.2e}" + (f" (median of {len(self.runs)})" if len(self.runs) > 1 else "")


@dataclass(frozen=True)
class GameResult:
    game: str
    spec: SampledGame
    units: str
    summary: str
    speeds: tuple[Speed, ...]
    solvers: tuple[SolverRuns, ...]
    best: tuple[tuple[str, float] | None, ...]
    """Per report time: the best of our sampled configurations with all seeds, and its median NashConv."""

    def solver(self, name: str) -> SolverRuns | None:
        return next((solver for solver in self.solvers if solver.name == name), None)

    def runs_of(self, name: str) -> tuple[Convergence, ...]:
        solver = self.solver(name)
        return () if solver is None else solver.runs

    def speed(self, name: str) -> Speed | None:
        return next((speed for speed in self.speeds if speed.solver == name), None)

    @property
    def runs(self) -> tuple[Convergence, ...]:
        return tuple(run for solver in self.solvers for run in solver.runs)


def _converge(entry: Contender, tree: CompiledTree, game: str, times: tuple[float, float]) -> Convergence:
    run = measure_convergence(
        entry,
        tree,
        game,
        times[1],
        stop_nash_conv=STOP_NASH_CONV,
        per_decade=CHECKPOINTS_PER_DECADE,
        report_seconds=times,
    )
    progress(
        f"[sampling {game}] {entry.name} seed {entry.seed}: NashConv {run.final.nash_conv:.2e} after"
        f" {run.final.iteration:,} iterations, {run.final.seconds:.2f} s"
    )
    return run


def benchmark_game(game: str, settings: Settings, full_tree_reference: bool) -> GameResult:
    spec = GAMES[game]
    tree = cfr_agents.compile_tree(adapters.load_game(spec.game_id))
    pyspiel_game = pyspiel.load_game(spec.pyspiel_name)
    times = report_times(settings.budget)
    states = infoset_states(tree, pyspiel_game) if spec.yardsticks else []

    def entries(seed: int) -> dict[str, Contender]:
        chosen = contenders(spec, tree, pyspiel_game, states, seed, full_tree_reference)
        return {entry.name: entry for entry in chosen}

    first = entries(0)
    progress(f"[sampling {game}] timing {len(first)} solvers, {settings.speed_rounds} interleaved rounds")
    speeds = measure_speed(list(first.values()), game, settings.speed_rounds, settings.batch_seconds)
    runs: dict[str, list[Convergence]] = {name: [_converge(entry, tree, game, times)] for name, entry in first.items()}
    more = [entries(seed) for seed in range(1, settings.seeds)] if spec.seeded else []

    def run_every_seed(name: str) -> None:
        for seeded in more[len(runs[name]) - 1 :]:
            runs[name].append(_converge(seeded[name], tree, game, times))

    best = []
    if spec.seeded:
        for name in SEEDED:
            run_every_seed(name)
        ours = [name for name, entry in first.items() if entry.family == "ours" and entry.sampling != "none"]
        for seconds in times:
            first_seed = {name: point.nash_conv for name in ours if (point := runs[name][0].at(seconds)) is not None}
            if first_seed:
                run_every_seed(min(first_seed, key=first_seed.__getitem__))
            medians = {
                name: median
                for name in ours
                if len(runs[name]) == settings.seeds
                and (median := SolverRuns(name, tuple(runs[name])).median_at(seconds)) is not None
            }
            best.append(min(medians.items(), key=lambda item: item[1]) if medians else None)
    solvers = tuple(SolverRuns(name, tuple(seeded)) for name, seeded in runs.items())
    return GameResult(game, spec, tree.units, tree.summary(), tuple(speeds), solvers, tuple(best))


# --------------------------------------------------------------------------------------------
# JIT compile time


@dataclass(frozen=True)
class CompileTime:
    scheme: str
    cold: tuple[float, float]
    """Wall and CPU seconds in a fresh process with an empty ``NUMBA_CACHE_DIR``."""
    cached: tuple[float, float]
    """The same in a second fresh process with that directory."""

    @property
    def passed(self) -> bool:
        return self.cold[0] <= COMPILE_TARGETS[0] and self.cached[0] <= COMPILE_TARGETS[1]


def print_compile_time(scheme: str) -> None:
    """Compile (or load) one scheme's kernel on :data:`COMPILE_GAME` and print ``{"wall": s, "cpu": s}``."""
    tree = cfr_agents.compile_tree(adapters.load_game(COMPILE_GAME))
    solver = SampledSolver(tree, UpdateRule(), "cfr", scheme, np.random.default_rng(0))
    started = time.process_time()
    wall = solver.compile()
    print(json.dumps({"wall": wall, "cpu": time.process_time() - started}))


def _compile_in_fresh_process(scheme: str, cache: str) -> tuple[float, float]:
    code = f"from benchmarks.sampling import print_compile_time; print_compile_time({scheme!r})"
    completed = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[1],
        env={**os.environ, "NUMBA_CACHE_DIR": cache},
        capture_output=True,
        text=True,
        check=True,
    )
    seconds = json.loads(completed.stdout.splitlines()[-1])
    return float(seconds["wall"]), float(seconds["cpu"])


def measure_compile_times() -> list[CompileTime]:
    """Per scheme: cold in a fresh process with a new empty cache directory, then from that cache."""
    times = []
    for scheme in SCHEMES:
        with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
            cold = _compile_in_fresh_process(scheme, cache)
            times.append(CompileTime(scheme, cold, _compile_in_fresh_process(scheme, cache)))
        progress(f"[sampling] {scheme} kernel: {cold[0]:.2f} s cold, {times[-1].cached[0]:.2f} s from cache")
    return times


# --------------------------------------------------------------------------------------------
# Tables


def _it_per_second(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _checks_cell(solver: SolverRuns) -> str:
    worst = max(solver.runs, key=lambda run: (not run.check.agrees, run.check.difference))
    return check_cell(worst.check)


def game_table(result: GameResult, times: tuple[float, float]) -> Table:
    rows = []
    for solver in result.solvers:
        speed = result.speed(solver.name)
        assert speed is not None
        last = solver.runs[0].final
        rows.append(
            (
                solver.name,
                _it_per_second(speed.iterations_per_second),
                f"{_it_per_second(1e3 / max(speed.samples_ms))}-{_it_per_second(1e3 / min(speed.samples_ms))}",
                solver.cell(times[0]),
                solver.cell(times[1]),
                f"{last.nash_conv:.2e} ({last.iteration:,} it, {last.seconds:.1f} s)",
                _checks_cell(solver),
            )
        )
    return Table(
        f"{result.spec.game_id}: MCCFR speed and NashConv ({result.units}) at equal solve time",
        (
            "solver",
            "iterations/s",
            "range",
            f"NashConv at {times[0]:.3g} s",
            f"at {times[1]:.3g} s",
            "last (seed 0)",
            "vs OpenSpiel",
        ),
        tuple(rows),
        (
            result.summary,
            "iterations/s: median (range) of interleaved timed batches; one iteration = one traversal per"
            " player. vs OpenSpiel: the worst cross-check over the seeds.",
        ),
    )


@dataclass(frozen=True)
class Target:
    goal: str
    target: str
    measured: str
    passed: bool | None
    """``None``: not judged (not the target game, or not the target times)."""

    @property
    def verdict(self) -> str:
        return "info" if self.passed is None else verdict(self.passed)


def speed_targets(result: GameResult) -> list[Target]:
    targets = []
    for scheme, least in SPEED_TARGETS.items():
        ours = result.speed(configuration_name(scheme, "cfr"))
        for family in ("openspiel-cpp", "openspiel-python"):
            anchor = result.speed(f"{family}:{scheme}")
            if ours is None or anchor is None:
                continue
            ratio = ours.iterations_per_second / anchor.iterations_per_second
            judged = result.game == TARGET_GAME and family == "openspiel-cpp"
            targets.append(
                Target(
                    f"{scheme} cfr iterations/s vs {YARDSTICKS[anchor.solver].label}",
                    f">= {least:g}x" if judged else "-",
                    f"{ratio:,.1f}x ({_it_per_second(ours.iterations_per_second)} vs"
                    f" {_it_per_second(anchor.iterations_per_second)} it/s)",
                    ratio >= least if judged else None,
                )
            )
    return targets


def nash_conv_targets(result: GameResult, times: tuple[float, float]) -> list[Target]:
    judged = result.game == TARGET_GAME and times == TARGET_TIMES
    ours, anchor = (result.solver(name) for name in SEEDED)
    targets = []
    for seconds in times:
        if ours is None or anchor is None:
            break
        mine, theirs = ours.median_at(seconds), anchor.median_at(seconds)
        if mine is None or theirs is None:
            continue
        targets.append(
            Target(
                f"external cfr NashConv / OpenSpiel C++ external's at {seconds:.3g} s",
                f"<= 1/{1 / NASH_CONV_RATIO_TARGET:g}",
                f"1/{theirs / mine:.1f} ({mine:.2e} vs {theirs:.2e}, medians of {len(ours.runs)} seeds)",
                mine <= NASH_CONV_RATIO_TARGET * theirs if judged else None,
            )
        )
    for seconds, best, least in zip(times, result.best, BEST_TARGETS, strict=True):
        if best is not None:
            name, value = best
            targets.append(
                Target(
                    f"best sampled configuration: NashConv within {seconds:.3g} s",
                    f"<= {least:g}",
                    f"{name}: {value:.2e} (median of {len(result.runs_of(name))} seeds)",
                    value <= least if judged else None,
                )
            )
    return targets


def target_table(title: str, targets: Sequence[Target], notes: tuple[str, ...] = ()) -> Table:
    rows = tuple((target.goal, target.target, target.measured, target.verdict) for target in targets)
    return Table(title, ("goal", "target", "measured", "verdict"), rows, notes)


def compile_table(times: Sequence[CompileTime]) -> Table:
    rows = tuple(
        (
            time_.scheme,
            f"{time_.cold[0]:.2f} s ({time_.cold[1]:.2f} s CPU)",
            f"{time_.cached[0]:.3f} s ({time_.cached[1]:.3f} s CPU)",
            verdict(time_.passed),
        )
        for time_ in times
    )
    return Table(
        f"JIT compile time per kernel on {COMPILE_GAME} (targets: <= {COMPILE_TARGETS[0]:g} s cold,"
        f" <= {COMPILE_TARGETS[1]:g} s from cache)",
        ("scheme", "cold: fresh process, empty NUMBA_CACHE_DIR", "from cache: second process", "verdict"),
        rows,
        ("SampledSolver.compile() in its own process, after imports and the tree build; wall seconds.",),
    )


CROSS_CHECK_NOTES = (
    "Ours: OpenSpiel's Python exploitability.nash_conv of policy.openspiel_policy(). OpenSpiel C++ MCCFR:"
    " pyspiel.nash_conv(game, average_policy(), True). OpenSpiel Python MCCFR: exploitability.nash_conv of"
    " average_policy(). RLCard Leduc: on the bridged game python_rlcard_leduc_holdem.",
)


# --------------------------------------------------------------------------------------------
# The family


def run(games: Sequence[str], settings: Settings, full_tree_games: Sequence[str]) -> FamilyResult:
    """Every measurement of this family on ``games`` (names of :data:`GAMES`); games not in
    ``full_tree_games`` also get our full-tree reference solver."""
    times = report_times(settings.budget)
    compile_times = measure_compile_times() if settings.compile_timing else []
    results = [benchmark_game(game, settings, game not in full_tree_games) for game in games]
    tables = [game_table(result, times) for result in results]
    for result in results:
        targets = speed_targets(result) + (nash_conv_targets(result, times) if result.spec.seeded else [])
        if targets:
            tables.append(target_table(f"Targets and ratios on {result.spec.game_id}", targets))
    if compile_times:
        tables.append(compile_table(compile_times))
    runs = tuple(run for result in results for run in result.runs)
    tables.append(cross_check_table(runs, CROSS_CHECK_TOLERANCE, CROSS_CHECK_NOTES))
    notes = () if times == TARGET_TIMES else (f"Sampling budget {settings.budget:g} s: NashConv targets not judged.",)
    figures = tuple(
        Figure(result.game, f"{result.spec.game_id}: NashConv against solve time", result.units) for result in results
    )
    return FamilyResult(Section("Monte Carlo CFR", METHOD, tuple(tables)), runs, figures, notes)
