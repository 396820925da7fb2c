r"""CFR (Zinkevich, Johanson, Bowling & Piccione 2007), alternating updates.

:math:`R^T(I,a) = \sum_{t \le T} r^t(I,a)`, :math:`\sigma^{T+1}(I,a) = [R^T(I,a)]^+ / \sum_b [R^T(I,b)]^+`
(uniform when no regret is positive) and the average strategy weights every iteration
equally, :math:`\bar\sigma^T(I,a) \propto \sum_t \pi_i^{\sigma^t}(I)\,\sigma^t(I,a)`.
With these rules it reproduces OpenSpiel's ``open_spiel.python.algorithms.cfr.CFRSolver``
iterate for iterate.
"""

import math

from cfr_agents.solvers.update_rule import UpdateRule

NAME = "cfr"
RULE = UpdateRule(alpha=math.inf, beta=math.inf, gamma=0.0)
