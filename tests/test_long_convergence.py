"""Long runs, excluded from ``make test`` (``make test-slow`` runs them, about 30 seconds).

Solvers driven to NashConv 1e-6, where the game values must hold to the same accuracy.
"""

from __future__ import annotations

import pytest

from cfr_agents import make_solver
from cfr_agents.solvers import Solver
from eval import Exploitability, exploitability_of_strategy
from tests.support import RLCARD_LEDUC_SMALL_BLIND_VALUE, tree, values_by_role

pytestmark = pytest.mark.slow

OPENSPIEL_LEDUC_VALUE = -0.085606424078  # OpenSpiel's sequence_form_lp_test
TARGET = 1e-6


def solve(game_id: str, algorithm: str, cap: int) -> tuple[Solver, Exploitability]:
    """Run until NashConv <= TARGET, checking every 5,000 iterations, at most ``cap`` iterations."""
    t = tree(game_id)
    solver = make_solver(t, algorithm)
    while True:
        solver.run(5000)
        result = exploitability_of_strategy(t, solver.average_strategy())
        if result.nash_conv <= TARGET or solver.iteration >= cap:
            return solver, result


@pytest.mark.parametrize(("algorithm", "cap"), [("pcfr+", 60_000), ("cfr+", 120_000)])
def test_openspiel_leduc_to_one_in_a_million(algorithm: str, cap: int) -> None:
    _, result = solve("openspiel:leduc_poker", algorithm, cap)
    assert result.nash_conv <= TARGET
    assert abs(result.policy_values[0] - OPENSPIEL_LEDUC_VALUE) <= result.nash_conv


def test_rlcard_leduc_to_one_in_a_million_and_the_published_small_blind_value() -> None:
    solver, result = solve("rlcard:leduc-holdem", "pcfr+", 60_000)
    assert result.nash_conv <= TARGET
    assert abs(result.policy_values[0]) <= result.nash_conv  # player 0's value is 0
    tabular = solver.average_policy().openspiel_policy()  # on the bridged game
    by_role = values_by_role(tabular.game, [tabular, tabular])
    # Each seat assignment has probability 1/2, so a seat's value is within 2 NashConv of its game value.
    assert by_role["SB"] == pytest.approx(RLCARD_LEDUC_SMALL_BLIND_VALUE, abs=2 * TARGET + 1e-6)
    assert by_role["BB"] == pytest.approx(-RLCARD_LEDUC_SMALL_BLIND_VALUE, abs=2 * TARGET + 1e-6)
