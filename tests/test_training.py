"""The training loop: stopping rules, check scheduling and curve marks."""

from __future__ import annotations

import math
import time
from itertools import takewhile

from cfr_agents import make_solver
from cfr_agents.training import CHECK_SHARE, StopRule, log_spaced, train
from cfr_agents.tree import CompiledTree, FloatArray
from eval import exploitability_of_strategy
from tests.support import tree


def nash_conv(t: CompiledTree, strategy: FloatArray) -> float:
    return exploitability_of_strategy(t, strategy).nash_conv


def test_an_unreachable_target_runs_to_the_cap_with_checks_kept_in_their_share() -> None:
    """Thousands of checks on Kuhn (a check costs about an iteration there) neither blow up the
    batch sizes nor take over the run."""
    t = tree("openspiel:kuhn_poker")
    run = train(make_solver(t, "cfr"), StopRule(iterations=30_000, target_nash_conv=1e-12), nash_conv)
    assert (run.iterations, run.stopped_by) == (30_000, "iterations")
    assert 0 < run.check_seconds < 0.5 * run.solve_seconds
    assert run.nash_conv < 2e-3


def test_a_reachable_target_stops_at_its_first_check_at_or_below_it() -> None:
    """It stops at the first check that reaches the target, and that check follows the last one by no more
    than the spacing that keeps checks near their share of the solve time (about 500 iterations for DCFR to
    1e-3 on Leduc; how many follow depends on how fast this machine iterates, so the test says it in time)."""
    t = tree("openspiel:leduc_poker")
    solver = make_solver(t, "dcfr")
    checks: list[tuple[int, float, float]] = []

    def timed(compiled: CompiledTree, strategy: FloatArray) -> float:
        started = time.perf_counter()
        value = nash_conv(compiled, strategy)
        checks.append((solver.iteration, value, time.perf_counter() - started))
        return value

    run = train(solver, StopRule(iterations=100_000, target_nash_conv=1e-3), timed)
    assert run.stopped_by == "target_nash_conv" and run.nash_conv <= 1e-3
    assert checks[-1][:2] == (run.iterations, run.nash_conv)
    assert all(value > 1e-3 for _, value, _ in checks[:-1])
    check_cost = max(seconds for *_, seconds in checks)
    per_iteration = run.solve_seconds / run.iterations
    gap = checks[-1][0] - checks[-2][0]
    assert gap <= 3 * math.ceil(check_cost / (CHECK_SHARE * per_iteration))


def test_curve_marks_are_log_spaced_without_repeats() -> None:
    marks = list(takewhile(lambda mark: mark <= 1000, log_spaced()))
    assert marks[:10] == [1, 2, 3, 4, 5, 6, 8, 10, 13, 16]
    assert marks[-3:] == [631, 794, 1000] and marks == sorted(set(marks))
    fine = list(takewhile(lambda mark: mark <= 1000, log_spaced(40)))
    assert fine[:20] == list(range(1, 21)) and fine[-1] == 1000 and fine == sorted(set(fine))
