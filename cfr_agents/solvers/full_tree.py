r"""The full-tree counterfactual-regret update every CFR variant here shares.

One iteration ``t`` updates player 0, then player 1, and so on in an n-player game (alternating updates,
as OpenSpiel's solvers do). For the updating player ``i`` on the compiled tree:

* counterfactual action values, bottom-up over ``i``'s infosets by depth,
  :math:`q^t(I,a) = \sum_{z \sqsupseteq Ia} \pi^{\sigma^t}_{-i}(z)\,\pi^{\sigma^t}_i(Ia \to z)\,u_i(z)`
  and :math:`v^t(I) = \sum_a \sigma^t(I,a)\,q^t(I,a)`;
* instantaneous regret :math:`r^t(I,a) = q^t(I,a) - v^t(I)`;
* cumulative regret :math:`R^t = d(R^{t-1} + r^t)` with the DCFR discount ``d`` that
  multiplies non-negative entries by :math:`t^\alpha/(t^\alpha+1)` and negative ones by
  :math:`t^\beta/(t^\beta+1)` (Brown & Sandholm 2019); ``alpha = beta = inf`` is vanilla
  CFR, ``beta = -inf`` zeroes negative regrets, i.e. regret matching+ (Tammelin 2014);
  with ``discount_first`` the regrets so far are discounted with iteration :math:`t-1`'s weights
  before :math:`r^t` is added, :math:`R^t = d_{t-1}(R^{t-1}) + r^t`, and regrets are matched on
  :math:`d_t(R^t)` (DCFR+ and PDCFR+, Xu et al. 2024);
* average strategy numerator :math:`C^t = C^{t-1} + t^\gamma\,\pi^{\sigma^t}_i(I)\,\sigma^t(I,\cdot)`,
  or under a hyperparameter schedule (HS-PCFR+, Zhang, McAleer & Sandholm 2024) the weight
  :math:`e^{L_t}` that unrolls :math:`C^t = C^{t-1} ((t-1)/t)^{\gamma_{t-1}} + \pi^{\sigma^t}_i(I)\,\sigma^t(I,\cdot)`
  (:mod:`~cfr_agents.solvers.update_rule`);
* next strategy by regret matching,
  :math:`\sigma^{t+1}(I,a) = [R^t(I,a) + m(I,a)]^+ / \sum_b [R^t(I,b) + m(I,b)]^+`
  (uniform when the denominator is 0), with prediction :math:`m = r^t` for predictive
  CFR+ (Farina, Kroer & Sandholm 2021) and :math:`m = 0` otherwise.

:mod:`cfr_agents.solvers.full_tree_kernel` runs these steps as compiled loops over the arrays of
:class:`~cfr_agents.tree.CompiledTree`, many iterations per call.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from adapters import Game
from cfr_agents.policy import Policy
from cfr_agents.solvers.full_tree_kernel import run_iterations
from cfr_agents.solvers.payoff_blocks import PayoffBlocks, index_type, payoff_blocks
from cfr_agents.solvers.update_rule import UpdateRule
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree, state_arrays


class FullTreeSolver:
    """Full-tree CFR under an :class:`UpdateRule`; construct on a game or a compiled tree.

    Iterations run in :func:`~cfr_agents.solvers.full_tree_kernel.run_iterations`, compiled by Numba
    (cached on disk): :meth:`compile` does it up front so that timing leaves compilation out.
    """

    def __init__(self, game: Game | CompiledTree, rule: UpdateRule, algorithm: str) -> None:
        tree = game if isinstance(game, CompiledTree) else compile_tree(game)
        self.tree = tree
        self.rule = rule
        self.algorithm = algorithm
        n, width = tree.num_infosets, tree.max_actions
        self._uniform = tree.uniform_strategy()
        self._sigma = self._uniform.copy()
        self._regret = np.zeros((n, width))
        self._cumulative = np.zeros((n, width))
        players = range(tree.num_players)
        # x: realization plan of every player, one entry per sequence; x[root] = 1.
        self._reach = tree.realization_plan(self._sigma)
        self._scalars = np.zeros(2)
        """``(t, K)``: iterations run, and the log-scale of the cumulative strategy."""
        depth = max(len(tree.levels[p]) for p in players)
        self._levels = np.zeros((tree.num_players, max(depth, 1), 2), dtype=np.int64)
        for player in players:
            for level, (start, stop) in enumerate(tree.levels[player]):
                self._levels[player, level] = start, stop
        self._level_count = np.array([len(tree.levels[p]) for p in players], dtype=np.int64)
        self._num_actions = tree.action_mask.sum(axis=1).astype(np.int64)
        kind = index_type(tree.num_sequences)
        self._parent = tree.parent_sequence.astype(kind)
        # Two-player zero-sum: the payoff blocks; otherwise c(z) u_p(z), terminal by terminal.
        self._blocks = payoff_blocks(tree) if tree.two_player_zero_sum else PayoffBlocks.empty(tree.num_players, kind)
        self._terminal_sequence: NDArray[np.unsignedinteger[Any]]
        self._terminal_weighted: FloatArray
        self._terminal_sequence, self._terminal_weighted = (
            (np.zeros((tree.num_players, 0), dtype=kind), np.zeros((tree.num_players, 0)))
            if tree.two_player_zero_sum
            else (tree.terminal_sequence.astype(kind), tree.terminal_chance * tree.terminal_utility)
        )
        self._prefix = np.zeros(self._blocks.max_columns + 1)
        self._q = np.zeros(tree.num_sequences)
        self._value = np.zeros(n)
        self._layout = (
            self._levels,
            self._level_count,
            self._parent,
            self._num_actions,
            self._blocks.arrays(),
            self._prefix,
            (self._terminal_sequence, self._terminal_weighted),
        )
        self._arrays = (self._regret, self._cumulative, self._sigma, self._reach, self._q, self._value, self._scalars)
        """The kernel's :data:`~cfr_agents.solvers.full_tree_kernel.Layout` and ``Arrays``: the arrays above."""

    @property
    def iteration(self) -> int:
        """Iterations run so far."""
        return int(self._scalars[0])

    def run(self, iterations: int) -> None:
        """``iterations`` more iterations, each updating player 0, then player 1 and so on."""
        rule = self.rule
        run_iterations(
            iterations,
            (
                rule.alpha,
                rule.beta,
                rule.gamma,
                rule.gamma_change,
                float(rule.horizon),
                rule.predictive,
                rule.discount_first,
            ),
            self._layout,
            self._arrays,
        )

    def iterate(self) -> None:
        """One iteration: update player 0, then player 1 and so on."""
        self.run(1)

    @property
    def nbytes(self) -> int:
        """Bytes of the solver's own arrays: its state, scratch vectors and payoff blocks."""
        arrays = sum(value.nbytes for value in vars(self).values() if isinstance(value, np.ndarray))
        return arrays + self._blocks.nbytes

    def compile(self) -> float:
        """Compile the iteration kernel, or load it from Numba's cache; seconds taken (0 once loaded)."""
        started = time.perf_counter()
        FullTreeSolver(self.tree, self.rule, self.algorithm).run(1)
        return time.perf_counter() - started

    def average_strategy(self) -> FloatArray:
        """``(N, A)`` normalised :math:`C^T`; uniform where nothing was accumulated."""
        return normalise(self._cumulative, self.tree)

    def current_strategy(self) -> FloatArray:
        return self._sigma.copy()

    def average_policy(self) -> Policy:
        return self._policy(self.average_strategy())

    def current_policy(self) -> Policy:
        return self._policy(self.current_strategy())

    def parameters(self) -> Mapping[str, object]:
        return {**self.rule.parameters(), "sampling": "none"}

    def state(self, *, copy: bool = True) -> dict[str, FloatArray]:
        """The whole mutable state, as arrays (a checkpoint): copies, or read-only views."""
        arrays = {
            "regret": self._regret,
            "cumulative": self._cumulative,
            "sigma": self._sigma,
            "reach": self._reach,
            "scalars": self._scalars,
        }
        return state_arrays(arrays, copy)

    def restore(self, state: Mapping[str, FloatArray], *, take: bool = False) -> None:
        """Continue from :meth:`state`; the following iterations are those the saved run would have made. The
        arrays are copied, ``take`` or not: the compiled kernel holds the solver's own."""
        for name, current in (
            ("regret", self._regret),
            ("cumulative", self._cumulative),
            ("sigma", self._sigma),
            ("reach", self._reach),
            ("scalars", self._scalars),
        ):
            current[...] = state[name]

    def _policy(self, strategy: FloatArray) -> Policy:
        return Policy.from_strategy(
            self.tree, strategy, algorithm=self.algorithm, parameters=self.parameters(), iterations=self.iteration
        )


class UniformRows(Protocol):
    """A game whose rows have a uniform strategy (:class:`CompiledTree`, an abstract game)."""

    def uniform_strategy(self, rows: NDArray[np.int64] | None = None) -> FloatArray: ...


def normalise(weights: FloatArray, game: UniformRows, chunk: int = 1 << 20) -> FloatArray:
    """Each row of ``weights`` divided by its sum; ``game``'s uniform row where the sum is 0. A ``chunk`` of rows at
    a time, so that beside ``weights`` it holds the result and temporaries of one chunk only."""
    normalised: FloatArray = np.empty_like(weights)
    for start in range(0, len(weights), chunk):
        rows = slice(start, start + chunk)
        totals = weights[rows].sum(axis=1, keepdims=True)
        np.divide(weights[rows], totals, out=normalised[rows], where=totals > 0)
        empty = np.flatnonzero(~(totals[:, 0] > 0))
        if empty.size:
            normalised[rows][empty] = game.uniform_strategy(start + empty)
    return normalised
