"""Careless input, class by class: counts too large to hold, names longer than the file system allows,
JSON nested too deeply, curves with nothing to draw on log axes, refused commands that leave nothing
behind, degenerate intervals, and Ctrl-C at every stage. Each is one line and exit 2 (130 for Ctrl-C),
never a traceback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cfr_agents import Policy
from tests.support import CliRun, in_one_process, run_cli, start_interruptible, tree

LONG_NAME = "n" * 300
"""Longer than the 255 bytes a file name may have on Linux and macOS file systems."""


def refused(argv: list[str], message: str, cwd: Path) -> str:
    """Run ``cfr-agents argv`` in ``cwd``; assert one ``cfr-agents: error:`` line holding ``message``, exit 2."""
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        status, printed, err = run_cli(argv)
    finally:
        os.chdir(previous)
    assert (status, printed) == (2, ""), (status, err)
    assert len(err.splitlines()) == 1 and err.startswith("cfr-agents: error: "), err
    assert message in err, err
    return err


@pytest.fixture
def kuhn_policy(tmp_path: Path) -> Path:
    path = tmp_path / "kuhn.json"
    Policy.uniform(tree("openspiel:kuhn_poker")).save(path)
    return path


# --- counts ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["match", "random", "random", "--game", "rlcard:kuhn-poker", "--hands", "1" + "0" * 20], "at most 10^9"),
        (["match", "random", "random", "--game", "rlcard:kuhn-poker", "--hands", "9" * 5000], "5,000-digit number"),
        (
            ["tournament", "random", "random", "--game", "rlcard:kuhn-poker", "--hands", "1" + "0" * 20, "--out", "t"],
            "at most 10^9",
        ),
        (
            ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "1" + "0" * 13, "--out", "a"],
            "at most 10^12",
        ),
        (
            ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "-" + "9" * 5000],
            "must be a positive integer, got a negative 5,000-digit number",
        ),
        (
            ["train-opponent", "rlcard-nfsp", "--game", "rlcard:leduc-holdem", "--episodes", "1" + "0" * 15, "--seed"],
            "at most 10^12",
        ),
        (
            ["sweep", "--game", "openspiel:kuhn_poker", "--algo", "dcfr", "--grid", "alpha=1", "--workers", "100000"],
            "at most 1024",
        ),
    ],
)
def test_a_count_beyond_its_bound_is_refused_before_any_work(tmp_path: Path, argv: list[str], message: str) -> None:
    if argv[0] == "train-opponent":
        argv = [*argv, "0", "--out", "m.json"]
    started = time.perf_counter()
    refused(argv, message, tmp_path)
    assert time.perf_counter() - started < 10 and list(tmp_path.iterdir()) == []


def test_a_long_match_keeps_its_moments_in_bounded_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past one chunk, the pairs' payoffs are folded into running moments equal to NumPy's over all of them."""
    import eval.environments as match

    monkeypatch.setattr(match, "CHUNK", 7)
    values = np.random.default_rng(3).normal(0.2, 1.5, size=61) ** 3  # skewed, in chunks of 7 and one of 5
    samples = match.PairSamples(len(values))
    for value in values:
        samples.add(float(value))
    assert len(samples._chunk) == 7
    count, mean, deviation = samples.moments()
    assert count == 61
    assert mean == pytest.approx(values.mean(), rel=1e-13)
    assert deviation == pytest.approx(values.std(ddof=1), rel=1e-12)


# --- names, files, nesting -------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["exploitability", LONG_NAME],
        ["exploitability", LONG_NAME + ".json"],
        ["match", LONG_NAME, "random", "--game", "rlcard:kuhn-poker", "--hands", "4"],
        ["tournament", "random", LONG_NAME, "--game", "rlcard:kuhn-poker", "--hands", "4", "--out", "t"],
        ["best-response", LONG_NAME, "--game", "openspiel:kuhn_poker", "--out", "br.json"],
        ["opponents", "--game", "rlcard:kuhn-poker", "--table", LONG_NAME],
    ],
)
def test_a_name_longer_than_the_file_system_allows_is_refused(tmp_path: Path, argv: list[str]) -> None:
    refused(argv, "File name too long", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_policy_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text("[" * 1000 + "]" * 1000)
    (tmp_path / "deeper.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    for name in ("deep.json", "deeper.json"):
        refused(["exploitability", name], "nested too deeply", tmp_path)
        refused(["match", name, "random", "--game", "openspiel:kuhn_poker", "--hands", "4"], "nested too", tmp_path)


def test_a_directory_given_as_an_agent_is_called_a_directory(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    refused(["exploitability", "runs"], "'runs' is a directory", tmp_path)
    refused(["match", "runs", "random", "--game", "rlcard:kuhn-poker", "--hands", "4"], "is a directory", tmp_path)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("1,0,1.0\n10,-1,0.1\n", "no positive seconds"),
        ("0,1,0.5\n-1,2,0.1\n", "no point with positive iteration and NashConv"),
        ("1,1,0\n2,2,-1\n", "no point with positive iteration and NashConv"),
        ("1,inf,0.5\n", "not a finite number"),
        ("1,nan,0.5\n", "not a finite number"),
    ],
)
def test_a_curve_with_nothing_to_draw_on_log_axes_is_refused(tmp_path: Path, rows: str, message: str) -> None:
    pytest.importorskip("matplotlib")
    (tmp_path / "c.csv").write_text("iteration,seconds,nash_conv\n" + rows)
    refused(["plot", "curves", "c.csv", "--out", "c.png"], message, tmp_path)
    assert not (tmp_path / "c.png").exists()


def test_train_opponent_refuses_a_negative_seed(tmp_path: Path) -> None:
    for kind, amount in (("rlcard-cfr", "--iterations"), ("rlcard-nfsp", "--episodes")):
        argv = ["train-opponent", kind, "--game", "rlcard:leduc-holdem", amount, "1", "--seed", "-1"]
        refused([*argv, "--out", "m.json"], "--seed: must be a non-negative integer, got -1", tmp_path)


# --- what a refusal leaves behind, and how it reads -------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--ray", "127.0.0.1:9"], "cannot reach Ray at 127.0.0.1:9"),
        (["--ray", "nowhere"], "must be HOST:PORT"),
        (["--workers", "2", "--ray"], "not both"),
        (["--hands", "1" + "0" * 20], "at most 10^9"),
        (["--hands", "5"], "even"),
    ],
)
def test_a_refused_tournament_leaves_no_output_directory(tmp_path: Path, extra: list[str], message: str) -> None:
    argv = ["tournament", "--hands", "4", "--out", "t", "--game", "rlcard:leduc-holdem", "random", "rlcard-rule-v1"]
    refused([*argv, *extra], message, tmp_path)
    assert not (tmp_path / "t").exists()


def test_a_tournament_with_an_unknown_agent_leaves_no_output_directory(tmp_path: Path) -> None:
    argv = ["tournament", "random", "nope-agent", "--game", "rlcard:leduc-holdem", "--hands", "4", "--out", "t"]
    refused(argv, "unknown opponent 'nope-agent'", tmp_path)
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["train", "--iterations", "x"],
        ["match", "random"],
        ["sweep", "--algo", "nope"],
        ["exploitability"],
        ["plot", "nope"],
    ],
)
def test_argument_errors_begin_as_every_error_does(tmp_path: Path, argv: list[str]) -> None:
    err = refused(argv, f"cfr-agents: error: {argv[0]}: ", tmp_path)
    assert "usage" not in err


def test_an_interval_from_pairs_that_all_paid_the_same_is_called_degenerate() -> None:
    from eval.match import MatchReport, describe

    report = MatchReport(
        game_id="openspiel:kuhn_poker",
        agents=("a", "b"),
        units="chips",
        hands=4,
        mean=0.5,
        standard_error=0.0,
        ci95=(0.5, 0.5),
        exact=0.25,
        exact_seat_values=(0.0, 0.5),
        exact_note="",
    )
    assert report.exact_within_ci95 is None
    text = describe(report)
    assert "standard error 0 from 4 hands: no interval to check against" in text
    assert "outside" not in text and "inside" not in text


def test_play_rlcard_match_counts_pairs() -> None:
    import inspect

    from eval.environments import play_openspiel_match, play_rlcard_match

    for play in (play_rlcard_match, play_openspiel_match):
        assert "pairs" in inspect.signature(play).parameters and "hands" not in inspect.signature(play).parameters


# --- Ctrl-C -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("delay", [0.3, 1.5, 4.0])
def test_ctrl_c_at_any_stage_of_a_sweep_is_one_line_and_status_130(tmp_path: Path, delay: float) -> None:
    """Set-up (imports, the grid, the tree), the start of the worker processes, or training: the same."""
    argv = [sys.executable, "-m", "cfr_agents", "sweep", "--game", "openspiel:leduc_poker", "--algo", "dcfr"]
    argv += ["--grid", "alpha=1,1.5,2", "--seeds", "0-3", "--iterations", "100000", "--workers", "2"]
    process = start_interruptible(
        [*argv, "--out", str(tmp_path / "out")], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    started = time.perf_counter()
    _, stderr = process.communicate(timeout=60)
    assert time.perf_counter() - started < 20, "Ctrl-C took too long to stop the sweep"
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and stderr.splitlines()[-1].startswith("cfr-agents: interrupted"), stderr


CRASHING_DECKS = [
    ("numSuits=2,numRanks=14", "numRanks must be from 1 to 13, got 14"),
    ("numSuits=5,numRanks=3", "numSuits must be from 1 to 4, got 5"),
    ("numHoleCards=0", "numHoleCards must be from 1 to 3, got 0"),
    ("numSuits=1,numRanks=2", "need 3 cards; the deck has 2"),
]
"""``universal_poker`` parameters on which OpenSpiel's card library prints a line and the process dies with a
segmentation fault, and what the refusal says."""


@pytest.fixture(scope="module")
def crashing_deck_runs(tmp_path_factory: pytest.TempPathFactory) -> list[CliRun]:
    """``exploitability random`` on each game of :data:`CRASHING_DECKS`, in one process: a crash would end it."""
    folder = tmp_path_factory.mktemp("decks")
    argv = ["exploitability", "random", "--game"]
    return in_one_process([(folder, [*argv, f"openspiel:universal_poker({p})"]) for p, _ in CRASHING_DECKS])


@pytest.mark.parametrize(("parameters", "message"), CRASHING_DECKS)
def test_a_universal_poker_deck_openspiel_would_crash_on_is_refused(
    crashing_deck_runs: list[CliRun], parameters: str, message: str
) -> None:
    result = crashing_deck_runs[CRASHING_DECKS.index((parameters, message))]
    assert result.status == 2 and result.out == "", result
    assert result.err.startswith("cfr-agents: error: ") and len(result.err.splitlines()) == 1
    assert message in result.err
