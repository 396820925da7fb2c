"""Train a solver with stopping rules, progress reporting and a convergence curve.

Solve time counts only solver iterations; NashConv checks are timed apart and scheduled
so that they cost at most about a tenth of the run (see :func:`train`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import dropwhile

import psutil

from cfr_agents.solvers import Solver
from cfr_agents.tree import CompiledTree, FloatArray

CHECK_SHARE = 0.1
"""Checks are spaced so their time stays near this share of the solve time."""
CURVE_POINTS_PER_DECADE = 10
BATCH_SECONDS = 0.05
"""Iterations run between progress reports, time-limit checks and NashConv checks take about this long."""


@dataclass(frozen=True)
class StopRule:
    iterations: int | None = None
    target_nash_conv: float | None = None
    time_limit: float | None = None


@dataclass(frozen=True)
class CurvePoint:
    iteration: int
    seconds: float
    """Solve time of this run so far: the solver's own iterations only, never the NashConv checks."""
    nash_conv: float


@dataclass(frozen=True)
class TrainingRun:
    """One call of :func:`train`, which may continue a solver that has already run (a resumed checkpoint)."""

    started_at: int
    """The solver's iteration count when this run began: 0, or the iteration of a resumed checkpoint."""
    iterations: int
    """The solver's iteration count at the end, iterations of earlier runs included."""
    solve_seconds: float
    """Time spent in this run's iterations."""
    check_seconds: float
    nash_conv: float
    stopped_by: str
    """``"iterations"``, ``"target_nash_conv"`` or ``"time_limit"``."""
    curve: tuple[CurvePoint, ...]
    peak_rss_mb: float

    @property
    def iterations_run(self) -> int:
        """Iterations this run made."""
        return self.iterations - self.started_at

    @property
    def iterations_per_second(self) -> float | None:
        """This run's rate; ``None`` when it measured no time (it ran no iterations)."""
        return self.iterations_run / self.solve_seconds if self.solve_seconds > 0 else None


def log_spaced(per_decade: int = CURVE_POINTS_PER_DECADE) -> Iterator[int]:
    """``round(10 ** (k / per_decade))`` for k = 0, 1, ... without repeats, forever.

    >>> from itertools import islice
    >>> list(islice(log_spaced(), 12))
    [1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25]
    """
    last = k = 0
    while True:
        mark = round(10 ** (k / per_decade))
        if mark > last:
            yield mark
            last = mark
        k += 1


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, in MiB (``ru_maxrss`` on Linux)."""
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def current_rss_mb() -> float:
    return float(psutil.Process().memory_info().rss) / 2**20


def train(
    solver: Solver,
    stop: StopRule,
    nash_conv: Callable[[CompiledTree, FloatArray], float],
    *,
    record_curve: bool = False,
    on_progress: Callable[[int, float | None], None] | None = None,
) -> TrainingRun:
    """Iterate ``solver`` from its current iteration until ``stop``; return what happened.

    ``stop.iterations`` is the solver's total iteration count (earlier runs included), while
    ``stop.time_limit`` counts this run's solve time only. A solver that has already run (a
    resumed checkpoint) continues as a fresh one would. NashConv of the average strategy is
    measured at the log-spaced iterations past the start when ``record_curve`` is set (the curve
    gives this run's solve time), and when a target is set, after the run's first iteration and
    then at a spacing that keeps the checks' share of this run's time near :data:`CHECK_SHARE`.
    ``on_progress(iteration, last NashConv)`` is called after every batch of iterations.
    """
    tree = solver.tree
    started_at = solver.iteration
    curve: list[CurvePoint] = []
    marks = dropwhile(lambda mark: mark <= started_at, log_spaced())
    next_mark = next(marks) if record_curve else None
    solve = checks = 0.0
    measured: dict[int, float] = {}
    batch = 1
    next_check = started_at + 1 if stop.target_nash_conv is not None else None
    stopped_by = "iterations"

    def measure() -> float:
        """NashConv of the current average strategy, measured once per iteration count."""
        nonlocal checks
        if solver.iteration not in measured:
            started = time.perf_counter()
            measured[solver.iteration] = nash_conv(tree, solver.average_strategy())
            checks += time.perf_counter() - started
        return measured[solver.iteration]

    while stop.iterations is None or solver.iteration < stop.iterations:
        goal = solver.iteration + batch
        for limit in (stop.iterations, next_check, next_mark):
            if limit is not None:
                goal = min(goal, limit)
        ran = goal - solver.iteration
        assert ran > 0, f"no progress at iteration {solver.iteration}: every goal must lie ahead"
        started = time.perf_counter()
        solver.run(ran)
        elapsed = time.perf_counter() - started
        solve += elapsed
        # Next batch: ~BATCH_SECONDS at the rate just measured, at most twice the last one actually run.
        batch = max(1, min(2 * ran, int(ran / max(elapsed, 1e-9) * BATCH_SECONDS)))
        if solver.iteration == next_mark:
            curve.append(CurvePoint(solver.iteration, solve, measure()))
            next_mark = next(marks)
        if solver.iteration == next_check:
            if measure() <= (stop.target_nash_conv or 0.0):
                stopped_by = "target_nash_conv"
                break
            check_cost = checks / len(measured)
            per_iteration = max(solve, 1e-9) / (solver.iteration - started_at)
            next_check = solver.iteration + max(1, math.ceil(check_cost / (CHECK_SHARE * per_iteration)))
        if on_progress is not None:
            on_progress(solver.iteration, measured.get(max(measured)) if measured else None)
        if stop.time_limit is not None and solve >= stop.time_limit:
            stopped_by = "time_limit"
            break
    final = measure()
    if record_curve and (not curve or curve[-1].iteration != solver.iteration):
        curve.append(CurvePoint(solver.iteration, solve, final))
    return TrainingRun(
        started_at=started_at,
        iterations=solver.iteration,
        solve_seconds=solve,
        check_seconds=checks,
        nash_conv=final,
        stopped_by=stopped_by,
        curve=tuple(curve),
        peak_rss_mb=peak_rss_mb(),
    )
