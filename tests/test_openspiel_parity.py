"""Our solvers reproduce OpenSpiel's Python solvers iterate for iterate.

CFR and CFR+ against ``cfr.CFRSolver`` / ``cfr.CFRPlusSolver``; Linear and Discounted CFR
against ``discounted_cfr.LCFRSolver`` / ``discounted_cfr.DCFRSolver`` (default alpha, beta, gamma).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pytest
from open_spiel.python.algorithms import cfr, discounted_cfr

from adapters.openspiel import OpenSpielGame
from cfr_agents import make_solver
from cfr_agents.solvers import ALGORITHMS
from tests.support import game, tree

SOLVERS: dict[str, Callable[..., cfr._CFRSolver]] = {
    "cfr": cfr.CFRSolver,
    "cfr+": cfr.CFRPlusSolver,
    "lcfr": discounted_cfr.LCFRSolver,
    "dcfr": discounted_cfr.DCFRSolver,
}


def checkpoints(name: str) -> tuple[int, ...]:
    """Iterations at which the average policies are compared: up to 100 on Kuhn; on Leduc, up to 10 (OpenSpiel's
    Python solvers take a few tenths of a second an iteration there, and the discounted solvers part beyond about 50).

    Linear and Discounted CFR amplify rounding-level differences on Leduc: perturbing our own
    regrets by a relative 1e-15 after 10 iterations moves the average policy by ~1e-7 at
    iteration 100 (CFR's stays at 1e-14). Two correct implementations that sum in different
    orders therefore part beyond ~50 iterations; at 20 they agree to ~1e-12.
    """
    if name != "leduc_poker":
        return (1, 2, 10, 100)
    return (1, 2, 5, 10)


@pytest.mark.parametrize("algorithm", sorted(SOLVERS))
@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_average_and_current_policies_match_openspiel(name: str, algorithm: str) -> None:
    game_id = f"openspiel:{name}"
    pyspiel_game = game(game_id)
    assert isinstance(pyspiel_game, OpenSpielGame)
    reference = SOLVERS[algorithm](pyspiel_game.pyspiel_game)
    ours = make_solver(tree(game_id), algorithm)
    compared = checkpoints(name)
    for iteration in range(1, compared[-1] + 1):
        reference.evaluate_and_update_policy()
        ours.iterate()
        if iteration in compared:
            expected = reference.average_policy().action_probability_array
            actual = ours.average_policy().openspiel_policy().action_probability_array
            np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-9)
    # Current policies divide by regret sums that can be tiny under RM+, which magnifies
    # summation-order rounding (seen: 2e-9 on Leduc CFR+ at iteration 100), hence 1e-8.
    expected_current = reference.current_policy().action_probability_array
    actual_current = ours.current_policy().openspiel_policy().action_probability_array
    np.testing.assert_allclose(actual_current, expected_current, rtol=0, atol=1e-8)


def test_dcfr_parameters_match_openspiel() -> None:
    """Non-default DCFR parameters reach the same update rule as OpenSpiel's."""
    game_id = "openspiel:kuhn_poker"
    pyspiel_game = game(game_id)
    assert isinstance(pyspiel_game, OpenSpielGame)
    reference = discounted_cfr.DCFRSolver(pyspiel_game.pyspiel_game, alpha=2.0, beta=-0.5, gamma=3.0)
    ours = make_solver(tree(game_id), "dcfr", replace(ALGORITHMS["dcfr"], alpha=2.0, beta=-0.5, gamma=3.0))
    for _ in range(50):
        reference.evaluate_and_update_policy()
        ours.iterate()
    expected = reference.average_policy().action_probability_array
    actual = ours.average_policy().openspiel_policy().action_probability_array
    np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-9)
    default = make_solver(tree(game_id), "dcfr")
    default.run(50)
    assert not np.allclose(default.average_strategy(), ours.average_strategy(), atol=1e-6)
