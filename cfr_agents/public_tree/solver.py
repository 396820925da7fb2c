r"""Full-game CFR on the public tree: vector CFR under any :class:`~cfr_agents.solvers.update_rule.UpdateRule`.

Each iteration updates player 0, then player 1 (alternating updates), with the arithmetic of
:mod:`cfr_agents.solvers.full_tree` applied to every private hand of every public node at once
(:mod:`~cfr_agents.public_tree.kernels`). On a tree with suit-canonical boards the strategy stays
suit-canonical: the values gathered at deal nodes are symmetrised over the stabilizer, so isomorphic
hands see the same regrets.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np

from adapters.games import canonical_game_id
from adapters.inputs import InputError
from adapters.openspiel import PREFIX
from cfr_agents.public_tree.engine import Engine, FloatArray, normalised, own_placement, profile, uniform_strategy
from cfr_agents.public_tree.kernels import UPDATE, Update, normalise
from cfr_agents.public_tree.tree import PublicTree, build_public_tree
from cfr_agents.solvers.full_tree_kernel import average_weight
from cfr_agents.solvers.update_rule import UpdateRule, discount
from cfr_agents.tree import state_arrays

COMPILE_GAME = "holdem-6"
"""The calibration game :meth:`PublicTreeSolver.compile` runs the kernels on: Numba compiles them for the arrays'
types, not their sizes, and its public tree is built in milliseconds."""


def peak_bytes(tree: PublicTree) -> int:
    """About the bytes a run on ``tree`` holds at its peak, in float64: the regrets, the cumulative and the current
    strategy, the normalised average that scoring makes (four arrays of ``tree.size``), and the engine's vectors over
    hands at deal slots and segment entries. On FHP: 10.6 GB estimated, 11.1 GB peak resident in `train`."""
    vectors = (3 * max(tree.num_slots, 1) + tree.segments.count) * tree.num_hands
    return 8 * (4 * tree.size + vectors)


class PublicTreeSolver:
    """CFR under ``rule`` on a :class:`PublicTree`; strategies are flat arrays
    (:mod:`~cfr_agents.public_tree.engine`)."""

    def __init__(self, tree: PublicTree, rule: UpdateRule, algorithm: str) -> None:
        self.tree = tree
        self.rule = rule
        self.algorithm = algorithm
        self._engine = Engine(tree)
        self._sigma = uniform_strategy(tree)
        self._regret = np.zeros(tree.size)
        self._cumulative = np.zeros(tree.size)
        self._scalars = np.zeros(2)
        """``(t, K)``: iterations run, and the log-scale of the cumulative strategy."""
        self.frozen_rounds = 0
        """The rounds, from the first, whose strategy no iteration updates (:mod:`~cfr_agents.public_tree.endgame`)."""
        placement = own_placement(tree)
        self._profile = profile(self._sigma, self._sigma, placement, placement)
        self._released = False
        """Whether :meth:`average_strategy` gave the arrays away (``release=True``): the solver is done."""

    @property
    def iteration(self) -> int:
        return int(self._scalars[0])

    def run(self, iterations: int) -> None:
        """``iterations`` more iterations, each updating player 0, then player 1."""
        self._check_live()
        rule = self.rule
        for _ in range(iterations):
            t = self._scalars[0] + 1.0
            for player in range(2):
                weight = average_weight(
                    rule.gamma, rule.gamma_change, float(rule.horizon), t, self._scalars, self._cumulative
                )
                scalars = np.array(
                    [
                        discount(rule.alpha, t),
                        discount(rule.beta, t),
                        discount(rule.alpha, t - 1.0) if t > 1.0 else 1.0,  # R^0 = 0: nothing to discount
                        discount(rule.beta, t - 1.0) if t > 1.0 else 1.0,
                        weight,
                        float(rule.predictive),
                        float(rule.discount_first),
                    ]
                )
                self._update(player, (self._regret, self._cumulative, scalars))
            self._scalars[0] = t

    def _update(self, player: int, update: Update) -> None:
        """Player ``player``'s update of one iteration: a pass over the whole tree."""
        self._engine.root_values(player, UPDATE, self._profile, update, frozen_rounds=self.frozen_rounds)

    def iterate(self) -> None:
        self.run(1)

    def compile(self) -> float:
        """Compile the kernels (or load them from Numba's cache) on :data:`COMPILE_GAME`'s tree; seconds taken."""
        started = time.perf_counter()
        small = build_public_tree(canonical_game_id(COMPILE_GAME).removeprefix(PREFIX), canonical=self.tree.canonical)
        PublicTreeSolver(small, self.rule, self.algorithm).run(1)
        return time.perf_counter() - started

    def average_strategy(self, *, release: bool = False) -> FloatArray:
        """Normalised :math:`C^T` per node and hand; uniform where nothing was accumulated.

        ``release``: normalised in place, in the cumulative weights themselves, and the regrets and the current
        strategy let go, so the solver is done (it runs, saves and answers no more). A copy would hold a fourth
        array of :attr:`PublicTree.size` beside the three of the run, 2.6 GB on Flop Hold'em; released, one is
        left."""
        self._check_live()
        if not release:
            return normalised(self.tree, self._cumulative, self._engine.arrays)
        average, empty = self._cumulative, np.zeros(0)
        normalise(average, average, self._engine.arrays)  # each (node, hand)'s sum is read before it is written
        self._regret = self._cumulative = self._sigma = empty
        self._profile = (empty, empty, *self._profile[2:])  # the placements stay; the strategy goes
        self._released = True
        return average

    def current_strategy(self) -> FloatArray:
        self._check_live()
        return self._sigma.copy()

    def _check_live(self) -> None:
        if self._released:
            raise RuntimeError("this solver released its arrays with its average strategy (release=True)")

    def parameters(self) -> Mapping[str, object]:
        return {**self.rule.parameters(), "sampling": "none", "engine": "public-tree"}

    def state(self, *, copy: bool = True) -> dict[str, FloatArray]:
        """The whole mutable state (a checkpoint): copies, or read-only views (``copy=False``, what checkpoints and
        checks read: copies of a Flop Hold'em state would take gigabytes)."""
        self._check_live()
        arrays = {"regret": self._regret, "cumulative": self._cumulative, "sigma": self._sigma}
        return state_arrays(arrays | {"scalars": self._scalars}, copy)

    def restore(self, state: Mapping[str, FloatArray]) -> None:
        """Continue from :meth:`state`. The arrays are adopted, not copied (a Flop Hold'em state is gigabytes):
        the caller must not change them afterwards."""
        self._check_live()
        for name, current in (
            ("regret", self._regret),
            ("cumulative", self._cumulative),
            ("sigma", self._sigma),
            ("scalars", self._scalars),
        ):
            given = state[name]
            if given.shape != current.shape or given.dtype != current.dtype:
                raise InputError(f"state array {name!r} is {given.dtype}{list(given.shape)}, "
                                 f"expected {current.dtype}{list(current.shape)}")  # fmt: skip
        self._regret, self._cumulative = state["regret"], state["cumulative"]
        self._sigma, self._scalars = state["sigma"], state["scalars"]
        placement = own_placement(self.tree)
        self._profile = profile(self._sigma, self._sigma, placement, placement)
