"""Scale-out MCCFR on RLCard's limit hold'em: N workers for T seconds against one process for N*T seconds.

    python -m benchmarks.scale_out --seconds 330 --workers 2 --hands 20000 --out benchmarks/results/scale_out

Builds the default card abstraction of ``rlcard:limit-holdem`` (copied from the cache when built before), then trains
DCFR with external sampling through it twice, each a ``cfr-agents train --abstraction`` subprocess: in synchronous
rounds of ``--batches`` batches of ``--batch-iterations`` iterations on ``--workers`` local processes for
``--seconds`` of solve time, and in one process for ``--workers`` times as long -- the same CPU time. Each run's
iterations per second (a round counts its B x M iterations) and the peak memory of its processes together (the sum of
their proportional set sizes, sampled each second) are recorded. Both agents then play ``--hands`` hands in duplicate
pairs in RLCard's env against ``rlcard-limit-rule-v1`` and against each other (``cfr-agents match``, seed 0), values
in big blinds per hand. The machine's load average is recorded before and after each run: other work shares its
cores. To tell what the machine gives, ``--calibration`` seconds of one-process training run first alone, then
``--workers`` of them side by side: their summed rate over the lone one is the cores this work had.
Writes ``<out>.md`` and ``<out>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks.report import OneLineParser, Table, cfr_agents, one_line_errors, progress, write_table_report

GAME = "rlcard:limit-holdem"
OPPONENT = "rlcard-limit-rule-v1"


def load() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def train(*argv: str) -> tuple[dict[str, Any], float]:
    """``cfr-agents train argv --json``'s object, and the peak of its processes' summed PSS in MB."""
    command = [sys.executable, "-m", "cfr_agents", "train", *argv, "--json", "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    root, peak = psutil.Process(process.pid), 0.0
    while process.poll() is None:
        total = 0
        try:
            for member in (root, *root.children(recursive=True)):
                total += member.memory_full_info().pss
        except psutil.Error:
            pass  # a process ended while it was read
        peak = max(peak, total / 2**20)
        time.sleep(1.0)
    out, err = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"train failed: {err.strip()}")
    result: dict[str, Any] = json.loads(out)
    return result, peak


def _value(match: dict[str, Any]) -> str:
    low, high = match["ci95"]
    return f"{match['mean']:+.3f} [{low:+.3f}, {high:+.3f}]"


def side_by_side(runs: int, folder: Path, *argv: str) -> list[float]:
    """Iterations per second of ``runs`` one-process trainings ``argv`` started together."""
    command = [sys.executable, "-m", "cfr_agents", "train", *argv, "--json", "--quiet", "--out"]
    processes = [
        subprocess.Popen([*command, str(folder / f"side{run}.npz")], stdout=subprocess.PIPE, text=True)
        for run in range(runs)
    ]
    return [float(json.loads(process.communicate()[0])["iterations_per_second"]) for process in processes]


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=330.0, help="solve time of the scale-out run (T)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes of the scale-out run (N)")
    parser.add_argument("--batches", type=int, default=4, help="batches a round (B)")
    parser.add_argument("--batch-iterations", type=int, default=5000, help="iterations a batch (M)")
    parser.add_argument("--hands", type=int, default=20_000, help="hands of each match")
    parser.add_argument("--calibration", type=float, default=30.0, help="seconds of each calibration run")
    parser.add_output("--out", suffixes=(".md", ".json"), required=True)
    args = parser.parse(argv)
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        abstraction = Path(folder) / "abstraction"
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "cfr_agents", "abstraction", "build", "--game", GAME, "--out", str(abstraction)],
            check=True,
            capture_output=True,
        )
        progress(f"abstraction in {time.perf_counter() - started:.0f} s")
        common = ("--abstraction", str(abstraction), "--algo", "dcfr", "--seed", "0")
        calibration = (*common, "--time-limit", str(args.calibration))
        progress(f"calibration: one process alone, then {args.workers} side by side (load {load()})")
        alone = side_by_side(1, Path(folder), *calibration)
        together = side_by_side(args.workers, Path(folder), *calibration)
        records.append({"calibration_alone": alone, "calibration_side_by_side": together, "load_after": load()})
        rounds = ("--batches", str(args.batches), "--batch-iterations", str(args.batch_iterations))
        runs = {
            "scale-out": (args.workers, args.seconds, ("--workers", str(args.workers), *rounds)),
            "one process": (1, args.workers * args.seconds, ()),
        }
        agents = {}
        for name, (workers, seconds, options) in runs.items():
            agent = Path(folder) / f"{name.replace(' ', '-')}.npz"
            progress(f"{name}: {workers} worker(s) for {seconds:g} s (load {load()})")
            before = load()
            trained, peak = train(*common, *options, "--time-limit", str(seconds), "--out", str(agent))
            per_step = args.batches * args.batch_iterations if options else 1
            iterations = trained["iterations"] * per_step
            records.append(
                {
                    "run": name,
                    "workers": workers,
                    "seconds": seconds,
                    "rounds": trained["iterations"] if options else None,
                    "iterations": iterations,
                    "iterations_per_second": iterations / trained["solve_seconds"],
                    "peak_pss_mb": peak,
                    "load_before": before,
                    "load_after": load(),
                    "training": trained,
                }
            )
            agents[name] = agent
        matches = [(name, OPPONENT) for name in runs] + [("scale-out", "one process")]
        for first, second in matches:
            progress(f"{first} against {second}")
            opponent = str(agents[second]) if second in agents else second
            match = cfr_agents(
                "match", str(agents[first]), opponent, "--game", GAME, "--hands", str(args.hands), "--seed", "0",
                "--quiet",
            )  # fmt: skip
            records.append({"match": f"{first} vs {second}", **match})
    against = {r["match"].split(" vs ")[0]: r for r in records if r.get("match", "").endswith(OPPONENT)}
    head = next(r for r in records if r.get("match") == "scale-out vs one process")
    table = Table(
        f"DCFR through the default abstraction: {args.workers} workers for {args.seconds:g} s against one process "
        f"for {args.workers * args.seconds:g} s",
        ("run", "iterations", "it/s", "rounds", "peak memory (MB)", f"vs {OPPONENT} (BB/hand)", "load before, after"),
        tuple(
            (
                r["run"],
                f"{r['iterations']:,}",
                f"{r['iterations_per_second']:,.0f}",
                "-" if r["rounds"] is None else f"{r['rounds']:,} of {args.batches} x {args.batch_iterations:,}",
                f"{r['peak_pss_mb']:,.0f}",
                _value(against[r["run"]]),
                f"{r['load_before']}; {r['load_after']}",
            )
            for r in records
            if "run" in r
        ),
        (
            f"Scale-out against one process: {_value(head)} BB/hand.",
            f"Calibration ({args.calibration:g} s runs of one process): alone {alone[0]:,.0f} it/s; {args.workers} "
            f"side by side {' + '.join(f'{rate:,.0f}' for rate in together)} = {sum(together):,.0f} it/s: this work "
            f"had {sum(together) / alone[0]:.2f} times one process's share of the machine at a time.",
            f"Matches: {args.hands:,} hands each, in duplicate pairs in RLCard's env, seats swapped; 95% intervals.",
            "Peak memory: the run's processes together (proportional set sizes: shared pages count once).",
            "Load average (1, 5, 15 min) before and after each run: other work shares the machine's cores.",
        ),
    )
    shown = sys.argv[1:] if argv is None else argv
    write_table_report(args.out, "Scale-out MCCFR on limit hold'em", "benchmarks.scale_out", shown, table, records)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
