"""``cfr-agents match`` and ``cfr-agents tournament`` refuse bad input with one ``error:`` line and
exit status 2, before writing anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import CliRun, run_cli


def one_line_error(run: CliRun) -> str:
    assert run.status == 2, run.err
    lines = run.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cfr-agents") and ": error: " in lines[0], run.err
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
        (
            ["tournament", "--game", "rlcard:leduc-holdem", "random", "nobody", "--hands", "10", "--out", "{tmp}/t"],
            "unknown opponent",
        ),
        (
            [
                "tournament",
                "--game",
                "openspiel:kuhn_poker",
                "random",
                "rlcard-rule-v2",
                "--hands",
                "10",
                "--out",
                "{tmp}/t",
            ],
            "not available",
        ),
        (
            [
                "tournament",
                "--game",
                "rlcard:leduc-holdem",
                "random",
                "rlcard-rule-v1",
                "--hands",
                "1",
                "--out",
                "{tmp}/t",
            ],
            "at least 4",
        ),
        (
            ["tournament", "--game", "rlcard:leduc-holdem", "random", "--hands", "10", "--out", "{tmp}/t"],
            "at least 2 agents",
        ),
        (
            ["tournament", "--game", "rlcard:leduc-holdem", "random", "random", "--hands", "10", "--out", "{tmp}/t"],
            "named twice",
        ),
        (
            [
                "tournament",
                "--game",
                "rlcard:leduc-holdem",
                "random",
                "rlcard-rule-v1",
                "--hands",
                "10",
                "--out",
                "{tmp}/file",
            ],
            "not a directory",
        ),
        (
            [
                "tournament",
                "--game",
                "rlcard:leduc-holdem",
                "random",
                "rlcard-rule-v1",
                "--hands",
                "10",
                "--out",
                "{tmp}/missing/deeper",
            ],
            "cannot create directory",
        ),
        (
            [
                "tournament",
                "--game",
                "rlcard:leduc-holdem",
                "random",
                "rlcard-rule-v1",
                "--hands",
                "10",
                "--out",
                "{tmp}/blocked",
            ],
            "is a directory",
        ),
        (
            [
                "tournament",
                "--game",
                "rlcard:leduc-holdem",
                "random",
                "rlcard-rule-v1",
                "--hands",
                "10",
                "--out",
                "{tmp}/t",
                "--workers",
                "0",
            ],
            "positive",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, argv: list[str], expected: str) -> None:
    (tmp_path / "file").write_text("not a directory\n")
    (tmp_path / "blocked" / "results.json").mkdir(parents=True)  # an output name taken by a directory
    assert expected in one_line_error(run_cli([arg.replace("{tmp}", str(tmp_path)) for arg in argv]))


def test_a_policy_for_another_game_is_refused(policy_files: dict[str, Path], tmp_path: Path) -> None:
    kuhn = str(policy_files["openspiel:kuhn_poker"])
    refused = run_cli(["match", kuhn, "random", "--game", "rlcard:leduc-holdem", "--hands", "10"])
    assert "openspiel:kuhn_poker" in one_line_error(refused)
    out = str(tmp_path / "t")
    refused = run_cli(["tournament", "--game", "rlcard:leduc-holdem", kuhn, "random", "--hands", "10", "--out", out])
    assert "openspiel:kuhn_poker" in one_line_error(refused)
    assert not (tmp_path / "t").exists()  # refused before anything is written
