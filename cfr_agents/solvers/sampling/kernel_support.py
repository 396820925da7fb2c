r"""Compiled pieces every sampling kernel shares: the random stream, regret matching, sampling,
the per-iteration weights and the lazily discounted regret update.

All state lives in arrays the Python side owns (so a checkpoint is a set of arrays):

* ``regret[I, a]`` -- :math:`R(I,a)`, with discounts owed since the row's last update still unapplied;
* ``log_at[I] = (L^+, L^-)`` -- the cumulative log-discounts :math:`L^\pm(t) = \sum_{s \le t} \ln d_\pm(s)`
  at the row's last update. A row untouched since iteration :math:`s` owes the factor
  :math:`e^{L^\pm(t-1) - L^\pm(s)}` on its positive (negative) entries; discounting never changes an
  entry's sign, so the owed factor is exact, and regret matching, which only sees the positive part
  of a row scaled by one factor, is unaffected by it;
* ``current[I, a]`` -- :math:`\sigma^t(I,a)`, regret matching on the row, refreshed whenever the
  row's regrets change (so a visit only reads it);
* ``cumulative[I, a]`` -- :math:`C(I,a) / e^K`, the average-strategy numerator over the scale :math:`e^K`;
* ``scalars`` -- the iteration, :math:`L^\pm` now and one iteration ago, :math:`K`, this iteration's
  scaled weight :math:`w_t / e^K`, the scaled cumulative weight :math:`\sum_{s \le t} w_s / e^K`, and
  this iteration's discounts :math:`d_\pm(t)`;
* ``rng`` -- the four 64-bit words of a xoshiro256** generator (Blackman & Vigna 2018), seeded from
  the user's ``numpy.random.Generator``;
* ``shift`` -- one 64-bit word :math:`s_i` per player, the random shift of player :math:`i`'s stratified chance
  sequence (:func:`stratified_uniform`), drawn from the same ``Generator``.

Chance draws (``chance_draws``):

* independent (code 0) -- a fresh uniform from ``rng`` at every chance node (the textbook schemes);
* stratified (code :data:`STRATIFIED`) -- one uniform :math:`u` per traversal drives every chance
  node of it by inverse CDF: a node picks the child :math:`c` with :math:`F_{c-1} \le u < F_c` and
  hands :math:`(u - F_{c-1}) / p_c` (again uniform, given :math:`c`) to the chance nodes below
  (:func:`stratified_child`). A traversal's branches restart from the :math:`u` their frame saved, so
  they meet the same later chance outcomes (common random numbers). :math:`u` itself is the randomly shifted
  Weyl sequence :math:`u_t = \{s_i + t\varphi^{-1}\}` (randomised quasi-Monte Carlo, Cranley &
  Patterson 1976): each :math:`u_t` alone is exactly uniform, so every iteration's sampled regrets keep
  their expectation, while over iterations the chance outcomes are spread evenly instead of at random.
"""

from __future__ import annotations

import math
from typing import Any, TypeAlias

import numpy as np
from numba import njit

from cfr_agents.solvers.update_rule import RESCALE_LOG
from cfr_agents.solvers.update_rule import compiled_discount as discount
from cfr_agents.solvers.update_rule import compiled_log_discount as log_discount

CODE, INDEX, FIRST, COUNT = range(4)
"""Columns of the kernels' ``nodes`` array: a node's code, its infoset (decision nodes), its first
child and its number of children. Nodes are numbered breadth-first, so a node's children are the
consecutive nodes ``FIRST .. FIRST + COUNT - 1`` (child ``a`` is action column ``a`` or chance
outcome ``a``) and every parent precedes its children."""
TERMINAL, CHANCE, PLAYER_0, PLAYER_1 = range(-1, 3)
"""Node codes; a decision node's code is ``1 + player``, for any number of players."""

ITERATION, L_POS, L_NEG, L_POS_BEFORE, L_NEG_BEFORE, LOG_SCALE, WEIGHT, WEIGHT_SUM, D_POS, D_NEG = range(10)
NUM_SCALARS = 10

KernelTree: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray, int, Any]
"""``(nodes, values, cdf, depth_bound, deal)``: see :func:`cfr_agents.solvers.sampling.kernel_tree`; ``deal`` is
``None`` on a compiled tree (:mod:`~cfr_agents.solvers.sampling.deals`)."""
KernelState: TypeAlias = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]
"""``(regret, current, cumulative, log_at, weight_at, scalars, rng, shift)``, as described above."""
KernelOptions: TypeAlias = tuple[float, float, float, int, float, int]
"""``(alpha, beta, gamma, averaging mode, epsilon, chance draws)``."""
INDEPENDENT, STRATIFIED = 0, 1
"""The kernels' codes for independent and stratified chance draws: their index in ``CHANCE_DRAWS``."""
_TWO_TO_MINUS_53 = 1.0 / 9007199254740992.0
_ONE_BELOW_ONE = 1.0 - _TWO_TO_MINUS_53
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
r""":math:`\lfloor 2^{64} / \varphi \rfloor`, the 64-bit step of the golden-ratio Weyl sequence."""


@njit(cache=True, error_model="numpy", inline="always")
def _rotl(x: np.uint64, k: int) -> np.uint64:
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True, error_model="numpy", inline="always")
def uniform(rng: np.ndarray) -> float:
    """A float in [0, 1) from xoshiro256**; advances ``rng`` in place."""
    s0, s1, s2, s3 = rng[0], rng[1], rng[2], rng[3]
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    rng[0], rng[1], rng[2], rng[3] = s0, s1, s2, s3
    return float(result >> np.uint64(11)) * _TWO_TO_MINUS_53


@njit(cache=True, error_model="numpy", inline="always")
def sample(probabilities: np.ndarray, n: int, rng: np.ndarray) -> int:
    """An index in ``[0, n)`` drawn with the given probabilities (their first ``n`` entries)."""
    u = uniform(rng)
    total = 0.0
    for a in range(n - 1):
        total += probabilities[a]
        if u < total:
            return a
    return n - 1


@njit(cache=True, error_model="numpy", inline="always")
def chance_child(nodes: np.ndarray, cdf: np.ndarray, node: int, rng: np.ndarray) -> int:
    """A child of chance node ``node`` drawn by chance's probabilities (``cdf[child]``: cumulative)."""
    u = uniform(rng)
    first: int = nodes[node, FIRST]
    last: int = first + nodes[node, COUNT] - 1
    for child in range(first, last):
        if u < cdf[child]:
            return child
    return last


@njit(cache=True, error_model="numpy", inline="always")
def stratified_uniform(shift: np.ndarray, player: int, t: float) -> float:
    r""":math:`u_t = \{s_i + t\varphi^{-1}\}` in 64-bit fixed point (wrapping is the fractional part)."""
    x = shift[player] + np.uint64(int(t)) * _GOLDEN
    return float(x >> np.uint64(11)) * _TWO_TO_MINUS_53


@njit(cache=True, error_model="numpy", inline="always")
def traversal_uniform(shift: np.ndarray, player: int, scalars: np.ndarray, chance_draws: int) -> float:
    """The uniform a traversal starts its chance draws from (unused with independent draws)."""
    return stratified_uniform(shift, player, scalars[ITERATION]) if chance_draws == STRATIFIED else 0.0


@njit(cache=True, error_model="numpy", inline="always")
def _residual(u: float, low: float, high: float) -> float:
    r""":math:`(u - F_{c-1}) / p_c`, kept in :math:`[0, 1)` against rounding."""
    if high <= low:
        return 0.0
    r = (u - low) / (high - low)
    return min(max(r, 0.0), _ONE_BELOW_ONE)


# Not inlined, and called by the walk from its own `if chance_draws == STRATIFIED` branch: inlining
# it, or routing both kinds of draw through one shared helper (inlined or not), cost the independent
# path about 35% of its iterations/s on Leduc (1.65M -> 1.05M it/s for external sampling).
@njit(cache=True, error_model="numpy")
def stratified_child(nodes: np.ndarray, cdf: np.ndarray, node: int, u: float) -> tuple[int, float]:
    r"""The child :math:`c` of chance node ``node`` with :math:`F_{c-1} \le u < F_c`, and the uniform
    :math:`(u - F_{c-1}) / p_c` left for the chance nodes below it."""
    first: int = nodes[node, FIRST]
    last: int = first + nodes[node, COUNT] - 1
    low = 0.0
    for child in range(first, last):
        high = cdf[child]
        if u < high:
            return child, _residual(u, low, high)
        low = high
    return last, _residual(u, low, 1.0)


@njit(cache=True, error_model="numpy", inline="always")
def regret_matching(regret: np.ndarray, infoset: int, n: int, out: np.ndarray) -> None:
    r""":math:`\sigma(I,a) = R^+(I,a) / \sum_b R^+(I,b)`, uniform when no regret is positive."""
    total = 0.0
    for a in range(n):
        positive = regret[infoset, a]
        positive = positive if positive > 0.0 else 0.0
        out[a] = positive
        total += positive
    scale = 1.0 / total if total > 0.0 else 0.0
    if total > 0.0:
        for a in range(n):
            out[a] *= scale
    else:
        for a in range(n):
            out[a] = 1.0 / n


@njit(cache=True, error_model="numpy")
def begin_iteration(
    scalars: np.ndarray, alpha: float, beta: float, gamma: float, cumulative: np.ndarray, weight_at: np.ndarray
) -> None:
    r"""Advance to iteration :math:`t`: :math:`L^\pm(t)`, :math:`d_\pm(t)` and :math:`w_t = t^\gamma / e^K`.

    When :math:`\gamma \ln t - K` passes ``RESCALE_LOG``, :math:`K` is raised to :math:`\gamma \ln t`
    and every scaled sum (``cumulative``, ``weight_at`` and the weight sum) is multiplied by the
    factor that keeps it consistent.
    """
    t = scalars[ITERATION] + 1.0
    scalars[ITERATION] = t
    scalars[L_POS_BEFORE] = scalars[L_POS]
    scalars[L_NEG_BEFORE] = scalars[L_NEG]
    scalars[L_POS] += log_discount(alpha, t)
    scalars[L_NEG] += log_discount(beta, t)
    scalars[D_POS] = discount(alpha, t)
    scalars[D_NEG] = discount(beta, t)
    log_weight = gamma * math.log(t) if gamma != 0.0 else 0.0
    if log_weight - scalars[LOG_SCALE] > RESCALE_LOG:
        rescale = math.exp(scalars[LOG_SCALE] - log_weight)
        cumulative *= rescale
        weight_at *= rescale
        scalars[WEIGHT_SUM] *= rescale
        scalars[LOG_SCALE] = log_weight
    if gamma == 0.0:
        scalars[WEIGHT] = 1.0
    elif scalars[LOG_SCALE] == 0.0:
        scalars[WEIGHT] = t**gamma
    else:
        scalars[WEIGHT] = math.exp(log_weight - scalars[LOG_SCALE])
    scalars[WEIGHT_SUM] += scalars[WEIGHT]


@njit(cache=True, error_model="numpy", inline="always")
def is_delayed(log_at: np.ndarray) -> bool:
    """Whether a kernel runs a batch of delayed updates: its state's ``log_at`` has no rows (the batch owes no
    discounts, and holds no copy of them)."""
    rows: int = log_at.shape[0]
    return rows == 0


@njit(cache=True, error_model="numpy", inline="always")
def update_regrets(
    regret: np.ndarray,
    log_at: np.ndarray,
    current: np.ndarray,
    infoset: int,
    n: int,
    instant: np.ndarray,
    scalars: np.ndarray,
    alpha: float,
    beta: float,
) -> None:
    r"""Row :math:`I` at iteration :math:`t`: pay the owed discounts, then
    :math:`R^t(I,a) = d_\pm(t)\,\big(R^{t-1}(I,a) + \tilde r^t(I,a)\big)` with the sign's discount,
    and refresh the row's current strategy, ``current[I]`` :math:`= \sigma^{t+1}(I,\cdot)`, by regret matching.

    A batch of delayed updates (:mod:`~cfr_agents.solvers.sampling.scale_out`) hands in a ``log_at`` with no rows
    (:func:`is_delayed`): its ``regret`` is the batch's increment, which only sums the sampled regrets,
    :math:`\Delta(I,a) \mathrel{+}= \tilde r(I,a)`, and ``current`` stays the snapshot's strategy."""
    if is_delayed(log_at):
        for a in range(n):
            regret[infoset, a] += instant[a]
        return
    owed_pos = math.exp(scalars[L_POS_BEFORE] - log_at[infoset, 0]) if math.isfinite(alpha) else 1.0
    owed_neg = math.exp(scalars[L_NEG_BEFORE] - log_at[infoset, 1]) if math.isfinite(beta) else 1.0
    d_pos, d_neg = scalars[D_POS], scalars[D_NEG]
    for a in range(n):
        r = regret[infoset, a]
        if r > 0.0:
            r *= owed_pos
        elif r < 0.0:
            r *= owed_neg
        r += instant[a]
        r *= d_pos if r >= 0.0 else d_neg
        regret[infoset, a] = r
    log_at[infoset, 0] = scalars[L_POS]
    log_at[infoset, 1] = scalars[L_NEG]
    regret_matching(regret, infoset, n, current[infoset])


def current_strategy(regret: np.ndarray, num_actions: np.ndarray) -> np.ndarray:
    """Regret matching on every row: the ``current`` array the kernels keep up to date."""
    current = np.zeros(regret.shape)
    match_regrets(regret, num_actions, current)
    return current


@njit(cache=True, error_model="numpy")
def match_regrets(regret: np.ndarray, num_actions: np.ndarray, current: np.ndarray) -> None:
    """Regret matching on every row, written into ``current``: a row's entries past its actions are left as they
    are (0 in an array :func:`current_strategy` made)."""
    for infoset in range(regret.shape[0]):
        regret_matching(regret, infoset, num_actions[infoset], current[infoset])


@njit(cache=True, error_model="numpy", inline="always")
def add_average(cumulative: np.ndarray, infoset: int, n: int, weight: float, sigma: np.ndarray) -> None:
    r""":math:`C(I,a) \mathrel{+}= \text{weight}\cdot\sigma(I,a)`."""
    for a in range(n):
        cumulative[infoset, a] += weight * sigma[a]
