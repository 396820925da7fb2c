"""``cfr-agents lbr AGENT --game G``: local best response against an agent of a limit hold'em game, exact and over
duplicate pairs played in OpenSpiel's ``universal_poker``, beside the exact best response; on a game with no public
tree (``hulh``, ``rlcard:limit-holdem``), played hand by hand on the compiled engine alone."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cfr_agents.cli.common import MAX_HANDS, hands, magnitude, non_negative_int, workers
from cfr_agents.cli.paths import add_input


def register(commands: Any) -> None:
    command = commands.add_parser("lbr", help="local best response against an agent of a limit hold'em game")
    add_input(command, "agent", help="a strategy file, a policy or model file, or a named opponent")
    command.add_argument(
        "--game", required=True, help="a two-player limit hold'em game (fhp, holdem-6, hulh, rlcard:limit-holdem, ...)"
    )
    command.add_argument(
        "--hands",
        type=hands,
        default=10_000,
        help=f"hands to play in duplicate pairs: 0 (exact only, where there is a public tree) or an even number from 4 "
        f"to {magnitude(MAX_HANDS)} (default 10000)",
    )
    command.add_argument("--seat", choices=("0", "1", "both"), default="both", help="LBR's seat (default both)")
    command.add_argument("--seed", type=non_negative_int, default=0, help="seed of the cards and both players' draws")
    command.add_argument(
        "--call-until",
        type=non_negative_int,
        default=None,
        metavar="ROUND",
        help="LBR checks or calls in the rounds before ROUND (default 0; 1 on hulh and rlcard:limit-holdem, whose "
        "preflop showdown odds are not enumerated)",
    )
    command.add_argument(
        "--workers",
        type=workers,
        default=1,
        help="processes that play the hands on a game with no public tree (default 1)",
    )
    command.add_argument(
        "--last-round",
        choices=("sampled", "expected", "over-range"),
        default="sampled",
        help="on a game with no public tree, play LBR's last round (default), or score it in expectation over the "
        "agent's actions (the same mean, less variance), or over its hand in LBR's range too",
    )
    command.add_argument("--json", action="store_true", help="print one JSON object")
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from eval.lbr import LBRReport, run_lbr

    report = run_lbr(
        args.agent,
        args.game,
        hands=args.hands,
        seat=args.seat,
        seed=args.seed,
        call_until=args.call_until,
        workers=args.workers,
        last_round=args.last_round,
        show_progress=not args.quiet and not args.json and sys.stderr.isatty(),
    )
    if args.json:
        print(json.dumps(report.to_json(), allow_nan=False))
        return 0
    units = report.units
    seats = "both seats" if report.seat == "both" else f"seat {report.seat}"
    calls = f", calling before round {report.call_until}" if report.call_until else ""
    if isinstance(report, LBRReport):
        ratio = "" if report.ratio is None else f", {report.ratio:.3g} of it"
        print(
            f"LBR against {report.agent} on {report.game} ({seats}{calls}): "
            f"exact {report.exact:+.6g} {units} per hand ({report.mbb(report.exact):+.4g} mbb/g); exact best response "
            f"{report.best_response:+.6g} {units} ({report.mbb(report.best_response):+.4g} mbb/g){ratio}; "
            f"{report.exact_seconds:.1f} s"
        )
    else:
        print(
            f"LBR against {report.agent} on {report.game} ({seats}{calls}): the exact value is out of reach, "
            f"{report.no_exact}; LBR is played hand by hand on the compiled engine ({report.setup_seconds:.1f} s "
            "to set up)"
        )
    played, seconds = report.sampled, report.play_seconds
    if played is not None:
        low, high = played.ci95
        last = "sampled" if isinstance(report, LBRReport) else report.last_round
        how = {
            "sampled": "",
            "expected": ", the last round in expectation",
            "over-range": ", the last round in expectation over the agent's range",
        }[last]
        print(
            f"played {2 * played.pairs:,} hands in duplicate pairs{how}: {played.mean:+.6g} +- "
            f"{played.standard_error:.3g} {units} per hand ({report.mbb(played.mean):+.4g} mbb/g; 95% CI "
            f"[{report.mbb(low):+.4g}, {report.mbb(high):+.4g}] mbb/g) in {seconds:.1f} s"
        )
    return 0
