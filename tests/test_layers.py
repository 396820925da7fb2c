"""The packages' layers and import graph: no cycles, counting every import statement at any depth
(a function-level import counts, and ``from package import module`` imports the package too), and
the contracts ``lint-imports`` enforces (``make lint``) name packages, so a new module is held to its
package's layer without an edit to them."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("adapters", "cfr_agents", "eval")


def modules() -> dict[str, Path]:
    """Every module of the three packages by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def imported(name: str, path: Path, known: Mapping[str, Path]) -> Iterator[str]:
    """The known modules each import statement of ``name`` (at any depth) loads: for
    ``from a.b import c`` that is ``a.b``, and also ``a.b.c`` when ``c`` is a module."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(name, path, known)) for name, path in known.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_cycles() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_counts_function_level_imports_and_packages() -> None:
    graph = import_graph()
    assert "cfr_agents.cli" in graph["cfr_agents.console"]  # imported inside main()
    assert "adapters" in graph["eval.opponents.base"]  # from adapters import Game


def test_no_import_cycles() -> None:
    assert cycles(import_graph()) == []


def contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return found


def named_modules(contract: Mapping[str, Any]) -> Iterator[str]:
    """Every module a contract names (an import to ignore names two), its wildcard parts dropped."""
    names = [*contract.get("layers", ()), *contract.get("source_modules", ()), *contract.get("forbidden_modules", ())]
    names += [*contract.get("ancestors", ())]
    names += [side for ignored in contract.get("ignore_imports", ()) for side in ignored.split("->")]
    for name in names:
        for module in name.replace("|", ":").split(":"):
            yield ".".join(part for part in module.strip().split(".") if part not in ("*", "**"))


def entry_modules() -> set[str]:
    """The command's entry modules: the console script's and ``python -m cfr_agents``'s."""
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    return {target.partition(":")[0] for target in scripts.values()} | {"cfr_agents.__main__"}


def test_the_contracts_name_packages_and_the_entry_modules_only() -> None:
    """No contract lists the modules of a layer one by one: a new module needs no edit to them."""
    known = modules()
    for contract in contracts():
        for name in named_modules(contract):
            assert name in entry_modules() or known[name].name == "__init__.py", (contract["name"], name)


def test_every_module_falls_under_a_layer() -> None:
    [contract] = [c for c in contracts() if c["type"] == "layers"]
    layers = list(named_modules(contract))
    for name in modules():
        assert any(name == layer or name.startswith(f"{layer}.") for layer in layers), name


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the packages and contracts under ``root``."""
    command = [str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--no-logo"]
    return subprocess.run(
        command, cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, capture_output=True, text=True
    )


@pytest.mark.parametrize(
    ("module", "statement", "contract"),
    [
        ("cfr_agents/added.py", "import eval", "Layers"),
        ("cfr_agents/solvers/added.py", "import cfr_agents.cli", "The CLI on top"),
        ("eval/added.py", "from cfr_agents.cli import main", "The CLI on top"),
        ("adapters/added.py", "import cfr_agents.policy", "Layers"),
    ],
)
def test_a_new_module_is_held_to_its_layer(tmp_path: Path, module: str, statement: str, contract: str) -> None:
    """A module the contracts do not name, importing upward, breaks ``lint-imports``; one importing
    downward keeps it."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    added = tmp_path / module
    added.write_text("import adapters.base\n")
    assert lint_imports(tmp_path).returncode == 0
    added.write_text(f"{statement}\n")
    result = lint_imports(tmp_path)
    assert result.returncode == 1
    dotted = module.removesuffix(".py").replace("/", ".")
    assert any(line.startswith(contract) and " BROKEN" in line for line in result.stdout.splitlines())
    assert f"{dotted} ->" in result.stdout
