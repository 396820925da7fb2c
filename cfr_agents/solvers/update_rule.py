r"""The parameters that tell the CFR variants apart, in DCFR's notation, and their weights.

Every weight is computed so that any finite parameter works at any iteration:

* the regret discount :math:`d_\alpha(t) = t^\alpha / (t^\alpha + 1)` is the logistic function of
  :math:`x = \alpha \ln t`, evaluated as :math:`1/(1 + e^{-x})` or :math:`e^x/(1 + e^x)` by the sign
  of :math:`x`, so ``t ** alpha`` never overflows (``alpha = 400``, say);
* the average-strategy weight :math:`w_t = t^\gamma` is handed out as :math:`\ln w_t = \gamma \ln t`;
  solvers keep their cumulative strategy divided by a scale :math:`e^{K}` that they raise, rescaling
  the sums, whenever :math:`\ln w_t - K` exceeds :data:`RESCALE_LOG`.
  Normalising the average per infoset cancels the scale.

Where nothing can overflow (:math:`|x| <` :data:`RESCALE_LOG`, :math:`K = 0`) the weights are the
plain powers, so results equal those of the direct formulas bit for bit.
The sampling kernels compile these same two discount functions with Numba.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from numba import njit

from adapters.errors import InputError

RESCALE_LOG = 600.0
"""Largest exponent used directly; ``exp(600)`` is about ``1e260``, well inside float64."""


@dataclass(frozen=True)
class UpdateRule:
    """DCFR(:math:`\\alpha, \\beta, \\gamma`) with optional prediction; the other variants are special cases."""

    alpha: float = math.inf
    """Non-negative cumulative regrets are multiplied by ``t^alpha / (t^alpha + 1)``; ``inf``: by 1."""
    beta: float = math.inf
    """Negative cumulative regrets are multiplied by ``t^beta / (t^beta + 1)``; ``-inf``: by 0 (RM+)."""
    gamma: float = 0.0
    """Iteration ``t`` adds to the average strategy with weight ``t^gamma``."""
    predictive: bool = False
    """Regret matching on ``R^t + r^t`` (predictive CFR+) instead of ``R^t``."""
    discount_first: bool = False
    """Discount the regrets so far with the previous iteration's weights, then add the new regret:
    :math:`R^t = d_{t-1}(R^{t-1}) + r^t`, and match regrets on :math:`d_t(R^t)` (plus the prediction),
    as DCFR+ and PDCFR+ do (Xu et al. 2024). Otherwise :math:`R^t = d_t(R^{t-1} + r^t)`, as DCFR does."""

    def __post_init__(self) -> None:
        if math.isnan(self.alpha) or math.isnan(self.beta) or not math.isfinite(self.gamma):
            raise InputError(
                f"alpha and beta must be numbers (+-inf allowed) and gamma finite; got "
                f"alpha={self.alpha}, beta={self.beta}, gamma={self.gamma}"
            )

    def log_average_weight(self, t: int) -> float:
        """:math:`\\ln w_t = \\gamma \\ln t`."""
        return self.gamma * math.log(t) if self.gamma != 0.0 else 0.0

    def parameters(self) -> dict[str, float | bool | str]:
        """JSON-friendly parameters (infinities as strings)."""
        return {k: (str(v) if isinstance(v, float) and math.isinf(v) else v) for k, v in asdict(self).items()}


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


compiled_discount = njit(cache=True, error_model="numpy")(discount)
""":func:`discount` compiled, for the kernels."""
compiled_log_discount = njit(cache=True, error_model="numpy")(log_discount)
""":func:`log_discount` compiled, for the kernels."""
