r"""Counterfactual values at a betting tree's terminals for every private hand at once, against a vector of the
opponent's reach over its hands, with card removal: the sweeps of the public-tree kernels
(:mod:`cfr_agents.public_tree.kernels`), of public chance sampling
(:mod:`cfr_agents.solvers.sampling.public_chance`) and of AIVAT's margins over ranges (:mod:`eval.aivat_holdem`).

* fold: :math:`q(h) = u\,\big(T - C_{c_1} - C_{c_2} + \pi_{-i}(h)\big)`, with :math:`T = \sum_{h'} \pi_{-i}(h')`
  and :math:`C_c` the sum over the hands holding card :math:`c` (one hole card: :math:`T - \pi_{-i}(h)`);
* showdown at stake :math:`s`: :math:`q(h) = s\,(W(h) - L(h))`, the opponent's reach on weaker and on stronger
  hands, in :math:`O(H)` by one sweep over the hands sorted by strength that keeps the same per-card sums for the
  hands passed (Johanson et al. 2011).

Sums that rounding leaves within :data:`~cfr_agents.solvers.update_rule.TIE` of 0 are taken as 0.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cfr_agents.solvers.update_rule import TIE


@njit(cache=True, error_model="numpy")
def fold(
    opponent: np.ndarray, hands: np.ndarray, card_sum: np.ndarray, payoff: float, valid: np.ndarray, out: np.ndarray
) -> None:
    """:math:`q(h) = u_i (T - C_{c_1} - C_{c_2} + \\pi_{-i}(h))` (one hole card: :math:`T - \\pi_{-i}(h)`)."""
    num_hands, k = hands.shape
    total = 0.0
    card_sum[:] = 0.0
    for h in range(num_hands):
        total += opponent[h]
        for j in range(k):
            card_sum[hands[h, j]] += opponent[h]
    for h in range(num_hands):
        if k == 1:
            compatible = total - opponent[h]
        else:
            compatible = total - card_sum[hands[h, 0]] - card_sum[hands[h, 1]] + opponent[h]
        compatible = compatible if compatible > TIE * total else 0.0  # an exact 0, up to the sums' rounding
        out[h] = payoff * compatible * valid[h]


@njit(cache=True, error_model="numpy")
def showdown(
    opponent: np.ndarray,
    hands: np.ndarray,
    order: np.ndarray,
    ranks: np.ndarray,
    card_sum: np.ndarray,
    stake: float,
    valid: np.ndarray,
    out: np.ndarray,
) -> None:
    """:math:`q(h) = s\\,(W(h) - L(h))` by two sweeps over the hands sorted by strength: up for the weaker
    hands' reach :math:`W`, down for the stronger hands' :math:`L`, each with per-card sums for card removal."""
    num_hands, k = hands.shape
    for h in range(num_hands):
        out[h] = 0.0
    for direction in range(2):  # 0: weaker hands, counted upward; 1: stronger hands, counted downward
        sign = 1.0 if direction == 0 else -1.0
        card_sum[:] = 0.0
        passed = 0.0
        i = 0
        while i < num_hands:
            j = i  # [i, j): one strength class
            index = i if direction == 0 else num_hands - 1 - i
            strength = ranks[index]
            while j < num_hands and ranks[j if direction == 0 else num_hands - 1 - j] == strength:
                j += 1
            for m in range(i, j):
                h = order[m if direction == 0 else num_hands - 1 - m]
                if k == 1:
                    beaten = passed - card_sum[hands[h, 0]]
                else:
                    beaten = passed - card_sum[hands[h, 0]] - card_sum[hands[h, 1]]
                beaten = beaten if beaten > TIE * passed else 0.0  # an exact 0, up to the sums' rounding
                out[h] += sign * stake * beaten * valid[h]
            for m in range(i, j):
                h = order[m if direction == 0 else num_hands - 1 - m]
                passed += opponent[h]
                for c in range(k):
                    card_sum[hands[h, c]] += opponent[h]
            i = j
