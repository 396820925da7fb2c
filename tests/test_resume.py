"""``train --resume`` with every option of ``train``: each option works as in a fresh run started at the
checkpoint, or is refused with one line; and the training loop continues a resumed solver as a fresh one."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from cfr_agents import make_solver
from cfr_agents.checkpoint import load_checkpoint, save_checkpoint
from cfr_agents.cli.common import GLOBAL_OPTIONS
from cfr_agents.cli.train_neural import HYPERPARAMETERS
from cfr_agents.solvers import Solver
from cfr_agents.training import StopRule, train
from eval.train_report import nash_conv
from tests.support import CliRun, Clock, cli_commands, run_cli, tree

KUHN = "openspiel:kuhn_poker"
START = 10
"""The iteration of every checkpoint resumed here."""
TARGET = 1e-2
FIRST_BELOW_TARGET = 161
"""The first iteration at which CFR's average strategy on Kuhn has NashConv <= TARGET
(``test_the_first_iteration_below_the_target``)."""


def strict_json(text: str) -> dict[str, Any]:
    """``text`` parsed as strict JSON: ``NaN`` and ``Infinity`` are refused."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    parsed: dict[str, Any] = json.loads(text, parse_constant=refuse)
    return parsed


def kuhn_solver(algorithm: str = "cfr", sampling: str = "none") -> Solver:
    return make_solver(tree(KUHN), algorithm, sampling=sampling, rng=np.random.default_rng(0))


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with Kuhn checkpoints at iteration START (``cfr.npz``, ``dcfr.npz``,
    ``external.npz``: CFR with external sampling), ``fresh.json`` (the policy of an uninterrupted
    20-iteration CFR run), and files that are not checkpoints (``notes.txt``, ``fresh.json``)."""
    monkeypatch.chdir(tmp_path)
    for name, algorithm, sampling in [
        ("cfr", "cfr", "none"),
        ("dcfr", "dcfr", "none"),
        ("external", "cfr", "external"),
    ]:
        solver = kuhn_solver(algorithm, sampling)
        solver.run(START)
        save_checkpoint(tmp_path / f"{name}.npz", solver, seed=0)
    assert run_cli(["train", "--game", KUHN, "--algo", "cfr", "--iterations", "20", "--out", "fresh.json"]).status == 0
    (tmp_path / "notes.txt").write_text("not a checkpoint\n")
    return tmp_path


def resumed_report(result: CliRun) -> dict[str, Any]:
    """The ``--json`` report of a run resumed at START, its figures for this run checked."""
    assert result.status == 0, result.err
    report = strict_json(result.out)
    assert report["resumed_from"] == START
    assert report["iterations_run"] == report["iterations"] - START > 0
    rate = report["iterations_per_second"]
    assert math.isfinite(rate) and rate == pytest.approx(report["iterations_run"] / report["solve_seconds"])
    return report


def works(result: CliRun, folder: Path) -> None:
    """A run resumed to 20 iterations wrote the uninterrupted run's policy and continued its checkpoint."""
    assert result.status == 0, result.err
    assert result.out.startswith(f"cfr: {20 - START} iterations (from {START} to 20) in "), result.out
    assert (folder / "p.json").read_bytes() == (folder / "fresh.json").read_bytes()
    assert load_checkpoint(folder / "cfr.npz").iteration == 20


def works_with_json(result: CliRun, folder: Path) -> None:
    assert resumed_report(result)["iterations"] == 20
    assert (folder / "p.json").is_file()


def stops_at_the_target(result: CliRun, folder: Path) -> None:
    report = resumed_report(result)
    assert report["stopped_by"] == "target_nash_conv" and report["nash_conv"] <= TARGET
    assert FIRST_BELOW_TARGET <= report["iterations"] < 100_000


def stops_at_the_time_limit(result: CliRun, folder: Path) -> None:
    report = resumed_report(result)
    assert report["stopped_by"] == "time_limit" and 0.05 <= report["solve_seconds"] < 1.0


def writes_the_resumed_curve(result: CliRun, folder: Path) -> None:
    """The curve holds the log-spaced points past the checkpoint, with this run's seconds; its
    NashConv values are those of an uninterrupted run at the same iterations."""
    report = resumed_report(result)
    rows = list(csv.DictReader((folder / "c.csv").open()))
    assert [int(row["iteration"]) for row in rows] == [13, 16, 20, 25, 30] and report["iterations"] == 30
    seconds = [float(row["seconds"]) for row in rows]
    assert seconds[0] > 0 and seconds == sorted(seconds)
    assert seconds[-1] == pytest.approx(report["solve_seconds"], abs=1e-6)
    solver, expected = kuhn_solver(), []
    for row in rows:
        solver.run(int(row["iteration"]) - solver.iteration)
        expected.append(nash_conv(solver.tree, solver.average_strategy()))
    assert [float(row["nash_conv"]) for row in rows] == expected


def writes_one_curve_point(result: CliRun, folder: Path) -> None:
    """One iteration past the checkpoint: one point (this run never reaches a log-spaced mark)."""
    assert resumed_report(result)["iterations"] == START + 1
    assert [row["iteration"] for row in csv.DictReader((folder / "c.csv").open())] == [str(START + 1)]


def every_five(result: CliRun, folder: Path) -> None:
    """``--eval-every 5``: the curve's points are the multiples of 5 past the checkpoint."""
    assert resumed_report(result)["iterations"] == 20
    assert [row["iteration"] for row in csv.DictReader((folder / "c.csv").open())] == ["15", "20"]


def checkpoints_elsewhere(result: CliRun, folder: Path) -> None:
    assert resumed_report(result)["iterations"] == 20
    assert load_checkpoint(folder / "next.npz").iteration == 20
    assert load_checkpoint(folder / "cfr.npz").iteration == START


def is_quiet(result: CliRun, folder: Path) -> None:
    assert result.status == 0 and result.err == "" and len(result.out.splitlines()) == 1, result
    assert "iterations (from 10 to 20)" in result.out


def refused(message: str) -> Callable[[CliRun, Path], None]:
    """One line naming the problem (``message`` is part of it), nothing written, nothing about pickle."""

    def check(result: CliRun, folder: Path) -> None:
        assert result.status == 2 and result.out == "", result
        assert result.err.startswith("cfr-agents: error: ") and len(result.err.splitlines()) == 1, result.err
        assert message in result.err, result.err
        assert not any(word in result.err for word in ("pickle", "unsafe", "Traceback")), result.err
        assert not (folder / "p.json").exists() and load_checkpoint(folder / "cfr.npz").iteration == START

    return check


class Case(NamedTuple):
    option: str
    """The option of ``train`` this case tries with ``--resume``."""
    argv: list[str]
    """After ``cfr-agents train``."""
    check: Callable[[CliRun, Path], None]


RESUME = ["--resume", "cfr.npz", "--out", "p.json"]
TOTAL_20 = [*RESUME, "--iterations", "20"]
JSON_20 = [*TOTAL_20, "--json"]
EXTERNAL_20 = ["--resume", "external.npz", "--out", "p.json", "--iterations", "20"]
DCFR_20 = ["--resume", "dcfr.npz", "--out", "p.json", "--iterations", "20"]
NOT_CHECKPOINTS = "is not a readable .npz archive (not a zip file)"

CASES = [
    Case("--resume", TOTAL_20, works),
    Case("--resume", ["--resume", "notes.txt", "--iterations", "20", "--out", "p.json"], refused(NOT_CHECKPOINTS)),
    Case("--resume", ["--resume", "fresh.json", "--iterations", "20", "--out", "p.json"], refused(NOT_CHECKPOINTS)),
    Case("--resume", ["--resume", "none.npz", "--iterations", "20", "--out", "p.json"], refused("does not exist")),
    Case("--out", TOTAL_20, works),
    Case("--iterations", TOTAL_20, works),
    Case(
        "--iterations",
        [*RESUME, "--iterations", str(START)],
        refused(f"the checkpoint is already at iteration {START}; --iterations is the total, give more than {START}"),
    ),
    Case("--iterations", [*RESUME, "--iterations", "3", "--json"], refused("already at iteration 10")),
    Case("--target-nash-conv", [*RESUME, "--target-nash-conv", str(TARGET), "--json"], stops_at_the_target),
    Case(
        "--target-nash-conv",
        [*RESUME, "--target-nash-conv", str(TARGET), "--iterations", "100000", "--json"],
        stops_at_the_target,
    ),
    Case("--time-limit", [*RESUME, "--time-limit", "0.05", "--json"], stops_at_the_time_limit),
    Case("--curve", [*RESUME, "--iterations", "30", "--curve", "c.csv", "--json"], writes_the_resumed_curve),
    Case("--curve", [*RESUME, "--iterations", str(START + 1), "--curve", "c.csv", "--json"], writes_one_curve_point),
    Case("--checkpoint", [*JSON_20, "--checkpoint", "next.npz"], checkpoints_elsewhere),
    Case("--checkpoint-every", [*TOTAL_20, "--checkpoint-every", "0.001"], works),
    Case("--json", JSON_20, works_with_json),
    Case("--quiet", [*TOTAL_20, "--quiet"], is_quiet),
    Case("--game", [*TOTAL_20, "--game", KUHN], works),
    Case("--engine", [*TOTAL_20, "--engine", "tree"], works),
    Case(
        "--abstraction",
        [*TOTAL_20, "--abstraction", "cards"],
        refused("the checkpoint was not written by a solver on an abstraction: drop --abstraction"),
    ),
    Case(
        "--engine",
        [*TOTAL_20, "--engine", "public-tree"],
        refused("the checkpoint was written by a solver on the compiled tree, not --engine public-tree"),
    ),
    Case("--game", [*TOTAL_20, "--game", "openspiel:leduc_poker"], refused("the checkpoint is for game")),
    Case("--suit-isomorphism", [*TOTAL_20, "--suit-isomorphism"], refused("--suit-isomorphism needs --game")),
    Case(
        "--suit-isomorphism",
        [*TOTAL_20, "--game", KUHN, "--suit-isomorphism"],
        refused("openspiel:kuhn_poker has no suit-isomorphic reduction here"),
    ),
    Case("--algo", [*TOTAL_20, "--algo", "cfr"], works),
    Case("--algo", [*TOTAL_20, "--algo", "cfr+"], refused("the checkpoint is for algorithm 'cfr', not 'cfr+'")),
    Case("--seed", [*TOTAL_20, "--seed", "0"], works),
    Case("--seed", [*TOTAL_20, "--seed", "3"], refused("the checkpoint is for seed 0, not 3")),
    Case("--sampling", [*TOTAL_20, "--sampling", "none"], works),
    Case("--sampling", [*TOTAL_20, "--sampling", "external"], refused("is for sampling 'none', not 'external'")),
    Case("--averaging", [*TOTAL_20, "--averaging", "simple"], refused("is for averaging None, not 'simple'")),
    Case("--averaging", [*EXTERNAL_20, "--averaging", "simple", "--json"], works_with_json),
    Case("--epsilon", [*TOTAL_20, "--epsilon", "0.6"], refused("is for epsilon None, not 0.6")),
    Case("--chance-draws", [*TOTAL_20, "--chance-draws", "independent"], refused("is for chance_draws None")),
    Case("--chance-draws", [*EXTERNAL_20, "--chance-draws", "independent", "--json"], works_with_json),
    Case(
        "--chance-draws",
        [*EXTERNAL_20, "--chance-draws", "stratified"],
        refused("is for chance_draws 'independent', not 'stratified'"),
    ),
    *(
        Case(f"--{name}", [*DCFR_20, f"--{name}", value, "--json"], check)
        for name, same, other in [("alpha", "1.5", "2"), ("beta", "0", "0.5"), ("gamma", "2", "3")]
        for value, check in [(same, works_with_json), (other, refused("--alpha/--beta/--gamma differ"))]
    ),
    Case("--alpha", [*TOTAL_20, "--alpha", "1.5"], refused("--alpha/--beta/--gamma differ")),
    Case(
        "--eval-every", [*RESUME, "--iterations", "20", "--eval-every", "5", "--curve", "c.csv", "--json"], every_five
    ),
    *(  # the neural solvers' options are refused with a checkpoint of the tabular solvers
        Case(option, [*TOTAL_20, option, value], refused(f"{option} applies to --algo deep-cfr or sd-cfr only"))
        for option, value in [
            ("--learning-rate-decay", "0.5"),
            ("--preset", "fast"),
            *(
                (
                    f"--{name.replace('_', '-')}",
                    {"advantage_init": "scratch", "learning_rate": "0.5", "inputs": "cards"}.get(name, "2"),
                )
                for name in HYPERPARAMETERS
                if name != "learning_rate_decay"
            ),
        ]
    ),
    Case("--algo", [*TOTAL_20, "--algo", "sd-cfr"], refused("the checkpoint is for algorithm 'cfr', not 'sd-cfr'")),
    *(  # a run in one process resumes in one process (scale-out resumes: tests/test_scale_out.py)
        Case(option, [*TOTAL_20, option, *value], refused(f"written by one process; {option} does not apply to it"))
        for option, value in [("--workers", ["2"]), ("--batches", ["3"]), ("--batch-iterations", ["5"]), ("--ray", [])]
    ),
]


def test_every_option_of_train_is_tried_with_resume() -> None:
    """An option added to ``train`` needs a case here (those of ``cfr-agents`` itself are refused after it)."""
    options = {s for action in cli_commands()["train"]._actions for s in action.option_strings}
    options -= {"-h", "--help", *GLOBAL_OPTIONS}
    assert {case.option for case in CASES} == options


@pytest.mark.parametrize("case", CASES, ids=lambda case: f"{case.option}: {' '.join(case.argv)}")
def test_resume_with_an_option_works_or_is_refused_with_one_line(case: Case, folder: Path) -> None:
    case.check(run_cli(["train", *case.argv]), folder)


def test_checkpoint_every_without_a_checkpoint_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    argv = ["train", "--game", KUHN, "--algo", "cfr", "--iterations", "5", "--checkpoint-every", "1", "--out", str(out)]
    result = run_cli(argv)
    assert result.status == 2 and result.out == "" and not out.exists()
    needs = "--checkpoint-every needs --checkpoint FILE (or --resume, which checkpoints into its file)"
    assert result.err == f"cfr-agents: error: {needs}\n"


def test_the_first_iteration_below_the_target() -> None:
    solver = kuhn_solver()
    values = []
    for _ in range(FIRST_BELOW_TARGET):
        solver.run(1)
        values.append(nash_conv(solver.tree, solver.average_strategy()))
    assert values[-1] <= TARGET < min(values[:-1])


@pytest.mark.parametrize(
    ("check_cost", "resumed_at"),
    [(0.05, 100), (0.05, 150), (0.05, FIRST_BELOW_TARGET - 1), (0.95, 150), (0.95, 110)],
)
def test_a_resumed_run_stops_at_the_target_where_a_fresh_run_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check_cost: float, resumed_at: int
) -> None:
    """With checks costing 0.05 iterations they run after every iteration, fresh or resumed, and
    both runs stop at FIRST_BELOW_TARGET; at 0.95 iterations they run every 10 iterations from the
    first of the run on: at 1, 11, ..., 161 fresh, at resumed_at + 1, + 11, ... resumed."""
    clock = Clock(check_cost)
    monkeypatch.setattr("cfr_agents.training.time.perf_counter", clock)
    stop = StopRule(iterations=100_000, target_nash_conv=TARGET)
    fresh = train(clock.time(kuhn_solver()), stop, clock.nash_conv)
    assert (fresh.iterations, fresh.stopped_by) == (FIRST_BELOW_TARGET, "target_nash_conv")
    first = kuhn_solver()
    first.run(resumed_at)
    save_checkpoint(tmp_path / "c.npz", first, seed=0)
    resumed = train(clock.time(load_checkpoint(tmp_path / "c.npz").solver(tree(KUHN))), stop, clock.nash_conv)
    assert (resumed.started_at, resumed.iterations, resumed.stopped_by) == (
        resumed_at,
        fresh.iterations,
        fresh.stopped_by,
    )
    assert resumed.nash_conv == fresh.nash_conv
    assert resumed.solve_seconds == pytest.approx((fresh.iterations - resumed_at) * 2**-10)
    assert resumed.iterations_per_second == pytest.approx(2**10)


def test_a_resumed_curve_starts_past_the_checkpoint_with_this_runs_time() -> None:
    """Resumed one iteration short of a mark and one past it (the hang of a curve that started at 1)."""
    for resumed_at, marks in [(9, [10, 13]), (11, [13])]:
        solver = kuhn_solver()
        solver.run(resumed_at)
        run = train(solver, StopRule(iterations=13), nash_conv, record_curve=True)
        assert [point.iteration for point in run.curve] == marks
        assert run.iterations_run == 13 - resumed_at and run.curve[-1].seconds == run.solve_seconds


def test_a_run_already_at_its_total_runs_nothing_and_has_no_rate() -> None:
    solver = kuhn_solver()
    solver.run(START)
    run = train(solver, StopRule(iterations=START), nash_conv)
    assert (run.started_at, run.iterations, run.iterations_run, run.solve_seconds) == (START, START, 0, 0.0)
    assert run.iterations_per_second is None


HS_KUHN = ["--game", KUHN, "--algo", "hs-pcfr+"]


def test_a_schedule_spanning_the_checkpoint_s_run_is_not_stretched_on_resume(tmp_path: Path) -> None:
    """HS-PCFR+'s schedule spans T = --iterations. A checkpoint of a 40-iteration run resumed to 100 would go
    on with T = 40, which is no fresh 100-iteration run: refused in one line. Resumed to its own T after a
    time limit stopped it short, it is the fresh run, byte for byte."""
    folder = tmp_path
    whole, part, resumed = (str(folder / name) for name in ("whole.json", "part.json", "resumed.json"))
    checkpoint = str(folder / "c.npz")
    assert run_cli(["train", *HS_KUHN, "--iterations", "40", "--out", part, "--checkpoint", checkpoint]).status == 0
    stretched = run_cli(["train", "--resume", checkpoint, "--iterations", "100", "--out", resumed])
    assert stretched.status == 2 and len(stretched.err.splitlines()) == 1, stretched
    assert "schedule spans T = 40 iterations" in stretched.err and "--iterations 40" in stretched.err
    assert not Path(resumed).exists()
    untimed = run_cli(["train", "--resume", checkpoint, "--time-limit", "1", "--out", resumed])
    assert untimed.status == 2 and "a fresh run with no --iterations spans 1000" in untimed.err, untimed

    argv = [*HS_KUHN, "--iterations", "20000", "--out", part, "--checkpoint", checkpoint, "--time-limit", "1e-3"]
    assert run_cli(["train", *argv]).status == 0
    stopped_at = load_checkpoint(checkpoint).iteration
    assert 0 < stopped_at < 20000
    assert run_cli(["train", "--resume", checkpoint, "--iterations", "20000", "--out", resumed]).status == 0
    assert run_cli(["train", *HS_KUHN, "--iterations", "20000", "--out", whole]).status == 0
    assert Path(resumed).read_bytes() == Path(whole).read_bytes()
