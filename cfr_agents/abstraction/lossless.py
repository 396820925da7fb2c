r"""Lossless abstraction: the suit-isomorphism classes of (board set, hand) pairs of a round.

Two pairs :math:`(B, h)` and :math:`(B', h')` (a board set and a hand that does not meet it) are isomorphic when a
suit permutation :math:`\pi` maps one onto the other; isomorphic pairs have the same strength in every run-out,
so merging them loses nothing (Gilpin & Sandholm's lossless abstraction, here for imperfect recall: the board as
a set). Each class meets exactly one canonical board :math:`b` (:mod:`~cfr_agents.abstraction.indexing`), and the
pairs of a class on :math:`b` are the orbit of a hand under the *stabilizer* :math:`G_b = \{\pi : \pi(b) = b\}`.
A class is represented by :math:`b` and the smallest hand row of that orbit,

.. math:: \operatorname{rep}_b(h) = \min_{\pi \in G_b} \pi(h),

and stands for :math:`|G| / |G_{b,h}|` raw pairs (at most :math:`|G| = S!`): the :math:`|G| / |G_b|` board
sets of :math:`b`'s orbit times the :math:`|G_b| / |G_{b,h}|` hands of :math:`h`'s orbit under :math:`G_b`
(orbit-stabilizer). For the 52-card deck the preflop has 169 classes (13 pairs of weight 6, 78 suited hands of
weight 4, 78 offsuit of weight 12) and the flop 1,286,792.

Classes are numbered by canonical board, then by representative hand row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from cfr_agents.abstraction.indexing import BoardIndex, CardIndex

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class RoundClasses:
    """The classes of one round, grouped by canonical board."""

    offset: IntArray
    """``(B + 1,)``: the classes on canonical board ``b`` are ``offset[b]`` to ``offset[b + 1] - 1``."""
    hand: NDArray[np.int16]
    """``(C,)``: each class's representative hand row, increasing within a board."""
    weight: NDArray[np.int8]
    """``(C,)``: the raw (board set, hand) pairs each class stands for."""

    @property
    def count(self) -> int:
        return int(self.hand.shape[0])

    def board(self) -> IntArray:
        """``(C,)``: each class's canonical board id."""
        return np.repeat(np.arange(self.offset.shape[0] - 1), np.diff(self.offset))


def round_classes(cards: CardIndex, boards: BoardIndex) -> RoundClasses:
    """The classes of the (board set, hand) pairs of ``boards``' round (module docstring)."""
    counts = _class_counts(boards.canonical, cards.card_perm, cards.hand_image, cards.hand_mask)
    offset = np.zeros(boards.num_boards + 1, dtype=np.int64)
    np.cumsum(counts, out=offset[1:])
    hand, weight = _fill_classes(
        boards.canonical, boards.weight, offset, cards.card_perm, cards.hand_image, cards.hand_mask
    )
    return RoundClasses(offset, hand, weight)


def count_classes(cards: CardIndex, boards: BoardIndex) -> int:
    """The number of classes of ``boards``' round, without listing them."""
    return int(_class_counts(boards.canonical, cards.card_perm, cards.hand_image, cards.hand_mask).sum())


def class_table(
    cards: CardIndex, boards: BoardIndex, classes: RoundClasses, labels: NDArray[np.int32]
) -> NDArray[np.int32]:
    """``(B, H)``: ``labels[c]`` at every (canonical board, hand) pair of class ``c``, -1 where the hand meets the
    board. Isomorphic pairs of one board get one label."""
    return _class_table(
        boards.canonical, classes.offset, classes.hand, labels, cards.card_perm, cards.hand_image, cards.hand_mask
    )


@njit(cache=True)
def board_bits(board: NDArray[np.int64]) -> np.uint64:
    """The bit mask of the cards of ``board``."""
    mask = np.uint64(0)
    for card in board:
        mask |= np.uint64(1) << np.uint64(card)
    return mask


@njit(cache=True)
def stabilizer(board: NDArray[np.int64], card_perm: NDArray[np.int64]) -> IntArray:
    """The permutations (rows of ``card_perm``) that map the set ``board`` onto itself, in order."""
    own = board_bits(board)
    kept = np.empty(card_perm.shape[0], dtype=np.int64)
    count = 0
    for p in range(card_perm.shape[0]):
        image = np.uint64(0)
        for card in board:
            image |= np.uint64(1) << np.uint64(card_perm[p, card])
        if image == own:
            kept[count] = p
            count += 1
    return kept[:count]


@njit(cache=True, inline="always")
def representative(hand: int, stab: IntArray, hand_image: IntArray) -> int:
    r""":math:`\operatorname{rep}_b(h)`: the smallest row of the images of hand row ``hand`` under ``stab``."""
    smallest = hand
    for p in stab:
        smallest = min(smallest, hand_image[p, hand])
    return smallest


@njit(cache=True, parallel=True)
def _class_counts(
    canonical: IntArray, card_perm: IntArray, hand_image: IntArray, hand_mask: NDArray[np.uint64]
) -> IntArray:
    counts = np.zeros(canonical.shape[0], dtype=np.int64)
    for b in prange(canonical.shape[0]):
        stab, mask = stabilizer(canonical[b], card_perm), board_bits(canonical[b])
        for h in range(hand_mask.shape[0]):
            if hand_mask[h] & mask == 0 and representative(h, stab, hand_image) == h:
                counts[b] += 1
    return counts


@njit(cache=True, parallel=True)
def _fill_classes(
    canonical: IntArray,
    board_weight: IntArray,
    offset: IntArray,
    card_perm: IntArray,
    hand_image: IntArray,
    hand_mask: NDArray[np.uint64],
) -> tuple[NDArray[np.int16], NDArray[np.int8]]:
    hand = np.empty(offset[-1], dtype=np.int16)
    weight = np.empty(offset[-1], dtype=np.int8)
    for b in prange(canonical.shape[0]):
        stab, mask = stabilizer(canonical[b], card_perm), board_bits(canonical[b])
        c = offset[b]
        for h in range(hand_mask.shape[0]):
            if hand_mask[h] & mask != 0 or representative(h, stab, hand_image) != h:
                continue
            fixed = 0
            for p in stab:
                fixed += hand_image[p, h] == h
            hand[c] = h
            weight[c] = board_weight[b] * (stab.shape[0] // fixed)
            c += 1
    return hand, weight


@njit(cache=True, parallel=True)
def _class_table(
    canonical: IntArray,
    offset: IntArray,
    class_hand: NDArray[np.int16],
    labels: NDArray[np.int32],
    card_perm: IntArray,
    hand_image: IntArray,
    hand_mask: NDArray[np.uint64],
) -> NDArray[np.int32]:
    table = np.empty((canonical.shape[0], hand_mask.shape[0]), dtype=np.int32)
    for b in prange(canonical.shape[0]):
        stab, mask = stabilizer(canonical[b], card_perm), board_bits(canonical[b])
        first, stop = offset[b], offset[b + 1]
        for h in range(hand_mask.shape[0]):
            if hand_mask[h] & mask != 0:
                table[b, h] = -1
                continue
            rep = representative(h, stab, hand_image)
            table[b, h] = labels[first + np.searchsorted(class_hand[first:stop], rep)]
    return table
