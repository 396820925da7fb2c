"""Every full-tree algorithm converges on Kuhn and Leduc, towards the published game values.

For any strategy profile, player 0's value lies within NashConv of the game value
(:math:`v^* - e_0 \\le u_0(\\sigma) \\le v^* + e_1`), so a converging average strategy
must approach the published value as its NashConv falls.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from cfr_agents import ALGORITHMS, make_solver
from eval import exploitability_of_strategy
from tests.support import tree

GAME_VALUES = {
    "openspiel:kuhn_poker": -1 / 18,  # Kuhn (1950)
    "rlcard:kuhn-poker": -1 / 18,  # the same rules as an RLCard env
    "openspiel:leduc_poker": -0.085606424078,  # OpenSpiel's sequence_form_lp_test
}
ITERATIONS = 2000
NASH_CONV_BOUND = {
    # CFR and Linear CFR converge at the O(1/sqrt(T)) rate; the others are far faster on poker.
    "openspiel:kuhn_poker": dict.fromkeys(ALGORITHMS, 2e-3),
    "rlcard:kuhn-poker": dict.fromkeys(ALGORITHMS, 2e-3),
    "openspiel:leduc_poker": {
        **dict.fromkeys(("cfr", "lcfr"), 0.03),
        **dict.fromkeys(("cfr+", "dcfr", "pcfr+", "dcfr+", "pdcfr+"), 1e-3),
        # HS-PCFR+ weights iteration t by about t^27 (gamma 30 to 25): its average is that of its last few
        # percent of iterates, and PCFR+'s iterates on Leduc still move (the current strategy's NashConv is
        # 0.06 at 2,000). 1.8e-3 here; on Kuhn, where they settle, it is exact.
        "hs-pcfr+": 3e-3,
    },
}


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
@pytest.mark.parametrize("game_id", sorted(GAME_VALUES))
def test_converges_towards_the_game_value(game_id: str, algorithm: str) -> None:
    t = tree(game_id)
    solver = make_solver(t, algorithm)
    solver.run(ITERATIONS // 10)
    early = exploitability_of_strategy(t, solver.average_strategy())
    solver.run(ITERATIONS - solver.iteration)
    late = exploitability_of_strategy(t, solver.average_strategy())
    assert solver.iteration == ITERATIONS
    # Ten times the iterations cut NashConv at least by sqrt(10), CFR's worst-case rate, unless it is
    # already at rounding level (HS-PCFR+ on Kuhn: 0 after 200 iterations).
    assert late.nash_conv < max(early.nash_conv / 10**0.5, 1e-12)
    assert late.nash_conv < NASH_CONV_BOUND[game_id][algorithm]
    assert abs(late.policy_values[0] - GAME_VALUES[game_id]) <= late.nash_conv
    assert late.policy_values[0] + late.policy_values[1] == pytest.approx(0.0, abs=1e-12)


def test_prediction_changes_the_iterates() -> None:
    """Predictive CFR+ is CFR+'s regret update with a prediction, not CFR+ under another name."""
    t = tree("openspiel:leduc_poker")
    predictive = make_solver(t, "pcfr+")
    plain = make_solver(t, "pcfr+", replace(ALGORITHMS["pcfr+"], predictive=False))
    predictive.run(20)
    plain.run(20)
    assert abs(predictive.current_strategy() - plain.current_strategy()).max() > 1e-3
