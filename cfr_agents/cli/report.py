"""``cfr-agents report POLICY [--vs OTHER] [--against best-response|other] [--game G] --out page.html``: the
strategy explorer (:mod:`eval.explore`) as one self-contained HTML page that opens offline, with no server."""

from __future__ import annotations

import argparse
from typing import Any

from cfr_agents.cli.paths import add_input, add_output

MAX_PUBLIC_NODES = 20_000
"""The most public nodes one page holds (a Leduc policy has a few hundred)."""


def register(commands: Any) -> None:
    command = commands.add_parser(
        "report", help="a policy's betting tree, strategies, values and best-response deviations as one HTML page"
    )
    add_input(command, "agent", metavar="POLICY", help="a policy or model file, or a named agent (with --game)")
    add_input(command, "--vs", metavar="OTHER", help="a second policy shown beside the first")
    command.add_argument(
        "--against",
        choices=("best-response", "other"),
        default="best-response",
        help="the opponent the values are computed against: each policy's best response (the default), or "
        "each policy against the other (needs --vs)",
    )
    command.add_argument("--game", help="the game (a file names its own)")
    add_output(command, "--out", required=True, metavar="PAGE", help="the HTML page to write")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cfr_agents.cli.web.page import report_page
    from cfr_agents.files import check_outputs, write_atomic
    from eval.explore import check_against
    from eval.explore_holdem import open_views
    from eval.play import game_of

    names = [args.agent] + ([args.vs] if args.vs else [])
    check_against(args.against, len(names))
    check_outputs(args.out)
    explorer = open_views(names, args.game or game_of(args.agent), args.against)
    paths = explorer.paths(MAX_PUBLIC_NODES)
    summary = explorer.summary()
    page = report_page({"summary": summary, "views": {path: explorer.view(path) for path in paths}})
    write_atomic(args.out, page)
    print(f"wrote {args.out}: {len(paths):,} public nodes of {summary['game_name']}, {len(page):,} bytes")
    return 0
