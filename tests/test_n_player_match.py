"""Matches and tournaments of n seats: one agent per player of an n-player or general-sum OpenSpiel game, every deal
played in every seat order, each agent's sampled mean beside its exact value -- checked against OpenSpiel's own
expected game score, against the sampled means, and on the command line."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.policy import TabularPolicy, UniformRandomPolicy

import eval.environments
import eval.table
from cfr_agents.policy import load_policy
from eval.agents import InfosetMemo
from eval.opponents.openspiel_solvers import AveragePolicy
from eval.table import Seats, TableSpec, play_table
from tests.support import run_cli

KUHN3 = "openspiel:kuhn_poker(players=3)"
KUHN4 = "openspiel:kuhn_poker(players=4)"
SHERIFF = "openspiel:sheriff(num_rounds=2,max_items=2,max_bribe=2)"
"""A small two-player general-sum game."""
SOLVER_FAMILIES = ["openspiel-cfr", "openspiel-cfr+", "openspiel-mccfr-es", "openspiel-mccfr-os"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """CFR+ policies of three- and four-player Kuhn poker, 300 iterations each, trained by ``cfr-agents train``."""
    folder = tmp_path_factory.mktemp("n-player")
    files = {}
    for game_id in (KUHN3, KUHN4):
        out = folder / f"k{game_id[-2]}.json"
        result = run_cli(
            ["train", "--game", game_id, "--algo", "cfr+", "--iterations", "300", "--quiet", "--out", str(out)]
        )
        assert result.status == 0, result.err
        files[game_id] = out
    return files


def match(*argv: str) -> dict[str, Any]:
    result = run_cli(["match", *argv, "--json", "--quiet"])
    assert result.status == 0, result.err
    document: dict[str, Any] = json.loads(result.out)
    return document


def refused(argv: list[str]) -> str:
    result = run_cli(argv)
    assert result.status == 2 and result.out == ""
    assert len(result.err.strip().splitlines()) == 1, result.err
    return result.err


def test_the_exact_values_equal_openspiels_expected_game_score(trained: dict[str, Path]) -> None:
    names = (str(trained[KUHN3]), "random", "openspiel-cfr:30")
    seats = Seats(KUHN3)
    strategies = [seats.strategy(name) for name in names]
    assert not any(isinstance(s, str) for s in strategies)
    values = eval.table.exact_seat_values(seats.tree, [s for s in strategies if not isinstance(s, str)])
    pyspiel_game = pyspiel.load_game(KUHN3.removeprefix("openspiel:"))
    policies = [seats.opponent(name).agent.openspiel_player() for name in names]
    expected = np.zeros((3, 3))
    for order in itertools.permutations(range(3)):
        scores = expected_game_score.policy_value(pyspiel_game.new_initial_state(), [policies[k] for k in order])
        for seat, agent in enumerate(order):
            expected[agent, seat] += scores[seat] / 2  # (n - 1)! orders seat an agent in one seat
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("game_id", "hands"), [(KUHN3, 3000), (KUHN4, 2400)])
def test_the_sampled_means_meet_the_exact_values_within_four_standard_errors(
    trained: dict[str, Path], game_id: str, hands: int
) -> None:
    players = int(game_id[-2])
    agents = [str(trained[game_id]), *["random"] * (players - 1)]
    report = match(*agents, "--game", game_id, "--hands", str(hands), "--seed", "7")
    assert report["hands"] == hands and report["deals"] * math.factorial(players) == hands
    for result in report["results"]:
        assert result["standard_error"] > 0
        assert abs(result["mean"] - result["exact"]) < 4 * result["standard_error"], result
    # The trained policy wins against random play, and the exact value says so too.
    assert report["results"][0]["exact"] > 0.1


def test_every_deal_is_played_in_every_seat_order_with_the_same_cards(
    trained: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    kinds = (TabularPolicy, UniformRandomPolicy, AveragePolicy)  # the policy file, random, OpenSpiel's CFR
    played: list[tuple[tuple[int, ...], int, tuple[int, ...]]] = []
    real = eval.environments.play_openspiel_hand

    def recording(pyspiel_game: Any, policies: Any, rngs: Any, deal_seed: int) -> Any:
        state = real(pyspiel_game, policies, rngs, deal_seed)
        asked = [policy.policy if isinstance(policy, InfosetMemo) else policy for policy in policies]
        order = tuple(next(k for k, kind in enumerate(kinds) if isinstance(policy, kind)) for policy in asked)
        played.append((order, deal_seed, tuple(state.history()[:3])))  # Kuhn deals one card a player first
        return state

    monkeypatch.setattr(eval.table, "play_openspiel_hand", recording)
    report = play_table(TableSpec(KUHN3, (str(trained[KUHN3]), "random", "openspiel-cfr:20"), 30, 0))
    assert report.deals == 5 and len(played) == 30 == report.hands
    for deal in range(5):
        hands = played[deal * 6 : (deal + 1) * 6]
        assert sorted(order for order, _, _ in hands) == sorted(itertools.permutations(range(3)))
        assert len({seed for _, seed, _ in hands}) == 1 and len({cards for _, _, cards in hands}) == 1
    assert len({seed for _, seed, _ in played}) == 5


def test_the_same_seed_gives_the_same_result_and_another_seed_another(trained: dict[str, Path]) -> None:
    argv = [str(trained[KUHN3]), "random", "openspiel-mccfr-es:2000", "--game", KUHN3, "--hands", "120"]
    first, again, other = match(*argv, "--seed", "5"), match(*argv, "--seed", "5"), match(*argv, "--seed", "6")
    assert first == again
    assert [r["mean"] for r in first["results"]] != [r["mean"] for r in other["results"]]
    assert [r["exact"] for r in first["results"]] == [r["exact"] for r in other["results"]]


@pytest.mark.parametrize("game_id", [KUHN3, KUHN4])
def test_in_a_zero_sum_game_the_agents_values_add_up_to_zero(trained: dict[str, Path], game_id: str) -> None:
    players = int(game_id[-2])
    agents = [str(trained[game_id]), "openspiel-cfr:20", *["random"] * (players - 2)]
    report = match(*agents, "--game", game_id, "--hands", str(2 * math.factorial(players)))
    assert sum(r["exact"] for r in report["results"]) == pytest.approx(0, abs=1e-12)
    assert sum(r["mean"] for r in report["results"]) == pytest.approx(0, abs=1e-12)
    for r in report["results"]:
        assert r["exact"] == pytest.approx(np.mean(r["exact_seat_values"]), abs=1e-15)


def test_a_general_sum_game_plays_with_its_exact_values() -> None:
    report = match("random", "openspiel-cfr:30", "--game", SHERIFF, "--hands", "4000", "--seed", "1")
    assert report["deals"] == 2000
    exact = [r["exact"] for r in report["results"]]
    assert exact[1] > exact[0]  # the solver's side does better than random play
    for result in report["results"]:
        assert abs(result["mean"] - result["exact"]) < 4 * result["standard_error"]


def test_the_report_reads_one_line_per_agent_and_out_writes_the_json(trained: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    argv = ["match", str(trained[KUHN3]), "random", "random", "--hands", "12", "--quiet", "--out", str(out)]
    result = run_cli(argv)
    assert result.status == 0, result.err
    lines = result.out.strip().splitlines()
    assert "12 hands (2 deals, each in all 6 seat orders)" in lines[0] and len(lines) == 4
    assert all("sampled" in line and "exact" in line for line in lines[1:])
    assert json.loads(out.read_text()) == match(str(trained[KUHN3]), "random", "random", "--hands", "12")


def test_a_two_player_match_stays_as_it_was_and_out_writes_its_json(tmp_path: Path) -> None:
    plain = run_cli(["match", "random", "openspiel-cfr:20", "--game", "openspiel:kuhn_poker", "--hands", "20"])
    assert plain.status == 0 and "(duplicate pairs, seats swapped)" in plain.out
    out = tmp_path / "two.json"
    argv = ["match", "random", "openspiel-cfr:20", "--game", "openspiel:kuhn_poker", "--hands", "20", "--json"]
    written = run_cli([*argv, "--out", str(out)])
    assert written.status == 0 and json.loads(out.read_text()) == json.loads(written.out)
    assert json.loads(written.out)["mean"] == json.loads(run_cli(argv).out)["mean"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["K3", "random", "--hands", "12"], "has 3 players: give 3 agents, one per seat, got 2"),
        (["K3", "random", "random", "random", "--hands", "12"], "give 3 agents, one per seat, got 4"),
        (["random", "random", "random", "--game", "openspiel:kuhn_poker", "--hands", "12"], "has 2 players"),
        (["K3", "no-such-agent", "random", "--hands", "12"], "unknown opponent 'no-such-agent'"),
        (["K3", "random", "random", "random", "--game", KUHN4, "--hands", "48"], "not openspiel:kuhn_poker(players=4)"),
        (["K3", "rlcard-rule-v1", "random", "--hands", "12"], "'rlcard-rule-v1' is not available for"),
        (["K3", "deep-cfr", "random", "--hands", "12"], "'deep-cfr' is not available for"),
        (["K3", "random", "random", "--hands", "6"], "--hands must be at least 12"),
        (["K3", "random", "random", "--hands", "20"], "--hands must be a multiple of 6"),
        (["K3", "random", "random", "--hands", "12", "--aivat"], "--aivat takes two-player zero-sum matches only"),
    ],
)
def test_bad_inputs_are_refused_in_one_line_and_write_nothing(
    trained: dict[str, Path], tmp_path: Path, argv: list[str], message: str
) -> None:
    out = tmp_path / "report.json"
    given = [str(trained[KUHN3]) if word == "K3" else word for word in argv]
    assert message in refused(["match", *given, "--out", str(out)])
    assert not out.exists()


def test_the_opponents_of_an_n_player_game_are_listed_and_play(trained: dict[str, Path]) -> None:
    listed = run_cli(["opponents", "--game", KUHN3, "--json"])
    assert listed.status == 0, listed.err
    names = [entry["name"] for entry in json.loads(listed.out)["opponents"]]
    assert names == ["random", *SOLVER_FAMILIES]
    solvers = [f"{name}:200" for name in SOLVER_FAMILIES]
    report = match(str(trained[KUHN3]), *solvers[:2], "--hands", "12")
    assert all(r["exact"] is not None for r in report["results"]) and report["exact_note"] == ""
    report = match(*solvers[2:], "random", "--game", KUHN3, "--hands", "12")
    assert all(r["exact"] is not None for r in report["results"])


def test_a_tournament_plays_every_table_and_averages_each_agent_over_its_tables(
    trained: dict[str, Path], tmp_path: Path
) -> None:
    agents = [str(trained[KUHN3]), "random", "openspiel-cfr:30", "openspiel-mccfr-es:3000"]
    out = tmp_path / "t"
    argv = ["tournament", *agents, "--game", KUHN3, "--hands", "60", "--workers", "1", "--quiet", "--out", str(out)]
    result = run_cli(argv)
    assert result.status == 0, result.err
    document = json.loads((out / "results.json").read_text())
    tables = document["tables"]
    assert [tuple(t["agents"]) for t in tables] == list(itertools.combinations(agents, 3))
    for standing in document["standings"]:
        results = [r for t in tables for r in t["results"] if r["agent"] == standing["agent"]]
        assert standing["tables"] == len(results) == 3
        assert standing["mean"] == pytest.approx(np.mean([r["mean"] for r in results]), abs=1e-12)
        assert standing["exact"] == pytest.approx(np.mean([r["exact"] for r in results]), abs=1e-12)
        error = math.sqrt(sum(r["standard_error"] ** 2 for r in results)) / 3
        assert standing["standard_error"] == pytest.approx(error, rel=1e-12)
    # Each table is the match of its agents, its streams spawned at its index under the seed.
    lone = play_table(TableSpec(KUHN3, tuple(tables[2]["agents"]), 60, 0, spawn_key=(2,)))
    assert [r.mean for r in lone.results] == [r["mean"] for r in tables[2]["results"]]
    assert (out / "results.md").is_file() and (out / "results.csv").is_file() and not (out / "heatmap.png").exists()
    assert "wrote results.json, results.csv, results.md" in result.out


@pytest.mark.parametrize(
    ("agents", "options", "message"),
    [
        (["random", "openspiel-cfr:5"], [], "a tournament needs at least 3 agents"),
        (["random", "random", "openspiel-cfr:5"], [], "agent 'random' is named twice"),
        (
            ["random", "openspiel-cfr:5", "openspiel-cfr+:5"],
            ["--aivat"],
            "--aivat takes two-player zero-sum matches only",
        ),
        (["random", "openspiel-cfr:5", "openspiel-cfr+:5"], ["--hands", "14"], "--hands must be a multiple of 6"),
        (["random", "openspiel-cfr:5", "rlcard-rule-v1"], [], "'rlcard-rule-v1' is not available for"),
    ],
)
def test_a_tournament_refuses_bad_inputs_in_one_line(
    tmp_path: Path, agents: list[str], options: list[str], message: str
) -> None:
    out = tmp_path / "t"
    hands = [] if "--hands" in options else ["--hands", "12"]
    argv = ["tournament", *agents, "--game", KUHN3, *hands, *options, "--workers", "1", "--quiet", "--out", str(out)]
    assert message in refused(argv)
    assert not out.exists()


def test_a_trained_policy_file_names_its_n_player_game(trained: dict[str, Path]) -> None:
    assert load_policy(trained[KUHN4]).game_id == KUHN4
    report = match(str(trained[KUHN4]), "random", "random", "random", "--hands", "48")
    assert report["game"] == KUHN4 and len(report["results"]) == 4
