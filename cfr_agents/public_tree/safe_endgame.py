r"""Safe endgame re-solving: each player's strategy in the last round re-solved through the re-solving gadget.

Unsafe endgame solving (:mod:`~cfr_agents.public_tree.endgame`) assumes that the opponent reaches each endgame with
the blueprint's range, and an opponent who does not can exploit the re-solved strategy: on a coarse blueprint it is
more exploitable than the blueprint itself. Burch, Johanson & Bowling (AAAI 2014) re-solve player :math:`P`'s
strategy in a game where, at each endgame :math:`S` and for each of its hands :math:`h`, the opponent :math:`O` first
chooses to *terminate*, for its counterfactual best-response value against the blueprint in :math:`S`,

.. math:: \mathrm{CBV}_O(S, h) = \max_{\sigma'_O} v_O(\sigma_{B,P}, \sigma'_O \mid S, h),

or to *follow* into :math:`S`, whose ranges are dealt as before (:math:`\pi^{\sigma_B}_p(S, h)\,\pi_c(S, h)`). An
equilibrium of this game gives the opponent at most :math:`\mathrm{CBV}_O(S, h)` in every endgame and hand, so a best
response to the blueprint's trunk with the re-solved endgames gains no more than one to the blueprint: the re-solved
strategy is at most as exploitable as the blueprint (up to how far CFR has converged), while CFR still plays as well
as it can against the hands the opponent follows with.

The gadget's choice :math:`f(S, h)`, the probability to follow, is learnt by regret matching+ on the instantaneous
regrets :math:`v_O(S, h) - u` (follow) and :math:`\mathrm{CBV}_O(S, h) - u` (terminate), with
:math:`u = f\,v_O(S, h) + (1 - f)\,\mathrm{CBV}_O(S, h)` and :math:`v_O` the opponent's counterfactual value at the
endgame's entry. It multiplies the opponent's reach at each endgame's entry in every pass
(:meth:`~cfr_agents.public_tree.engine.Engine.root_values`'s ``entry_scale``), so :math:`P`'s regrets see the ranges
the opponent follows with. Every endgame is re-solved at once, as in :mod:`~cfr_agents.public_tree.endgame`; player
0's in one game and player 1's in another (:func:`safe_resolve`). The agent plays the blueprint before the last round
and each player's re-solved strategy in it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from numpy.typing import NDArray

from adapters.inputs import InputError
from cfr_agents.public_tree.endgame import EndgameSolver
from cfr_agents.public_tree.engine import FloatArray, laid_out, own_placement, profile
from cfr_agents.public_tree.kernels import BEST_RESPONSE, UPDATE, Update
from cfr_agents.public_tree.solver import peak_bytes
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers.update_rule import UpdateRule


class GadgetSolver(EndgameSolver):
    """CFR under ``rule`` in the last round of ``tree`` for ``resolver``'s strategy, the earlier rounds playing
    ``blueprint`` and the opponent entering each endgame through the re-solving gadget."""

    def __init__(
        self, tree: PublicTree, rule: UpdateRule, algorithm: str, blueprint: FloatArray, resolver: int
    ) -> None:
        if resolver not in (0, 1):
            raise InputError(f"the re-solving player is 0 or 1, not {resolver!r}")
        super().__init__(tree, rule, algorithm, blueprint)
        self.resolver, self.opponent = resolver, 1 - resolver
        rounds = tree.segments.round_start
        self._endgames = slice(int(rounds[self.frozen_rounds]), int(rounds[self.frozen_rounds + 1]))
        own = own_placement(tree)
        played = profile(blueprint, blueprint, own, own)
        self._engine.root_values(self.opponent, BEST_RESPONSE, played, frozen_rounds=self.frozen_rounds)
        self.cbv = self._engine.entry_values[self._endgames].copy()
        """:math:`\\mathrm{CBV}_O(S, h)` of each endgame :math:`S` (the last round's segments) and hand."""
        self._follow = np.ones((tree.segments.count, tree.num_hands))
        self._follow[self._endgames] = 0.5
        """:math:`f(S, h)`, 1 at the segments of the earlier rounds (the opponent's reach there is its own)."""
        self._gadget_regret = np.zeros((2, *self.cbv.shape))
        """:math:`R^+_F` and :math:`R^+_T` of every endgame and hand."""

    def _update(self, player: int, update: Update) -> None:
        follow = (self.opponent, self._follow)
        self._engine.root_values(
            player, UPDATE, self._profile, update, frozen_rounds=self.frozen_rounds, entry_scale=follow
        )
        if player == self.opponent:
            self._choose(self._engine.entry_values[self._endgames])

    def _choose(self, value: FloatArray) -> None:
        """Regret matching+ of the gadget's choice on the opponent's values :math:`v_O(S, h)` under
        :math:`\\sigma^t`."""
        follow = self._follow[self._endgames]
        expected = follow * value + (1.0 - follow) * self.cbv  # u = f v_O + (1 - f) CBV_O
        regret = self._gadget_regret
        np.maximum(regret[0] + value - expected, 0.0, out=regret[0])  # R_F^+ = [R_F^+ + v_O - u]^+
        np.maximum(regret[1] + self.cbv - expected, 0.0, out=regret[1])  # R_T^+ = [R_T^+ + CBV_O - u]^+
        total = regret[0] + regret[1]
        positive = total > 0.0
        self._follow[self._endgames] = np.where(positive, regret[0] / np.where(positive, total, 1.0), 0.5)

    def parameters(self) -> Mapping[str, object]:
        return {**super().parameters(), "endgame": "safe", "resolver": self.resolver}

    def state(self, *, copy: bool = True) -> dict[str, FloatArray]:
        gadget = {"gadget_regret": self._gadget_regret, "follow": self._follow}
        return super().state(copy=copy) | {name: array.copy() if copy else array for name, array in gadget.items()}

    def restore(self, state: Mapping[str, FloatArray]) -> None:
        for name, current in (("gadget_regret", self._gadget_regret), ("follow", self._follow)):
            if state[name].shape != current.shape:
                raise InputError(f"state array {name!r} is {list(state[name].shape)}, expected {list(current.shape)}")
        super().restore(state)
        self._gadget_regret, self._follow = state["gadget_regret"], state["follow"]


def acting_entries(tree: PublicTree, player: int) -> NDArray[np.bool_]:
    """The entries of a strategy array (laid out over ``tree``'s own segments) at ``player``'s decision nodes."""
    betting = tree.betting
    mask: NDArray[np.bool_] = laid_out(
        tree, lambda node: np.full(int(betting.num_children[node]) * tree.num_hands, betting.player[node] == player)
    )
    return mask


def safe_resolve(
    tree: PublicTree,
    rule: UpdateRule,
    algorithm: str,
    blueprint: FloatArray,
    iterations: int,
    progress: Callable[[int, int], None] | None = None,
) -> FloatArray:
    """``blueprint`` before the last round and, in it, each player's average strategy of ``iterations`` iterations
    of :class:`GadgetSolver`. ``progress(player, t)`` is called after each iteration.

    One player at a time, so one solver's arrays are held at once, and of the first player's solve only its own
    entries are kept while the second's runs (:func:`resolve_peak_bytes`)."""
    kept = []
    for resolver in range(2):
        solver = GadgetSolver(tree, rule, algorithm, blueprint, resolver)
        for t in range(1, iterations + 1):
            solver.iterate()
            if progress is not None:
                progress(resolver, t)
        average = solver.average_strategy(release=True)
        del solver
        kept.append(average[acting_entries(tree, resolver)])  # each mask made when used: an eighth of an array
        del average
    strategy = blueprint.copy()
    for resolver, entries in enumerate(kept):  # every entry is one player's: the blueprint's are all replaced
        strategy[acting_entries(tree, resolver)] = entries
    return strategy


def resolve_peak_bytes(tree: PublicTree) -> int:
    """About the bytes :func:`safe_resolve` holds at its peak, with the blueprint it reads: while the second
    player's re-solve runs, the blueprint, the first player's re-solved entries (half an array), the solver's
    regrets, cumulative and current strategy, the engine's vectors over hands (as
    :func:`~cfr_agents.public_tree.solver.peak_bytes` counts them, the blueprint in place of the average it counts)
    and the gadget's choice over segments and hands and its regrets and values over endgames and hands. All in
    float64; on Flop Hold'em, 12.4 GB."""
    first = int(acting_entries(tree, 0).sum())
    rounds = tree.segments.round_start
    endgames = int(rounds[tree.rules.num_rounds] - rounds[tree.rules.num_rounds - 1])
    return peak_bytes(tree) + 8 * (first + (tree.segments.count + 3 * endgames) * tree.num_hands)
