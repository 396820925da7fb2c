"""OpenSpiel's ``universal_poker`` information states on the public tree: where each one's strategy lives.

An information-state string of ``universal_poker`` ends in
``[Private: <hole cards>][Public: <board cards>][Sequences: <betting>]``; the betting names a node of the
:class:`~adapters.holdem.betting.BettingTree` (its ``Sequences`` string), the board a segment, the hole
cards a private hand. On a tree with suit-canonical boards, the board is first mapped to its
representative by a suit permutation, which is applied to the hole cards too.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from adapters.holdem import canonical_board, card_permutation, hand_index_table, information_state_fields
from adapters.inputs import InputError
from cfr_agents.public_tree.tree import PublicTree


@dataclass(frozen=True)
class Location:
    """An information state's place in a strategy array: its block's start, the number of actions, the hand."""

    segment: int
    node: int
    hand: int

    def indices(self, tree: PublicTree) -> np.ndarray:
        """The strategy array's entries for this information state, one per legal action."""
        base = tree.segments.offset[self.segment] + tree.node_offset[self.node]
        n = int(tree.betting.num_children[self.node])
        indices: np.ndarray = base + np.arange(n) * tree.num_hands + self.hand
        return indices


class Locator:
    """Finds information states of one public tree (:meth:`locate`)."""

    def __init__(self, tree: PublicTree) -> None:
        self.tree = tree
        self._canonical: dict[tuple[int, ...], tuple[list[int], np.ndarray]] = {}
        """Per board (its cards sorted): its canonical board and the card permutation onto it, as found."""

    @cached_property
    def _nodes(self) -> dict[str, int]:
        betting = self.tree.betting
        return {betting.sequence[node]: node for node in range(betting.num_nodes) if betting.kind[node] == 0}

    @cached_property
    def _segments(self) -> dict[tuple[int, tuple[int, ...]], int]:
        """(range, board cards as a sorted tuple) -> segment."""
        segments = self.tree.segments
        return {
            (int(segments.range_index[s]), tuple(sorted(c for board in segments.boards[s] for c in board))): s
            for s in range(segments.count)
        }

    @cached_property
    def _hand_table(self) -> np.ndarray:
        return hand_index_table(self.tree.hands, self.tree.rules.deck_size)

    def locate(self, information_state: str) -> Location:
        """The segment, betting node and hand of an OpenSpiel information-state string."""
        rules, betting = self.tree.rules, self.tree.betting
        hole, board, sequence = information_state_fields(information_state, rules.num_suits)
        node = self._nodes.get(sequence)
        if node is None:
            raise InputError(f"no decision after the betting {sequence!r} in {self.tree.game_string}")
        range_index = int(np.flatnonzero((betting.ranges[:, 0] <= node) & (node < betting.ranges[:, 1]))[0])
        if self.tree.canonical and board:
            key = tuple(sorted(board))
            if key not in self._canonical:
                previous: list[tuple[int, ...]] = []
                representative, perm = canonical_board(board, rules.num_ranks, rules.num_suits, previous)
                mapping = card_permutation(perm, rules.num_ranks, rules.num_suits)
                self._canonical[key] = ([int(card) for card in representative], mapping)
            board, mapping = self._canonical[key]
            hole = [int(mapping[card]) for card in hole]
        segment = self._segments.get((range_index, tuple(sorted(board))))
        if segment is None:
            raise InputError(f"no public node for board {board} and betting {sequence!r}")
        table = self._hand_table
        hand = int(table[tuple(sorted(hole))]) if len(hole) > 1 else int(table[hole[0]])
        return Location(segment, node, hand)
