"""MCCFR on the hold'em engine through a card abstraction: sampled regrets are unbiased (the compiled tree's
regrets summed over each abstract information set), training converges on the game's exact NashConv, and what
needs a game tree is refused."""

from __future__ import annotations

import math
import re
from functools import cache

import numpy as np
import pytest

from adapters.holdem.cards import parse_cards
from adapters.inputs import InputError
from cfr_agents import make_solver
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.abstraction.build import build_abstraction, class_counts
from cfr_agents.abstraction.spec import parse_spec
from cfr_agents.solvers import ALGORITHMS, SampledSolver
from eval.holdem import AbstractHands, exploitability, game_tree
from tests.support import assert_within_standard_errors, tree

VISITS = 100
"""Samples that must reach a row for its mean to be checked."""
Z_BOUND = 5.0
ROUNDING = 5e-12
_KEY = re.compile(r"\[Private: (\w*)\]\[Public: (\w*)\]\[Sequences: ([^\]]*)\]")


@cache
def abstract_game(game_id: str, buckets: str | None = None) -> AbstractGame:
    spec = parse_spec(buckets, class_counts(game_id))
    return AbstractGame.of(build_abstraction(game_id, spec, np.random.default_rng(0)))


def rows_of_infosets(game: AbstractGame, game_id: str) -> np.ndarray:
    """The abstract row of every infoset of the compiled tree, read from OpenSpiel's information state."""
    compiled, betting = tree(game_id), game.engine.betting
    node_of = {sequence: node for node, sequence in enumerate(betting.sequence) if betting.kind[node] == 0}
    num_suits = game.engine.rules.num_suits
    rows = np.empty(len(compiled.infoset_keys), dtype=np.int64)
    for i, key in enumerate(compiled.infoset_keys):
        match = _KEY.search(key)
        assert match is not None, key
        hole, board, sequence = match.groups()
        node = node_of[sequence]
        assert list(compiled.infoset_actions[i]) == game.engine.legal_actions(node)
        hole_cards, board_cards = parse_cards(hole, num_suits), parse_cards(board, num_suits) if board else []
        rows[i] = game.row(node, game.abstraction.bucket(int(betting.round[node]), hole_cards, board_cards))
    return rows


@pytest.mark.parametrize(
    ("sampling", "samples", "rows"),
    [
        pytest.param("chance", 10_000, None, marks=pytest.mark.slow),
        pytest.param("external", 20_000, 50, marks=pytest.mark.slow),
        pytest.param("outcome", 40_000, 20, marks=pytest.mark.slow),
        ("public-chance", 1_500, None),
    ],
)
def test_sampled_regrets_are_unbiased_on_the_abstract_game(sampling: str, samples: int, rows: int | None) -> None:
    """E[r~^1(row, a)] = sum of r^1(I, a) over the compiled tree's infosets I of the row: one lossless abstract
    information set stands for the suit-isomorphic infosets of the game. Checked on the rows at least
    :data:`VISITS` of the samples reach (below that a mean of rare, skewed draws is not near normal), at least
    ``rows`` of them; every row of player 0 for chance sampling, which walks every action and samples only the
    deal (a row no sample moves must have an exact regret of 0), and for public chance sampling, which walks every
    hand and samples the board: it sums over the hands where the tree weighs each deal by its probability, so its
    mean is the tree's times the number of deals over the number of boards."""
    game_id = "holdem-6"
    game = abstract_game(game_id)
    exact = make_solver(tree(game_id), "cfr")
    exact.run(1)
    row_of, player_0 = rows_of_infosets(game, game_id), tree(game_id).player_slice(0)
    truth = np.zeros((game.num_rows, 3))
    np.add.at(truth, row_of[player_0], exact.state()["regret"][player_0])
    if sampling == "public-chance":
        rules = game.engine.rules
        n, k, m = rules.deck_size, rules.num_hole_cards, sum(rules.board_cards)
        truth *= math.comb(n, k) * math.comb(n - k, k) * math.comb(n - 2 * k, m) / math.comb(n, m)
    own = np.unique(row_of[player_0])
    solver = SampledSolver(game, ALGORITHMS["cfr"], "cfr", sampling, np.random.default_rng(0))
    start = solver.state()
    seeds = np.random.default_rng(12345).integers(1, 2**63, size=(samples, 4), dtype=np.uint64)
    draws = np.empty((samples, len(own), 3))
    for k in range(samples):
        solver.restore({**start, "rng": seeds[k]})
        solver.run(1)
        draws[k] = solver.regret[own]
    reached = (draws != 0).any(axis=2).sum(axis=0) >= VISITS
    if rows is None:
        reached |= ~(draws != 0).any(axis=(0, 2))
        assert reached.all()
    else:
        assert reached.sum() >= rows
    error = draws.std(axis=0, ddof=1) / math.sqrt(samples)
    assert_within_standard_errors(
        draws.mean(axis=0)[reached], truth[own][reached], error[reached], Z_BOUND, atol=ROUNDING
    )


@pytest.mark.parametrize(
    ("algorithm", "sampling", "totals"),
    [
        ("cfr+", "external", (1_000, 100_000)),
        ("dcfr", "external", (1_000, 100_000)),
        ("dcfr", "public-chance", (100, 10_000)),
    ],
)
def test_training_converges_on_the_game(algorithm: str, sampling: str, totals: tuple[int, int]) -> None:
    """With a lossless abstraction the abstract game is the game: NashConv, scored exactly on the public tree,
    falls by more than 10x over a hundredfold more iterations."""
    game_id = "holdem-6"
    game = abstract_game(game_id)
    solver = SampledSolver(game, ALGORITHMS[algorithm], algorithm, sampling, np.random.default_rng(1))
    scores = []
    for total in totals:
        solver.run(total - solver.iteration)
        scores.append(exploitability(game_tree(game_id), AbstractHands(game, solver.average_strategy())).nash_conv)
    assert scores[1] < scores[0] / 10


def test_a_lossy_abstraction_trains() -> None:
    """E[HS^2] buckets on the board round: fewer rows than the lossless game, and play improves on uniform."""
    game_id = "holdem-8"
    game = abstract_game(game_id, "lossless,4")
    assert game.num_rows < abstract_game(game_id).num_rows
    solver = SampledSolver(game, ALGORITHMS["cfr+"], "cfr+", "external", np.random.default_rng(2))
    solver.run(50_000)
    tree_ = game_tree(game_id)
    trained = exploitability(tree_, AbstractHands(game, solver.average_strategy())).nash_conv
    uniform = exploitability(tree_, AbstractHands(game, game.uniform_strategy())).nash_conv
    assert trained < uniform / 3


def test_the_same_seed_gives_the_same_strategy() -> None:
    game = abstract_game("holdem-6")
    strategies = []
    for _ in range(2):
        solver = SampledSolver(game, ALGORITHMS["dcfr"], "dcfr", "external", np.random.default_rng(7))
        solver.run(2_000)
        strategies.append(solver.average_strategy())
    np.testing.assert_array_equal(strategies[0], strategies[1])


@pytest.mark.parametrize(
    ("averaging", "chance_draws", "message"),
    [("full", None, "walks the whole game tree"), (None, "stratified", "deals its cards at once")],
)
def test_what_needs_a_tree_is_refused(averaging: str | None, chance_draws: str | None, message: str) -> None:
    game, rng = abstract_game("holdem-6"), np.random.default_rng(0)
    with pytest.raises(InputError, match=message):
        SampledSolver(game, ALGORITHMS["cfr"], "cfr", "external", rng, averaging=averaging, chance_draws=chance_draws)


def test_an_abstraction_of_another_game_is_refused() -> None:
    game = abstract_game("holdem-6")
    with pytest.raises(InputError, match="not of"):
        AbstractGame(abstract_game("holdem-8").engine, game.abstraction)


def test_public_chance_sampling_needs_an_abstract_game() -> None:
    with pytest.raises(InputError, match="through a card abstraction"):
        SampledSolver(tree("holdem-6"), ALGORITHMS["cfr"], "cfr", "public-chance", np.random.default_rng(0))
