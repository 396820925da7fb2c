"""The page in a real browser: Playwright for Python driving the system's Chromium (``/usr/bin/chromium``; no browser
is ever downloaded). A hand played to its end through the page, the explorer walked to a node and its strategy
checked against the policy file, the static report opened from ``file://`` with the network blocked, and the
screenshots checked for a blank or broken layout.

With :data:`SCREENSHOTS` set to a directory (``make screenshots`` sets it to ``docs``), the tests write the
pictures the docs show there: the terminal's ``play``, the play view, the explorer and the hold'em grid."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the [web] extra is not installed")
pytest.importorskip("uvicorn", reason="the [web] extra is not installed")
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

from playwright.sync_api import sync_playwright

from benchmarks.web import CHROMIUM as SYSTEM_CHROMIUM
from benchmarks.web import CHROMIUM_ARGS, serving
from cfr_agents.solvers import make_solver
from tests.support import run_cli, tree

CHROMIUM = os.environ.get("CFR_AGENTS_CHROMIUM", SYSTEM_CHROMIUM)
SCREENSHOTS = "CFR_AGENTS_SCREENSHOTS"
"""The environment variable naming a directory for the docs' screenshots."""
VIEWPORT = {"width": 1280, "height": 860}
TIMEOUT_MS = 15_000
HOLDEM = "holdem-6"
HOLDEM_16 = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,numSuits=4,"
    "numRanks=4,numHoleCards=2,numBoardCards=0 1,raiseSize=100 100,maxRaises=3 3)"
)
"""A hold'em game past the compiled tree (16 cards), with a public-tree strategy trained in a moment."""

if not Path(CHROMIUM).is_file():
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory, policy_files: dict[str, Path]) -> Path:
    """The directory served: a Kuhn and an RLCard Leduc policy, and a policy of the small hold'em game."""
    directory = tmp_path_factory.mktemp("served")
    shutil.copy(policy_files["openspiel:kuhn_poker"], directory / "kuhn.json")
    shutil.copy(policy_files["rlcard:leduc-holdem"], directory / "leduc.json")
    solver = make_solver(tree(HOLDEM), "dcfr")
    solver.run(30)
    solver.average_policy().save(directory / "holdem.json")
    argv = ["train", "--game", HOLDEM_16, "--algo", "dcfr", "--iterations", "5", "--quiet"]
    assert run_cli([*argv, "--out", str(directory / "holdem16.json")]).status == 0
    return directory


@pytest.fixture(scope="module")
def server(policies: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``cfr-agents serve``'s app on a free local port, started once for the module."""
    with serving([str(policies)], str(tmp_path_factory.mktemp("out"))) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS), headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT)
    opened = context.new_page()
    opened.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, errors


def screenshot(page: Any, name: str) -> bytes:
    """The page as PNG, written into :data:`SCREENSHOTS`'s directory when it is set; checked for a blank or
    broken layout: the picture varies, and the main boxes lie inside the viewport."""
    from PIL import Image, ImageStat

    picture: bytes = page.screenshot(full_page=False)
    image = Image.open(io.BytesIO(picture)).convert("L")
    assert ImageStat.Stat(image).stddev[0] > 10, f"{name} looks blank"
    for selector in ("header", ".panel", "aside", ".table"):
        for box in (handle.bounding_box() for handle in page.query_selector_all(selector)):
            if box is not None and box["width"] > 0:
                assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"] + 1, (name, selector, box)
    directory = os.environ.get(SCREENSHOTS)
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        (Path(directory) / f"{name}.png").write_bytes(picture)
    return picture


def test_a_hand_played_to_the_end_through_the_page(server: str, page: Any) -> None:
    page.goto(server)
    page.wait_for_selector("body[data-ready=yes]")
    page.fill("#play-game", "openspiel:leduc_poker")
    page.fill("#play-agent", "random")
    page.select_option("#play-seat", "0")
    page.fill("#play-seed", "7")
    page.click("#play-start")
    page.wait_for_selector("#play-moves button")
    assert "your cards" in page.inner_text("#play-hand")
    first = True
    for _ in range(20):
        if "Hand 1 is over." in page.inner_text("#play-log"):
            break
        if first:
            screenshot(page, "web-play")
            first = False
        page.click("#play-moves button[data-action='1']")  # Call: legal at every decision of Leduc
        page.wait_for_function("document.body.dataset.play === 'waiting' || document.body.dataset.play === 'over'")
        page.wait_for_timeout(50)
    assert "Hand 1 is over." in page.inner_text("#play-log")
    assert "Hand 2" in page.inner_text("#play-hand")
    page.click("#play-quit")
    page.wait_for_function("document.body.dataset.play === 'over'")
    assert page.inner_text("#play-hand").startswith("Session over (you quit): 1 hand against random")


def shown_strategy(page: Any) -> dict[str, list[float]]:
    """The first panel's probabilities by infoset key, as the table shows them (4 decimals)."""
    rows = page.query_selector_all(".panel >> nth=0 >> tr[data-key]")
    return {
        row.get_attribute("data-key"): [float(cell.inner_text()) for cell in row.query_selector_all("td.probability")]
        for row in rows
    }


def explore(page: Any, server: str, name: str) -> None:
    """Open the served file ``name`` in the explorer tab."""
    page.goto(server)
    page.wait_for_selector("body[data-ready=yes]")
    page.click("#tab-explore")
    page.select_option("#explore-file", name)
    page.click("#explore-open")
    page.wait_for_selector("#children a.move")


def test_the_explorer_shows_the_policy_files_strategy(server: str, page: Any, policies: Path) -> None:
    explore(page, server, f"{policies.name}/leduc.json")
    page.click("#children a.move >> text=SB seat 1")
    page.wait_for_function("document.body.dataset.path === '1'")
    page.click("#children a.move >> text=raise")
    page.wait_for_function("document.body.dataset.path === '1.1'")
    table = json.loads((policies / "leduc.json").read_text())["policy"]
    shown = shown_strategy(page)
    assert len(shown) == 6
    for key, probabilities in shown.items():
        assert key.startswith("0|")
        row = table[key]
        assert probabilities == pytest.approx([row[a] for a in sorted(row, key=int)], abs=5e-5)
    screenshot(page, "web-explorer")


def test_the_hold_em_grid(server: str, page: Any, policies: Path) -> None:
    explore(page, server, f"{policies.name}/holdem.json")
    cells = page.query_selector_all(".grid .cell b")
    assert [cell.inner_text() for cell in cells] == ["44", "43s", "42s", "43o", "33", "32s", "42o", "32o", "22"]
    screenshot(page, "web-explorer-holdem")


def test_a_game_past_the_compiled_tree(server: str, page: Any, policies: Path) -> None:
    """A public-tree strategy: the grid of the first decision, a board card dealt, no values."""
    explore(page, server, f"{policies.name}/holdem16.json")
    assert "no exact value fits this game" in page.inner_text("#summary")
    assert len(page.query_selector_all(".grid .cell")) == 16
    page.click("#children a.move >> text=Call")
    page.wait_for_function("document.body.dataset.path === '1'")
    page.click("#children a.move >> text=Call")
    page.wait_for_function("document.body.dataset.path === '1.1'")
    page.click("#children a.move >> text=5s")
    page.wait_for_function("document.body.dataset.path === '1.1.15'")
    assert len(page.query_selector_all("tr[data-key]")) == 105
    assert all(key.endswith("|5s|cc|") for key in shown_strategy(page))


def test_the_report_opens_offline(page: Any, policies: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert run_cli(["report", str(policies / "leduc.json"), "--vs", "random", "--out", str(out)]).status == 0
    requested: list[str] = []

    def only_the_file(route: Any) -> None:
        requested.append(route.request.url)
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            route.abort()

    page.context.route("**/*", only_the_file)
    page.context.set_offline(True)
    page.goto(out.as_uri())
    page.wait_for_selector("body[data-ready=yes]")
    assert requested == [out.as_uri()]
    assert page.is_hidden("#explore-form") and page.is_hidden("#tabs")
    panels = page.query_selector_all(".panel h3")
    assert [panel.inner_text() for panel in panels] == []  # the root of RLCard's Leduc is the small blind's seat
    page.click("#children a.move >> text=SB seat 0")
    page.wait_for_function("document.body.dataset.path === '0'")
    assert [panel.inner_text() for panel in page.query_selector_all(".panel h3")] == [
        str(policies / "leduc.json"),
        "random",
    ]
    table = json.loads((policies / "leduc.json").read_text())["policy"]
    for key, probabilities in shown_strategy(page).items():
        assert probabilities == pytest.approx([table[key][a] for a in sorted(table[key], key=int)], abs=5e-5)
    screenshot(page, "web-report")


def test_the_terminal_play_screenshot(page: Any) -> None:
    """``cfr-agents play`` in the terminal, its transcript drawn as a terminal shows it."""
    moves = "1\n" * 12
    result = subprocess.run(
        [sys.executable, "-m", "cfr_agents", "play", "random", "--game", "openspiel:leduc_poker", "--hands", "2"],
        input=moves,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "Session over (2 hands played, as asked)" in result.stdout
    page.set_content(
        '<body style="margin:0;background:#1e1e1e"><pre id="terminal" style="margin:0;padding:14px;color:#e8e8e8;'
        'font:13px/1.35 DejaVu Sans Mono,monospace;white-space:pre-wrap"></pre></body>'
    )
    page.eval_on_selector(
        "#terminal",
        "(node, text) => { node.textContent = text; }",
        f"$ cfr-agents play random --game openspiel:leduc_poker --hands 2\n{result.stdout}",
    )
    screenshot(page, "web-play-terminal")
