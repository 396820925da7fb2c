r"""Outcome sampling (Lanctot, Waugh, Zinkevich & Bowling 2009), one trajectory per player.

For traverser :math:`i`, one terminal history :math:`z` is sampled: chance by its probabilities,
every other player :math:`j` by :math:`\sigma^t_j`, and :math:`i` by the epsilon-greedy
:math:`q(I,\cdot) = \epsilon/|A(I)| + (1-\epsilon)\,\sigma^t(I,\cdot)`. With :math:`q(h)` the
probability of sampling the path to :math:`h` (chance excluded: it cancels) and :math:`a^*` the
sampled action at :math:`h`, the sampled value is computed bottom-up,
:math:`\tilde u(h) = \sigma^t(I,a^*)\,\tilde u(ha^*) / q(I,a^*)` at :math:`i`'s nodes and
:math:`\tilde u(h) = \tilde u(ha^*)` elsewhere, :math:`\tilde u(z) = u_i(z)`. At :math:`i`'s node

:math:`\tilde r^t(I,a) = \frac{\pi^{\sigma}_{-i}(h)}{q(h)}\Big(\tilde u(Ia) - \tilde u(h)\Big)`,
with :math:`\tilde u(Ia) = \tilde u(ha^*)/q(I,a^*)` for :math:`a = a^*` and 0 otherwise, so that
:math:`E[\tilde r^t(I,a)] = r^t(I,a)` (OpenSpiel's ``outcome_sampling_mccfr`` without baseline).

Averaging at :math:`i`'s nodes on the trajectory (``averaging``):

* ``STOCHASTIC`` (stochastically-weighted averaging, the default):
  :math:`C(I,\cdot) \mathrel{+}= w_t\,\frac{\pi^{\sigma}_i(h)}{q(h)}\,\sigma^t(I,\cdot)`; unbiased, but the
  importance weight :math:`1/q(h)` makes its variance grow with depth and with small epsilon;
* ``OPTIMISTIC`` (optimistic, or lazy, averaging): :math:`C(I,\cdot) \mathrel{+}=
  (W_t - W_{c_I})\,\pi^{\sigma}_i(h)\,\sigma^t(I,\cdot)`, where :math:`W_t = \sum_{s \le t} w_s` and
  :math:`c_I` is the last iteration that updated :math:`I`: the skipped iterations are credited as
  if :math:`I` had played :math:`\sigma^t` all along. No importance weight, so low variance, but
  biased while the strategy still moves.

The trajectory is :func:`~cfr_agents.solvers.sampling.walk.walk` with the hooks below:
the traverser's nodes open a frame that walks
only the sampled action (:func:`~.walk.one_action`), and leaving the frames backs the value up the
trajectory.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from cfr_agents.solvers.sampling.kernel_support import (
    WEIGHT,
    WEIGHT_SUM,
    KernelOptions,
    KernelState,
    KernelTree,
    add_average,
    sample,
    update_regrets,
)
from cfr_agents.solvers.sampling.walk import Stack, frames, iterate, nothing_at_end, one_action, traversal_loop

STOCHASTIC, OPTIMISTIC = 0, 1


class Context(NamedTuple):
    """What the hooks read and write."""

    regret: np.ndarray
    current: np.ndarray
    cumulative: np.ndarray
    log_at: np.ndarray
    weight_at: np.ndarray
    scalars: np.ndarray
    rng: np.ndarray
    alpha: float
    beta: float
    averaging: int
    epsilon: float
    reach: np.ndarray
    r""":math:`\pi_i(h), \pi_{-i}(h), q(h)` at the node the trajectory is at (:math:`\pi_{-i}`: every other
    player's reach, chance excluded)."""
    frame_reach: np.ndarray
    """The same on arrival at each frame's node."""
    frame_action: np.ndarray
    """:math:`a^*`, each frame's sampled action."""
    frame_q: np.ndarray
    """:math:`q(I, a^*)`, each frame's."""
    explore: np.ndarray
    instant: np.ndarray


@njit(cache=True, error_model="numpy", inline="always")
def _start(context: Context, player: int) -> None:
    r""":math:`\pi_i, \pi_{-i}` and :math:`q` are 1 at the root."""
    context.reach[0] = context.reach[1] = context.reach[2] = 1.0


@njit(cache=True, error_model="numpy", inline="always")
def _enter(context: Context, player: int, depth: int, code: int, infoset: int, n: int) -> tuple[int, bool]:
    r"""Another player draws from :math:`\sigma^t`; the traverser from :math:`q` and opens a frame."""
    reach, sigma, explore = context.reach, context.current[infoset], context.explore
    if code != 1 + player:
        a = sample(sigma, n, context.rng)
        reach[1] *= sigma[a]
        reach[2] *= sigma[a]
        return a, False
    for b in range(n):  # q = epsilon * uniform + (1 - epsilon) * sigma
        explore[b] = context.epsilon / n + (1.0 - context.epsilon) * sigma[b]
    a = sample(explore, n, context.rng)
    context.frame_action[depth] = a
    context.frame_q[depth] = explore[a]
    for k in range(3):
        context.frame_reach[depth, k] = reach[k]
    reach[0] *= sigma[a]
    reach[2] *= explore[a]
    return a, True


@njit(cache=True, error_model="numpy", inline="always")
def _leave(context: Context, player: int, depth: int, code: int, infoset: int, n: int, children: np.ndarray) -> float:
    r"""Back up one step of the trajectory, from :math:`\tilde u(z) = u_i(z)` at its end."""
    current, scalars, instant, frame_reach = context.current, context.scalars, context.instant, context.frame_reach
    a = context.frame_action[depth]
    action_value = children[a] / context.frame_q[depth]  # u~(I a*) = u~(h a*) / q(I, a*)
    value: float = current[infoset, a] * action_value  # u~(h) = sigma(I, a*) u~(I a*)
    counterfactual = frame_reach[depth, 1] / frame_reach[depth, 2]  # pi_-i(h) / q(h)
    for b in range(n):
        instant[b] = -counterfactual * value
    instant[a] += counterfactual * action_value
    if context.averaging == STOCHASTIC:  # C += w_t pi_i(h) / q(h) sigma
        weight = scalars[WEIGHT] * frame_reach[depth, 0] / frame_reach[depth, 2]
    else:  # C += (W_t - W_{c_I}) pi_i(h) sigma
        weight = (scalars[WEIGHT_SUM] - context.weight_at[infoset]) * frame_reach[depth, 0]
        context.weight_at[infoset] = scalars[WEIGHT_SUM]
    add_average(context.cumulative, infoset, n, weight, current[infoset])  # sigma^t, before the update
    update_regrets(context.regret, context.log_at, current, infoset, n, instant, scalars, context.alpha, context.beta)
    return value


@traversal_loop
def _iterations(
    iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions, stack: Stack, context: Context
) -> None:
    iterate(iterations, tree, state, options, stack, _start, _enter, one_action, _leave, nothing_at_end, context)


@njit(cache=True, error_model="numpy")
def run(iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions) -> None:
    """``iterations`` iterations: a trajectory for each player in turn."""
    regret, current, cumulative, log_at, weight_at, scalars, rng, _shift = state
    alpha, beta, _gamma, averaging, epsilon, _chance_draws = options
    depth_bound, width = tree[3], regret.shape[1]
    context = Context(
        regret,
        current,
        cumulative,
        log_at,
        weight_at,
        scalars,
        rng,
        alpha,
        beta,
        averaging,
        epsilon,
        np.empty(3),
        np.empty((depth_bound, 3)),
        np.empty(depth_bound, np.int64),
        np.empty(depth_bound),
        np.empty(width),
        np.empty(width),
    )
    _iterations(iterations, tree, state, options, frames(depth_bound, width), context)
