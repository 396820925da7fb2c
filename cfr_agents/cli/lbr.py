"""``cfr-agents lbr AGENT --game G``: local best response against an agent of a limit hold'em game, exact and over
duplicate pairs played in OpenSpiel's ``universal_poker``, beside the exact best response."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cfr_agents.cli.common import MAX_HANDS, hands, magnitude, non_negative_int
from cfr_agents.cli.paths import add_input


def register(commands: Any) -> None:
    command = commands.add_parser("lbr", help="local best response against an agent of a limit hold'em game")
    add_input(command, "agent", help="a public-tree strategy file, a policy file or a named opponent")
    command.add_argument("--game", required=True, help="a two-player limit universal_poker game (fhp, holdem-6, ...)")
    command.add_argument(
        "--hands",
        type=hands,
        default=10_000,
        help=f"hands to play in duplicate pairs: 0 (exact only) or an even number from 4 to {magnitude(MAX_HANDS)} "
        "(default 10000)",
    )
    command.add_argument("--seat", choices=("0", "1", "both"), default="both", help="LBR's seat (default both)")
    command.add_argument("--seed", type=non_negative_int, default=0, help="seed of the cards and both players' draws")
    command.add_argument(
        "--call-until",
        type=non_negative_int,
        default=0,
        metavar="ROUND",
        help="LBR checks or calls in the rounds before ROUND",
    )
    command.add_argument("--json", action="store_true", help="print one JSON object")
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from eval.lbr import lbr_report

    report = lbr_report(
        args.agent,
        args.game,
        hands=args.hands,
        seat=args.seat,
        seed=args.seed,
        call_until=args.call_until,
        show_progress=not args.quiet and not args.json and sys.stderr.isatty(),
    )
    if args.json:
        print(json.dumps(report.to_json(), allow_nan=False))
        return 0
    units = report.units
    seats = "both seats" if report.seat == "both" else f"seat {report.seat}"
    calls = f", calling before round {report.call_until}" if report.call_until else ""
    ratio = "" if report.ratio is None else f", {report.ratio:.3g} of it"
    print(
        f"LBR against {report.agent} on {report.game} ({seats}{calls}): "
        f"exact {report.exact:+.6g} {units} per hand ({report.mbb(report.exact):+.4g} mbb/g); exact best response "
        f"{report.best_response:+.6g} {units} ({report.mbb(report.best_response):+.4g} mbb/g){ratio}; "
        f"{report.exact_seconds:.1f} s"
    )
    if report.sampled is not None:
        sampled, (low, high) = report.sampled, report.sampled.ci95
        print(
            f"played {2 * sampled.pairs:,} hands in duplicate pairs: {sampled.mean:+.6g} +- "
            f"{sampled.standard_error:.3g} {units} per hand ({report.mbb(sampled.mean):+.4g} mbb/g; 95% CI "
            f"[{report.mbb(low):+.4g}, {report.mbb(high):+.4g}] mbb/g) in {report.play_seconds:.1f} s"
        )
    return 0
