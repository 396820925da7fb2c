"""Train any solver -- full-tree, sampled or neural -- with stopping rules, progress reporting and a
convergence curve.

Every solver trains through :func:`train`: it has the surface :class:`Trainable` describes, it stops at
whichever of :class:`StopRule`'s iterations, time limit and target NashConv comes first, and its curve is
one type, :class:`CurvePoint`, written as CSV by :func:`curve_csv`. Scoring is the caller's: :func:`train`
is handed the NashConv function (this package never imports the evaluation layer).

Solve time counts only solver iterations; NashConv checks are timed apart and scheduled so that they cost
at most about a tenth of the run (see :func:`train`). A solver whose average strategy or state holds a
value that is not finite stops the run with one line naming it.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import dropwhile
from typing import Any, Protocol

import numpy as np
import psutil

from adapters.inputs import InputError, Interval
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers.neural.holdem import EngineGame
from cfr_agents.tree import CompiledTree, FloatArray

CHECK_SHARE = 0.1
"""Checks are spaced so their time stays near this share of the solve time."""
CURVE_POINTS_PER_DECADE = 10
BATCH_SECONDS = 0.05
"""Iterations run between progress reports, time-limit checks and NashConv checks take about this long."""
STOPPED_BY = ("iterations", "time_limit", "target_nash_conv")
"""What can stop a run: :attr:`TrainingRun.stopped_by` is one of these."""


class Trainable(Protocol):
    """What :func:`train` needs of a solver: the surface every solver here has (full-tree, sampled, neural)."""

    @property
    def tree(self) -> CompiledTree | PublicTree | AbstractGame | EngineGame:
        """The game the solver runs on: a compiled tree, a hold'em game's public tree, a hold'em game through
        a card abstraction, or the hold'em engine alone (neural CFR)."""

    @property
    def algorithm(self) -> str: ...

    @property
    def iteration(self) -> int:
        """Iterations run so far."""

    def run(self, iterations: int) -> None: ...

    def compile(self) -> float:
        """Compile (or load from cache) what :meth:`run` runs; seconds taken."""

    def average_strategy(self) -> FloatArray: ...

    def parameters(self) -> Mapping[str, object]: ...

    def state(self, *, copy: bool = True) -> dict[str, np.ndarray]:
        """The whole mutable state, as arrays: what a checkpoint holds. With ``copy=False``, read-only views where
        the state is large (:func:`~cfr_agents.tree.state_arrays`): they change with the next iteration."""

    def restore(self, state: Mapping[str, np.ndarray]) -> None: ...


NASH_CONV_TARGET = Interval(1e-15, 1e6)
"""A NashConv or exploitability to reach (``--target-nash-conv``, ``--precision``, ...), in the game's units:
below 1e-15 it is the float64 rounding of payoffs of order one, above 1e6 more than any game here can pay."""
SECONDS = Interval(0.0, 1e9, open_low=True)
"""A duration in seconds (``--time-limit``, ``--checkpoint-every``): at most 10^9 s, about 32 years."""


@dataclass(frozen=True)
class StopRule:
    """When :func:`train` stops: at ``iterations`` in all (earlier runs included), at a NashConv of at most
    ``target_nash_conv`` (in :data:`NASH_CONV_TARGET`), or after ``time_limit`` seconds of this run's solve time
    (in :data:`SECONDS`), whichever comes first."""

    iterations: int | None = None
    target_nash_conv: float | None = None
    time_limit: float | None = None

    def __post_init__(self) -> None:
        if self.target_nash_conv is not None:
            NASH_CONV_TARGET.check("target_nash_conv", self.target_nash_conv)
        if self.time_limit is not None:
            SECONDS.check("time_limit", self.time_limit)


@dataclass(frozen=True)
class CurvePoint:
    """One point of a convergence curve: NashConv measured after ``iteration`` iterations (or episodes, for
    an opponent trained by self-play)."""

    iteration: int
    seconds: float
    """Training time of this run so far: the solver's own iterations only, never the NashConv checks."""
    nash_conv: float
    nodes_touched: int | None = None
    """Game-tree nodes the traversals had touched (a neural solver counts them), else ``None``."""


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
    """Of the average strategy at the end; NaN where nothing scores the game exactly."""
    stopped_by: str
    """One of :data:`STOPPED_BY`: ``"iterations"``, ``"time_limit"`` or ``"target_nash_conv"``."""
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


LOGARITHMS = ("log_at", "scalars")
"""State arrays that hold logarithms (of discounts and average weights), where ``-inf`` is the log of 0."""


def not_finite(name: str, array: np.ndarray) -> bool:
    """Whether the state array ``name`` holds a value no solver means: NaN, ``+inf``, or ``-inf`` outside
    :data:`LOGARITHMS`."""
    if array.dtype.kind != "f":
        return False
    if name in LOGARITHMS:
        return bool(np.isnan(array).any() or np.isposinf(array).any())
    return not bool(np.isfinite(array).all())


def check_finite(solver: Trainable) -> None:
    """Refuse, in one line naming the solver and the array, a state holding a value that is not finite."""
    for name, array in solver.state(copy=False).items():
        if not_finite(name, array):
            raise InputError(
                f"{solver.algorithm}: its {name!r} holds values that are not finite at iteration {solver.iteration}"
            )


def train(
    solver: Trainable,
    stop: StopRule,
    nash_conv: Callable[[Any, FloatArray], float] | None,
    *,
    record_curve: bool = False,
    every: int | Callable[[int], Iterator[int]] | None = None,
    on_progress: Callable[[int, float | None], None] | None = None,
    on_point: Callable[[CurvePoint], None] | None = None,
) -> TrainingRun:
    """Iterate ``solver`` from its current iteration until ``stop``; return what happened.

    ``stop.iterations`` is the solver's total iteration count (earlier runs included), while
    ``stop.time_limit`` counts this run's solve time only. A solver that has already run (a
    resumed checkpoint) continues as a fresh one would. NashConv of the average strategy is measured
    at marks past the start -- the log-spaced iterations (:func:`log_spaced`), or with ``every`` the
    multiples of ``every`` or the iterations ``every(start)`` yields (a fixed schedule, increasing) --
    when ``record_curve`` is set (the curve gives this run's solve time and, for each point recorded,
    ``on_point`` is called). A target is checked at those marks when ``every`` is given, so the run
    stops at an iteration that depends on the inputs alone; else after the run's first iteration and
    then at a spacing that keeps the checks' share of this run's time near :data:`CHECK_SHARE`.
    ``on_progress(iteration, last NashConv)`` is called after every batch of iterations. The average
    strategy is checked to be finite whenever it is measured, and the whole state at the end. Without
    ``nash_conv`` (a game nothing here scores exactly) nothing is measured: no curve, no target, and the run's
    NashConv is NaN.
    """
    if nash_conv is None and (record_curve or every is not None or stop.target_nash_conv is not None):
        raise InputError(f"{solver.tree.game_id} has no exact NashConv here: no curve, no target NashConv")
    tree = solver.tree
    started_at = solver.iteration
    curve: list[CurvePoint] = []
    if every is None:
        marks: Iterator[int] = dropwhile(lambda mark: mark <= started_at, log_spaced())
    elif callable(every):
        marks = dropwhile(lambda mark: mark <= started_at, every(started_at))
    else:
        marks = itertools.count(every * (started_at // every + 1), every)
    next_mark = next(marks, None) if record_curve or every is not None else None
    solve = checks = 0.0
    measured: dict[int, float] = {}
    batch = 1
    next_check = started_at + 1 if stop.target_nash_conv is not None and every is None else None
    stopped_by = "iterations"

    def measure() -> float:
        """NashConv of the current average strategy, measured once per iteration count (NaN with no ``nash_conv``:
        then the state's arrays alone are checked, by :func:`check_finite`)."""
        nonlocal checks
        if nash_conv is None:
            return math.nan
        if solver.iteration not in measured:
            started = time.perf_counter()
            strategy = solver.average_strategy()
            if not np.isfinite(strategy).all():
                raise InputError(
                    f"{solver.algorithm}: its average strategy holds values that are not finite "
                    f"at iteration {solver.iteration}"
                )
            measured[solver.iteration] = nash_conv(tree, strategy)
            checks += time.perf_counter() - started
        return measured[solver.iteration]

    def record() -> float:
        value = measure()
        if record_curve:
            curve.append(CurvePoint(solver.iteration, solve, value, getattr(solver, "nodes_touched", None)))
            if on_point is not None:
                on_point(curve[-1])
        return value

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
            value = record()
            next_mark = next(marks, None)
            if every is not None and value <= (stop.target_nash_conv or -math.inf):
                stopped_by = "target_nash_conv"
                break
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
    if record_curve and (not curve or curve[-1].iteration != solver.iteration):
        record()
    final = measure()
    check_finite(solver)
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


def curve_csv(points: Sequence[CurvePoint]) -> str:
    """A curve as CSV, ``iteration,seconds,nash_conv,nodes_touched``, one row per point (``nodes_touched`` empty
    where it was not counted): what ``train --curve`` writes, for every solver."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["iteration", "seconds", "nash_conv", "nodes_touched"])
    for point in points:
        nodes = "" if point.nodes_touched is None else point.nodes_touched
        writer.writerow([point.iteration, f"{point.seconds:.6f}", repr(point.nash_conv), nodes])
    return buffer.getvalue()
