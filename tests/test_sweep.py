"""Sweeps and the job executors: equal results for any number of workers, locally or on Ray; a job
whose worker is killed is retried from its checkpoint and ends as a clean run does; bad input exits 2."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from eval.sweep import parse_grid
from tests.support import CliRun, in_one_process, run_cli

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


@pytest.fixture(scope="module")
def clean_leduc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """:data:`LEDUC_JOBS` on one worker that nothing kills: what a sweep whose worker was killed must give."""
    return sweep([*LEDUC_JOBS, "--workers", "1"], tmp_path_factory.mktemp("clean"))


def test_a_killed_local_worker_is_retried_from_its_checkpoint(tmp_path: Path, clean_leduc: dict[str, Any]) -> None:
    watcher = kill_first_worker_once(tmp_path / "faulty")
    faulty = sweep([*LEDUC_JOBS, "--workers", "2"], tmp_path / "faulty")
    watcher.join(timeout=5)
    assert (tmp_path / "faulty" / "killed").exists(), "no worker was killed"
    assert deterministic(faulty) == deterministic(clean_leduc)


def test_the_grid_takes_chance_draws() -> None:
    configurations = parse_grid("chance_draws=independent,stratified;averaging=simple", "cfr", "external")
    assert [c.name for c in configurations] == [
        "chance_draws=independent,averaging=simple",
        "chance_draws=stratified,averaging=simple",
    ]


BAD_INPUT = [
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
]


@pytest.fixture(scope="module")
def bad_input_runs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, CliRun]]:
    """Every sweep of :data:`BAD_INPUT`, each writing to a folder of its own, in one process."""
    folders = [tmp_path_factory.mktemp("bad-input") for _ in BAD_INPUT]
    common = ["sweep", "--game", "openspiel:kuhn_poker", "--algo", "dcfr", "--iterations", "10"]
    runs = [
        (folder, [*common, "--out", str(folder / "out"), *extra])
        for folder, (extra, _) in zip(folders, BAD_INPUT, strict=True)
    ]
    return list(zip(folders, in_one_process(runs), strict=True))


@pytest.mark.parametrize(("extra", "message"), BAD_INPUT)
def test_bad_input_is_one_line_and_exit_2(
    bad_input_runs: list[tuple[Path, CliRun]], extra: list[str], message: str
) -> None:
    folder, result = bad_input_runs[BAD_INPUT.index((extra, message))]
    assert result.status == 2 and result.out == ""
    assert len(result.err.splitlines()) == 1 and message in result.err, result.err
    assert not (folder / "out").exists()


def test_ray_missing_is_refused_with_the_extra_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    status, _, err = run_cli([*KUHN_SWEEP, "--ray", "--out", str(tmp_path / "out")])
    assert status == 2 and "pip install 'cfr-agents[ray]'" in err


@pytest.mark.slow  # a Ray runtime's workers start slowly; `train --ray` runs on Ray in the default suite
def test_ray_gives_the_same_results_as_local_workers(local_ray: None, tmp_path: Path) -> None:
    local = sweep([*KUHN_SWEEP, "--workers", "2"], tmp_path / "local")
    on_ray = sweep([*KUHN_SWEEP, "--ray"], tmp_path / "ray")
    assert on_ray["executor"] == "ray"
    assert deterministic(on_ray) == deterministic(local)


@pytest.mark.slow  # a minute on two cores; the default suite retries a killed local worker
def test_a_killed_ray_worker_is_retried_from_its_checkpoint(
    local_ray: None, tmp_path: Path, clean_leduc: dict[str, Any]
) -> None:
    watcher = kill_first_worker_once(tmp_path / "faulty")
    faulty = sweep([*LEDUC_JOBS, "--ray"], tmp_path / "faulty")
    watcher.join(timeout=5)
    assert (tmp_path / "faulty" / "killed").exists(), "no worker was killed"
    assert deterministic(faulty) == deterministic(clean_leduc)


RERUN = ["sweep", "--game", "openspiel:kuhn_poker", "--algo", "dcfr", "--grid", "alpha=1.5,2", "--seeds", "0-1"]
RERUN += ["--workers", "1"]
"""A sweep of full-tree DCFR on Kuhn, rerun below in one directory with other stopping rules. Its jobs run in this
process, without a pool's start-up: the stored work and what a rerun makes of it do not depend on where jobs run
(one worker and two give the same results, above)."""


@pytest.mark.parametrize(
    ("first", "second"),
    [
        (["--iterations", "200", "--target-nash-conv", "1e-2"], ["--iterations", "500"]),  # stopped by the target
        (["--iterations", "200"], ["--iterations", "2000"]),  # 200 is not a mark: the rerun measures at marks
        (["--iterations", "60"], ["--target-nash-conv", "1e-3", "--iterations", "5000"]),
        (["--target-nash-conv", "1e-2"], ["--target-nash-conv", "1e-3"]),
    ],
)
def test_a_rerun_with_other_stops_extends_the_stored_runs_to_what_a_fresh_run_gives(
    tmp_path: Path, first: list[str], second: list[str]
) -> None:
    sweep([*RERUN, *first, "--json"], tmp_path / "rerun")
    rerun = sweep([*RERUN, *second, "--json"], tmp_path / "rerun")
    fresh = sweep([*RERUN, *second, "--json"], tmp_path / "fresh")
    assert deterministic(rerun) == deterministic(fresh)
    assert rerun["stop"] == fresh["stop"]


def test_a_rerun_with_the_same_settings_reuses_every_result(tmp_path: Path) -> None:
    first = sweep([*RERUN, "--iterations", "300", "--json"], tmp_path / "out")
    again = sweep([*RERUN, "--iterations", "300", "--json"], tmp_path / "out")
    assert again["jobs"] == first["jobs"]  # seconds included: nothing ran again


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (["--iterations", "500"], ["--iterations", "200"], "already ran 500 iterations, more than --iterations 200"),
        (
            ["--iterations", "3000"],
            ["--iterations", "3000", "--target-nash-conv", "0.05"],
            "met --target-nash-conv 0.05 at iteration",
        ),
        (["--iterations", "50"], ["--iterations", "50", "--algo", "dcfr+"], "was run with algo 'dcfr', not 'dcfr+'"),
        (
            ["--iterations", "50"],
            ["--iterations", "50", "--game", "openspiel:leduc_poker"],
            "was run with game",
        ),
        (["--iterations", "500"], ["--time-limit", "1e-9"], "more than --time-limit 1e-09"),
    ],
)
def test_a_rerun_that_cannot_extend_the_stored_runs_is_refused_naming_the_setting(
    tmp_path: Path, first: list[str], second: list[str], message: str
) -> None:
    sweep([*RERUN, *first, "--json"], tmp_path / "out")
    before = {path: path.read_bytes() for path in (tmp_path / "out").rglob("*") if path.is_file()}
    status, printed, err = run_cli([*RERUN, *second, "--json", "--out", str(tmp_path / "out")])
    assert (status, printed) == (2, "") and len(err.splitlines()) == 1 and message in err, err
    assert err.startswith("cfr-agents: error: job alpha=1.5-seed0 in ")
    after = {path: path.read_bytes() for path in (tmp_path / "out").rglob("*") if path.is_file()}
    assert after == before  # nothing of the stored work was touched


def test_a_job_killed_before_its_first_checkpoint_starts_afresh(tmp_path: Path) -> None:
    """Progress is written before the checkpoint: a worker killed between the two, on its first save, leaves
    ``spec.json`` and ``progress.json`` only, and the retried job gives what an uninterrupted one gives."""
    clean = sweep([*RERUN, "--iterations", "400", "--json"], tmp_path / "clean")
    sweep([*RERUN, "--iterations", "400", "--json"], tmp_path / "out")
    job = tmp_path / "out" / "jobs" / "alpha=1.5-seed0"
    for name in ("result.json", "checkpoint.npz"):
        (job / name).unlink()
    assert deterministic(sweep([*RERUN, "--iterations", "400", "--json"], tmp_path / "out")) == deterministic(clean)


def test_an_interrupted_job_past_the_new_cap_is_refused(tmp_path: Path) -> None:
    """A job stopped between marks, as a Ctrl-C leaves it: its checkpoint is past a smaller rerun's cap."""
    sweep([*RERUN, "--iterations", "400", "--json"], tmp_path / "out")
    (tmp_path / "out" / "jobs" / "alpha=1.5-seed0" / "result.json").unlink()
    status, _, err = run_cli([*RERUN, "--iterations", "300", "--out", str(tmp_path / "out")])
    assert status == 2 and "already ran 400 iterations, more than --iterations 300" in err


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ("alpha=1,1", "^grid gives alpha=1.0 twice$"),
        ("alpha=1,2,1.0", "^grid gives alpha=1.0 twice$"),
        ("gamma=2;alpha=0.5,5e-1", "^grid gives alpha=0.5 twice$"),
    ],
)
def test_duplicate_grid_values_are_refused(grid: str, message: str) -> None:
    from adapters.inputs import InputError

    with pytest.raises(InputError, match=message):
        parse_grid(grid, "dcfr", "none")


def test_rule_keys_follow_each_algorithms_tunable_parameters() -> None:
    from adapters.inputs import InputError

    assert [c.name for c in parse_grid("alpha=2,2.3;gamma=5", "pdcfr+", "none")] == [
        "alpha=2.0,gamma=5.0",
        "alpha=2.3,gamma=5.0",
    ]
    with pytest.raises(InputError, match=r"^grid key 'beta' does not apply to dcfr\+ "):
        parse_grid("beta=0", "dcfr+", "none")
    with pytest.raises(InputError, match=r"^grid key 'alpha' does not apply to cfr "):
        parse_grid("alpha=1", "cfr", "none")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--seeds", "0-100000000"], "--seeds names 100,000,001 seeds; a sweep takes at most 100,000 jobs"),
        (["--seeds", "0-" + "9" * 40], "a sweep takes at most 100,000 jobs"),
        (
            [
                "--grid",
                "alpha=" + ",".join(str(i) for i in range(400)) + ";gamma=" + ",".join(str(i) for i in range(400)),
            ],
            "--grid has 160,000 combinations; a sweep takes at most 100,000 jobs",
        ),
        (["--grid", "alpha=" + ",".join(str(i / 8) for i in range(400)), "--seeds", "0-299"], "is 120,000 jobs"),
    ],
)
def test_sweeps_larger_than_the_bound_are_refused_before_anything_is_allocated(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    started = time.perf_counter()
    status, printed, err = run_cli(
        [
            "sweep",
            "--game",
            "openspiel:kuhn_poker",
            "--algo",
            "dcfr",
            "--grid",
            "alpha=1",
            "--iterations",
            "10",
            "--out",
            str(tmp_path / "out"),
            *extra,
        ]
    )
    assert (status, printed) == (2, "") and message in err and len(err.splitlines()) == 1, err
    assert time.perf_counter() - started < 5 and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("name", "content", "rerun", "message"),
    [
        ("spec.json", "[0]", "20", "spec.json' is not a JSON object"),
        ("progress.json", "{}", "40", "progress.json' has no valid 'curve'"),
        ("progress.json", '{"curve": [[1, 0.1]]}', "40", "progress.json' has no valid 'curve'"),
        ("progress.json", '{"curve": [[3, 0.1, 0.5]]}', "40", "does not reach the iteration 20 of its checkpoint"),
        ("result.json", '{"curve": [[20, 0.1, 0.5]]}', "20", "result.json' has no valid 'iterations'"),
        ("result.json", '{"iterations": 20, "solve_seconds": [0]}', "20", "has no valid 'solve_seconds'"),
    ],
)
def test_a_rerun_refuses_a_job_file_that_its_runs_never_write(
    tmp_path: Path, name: str, content: str, rerun: str, message: str
) -> None:
    """Job files edited by hand: refused in one line naming the file, before their values are used."""
    argv = ["sweep", "--game", "openspiel:kuhn_poker", "--algo", "dcfr", "--grid", "alpha=1", "--workers", "1"]
    out = tmp_path / "out"
    assert run_cli([*argv, "--iterations", "20", "--out", str(out)]).status == 0
    (out / "jobs" / "alpha=1.0-seed0" / name).write_text(content)
    status, printed, err = run_cli([*argv, "--iterations", rerun, "--out", str(out)])
    assert (status, printed) == (2, "") and len(err.splitlines()) == 1 and message in err, err
