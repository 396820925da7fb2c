"""Exact head-to-head values on the tree agree with sampled matches in RLCard's real environment.

The exact value is computed on our compiled tree; the match is played by RLCard's own engine
and RLCard's own ``RandomAgent``. Their agreement within the match's error shows that the
adapter is faithful to RLCard's engine, not just consistent with itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from rlcard.agents import RandomAgent

from adapters.errors import InputError
from cfr_agents import Policy, make_solver
from eval.head_to_head import exact_head_to_head
from eval.match import play_rlcard_match
from tests.support import game, tree


def trained(game_id: str, iterations: int) -> Policy:
    solver = make_solver(tree(game_id), "dcfr")
    solver.run(iterations)
    return solver.average_policy()


@pytest.mark.parametrize(("game_id", "pairs"), [("rlcard:leduc-holdem", 10_000), ("rlcard:kuhn-poker", 10_000)])
def test_sampled_match_against_rlcard_random_agent_agrees_with_the_exact_value(game_id: str, pairs: int) -> None:
    t = tree(game_id)
    num_actions = game(game_id).num_distinct_actions
    policy = trained(game_id, 300)
    exact = exact_head_to_head(t, policy.strategy_on(t), t.uniform_strategy())  # RandomAgent is uniform
    np.random.seed(20261123)  # RLCard's RandomAgent draws from NumPy's global generator
    match = play_rlcard_match(
        game_id, policy.rlcard_agent(seed=1), RandomAgent(num_actions=num_actions), pairs, np.random.default_rng(2)
    )
    assert match.hands == 2 * pairs and match.units == t.units
    assert 0 < match.standard_error < 0.05
    assert abs(match.mean - exact.value) <= 4 * match.standard_error, (match, exact)
    assert match.ci95[0] < match.mean < match.ci95[1]


def test_a_strategy_against_itself_is_worth_nothing_over_both_seats() -> None:
    t = tree("openspiel:kuhn_poker")
    policy = trained("openspiel:kuhn_poker", 2000).strategy_on(t)
    result = exact_head_to_head(t, policy, policy)
    assert result.value == pytest.approx(0.0, abs=1e-12)
    assert result.seat_values[0] == pytest.approx(-1 / 18, abs=1e-3)  # Kuhn's value for the first player


def test_exact_value_separates_the_seats() -> None:
    """Against a player who always bets, checking in seat 0 and always calling in seat 1 differ."""
    t = tree("openspiel:kuhn_poker")
    always_bet = np.zeros(t.action_mask.shape)
    always_bet[:, 1] = 1.0
    uniform = t.uniform_strategy()
    result = exact_head_to_head(t, uniform, always_bet)
    assert result.value == pytest.approx(np.mean(result.seat_values))
    assert result.seat_values[0] != pytest.approx(result.seat_values[1])


def test_same_seeds_same_match() -> None:
    policy = trained("rlcard:leduc-holdem", 50)

    def play() -> float:
        return play_rlcard_match(
            "rlcard:leduc-holdem", policy.rlcard_agent(seed=3), policy.rlcard_agent(seed=4), 200,
            np.random.default_rng(5),
        ).mean  # fmt: skip

    assert play() == play()


def test_matches_need_an_rlcard_game_and_pairs() -> None:
    policy = trained("rlcard:kuhn-poker", 5)
    agent = policy.rlcard_agent(seed=0)
    with pytest.raises(InputError, match="not an rlcard: game"):
        play_rlcard_match("openspiel:kuhn_poker", agent, agent, 10, np.random.default_rng(0))
    with pytest.raises(InputError, match="at least 2 pairs"):
        play_rlcard_match("rlcard:kuhn-poker", agent, agent, 1, np.random.default_rng(0))
