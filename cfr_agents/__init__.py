"""CFR-family agents trained on the compiled tree of any adapter game.

>>> import adapters, cfr_agents
>>> solver = cfr_agents.make_solver(adapters.load_game("openspiel:kuhn_poker"), "cfr+")
>>> solver.run(1000)
>>> policy = solver.average_policy()
>>> from eval import exploitability
>>> exploitability(policy, solver.tree).nash_conv < 1e-3
True
>>> 0 <= policy.action_probabilities("0")[1] <= 1 / 3 + 1e-2  # equilibrium jack bets in [0, 1/3]
True

The names below are imported on first use (PEP 562), so ``import cfr_agents`` alone loads
neither NumPy nor the toolkits: the ``cfr-agents`` command answers Ctrl-C while they load.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cfr_agents.policy import Policy, PolicyFileError, load_policy
    from cfr_agents.solvers import ALGORITHMS, FullTreeSolver, UpdateRule, make_solver
    from cfr_agents.tree import CompiledTree, compile_tree

_HOMES = {
    "ALGORITHMS": "cfr_agents.solvers",
    "CompiledTree": "cfr_agents.tree",
    "FullTreeSolver": "cfr_agents.solvers",
    "Policy": "cfr_agents.policy",
    "PolicyFileError": "cfr_agents.policy",
    "UpdateRule": "cfr_agents.solvers",
    "compile_tree": "cfr_agents.tree",
    "load_policy": "cfr_agents.policy",
    "make_solver": "cfr_agents.solvers",
}

__all__ = [
    "ALGORITHMS",
    "CompiledTree",
    "FullTreeSolver",
    "Policy",
    "PolicyFileError",
    "UpdateRule",
    "compile_tree",
    "load_policy",
    "make_solver",
]


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module 'cfr_agents' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
