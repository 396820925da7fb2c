"""CFR-family solvers. Each algorithm module defines ``NAME`` and its :class:`UpdateRule` ``RULE``;
``sampling="none"`` runs it on :class:`~cfr_agents.solvers.full_tree.FullTreeSolver`, any other
scheme on :class:`~cfr_agents.solvers.sampling.SampledSolver`."""

from __future__ import annotations

from types import ModuleType
from typing import TypeAlias

import numpy as np

from adapters import Game
from adapters.inputs import InputError, ParameterError
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.solvers import (
    cfr,
    cfr_plus,
    dcfr_plus,
    discounted_cfr,
    hs_pcfr_plus,
    linear_cfr,
    predictive_cfr_plus,
    predictive_dcfr_plus,
)
from cfr_agents.solvers.full_tree import FullTreeSolver
from cfr_agents.solvers.sampling import ALL_SCHEMES, SAMPLING_CHOICES, SCHEMES, SampledSolver
from cfr_agents.solvers.update_rule import UpdateRule
from cfr_agents.tree import CompiledTree, compile_tree

_MODULES: tuple[ModuleType, ...] = (
    cfr,
    cfr_plus,
    linear_cfr,
    discounted_cfr,
    predictive_cfr_plus,
    dcfr_plus,
    predictive_dcfr_plus,
    hs_pcfr_plus,
)
ALGORITHMS: dict[str, UpdateRule] = {module.NAME: module.RULE for module in _MODULES}
TUNABLE: dict[str, tuple[str, ...]] = {module.NAME: module.TUNABLE for module in _MODULES if hasattr(module, "TUNABLE")}
"""The rule parameters (``alpha``, ``beta``, ``gamma``) a user may set, per algorithm: a module's ``TUNABLE``."""
Solver: TypeAlias = FullTreeSolver | SampledSolver


def make_solver(
    game: Game | CompiledTree | AbstractGame,
    algorithm: str,
    rule: UpdateRule | None = None,
    *,
    sampling: str = "none",
    rng: np.random.Generator | None = None,
    averaging: str | None = None,
    epsilon: float | None = None,
    chance_draws: str | None = None,
) -> Solver:
    """A solver of ``algorithm`` (one of :data:`ALGORITHMS`); ``rule`` overrides its parameters.

    ``sampling`` is ``"none"`` (full tree) or a scheme of :data:`ALL_SCHEMES` (on a compiled tree, of
    :data:`SCHEMES`), which draws from ``rng``
    (required) and takes an ``averaging`` mode, ``chance_draws`` (``"independent"`` or ``"stratified"``)
    and, for ``"outcome"``, an exploration ``epsilon``. An abstract game (limit hold'em through a card
    abstraction) is sampled only.
    """
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    rule = rule or ALGORITHMS[algorithm]
    if isinstance(game, AbstractGame) and sampling == "none":
        raise ParameterError("an abstract game has no tree to walk in full: give {sampling} external or another scheme")
    tree = game if isinstance(game, CompiledTree | AbstractGame) else compile_tree(game)
    if sampling == "none":
        given = [
            f"{{{name}}}"
            for name, value in (("averaging", averaging), ("epsilon", epsilon), ("chance_draws", chance_draws))
            if value is not None
        ]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise ParameterError(f"{' and '.join(given)} {verb} to sampled solvers only (give {{sampling}})")
        assert isinstance(tree, CompiledTree)  # an abstract game was refused above
        return FullTreeSolver(tree, rule, algorithm)
    if rng is None:
        raise InputError("a sampled solver needs a numpy.random.Generator (rng=np.random.default_rng(seed))")
    return SampledSolver(
        tree, rule, algorithm, sampling, rng, averaging=averaging, epsilon=epsilon, chance_draws=chance_draws
    )


__all__ = [
    "ALGORITHMS",
    "ALL_SCHEMES",
    "SAMPLING_CHOICES",
    "SCHEMES",
    "TUNABLE",
    "FullTreeSolver",
    "SampledSolver",
    "Solver",
    "UpdateRule",
    "make_solver",
]
