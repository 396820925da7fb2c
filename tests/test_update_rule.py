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
