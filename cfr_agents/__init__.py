"""CFR-family agents trained on the compiled tree of any adapter game.

>>> import adapters, cfr_agents
>>> solver = cfr_agents.make_solver(adapters.load_game("openspiel:kuhn_poker"), "cfr+")
>>> solver.run(100)
>>> policy = solver.average_policy()
>>> round(policy.action_probabilities("0")[1], 3)  # bet with the jack at the start
0.212
"""

from cfr_agents.policy import Policy, PolicyFileError, load_policy
from cfr_agents.solvers import ALGORITHMS, FullTreeSolver, UpdateRule, make_solver
from cfr_agents.tree import CompiledTree, compile_tree

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
