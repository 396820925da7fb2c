"""LBR's last round played and in expectation, on the same seeds: what `lbr --last-round` changes against one agent.

    python -m benchmarks.lbr_last_round --agent agent.npz --game rlcard:limit-holdem --pairs 10000 --seed 11 \\
        --out benchmarks/results/lbr_last_round

LBR (:func:`eval.lbr_sampled.pair_values`, calling preflop) plays ``--pairs`` duplicate pairs against the agent once
per mode of :data:`eval.lbr_sampled.LAST_ROUND`, pair ``i`` from its own seed in every mode: the deals and
everything before the last round are the same, so each mode's difference from ``sampled`` is measured pair by pair.
``expected`` and ``over-range`` are unbiased, so that difference has mean 0; its interval is the check. The ratio of
the variances per pair is how many times fewer hands a mode needs than ``sampled`` for the same interval.
"""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.endgame_play import lbr_values, prepared
from benchmarks.report import OneLineParser, at_least, interval, mbb_summary, one_line_errors
from cfr_agents.files import write_atomic
from eval.lbr_sampled import LAST_ROUND


@one_line_errors
def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", required=True, help="an agent file (or name) of the game")
    parser.add_argument("--game", default="rlcard:limit-holdem")
    parser.add_argument("--pairs", type=at_least(2), default=10_000, help="duplicate pairs in each mode")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_output("--out", suffixes=(".json", ".md"), default=Path("benchmarks/results/lbr_last_round"))
    args = parser.parse(argv)
    agent_files = (Path(args.agent), Path(args.agent).with_suffix(".json"))
    parser.refuse_overwriting(args, agent_files, f"the agent's file {args.agent}")
    engine, agent, tables = prepared(args.agent, args.game)
    scale = 1000.0 / (engine.payoff_scale * engine.rules.big_blind)  # the game's units -> mbb
    seeds = np.random.SeedSequence(args.seed).spawn(args.pairs)
    values: dict[str, np.ndarray] = {}
    rows: list[dict[str, Any]] = []
    for mode in LAST_ROUND:
        began = time.perf_counter()
        values[mode] = lbr_values(engine, agent, seeds, tables, mode) * scale
        row: dict[str, Any] = {"last_round": mode, "seconds": time.perf_counter() - began}
        row |= mbb_summary("lbr", values[mode])
        if mode != "sampled":
            row |= mbb_summary("minus_sampled", values[mode] - values["sampled"])
            row["hands_needed_ratio"] = float(values["sampled"].var(ddof=1) / values[mode].var(ddof=1))
        rows.append(row)
    result = {
        "game": args.game,
        "agent": args.agent,
        "pairs": args.pairs,
        "seed": args.seed,
        "rows": rows,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    lines = report(result)
    print("\n".join(lines))
    write_atomic(args.out.with_suffix(".json"), json.dumps(result, indent=1) + "\n")
    write_atomic(args.out.with_suffix(".md"), "\n".join(lines) + "\n")


def report(result: dict[str, Any]) -> list[str]:
    """The Markdown table of :func:`main`'s result."""
    lines = [
        f"LBR against `{Path(result['agent']).name}` on `{result['game']}`, {result['pairs']:,} duplicate pairs of "
        f"the same seeds (seed {result['seed']}) in each mode, mbb a hand, 95% intervals:",
        "",
        "| `--last-round` | LBR | minus `sampled`, pair by pair | hands needed, `sampled` / mode | play |",
        "|---|---|---|---|---|",
    ]
    for row in result["rows"]:
        lbr = interval(row["lbr_mbb"], row["lbr_se_mbb"])
        change = interval(row["minus_sampled_mbb"], row["minus_sampled_se_mbb"]) if "minus_sampled_mbb" in row else "--"
        ratio = f"{row['hands_needed_ratio']:.2f}" if "hands_needed_ratio" in row else "--"
        lines.append(f"| `{row['last_round']}` | {lbr} | {change} | {ratio} | {row['seconds']:.0f} s |")
    return lines


if __name__ == "__main__":
    main()
