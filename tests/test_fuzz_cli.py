"""Property: random argument vectors for every ``cfr-agents`` command end with status 0, 1 or 2, never a
traceback; status 2 comes with exactly one ``error:`` line.

The commands are whatever :func:`cfr_agents.cli.build_parser` registers, and each command's own
options and choices are the vocabulary, so a new command is fuzzed as soon as it is registered.
Every path is relative to a scratch directory (no drawn token contains ``/`` at its start or a NUL):
valid, corrupt and missing policy files, a directory, a FIFO, a symlink. An example still running
after :data:`OVERTIME` seconds (a reachable but long run, a read from the FIFO) is discarded, not failed.

The vocabulary holds the classes of input that once gave tracebacks, hangs or runaway memory: names
longer than the file system allows, JSON nested 1,000 deep, counts of 10^20 and of 5,000 digits, curves
whose seconds or NashConv are never positive, and every path argument of a command given one path, so
that outputs equal inputs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import given, reject
from hypothesis import strategies as st

from cfr_agents import Policy
from tests.support import GAME_IDS, Overtime, cli_commands, run_cli, time_limit, tree

OVERTIME = 3.0
BYTES = [b for b in range(1, 256) if b != ord("/")]
"""What a command line can hold, but no path separator."""
COMMANDS = cli_commands()
GAMES = [
    *GAME_IDS,
    "openspiel:nope",
    "rlcard:uno",
    "chess",
    "openspiel:kuhn_poker(players=3)",
    "openspiel:leduc_poker(bogus=1)",
    "openspiel:matrix_rps",
    "",
]
# Magnitudes stay small where they count work (iterations <= 3, seconds <= 3); DCFR parameters may be huge.
NUMBERS = [
    "0",
    "1",
    "2",
    "3",
    "-1",
    "-0.5",
    "0.5",
    "1.5",
    "0.01",
    "0.05",
    "1e-300",
    "inf",
    "-inf",
    "nan",
    "1e309",
    "x",
    "1_0",
    " 2",
    "3.0",
    "0x10",
    "400",
    "-400",
    "1" + "0" * 20,
    "9" * 5000,
    "-" + "9" * 5000,
    "0-100000000",
]
PATHS = [
    "kuhn.json",
    "rlcard-kuhn.json",
    "corrupt.json",
    "missing.json",
    "scratch",
    "pipe",
    "link.json",
    "out.json",
    "curve.csv",
    "scratch/new.json",
    "nowhere/x.json",
    ".",
    "",
    "n" * 300,
    "n" * 300 + ".json",
    "deep.json",
    "flat.csv",
    "backwards.csv",
]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("cli")
    Policy.uniform(tree("openspiel:kuhn_poker")).save(directory / "kuhn.json")
    Policy.uniform(tree("rlcard:kuhn-poker")).save(directory / "rlcard-kuhn.json")
    (directory / "corrupt.json").write_text('{"format": "cfr-agents-policy", "game": ')
    (directory / "scratch").mkdir()
    os.mkfifo(directory / "pipe")
    (directory / "link.json").symlink_to("kuhn.json")
    (directory / "deep.json").write_text("[" * 1000 + "]" * 1000)
    (directory / "curve.csv").write_text("iteration,seconds,nash_conv\n1,0.5,1.0\n10,1.0,0.1\n")
    (directory / "flat.csv").write_text("iteration,seconds,nash_conv\n1,0,1.0\n10,-1,0.1\n")  # no positive second
    (directory / "backwards.csv").write_text("iteration,seconds,nash_conv\n0,1,0\n-1,2,-3\n")
    return directory


def vocabulary(command: str) -> st.SearchStrategy[str]:
    parser = COMMANDS[command]
    options = sorted({s for action in parser._actions for s in action.option_strings})
    choices = sorted({str(c) for action in parser._actions if action.choices for c in action.choices})
    words = [st.sampled_from(options), st.sampled_from(GAMES), st.sampled_from(NUMBERS), st.sampled_from(PATHS)]
    if choices:
        words.append(st.sampled_from(choices))
    glued = st.tuples(st.sampled_from(options), st.sampled_from(NUMBERS + PATHS)).map("=".join)  # --beta=-0.5
    raw = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=["Cs"]), max_size=8)
    undecodable = st.lists(st.sampled_from(BYTES), min_size=1, max_size=6).map(bytes).map(os.fsdecode)
    return st.one_of(*words, glued, raw, undecodable)


def value_of(action: argparse.Action) -> st.SearchStrategy[str]:
    """A plausible value: one of its choices, a number for a typed option, else a game id or a path."""
    if action.choices:
        return st.sampled_from(sorted(str(c) for c in action.choices))
    if action.type not in (None, str):
        return st.sampled_from(NUMBERS)
    return st.sampled_from(GAMES) | st.sampled_from(PATHS)


def given_argument(action: argparse.Action) -> st.SearchStrategy[list[str]]:
    """The action's option (if it has one) followed by a value, if it takes one."""
    takes_value = action.nargs != 0
    if not takes_value:
        return st.sampled_from([action.option_strings[:1]])
    return value_of(action).map(lambda value: [*action.option_strings[:1], value])


@st.composite
def argument_vectors(draw: st.DrawFn) -> list[str]:
    """A command; then, most often, a value for each of its required arguments and some of its options
    with values; else random words."""
    command = draw(st.sampled_from([*sorted(COMMANDS) * 4, "--version", "--help", "nope", ""]))
    if command not in COMMANDS:
        return [command, *draw(st.lists(st.sampled_from(NUMBERS + PATHS), max_size=2))]
    actions = [a for a in COMMANDS[command]._actions if not isinstance(a, argparse._HelpAction)]
    argv = [command]
    if draw(st.integers(0, 3)):
        for action in actions:
            if action.required:
                argv += draw(given_argument(action))
        for action in draw(st.lists(st.sampled_from(actions), max_size=5)):
            argv += draw(given_argument(action))
    else:
        argv += draw(st.lists(vocabulary(command), max_size=8))
    if draw(st.integers(0, 3)) == 0:  # one path for every path argument: outputs equal to inputs
        one = draw(st.sampled_from(["kuhn.json", "link.json", "curve.csv", "out.json"]))
        argv = [one if token in PATHS else token for token in argv]
    return argv


def test_every_command_is_fuzzed() -> None:
    assert {"train", "exploitability"} <= set(COMMANDS)


@given(argv=argument_vectors())
def test_random_argument_vectors(scratch: Path, argv: list[str]) -> None:
    try:
        with contextlib.chdir(scratch), time_limit(OVERTIME):
            status, _, err = run_cli(argv)
    except Overtime:
        reject()
    assert status in (0, 1, 2), (status, err)
    assert "Traceback" not in err
    if status == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("cfr-agents: error: "), err
