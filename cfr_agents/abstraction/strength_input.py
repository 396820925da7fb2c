r"""A network's hand-strength input: :math:`\mathrm{E}[\mathrm{HS}]` of the player's hole cards on the board dealt so
far, one number beside the cards' one-hot.

A network reading information-state tensors sees its cards one-hot, and must learn from its samples alone what
they are worth at a showdown: pairs, suits and straights are far from linear in the one-hot. This input hands it
that value. At round :math:`r`, for hole cards :math:`h` and the board :math:`b` of the :math:`m_r` cards dealt so
far,

.. math:: s_r(h, b) = \mathrm{E}_R\big[\mathrm{HS}(h, b \cup R)\big],

the mean over the run-outs :math:`R` of the board cards still to come of the hand strength at the last round
against a uniform opponent hand (:mod:`~cfr_agents.abstraction.strength`; at the last round :math:`s = \mathrm{HS}`).
It is computed once for each lossless class of (board set, hand) pairs (suit isomorphism,
:mod:`~cfr_agents.abstraction.lossless`) and read as an abstraction's bucket is,

.. math:: s_r(h, b) = S_r\big[c_r(\operatorname{canon}(b), \operatorname{row}(\pi(h)))\big],

with :math:`c_r` the class table of round :math:`r` (:func:`~cfr_agents.abstraction.tables.deal_buckets`). It is
a function of the player's own cards, so a network that reads it still plays an information state's strategy.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from numpy.typing import NDArray

from adapters.inputs import InputError
from cfr_agents.abstraction.build import game_indexes, game_rules, lookup_tables
from cfr_agents.abstraction.lossless import class_table, count_classes, round_classes
from cfr_agents.abstraction.strength import final_strength, round_strength
from cfr_agents.abstraction.tables import AbstractionTables, deal_buckets

MAX_CLASSES: Final = 1 << 26
"""The most lossless classes of all rounds together whose strength is computed (Flop Hold'em has 1,286,961; heads-up
limit hold'em 138,403,265)."""


@dataclass(frozen=True, eq=False)
class StrengthInput:
    """:math:`s_r(h, b)` of every round of one game (module docstring)."""

    game_id: str
    board_sizes: tuple[int, ...]
    """:math:`m_r`: the board cards dealt up to each round."""
    tables: AbstractionTables = field(repr=False)
    """The lossless classes' lookup: a "bucket" is a class of its round."""
    strength: tuple[NDArray[np.float32], ...] = field(repr=False)
    """:math:`S_r`: per round, the strength of each class."""
    build_seconds: float = 0.0

    def of_deals(
        self, rounds: NDArray[np.int64], holes: NDArray[np.int64], boards: NDArray[np.int64]
    ) -> NDArray[np.float32]:
        """``(N,)``: :math:`s_r(h, b)` of row ``i``'s round ``rounds[i]``, hole cards ``holes[i]`` ``(k,)`` and board
        ``boards[i, :m_r]`` (later columns ignored); 0 where the hole cards meet the board (no deal has them)."""
        rounds = np.asarray(rounds, dtype=np.int64)
        out = np.zeros(rounds.shape[0], dtype=np.float32)
        for round_ in np.unique(rounds).tolist():
            rows = np.flatnonzero(rounds == round_)
            board = np.asarray(boards, dtype=np.int64)[rows, : self.board_sizes[round_]]
            classes = deal_buckets(self.tables, round_, np.asarray(holes, dtype=np.int64)[rows], board)
            out[rows] = np.where(classes >= 0, self.strength[round_][np.maximum(classes, 0)], 0.0)
        return out

    def of_board(self, round_: int, hands: NDArray[np.int64], board: NDArray[np.int64]) -> NDArray[np.float32]:
        """``(H,)``: :math:`s_r(h, b)` of each hand of ``hands`` ``(H, k)`` on one board ``board`` ``(m_r,)``; 0 for
        a hand that meets the board."""
        count = len(hands)
        return self.of_deals(
            np.full(count, round_), hands, np.asarray(board, dtype=np.int64).reshape(1, -1).repeat(count, axis=0)
        )


@functools.lru_cache(maxsize=2)
def strength_input(game_id: str) -> StrengthInput:
    """The :class:`StrengthInput` of a two-player limit hold'em game, computed on first use (a few seconds for Flop
    Hold'em); a game of more than :data:`MAX_CLASSES` classes is refused in one line."""
    started = time.perf_counter()
    game, rules = game_rules(game_id)
    n, k, m = rules.deck_size, rules.num_hole_cards, sum(rules.board_cards)
    classes = math.comb(n, m) * math.comb(n - m, k) // math.factorial(rules.num_suits)  # the last round's, at least
    if classes <= MAX_CLASSES:
        cards, boards = game_indexes(rules)
        classes = sum(count_classes(cards, board) for board in boards)
    if classes > MAX_CLASSES:
        raise InputError(
            f"{game_id} has {classes:,} classes of (board, hand) pairs or more, beyond the {MAX_CLASSES:,} whose "
            "strength a network's strength input is computed for"
        )
    last = boards[-1]
    final = final_strength(cards, last.canonical)
    grouped = [round_classes(cards, board) for board in boards]
    labels = [
        class_table(cards, b, g, np.arange(g.count, dtype=np.int32)) for b, g in zip(boards, grouped, strict=True)
    ]
    return StrengthInput(
        game_id=game,
        board_sizes=tuple(board.size for board in boards),
        tables=lookup_tables(cards, boards, labels, [g.count for g in grouped]),
        strength=tuple(
            round_strength(cards, board, g, last, final, 0).ehs.astype(np.float32)  # E_R[HS(h, b u R)]
            for board, g in zip(boards, grouped, strict=True)
        ),
        build_seconds=time.perf_counter() - started,
    )
