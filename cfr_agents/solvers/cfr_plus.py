r"""CFR+ (Tammelin 2014; Tammelin, Burch, Johanson & Bowling 2015), alternating updates.

Regret matching+: :math:`R^t(I,a) = [R^{t-1}(I,a) + r^t(I,a)]^+` (DCFR's ``beta = -inf``),
and linear averaging, :math:`\bar\sigma^T(I,a) \propto \sum_t t\,\pi_i^{\sigma^t}(I)\,\sigma^t(I,a)`
(``gamma = 1``). Reproduces OpenSpiel's ``cfr.CFRPlusSolver`` iterate for iterate.
"""

import math

from cfr_agents.solvers.update_rule import UpdateRule

NAME = "cfr+"
RULE = UpdateRule(alpha=math.inf, beta=-math.inf, gamma=1.0)
