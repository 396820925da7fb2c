r"""Deep CFR (Brown, Lerer, Gross & Sandholm 2019): the average strategy is a network.

:math:`\Pi(I, a \mid \phi)` is trained on the strategy memory :math:`\mathcal M_\Pi` of samples
:math:`(I, t, \sigma^t(I))` to minimise :math:`\sum_i t_i \lVert \Pi(I_i) - \sigma^{t_i}(I_i) \rVert^2 /
\sum_i t_i`, with :math:`\Pi(I)` the softmax of its outputs over the legal actions. It is trained from
scratch when the average is asked for (the paper trains it once, at the end); the same memory and
seed give the same network.
"""

from __future__ import annotations

from typing import Any

import cfr_agents.solvers.neural.networks as networks
from cfr_agents.solvers.neural.solver import NeuralSolver
from cfr_agents.tree import FloatArray

NAME = "deep-cfr"


class DeepCFRSolver(NeuralSolver):
    """Deep CFR on a compiled tree."""

    average_network: Any = None
    """:math:`\\Pi`, as last trained by :meth:`average_strategy` (``None`` before)."""
    _average_at: int = -1

    def _kept(self, player: int) -> None:
        """Nothing: Deep CFR's average is its strategy network, not its value networks."""

    def average_strategy(self) -> FloatArray:
        r""":math:`\Pi(I)` for every infoset, from a network trained on :math:`\mathcal M_\Pi` now (kept until
        the next iteration); uniform before any sample."""
        if self.strategy_memory.filled == 0:
            return self.tree.uniform_strategy()
        if self._average_at != self.iteration:
            self.average_network = self._fresh_network(self._mask.shape[1])
            self._fit(
                self.average_network,
                self._optimiser(self.average_network),
                self.strategy_memory,
                self.settings.average_batches,
                self.settings.average_batch_size,
                softmax=True,
            )
            self._average_at = self.iteration
        return networks.softmax(networks.predict(self.average_network, self._inputs), self._mask)
