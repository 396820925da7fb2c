"""What ``cfr-agents match`` and ``cfr-agents tournament`` run on an n-player or general-sum game: matches of ``n``
seats, every seat order of every deal (:mod:`eval.table`), and tournaments of every table of distinct agents
(:mod:`eval.table_tournament`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from adapters.inputs import ParameterError


def refuse_two_player_options(game_id: str, **given: object) -> None:
    """Refuse, in one line, the options that read two-player zero-sum matches (hand logs, AIVAT) when given."""
    named = [name for name, value in given.items() if value]
    if named:
        raise ParameterError(
            " and ".join("{" + name + "}" for name in named)
            + (" take" if len(named) > 1 else " takes")
            + " two-player zero-sum matches only, not {game}",
            game=game_id,
        )


def run_match(args: argparse.Namespace, game_id: str, agents: Sequence[str]) -> int:
    """``match`` on ``game_id``, one agent per seat: the report printed (``--json``: one JSON object) and, with
    ``--out``, written as that JSON object."""
    from cfr_agents.files import check_outputs, write_atomic
    from eval.table import Seats, TableSpec, check_table_hands, describe, play_table

    refuse_two_player_options(game_id, log=args.log, aivat=args.aivat)
    check_outputs(args.out)
    seats = Seats(game_id)
    seats.check(agents)
    check_table_hands(args.hands, len(agents))
    show = not (args.quiet or args.json) and sys.stderr.isatty()
    report = play_table(TableSpec(seats.game_id, tuple(agents), args.hands, args.seed), seats, show_progress=show)
    document = {**report.to_json(), "seed": args.seed}
    if args.out is not None:
        write_atomic(args.out, json.dumps(document, indent=2) + "\n")
    print(json.dumps(document) if args.json else describe(report))
    return 0


def run_tournament(args: argparse.Namespace, outputs: Sequence[str]) -> int:
    """``tournament`` on an n-player or general-sum game: every table of distinct agents; ``results.json``,
    ``results.csv`` and ``results.md`` written to ``--out`` (a heatmap shows pairs of agents: none here)."""
    from cfr_agents.files import output_dir, write_atomic
    from cfr_agents.jobs import executor
    from eval.table import check_table_hands
    from eval.table_tournament import check_table_agents, csv_text, json_text, markdown, run_table_tournament

    refuse_two_player_options(args.game, aivat=args.aivat)
    output_dir(args.out, outputs, create=False)  # created once everything is checked and played
    seats = check_table_agents(args.game, args.agents)
    check_table_hands(args.hands, seats.game.num_players)
    pool = executor(args.workers, args.ray)

    def done(label: str) -> None:
        if not args.quiet:
            print(f"  done: {label}", file=sys.stderr, flush=True)

    result = run_table_tournament(args.game, args.agents, args.hands, args.seed, pool, done)
    out = output_dir(args.out, outputs)
    table = markdown(result)
    write_atomic(out / "results.json", json_text(result))
    write_atomic(out / "results.csv", csv_text(result))
    write_atomic(out / "results.md", table)
    print(table, end="")
    print(f"wrote results.json, results.csv, results.md to {out} (no heatmap.png: it shows pairs of agents)")
    return 0
