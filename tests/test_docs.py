"""The README's and the documentation pages' Python blocks and the example scripts run as printed."""

from __future__ import annotations

import doctest
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import adapters
import cfr_agents
import cfr_agents.training
import eval.opponents.registry
import eval.pettingzoo

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
"""The README and every page of the documentation site, as users read them."""
PAGES_WITH_CODE = [page for page in PAGES if BLOCK.search(page.read_text())]


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


@pytest.mark.parametrize("page", PAGES_WITH_CODE, ids=page_id)
def test_python_blocks_run_in_order(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each page's blocks run in order, as a reader pastes them, in a fresh directory of their own."""
    monkeypatch.chdir(tmp_path)
    for number, block in enumerate(BLOCK.findall(page.read_text())):
        exec(compile(block, f"{page_id(page)} python block {number}", "exec"), {"__name__": "__readme__"})
        printed = capsys.readouterr().out
        assert "np." not in printed and "array(" not in printed, (number, printed)  # plain numbers, as shown
    assert {p.name for p in tmp_path.iterdir()} <= {"out"}  # files go to out/, as in `make demo`


def test_the_pages_keep_their_python_blocks() -> None:
    blocks = {page_id(page): len(BLOCK.findall(page.read_text())) for page in PAGES}
    assert blocks["README.md"] >= 1 and sum(blocks.values()) >= 8, blocks


def test_the_readme_is_short_and_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 220
    linked = set(re.findall(r"\]\((docs/[\w-]+\.md)(?:#[\w-]*)?\)", readme))
    pages = {f"docs/{page.name}" for page in DOCS.glob("*.md") if page.name != "index.md"}
    assert pages <= linked, sorted(pages - linked)
    assert all((ROOT / link).is_file() for link in linked), sorted(linked)


def test_every_page_is_in_the_index_toctree() -> None:
    toctree = re.search(r"```\{toctree\}\n(.*?)```", (DOCS / "index.md").read_text(), re.DOTALL)
    assert toctree is not None
    entries = {line.strip() for line in toctree.group(1).splitlines() if line.strip() and not line.startswith(":")}
    pages = {page.stem for page in [*DOCS.glob("*.md"), *DOCS.glob("*.rst")] if page.name != "index.md"}
    assert pages == entries, (sorted(pages - entries), sorted(entries - pages))


EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py"))


def run_example(script: str, cwd: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )


QUICK = {
    "solving_leduc_holdem.py": [
        "--iterations",
        "400",
        "--every",
        "200",
        "--hands",
        "200",
        "--workers",
        "2",
        "--systems",
        "MCCFR",
        "DCFR",
        "--opponent",
        "random",
        "--opponent",
        "cfr=rlcard-pretrained-cfr",
    ],
    "rlcard_tournament.py": ["--hands", "200"],
    "pettingzoo_leduc.py": ["--games", "100"],
}
"""Arguments that make a long run short (the Stanford experiment's defaults are its ten-minute setup, here with one
sampled system and the full-tree one on two workers; the other two play 10,000 hands a seat and 2,000 games by
default)."""


@pytest.mark.parametrize("script", EXAMPLES)
def test_example_runs(script: str, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    writes = script == "solving_leduc_holdem.py"
    elsewhere = tmp_path_factory.mktemp("example-output")
    result = run_example(script, tmp_path, *QUICK.get(script, []), *(["--out-dir", str(elsewhere)] if writes else []))
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()
    assert list(tmp_path.iterdir()) == []  # an example writes only where it is told to
    if writes:
        assert sorted(p.name for p in elsewhere.iterdir()) == ["solving_leduc_holdem.csv", "solving_leduc_holdem.png"]


def run_in_process(script: str, *arguments: str) -> int | str | None:
    """The example run as ``python examples/SCRIPT ARGUMENTS`` runs it, in this process (its imports, torch's and
    RLCard's among them, are paid once for every call): the status it exits with. An exception it does not answer
    fails the test, as its traceback would in a process of its own."""
    path = ROOT / "examples" / script
    with pytest.MonkeyPatch.context() as patch, pytest.raises(SystemExit) as exited:
        patch.setattr(sys, "argv", [str(path), *arguments])
        runpy.run_path(str(path), run_name="__main__")
    return exited.value.code


@pytest.mark.parametrize("script", EXAMPLES)
def test_example_help_and_bad_options(
    script: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run_in_process(script, "--help") == 0
    assert capfd.readouterr().out.startswith(f"usage: {script}")
    assert run_in_process(script, "--no-such-option") == 2
    stderr = capfd.readouterr().err
    assert f"{script}: error:" in stderr and "Traceback" not in stderr


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
    script: str,
    arguments: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    cfr_agents.Policy.uniform(cfr_agents.compile_tree(adapters.load_game("openspiel:kuhn_poker"))).save(
        tmp_path / "openspiel.json"
    )
    monkeypatch.chdir(tmp_path)
    status = run_in_process(script, *arguments)
    stderr = capfd.readouterr().err
    assert status == 2, stderr[-2000:]
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1].startswith(f"{script}: error: ") and message in stderr


@pytest.mark.parametrize(
    "module",
    [adapters, cfr_agents, cfr_agents.training, eval.opponents.registry, eval.pettingzoo],
    ids=lambda m: m.__name__,
)
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0


TEST_REFERENCE = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def test_every_test_the_pages_cite_exists() -> None:
    """The Guarantees table and the other pages cite tests by path and name; each must exist."""
    references = [reference for page in PAGES for reference in TEST_REFERENCE.findall(page.read_text())]
    assert len(references) > 20, "the pages cite tests"
    missing = [
        f"{path}::{name}"
        for path, name in references
        if not (ROOT / path).is_file() or (name and f"def {name}(" not in (ROOT / path).read_text())
    ]
    assert not missing, missing


RESULT_ROW = re.compile(r"^\|.*\| ([\d,]+) \| (\d+) \| (\d+) \| `(\w+\.json)` \|$", re.MULTILINE)
"""A row of a results table: ... | iterations | minutes | NashConv in mbb/g | `file` |."""


def test_the_sd_cfr_table_reads_its_results_files() -> None:
    """Each row of Flop Hold'em's table of SD-CFR runs gives what its results file holds: iterations, minutes of
    solving and NashConv in mbb/g (100 chips a big blind), rounded; every ``fhp_sd_cfr`` run file has a row."""
    rows = RESULT_ROW.findall((DOCS / "flop_holdem.md").read_text())
    results = ROOT / "benchmarks" / "results"
    assert {name for *_, name in rows} == {
        path.name for path in results.glob("fhp_sd_cfr*.json") if path.name != "fhp_sd_cfr_scoring.json"
    }
    for iterations, minutes, nash_conv, name in rows:
        data = json.loads((results / name).read_text())
        report = data.get("report", data)
        assert int(iterations.replace(",", "")) == report["iterations"], name
        assert int(minutes) == round(report["solve_seconds"] / 60), name
        assert int(nash_conv) == round(report["nash_conv"] * 10), name  # chips / 100 * 1000


def test_every_module_is_in_the_api_reference() -> None:
    """A new module joins ``docs/api.rst`` (the command line has its own page, ``docs/cli.md``)."""
    entries = re.findall(r"^\.\. automodule:: (\S+)$", (ROOT / "docs" / "api.rst").read_text(), re.MULTILINE)
    listed = set(entries)
    assert len(entries) == len(listed), sorted(m for m in listed if entries.count(m) > 1)  # Sphinx: duplicate objects
    modules = set()
    for package in ("adapters", "cfr_agents", "eval"):
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            modules.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    entry = ("cfr_agents.console", "cfr_agents.__main__")
    command_line = {m for m in modules if m.startswith("cfr_agents.cli") or m in entry}
    assert modules - command_line - listed == set()
    assert listed <= modules


SITE = DOCS / "_build" / "html"
"""The site ``make docs`` builds (``make test`` builds it before running the tests)."""
FORMULAS = SITE / "neural.html"
"""A page with inline and display formulas."""


def built_page(page: Path) -> Path:
    if not page.is_file():
        pytest.skip(f"{page.relative_to(ROOT)} is not built (make docs)")
    return page


def test_the_site_loads_mathjax_from_its_own_files() -> None:
    """A page opened from disk or on a machine offline renders its formulas: MathJax is one of the site's files."""
    page = built_page(FORMULAS)
    sources = re.findall(r"<script[^>]*\bsrc=\"([^\"]*mathjax[^\"]*)\"", page.read_text(), re.IGNORECASE)
    assert sources, "the page loads no MathJax"
    for source in sources:
        assert not re.match(r"(\w+:)?//", source), f"MathJax from the network: {source}"
        assert (page.parent / source.split("?")[0]).is_file(), source  # Sphinx may add ?v=<checksum> to the path


CHROMIUM = shutil.which("chromium")
HEADLESS = [
    "--headless",
    "--no-sandbox",  # as root, in CI
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # no network: every host name fails to resolve
    "--virtual-time-budget=10000",  # let MathJax typeset before the DOM is taken
]


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium (apt-get install chromium)")
def test_formulas_render_in_a_browser_with_no_network(tmp_path: Path) -> None:
    """Headless Chromium, every host name unresolvable, typesets the page's formulas: MathJax's output
    elements are in the DOM and no TeX delimiter is left in the text."""
    assert CHROMIUM is not None
    page = built_page(FORMULAS)
    argv = [CHROMIUM, *HEADLESS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    text = re.sub(r"<script.*?</script>", "", result.stdout, flags=re.DOTALL)
    assert text.count("<mjx-container") >= 10, text[:2000]
    raw = [text[max(0, i - 40) : i + 40] for i in (m.start() for m in re.finditer(r"\\\(|\\\[", text))]
    assert not raw, raw[:5]
