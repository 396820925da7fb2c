r"""The compiled full-tree iteration: whole runs of CFR iterations in one Numba call.

The arithmetic is :mod:`cfr_agents.solvers.full_tree`'s, written as loops over the compiled tree's
arrays so that an iteration costs a pass over the terminals and two over the updating player's
infosets, with no Python between iterations. For the updating player :math:`i` at iteration :math:`t`:

1. :math:`q(\sigma) = \sum_{z:\,\sigma_i(z) = \sigma} c(z)\,u_i(z)\,x_{-i}(\sigma_{-i}(z))` for every
   sequence :math:`\sigma` that ends a path of :math:`i`'s (one pass over the terminals). The pass is
   what an iteration's time goes to on large games, and it is bound by memory traffic, so the terminals
   are laid out for it (:class:`TerminalLayout`): grouped by :math:`\sigma_i(z)`, in their original
   order within a group (the sums are those of the unordered loop, bit for bit), each holding its
   opponent sequence and an index into the few distinct values of :math:`c(z)\,u_i(z)`, as ``int32``.
2. bottom-up over :math:`i`'s infosets, deepest level first:
   :math:`v(I) = \sum_a \sigma^t(I,a)\,q(Ia)`, added into :math:`q(\mathrm{parent}(I))`;
3. per infoset: :math:`r = q(Ia) - v(I)`; :math:`R^t = d(R^{t-1} + r)`;
   :math:`C^t \mathrel{+}= w_t\,x_i(\mathrm{parent}(I))\,\sigma^t(I,\cdot)`;
   :math:`\sigma^{t+1} \propto [R^t + m]^+`;
4. top-down: :math:`x_i(Ia) = x_i(\mathrm{parent}(I))\,\sigma^{t+1}(I,a)`.

Infosets are numbered by (player, own depth), so "deepest level first" is the levels in reverse order,
each level's infosets in ascending order: the order in which the vectorised update adds them.
Traversals are loops, never recursion (Numba's cache cannot reload recursive functions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from cfr_agents.solvers.update_rule import RESCALE_LOG, compiled_discount
from cfr_agents.tree import CompiledTree, IntArray


@dataclass(frozen=True)
class TerminalLayout:
    r"""Each player's terminals grouped by the player's own last sequence, for the pass of step 1.

    For player ``p``: group ``g`` is the terminals ``group_bound[p, g]:group_bound[p, g + 1]``, all
    ending in sequence ``group_sequence[p, g]``; terminal ``k`` of the layout has the opponent's
    sequence ``terminal_other[p, k]`` and :math:`c(z)\,u_p(z)` ``= value_table[p, terminal_value[p, k]]``.
    Rows are padded to the longer player's length; ``group_count[p]`` groups are real.
    """

    group_sequence: IntArray
    group_bound: IntArray
    group_count: IntArray
    terminal_other: NDArray[np.int32]
    terminal_value: NDArray[np.int32]
    value_table: NDArray[np.float64]

    @classmethod
    def of(cls, tree: CompiledTree) -> TerminalLayout:
        rows = []
        for player in range(2):
            own = tree.terminal_sequence[player]
            order = np.argsort(own, kind="stable")  # grouped by sigma_i(z), z ascending within a group
            sequences, starts = np.unique(own[order], return_index=True)
            table, index = np.unique((tree.terminal_chance * tree.terminal_utility[player])[order], return_inverse=True)
            bound = np.append(starts, len(order))
            rows.append((sequences, bound, tree.terminal_sequence[1 - player][order], index, table))
        groups = max(len(row[0]) for row in rows)
        values = max(len(row[4]) for row in rows)

        def stack(column: int, length: int, dtype: type) -> NDArray[Any]:
            out: NDArray[Any] = np.zeros((2, length), dtype=dtype)
            for player, row in enumerate(rows):
                out[player, : len(row[column])] = row[column]
            return out

        return cls(
            group_sequence=stack(0, groups, np.int64),
            group_bound=stack(1, groups + 1, np.int64),
            group_count=np.array([len(row[0]) for row in rows], dtype=np.int64),
            terminal_other=stack(2, tree.num_terminals, np.int32),
            terminal_value=stack(3, tree.num_terminals, np.int32),
            value_table=stack(4, values, np.float64),
        )


@njit(cache=True, error_model="numpy")
def _average_weight(gamma: float, t: float, scalars: np.ndarray, cumulative: np.ndarray) -> float:
    """:class:`~cfr_agents.solvers.update_rule.AverageScale`'s :math:`w_t / e^K`; ``scalars[1] = K``.
    Raising :math:`K` rescales ``cumulative`` in place first."""
    log_weight = gamma * math.log(t) if gamma != 0.0 else 0.0
    if log_weight - scalars[1] > RESCALE_LOG:
        cumulative *= math.exp(scalars[1] - log_weight)
        scalars[1] = log_weight
    if scalars[1] == 0.0:
        return float(t**gamma)
    return math.exp(log_weight - scalars[1])


@njit(cache=True, error_model="numpy")
def _update_player(
    player: int,
    t: float,
    alpha: float,
    beta: float,
    gamma: float,
    predictive: bool,
    levels: np.ndarray,
    level_count: np.ndarray,
    parent: np.ndarray,
    num_actions: np.ndarray,
    group_sequence: np.ndarray,
    group_bound: np.ndarray,
    group_count: np.ndarray,
    terminal_other: np.ndarray,
    terminal_value: np.ndarray,
    value_table: np.ndarray,
    regret: np.ndarray,
    cumulative: np.ndarray,
    sigma: np.ndarray,
    x: np.ndarray,
    q: np.ndarray,
    value: np.ndarray,
    scalars: np.ndarray,
) -> None:
    width = sigma.shape[1]
    q[:] = 0.0
    other, index, table = terminal_other[player], terminal_value[player], value_table[player]
    bound = group_bound[player]
    for group in range(group_count[player]):  # q(sigma) = sum_{z: sigma_i(z) = sigma} c(z) u_i(z) x_{-i}(...)
        total = 0.0
        for z in range(bound[group], bound[group + 1]):
            total += table[index[z]] * x[other[z]]
        q[group_sequence[player, group]] = total
    for level in range(level_count[player] - 1, -1, -1):  # bottom-up: v(I) = sum_a sigma q
        for infoset in range(levels[player, level, 0], levels[player, level, 1]):
            v = 0.0
            for a in range(num_actions[infoset]):
                v += sigma[infoset, a] * q[infoset * width + a]
            value[infoset] = v
            q[parent[infoset]] += v
    positive, negative = compiled_discount(alpha, t), compiled_discount(beta, t)
    weight = _average_weight(gamma, t, scalars, cumulative)
    first, last = levels[player, 0, 0], levels[player, level_count[player] - 1, 1]
    for infoset in range(first, last):
        n = num_actions[infoset]
        reach = x[parent[infoset]]
        total = 0.0
        for a in range(n):
            instant = q[infoset * width + a] - value[infoset]  # r(I,a) = q - v
            r = regret[infoset, a] + instant  # R^t = d(R^{t-1} + r^t)
            r *= positive if r >= 0.0 else negative
            regret[infoset, a] = r
            cumulative[infoset, a] += weight * reach * sigma[infoset, a]  # C^t += w_t pi_i(I) sigma^t
            target = r + instant if predictive else r  # [R^t + m^{t+1}]^+
            target = target if target > 0.0 else 0.0
            sigma[infoset, a] = target
            total += target
        for a in range(n):
            sigma[infoset, a] = sigma[infoset, a] / total if total > 0.0 else 1.0 / n
    for level in range(level_count[player]):  # top-down: x(Ia) = x(parent(I)) sigma(I,a)
        for infoset in range(levels[player, level, 0], levels[player, level, 1]):
            reach = x[parent[infoset]]
            for a in range(num_actions[infoset]):
                x[infoset * width + a] = reach * sigma[infoset, a]


@njit(cache=True, error_model="numpy")
def run_iterations(
    iterations: int,
    alpha: float,
    beta: float,
    gamma: float,
    predictive: bool,
    levels: np.ndarray,
    level_count: np.ndarray,
    parent: np.ndarray,
    num_actions: np.ndarray,
    group_sequence: np.ndarray,
    group_bound: np.ndarray,
    group_count: np.ndarray,
    terminal_other: np.ndarray,
    terminal_value: np.ndarray,
    value_table: np.ndarray,
    regret: np.ndarray,
    cumulative: np.ndarray,
    sigma: np.ndarray,
    x: np.ndarray,
    q: np.ndarray,
    value: np.ndarray,
    scalars: np.ndarray,
) -> None:
    """Iterations ``scalars[0] + 1`` to ``scalars[0] + iterations``, player 0 then player 1 in each;
    ``scalars = (t, K)`` is advanced in place."""
    for _ in range(iterations):
        t = scalars[0] + 1.0
        for player in range(2):
            if level_count[player] > 0:
                _update_player(
                    player,
                    t,
                    alpha,
                    beta,
                    gamma,
                    predictive,
                    levels,
                    level_count,
                    parent,
                    num_actions,
                    group_sequence,
                    group_bound,
                    group_count,
                    terminal_other,
                    terminal_value,
                    value_table,
                    regret,
                    cumulative,
                    sigma,
                    x,
                    q,
                    value,
                    scalars,
                )
        scalars[0] = t
