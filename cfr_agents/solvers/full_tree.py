r"""The full-tree counterfactual-regret update every CFR variant here shares.

One iteration ``t`` updates player 0, then player 1 (alternating updates, as
OpenSpiel's solvers do). For the updating player ``i`` on the compiled tree:

* counterfactual action values, bottom-up over ``i``'s infosets by depth,
  :math:`q^t(I,a) = \sum_{z \sqsupseteq Ia} \pi^{\sigma^t}_{-i}(z)\,\pi^{\sigma^t}_i(Ia \to z)\,u_i(z)`
  and :math:`v^t(I) = \sum_a \sigma^t(I,a)\,q^t(I,a)`;
* instantaneous regret :math:`r^t(I,a) = q^t(I,a) - v^t(I)`;
* cumulative regret :math:`R^t = d(R^{t-1} + r^t)` with the DCFR discount ``d`` that
  multiplies non-negative entries by :math:`t^\alpha/(t^\alpha+1)` and negative ones by
  :math:`t^\beta/(t^\beta+1)` (Brown & Sandholm 2019); ``alpha = beta = inf`` is vanilla
  CFR, ``beta = -inf`` zeroes negative regrets, i.e. regret matching+ (Tammelin 2014);
* average strategy numerator :math:`C^t = C^{t-1} + t^\gamma\,\pi^{\sigma^t}_i(I)\,\sigma^t(I,\cdot)`;
* next strategy by regret matching,
  :math:`\sigma^{t+1}(I,a) = [R^t(I,a) + m(I,a)]^+ / \sum_b [R^t(I,b) + m(I,b)]^+`
  (uniform when the denominator is 0), with prediction :math:`m = r^t` for predictive
  CFR+ (Farina, Kroer & Sandholm 2021) and :math:`m = 0` otherwise.

Every step is a whole-level NumPy operation over the arrays of
:class:`~cfr_agents.tree.CompiledTree`, so an iteration costs a few dozen array
operations regardless of the tree's size.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from adapters import Game
from cfr_agents.policy import Policy
from cfr_agents.solvers.update_rule import AverageScale, UpdateRule
from cfr_agents.tree import CompiledTree, FloatArray, IntArray, compile_tree


class FullTreeSolver:
    """Full-tree CFR under an :class:`UpdateRule`; construct on a game or a compiled tree."""

    def __init__(self, game: Game | CompiledTree, rule: UpdateRule, algorithm: str) -> None:
        tree = game if isinstance(game, CompiledTree) else compile_tree(game)
        self.tree = tree
        self.rule = rule
        self.algorithm = algorithm
        self.iteration = 0
        n, width = tree.num_infosets, tree.max_actions
        self._mask = tree.action_mask.astype(np.float64)
        self._uniform = tree.uniform_strategy()
        self._sigma = self._uniform.copy()
        self._regret = np.zeros((n, width))
        self._cumulative = np.zeros((n, width))
        self._value = np.zeros(n)
        self._scale = AverageScale()
        # x: realization plan of both players, one entry per sequence; x[root] = 1.
        self._reach = np.zeros(tree.num_sequences)
        self._reach[tree.root_sequence] = 1.0
        self._levels: list[list[tuple[slice, IntArray]]] = [
            [(slice(a, b), tree.parent_sequence[a:b]) for a, b in tree.levels[p]] for p in range(2)
        ]
        self._players = [tree.player_slice(p) for p in range(2)]
        self._chance_utility = tree.terminal_chance * tree.terminal_utility
        for player in range(2):
            tree.fill_realization(self._sigma, self._reach, player)

    def _update_player(self, player: int, t: int) -> None:
        tree, x, sigma = self.tree, self._reach, self._sigma
        # u_i(z) * chance(z) * pi_{-i}(z), summed into i's last sequence before z.
        weights = self._chance_utility[player] * x[tree.terminal_sequence[1 - player]]
        q = np.bincount(tree.terminal_sequence[player], weights=weights, minlength=tree.num_sequences)
        q_cells = q[:-1].reshape(sigma.shape)
        for rows, parents in reversed(self._levels[player]):
            level_value = np.einsum("ij,ij->i", sigma[rows], q_cells[rows])  # v(I) = sum_a sigma q
            self._value[rows] = level_value
            np.add.at(q, parents, level_value)  # q(parent seq) += v(I)
        rows = self._players[player]
        instant = (q_cells[rows] - self._value[rows, None]) * self._mask[rows]  # r(I,a) = q - v
        regret = self._regret[rows]
        regret += instant  # R^t = R^{t-1} + r^t ...
        positive, negative = self.rule.discounts(t)
        if (positive, negative) != (1.0, 1.0):  # ... then discounted, d(R^t)
            regret *= np.where(regret >= 0, positive, negative)
        weight, rescale = self._scale.weight(self.rule, t)  # C^t += t^gamma * pi_i(I) * sigma^t(I, .)
        if rescale != 1.0:
            self._cumulative *= rescale
        self._cumulative[rows] += (weight * x[tree.parent_sequence[rows]])[:, None] * sigma[rows]
        prediction = instant if self.rule.predictive else 0.0  # m^{t+1} = r^t (predictive) or 0
        target = np.maximum(regret + prediction, 0.0)  # [R^t + m^{t+1}]^+
        sigma[rows] = normalise(target, self._uniform[rows])
        tree.fill_realization(sigma, x, player)

    def iterate(self) -> None:
        """One iteration: update player 0, then player 1."""
        t = self.iteration + 1
        for player in range(2):
            self._update_player(player, t)
        self.iteration = t

    def run(self, iterations: int) -> None:
        for _ in range(iterations):
            self.iterate()

    def average_strategy(self) -> FloatArray:
        """``(N, A)`` normalised :math:`C^T`; uniform where nothing was accumulated."""
        return normalise(self._cumulative, self._uniform)

    def current_strategy(self) -> FloatArray:
        return self._sigma.copy()

    def average_policy(self) -> Policy:
        return self._policy(self.average_strategy())

    def current_policy(self) -> Policy:
        return self._policy(self.current_strategy())

    def parameters(self) -> Mapping[str, object]:
        return {**self.rule.parameters(), "sampling": "none"}

    def state(self) -> dict[str, FloatArray]:
        """The whole mutable state, as arrays (a checkpoint)."""
        return {
            "regret": self._regret.copy(),
            "cumulative": self._cumulative.copy(),
            "sigma": self._sigma.copy(),
            "reach": self._reach.copy(),
            "scalars": np.array([float(self.iteration), self._scale.log_scale]),
        }

    def restore(self, state: Mapping[str, FloatArray]) -> None:
        """Continue from :meth:`state`; the following iterations are those the saved run would have made."""
        for name, current in (
            ("regret", self._regret),
            ("cumulative", self._cumulative),
            ("sigma", self._sigma),
            ("reach", self._reach),
        ):
            current[...] = state[name]
        iteration, log_scale = state["scalars"]
        self.iteration = int(iteration)
        self._scale = AverageScale(float(log_scale))

    def _policy(self, strategy: FloatArray) -> Policy:
        return Policy.from_strategy(
            self.tree, strategy, algorithm=self.algorithm, parameters=self.parameters(), iterations=self.iteration
        )


def normalise(weights: FloatArray, fallback: FloatArray) -> FloatArray:
    """Each row of ``weights`` divided by its sum; ``fallback``'s row where the sum is 0."""
    totals = weights.sum(axis=1, keepdims=True)
    normalised: FloatArray = np.divide(weights, totals, out=fallback.copy(), where=totals > 0)
    return normalised
