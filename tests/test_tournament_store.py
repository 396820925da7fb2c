"""A tournament keeps each job it finishes in ``DIR/jobs/``; a rerun reads back what was done with the same
settings and agent files, does the rest, and writes what a whole run writes; a stopped run keeps what it
finished; a job file that is not one is refused in one line."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest

from cfr_agents.jobs import LocalPool
from eval.tournament import run_tournament
from eval.tournament_store import JobStore
from tests.support import run_cli

T = TypeVar("T")
R = TypeVar("R")
GAME = "rlcard:kuhn-poker"
OUTPUTS = ("results.json", "results.csv", "results.md")


def tournament(out: Path, agents: Sequence[str], hands: int = 200) -> list[str]:
    options = ["--hands", str(hands), "--out", str(out), "--workers", "1", "--seed", "3", "--quiet"]
    return ["tournament", "--game", GAME, *agents, *options]


@pytest.fixture
def agents(tmp_path: Path) -> list[str]:
    policy = tmp_path / "cfr.json"
    assert run_cli(["train", "--game", GAME, "--algo", "cfr", "--iterations", "30", "--out", str(policy)]).status == 0
    return [str(policy), "random", "openspiel-cfr"]


def outputs(out: Path) -> dict[str, bytes]:
    return {name: (out / name).read_bytes() for name in OUTPUTS}


def test_a_rerun_reads_back_the_jobs_with_the_same_settings_and_plays_the_others(
    agents: list[str], tmp_path: Path
) -> None:
    whole, rerun = tmp_path / "whole", tmp_path / "rerun"
    assert run_cli(tournament(whole, agents)).status == 0
    assert sorted(path.name for path in (whole / "jobs").iterdir()) == [
        *(f"match-{k}.json" for k in range(3)),
        *(f"score-{i}.json" for i in range(3)),
    ]
    assert run_cli(tournament(rerun, agents)).status == 0
    # A stored match is read back, not played: its mean, changed in the file, is what the rerun reports.
    stored = rerun / "jobs" / "match-1.json"
    document = json.loads(stored.read_text())
    document["result"]["mean"] = 123.0
    stored.write_text(json.dumps(document))
    os.remove(rerun / "jobs" / "match-2.json")  # a job a stopped run had not finished
    status, _, err = run_cli([*tournament(rerun, agents)[:-1]])
    assert status == 0
    assert err.count("(played before: read back)") == 5, err
    means = [match["mean"] for match in json.loads((rerun / "results.json").read_text())["matches"]]
    expected = [match["mean"] for match in json.loads((whole / "results.json").read_text())["matches"]]
    assert means == [expected[0], 123.0, expected[2]]
    document["result"]["mean"] = expected[1]
    stored.write_text(json.dumps(document))
    assert run_cli(tournament(rerun, agents)).status == 0
    assert outputs(rerun) == outputs(whole)


def test_jobs_of_other_settings_or_changed_agent_files_are_played_again(agents: list[str], tmp_path: Path) -> None:
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    assert run_cli(tournament(out, agents)).status == 0
    for name in OUTPUTS:
        os.remove(out / name)
    assert run_cli(tournament(out, agents, hands=100)).status == 0  # other hands: every match again
    assert run_cli(tournament(fresh, agents, hands=100)).status == 0
    assert outputs(out) == outputs(fresh)
    policy = Path(agents[0])
    stamp = policy.stat().st_mtime_ns
    os.utime(policy, ns=(stamp, stamp + 10**9))  # the same bytes, touched: the file may have changed
    status, _, err = run_cli([*tournament(out, agents, hands=100)[:-1]])
    assert status == 0
    assert err.count("(played before: read back)") == 3, err  # random vs openspiel-cfr, the named agents' scores
    assert outputs(out) == outputs(fresh)


class StopsAfter:
    """A one-process executor that stops, as Ctrl-C would, after ``finished`` jobs."""

    workers = 1

    def __init__(self, finished: int) -> None:
        self.finished = finished

    def map(
        self, function: Callable[[T], R], items: Sequence[T], on_done: Callable[[T, R], None] | None = None
    ) -> list[R]:
        results = []
        for item in items[: self.finished]:
            results.append(function(item))
            if on_done is not None:
                on_done(item, results[-1])
        raise KeyboardInterrupt


def test_a_stopped_tournament_keeps_the_jobs_it_finished(agents: list[str], tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        run_tournament(GAME, agents, 100, 0, StopsAfter(2), store=store)
    assert sorted(path.name for path in store.directory.iterdir()) == ["match-0.json", "match-1.json"]
    done: list[str] = []
    resumed = run_tournament(GAME, agents, 100, 0, LocalPool(1), done.append, store=store)
    assert done[:2] == [
        f"{agents[0]} vs random (played before: read back)",
        f"{agents[0]} vs openspiel-cfr (played before: read back)",
    ]
    whole = run_tournament(GAME, agents, 100, 0, LocalPool(1))
    assert resumed == whole


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{", "is not valid JSON"),
        ('{"format": "other"}', "is not a cfr-agents-tournament-job file"),
        ('{"format": "cfr-agents-tournament-job", "version": 9}', "has version 9"),
        ("mean", "its result has no valid 'mean'"),
        ("agents", "its result is not for the job its settings name"),
    ],
)
def test_a_job_file_that_is_not_one_is_refused_in_one_line(
    agents: list[str], tmp_path: Path, content: str, reason: str
) -> None:
    out = tmp_path / "out"
    assert run_cli(tournament(out, agents)).status == 0
    stored = out / "jobs" / "match-0.json"
    if content in ("mean", "agents"):
        document: dict[str, Any] = json.loads(stored.read_text())
        document["result"][content] = "x" if content == "mean" else ["random", "random"]
        content = json.dumps(document)
    stored.write_text(content)
    status, out_text, err = run_cli(tournament(out, agents))
    assert status == 2 and out_text == ""
    assert err.startswith("cfr-agents: error: ") and reason in err and str(stored) in err and err.count("\n") == 1
