r"""Single Deep CFR (Steinberger 2019): no average network; the average is the iteration strategies' mixture.

SD-CFR keeps every iteration's value networks and plays their linearly weighted mixture. On a compiled
tree that mixture is computed exactly, infoset by infoset, as linear CFR's average of the strategies
the networks define,

.. math::

   \bar\sigma^T_p(I) = \frac{\sum_{t \le T} t\,\pi^{\sigma^t}_p(I)\,\sigma^t_p(I)}
                            {\sum_{t \le T} t\,\pi^{\sigma^t}_p(I)},

each iteration's weight at :math:`I` being its own reach :math:`\pi^{\sigma^t}_p(I)` (the probability that
playing iteration :math:`t`'s strategy from the start leads to :math:`I`). The sum is accumulated as the
iterations run (:meth:`~.solver.NeuralSolver.tabular_average`), from the very strategies the
traversals used.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

import cfr_agents.solvers.neural.networks as networks
from cfr_agents.solvers.neural.solver import NeuralSolver
from cfr_agents.tree import FloatArray

NAME = "sd-cfr"


class SingleDeepCFRSolver(NeuralSolver):
    """Single Deep CFR on a compiled tree."""

    kept: dict[str, NDArray[np.float32]]
    r"""Every value network trained so far, ``value<p>.<t>.*``: :math:`\theta^t_p`, which defines
    :math:`\sigma^{t+1}_p` (what a saved model plays)."""

    def _kept(self, player: int) -> None:
        if not hasattr(self, "kept"):
            self.kept = {}
        self.kept |= networks.weights_of(self.value_networks[player], f"value{player}.{self.iteration}")

    def average_strategy(self) -> FloatArray:
        return self.tabular_average()
