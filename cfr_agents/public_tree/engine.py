r"""Passes over a whole :class:`~cfr_agents.public_tree.tree.PublicTree`: values, best responses and CFR updates.

A pass for player :math:`i` runs the rounds forward (each round's segments in parallel, storing the
reach vectors at deal nodes), then backward from the last round: each round's segments compute their
values given their deal nodes' values, and :func:`~cfr_agents.public_tree.kernels.gather` sums them
over the boards into the deal nodes of the round before. At the root,
:math:`v_i = c \sum_h q_i(\text{root}, h)` with :math:`c` the probability of one deal
(:attr:`~cfr_agents.public_tree.tree.PublicTree.chance`).

Strategies are flat arrays laid out as the tree's blocks (:attr:`PublicTree.size` numbers):
``strategy[offset[s] + node_offset[node] + a * H + h]`` is :math:`\sigma(I, a)` at hand ``h`` of segment
``s``'s decision node ``node``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from adapters.holdem import canonical_board, card_permutation, suit_permutations
from cfr_agents.public_tree.kernels import (
    BEST_RESPONSE,
    EVALUATE,
    Strategies,
    Tree,
    Update,
    gather,
    normalise,
    run_round,
    run_segment,
)
from cfr_agents.public_tree.tree import PublicTree

FloatArray = NDArray[np.float64]


Source: TypeAlias = Callable[[int, int], Strategies]
"""A profile made on demand: the strategies of segments ``first`` to ``stop - 1`` of one round (other segments'
entries are not read)."""
CHUNK_SEGMENTS = 2048
"""Segments of the last round scored at a time when the strategies come from a :data:`Source`."""


def chunked(tree: PublicTree, chunk: Callable[[int, int], FloatArray]) -> Source:
    """A :data:`Source` both players read from: ``chunk(first, stop)`` gives segments ``first`` to ``stop - 1``'s
    entries, segment ``s``'s at ``offset[s] - offset[first]``, over the tree's own segments (as
    :meth:`cfr_agents.public_tree.neural.Materialiser.chunk` does)."""
    offset = tree.segments.offset
    identity = np.zeros(tree.segments.count, dtype=np.int64)

    def source(first: int, stop: int) -> Strategies:
        array = chunk(first, stop)
        shifted = offset - offset[first]
        return (array, array, shifted, identity, shifted, identity)

    return source


@dataclass(frozen=True)
class Placement:
    """Where one player's strategy is read for each segment: an offset into its array and a row of
    :attr:`PublicTree.permutations` applied to the hands (the identity, row 0, for a strategy over the
    tree's own segments)."""

    offset: NDArray[np.int64]
    permutation: NDArray[np.int64]


def own_placement(tree: PublicTree) -> Placement:
    """A strategy over the tree's own segments."""
    return Placement(tree.segments.offset, np.zeros(tree.segments.count, dtype=np.int64))


def tree_arrays(tree: PublicTree) -> Tree:
    """The arrays the kernels read, in :data:`~cfr_agents.public_tree.kernels.Tree`'s order."""
    betting, segments = tree.betting, tree.segments
    return (
        betting.kind.astype(np.int64),
        betting.player.astype(np.int64),
        betting.first_child.astype(np.int64),
        betting.num_children.astype(np.int64),
        betting.spent,
        betting.ranges.astype(np.int64),
        tree.node_offset,
        tree.node_slot,
        tree.hands,
        tree.masks,
        segments.range_index,
        segments.parent_slot,
        segments.board_mask,
        segments.board_id,
        segments.first_slot,
        segments.offset,
        tree.showdown_order,
        tree.showdown_rank,
        tree.permutations,
        boards_after(tree),
        np.ones((2, tree.num_hands)) if tree.root_reach is None else tree.root_reach,
    )


def boards_after(tree: PublicTree) -> NDArray[np.float64]:
    """Per betting node, the number of ways to deal the boards of the later rounds."""
    rules = tree.rules
    left = rules.deck_size - 2 * rules.num_hole_cards - np.cumsum(rules.board_cards)
    later = []
    for r in range(rules.num_rounds):
        ways = 1.0
        for q in range(r + 1, rules.num_rounds):  # round q's board from what rounds r+1..q-1 left
            ways *= math.comb(int(left[r]) - sum(rules.board_cards[r + 1 : q]), rules.board_cards[q])
        later.append(ways)
    return np.array(later)[tree.betting.round.astype(np.int64)]


class Engine:
    """Scratch vectors and the round-by-round driver of the kernels for one public tree."""

    def __init__(self, tree: PublicTree) -> None:
        self.tree = tree
        self.arrays = tree_arrays(tree)
        hands, segments = tree.num_hands, tree.segments
        self._deal_reach = np.zeros((max(tree.num_slots, 1), 2, hands))
        self._deal_value = np.zeros((max(tree.num_slots, 1), hands))
        self._entry_value = np.zeros((segments.count, hands))
        owner = np.repeat(np.arange(segments.count), np.diff(np.append(segments.first_slot, tree.num_slots)))
        self._slot_group = segments.group[owner] if tree.num_slots else np.zeros(1, dtype=np.int64)
        self._no_update: Update = (np.zeros(1), np.zeros(1), np.zeros(7))
        self._no_response = np.zeros(1)
        self._no_scale = np.ones((1, 1))

    @property
    def entry_values(self) -> FloatArray:
        """``(segments, hands)``: each segment's values at its entry in the last pass (:meth:`root_values`), of the
        player that pass evaluated; read-only, overwritten by the next pass."""
        view = self._entry_value.view()
        view.flags.writeable = False
        return view

    def root_values(
        self,
        player: int,
        mode: int,
        strategies: Strategies | Source,
        update: Update | None = None,
        response: FloatArray | None = None,
        *,
        chunk: int = CHUNK_SEGMENTS,
        frozen_rounds: int = 0,
        entry_scale: tuple[int, FloatArray] | None = None,
    ) -> FloatArray:
        """:math:`q_i(\\text{root}, h)` for every hand ``h``: sums over deals, not yet times the chance :math:`c`.
        In ``BEST_RESPONSE`` mode, ``response`` (a strategy array) receives the best response at ``player``'s nodes.

        ``strategies`` is a profile over the whole tree, or a :data:`Source` asked for the segments of each round
        before it runs, the last round ``chunk`` segments at a time: a strategy too large to hold whole (a
        network's on every board) is then made and scored a chunk at a time.

        The rounds before ``frozen_rounds`` keep the profile's strategies whatever ``mode``: their values are the
        profile's evaluated (no update, no best response there), so an update or a best response acts in the later
        rounds only. ``entry_scale``, ``(p, scale)``: player ``p``'s reach at each segment's entry is multiplied by
        ``scale[s]`` (``(segments, hands)``), in the forward passes of the segments and the rounds after them."""
        rounds = self.tree.segments.round_start
        last = rounds.shape[0] - 2
        step = update if update is not None else self._no_update
        out = response if response is not None else self._no_response
        source = strategies if callable(strategies) else (lambda first, stop: strategies)
        scaled, scale = entry_scale if entry_scale is not None else (-1, self._no_scale)
        if scaled >= 0 and scale.shape != self._entry_value.shape:
            raise ValueError(f"an entry scale is {self._entry_value.shape}, not {scale.shape}")
        state = (self._deal_reach, self._deal_value, self._entry_value, out, scaled, scale)

        def run(first: int, stop: int, backward: bool, round_: int) -> None:
            acting = mode if round_ >= frozen_rounds else EVALUATE
            if stop - first == 1:
                run_segment(first, player, acting, backward, self.arrays, source(first, stop), step, *state)
            elif stop > first:
                run_round(first, stop, player, acting, backward, self.arrays, source(first, stop), step, *state)

        for r in range(last):
            run(int(rounds[r]), int(rounds[r + 1]), False, r)
        segments = self.tree.segments
        for r in range(last, -1, -1):
            first, stop = int(rounds[r]), int(rounds[r + 1])
            pieces = range(first, stop, chunk) if r == last and callable(strategies) else (first,)
            for start in pieces:
                run(start, stop if len(pieces) == 1 else min(start + chunk, stop), True, r)
            if r > 0 and segments.first_slot[rounds[r]] > segments.first_slot[rounds[r - 1]]:
                gather(
                    int(segments.first_slot[rounds[r - 1]]),
                    int(segments.first_slot[rounds[r]]),
                    self.tree.slot_children,
                    segments.weight,
                    segments.group,
                    self._slot_group,
                    self.tree.group_start,
                    self.tree.group_members,
                    self.tree.permutations,
                    self._entry_value,
                    self._deal_value,
                )
        values: FloatArray = self._entry_value[0].copy()
        return values

    def value(self, player: int, strategies: Strategies | Source) -> float:
        """Player ``player``'s expected payoff under the profile, in chips."""
        return self.tree.chance * float(self.root_values(player, EVALUATE, strategies).sum())

    def best_response_value(
        self, player: int, strategies: Strategies | Source, response: FloatArray | None = None
    ) -> float:
        """The expected payoff of ``player``'s best response to the other's strategy, in chips; ``response``, if
        given, receives that best response (:meth:`root_values`)."""
        return self.tree.chance * float(self.root_values(player, BEST_RESPONSE, strategies, None, response).sum())


def profile(
    strategy_0: FloatArray, strategy_1: FloatArray, placement_0: Placement, placement_1: Placement
) -> Strategies:
    """Player 0 plays ``strategy_0`` where it acts, player 1 ``strategy_1``."""
    return (
        strategy_0,
        strategy_1,
        placement_0.offset,
        placement_0.permutation,
        placement_1.offset,
        placement_1.permutation,
    )


def normalised(tree: PublicTree, weights: FloatArray, arrays: Tree | None = None) -> FloatArray:
    """Each (node, hand)'s ``weights`` over its actions divided by their sum; uniform where the sum is 0
    (:func:`~cfr_agents.public_tree.kernels.normalise`; ``arrays``: the tree's, if at hand)."""
    out = np.empty_like(weights)
    normalise(weights, out, tree_arrays(tree) if arrays is None else arrays)
    return out


def uniform_strategy(tree: PublicTree) -> FloatArray:
    """Every legal action with the same probability, at every node and hand."""
    children = tree.betting.num_children
    return laid_out(tree, lambda node: np.full(int(children[node]) * tree.num_hands, 1.0 / int(children[node])))


def laid_out(tree: PublicTree, block: Callable[[int], NDArray[Any]]) -> NDArray[Any]:
    """An array laid out as a strategy over ``tree``'s own segments, holding ``block(node)`` (``num_children[node]
    * H`` numbers, action by action, hand by hand) at each decision node of every segment."""
    betting, segments = tree.betting, tree.segments
    templates = {}
    for index in np.unique(segments.range_index).tolist():  # the ranges some segment walks (a subgame's: one)
        start, stop = betting.ranges[index]
        parts = {node: block(node) for node in range(start, stop) if tree.node_offset[node] >= 0}
        kind = np.result_type(*parts.values()) if parts else np.float64
        template = np.zeros(int(tree.range_size[index]), dtype=kind)
        for node, part in parts.items():
            template[tree.node_offset[node] : tree.node_offset[node] + part.shape[0]] = part
        templates[index] = template
    out = np.zeros(tree.size, dtype=np.result_type(*templates.values()))
    for offset, index in zip(segments.offset, segments.range_index, strict=True):
        out[offset : offset + templates[index].shape[0]] = templates[index]
    return out


def canonical_placement(tree: PublicTree, canonical: PublicTree) -> Placement:
    """Where a strategy over ``canonical``'s suit-canonical segments is read for each segment of ``tree`` (the same
    game, every board its own segment): board history :math:`b` is mapped to its canonical history
    :math:`g(b)` round by round, and hand :math:`h` reads the canonical segment's entry for :math:`P_g h`."""
    if not canonical.canonical or tree.game_string != canonical.game_string:
        raise ValueError("a canonical placement needs the same game's tree with suit-canonical boards")
    rules = tree.rules
    suits = suit_permutations(rules.num_suits)
    row_of = {tuple(int(x) for x in perm): row for row, perm in enumerate(suits)}
    segment_of = {
        (int(canonical.segments.range_index[s]), canonical.segments.boards[s]): s
        for s in range(canonical.segments.count)
    }
    offset = np.empty(tree.segments.count, dtype=np.int64)
    permutation = np.empty(tree.segments.count, dtype=np.int64)
    for s in range(tree.segments.count):
        mapped: list[tuple[int, ...]] = []
        composed = np.arange(rules.num_suits)  # g, as suit -> image
        for board in tree.segments.boards[s]:
            cards = card_permutation(composed, rules.num_ranks, rules.num_suits)[list(board)]
            representative, perm = canonical_board(cards, rules.num_ranks, rules.num_suits, mapped)
            mapped.append(tuple(int(c) for c in representative))
            composed = perm[composed]
        target = segment_of[(int(tree.segments.range_index[s]), tuple(mapped))]
        offset[s] = canonical.segments.offset[target]
        permutation[s] = row_of[tuple(int(x) for x in composed)]
    return Placement(offset, permutation)


def canonical_random_strategy(tree: PublicTree, rng: np.random.Generator) -> FloatArray:
    """A random suit-canonical strategy: at each node of each segment, one draw per orbit of hands under the
    segment's stabilizer (isomorphic information states share it), normalised over the actions."""
    strategy = rng.random(tree.size)
    segments, betting, hands = tree.segments, tree.betting, tree.num_hands
    for s in range(segments.count):
        group = tree.group_members[tree.group_start[segments.group[s]] : tree.group_start[segments.group[s] + 1]]
        representative = tree.permutations[group].min(axis=0)  # the smallest image of each hand under the group
        start, stop = betting.ranges[segments.range_index[s]]
        for node in range(start, stop):
            if tree.node_offset[node] < 0:
                continue
            n = int(betting.num_children[node])
            base = segments.offset[s] + tree.node_offset[node]
            block = strategy[base : base + n * hands].reshape(n, hands)
            block[:] = block[:, representative]
            block /= block.sum(axis=0, keepdims=True)
    return strategy
