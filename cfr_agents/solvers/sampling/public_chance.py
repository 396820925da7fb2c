r"""Public chance sampling (Johanson, Bard, Lanctot, Gibson & Bowling, AAMAS 2012) on an abstract hold'em game.

Each iteration draws one board -- every public card of every round -- and walks the whole betting tree once per
player with *vectors* over the private hands :math:`h` that miss the board: every hand of both players, every action.
On the betting tree's nodes in order (parents first), the reaches are :math:`\pi_p(d, h)`, with
:math:`\pi_p(d a, h) = \pi_p(d, h)\,\sigma^t(\operatorname{row}(d, b_r(h)), a)` at ``p``'s node :math:`d` of round
:math:`r` (:mod:`~cfr_agents.abstract_game`: the row of :math:`d` and the bucket of :math:`h` on the board); then,
backward, traverser :math:`i`'s counterfactual values over the opponent's hands :math:`h'` that share no card with
:math:`h` or the board, by the public-tree kernels' sweeps (:mod:`cfr_agents.solvers.hand_sweeps`):

* fold: :math:`\tilde v(z, h) = u_i(z) \sum_{h' \cap h = \emptyset} \pi_{-i}(z, h')`;
* showdown at stake :math:`s`: :math:`\tilde v(z, h) = s\,(W(h) - L(h))`, the opponent's reach on the weaker and
  on the stronger hands;
* :math:`\tilde v(d, h) = \sum_a \tilde v(d a, h)` at the opponent's nodes,
  :math:`\tilde v(d, h) = \sum_a \sigma^t(d, h, a)\, \tilde v(d a, h)` at :math:`i`'s.

At :math:`i`'s node :math:`d`, each row's sampled regret sums its hands':
:math:`\tilde r^t(\operatorname{row}, a) = \sum_{h \to \operatorname{row}} \big(\tilde v(d a, h) - \tilde v(d, h)\big)`,
and the update rule applies to it once (:func:`~.kernel_support.update_regrets`); the average takes
:math:`C(\operatorname{row}, \cdot) \mathrel{+}= w_t \big(\sum_{h \to \operatorname{row}} \pi_i(d, h)\big)
\sigma^t(\operatorname{row}, \cdot)` first. Every (hand, hand, board) deal is met with the same probability, so
:math:`E[\tilde r^t] = c\, r^t`, with :math:`c` the number of deals over the number of boards :math:`\binom{n}{m}`
(:math:`r^t` weighs each deal by its probability): unbiased up to one constant, which regret matching and the
normalised average do not see. With a lossless abstraction an iteration costs
:math:`O(N H)` for :math:`N` betting nodes and :math:`H` hands, against external sampling's one deal a traversal.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from adapters.holdem.cards import rank_hands
from cfr_agents.abstraction import bucket_of
from cfr_agents.solvers.hand_sweeps import fold, showdown
from cfr_agents.solvers.sampling.deals import HoldemDeal
from cfr_agents.solvers.sampling.kernel_support import (
    CHANCE,
    CODE,
    COUNT,
    FIRST,
    INDEX,
    PLAYER_0,
    TERMINAL,
    WEIGHT,
    KernelOptions,
    KernelState,
    KernelTree,
    add_average,
    begin_iteration,
    uniform,
    update_regrets,
)


@njit(cache=True, error_model="numpy")
def run(iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions) -> None:
    """``iterations`` iterations: a board, then a vector traversal for each player in turn."""
    regret, current, cumulative, _log_at, weight_at, scalars, rng, _shift = state
    alpha, beta, gamma = options[0], options[1], options[2]
    nodes, values, _cdf, _depth, deal = tree
    hands = deal.hands
    count, num_hands = nodes.shape[0], hands.shape[0]
    reach = np.empty((count, 2, num_hands))
    value = np.empty((count, num_hands))
    bucket = np.zeros((deal.board_end.shape[0], num_hands), dtype=np.int64)
    live = np.empty(num_hands)
    widest = int(deal.tables.num_buckets.max())
    scratch = (
        np.zeros((widest, regret.shape[1])),
        np.zeros(widest),
        np.zeros(widest, dtype=np.bool_),
        np.empty(num_hands, dtype=np.int64),
    )
    card_sum = np.empty(64)
    for _ in range(iterations):
        begin_iteration(scalars, alpha, beta, gamma, cumulative, weight_at)
        order, ranks = _draw_board(deal, rng, live, bucket)
        for player in range(2):
            _forward(nodes, current, deal, bucket, live, reach)
            for node in range(count - 1, -1, -1):  # children before parents
                code, first, n = nodes[node, CODE], nodes[node, FIRST], nodes[node, COUNT]
                out = value[node]
                opponent = reach[node, 1 - player]
                if code == TERMINAL and deal.showdown[node]:
                    showdown(opponent, hands, order, ranks, card_sum, values[node, player], live, out)
                elif code == TERMINAL:
                    fold(opponent, hands, card_sum, values[node, player], live, out)
                elif code == CHANCE:  # a deal node: its cards are on the board already
                    out[:] = value[first]
                elif code != PLAYER_0 + player:
                    out[:] = 0.0
                    for child in range(first, first + n):
                        out += value[child]
                else:
                    _own_node(node, nodes, deal, bucket, live, reach[node, player], value, state, alpha, beta, scratch)


@njit(cache=True, error_model="numpy")
def _own_node(
    node: int,
    nodes: np.ndarray,
    deal: HoldemDeal,
    bucket: np.ndarray,
    live: np.ndarray,
    own: np.ndarray,
    value: np.ndarray,
    state: KernelState,
    alpha: float,
    beta: float,
    scratch: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    r"""The traverser's node ``node`` (reach vector ``own``): :math:`\tilde v(d, h)` into ``value[node]``, then each
    row it reaches gets the average's increment and its summed sampled regrets, once. ``scratch``: a row's summed
    regrets and reach by bucket, whether a bucket is met, and the buckets met."""
    regret, current, cumulative, log_at, _weight_at, scalars = state[:6]
    gathered, mass, seen, touched = scratch
    first, n = nodes[node, FIRST], nodes[node, COUNT]
    r, base = deal.round[node], nodes[node, INDEX]
    out = value[node]
    count_touched = 0
    for h in range(live.shape[0]):
        if live[h] == 0.0:
            out[h] = 0.0
            continue
        b = bucket[r, h]
        v = 0.0
        for a in range(n):
            v += current[base + b, a] * value[first + a, h]  # v(d, h) = sum_a sigma q(da, h)
        out[h] = v
        if not seen[b]:
            seen[b] = True
            touched[count_touched] = b
            count_touched += 1
        for a in range(n):
            gathered[b, a] += value[first + a, h] - v  # r~(row, a) += q(da, h) - v(d, h)
        mass[b] += own[h]
    for j in range(count_touched):
        b = touched[j]
        row = base + b
        add_average(cumulative, row, n, scalars[WEIGHT] * mass[b], current[row])  # C += w pi_i sigma^t
        update_regrets(regret, log_at, current, row, n, gathered[b], scalars, alpha, beta)
        gathered[b, :] = 0.0
        mass[b] = 0.0
        seen[b] = False


@njit(cache=True, error_model="numpy")
def _forward(
    nodes: np.ndarray, current: np.ndarray, deal: HoldemDeal, bucket: np.ndarray, live: np.ndarray, reach: np.ndarray
) -> None:
    r"""Both players' reach vectors at every node, parents first: :math:`\pi_p(da, h) = \pi_p(d, h)\,
    \sigma^t(\operatorname{row}(d, b_r(h)), a)` at ``p``'s nodes, 0 for the hands that meet the board."""
    for p in range(2):
        reach[0, p] = live
    for node in range(nodes.shape[0]):
        code, first, n = nodes[node, CODE], nodes[node, FIRST], nodes[node, COUNT]
        if code == TERMINAL:
            continue
        if code == CHANCE:
            reach[first] = reach[node]
            continue
        p, r, base = code - PLAYER_0, deal.round[node], nodes[node, INDEX]
        for a in range(n):
            child = first + a
            reach[child, 1 - p] = reach[node, 1 - p]
            for h in range(live.shape[0]):
                reach[child, p, h] = reach[node, p, h] * current[base + bucket[r, h], a] if live[h] != 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def _draw_board(
    deal: HoldemDeal, rng: np.ndarray, live: np.ndarray, bucket: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""Deal every board card (a partial Fisher-Yates shuffle of the ordered deck), then each hand's
    :math:`b_r(h)` in every round and whether it misses the board (``live``); the hands in order of showdown
    strength on the full board and their ranks in that order."""
    deck, hands, k = deal.deck, deal.hands, deal.num_hole
    n = deck.shape[0]
    size = deal.board_end[deal.board_end.shape[0] - 1]
    for i in range(n):
        deck[i] = i
    board = np.empty(size, dtype=np.int64)
    dealt = np.int64(0)
    for i in range(size):
        j = i + int(uniform(rng) * (n - i))
        deck[i], deck[j] = deck[j], deck[i]
        board[i] = deck[i]
        dealt |= np.int64(1) << deck[i]
    for h in range(hands.shape[0]):
        live[h] = 1.0 if (deal.hand_masks[h] & dealt) == 0 else 0.0
        if live[h] == 0.0:
            continue
        for r in range(deal.board_end.shape[0]):
            bucket[r, h] = bucket_of(deal.tables, r, hands[h, :k], board[: deal.board_end[r]])
    strength = rank_hands(hands, board, deal.num_suits)
    order = np.argsort(strength)
    return order, strength[order]
