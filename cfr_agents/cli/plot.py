"""``cfr-agents plot curves FILE.csv... --out IMAGE``, ``cfr-agents plot strategy POLICY --line LINE --out IMAGE``,
``cfr-agents plot frontier FRONTIER.json --out IMAGE`` and ``cfr-agents plot learning LEARNING.json --out IMAGE``."""

from __future__ import annotations

import argparse
from typing import Any

from cfr_agents.cli.paths import add_input, add_output

IMAGE_HELP = "image to write, in the format its suffix names: .png, .pdf, .svg, .eps or .ps"
LINE_HELP = (
    "a betting line: action names and the public card joined by ':', e.g. call:raise:call:SK:check:raise "
    "(RLCard Leduc; cards suit then rank, K♠ also accepted) or pass:bet (Kuhn)"
)


def register(commands: Any) -> None:
    command = commands.add_parser(
        "plot",
        help="plot NashConv curves, a policy's strategy along a betting line, an exploitation frontier "
        "or a learning curve",
    )
    kinds = command.add_subparsers(dest="kind", required=True, parser_class=type(command))
    curves = kinds.add_parser("curves", help="NashConv against iterations and seconds, log-log, from --curve files")
    add_input(curves, "files", nargs="+", metavar="FILE.csv", help="curve files written by train --curve")
    add_output(curves, "--out", required=True, metavar="IMAGE", help=IMAGE_HELP)
    curves.set_defaults(run=run_curves)
    strategy = kinds.add_parser("strategy", help="action probabilities per private card along one betting line")
    add_input(strategy, "policy", metavar="POLICY", help="policy file")
    strategy.add_argument("--line", required=True, help=LINE_HELP)
    strategy.add_argument("--seat", type=int, choices=(0, 1), help="seat to show when both seats reach the line")
    add_output(strategy, "--out", required=True, metavar="IMAGE", help=IMAGE_HELP)
    strategy.set_defaults(run=run_strategy)
    frontier = kinds.add_parser(
        "frontier", help="exploitation against exploitability: RNR points, the ε-safe LP curve, the naive line"
    )
    add_input(frontier, "file", metavar="FRONTIER.json", help="frontier.json written by exploit --frontier")
    add_output(frontier, "--out", required=True, metavar="IMAGE", help=IMAGE_HELP)
    frontier.set_defaults(run=run_frontier)
    learning = kinds.add_parser(
        "learning", help="gain and exploitability of responses from logged hands against the hands logged"
    )
    add_input(learning, "file", metavar="LEARNING.json", help="written by benchmarks/learning.py")
    add_output(learning, "--out", required=True, metavar="IMAGE", help=IMAGE_HELP)
    learning.set_defaults(run=run_learning)


def run_curves(args: argparse.Namespace) -> int:
    from cfr_agents.files import check_outputs
    from eval.plots import image_format, plot_curves, pyplot

    pyplot()
    check_outputs(args.out)
    image_format(args.out)
    curves = plot_curves(args.files, args.out)
    print(f"plotted {len(curves)} curve{'s' if len(curves) != 1 else ''} to {args.out}")
    return 0


def run_strategy(args: argparse.Namespace) -> int:
    from cfr_agents.files import check_outputs
    from cfr_agents.policy import load_policy
    from eval.plots import image_format, plot_strategy, pyplot

    pyplot()
    check_outputs(args.out)
    image_format(args.out)
    policy = load_policy(args.policy)
    shown = plot_strategy(policy, args.line, args.out, args.seat)
    print(f"seat {shown.player} after {shown.line} ({policy.game_id}):")
    print("  hand  " + "  ".join(f"{a:>6}" for a in shown.actions))
    for hand, row in zip(shown.hands, shown.probabilities, strict=True):
        print(f"  {hand:<4}  " + "  ".join(f"{p:6.3f}" for p in row))
    print(f"wrote {args.out}")
    return 0


def run_frontier(args: argparse.Namespace) -> int:
    from cfr_agents.files import check_outputs
    from eval.plots import image_format, plot_frontier, pyplot

    pyplot()
    check_outputs(args.out)
    image_format(args.out)
    report = plot_frontier(args.file, args.out)
    frontier = report.frontier
    lp = "" if report.lp_curve is not None else " (no LP curve in the file)"
    print(f"plotted the frontier of {frontier.opponent} on {frontier.game_id} to {args.out}{lp}")
    return 0


def run_learning(args: argparse.Namespace) -> int:
    from cfr_agents.files import check_outputs
    from eval.plots import image_format, plot_learning, pyplot

    pyplot()
    check_outputs(args.out)
    image_format(args.out)
    learning = plot_learning(args.file, args.out)
    opponents = ", ".join(reference.opponent for reference in learning.references)
    print(f"plotted the learning curves against {opponents} to {args.out}")
    return 0
