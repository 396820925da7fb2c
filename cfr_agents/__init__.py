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
