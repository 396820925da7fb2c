r"""External sampling (Lanctot, Waugh, Zinkevich & Bowling 2009), one traversal per player.

For traverser :math:`i`, chance and every other player are sampled -- chance by its probabilities, each
other player :math:`j` by :math:`\sigma^t_j` -- and every action of :math:`i` is walked. With
:math:`\tilde v(h)` the sampled value of :math:`h` for :math:`i`:

* at :math:`i`'s node in :math:`I`: :math:`\tilde v(I) = \sum_a \sigma^t(I,a)\,\tilde v(Ia)` and
  :math:`\tilde r^t(I,a) = \tilde v(Ia) - \tilde v(I)`; the probability of reaching :math:`I` is
  :math:`\pi^{\sigma}_{-i}(I)` (chance's and every other player's reach), the counterfactual weight itself, so
  :math:`E[\tilde r^t(I,a)] = r^t(I,a)`;
* the update rule then applies to :math:`\tilde r^t` (:func:`~.kernel_support.update_regrets`).

The traversal is :func:`~cfr_agents.solvers.sampling.walk.walk` with the hooks below:
the traverser's nodes open a frame and walk
every action, the other players' draw one.

Averaging (``averaging``):

* ``SIMPLE`` (OpenSpiel's default): at each node of another player :math:`p \ne i` the traversal passes,
  :math:`C(I,\cdot) \mathrel{+}= w_t\,\sigma^t(I,\cdot)`. The traverser's actions are all walked, so
  a history :math:`h \in I` is passed with probability :math:`\pi_c(h)\,\pi^{\sigma}_{p}(h)
  \prod_{j \ne i,p}\pi^{\sigma}_j(h)` and the expected update is :math:`w_t\,\pi^{\sigma}_{p}(I)\,
  \sigma^t(I,\cdot)\sum_{h \in I}\pi_c(h)\prod_{j \ne i,p}\pi^{\sigma}_j(h)`. With two players the product
  is empty: the full-tree update times a per-infoset constant that normalising the average cancels (unbiased
  up to the ratio of two unbiased sums). With more, that factor moves with the third players' strategies, so
  the average is weighted differently from the full-tree one (``FULL`` is not). Its variance is that of
  sampling chance and the other players' actions.
* ``FULL``: after every player's traversal, one pass over the whole tree adds
  :math:`w_t\,\pi^{\sigma}_{p}(h)\,\sigma^t(I,\cdot)` at every node :math:`h` (OpenSpiel's
  ``AverageType.FULL``): no sampling error, at the cost of a full-tree pass per iteration.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from cfr_agents.solvers.sampling.kernel_support import (
    CHANCE,
    CODE,
    COUNT,
    FIRST,
    INDEX,
    TERMINAL,
    WEIGHT,
    KernelOptions,
    KernelState,
    KernelTree,
    add_average,
    sample,
    update_regrets,
)
from cfr_agents.solvers.sampling.walk import Stack, every_action, frames, iterate, nothing_at_start, traversal_loop

SIMPLE, FULL = 0, 1


class Context(NamedTuple):
    """What the hooks read and write."""

    nodes: np.ndarray
    regret: np.ndarray
    current: np.ndarray
    cumulative: np.ndarray
    log_at: np.ndarray
    scalars: np.ndarray
    rng: np.ndarray
    alpha: float
    beta: float
    averaging: int
    instant: np.ndarray
    full_reach: np.ndarray
    r""":math:`\pi_0(h), \dots, \pi_{n-1}(h)` of every node, for the ``FULL`` average."""


@njit(cache=True, error_model="numpy", inline="always")
def _enter(context: Context, player: int, depth: int, code: int, infoset: int, n: int) -> tuple[int, bool]:
    r"""The traverser's node opens a frame; another player's draws its action from :math:`\sigma^t`."""
    if code == 1 + player:
        return 0, True
    sigma = context.current[infoset]
    if context.averaging == SIMPLE:
        add_average(context.cumulative, infoset, n, context.scalars[WEIGHT], sigma)  # C += w_t sigma^t
    return sample(sigma, n, context.rng), False


@njit(cache=True, error_model="numpy", inline="always")
def _leave(context: Context, player: int, depth: int, code: int, infoset: int, n: int, children: np.ndarray) -> float:
    """The traverser's sampled regrets at :math:`I`, and the update rule applied to them."""
    current, instant = context.current, context.instant
    value = 0.0
    for a in range(n):
        value += current[infoset, a] * children[a]  # v(I) = sum_a sigma(I,a) v(Ia)
    for a in range(n):
        instant[a] = children[a] - value  # r~(I,a) = v(Ia) - v(I)
    update_regrets(
        context.regret, context.log_at, current, infoset, n, instant, context.scalars, context.alpha, context.beta
    )
    return value


@njit(cache=True, error_model="numpy", inline="always")
def _end(context: Context) -> None:
    """The ``FULL`` average, after every player's traversal."""
    if context.averaging == FULL:
        _full_average(context.nodes, context.current, context.cumulative, context.scalars[WEIGHT], context.full_reach)


@njit(cache=True, error_model="numpy")
def _full_average(
    nodes: np.ndarray, current: np.ndarray, cumulative: np.ndarray, weight: float, reach: np.ndarray
) -> None:
    r"""One pass in node order (parents precede children): :math:`C \mathrel{+}= w_t\,\pi_p(h)\,\sigma^t(I,\cdot)`;
    ``reach`` (one row per node) is scratch."""
    reach[:] = 1.0
    for node in range(nodes.shape[0]):
        code = nodes[node, CODE]
        if code == TERMINAL:
            continue
        first, n = nodes[node, FIRST], nodes[node, COUNT]
        for child in range(first, first + n):
            for q in range(reach.shape[1]):
                reach[child, q] = reach[node, q]
        if code == CHANCE:
            continue
        infoset = nodes[node, INDEX]
        p = code - 1
        sigma = current[infoset]
        add_average(cumulative, infoset, n, weight * reach[node, p], sigma)
        for a in range(n):
            reach[first + a, p] *= sigma[a]


@traversal_loop
def _iterations(
    iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions, stack: Stack, context: Context
) -> None:
    iterate(iterations, tree, state, options, stack, nothing_at_start, _enter, every_action, _leave, _end, context)


@njit(cache=True, error_model="numpy")
def run(iterations: int, tree: KernelTree, state: KernelState, options: KernelOptions) -> None:
    """``iterations`` iterations: a traversal for each player in turn (then the full average)."""
    regret, current, cumulative, log_at, _weight_at, scalars, rng, _shift = state
    alpha, beta, _gamma, averaging, _epsilon, _chance_draws = options
    nodes, width = tree[0], regret.shape[1]
    full_reach = np.empty((nodes.shape[0] if averaging == FULL else 0, tree[1].shape[1]))
    context = Context(
        nodes, regret, current, cumulative, log_at, scalars, rng, alpha, beta, averaging, np.empty(width), full_reach
    )
    _iterations(iterations, tree, state, options, frames(tree[3], width), context)
