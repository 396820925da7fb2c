"""Compile the Numba kernels the suite spends most of its compilation on into Numba's on-disk cache, in one process,
before the suite starts.

``make test`` runs ``python -m tests.warm_kernels`` on the core that linting and the documentation build leave idle,
so that the suite's workers load these kernels from the cache instead of compiling them. Each kernel is run once on a
small game, with the argument types the suite gives it (a kernel compiles once per type signature). The suite does
not depend on it: without it, each kernel is compiled by the first test that runs it.
"""

from __future__ import annotations

import numpy as np

from cfr_agents import make_solver
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.abstraction.build import build_abstraction, class_counts
from cfr_agents.abstraction.spec import parse_spec
from cfr_agents.solvers.sampling import ALL_SCHEMES, SCHEMES
from eval.holdem import AbstractHands, exploitability, game_tree
from tests.support import tree

SMALL_HOLDEM = "holdem-6"
"""The hold'em game whose abstraction, abstract game and public tree compile the hold'em kernels."""


def main() -> None:
    rng = np.random.default_rng(0)
    compiled = tree("openspiel:kuhn_poker")
    make_solver(compiled, "cfr").run(1)
    for scheme in SCHEMES:  # the compiled tree's signature of each MCCFR scheme
        make_solver(compiled, "cfr", sampling=scheme, rng=rng).run(1)
    classes = class_counts(SMALL_HOLDEM)
    lossy = ",".join(["lossless", *["4"] * (len(classes) - 1)])  # hand strength and its percentile buckets
    build_abstraction(SMALL_HOLDEM, parse_spec(lossy, classes, "emd"), rng)  # k-means over histograms
    game = AbstractGame.of(build_abstraction(SMALL_HOLDEM, parse_spec(lossy, classes), rng))
    for scheme in ALL_SCHEMES:  # the abstract game's signature of each scheme that deals its cards at once
        solver = make_solver(game, "dcfr", sampling=scheme, rng=rng)
        solver.run(1)
    exploitability(game_tree(SMALL_HOLDEM), AbstractHands(game, solver.average_strategy()))


if __name__ == "__main__":
    main()
