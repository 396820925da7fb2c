r"""Chance-sampled CFR (Zinkevich et al. 2007; Lanctot et al. 2009), one traversal per player.

Each traversal samples one outcome at every chance node it meets (in poker: one deal) and walks
every action of every player below it, as RLCard's ``CFRAgent`` and the classic Kuhn tutorials do.
For traverser :math:`i`, with reaches :math:`\pi_i(h)` and :math:`\pi_{-i}(h) = \prod_{j \ne i}\pi_j(h)` of
the players only (chance is sampled, so its probability cancels), bottom-up:

* :math:`\tilde v(h) = \sum_a \sigma^t(I,a)\,\tilde v(ha)` at every decision node,
  :math:`\tilde v(z) = u_i(z)`;
* at :math:`i`'s nodes :math:`\tilde r^t(I,a) = \pi^{\sigma}_{-i}(h)\,\big(\tilde v(ha) - \tilde v(h)\big)`,
  summed over the histories of :math:`I` consistent with the sample; a history is kept with
  probability :math:`\pi_c(h)`, so :math:`E[\tilde r^t(I,a)] = r^t(I,a)`.

Averaging (the papers'): at :math:`i`'s nodes, :math:`C(I,\cdot) \mathrel{+}= w_t\,\pi^{\sigma}_i(h)\,
\sigma^t(I,\cdot)`, the full-tree update restricted to the sampled outcome; each infoset is kept
with a probability that does not change over iterations, so the normalised average is unbiased,
with the variance of one chance sample per iteration.

The traversal is :func:`~cfr_agents.solvers.sampling.walk.walk` with the hooks below:
every decision node opens a frame and walks
every action, each frame keeping the players' reaches on arrival.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from cfr_agents.solvers.sampling.kernel_support import (
    WEIGHT,
    KernelOptions,
    KernelState,
    KernelTree,
    add_average,
    update_regrets,
)
from cfr_agents.solvers.sampling.walk import Stack, frames, iterate, nothing_at_end, traversal_loop

REACH = 0


class Context(NamedTuple):
    """What the hooks read and write."""

    regret: np.ndarray
    current: np.ndarray
    cumulative: np.ndarray
    log_at: np.ndarray
    scalars: np.ndarray
    alpha: float
    beta: float
    reach: np.ndarray
    r""":math:`\pi_0(h), \dots, \pi_{n-1}(h)` at the node the walk is at."""
    frame_reach: np.ndarray
    """The reaches on arrival at each frame's node."""
    instant: np.ndarray


@njit(cache=True, error_model="numpy", inline="always")
def _start(context: Context, player: int) -> None:
    """Every reach is 1 at the root."""
    for q in range(context.reach.shape[0]):
        context.reach[q] = 1.0


@njit(cache=True, error_model="numpy", inline="always")
def _enter(context: Context, player: int, depth: int, code: int, infoset: int, n: int) -> tuple[int, bool]:
    """Every decision node opens a frame, walked from action 0."""
    reach = context.reach
    for q in range(reach.shape[0]):
        context.frame_reach[depth, q] = reach[q]
    reach[code - 1] *= context.current[infoset, 0]
    return 0, True


@njit(cache=True, error_model="numpy", inline="always")
def _advance(context: Context, player: int, depth: int, code: int, infoset: int, n: int, action: int) -> int:
    r"""Every action in turn, the acting player's reach times :math:`\sigma^t(I,a)` of the next."""
    reach = context.reach
    for q in range(reach.shape[0]):
        reach[q] = context.frame_reach[depth, q]
    if action + 1 < n:
        reach[code - 1] *= context.current[infoset, action + 1]
        return action + 1
    return -1


@njit(cache=True, error_model="numpy", inline="always")
def _leave(context: Context, player: int, depth: int, code: int, infoset: int, n: int, children: np.ndarray) -> float:
    r""":math:`\tilde v(h)`; at the traverser's nodes, its sampled regrets and average, and the update rule."""
    current, reach, instant = context.current, context.reach, context.instant
    value = 0.0
    for a in range(n):
        value += current[infoset, a] * children[a]  # v(h) = sum_a sigma(I,a) v(ha)
    if code - 1 == player:
        others = 1.0
        for q in range(reach.shape[0]):
            if q != player:
                others *= reach[q]  # pi_-i(h)
        for a in range(n):
            instant[a] = others * (children[a] - value)  # pi_-i (v(ha) - v(h))
        add_average(context.cumulative, infoset, n, context.scalars[WEIGHT] * reach[player], current[infoset])
        update_regrets(
            context.regret, context.log_at, current, infoset, n, instant, context.scalars, context.alpha, context.beta
        )
    return value


@traversal_loop
def _iterations(
    iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions, stack: Stack, context: Context
) -> None:
    iterate(iterations, tree, state, options, stack, _start, _enter, _advance, _leave, nothing_at_end, context)


@njit(cache=True, error_model="numpy")
def run(iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions) -> None:
    """``iterations`` iterations: a traversal for each player in turn."""
    regret, current, cumulative, log_at, _weight_at, scalars, _rng, _shift = state
    alpha, beta = options[0], options[1]
    width = regret.shape[1]
    players = tree[1].shape[1]
    reach, frame_reach, instant = np.empty(players), np.empty((tree[3], players)), np.empty(width)
    context = Context(regret, current, cumulative, log_at, scalars, alpha, beta, reach, frame_reach, instant)
    _iterations(iterations, tree, state, options, frames(tree[3], width), context)
