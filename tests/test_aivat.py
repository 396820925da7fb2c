"""AIVAT (:mod:`eval.aivat`): the value function is the exact self-play value on the tree; every correction
term has expectation zero, by enumeration of Kuhn's terminals, for the known strategy and any value function
(and not for a strategy the agent does not play); in real matches on Leduc the AIVAT mean agrees with the exact
head-to-head value and its variance is below plain Monte Carlo's; ``cfr-agents match --aivat`` reports it and
refuses, in one line, what it cannot estimate."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

import eval.match
from cfr_agents import make_solver
from cfr_agents.tree import CompiledTree, FloatArray
from eval.agents import on_public_tree
from eval.aivat import Aivat, edge_weights, self_play_values
from eval.head_to_head import exact_head_to_head, seated_profile
from eval.match import Agents, MatchSpec, play_scored
from tests.support import assert_within_standard_errors, run_cli, tree

KUHN = "openspiel:kuhn_poker"
LEDUC_GAMES = ("openspiel:leduc_poker", "rlcard:leduc-holdem")


def random_strategy(t: CompiledTree, seed: int) -> FloatArray:
    """A strategy with every legal action's probability drawn at random (not uniform, not pure)."""
    raw = np.random.default_rng(seed).random(t.action_mask.shape) * t.action_mask + 1e-3 * t.action_mask
    strategy: FloatArray = raw / raw.sum(axis=1, keepdims=True)
    return strategy


def terminal_paths(t: CompiledTree) -> list[list[int]]:
    """The path of nodes from the root to every terminal, by following each node's parent up."""
    parent = np.full(t.node_kind.shape[0], -1)
    parent[t.child_node] = np.repeat(np.arange(t.node_kind.shape[0]), np.diff(t.child_start))
    paths = []
    for node in np.flatnonzero(t.node_terminal >= 0).tolist():
        path = [node]
        while parent[path[-1]] >= 0:
            path.append(int(parent[path[-1]]))
        paths.append(path[::-1])
    return paths


def incoming_edges(t: CompiledTree) -> np.ndarray:
    """The edge into each node (-1 at the root)."""
    incoming = np.full(t.node_kind.shape[0], -1, dtype=np.int64)
    incoming[t.child_node] = np.arange(t.child_node.shape[0])
    return incoming


def reach(t: CompiledTree, path: list[int], profile: FloatArray) -> float:
    """The probability of the path when both seats play ``profile`` and chance plays its odds."""
    return float(np.prod(edge_weights(t, profile)[incoming_edges(t)[path[1:]]]))


@pytest.mark.parametrize("game_id", [KUHN, *LEDUC_GAMES])
def test_the_value_function_is_the_exact_self_play_value(game_id: str) -> None:
    t = tree(game_id)
    strategy = random_strategy(t, 1)
    values = self_play_values(t, strategy)
    exact = exact_head_to_head(t, strategy, strategy)
    assert values[:, 0] == pytest.approx(exact.seat_values, abs=1e-12)
    terminal = t.node_terminal >= 0
    assert np.array_equal(values[:, terminal], t.terminal_utility[:, t.node_terminal[terminal]])


@pytest.mark.parametrize("custom_values", [False, True], ids=["self-play values", "arbitrary values"])
@pytest.mark.parametrize("known_seat", [0, 1])
def test_every_correction_has_expectation_zero_on_kuhn(known_seat: int, custom_values: bool) -> None:
    """Sum over every terminal z of pi(z) * correction(z), per edge position and in total, is zero (to
    rounding) when the known seat plays the strategy AIVAT was given, whatever the value function; so the
    expected AIVAT value is the exact value."""
    t = tree(KUHN)
    known, opponent = random_strategy(t, 2), random_strategy(t, 3)
    values = np.random.default_rng(4).normal(size=(2, t.node_kind.shape[0])) if custom_values else None
    aivat = Aivat.build(t, known, values)
    profile = seated_profile(t, known, opponent, known_seat)
    paths = terminal_paths(t)
    assert len(paths) == t.num_terminals
    exact = exact_head_to_head(t, known, opponent).seat_values[known_seat]
    for payoff_seat in (0, 1):
        by_edge: dict[int, float] = {}
        expected_value = 0.0
        for path in paths:
            probability = reach(t, path, profile)
            terms = aivat.corrections(path, payoff_seat, known_seat)
            for edge, term in zip(aivat.incoming[path[1:]].tolist(), terms.tolist(), strict=True):
                by_edge[edge] = by_edge.get(edge, 0.0) + probability * term
            expected_value += probability * aivat.hand_value(path, payoff_seat, known_seat)
        # Grouped by the edge's parent node h, the terms' expectation is pi(h) * E[term | h] = 0.
        parents = np.repeat(np.arange(t.node_kind.shape[0]), np.diff(t.child_start))
        per_node = np.bincount(parents[list(by_edge)], list(by_edge.values()), t.node_kind.shape[0])
        assert np.abs(per_node).max() < 1e-12
        seat_value = exact if payoff_seat == known_seat else -exact
        assert expected_value == pytest.approx(seat_value, abs=1e-12)
        # The opponent's actions get no correction.
        opponent_edges = aivat.edge_player[aivat.incoming[np.arange(1, t.node_kind.shape[0])]] == 1 - known_seat
        assert opponent_edges.any()
        for path in paths:
            edges = aivat.incoming[path[1:]]
            assert not aivat.corrections(path, payoff_seat, known_seat)[
                aivat.edge_player[edges] == 1 - known_seat
            ].any()


def test_corrections_for_a_strategy_not_played_are_biased() -> None:
    """The check above can fail: built for another strategy than the one the known seat plays, the
    corrections' expectation is not zero."""
    t = tree(KUHN)
    played, opponent = random_strategy(t, 2), random_strategy(t, 3)
    aivat = Aivat.build(t, random_strategy(t, 5))
    profile = seated_profile(t, played, opponent, 0)
    bias = sum(reach(t, path, profile) * aivat.corrections(path, 0, 0).sum() for path in terminal_paths(t))
    assert abs(bias) > 1e-3


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A CFR+ policy file for each Leduc game (300 iterations: a strong, mixed strategy)."""
    files = {}
    for game_id in LEDUC_GAMES:
        solver = make_solver(tree(game_id), "cfr+")
        solver.run(300)
        path = tmp_path_factory.mktemp("aivat") / f"{game_id.replace(':', '_')}.json"
        solver.average_policy().save(path)
        files[game_id] = str(path)
    return files


MATCHES = [
    ("openspiel:leduc_poker", "ours", "random", 0),
    ("openspiel:leduc_poker", "random", "ours", 1),
    ("rlcard:leduc-holdem", "ours", "random", 2),
    ("rlcard:leduc-holdem", "ours", "rlcard-rule-v1", 3),
    ("rlcard:leduc-holdem", "rlcard-rule-v1", "ours", 4),
]
"""(game, A, B, seed): ours against random and against an RLCard rule agent, in both orders."""


@pytest.mark.parametrize(("game_id", "a", "b", "seed"), MATCHES)
def test_the_aivat_mean_agrees_with_the_exact_value_with_less_variance(
    policies: dict[str, str], game_id: str, a: str, b: str, seed: int
) -> None:
    names = tuple(policies[game_id] if name == "ours" else name for name in (a, b))
    spec = MatchSpec(game_id, (names[0], names[1]), 2000, seed, aivat=True)
    report, recorder = play_scored(spec, Agents(), keep_hands=True)
    assert report.aivat is not None and recorder is not None and report.exact is not None
    assert report.aivat.hands == report.hands == 2000
    assert report.aivat.known == names[0]  # A's strategy when A can be queried: both can here
    assert_within_standard_errors(report.aivat.mean, report.exact, report.aivat.standard_error, 4)
    assert recorder.payoffs is not None and recorder.values is not None
    payoffs, values = np.array(recorder.payoffs), np.array(recorder.values)
    assert float(payoffs.mean()) == pytest.approx(report.mean, abs=1e-9)  # the same hands as the plain estimate
    assert float(values.mean()) == pytest.approx(report.aivat.mean, abs=1e-9)
    assert values.var(ddof=1) < 0.8 * payoffs.var(ddof=1)


def test_the_known_strategy_is_b_when_a_cannot_be_queried(
    policies: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``A`` unqueryable, ``B``'s strategy is the known one and the estimate is still ``A``'s payoff."""
    game_id = "openspiel:leduc_poker"
    ours = policies[game_id]
    exact = Agents().exact(("random", ours), game_id)
    assert not isinstance(exact, str)
    original = Agents.strategy

    def strategy(self: Agents, name: str, game: str) -> FloatArray | str:
        return "it cannot be asked" if name == "random" else original(self, name, game)

    monkeypatch.setattr(eval.match.Agents, "strategy", strategy)
    spec = MatchSpec(game_id, ("random", ours), 2000, 7, aivat=True)
    report, _ = play_scored(spec, Agents())
    assert report.aivat is not None and report.aivat.known == ours
    assert_within_standard_errors(report.aivat.mean, exact.value, report.aivat.standard_error, 4)


def test_match_reports_aivat_in_json_and_text(tmp_path: Path) -> None:
    log = tmp_path / "hands.jsonl"
    argv = ["match", "random", "openspiel-cfr+:30", "--game", KUHN, "--hands", "200", "--seed", "3"]
    run = run_cli([*argv, "--aivat", "--json", "--log", str(log)])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    aivat = report["aivat"]
    assert set(aivat) >= {"mean", "standard_error", "ci95", "known"} and aivat["known"] == "random"
    low, high = aivat["ci95"]
    assert low < aivat["mean"] < high and aivat["standard_error"] > 0
    assert len(log.read_text().splitlines()) == 200  # the log is written as without AIVAT
    plain = json.loads(run_cli([*argv, "--json"]).out)
    assert plain["aivat"] is None
    assert {k: v for k, v in plain.items() if k != "aivat"} == {k: v for k, v in report.items() if k != "aivat"}
    text = run_cli([*argv, "--aivat", "--quiet"])
    assert text.status == 0 and "  AIVAT   " in text.out


def one_line_error(argv: list[str]) -> str:
    run = run_cli(argv)
    assert run.status == 2, run.err
    lines = run.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cfr-agents") and ": error: " in lines[0], run.err
    return lines[0]


def test_aivat_on_a_public_tree_game_asks_the_holdem_engine() -> None:
    """A hold'em game past 12 cards (as FHP) runs on its public tree: AIVAT scores its hands on the hold'em engine
    (:mod:`eval.aivat_holdem`). Sixteen cards, two hole cards each: a public tree built in a second."""
    game = (
        "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,numSuits=4,"
        "numRanks=4,numHoleCards=2,numBoardCards=0 1,raiseSize=100 100,maxRaises=1 1)"
    )
    assert on_public_tree(game)
    run = run_cli(["match", "random", "random", "--game", game, "--hands", "10", "--aivat", "--json"])
    assert run.status == 0, run.err
    aivat = json.loads(run.out)["aivat"]
    assert aivat["known"] == "random" and aivat["hands"] == 10


def test_aivat_is_refused_when_neither_strategy_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eval.match.Agents, "strategy", lambda self, name, game: f"{name} cannot be asked")
    line = one_line_error(["match", "random", "random", "--game", KUHN, "--hands", "10", "--aivat"])
    assert "--aivat needs the strategy of one agent" in line and "random cannot be asked" in line


def test_tournament_reports_aivat_per_match(tmp_path: Path) -> None:
    out = tmp_path / "t"
    agents = ["random", "openspiel-cfr+:30", "openspiel-mccfr-os:2000"]
    argv = ["tournament", "--game", KUHN, *agents, "--hands", "100", "--out", str(out), "--workers", "1"]
    run = run_cli([*argv, "--aivat", "--quiet"])
    assert run.status == 0, run.err
    matches = json.loads((out / "results.json").read_text())["matches"]
    assert len(matches) == 3
    for match in matches:
        assert match["aivat"]["known"] == match["agents"][0] and match["aivat"]["standard_error"] > 0
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert [float(row["aivat_mean"]) for row in rows] == [match["aivat"]["mean"] for match in matches]
    assert "AIVAT" in (out / "results.md").read_text()


def test_tournament_refuses_aivat_on_a_game_whose_hands_it_does_not_read(tmp_path: Path) -> None:
    game = "pettingzoo:leduc_holdem_v4"
    argv = ["tournament", "--game", game, "random", "random", "--hands", "10", "--out", str(tmp_path / "t")]
    line = one_line_error([*argv, "--aivat"])
    assert "--aivat reads hands of openspiel: and rlcard: games" in line
    assert not (tmp_path / "t").exists()
