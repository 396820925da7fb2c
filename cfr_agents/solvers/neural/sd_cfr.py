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

import bisect
import math
import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

import cfr_agents.solvers.neural.networks as networks
from adapters.inputs import InputError
from cfr_agents.solvers.neural.solver import Arrays, NeuralSettings, NeuralSolver
from cfr_agents.tree import CompiledTree, FloatArray

NAME = "sd-cfr"
_KEPT = re.compile(r"kept\.value([01])\.([1-9][0-9]{0,11})\.")
"""``kept.value<p>.<t>.``: a kept network's arrays in :meth:`SingleDeepCFRSolver.state`."""


class SingleDeepCFRSolver(NeuralSolver):
    """Single Deep CFR on a compiled tree."""

    OWN_SETTINGS: ClassVar[tuple[str, ...]] = ("kept_networks",)

    def __init__(
        self,
        tree: CompiledTree,
        tensors: NDArray[np.float32],
        algorithm: str,
        settings: NeuralSettings,
        rng: np.random.Generator,
    ) -> None:
        super().__init__(tree, tensors, algorithm, settings, rng)
        self.kept: dict[str, NDArray[np.float32]] = {}
        r"""Every value network trained so far, ``value<p>.<t>.*``: :math:`\theta^t_p`, which defines
        :math:`\sigma^{t+1}_p` (what a saved model plays)."""

    def _kept(self, player: int) -> None:
        self.kept |= networks.weights_of(self.value_networks[player], f"value{player}.{self.iteration}")

    def average_strategy(self) -> FloatArray:
        return self.tabular_average()

    def _own_state(self) -> dict[str, np.ndarray]:
        """The kept networks, ``kept.value<p>.<t>.*``."""
        return {f"kept.{name}": value for name, value in self.kept.items()}

    def _restore_own(self, arrays: Arrays, iteration: int) -> None:
        """The kept networks of iterations 1 to ``iteration``, each whole and of this solver's shapes."""
        shapes = {name: tuple(value.shape) for name, value in self.value_networks[0].state_dict().items()}
        prefixes = set()
        for name in arrays.names("kept."):
            match = _KEPT.match(name)
            if match is None or int(match[2]) > iteration or name[match.end() :] not in shapes:
                raise InputError(f"array {name!r} is not a network of iterations 1 to {iteration}")
            prefixes.add(match[0])
        self.kept = {
            f"{prefix.removeprefix('kept.')}{parameter}": arrays.take(f"{prefix}{parameter}", np.float32, shape)
            for prefix in sorted(prefixes)
            for parameter, shape in shapes.items()
        }


def kept_iterations(iterations: int, keep: int, candidates: Sequence[int] | None = None) -> list[int]:
    r"""The iterations :math:`t` whose value networks an SD-CFR model of ``iterations`` iterations keeps: every
    :math:`1 \le t < T` (:math:`\theta^T` defines :math:`\sigma^{T+1}`, which no iteration played), or ``keep`` of
    them (0: all), in blocks of equal linear weight, :math:`t_j \approx (T-1)\sqrt{j/K}`, the last among them.
    From ``candidates`` (the iterations a model already kept, :math:`T-1` among them), each :math:`t_j` is the first
    candidate at or after it (the last candidate if none is)."""
    played = list(range(1, iterations))
    pool = sorted(candidates) if candidates is not None else played
    if keep and keep < len(pool):
        targets = (played[math.ceil(len(played) * math.sqrt((j + 1) / keep)) - 1] for j in range(keep))
        return sorted({pool[min(bisect.bisect_left(pool, t), len(pool) - 1)] for t in targets})
    return pool


def kept_weights(
    kept: Mapping[str, NDArray[np.float32]], iterations: int, keep: int, candidates: Sequence[int] | None = None
) -> dict[str, NDArray[np.float32]]:
    """The arrays of ``kept`` (``value<p>.<t>.*``) that a model of ``iterations`` iterations thinned to ``keep``
    networks a player holds (:func:`kept_iterations`, from ``candidates`` if given)."""
    chosen = {f"value{p}.{t}" for t in kept_iterations(iterations, keep, candidates) for p in range(2)}
    return {name: value for name, value in kept.items() if name.rsplit(".", 2)[0] in chosen}
