r"""An abstraction and its lookup: the bucket of a player's hole cards and the board dealt so far, in each round.

The tables (:class:`AbstractionTables`, NumPy arrays only, so compiled code takes them whole) hold, for every round
:math:`r` with :math:`m_r` board cards dealt so far, every board set by colexicographic rank mapped to its canonical
board and a suit permutation :math:`\pi` onto it (:mod:`~cfr_agents.abstraction.indexing`), and a bucket for every
(canonical board, hand) pair. :func:`bucket_of` looks up hole cards :math:`h` on board :math:`B` as

.. math:: \operatorname{bucket}_r(h, B) = T_r[\operatorname{canon}(B), \operatorname{row}(\pi(h))],

in :math:`O(m_r^2 + k^2)` steps and no allocation; suit-isomorphic pairs get one bucket, since the table holds one
bucket for each class of pairs (:mod:`~cfr_agents.abstraction.lossless`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

from adapters.holdem.rules import LimitRules
from adapters.inputs import InputError
from cfr_agents.abstraction.indexing import colex_rank, image_colex_rank
from cfr_agents.abstraction.spec import RoundSpec


class AbstractionTables(NamedTuple):
    """The arrays :func:`bucket_of` reads; the rounds' tables lie end to end at per-round offsets."""

    num_buckets: NDArray[np.int64]
    """``(R,)``: buckets of each round."""
    board_offset: NDArray[np.int64]
    """``(R,)``: where round ``r``'s board sets start in :attr:`board_class` and :attr:`board_perm`."""
    board_class: NDArray[np.int32]
    r"""``(sum_r C(n, m_r),)``: the canonical board id of each board set of each round, by colexicographic rank."""
    board_perm: NDArray[np.int8]
    """Same shape: the suit permutation (a row of :attr:`card_perm`) mapping the board set onto its canonical board."""
    card_perm: NDArray[np.int64]
    """``(P, n)``: the image of each card under each suit permutation."""
    hand_of_colex: NDArray[np.int64]
    """``(H,)``: the row among :func:`~adapters.holdem.cards.private_hands` of the hand of each colexicographic rank."""
    binomial: NDArray[np.int64]
    r"""``(n + 1, K + 1)``: :math:`\binom{a}{b}`."""
    bucket_offset: NDArray[np.int64]
    """``(R,)``: where round ``r``'s table starts in :attr:`buckets`."""
    buckets: NDArray[np.int32]
    """Round ``r``'s table, ``(B_r, H)`` row-major from ``bucket_offset[r]``: the bucket of each hand on each
    canonical board, -1 where the hand meets the board (never read for a valid deal)."""


@njit(cache=True, inline="always")
def bucket_of(tables: AbstractionTables, round_: int, hole: NDArray[np.int64], board: NDArray[np.int64]) -> int:
    """The bucket in ``[0, tables.num_buckets[round_])`` of hole cards ``hole`` ``(k,)`` with the board cards
    ``board`` ``(m_r,)`` dealt up to round ``round_``, in any order. The cards are not checked: they must be
    distinct cards of the deck, as many as the round deals (:meth:`Abstraction.bucket` checks them)."""
    slot = tables.board_offset[round_] + colex_rank(board, tables.binomial)
    canonical = np.int64(tables.board_class[slot])
    image = tables.card_perm[tables.board_perm[slot]]
    hand = tables.hand_of_colex[image_colex_rank(hole, image, tables.binomial)]
    return int(tables.buckets[tables.bucket_offset[round_] + canonical * tables.hand_of_colex.shape[0] + hand])


@dataclass(frozen=True, eq=False)
class Abstraction:
    """A card abstraction of a two-player limit hold'em game: a bucket for each player's hole cards and the board
    set in each round (imperfect recall). Two abstractions are equal only when they are one object (their tables
    are arrays)."""

    game_id: str
    """The game's canonical id."""
    rules: LimitRules
    rounds: tuple[RoundSpec, ...]
    """What each round does, its buckets included."""
    classes: tuple[int, ...]
    """Lossless classes of (board set, hand) pairs in each round."""
    tables: AbstractionTables = field(repr=False)
    seed: int | None = None
    """The seed of the generator that built it, when known (``emd`` draws its k-means++ seeds)."""
    build_seconds: float = 0.0

    @property
    def num_buckets(self) -> tuple[int, ...]:
        return tuple(spec.buckets for spec in self.rounds)

    @property
    def board_sizes(self) -> tuple[int, ...]:
        """:math:`m_r`: the board cards dealt up to each round."""
        return tuple(int(size) for size in np.cumsum(self.rules.board_cards))

    def kernel_tables(self) -> AbstractionTables:
        """The arrays compiled code passes to :func:`bucket_of`."""
        return self.tables

    def bucket(
        self, round_: int, hole: Sequence[int] | NDArray[np.int64], board: Sequence[int] | NDArray[np.int64]
    ) -> int:
        """The bucket of hole cards ``hole`` with the board cards ``board`` dealt up to round ``round_`` (any order);
        cards that are not distinct cards of the deck, or not as many as the round deals, are refused in one
        line."""
        rules = self.rules
        if not 0 <= round_ < rules.num_rounds:
            raise InputError(f"{self.game_id} has rounds 0 to {rules.num_rounds - 1}, not {round_}")
        hole_cards, board_cards = [int(card) for card in hole], [int(card) for card in board]
        size = self.board_sizes[round_]
        cards = hole_cards + board_cards
        if (
            len(hole_cards) != rules.num_hole_cards
            or len(board_cards) != size
            or len(set(cards)) != len(cards)
            or not all(0 <= card < rules.deck_size for card in cards)
        ):
            raise InputError(
                f"round {round_} of {self.game_id} takes {rules.num_hole_cards} hole cards and {size} board cards, "
                f"distinct cards of a deck of {rules.deck_size}: not {hole_cards} and {board_cards}"
            )
        return int(self.buckets(round_, np.array([hole_cards], dtype=np.int64), board_cards)[0])

    def buckets(
        self, round_: int, hands: NDArray[np.int64], board: Sequence[int] | NDArray[np.int64]
    ) -> NDArray[np.int64]:
        """The bucket of each hand of ``hands`` ``(H, k)`` with the board cards ``board`` (distinct, as many as round
        ``round_`` deals, any order), at once: -1 for a hand that meets the board. As :func:`bucket_of` computes
        it: the board's canonical board and suit permutation, then the colexicographic rank of each hand's image."""
        cards = np.asarray(board, dtype=np.int64).reshape(1, -1)
        return deal_buckets(self.tables, round_, np.asarray(hands, dtype=np.int64), cards.repeat(len(hands), axis=0))


def deal_buckets(
    tables: AbstractionTables, round_: int, holes: NDArray[np.int64], boards: NDArray[np.int64]
) -> NDArray[np.int64]:
    """The bucket of each row of ``holes`` ``(N, k)`` with the board cards of the same row of ``boards`` ``(N, m_r)``
    (distinct, any order), at once: -1 where the hole cards meet the board. As :func:`bucket_of` computes it: each
    board's canonical board and suit permutation, then the colexicographic rank of the hand's image."""
    boards = np.sort(boards, axis=1)
    slot = tables.board_offset[round_] + tables.binomial[boards, np.arange(1, boards.shape[1] + 1)].sum(axis=1)
    canonical = tables.board_class[slot].astype(np.int64)
    images = np.sort(tables.card_perm[tables.board_perm[slot].astype(np.int64)[:, None], holes], axis=1)
    ranks = tables.binomial[images, np.arange(1, images.shape[1] + 1)].sum(axis=1)
    row = tables.bucket_offset[round_] + canonical * tables.hand_of_colex.shape[0]
    buckets: NDArray[np.int64] = tables.buckets[row + tables.hand_of_colex[ranks]].astype(np.int64)
    buckets[(holes[:, :, None] == boards[:, None, :]).any(axis=(1, 2))] = -1
    return buckets
