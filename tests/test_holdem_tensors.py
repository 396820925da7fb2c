"""OpenSpiel's information-state tensor of limit hold'em built for a whole public node at once, without
``pyspiel`` states, against ``state.information_state_tensor(player)`` on states sampled by random play."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import NamedTuple

import numpy as np
import pyspiel
import pytest

from adapters import load_game
from adapters.holdem import hand_index_table, parse_cards, private_hands
from adapters.holdem.betting import BettingTree, betting_tree
from adapters.holdem.tensors import HoldemTensors, holdem_tensors
from adapters.inputs import InputError, UnsupportedGameError
from adapters.openspiel import PREFIX

GAMES = ("fhp", "hulh", "holdem-6")
_FIELDS = re.compile(r"\[Private: ([^\]]*)\]\[Public: ([^\]]*)\]\[Sequences: ([^\]]*)\]")


class Seen(NamedTuple):
    """One player's information state at a sampled decision state."""

    player: int
    hole: list[int]
    board: list[int]
    sequence: str
    tensor: np.ndarray
    history: list[int]


@cache
def loaded(name: str) -> tuple[pyspiel.Game, HoldemTensors, BettingTree]:
    game = pyspiel.load_game(load_game(name).game_id.removeprefix(PREFIX))
    return game, holdem_tensors(game), betting_tree(game)


def sampled(game: pyspiel.Game, episodes: int, seed: int) -> Iterator[Seen]:
    """Both players' information states at every decision of ``episodes`` games of uniform random play."""
    rng = np.random.default_rng(seed)
    num_suits = int(game.get_parameters()["numSuits"])
    for _ in range(episodes):
        state = game.new_initial_state()
        while not state.is_terminal():
            if not state.is_chance_node():
                for player in (0, 1):
                    hole, board, sequence = _FIELDS.findall(state.information_state_string(player))[0]
                    tensor = np.asarray(state.information_state_tensor(player), dtype=np.float32)
                    cards = parse_cards(hole, num_suits), parse_cards(board, num_suits)
                    yield Seen(player, *cards, sequence, tensor, list(state.history()))
            state.apply_action(int(rng.choice(state.legal_actions())))


@pytest.mark.parametrize("name", GAMES)
def test_each_sampled_state_s_tensor_is_openspiel_s(name: str) -> None:
    """Over 1,500 information states: the node's template with the hand's cards, and the same built from the
    betting tree's per-node templates plus the board, equal OpenSpiel's tensor exactly."""
    game, tensors, betting = loaded(name)
    node_of = {sequence: node for node, sequence in enumerate(betting.sequence)}
    templates = tensors.betting_templates(betting)
    hands = private_hands(tensors.rules.num_ranks, tensors.rules.num_suits, tensors.rules.num_hole_cards)
    row_of = hand_index_table(hands, tensors.num_cards)
    count = 0
    for seen in sampled(game, 500, seed=1):
        assert seen.tensor.shape == (tensors.size,)
        node_rows = tensors.of_node(seen.player, seen.sequence, seen.board, hands)
        np.testing.assert_array_equal(node_rows[row_of[tuple(sorted(seen.hole))]], seen.tensor)
        if seen.player == int(betting.player[node_of[seen.sequence]]):  # the betting tree's templates: the actor's
            from_tree = templates[node_of[seen.sequence]] + tensors.board_part(seen.board)
            np.testing.assert_array_equal(tensors.of_hands(from_tree, np.array([sorted(seen.hole)]))[0], seen.tensor)
            count += 1
    assert count >= 1500, count


@pytest.mark.parametrize("name", GAMES)
def test_the_cards_read_back_from_openspiel_s_tensors_are_the_state_s(name: str) -> None:
    """:meth:`HoldemTensors.cards_of` on OpenSpiel's tensors of sampled states: the player's hole cards and the
    board dealt so far (in ascending order), and how many board cards are dealt."""
    game, tensors, _ = loaded(name)
    seen = list(sampled(game, 200, seed=3))
    holes, boards, count = tensors.cards_of(np.stack([one.tensor for one in seen]))
    assert holes.tolist() == [sorted(one.hole) for one in seen]
    assert count.tolist() == [len(one.board) for one in seen]
    assert [row[:n] for row, n in zip(boards.tolist(), count.tolist(), strict=True)] == [
        sorted(one.board) for one in seen
    ]
    assert {len(one.board) for one in seen} == {0, *np.cumsum(tensors.rules.board_cards[1:]).tolist()}


@pytest.mark.parametrize("name", GAMES)
def test_every_hand_at_a_public_node_gets_openspiel_s_tensor(name: str) -> None:
    """At a few sampled public nodes, every hand the board leaves: the state with that hand's hole cards (the
    other player holds the lowest cards left) has the row of :meth:`HoldemTensors.of_node` as its tensor."""
    game, tensors, _ = loaded(name)
    rules = tensors.rules
    hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    k = rules.num_hole_cards
    checked = 0
    for seen in list(sampled(game, 40, seed=2))[::37][:4]:
        rows = tensors.of_node(seen.player, seen.sequence, seen.board, hands)
        after_deal = seen.history[2 * k :]
        for h, hand in enumerate(hands.tolist()):
            if set(hand) & set(seen.board):
                continue
            left = [c for c in range(tensors.num_cards) if c not in hand and c not in seen.board][:k]
            seated = (hand, left) if seen.player == 0 else (left, hand)
            state = game.new_initial_state()
            for action in (*seated[0], *seated[1], *after_deal):
                state.apply_action(action)
            np.testing.assert_array_equal(rows[h], np.asarray(state.information_state_tensor(seen.player), np.float32))
            checked += 1
    assert checked >= 4 * (len(hands) // 2), checked


def test_a_game_without_this_layout_and_a_node_that_cannot_be_are_refused() -> None:
    with pytest.raises(UnsupportedGameError, match="not a two-player limit universal_poker game"):
        holdem_tensors(pyspiel.load_game("kuhn_poker"))
    _, tensors, _ = loaded("holdem-6")
    with pytest.raises(InputError, match="comes with 1 board cards, not 0"):
        tensors.template(0, "cc|", [])
    with pytest.raises(InputError, match="no information state of player 2"):
        tensors.template(2, "", [])
    with pytest.raises(InputError, match="not distinct cards"):
        tensors.template(0, "cc|", [6])
