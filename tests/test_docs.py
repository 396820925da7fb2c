"""The README's Python blocks and the example scripts run as printed."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import adapters
import cfr_agents
import cfr_agents.training
import eval.opponents

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_readme_python_blocks_run_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = BLOCK.findall((ROOT / "README.md").read_text())
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    for number, block in enumerate(blocks):
        exec(compile(block, f"README.md python block {number}", "exec"), {"__name__": "__readme__"})
        printed = capsys.readouterr().out
        assert "np." not in printed and "array(" not in printed, (number, printed)  # plain numbers, as shown
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # files go to out/, as in `make demo`


EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py"))


def run_example(script: str, cwd: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *arguments],
        cwd=cwd, capture_output=True, text=True, timeout=300, env=environment,
    )  # fmt: skip


QUICK = {"solving_leduc_holdem.py": ["--iterations", "400", "--every", "200", "--hands", "200", "--workers", "2",
                                     "--opponent", "random", "--opponent", "cfr=rlcard-pretrained-cfr"]}  # fmt: skip
"""Arguments that make a long experiment short (its defaults are the paper's ten-minute setup)."""


@pytest.mark.parametrize("script", EXAMPLES)
def test_example_runs(script: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    quick = QUICK.get(script, [])
    elsewhere = tmp_path_factory.mktemp("example-output")
    result = run_example(script, tmp_path, *quick, *(["--out-dir", str(elsewhere)] if quick else []))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()
    assert list(tmp_path.iterdir()) == []  # an example writes only where it is told to
    if quick:
        assert sorted(p.name for p in elsewhere.iterdir()) == ["solving_leduc_holdem.csv", "solving_leduc_holdem.png"]


@pytest.mark.parametrize("script", EXAMPLES)
def test_example_help_and_bad_options(script: str, tmp_path: Path) -> None:
    assert run_example(script, tmp_path, "--help").returncode == 0
    result = run_example(script, tmp_path, "--no-such-option")
    assert result.returncode == 2 and f"{script}: error:" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("script", "arguments", "message"),
    [
        ("rlcard_tournament.py", ["missing.json"], "policy file 'missing.json' does not exist"),
        ("rlcard_tournament.py", ["openspiel.json"], "needs a policy for an rlcard: game"),
        ("rlcard_tournament.py", ["--hands", "0"], "must be a positive integer"),
        ("train_openspiel_leduc.py", ["--iterations", "2", "--out", "no/dir/p.json"], "does not exist"),
        ("solving_leduc_holdem.py", ["--hands", "1"], "at least 4"),
        ("solving_leduc_holdem.py", ["--opponent", "nobody", "--out-dir", "."], "no opponent is available"),
        ("solving_leduc_holdem.py", ["--out-dir", "no/dir"], "is not a directory"),
    ],
)
def test_examples_answer_bad_input_with_one_error(
    script: str, arguments: list[str], message: str, tmp_path: Path
) -> None:
    cfr_agents.Policy.uniform(cfr_agents.compile_tree(adapters.load_game("openspiel:kuhn_poker"))).save(
        tmp_path / "openspiel.json"
    )
    result = run_example(script, tmp_path, *arguments)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(f"{script}: error: ") and message in result.stderr


@pytest.mark.parametrize(
    "module", [adapters, cfr_agents, cfr_agents.training, eval.opponents], ids=lambda m: m.__name__
)
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0


TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def test_every_test_the_readme_names_exists() -> None:
    """The Guarantees table (and the rest of the README) cites tests by path and name; each must exist."""
    references = TEST_REFERENCE.findall((ROOT / "README.md").read_text())
    assert len(references) > 20, "the README cites tests"
    missing = [
        f"{path}::{name}"
        for path, name in references
        if not (ROOT / path).is_file() or (name and f"def {name}(" not in (ROOT / path).read_text())
    ]
    assert not missing, missing
