r"""Compiled passes over the public tree's segments, with vectors over private hands.

One pass serves one player :math:`i` (the *evaluated* player) and one of three modes:

* ``EVALUATE``: :math:`v(I) = \sum_a \sigma(I,a)\,q(I,a)` at :math:`i`'s nodes, the value of a profile;
* ``BEST_RESPONSE``: :math:`v(I) = \max_a q(I,a)`, the value of :math:`i`'s best response to
  :math:`\sigma_{-i}` (Johanson et al. 2011: the max is taken per hand, over vectors);
* ``UPDATE``: CFR's update of :math:`i` at iteration :math:`t`
  (:mod:`~cfr_agents.solvers.full_tree`'s arithmetic, per hand): :math:`r = q(I,a) - v(I)` (0 within
  :data:`~cfr_agents.solvers.update_rule.TIE` of a tie),
  :math:`R^t = d_t(R^{t-1} + r)` (or :math:`d_{t-1}(R^{t-1}) + r`, ``discount_first``),
  :math:`C^t = C^{t-1} + w_t\,\pi_i(I)\,\sigma^t(I,\cdot)`, :math:`\sigma^{t+1} \propto [R^t + m]^+`.

A segment's pass walks its betting range forward, computing both players' reach vectors
:math:`\pi_p(h)` at every node (:math:`\pi_p` times :math:`\sigma(I,a)` along an action of :math:`p`),
then backward, computing :math:`i`'s counterfactual values :math:`q(h)`, sums over the opponent's
hands :math:`h'` that share no card with :math:`h` (card removal):

* fold, folder :math:`f`: :math:`q(h) = u_i\,M\,\big(T - C_{c_1} - C_{c_2} + \pi_{-i}(h)\big)` with
  :math:`T = \sum_{h'} \pi_{-i}(h')`, :math:`C_c` the sum over the hands holding card :math:`c`,
  :math:`u_i = -s_i` if :math:`f = i`, else :math:`s_f` (the folder's stake), and :math:`M` the number of
  ways to deal the later rounds' boards, which the fold leaves undealt;
* showdown at stake :math:`s`: :math:`q(h) = s\,(W(h) - L(h))`, the opponent's reach on weaker and on
  stronger hands, found in :math:`O(H)` by one sweep over the hands sorted by strength that keeps the
  same per-card sums for the hands passed;
* deal nodes: the next round's values, summed over its boards by :func:`gather`.

With one hole card the corrections are :math:`T - \pi_{-i}(h)` and the per-card sums drop out.
Loops only, no recursion (Numba's cache cannot reload recursive functions).
"""

from __future__ import annotations

from typing import Final, TypeAlias

import numpy as np
from numba import njit, prange

from cfr_agents.solvers.hand_sweeps import fold, showdown
from cfr_agents.solvers.update_rule import TIE

EVALUATE: Final = 0
BEST_RESPONSE: Final = 1
UPDATE: Final = 2

Tree: TypeAlias = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
]  # fmt: skip
"""The public tree's arrays as the kernels read them (:func:`cfr_agents.public_tree.engine.tree_arrays`):
``(kind, player, first_child, num_children, spent, ranges, node_offset, node_slot, hands, masks,
segment_range, parent_slot, board_mask, board_id, first_slot, offset, showdown_order, showdown_rank,
permutations, boards_after, root_reach)``; ``boards_after[node]`` counts the ways to deal the boards of the rounds
after the node's, by which a fold's value is multiplied (values are sums over complete deals); ``root_reach``
``(2, H)``: both players' reaches at the root segment's entry (ones for a whole game, a subgame's ranges)."""
Strategies: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""``(strategy_0, strategy_1, offset, permutation, offset_1, permutation_1)``: player ``p``'s strategy at a segment's
node is read from ``strategy_p[offset_p[s] + node_offset + a * H + permutation_p[s][h]]`` (``offset``/
``permutation`` are player 0's), so a suit-canonical strategy serves every isomorphic board."""
Update: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray]
"""``(regret, cumulative, rule)``: the solver's arrays (laid out as a strategy) and
``rule = (positive, negative, previous_positive, previous_negative, weight, predictive, discount_first)``."""


@njit(cache=True, error_model="numpy", parallel=True)
def run_round(
    first: int,
    stop: int,
    player: int,
    mode: int,
    backward: bool,
    tree: Tree,
    strategies: Strategies,
    update: Update,
    deal_reach: np.ndarray,
    deal_value: np.ndarray,
    entry_value: np.ndarray,
    response: np.ndarray,
    scaled: int,
    entry_scale: np.ndarray,
) -> None:
    """The pass of segments ``first`` to ``stop - 1`` (one round's), in parallel: forward only (storing the
    reach at deal nodes in ``deal_reach``), or forward and backward (``entry_value[s]``: the values at entry).
    In ``BEST_RESPONSE`` mode a ``response`` as long as a strategy receives the best response, a pure strategy
    laid out over the tree's own segments (the first best action where several tie); pass one number to skip it.
    Player ``scaled``'s reach at each segment's entry is multiplied by ``entry_scale[s]`` (a player's choice to
    enter the segment, :mod:`~cfr_agents.public_tree.safe_endgame`); ``scaled`` -1 leaves the reaches as they are."""
    for s in prange(first, stop):
        run_segment(
            s, player, mode, backward, tree, strategies, update, deal_reach, deal_value, entry_value, response,
            scaled, entry_scale,
        )  # fmt: skip


@njit(cache=True, error_model="numpy")
def run_segment(
    s: int,
    player: int,
    mode: int,
    backward: bool,
    tree: Tree,
    strategies: Strategies,
    update: Update,
    deal_reach: np.ndarray,
    deal_value: np.ndarray,
    entry_value: np.ndarray,
    response: np.ndarray,
    scaled: int,
    entry_scale: np.ndarray,
) -> None:
    """The pass of segment ``s`` (:func:`run_round`'s), on the calling thread: what a tree of one segment runs
    (:mod:`~cfr_agents.public_tree.subgame`), without waking the thread pool."""
    kind, acting, first_child, num_children, spent, ranges, node_offset, node_slot, hands, masks = tree[:10]
    segment_range, parent_slot, board_mask, board_id, first_slot = tree[10:15]
    order, ranks, perms, boards_after, root_reach = tree[16], tree[17], tree[18], tree[19], tree[20]
    strategy_0, strategy_1, offset_0, permutation_0, offset_1, permutation_1 = strategies
    num_hands = hands.shape[0]
    start, end = ranges[segment_range[s], 0], ranges[segment_range[s], 1]
    count = end - start
    valid = np.empty(num_hands)
    for h in range(num_hands):
        valid[h] = 1.0 if (masks[h] & board_mask[s]) == 0 else 0.0
    reach = np.empty((count, 2, num_hands))
    if parent_slot[s] < 0:
        for p in range(2):
            for h in range(num_hands):
                reach[0, p, h] = root_reach[p, h] * valid[h]
    else:
        for p in range(2):
            for h in range(num_hands):
                reach[0, p, h] = deal_reach[parent_slot[s], p, h] * valid[h]
    if scaled >= 0:
        for h in range(num_hands):
            reach[0, scaled, h] *= entry_scale[s, h]
    for local in range(count):  # forward, parents before children
        node = start + local
        if kind[node] == 0:
            p = acting[node]
            strategy = strategy_0 if p == 0 else strategy_1
            base = (offset_0[s] if p == 0 else offset_1[s]) + node_offset[node]
            permutation = perms[permutation_0[s] if p == 0 else permutation_1[s]]
            for a in range(num_children[node]):
                child = first_child[node] + a - start
                row = base + a * num_hands
                for h in range(num_hands):
                    reach[child, p, h] = reach[local, p, h] * strategy[row + permutation[h]]
                    reach[child, 1 - p, h] = reach[local, 1 - p, h]
        elif kind[node] == 3:
            slot = first_slot[s] + node_slot[node]
            for p in range(2):
                for h in range(num_hands):
                    deal_reach[slot, p, h] = reach[local, p, h]
    if not backward:
        return
    value = np.empty((count, num_hands))
    opponent = 1 - player
    card_sum = np.zeros(64)
    for local in range(count - 1, -1, -1):  # backward, children before parents
        node = start + local
        out = value[local]
        if kind[node] == 1:  # fold
            folder = acting[node]
            payoff = (-spent[node, folder] if folder == player else spent[node, folder]) * boards_after[node]
            fold(reach[local, opponent], hands, card_sum, payoff, valid, out)
        elif kind[node] == 2:  # showdown
            b = board_id[s]
            showdown(reach[local, opponent], hands, order[b], ranks[b], card_sum, spent[node, 0], valid, out)
        elif kind[node] == 3:
            slot = first_slot[s] + node_slot[node]
            for h in range(num_hands):
                out[h] = deal_value[slot, h]
        elif acting[node] != player:
            out[:] = 0.0
            for a in range(num_children[node]):
                child = first_child[node] + a - start
                for h in range(num_hands):
                    out[h] += value[child, h]
        else:
            _own_node(s, node, local, start, player, mode, tree, strategies, update, reach, value, response)
    for h in range(num_hands):
        entry_value[s, h] = value[0, h]


@njit(cache=True, error_model="numpy")
def _own_node(
    s: int,
    node: int,
    local: int,
    start: int,
    player: int,
    mode: int,
    tree: Tree,
    strategies: Strategies,
    update: Update,
    reach: np.ndarray,
    value: np.ndarray,
    response: np.ndarray,
) -> None:
    first_child, num_children, node_offset, hands, perms = tree[2], tree[3], tree[6], tree[8], tree[18]
    num_hands = hands.shape[0]
    n = num_children[node]
    first = first_child[node] - start
    out = value[local]
    if mode == 1:  # v(h) = max_a q(h, a)
        own = tree[15][s] + node_offset[node]
        for h in range(num_hands):
            best, chosen = value[first, h], 0
            for a in range(1, n):
                if value[first + a, h] > best:
                    best, chosen = value[first + a, h], a
            out[h] = best
            if response.shape[0] > 1:
                for a in range(n):
                    response[own + a * num_hands + h] = 1.0 if a == chosen else 0.0
        return
    strategy = strategies[0] if player == 0 else strategies[1]
    base = (strategies[2][s] if player == 0 else strategies[4][s]) + node_offset[node]
    permutation = perms[strategies[3][s] if player == 0 else strategies[5][s]]
    out[:] = 0.0
    for a in range(n):  # v(h) = sum_a sigma(h, a) q(h, a)
        row = base + a * num_hands
        for h in range(num_hands):
            out[h] += strategy[row + permutation[h]] * value[first + a, h]
    if mode == 0:
        return
    regret, cumulative, rule = update
    positive, negative, previous_positive, previous_negative, weight = rule[0], rule[1], rule[2], rule[3], rule[4]
    predictive, discount_first = rule[5] != 0.0, rule[6] != 0.0
    sigma = strategy
    for h in range(num_hands):
        own = weight * reach[local, player, h]
        total = 0.0
        tie = TIE * abs(out[h])
        for a in range(n):
            index = base + a * num_hands + h
            cumulative[index] += own * sigma[index]  # C^t += w_t pi_i(I) sigma^t(I, a)
            instant = value[first + a, h] - out[h]  # r(I, a) = q - v, 0 within rounding of a tie
            instant = instant if abs(instant) > tie else 0.0
            r = regret[index]
            if discount_first:  # R^t = d_{t-1}(R^{t-1}) + r^t; match on d_t(R^t)
                r = r * (previous_positive if r >= 0.0 else previous_negative) + instant
                regret[index] = r
                r *= positive if r >= 0.0 else negative
            else:  # R^t = d_t(R^{t-1} + r^t)
                r += instant
                r *= positive if r >= 0.0 else negative
                regret[index] = r
            target = r + instant if predictive else r  # [R^t + m^{t+1}]^+
            target = target if target > 0.0 else 0.0
            sigma[index] = target
            total += target
        for a in range(n):  # sigma^{t+1} by regret matching, uniform where no regret is positive
            index = base + a * num_hands + h
            sigma[index] = sigma[index] / total if total > 0.0 else 1.0 / n


@njit(cache=True, error_model="numpy", parallel=True)
def gather(
    first_slot: int,
    stop_slot: int,
    slot_children: np.ndarray,
    weight: np.ndarray,
    group: np.ndarray,
    parent_group: np.ndarray,
    group_start: np.ndarray,
    group_members: np.ndarray,
    permutations: np.ndarray,
    entry_value: np.ndarray,
    deal_value: np.ndarray,
) -> None:
    """Each deal slot's value, :math:`V(h) = \\frac{1}{|G|}\\sum_{g \\in G} U(P_g^{-1} h)` with
    :math:`U = \\sum_b w_b v_b` over its child segments :math:`b` and :math:`G` the slot's stabilizer
    (``parent_group[slot]``); without suit isomorphism :math:`G` is the identity and every :math:`w_b = 1`."""
    num_hands = entry_value.shape[1]
    for slot in prange(first_slot, stop_slot):
        total = np.zeros(num_hands)
        for child in range(slot_children[slot], slot_children[slot + 1]):
            w = weight[child]
            for h in range(num_hands):
                total[h] += w * entry_value[child, h]
        g = parent_group[slot]
        members = group_members[group_start[g] : group_start[g + 1]]
        scale = 1.0 / members.shape[0]
        for h in range(num_hands):
            deal_value[slot, h] = 0.0
        for m in members:
            permutation = permutations[m]
            for h in range(num_hands):  # V(P_g h) += U(h) / |G|
                deal_value[slot, permutation[h]] += total[h] * scale


@njit(cache=True, error_model="numpy", parallel=True)
def normalise(weights: np.ndarray, out: np.ndarray, tree: Tree) -> None:
    """``out``: each (node, hand)'s ``weights`` over the node's actions divided by their sum, uniform where the
    sum is 0 (an average strategy from its cumulative weights :math:`C^T`)."""
    kind, num_children, ranges, node_offset, hands, segment_range, offset = (
        tree[0], tree[3], tree[5], tree[6], tree[8], tree[10], tree[15]
    )  # fmt: skip
    num_hands = hands.shape[0]
    for s in prange(segment_range.shape[0]):
        for node in range(ranges[segment_range[s], 0], ranges[segment_range[s], 1]):
            if kind[node] != 0:
                continue
            n = num_children[node]
            base = offset[s] + node_offset[node]
            for h in range(num_hands):
                total = 0.0
                for a in range(n):
                    total += weights[base + a * num_hands + h]
                for a in range(n):
                    index = base + a * num_hands + h
                    out[index] = weights[index] / total if total > 0.0 else 1.0 / n
