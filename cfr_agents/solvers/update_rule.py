r"""The parameters that tell the CFR variants apart, in DCFR's notation, and their weights.

Every weight is computed so that any parameter in its range (:data:`ALPHA`, :data:`BETA`, :data:`GAMMA`) works
at any iteration up to :math:`10^9` and beyond:

* the regret discount :math:`d_\alpha(t) = t^\alpha / (t^\alpha + 1)` is the logistic function of
  :math:`x = \alpha \ln t`, evaluated as :math:`1/(1 + e^{-x})` or :math:`e^x/(1 + e^x)` by the sign
  of :math:`x`, so ``t ** alpha`` never overflows;
* the average-strategy weight :math:`w_t = t^\gamma` is handed out as :math:`\ln w_t = \gamma \ln t`;
  solvers keep their cumulative strategy divided by a scale :math:`e^{K}` that they raise, rescaling
  the sums, whenever :math:`\ln w_t - K` exceeds :data:`RESCALE_LOG`.
  Normalising the average per infoset cancels the scale.

Where nothing can overflow (:math:`|x| <` :data:`RESCALE_LOG`, :math:`K = 0`) the weights are the
plain powers, so results equal those of the direct formulas bit for bit.
The sampling kernels compile these same two discount functions with Numba.

A hyperparameter schedule (Zhang, McAleer & Sandholm 2024) lets the average's exponent move with the
iteration: the recursion :math:`C^t = C^{t-1} ((t-1)/t)^{\gamma_{t-1}} + \pi_i(I)\,\sigma^t(I)`
with :math:`\gamma_s = \gamma + c\,\min(s, T)/T` (see :func:`scheduled_gamma`). Unrolled, it weights
iteration :math:`t` by :math:`w_t = e^{L_t}` relative to the others, with
:math:`L_t = \sum_{s=1}^{t-1} \gamma_s (\ln(s+1) - \ln s)`, which :func:`log_average_weight` sums in
closed form; a constant exponent (:math:`c = 0`) gives back :math:`L_t = \gamma \ln t`, so the rules
without a schedule keep their weights, bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from numba import njit

from adapters.inputs import InputError, Interval, ParameterError

RESCALE_LOG = 600.0
"""Largest exponent used directly; ``exp(600)`` is about ``1e260``, well inside float64."""
TIE = 1e-12
r"""Rounding's width for the full-tree and public-tree kernels' ties. An instantaneous regret
:math:`|q(I,a) - v(I)| \le` ``TIE`` :math:`|v(I)|` is taken as 0: actions worth the same in exact arithmetic
(a raise the opponent always folds to and a check that wins the showdown) come out an ulp apart from sums taken
in different orders, and regret matching would turn that ulp into a pure strategy. A sum of non-negative reaches
below ``TIE`` times the reaches summed is an exact 0 in the same way. Genuine differences are far larger than
float64's rounding of a sum of a few thousand terms."""
DEFAULT_HORIZON = 1000
"""The schedule's :math:`T` unless a rule says otherwise: the 1,000 iterations the paper's experiments run."""
ALPHA = Interval(0.0, 50.0, infinities=(math.inf,))
r"""The positive regrets' exponent :math:`\alpha`: :math:`d_\alpha(t)` never falls with :math:`t` from 0 on
(below, positive regrets would be forgotten ever faster); from 50 on it is within :math:`2^{-50}` of 1 for every
:math:`t \ge 2`, which is ``inf``, no discount, in float64."""
BETA = Interval(-50.0, 50.0, infinities=(-math.inf, math.inf))
r"""The negative regrets' exponent :math:`\beta`: beyond :math:`\pm 50`, :math:`d_\beta(t)` is within
:math:`2^{-50}` of 0 or 1 for every :math:`t \ge 2`, which is ``-inf`` (floored at 0, RM+) or ``inf`` (kept)."""
GAMMA = Interval(0.0, 100.0)
r"""The average's exponent :math:`\gamma`, also every :math:`\gamma_s` of a schedule. From 0 on the weights
:math:`t^\gamma` never fall (a negative :math:`\gamma` favours the first iterates; below -1 they keep a share
of the average for ever, and at :math:`-10^{308}` the average is the first, uniform, iterate). The last
fraction :math:`f` of a run carries :math:`1 - (1 - f)^{\gamma + 1}` of the average's weight: at 100 its last
3% carry 95%; beyond, the average is the last few iterates, at :math:`10^6` the last one, and at
:math:`10^{308}` :math:`\gamma \ln t` overflows. The papers use 2 (DCFR), 4 and 5 (DCFR+, PDCFR+) and 30
falling to 25 (HS-PCFR+)."""


@dataclass(frozen=True)
class UpdateRule:
    """DCFR(:math:`\\alpha, \\beta, \\gamma`) with optional prediction; the other variants are special cases."""

    alpha: float = math.inf
    """Non-negative cumulative regrets are multiplied by ``t^alpha / (t^alpha + 1)``; ``inf``: by 1.
    In :data:`ALPHA`."""
    beta: float = math.inf
    """Negative cumulative regrets are multiplied by ``t^beta / (t^beta + 1)``; ``-inf``: by 0 (RM+).
    In :data:`BETA`."""
    gamma: float = 0.0
    """Iteration ``t`` adds to the average strategy with weight ``t^gamma`` (under a schedule, the
    exponent's value before the first iteration). In :data:`GAMMA`."""
    predictive: bool = False
    """Regret matching on ``R^t + r^t`` (predictive CFR+) instead of ``R^t``."""
    discount_first: bool = False
    """Discount the regrets so far with the previous iteration's weights, then add the new regret:
    :math:`R^t = d_{t-1}(R^{t-1}) + r^t`, and match regrets on :math:`d_t(R^t)` (plus the prediction),
    as DCFR+ and PDCFR+ do (Xu et al. 2024). Otherwise :math:`R^t = d_t(R^{t-1} + r^t)`, as DCFR does."""
    gamma_change: float = 0.0
    """The hyperparameter schedule of the average's exponent (Zhang, McAleer & Sandholm 2024): after
    :math:`s` iterations it is :math:`\\gamma_s = \\gamma + c\\,\\min(s, T)/T` with ``c = gamma_change`` and
    ``T = horizon``, and the average is the recursion :math:`C^t = C^{t-1} ((t-1)/t)^{\\gamma_{t-1}} + \\pi_i\\sigma^t`.
    ``0``: the constant ``gamma`` (weight ``t^gamma``), as every rule without a schedule. ``gamma + gamma_change``,
    the last exponent, is in :data:`GAMMA` too."""
    horizon: int = DEFAULT_HORIZON
    """The schedule's :math:`T`, the number of iterations the run is meant to make; past it the exponent
    stays at :math:`\\gamma + c`. Used only when ``gamma_change`` is not 0."""

    def __post_init__(self) -> None:
        ALPHA.check("alpha", self.alpha)
        BETA.check("beta", self.beta)
        GAMMA.check("gamma", self.gamma)
        last = self.gamma + self.gamma_change
        if last not in GAMMA:
            raise ParameterError(
                "the schedule's last exponent, {gamma} + {gamma_change} = {gamma_value!r} + {change!r}, {refusal}",
                gamma_value=self.gamma,
                change=self.gamma_change,
                refusal=GAMMA.refusal(last),
            )
        if isinstance(self.horizon, bool) or not isinstance(self.horizon, int) or self.horizon < 1:
            raise InputError(f"horizon must be a whole number of iterations, at least 1; got {self.horizon!r}")

    @property
    def scheduled(self) -> bool:
        """Whether the average's exponent follows a schedule (``gamma_change`` is not 0)."""
        return self.gamma_change != 0.0

    def gamma_after(self, s: int) -> float:
        """:math:`\\gamma_s`, the exponent after :math:`s` iterations:
        :math:`C^{s+1} = C^s (s/(s+1))^{\\gamma_s} + \\pi_i\\sigma^{s+1}`."""
        return scheduled_gamma(self.gamma, self.gamma_change, float(self.horizon), float(s))

    def log_average_weight(self, t: int) -> float:
        """:math:`\\ln w_t`: :math:`\\gamma \\ln t`, or :math:`L_t` under a schedule."""
        return log_average_weight(self.gamma, self.gamma_change, float(self.horizon), float(t))

    def parameters(self) -> dict[str, float | bool | str | int]:
        """JSON-friendly parameters (infinities as strings); the schedule's only when there is one."""
        fields = asdict(self)
        if not self.scheduled:
            del fields["gamma_change"], fields["horizon"]
        return {k: (str(v) if isinstance(v, float) and math.isinf(v) else v) for k, v in fields.items()}


def discount(exponent: float, t: float) -> float:
    """:math:`t^e / (t^e + 1)`; ``1`` for ``e = inf`` and ``0`` for ``e = -inf``, stable for any ``e``."""
    if exponent == math.inf:
        return 1.0
    if exponent == -math.inf:
        return 0.0
    x = exponent * math.log(t)
    if abs(x) < RESCALE_LOG:
        weight: float = t**exponent
        return weight / (weight + 1.0)
    return 1.0 / (1.0 + math.exp(-x)) if x > 0 else math.exp(x) / (1.0 + math.exp(x))


def log_discount(exponent: float, t: float) -> float:
    """:math:`\\ln d_e(t) = -\\ln(1 + t^{-e})`, stable for any ``e`` (``-inf`` for ``e = -inf``)."""
    if exponent == math.inf:
        return 0.0
    if exponent == -math.inf:
        return -math.inf
    x = exponent * math.log(t)
    return -(max(-x, 0.0) + math.log1p(math.exp(-abs(x))))


def scheduled_gamma(gamma: float, change: float, horizon: float, s: float) -> float:
    """:math:`\\gamma_s = \\gamma + c\\,\\min(s, T)/T`; the paper's HS-PCFR+(30) is
    :math:`\\gamma = 30`, :math:`c = -5`: :math:`\\gamma_s = 30 - 5 s/T`."""
    return gamma + change * min(s, horizon) / horizon


def log_average_weight(gamma: float, change: float, horizon: float, t: float) -> float:
    r""":math:`\ln w_t` for iteration :math:`t \ge 1`: :math:`\gamma \ln t` when :math:`c = 0`, else
    :math:`L_t = \sum_{s=1}^{t-1} \gamma_s (\ln(s+1) - \ln s)`.

    With :math:`\gamma_s = \gamma + (c/T) s` up to :math:`s = T`, summation by parts,
    :math:`\sum_{s=1}^{n} s (\ln(s+1) - \ln s) = n \ln(n+1) - \ln n!`, gives for :math:`t \le T + 1`
    :math:`L_t = \gamma \ln t + (c/T)\,((t-1) \ln t - \ln\Gamma(t))`; beyond, the constant
    :math:`\gamma + c` adds :math:`(\gamma + c)(\ln t - \ln(T+1))`.
    """
    if change == 0.0:
        return gamma * math.log(t) if gamma != 0.0 else 0.0
    linear = min(t, horizon + 1.0)
    log = gamma * math.log(linear) + change / horizon * ((linear - 1.0) * math.log(linear) - math.lgamma(linear))
    if t > linear:
        log += (gamma + change) * (math.log(t) - math.log(linear))
    return log


compiled_discount = njit(cache=True, error_model="numpy")(discount)
""":func:`discount` compiled, for the kernels."""
compiled_log_discount = njit(cache=True, error_model="numpy")(log_discount)
""":func:`log_discount` compiled, for the kernels."""
compiled_log_average_weight = njit(cache=True, error_model="numpy")(log_average_weight)
""":func:`log_average_weight` compiled, for the kernels."""
