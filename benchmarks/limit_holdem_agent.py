"""An abstraction-MCCFR agent of RLCard's limit hold'em against every RLCard agent, played in RLCard's env.

    python -m benchmarks.limit_holdem_agent --seconds 1500 --hands 20000 --out benchmarks/results/limit_holdem_agent

Builds the default card abstraction of ``rlcard:limit-holdem`` (lossless preflop, 200 E[HS^2] buckets a later
round; copied from the cache when built before), trains DCFR with external sampling through it for ``--seconds``
of solve time (``cfr-agents train --abstraction``), then plays ``--hands`` hands in duplicate pairs against each
opponent (``cfr-agents match``, seed 0). Values are in big blinds per hand. Every step is the command line's, run
as a subprocess, so the table is what a user gets from the same commands. Writes ``<out>.md`` and ``<out>.json``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import OneLineParser, Table, cfr_agents, one_line_errors, progress, write_table_report

GAME = "rlcard:limit-holdem"
OPPONENTS = ("random", "rlcard-limit-rule-v1", "always-call", "always-raise", "rlcard-dqn", "rlcard-nfsp")


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1500.0, help="solve time of the training run")
    parser.add_argument("--hands", type=int, default=20_000, help="hands of each match")
    parser.add_output("--out", suffixes=(".md", ".json"), required=True)
    args = parser.parse(argv)
    with tempfile.TemporaryDirectory() as folder:
        abstraction, agent = Path(folder) / "abstraction", Path(folder) / "agent.npz"
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "cfr_agents", "abstraction", "build", "--game", GAME, "--out", str(abstraction)],
            check=True,
            capture_output=True,
        )
        build_seconds = time.perf_counter() - started
        progress(f"abstraction in {build_seconds:.0f} s; training {args.seconds:g} s")
        trained = cfr_agents(
            "train", "--abstraction", str(abstraction), "--algo", "dcfr", "--time-limit", str(args.seconds),
            "--out", str(agent),
        )  # fmt: skip
        rows, records = [], []
        for opponent in OPPONENTS:
            progress(f"against {opponent}")
            started = time.perf_counter()
            match = cfr_agents(
                "match", str(agent), opponent, "--game", GAME, "--hands", str(args.hands), "--seed", "0", "--quiet"
            )
            seconds = time.perf_counter() - started
            low, high = match["ci95"]
            rows.append(
                (opponent, f"{match['mean']:+.3f}", f"{match['standard_error']:.3f}", f"[{low:+.3f}, {high:+.3f}]",
                 "yes" if low > 0 else "no", f"{seconds:.0f}")
            )  # fmt: skip
            records.append({"opponent": opponent, **match, "seconds": seconds})
    table = Table(
        f"DCFR through the default abstraction ({trained['iterations']:,} iterations, {trained['solve_seconds']:.0f} s)"
        f" against RLCard's agents, {args.hands:,} hands each, big blinds per hand",
        ("opponent", "mean", "standard error", "95% interval", "above 0", "seconds"),
        tuple(rows),
        (
            f"abstraction built (or copied from the cache) in {build_seconds:.0f} s; training at "
            f"{trained['iterations_per_second']:,.0f} it/s, peak {trained['peak_rss_mb']:,.0f} MB.",
            "Hands in duplicate pairs in RLCard's env, seats swapped; the agent samples from its own generator.",
        ),
    )
    records.insert(0, {"training": trained, "build_seconds": build_seconds})
    shown = sys.argv[1:] if argv is None else argv
    write_table_report(
        args.out, "Limit hold'em: an abstraction agent", "benchmarks.limit_holdem_agent", shown, table, records
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
