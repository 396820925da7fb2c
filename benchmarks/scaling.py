"""Scale-out yardstick: the same work with ``--workers 1``, ``--workers 2`` and a local ``--ray``.

    .venv/bin/python benchmarks/scaling.py [--hands 160000] [--jobs 8] [--iterations 25000000]

Two workloads, each run as a fresh ``cfr-agents`` process per executor and timed wall clock to wall
clock (imports, process pools or the Ray runtime included), each required to give the same results
whatever the executor:

* a 6-agent round robin on RLCard Leduc (``cfr-agents tournament``; 15 duplicate matches and 6 exact
  exploitabilities);
* a sweep of ``--jobs`` external-sampling runs on OpenSpiel Leduc (``cfr-agents sweep``).

Targets (issue 12): ``--workers 2`` at least 1.7x faster than ``--workers 1`` on the tournament; local
``--ray`` at most 20% slower than ``--workers 2`` on work that takes a minute or more. Writes
``benchmarks/results/scaling.md``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

from benchmarks.report import OneLineParser, Table, load_average, now, one_line_errors, verdict
from cfr_agents.files import write_atomic

RESULTS = Path(__file__).resolve().parent / "results"
EXECUTORS = (("--workers 1", ["--workers", "1"]), ("--workers 2", ["--workers", "2"]), ("--ray (local)", ["--ray"]))
TOURNAMENT_AGENTS = ("random", "rlcard-rule-v1", "rlcard-rule-v2", "rlcard-pretrained-cfr")


@dataclass(frozen=True)
class Timed:
    executor: str
    seconds: float
    results: str
    """What must not depend on the executor, serialised."""


def timed(command: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "cfr_agents", *command], capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"scaling: {' '.join(command[:2])} failed: {result.stderr.strip().splitlines()[-1:]}")
    return seconds, result.stdout


def tournament(directory: Path, name: str, extra: list[str], hands: int, policies: list[str]) -> Timed:
    out = directory / f"tournament-{''.join(filter(str.isalnum, name))}"
    seconds, _ = timed(
        [
            "tournament",
            "--game",
            "rlcard:leduc-holdem",
            *policies,
            *TOURNAMENT_AGENTS,
            "--hands",
            str(hands),
            "--seed",
            "0",
            "--out",
            str(out),
            "--quiet",
            *extra,
        ]
    )
    return Timed(name, seconds, (out / "results.json").read_text())


def sweep(directory: Path, name: str, extra: list[str], jobs: int, iterations: int) -> Timed:
    out = directory / f"sweep-{''.join(filter(str.isalnum, name))}"  # a fresh directory: no finished jobs to reuse
    seconds, stdout = timed(
        [
            "sweep",
            "--game",
            "openspiel:leduc_poker",
            "--algo",
            "cfr",
            "--sampling",
            "external",
            "--grid",
            "averaging=simple",
            "--seeds",
            f"0-{jobs - 1}",
            "--iterations",
            str(iterations),
            "--out",
            str(out),
            "--json",
            *extra,
        ]
    )
    report = json.loads(stdout.strip().splitlines()[-1])
    kept = {key: (job["iterations"], job["nash_conv"]) for key, job in report["jobs"].items()}
    return Timed(name, seconds, json.dumps(kept, sort_keys=True))


def policies(directory: Path) -> list[str]:
    """Two of our policies for the round robin: DCFR and external-sampling MCCFR on RLCard Leduc."""
    files = []
    for algo, sampling, iterations in (("dcfr", "none", "2000"), ("cfr", "external", "2000000")):
        path = directory / f"{algo}-{sampling}.json"
        timed(
            [
                "train",
                "--game",
                "rlcard:leduc-holdem",
                "--algo",
                algo,
                "--sampling",
                sampling,
                "--iterations",
                iterations,
                "--out",
                str(path),
                "--quiet",
            ]
        )
        files.append(str(path))
    return files


def table(title: str, runs: list[Timed], work: str) -> tuple[Table, float, float]:
    one, two, ray = runs
    speedup = one.seconds / two.seconds
    overhead = ray.seconds / two.seconds - 1
    same = len({run.results for run in runs}) == 1
    rows = tuple((run.executor, f"{run.seconds:.1f}") for run in runs)
    notes = (
        f"Work: {work}.",
        f"Identical results across the three executors: {'yes' if same else 'NO'}.",
        f"--workers 2 over --workers 1: {speedup:.2f}x; local --ray over --workers 2: {overhead:+.1%}.",
    )
    if not same:
        raise SystemExit(f"scaling: {title}: the executors gave different results")
    return Table(title, ("executor", "wall seconds"), rows, notes), speedup, overhead


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=160_000, help="hands per tournament match (default 160,000)")
    parser.add_argument("--jobs", type=int, default=8, help="sweep jobs (default 8)")
    parser.add_argument("--iterations", type=int, default=25_000_000, help="iterations per sweep job (default 25M)")
    parser.add_output("--out", default=RESULTS / "scaling.md", help="report file")
    args = parser.parse(argv)
    if args.hands < 4 or args.hands % 2 or args.jobs < 2 or args.iterations < 1:
        parser.error("--hands must be even and at least 4, --jobs at least 2, --iterations positive")
    load = load_average()
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as name:
        directory = Path(name)
        ours = policies(directory)
        tournaments = [tournament(directory, label, extra, args.hands, ours) for label, extra in EXECUTORS]
        sweeps = [sweep(directory, label, extra, args.jobs, args.iterations) for label, extra in EXECUTORS]
    work = (
        f"a 6-agent round robin on RLCard Leduc (our DCFR and MCCFR policies, {', '.join(TOURNAMENT_AGENTS)}), "
        f"{args.hands:,} hands per match"
    )
    first, speedup, tournament_overhead = table("Tournament", tournaments, work)
    second, sweep_speedup, overhead = table(
        "Sweep", sweeps, f"{args.jobs} external-sampling runs of {args.iterations:,} iterations on OpenSpiel Leduc"
    )
    long_enough = tournaments[1].seconds >= 60 or sweeps[1].seconds >= 60
    minute_overhead = overhead if sweeps[1].seconds >= 60 else tournament_overhead
    targets = Table(
        "Targets",
        ("target", "measured", "verdict"),
        (
            (
                "--workers 2 over --workers 1 on the 6-agent tournament, at least 1.7x",
                f"{speedup:.2f}x",
                verdict(speedup >= 1.7),
            ),
            (
                "local --ray over --workers 2 on a minute or more of work, at most +20%",
                f"{minute_overhead:+.1%}",
                verdict(minute_overhead <= 0.2 and long_enough),
            ),
        ),
        (f"The sweep's --workers 2 over --workers 1: {sweep_speedup:.2f}x.",),
    )
    report = "\n".join(
        [
            "# Scale-out: one workload, three executors",
            "",
            f"- Date: {now()}",
            "- Command: `.venv/bin/python benchmarks/scaling.py`",
            f"- Load average at the start (1, 5, 15 min): {load}",
            "",
            first.markdown(),
            second.markdown(),
            targets.markdown(),
        ]
    )
    print(first.text() + second.text() + targets.text(), end="")
    write_atomic(args.out, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
