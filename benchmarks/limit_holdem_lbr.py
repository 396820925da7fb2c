"""Local best response against every RLCard limit hold'em agent and an abstraction-MCCFR agent of ours.

    cfr-agents abstraction build --game rlcard:limit-holdem --out agent/abstraction
    cfr-agents train --abstraction agent/abstraction --algo dcfr --time-limit 1500 --seed 0 --out agent/agent.npz
    python -m benchmarks.limit_holdem_lbr --agent agent/agent.npz --hands 20000 --network-hands 1000 \
        --out benchmarks/results/limit_holdem_lbr

LBR (``cfr-agents lbr``, sampled on the hold'em engine: no public tree of ``rlcard:limit-holdem`` fits a machine)
plays ``--hands`` hands in duplicate pairs against each agent (``--network-hands`` against RLCard's DQN and NFSP,
whose networks it asks once per hand of the range at each public node), in both seats, with seed 0, two worker
processes and the command's default ``--call-until``. Its mean is a lower bound on the agent's exploitability, in big
blinds per hand and mbb/hand. Every step is the command line's, run as a subprocess. Writes ``<out>.md`` and
``<out>.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from benchmarks.limit_holdem_agent import GAME, OPPONENTS
from benchmarks.report import OneLineParser, Table, cfr_agents, one_line_errors, progress, write_table_report

NETWORKS = ("rlcard-dqn", "rlcard-nfsp")


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", type=Path, required=True, help="our agent: an abstract strategy of the game")
    parser.add_argument("--hands", type=int, default=20_000, help="LBR hands against each agent")
    parser.add_argument("--network-hands", type=int, default=1_000, help="LBR hands against RLCard's DQN and NFSP")
    parser.add_output("--out", suffixes=(".md", ".json"), required=True)
    args = parser.parse(argv)
    rows, records = [], []
    for name in (str(args.agent), *OPPONENTS):
        progress(f"LBR against {name}")
        started = time.perf_counter()
        hands = args.network_hands if name in NETWORKS else args.hands
        found = cfr_agents(
            "lbr", name, "--game", GAME, "--hands", str(hands), "--seed", "0", "--workers", "2", "--quiet"
        )
        seconds = time.perf_counter() - started
        low, high = found["ci95"]
        shown = "ours: " + args.agent.name if name == str(args.agent) else name
        rows.append(
            (shown, f"{hands:,}", f"{found['value']:+.3f}", f"{found['standard_error']:.3f}",
             f"[{low:+.3f}, {high:+.3f}]", f"{found['value_mbb']:+.0f}", f"{seconds:.0f}")
        )  # fmt: skip
        records.append({"agent": name, **found, "seconds": seconds})
    ours, theirs = records[0]["value"], [record["value"] for record in records[1:]]
    least = min(theirs)
    table = Table(
        f"LBR on {GAME}, hands in duplicate pairs, big blinds per hand",
        ("agent", "hands", "LBR", "standard error", "95% interval", "mbb/hand", "seconds"),
        tuple(rows),
        (
            f"Ours over the least exploitable RLCard agent's ({OPPONENTS[theirs.index(least)]}): "
            f"{ours / least:.3f} of it (target: at most 0.2)."
            if least > 0
            else "No RLCard agent loses to LBR.",
            "LBR's mean is a lower bound on each agent's exploitability; its interval is the sampling error's.",
        ),
    )
    write_table_report(
        args.out, "Limit hold'em: local best response", "benchmarks.limit_holdem_lbr", sys.argv[1:] if argv is None
        else argv, table, records,
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
