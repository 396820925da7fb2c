"""Endgame solving on the public tree: the blueprint kept before the last round, every endgame solved from the
ranges it leads to, and best responses confined to the later rounds."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from adapters.games import canonical_game_id
from adapters.inputs import InputError
from adapters.openspiel import PREFIX
from cfr_agents.public_tree.endgame import EndgameSolver
from cfr_agents.public_tree.engine import Engine, FloatArray, canonical_random_strategy, own_placement, profile
from cfr_agents.public_tree.kernels import BEST_RESPONSE, EVALUATE
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.tree import PublicTree, build_public_tree
from cfr_agents.solvers import ALGORITHMS

GAME = "holdem-8"


@cache
def public() -> PublicTree:
    return build_public_tree(canonical_game_id(GAME).removeprefix(PREFIX), canonical=True)


def values(tree: PublicTree, strategy: FloatArray, mode: int, frozen_rounds: int = 0) -> list[float]:
    """Each player's value (``EVALUATE``) or best-response value (``BEST_RESPONSE``, in the rounds from
    ``frozen_rounds`` on) against ``strategy`` played by both seats, in chips."""
    engine, placement = Engine(tree), own_placement(tree)
    both = profile(strategy, strategy, placement, placement)
    return [tree.chance * float(engine.root_values(p, mode, both, frozen_rounds=frozen_rounds).sum()) for p in range(2)]


def endgame_gap(tree: PublicTree, strategy: FloatArray) -> float:
    """What both players gain at most by changing their play in the last round only: 0 when every endgame is
    solved for the ranges the earlier rounds lead to."""
    last = tree.rules.num_rounds - 1
    return sum(values(tree, strategy, BEST_RESPONSE, last)) - sum(values(tree, strategy, EVALUATE))


def blueprint(iterations: int) -> FloatArray:
    solver = PublicTreeSolver(public(), ALGORITHMS["dcfr"], "dcfr")
    solver.run(iterations)
    return solver.average_strategy()


def test_a_best_response_confined_to_the_later_rounds_gains_less_than_a_whole_one() -> None:
    """Against a random strategy, a best response in the last round only is worth at least the strategy itself and
    at most a best response everywhere; confined to no round it is the best response."""
    tree = public()
    strategy = canonical_random_strategy(tree, np.random.default_rng(4))
    played = values(tree, strategy, EVALUATE)
    confined = values(tree, strategy, BEST_RESPONSE, tree.rules.num_rounds - 1)
    whole = values(tree, strategy, BEST_RESPONSE)
    assert values(tree, strategy, BEST_RESPONSE, 0) == whole
    for p in range(2):
        assert played[p] - 1e-12 <= confined[p] <= whole[p] + 1e-12
        assert confined[p] < whole[p]  # the first round's best response is worth something against random play


def test_endgame_solving_keeps_the_blueprint_and_solves_every_endgame() -> None:
    """The re-solved strategy plays the blueprint before the last round, entry for entry, and in the last round
    leaves each player next to nothing to gain there: the endgame gap falls to under 1% of the blueprint's."""
    tree = public()
    coarse = blueprint(3)
    solver = EndgameSolver(tree, ALGORITHMS["dcfr"], "dcfr", coarse)
    solver.run(100)
    resolved = solver.average_strategy()
    np.testing.assert_array_equal(resolved[: solver.trunk], coarse[: solver.trunk])
    assert 0 < solver.trunk < tree.size
    before, after = endgame_gap(tree, coarse), endgame_gap(tree, resolved)
    assert before > 0 and -1e-12 <= after < 0.01 * before, (before, after)


def test_a_blueprint_that_is_not_a_strategy_of_the_tree_is_refused() -> None:
    tree = public()
    with pytest.raises(InputError, match="finite numbers"):
        EndgameSolver(tree, ALGORITHMS["dcfr"], "dcfr", np.zeros(3))
    with pytest.raises(InputError, match="finite numbers"):
        EndgameSolver(tree, ALGORITHMS["dcfr"], "dcfr", np.full(tree.size, np.nan))
