r"""External sampling (Lanctot, Waugh, Zinkevich & Bowling 2009), one traversal per player.

For traverser :math:`i`, chance and the opponent are sampled -- chance by its probabilities, the
opponent by :math:`\sigma^t_{-i}` -- and every action of :math:`i` is walked. With
:math:`\tilde v(h)` the sampled value of :math:`h` for :math:`i`:

* at :math:`i`'s node in :math:`I`: :math:`\tilde v(I) = \sum_a \sigma^t(I,a)\,\tilde v(Ia)` and
  :math:`\tilde r^t(I,a) = \tilde v(Ia) - \tilde v(I)`; the probability of reaching :math:`I` is
  :math:`\pi^{\sigma}_{-i}(I)`, the counterfactual weight itself, so
  :math:`E[\tilde r^t(I,a)] = r^t(I,a)`;
* the update rule then applies to :math:`\tilde r^t` (:func:`~.kernel_support.update_regrets`).

Averaging (``averaging``):

* ``SIMPLE`` (OpenSpiel's default): at each opponent node the traversal passes,
  :math:`C(I,\cdot) \mathrel{+}= w_t\,\sigma^t(I,\cdot)`. The traverser's actions are all walked, so
  a history :math:`h \in I` is passed with probability :math:`\pi_c(h)\,\pi^{\sigma}_{p(I)}(h)` and
  the expected update is :math:`w_t\,\pi^{\sigma}_{p(I)}(I)\,\sigma^t(I,\cdot)\sum_{h \in I}\pi_c(h)`:
  the full-tree update times a per-infoset constant that normalising the average cancels (unbiased
  up to the ratio of two unbiased sums). Its variance is that of sampling chance and the opponent's
  own actions.
* ``FULL``: after both traversals, one pass over the whole tree adds
  :math:`w_t\,\pi^{\sigma}_{p}(h)\,\sigma^t(I,\cdot)` at every node :math:`h` (OpenSpiel's
  ``AverageType.FULL``): no sampling error, at the cost of a full-tree pass per iteration.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cfr_agents.solvers.sampling.kernel_support import (
    KIND_CHANCE,
    KIND_TERMINAL,
    WEIGHT,
    add_average,
    begin_iteration,
    sample,
    sample_chance,
    update_regrets,
)

SIMPLE, FULL = 0, 1


@njit(cache=True, error_model="numpy")
def _traverse(
    player: int,
    kind: np.ndarray,
    node_infoset: np.ndarray,
    node_terminal: np.ndarray,
    child_start: np.ndarray,
    child_node: np.ndarray,
    child_cdf: np.ndarray,
    infoset_player: np.ndarray,
    num_actions: np.ndarray,
    utility: np.ndarray,
    regret: np.ndarray,
    current: np.ndarray,
    cumulative: np.ndarray,
    log_at: np.ndarray,
    scalars: np.ndarray,
    rng: np.ndarray,
    alpha: float,
    beta: float,
    averaging: int,
    frame_node: np.ndarray,
    frame_next: np.ndarray,
    frame_value: np.ndarray,
    instant: np.ndarray,
) -> None:
    """One traversal for ``player``, iteratively: a frame per traverser node on the path."""
    depth = 0
    node = 0
    while True:
        while True:  # descend to a terminal, pushing a frame at each of the traverser's nodes
            k = kind[node]
            if k == KIND_TERMINAL:
                value = utility[player, node_terminal[node]]
                break
            if k == KIND_CHANCE:
                node = child_node[sample_chance(child_cdf, child_start[node], child_start[node + 1], rng)]
                continue
            infoset = node_infoset[node]
            n = num_actions[infoset]
            if infoset_player[infoset] != player:
                sigma = current[infoset]
                if averaging == SIMPLE:
                    add_average(cumulative, infoset, n, scalars[WEIGHT], sigma)  # C += w_t sigma^t
                node = child_node[child_start[node] + sample(sigma, n, rng)]
                continue
            frame_node[depth] = node
            frame_next[depth] = 0
            depth += 1
            node = child_node[child_start[node]]
        while depth > 0:  # ascend: hand the value to the deepest frame with children left
            d = depth - 1
            frame_value[d, frame_next[d]] = value
            frame_next[d] += 1
            parent = frame_node[d]
            infoset = node_infoset[parent]
            n = num_actions[infoset]
            if frame_next[d] < n:
                node = child_node[child_start[parent] + frame_next[d]]
                break
            value = 0.0
            for a in range(n):
                value += current[infoset, a] * frame_value[d, a]  # v(I) = sum_a sigma(I,a) v(Ia)
            for a in range(n):
                instant[a] = frame_value[d, a] - value  # r~(I,a) = v(Ia) - v(I)
            update_regrets(regret, log_at, current, infoset, n, instant, scalars, alpha, beta)
            depth -= 1
        else:
            return


@njit(cache=True, error_model="numpy")
def _full_average(
    kind: np.ndarray,
    node_infoset: np.ndarray,
    child_start: np.ndarray,
    child_node: np.ndarray,
    infoset_player: np.ndarray,
    num_actions: np.ndarray,
    current: np.ndarray,
    cumulative: np.ndarray,
    weight: float,
) -> None:
    r"""One pass in node order (parents precede children): :math:`C \mathrel{+}= w_t\,\pi_p(h)\,\sigma^t(I,\cdot)`."""
    reach = np.ones((kind.shape[0], 2))
    for node in range(kind.shape[0]):
        if kind[node] == KIND_TERMINAL:
            continue
        first = child_start[node]
        if kind[node] == KIND_CHANCE:
            for edge in range(first, child_start[node + 1]):
                reach[child_node[edge], 0] = reach[node, 0]
                reach[child_node[edge], 1] = reach[node, 1]
            continue
        infoset = node_infoset[node]
        p = infoset_player[infoset]
        n = num_actions[infoset]
        sigma = current[infoset]
        add_average(cumulative, infoset, n, weight * reach[node, p], sigma)
        for a in range(n):
            child = child_node[first + a]
            reach[child, p] = reach[node, p] * sigma[a]
            reach[child, 1 - p] = reach[node, 1 - p]


@njit(cache=True, error_model="numpy")
def run(
    iterations: int,
    kind: np.ndarray,
    node_infoset: np.ndarray,
    node_terminal: np.ndarray,
    child_start: np.ndarray,
    child_node: np.ndarray,
    child_cdf: np.ndarray,
    infoset_player: np.ndarray,
    num_actions: np.ndarray,
    utility: np.ndarray,
    depth_bound: int,
    regret: np.ndarray,
    current: np.ndarray,
    cumulative: np.ndarray,
    log_at: np.ndarray,
    weight_at: np.ndarray,
    scalars: np.ndarray,
    rng: np.ndarray,
    alpha: float,
    beta: float,
    gamma: float,
    averaging: int,
    epsilon: float,
) -> None:
    """``iterations`` iterations: a traversal for player 0, then for player 1 (then the full average)."""
    width = regret.shape[1]
    frame_node = np.empty(depth_bound, np.int64)
    frame_next = np.empty(depth_bound, np.int64)
    frame_value = np.empty((depth_bound, width))
    instant = np.empty(width)
    for _ in range(iterations):
        begin_iteration(scalars, alpha, beta, gamma, cumulative, weight_at)
        for player in range(2):
            _traverse(player, kind, node_infoset, node_terminal, child_start, child_node, child_cdf,
                      infoset_player, num_actions, utility, regret, current, cumulative, log_at, scalars, rng,
                      alpha, beta, averaging, frame_node, frame_next, frame_value, instant)  # fmt: skip
        if averaging == FULL:
            _full_average(kind, node_infoset, child_start, child_node, infoset_player, num_actions, current,
                          cumulative, scalars[WEIGHT])  # fmt: skip
