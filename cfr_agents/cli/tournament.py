"""``cfr-agents tournament --game G AGENT... --hands N --out DIR [--workers K] [--seed S] [--aivat]``: a round
robin, its matches estimated with AIVAT as well with ``--aivat`` (:mod:`eval.aivat`).

A match refused while it is played costs that match only: the others are played and written, each refused match is
named with its reason on stderr (``cfr-agents: error: A vs B: ...``) and in the outputs, and the command exits with
status 2 (:data:`~cfr_agents.exit_status.EXIT_USAGE`).

Each match and score is written to ``DIR/jobs/`` as it finishes; a rerun with the same ``--out`` reads back those
done with the same settings and agent files instead of playing them again (:mod:`eval.tournament_store`), so a
tournament stopped by Ctrl-C or a crash loses only the jobs it was in the middle of."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cfr_agents.cli.common import (
    EXIT_USAGE,
    MAX_HANDS,
    add_executor_options,
    hands,
    magnitude,
    non_negative_int,
    one_line,
    plotting_unavailable,
)
from cfr_agents.cli.paths import add_input, add_output
from cfr_agents.files import output_dir

OUTPUTS = ("results.json", "results.csv", "results.md", "heatmap.png")


def register(commands: Any) -> None:
    command = commands.add_parser(
        "tournament", help="round robin of duplicate matches with every agent's exact exploitability"
    )
    add_input(command, "agents", nargs="+", metavar="AGENT", help="named agents or policy/model files")
    command.add_argument("--game", required=True, help="the game every agent plays")
    command.add_argument(
        "--hands", type=hands, required=True, help=f"hands per match: an even number, from 4 to {magnitude(MAX_HANDS)}"
    )
    add_output(
        command, "--out", holds=OUTPUTS, required=True, metavar="DIR", help="directory for " + ", ".join(OUTPUTS)
    )
    add_executor_options(command)
    command.add_argument("--seed", type=non_negative_int, default=0, help="seed of every match (default 0)")
    command.add_argument(
        "--aivat",
        action="store_true",
        help="also estimate with AIVAT every match in which one agent's strategy can be asked",
    )
    command.add_argument("--quiet", action="store_true", help="print only the table")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cfr_agents.cli.tables import run_tournament as run_tables
    from cfr_agents.jobs import executor
    from eval.match import check_aivat_game, check_hands
    from eval.table import takes_seats
    from eval.tournament import check_agents, csv_text, json_text, markdown, run_tournament
    from eval.tournament_store import JobStore

    if takes_seats(args.game):  # an n-player or general-sum game: every table of distinct agents
        return run_tables(args, OUTPUTS)
    check_hands(args.hands)
    if args.aivat:
        check_aivat_game(args.game)
    output_dir(args.out, OUTPUTS, create=False)  # created once everything is checked
    pool = executor(args.workers, args.ray)
    check_agents(args.game, args.agents)
    plotting = plotting_unavailable()
    out = output_dir(args.out, OUTPUTS)

    def done(label: str) -> None:
        if not args.quiet:
            print(f"  done: {label}", file=sys.stderr, flush=True)

    result = run_tournament(
        args.game, args.agents, args.hands, args.seed, pool, done, aivat=args.aivat, store=JobStore(out)
    )
    from cfr_agents.files import write_atomic

    table = markdown(result)
    write_atomic(out / "results.json", json_text(result))
    write_atomic(out / "results.csv", csv_text(result))
    write_atomic(out / "results.md", table)
    print(table, end="")
    if plotting is None:
        from eval.plots import heatmap

        heatmap(result, out / "heatmap.png")
        written = ", ".join(OUTPUTS)
    else:
        written = ", ".join(OUTPUTS[:3]) + f" (no heatmap.png: {plotting})"
    print(f"wrote {written} to {out}")
    for failure in result.failed:
        a, b = failure.agents
        print(f"cfr-agents: error: {one_line(f'{a} vs {b}: {failure.reason}')}", file=sys.stderr)
    return EXIT_USAGE if result.failed else 0
