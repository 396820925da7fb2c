r"""Deep CFR (Brown, Lerer, Gross & Sandholm 2019): the average strategy is a network.

:math:`\Pi(I, a \mid \phi)` is trained on the strategy memory :math:`\mathcal M_\Pi` of samples
:math:`(I, t, \sigma^t(I))` to minimise :math:`\sum_i t_i \lVert \Pi(I_i) - \sigma^{t_i}(I_i) \rVert^2 /
\sum_i t_i`, with :math:`\Pi(I)` the softmax of its outputs over the legal actions. It is trained from
scratch when the average is asked for (the paper trains it once, at the end), from fresh weights and
mini-batches drawn from a generator seeded by the solver's seed and the iteration alone: asking for the
average leaves the solver's own streams untouched, so the iterations that follow do not depend on when,
or whether, it was asked for, and the same memory and seed give the same network.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

import cfr_agents.solvers.neural.networks as networks
from cfr_agents.solvers.neural.solver import Arrays, NeuralSolver
from cfr_agents.tree import FloatArray

NAME = "deep-cfr"


class DeepCFRSolver(NeuralSolver):
    """Deep CFR on a compiled tree."""

    OWN_SETTINGS: ClassVar[tuple[str, ...]] = ("average_batches", "average_batch_size", "strategy_memory")
    average_network: Any = None
    """:math:`\\Pi`, as last trained by :meth:`average_strategy` (``None`` before)."""
    _average_at: int = -1

    def _kept(self, player: int) -> None:
        """Nothing: Deep CFR's average is its strategy network, not its value networks."""

    def _own_state(self) -> dict[str, np.ndarray]:
        """None: the average-strategy network is trained anew when asked for, from the saved memory and seed."""
        return {}

    def _restore_own(self, arrays: Arrays, iteration: int) -> None:
        """Nothing to take (:meth:`_own_state`); the average network is trained anew when next asked for."""
        self._average_at = -1

    def average_strategy(self) -> FloatArray:
        r""":math:`\Pi(I)` for every infoset, from a network trained on :math:`\mathcal M_\Pi` now (kept until
        the next iteration); uniform before any sample."""
        if self.strategy_memory.filled == 0:
            return self.tree.uniform_strategy()
        if self._average_at != self.iteration:
            rng = np.random.default_rng((self._torch_seed, self.iteration))
            generator = networks.torch_module().Generator().manual_seed(int(rng.integers(2**63)))
            self.average_network = self._fresh_network(self._mask.shape[1], generator)
            self._fit(
                self.average_network,
                self._optimiser(self.average_network),
                self.strategy_memory,
                self.settings.average_batches,
                self.settings.average_batch_size,
                softmax=True,
                rng=rng,
            )
            self._require_finite(self.average_network, "the average-strategy network")
            self._average_at = self.iteration
        return networks.softmax(networks.predict(self.average_network, self._inputs), self._mask)
