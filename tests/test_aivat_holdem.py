"""AIVAT on the hold'em engine (:mod:`eval.aivat_holdem`): summed over every terminal of a small limit hold'em game
with its probability, the estimate is the exact value of the profile -- for the known strategy, any gains of the
value function, and with or without imagined hands -- and not for a strategy the agent does not play; hands played
in RLCard's env replay on the engine with the env's payoffs, and an RLCard agent asked on the engine sees the
state the env showed it; ``match --aivat`` reports it on ``rlcard:limit-holdem``."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import adapters
from adapters.games import canonical_game_id
from adapters.holdem.cards import private_hands, rank_hands
from adapters.holdem.engine import holdem_engine
from adapters.rlcard import RLCardGame
from cfr_agents.policy import Policy
from cfr_agents.tree import CompiledTree, FloatArray
from eval import aivat_holdem
from eval.aivat_holdem import HoldemAivat, HoldemAivatRecorder, cross_fitted, fitted_gains
from eval.environments import play_rlcard_match
from eval.head_to_head import exact_head_to_head, seated_profile
from eval.match import rlcard_seat
from eval.opponents import load_opponent
from eval.ranges import BoolArray, IntArray, RangeQuery, RLCardRange, UniformRange, range_query
from tests.support import run_cli, tree
from tests.test_aivat import incoming_edges, random_strategy, reach, terminal_paths

GAME = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,numSuits=2,"
    "numRanks=2,numHoleCards=1,numBoardCards=0 1,raiseSize=100 100,maxRaises=1 1)"
)
"""Four cards (two ranks in two suits), one private card each, one board card, Flop Hold'em's betting with one bet
a round: few terminals to sum over (396), with pairs, high cards and split pots."""
LIMIT = "rlcard:limit-holdem"


class EveryHand:
    """``query`` asked for every hand at once, so that :class:`HoldemAivat` imagines the known seat's other hands."""

    def __init__(self, query: RangeQuery) -> None:
        self.query = query

    def probabilities(self, node: int, board: IntArray, actions: Sequence[int], live: BoolArray) -> FloatArray:
        return self.query.probabilities(node, board, actions, np.ones_like(live))


def history(t: CompiledTree, path: list[int]) -> list[int]:
    """The ids applied along ``path`` (root first): OpenSpiel's history of the terminal."""
    return [int(action) for action in t.child_action[incoming_edges(t)[path[1:]]]]


def strategy_query(t: CompiledTree, strategy: FloatArray, path: Path, game: str = GAME) -> RangeQuery:
    """The strategy as a policy file, asked hand by hand through OpenSpiel's states."""
    Policy.from_strategy(t, strategy, algorithm="random", parameters={}, iterations=0).save(path)
    engine = holdem_engine(game)
    rules = engine.rules
    hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    return range_query(load_opponent(str(path), game).agent, engine, hands, "known")


def expected_estimate(t: CompiledTree, aivat: HoldemAivat, profile: FloatArray, seat: int, known_seat: int) -> float:
    return sum(
        reach(t, path, profile) * aivat.history_value(history(t, path), seat, known_seat) for path in terminal_paths(t)
    )


@pytest.mark.parametrize(
    ("known_seat", "imagined", "other_asked"),
    [
        (0, False, "no"),
        (1, True, "no"),
        (0, True, "held"),
        pytest.param(1, False, "held", marks=pytest.mark.slow),  # the cases after the first four: slow
        (0, True, "imagined"),
        pytest.param(1, True, "imagined", marks=pytest.mark.slow),
        pytest.param(1, False, "imagined", marks=pytest.mark.slow),
    ],
    ids=[
        "the hand held",
        "hands imagined",
        "hands imagined, both asked",
        "the hand held, both asked",
        "both seats' hands imagined",
        "both seats' hands imagined, seat 1 known",
        "the other seat's hands imagined",
    ],
)
def test_the_expected_estimate_is_the_exact_value(
    tmp_path: Path, known_seat: int, imagined: bool, other_asked: str
) -> None:
    """Whichever hands the known seat is imagined to hold, and whether the other seat's moves are corrected too,
    at the hand it holds or with its other hands imagined as well."""
    t = tree(GAME)
    known, opponent = random_strategy(t, 2), random_strategy(t, 3)
    query = strategy_query(t, known, tmp_path / "known.json")
    other: RangeQuery | None = None
    if other_asked != "no":
        other = strategy_query(t, opponent, tmp_path / "other.json")
        other = EveryHand(other) if other_asked == "imagined" else other
    aivat = HoldemAivat(holdem_engine(GAME), EveryHand(query) if imagined else query, np.random.default_rng(0), other)
    assert (aivat.imaginary, aivat.imagine_other) == (imagined, other_asked == "imagined")
    aivat.gains = np.random.default_rng(known_seat).normal(1.0, 1.0, aivat.gains.shape)  # any gains will do
    profile = seated_profile(t, known, opponent, known_seat)
    exact = exact_head_to_head(t, known, opponent).seat_values[known_seat]
    plain = sum(
        reach(t, path, profile) * t.terminal_utility[known_seat, t.node_terminal[path[-1]]]
        for path in terminal_paths(t)
    )
    assert plain == pytest.approx(exact, abs=1e-9)
    for seat in (0, 1):
        value = exact if seat == known_seat else -exact
        assert expected_estimate(t, aivat, profile, seat, known_seat) == pytest.approx(value, abs=1e-9)


@pytest.mark.slow
def test_both_seats_imagined_with_two_hole_cards(tmp_path: Path) -> None:
    """Two hole cards each, from six cards: the pairs of imagined hands exclude those sharing a card by
    inclusion-exclusion over the cards, and the estimate stays the exact value."""
    game = GAME.replace("numHoleCards=1", "numHoleCards=2").replace("numRanks=2", "numRanks=3")
    t = tree(game)
    known, opponent = random_strategy(t, 2), random_strategy(t, 3)
    query = EveryHand(strategy_query(t, known, tmp_path / "known.json", game))
    other = EveryHand(strategy_query(t, opponent, tmp_path / "other.json", game))
    aivat = HoldemAivat(holdem_engine(game), query, np.random.default_rng(0), other)
    aivat.gains = np.random.default_rng(1).normal(1.0, 1.0, aivat.gains.shape)
    profile = seated_profile(t, known, opponent, 1)
    exact = exact_head_to_head(t, known, opponent).seat_values[1]
    assert expected_estimate(t, aivat, profile, 1, 1) == pytest.approx(exact, abs=1e-9)


def brute_force_margins(aivat: HoldemAivat, board: IntArray, ranges: FloatArray) -> FloatArray:
    """:meth:`HoldemAivat.range_margins` by its definition: every pair of hands, every completion of the board."""
    rules = aivat.engine.rules
    size = sum(rules.board_cards) - board.shape[0]
    rest = [card for card in range(rules.deck_size) if card not in board.tolist()]
    out = np.zeros(ranges.shape)
    dealt = set(board.tolist())
    for o, mine in enumerate(aivat.hands.tolist()):
        for other, theirs in enumerate(aivat.hands.tolist()):
            if set(mine) & set(theirs) or (set(mine) | set(theirs)) & dealt:
                continue
            signs = []
            for completion in itertools.combinations([c for c in rest if c not in mine + theirs], size):
                full = np.array([*board.tolist(), *completion], dtype=np.int64)
                ours, their = rank_hands(np.array([mine, theirs], dtype=np.int64), full, rules.num_suits).tolist()
                signs.append((ours > their) - (ours < their))
            out[:, o] += ranges[:, other] * float(np.mean(signs))
    return out


def test_range_margins_are_the_pairs_margins_summed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Against a brute force over every pair of hands and every completion (``holdem-12``, two hole cards):
    exact when the completions are enumerated; sampled, unbiased: the mean of many draws comes close."""
    aivat = HoldemAivat(
        holdem_engine(canonical_game_id("holdem-12")),
        UniformRange(holdem_engine(canonical_game_id("holdem-12")), 0),
        np.random.default_rng(0),
    )
    rng = np.random.default_rng(3)
    ranges = rng.random((2, aivat.hands.shape[0])) * (rng.random((2, aivat.hands.shape[0])) < 0.7)
    unread = ~(ranges > 0.0).any(axis=0)  # hands in neither range: not read, 0
    assert unread.sum() > 1
    exact = {}
    for board in (np.array([], dtype=np.int64), np.array([5], dtype=np.int64)):
        round_ = board.shape[0]
        expected = exact[round_] = brute_force_margins(aivat, board, ranges)
        expected[:, unread] = 0.0
        assert np.abs(expected).max() > 0.1
        in_turn = aivat.range_margins(round_, board, ranges)
        assert in_turn == pytest.approx(expected, abs=1e-12)
        with monkeypatch.context() as threads:  # the parts on threads: the same sums, bit for bit
            threads.setattr(aivat_holdem, "PARALLEL_EVALUATIONS", 0)
            assert np.array_equal(aivat.range_margins(round_, board, ranges), in_turn)
    hands = [set(hand) for hand in aivat.hands.tolist()]
    pairs = [
        [sum(ranges[v, j] for j, theirs in enumerate(hands) if not mine & theirs) for mine in hands] for v in (0, 1)
    ]
    assert aivat.disjoint_sums(ranges) == pytest.approx(np.array(pairs), abs=1e-12)
    board, expected = np.array([], dtype=np.int64), exact[0]
    monkeypatch.setattr(aivat_holdem, "EXACT_EVALUATIONS", 0)
    monkeypatch.setattr(aivat_holdem, "EQUITY_SAMPLES", 64)
    sampled = np.mean([aivat.range_margins(0, board, ranges) for _ in range(400)], axis=0)
    assert sampled == pytest.approx(expected, abs=0.05 * np.abs(expected).max())
    assert np.abs(sampled - expected).max() > 0.0  # sampled indeed


def test_the_estimate_for_a_strategy_not_played_is_biased(tmp_path: Path) -> None:
    """The check above can fail: told the known seat plays another strategy than it does, the estimate's
    expectation is off."""
    t = tree(GAME)
    played, opponent = random_strategy(t, 2), random_strategy(t, 3)
    query = strategy_query(t, random_strategy(t, 5), tmp_path / "other.json")
    aivat = HoldemAivat(holdem_engine(GAME), EveryHand(query), np.random.default_rng(0))
    exact = exact_head_to_head(t, played, opponent).seat_values[0]
    assert abs(expected_estimate(t, aivat, seated_profile(t, played, opponent, 0), 0, 0) - exact) > 1e-3


def test_the_estimate_for_another_strategy_of_the_other_seat_is_biased(tmp_path: Path) -> None:
    """Told the other seat plays another strategy than it does, the estimate's expectation is off too."""
    t = tree(GAME)
    known, opponent = random_strategy(t, 2), random_strategy(t, 3)
    query = strategy_query(t, known, tmp_path / "known.json")
    wrong = strategy_query(t, random_strategy(t, 5), tmp_path / "wrong.json")
    aivat = HoldemAivat(holdem_engine(GAME), EveryHand(query), np.random.default_rng(0), wrong)
    exact = exact_head_to_head(t, known, opponent).seat_values[0]
    assert abs(expected_estimate(t, aivat, seated_profile(t, known, opponent, 0), 0, 0) - exact) > 1e-3


def test_each_fold_is_valued_with_gains_fitted_on_the_other() -> None:
    """A hand's cross-fitted value depends on its own parts and the other fold's, never on the rest of its own
    fold; the gains fitted are the least-squares ones when the ridge is negligible."""
    rng = np.random.default_rng(0)
    parts = rng.normal(size=(4000, 5))
    parts[:, 0] += parts[:, 1:] @ np.array([2.0, -1.0, 0.5, 3.0])
    prior = np.ones(4)
    values = cross_fitted(parts, prior)
    fold = (np.arange(4000) // 2) % 2
    changed = parts.copy()
    changed[(fold == 0) & (np.arange(4000) != 0)] = rng.normal(size=(1999, 5))
    again = cross_fitted(changed, prior)
    assert again[0] == values[0]  # hand 0 (fold 0) is valued with gains fitted on fold 1 only
    centred = parts[fold == 1] - parts[fold == 1].mean(axis=0)
    least = np.linalg.lstsq(centred[:, 1:], centred[:, 0], rcond=None)[0]
    assert fitted_gains(parts[fold == 1], prior) == pytest.approx(least, abs=0.05)  # 20 hands of ridge in 2,000
    assert values[0] == pytest.approx(parts[0, 0] - parts[0, 1:] @ fitted_gains(parts[fold == 1], prior), abs=1e-12)
    assert np.array_equal(fitted_gains(parts[:0], prior), prior)  # no hands: the default gains


def test_rlcard_hands_replay_on_the_engine_with_the_envs_payoffs() -> None:
    """Every hand of a match in RLCard's env, translated into the engine's history, pays on the engine what the env
    paid (the recorder refuses a hand that does not)."""
    engine = holdem_engine(LIMIT)
    agents = [load_opponent(name, LIMIT) for name in ("random", "rlcard-limit-rule-v1")]
    rules = engine.rules
    hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    aivat = HoldemAivat(engine, range_query(agents[0].agent, engine, hands, "random"), np.random.default_rng(0))
    recorder = HoldemAivatRecorder(LIMIT, ("random", "rlcard-limit-rule-v1"), aivat, 0, 20, keep_hands=True)
    rng = np.random.default_rng(0)
    game = adapters.load_game(LIMIT)
    assert isinstance(game, RLCardGame)
    players = [rlcard_seat(opponent.agent, game, np.random.default_rng(i)) for i, opponent in enumerate(agents)]
    played = play_rlcard_match(LIMIT, players[0], players[1], 20, rng, log=recorder)
    assert recorder.payoffs is not None and len(recorder.payoffs) == 40
    assert float(np.mean(recorder.payoffs)) == pytest.approx(played.mean, abs=1e-12)


class LaterRaises:
    """An RLCard agent of limit hold'em that reads the raises of each round in ``obs`` (RLCard's ``obs[52 + 5 r + n]``:
    ``n`` raises in round ``r``): it raises whenever it may once the flop is dealt, and before the flop raises only
    if ``obs`` shows a raise in a later round -- which no state of the hand itself can show -- else checks or
    calls."""

    use_raw = False

    def __init__(self, actions: Sequence[str]) -> None:
        self.actions = list(actions)

    def eval_step(self, state: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        obs = np.asarray(state["obs"])
        legal = list(state["raw_legal_actions"])
        later = bool(obs[57:72].reshape(3, 5)[:, 1:].any())
        flop = int(obs[:52].sum()) > 2
        name = "raise" if (flop or later) and "raise" in legal else "call" if "call" in legal else "check"
        return self.actions.index(name), {}

    def step(self, state: Mapping[str, Any]) -> int:
        return self.eval_step(state)[0]


def test_an_rlcard_agent_asked_on_the_engine_sees_the_state_the_env_showed_it() -> None:
    """Hands in one env, each after a hand with raises on the flop and later: the agent that reads the raises of
    later rounds is asked on the engine at the state the env gave it, so every action it took has probability 1
    (the recorder refuses a hand where the known agent took an action of probability 0)."""
    engine = holdem_engine(LIMIT)
    game = adapters.load_game(LIMIT)
    assert isinstance(game, RLCardGame)
    known = LaterRaises(game.actions)
    rules = engine.rules
    hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    aivat = HoldemAivat(engine, RLCardRange(known, engine, hands, "later-raises"), np.random.default_rng(0))
    recorder = HoldemAivatRecorder(LIMIT, ("later-raises", "always-call"), aivat, 0, 6, keep_hands=True)
    other = rlcard_seat(load_opponent("always-call", LIMIT).agent, game, np.random.default_rng(1))
    played = play_rlcard_match(LIMIT, known, other, 6, np.random.default_rng(0), log=recorder)
    assert recorder.payoffs is not None and len(recorder.payoffs) == 12
    assert float(np.mean(recorder.payoffs)) == pytest.approx(played.mean, abs=1e-12)


def test_match_reports_aivat_on_rlcard_limit_holdem() -> None:
    argv = ["match", "rlcard-limit-rule-v1", "random", "--game", LIMIT, "--hands", "20", "--aivat", "--json"]
    run = run_cli(argv)
    assert run.status == 0, run.err
    aivat = json.loads(run.out)["aivat"]
    assert aivat["known"] == "random" and aivat["hands"] == 20  # rule-v1 is asked hand by hand; random at once
    low, high = aivat["ci95"]
    assert low < aivat["mean"] < high


def test_rlcards_rule_agent_has_its_hands_imagined_and_other_per_hand_agents_do_not() -> None:
    """Asking RLCard's rule agent for every hand at a node is cheap: AIVAT imagines its other hands. Any other agent
    asked hand by hand through RLCard's env is asked for the hand it holds only."""
    engine = holdem_engine(LIMIT)
    rules = engine.rules
    hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    rule = range_query(load_opponent("rlcard-limit-rule-v1", LIMIT).agent, engine, hands, "rule")
    assert isinstance(rule, RLCardRange) and rule.imaginable
    aivat = HoldemAivat(engine, UniformRange(engine, hands.shape[0]), np.random.default_rng(0), rule)
    assert aivat.imaginary and aivat.imagine_other
    other = RLCardRange(rule.agent, engine, hands, "asked hand by hand")
    assert not HoldemAivat(engine, UniformRange(engine, hands.shape[0]), np.random.default_rng(0), other).imagine_other
