r"""Hand strength and its distribution over the run-outs, for every class of every round.

**Hand strength** at the last round, on a board :math:`B` of :math:`m` cards, of a hand :math:`h` of :math:`k`
cards against an opponent hand :math:`o` drawn uniformly from the :math:`D = \binom{n - m - k}{k}` hands that
meet neither :math:`B` nor :math:`h` (card removal):

.. math:: \mathrm{HS}(h, B) = P(\text{win}) + \tfrac12 P(\text{tie})
          = \frac{|\{o : r(o) < r(h)\}| + \tfrac12 |\{o \ne h : r(o) = r(h)\}|}{D},

with :math:`r` the showdown rank (:func:`adapters.holdem.cards.rank_hands`). Per board the hands are sorted by
rank and swept once in increasing order (:math:`O(H \log H)`, not :math:`H^2`): the hands weaker than a tie
group, and those of the group, are counted in all and per card, and inclusion-exclusion removes the ones that
share a card with :math:`h` -- :math:`W - W_a - W_b` weaker hands and :math:`T - T_a - T_b + 1` tied ones for
:math:`h = \{a, b\}` (the one hand holding both is :math:`h` itself), :math:`W - W_a` and :math:`T - T_a` for one
hole card.

**Earlier rounds** (:func:`round_strength`). For a class :math:`(b, h)` of round :math:`r`
(:mod:`~cfr_agents.abstraction.lossless`), every run-out :math:`R` of the :math:`m_L - m_r` board cards still to
come that meets neither :math:`b` nor :math:`h` is equally likely; the final board :math:`b \cup R` is looked up
in the last round's table of :math:`\mathrm{HS}` through its canonical board and suit permutation
(:mod:`~cfr_agents.abstraction.indexing`), never evaluated again. Over the run-outs:

.. math:: \mathrm{E}[\mathrm{HS}], \qquad \mathrm{E}[\mathrm{HS}^2]

(the second is the "expected hand strength squared" of Johanson's M.Sc. thesis, 2007, used by Zinkevich et al.,
NIPS 2007: it rewards the potential of drawing hands as well as the mean), and the **equity histogram** of the
final :math:`\mathrm{HS}` over :math:`B` equal bins of :math:`[0, 1]` (bin :math:`\min(\lfloor B \cdot
\mathrm{HS} \rfloor, B - 1)`), the distribution Johanson, Burch, Valenzano & Bowling (AAMAS 2013) cluster under
the earth mover's distance. At the last round itself the run-out is empty: the values are :math:`\mathrm{HS}`,
:math:`\mathrm{HS}^2` and a point.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from adapters.holdem.cards import rank_hands
from cfr_agents.abstraction.indexing import BoardIndex, CardIndex, colex_rank
from cfr_agents.abstraction.lossless import RoundClasses, board_bits

IntArray = NDArray[np.int64]
Step = Callable[[int, int], None]
"""Called after each chunk of work with the boards done so far and the boards in all."""
_RUN_OUTS_AT_ONCE: Final = 1 << 22
"""The most (board, run-out) pairs a chunk of :func:`round_strength` lists at once."""
_CHUNKS: Final = 64
"""Chunks a round's boards are cut into at least (progress is reported after each)."""


@dataclass(frozen=True)
class RoundStrength:
    """:math:`\\mathrm{E}[\\mathrm{HS}]`, :math:`\\mathrm{E}[\\mathrm{HS}^2]` and the equity histogram of each class
    of a round (module docstring)."""

    ehs: NDArray[np.float64]
    """``(C,)``."""
    ehs2: NDArray[np.float64]
    """``(C,)``."""
    histogram: NDArray[np.float32]
    """``(C, bins)``: each row the probability of each bin (sums to 1); ``(C, 0)`` when no bins were asked."""


def final_strength(cards: CardIndex, boards: IntArray, step: Step | None = None) -> NDArray[np.float32]:
    """``(B, H)``: :math:`\\mathrm{HS}` of every hand on each of ``boards`` ``(B, m)`` (module docstring), NaN where
    the hand meets the board."""
    boards = np.ascontiguousarray(boards, dtype=np.int64)
    k, m = cards.num_hole_cards, boards.shape[1]
    opponents = math.comb(cards.num_cards - m - k, k)
    table = np.empty((boards.shape[0], cards.num_hands), dtype=np.float32)
    for start, stop in _chunks(boards.shape[0], 1):
        _final_strength(
            boards, start, stop, cards.hands, cards.hand_mask, cards.num_cards, cards.num_suits, opponents, table
        )
        if step is not None:
            step(stop, boards.shape[0])
    return table


def round_strength(
    cards: CardIndex,
    boards: BoardIndex,
    classes: RoundClasses,
    last: BoardIndex,
    strength: NDArray[np.float32],
    bins: int,
    step: Step | None = None,
) -> RoundStrength:
    """The :class:`RoundStrength` of ``classes``, the classes of ``boards``' round, from ``strength``, the
    :func:`final_strength` table of the last round's canonical boards ``last``; histograms of ``bins`` bins (none
    for 0)."""
    run_outs = math.comb(cards.num_cards - boards.size, last.size - boards.size)
    ehs = np.empty(classes.count, dtype=np.float64)
    ehs2 = np.empty(classes.count, dtype=np.float64)
    histogram = np.zeros((classes.count, bins), dtype=np.float32)
    for start, stop in _chunks(boards.num_boards, run_outs):
        _round_strength(
            boards.canonical[start:stop],
            classes.offset[start : stop + 1],
            classes.hand,
            last.board_class,
            last.board_perm,
            last.size,
            cards.binomial,
            cards.num_cards,
            cards.hand_image,
            cards.hand_mask,
            strength,
            ehs,
            ehs2,
            histogram,
        )
        if step is not None:
            step(stop, boards.num_boards)
    return RoundStrength(ehs, ehs2, histogram)


def _chunks(num_boards: int, run_outs: int) -> list[tuple[int, int]]:
    """Consecutive ranges of boards, at least :data:`_CHUNKS` of them unless there are fewer boards, each listing
    at most :data:`_RUN_OUTS_AT_ONCE` run-outs unless it is one board."""
    size = max(1, min(-(-num_boards // _CHUNKS), _RUN_OUTS_AT_ONCE // run_outs))
    return [(start, min(start + size, num_boards)) for start in range(0, num_boards, size)]


@njit(cache=True, parallel=True)
def _final_strength(
    boards: IntArray,
    start: int,
    stop: int,
    hands: IntArray,
    hand_mask: NDArray[np.uint64],
    num_cards: int,
    num_suits: int,
    opponents: int,
    table: NDArray[np.float32],
) -> None:
    k = hands.shape[1]
    for b in prange(start, stop):
        board = boards[b]
        rank = rank_hands(hands, board, num_suits)
        mask = board_bits(board)
        valid = np.flatnonzero((hand_mask & mask) == 0)
        order = valid[np.argsort(rank[valid], kind="mergesort")]
        weaker_card = np.zeros(num_cards, dtype=np.int64)
        tied_card = np.zeros(num_cards, dtype=np.int64)
        table[b, :] = np.nan
        weaker, first = 0, 0
        while first < order.shape[0]:
            stop_group = first
            while stop_group < order.shape[0] and rank[order[stop_group]] == rank[order[first]]:
                for card in hands[order[stop_group]]:
                    tied_card[card] += 1
                stop_group += 1
            tied = stop_group - first
            for i in range(first, stop_group):
                h = order[i]
                below, level = weaker, tied
                for card in hands[h]:
                    below -= weaker_card[card]
                    level -= tied_card[card]
                if k == 2:
                    level += 1  # the hand itself, the one tied hand holding both cards, was removed twice
                table[b, h] = (below + 0.5 * level) / opponents
            for i in range(first, stop_group):
                for card in hands[order[i]]:
                    weaker_card[card] += 1
                    tied_card[card] = 0
            weaker += tied
            first = stop_group


@njit(cache=True, parallel=True)
def _round_strength(
    canonical: IntArray,
    offset: IntArray,
    class_hand: NDArray[np.int16],
    last_class: NDArray[np.int32],
    last_perm: NDArray[np.int8],
    last_size: int,
    binomial: IntArray,
    num_cards: int,
    hand_image: IntArray,
    hand_mask: NDArray[np.uint64],
    strength: NDArray[np.float32],
    ehs: NDArray[np.float64],
    ehs2: NDArray[np.float64],
    histogram: NDArray[np.float32],
) -> None:
    num_boards, size = canonical.shape
    more = last_size - size
    run_outs = binomial[num_cards - size, more]
    final_board = np.empty((num_boards, run_outs), dtype=np.int32)
    final_perm = np.empty((num_boards, run_outs), dtype=np.int8)
    run_out_mask = np.empty((num_boards, run_outs), dtype=np.uint64)
    for b in prange(num_boards):
        board = canonical[b]
        taken = board_bits(board)
        left = np.empty(num_cards - size, dtype=np.int64)
        j = 0
        for card in range(num_cards):
            if not (taken >> np.uint64(card)) & np.uint64(1):
                left[j] = card
                j += 1
        final = np.empty(last_size, dtype=np.int64)
        final[:size] = board
        chosen = np.arange(more)  # positions in `left` of the run-out's cards, increasing
        for i in range(run_outs):
            bits = np.uint64(0)
            for j in range(more):
                final[size + j] = left[chosen[j]]
                bits |= np.uint64(1) << np.uint64(left[chosen[j]])
            slot = colex_rank(final, binomial)
            final_board[b, i] = last_class[slot]
            final_perm[b, i] = last_perm[slot]
            run_out_mask[b, i] = bits
            j = more - 1  # the next combination in lexicographic order
            while j >= 0 and chosen[j] == left.shape[0] - more + j:
                j -= 1
            if j >= 0:
                chosen[j] += 1
                for t in range(j + 1, more):
                    chosen[t] = chosen[t - 1] + 1
    bins = histogram.shape[1]
    first_class = offset[0]
    for c in prange(first_class, offset[-1]):
        on = np.searchsorted(offset, c, side="right") - 1  # the class's board in this chunk
        h = np.int64(class_hand[c])
        mine = hand_mask[h]
        total, total_square, count = 0.0, 0.0, 0
        for i in range(run_outs):
            if run_out_mask[on, i] & mine:
                continue
            value = np.float64(strength[final_board[on, i], hand_image[final_perm[on, i], h]])
            total += value
            total_square += value * value
            count += 1
            if bins:
                histogram[c, min(int(value * bins), bins - 1)] += 1.0
        ehs[c] = total / count
        ehs2[c] = total_square / count
        for j in range(bins):
            histogram[c, j] /= count
