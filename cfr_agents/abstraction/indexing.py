r"""Compiled lookups from dealt cards to the rows of an abstraction's tables.

Boards. In round :math:`r` of a hold'em game the board holds :math:`m_r` cards (cumulative: 0, 3, 4, 5 in
heads-up limit hold'em), and only the board *set* matters (imperfect recall). A board set
:math:`c_1 < \dots < c_m` of a deck of :math:`n` cards has the colexicographic rank
:math:`\operatorname{colex}(B) = \sum_{i=1}^{m} \binom{c_i}{i}` among the :math:`\binom{n}{m}` sets of its size,
which needs no sorting: :math:`c` is the :math:`(1 + |\{c' \in B : c' < c\}|)`-th smallest card of :math:`B`
(:func:`colex_rank`). The empty board of the first round has rank 0.

Suit isomorphism. The :math:`S!` suit permutations :math:`\pi` (:func:`adapters.holdem.suits.suit_permutations`,
the identity first) act on cards, boards and hands and keep every hand's strength. Here the whole group acts on
each round's board sets (not the chain of stabilizers of the public tree: an imperfect-recall abstraction sees
the board set only), so the board sets of a round fall into orbits, each represented by its *canonical* board:
the lexicographically smallest sorted image :math:`\operatorname{sort}(\pi(B))` (the rule of
:mod:`adapters.holdem.suits`). For every board set :class:`BoardIndex` holds the id of its canonical board
(canonical boards numbered in lexicographic order) and the first permutation :math:`\pi` (in the group's order)
with :math:`\pi(B)` canonical. A hand :math:`h` on board :math:`B` is then looked up as the hand
:math:`\pi(h)` on the canonical board :math:`\pi(B)`: a row of :func:`~adapters.holdem.cards.private_hands`
(:attr:`CardIndex.hand_image`). For the 52-card deck the 22,100 flops, 270,725 turns and 2,598,960 rivers make
1,755, 16,432 and 134,459 canonical boards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from adapters.holdem.cards import hand_masks, private_hands
from adapters.holdem.rules import LimitRules
from adapters.holdem.suits import card_permutation, hand_permutation, suit_permutations

IntArray = NDArray[np.int64]
_CHUNK: Final = 4096
"""Boards a thread handles at once when the boards of a round are indexed."""


@dataclass(frozen=True)
class CardIndex:
    """The deck, its suit permutations and its private hands, as compiled code looks them up."""

    num_cards: int
    num_suits: int
    num_hole_cards: int
    perms: IntArray
    """``(P, num_suits)``: every suit permutation, the identity first
    (:func:`~adapters.holdem.suits.suit_permutations`)."""
    card_perm: IntArray
    """``(P, num_cards)``: the image of each card under each permutation."""
    hands: IntArray
    """``(H, num_hole_cards)``: the private hands, rows increasing, in lexicographic order
    (:func:`~adapters.holdem.cards.private_hands`)."""
    hand_image: IntArray
    """``(P, H)``: the row of the image of each hand under each permutation."""
    hand_mask: NDArray[np.uint64]
    """``(H,)``: the bit mask of each hand's cards."""
    hand_of_colex: IntArray
    r"""``(H,)``: the row of the hand of each colexicographic rank (:math:`\binom{n}{k}` ranks)."""
    binomial: IntArray
    r"""``(n + 1, K + 1)``: :math:`\binom{a}{b}` (0 for :math:`b > a`), :math:`K` the most cards a set indexed holds."""

    @property
    def num_hands(self) -> int:
        return int(self.hands.shape[0])


@dataclass(frozen=True)
class BoardIndex:
    """The board sets of one size and their orbits under every suit permutation (module docstring)."""

    size: int
    """:math:`m`, the cards of each board."""
    canonical: IntArray
    """``(B, m)``: the canonical boards, rows increasing, in lexicographic order."""
    weight: IntArray
    """``(B,)``: the board sets of each orbit; they sum to :math:`\\binom{n}{m}`."""
    board_class: NDArray[np.int32]
    """``(C(n, m),)``: the canonical board id of each board set, by colexicographic rank."""
    board_perm: NDArray[np.int8]
    """``(C(n, m),)``: the first permutation (a row of :attr:`CardIndex.perms`) mapping each board set onto its
    canonical board."""

    @property
    def num_boards(self) -> int:
        return int(self.canonical.shape[0])


def binomial_table(num_cards: int, most: int) -> IntArray:
    r""":math:`\binom{a}{b}` for :math:`0 \le a \le` ``num_cards`` and :math:`0 \le b \le` ``most``."""
    return np.array([[math.comb(a, b) for b in range(most + 1)] for a in range(num_cards + 1)], dtype=np.int64)


def card_index(rules: LimitRules) -> CardIndex:
    """The :class:`CardIndex` of the deck and private hands of ``rules``."""
    n, k = rules.deck_size, rules.num_hole_cards
    perms = suit_permutations(rules.num_suits)
    card_perm = np.stack([card_permutation(perm, rules.num_ranks, rules.num_suits) for perm in perms])
    hands = private_hands(rules.num_ranks, rules.num_suits, k)
    binomial = binomial_table(n, max(k, sum(rules.board_cards)))
    colex = binomial[hands, np.arange(1, k + 1)].sum(axis=1)
    hand_of_colex = np.empty(hands.shape[0], dtype=np.int64)
    hand_of_colex[colex] = np.arange(hands.shape[0])
    return CardIndex(
        num_cards=n,
        num_suits=rules.num_suits,
        num_hole_cards=k,
        perms=perms,
        card_perm=card_perm,
        hands=hands,
        hand_image=np.stack([hand_permutation(hands, image) for image in card_perm]),
        hand_mask=hand_masks(hands),
        hand_of_colex=hand_of_colex,
        binomial=binomial,
    )


def board_index(cards: CardIndex, size: int) -> BoardIndex:
    """The :class:`BoardIndex` of the board sets of ``size`` cards."""
    smallest, first = _orbit_keys(cards.num_cards, size, cards.card_perm, cards.binomial)
    canonical_ranks = np.flatnonzero(first == 0)  # the identity, first in the group, maps a canonical board to itself
    keys = smallest[canonical_ranks]
    order = np.argsort(keys)
    board_class = np.searchsorted(keys[order], smallest).astype(np.int32)
    return BoardIndex(
        size=size,
        canonical=unrank_boards(canonical_ranks[order], size, cards.binomial, cards.num_cards),
        weight=np.bincount(board_class, minlength=canonical_ranks.shape[0]).astype(np.int64),
        board_class=board_class,
        board_perm=first,
    )


@njit(cache=True, inline="always")
def colex_rank(cards: NDArray[np.int64], binomial: NDArray[np.int64]) -> int:
    r""":math:`\operatorname{colex}` of the set of ``cards`` (distinct, in any order) without sorting them."""
    rank = 0
    for i in range(cards.shape[0]):
        below = 0
        for j in range(cards.shape[0]):
            below += cards[j] < cards[i]
        rank += binomial[cards[i], below + 1]
    return rank


@njit(cache=True, inline="always")
def image_colex_rank(cards: NDArray[np.int64], image: NDArray[np.int64], binomial: NDArray[np.int64]) -> int:
    r""":math:`\operatorname{colex}` of the set of images ``image[cards]`` (a row of :attr:`CardIndex.card_perm`)."""
    rank = 0
    for i in range(cards.shape[0]):
        below = 0
        for j in range(cards.shape[0]):
            below += image[cards[j]] < image[cards[i]]
        rank += binomial[image[cards[i]], below + 1]
    return rank


@njit(cache=True)
def unrank(rank: int, size: int, binomial: NDArray[np.int64], num_cards: int, out: NDArray[np.int64]) -> None:
    """The board set of colexicographic ``rank`` among sets of ``size`` cards, increasing, into ``out[:size]``."""
    card = num_cards - 1
    for i in range(size, 0, -1):
        while binomial[card, i] > rank:
            card -= 1
        out[i - 1] = card
        rank -= binomial[card, i]
        card -= 1


@njit(cache=True)
def unrank_boards(ranks: NDArray[np.int64], size: int, binomial: NDArray[np.int64], num_cards: int) -> IntArray:
    """The board sets of colexicographic ``ranks``: ``(len(ranks), size)``, rows increasing."""
    boards = np.empty((ranks.shape[0], size), dtype=np.int64)
    for row in range(ranks.shape[0]):
        unrank(ranks[row], size, binomial, num_cards, boards[row])
    return boards


@njit(cache=True, parallel=True)
def _orbit_keys(
    num_cards: int, size: int, card_perm: NDArray[np.int64], binomial: NDArray[np.int64]
) -> tuple[IntArray, NDArray[np.int8]]:
    """For each board set by colexicographic rank: the lexicographic key (its sorted cards as base-``num_cards``
    digits) of its smallest sorted image, and the first permutation giving it."""
    total = binomial[num_cards, size]
    smallest = np.empty(total, dtype=np.int64)
    first = np.empty(total, dtype=np.int8)
    for chunk in prange((total + _CHUNK - 1) // _CHUNK):
        cards = np.empty(size, dtype=np.int64)
        for rank in range(chunk * _CHUNK, min(total, (chunk + 1) * _CHUNK)):
            unrank(rank, size, binomial, num_cards, cards)
            best, which = -1, 0
            for p in range(card_perm.shape[0]):
                key = 0
                for i in range(size):
                    image, below = card_perm[p, cards[i]], 0
                    for j in range(size):
                        below += card_perm[p, cards[j]] < image
                    key += image * num_cards ** (size - 1 - below)
                if best < 0 or key < best:
                    best, which = key, p
            smallest[rank] = best
            first[rank] = which
    return smallest, first
