"""The training loop: stopping rules, check scheduling and curve marks."""

from __future__ import annotations

import math
from itertools import takewhile

import pytest

from cfr_agents import make_solver
from cfr_agents.training import CHECK_SHARE, StopRule, log_spaced, train
from cfr_agents.tree import CompiledTree, FloatArray
from eval import exploitability_of_strategy
from tests.support import Clock, tree


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
    solve time near :data:`CHECK_SHARE`: with a check costing as much as c iterations, one after the first
    iteration and then every ceil(c / CHECK_SHARE) iterations. The loop reads the test's clock, on which DCFR's
    iterations on Leduc and its checks take fixed times, so the spacing is the same on a loaded machine."""
    clock = Clock(check_cost=16)
    monkeypatch.setattr("cfr_agents.training.time.perf_counter", clock)
    run = train(
        clock.time(make_solver(tree("openspiel:leduc_poker"), "dcfr")),
        StopRule(iterations=100_000, target_nash_conv=1e-3),
        clock.nash_conv,
    )
    assert run.stopped_by == "target_nash_conv" and run.nash_conv <= 1e-3
    spacing = math.ceil(16 * 2**-10 / (CHECK_SHARE * 2**-10))  # as the loop computes it, from the clock's seconds
    assert [iteration for iteration, _ in clock.checks] == [1 + spacing * k for k in range(len(clock.checks))]
    assert clock.checks[-1] == (run.iterations, run.nash_conv) and len(clock.checks) > 2
    assert all(value > 1e-3 for _, value in clock.checks[:-1])


def test_curve_marks_are_log_spaced_without_repeats() -> None:
    marks = list(takewhile(lambda mark: mark <= 1000, log_spaced()))
    assert marks[:10] == [1, 2, 3, 4, 5, 6, 8, 10, 13, 16]
    assert marks[-3:] == [631, 794, 1000] and marks == sorted(set(marks))
    fine = list(takewhile(lambda mark: mark <= 1000, log_spaced(40)))
    assert fine[:20] == list(range(1, 21)) and fine[-1] == 1000 and fine == sorted(set(fine))
