"""One conformance suite that every adapter passes (in the spirit of PettingZoo's api_test)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest

import adapters
from adapters import CHANCE, TERMINAL, Game, IllegalActionError, InputError, State
from adapters.errors import UnsupportedGameError
from cfr_agents.tree import compile_tree
from tests.support import game


def all_states(root: State) -> Iterator[State]:
    stack = [root]
    while stack:
        state = stack.pop()
        yield state
        stack.extend(state.child(a) for a in state.legal_actions())


def test_chance_probabilities_are_exact_distributions(game_id: str) -> None:
    for state in all_states(game(game_id).new_initial_state()):
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            assert all(p > 0 for _, p in outcomes)
            assert math.isclose(sum(p for _, p in outcomes), 1.0, abs_tol=1e-12)
            assert len({o for o, _ in outcomes}) == len(outcomes)


def test_returns_are_zero_sum_and_only_at_terminals(game_id: str) -> None:
    terminals = 0
    for state in all_states(game(game_id).new_initial_state()):
        if state.is_terminal():
            terminals += 1
            assert sum(state.returns()) == pytest.approx(0.0, abs=1e-12)
            assert state.legal_actions() == ()
        else:
            with pytest.raises(InputError):
                state.returns()
    assert terminals > 0


def test_players_and_actions_are_well_formed(game_id: str) -> None:
    g = game(game_id)
    for state in all_states(g.new_initial_state()):
        player = state.current_player()
        assert player in (0, 1, CHANCE, TERMINAL)
        if player in (0, 1):
            actions = state.legal_actions()
            assert actions and list(actions) == sorted(set(actions))
            assert all(0 <= a < g.num_distinct_actions for a in actions)
            assert isinstance(state.information_state_key(player), str)
            with pytest.raises(InputError):
                state.chance_outcomes()


def test_keys_are_perfect_recall(game_id: str) -> None:
    """The compiler refuses keys shared by states with different own histories or actions."""
    tree = compile_tree(game(game_id))
    assert tree.num_infosets > 0


def test_children_leave_the_parent_unchanged(game_id: str) -> None:
    rng = np.random.default_rng(3)
    state = game(game_id).new_initial_state()
    while not state.is_terminal():
        before = (state.current_player(), state.legal_actions(), str(state))
        keys = [state.information_state_key(p) for p in (0, 1)] if not state.is_chance_node() else []
        for action in state.legal_actions():
            state.child(action)
        after_keys = [state.information_state_key(p) for p in (0, 1)] if not state.is_chance_node() else []
        assert (state.current_player(), state.legal_actions(), str(state)) == before
        assert after_keys == keys
        state = state.child(int(rng.choice(state.legal_actions())))


def test_random_play_to_the_end_never_fails(game_id: str) -> None:
    rng = np.random.default_rng(0)
    g = game(game_id)
    for _ in range(300):
        state = g.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                state = state.child(int(rng.choice(outcomes, p=probabilities)))
            else:
                state = state.child(int(rng.choice(state.legal_actions())))
        assert len(state.returns()) == 2


def test_illegal_actions_are_refused(game_id: str) -> None:
    g = game(game_id)
    state = g.new_initial_state()
    with pytest.raises(IllegalActionError, match="not legal"):
        state.child(999)
    while state.is_chance_node():
        state = state.child(state.legal_actions()[0])
    illegal = next(a for a in range(-1, g.num_distinct_actions + 1) if a not in state.legal_actions())
    with pytest.raises(IllegalActionError, match=f"action {illegal} is not legal"):
        state.child(illegal)


def test_rules_fingerprint_is_stable(game_id: str) -> None:
    assert adapters.load_game(game_id).rules_fingerprint == game(game_id).rules_fingerprint
    assert game(game_id).rules_fingerprint.startswith("sha256:")


class _ForgetfulGame(Game):
    """Kuhn poker whose player-0 key forgets player 0's own first action: not perfect recall."""

    game_id = "test:forgetful"
    units = "chips"
    num_distinct_actions = 2

    def __init__(self) -> None:
        self._inner = game("openspiel:kuhn_poker")

    def new_initial_state(self) -> State:
        return _ForgetfulState(self._inner.new_initial_state())

    def action_name(self, action: int) -> str:
        return self._inner.action_name(action)

    def rules(self) -> dict[str, object]:
        return {"forgetful": True}


class _ForgetfulState(State):
    def __init__(self, inner: State) -> None:
        self._inner = inner

    def _player(self) -> int:
        return self._inner.current_player()

    def _outcomes(self) -> tuple[tuple[int, float], ...]:
        return self._inner.chance_outcomes()

    def _actions(self) -> tuple[int, ...]:
        return self._inner.legal_actions()

    def _apply(self, action: int) -> State:
        return _ForgetfulState(self._inner.child(action))

    def _payoffs(self) -> tuple[float, float]:
        return self._inner.returns()

    def _key(self, player: int) -> str:
        key = self._inner.information_state_key(player)
        return key[0] + key[2:] if player == 0 and len(key) == 3 else key  # "0pb" -> "0b"


def test_the_perfect_recall_check_can_fail() -> None:
    with pytest.raises(UnsupportedGameError, match=r"not perfect-recall|different players or legal"):
        compile_tree(_ForgetfulGame())


@pytest.mark.parametrize(
    ("game_id", "message"),
    [
        ("openspiel:kuhn_poker(players=3)", "3 players"),
        ("openspiel:matrix_rps", "SIMULTANEOUS"),
        ("openspiel:no_such_game", "unknown OpenSpiel game"),
        ("openspiel:leduc_poker(bogus=1)", "Unknown parameter"),
        ("openspiel:nfg_game", "OpenSpiel cannot load 'nfg_game'"),
        ("rlcard:no-limit-holdem", "unsupported RLCard game"),
        ("chess", "must look like"),
        ("gym:kuhn", "unknown toolkit"),
    ],
)
def test_unsupported_games_are_refused_with_one_line(game_id: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as error:
        adapters.load_game(game_id)
    assert "\n" not in str(error.value)


def test_openspiel_games_take_parameters() -> None:
    kuhn = compile_tree(adapters.load_game("openspiel:kuhn_poker()"))
    assert kuhn.num_infosets == 12
    flipped = adapters.load_game("openspiel:leduc_poker(suit_isomorphism=True)")
    assert flipped.rules_fingerprint != game("openspiel:leduc_poker").rules_fingerprint
