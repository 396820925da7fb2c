r"""One endgame as a public tree of its own: the last round's betting from one public state, both players' ranges
at its entry.

Where no public tree of the whole game fits (heads-up limit hold'em's would have billions of segments), an agent
re-solves the endgame it is in when play reaches it. The endgame is a public state :math:`S` that starts the last
round -- the betting node :math:`d` at the round's entry and the whole board :math:`B` -- with the players' ranges
there, each hand's reach under the blueprint :math:`\sigma_B`,

.. math:: r_p(S, h) = \pi^{\sigma_B}_p(S, h),

(0 for a hand that meets :math:`B`; the card removal between the two players' hands, and so chance's part of the
reach, is the kernels'). Its tree has one segment, the round subtree at :math:`d` on :math:`B`, and reads the ranges
as the reaches at its root (:attr:`~cfr_agents.public_tree.tree.PublicTree.root_reach`), so every solver of the
public tree runs on it unchanged: :class:`~cfr_agents.public_tree.endgame.EndgameSolver` re-solves it unsafely,
:class:`~cfr_agents.public_tree.safe_endgame.GadgetSolver` safely. A subgame solved this way plays exactly as the
whole tree's re-solve plays in the segment of :math:`S`: the regrets of the last round depend on the reaches at its
entry only, and these are the ones the whole tree's forward pass carries into the segment.

Values on the subgame are sums over both players' hands weighted by those reaches (:attr:`PublicTree.chance` is 1),
not expectations; CFR's strategies do not depend on their scale.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from adapters.holdem import hand_masks, private_hands
from adapters.holdem.betting import DEAL, BettingTree
from adapters.holdem.rules import LimitRules
from adapters.inputs import InputError
from adapters.openspiel import PREFIX
from cfr_agents.public_tree.tree import PublicTree, Segments, block_layout, showdowns

FloatArray = NDArray[np.float64]


class Subgames:
    """The subgames of the last round of one limit hold'em game (its rules and betting tree): the layout over hands
    that every subgame shares, made once."""

    def __init__(self, game_id: str, rules: LimitRules, betting: BettingTree, rules_fingerprint: str = "") -> None:
        self.game_id, self.rules, self.betting, self.rules_fingerprint = game_id, rules, betting, rules_fingerprint
        self.hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
        """``(H, k)``: the private hands, in the order of every public tree of the game."""
        self.masks = hand_masks(self.hands)
        self._layout = block_layout(betting, self.hands.shape[0])
        self._identity = np.arange(self.hands.shape[0], dtype=np.int32)[None, :]

    def entry(self, node: int) -> int:
        """The entry of the last round's subtree that holds betting ``node``: the node a deal node leads to."""
        betting = self.betting
        if int(betting.round[node]) != self.rules.num_rounds - 1:
            raise InputError(f"betting node {node} ({betting.sequence[node]!r}) is not in the last round")
        while int(betting.kind[int(betting.parent[node])]) != DEAL:
            node = int(betting.parent[node])
        return node

    def tree(self, entry: int, board: Sequence[int] | NDArray[np.int64], reach: FloatArray) -> PublicTree:
        """The subgame at the last round's entry ``entry`` on the whole ``board`` (the cards of every round, in deal
        order), both players' ranges ``reach`` ``(2, H)`` at its root (module docstring)."""
        started = time.perf_counter()
        rules, betting = self.rules, self.betting
        if self.entry(entry) != entry:
            raise InputError(f"betting node {entry} ({betting.sequence[entry]!r}) does not start the last round")
        cards = [int(card) for card in board]
        if len(cards) != sum(rules.board_cards) or len(set(cards)) != len(cards):
            raise InputError(f"a board of {self.game_id} is {sum(rules.board_cards)} distinct cards, not {cards}")
        if not all(0 <= card < rules.deck_size for card in cards):
            raise InputError(f"a card of {self.game_id} is from 0 to {rules.deck_size - 1}, not one of {cards}")
        count = self.hands.shape[0]
        if reach.shape != (2, count) or not np.isfinite(reach).all() or (reach < 0).any():
            raise InputError(
                f"the ranges at a subgame's entry are (2, {count}) reaches of at least 0, not {reach.shape}"
            )
        node_offset, range_size, node_slot = self._layout
        order, ranked = showdowns(rules, self.hands, self.masks, [tuple(sorted(cards))])
        ends = np.cumsum(rules.board_cards)
        rounds = zip(ends[1:], rules.board_cards[1:], strict=True)  # each later round's cards, as Segments.boards
        history = tuple(tuple(cards[end - size : end]) for end, size in rounds)
        one = np.zeros(1, dtype=np.int64)
        segments = Segments(
            round_start=np.array([0] * rules.num_rounds + [1], dtype=np.int64),
            range_index=np.array([betting.range_of(entry)], dtype=np.int64),
            parent_slot=np.full(1, -1, dtype=np.int64),
            board_mask=np.array([sum(1 << card for card in cards)], dtype=np.uint64),
            weight=np.ones(1),
            board_id=one,
            group=one,
            offset=one,
            first_slot=one,
            boards=(history,),
        )
        return PublicTree(
            game_string=self.game_id.removeprefix(PREFIX),
            rules_fingerprint=self.rules_fingerprint,
            build_seconds=time.perf_counter() - started,
            rules=rules,
            betting=betting,
            canonical=False,
            hands=self.hands,
            masks=self.masks,
            segments=segments,
            node_offset=node_offset,
            range_size=range_size,
            node_slot=node_slot,
            slot_children=np.zeros(1, dtype=np.int64),
            showdown_order=order,
            showdown_rank=ranked,
            permutations=self._identity,
            group_start=np.array([0, 1], dtype=np.int64),
            group_members=np.zeros(1, dtype=np.int64),
            chance=1.0,
            root_reach=reach.astype(np.float64, copy=True),
        )
