"""The traversal skeleton every sampling kernel runs (:mod:`cfr_agents.solvers.sampling.walk`): a kernel of
the test's own plugged into it, and the kernels built on it loading from Numba's cache in a fresh process."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from numba import njit

from cfr_agents.solvers.sampling import kernel_support, kernel_tree
from cfr_agents.solvers.sampling.kernel_support import KernelTree
from cfr_agents.solvers.sampling.walk import Stack, every_action, frames, one_action, traversal_loop, walk
from tests.support import tree

ROOT = Path(__file__).resolve().parents[1]


class Probe(NamedTuple):
    sigma: np.ndarray
    every: bool
    """Walk every action of each node (else action 0 only)."""
    rng: np.ndarray


@njit(inline="always")
def _open_every_node(context: Probe, player: int, depth: int, code: int, infoset: int, n: int) -> tuple[int, bool]:
    return 0, True


@njit(inline="always")
def _expected_value(
    context: Probe, player: int, depth: int, code: int, infoset: int, n: int, children: np.ndarray
) -> float:
    if not context.every:
        return float(children[0])
    value = 0.0
    for a in range(n):
        value += context.sigma[infoset, a] * children[a]
    return value


@njit(inline="always")
def _every_or_first(context: Probe, player: int, depth: int, code: int, infoset: int, n: int, action: int) -> int:
    if context.every:
        return every_action(context, player, depth, code, infoset, n, action)
    return one_action(context, player, depth, code, infoset, n, action)


@traversal_loop
def _probe(player: int, kernel: KernelTree, u: float, stack: Stack, context: Probe) -> tuple[float, int]:
    nodes, values, cdf, _, deal = kernel
    rng = context.rng  # not drawn from: chance draws are stratified
    return walk(
        player,
        nodes,
        values,
        cdf,
        rng,
        u,
        kernel_support.STRATIFIED,
        stack,
        _open_every_node,
        _every_or_first,
        _expected_value,
        context,
        deal,
    )


def brute_force(tree: KernelTree, sigma: np.ndarray, player: int, u: float, every: bool) -> tuple[float, int]:
    """By recursion: the value of the root and the number of nodes entered by a walk that opens a frame at
    every decision node, with stratified chance draws from ``u``."""
    nodes, values, cdf, _, _ = tree
    entered = 0

    def value(node: int, u: float) -> float:
        nonlocal entered
        entered += 1
        code, first, count = (
            nodes[node, kernel_support.CODE],
            nodes[node, kernel_support.FIRST],
            nodes[node, kernel_support.COUNT],
        )
        if code == kernel_support.TERMINAL:
            return float(values[node, player])
        if code == kernel_support.CHANCE:
            child, rest = kernel_support.stratified_child(nodes, cdf, node, u)
            return value(child, rest)
        if not every:
            return value(first, u)
        return sum(float(sigma[nodes[node, kernel_support.INDEX], a]) * value(first + a, u) for a in range(count))

    return value(0, u), entered


@pytest.mark.parametrize("every", [True, False])
@pytest.mark.parametrize("game_id", ["openspiel:kuhn_poker", "openspiel:leduc_poker"])
def test_a_kernel_plugged_into_the_walk_gets_the_values_of_the_subtree_it_walks(game_id: str, every: bool) -> None:
    """Every decision node opens a frame: the value handed up to the root is the value under sigma of the
    subtree the stratified chance draws lead to, each frame's branches meeting the same chance outcomes
    (every action walked), or the value at the end of action 0's path (:func:`one_action`); and the walk
    enters exactly the nodes it should."""
    kernel = kernel_tree(tree(game_id))
    nodes, depth_bound = kernel[0], kernel[3]
    rng = np.random.default_rng(5)
    sigma = rng.random((int(nodes[:, kernel_support.INDEX].max()) + 1, int(nodes[:, kernel_support.COUNT].max())))
    sigma /= sigma.sum(axis=1, keepdims=True)
    context = Probe(sigma, every, np.ones(4, np.uint64))
    for u in rng.random(5):
        for player in range(2):
            got = _probe(player, kernel, u, frames(depth_bound, sigma.shape[1]), context)
            expected = brute_force(kernel, sigma, player, u, every)
            assert got[1] == expected[1]
            assert got[0] == pytest.approx(expected[0], rel=1e-12, abs=1e-12)


PROBE = """
import hashlib, json, sys
import numpy as np
import adapters, cfr_agents
from cfr_agents import make_solver
from cfr_agents.solvers import SCHEMES
from cfr_agents.solvers.neural import traversal
from cfr_agents.solvers.sampling import kernel_tree
tree = cfr_agents.compile_tree(adapters.load_game("openspiel:kuhn_poker"))
report = {}
for scheme in sorted(SCHEMES):
    solver = make_solver(tree, "cfr", sampling=scheme, rng=np.random.default_rng(0), chance_draws="stratified")
    solver.run(20)
    state = b"".join(array.tobytes() for array in solver.state().values())
    report[scheme] = (hashlib.sha256(state).hexdigest(), solver.scheme.kernel.run.stats.cache_hits.total())
nodes, values, cdf, depth_bound, _ = kernel_tree(tree)
own, other = traversal.visit_bounds(nodes)[0] * 50
buffers = np.empty(own, np.int64), np.zeros((own, 2)), np.empty(other, np.int64)
rng = np.ones(4, np.uint64)
written = traversal.traverse(50, 0, nodes, values, cdf, depth_bound, tree.uniform_strategy(), rng, *buffers)
report["neural"] = (hashlib.sha256(buffers[1].tobytes()).hexdigest(), traversal.traverse.stats.cache_hits.total())
json.dump(report, sys.stdout)
"""


def test_the_kernels_load_from_numbas_cache_in_a_fresh_process() -> None:
    """This process runs every kernel, compiled here or loaded from Numba's cache where an earlier test compiled it,
    which leaves each of them in the cache; a fresh process loads each of them from it (no crash, no compilation)
    and computes the same results."""
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        exec(PROBE, {})
    here = json.loads(printed.getvalue())
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "cannot cache" not in done.stderr.lower(), done.stderr
    fresh = json.loads(done.stdout)
    assert {name: digest for name, (digest, _) in here.items()} == {name: digest for name, (digest, _) in fresh.items()}
    assert all(hits > 0 for _, hits in fresh.values()), fresh
