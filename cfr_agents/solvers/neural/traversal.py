r"""Deep CFR's data: external-sampling traversals under a fixed strategy, and reservoir memories.

While iteration :math:`t`'s traversals run, the networks do not change. So :math:`\sigma^t` is computed
for every infoset of the compiled tree in one batched forward pass, and the traversals run compiled over
the tree's node arrays (:func:`~cfr_agents.solvers.sampling.walk.walk` with the hooks below), with exactly
Deep CFR's semantics (Brown, Lerer, Gross & Sandholm 2019, Algorithm 2). For traverser :math:`p`, chance and
the opponent are sampled and every action of :math:`p` is walked:

* at :math:`p`'s node in :math:`I`: :math:`\tilde v(I) = \sum_a \sigma^t(I,a)\,\tilde v(Ia)`, and the
  sample :math:`(I, t, \tilde r^t(I,\cdot))` with :math:`\tilde r^t(I,a) = \tilde v(Ia) - \tilde v(I)` goes
  to :math:`p`'s advantage memory :math:`\mathcal M_{V,p}`;
* at an opponent's node in :math:`I`: the sample :math:`(I, t, \sigma^t(I))` goes to the strategy memory
  :math:`\mathcal M_\Pi`, and one action is drawn from :math:`\sigma^t(I)`.

Nodes are read by :mod:`~cfr_agents.solvers.sampling.kernel_support`'s codes (``TERMINAL`` is -1, a decision
node's code ``1 + player``); a compiled traversal cached under other codes must be compiled again.

Memories are reservoirs (Vitter 1985, Algorithm R): the :math:`n`-th sample offered to a reservoir of
capacity :math:`M` is kept with probability :math:`\min(1, M/n)`, in a uniformly chosen slot once the
reservoir is full. Every sample offered so far is then equally likely to be held.
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
    INDEPENDENT,
    TERMINAL,
    sample,
    uniform,
)
from cfr_agents.solvers.sampling.walk import Stack, every_action, frames, traversal_loop, walk


class Context(NamedTuple):
    """What the hooks read and write."""

    current: np.ndarray
    rng: np.ndarray
    own_infoset: np.ndarray
    own_regret: np.ndarray
    other_infoset: np.ndarray
    written: np.ndarray
    """The numbers of advantage and strategy samples written so far."""


@njit(cache=True, error_model="numpy", inline="always")
def _enter(context: Context, player: int, depth: int, code: int, infoset: int, n: int) -> tuple[int, bool]:
    """The traverser's node opens a frame; the opponent's is a strategy sample, and draws its action."""
    if code == 1 + player:
        return 0, True
    context.other_infoset[context.written[1]] = infoset  # (I, t, sigma^t(I)) -> M_Pi
    context.written[1] += 1
    return sample(context.current[infoset], n, context.rng), False


@njit(cache=True, error_model="numpy", inline="always")
def _leave(context: Context, player: int, depth: int, code: int, infoset: int, n: int, children: np.ndarray) -> float:
    r"""An advantage sample :math:`(I, t, \tilde r^t(I,\cdot))` -> :math:`\mathcal M_{V,p}`."""
    current, owns = context.current, context.written[0]
    value = 0.0
    for a in range(n):
        value += current[infoset, a] * children[a]  # v(I) = sum_a sigma^t(I,a) v(Ia)
    context.own_infoset[owns] = infoset
    for a in range(n):
        context.own_regret[owns, a] = children[a] - value  # r~(I,a) = v(Ia) - v(I)
    context.written[0] = owns + 1
    return value


@njit(cache=True, error_model="numpy")
def visit_bounds(nodes: np.ndarray) -> np.ndarray:
    """``bounds[p] = (own, other)``: the most nodes of traverser ``p`` and of the opponent that one
    traversal for ``p`` can visit (a sampled node counts its worst child, a walked one all of them)."""
    bounds = np.zeros((2, 2), np.int64)
    for player in range(2):
        own = np.zeros(nodes.shape[0], np.int64)
        other = np.zeros(nodes.shape[0], np.int64)
        for node in range(nodes.shape[0] - 1, -1, -1):  # children after parents: bottom-up
            code = nodes[node, CODE]
            if code == TERMINAL:
                continue
            first, n = nodes[node, FIRST], nodes[node, COUNT]
            if code == 1 + player:
                own[node] = 1 + own[first : first + n].sum()
                other[node] = other[first : first + n].sum()
            else:
                own[node] = own[first : first + n].max()
                other[node] = (code != CHANCE) + other[first : first + n].max()
        bounds[player, 0], bounds[player, 1] = own[0], other[0]
    return bounds


@njit(cache=True, error_model="numpy")
def traverse(
    traversals: int,
    player: int,
    nodes: np.ndarray,
    values: np.ndarray,
    cdf: np.ndarray,
    depth_bound: int,
    current: np.ndarray,
    rng: np.ndarray,
    own_infoset: np.ndarray,
    own_regret: np.ndarray,
    other_infoset: np.ndarray,
) -> tuple[int, int, int]:
    r"""``traversals`` external-sampling traversals for ``player`` under ``current`` (:math:`\sigma^t`).

    Writes the advantage samples' infosets and :math:`\tilde r^t` to ``own_infoset``/``own_regret`` and the
    strategy samples' infosets to ``other_infoset`` (their :math:`\sigma^t` is ``current`` there), in the
    order visited; the arrays must hold :func:`visit_bounds` times ``traversals``. Returns the numbers of
    advantage and strategy samples written and of nodes touched.
    """
    context = Context(current, rng, own_infoset, own_regret, other_infoset, np.zeros(2, np.int64))
    touched = _traversals(traversals, player, nodes, values, cdf, frames(depth_bound, current.shape[1]), context)
    return int(context.written[0]), int(context.written[1]), touched


@traversal_loop
def _traversals(
    traversals: int, player: int, nodes: np.ndarray, values: np.ndarray, cdf: np.ndarray, stack: Stack, context: Context
) -> int:
    """The traversals; the number of nodes they entered."""
    touched = 0
    for _ in range(traversals):
        _value, entered = walk(
            player,
            nodes,
            values,
            cdf,
            context.rng,
            0.0,
            INDEPENDENT,
            stack,
            _enter,
            every_action,
            _leave,
            context,
            None,
        )
        touched += entered
    return touched


@njit(cache=True, error_model="numpy")
def reservoir_store(
    memory_infoset: np.ndarray,
    memory_iteration: np.ndarray,
    memory_values: np.ndarray,
    seen: int,
    new_infoset: np.ndarray,
    new_values: np.ndarray,
    iteration: int,
    rng: np.ndarray,
) -> int:
    """Offer the samples ``(new_infoset[k], iteration, new_values[k])``, in order, to the reservoir held in
    the ``memory_*`` arrays (capacity: their length), which has been offered ``seen`` samples before
    (Algorithm R). Returns the new ``seen``."""
    capacity = memory_infoset.shape[0]
    width = new_values.shape[1]
    for k in range(new_infoset.shape[0]):
        n = seen + k + 1  # the n-th sample ever offered
        slot = n - 1 if n <= capacity else int(uniform(rng) * n)  # kept with probability min(1, M/n)
        if slot < capacity:
            memory_infoset[slot] = new_infoset[k]
            memory_iteration[slot] = iteration
            for a in range(width):
                memory_values[slot, a] = new_values[k, a]
    return int(seen + new_infoset.shape[0])


@njit(cache=True, error_model="numpy")
def weighted_sums(
    index: np.ndarray, memory_infoset: np.ndarray, memory_iteration: np.ndarray, memory_values: np.ndarray, count: int
) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`W_I = \sum_{i: I_i = I} t_i` and :math:`S_I = \sum_{i: I_i = I} t_i y_i` over the samples
    ``memory_*[index[k]]`` (repeats counted), for each of ``count`` infosets: one pass over ``index``, reading
    each sample where it is held."""
    width = memory_values.shape[1]
    total = np.zeros(count)
    sums = np.zeros((count, width))
    for k in range(index.shape[0]):
        i = index[k]
        infoset = memory_infoset[i]
        weight = float(memory_iteration[i])  # t_i
        total[infoset] += weight
        for a in range(width):
            sums[infoset, a] += weight * float(memory_values[i, a])  # t_i y_i(a)
    return total, sums
