"""Neural CFR on a compiled tree: Deep CFR (:mod:`.deep_cfr`) and Single Deep CFR (:mod:`.sd_cfr`).

Both share the iteration (:mod:`.solver`), the traversals and memories (:mod:`.traversal`) and the
networks (:mod:`.networks`). They need ``torch`` (the ``nfsp`` extra): without it they are refused in one
line naming the extra.
"""

from __future__ import annotations

import numpy as np

from cfr_agents.solvers.neural.deep_cfr import DeepCFRSolver
from cfr_agents.solvers.neural.sd_cfr import SingleDeepCFRSolver
from cfr_agents.solvers.neural.solver import NeuralSettings, NeuralSolver
from cfr_agents.tree import CompiledTree

NEURAL: dict[str, type[NeuralSolver]] = {"deep-cfr": DeepCFRSolver, "sd-cfr": SingleDeepCFRSolver}


def make_neural_solver(
    tree: CompiledTree,
    tensors: np.ndarray,
    algorithm: str,
    settings: NeuralSettings | None = None,
    *,
    rng: np.random.Generator,
) -> NeuralSolver:
    """A solver of ``algorithm`` (one of :data:`NEURAL`) on ``tree``, reading infosets as ``tensors``."""
    return NEURAL[algorithm](tree, tensors, algorithm, settings or NeuralSettings(), rng)


__all__ = ["NEURAL", "DeepCFRSolver", "NeuralSettings", "NeuralSolver", "SingleDeepCFRSolver", "make_neural_solver"]
