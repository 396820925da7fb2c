"""The public-tree engine against the compiled tree and OpenSpiel: values, best responses, CFR iterates, boards."""

from __future__ import annotations

from functools import cache

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

from adapters import load_game
from adapters.games import canonical_game_id
from adapters.openspiel import PREFIX, OpenSpielGame
from cfr_agents.policy import Policy
from cfr_agents.public_tree.engine import (
    Engine,
    canonical_placement,
    canonical_random_strategy,
    chunked,
    own_placement,
    profile,
    uniform_strategy,
)
from cfr_agents.public_tree.infosets import Locator
from cfr_agents.public_tree.kernels import EVALUATE
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.tree import PublicTree, build_public_tree
from cfr_agents.solvers import ALGORITHMS, make_solver
from cfr_agents.tree import CompiledTree, compile_tree
from eval.exploitability import exploitability_of_strategy

THREE_ROUNDS = (
    "universal_poker(betting=limit,numPlayers=2,numRounds=3,blind=100 50,firstPlayer=2 1 1,numSuits=3,numRanks=2,"
    "numHoleCards=1,numBoardCards=0 1 1,raiseSize=100 100 200,maxRaises=2 2 2)"
)
"""One hole card, three betting rounds, two single-card boards: the round-by-round passes and boards. OpenSpiel's
information-state string lists the board cards sorted, not by round, so the compiled tree (which needs perfect
recall) refuses it: it is checked against a walk of OpenSpiel's own states instead."""


def game_string(name: str) -> str:
    return canonical_game_id(name).removeprefix(PREFIX)


@cache
def compiled(name: str) -> CompiledTree:
    return compile_tree(load_game(PREFIX + game_string(name)))


@cache
def public(name: str, canonical: bool) -> PublicTree:
    return build_public_tree(game_string(name), canonical=canonical)


def on_public_tree(tree: PublicTree, compiled_tree: CompiledTree, strategy: np.ndarray) -> np.ndarray:
    """A compiled-tree strategy ``(N, A)`` as a public-tree strategy array (uniform for hands that meet the board)."""
    locator = Locator(tree)
    out = uniform_strategy(tree)
    for row, key in enumerate(compiled_tree.infoset_keys):
        where = locator.locate(key).indices(tree)
        out[where] = strategy[row, : where.shape[0]]
    return out


def random_strategy(tree: CompiledTree, seed: int) -> np.ndarray:
    strategy = np.random.default_rng(seed).random(tree.action_mask.shape) * tree.action_mask
    normalised: np.ndarray = strategy / strategy.sum(axis=1, keepdims=True)
    return normalised


@pytest.mark.parametrize("name", ["holdem-6"])
@pytest.mark.parametrize("canonical", [False, True])
def test_values_and_best_responses_equal_the_compiled_trees(name: str, canonical: bool) -> None:
    reference = compiled(name)
    tree = public(name, canonical)
    engine = Engine(tree)
    placement = own_placement(tree)
    strategies = [reference.uniform_strategy()]
    if not canonical:  # a random strategy is suit-canonical only by chance
        strategies.append(random_strategy(reference, seed=3))
    for strategy in strategies:
        expected = exploitability_of_strategy(reference, strategy)
        mapped = on_public_tree(tree, reference, strategy)
        both = profile(mapped, mapped, placement, placement)
        responses = tuple(engine.best_response_value(player, both) for player in range(2))
        assert responses == pytest.approx(expected.best_response_values, abs=1e-9)
        assert engine.value(0, both) == pytest.approx(expected.policy_values[0], abs=1e-9)
        assert engine.value(1, both) == pytest.approx(expected.policy_values[1], abs=1e-9)


@pytest.mark.parametrize("canonical", [False, True])
def test_a_profiles_value_equals_a_walk_of_openspiels_states(canonical: bool) -> None:
    """Every deal, every betting line, in ``pyspiel``: the expected return of a random profile, read from the
    public tree's strategy arrays by hole card, boards (round by round) and betting, equals the engine's value."""
    tree = public(THREE_ROUNDS, canonical)
    every = public(THREE_ROUNDS, False)
    strategy = canonical_random_strategy(tree, np.random.default_rng(2))
    placement = own_placement(tree) if canonical else own_placement(every)
    read = canonical_placement(every, tree) if canonical else placement
    segments = every.segments
    segment_of = {(int(segments.range_index[s]), segments.boards[s]): s for s in range(segments.count)}
    betting = every.betting
    game = pyspiel.load_game(THREE_ROUNDS)

    def walk(state: pyspiel.State, node: int, cards: tuple[int, ...]) -> float:
        if state.is_terminal():
            return float(state.returns()[0])
        if state.is_chance_node():
            total = 0.0
            for outcome, probability in state.chance_outcomes():
                dealt = (*cards, outcome)
                nxt = node if len(dealt) <= 2 else int(betting.first_child[node])
                total += probability * walk(state.child(outcome), nxt, dealt)
            return total
        player = state.current_player()
        range_index = int(np.flatnonzero((betting.ranges[:, 0] <= node) & (node < betting.ranges[:, 1]))[0])
        boards = tuple((card,) for card in cards[2:])
        s = segment_of[(range_index, boards)]
        hand = int(every.permutations[read.permutation[s]][cards[player]])
        base = read.offset[s] + tree.node_offset[node]
        total = 0.0
        for a, action in enumerate(state.legal_actions()):
            p = strategy[base + a * tree.num_hands + hand]
            total += p * walk(state.child(action), int(betting.first_child[node]) + a, cards)
        return total

    expected = walk(game.new_initial_state(), 0, ())
    engine = Engine(tree if canonical else every)
    assert engine.value(0, profile(strategy, strategy, placement, placement)) == pytest.approx(expected, abs=1e-9)


def test_nash_conv_equals_openspiels_on_a_tiny_config() -> None:
    name = "holdem-6"
    reference = compiled(name)
    strategy = random_strategy(reference, seed=11)
    tree = public(name, False)
    mapped = on_public_tree(tree, reference, strategy)
    placement = own_placement(tree)
    engine = Engine(tree)
    ours = sum(engine.best_response_value(p, profile(mapped, mapped, placement, placement)) for p in range(2))
    game = load_game(canonical_game_id(name))
    assert isinstance(game, OpenSpielGame)
    policy = Policy.from_strategy(reference, strategy, algorithm="random", parameters={}, iterations=0)
    theirs = openspiel_exploitability.nash_conv(game.pyspiel_game, policy.openspiel_policy())
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_the_best_response_is_a_strategy_worth_its_value() -> None:
    name = "holdem-6"
    tree = public(name, True)
    engine = Engine(tree)
    placement = own_placement(tree)
    agent = canonical_random_strategy(tree, np.random.default_rng(5))
    for player in range(2):
        response = np.full(tree.size, np.nan)
        value = engine.best_response_value(player, profile(agent, agent, placement, placement), response)
        played = (
            profile(response, agent, placement, placement)
            if player == 0
            else profile(agent, response, placement, placement)
        )
        assert engine.value(player, played) == pytest.approx(value, abs=1e-9)
        assert engine.value(player, profile(agent, agent, placement, placement)) < value


@pytest.mark.parametrize("name", ["holdem-12", THREE_ROUNDS])
def test_suit_canonical_boards_give_the_values_of_all_boards(name: str) -> None:
    canonical, every = public(name, True), public(name, False)
    assert canonical.segments.count < every.segments.count
    strategy = canonical_random_strategy(canonical, np.random.default_rng(7))
    own, mapped = own_placement(canonical), canonical_placement(every, canonical)
    few, many = Engine(canonical), Engine(every)
    for player in range(2):
        assert few.best_response_value(player, profile(strategy, strategy, own, own)) == pytest.approx(
            many.best_response_value(player, profile(strategy, strategy, mapped, mapped)), abs=1e-9
        )
    assert few.value(0, profile(strategy, strategy, own, own)) == pytest.approx(
        many.value(0, profile(strategy, strategy, mapped, mapped)), abs=1e-9
    )


DISCOUNTED = ("lcfr", "dcfr", "dcfr+", "pdcfr+")
"""Rules that discount their regrets: like Linear and Discounted CFR on Leduc (``test_openspiel_parity``), they
amplify rounding-level differences between two correct solvers that sum in different orders, by about 10x every
three iterations on holdem-8 (1e-13 after one iteration, 1e-10 after 15, 1e-8 after 25), so they are compared
over fewer iterations there."""


def assert_iterates_equal(name: str, canonical: bool, algorithm: str, iterations: int) -> None:
    """The public-tree solver and the compiled tree's, in lockstep: every iterate's current and average strategy
    equal to 1e-9 on every infoset."""
    reference = compiled(name)
    tree = public(name, canonical)
    locator = Locator(tree)
    where = [locator.locate(key).indices(tree) for key in reference.infoset_keys]
    # The compiled tree's entry (rows[k], actions[k]) is the public tree's entries[k], for every k at once.
    rows = np.repeat(np.arange(len(where)), [w.shape[0] for w in where])
    actions = np.concatenate([np.arange(w.shape[0]) for w in where])
    entries = np.concatenate(where)
    theirs = make_solver(reference, algorithm)
    ours = PublicTreeSolver(tree, ALGORITHMS[algorithm], algorithm)
    for iteration in range(1, iterations + 1):
        theirs.run(1)
        ours.run(1)
        for expected, got in (
            (theirs.current_strategy(), ours.current_strategy()),
            (theirs.average_strategy(), ours.average_strategy()),
        ):
            worst = np.abs(expected[rows, actions] - got[entries]).max()
            assert worst < 1e-9, (algorithm, iteration, worst)


@pytest.mark.parametrize("canonical", [False, True])
@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_cfr_iterates_equal_the_compiled_trees(algorithm: str, canonical: bool) -> None:
    """Twenty iterations of every rule on the tiny config. Exact ties (a raise the opponent always folds to and a
    check that wins the showdown, or an opponent left with no hand that avoids ours) come out of the two solvers'
    sums an ulp apart; both take them as ties (:data:`~cfr_agents.solvers.update_rule.TIE`), or regret matching
    would play uniform in one and pure in the other from the second iteration on."""
    assert_iterates_equal("holdem-6", canonical, algorithm, 20)


@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr"])
def test_cfr_iterates_equal_the_compiled_trees_on_a_larger_deck(algorithm: str) -> None:
    assert_iterates_equal("holdem-8", True, algorithm, 15 if algorithm in DISCOUNTED else 30)


def test_the_game_counted_openspiels_way_has_the_compiled_trees_nodes() -> None:
    reference = compiled("holdem-6")
    assert public("holdem-6", True).game_nodes == (reference.node_kind.shape[0], reference.num_decision_nodes)


@pytest.mark.slow
def test_flop_holdem_values_over_every_flop_equal_those_over_the_canonical_flops() -> None:
    """FHP: a seeded random suit-canonical strategy (one draw per canonical infoset), scored over the 1,755
    canonical flops and over all 22,100 (each read from its canonical flop through a suit permutation)."""
    canonical = build_public_tree(game_string("fhp"), canonical=True)
    strategy = canonical_random_strategy(canonical, np.random.default_rng(0))
    own = own_placement(canonical)
    few = Engine(canonical)
    expected = [few.best_response_value(p, profile(strategy, strategy, own, own)) for p in range(2)]
    expected.append(few.value(0, profile(strategy, strategy, own, own)))
    del few
    every = build_public_tree(game_string("fhp"), canonical=False)
    assert every.segments.count - 1 == 7 * 22_100 and canonical.segments.count - 1 == 7 * 1_755
    mapped = canonical_placement(every, canonical)
    many = Engine(every)
    got = [many.best_response_value(p, profile(strategy, strategy, mapped, mapped)) for p in range(2)]
    got.append(many.value(0, profile(strategy, strategy, mapped, mapped)))
    assert got == pytest.approx(expected, abs=1e-9)


def test_a_strategy_made_chunk_by_chunk_scores_as_the_whole_array() -> None:
    """Every board of holdem-8, a strategy that is not suit-canonical, handed to the engine a few segments at a
    time (as a network's on every board of FHP must be): the same values as the whole array."""
    reference = compiled("holdem-8")
    tree = public("holdem-8", False)
    whole = on_public_tree(tree, reference, random_strategy(reference, seed=4))
    offset = tree.segments.offset
    asked: list[tuple[int, int]] = []

    def chunk(first: int, stop: int) -> np.ndarray:
        asked.append((first, stop))
        end = tree.size if stop == tree.segments.count else int(offset[stop])
        return whole[int(offset[first]) : end].copy()

    engine, placement = Engine(tree), own_placement(tree)
    for player in range(2):
        expected = engine.best_response_value(player, profile(whole, whole, placement, placement))
        assert engine.best_response_value(player, chunked(tree, chunk)) == pytest.approx(expected, abs=1e-9)
    expected = engine.value(0, profile(whole, whole, placement, placement))
    asked.clear()
    assert engine.root_values(0, EVALUATE, chunked(tree, chunk), chunk=5).sum() * tree.chance == pytest.approx(
        expected, abs=1e-9
    )
    assert max(stop - first for first, stop in asked) <= 5 < tree.segments.count


@pytest.mark.slow
def test_on_the_medium_config_values_and_cfr_iterates_equal_the_compiled_trees() -> None:
    """holdem-12 (1.4e7 nodes; its compiled tree takes about 30 s and 3.6 GB): best-response values and the
    profile's value of a random strategy, over every board, and the iterates of every rule, on suit-canonical boards."""
    reference = compiled("holdem-12")
    every = public("holdem-12", False)
    strategy = random_strategy(reference, seed=8)
    expected = exploitability_of_strategy(reference, strategy)
    mapped = on_public_tree(every, reference, strategy)
    placement = own_placement(every)
    engine = Engine(every)
    both = profile(mapped, mapped, placement, placement)
    assert tuple(engine.best_response_value(p, both) for p in range(2)) == pytest.approx(
        expected.best_response_values, abs=1e-9
    )
    assert engine.value(0, both) == pytest.approx(expected.policy_values[0], abs=1e-9)
    for algorithm in sorted(ALGORITHMS):
        assert_iterates_equal("holdem-12", True, algorithm, 10 if algorithm in DISCOUNTED else 20)
