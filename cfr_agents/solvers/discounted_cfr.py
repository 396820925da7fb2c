r"""Discounted CFR, DCFR(:math:`\alpha, \beta, \gamma`) (Brown & Sandholm 2019), alternating updates.

On iteration :math:`t`, after adding :math:`r^t`: non-negative cumulative regrets are
multiplied by :math:`t^\alpha/(t^\alpha+1)`, negative ones by :math:`t^\beta/(t^\beta+1)`, and
iteration :math:`t` enters the average strategy with weight :math:`t^\gamma`. Defaults are
the paper's recommendation :math:`\alpha = 3/2, \beta = 0, \gamma = 2`. Matches OpenSpiel's
``discounted_cfr.DCFRSolver``.
"""

from cfr_agents.solvers.update_rule import UpdateRule

NAME = "dcfr"
RULE = UpdateRule(alpha=1.5, beta=0.0, gamma=2.0)
TUNABLE: tuple[str, ...] = ("alpha", "beta", "gamma")
"""The parameters a user may set (``--alpha``... of ``train``, ``--grid`` keys of ``sweep``)."""
