"""What every benchmark family measures, and how: the runner protocol, speed and convergence.

* **Speed**: after a warm-up, each solver runs batches of iterations sized to about
  ``batch_seconds``; the batches of all solvers are interleaved round by round, so load drift on a
  shared machine hits all of them alike, and the median over the rounds is reported. Nothing else
  runs in the timed region.
* **Convergence**: NashConv of each solver's *average* strategy against solve time, at log-spaced
  iteration counts (and, if asked, at iteration counts aimed at given solve times), until a NashConv
  or a time budget is reached. Only the solver's own iterations are timed; reading its average
  policy and evaluating it are not. One NashConv function serves every solver: each policy is an
  ``(N, A)`` array on our compiled tree, evaluated exactly by :func:`eval.exploitability_of_strategy`.
  At the end of each run the same policy is evaluated by OpenSpiel as a cross-check.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import cfr_agents
from cfr_agents.solvers import SampledSolver, Solver
from cfr_agents.training import CurvePoint, log_spaced
from cfr_agents.tree import CompiledTree, FloatArray
from eval import exploitability_of_strategy

CROSS_CHECK_TOLERANCE = 1e-9
AIM_TOLERANCE = 0.01
"""A checkpoint aimed at solve time ``t`` counts as taken at ``t`` if it lands within 1% of it."""


@dataclass(frozen=True)
class Settings:
    """Options every family honours."""

    budget: float
    """Solve seconds per solver per game for the convergence runs (the longest report time for sampling)."""
    speed_rounds: int
    batch_seconds: float
    seeds: int
    """Seeds of the runs whose NashConv is a median over seeds."""
    compile_timing: bool
    """Time JIT compilation in fresh processes (cold, then from cache)."""


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
    """A named solver; ``make`` returns a fresh instance (untimed: JIT compilation belongs there)."""

    name: str
    family: str
    """``ours``, ``openspiel-cpp``, ``openspiel-python`` or ``liteefg``."""
    algorithm: str
    sampling: str
    """``none`` for a full-tree solver, else the Monte Carlo scheme."""
    label: str
    make: Callable[[], Runner]
    seed: int = 0


def nash_conv(tree: CompiledTree, strategy: FloatArray) -> float:
    """The one NashConv used for every solver: exact, on our compiled tree, in the game's units."""
    return exploitability_of_strategy(tree, strategy).nash_conv


def our_runner(
    tree: CompiledTree,
    game: Any,
    algorithm: str,
    sampling: str = "none",
    seed: int = 0,
    chance_draws: str | None = None,
) -> OurRunner:
    """Our solver of ``algorithm`` with ``sampling``; a sampled solver's kernel is compiled here, untimed."""
    if sampling == "none":
        return OurRunner(tree, game, cfr_agents.make_solver(tree, algorithm))
    solver = cfr_agents.make_solver(
        tree, algorithm, sampling=sampling, rng=np.random.default_rng(seed), chance_draws=chance_draws
    )
    assert isinstance(solver, SampledSolver)
    solver.compile()
    return OurRunner(tree, game, solver)


class OurRunner:
    """One of our solvers, full-tree or sampled; ``game`` is the pyspiel game (native or bridged)."""

    def __init__(self, tree: CompiledTree, game: Any, solver: Solver) -> None:
        self._tree = tree
        self._game = game
        self._solver = solver

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
    def iterations_per_second(self) -> float:
        return 1e3 / self.median_ms


def timed_step(runner: Runner, iterations: int) -> float:
    started = time.perf_counter()
    runner.step(iterations)
    return time.perf_counter() - started


def _calibrate(runner: Runner, batch_seconds: float) -> int:
    """Warm up, then the batch size that takes about ``batch_seconds``."""
    runner.step(2)
    iterations = 1
    while True:
        elapsed = timed_step(runner, iterations)
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
            sample.append(timed_step(runner, batch) / batch * 1e3)
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
    sampling: str
    seed: int
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

    def at(self, seconds: float) -> CurvePoint | None:
        """The last checkpoint within ``seconds`` of solve time (1% tolerance), if any."""
        within = [point for point in self.points if point.seconds <= seconds * (1 + AIM_TOLERANCE)]
        return within[-1] if within else None


def _aimed_iterations(seconds: float, solve: float, done: int) -> int:
    """Iterations toward a checkpoint at ``seconds`` of solve time: half the remaining time at the rate
    so far, so the gap halves step by step and only a rate that halves within a step can overshoot it."""
    return max(1, round((seconds - solve) / 2 * done / solve))


def measure_convergence(
    entry: Contender,
    tree: CompiledTree,
    game: str,
    budget: float,
    *,
    stop_nash_conv: float,
    per_decade: int,
    report_seconds: Sequence[float] = (),
) -> Convergence:
    """Run one fresh solver until NashConv <= ``stop_nash_conv`` or ``budget`` solve seconds.

    Checkpoints fall at ``round(10 ** (k / per_decade))`` iterations and, for each of
    ``report_seconds``, at iteration counts that close in on that solve time until one is within
    :data:`AIM_TOLERANCE` of it.
    """
    runner = entry.make()
    points: list[CurvePoint] = []
    pending = sorted(report_seconds)
    marks = log_spaced(per_decade)
    mark = next(marks)
    solve, done = 0.0, 0
    while True:
        target = mark
        if pending and done:
            target = min(target, done + _aimed_iterations(pending[0], solve, done))
        solve += timed_step(runner, target - done)
        done = target
        while mark <= done:
            mark = next(marks)
        while pending and solve >= pending[0] * (1 - AIM_TOLERANCE):
            pending.pop(0)
        points.append(CurvePoint(done, solve, nash_conv(tree, runner.average_strategy())))
        if points[-1].nash_conv <= stop_nash_conv or solve >= budget or (report_seconds and not pending):
            break
    return Convergence(
        entry.name,
        entry.label,
        entry.family,
        entry.algorithm,
        entry.sampling,
        entry.seed,
        game,
        budget,
        tuple(points),
        runner.reference_check(),
    )
