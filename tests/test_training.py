"""The training loop: stopping rules, check scheduling and curve marks."""

from __future__ import annotations

import math
from itertools import takewhile
from types import SimpleNamespace

import pytest

import cfr_agents.training as training
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


def test_a_reachable_target_stops_at_its_first_check_at_or_below_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """It stops at the first check that reaches the target, and the checks are spaced to keep their share of the
    solve time near :data:`CHECK_SHARE`: with an iteration costing X seconds and a check Y, one after the first
    iteration and then every ceil(Y / (CHECK_SHARE X)) iterations. The loop reads the test's clock, on which DCFR's
    iterations on Leduc and the checks take exactly X and Y, so the spacing is the same on a loaded machine."""
    t = tree("openspiel:leduc_poker")
    solver = make_solver(t, "dcfr")
    now = [0.0]
    monkeypatch.setattr(training, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    iteration_seconds, check_seconds = 2.0**-10, 2.0**-6  # dyadic: the loop's sums and means of them are exact
    run_iterations = solver.run

    def timed_run(iterations: int) -> None:
        run_iterations(iterations)
        now[0] += iterations * iteration_seconds

    monkeypatch.setattr(solver, "run", timed_run)
    checks: list[tuple[int, float]] = []

    def timed(compiled: CompiledTree, strategy: FloatArray) -> float:
        now[0] += check_seconds
        checks.append((solver.iteration, nash_conv(compiled, strategy)))
        return checks[-1][1]

    run = train(solver, StopRule(iterations=100_000, target_nash_conv=1e-3), timed)
    assert run.stopped_by == "target_nash_conv" and run.nash_conv <= 1e-3
    assert run.solve_seconds == run.iterations * iteration_seconds
    spacing = math.ceil(check_seconds / (CHECK_SHARE * iteration_seconds))
    assert [iteration for iteration, _ in checks] == [1 + spacing * k for k in range(len(checks))]
    assert checks[-1] == (run.iterations, run.nash_conv) and len(checks) > 2
    assert all(value > 1e-3 for _, value in checks[:-1])


def test_curve_marks_are_log_spaced_without_repeats() -> None:
    marks = list(takewhile(lambda mark: mark <= 1000, log_spaced()))
    assert marks[:10] == [1, 2, 3, 4, 5, 6, 8, 10, 13, 16]
    assert marks[-3:] == [631, 794, 1000] and marks == sorted(set(marks))
    fine = list(takewhile(lambda mark: mark <= 1000, log_spaced(40)))
    assert fine[:20] == list(range(1, 21)) and fine[-1] == 1000 and fine == sorted(set(fine))
