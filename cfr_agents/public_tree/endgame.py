r"""Endgame solving: every subgame of the last round re-solved from the ranges a blueprint reaches it with.

A blueprint :math:`\sigma_B` (any strategy over the public tree) is kept in every round but the last. Each public
state :math:`S` that starts the last round (the betting so far and the board) is a subgame whose private hands are
dealt by the ranges the blueprint leads to,

.. math:: r_p(S, h) \propto \pi^{\sigma_B}_p(S, h)\,\pi_c(S, h),

player :math:`p`'s own reach of :math:`S` holding :math:`h` under the blueprint times chance's. The subgame is
solved anew by CFR under any update rule, vectors over both players' hands, and the agent plays the blueprint until
the last round and the subgame's average strategy in it: unsafe endgame solving (Ganzfried & Sandholm, AAMAS 2015),
which assumes the opponent reached :math:`S` by the blueprint too (safe re-solving, Burch, Johanson & Bowling 2014,
bounds what that assumption can cost: :mod:`~cfr_agents.public_tree.safe_endgame`).

Every subgame at once: the regrets of the last round depend on the reaches at its entry only, so CFR on the whole
public tree with the earlier rounds frozen to :math:`\sigma_B` (their backward pass evaluates the blueprint,
:meth:`~cfr_agents.public_tree.engine.Engine.root_values`'s ``frozen_rounds``) solves each subgame independently
from :math:`r_p(S, \cdot)`, as re-solving it when play reaches it would. The result is a strategy over the whole
tree, so its exact NashConv and its exact value against the blueprint are computed as any other's.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from adapters.inputs import InputError
from cfr_agents.public_tree.engine import FloatArray
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers.update_rule import UpdateRule


class EndgameSolver(PublicTreeSolver):
    """CFR under ``rule`` in the last round of ``tree``, the earlier rounds playing ``blueprint`` (a strategy array
    laid out over ``tree``'s own segments)."""

    def __init__(self, tree: PublicTree, rule: UpdateRule, algorithm: str, blueprint: FloatArray) -> None:
        if blueprint.shape != (tree.size,) or not np.isfinite(blueprint).all():
            raise InputError(f"a blueprint of {tree.game_id} is {tree.size:,} finite numbers, not {blueprint.shape}")
        if tree.rules.num_rounds < 2:
            raise InputError(f"{tree.game_id} has one round: no endgame follows a blueprint's earlier rounds")
        super().__init__(tree, rule, algorithm)
        self.frozen_rounds = tree.rules.num_rounds - 1
        self.trunk = int(tree.segments.offset[tree.segments.round_start[self.frozen_rounds]])
        """The entries of the rounds before the last: the blueprint's, never updated."""
        self._sigma[: self.trunk] = blueprint[: self.trunk]
        self._blueprint = blueprint[: self.trunk].copy()

    def average_strategy(self, *, release: bool = False) -> FloatArray:
        """The blueprint before the last round, the normalised :math:`C^T` of the subgames in it (``release``:
        :meth:`PublicTreeSolver.average_strategy`'s)."""
        strategy = super().average_strategy(release=release)
        strategy[: self.trunk] = self._blueprint
        return strategy

    def parameters(self) -> Mapping[str, object]:
        return {**super().parameters(), "endgame": "unsafe", "frozen_rounds": self.frozen_rounds}
