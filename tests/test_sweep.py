"""Sweeps and the job executors: equal results for any number of workers, locally or on Ray; a job
whose worker is killed is retried from its checkpoint and ends as a clean run does; bad input exits 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from eval.sweep import parse_grid
from tests.support import run_cli

KUHN_SWEEP = [
    "sweep",
    "--game",
    "openspiel:kuhn_poker",
    "--algo",
    "dcfr",
    "--sampling",
    "external",
    "--grid",
    "alpha=1,1.5;averaging=simple,full",
    "--seeds",
    "0-1",
    "--iterations",
    "20000",
    "--checkpoint-every",
    "0.1",
    "--json",
]
LEDUC_JOBS = [
    "sweep",
    "--game",
    "openspiel:leduc_poker",
    "--algo",
    "cfr",
    "--sampling",
    "external",
    "--grid",
    "averaging=simple",
    "--seeds",
    "0-1",
    "--iterations",
    "1500000",
    "--checkpoint-every",
    "0.2",
    "--json",
]


def deterministic(report: dict[str, Any]) -> dict[str, Any]:
    """Everything but timings: iterations, NashConv, stops, iterations to the target, the curves' points."""
    return {
        key: (
            job["iterations"],
            job["nash_conv"],
            job["stopped_by"],
            job["target_iterations"],
            [(point[0], point[2]) for point in job["curve"]],
        )
        for key, job in report["jobs"].items()
    }


def sweep(argv: list[str], out: Path) -> dict[str, Any]:
    """The JSON report of a sweep that succeeds."""
    status, printed, err = run_cli([*argv, "--out", str(out)])
    assert status == 0, err
    report: dict[str, Any] = json.loads(printed)
    return report


def test_results_are_the_same_for_one_and_two_workers(tmp_path: Path) -> None:
    one = sweep([*KUHN_SWEEP, "--workers", "1"], tmp_path / "one")
    two = sweep([*KUHN_SWEEP, "--workers", "2"], tmp_path / "two")
    assert deterministic(one) == deterministic(two)
    assert len(one["jobs"]) == 8 and one["best"] in {s["configuration"] for s in one["summary"]}
    for name in ("results.json", "results.csv", "results.md"):
        assert (tmp_path / "two" / name).stat().st_size > 0
    rows = (tmp_path / "two" / "results.csv").read_text().splitlines()
    assert len(rows) == 9 and rows[0].startswith("configuration,seed,iterations")


def kill_first_worker_once(out: Path) -> threading.Thread:
    """In the background: once a job has checkpointed, SIGKILL the process running it."""

    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for job in sorted((out / "jobs").glob("*")) if (out / "jobs").exists() else []:
                if (job / "checkpoint.npz").exists() and (job / "worker.pid").exists():
                    os.kill(int((job / "worker.pid").read_text()), signal.SIGKILL)
                    (out / "killed").write_text(job.name)
                    return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_killed_local_worker_is_retried_from_its_checkpoint(tmp_path: Path) -> None:
    clean = sweep([*LEDUC_JOBS, "--workers", "1"], tmp_path / "clean")
    watcher = kill_first_worker_once(tmp_path / "faulty")
    faulty = sweep([*LEDUC_JOBS, "--workers", "2"], tmp_path / "faulty")
    watcher.join(timeout=5)
    assert (tmp_path / "faulty" / "killed").exists(), "no worker was killed"
    assert deterministic(faulty) == deterministic(clean)


def test_the_grid_takes_chance_draws() -> None:
    configurations = parse_grid("chance_draws=independent,stratified;averaging=simple", "cfr", "external")
    assert [c.name for c in configurations] == [
        "chance_draws=independent,averaging=simple",
        "chance_draws=stratified,averaging=simple",
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--grid", "delta=1,2"], "unknown --grid key 'delta'"),
        (["--grid", ""], "--grid is empty"),
        (["--grid", ";"], "--grid is empty"),
        (["--grid", "alpha=1,x"], "is not a number"),
        (["--grid", "epsilon=0.5"], "applies to sampled solvers only"),
        (["--grid", "chance_draws=stratified"], "applies to sampled solvers only"),
        (["--sampling", "external", "--algo", "cfr", "--grid", "chance_draws=sobol"], "unknown chance draws 'sobol'"),
        (["--grid", "alpha=1", "--seeds", "3-1"], "must name distinct non-negative seeds"),
        (["--grid", "alpha=1", "--ray", "127.0.0.1:9"], "cannot reach Ray at 127.0.0.1:9"),
        (["--grid", "alpha=1", "--ray", "nowhere"], "must be HOST:PORT"),
        (["--grid", "alpha=1", "--workers", "2", "--ray"], "not both"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, extra: list[str], message: str) -> None:
    command = [
        sys.executable,
        "-m",
        "cfr_agents",
        "sweep",
        "--game",
        "openspiel:kuhn_poker",
        "--algo",
        "dcfr",
        "--iterations",
        "10",
        "--out",
        str(tmp_path / "out"),
        *extra,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and message in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_ray_missing_is_refused_with_the_extra_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    status, _, err = run_cli([*KUHN_SWEEP, "--ray", "--out", str(tmp_path / "out")])
    assert status == 2 and "pip install 'cfr-agents[ray]'" in err


def test_ray_gives_the_same_results_as_local_workers(local_ray: None, tmp_path: Path) -> None:
    local = sweep([*KUHN_SWEEP, "--workers", "2"], tmp_path / "local")
    on_ray = sweep([*KUHN_SWEEP, "--ray"], tmp_path / "ray")
    assert on_ray["executor"] == "ray"
    assert deterministic(on_ray) == deterministic(local)


def test_a_killed_ray_worker_is_retried_from_its_checkpoint(local_ray: None, tmp_path: Path) -> None:
    clean = sweep([*LEDUC_JOBS, "--workers", "1"], tmp_path / "clean")
    watcher = kill_first_worker_once(tmp_path / "faulty")
    faulty = sweep([*LEDUC_JOBS, "--ray"], tmp_path / "faulty")
    watcher.join(timeout=5)
    assert (tmp_path / "faulty" / "killed").exists(), "no worker was killed"
    assert deterministic(faulty) == deterministic(clean)
