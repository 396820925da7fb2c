"""The training loop: stopping rules, check scheduling and curve marks."""

from __future__ import annotations

from itertools import takewhile

from cfr_agents import make_solver
from cfr_agents.training import StopRule, log_spaced, train
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


def test_a_reachable_target_stops_soon_after_it_is_reached() -> None:
    t = tree("openspiel:leduc_poker")
    run = train(make_solver(t, "dcfr"), StopRule(iterations=100_000, target_nash_conv=1e-3), nash_conv)
    assert run.stopped_by == "target_nash_conv" and run.nash_conv <= 1e-3
    assert run.iterations < 2000  # DCFR needs about 500 iterations; the checks follow closely


def test_curve_marks_are_log_spaced_without_repeats() -> None:
    marks = list(takewhile(lambda mark: mark <= 1000, log_spaced()))
    assert marks[:10] == [1, 2, 3, 4, 5, 6, 8, 10, 13, 16]
    assert marks[-3:] == [631, 794, 1000] and marks == sorted(set(marks))
    fine = list(takewhile(lambda mark: mark <= 1000, log_spaced(40)))
    assert fine[:20] == list(range(1, 21)) and fine[-1] == 1000 and fine == sorted(set(fine))
