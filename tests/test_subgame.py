"""Endgames re-solved at play time on a subgame of their own: the same strategy as the whole tree's re-solve in the
endgame's segment, unsafe and safe, from ranges replayed along the betting."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache

import numpy as np
import pytest

from adapters.games import canonical_game_id
from adapters.holdem.betting import DECISION
from adapters.holdem.cards import hand_index_table
from adapters.holdem.engine import holdem_engine
from adapters.inputs import InputError
from adapters.openspiel import PREFIX
from cfr_agents.holdem_play import openspiel_position
from cfr_agents.public_tree.endgame import EndgameSolver
from cfr_agents.public_tree.engine import Engine, FloatArray, normalised, own_placement, profile
from cfr_agents.public_tree.safe_endgame import safe_resolve
from cfr_agents.public_tree.subgame import Subgames
from cfr_agents.public_tree.tree import PublicTree, build_public_tree
from cfr_agents.solvers import ALGORITHMS
from eval.opponents import load_opponent
from eval.resolving import ResolvingRange
from tests.support import run_cli

GAME = "holdem-8"
ITERATIONS = 25


@cache
def whole() -> PublicTree:
    """Every board its own segment, so each endgame is one segment."""
    return build_public_tree(canonical_game_id(GAME).removeprefix(PREFIX), canonical=False)


@cache
def blueprint() -> FloatArray:
    """A random strategy: every hand's range at an endgame differs from the next's."""
    tree = whole()
    return normalised(tree, np.random.default_rng(7).random(tree.size))


class TreeRange:
    """A strategy over the whole tree, asked as an agent is asked: at a betting node, on the board so far."""

    def __init__(self, tree: PublicTree, strategy: FloatArray) -> None:
        self.tree, self.strategy = tree, strategy
        segments = tree.segments
        self.segment = {(int(segments.range_index[s]), segments.boards[s]): s for s in range(segments.count)}
        self.asked = 0

    def probabilities(self, node: int, board: np.ndarray, actions: Sequence[int], live: np.ndarray) -> FloatArray:
        self.asked += 1
        tree, betting = self.tree, self.tree.betting
        s = self.segment[(range_of(tree, node), history(tree, board, int(betting.round[node])))]
        n, count = int(betting.num_children[node]), tree.num_hands
        base = int(tree.segments.offset[s] + tree.node_offset[node])
        block: FloatArray = self.strategy[base : base + n * count].reshape(n, count)
        return block


def range_of(tree: PublicTree, node: int) -> int:
    ranges = tree.betting.ranges
    return int(np.flatnonzero((ranges[:, 0] <= node) & (node < ranges[:, 1]))[0])


def history(tree: PublicTree, board: Sequence[int] | np.ndarray, round_: int) -> tuple[tuple[int, ...], ...]:
    sizes = tree.rules.board_cards
    ends = np.cumsum(sizes)
    return tuple(
        tuple(int(c) for c in board[end - size : end])
        for end, size in zip(ends[1 : round_ + 1], sizes[1 : round_ + 1], strict=True)
    )


def actions_to(tree: PublicTree, node: int) -> list[int]:
    """OpenSpiel's action ids from the root to ``node``."""
    betting, taken = tree.betting, []
    while node > 0:
        if int(betting.action[node]) >= 0:
            taken.append(int(betting.action[node]))
        node = int(betting.parent[node])
    return taken[::-1]


def endgame_blocks(tree: PublicTree, strategy: FloatArray, s: int) -> dict[int, FloatArray]:
    """The strategy at each decision node of segment ``s``, ``(actions, H)``."""
    betting, count = tree.betting, tree.num_hands
    start, stop = betting.ranges[int(tree.segments.range_index[s])]
    blocks = {}
    for node in range(int(start), int(stop)):
        if int(betting.kind[node]) == DECISION:
            base = int(tree.segments.offset[s] + tree.node_offset[node])
            blocks[node] = strategy[base : base + int(betting.num_children[node]) * count].reshape(-1, count)
    return blocks


def endgames(tree: PublicTree, count: int) -> list[int]:
    rounds = tree.segments.round_start
    last = tree.rules.num_rounds - 1
    return [
        int(s) for s in np.random.default_rng(3).choice(np.arange(rounds[last], rounds[last + 1]), count, replace=False)
    ]


def whole_tree_resolve(strategy: FloatArray, safe: bool) -> FloatArray:
    """Every endgame of the whole tree re-solved at once from the blueprint ``strategy``, by ``ITERATIONS`` DCFR
    iterations: safely (each acting player's gadget) or not."""
    rule = ALGORITHMS["dcfr"]
    if safe:
        return safe_resolve(whole(), rule, "dcfr", strategy, ITERATIONS)
    solver = EndgameSolver(whole(), rule, "dcfr", strategy)
    solver.run(ITERATIONS)
    resolved: FloatArray = solver.average_strategy()
    return resolved


@pytest.mark.parametrize("safe", [False, True])
def test_a_subgame_resolved_at_play_time_plays_as_the_whole_trees_resolve(safe: bool) -> None:
    """At every decision of eight endgames, the agent that re-solves each endgame when play reaches it (from ranges
    it replays along the betting) plays what re-solving every endgame at once on the whole tree plays there, to
    1e-12: unsafe, and safe for the acting player."""
    tree, strategy = whole(), blueprint()
    expected = whole_tree_resolve(strategy, safe)
    asked = TreeRange(tree, strategy)
    agent = ResolvingRange(asked, holdem_engine(tree.game_id), iterations=ITERATIONS, safe=safe)
    live = np.ones(tree.num_hands, dtype=bool)
    for s in endgames(tree, 8):
        board = [card for part in tree.segments.boards[s] for card in part]
        for node, block in endgame_blocks(tree, expected, s).items():
            found = agent.probabilities(node, np.array(board), actions_to(tree, node), live)
            np.testing.assert_allclose(found, block, rtol=0, atol=1e-12)
            assert not np.allclose(found, endgame_blocks(tree, strategy, s)[node])  # not the blueprint's play
    assert agent.solves == 8 * (2 if safe else 1)  # each endgame solved once (per acting player when safe)
    first = tree.betting.ranges[0]
    root_block = agent.probabilities(0, np.zeros(0, dtype=np.int64), [], live)
    np.testing.assert_array_equal(root_block, endgame_blocks(tree, strategy, 0)[int(first[0])])  # blueprint before


def test_the_gains_of_resolving_summed_over_the_endgames_are_the_head_to_head_gain_on_the_whole_tree() -> None:
    """Each seat's gain of playing the re-solved endgames against the blueprint instead of the blueprint, on the
    whole tree, equals the sum over every endgame of its gain per hand that reaches it times the probability of
    reaching it (chance times both ranges' mass of pairs of hands apart), to 1e-12; and it is positive."""
    tree, strategy = whole(), blueprint()
    solver = EndgameSolver(tree, ALGORITHMS["dcfr"], "dcfr", strategy)
    solver.run(ITERATIONS)
    resolved, own = solver.average_strategy(), own_placement(tree)
    engine = Engine(tree)
    expected = [
        engine.value(p, profile(resolved, strategy, own, own) if p == 0 else profile(strategy, resolved, own, own))
        - engine.value(p, profile(strategy, strategy, own, own))
        for p in range(2)
    ]
    agent = ResolvingRange(TreeRange(tree, strategy), holdem_engine(tree.game_id), iterations=ITERATIONS)
    apart = (tree.masks[:, None] & tree.masks[None, :]) == 0
    rounds, last = tree.segments.round_start, tree.rules.num_rounds - 1
    summed = np.zeros(2)
    for s in range(int(rounds[last]), int(rounds[last + 1])):
        entry = int(tree.betting.ranges[int(tree.segments.range_index[s]), 0])
        board = np.array([card for part in tree.segments.boards[s] for card in part])
        endgame = agent.endgame(entry, board, actions_to(tree, entry))
        reach = endgame.tree.root_reach
        assert reach is not None
        summed += tree.chance * float(reach[0] @ apart @ reach[1]) * agent.gains(endgame)
    np.testing.assert_allclose(summed, expected, rtol=0, atol=1e-12)
    assert min(expected) > 0.0


def test_subgames_refuse_what_is_not_an_endgame() -> None:
    tree = whole()
    subgames = Subgames(tree.game_id, tree.rules, tree.betting)
    last = tree.segments.round_start[tree.rules.num_rounds - 1]
    entry = int(tree.betting.ranges[int(tree.segments.range_index[last]), 0])
    board = [card for part in tree.segments.boards[last] for card in part]
    reach = np.ones((2, tree.num_hands))
    assert subgames.tree(entry, board, reach).size == int(tree.range_size[tree.segments.range_index[last]])
    with pytest.raises(InputError, match="is not in the last round"):
        subgames.tree(0, board, reach)
    with pytest.raises(InputError, match="does not start the last round"):
        subgames.tree(entry + 1, board, reach)
    with pytest.raises(InputError, match="distinct cards"):
        subgames.tree(entry, board + board, reach)
    with pytest.raises(InputError, match="a card of"):
        subgames.tree(entry, [99], reach)
    with pytest.raises(InputError, match="reaches of at least 0"):
        subgames.tree(entry, board, -reach)
    with pytest.raises(InputError, match="at least 1 iteration"):
        ResolvingRange(TreeRange(tree, blueprint()), holdem_engine(tree.game_id), iterations=0)


@pytest.mark.parametrize("safe", [False, True])
def test_the_named_resolving_agent_plays_the_whole_trees_resolve_at_openspiels_states(safe: bool) -> None:
    """``resolve:N:random`` (``resolve-safe:``) from the registry, played as an OpenSpiel policy at states of
    OpenSpiel's own game dealt and bet at random, answers in the last round what re-solving every endgame of the
    whole tree from the uniform blueprint plays at that infoset for the hand it holds, to 1e-12, and the blueprint
    before."""
    tree = whole()
    uniform = normalised(tree, np.ones(tree.size))
    expected = whole_tree_resolve(uniform, safe)
    name = f"resolve{'-safe' if safe else ''}:{ITERATIONS}:random"
    opponent = load_opponent(name, GAME)
    policy = opponent.agent.openspiel_player()
    engine = holdem_engine(tree.game_id)
    rows = hand_index_table(tree.hands, tree.rules.deck_size)
    segment = {(range_of(tree, 0), ()): 0} | {
        (int(tree.segments.range_index[s]), tree.segments.boards[s]): s for s in range(tree.segments.count)
    }
    rng, checked = np.random.default_rng(5), [0, 0]
    game = policy.game
    for _ in range(40):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, weights = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(int(rng.choice(outcomes, p=weights)))
                continue
            position = openspiel_position(engine, state, None)
            round_ = int(tree.betting.round[position.node])
            s = segment[(range_of(tree, position.node), history(tree, position.board, round_))]
            block = endgame_blocks(tree, expected if round_ == tree.rules.num_rounds - 1 else uniform, s)
            answer = policy.action_probabilities(state)
            found = np.array([answer[a] for a in engine.legal_actions(position.node)])
            column = block[position.node][:, int(rows[tuple(sorted(position.hole))])]
            np.testing.assert_allclose(found, column, rtol=0, atol=1e-12)
            checked[round_ == tree.rules.num_rounds - 1] += 1
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert min(checked) > 20  # decisions checked before the last round and in it


@pytest.mark.parametrize(
    ("agent", "game", "message"),
    [
        ("resolve:", "holdem-8", "name the blueprint agent after resolve:"),
        ("resolve-safe:7:", "holdem-8", "name the blueprint agent after resolve-safe:"),
        ("resolve:0:random", "holdem-8", "the iteration count must be positive"),
        ("resolve:no-such-agent", "holdem-8", "unknown opponent 'no-such-agent'"),
        ("resolve:random", "rlcard:leduc-holdem", "has no endgames to re-solve"),
    ],
)
def test_a_bad_resolving_agent_is_refused_in_one_line(agent: str, game: str, message: str) -> None:
    run = run_cli(["match", agent, "random", "--game", game, "--hands", "4"])
    assert run.status == 2 and not run.out
    assert run.err.count("\n") == 1 and message in run.err


def test_the_resolving_agent_plays_a_match_in_rlcards_env() -> None:
    """``resolve:`` of an RLCard agent plays RLCard's own env, its hands reaching the river re-solved there."""
    agents = ["resolve:5:always-call", "always-call"]
    run = run_cli(["match", *agents, "--game", "rlcard:limit-holdem", "--hands", "4", "--seed", "2", "--json"])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    assert report["hands"] == 4 and report["agents"] == agents
