r"""Pure CFR (Gibson 2014), as Wolff & Tan's "Solving Leduc Hold'em" describes it.

Each traversal samples a pure strategy profile: one action :math:`a^*_I \sim \sigma^t(I,\cdot)` per
infoset (drawn the first time the traversal meets :math:`I`, then kept) and one outcome per chance
node. For traverser :math:`i` every action at :math:`i`'s nodes is walked against that profile, and
the value of a node is the value of its sampled action:

* :math:`\tilde v(h) = \tilde v(ha^*_I)` at every decision node, :math:`\tilde v(z) = u_i(z)`;
* at :math:`i`'s nodes :math:`\tilde r^t(I,a) = \tilde v(Ia) - \tilde v(Ia^*_I)`: the regret of each
  action against the action actually taken. Since :math:`E[\tilde v(Ia^*)] = \sum_a \sigma^t(I,a)\,
  \tilde v(Ia)` and :math:`I` is reached with probability :math:`\pi^{\sigma}_{-i}(I)`,
  :math:`E[\tilde r^t(I,a)] = r^t(I,a)`.

Averaging (the paper's): the opponent's sampled actions are counted,
:math:`C(I,a^*_I) \mathrel{+}= w_t` at each opponent infoset the traversal meets -- an unbiased
sample of :math:`\sigma^t(I,\cdot)` drawn with probability proportional to the opponent's own reach
times chance (a per-infoset constant), with the variance of a single draw. With ``--algo cfr`` the
counts are plain (PureCFR); with ``--algo cfr+`` regrets are floored at 0 and iteration :math:`t`
counts :math:`t` times (PureCFR+).
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
    ITERATION,
    STRATIFIED,
    TERMINAL,
    WEIGHT,
    KernelOptions,
    KernelState,
    KernelTree,
    begin_iteration,
    chance_child,
    frames,
    sample,
    stratified_child,
    traversal_uniform,
    update_regrets,
)

SAMPLED = 0


@njit(cache=True, error_model="numpy")
def _pure_action(
    infoset: int,
    n: int,
    stamp: float,
    current: np.ndarray,
    drawn_at: np.ndarray,
    drawn: np.ndarray,
    rng: np.ndarray,
) -> tuple[int, bool]:
    r""":math:`a^*_I`, drawn from :math:`\sigma^t(I,\cdot)` once per traversal (``stamp``); and whether
    this call drew it."""
    if drawn_at[infoset] != stamp:
        drawn[infoset] = sample(current[infoset], n, rng)
        drawn_at[infoset] = stamp
        return int(drawn[infoset]), True
    return int(drawn[infoset]), False


@njit(cache=True, error_model="numpy")
def run(iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions) -> None:
    """``iterations`` iterations: a traversal for player 0, then for player 1."""
    nodes, values, cdf, depth_bound = tree
    regret, current, cumulative, log_at, weight_at, scalars, rng, shift = state
    alpha, beta, gamma, _averaging, _epsilon, chance_draws = options
    width = regret.shape[1]
    frame_node, frame_next, frame_value, frame_u = frames(depth_bound, width)
    drawn_at = np.full(regret.shape[0], -1.0)
    drawn = np.zeros(regret.shape[0], np.int64)
    instant = np.empty(width)
    for _ in range(iterations):
        begin_iteration(scalars, alpha, beta, gamma, cumulative, weight_at)
        for player in range(2):
            mine = 1 + player
            stamp = 2.0 * scalars[ITERATION] + player
            depth = 0
            node = 0
            u = traversal_uniform(shift, player, scalars, chance_draws)
            while True:
                while True:  # descend along the sampled profile, a frame per traverser node
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
                    infoset, n = nodes[node, INDEX], nodes[node, COUNT]
                    a, first_draw = _pure_action(infoset, n, stamp, current, drawn_at, drawn, rng)
                    if code != mine:
                        if first_draw:  # count the opponent's sampled action once per traversal: C += w_t
                            cumulative[infoset, a] += scalars[WEIGHT]
                        node = nodes[node, FIRST] + a
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
                        u = frame_u[d]
                        break
                    infoset = nodes[parent, INDEX]
                    value = frame_value[d, drawn[infoset]]  # v(h) = v(h a*)
                    for a in range(n):
                        instant[a] = frame_value[d, a] - value  # r~(I,a) = v(Ia) - v(Ia*)
                    update_regrets(regret, log_at, current, infoset, n, instant, scalars, alpha, beta)
                    depth -= 1
                else:
                    break
