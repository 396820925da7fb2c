r"""Pure CFR (Gibson 2014), as Wolff & Tan's "Solving Leduc Hold'em" describes it.

Each traversal samples a pure strategy profile: one action :math:`a^*_I \sim \sigma^t(I,\cdot)` per
infoset (drawn the first time the traversal meets :math:`I`, then kept) and one outcome per chance
node. For traverser :math:`i` every action at :math:`i`'s nodes is walked against that profile (every other
player's and chance's sampled actions), and
the value of a node is the value of its sampled action:

* :math:`\tilde v(h) = \tilde v(ha^*_I)` at every decision node, :math:`\tilde v(z) = u_i(z)`;
* at :math:`i`'s nodes :math:`\tilde r^t(I,a) = \tilde v(Ia) - \tilde v(Ia^*_I)`: the regret of each
  action against the action actually taken. Since :math:`E[\tilde v(Ia^*)] = \sum_a \sigma^t(I,a)\,
  \tilde v(Ia)` and :math:`I` is reached with probability :math:`\pi^{\sigma}_{-i}(I)`,
  :math:`E[\tilde r^t(I,a)] = r^t(I,a)`.

Averaging (the paper's): the other players' sampled actions are counted,
:math:`C(I,a^*_I) \mathrel{+}= w_t` at each infoset of a player :math:`p \ne i` the traversal meets -- a
sample of :math:`\sigma^t(I,\cdot)` drawn with probability proportional to :math:`p`'s own reach times chance (a
per-infoset constant; with more than two players, times the third players' reaches, as in external sampling's
``SIMPLE`` average), with the variance of a single draw. With ``--algo cfr`` the
counts are plain (PureCFR); with ``--algo cfr+`` regrets are floored at 0 and iteration :math:`t`
counts :math:`t` times (PureCFR+).

The traversal is :func:`~cfr_agents.solvers.sampling.walk.walk` with the hooks below:
the traverser's nodes open a frame and walk
every action, the other players' follow the sampled profile.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from cfr_agents.solvers.sampling.kernel_support import (
    ITERATION,
    WEIGHT,
    KernelOptions,
    KernelState,
    KernelTree,
    sample,
    update_regrets,
)
from cfr_agents.solvers.sampling.walk import Stack, every_action, frames, iterate, nothing_at_end, traversal_loop

SAMPLED = 0


class Context(NamedTuple):
    """What the hooks read and write."""

    regret: np.ndarray
    current: np.ndarray
    cumulative: np.ndarray
    log_at: np.ndarray
    scalars: np.ndarray
    rng: np.ndarray
    alpha: float
    beta: float
    players: int
    stamp: np.ndarray
    """The traversal's stamp, ``players * t + player`` (one entry)."""
    drawn_at: np.ndarray
    """The stamp of the traversal that drew each infoset's :math:`a^*_I`."""
    drawn: np.ndarray
    """:math:`a^*_I`."""
    instant: np.ndarray


@njit(cache=True, error_model="numpy")
def _pure_action(
    infoset: int,
    n: int,
    stamp: float,
    current: np.ndarray,
    drawn_at: np.ndarray,
    drawn: np.ndarray,
    rng: np.ndarray,
) -> tuple[int, bool]:
    r""":math:`a^*_I`, drawn from :math:`\sigma^t(I,\cdot)` once per traversal (``stamp``); and whether
    this call drew it."""
    if drawn_at[infoset] != stamp:
        drawn[infoset] = sample(current[infoset], n, rng)
        drawn_at[infoset] = stamp
        return int(drawn[infoset]), True
    return int(drawn[infoset]), False


@njit(cache=True, error_model="numpy", inline="always")
def _start(context: Context, player: int) -> None:
    """A new traversal: a new stamp, so that every :math:`a^*_I` is drawn afresh."""
    context.stamp[0] = context.players * context.scalars[ITERATION] + player


@njit(cache=True, error_model="numpy", inline="always")
def _enter(context: Context, player: int, depth: int, code: int, infoset: int, n: int) -> tuple[int, bool]:
    """:math:`a^*_I` at every decision node; the traverser's open a frame, the other players' follow
    :math:`a^*_I`."""
    a, first_draw = _pure_action(
        infoset, n, context.stamp[0], context.current, context.drawn_at, context.drawn, context.rng
    )
    if code == 1 + player:
        return 0, True
    if first_draw:  # count another player's sampled action once per traversal: C += w_t
        context.cumulative[infoset, a] += context.scalars[WEIGHT]
    return a, False


@njit(cache=True, error_model="numpy", inline="always")
def _leave(context: Context, player: int, depth: int, code: int, infoset: int, n: int, children: np.ndarray) -> float:
    """The traverser's sampled regrets against :math:`a^*_I`, and the update rule applied to them."""
    instant = context.instant
    value: float = children[context.drawn[infoset]]  # v(h) = v(h a*)
    for a in range(n):
        instant[a] = children[a] - value  # r~(I,a) = v(Ia) - v(Ia*)
    update_regrets(
        context.regret,
        context.log_at,
        context.current,
        infoset,
        n,
        instant,
        context.scalars,
        context.alpha,
        context.beta,
    )
    return value


@traversal_loop
def _iterations(
    iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions, stack: Stack, context: Context
) -> None:
    iterate(iterations, tree, state, options, stack, _start, _enter, every_action, _leave, nothing_at_end, context)


@njit(cache=True, error_model="numpy")
def run(iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions) -> None:
    """``iterations`` iterations: a traversal for each player in turn."""
    regret, current, cumulative, log_at, _weight_at, scalars, rng, _shift = state
    alpha, beta = options[0], options[1]
    infosets, width = regret.shape
    drawn_at, drawn = np.full(infosets, -1.0), np.zeros(infosets, np.int64)
    players = tree[1].shape[1]
    context = Context(
        regret,
        current,
        cumulative,
        log_at,
        scalars,
        rng,
        alpha,
        beta,
        players,
        np.empty(1),
        drawn_at,
        drawn,
        np.empty(width),
    )
    _iterations(iterations, tree, state, options, frames(tree[3], width), context)
