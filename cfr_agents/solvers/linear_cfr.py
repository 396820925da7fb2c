r"""Linear CFR (Brown & Sandholm 2019), alternating updates.

Iteration :math:`t`'s regret and average-strategy contributions are weighted by :math:`t`.
Equivalently (DCFR with :math:`\alpha = \beta = \gamma = 1`): after adding :math:`r^t`, every
cumulative regret is multiplied by :math:`t/(t+1)`, and
:math:`\bar\sigma^T(I,a) \propto \sum_t t\,\pi_i^{\sigma^t}(I)\,\sigma^t(I,a)`.
Matches OpenSpiel's ``discounted_cfr.LCFRSolver``.
"""

from cfr_agents.solvers.update_rule import UpdateRule

NAME = "lcfr"
RULE = UpdateRule(alpha=1.0, beta=1.0, gamma=1.0)
