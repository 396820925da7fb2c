"""Local best response: its decisions against a transcription of the paper's rule on OpenSpiel's own states, its
exact value against the exact best response, and its play in ``universal_poker`` against its exact value."""

from __future__ import annotations

import itertools
import json
import math
import re
from functools import cache
from typing import Any

import numpy as np
import pyspiel
import pytest

from adapters.games import canonical_game_id
from cfr_agents.public_tree import public_tree
from cfr_agents.public_tree.engine import canonical_random_strategy, own_placement, uniform_strategy
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.strategy_file import PublicStrategy
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers import ALGORITHMS
from eval.holdem import Placed
from eval.lbr import lbr_strategy, local_best_response, play_lbr
from tests.support import run_cli

STACK = 2147483647
"""``universal_poker``'s default stack: ``Money`` in an information-state string is this minus what went in."""


@cache
def tree(name: str) -> PublicTree:
    return public_tree(canonical_game_id(name))


def agents(name: str) -> dict[str, np.ndarray]:
    """Agents on ``name``'s tree: uniform, a random suit-canonical strategy, and short CFR+ and DCFR runs."""
    out = {
        "uniform": uniform_strategy(tree(name)),
        "random": canonical_random_strategy(tree(name), np.random.default_rng(3)),
    }
    for algorithm, iterations in (("cfr+", 3), ("dcfr", 40)):
        solver = PublicTreeSolver(tree(name), ALGORITHMS[algorithm], algorithm)
        solver.run(iterations)
        out[f"{algorithm} {iterations}"] = solver.average_strategy()
    return out


def as_policy(name: str, strategy: np.ndarray) -> PublicStrategy:
    return PublicStrategy(canonical_game_id(name), tree(name), strategy, "test", {}, 0, {})


def paper_action(state: pyspiel.State, agent: PublicStrategy, game: pyspiel.Game) -> tuple[int, float] | None:
    """The paper's Algorithm 1 at ``state``, from OpenSpiel's states alone: the agent's range by Bayes' rule over
    every hand it may hold (its probabilities along the actions so far), the win probability by dealing every rest
    of the board and checking down, and the fold probability after a raise. Returns the action and the margin to
    the second-best action's utility, or ``None`` when the agent cannot be here."""
    seat = state.current_player()
    params = game.get_parameters()
    hole, suits, ranks = int(params["numHoleCards"]), int(params["numSuits"]), int(params["numRanks"])
    history = state.history()
    deals = list(range(2 * hole))  # hole cards: player 0's, then player 1's
    mine = history[seat * hole : (seat + 1) * hole]
    board_positions = [i for i, action in enumerate(history) if i >= 2 * hole and _is_chance_at(game, history[:i])]
    board = [history[i] for i in board_positions]
    used = set(mine) | set(board)
    rest = [c for c in range(suits * ranks) if c not in used]
    total_cards = sum(int(x) for x in str(params["numBoardCards"]).split())
    wins = count = folding = reach_sum = 0.0
    for theirs in itertools.combinations(rest, hole):
        replay = list(history)
        for k in range(hole):
            replay[(1 - seat) * hole + k] = theirs[k]
        reach, current = 1.0, game.new_initial_state()
        for i, action in enumerate(replay):
            if i not in deals and i not in board_positions and current.current_player() == 1 - seat:
                reach *= agent.action_probabilities(current).get(action, 0.0)
            current.apply_action(action)
        if reach == 0.0:
            continue
        left = [c for c in rest if c not in theirs]
        for cards in itertools.permutations(left, total_cards - len(board)):
            final = current.clone()
            dealt = iter(cards)
            while not final.is_terminal():
                final.apply_action(next(dealt) if final.is_chance_node() else 1)
            outcome = final.returns()[seat]
            wins += reach * (1.0 if outcome > 0 else 0.5 if outcome == 0 else 0.0)
            count += reach
        reach_sum += reach
        if 2 in current.legal_actions():
            after = current.child(2)
            if not after.is_terminal() and not after.is_chance_node() and 0 in after.legal_actions():
                folding += reach * agent.action_probabilities(after).get(0, 0.0)
    if count == 0.0:
        return None
    win = wins / count
    folds = folding / reach_sum
    fields = re.search(r"\[Round (\d+)\].*\[Money: (\d+) (\d+)\]", state.information_state_string())
    assert fields is not None
    round_, spent = int(fields.group(1)), [STACK - int(fields.group(k)) for k in (2, 3)]
    pot, asked = spent[0] + spent[1], spent[1 - seat] - spent[seat]
    raise_size = int(str(params["raiseSize"]).split()[round_])
    utility = {1: win * pot - (1 - win) * asked}
    if 0 in state.legal_actions():
        utility[0] = 0.0
    if 2 in state.legal_actions():
        utility[2] = folds * pot + (1 - folds) * (win * (pot + raise_size) - (1 - win) * (asked + raise_size))
    ranked = sorted(utility.values(), reverse=True)
    best = next(a for a in (1, 2, 0) if a in utility and utility[a] == ranked[0])
    return best, ranked[0] - ranked[1] if len(ranked) > 1 else math.inf


def _is_chance_at(game: pyspiel.Game, prefix: list[int]) -> bool:
    state = game.new_initial_state()
    for action in prefix:
        state.apply_action(action)
    chance: bool = state.is_chance_node()
    return chance


@pytest.mark.parametrize("name", ["holdem-6", "holdem-8"])
def test_lbr_takes_the_papers_action_at_openspiels_states(name: str) -> None:
    """At 60 decision states reached by random play in each seat, LBR's action is Algorithm 1's, computed from the
    agent's answers at OpenSpiel's states (not from the public tree): where the two best utilities differ."""
    strategy = canonical_random_strategy(tree(name), np.random.default_rng(11))
    agent = as_policy(name, strategy)
    game = pyspiel.load_game(tree(name).game_string)
    rng = np.random.default_rng(5)
    placed = Placed(strategy, own_placement(tree(name)))
    lbr = uniform_strategy(tree(name))
    for seat in (0, 1):
        lbr_strategy(tree(name), placed, seat, out=lbr)
    ours = as_policy(name, lbr)
    checked = 0
    while checked < 60:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            expected = paper_action(state, agent, game)
            if expected is not None and expected[1] > 1e-9:
                answer = ours.action_probabilities(state)
                assert answer[expected[0]] == 1.0, (state.information_state_string(), answer, expected)
                checked += 1
            state.apply_action(int(rng.choice(state.legal_actions())))


@pytest.mark.parametrize("name", ["holdem-6", "holdem-8"])
def test_lbr_never_beats_the_best_response_and_its_exact_value_is_its_play(name: str) -> None:
    """In each seat and for every agent, LBR's exact value is at most the exact best response's; LBR played in
    ``universal_poker`` over 1,500 duplicate pairs lands within 4 standard errors of its exact value."""
    game = pyspiel.load_game(tree(name).game_string)
    for label, strategy in agents(name).items():
        placed = Placed(strategy, own_placement(tree(name)))
        lbr, values = local_best_response(tree(name), placed)
        for seat in (0, 1):
            assert values.seat_values[seat] <= values.best_response_values[seat] + 1e-9, (label, seat)
        assert values.value <= values.exploitability + 1e-9
        if label in ("uniform", "dcfr 40"):
            sampled = play_lbr(
                game, as_policy(name, lbr), as_policy(name, strategy), "both", 1500, np.random.default_rng(2)
            )
            assert abs(sampled.mean - values.value) < 4 * sampled.standard_error, label


def test_in_one_seat_the_pairs_exchange_the_hole_cards() -> None:
    name = "holdem-6"
    strategy = agents(name)["cfr+ 3"]
    lbr, values = local_best_response(tree(name), Placed(strategy, own_placement(tree(name))))
    game = pyspiel.load_game(tree(name).game_string)
    for seat in (0, 1):
        sampled = play_lbr(
            game, as_policy(name, lbr), as_policy(name, strategy), str(seat), 1500, np.random.default_rng(seat)
        )
        assert abs(sampled.mean - values.seat_values[seat]) < 4 * sampled.standard_error


def test_before_call_until_lbr_checks_or_calls() -> None:
    name = "holdem-8"
    t = tree(name)
    placed = Placed(agents(name)["random"], own_placement(t))
    calls = lbr_strategy(t, placed, 0, call_until=1)
    betting = t.betting
    seen = 0
    for s in range(int(t.segments.round_start[1])):  # the first round's segments
        start, stop = (int(x) for x in betting.ranges[t.segments.range_index[s]])
        for node in range(start, stop):
            if t.node_offset[node] < 0 or int(betting.player[node]) != 0:
                continue
            n, first = int(betting.num_children[node]), int(betting.first_child[node])
            call = [int(a) for a in betting.action[first : first + n]].index(1)
            base = int(t.segments.offset[s] + t.node_offset[node])
            assert np.all(calls[base + call * t.num_hands : base + (call + 1) * t.num_hands] == 1.0)
            seen += 1
    assert seen > 0
    acting = lbr_strategy(t, placed, 0)
    assert not np.array_equal(calls, acting)


@pytest.mark.parametrize(
    ("options", "message"),
    [({"seat": 2}, "seat must be 0 or 1"), ({"seat": 0, "call_until": 2}, "call_until must be a round from 0 to 1")],
)
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    t = tree("holdem-6")
    with pytest.raises(Exception, match=message):
        lbr_strategy(t, Placed(uniform_strategy(t), own_placement(t)), **options)


def test_the_lbr_command_reports_exact_and_sampled_values() -> None:
    run = run_cli(["lbr", "random", "--game", "holdem-6", "--hands", "400", "--seat", "1", "--json"])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    values = local_best_response(
        tree("holdem-6"), Placed(uniform_strategy(tree("holdem-6")), own_placement(tree("holdem-6")))
    )[1]
    assert report["exact"] == pytest.approx(values.seat_values[1], abs=1e-9)
    assert report["best_response"] == pytest.approx(values.best_response_values[1], abs=1e-9)
    assert report["hands"] == 400 and report["seat"] == "1"
    assert report["ci95"][0] < report["value"] < report["ci95"][1]
    assert report["value_mbb"] == pytest.approx(report["value"] / 100 * 1000)
    text = run_cli(["lbr", "random", "--game", "holdem-6", "--hands", "0"])
    assert text.status == 0 and "exact best response" in text.out and "played" not in text.out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["random", "--game", "openspiel:kuhn_poker"], "LBR runs on two-player limit universal_poker games"),
        (["random", "--game", "holdem-6", "--hands", "3"], "--hands must be 0 or an even number of at least 4"),
        (["random", "--game", "holdem-6", "--call-until", "2"], "--call-until must be a round from 0 to 1"),
        (["random", "--game", "holdem-6", "--seed", "-1"], "--seed"),
        (["random", "--game", "holdem-6", "--hands", "1000000000000"], "--hands"),
        (["always-call", "--game", "fhp"], "cannot be queried for every hand at once"),
        (["missing.npz", "--game", "fhp"], "'missing.npz' does not exist"),
        (["random", "--game", "hulh", "--hands", "0"], "--hands must be an even number of at least 4 ("),
    ],
)
def test_bad_lbr_input_is_refused_in_one_line(argv: list[str], message: str) -> None:
    run = run_cli(["lbr", *argv])
    assert run.status == 2 and message in run.err and len(run.err.strip().splitlines()) == 1, run.err


@pytest.mark.slow
def test_on_flop_holdem_lbr_never_beats_the_best_response_and_plays_its_value() -> None:
    """FHP against random and two DCFR iterations: in each seat LBR's exact value is at most the best response's,
    and 4,000 hands played in ``universal_poker`` land within 4 standard errors of it (about a minute each)."""
    name = "fhp"
    solver = PublicTreeSolver(tree(name), ALGORITHMS["dcfr"], "dcfr")
    solver.run(2)
    game = pyspiel.load_game(tree(name).game_string)
    for strategy in (uniform_strategy(tree(name)), solver.average_strategy()):
        lbr, values = local_best_response(tree(name), Placed(strategy, own_placement(tree(name))))
        for seat in (0, 1):
            assert values.seat_values[seat] <= values.best_response_values[seat] + 1e-9
        sampled = play_lbr(
            game, as_policy(name, lbr), as_policy(name, strategy), "both", 2000, np.random.default_rng(4)
        )
        assert abs(sampled.mean - values.value) < 4 * sampled.standard_error
