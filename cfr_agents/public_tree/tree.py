r"""The public tree of a two-player limit hold'em game: betting sequences x boards, with vectors over hands.

A node of the public tree is what both players see: a betting sequence and the board cards dealt so
far. What one player knows besides is a private hand, so every quantity at a public node is a
vector over the :math:`H` private hands (:math:`\binom{n}{k}` for :math:`k` hole cards from a deck of
:math:`n`): reach probabilities, values, regrets, strategies. This is the layout of Johanson, Waugh,
Bowling & Zinkevich (IJCAI 2011) for best response, and of Cepheus, DeepStack and postflop-solver for CFR.

The tree is stored as *segments*: one segment is the betting of one round under one board history,
a contiguous range of the :class:`~adapters.holdem.betting.BettingTree` (every segment of a round
that starts at the same betting node shares the range). A segment's deal nodes lead to the segments of
the next round, one per board of that round's cards.

With ``canonical=True`` the boards of each round are taken up to suit isomorphism: one segment per
orbit of boards under the suit permutations that fix the boards dealt before, weighted by the orbit's
size :math:`w_b`. For a strategy that is the same on isomorphic infosets (a *suit-canonical*
strategy), the value of a deal node is then, with :math:`G` the deal node's stabilizer and
:math:`P_g` a suit permutation's action on hands,

.. math:: V(h) = \frac{1}{|G|} \sum_{g \in G} U(P_g^{-1} h), \qquad U = \sum_b w_b\, v_b ,

the sum over all boards regrouped by orbit. With ``canonical=False`` every board is its own segment.

Chance: every complete deal (two hands and every round's board, as sets) is equally likely, with
probability :attr:`PublicTree.chance` :math:`= 1/\big(\binom{n}{k}\binom{n-k}{k}\prod_r \binom{n_r}{b_r}\big)`;
values in the kernels are sums over deals and are multiplied by it once at the root.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyspiel
from numpy.typing import NDArray

from adapters.holdem import (
    board_orbits,
    card_permutation,
    hand_masks,
    hand_permutation,
    private_hands,
    rank_hands,
    stabilizer,
    suit_permutations,
)
from adapters.holdem.betting import DEAL, DECISION, BettingTree, betting_tree
from adapters.holdem.rules import LimitRules, limit_rules
from adapters.inputs import UnsupportedGameError
from adapters.openspiel import PREFIX, OpenSpielGame

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class Segments:
    """The segments of the public tree, round by round (segment ``s`` of round ``r`` has
    ``round_start[r] <= s < round_start[r + 1]``)."""

    round_start: IntArray
    """``(R + 1,)``: the first segment of each round."""
    range_index: IntArray
    """The betting range (:attr:`BettingTree.ranges`) each segment walks."""
    parent_slot: IntArray
    """The deal slot (a parent segment's deal node) a segment hangs under; -1 for the root segment."""
    board_mask: NDArray[np.uint64]
    """The bit mask of every board card dealt up to the segment's round."""
    weight: NDArray[np.float64]
    """How many boards the segment stands for: the orbit's size (1 without suit isomorphism)."""
    board_id: IntArray
    """The row of :attr:`PublicTree.showdown_order` for the segment's whole board (last round), -1 before."""
    group: IntArray
    """The segment's suit stabilizer, a row of :attr:`PublicTree.group_start`."""
    offset: IntArray
    """Where the segment's decision nodes start in a strategy array (:attr:`PublicTree.size`)."""
    first_slot: IntArray
    """The segment's first deal slot; its deal nodes take consecutive slots, in betting-node order."""
    boards: tuple[tuple[tuple[int, ...], ...], ...]
    """Each segment's board cards, round by round."""

    @property
    def count(self) -> int:
        return int(self.range_index.shape[0])


@dataclass(frozen=True)
class PublicTree:
    """A two-player limit hold'em game as a public tree with vectors over private hands (module docstring)."""

    game_string: str
    """The ``universal_poker`` game string, without ``openspiel:``."""
    rules_fingerprint: str
    """The game's rules fingerprint, as :class:`~adapters.base.Game` computes it."""
    build_seconds: float
    rules: LimitRules
    betting: BettingTree
    canonical: bool
    hands: IntArray
    """``(H, k)``: each private hand's card ids, increasing; rows in lexicographic order."""
    masks: NDArray[np.uint64]
    """Each hand's card bit mask."""
    segments: Segments
    node_offset: IntArray
    """Per betting node: where a decision node's block starts within its segment's block (``-1`` elsewhere);
    a block holds ``num_children * H`` numbers, action by action."""
    range_size: IntArray
    """Per betting range: the size of a segment's block."""
    node_slot: IntArray
    """Per betting node: a deal node's index among its range's deal nodes (``-1`` elsewhere)."""
    slot_children: IntArray
    """``(slots + 1,)``: deal slot ``j``'s child segments are ``slot_children[j]`` to ``slot_children[j + 1]``."""
    showdown_order: NDArray[np.int32]
    """``(B, H)``: per final board, the hands from weakest to strongest (hands that meet the board first)."""
    showdown_rank: IntArray
    """``(B, H)``: the strengths in that order (-1 for hands that meet the board)."""
    permutations: NDArray[np.int32]
    """``(P, H)``: each suit permutation's action on hands, :math:`h \\mapsto P_g h`."""
    group_start: IntArray
    group_members: IntArray
    """Group ``j`` is the permutations ``group_members[group_start[j]:group_start[j + 1]]``."""
    chance: float
    """The probability of each complete deal (module docstring)."""
    root_reach: NDArray[np.float64] | None = None
    """``(2, H)``: both players' reaches at the root segment's entry, for a tree of one subgame
    (:mod:`~cfr_agents.public_tree.subgame`); ``None`` for a whole game, whose root every hand reaches."""

    units = "chips"

    @property
    def game_id(self) -> str:
        """The game's id, ``openspiel:<game string>``."""
        return PREFIX + self.game_string

    @cached_property
    def _counts(self) -> tuple[int, int, int]:
        """Public decision nodes, terminals, and information states (decision nodes times the hands the
        board leaves), summed over segments."""
        betting, segments = self.betting, self.segments
        decisions = np.array([(betting.kind[a:b] == DECISION).sum() for a, b in betting.ranges])
        terminals = np.array([((betting.kind[a:b] == 1) | (betting.kind[a:b] == 2)).sum() for a, b in betting.ranges])
        board_cards = np.array([sum(len(board) for board in history) for history in segments.boards])
        rules = self.rules
        hands_left = np.array([math.comb(rules.deck_size - c, rules.num_hole_cards) for c in range(rules.deck_size)])
        per_segment = decisions[segments.range_index]
        return (
            int(per_segment.sum()),
            int(terminals[segments.range_index].sum()),
            int((per_segment * hands_left[board_cards]).sum()),
        )

    @property
    def num_decision_nodes(self) -> int:
        """Public decision nodes (a betting node under a board history)."""
        return self._counts[0]

    @property
    def num_terminals(self) -> int:
        """Public fold and showdown nodes."""
        return self._counts[1]

    @property
    def num_infosets(self) -> int:
        """Information states the strategy covers: public decision nodes times the hands their board leaves
        (suit-canonical ones only, on a tree with suit-canonical boards)."""
        return self._counts[2]

    @property
    def num_hands(self) -> int:
        return int(self.hands.shape[0])

    @property
    def size(self) -> int:
        """Numbers in a strategy array: every segment's decision nodes, ``num_children * H`` each."""
        last = self.segments.count - 1
        return int(self.segments.offset[last] + self.range_size[self.segments.range_index[last]])

    @property
    def num_slots(self) -> int:
        return int(self.slot_children.shape[0] - 1)

    @cached_property
    def num_public_nodes(self) -> int:
        """Betting nodes summed over the segments that walk them."""
        lengths = self.betting.ranges[:, 1] - self.betting.ranges[:, 0]
        return int(lengths[self.segments.range_index].sum())

    @cached_property
    def game_nodes(self) -> tuple[int, int]:
        """``(nodes, decision nodes)`` of the game counted OpenSpiel's way (:func:`game_nodes`)."""
        return game_nodes(self.rules, self.betting)

    def summary(self) -> str:
        return (
            f"{self.game_id}: {self.num_public_nodes:,} public nodes in {self.segments.count:,} segments, "
            f"{self.num_hands:,} hands, {self.size:,} strategy entries"
            + (" (suit-canonical boards)" if self.canonical else "")
            + f"; built in {self.build_seconds:.2f} s"
        )


MAX_SEGMENTS = 10_000_000
"""The most segments a public tree is built with (Flop Hold'em over every flop has 154,701); heads-up limit
hold'em's would have billions."""


def segments_at_least(betting: BettingTree, rules: LimitRules) -> float:
    """A lower bound on the public tree's segments, before it is built: each round's betting ranges times the
    boards dealt up to it, divided by the suit permutations (no orbit of boards is larger)."""
    permutations = math.factorial(rules.num_suits)
    left, boards, total = rules.deck_size - 2 * rules.num_hole_cards, 1.0, 0.0
    entries = betting.ranges[:, 0]
    rounds = betting.round[entries]
    for r in range(rules.num_rounds):
        boards *= math.comb(left, rules.board_cards[r])
        left -= rules.board_cards[r]
        total += int(np.count_nonzero(rounds == r)) * max(boards / permutations, 1.0)
    return total


def build_public_tree(game_string: str, *, canonical: bool = True) -> PublicTree:
    """The public tree of a two-player limit ``universal_poker`` game (``game_string`` without ``openspiel:``)."""
    started = time.perf_counter()
    game = pyspiel.load_game(game_string)
    rules = limit_rules(game)
    if rules is None:
        raise UnsupportedGameError(f"{game_string!r} is not a two-player limit universal_poker game")
    betting = betting_tree(game)
    at_least = segments_at_least(betting, rules)
    if at_least > MAX_SEGMENTS:
        raise UnsupportedGameError(
            f"the public tree of {game_string!r} would have at least {at_least:.2g} segments (betting lines x "
            f"boards), more than the {MAX_SEGMENTS:,} one machine holds"
        )
    hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    masks = hand_masks(hands)
    node_offset, range_size, node_slot = block_layout(betting, hands.shape[0])
    segments, slot_children, final_boards, groups = _segments(betting, rules, canonical, range_size)
    order, ranked = showdowns(rules, hands, masks, final_boards)
    permutations = np.stack(
        [
            hand_permutation(hands, card_permutation(perm, rules.num_ranks, rules.num_suits)).astype(np.int32)
            for perm in suit_permutations(rules.num_suits)
        ]
    )
    group_start = np.zeros(len(groups) + 1, dtype=np.int64)
    group_start[1:] = np.cumsum([len(group) for group in groups])
    members = np.array([member for group in groups for member in group], dtype=np.int64)
    return PublicTree(
        game_string=game_string,
        rules_fingerprint=OpenSpielGame(game_string).rules_fingerprint,
        build_seconds=time.perf_counter() - started,
        rules=rules,
        betting=betting,
        canonical=canonical,
        hands=hands,
        masks=masks,
        segments=segments,
        node_offset=node_offset,
        range_size=range_size,
        node_slot=node_slot,
        slot_children=slot_children,
        showdown_order=order,
        showdown_rank=ranked,
        permutations=permutations,
        group_start=group_start,
        group_members=members,
        chance=1.0 / _deals(rules),
    )


def game_nodes(rules: LimitRules, betting: BettingTree) -> tuple[int, int]:
    """``(nodes, decision nodes)`` of a limit hold'em game counted OpenSpiel's way: every history, with the cards
    dealt one by one and in order (chance nodes included in ``nodes``)."""
    n = rules.deck_size

    def orders(dealt: int) -> int:  # ordered deals of `dealt` cards
        return math.perm(n, dealt)

    dealt = [2 * rules.num_hole_cards + sum(rules.board_cards[: r + 1]) for r in range(rules.num_rounds)]
    nodes = sum(orders(j) for j in range(2 * rules.num_hole_cards))  # the hole cards' chance nodes
    decisions = 0
    for node in range(betting.num_nodes):
        cards = dealt[betting.round[node]]
        if betting.kind[node] == DEAL:  # the deal node is the first of the next board's chance nodes
            nodes += sum(orders(j) for j in range(cards, dealt[betting.round[node] + 1]))
        else:
            nodes += orders(cards)
            decisions += orders(cards) if betting.kind[node] == DECISION else 0
    return nodes, decisions


def _deals(rules: LimitRules) -> float:
    """Complete deals: both hands and every round's board, as sets."""
    n, k = rules.deck_size, rules.num_hole_cards
    count = math.comb(n, k) * math.comb(n - k, k)
    left = n - 2 * k
    for cards in rules.board_cards:
        count *= math.comb(left, cards)
        left -= cards
    return float(count)


def block_layout(betting: BettingTree, num_hands: int) -> tuple[IntArray, IntArray, IntArray]:
    """Per betting node, where a decision node's block starts within its range's (:attr:`PublicTree.node_offset`);
    per range, its block's size; per node, a deal node's slot among its range's deal nodes."""
    node_offset = np.full(betting.num_nodes, -1, dtype=np.int64)
    node_slot = np.full(betting.num_nodes, -1, dtype=np.int64)
    range_size = np.zeros(betting.ranges.shape[0], dtype=np.int64)
    for index, (start, stop) in enumerate(betting.ranges):
        size = slots = 0
        for node in range(start, stop):
            if betting.kind[node] == DECISION:
                node_offset[node] = size
                size += int(betting.num_children[node]) * num_hands
            elif betting.kind[node] == DEAL:
                node_slot[node] = slots
                slots += 1
        range_size[index] = size
    return node_offset, range_size, node_slot


def _segments(
    betting: BettingTree, rules: LimitRules, canonical: bool, range_size: IntArray
) -> tuple[Segments, IntArray, list[tuple[int, ...]], list[tuple[int, ...]]]:
    """Segments round by round; the final boards (for showdowns) and the distinct stabilizer groups."""
    all_perms = [tuple(int(x) for x in perm) for perm in suit_permutations(rules.num_suits)]
    perm_index = {perm: index for index, perm in enumerate(all_perms)}
    group_ids: dict[tuple[int, ...], int] = {}
    final_ids: dict[tuple[int, ...], int] = {}

    def group_of(history: tuple[tuple[int, ...], ...]) -> int:
        if canonical:
            members = tuple(
                perm_index[tuple(int(x) for x in perm)]
                for perm in stabilizer(history, rules.num_ranks, rules.num_suits)
            )
        else:
            members = (0,)
        return group_ids.setdefault(members, len(group_ids))

    def final_of(history: tuple[tuple[int, ...], ...]) -> int:
        cards = tuple(sorted(card for board in history for card in board))
        return final_ids.setdefault(cards, len(final_ids))

    last_round = rules.num_rounds - 1
    # One row per segment, appended round by round: (range index, parent slot, board history, weight).
    rows: list[tuple[int, int, tuple[tuple[int, ...], ...], float]] = [(0, -1, (), 1.0)]
    first_slot = [0]
    slot_children = [1]  # slot j's children are rows slot_children[j] .. slot_children[j + 1] - 1
    round_start = [0, 1]
    level = [0]
    for round_ in range(last_round):
        next_level: list[int] = []
        for s in level:
            walked, _, history, _ = rows[s]
            first_slot[s] = len(slot_children) - 1
            start, stop = betting.ranges[walked]
            boards, weights = _next_boards(rules, round_ + 1, history, canonical)
            for node in range(start, stop):
                if betting.kind[node] != DEAL:
                    continue
                entry = betting.range_of(int(betting.first_child[node]))
                for board, weight in zip(boards, weights, strict=True):
                    next_level.append(len(rows))
                    rows.append((entry, len(slot_children) - 1, (*history, board), float(weight)))
                    first_slot.append(0)
                slot_children.append(len(rows))
        round_start.append(len(rows))
        level = next_level
    for s in level:
        first_slot[s] = len(slot_children) - 1
    count = len(rows)
    range_index = np.array([row[0] for row in rows], dtype=np.int64)
    offsets = np.zeros(count, dtype=np.int64)
    offsets[1:] = np.cumsum(range_size[range_index])[:-1]
    segments = Segments(
        round_start=np.array(round_start, dtype=np.int64),
        range_index=range_index,
        parent_slot=np.array([row[1] for row in rows], dtype=np.int64),
        board_mask=np.array([sum(1 << card for board in row[2] for card in board) for row in rows], dtype=np.uint64),
        weight=np.array([row[3] for row in rows], dtype=np.float64),
        board_id=np.array([final_of(row[2]) if len(row[2]) == last_round else -1 for row in rows], dtype=np.int64),
        group=np.array([group_of(row[2]) for row in rows], dtype=np.int64),
        offset=offsets,
        first_slot=np.array(first_slot, dtype=np.int64),
        boards=tuple(row[2] for row in rows),
    )
    finals = sorted(final_ids, key=final_ids.__getitem__)
    groups = sorted(group_ids, key=group_ids.__getitem__)
    return segments, np.array(slot_children, dtype=np.int64), finals, groups


def _next_boards(
    rules: LimitRules, round_: int, history: tuple[tuple[int, ...], ...], canonical: bool
) -> tuple[list[tuple[int, ...]], list[int]]:
    """The boards of round ``round_``'s cards after ``history``: every one, or one per suit orbit with its size."""
    size = rules.board_cards[round_]
    if canonical:
        representatives, weights = board_orbits(rules.num_ranks, rules.num_suits, size, history)
        return [tuple(int(c) for c in row) for row in representatives], [int(w) for w in weights]
    used = {card for board in history for card in board}
    left = [card for card in range(rules.deck_size) if card not in used]
    boards = list(itertools.combinations(left, size))
    return boards, [1] * len(boards)


def showdowns(
    rules: LimitRules, hands: IntArray, masks: NDArray[np.uint64], finals: list[tuple[int, ...]]
) -> tuple[NDArray[np.int32], IntArray]:
    """Per final board, the hands sorted by strength (hands that meet the board first, at strength -1)."""
    count = max(len(finals), 1)
    order = np.zeros((count, hands.shape[0]), dtype=np.int32)
    ranked = np.zeros((count, hands.shape[0]), dtype=np.int64)
    for index, board in enumerate(finals):
        cards = np.array(board, dtype=np.int64)
        strength = rank_hands(hands, cards, rules.num_suits).astype(np.int64)
        mask = np.uint64(sum(1 << c for c in board))
        strength[(masks & mask) != 0] = -1
        sorted_hands = np.argsort(strength, kind="stable")
        order[index] = sorted_hands
        ranked[index] = strength[sorted_hands]
    return order, ranked
