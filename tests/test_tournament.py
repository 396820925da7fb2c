"""``cfr-agents tournament``: round robin with exploitability per agent; JSON, CSV, Markdown and a
heatmap; results byte for byte the same for any number of workers and on Ray; each pairing seeded
on its own; a match refused while it is played costs that match only."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from eval.agents import AgentQueryError
from eval.match import Agents, MatchReport, MatchSpec, play_match
from tests.support import MATCH_REPORT_FIELDS, run_cli


def tournament(out: Path, workers: int, agents: list[str], hands: int = 200) -> list[str]:
    return [
        "tournament",
        "--game",
        "rlcard:leduc-holdem",
        *agents,
        "--hands",
        str(hands),
        "--out",
        str(out),
        "--workers",
        str(workers),
        "--seed",
        "7",
        "--quiet",
    ]


def test_tournament_outputs_and_workers_give_identical_results(policy_files: dict[str, Path], tmp_path: Path) -> None:
    """On one machine: one worker and two write the same files byte for byte."""
    agents = [str(policy_files["rlcard:leduc-holdem"]), "random", "rlcard-rule-v1"]
    one, two = tmp_path / "one", tmp_path / "two"
    status, out, _ = run_cli(tournament(one, 1, agents))
    assert status == 0 and "| agent |" in out
    assert run_cli(tournament(two, 2, agents)).status == 0
    for name in ("results.json", "results.csv", "results.md"):
        assert (one / name).read_bytes() == (two / name).read_bytes(), name
    results = json.loads((one / "results.json").read_text())
    assert results["game"] == "rlcard:leduc-holdem" and results["units"] == "BB" and results["agents"] == agents
    assert len(results["matches"]) == 3 and len(results["exploitability"]) == 3
    assert {tuple(m["agents"]) for m in results["matches"]} == {
        (agents[0], "random"),
        (agents[0], "rlcard-rule-v1"),
        ("random", "rlcard-rule-v1"),
    }
    for match in results["matches"]:
        assert set(match) >= MATCH_REPORT_FIELDS and match["hands"] == 200 and match["exact"] is not None
    by_agent = {score["agent"]: score for score in results["exploitability"]}
    assert by_agent["random"]["nash_conv"] == pytest.approx(2 * by_agent["random"]["exploitability"])
    assert by_agent[agents[0]]["exploitability"] < by_agent["rlcard-rule-v1"]["exploitability"]
    rows = list(csv.DictReader((one / "results.csv").open()))
    assert len(rows) == 3 and float(rows[0]["mean"]) == results["matches"][0]["mean"]
    table = (one / "results.md").read_text()
    assert table.count("\n| `") == 3 and "exploitability" in table
    assert (one / "heatmap.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow  # Ray's start-up: the sweep tests run Ray in the default suite
def test_a_tournament_on_ray_equals_one_on_local_workers(
    local_ray: None, policy_files: dict[str, Path], tmp_path: Path
) -> None:
    """The policy file travels to the Ray workers as its contents; on one machine the results are byte for
    byte the same."""
    agents = [str(policy_files["rlcard:leduc-holdem"]), "random", "rlcard-rule-v1"]
    assert run_cli(tournament(tmp_path / "local", 2, agents)).status == 0
    on_ray = tournament(tmp_path / "ray", 2, agents)
    on_ray[on_ray.index("--workers") : on_ray.index("--workers") + 2] = ["--ray"]
    assert run_cli(on_ray).status == 0
    for name in ("results.json", "results.csv", "results.md"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes(), name


def test_a_pairing_does_not_depend_on_the_others(policy_files: dict[str, Path], tmp_path: Path) -> None:
    """Pairing k's seeds come from (seed, k): the same first pairing whatever agents follow."""
    first = [str(policy_files["rlcard:leduc-holdem"]), "random"]
    assert run_cli(tournament(tmp_path / "a", 1, first)).status == 0
    assert run_cli(tournament(tmp_path / "b", 1, [*first, "rlcard-rule-v1"])).status == 0
    a, b = (json.loads((tmp_path / d / "results.json").read_text())["matches"][0] for d in "ab")
    assert a == b


def test_a_refused_match_costs_that_match_only(
    policy_files: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent that refuses in one pairing: the other matches are written, the refused one is named with its
    reason on stderr and in the outputs, and the exit status is 2."""
    policy = str(policy_files["rlcard:leduc-holdem"])

    def refusing(spec: MatchSpec, agents: Agents | None = None) -> MatchReport:
        if "rlcard-rule-v1" in spec.agents and "random" in spec.agents:
            raise AgentQueryError("rlcard-rule-v1 answers nothing at this state")
        return play_match(spec, agents)

    monkeypatch.setattr("eval.tournament.play_match", refusing)
    out = tmp_path / "t"
    run = run_cli(tournament(out, 1, [policy, "random", "rlcard-rule-v1"], hands=20))
    assert run.status == 2
    assert "cfr-agents: error: random vs rlcard-rule-v1: rlcard-rule-v1 answers nothing at this state" in run.err
    results = json.loads((out / "results.json").read_text())
    assert [tuple(m["agents"]) for m in results["matches"]] == [(policy, "random"), (policy, "rlcard-rule-v1")]
    assert results["failed"] == [
        {"agents": ["random", "rlcard-rule-v1"], "reason": "rlcard-rule-v1 answers nothing at this state"}
    ]
    assert len(results["exploitability"]) == 3
    assert len(list(csv.DictReader((out / "results.csv").open()))) == 2
    table = (out / "results.md").read_text()
    assert table.count("| failed |") == 2  # random against rlcard-rule-v1 and back
    assert "- `random` vs `rlcard-rule-v1`: rlcard-rule-v1 answers nothing at this state" in table
