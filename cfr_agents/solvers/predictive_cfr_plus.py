r"""Predictive CFR+ (Farina, Kroer & Sandholm 2021), alternating updates.

Each infoset runs predictive regret matching+: the cumulative regret is kept non-negative,
:math:`R^t = [R^{t-1} + r^t]^+`, and the next strategy plays on the prediction that the
next regret equals the last one, :math:`m^{t+1} = r^t`:
:math:`\sigma^{t+1}(I,a) \propto [R^t(I,a) + r^t(I,a)]^+`. The average is quadratic,
:math:`\bar\sigma^T(I,a) \propto \sum_t t^2\,\pi_i^{\sigma^t}(I)\,\sigma^t(I,a)` (the weighting the
paper's experiments use with PCFR+).
"""

import math

from cfr_agents.solvers.update_rule import UpdateRule

NAME = "pcfr+"
RULE = UpdateRule(alpha=math.inf, beta=-math.inf, gamma=2.0, predictive=True)
