"""Suit-canonical images: the public tree's rule (the smallest sorted image of the board, then the hand's smallest
image under the canonical board's stabilizer), the same for every state of an orbit, and refused for games that deal
their board in more than one round."""

from __future__ import annotations

import numpy as np
import pytest

from adapters.holdem import canonical_board, card_permutation, suit_permutations
from adapters.holdem.cards import private_hands
from adapters.holdem.engine import holdem_engine
from adapters.holdem.suits import stabilizer
from adapters.inputs import UnsupportedGameError
from cfr_agents.abstraction.suit_images import suit_images
from cfr_agents.solvers.neural.holdem import engine_tensors


def deals(game_id: str, count: int, seed: int = 0) -> np.ndarray:
    rules = holdem_engine(game_id).rules
    cards = 2 + sum(rules.board_cards)
    return np.argsort(np.random.default_rng(seed).random((count, rules.deck_size)), axis=1)[:, :cards]


@pytest.mark.parametrize("game_id", ["holdem-8", "fhp"])
def test_each_image_is_the_public_trees_canonical_board_and_smallest_hand(game_id: str) -> None:
    rules = holdem_engine(game_id).rules
    images = suit_images(game_id)
    hands = private_hands(rules.num_ranks, rules.num_suits, 2)
    row = {tuple(hand): j for j, hand in enumerate(hands.tolist())}

    def smallest(hole: list[int], perms: np.ndarray) -> list[int]:
        images = (card_permutation(p, rules.num_ranks, rules.num_suits)[hole] for p in perms)
        found: list[int] = hands[min(row[tuple(sorted(image.tolist()))] for image in images)].tolist()
        return found

    dealt = deals(game_id, 300)
    preflop, _ = images.images(dealt[:, :2], None)
    held, boards = images.images(dealt[:, :2], dealt[:, 2:])
    assert boards is not None
    for k in range(dealt.shape[0]):
        assert preflop[k].tolist() == smallest(dealt[k, :2].tolist(), suit_permutations(rules.num_suits))
        board, perm = canonical_board(dealt[k, 2:], rules.num_ranks, rules.num_suits)
        mapped = card_permutation(perm, rules.num_ranks, rules.num_suits)[dealt[k, :2]].tolist()
        assert boards[k].tolist() == board.tolist()
        assert held[k].tolist() == smallest(mapped, stabilizer([board.tolist()], rules.num_ranks, rules.num_suits))


@pytest.mark.parametrize("game_id", ["holdem-8", "fhp"])
def test_every_state_of_an_orbit_has_one_image(game_id: str) -> None:
    """Each deal moved by every suit permutation (the identity among them) has the deal's own image."""
    rules = holdem_engine(game_id).rules
    images = suit_images(game_id)
    dealt = deals(game_id, 500, seed=1)
    first = images.images(dealt[:, :2], dealt[:, 2:])
    for perm in suit_permutations(rules.num_suits):
        moved = card_permutation(perm, rules.num_ranks, rules.num_suits)[dealt]
        again = images.images(moved[:, :2], moved[:, 2:])
        for mine, theirs in zip(first, again, strict=True):
            np.testing.assert_array_equal(mine, theirs)
        np.testing.assert_array_equal(images.images(moved[:, :2], None)[0], images.images(dealt[:, :2], None)[0])


def test_the_tensors_of_a_state_become_those_of_its_image() -> None:
    images, tensors = suit_images("holdem-8"), engine_tensors(holdem_engine("holdem-8"))
    dealt = deals("holdem-8", 40, seed=2)
    rows = np.concatenate(
        [
            np.stack([tensors.of_node(0, "cr", [], dealt[k : k + 1, :2])[0] for k in range(40)]),
            np.stack([tensors.of_node(1, "cc|r", list(dealt[k, 2:]), dealt[k : k + 1, :2])[0] for k in range(40)]),
        ]
    ).astype(np.float64)
    read = images.of_tensors(tensors, rows)
    held, boards = images.images(dealt[:, :2], dealt[:, 2:])
    preflop = images.images(dealt[:, :2], None)[0]
    assert boards is not None
    for k in range(40):
        expected = tensors.of_node(0, "cr", [], preflop[k : k + 1])[0]
        np.testing.assert_array_equal(read[k], expected)
        expected = tensors.of_node(1, "cc|r", list(boards[k]), held[k : k + 1])[0]
        np.testing.assert_array_equal(read[40 + k], expected)


def test_a_game_dealing_its_board_in_several_rounds_is_refused() -> None:
    with pytest.raises(UnsupportedGameError, match="dealt in one round, not 3 rounds"):
        suit_images("hulh")
