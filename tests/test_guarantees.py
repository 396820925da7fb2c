"""Guarantees listed in the README that no other module checks on its own: no pickle in our formats,
and the same command with the same seed writes the same file."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.support import run_cli

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("adapters", "cfr_agents", "eval")
PICKLING_MODULES = {"pickle", "_pickle", "cPickle", "cloudpickle", "dill", "joblib", "shelve", "marshal"}


def pickle_uses(source: str) -> list[str]:
    """Imports of a pickling module, ``*.load(..., allow_pickle=True)``, and ``torch.load`` without
    ``weights_only=True`` in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"import {n}" for n in names if n.split(".")[0] in PICKLING_MODULES]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load":
            keywords = {k.arg: k.value for k in node.keywords}
            allow = keywords.get("allow_pickle")
            if isinstance(allow, ast.Constant) and allow.value is True:
                found.append("load(allow_pickle=True)")
            owner = node.func.value
            weights_only = keywords.get("weights_only")
            if (
                isinstance(owner, ast.Name)
                and owner.id == "torch"
                and not (isinstance(weights_only, ast.Constant) and weights_only.value is True)
            ):
                found.append("torch.load without weights_only=True")
    return found


def test_the_pickle_check_can_fail() -> None:
    assert pickle_uses("import pickle\nfrom dill import loads\nimport json") == ["import pickle", "import dill"]
    assert pickle_uses("np.load(f, allow_pickle=True)\ntorch.load(f)\ntorch.load(f, weights_only=True)") == [
        "load(allow_pickle=True)",
        "torch.load without weights_only=True",
    ]


def test_no_pickle_in_our_formats() -> None:
    """No module of the packages reads or writes pickle: policy files (and every other format) are JSON
    or plain arrays. Live objects may still define ``__reduce__`` for multiprocessing and OpenSpiel."""
    sources = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    assert len(sources) > 20
    offenders = {str(p.relative_to(ROOT)): uses for p in sources if (uses := pickle_uses(p.read_text()))}
    assert offenders == {}


@pytest.mark.parametrize("game_id", ["openspiel:leduc_poker", "rlcard:kuhn-poker"])
def test_the_same_command_with_the_same_seed_writes_the_same_file(game_id: str, tmp_path: Path) -> None:
    """On one machine: the claim is byte equality between two runs here, not across CPUs."""
    outputs = []
    for run in ("first", "second"):
        out = tmp_path / f"{run}.json"
        argv = ["train", "--game", game_id, "--algo", "dcfr", "--iterations", "20", "--seed", "7", "--quiet"]
        assert run_cli([*argv, "--out", str(out)]).status == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["parameters"]["seed"] == 7
