"""CFR-family solvers. Each algorithm module defines ``NAME`` and its :class:`UpdateRule` ``RULE``;
all run on :class:`~cfr_agents.solvers.full_tree.FullTreeSolver`."""

from __future__ import annotations

from types import ModuleType

from adapters import Game
from adapters.errors import InputError
from cfr_agents.solvers import cfr, cfr_plus, discounted_cfr, linear_cfr, predictive_cfr_plus
from cfr_agents.solvers.full_tree import FullTreeSolver, UpdateRule
from cfr_agents.tree import CompiledTree

_MODULES: tuple[ModuleType, ...] = (cfr, cfr_plus, linear_cfr, discounted_cfr, predictive_cfr_plus)
ALGORITHMS: dict[str, UpdateRule] = {module.NAME: module.RULE for module in _MODULES}


def make_solver(game: Game | CompiledTree, algorithm: str, rule: UpdateRule | None = None) -> FullTreeSolver:
    """A solver of ``algorithm`` (one of :data:`ALGORITHMS`); ``rule`` overrides its parameters."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    return FullTreeSolver(game, rule or ALGORITHMS[algorithm], algorithm)


__all__ = ["ALGORITHMS", "FullTreeSolver", "UpdateRule", "make_solver"]
