r"""PDCFR+ (Xu, Li, Fu, Fu & Huang, IJCAI 2024): predictive DCFR+, alternating updates.

With :math:`d(s) = s^\alpha / (s^\alpha + 1)`:
:math:`R^t = [R^{t-1} d(t-1) + r^t]^+`, and the next strategy plays on the prediction that the next
regret equals the last, :math:`\sigma^{t+1} \propto [R^t d(t) + r^t]^+`; the average is weighted by
:math:`t^\gamma`. Defaults as in the authors' code: :math:`\alpha = 2.3`, :math:`\gamma = 5`.
"""

import math

from cfr_agents.solvers.update_rule import UpdateRule

NAME = "pdcfr+"
RULE = UpdateRule(alpha=2.3, beta=-math.inf, gamma=5.0, predictive=True, discount_first=True)
TUNABLE: tuple[str, ...] = ("alpha", "gamma")
"""beta is fixed: negative regrets are clipped."""
