"""Neural CFR on a compiled tree: Deep CFR (:mod:`.deep_cfr`) and Single Deep CFR (:mod:`.sd_cfr`).

Both share the iteration (:mod:`.solver`), the traversals and memories (:mod:`.traversal`) and the
networks (:mod:`.networks`). They need ``torch`` (the ``nfsp`` extra): without it they are refused in one
line naming the extra.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from cfr_agents.solvers.neural.deep_cfr import DeepCFRSolver
from cfr_agents.solvers.neural.sd_cfr import SingleDeepCFRSolver
from cfr_agents.solvers.neural.solver import LIMITS, PRESETS, NeuralSettings, NeuralSolver, settings_of
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
    tree.require_two_player_zero_sum("neural CFR's solvers")
    return NEURAL[algorithm](tree, tensors, algorithm, settings or NeuralSettings(), rng)


def infoset_tensors(tree: CompiledTree) -> NDArray[np.float32]:
    """The information-state tensor of every infoset of ``tree`` (:mod:`adapters.tensors`), in its row order;
    a game without tensors is refused in one line."""
    from adapters import load_game
    from adapters.tensors import encoder

    tensors: NDArray[np.float32] = encoder(load_game(tree.game_id)).of_keys(tree.infoset_keys)
    return tensors


def foreign_settings(algorithm: str) -> tuple[str, ...]:
    """The settings of :class:`NeuralSettings` that ``algorithm`` does not read: the other variant's own."""
    return tuple(name for other, kind in NEURAL.items() if other != algorithm for name in kind.OWN_SETTINGS)


__all__ = [
    "LIMITS",
    "NEURAL",
    "PRESETS",
    "DeepCFRSolver",
    "NeuralSettings",
    "NeuralSolver",
    "SingleDeepCFRSolver",
    "foreign_settings",
    "infoset_tensors",
    "make_neural_solver",
    "settings_of",
]
