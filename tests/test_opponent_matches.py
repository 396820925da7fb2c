"""Each named opponent's exact value against random agrees with a duplicate match played in the real
environment -- RLCard's env for ``rlcard:`` games, ``pyspiel`` states for ``openspiel:`` games --
within 4 standard errors. The opponents play as themselves (RLCard's own agents in RLCard's env),
so the check covers the state dicts, the probabilities read from them, and the tree."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from open_spiel.python.policy import UniformRandomPolicy
from rlcard.agents import RandomAgent

from cfr_agents.policy import Policy
from eval import best_response_policy, exact_head_to_head, play_openspiel_match, play_rlcard_match, strategy_of
from eval.opponents import load_opponent, playable_rlcard_agent
from tests.support import tree

RLCARD_OPPONENTS = ("random", "rlcard-rule-v1", "rlcard-rule-v2", "rlcard-pretrained-cfr", "rlcard-cfr",
                    "rlcard-nfsp", "openspiel-mccfr-os:2000")  # fmt: skip
BRIDGED_SLOW = ("openspiel-cfr:2", "openspiel-cfr+:2", "openspiel-mccfr-es:500")
"""OpenSpiel's full-tree solvers on bridged RLCard Leduc take seconds per iteration: slow suite."""
OPENSPIEL_OPPONENTS = ("openspiel-nfsp", "openspiel-cfr+:30", "openspiel-mccfr-es:3000")
PAIRS = 1500


def agree(exact: float, mean: float, standard_error: float) -> None:
    assert standard_error > 0
    assert abs(mean - exact) <= 4 * standard_error, (exact, mean, standard_error)


@pytest.mark.parametrize("name", RLCARD_OPPONENTS)
def test_rlcard_opponent_against_random_in_rlcards_env(name: str) -> None:
    game_id = "rlcard:leduc-holdem"
    compiled = tree(game_id)
    opponent = load_opponent(name, game_id)
    exact = exact_head_to_head(compiled, strategy_of(opponent.agent, compiled), compiled.uniform_strategy())
    np.random.seed(11)  # RLCard's RandomAgent, rule-free agents and NFSP sample from NumPy's global generator
    agent = playable_rlcard_agent(opponent, compiled, np.random.default_rng(12))
    match = play_rlcard_match(game_id, agent, RandomAgent(num_actions=4), PAIRS, np.random.default_rng(13))
    agree(exact.value, match.mean, match.standard_error)


@pytest.mark.parametrize("name", OPENSPIEL_OPPONENTS)
def test_openspiel_opponent_against_random_on_pyspiel_states(name: str) -> None:
    game_id = "openspiel:leduc_poker"
    compiled = tree(game_id)
    opponent = load_opponent(name, game_id)
    exact = exact_head_to_head(compiled, strategy_of(opponent.agent, compiled), compiled.uniform_strategy())
    uniform = UniformRandomPolicy(pyspiel.load_game("leduc_poker"))
    rngs = (np.random.default_rng(21), np.random.default_rng(22))
    with np.errstate(all="ignore"):
        match = play_openspiel_match(game_id, opponent.agent, uniform, PAIRS, np.random.default_rng(23), rngs)  # type: ignore[arg-type]
    agree(exact.value, match.mean, match.standard_error)


def test_best_response_plays_in_rlcards_env_for_its_exact_value() -> None:
    game_id = "rlcard:leduc-holdem"
    compiled = tree(game_id)
    rule = load_opponent("rlcard-rule-v1", game_id).agent
    response: Policy = best_response_policy(compiled, strategy_of(rule, compiled), against="rlcard-rule-v1")
    exact = exact_head_to_head(compiled, response.strategy_on(compiled), strategy_of(rule, compiled))
    match = play_rlcard_match(game_id, response.rlcard_agent(seed=31), rule, PAIRS, np.random.default_rng(32))  # type: ignore[arg-type]
    agree(exact.value, match.mean, match.standard_error)


@pytest.mark.slow
@pytest.mark.parametrize("name", BRIDGED_SLOW)
def test_bridged_openspiel_solver_against_random_in_rlcards_env(name: str) -> None:
    test_rlcard_opponent_against_random_in_rlcards_env(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", RLCARD_OPPONENTS)
def test_rlcard_opponent_against_pretrained_in_long_matches(name: str) -> None:
    game_id = "rlcard:leduc-holdem"
    compiled = tree(game_id)
    opponent = load_opponent(name, game_id)
    pretrained = load_opponent("rlcard-pretrained-cfr", game_id).agent
    exact = exact_head_to_head(compiled, strategy_of(opponent.agent, compiled), strategy_of(pretrained, compiled))
    np.random.seed(41)
    agent = playable_rlcard_agent(opponent, compiled, np.random.default_rng(42))
    match = play_rlcard_match(game_id, agent, pretrained, 20_000, np.random.default_rng(43))  # type: ignore[arg-type]
    agree(exact.value, match.mean, match.standard_error)
