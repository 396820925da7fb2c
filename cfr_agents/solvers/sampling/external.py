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
    CHANCE,
    CODE,
    COUNT,
    FIRST,
    INDEX,
    STRATIFIED,
    TERMINAL,
    WEIGHT,
    KernelOptions,
    KernelState,
    KernelTree,
    add_average,
    begin_iteration,
    chance_child,
    frames,
    sample,
    stratified_child,
    traversal_uniform,
    update_regrets,
)

SIMPLE, FULL = 0, 1


@njit(cache=True, error_model="numpy", inline="always")
def _traverse(
    player: int,
    nodes: np.ndarray,
    values: np.ndarray,
    cdf: np.ndarray,
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
    frame_u: np.ndarray,
    instant: np.ndarray,
    u: float,
    chance_draws: int,
) -> None:
    """One traversal for ``player``, iteratively: a frame per traverser node on the path; ``u`` starts
    its chance draws (:func:`~.kernel_support.stratified_child`)."""
    mine = 1 + player
    depth = 0
    node = 0
    while True:
        while True:  # descend to a terminal, pushing a frame at each of the traverser's nodes
            code = nodes[node, CODE]
            if code == TERMINAL:
                value = values[node, player]
                break
            if code == CHANCE:
                if chance_draws == STRATIFIED:
                    node, u = stratified_child(nodes, cdf, node, u)
                else:
                    node = chance_child(nodes, cdf, node, rng)
                continue
            if code != mine:
                infoset, n = nodes[node, INDEX], nodes[node, COUNT]
                sigma = current[infoset]
                if averaging == SIMPLE:
                    add_average(cumulative, infoset, n, scalars[WEIGHT], sigma)  # C += w_t sigma^t
                node = nodes[node, FIRST] + sample(sigma, n, rng)
                continue
            frame_node[depth] = node
            frame_next[depth] = 0
            frame_u[depth] = u
            depth += 1
            node = nodes[node, FIRST]
        while depth > 0:  # ascend: hand the value to the deepest frame with children left
            d = depth - 1
            frame_value[d, frame_next[d]] = value
            frame_next[d] += 1
            parent = frame_node[d]
            n = nodes[parent, COUNT]
            if frame_next[d] < n:
                node = nodes[parent, FIRST] + frame_next[d]
                u = frame_u[d]  # every branch of a frame meets the same chance outcomes
                break
            infoset = nodes[parent, INDEX]
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
def _full_average(nodes: np.ndarray, current: np.ndarray, cumulative: np.ndarray, weight: float) -> None:
    r"""One pass in node order (parents precede children): :math:`C \mathrel{+}= w_t\,\pi_p(h)\,\sigma^t(I,\cdot)`."""
    reach = np.ones((nodes.shape[0], 2))
    for node in range(nodes.shape[0]):
        code = nodes[node, CODE]
        if code == TERMINAL:
            continue
        first, n = nodes[node, FIRST], nodes[node, COUNT]
        if code == CHANCE:
            for child in range(first, first + n):
                reach[child, 0] = reach[node, 0]
                reach[child, 1] = reach[node, 1]
            continue
        infoset = nodes[node, INDEX]
        p = code - 1
        sigma = current[infoset]
        add_average(cumulative, infoset, n, weight * reach[node, p], sigma)
        for a in range(n):
            reach[first + a, p] = reach[node, p] * sigma[a]
            reach[first + a, 1 - p] = reach[node, 1 - p]


@njit(cache=True, error_model="numpy")
def run(iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions) -> None:
    """``iterations`` iterations: a traversal for player 0, then for player 1 (then the full average)."""
    nodes, values, cdf, depth_bound = tree
    regret, current, cumulative, log_at, weight_at, scalars, rng, shift = state
    alpha, beta, gamma, averaging, _epsilon, chance_draws = options
    width = regret.shape[1]
    frame_node, frame_next, frame_value, frame_u = frames(depth_bound, width)
    instant = np.empty(width)
    for _ in range(iterations):
        begin_iteration(scalars, alpha, beta, gamma, cumulative, weight_at)
        for player in range(2):
            u = traversal_uniform(shift, player, scalars, chance_draws)
            _traverse(
                player,
                nodes,
                values,
                cdf,
                regret,
                current,
                cumulative,
                log_at,
                scalars,
                rng,
                alpha,
                beta,
                averaging,
                frame_node,
                frame_next,
                frame_value,
                frame_u,
                instant,
                u,
                chance_draws,
            )
        if averaging == FULL:
            _full_average(nodes, current, cumulative, scalars[WEIGHT])
