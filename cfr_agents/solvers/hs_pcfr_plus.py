r"""HS-PCFR+ (Zhang, McAleer & Sandholm 2024, "Faster Game Solving via Hyperparameter Schedules",
arXiv 2404.09097): Predictive CFR+ whose average follows a hyperparameter schedule, alternating updates.

The iterates are PCFR+'s (:mod:`~cfr_agents.solvers.predictive_cfr_plus`): :math:`R^t = [R^{t-1} + r^t]^+`
and :math:`\sigma^{t+1}(I,a) \propto [R^t(I,a) + r^t(I,a)]^+`. The schedule sets PCFR+'s one hyperparameter,
the average's discount exponent :math:`\gamma`, anew each iteration: steep at first, then relaxing:

.. math::

   C^{t+1} = C^t \left(\frac{t}{t+1}\right)^{\gamma_t} + \pi_i^{\sigma^{t+1}}(I)\,\sigma^{t+1}(I),
   \qquad \gamma_t = 30 - 5\,\frac{t}{T},

with :math:`T` the number of iterations of the run: HS-PCFR+(30), the paper's schedule
:math:`\mathrm{HS}_\gamma(t) = 30 - 5t/T`. ``--gamma 15`` gives its HS-PCFR+(15),
:math:`\gamma_t = 15 - 5t/T`. The paper's experiments run :math:`T = 1000` iterations; that is the
default ``horizon``; ``cfr-agents train`` and ``sweep`` set it to ``--iterations``, and in Python a run
meant to go further sets ``replace(RULE, horizon=N)``. Past :math:`T`
the exponent stays at :math:`\gamma_T` (the paper defines the schedule up to :math:`T` only).
"""

import math

from cfr_agents.solvers.update_rule import DEFAULT_HORIZON, UpdateRule

NAME = "hs-pcfr+"
RULE = UpdateRule(
    alpha=math.inf, beta=-math.inf, gamma=30.0, predictive=True, gamma_change=-5.0, horizon=DEFAULT_HORIZON
)
TUNABLE: tuple[str, ...] = ("gamma",)
"""``gamma`` is the schedule's start, :math:`\\gamma_0` (30 or 15 in the paper); it falls by 5 over the horizon."""
