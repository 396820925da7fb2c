"""Property: random legal play through every adapter and its bridged OpenSpiel game agrees with the engine.

OpenSpiel games are played in lockstep with OpenSpiel's own state; RLCard games are dealt and played in
RLCard's real env and replayed in the adapter. The bridged game of each adapter follows along, and is
pickled and restored at a drawn step (play continues on the copy).
"""

from __future__ import annotations

import pickle

import pyspiel
import pytest
import rlcard
from hypothesis import given
from hypothesis import strategies as st

import adapters
from adapters import InputError, State
from adapters.openspiel import OpenSpielGame
from adapters.pyspiel_game import as_pyspiel_game
from adapters.rlcard import RLCardGame
from tests.support import card_name, game, rlcard_deal

OPENSPIEL_GAMES = ["openspiel:kuhn_poker", "openspiel:leduc_poker"]
RLCARD_GAMES = ["rlcard:kuhn-poker", "rlcard:leduc-holdem"]


class Lockstep:
    """An adapter state and its bridged pyspiel state, moved together and compared at every step."""

    def __init__(self, adapter: State, bridged: pyspiel.State, pickle_at: int) -> None:
        self.adapter, self.bridged, self.pickle_at, self.steps = adapter, bridged, pickle_at, 0

    def apply(self, action: int) -> None:
        self.adapter = self.adapter.child(action)
        self.bridged.apply_action(action)
        self.steps += 1
        if self.steps == self.pickle_at:
            self.bridged = pickle.loads(pickle.dumps(self.bridged))
        self.compare()

    def compare(self) -> None:
        adapter, bridged = self.adapter, self.bridged
        player = adapter.current_player()
        assert bridged.current_player() == player
        assert bridged.legal_actions() == list(adapter.legal_actions())
        if adapter.is_terminal():
            assert bridged.returns() == list(adapter.returns())
        elif adapter.is_chance_node():
            assert bridged.chance_outcomes() == list(adapter.chance_outcomes())
        else:
            for p in (0, 1):
                assert bridged.information_state_string(p) == adapter.information_state_key(p)


@pytest.mark.parametrize("game_id", OPENSPIEL_GAMES)
@given(data=st.data())
def test_random_play_follows_openspiel(game_id: str, data: st.DataObject) -> None:
    adapter_game = game(game_id)
    assert isinstance(adapter_game, OpenSpielGame)
    native = adapter_game.pyspiel_game.new_initial_state()
    walk = Lockstep(
        adapter_game.new_initial_state(),
        as_pyspiel_game(adapter_game).new_initial_state(),
        data.draw(st.integers(0, 12), label="pickle at step"),
    )
    walk.compare()
    while not native.is_terminal():
        action = data.draw(st.sampled_from(native.legal_actions()))
        native.apply_action(action)
        walk.apply(action)
        player = native.current_player()
        assert walk.adapter.current_player() == player
        assert list(walk.adapter.legal_actions()) == native.legal_actions()
        if player >= 0:
            assert walk.adapter.information_state_key(player) == native.information_state_string(player)
    assert list(walk.adapter.returns()) == native.returns()


@pytest.mark.parametrize("env_id", [g.removeprefix("rlcard:") for g in RLCARD_GAMES])
@given(data=st.data(), seed=st.integers(0, 2**31 - 1))
def test_random_play_follows_rlcard(env_id: str, data: st.DataObject, seed: int) -> None:
    adapter_game = game(f"rlcard:{env_id}")
    assert isinstance(adapter_game, RLCardGame)
    env = rlcard.make(env_id, config={"seed": seed})
    env_state, player = env.reset()
    walk = Lockstep(
        adapter_game.new_initial_state(),
        as_pyspiel_game(adapter_game).new_initial_state(),
        data.draw(st.integers(0, 12), label="pickle at step"),
    )
    for outcome in rlcard_deal(env.game, adapter_game):
        walk.apply(outcome)

    def deal_public_card() -> None:
        if walk.adapter.is_chance_node():  # the env dealt the public card on the last action
            walk.apply(adapter_game.deck_index[card_name(env.game.public_card)])

    while not env.is_over():
        deal_public_card()
        assert walk.adapter.current_player() == player
        assert walk.adapter.information_state_key(player) == adapter_game.key_from_env_state(env_state)
        assert walk.adapter.legal_actions() == tuple(sorted(env_state["legal_actions"]))
        action = data.draw(st.sampled_from(sorted(env_state["legal_actions"])))
        env_state, player = env.step(action)
        walk.apply(action)
    deal_public_card()
    assert walk.adapter.is_terminal()
    assert walk.adapter.returns() == tuple(float(p) for p in env.get_payoffs())


NAMES = sorted(pyspiel.registered_names())
game_strings = st.one_of(
    st.sampled_from(NAMES),
    st.tuples(st.sampled_from(NAMES), st.text("()=,_.-+ 0123456789abcdeflmnoprstuyTF", max_size=16)).map("".join),
    st.text(max_size=12),
)


@given(toolkit=st.sampled_from(["openspiel:", "rlcard:", ""]), name=game_strings)
def test_any_game_id_loads_or_is_refused_with_one_line(toolkit: str, name: str) -> None:
    """A game id is user input: it loads, or it is refused with one InputError line (never another error)."""
    try:
        adapters.load_game(toolkit + name)
    except InputError as error:
        assert "\n" not in str(error)
