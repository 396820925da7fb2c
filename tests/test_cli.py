"""The command line: train and exploitability, JSON output, one-line errors with exit status 2."""

from __future__ import annotations

import contextlib
import csv
import fcntl
import importlib.metadata
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from cfr_agents.cli import build_parser
from cfr_agents.cli.common import Parser
from tests.support import CliRun, cli_commands, in_one_process, run_cli

TRAIN_FIELDS = {
    "game",
    "algo",
    "iterations",
    "build_seconds",
    "solve_seconds",
    "nash_conv",
    "exploitability",
    "units",
    "iterations_per_second",
    "peak_rss_mb",
}


def test_train_and_measure(tmp_path: Path) -> None:
    out = tmp_path / "kuhn.json"
    args = ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr+", "--iterations", "200"]
    status, printed, _ = run_cli([*args, "--out", str(out), "--json", "--seed", "3"])
    assert status == 0
    report = json.loads(printed)
    assert set(report) >= TRAIN_FIELDS
    assert (report["game"], report["algo"], report["iterations"], report["units"]) == (
        "openspiel:kuhn_poker",
        "cfr+",
        200,
        "chips",
    )
    assert report["exploitability"] == pytest.approx(report["nash_conv"] / 2)
    status, printed, _ = run_cli(["exploitability", str(out), "--json", "--cross-check"])
    assert status == 0
    measured = json.loads(printed)
    assert measured["nash_conv"] == pytest.approx(report["nash_conv"], abs=1e-12)
    assert abs(measured["difference"]) <= 1e-9


def test_target_and_curve(tmp_path: Path) -> None:
    out, curve = tmp_path / "leduc.json", tmp_path / "curve.csv"
    args = ["train", "--game", "openspiel:leduc_poker", "--algo", "dcfr", "--target-nash-conv", "0.01"]
    status, printed, _ = run_cli([*args, "--iterations", "5000", "--out", str(out), "--curve", str(curve), "--json"])
    assert status == 0
    report = json.loads(printed)
    assert report["stopped_by"] == "target_nash_conv" and report["nash_conv"] <= 0.01
    assert report["iterations"] < 5000
    rows = list(csv.DictReader(curve.open()))
    assert [int(r["iteration"]) for r in rows][:5] == [1, 2, 3, 4, 5]
    assert float(rows[-1]["nash_conv"]) == pytest.approx(report["nash_conv"])
    assert float(rows[0]["nash_conv"]) > float(rows[-1]["nash_conv"])


def test_suit_isomorphism_solves_the_reduction_and_saves_the_full_game(tmp_path: Path) -> None:
    out = tmp_path / "leduc.json"
    args = ["train", "--game", "openspiel:leduc_poker", "--algo", "cfr+", "--iterations", "300", "--suit-isomorphism"]
    status, printed, _ = run_cli([*args, "--out", str(out), "--json"])
    assert status == 0
    report = json.loads(printed)
    assert report["game"] == "openspiel:leduc_poker(suit_isomorphism=True)" and report["infosets"] == 288
    assert report["policy_game"] == "openspiel:leduc_poker"
    status, printed, _ = run_cli(["exploitability", str(out), "--json", "--cross-check"])
    assert status == 0
    measured = json.loads(printed)
    assert measured["game"] == "openspiel:leduc_poker"
    assert measured["nash_conv"] == pytest.approx(report["nash_conv"], abs=1e-12)  # lossless: the same value
    assert abs(measured["difference"]) <= 1e-9


def test_time_limit(tmp_path: Path) -> None:
    args = ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--time-limit", "0.2"]
    status, printed, _ = run_cli([*args, "--out", str(tmp_path / "k.json"), "--json"])
    assert status == 0
    report = json.loads(printed)
    assert report["stopped_by"] == "time_limit" and 0.2 <= report["solve_seconds"] < 1.0


BAD_INPUT = [
    (["train", "--game", "openspiel:nope", "--algo", "cfr", "--iterations", "5"], "unknown OpenSpiel game"),
    (["train", "--game", "rlcard:uno", "--algo", "cfr", "--iterations", "5"], "unsupported RLCard game"),
    (["train", "--game", "openspiel:kuhn_poker", "--algo", "xcfr", "--iterations", "5"], "invalid choice"),
    (["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "0"], "positive integer"),
    (["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "-3"], "positive integer"),
    (
        ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "3", "--seed=-1"],
        "non-negative integer",
    ),
    (["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr"], "give --iterations"),
    (
        ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "2", "--alpha", "1"],
        "do not apply to --algo cfr",
    ),
    (
        ["train", "--game", "openspiel:kuhn_poker", "--algo", "pdcfr+", "--iterations", "2", "--beta", "0"],
        "do not apply to --algo pdcfr+",
    ),
    (
        ["train", "--game", "openspiel:kuhn_poker", "--algo", "dcfr", "--iterations", "2", "--alpha", "nan"],
        "must be a number",
    ),
    (
        ["train", "--game", "openspiel:kuhn_poker", "--algo", "dcfr", "--iterations", "2", "--gamma", "inf"],
        "--gamma must be in [0, 100], got inf",
    ),
    (
        [
            "train",
            "--game",
            "openspiel:kuhn_poker",
            "--algo",
            "cfr",
            "--iterations",
            "2",
            "--curve",
            "no/dir/c.csv",
        ],
        "does not exist",
    ),
    (["exploitability", "missing.json"], "does not exist"),
    (
        ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "2", "--suit-isomorphism"],
        "no suit-isomorphic reduction",
    ),
    (["train", "--algo", "cfr", "--iterations", "2", "--suit-isomorphism"], "--suit-isomorphism needs --game"),
    (
        ["train", "--game", "openspiel:leduc_poker", "--algo", "sd-cfr", "--iterations", "2", "--suit-isomorphism"],
        "applies to the tabular solvers",
    ),
]


@pytest.fixture(scope="module")
def bad_input_runs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, CliRun]]:
    """Every run of :data:`BAD_INPUT`, each in a folder of its own, in one process."""
    folders = [tmp_path_factory.mktemp("bad-input") for _ in BAD_INPUT]
    runs = [
        (folder, [*argv, *(["--out", str(folder / "x.json")] if argv[0] == "train" else [])])
        for folder, (argv, _) in zip(folders, BAD_INPUT, strict=True)
    ]
    return list(zip(folders, in_one_process(runs), strict=True))


@pytest.mark.parametrize(("argv", "message"), BAD_INPUT)
def test_bad_input_is_one_line_and_exit_2(
    bad_input_runs: list[tuple[Path, CliRun]], argv: list[str], message: str
) -> None:
    folder, result = bad_input_runs[BAD_INPUT.index((argv, message))]
    assert result.status == 2
    assert result.out == ""
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert message in result.err and "Traceback" not in result.err
    assert not (folder / "x.json").exists()


def test_an_output_that_is_a_directory_is_refused_before_training(tmp_path: Path) -> None:
    args = ["train", "--game", "openspiel:leduc_poker", "--algo", "cfr", "--iterations", "5", "--quiet"]
    status, _, err = run_cli([*args, "--out", str(tmp_path)])
    assert status == 2
    assert "is a directory" in err and "infosets" not in err
    assert list(tmp_path.iterdir()) == []


def test_corrupt_and_mismatched_policy_files(tmp_path: Path) -> None:
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"format": "cfr-agents-policy", ')
    status, _, err = run_cli(["exploitability", str(corrupt)])
    assert status == 2 and "not valid JSON" in err
    good = tmp_path / "good.json"
    train = ["train", "--game", "rlcard:kuhn-poker", "--algo", "cfr", "--iterations", "3", "--out", str(good)]
    assert run_cli(train).status == 0
    data = json.loads(good.read_text())
    data["game"] = "openspiel:kuhn_poker"
    (tmp_path / "other.json").write_text(json.dumps(data))
    status, _, err = run_cli(["exploitability", str(tmp_path / "other.json")])
    assert status == 2 and "rules" in err


def test_version() -> None:
    status, out, _ = run_cli(["--version"])
    assert status == 0
    assert out == f"cfr-agents {importlib.metadata.version('cfr-agents')}\n"


def test_help_is_plain_text() -> None:
    assert Parser(prog="x", description="reads ``FILE``").format_help().count("reads FILE") == 1
    helps = {"": build_parser().format_help()} | {n: p.format_help() for n, p in cli_commands().items()}
    assert set(helps) >= {"", "train", "exploitability"}
    for name, text in helps.items():
        assert "``" not in text, name


FAKE_TOOLKIT = "raise KeyboardInterrupt  # Ctrl-C while the toolkits load\n"
ENTRY_POINT = (
    "import importlib.metadata, sys\n"
    "[entry] = importlib.metadata.entry_points(group='console_scripts', name='cfr-agents')\n"
    "sys.exit(entry.load()())\n"
)


@pytest.mark.parametrize("command", [["-m", "cfr_agents"], ["-c", ENTRY_POINT, "cfr-agents"]], ids=["-m", "script"])
def test_ctrl_c_during_start_up_is_one_line_and_status_130(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "rlcard").mkdir()
    (tmp_path / "rlcard" / "__init__.py").write_text(FAKE_TOOLKIT)
    environment = {**os.environ, "PYTHONPATH": str(tmp_path)}
    argv = [sys.executable, *command, "exploitability", "x.json"]
    result = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (130, "", "cfr-agents: interrupted\n")


def test_the_progress_bar_shows_nash_conv_on_a_terminal(tmp_path: Path) -> None:
    """On a terminal (a pty here), the bar shows NashConv even with no target and no curve."""
    master, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))
    argv = [
        sys.executable,
        "-m",
        "cfr_agents",
        "train",
        "--game",
        "openspiel:leduc_poker",
        "--algo",
        "cfr",
        "--time-limit",
        "0.5",
        "--out",
        str(tmp_path / "p.json"),
    ]
    with subprocess.Popen(argv, stderr=terminal, stdout=subprocess.PIPE, text=True) as process:
        os.close(terminal)
        transcript = b""
        with contextlib.suppress(OSError):  # EIO once the process has closed the terminal
            while chunk := os.read(master, 4096):
                transcript += chunk
        summary, _ = process.communicate(timeout=120)
    os.close(master)
    assert process.returncode == 0 and "stopped by time_limit" in summary
    assert re.search(rb"it/s, NashConv \d", transcript), transcript[-500:]


@pytest.mark.parametrize("argv", [["exploitability", "two\nlines\x0c.json"], ["train", "--algo", "x\ny"]])
def test_an_error_quoting_a_line_break_stays_one_line(argv: list[str]) -> None:
    status, _, err = run_cli(argv)
    assert status == 2
    assert len(err.splitlines()) == 1 and ": error: " in err and "\\n" in err
