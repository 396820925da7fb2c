"""Games and states pickle, serialize the way OpenSpiel expects, and travel to worker processes."""

from __future__ import annotations

import multiprocessing
import pickle
from collections.abc import Iterator

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.policy import UniformRandomPolicy

from adapters import State
from adapters.pyspiel_game import REGISTERED_GAMES, BridgedGame, as_pyspiel_game
from tests.support import game

REGISTERED = sorted(REGISTERED_GAMES)
WALKABLE = [name for name in REGISTERED if name != "python_rlcard_limit_holdem"]
"""The registered games whose subtrees a test can walk (limit hold'em's has about 10^14 information states)."""


def random_path(root: State, seed: int) -> Iterator[State]:
    """The states of one random playout from ``root``, terminal included."""
    rng = np.random.default_rng(seed)
    state = root
    yield state
    while not state.is_terminal():
        state = state.child(int(rng.choice(state.legal_actions())))
        yield state


def pyspiel_path(root: pyspiel.State, seed: int) -> Iterator[pyspiel.State]:
    rng = np.random.default_rng(seed)
    state = root
    yield state
    while not state.is_terminal():
        state = state.child(int(rng.choice(state.legal_actions())))
        yield state


def describe(state: pyspiel.State) -> tuple[object, ...]:
    """What a bridged state answers; equal for a state and its copy."""
    player = state.current_player()
    keys = [state.information_state_string(p) for p in (0, 1)] if player >= 0 else []
    outcomes = state.chance_outcomes() if state.is_chance_node() else []
    return (str(state), state.history(), player, state.legal_actions(), outcomes, keys, state.returns())


@pytest.mark.parametrize("name", REGISTERED)
def test_openspiel_random_sim_test_with_serialization(name: str) -> None:
    pyspiel.random_sim_test(pyspiel.load_game(name), num_sims=5, serialize=True, verbose=False)


def test_adapter_games_and_states_pickle(game_id: str) -> None:
    original = game(game_id)
    copy = pickle.loads(pickle.dumps(original))
    assert (copy.game_id, copy.rules_fingerprint, copy.units) == (game_id, original.rules_fingerprint, original.units)
    for seed in range(3):
        for state in random_path(original.new_initial_state(), seed):
            restored = pickle.loads(pickle.dumps(state))
            assert str(restored) == str(state)
            assert restored.current_player() == state.current_player()
            assert restored.legal_actions() == state.legal_actions()
            if state.is_terminal():
                assert restored.returns() == state.returns()
            elif not state.is_chance_node():
                assert [restored.information_state_key(p) for p in (0, 1)] == [
                    state.information_state_key(p) for p in (0, 1)
                ]


def test_bridged_games_and_states_pickle(game_id: str) -> None:
    bridged = as_pyspiel_game(game(game_id))
    copy = pickle.loads(pickle.dumps(bridged))
    assert isinstance(copy, BridgedGame) and copy.adapter_game.game_id == game_id
    assert str(copy) == str(bridged)
    for seed in range(3):
        for state in pyspiel_path(bridged.new_initial_state(), seed):
            assert describe(pickle.loads(pickle.dumps(state))) == describe(state)


@pytest.mark.parametrize("name", REGISTERED)
def test_serialize_game_and_state_round_trip(name: str) -> None:
    for state in pyspiel_path(pyspiel.load_game(name).new_initial_state(), 7):
        text = pyspiel.serialize_game_and_state(state.get_game(), state)
        loaded_game, loaded_state = pyspiel.deserialize_game_and_state(text)
        assert str(loaded_game) == f"{name}()"
        assert describe(loaded_state) == describe(state)
        if not state.is_terminal():  # the restored state plays on
            action = state.legal_actions()[-1]
            assert describe(loaded_state.child(action)) == describe(state.child(action))


def _uniform_values(state: pyspiel.State) -> list[float]:
    game = state.get_game()
    uniform = UniformRandomPolicy(game)
    return [float(v) for v in expected_game_score.policy_value(state, [uniform, uniform])]


@pytest.mark.parametrize("name", WALKABLE)
def test_bridged_states_travel_to_worker_processes(name: str) -> None:
    """A spawned worker (nothing inherited) unpickles the states and computes what this process does."""
    root = pyspiel.load_game(name).new_initial_state()
    states = [root.child(a).child(b) for a in root.legal_actions()[:2] for b in root.child(a).legal_actions()[:2]]
    expected = [_uniform_values(state) for state in states]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        np.testing.assert_allclose(pool.map(_uniform_values, states), expected, rtol=0, atol=1e-12)
