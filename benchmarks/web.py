"""The browser side against its targets: the first page renders in at most 1 s, an agent's move comes in at most
100 ms (tabular agents) or 300 ms (neural ones), the explorer opens a policy of 10^5 infosets in at most 2 s, and a
Leduc policy's report is at most 2 MB.

    python -m benchmarks.web [--moves 60] [--out benchmarks/results/web]

* First page: ``cfr-agents serve``'s app on a local port (uvicorn, in a thread) and Chromium (``/usr/bin/chromium``,
  driven by Playwright): the time from ``page.goto`` to the page's ready mark (its script has listed the served
  files), the first load and the median of five; the same for a Leduc report opened from ``file://``.
* An agent's move: the time of one ``POST /api/play/<session>/move`` over HTTP, from the human's move to the next
  decision (the agent's moves in between included), median and 95th percentile over ``--moves`` moves (the human
  calls or checks), for a DCFR policy file of OpenSpiel's Leduc, ``random``, and the shipped SD-CFR and Deep CFR
  models (torch: ``[nfsp]``); the first move of a session is shown apart (a model computes its table then).
* The explorer: a uniform policy of a 52-card Leduc (one hole card, one board card, at most 3 and 2 raises:
  111,800 infosets, 1.4·10^7 nodes; its tree built once into the tree cache, about two minutes), in a new process:
  the tree from the tree cache, the policy file read into a strategy (:class:`eval.match.Agents`), the explorer's
  own opening (:func:`eval.explore.open_explorer`: the best response, the root's view with its values), one more
  node.
* The report: ``cfr-agents report`` of a DCFR policy of each Leduc, alone and beside ``random``.

Writes ``<out>.md`` and ``<out>.json``.
"""

from __future__ import annotations

import contextlib
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.report import OneLineParser, Table, one_line_errors, progress, write_table_report

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""How the system's Chromium is launched (never a downloaded browser)."""
BIG_LEDUC = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=1 1,raiseSize=2 4,firstPlayer=1 1,"
    "maxRaises=3 2,numSuits=4,numRanks=13,numHoleCards=1,numBoardCards=0 1)"
)
"""A game of the compiled tree with 10^5 infosets (111,800)."""
MODELS = Path(__file__).resolve().parent.parent / "eval" / "opponents" / "models"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def serving(dirs: list[str], out: str | None) -> Iterator[str]:
    """``cfr-agents serve``'s app on a free local port, in a thread of this process; its address."""
    import uvicorn

    from cfr_agents.cli.web.app import Config, make_app

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(make_app(Config.of(dirs, out)), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    if not server.started:
        raise RuntimeError("the server did not start")
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def cli(*argv: str) -> str:
    result = subprocess.run([sys.executable, "-m", "cfr_agents", *argv], check=True, capture_output=True, text=True)
    return result.stdout


def render_times(url: str, loads: int = 5) -> tuple[float, float]:
    """The first load's time to the ready mark and the median of ``loads`` more, in seconds."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS), headless=True)
        page = browser.new_page()
        times = []
        for _ in range(loads + 1):
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_selector("body[data-ready=yes]")
            times.append(time.perf_counter() - started)
        browser.close()
    return times[0], statistics.median(times[1:])


def move_times(url: str, game: str, agent: str, moves: int) -> tuple[float, float, float]:
    """The first move's time, and the median and 95th percentile of ``moves`` more, in seconds."""
    import httpx

    with httpx.Client(base_url=url, timeout=120) as client:

        def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            response = client.post(path, json=body)
            response.raise_for_status()
            answer: dict[str, Any] = response.json()
            return answer

        started = post("api/play/new", {"game": game, "agent": agent, "seat": "alternate", "seed": 0})
        session, step = started["session"], started["step"]
        times: list[float] = []
        while len(times) <= moves:
            legal = [action for action, _ in step["view"]["legal"]]
            action = 1 if 1 in legal else legal[0]  # call or check
            began = time.perf_counter()
            step = post(f"api/play/{session}/move", {"action": action})
            times.append(time.perf_counter() - began)
        post(f"api/play/{session}/quit", {})
    rest = sorted(times[1:])
    return times[0], statistics.median(rest), rest[int(0.95 * (len(rest) - 1))]


OPEN_SCRIPT = """
import json, sys, time
started = time.perf_counter()
from cfr_agents.tree import load_tree
from eval.explore import open_explorer
from eval.match import Agents
imported = time.perf_counter()
load_tree(sys.argv[2])
tree = time.perf_counter()
agents = Agents()
agents.strategy(sys.argv[1], sys.argv[2])
policy = time.perf_counter()
explorer = open_explorer([sys.argv[1]], sys.argv[2], agents=agents)
explorer.view("")
opened = time.perf_counter()
explorer.view(explorer.view("")["moves"][0]["path"])
child = time.perf_counter()
print(json.dumps({"import": imported - started, "tree": tree - imported, "policy": policy - tree,
                  "explorer": opened - policy, "child": child - opened, "infosets": explorer.tree.num_infosets}))
"""
"""Times, in a new process: the imports, the tree from the tree cache, the policy file read into a strategy, the
explorer's own opening (the best response, the root's view with its values), and one more node."""


def explorer_times(folder: Path) -> dict[str, float]:
    """:data:`OPEN_SCRIPT` in a new process on a uniform policy of :data:`BIG_LEDUC`."""
    from cfr_agents.policy import Policy
    from cfr_agents.tree import load_tree

    policy = folder / "big-leduc-uniform.json"
    Policy.uniform(load_tree(BIG_LEDUC)).save(policy)
    result = subprocess.run(
        [sys.executable, "-c", OPEN_SCRIPT, str(policy), BIG_LEDUC], check=True, capture_output=True, text=True
    )
    times: dict[str, float] = json.loads(result.stdout)
    times["bytes"] = policy.stat().st_size
    return times


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=60, help="moves timed per agent (default 60)")
    parser.add_output(
        "--out", suffixes=(".md", ".json"), default=Path("benchmarks/results/web"), help="results: <out>.md, .json"
    )
    args = parser.parse(argv)
    rows: list[tuple[str, ...]] = []
    records: list[dict[str, object]] = []

    def row(what: str, measured: str, target: str, holds: bool, **record: object) -> None:
        rows.append((what, measured, target, "yes" if holds else "NO"))
        records.append({"what": what, "measured": measured, "target": target, "holds": holds, **record})

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        progress("training DCFR policies of both Leducs")
        policies = {}
        for game in ("openspiel:leduc_poker", "rlcard:leduc-holdem"):
            policies[game] = folder / f"{game.replace(':', '_')}.json"
            cli(
                "train",
                "--game",
                game,
                "--algo",
                "dcfr",
                "--iterations",
                "1000",
                "--quiet",
                "--out",
                str(policies[game]),
            )

        progress("reports")
        report = folder / "report.html"
        for game, path in policies.items():
            for vs in ([], ["--vs", "random"]):
                cli("report", str(path), *vs, "--out", str(report))
                size = report.stat().st_size
                shown = f"{game} report{' beside random' if vs else ''}"
                row(shown, f"{size / 1e6:.2f} MB", "<= 2 MB", size <= 2_000_000, bytes=size)
        first, median = render_times(report.as_uri())
        row(
            "report's first render (file://)",
            f"{first * 1000:.0f} ms, then {median * 1000:.0f} ms",
            "<= 1 s",
            first <= 1.0,
            first=first,
            median=median,
        )

        with serving([str(folder)], None) as url:
            progress("first page")
            first, median = render_times(url)
            row(
                "first page render (served)",
                f"{first * 1000:.0f} ms, then {median * 1000:.0f} ms",
                "<= 1 s",
                first <= 1.0,
                first=first,
                median=median,
            )
            agents = [
                ("DCFR policy file (tabular)", f"{folder.name}/openspiel_leduc_poker.json", 0.1),
                ("random (tabular)", "random", 0.1),
            ]
            with contextlib.suppress(ImportError):
                import torch  # noqa: F401

                agents += [
                    ("SD-CFR model (neural)", str(MODELS / "sd-cfr_leduc_poker.json"), 0.3),
                    ("Deep CFR model (neural)", str(MODELS / "deep-cfr_leduc_poker.json"), 0.3),
                ]
            for label, agent, target in agents:
                progress(f"moves against {label}")
                if agent.startswith("/"):
                    agent = f"{_served_copy(folder, Path(agent))}"
                first, median, tail = move_times(url, "openspiel:leduc_poker", agent, args.moves)
                row(
                    f"an agent's move: {label}",
                    f"median {median * 1000:.1f} ms, p95 {tail * 1000:.1f} ms (first {first * 1000:.0f} ms)",
                    f"<= {target * 1000:.0f} ms",
                    tail <= target,
                    first=first,
                    median=median,
                    p95=tail,
                )

        progress("the explorer on a policy of 10^5 infosets (the first run builds the tree: minutes)")
        times = explorer_times(folder)
        total = times["tree"] + times["policy"] + times["explorer"]
        row(
            f"explorer opens a {times['infosets']:,.0f}-infoset policy: all of it",
            f"{total:.2f} s (tree {times['tree']:.2f} s, policy file {times['policy']:.2f} s, explorer "
            f"{times['explorer']:.2f} s; + {times['import']:.2f} s of imports)",
            "<= 2 s",
            total <= 2.0,
            **times,
        )
        row(
            "the explorer's own part (best response, root with values)",
            f"{times['explorer']:.2f} s",
            "<= 2 s",
            times["explorer"] <= 2.0,
        )
        row("the next node", f"{times['child'] * 1000:.0f} ms", "-", True)

    table = Table("The browser side against its targets", ("what", "measured", "target", "holds"), tuple(rows))
    write_table_report(
        args.out, "Browser side: page, moves, explorer, report", "benchmarks.web", sys.argv[1:], table, records
    )
    return 0


def _served_copy(folder: Path, model: Path) -> str:
    """A shipped model's sidecar and weights copied into the served directory; its name there."""
    for suffix in (".json", ".safetensors"):
        (folder / model.with_suffix(suffix).name).write_bytes(model.with_suffix(suffix).read_bytes())
    return f"{folder.name}/{model.name}"


if __name__ == "__main__":
    sys.exit(main())
