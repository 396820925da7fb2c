r"""The one compiled traversal every sampling kernel runs: an iterative depth-first walk of the kernels'
node arrays (:data:`~.kernel_support.CODE`), its scheme given as small hooks.

The walk goes down from the root to a terminal: at a chance node it draws one outcome (independently,
or from the traversal's stratified uniform, :mod:`~.kernel_support`); at a decision node it asks the
scheme's ``enter`` hook which action to take and whether the node *opens a frame* -- a node whose value
the traversal needs, so it keeps a frame on an explicit stack until every child it walks has a value.
At a terminal :math:`z` the value is :math:`u_i(z)` (``values[z, i]`` for traverser :math:`i`; on the
limit hold'em engine, where the nodes are the betting tree and a traversal deals its cards at its start, the
deal's showdown result too, and the infoset of a decision is its node's row plus the acting player's bucket:
:mod:`~.deals`). Going
up, the value is handed to the deepest frame; the ``advance`` hook names that frame's next action to
walk (the walk goes down again from there, with the chance uniform the frame saw on arrival, so a
frame's branches meet the same later chance outcomes), or none, and then the ``leave`` hook turns the
children's values into the frame's own value, computing the sampled regrets :math:`\tilde r^t` there.

A kernel plugs in by writing its hooks, each ``@njit(cache=True, error_model="numpy", inline="always")``, and
a tuple ``context`` (a ``NamedTuple``) of whatever they read and write -- arrays, so that they can write, and
scalars for options:

``enter(context, player, depth, code, infoset, n) -> (action, opens)``
    At a decision node of :math:`I` (``infoset``) with ``n`` actions, acting player ``code - 1``, on the
    way down; ``depth`` is the number of open frames, so a node that opens one gets frame ``depth``.
    Returns the action to go down and whether the node opens a frame. A sampled node (another player's, in
    external sampling) draws its action and opens none; the traverser's nodes open one, walking all of
    their actions from 0 (:func:`every_action`) or only a sampled one (:func:`one_action`).
``advance(context, player, depth, code, infoset, n, action) -> next action, or -1``
    Once the child ``action`` of the frame at ``depth`` has its value: the next action of that frame
    to walk, or -1 when the frame has all the values it needs -- :func:`every_action`, :func:`one_action`,
    or a scheme's own (chance sampling's keeps the players' reaches for each action).
``leave(context, player, depth, code, infoset, n, children) -> value``
    The frame's value from ``children[a]``, the values of the actions it walked (e.g.
    :math:`\tilde v(I) = \sum_a \sigma^t(I,a)\,\tilde v(Ia)`): the place to compute the sampled regrets
    :math:`\tilde r^t(I,\cdot)` and apply the update rule, or to record samples.
``start(context, player)`` and ``end(context)``
    With :func:`iterate`, which runs MCCFR iterations (:func:`~.kernel_support.begin_iteration`, then a
    traversal for each player in turn): before each traversal, and after the last
    (:func:`nothing_at_start`, :func:`nothing_at_end` when a scheme needs neither).

Then two functions (:mod:`~.external` is a short example):

1. the loop, decorated with :func:`traversal_loop`, which calls :func:`iterate` (or :func:`walk`, once per
   traversal) with the hooks named directly -- module globals, so that Numba inlines them;
2. the kernel's entry, a plain cached ``@njit``, which allocates the stack (:func:`frames`) and the
   context's arrays and calls the loop. The loop itself allocates nothing (see :func:`traversal_loop`).

The kernels' tree ends in its deal (:data:`~.kernel_support.KernelTree`): ``None`` on a compiled tree, a
:class:`~.deals.HoldemDeal` on the hold'em engine. Numba compiles each apart, so the compiled tree's kernels
read nothing more.

The hooks are inlined into the walk and the walk into the loop, in Numba's IR, so a kernel compiles to the
loop it would be written as by hand. A hook must not be handed, as a value, to a function that Numba
compiles on its own: that function could not be cached.

The walk is a loop with an explicit stack, never recursion: Numba's cache cannot reload recursive
functions. Numba keys a cached kernel to its own source file only: a kernel compiled before this module
(or :mod:`~.kernel_support`) changed is still loaded from the cache until its own file changes or the
cache (``__pycache__/*.nbi``, ``*.nbc``, or ``NUMBA_CACHE_DIR``) is cleared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

import numpy as np
from numba import njit

from cfr_agents.solvers.sampling.deals import draw_deal, infoset_at, terminal_value
from cfr_agents.solvers.sampling.kernel_support import (
    CHANCE,
    CODE,
    COUNT,
    FIRST,
    STRATIFIED,
    TERMINAL,
    KernelOptions,
    KernelState,
    KernelTree,
    begin_iteration,
    chance_child,
    stratified_child,
    traversal_uniform,
)

F = TypeVar("F", bound=Callable[..., Any])
Stack: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""The walk's frames, from :func:`frames`."""


def traversal_loop(function: F) -> F:
    """Compile ``function``, the loop that runs a kernel's traversals, cached, with NumPy's error model and
    without reference counting.

    The loop works on arrays its caller owns (the caller allocates the stack and the context), so reference
    counting has nothing to keep alive there. With it, every hook inlined into the walk takes a pair of
    atomic reference-count operations for each array it is handed, which Numba's pruning pass leaves in
    branching code: outcome sampling ran at a third of its speed. Without it, Numba refuses, when it
    compiles the loop, anything in it (or in a function it calls) that would allocate an array.
    """
    options: dict[str, Any] = {"cache": True, "error_model": "numpy", "_nrt": False}  # Numba's own option name
    compiled: F = njit(**options)(function)
    return compiled


@njit(cache=True, error_model="numpy")
def frames(depth_bound: int, width: int) -> Stack:
    """A traversal's stack: the node, the action being walked, the children's values, the chance
    uniform (:func:`~.kernel_support.stratified_child`) on arrival and the infoset, of each frame."""
    return (
        np.empty(depth_bound, np.int64),
        np.empty(depth_bound, np.int64),
        np.empty((depth_bound, width)),
        np.empty(depth_bound),
        np.empty(depth_bound, np.int64),
    )


@njit(cache=True, error_model="numpy", inline="always")
def every_action(context: Any, player: int, depth: int, code: int, infoset: int, n: int, action: int) -> int:
    """``advance`` that walks every action of a frame, in order."""
    return action + 1 if action + 1 < n else -1


@njit(cache=True, error_model="numpy", inline="always")
def one_action(context: Any, player: int, depth: int, code: int, infoset: int, n: int, action: int) -> int:
    """``advance`` that walks only the action its frame was entered by."""
    return -1


@njit(cache=True, error_model="numpy", inline="always")
def nothing_at_start(context: Any, player: int) -> None:
    """``start`` for a scheme that keeps nothing per traversal."""


@njit(cache=True, error_model="numpy", inline="always")
def nothing_at_end(context: Any) -> None:
    """``end`` for a scheme that does nothing after an iteration's traversals."""


@njit(cache=True, error_model="numpy", inline="always")
def walk(
    player: int,
    nodes: np.ndarray,
    values: np.ndarray,
    cdf: np.ndarray,
    rng: np.ndarray,
    u: float,
    chance_draws: int,
    stack: Stack,
    enter: Callable[..., tuple[int, bool]],
    advance: Callable[..., int],
    leave: Callable[..., float],
    context: Any,
    deal: Any,
) -> tuple[float, int]:
    """One traversal for ``player`` from the root, with the scheme's hooks; ``u`` starts its stratified
    chance draws, ``deal`` is ``None`` on a compiled tree (:mod:`~.deals`). Returns the value handed up to the
    root (a node that opens no frame hands up its child's) and the number of nodes entered."""
    frame_node, frame_action, frame_value, frame_u, frame_infoset = stack
    draw_deal(deal, rng)
    entered = 0
    depth = 0
    node = 0
    while True:
        while True:  # descend to a terminal, a frame at each node that opens one
            entered += 1
            code = nodes[node, CODE]
            if code == TERMINAL:
                value = terminal_value(values, node, player, deal)  # v(z) = u_i(z)
                break
            if code == CHANCE:
                if chance_draws == STRATIFIED:
                    node, u = stratified_child(nodes, cdf, node, u)
                else:
                    node = chance_child(nodes, cdf, node, rng)
                continue
            infoset = infoset_at(nodes, node, code - 1, deal)
            action, opens = enter(context, player, depth, code, infoset, nodes[node, COUNT])
            if opens:
                frame_node[depth] = node
                frame_infoset[depth] = infoset
                frame_action[depth] = action
                frame_u[depth] = u
                depth += 1
            node = nodes[node, FIRST] + action
        while depth > 0:  # ascend: hand the value to the deepest frame with an action left to walk
            d = depth - 1
            parent = frame_node[d]
            code, n, infoset = nodes[parent, CODE], nodes[parent, COUNT], frame_infoset[d]
            action = frame_action[d]
            frame_value[d, action] = value
            action = advance(context, player, d, code, infoset, n, action)
            if action >= 0:
                frame_action[d] = action
                node = nodes[parent, FIRST] + action
                u = frame_u[d]  # every branch of a frame meets the same chance outcomes
                break
            value = leave(context, player, d, code, infoset, n, frame_value[d])
            depth -= 1
        else:
            return value, entered


@njit(cache=True, error_model="numpy", inline="always")
def iterate(
    iterations: int,
    tree: KernelTree,
    state: KernelState,
    options: KernelOptions,
    stack: Stack,
    start: Callable[..., None],
    enter: Callable[..., tuple[int, bool]],
    advance: Callable[..., int],
    leave: Callable[..., float],
    end: Callable[..., None],
    context: Any,
) -> None:
    """``iterations`` MCCFR iterations: :func:`~.kernel_support.begin_iteration`, then for each player
    ``0, 1, ...`` in turn (``values[z, i]``: one column per player) ``start`` and a :func:`walk`,
    then ``end``."""
    nodes, values, cdf, _depth_bound, deal = tree
    _regret, _current, cumulative, _log_at, weight_at, scalars, rng, shift = state
    alpha, beta, gamma, _averaging, _epsilon, chance_draws = options
    for _ in range(iterations):
        begin_iteration(scalars, alpha, beta, gamma, cumulative, weight_at)
        for player in range(values.shape[1]):
            start(context, player)
            u = traversal_uniform(shift, player, scalars, chance_draws)
            walk(player, nodes, values, cdf, rng, u, chance_draws, stack, enter, advance, leave, context, deal)
        end(context)
