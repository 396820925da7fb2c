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


def test_readme_python_blocks_run_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = BLOCK.findall((ROOT / "README.md").read_text())
    assert len(blocks) >= 3
    monkeypatch.chdir(tmp_path)
    for number, block in enumerate(blocks):
        exec(compile(block, f"README.md python block {number}", "exec"), {"__name__": "__readme__"})


@pytest.mark.parametrize("script", sorted(p.name for p in (ROOT / "examples").glob("*.py")))
def test_example_runs(script: str, tmp_path: Path) -> None:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=environment,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()


@pytest.mark.parametrize(
    "module", [adapters, cfr_agents, cfr_agents.training, eval.opponents], ids=lambda m: m.__name__
)
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0
