"""A single match: exact head-to-head values per seat on the tree, and sampled matches in the real
environment -- RLCard's env for ``rlcard:`` games, ``pyspiel`` states for ``openspiel:`` games --
with seats swapped over duplicate deals and separate RNG streams, whose mean lies within 4 standard
errors of the exact value; ``cfr-agents match`` and its report.

The agents play as themselves (RLCard's own agents in RLCard's env), so an agreement covers the
state dicts, the probabilities read from them, and the adapter's faithfulness to the toolkit's
engine, not just the tree's consistency with itself.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.policy import UniformRandomPolicy
from rlcard.agents import RandomAgent

from adapters.inputs import InputError
from cfr_agents import Policy, make_solver
from eval import best_response_policy, exact_head_to_head, play_openspiel_match, play_rlcard_match, strategy_of
from eval.match import MatchSpec, play_match
from eval.opponents import load_opponent, shipped_model
from tests.support import MATCH_REPORT_FIELDS, assert_within_standard_errors, game, run_cli, tree

RLCARD_OPPONENTS = (
    "random",
    "rlcard-rule-v1",
    "rlcard-rule-v2",
    "rlcard-pretrained-cfr",
    "rlcard-cfr",
    "rlcard-nfsp",
    "openspiel-mccfr-os:2000",
)
BRIDGED_SLOW = ("openspiel-cfr:2", "openspiel-cfr+:2", "openspiel-mccfr-es:500")
"""OpenSpiel's full-tree solvers on bridged RLCard Leduc take seconds per iteration: slow suite."""
OPENSPIEL_OPPONENTS = ("openspiel-nfsp", "openspiel-cfr+:30", "openspiel-mccfr-es:3000")
PAIRS = 1500


def trained(game_id: str, iterations: int) -> Policy:
    solver = make_solver(tree(game_id), "dcfr")
    solver.run(iterations)
    return solver.average_policy()


def test_a_strategy_against_itself_is_worth_nothing_over_both_seats() -> None:
    t = tree("openspiel:kuhn_poker")
    policy = trained("openspiel:kuhn_poker", 2000).strategy_on(t)
    result = exact_head_to_head(t, policy, policy)
    assert result.value == pytest.approx(0.0, abs=1e-12)
    assert result.seat_values[0] == pytest.approx(-1 / 18, abs=1e-3)  # Kuhn's value for the first player


def test_exact_value_separates_the_seats() -> None:
    """Against a player who always bets, checking in seat 0 and always calling in seat 1 differ."""
    t = tree("openspiel:kuhn_poker")
    always_bet = np.zeros(t.action_mask.shape)
    always_bet[:, 1] = 1.0
    uniform = t.uniform_strategy()
    result = exact_head_to_head(t, uniform, always_bet)
    assert result.value == pytest.approx(np.mean(result.seat_values))
    assert result.seat_values[0] != pytest.approx(result.seat_values[1])


@pytest.mark.parametrize(("game_id", "pairs"), [("rlcard:leduc-holdem", 10_000), ("rlcard:kuhn-poker", 10_000)])
def test_sampled_match_against_rlcard_random_agent_agrees_with_the_exact_value(game_id: str, pairs: int) -> None:
    t = tree(game_id)
    num_actions = game(game_id).num_distinct_actions
    policy = trained(game_id, 300)
    exact = exact_head_to_head(t, policy.strategy_on(t), t.uniform_strategy())  # RandomAgent is uniform
    np.random.seed(20261123)  # RLCard's RandomAgent draws from NumPy's global generator
    match = play_rlcard_match(
        game_id, policy.rlcard_agent(seed=1), RandomAgent(num_actions=num_actions), pairs, np.random.default_rng(2)
    )
    assert match.hands == 2 * pairs and match.units == t.units
    assert match.standard_error < 0.05
    assert_within_standard_errors(match.mean, exact.value, match.standard_error)
    assert match.ci95[0] < match.mean < match.ci95[1]


def test_same_seeds_same_match() -> None:
    """On one machine: the same seeds play the same hands."""
    policy = trained("rlcard:leduc-holdem", 50)

    def play() -> float:
        return play_rlcard_match(
            "rlcard:leduc-holdem",
            policy.rlcard_agent(seed=3),
            policy.rlcard_agent(seed=4),
            200,
            np.random.default_rng(5),
        ).mean

    assert play() == play()


def test_matches_need_an_rlcard_game_and_pairs() -> None:
    policy = trained("rlcard:kuhn-poker", 5)
    agent = policy.rlcard_agent(seed=0)
    with pytest.raises(InputError, match="not an rlcard: game"):
        play_rlcard_match("openspiel:kuhn_poker", agent, agent, 10, np.random.default_rng(0))
    with pytest.raises(InputError, match="at least 2 pairs"):
        play_rlcard_match("rlcard:kuhn-poker", agent, agent, 1, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("game_id", "opponent", "hands"),
    [
        ("rlcard:leduc-holdem", "random", 8_000),  # RLCard's RandomAgent, its own stream (20,000 hands above)
        ("rlcard:leduc-holdem", "rlcard-pretrained-cfr", 10_000),  # RLCard's CFRAgent, lossy obs
        ("rlcard:kuhn-poker", "random", 10_000),
        ("openspiel:kuhn_poker", "random", 6_000),  # pyspiel states
    ],
)
def test_sampled_value_agrees_with_exact_within_4_standard_errors(
    policy_files: dict[str, Path], game_id: str, opponent: str, hands: int
) -> None:
    report = play_match(MatchSpec(game_id, (str(policy_files[game_id]), opponent), hands, seed=11))
    assert report.exact is not None and report.hands == hands
    assert_within_standard_errors(report.mean, report.exact, report.standard_error)


@pytest.mark.skipif(
    not shipped_model("rlcard-nfsp", game("rlcard:leduc-holdem")).is_file(),
    reason="no shipped rlcard-nfsp model in eval/opponents/models yet",
)
@pytest.mark.slow  # the default run plays the shipped rlcard-nfsp against random: rlcard-nfsp in the test below
def test_shipped_nfsp_plays_a_match_beside_its_exact_value() -> None:
    report = play_match(MatchSpec("rlcard:leduc-holdem", ("rlcard-nfsp", "random"), 4_000, seed=1))
    assert report.exact is not None
    assert_within_standard_errors(report.mean, report.exact, report.standard_error)


@pytest.mark.parametrize("name", RLCARD_OPPONENTS)
def test_rlcard_opponent_against_random_in_rlcards_env(name: str) -> None:
    game_id = "rlcard:leduc-holdem"
    compiled = tree(game_id)
    opponent = load_opponent(name, game_id)
    exact = exact_head_to_head(compiled, strategy_of(opponent.agent, compiled), compiled.uniform_strategy())
    np.random.seed(11)  # the RandomAgent opposite samples from NumPy's global generator
    agent = opponent.agent.rlcard_player(compiled, np.random.default_rng(12))
    match = play_rlcard_match(game_id, agent, RandomAgent(num_actions=4), PAIRS, np.random.default_rng(13))
    assert_within_standard_errors(match.mean, exact.value, match.standard_error)


@pytest.mark.parametrize("name", OPENSPIEL_OPPONENTS)
def test_openspiel_opponent_against_random_on_pyspiel_states(name: str) -> None:
    game_id = "openspiel:leduc_poker"
    compiled = tree(game_id)
    opponent = load_opponent(name, game_id)
    exact = exact_head_to_head(compiled, strategy_of(opponent.agent, compiled), compiled.uniform_strategy())
    uniform = UniformRandomPolicy(pyspiel.load_game("leduc_poker"))
    rngs = (np.random.default_rng(21), np.random.default_rng(22))
    with np.errstate(all="ignore"):
        match = play_openspiel_match(
            game_id, opponent.agent.openspiel_player(), uniform, PAIRS, np.random.default_rng(23), rngs
        )
    assert_within_standard_errors(match.mean, exact.value, match.standard_error)


def test_best_response_plays_in_rlcards_env_for_its_exact_value() -> None:
    game_id = "rlcard:leduc-holdem"
    compiled = tree(game_id)
    rule = load_opponent("rlcard-rule-v1", game_id).agent.raw
    response: Policy = best_response_policy(compiled, strategy_of(rule, compiled), against="rlcard-rule-v1")
    exact = exact_head_to_head(compiled, response.strategy_on(compiled), strategy_of(rule, compiled))
    match = play_rlcard_match(game_id, response.rlcard_agent(seed=31), rule, PAIRS, np.random.default_rng(32))
    assert_within_standard_errors(match.mean, exact.value, match.standard_error)


@pytest.mark.slow
@pytest.mark.parametrize("name", BRIDGED_SLOW)
def test_bridged_openspiel_solver_against_random_in_rlcards_env(name: str) -> None:
    test_rlcard_opponent_against_random_in_rlcards_env(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", RLCARD_OPPONENTS)
def test_rlcard_opponent_against_pretrained_in_long_matches(name: str) -> None:
    game_id = "rlcard:leduc-holdem"
    compiled = tree(game_id)
    opponent = load_opponent(name, game_id)
    pretrained = load_opponent("rlcard-pretrained-cfr", game_id).agent.raw
    exact = exact_head_to_head(compiled, strategy_of(opponent.agent, compiled), strategy_of(pretrained, compiled))
    np.random.seed(41)
    agent = opponent.agent.rlcard_player(compiled, np.random.default_rng(42))
    match = play_rlcard_match(game_id, agent, pretrained, 20_000, np.random.default_rng(43))
    assert_within_standard_errors(match.mean, exact.value, match.standard_error)


def test_match_json_fields(policy_files: dict[str, Path]) -> None:
    argv = ["match", str(policy_files["rlcard:leduc-holdem"]), "random", "--hands", "400", "--seed", "4", "--json"]
    status, out, _ = run_cli(argv)
    assert status == 0
    report = json.loads(out)
    assert set(report) >= MATCH_REPORT_FIELDS
    assert report["game"] == "rlcard:leduc-holdem" and report["units"] == "BB" and report["hands"] == 400
    assert report["agents"] == [str(policy_files["rlcard:leduc-holdem"]), "random"]
    low, high = report["ci95"]
    assert low < report["mean"] < high and report["standard_error"] > 0
    assert report["mbb_per_hand"] == pytest.approx(1000 * report["mean"])
    assert isinstance(report["exact"], float) and isinstance(report["exact_within_ci95"], bool)
    assert run_cli(argv).out == out  # same seed, same match


def test_match_text_names_units_mbb_and_exact() -> None:
    status, out, _ = run_cli(["match", "rlcard-rule-v1", "random", "--game", "rlcard:leduc-holdem", "--hands", "200"])
    assert status == 0
    assert "BB/hand" in out and "mbb/hand" in out and "95% CI" in out and "exact" in out


def test_match_chips_game_has_no_mbb(policy_files: dict[str, Path]) -> None:
    status, out, _ = run_cli(["match", str(policy_files["openspiel:kuhn_poker"]), "random", "--hands", "100", "--json"])
    assert status == 0
    report = json.loads(out)
    assert report["units"] == "chips" and report["mbb_per_hand"] is None and report["exact"] is not None
