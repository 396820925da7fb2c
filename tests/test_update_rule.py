"""Any finite DCFR parameter works: weights never overflow, the average stays a distribution."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cfr_agents import make_solver
from cfr_agents.solvers import UpdateRule
from cfr_agents.solvers.update_rule import discount, log_discount
from eval import exploitability_of_strategy
from tests.support import tree


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
        (UpdateRule(1.5, 0.0, 400.0), 200),
        (UpdateRule(400.0, 0.0, 2.0), 200),
        (UpdateRule(1.5, 400.0, 2.0), 200),
        (UpdateRule(1.5, 0.0, 100.0), 20_000),
        (UpdateRule(-400.0, -400.0, -400.0), 200),
    ],
)
@pytest.mark.parametrize("sampling", ["none", "external"])
def test_extreme_parameters_give_a_valid_policy(rule: UpdateRule, iterations: int, sampling: str) -> None:
    t = tree("openspiel:kuhn_poker")
    solver = make_solver(t, "dcfr", rule, sampling=sampling, rng=np.random.default_rng(0))
    solver.run(iterations)
    average = solver.average_strategy()
    assert np.all(np.isfinite(average))
    assert np.allclose(average.sum(axis=1), 1.0)
    assert np.isfinite(exploitability_of_strategy(t, average).nash_conv)


def test_large_gamma_is_linear_averaging_of_the_last_iterates() -> None:
    """gamma = 400 weights iteration t by t^400: the average is dominated by the latest iterates, so it
    approaches the current strategy -- computed here without overflow through rescaling."""
    t = tree("openspiel:kuhn_poker")
    solver = make_solver(t, "dcfr", UpdateRule(1.5, 0.0, 400.0))
    solver.run(2_000)
    assert np.abs(solver.average_strategy() - solver.current_strategy()).max() < 0.05


@pytest.mark.parametrize(
    "option", [["--gamma", "400"], ["--alpha", "400"], ["--beta", "400"], ["--gamma", "100", "--iterations", "20000"]]
)
def test_the_cli_trains_with_large_parameters(tmp_path: Path, option: list[str]) -> None:
    iterations = [] if "--iterations" in option else ["--iterations", "300"]
    command = [
        sys.executable,
        "-m",
        "cfr_agents",
        "train",
        "--game",
        "openspiel:kuhn_poker",
        "--algo",
        "dcfr",
        *iterations,
        *option,
        "--out",
        str(tmp_path / "p.json"),
        "--quiet",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "NashConv" in result.stdout


@pytest.mark.parametrize(
    ("gamma", "change", "horizon"), [(30.0, -5.0, 1000), (15.0, -5.0, 1000), (2.0, 3.0, 7), (400.0, -300.0, 50)]
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
    for gamma in (0.0, 1.0, 2.0, 400.0, -3.0):
        for t in (1, 2, 7, 1000, 10**7):
            assert UpdateRule(gamma=gamma).log_average_weight(t) == (gamma * math.log(t) if gamma else 0.0)


def test_schedule_parameters_are_checked_and_written_only_when_used() -> None:
    from adapters.inputs import InputError

    for bad in ({"gamma_change": math.inf}, {"gamma_change": math.nan}, {"horizon": 0}, {"horizon": 10.0}):
        with pytest.raises(InputError):
            UpdateRule(**bad)
    assert "horizon" not in UpdateRule(gamma=2.0, horizon=5).parameters()
    assert UpdateRule(gamma=2.0, gamma_change=1.0, horizon=5).parameters()["horizon"] == 5


def test_a_steep_schedule_gives_a_valid_policy() -> None:
    """Weights up to e^1660 under a schedule (gamma 400 falling to 100) go through the same rescaling."""
    t = tree("openspiel:kuhn_poker")
    solver = make_solver(t, "pcfr+", UpdateRule(math.inf, -math.inf, 400.0, True, gamma_change=-300.0, horizon=100))
    solver.run(300)
    average = solver.average_strategy()
    assert np.all(np.isfinite(average)) and np.allclose(average.sum(axis=1), 1.0)
    assert solver.state()["scalars"][1] > 0.0  # the scale was raised
    assert np.isfinite(exploitability_of_strategy(t, average).nash_conv)
