"""Long sampled runs, excluded from ``make test`` (``make test-slow`` runs them, under a minute).

Every scheme, with either chance draws, drives NashConv on both Leducs well below what the default
suite's short budgets ask (uniform play: 4.75 chips on OpenSpiel Leduc). The bounds are documented in
the README's Monte Carlo CFR section; each run is seeded, so a failure reproduces.
"""

from __future__ import annotations

import numpy as np
import pytest

from cfr_agents import make_solver
from cfr_agents.solvers.sampling import CHANCE_DRAWS
from eval import exploitability_of_strategy
from tests.support import tree

pytestmark = pytest.mark.slow

BUDGETS = {
    # scheme: (iterations, NashConv bound on each Leduc)
    "external": (3_000_000, 0.04),
    "chance": (1_000_000, 0.05),
    "pure": (3_000_000, 0.04),
    "outcome": (10_000_000, 0.25),
}


@pytest.mark.parametrize("chance_draws", CHANCE_DRAWS)
@pytest.mark.parametrize("sampling", sorted(BUDGETS))
@pytest.mark.parametrize("game_id", ["openspiel:leduc_poker", "rlcard:leduc-holdem"])
def test_long_sampled_runs_converge(game_id: str, sampling: str, chance_draws: str) -> None:
    iterations, bound = BUDGETS[sampling]
    t = tree(game_id)
    solver = make_solver(t, "cfr", sampling=sampling, rng=np.random.default_rng(7), chance_draws=chance_draws)
    solver.run(iterations)
    assert exploitability_of_strategy(t, solver.average_strategy()).nash_conv < bound
