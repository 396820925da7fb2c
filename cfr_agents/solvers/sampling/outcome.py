r"""Outcome sampling (Lanctot, Waugh, Zinkevich & Bowling 2009), one trajectory per player.

For traverser :math:`i`, one terminal history :math:`z` is sampled: chance by its probabilities,
the opponent by :math:`\sigma^t_{-i}`, and :math:`i` by the epsilon-greedy
:math:`q(I,\cdot) = \epsilon/|A(I)| + (1-\epsilon)\,\sigma^t(I,\cdot)`. With :math:`q(h)` the
probability of sampling the path to :math:`h` (chance excluded: it cancels) and :math:`a^*` the
sampled action at :math:`h`, the sampled value is computed bottom-up,
:math:`\tilde u(h) = \sigma^t(I,a^*)\,\tilde u(ha^*) / q(I,a^*)` at :math:`i`'s nodes and
:math:`\tilde u(h) = \tilde u(ha^*)` elsewhere, :math:`\tilde u(z) = u_i(z)`. At :math:`i`'s node

:math:`\tilde r^t(I,a) = \frac{\pi^{\sigma}_{-i}(h)}{q(h)}\Big(\tilde u(Ia) - \tilde u(h)\Big)`,
with :math:`\tilde u(Ia) = \tilde u(ha^*)/q(I,a^*)` for :math:`a = a^*` and 0 otherwise, so that
:math:`E[\tilde r^t(I,a)] = r^t(I,a)` (OpenSpiel's ``outcome_sampling_mccfr`` without baseline).

Averaging at :math:`i`'s nodes on the trajectory (``averaging``):

* ``STOCHASTIC`` (stochastically-weighted averaging, the default):
  :math:`C(I,\cdot) \mathrel{+}= w_t\,\frac{\pi^{\sigma}_i(h)}{q(h)}\,\sigma^t(I,\cdot)`; unbiased, but the
  importance weight :math:`1/q(h)` makes its variance grow with depth and with small epsilon;
* ``OPTIMISTIC`` (optimistic, or lazy, averaging): :math:`C(I,\cdot) \mathrel{+}=
  (W_t - W_{c_I})\,\pi^{\sigma}_i(h)\,\sigma^t(I,\cdot)`, where :math:`W_t = \sum_{s \le t} w_s` and
  :math:`c_I` is the last iteration that updated :math:`I`: the skipped iterations are credited as
  if :math:`I` had played :math:`\sigma^t` all along. No importance weight, so low variance, but
  biased while the strategy still moves.
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
    WEIGHT_SUM,
    KernelOptions,
    KernelState,
    KernelTree,
    add_average,
    begin_iteration,
    chance_child,
    sample,
    stratified_child,
    traversal_uniform,
    update_regrets,
)

STOCHASTIC, OPTIMISTIC = 0, 1


@njit(cache=True, error_model="numpy")
def run(iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions) -> None:
    """``iterations`` iterations: a trajectory for player 0, then one for player 1."""
    nodes, values, cdf, depth_bound = tree
    regret, current, cumulative, log_at, weight_at, scalars, rng, shift = state
    alpha, beta, gamma, averaging, epsilon, chance_draws = options
    width = regret.shape[1]
    frame_infoset = np.empty(depth_bound, np.int64)
    frame_action = np.empty(depth_bound, np.int64)
    frame_count = np.empty(depth_bound, np.int64)
    frame_q = np.empty(depth_bound)  # q(I, a*)
    frame_reach = np.empty((depth_bound, 3))  # pi_i(h), pi_-i(h), q(h) on arrival at h
    explore = np.empty(width)
    instant = np.empty(width)
    for _ in range(iterations):
        begin_iteration(scalars, alpha, beta, gamma, cumulative, weight_at)
        for player in range(2):
            mine = 1 + player
            depth = 0
            node = 0
            own = other = sampled = 1.0
            u = traversal_uniform(shift, player, scalars, chance_draws)
            while nodes[node, CODE] != TERMINAL:  # sample the trajectory, a frame per traverser node
                code = nodes[node, CODE]
                if code == CHANCE:
                    if chance_draws == STRATIFIED:
                        node, u = stratified_child(nodes, cdf, node, u)
                    else:
                        node = chance_child(nodes, cdf, node, rng)
                    continue
                infoset, n = nodes[node, INDEX], nodes[node, COUNT]
                sigma = current[infoset]
                if code != mine:
                    a = sample(sigma, n, rng)
                    other *= sigma[a]
                    sampled *= sigma[a]
                    node = nodes[node, FIRST] + a
                    continue
                for b in range(n):  # q = epsilon * uniform + (1 - epsilon) * sigma
                    explore[b] = epsilon / n + (1.0 - epsilon) * sigma[b]
                a = sample(explore, n, rng)
                frame_infoset[depth] = infoset
                frame_action[depth] = a
                frame_count[depth] = n
                frame_q[depth] = explore[a]
                frame_reach[depth, 0] = own
                frame_reach[depth, 1] = other
                frame_reach[depth, 2] = sampled
                own *= sigma[a]
                sampled *= explore[a]
                depth += 1
                node = nodes[node, FIRST] + a
            value = values[node, player]  # u~(z) = u_i(z)
            for d in range(depth - 1, -1, -1):  # back up the trajectory
                infoset = frame_infoset[d]
                n = frame_count[d]
                a = frame_action[d]
                action_value = value / frame_q[d]  # u~(I a*) = u~(h a*) / q(I, a*)
                value = current[infoset, a] * action_value  # u~(h) = sigma(I, a*) u~(I a*)
                counterfactual = frame_reach[d, 1] / frame_reach[d, 2]  # pi_-i(h) / q(h)
                for b in range(n):
                    instant[b] = -counterfactual * value
                instant[a] += counterfactual * action_value
                if averaging == STOCHASTIC:  # C += w_t pi_i(h) / q(h) sigma
                    weight = scalars[WEIGHT] * frame_reach[d, 0] / frame_reach[d, 2]
                else:  # C += (W_t - W_{c_I}) pi_i(h) sigma
                    weight = (scalars[WEIGHT_SUM] - weight_at[infoset]) * frame_reach[d, 0]
                    weight_at[infoset] = scalars[WEIGHT_SUM]
                add_average(cumulative, infoset, n, weight, current[infoset])  # sigma^t, before the update
                update_regrets(regret, log_at, current, infoset, n, instant, scalars, alpha, beta)
