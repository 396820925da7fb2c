"""``cfr-agents match`` and ``cfr-agents tournament``: output shapes, sampled against exact values,
results that do not depend on the number of workers, and one-line refusals of bad input."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from cfr_agents import Policy, make_solver
from cfr_agents.cli import main
from eval.opponents import shipped_model
from eval.play import MatchSpec, play_match
from tests.support import game, tree

MATCH_FIELDS = {"game", "agents", "hands", "mean", "standard_error", "ci95", "units", "mbb_per_hand", "exact"}


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A short DCFR run on each game the tests use, saved as a policy file."""
    directory = tmp_path_factory.mktemp("policies")
    files = {}
    for game_id in ("rlcard:leduc-holdem", "openspiel:kuhn_poker", "rlcard:kuhn-poker"):
        solver = make_solver(tree(game_id), "dcfr")
        solver.run(300)
        path = directory / f"{game_id.replace(':', '_')}.json"
        solver.average_policy().save(path)
        files[game_id] = path
    return files


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code if isinstance(exit_.code, int) else 1
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_match_json_fields(policies: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["match", str(policies["rlcard:leduc-holdem"]), "random", "--hands", "400", "--seed", "4", "--json"]
    status, out, _ = run_cli(argv, capsys)
    assert status == 0
    report = json.loads(out)
    assert set(report) >= MATCH_FIELDS
    assert report["game"] == "rlcard:leduc-holdem" and report["units"] == "BB" and report["hands"] == 400
    assert report["agents"] == [str(policies["rlcard:leduc-holdem"]), "random"]
    low, high = report["ci95"]
    assert low < report["mean"] < high and report["standard_error"] > 0
    assert report["mbb_per_hand"] == pytest.approx(1000 * report["mean"])
    assert isinstance(report["exact"], float) and isinstance(report["exact_within_ci95"], bool)
    assert run_cli(argv, capsys)[1] == out  # same seed, same match


def test_match_text_names_units_mbb_and_exact(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(["match", "rlcard-rule-v1", "random", "--game", "rlcard:leduc-holdem", "--hands", "200"],
                             capsys)  # fmt: skip
    assert status == 0
    assert "BB/hand" in out and "mbb/hand" in out and "95% CI" in out and "exact" in out


def test_match_chips_game_has_no_mbb(policies: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(["match", str(policies["openspiel:kuhn_poker"]), "random", "--hands", "100", "--json"],
                             capsys)  # fmt: skip
    assert status == 0
    report = json.loads(out)
    assert report["units"] == "chips" and report["mbb_per_hand"] is None and report["exact"] is not None


@pytest.mark.parametrize(
    ("game_id", "opponent", "hands"),
    [
        ("rlcard:leduc-holdem", "random", 20_000),  # RLCard's RandomAgent, its own stream
        ("rlcard:leduc-holdem", "rlcard-pretrained-cfr", 10_000),  # RLCard's CFRAgent, lossy obs
        ("rlcard:kuhn-poker", "random", 10_000),
        ("openspiel:kuhn_poker", "random", 6_000),  # pyspiel states
    ],
)
def test_sampled_value_agrees_with_exact_within_4_standard_errors(
    policies: dict[str, Path], game_id: str, opponent: str, hands: int
) -> None:
    report = play_match(MatchSpec(game_id, (str(policies[game_id]), opponent), hands, seed=11))
    assert report.exact is not None and report.hands == hands
    assert report.standard_error > 0
    assert abs(report.mean - report.exact) <= 4 * report.standard_error, report


def tournament(out: Path, workers: int, agents: list[str], hands: int = 200) -> list[str]:
    return ["tournament", "--game", "rlcard:leduc-holdem", *agents, "--hands", str(hands), "--out", str(out),
            "--workers", str(workers), "--seed", "7", "--quiet"]  # fmt: skip


def test_tournament_outputs_and_workers_give_identical_results(
    policies: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    agents = [str(policies["rlcard:leduc-holdem"]), "random", "rlcard-rule-v1"]
    one, two = tmp_path / "one", tmp_path / "two"
    status, out, _ = run_cli(tournament(one, 1, agents), capsys)
    assert status == 0 and "| agent |" in out
    assert run_cli(tournament(two, 2, agents), capsys)[0] == 0
    for name in ("results.json", "results.csv", "results.md"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    results = json.loads((one / "results.json").read_text())
    assert results["game"] == "rlcard:leduc-holdem" and results["units"] == "BB" and results["agents"] == agents
    assert len(results["matches"]) == 3 and len(results["exploitability"]) == 3
    assert {tuple(m["agents"]) for m in results["matches"]} == {(agents[0], "random"), (agents[0], "rlcard-rule-v1"),
                                                                ("random", "rlcard-rule-v1")}  # fmt: skip
    for match in results["matches"]:
        assert set(match) >= MATCH_FIELDS and match["hands"] == 200 and match["exact"] is not None
    by_agent = {score["agent"]: score for score in results["exploitability"]}
    assert by_agent["random"]["nash_conv"] == pytest.approx(2 * by_agent["random"]["exploitability"])
    assert by_agent[agents[0]]["exploitability"] < by_agent["rlcard-rule-v1"]["exploitability"]
    rows = list(csv.DictReader((one / "results.csv").open()))
    assert len(rows) == 3 and float(rows[0]["mean"]) == results["matches"][0]["mean"]
    table = (one / "results.md").read_text()
    assert table.count("\n| `") == 3 and "exploitability" in table
    assert (one / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_tournament_on_ray_equals_one_on_local_workers(
    local_ray: None, policies: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The policy file travels to the Ray workers as its contents; the results are byte for byte the same."""
    agents = [str(policies["rlcard:leduc-holdem"]), "random", "rlcard-rule-v1"]
    assert run_cli(tournament(tmp_path / "local", 2, agents), capsys)[0] == 0
    on_ray = tournament(tmp_path / "ray", 2, agents)
    on_ray[on_ray.index("--workers") : on_ray.index("--workers") + 2] = ["--ray"]
    assert run_cli(on_ray, capsys)[0] == 0
    for name in ("results.json", "results.csv", "results.md"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes(), name


def test_a_pairing_does_not_depend_on_the_others(policies: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    """Pairing k's seeds come from (seed, k): the same first pairing whatever agents follow."""
    first = [str(policies["rlcard:leduc-holdem"]), "random"]
    assert run_cli(tournament(tmp_path / "a", 1, first), capsys)[0] == 0
    assert run_cli(tournament(tmp_path / "b", 1, [*first, "rlcard-rule-v1"]), capsys)[0] == 0
    a, b = (json.loads((tmp_path / d / "results.json").read_text())["matches"][0] for d in "ab")
    assert a == b


@pytest.mark.skipif(not shipped_model("rlcard-nfsp", game("rlcard:leduc-holdem")).is_file(),
                    reason="no shipped rlcard-nfsp model in eval/opponents/models yet")  # fmt: skip
def test_shipped_nfsp_plays_a_match_beside_its_exact_value() -> None:
    report = play_match(MatchSpec("rlcard:leduc-holdem", ("rlcard-nfsp", "random"), 4_000, seed=1))
    assert report.exact is not None
    assert abs(report.mean - report.exact) <= 4 * report.standard_error, report


def one_line_error(status: int, err: str) -> str:
    assert status == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cfr-agents") and ": error: " in lines[0], err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["match", "nobody", "random", "--game", "rlcard:leduc-holdem", "--hands", "10"], "unknown opponent 'nobody'"),
        (["match", "rlcard-rule-v1", "random", "--game", "openspiel:kuhn_poker", "--hands", "10"], "not available"),
        (["match", "random", "random", "--game", "rlcard:leduc-holdem", "--hands", "1"], "at least 4"),
        (["match", "random", "random", "--game", "rlcard:leduc-holdem", "--hands", "0"], "at least 4"),
        (["match", "random", "random", "--game", "rlcard:leduc-holdem", "--hands", "-3"], "at least 4"),
        (["match", "random", "random", "--game", "rlcard:leduc-holdem", "--hands", "7"], "even"),
        (["match", "random", "random", "--hands", "10"], "give --game"),
        (["tournament", "--game", "rlcard:leduc-holdem", "random", "nobody", "--hands", "10", "--out", "{tmp}/t"],
         "unknown opponent"),
        (["tournament", "--game", "openspiel:kuhn_poker", "random", "rlcard-rule-v2", "--hands", "10", "--out",
          "{tmp}/t"], "not available"),
        (["tournament", "--game", "rlcard:leduc-holdem", "random", "rlcard-rule-v1", "--hands", "1", "--out",
          "{tmp}/t"], "at least 4"),
        (["tournament", "--game", "rlcard:leduc-holdem", "random", "--hands", "10", "--out", "{tmp}/t"],
         "at least 2 agents"),
        (["tournament", "--game", "rlcard:leduc-holdem", "random", "random", "--hands", "10", "--out", "{tmp}/t"],
         "named twice"),
        (["tournament", "--game", "rlcard:leduc-holdem", "random", "rlcard-rule-v1", "--hands", "10", "--out",
          "{tmp}/file"], "not a directory"),
        (["tournament", "--game", "rlcard:leduc-holdem", "random", "rlcard-rule-v1", "--hands", "10", "--out",
          "{tmp}/missing/deeper"], "cannot create directory"),
        (["tournament", "--game", "rlcard:leduc-holdem", "random", "rlcard-rule-v1", "--hands", "10", "--out",
          "{tmp}/blocked"], "is a directory"),
        (["tournament", "--game", "rlcard:leduc-holdem", "random", "rlcard-rule-v1", "--hands", "10", "--out",
          "{tmp}/t", "--workers", "0"], "positive"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    (tmp_path / "file").write_text("not a directory\n")
    (tmp_path / "blocked" / "results.json").mkdir(parents=True)  # an output name taken by a directory
    status, _, err = run_cli([arg.replace("{tmp}", str(tmp_path)) for arg in argv], capsys)
    assert expected in one_line_error(status, err)


def test_a_policy_for_another_game_is_refused(policies: dict[str, Path], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    kuhn = str(policies["openspiel:kuhn_poker"])
    status, _, err = run_cli(["match", kuhn, "random", "--game", "rlcard:leduc-holdem", "--hands", "10"], capsys)
    assert "openspiel:kuhn_poker" in one_line_error(status, err)
    out = str(tmp_path / "t")
    argv = ["tournament", "--game", "rlcard:leduc-holdem", kuhn, "random", "--hands", "10", "--out", out]
    status, _, err = run_cli(argv, capsys)
    assert "openspiel:kuhn_poker" in one_line_error(status, err)
    assert not (tmp_path / "t").exists()  # refused before anything is written


def test_policy_probabilities_are_what_the_rlcard_agent_plays(policies: dict[str, Path]) -> None:
    """The agent's cached rows and inverse-CDF sampling keep the policy's probabilities."""
    import numpy as np
    import rlcard

    from cfr_agents import load_policy

    policy: Policy = load_policy(policies["rlcard:leduc-holdem"])
    agent = policy.rlcard_agent(seed=0)
    env = rlcard.make("leduc-holdem", config={"seed": 1})
    state, _ = env.reset()
    probabilities = agent.probabilities(state)
    counts = dict.fromkeys(probabilities, 0)
    for _ in range(20_000):
        counts[agent.step(state)] += 1
    for action, probability in probabilities.items():
        error = np.sqrt(probability * (1 - probability) / 20_000)
        assert abs(counts[action] / 20_000 - probability) <= 4 * error + 1e-9
