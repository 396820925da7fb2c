"""Endgame solving on the public tree: the blueprint kept before the last round, every endgame solved from the
ranges it leads to (unsafe), or through the re-solving gadget (safe), and best responses confined to the later
rounds."""

from __future__ import annotations

import tracemalloc
from functools import cache

import numpy as np
import pytest

from adapters.games import canonical_game_id
from adapters.inputs import InputError
from adapters.openspiel import PREFIX
from cfr_agents.public_tree.endgame import EndgameSolver
from cfr_agents.public_tree.engine import Engine, FloatArray, canonical_random_strategy, own_placement, profile
from cfr_agents.public_tree.kernels import BEST_RESPONSE, EVALUATE
from cfr_agents.public_tree.safe_endgame import GadgetSolver, acting_entries, resolve_peak_bytes, safe_resolve
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


def entry_best_responses(tree: PublicTree, strategy: FloatArray, player: int) -> FloatArray:
    """``player``'s counterfactual best-response values at the entry of each endgame (the last round's segments)
    against ``strategy``, the rounds before played as ``strategy`` plays them."""
    engine, placement, last = Engine(tree), own_placement(tree), tree.rules.num_rounds - 1
    engine.root_values(player, BEST_RESPONSE, profile(strategy, strategy, placement, placement), frozen_rounds=last)
    rounds = tree.segments.round_start
    return engine.entry_values[rounds[last] : rounds[last + 1]].copy()


def test_scaling_the_opponent_s_reach_at_entry_scales_the_player_s_values_there() -> None:
    """Counterfactual values are linear in the opponent's reach: scaling player 1's reach at every segment's entry
    by :math:`c` scales player 0's values at each endgame's entry by :math:`c`, and leaves player 1's own values."""
    tree = public()
    strategy = canonical_random_strategy(tree, np.random.default_rng(5))
    engine, placement = Engine(tree), own_placement(tree)
    both = profile(strategy, strategy, placement, placement)
    rounds, last = tree.segments.round_start, tree.rules.num_rounds - 1
    endgames = slice(int(rounds[last]), int(rounds[last + 1]))
    scale = np.ones((tree.segments.count, tree.num_hands))
    scale[endgames] = 0.25
    for player, factor in ((0, 0.25), (1, 1.0)):
        engine.root_values(player, EVALUATE, both)
        plain = engine.entry_values[endgames].copy()
        engine.root_values(player, EVALUATE, both, entry_scale=(1, scale))
        np.testing.assert_allclose(engine.entry_values[endgames], factor * plain, rtol=1e-12, atol=1e-12)
        assert np.abs(plain).max() > 0


def test_safe_resolving_gives_the_opponent_no_more_in_any_endgame_than_the_blueprint_does() -> None:
    """Each player's best response gains at most :math:`\\mathrm{CBV}_O(S, h)` at every endgame's entry against the
    safely re-solved strategy, as against the blueprint, so it is no more exploitable; unsafe endgame solving of
    the same blueprint gives some hands more."""
    tree = public()
    coarse = blueprint(3)
    safe = safe_resolve(tree, ALGORITHMS["dcfr"], "dcfr", coarse, 300)
    unsafe_solver = EndgameSolver(tree, ALGORITHMS["dcfr"], "dcfr", coarse)
    unsafe_solver.run(300)
    unsafe = unsafe_solver.average_strategy()
    for player in range(2):
        cbv = GadgetSolver(tree, ALGORITHMS["dcfr"], "dcfr", coarse, 1 - player).cbv
        np.testing.assert_allclose(cbv, entry_best_responses(tree, coarse, player), rtol=0, atol=0)
        scale = 1e-12 * np.abs(cbv).max()
        assert (entry_best_responses(tree, safe, player) - cbv).max() <= scale
        assert (entry_best_responses(tree, unsafe, player) - cbv).max() > 1.0
    trunk = unsafe_solver.trunk
    np.testing.assert_array_equal(safe[:trunk], coarse[:trunk])
    assert (acting_entries(tree, 0) ^ acting_entries(tree, 1)).all()
    assert sum(values(tree, safe, BEST_RESPONSE)) <= sum(values(tree, coarse, BEST_RESPONSE)) + 1e-9


def test_a_re_solving_player_other_than_0_or_1_is_refused() -> None:
    with pytest.raises(InputError, match="re-solving player"):
        GadgetSolver(public(), ALGORITHMS["dcfr"], "dcfr", blueprint(1), 2)


def test_a_safe_re_solve_resumed_from_its_state_continues_as_if_never_stopped() -> None:
    """The gadget's regrets and choices are part of the state: 4 iterations, a fresh solver restored from the state,
    4 more, give the average strategy of 8 iterations in one run, entry for entry."""
    tree, coarse = public(), blueprint(3)
    whole = GadgetSolver(tree, ALGORITHMS["dcfr"], "dcfr", coarse, 0)
    whole.run(8)
    first = GadgetSolver(tree, ALGORITHMS["dcfr"], "dcfr", coarse, 0)
    first.run(4)
    resumed = GadgetSolver(tree, ALGORITHMS["dcfr"], "dcfr", coarse, 0)
    resumed.restore(first.state())
    resumed.run(4)
    np.testing.assert_array_equal(resumed.average_strategy(), whole.average_strategy())
    assert set(first.state()) >= {"gadget_regret", "follow"}


def test_safe_resolving_plays_each_player_s_own_re_solve_and_the_blueprint_before() -> None:
    """Entry for entry, the blueprint with each player's entries taken from the average strategy of its own gadget
    solve, as each solver gives them unreleased."""
    tree, coarse = public(), blueprint(3)
    expected = coarse.copy()
    for resolver in range(2):
        solver = GadgetSolver(tree, ALGORITHMS["dcfr"], "dcfr", coarse, resolver)
        solver.run(6)
        mine = acting_entries(tree, resolver)
        expected[mine] = solver.average_strategy()[mine]
    np.testing.assert_array_equal(safe_resolve(tree, ALGORITHMS["dcfr"], "dcfr", coarse, 6), expected)


def test_a_released_average_is_the_average_and_the_solver_is_done() -> None:
    """``release=True`` normalises the cumulative weights in place: the same numbers as a copy, and the solver then
    refuses to run on, to save its state or to answer again rather than work on arrays it gave away."""
    tree, coarse = public(), blueprint(3)
    kept, released = (EndgameSolver(tree, ALGORITHMS["dcfr"], "dcfr", coarse) for _ in range(2))
    for solver in (kept, released):
        solver.run(5)
    np.testing.assert_array_equal(released.average_strategy(release=True), kept.average_strategy())
    for call in (lambda: released.run(1), released.state, released.average_strategy, released.current_strategy):
        with pytest.raises(RuntimeError, match="released"):
            call()


def test_safe_resolving_holds_what_its_estimate_says() -> None:
    """The arrays :func:`safe_resolve` allocates (numpy reports them to ``tracemalloc``) peak within 20% of
    :func:`resolve_peak_bytes` less the blueprint it is given; a copy of the blueprint and of each average, as a
    first version made, held twice as much."""
    tree, coarse = public(), blueprint(3)
    safe_resolve(tree, ALGORITHMS["dcfr"], "dcfr", coarse, 1)  # compiled or loaded from the cache before measuring
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        safe_resolve(tree, ALGORITHMS["dcfr"], "dcfr", coarse, 2)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    estimate = resolve_peak_bytes(tree) - 8 * tree.size
    assert 0.8 * estimate <= peak <= 1.2 * estimate, (peak, estimate)
