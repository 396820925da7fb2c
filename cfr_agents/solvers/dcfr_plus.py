r"""DCFR+ (Xu, Li, Fu, Fu & Huang, IJCAI 2024), alternating updates.

Regret matching+ on regrets discounted before the new regret is added,
:math:`R^t = [R^{t-1}\,\frac{(t-1)^\alpha}{(t-1)^\alpha + 1} + r^t]^+`, and the average weighted by
:math:`t^\gamma`, which is the paper's :math:`\bar C^t = \bar C^{t-1} ((t-1)/t)^\gamma + \pi_i(I)\,\sigma^t`
normalised. Defaults as in the authors' code: :math:`\alpha = 1.5`, :math:`\gamma = 4`. Their code
divides by :math:`(t-1)^\alpha + 1.5`; this uses DCFR's :math:`(t-1)^\alpha + 1`, as their PDCFR+ does.
"""

import math

from cfr_agents.solvers.update_rule import UpdateRule

NAME = "dcfr+"
RULE = UpdateRule(alpha=1.5, beta=-math.inf, gamma=4.0, discount_first=True)
TUNABLE: tuple[str, ...] = ("alpha", "gamma")
"""beta is fixed: negative regrets are clipped."""
