"""The RLCard face: the Kuhn env, the adapter's faithfulness to RLCard's engine, the agent in tournaments."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import rlcard
from rlcard.agents import RandomAgent
from rlcard.utils import tournament

import adapters
from adapters import State
from adapters.inputs import InputError
from adapters.rlcard import RLCardGame
from cfr_agents import Policy, make_solver
from tests.support import assert_within_standard_errors, card_name, game, rlcard_deal, tree


def test_kuhn_env_is_registered_with_rlcard() -> None:
    env = rlcard.make("kuhn-poker", config={"seed": 1})
    env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(2)])
    for _ in range(50):
        _, payoffs = env.run(is_training=False)
        assert payoffs[0] == -payoffs[1] and abs(payoffs[0]) in (1, 2)


@pytest.mark.parametrize("env_id", ["leduc-holdem", "kuhn-poker"])
def test_adapter_follows_the_real_environment(env_id: str) -> None:
    """Hands played in RLCard's own env are replayed in the adapter: same keys, actions, payoffs."""
    g = game(f"rlcard:{env_id}")
    assert isinstance(g, RLCardGame)
    env = rlcard.make(env_id, config={"seed": 11})
    rng = np.random.default_rng(5)
    for _ in range(300):
        env_state, player = env.reset()
        state: State = g.new_initial_state()
        for outcome in rlcard_deal(env.game, g):
            state = state.child(outcome)
        while not env.is_over():
            if state.is_chance_node():  # the env dealt the public card on the last action
                state = state.child(g.deck_index[card_name(env.game.public_card)])
            assert state.current_player() == player
            assert state.information_state_key(player) == g.key_from_env_state(env_state)
            assert state.legal_actions() == tuple(sorted(env_state["legal_actions"]))
            action = int(rng.choice(list(env_state["legal_actions"])))
            env_state, player = env.step(action)
            state = state.child(action)
        if state.is_chance_node():
            state = state.child(g.deck_index[card_name(env.game.public_card)])
        assert state.is_terminal()
        assert state.returns() == pytest.approx(tuple(env.get_payoffs()))


@pytest.fixture(scope="module")
def leduc_policy() -> Policy:
    solver = make_solver(tree("rlcard:leduc-holdem"), "dcfr")
    solver.run(200)
    return solver.average_policy()


def test_agent_plays_in_tournament_and_beats_random(leduc_policy: Policy) -> None:
    env = rlcard.make("leduc-holdem", config={"seed": 0})
    agent = leduc_policy.rlcard_agent(seed=1)
    assert agent.use_raw is False
    env.set_agents([agent, RandomAgent(num_actions=env.num_actions)])
    payoffs = tournament(env, 3000)
    assert payoffs[0] > 0.3  # a near-equilibrium agent wins well over 0.3 BB/hand from random


def test_eval_step_reports_probabilities_by_action_name(leduc_policy: Policy) -> None:
    env = rlcard.make("leduc-holdem", config={"seed": 3})
    agent = leduc_policy.rlcard_agent(seed=np.random.default_rng(2))
    state, _ = env.reset()
    action, info = agent.eval_step(state)
    assert action in state["legal_actions"]
    assert set(info["probs"]) == set(state["raw_legal_actions"])
    assert sum(info["probs"].values()) == pytest.approx(1.0)


def test_same_seed_same_actions(leduc_policy: Policy) -> None:
    """On one machine: the same seeds, the same actions."""

    def play(seed: int) -> list[Any]:
        env = rlcard.make("leduc-holdem", config={"seed": 4})
        env.set_agents([leduc_policy.rlcard_agent(seed=seed), leduc_policy.rlcard_agent(seed=seed + 1)])
        return [env.run(is_training=False)[1].tolist() for _ in range(30)]

    assert play(8) == play(8)


def test_policy_probabilities_are_what_the_rlcard_agent_plays(leduc_policy: Policy) -> None:
    """The agent's cached rows and inverse-CDF sampling keep the policy's probabilities."""
    agent = leduc_policy.rlcard_agent(seed=0)
    env = rlcard.make("leduc-holdem", config={"seed": 1})
    state, _ = env.reset()
    probabilities = agent.probabilities(state)
    draws = 20_000
    counts = dict.fromkeys(probabilities, 0)
    for _ in range(draws):
        counts[agent.step(state)] += 1
    p = np.array(list(probabilities.values()))
    frequencies = np.array([counts[action] for action in probabilities]) / draws
    assert_within_standard_errors(frequencies, p, np.sqrt(p * (1 - p) / draws), atol=1e-9)


def test_rlcard_agent_needs_an_rlcard_game() -> None:
    policy = Policy.uniform(tree("openspiel:kuhn_poker"))
    with pytest.raises(InputError, match="rlcard: game"):
        policy.rlcard_agent()
    assert adapters.load_game("rlcard:kuhn-poker").units == "chips"
