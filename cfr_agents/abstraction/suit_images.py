r"""Suit-canonical images of information states: what networks with ``inputs="canonical"`` read.

A suit permutation :math:`\pi` maps an information state onto one that plays alike (every hand keeps its strength in
every run-out), so a strategy may play a whole orbit as one state. The public tree with suit-canonical boards
(:mod:`cfr_agents.public_tree.neural`) reads a model that way, and this module gives the same image for many
information states at once, so that training reads exactly what scoring and play read. In a game of one board
round (Flop Hold'em and the calibration games), with :math:`G` the suit permutations:

* before the board, hand :math:`h` is read as :math:`\min_{\pi \in G} \pi(h)`;
* with board :math:`b` dealt, as the canonical board :math:`c = \pi_b(b)`, the lexicographically smallest sorted
  image of :math:`b` (:mod:`cfr_agents.abstraction.indexing`; :math:`\pi_b` the first permutation giving it), and
  the hand :math:`\min_{\pi \in G_c} \pi(\pi_b(h))`, :math:`G_c = \{\pi : \pi(c) = c\}` the stabilizer of
  :math:`c`;

hands compared as rows of :func:`~adapters.holdem.cards.private_hands` (lexicographic order). Both images depend on
the orbit alone: every state of an orbit is read as one.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

from adapters.holdem.engine import holdem_engine
from adapters.holdem.rules import LimitRules
from adapters.holdem.tensors import HoldemTensors
from adapters.inputs import UnsupportedGameError
from cfr_agents.abstraction.indexing import board_index, card_index

IntArray = NDArray[np.int64]


class SuitImages:
    """The suit-canonical images of the information states of one game of one board round (module docstring)."""

    def __init__(self, rules: LimitRules) -> None:
        dealt = [size for size in rules.board_cards if size]
        if len(dealt) != 1:
            raise UnsupportedGameError(
                f"suit-canonical inputs need a game whose board is dealt in one round, not {len(dealt)} rounds"
            )
        self.cards = card_index(rules)
        self.boards = board_index(self.cards, dealt[0])
        canonical = self.boards.canonical
        images = np.sort(self.cards.card_perm[:, canonical], axis=2)  # (P, B, m): pi(c), sorted
        self.stabilizer = (images == canonical[None]).all(axis=2).T
        """``(B, P)``: whether permutation :math:`\\pi` maps canonical board :math:`c` onto itself."""

    def _colex(self, cards: IntArray) -> IntArray:
        """The colexicographic rank of each row of ``cards`` ``(N, j)`` as a set (its cards in any order)."""
        ordered = np.sort(cards, axis=1)
        colex: IntArray = self.cards.binomial[ordered, np.arange(1, ordered.shape[1] + 1)].sum(axis=1)
        return colex

    def images(self, holes: IntArray, boards: IntArray | None) -> tuple[IntArray, IntArray | None]:
        r"""The images of ``holes`` ``(N, k)`` before the board (``boards`` ``None``), or on ``boards`` ``(N, m)``
        (each board's cards in any order): the hands, cards ascending, and the canonical boards, sorted."""
        index = self.cards
        if boards is None:
            smallest = index.hand_image[:, index.hand_of_colex[self._colex(holes)]].min(axis=0)  # min_{pi in G} pi(h)
            return index.hands[smallest], None
        colex = self._colex(boards)
        board = self.boards.board_class[colex]
        mapped = index.card_perm[self.boards.board_perm[colex].astype(np.int64)[:, None], holes]  # pi_b(h)
        images = index.hand_image[:, index.hand_of_colex[self._colex(mapped)]].T  # (N, P): pi(pi_b(h)) for every pi
        smallest = np.where(self.stabilizer[board], images, np.iinfo(np.int64).max).min(axis=1)  # min over G_c
        return index.hands[smallest], self.boards.canonical[board]

    def mapped(self, holes: IntArray, boards: IntArray, dealt: NDArray[np.bool_]) -> tuple[IntArray, IntArray]:
        """Row by row, the image of hand ``holes[i]`` on board ``boards[i]`` where ``dealt[i]``, before the board
        elsewhere (that row of ``boards`` is then copied as it is): new arrays of the shapes of ``holes`` and
        ``boards``."""
        holes_out, boards_out = holes.copy(), boards.copy()
        for on_board in (False, True):
            rows = np.flatnonzero(dealt == on_board)
            if rows.size:
                hands, board = self.images(holes[rows], boards[rows] if on_board else None)
                holes_out[rows] = hands
                if board is not None:
                    boards_out[rows] = board
        return holes_out, boards_out

    def of_tensors(self, tensors: HoldemTensors, rows: NDArray[np.float64]) -> NDArray[np.float64]:
        """Information-state tensors ``rows`` ``(N, size)`` of ``tensors``' layout with their cards replaced by the
        image's (a copy)."""
        holes, boards, count = tensors.cards_of(rows)
        dealt = count > 0
        holes, boards = self.mapped(holes, boards, dealt)
        out = rows.copy()
        n = tensors.num_cards
        out[:, tensors.hole_offset : tensors.hole_offset + n] = 0.0
        out[:, tensors.board_offset : tensors.board_offset + n] = 0.0
        out[np.arange(rows.shape[0])[:, None], tensors.hole_offset + holes] = 1.0
        out[np.flatnonzero(dealt)[:, None], tensors.board_offset + boards[dealt]] = 1.0
        return out


@functools.lru_cache(maxsize=8)
def suit_images(game_id: str) -> SuitImages:
    """The :class:`SuitImages` of a two-player limit hold'em game (:func:`~adapters.holdem.engine.holdem_engine`),
    built once per process."""
    return SuitImages(holdem_engine(game_id).rules)
