"""Every DCFR parameter in its range works: weights never overflow, the average stays a distribution; one out of
its range is refused."""

from __future__ import annotations

import math

import numpy as np
import pytest
from open_spiel.python.algorithms import discounted_cfr

from adapters.openspiel import OpenSpielGame
from cfr_agents import make_solver
from cfr_agents.solvers import UpdateRule
from cfr_agents.solvers.update_rule import discount, log_discount
from eval import exploitability_of_strategy
from tests.support import CliRun, game, in_one_process, tree


@pytest.mark.parametrize("exponent", [-400.0, -2.0, 0.0, 1.5, 400.0])
@pytest.mark.parametrize("t", [1, 2, 10, 10**6])
def test_discount_is_the_logistic_of_exponent_log_t(exponent: float, t: int) -> None:
    x = exponent * math.log(t)
    expected = math.exp(-math.log1p(math.exp(-x))) if x > -700 else 0.0
    assert discount(exponent, t) == pytest.approx(expected, rel=1e-12, abs=1e-300)
    assert math.exp(log_discount(exponent, t)) == pytest.approx(discount(exponent, t), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize(
    ("rule", "iterations"),
    [
        (UpdateRule(1.5, 0.0, 100.0), 200),
        (UpdateRule(50.0, 0.0, 2.0), 200),
        (UpdateRule(1.5, 50.0, 2.0), 200),
        (UpdateRule(1.5, 0.0, 100.0), 20_000),
        (UpdateRule(0.0, -50.0, 0.0), 200),
    ],
)
@pytest.mark.parametrize("sampling", ["none", "external"])
def test_parameters_at_the_ends_of_their_ranges_give_a_valid_policy(
    rule: UpdateRule, iterations: int, sampling: str
) -> None:
    t = tree("openspiel:kuhn_poker")
    solver = make_solver(t, "dcfr", rule, sampling=sampling, rng=np.random.default_rng(0))
    solver.run(iterations)
    average = solver.average_strategy()
    assert np.all(np.isfinite(average))
    assert np.allclose(average.sum(axis=1), 1.0)
    assert np.isfinite(exploitability_of_strategy(t, average).nash_conv)


def test_the_largest_gamma_matches_openspiels_dcfr_across_the_rescaling() -> None:
    """gamma = 100 weights iteration t by t^100, beyond ``e^600`` from t = 404 on, where the average is rescaled;
    OpenSpiel's DCFR, which multiplies the sums by ``((t-1)/t)^gamma`` instead, gives the same average."""
    pyspiel_game = game("openspiel:kuhn_poker")
    assert isinstance(pyspiel_game, OpenSpielGame)
    reference = discounted_cfr.DCFRSolver(pyspiel_game.pyspiel_game, alpha=1.5, beta=0.0, gamma=100.0)
    ours = make_solver(tree("openspiel:kuhn_poker"), "dcfr", UpdateRule(1.5, 0.0, 100.0))
    for _ in range(500):
        reference.evaluate_and_update_policy()
        ours.iterate()
    assert ours.state()["scalars"][1] > 0.0  # the scale was raised
    expected = reference.average_policy().action_probability_array
    actual = ours.average_policy().openspiel_policy().action_probability_array
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-9)


EXTREMES = [["--gamma", "100"], ["--alpha", "50"], ["--beta=-50"], ["--gamma", "100", "--iterations", "20000"]]
"""Options of ``train`` at the ends of their ranges (300 iterations unless given)."""


@pytest.fixture(scope="module")
def extreme_runs(tmp_path_factory: pytest.TempPathFactory) -> list[CliRun]:
    """``train`` with each of :data:`EXTREMES`, in one process."""
    folder = tmp_path_factory.mktemp("extremes")
    runs = []
    for k, option in enumerate(EXTREMES):
        iterations = [] if "--iterations" in option else ["--iterations", "300"]
        argv = ["train", "--game", "openspiel:kuhn_poker", "--algo", "dcfr", *iterations, *option]
        runs.append((folder, [*argv, "--out", str(folder / f"p{k}.json"), "--quiet"]))
    return in_one_process(runs)


@pytest.mark.parametrize("option", EXTREMES)
def test_the_cli_trains_with_parameters_at_the_ends_of_their_ranges(
    extreme_runs: list[CliRun], option: list[str]
) -> None:
    result = extreme_runs[EXTREMES.index(option)]
    assert result.status == 0, result.err
    assert "NashConv" in result.out


@pytest.mark.parametrize(
    ("gamma", "change", "horizon"), [(30.0, -5.0, 1000), (15.0, -5.0, 1000), (2.0, 3.0, 7), (100.0, -100.0, 50)]
)
def test_a_schedules_weight_is_the_product_of_its_factors(gamma: float, change: float, horizon: int) -> None:
    r""":math:`\ln w_t` is :math:`\sum_{s<t} \gamma_s \ln((s+1)/s)` -- the log of the recursion's factors
    :math:`((s+1)/s)^{\gamma_s}` -- with :math:`\gamma_s = \gamma + c \min(s, T)/T`, before and past :math:`T`."""
    rule = UpdateRule(gamma=gamma, gamma_change=change, horizon=horizon)
    total = 0.0
    for t in range(1, 3 * horizon + 3):
        if t > 1:
            total += (gamma + change * min(t - 1, horizon) / horizon) * math.log(t / (t - 1))
            assert rule.gamma_after(t - 1) == gamma + change * min(t - 1, horizon) / horizon
        assert rule.log_average_weight(t) == pytest.approx(total, rel=1e-13, abs=1e-13)


def test_without_a_schedule_the_weight_is_t_to_the_gamma_exactly() -> None:
    for gamma in (0.0, 1.0, 2.0, 37.5, 100.0):
        for t in (1, 2, 7, 1000, 10**7):
            assert UpdateRule(gamma=gamma).log_average_weight(t) == (gamma * math.log(t) if gamma else 0.0)


def test_schedule_parameters_are_checked_and_written_only_when_used() -> None:
    from adapters.inputs import InputError

    for bad in (
        {"gamma_change": math.inf},
        {"gamma_change": math.nan},
        {"gamma": 30.0, "gamma_change": -35.0},  # the exponent would end at -5
        {"horizon": 0},
        {"horizon": 10.0},
    ):
        with pytest.raises(InputError):
            UpdateRule(**bad)
    assert "horizon" not in UpdateRule(gamma=2.0, horizon=5).parameters()
    assert UpdateRule(gamma=2.0, gamma_change=1.0, horizon=5).parameters()["horizon"] == 5


def test_a_steep_schedule_gives_a_valid_policy() -> None:
    """Weights up to e^641 under a schedule (gamma 100 falling to 50) go through the same rescaling."""
    t = tree("openspiel:kuhn_poker")
    solver = make_solver(t, "pcfr+", UpdateRule(math.inf, -math.inf, 100.0, True, gamma_change=-50.0, horizon=1000))
    solver.run(1000)
    average = solver.average_strategy()
    assert np.all(np.isfinite(average)) and np.allclose(average.sum(axis=1), 1.0)
    assert solver.state()["scalars"][1] > 0.0  # the scale was raised
    assert np.isfinite(exploitability_of_strategy(t, average).nash_conv)
