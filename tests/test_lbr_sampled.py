"""Sampled local best response on the compiled engine: at every decision it takes the action the exact LBR of
:mod:`eval.lbr` takes on the public tree, its value lands on the exact one, RLCard agents are asked with the state
RLCard's env hands them, and bad input is refused in one line."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import numpy as np
import pyspiel
import pytest
import rlcard

from adapters.games import canonical_game_id
from adapters.holdem.betting import DEAL, DECISION
from adapters.holdem.cards import board_mask, hand_masks, private_hands
from adapters.holdem.engine import RLCARD_LIMIT, HoldemEngine, holdem_engine
from adapters.rlcard import shared_game
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.abstract_strategy import AbstractStrategy
from cfr_agents.abstraction import build_abstraction, class_counts, parse_spec
from cfr_agents.public_tree import public_tree
from cfr_agents.public_tree.engine import canonical_random_strategy, own_placement, uniform_strategy
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.strategy_file import PublicStrategy
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers import ALGORITHMS
from eval.agents import rlcard_env_state
from eval.holdem import AbstractHands, Placed, strategy_array
from eval.lbr import lbr_strategy, local_best_response
from eval.lbr_sampled import LAST_ROUND, LBRDecision, ShowdownTables, pair_values, sampled_lbr, sampled_lbr_report
from eval.opponents import load_opponent
from eval.ranges import (
    CALL,
    RAISE,
    AbstractRange,
    CardBlind,
    OpenSpielRange,
    RangeQuery,
    RLCardRange,
    UniformRange,
    range_query,
)
from tests.support import run_cli

TIE = 1e-9
"""Two utilities closer than this are a tie, which rounding may break either way in either computation."""


@cache
def tree(name: str) -> PublicTree:
    return public_tree(canonical_game_id(name))


@cache
def engine(name: str) -> HoldemEngine:
    return holdem_engine(canonical_game_id(name))


def hands(name: str) -> np.ndarray:
    rules = engine(name).rules
    return private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)


@cache
def abstract_agent(name: str) -> AbstractStrategy:
    """A non-uniform strategy through a lossy abstraction (4 and 3 buckets): random rows, a fifth of the legal
    actions never played."""
    abstraction = build_abstraction(name, parse_spec("4,3", class_counts(name)), np.random.default_rng(0))
    game = AbstractGame.of(abstraction)
    rng = np.random.default_rng(1)
    legal = np.arange(3)[None, :] < game.num_actions[:, None]
    rows = rng.random((game.num_rows, 3)) * legal
    rows[rows < 0.2] = 0.0
    rows[rows.sum(axis=1) == 0.0, 0] = 1.0
    return AbstractStrategy(game, rows / rows.sum(axis=1, keepdims=True), "random", {}, 0)


@cache
def dcfr(name: str) -> np.ndarray:
    solver = PublicTreeSolver(tree(name), ALGORITHMS["dcfr"], "dcfr")
    solver.run(40)
    strategy: np.ndarray = solver.average_strategy()
    return strategy


def agent(name: str, kind: str) -> tuple[Placed, RangeQuery]:
    """The agent ``kind`` on ``name``: as the exact LBR reads it on the public tree, and as sampled LBR asks it."""
    t = tree(name)
    if kind == "uniform":
        return Placed(uniform_strategy(t), own_placement(t)), UniformRange(engine(name), t.num_hands)
    if kind == "abstract":
        strategy = abstract_agent(canonical_game_id(name))
        placed = strategy_array(t, AbstractHands(strategy.game, strategy.strategy))
        return placed, AbstractRange(strategy, hands(name))
    array = dcfr(name) if kind == "dcfr 40" else canonical_random_strategy(t, np.random.default_rng(3))
    policy = PublicStrategy(canonical_game_id(name), t, array, "test", {}, 0, {})
    return Placed(array, own_placement(t)), OpenSpielRange(policy, engine(name), hands(name), kind)


def exact_policy(name: str, placed: Placed, call_until: int) -> PublicStrategy:
    """The exact LBR of both seats on the public tree, as a policy of OpenSpiel's game."""
    t = tree(name)
    strategy = uniform_strategy(t)
    for seat in (0, 1):
        lbr_strategy(t, placed, seat, call_until=call_until, out=strategy)
    return PublicStrategy(canonical_game_id(name), t, strategy, "lbr", {}, 0, {})


def state_of(name: str, decision: LBRDecision) -> pyspiel.State:
    """OpenSpiel's state of ``decision``: the hole cards, then its betting, each board card where a round ends."""
    state = pyspiel.load_game(tree(name).game_string).new_initial_state()
    k = engine(name).rules.num_hole_cards
    cards = decision.cards.tolist()
    for card in cards[: 2 * k]:
        state.apply_action(card)
    board = iter(cards[2 * k :])
    for action in decision.actions:
        state.apply_action(action)
        while state.is_chance_node():
            state.apply_action(next(board))
    assert state.current_player() == decision.seat
    return state


CASES = [
    ("holdem-6", "uniform"),
    ("holdem-6", "dcfr 40"),
    ("holdem-8", "random"),
    ("holdem-8", "abstract"),
]


def test_the_engine_walks_the_public_trees_betting() -> None:
    for name in ("holdem-6", "holdem-8"):
        assert engine(name).betting.sequence == tree(name).betting.sequence


@pytest.mark.parametrize("call_until", [0, 1])
@pytest.mark.parametrize(("name", "kind"), CASES)
def test_each_decision_is_the_exact_lbrs(name: str, kind: str, call_until: int) -> None:
    """At every decision sampled LBR meets over 600 pairs (both seats), it takes the exact LBR's action for that
    information state, or one whose utility ties it (within 1e-9) by its own computation: against the uniform agent
    on ``holdem-6`` about 1% of the decisions are such ties (LBR sure to lose, a bet and a check both worth 0)."""
    placed, query = agent(name, kind)
    exact = exact_policy(name, placed, call_until)
    decisions: list[LBRDecision] = []
    sampled_lbr(
        engine(name), query, "both", 600, np.random.default_rng(7), call_until=call_until, on_decision=decisions.append
    )
    ties = 0
    for decision in decisions:
        answer = exact.action_probabilities(state_of(name, decision))
        expected = max(answer, key=answer.__getitem__)
        assert answer[expected] == 1.0
        if decision.action == expected:
            continue
        mine = decision.utilities
        assert abs(mine[expected] - mine[decision.action]) <= TIE, (decision, answer)
        ties += 1
    assert len(decisions) > 1000 and ties <= len(decisions) // 20, (len(decisions), ties)
    if call_until == 1:
        first_round = [d for d in decisions if int(engine(name).betting.round[d.node]) == 0]
        assert first_round and all(d.action == CALL and not d.utilities for d in first_round)
    assert any(d.action == RAISE for d in decisions)


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_the_sampled_value_lands_on_the_exact_one(name: str, kind: str) -> None:
    """Both seats over 1,500 pairs, and each seat alone over 600 (the pairs exchanging the hole cards), within 4
    standard errors of :func:`eval.lbr.local_best_response`'s exact values."""
    placed, query = agent(name, kind)
    _, values = local_best_response(tree(name), placed)
    rng = np.random.default_rng(11)
    both = sampled_lbr(engine(name), query, "both", 1500, rng, call_until=0)
    assert abs(both.mean - values.value) < 4 * both.standard_error
    for seat in (0, 1):
        alone = sampled_lbr(engine(name), query, str(seat), 600, rng, call_until=0)
        assert abs(alone.mean - values.seat_values[seat]) < 4 * alone.standard_error, seat


def test_each_pair_is_played_from_its_own_seed_whatever_the_others() -> None:
    """Pair values on seeds: the first pairs of a longer run are those of a shorter one, so two agents scored on
    the same seeds meet the same deals; and the pair values are LBR's, their mean within 4 standard errors of the
    exact value."""
    placed, query = agent("holdem-6", "dcfr 40")
    tables = ShowdownTables(engine("holdem-6").rules, hands("holdem-6"))
    seeds = np.random.SeedSequence(5).spawn(1200)
    values = pair_values(engine("holdem-6"), query, "both", seeds, call_until=0, tables=tables)
    again = pair_values(engine("holdem-6"), query, "both", seeds[:7], call_until=0, tables=tables)
    np.testing.assert_array_equal(again, values[:7])
    assert np.unique(values).size > 2  # not one constant
    _, exact = local_best_response(tree("holdem-6"), placed)
    assert abs(values.mean() - exact.value) < 4 * values.std(ddof=1) / np.sqrt(values.size)


class Recorder:
    """An RLCard agent that keeps every state it is handed; it answers with its ``answer``."""

    use_raw = False

    def __init__(self, answer: Callable[[Mapping[str, Any]], tuple[Any, dict[str, Any]]]) -> None:
        self.states: list[dict[str, Any]] = []
        self.answer = answer

    def eval_step(self, state: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        self.states.append(state)
        return self.answer(state)


def uniform_answer(state: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    names = list(state["raw_legal_actions"])
    return 0, {"probs": {name: 1.0 / len(names) for name in names}}


def random_history(rng: np.random.Generator) -> tuple[np.ndarray, int, list[int]]:
    """A deal of RLCard's limit hold'em and a decision reached by random betting in a random round."""
    game = engine(RLCARD_LIMIT)
    betting = game.betting
    while True:
        cards, node, actions = game.deal(rng), game.root, list[int]()
        depth = int(rng.integers(1, 12))
        while len(actions) < depth and int(betting.kind[node]) == DECISION:
            legal = [a for a in game.legal_actions(node) if a != 0]  # no folds: the hand goes on
            actions.append(int(rng.choice(legal)))
            node = game.child(node, actions[-1])
            while int(betting.kind[node]) == DEAL:
                node = game.child(node, 0)
        if int(betting.kind[node]) == DECISION:
            return cards, node, actions


def test_an_rlcard_agent_is_asked_with_the_state_rlcards_env_builds() -> None:
    """At random public histories, the state an RLCard agent is handed for the hand the player to act holds is the
    one :func:`eval.agents.rlcard_env_state` reads from the adapter's state dealt those cards: the same ``obs``,
    raw observation, legal actions and action record."""
    game, table = shared_game("limit-holdem"), engine(RLCARD_LIMIT)
    recorder = Recorder(uniform_answer)
    query = RLCardRange(recorder, table, hands(RLCARD_LIMIT), "recorder")
    env = rlcard.make("limit-holdem")
    index = {tuple(hand): row for row, hand in enumerate(hands(RLCARD_LIMIT).tolist())}
    outcome = query.outcome
    rng = np.random.default_rng(5)
    for _ in range(12):
        cards, node, actions = random_history(rng)
        player = int(table.betting.player[node])
        round_ = int(table.betting.round[node])
        board = table.board(cards, round_)
        hole = cards[2 * player : 2 * player + 2]
        live = np.zeros(hands(RLCARD_LIMIT).shape[0], dtype=bool)
        live[index[tuple(sorted(hole.tolist()))]] = True
        recorder.states.clear()
        answer = query.probabilities(node, board, actions, live)
        assert len(recorder.states) == 1
        ours = recorder.states[0]
        state: Any = game.new_initial_state()
        for card in (cards[0], cards[2], cards[1], cards[3]):
            state = state.child(outcome[int(card)])
        state = state.child(1)
        dealt = iter(board.tolist())
        for action in actions:
            names = {game.actions[a] for a in state.legal_actions()}
            name = {0: "fold", 2: "raise"}.get(action, "call" if "call" in names else "check")
            state = state.child(game.actions.index(name))
            while state.is_chance_node():
                state = state.child(outcome[next(dealt)])
        theirs = rlcard_env_state(env, state)
        assert np.array_equal(ours["obs"], theirs["obs"])
        assert sorted(ours["raw_obs"]["hand"]) == sorted(theirs["raw_obs"]["hand"])
        for key in ("public_cards", "all_chips", "my_chips", "legal_actions", "raise_nums"):
            assert ours["raw_obs"][key] == theirs["raw_obs"][key], key
        assert list(ours["legal_actions"]) == list(theirs["legal_actions"])
        assert ours["raw_legal_actions"] == theirs["raw_legal_actions"]
        assert ours["action_record"] == theirs["action_record"]
        row = index[tuple(sorted(hole.tolist()))]
        assert np.allclose(answer[:, row], 1.0 / len(table.legal_actions(node)))


@pytest.mark.parametrize("name", ["random", "always-call", "always-raise"])
def test_an_agent_blind_to_its_cards_is_asked_once_a_node_and_answers_as_asked_hand_by_hand(name: str) -> None:
    """RLCard's RandomAgent and the fixed agents ignore their cards: the one answer ``range_query`` asks them for at a
    public node is what every hand of the range would be answered, asked one by one."""
    table = engine(RLCARD_LIMIT)
    agent = load_opponent(name, RLCARD_LIMIT).agent
    blind = range_query(agent, table, hands(RLCARD_LIMIT), name)
    assert isinstance(blind, CardBlind)
    per_hand = RLCardRange(agent.raw, table, hands(RLCARD_LIMIT), name)
    rng = np.random.default_rng(6)
    for _ in range(6):
        cards, node, actions = random_history(rng)
        board = table.board(cards, int(table.betting.round[node]))
        live = (hand_masks(hands(RLCARD_LIMIT)).astype(np.int64) & int(board_mask(board.tolist()))) == 0
        live &= rng.random(live.shape[0]) < 0.05
        live[int(np.flatnonzero(live)[0]) if live.any() else 0] = True
        answer = blind.probabilities(node, board, actions, live)
        expected = per_hand.probabilities(node, board, actions, live)
        assert np.array_equal(answer[:, live], expected[:, live])


def test_an_rlcard_action_without_probabilities_is_read_as_rlcards_env_reads_it() -> None:
    """An agent that returns the id of ``raise`` and no probabilities plays raise where it is legal, and where it
    is not, what RLCard's env makes of an illegal id: check if legal, else fold."""
    game, table = shared_game("limit-holdem"), engine(RLCARD_LIMIT)
    recorder = Recorder(lambda state: (game.actions.index("raise"), {}))
    query = RLCardRange(recorder, table, hands(RLCARD_LIMIT), "raiser")
    live = np.ones(hands(RLCARD_LIMIT).shape[0], dtype=bool)
    node, actions = table.root, list[int]()
    for _ in range(5):  # the small blind completes and raises, the big blind re-raises, ...: raises run out
        legal = table.legal_actions(node)
        answer = query.probabilities(node, table.board(table.deal(np.random.default_rng(0)), 0), actions, live)
        expected = RAISE if RAISE in legal else 0  # facing a bet, call is legal but check is not: fold
        assert np.all(answer[legal.index(expected)] == 1.0), (actions, legal)
        actions.append(RAISE if RAISE in legal else CALL)
        node = table.child(node, actions[-1])
    assert RAISE not in table.legal_actions(node) or len(actions) == 5


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: sampled_lbr(engine("holdem-6"), UniformRange(engine("holdem-6"), 15), "2", 10, rng(), call_until=0),
            "seat must be one of 0, 1, both",
        ),
        (
            lambda: sampled_lbr(engine("holdem-6"), UniformRange(engine("holdem-6"), 15), "0", 1, rng(), call_until=0),
            "at least 2 pairs",
        ),
        (
            lambda: sampled_lbr(engine("holdem-6"), UniformRange(engine("holdem-6"), 15), "0", 4, rng(), call_until=2),
            "call_until must be a round from 0 to 1",
        ),
        (
            lambda: sampled_lbr(engine("hulh"), UniformRange(engine("hulh"), 1326), "0", 4, rng(), call_until=0),
            "call_until must be at least 1 here",
        ),
        (lambda: sampled_lbr_report("random", "hulh", hands=7), "hands must be an even number of at least 4"),
        (lambda: sampled_lbr_report("random", "hulh", hands=2), "hands must be an even number of at least 4"),
        (lambda: sampled_lbr_report("random", "hulh", hands=0), "hands must be an even number of at least 4"),
        (lambda: sampled_lbr_report("random", "hulh", hands=4, call_until=4), "call_until must be a round from 0 to 3"),
        (lambda: sampled_lbr_report("random", "hulh", hands=4, seat="both "), "seat must be one of"),
        (lambda: sampled_lbr_report("random", "hulh", hands=4, workers=0), "workers must be at least 1"),
        (lambda: sampled_lbr_report("random", "openspiel:kuhn_poker", hands=4), "LBR runs on two-player limit"),
        (lambda: sampled_lbr_report("random", "rlcard:leduc-holdem", hands=4), "LBR runs on two-player limit"),
        (lambda: sampled_lbr_report("random", "holdem-6", hands=4), "has a public tree"),
    ],
)
def test_bad_parameters_are_refused(call: Callable[[], object], message: str) -> None:
    with pytest.raises(Exception, match=message):
        call()


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


def test_the_lbr_command_plays_hulh_without_an_exact_value() -> None:
    run = run_cli(["lbr", "random", "--game", "hulh", "--hands", "40", "--seat", "0", "--json"])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    assert report["exact"] is None and report["best_response"] is None and report["ratio"] is None
    assert report["call_until"] == 1 and report["hands"] == 40 and report["seat"] == "0"
    assert report["ci95"][0] < report["value"] < report["ci95"][1]
    assert report["value_mbb"] == pytest.approx(report["value"] / 10 * 1000)
    assert "public tree" in report["no_exact"]
    text = run_cli(["lbr", "random", "--game", "hulh", "--hands", "20", "--call-until", "3"])
    assert text.status == 0, text.err
    assert "exact value is out of reach" in text.out and "played 20 hands" in text.out
    expected = run_cli(["lbr", "random", "--game", "hulh", "--hands", "20", "--last-round", "expected", "--json"])
    assert expected.status == 0, expected.err
    assert json.loads(expected.out)["last_round"] == "expected" and report["last_round"] == "sampled"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["random", "--game", "hulh", "--hands", "0"], "--hands must be an even number of at least 4"),
        (["random", "--game", "hulh", "--call-until", "0"], "--call-until must be at least 1 here"),
        (["random", "--game", "hulh", "--call-until", "4"], "--call-until must be a round from 0 to 3"),
        (["random", "--game", "holdem-6", "--workers", "2"], "--workers applies where LBR is played"),
        (["random", "--game", "holdem-6", "--last-round", "expected"], "--last-round applies where LBR is played"),
        (["random", "--game", "rlcard:leduc-holdem"], "LBR runs on two-player limit universal_poker games"),
    ],
)
def test_bad_lbr_input_without_a_public_tree_is_refused_in_one_line(argv: list[str], message: str) -> None:
    run = run_cli(["lbr", *argv])
    assert run.status == 2 and message in run.err and len(run.err.strip().splitlines()) == 1, run.err


@pytest.mark.slow
def test_the_lbr_command_plays_rlcards_limit_holdem() -> None:
    run = run_cli(["lbr", "rlcard-limit-rule-v1", "--game", "rlcard:limit-holdem", "--hands", "40", "--json"])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    assert report["exact"] is None and report["units"] == "BB" and report["call_until"] == 1
    assert report["value_mbb"] == pytest.approx(report["value"] * 1000)


@pytest.mark.slow
def test_the_hands_do_not_depend_on_how_many_processes_play_them() -> None:
    """1,100 hands: two blocks, played in this process and by two workers (each process keeps its own showdown
    tables, so how many were enumerated may differ; the values do not)."""
    alone = sampled_lbr_report("random", "hulh", hands=1100, seed=4)
    shared = sampled_lbr_report("random", "hulh", hands=1100, seed=4, workers=2)
    assert alone.sampled == shared.sampled


@pytest.mark.slow
def test_on_flop_holdem_each_decision_is_the_exact_lbrs_and_the_value_lands_on_it() -> None:
    """FHP against two DCFR iterations, read hand by hand through OpenSpiel's policy: 200 pairs, every decision the
    exact LBR's (or a tie), and the value within 4 standard errors of the exact one (minutes: the preflop showdown
    tables of the 169 classes of hands are enumerated as they are met)."""
    name = "fhp"
    solver = PublicTreeSolver(tree(name), ALGORITHMS["dcfr"], "dcfr")
    solver.run(2)
    array = solver.average_strategy()
    placed = Placed(array, own_placement(tree(name)))
    policy = PublicStrategy(canonical_game_id(name), tree(name), array, "test", {}, 0, {})
    query = OpenSpielRange(policy, engine(name), hands(name), "dcfr 2")
    exact = exact_policy(name, placed, 0)
    _, values = local_best_response(tree(name), placed)
    decisions: list[LBRDecision] = []
    sampled = sampled_lbr(
        engine(name), query, "both", 200, np.random.default_rng(3), call_until=0, on_decision=decisions.append
    )
    for decision in decisions:
        answer = exact.action_probabilities(state_of(name, decision))
        expected = max(answer, key=answer.__getitem__)
        if decision.action != expected:
            assert abs(decision.utilities[expected] - decision.utilities[decision.action]) <= TIE
    assert abs(sampled.mean - values.value) < 4 * sampled.standard_error


@pytest.mark.parametrize(("name", "kind"), [("holdem-6", "dcfr 40"), ("holdem-8", "abstract")])
def test_the_last_round_in_expectation_lands_on_the_exact_value(name: str, kind: str) -> None:
    """With the last round scored in expectation, over the agent's actions or over its hand in LBR's range too, the
    mean over 1,000 pairs is within 4 standard errors of the exact LBR value; over the agent's actions, the standard
    error is below the played last round's on the same seeds (each pair's value is the played one's conditional
    expectation); and every decision of the last round's walk is the exact LBR's, or ties it."""
    placed, query = agent(name, kind)
    _, values = local_best_response(tree(name), placed)
    tables = ShowdownTables(engine(name).rules, hands(name))
    seeds = np.random.SeedSequence(13).spawn(1000)
    errors = {}
    for mode in LAST_ROUND:
        found = pair_values(engine(name), query, "both", seeds, call_until=0, tables=tables, last_round=mode)
        errors[mode] = found.std(ddof=1) / np.sqrt(found.size)
        assert abs(found.mean() - values.value) < 4 * errors[mode], mode
    assert errors["expected"] < 0.95 * errors["sampled"]
    exact = exact_policy(name, placed, 0)
    last_round = engine(name).rules.num_rounds - 1
    for mode in ("expected", "over-range"):
        decisions: list[LBRDecision] = []
        rng = np.random.default_rng(17)
        sampled_lbr(engine(name), query, "both", 50, rng, call_until=0, on_decision=decisions.append, last_round=mode)
        last = [d for d in decisions if int(engine(name).betting.round[d.node]) == last_round]
        for decision in last:
            answer = exact.action_probabilities(state_of(name, decision))
            best = max(answer, key=answer.__getitem__)
            mine = decision.utilities
            assert decision.action == best or abs(mine[best] - mine[decision.action]) <= TIE, mode
        assert len(last) > 100
