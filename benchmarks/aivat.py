"""AIVAT against plain and duplicate Monte Carlo: the variance per hand of each estimate of a match's value.

    python -m benchmarks.aivat [--hands 20000] [--iterations 1000] [--seed 0] --out benchmarks/results/aivat
    python -m benchmarks.aivat --holdem-agent AGENT [--hands 20000] [--opponents random,rlcard-nfsp] \
        --out benchmarks/results/aivat_holdem

On Leduc (``openspiel:leduc_poker`` and ``rlcard:leduc-holdem``) a CFR+ policy is trained with
``cfr-agents train --algo cfr+`` and plays a few shipped opponents (``cfr-agents opponents --game G``) in
``--hands`` hands of duplicate pairs, every hand scored by AIVAT (:mod:`eval.aivat`) with the policy's strategy
the known one. From the same hands, the variance per hand of four estimates of the policy's payoff:

* plain: one hand's payoff :math:`u` (the sample variance over all hands, seats mixed as a match mixes them);
* duplicate: the pair's mean payoff, :math:`2\\,\\mathrm{Var}((u_0 + u_1) / 2)` per hand;
* AIVAT: one hand's AIVAT value :math:`\\hat u`;
* AIVAT on duplicate pairs: :math:`2\\,\\mathrm{Var}((\\hat u_0 + \\hat u_1) / 2)` per hand.

With ``--holdem-agent``, the agent (a limit hold'em strategy of ``rlcard:limit-holdem``) plays RLCard's agents of
the registry instead, every hand scored by AIVAT on the hold'em engine (:mod:`eval.aivat_holdem`).

The hands needed for an interval of a given width grow with the variance per hand, so the ratio of two
variances is the ratio of the hands the two estimates need for the same interval. Each ratio to AIVAT on
duplicate pairs carries a 95% bootstrap interval (pairs resampled). Writes ``<out>.md`` and ``<out>.json``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from benchmarks.report import OneLineParser, Table, one_line_errors, progress, write_table_report
from eval.match import Agents, MatchSpec, play_scored

OPPONENTS = {
    "openspiel:leduc_poker": ("random", "openspiel-cfr+:30", "openspiel-mccfr-os:20000"),
    "rlcard:leduc-holdem": ("random", "rlcard-rule-v1", "rlcard-pretrained-cfr"),
}
"""Shipped opponents of each game (``cfr-agents opponents --game G``)."""
LIMIT_HOLDEM = "rlcard:limit-holdem"
HOLDEM_OPPONENTS = ("random", "rlcard-limit-rule-v1", "always-call", "always-raise", "rlcard-dqn", "rlcard-nfsp")
"""RLCard's agents of limit hold'em in the registry, the agent's opponents with ``--holdem-agent``."""
BOOTSTRAP = 400
"""Resamples of the pairs for the ratios' intervals."""


def train(game_id: str, iterations: int, folder: Path) -> str:
    """A CFR+ policy file of ``game_id``, trained by ``cfr-agents train``."""
    path = folder / f"{game_id.replace(':', '_')}-cfr+-{iterations}.json"
    command = ["train", "--game", game_id, "--algo", "cfr+", "--iterations", str(iterations), "--out", str(path)]
    subprocess.run(
        [sys.executable, "-m", "cfr_agents", *command, "--quiet"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return str(path)


def variances(payoffs: NDArray[np.float64], values: NDArray[np.float64]) -> dict[str, float]:
    """The variance per hand of the four estimates, from the hands in order (pairs: hands 2k and 2k + 1)."""
    return {
        "plain": float(payoffs.var(ddof=1)),
        "duplicate": 2 * float(payoffs.reshape(-1, 2).mean(axis=1).var(ddof=1)),
        "aivat": float(values.var(ddof=1)),
        "aivat_duplicate": 2 * float(values.reshape(-1, 2).mean(axis=1).var(ddof=1)),
    }


def ratio_intervals(
    payoffs: NDArray[np.float64], values: NDArray[np.float64], rng: np.random.Generator
) -> dict[str, tuple[float, float]]:
    """95% bootstrap intervals of plain / AIVAT-duplicate and duplicate / AIVAT-duplicate, pairs resampled."""
    pairs = payoffs.shape[0] // 2
    u, v = payoffs.reshape(pairs, 2), values.reshape(pairs, 2)
    plain, duplicate = [], []
    for _ in range(BOOTSTRAP):
        chosen = rng.integers(pairs, size=pairs)
        taken = variances(u[chosen].ravel(), v[chosen].ravel())
        plain.append(taken["plain"] / taken["aivat_duplicate"])
        duplicate.append(taken["duplicate"] / taken["aivat_duplicate"])
    return {
        "plain": (float(np.quantile(plain, 0.025)), float(np.quantile(plain, 0.975))),
        "duplicate": (float(np.quantile(duplicate, 0.025)), float(np.quantile(duplicate, 0.975))),
    }


def measure(
    spec: MatchSpec, label: str, agents: Agents, rng: np.random.Generator
) -> tuple[dict[str, object], tuple[str, ...]]:
    """Play ``spec`` with AIVAT and every hand kept; its record for ``<out>.json`` and its row of the table."""
    started = time.perf_counter()
    report, recorder = play_scored(spec, agents, keep_hands=True)
    seconds = time.perf_counter() - started
    assert recorder is not None and recorder.payoffs is not None and report.aivat is not None
    aivat = report.aivat  # before the values: a hold'em recorder values its hands when asked for the estimate
    assert recorder.values is not None
    payoffs, values = np.array(recorder.payoffs), np.array(recorder.values)
    spread = variances(payoffs, values)
    intervals = ratio_intervals(payoffs, values, rng)
    ratios = {
        "plain_over_aivat": spread["plain"] / spread["aivat"],
        "plain_over_aivat_duplicate": spread["plain"] / spread["aivat_duplicate"],
        "duplicate_over_aivat_duplicate": spread["duplicate"] / spread["aivat_duplicate"],
    }
    record = {
        "game": spec.game_id,
        "agents": [label, spec.agents[1]],
        "hands": report.hands,
        "seed": spec.seed,
        "units": report.units,
        "exact": report.exact,
        "duplicate": {"mean": report.mean, "standard_error": report.standard_error},
        "aivat": {"mean": aivat.mean, "standard_error": aivat.standard_error, "known": aivat.known},
        "variance_per_hand": spread,
        "hands_needed_ratio": ratios,
        "ratio_ci95": {
            "plain_over_aivat_duplicate": intervals["plain"],
            "duplicate_over_aivat_duplicate": intervals["duplicate"],
        },
        "seconds": seconds,
    }
    low_p, high_p = intervals["plain"]
    low_d, high_d = intervals["duplicate"]
    row = (
        spec.game_id,
        spec.agents[1],
        "n/a" if report.exact is None else f"{report.exact:+.4f}",
        f"{report.mean:+.4f} ± {report.standard_error:.4f}",
        f"{aivat.mean:+.4f} ± {aivat.standard_error:.4f}",
        f"{spread['plain']:.3f}",
        f"{spread['duplicate']:.3f}",
        f"{spread['aivat']:.3f}",
        f"{spread['aivat_duplicate']:.3f}",
        f"{ratios['plain_over_aivat']:.1f}",
        f"{ratios['plain_over_aivat_duplicate']:.1f} [{low_p:.1f}, {high_p:.1f}]",
        f"{ratios['duplicate_over_aivat_duplicate']:.2f} [{low_d:.2f}, {high_d:.2f}]",
    )
    return record, row


COLUMNS = (
    "game", "opponent", "exact", "duplicate mean ± SE", "AIVAT (pairs) mean ± SE", "plain", "duplicate", "AIVAT",
    "AIVAT pairs", "plain / AIVAT", "plain / AIVAT pairs", "duplicate / AIVAT pairs",
)  # fmt: skip
NOTE = (
    "plain, duplicate, AIVAT, AIVAT pairs: the variance per hand of each estimate from the same hands. The ratios are "
    "the hands each estimate needs for the same interval, as a multiple of the hands the second needs; in brackets, "
    "a 95% bootstrap interval (pairs resampled)."
)


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=20_000)
    parser.add_argument("--iterations", type=int, default=1000, help="CFR+ iterations of our policy")
    parser.add_argument("--holdem-agent", help="measure on rlcard:limit-holdem with this agent instead of on Leduc")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--opponents",
        type=lambda text: text.split(","),
        default=list(HOLDEM_OPPONENTS),
        help="with --holdem-agent: these of the opponents, comma-separated (each keeps its seed)",
    )
    parser.add_output("--out", suffixes=(".md", ".json"), required=True)
    args = parser.parse(argv)
    unknown = sorted(set(args.opponents) - set(HOLDEM_OPPONENTS))
    if unknown:
        parser.error(f"--opponents: {', '.join(unknown)} not among {', '.join(HOLDEM_OPPONENTS)}")
    rng = np.random.default_rng(args.seed)
    rows, records = [], []
    agents = Agents()
    shown = sys.argv[1:] if argv is None else argv
    if args.holdem_agent is not None:
        for index, opponent in enumerate(HOLDEM_OPPONENTS):
            if opponent not in args.opponents:
                continue
            progress(f"{LIMIT_HOLDEM}: {args.holdem_agent} against {opponent}, {args.hands:,} hands")
            spec = MatchSpec(LIMIT_HOLDEM, (args.holdem_agent, opponent), args.hands, args.seed + index, aivat=True)
            record, row = measure(spec, args.holdem_agent, agents, rng)
            records.append(record)
            rows.append(row)
        title = f"Variance per hand on {LIMIT_HOLDEM}, {args.holdem_agent} against RLCard's agents"
        notes = (f"Values in big blinds per hand, the agent's payoff. {NOTE}",)
        table = Table(f"{title}, {args.hands:,} hands each", COLUMNS, tuple(rows), notes)
        write_table_report(args.out, "AIVAT on limit hold'em", "benchmarks.aivat", shown, table, records)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        for game_id, opponents in OPPONENTS.items():
            progress(f"{game_id}: training CFR+ for {args.iterations} iterations")
            ours = train(game_id, args.iterations, Path(folder))
            for index, opponent in enumerate(opponents):
                progress(f"{game_id}: CFR+ against {opponent}, {args.hands:,} hands")
                spec = MatchSpec(game_id, (ours, opponent), args.hands, args.seed + index, aivat=True)
                record, row = measure(spec, f"cfr+ {args.iterations}", agents, rng)
                records.append(record)
                rows.append(row)
    table = Table(
        f"Variance per hand on Leduc, CFR+ ({args.iterations} iterations) against shipped opponents, "
        f"{args.hands:,} hands each",
        COLUMNS,
        tuple(rows),
        (
            "Values in the game's unit per hand (chips for openspiel:, BB for rlcard:), the CFR+ policy's payoff. "
            + NOTE,
        ),
    )
    write_table_report(
        args.out, "AIVAT against plain and duplicate estimates", "benchmarks.aivat", shown, table, records
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
