"""Hands per second in RLCard's env: our policy agent, RLCard's own agents, and local workers.

    .venv/bin/python benchmarks/matches.py [--hands 100000] [--out benchmarks/results/matches.md]

* **Per core:** duplicate matches of our DCFR policy's RLCard agent (``policy.rlcard_agent()``) against
  itself and against RLCard's ``RandomAgent``, in one process, timed by wall clock and by the process's CPU
  time (hands per CPU-second is hands per second per core, whatever else the machine runs). RLCard's own
  ``env.run`` with two ``RandomAgent``\\ s is measured beside them as the yardstick.
* **Workers:** the same set of match jobs (policy file against ``random``, as ``cfr-agents tournament``
  sends them) on ``--workers 1`` and ``--workers 2``; the ratio of their hands per second, and the check
  that both give the same results. Each process pays a fixed start-up cost once (imports, the compiled
  tree, one walk of the game for exact strategies); the table reports it beside the throughput.

Target (issue 10): at least 10,000 hands/s per core for our policy agent.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import rlcard
from rlcard.agents import RandomAgent

from benchmarks.report import OneLineParser, one_line_errors
from cfr_agents import make_solver
from cfr_agents.files import write_atomic
from cfr_agents.jobs import LocalPool
from cfr_agents.tree import load_tree
from eval.environments import play_rlcard_match
from eval.match import MatchReport, MatchSpec
from eval.tournament import run_job

GAME = "rlcard:leduc-holdem"
TARGET = 10_000


def timed(play: Callable[[], int]) -> tuple[int, float, float]:
    """(hands, wall seconds, CPU seconds of this process)."""
    wall, cpu = time.perf_counter(), time.process_time()
    hands = play()
    return hands, time.perf_counter() - wall, time.process_time() - cpu


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description="hands per second in RLCard's env")
    parser.add_argument("--hands", type=int, default=100_000, help="hands per single-process measurement")
    parser.add_argument("--jobs", type=int, default=8, help="match jobs for the workers comparison")
    parser.add_argument("--job-hands", type=int, default=50_000, help="hands per match job (default 50,000)")
    parser.add_output("--out", default=Path("benchmarks/results/matches.md"))
    args = parser.parse(argv)
    load = os.getloadavg()[0]
    tree = load_tree(GAME)
    solver = make_solver(tree, "dcfr")
    solver.run(1000)
    policy = solver.average_policy()
    pairs = args.hands // 2
    rows: list[tuple[str, int, float, float]] = []

    def ours_vs_ours() -> int:
        a, b = policy.rlcard_agent(seed=1), policy.rlcard_agent(seed=2)
        return play_rlcard_match(GAME, a, b, pairs, np.random.default_rng(3)).hands

    def ours_vs_random() -> int:
        np.random.seed(0)
        a, b = policy.rlcard_agent(seed=1), RandomAgent(num_actions=4)
        return play_rlcard_match(GAME, a, b, pairs, np.random.default_rng(3)).hands

    def rlcard_random() -> int:
        np.random.seed(0)
        env = rlcard.make("leduc-holdem", config={"seed": 0})
        env.set_agents([RandomAgent(num_actions=4), RandomAgent(num_actions=4)])
        for _ in range(args.hands):
            env.run(is_training=False)
        return int(args.hands)

    for label, play in (
        ("our policy agent vs itself (duplicate match)", ours_vs_ours),
        ("our policy agent vs RLCard RandomAgent (duplicate match)", ours_vs_random),
        ("RLCard env.run, RandomAgent vs RandomAgent (yardstick)", rlcard_random),
    ):
        hands, wall, cpu = timed(play)
        rows.append((label, hands, hands / wall, hands / cpu))
        print(f"{label}: {hands / wall:,.0f} hands/s wall, {hands / cpu:,.0f} hands per CPU-second", file=sys.stderr)

    with tempfile.TemporaryDirectory(prefix="bench-matches-") as directory:
        path = Path(directory) / "dcfr.json"
        policy.save(path)
        per_job = max(4, 2 * (args.job_hands // 2))
        specs = [MatchSpec(GAME, (str(path), "random"), per_job, 0, spawn_key=(k,)) for k in range(args.jobs)]
        workers: dict[int, tuple[float, list[MatchReport]]] = {}
        tiny = [MatchSpec(GAME, (str(path), "random"), 4, 0, spawn_key=(k,)) for k in range(2)]
        started = time.perf_counter()
        LocalPool(2).map(run_job, tiny)
        startup = time.perf_counter() - started
        for count in (1, 2):
            started = time.perf_counter()
            results = LocalPool(count).map(run_job, specs)
            workers[count] = (time.perf_counter() - started, [r for r in results if isinstance(r, MatchReport)])
            print(f"--workers {count}: {len(specs) * per_job / workers[count][0]:,.0f} hands/s", file=sys.stderr)
    total = len(specs) * per_job
    one, two = (total / workers[k][0] for k in (1, 2))
    same = workers[1][1] == workers[2][1]

    ours_cpu = min(rows[0][3], rows[1][3])
    lines = [
        f"Hands per second in RLCard's env (rlcard:leduc-holdem), `benchmarks/matches.py --hands {args.hands}`; "
        f"{os.cpu_count()} cores, load average {load:.1f} at the start (other jobs share the machine: "
        "per-core figures divide by this process's CPU time).",
        "",
        "| what | hands | hands/s (wall) | hands per CPU-second (per core) |",
        "|---|---:|---:|---:|",
        *(f"| {label} | {hands:,} | {wall:,.0f} | {cpu:,.0f} |" for label, hands, wall, cpu in rows),
        "",
        f"| workers ({args.jobs} match jobs of {per_job:,} hands: policy file vs `random`, as a tournament sends them) "
        "| seconds | hands/s |",
        "|---|---:|---:|",
        f"| `--workers 1` | {workers[1][0]:.1f} | {one:,.0f} |",
        f"| `--workers 2` | {workers[2][0]:.1f} | {two:,.0f} |",
        "",
        f"Start-up of a 2-worker pool (two 4-hand jobs, each worker builds its tree and agents): {startup:.1f} s.",
        "",
        "| target | measured | verdict |",
        "|---|---|---|",
        f"| our policy agent, at least {TARGET:,} hands/s per core | {ours_cpu:,.0f} hands per CPU-second "
        f"| {'pass' if ours_cpu >= TARGET else 'FAIL'} |",
        f"| `--workers 2` / `--workers 1` | {two / one:.2f}x | {'same results' if same else 'RESULTS DIFFER'} |",
    ]
    text = "\n".join(lines) + "\n"
    write_atomic(args.out, text)
    print(text)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
