r"""Chance-sampled CFR (Zinkevich et al. 2007; Lanctot et al. 2009), one traversal per player.

Each traversal samples one outcome at every chance node it meets (in poker: one deal) and walks
every action of both players below it, as RLCard's ``CFRAgent`` and the classic Kuhn tutorials do.
For traverser :math:`i`, with reaches :math:`\pi_i(h)` and :math:`\pi_{-i}(h)` of the players only
(chance is sampled, so its probability cancels), bottom-up:

* :math:`\tilde v(h) = \sum_a \sigma^t(I,a)\,\tilde v(ha)` at every decision node,
  :math:`\tilde v(z) = u_i(z)`;
* at :math:`i`'s nodes :math:`\tilde r^t(I,a) = \pi^{\sigma}_{-i}(h)\,\big(\tilde v(ha) - \tilde v(h)\big)`,
  summed over the histories of :math:`I` consistent with the sample; a history is kept with
  probability :math:`\pi_c(h)`, so :math:`E[\tilde r^t(I,a)] = r^t(I,a)`.

Averaging (the papers'): at :math:`i`'s nodes, :math:`C(I,\cdot) \mathrel{+}= w_t\,\pi^{\sigma}_i(h)\,
\sigma^t(I,\cdot)`, the full-tree update restricted to the sampled outcome; each infoset is kept
with a probability that does not change over iterations, so the normalised average is unbiased,
with the variance of one chance sample per iteration.
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
    stratified_child,
    traversal_uniform,
    update_regrets,
)

REACH = 0


@njit(cache=True, error_model="numpy")
def run(iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions) -> None:
    """``iterations`` iterations: a traversal for player 0, then for player 1."""
    nodes, values, cdf, depth_bound = tree
    regret, current, cumulative, log_at, weight_at, scalars, rng, shift = state
    alpha, beta, gamma, _averaging, _epsilon, chance_draws = options
    width = regret.shape[1]
    frame_node, frame_next, frame_value, frame_u = frames(depth_bound, width)
    frame_reach = np.empty((depth_bound, 2))  # pi_0(h), pi_1(h)
    reach = np.empty(2)
    instant = np.empty(width)
    for _ in range(iterations):
        begin_iteration(scalars, alpha, beta, gamma, cumulative, weight_at)
        for player in range(2):
            depth = 0
            node = 0
            reach[0] = reach[1] = 1.0
            u = traversal_uniform(shift, player, scalars, chance_draws)
            while True:
                while True:  # descend to a terminal, a frame per decision node
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
                    frame_node[depth] = node
                    frame_next[depth] = 0
                    frame_u[depth] = u
                    frame_reach[depth, 0] = reach[0]
                    frame_reach[depth, 1] = reach[1]
                    reach[code - 1] *= current[nodes[node, INDEX], 0]
                    depth += 1
                    node = nodes[node, FIRST]
                while depth > 0:  # ascend: hand the value to the deepest frame with children left
                    d = depth - 1
                    frame_value[d, frame_next[d]] = value
                    frame_next[d] += 1
                    parent = frame_node[d]
                    infoset, n = nodes[parent, INDEX], nodes[parent, COUNT]
                    acting = nodes[parent, CODE] - 1
                    reach[0] = frame_reach[d, 0]
                    reach[1] = frame_reach[d, 1]
                    if frame_next[d] < n:
                        reach[acting] *= current[infoset, frame_next[d]]
                        node = nodes[parent, FIRST] + frame_next[d]
                        u = frame_u[d]
                        break
                    value = 0.0
                    for a in range(n):
                        value += current[infoset, a] * frame_value[d, a]  # v(h) = sum_a sigma(I,a) v(ha)
                    if acting == player:
                        for a in range(n):
                            instant[a] = reach[1 - player] * (frame_value[d, a] - value)  # pi_-i (v(ha) - v(h))
                        add_average(cumulative, infoset, n, scalars[WEIGHT] * reach[player], current[infoset])
                        update_regrets(regret, log_at, current, infoset, n, instant, scalars, alpha, beta)
                    depth -= 1
                else:
                    break
