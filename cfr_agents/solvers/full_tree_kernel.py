r"""The compiled full-tree iteration: whole runs of CFR iterations in one Numba call.

The arithmetic is :mod:`cfr_agents.solvers.full_tree`'s, written as loops over the compiled tree's
arrays so that an iteration costs, per player, a pass over the payoff matrix's blocks and two over the
updating player's infosets, with no Python between iterations. For the updating player :math:`i` at iteration :math:`t`:

1. :math:`q(\sigma_i) = \sum_{\sigma_{-i}} A_i(\sigma_i, \sigma_{-i})\, x_{-i}(\sigma_{-i})`, with
   :math:`A_i(\sigma_i, \sigma_{-i}) = \sum_{z} c(z)\,u_i(z)` over the terminals that end in the two sequences:
   the sequence-form payoff matrix in public blocks (:mod:`~cfr_agents.solvers.payoff_blocks`), each ranked
   block -- a showdown or a fold, one per public history -- for about one operation per row and column
   instead of one per terminal. With more than two players (or payoffs that do not add up to 0) there are no
   blocks: :math:`q(\sigma_i) = \sum_z c(z)\,u_i(z) \prod_{j \ne i} x_j(\sigma_j(z))`, one pass over the
   terminals (:func:`add_terminal_products`);
2. bottom-up over :math:`i`'s infosets, deepest level first:
   :math:`v(I) = \sum_a \sigma^t(I,a)\,q(Ia)`, added into :math:`q(\mathrm{parent}(I))`, and
   :math:`C^t(I,\cdot) = C^{t-1}(I,\cdot) + w_t\,x_i(\mathrm{parent}(I))\,\sigma^t(I,\cdot)` while
   :math:`x_i` is still :math:`\sigma^t`'s, with :math:`\ln w_t` from
   :func:`~cfr_agents.solvers.update_rule.log_average_weight` (:math:`\gamma \ln t`, or the
   hyperparameter schedule's :math:`L_t`);
3. top-down: :math:`r = q(Ia) - v(I)`, 0 where it is within rounding of a tie
   (:data:`~cfr_agents.solvers.update_rule.TIE`); :math:`R^t = d_t(R^{t-1} + r)`, or with ``discount_first``
   :math:`R^t = d_{t-1}(R^{t-1}) + r`; :math:`\sigma^{t+1} \propto [R^t + m]^+`, or
   :math:`[d_t(R^t) + m]^+`; and at once
   :math:`x_i(Ia) = x_i(\mathrm{parent}(I))\,\sigma^{t+1}(I,a)`, the parent being updated already.

Infosets are numbered by (player, own depth), so "deepest level first" is the levels in reverse order,
each level's infosets in ascending order.
Traversals are loops, never recursion (Numba's cache cannot reload recursive functions).
"""

from __future__ import annotations

import math
from typing import TypeAlias

import numpy as np
from numba import njit

from cfr_agents.solvers.payoff_blocks import add_products
from cfr_agents.solvers.update_rule import RESCALE_LOG, TIE, compiled_discount, compiled_log_average_weight

Rule: TypeAlias = tuple[float, float, float, float, float, bool, bool]
"""``(alpha, beta, gamma, gamma_change, horizon, predictive, discount_first)``: the update rule's parameters
(:class:`~cfr_agents.solvers.update_rule.UpdateRule`)."""
Layout: TypeAlias = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, ...], np.ndarray, tuple[np.ndarray, np.ndarray]
]
r"""``(levels, level_count, parent, num_actions, blocks, prefix, terminals)``: the tree as the iteration reads
it -- ``levels[p, k] = (start, stop)``, player ``p``'s infosets at own depth ``k``, of ``level_count[p]``
levels, for each of the ``level_count.shape[0]`` players; each infoset's parent sequence and number of actions;
the payoff blocks' arrays (:meth:`~cfr_agents.solvers.payoff_blocks.PayoffBlocks.arrays`) and scratch for
:func:`~cfr_agents.solvers.payoff_blocks.add_products`; and ``terminals = (sequence, weighted)``, each
player's last sequence and :math:`c(z)\,u_p(z)` at each terminal, for :func:`add_terminal_products` (no
terminals where the blocks hold the payoffs, no blocks where the terminals do)."""
Arrays: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""``(regret, cumulative, sigma, x, q, value, scalars)``: the iteration's state, updated in place -- ``x`` the
realization plans of every player (one entry per sequence), ``q`` and ``value`` scratch, ``scalars = (t, K)``
the iterations run and the log-scale of ``cumulative``."""


@njit(cache=True, error_model="numpy")
def average_weight(
    gamma: float, gamma_change: float, horizon: float, t: float, scalars: np.ndarray, cumulative: np.ndarray
) -> float:
    """:math:`w_t / e^K` (see :mod:`~cfr_agents.solvers.update_rule`); ``scalars[1] = K``.
    Raising :math:`K` rescales ``cumulative`` in place first. Without a schedule and while
    :math:`K = 0`, :math:`w_t` is the plain power :math:`t^\\gamma`."""
    log_weight = compiled_log_average_weight(gamma, gamma_change, horizon, t)
    if log_weight - scalars[1] > RESCALE_LOG:
        cumulative *= math.exp(scalars[1] - log_weight)
        scalars[1] = log_weight
    if scalars[1] == 0.0 and gamma_change == 0.0:
        return float(t**gamma)
    return math.exp(log_weight - scalars[1])


@njit(cache=True, error_model="numpy")
def add_terminal_products(
    player: int, sequence: np.ndarray, weighted: np.ndarray, x: np.ndarray, q: np.ndarray
) -> None:
    r""":math:`q(\sigma_i(z)) \mathrel{+}= c(z)\,u_i(z) \prod_{j \ne i} x_j(\sigma_j(z))` for every terminal
    :math:`z` of ``sequence`` (players by terminals) and ``weighted`` (:math:`c(z)\,u_p(z)`, players by
    terminals)."""
    own, own_weighted = sequence[player], weighted[player]
    for z in range(sequence.shape[1]):
        w = own_weighted[z]
        for j in range(sequence.shape[0]):
            if j != player:
                w *= x[sequence[j, z]]
        q[own[z]] += w


@njit(cache=True, error_model="numpy")
def _update_player(player: int, t: float, rule: Rule, layout: Layout, arrays: Arrays) -> None:
    alpha, beta, gamma, gamma_change, horizon, predictive, discount_first = rule
    levels, level_count, parent, num_actions, blocks, prefix, terminals = layout
    regret, cumulative, sigma, x, q, value, scalars = arrays
    width = sigma.shape[1]
    first, last = levels[player, 0, 0], levels[player, level_count[player] - 1, 1]
    q[first * width : last * width] = 0.0  # the updater's sequences, and the empty one
    q[q.shape[0] - 1] = 0.0
    add_products(  # q(sigma_i) += sum_{sigma_-i} A_i(sigma_i, sigma_-i) x_{-i}(sigma_-i)
        player,
        blocks[0],
        blocks[1],
        blocks[2],
        blocks[3],
        blocks[4],
        blocks[5],
        blocks[6],
        blocks[7],
        blocks[8],
        blocks[9],
        blocks[10],
        blocks[11],
        x,
        q,
        prefix,
    )
    if terminals[0].shape[1] > 0:
        add_terminal_products(player, terminals[0], terminals[1], x, q)
    weight = average_weight(gamma, gamma_change, horizon, t, scalars, cumulative)
    # Each level as slices, counted from 0: indices known to be non-negative skip the negative-index wraparound.
    cells = q[: q.shape[0] - 1].reshape((sigma.shape[0], width))  # q(I, a), the sequences (I, a)
    for level in range(level_count[player] - 1, -1, -1):  # bottom-up
        start, stop = levels[player, level, 0], levels[player, level, 1]
        own_sigma, own_cumulative, own_q = sigma[start:stop], cumulative[start:stop], cells[start:stop]
        own_parent, own_actions, own_value = parent[start:stop], num_actions[start:stop], value[start:stop]
        for i in range(stop - start):
            reach = weight * x[own_parent[i]]
            v = 0.0
            for a in range(own_actions[i]):
                v += own_sigma[i, a] * own_q[i, a]  # v(I) = sum_a sigma^t(I,a) q(Ia)
                own_cumulative[i, a] += reach * own_sigma[i, a]  # C^t += w_t pi_i(I) sigma^t(I,a)
            own_value[i] = v
            q[own_parent[i]] += v
    positive, negative = compiled_discount(alpha, t), compiled_discount(beta, t)
    previous_positive = compiled_discount(alpha, t - 1.0) if t > 1.0 else 1.0  # R^0 = 0: nothing to discount
    previous_negative = compiled_discount(beta, t - 1.0) if t > 1.0 else 1.0
    own_sigma, own_regret, own_q = sigma[first:last], regret[first:last], cells[first:last]
    own_parent, own_actions, own_value = parent[first:last], num_actions[first:last], value[first:last]
    own_x = x[: x.shape[0] - 1].reshape((sigma.shape[0], width))[first:last]
    for i in range(last - first):  # top-down, so x(parent(I)) is already sigma^{t+1}'s
        n = own_actions[i]
        total = 0.0
        tie = TIE * abs(own_value[i])
        for a in range(n):
            instant = own_q[i, a] - own_value[i]  # r(I,a) = q - v, 0 within rounding of a tie
            instant = instant if abs(instant) > tie else 0.0
            r = own_regret[i, a]
            if discount_first:  # R^t = d_{t-1}(R^{t-1}) + r^t; match on d_t(R^t)
                r = r * (previous_positive if r >= 0.0 else previous_negative) + instant
                own_regret[i, a] = r
                r *= positive if r >= 0.0 else negative
            else:  # R^t = d_t(R^{t-1} + r^t)
                r += instant
                r *= positive if r >= 0.0 else negative
                own_regret[i, a] = r
            target = r + instant if predictive else r  # [R^t + m^{t+1}]^+, m^{t+1} = r^t or 0
            target = target if target > 0.0 else 0.0
            own_sigma[i, a] = target
            total += target
        reach = x[own_parent[i]]
        scale = 1.0 / total if total > 0.0 else 0.0
        for a in range(n):  # sigma^{t+1} by regret matching; x(Ia) = x(parent(I)) sigma^{t+1}(I,a)
            own_sigma[i, a] = own_sigma[i, a] * scale if total > 0.0 else 1.0 / n
            own_x[i, a] = reach * own_sigma[i, a]


@njit(cache=True, error_model="numpy")
def run_iterations(iterations: int, rule: Rule, layout: Layout, arrays: Arrays) -> None:
    """Iterations ``t + 1`` to ``t + iterations``, each updating player 0, then player 1 and so on;
    ``scalars = (t, K)`` (:data:`Arrays`) is advanced in place."""
    scalars, level_count = arrays[6], layout[1]
    for _ in range(iterations):
        t = scalars[0] + 1.0
        for player in range(level_count.shape[0]):
            if level_count[player] > 0:
                _update_player(player, t, rule, layout, arrays)
        scalars[0] = t
