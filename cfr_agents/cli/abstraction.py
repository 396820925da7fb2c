"""``cfr-agents abstraction build --game G --out DIR`` builds a card abstraction of a limit hold'em game (or copies
it from the cache); ``cfr-agents abstraction show DIR`` prints one."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cfr_agents.cli.common import check_memory, non_negative_int, positive_int
from cfr_agents.cli.paths import add_input, add_output

SPEC_HELP = (
    "buckets of each round, comma-separated: a number or lossless (default: lossless preflop, 200 buckets in "
    "later rounds, lossless where a round has no more classes)"
)


def register(commands: Any) -> None:
    from cfr_agents.abstraction.spec import DEFAULT_BINS
    from cfr_agents.abstraction.store import FILES

    command = commands.add_parser("abstraction", help="build or show a card abstraction of a limit hold'em game")
    kinds = command.add_subparsers(dest="kind", required=True, parser_class=type(command))
    build = kinds.add_parser("build", help="build a card abstraction (copied from the cache when built before)")
    build.add_argument("--game", required=True, help="a two-player limit hold'em game (hulh, fhp, holdem-8, ...)")
    add_output(build, "--out", required=True, holds=FILES, metavar="DIR", help="directory to write the abstraction to")
    build.add_argument("--buckets", metavar="SPEC", help=SPEC_HELP)
    build.add_argument(
        "--method",
        choices=("ehs2", "emd"),
        default="ehs2",
        help="ehs2: E[HS^2] percentiles; emd: k-means of equity histograms under the earth mover's distance "
        "(the last round uses HS percentiles either way; default ehs2)",
    )
    build.add_argument(
        "--bins", type=positive_int, default=DEFAULT_BINS, help=f"bins of an equity histogram (default {DEFAULT_BINS})"
    )
    build.add_argument("--seed", type=non_negative_int, default=0, help="seed of the k-means initialisation")
    build.add_argument("--quiet", action="store_true", help="no progress bars")
    build.set_defaults(run=run_build)
    show = kinds.add_parser("show", help="the rounds, methods, buckets, build time and size of an abstraction")
    add_input(show, "directory", metavar="DIR", help="an abstraction directory")
    show.set_defaults(run=run_show)


def run_build(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from cfr_agents.abstraction import build_cached, class_counts, parse_spec
    from cfr_agents.abstraction.build import game_rules, peak_bytes
    from cfr_agents.abstraction.store import check_out, read_sidecar

    game_rules(args.game)
    check_out(args.out)
    spec = parse_spec(args.buckets, class_counts(args.game), args.method, args.bins)
    memory = check_memory(f"building this abstraction of {args.game}", peak_bytes(args.game, spec))
    if not args.quiet:
        print(memory, file=sys.stderr)
    bars: dict[str, Any] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage not in bars:
            for bar in bars.values():
                bar.close()
            bars.clear()
            bars[stage] = tqdm(
                total=total, desc=stage, file=sys.stderr, leave=False, disable=True if args.quiet else None
            )
        bars[stage].update(done - bars[stage].n)

    try:
        abstraction, cached = build_cached(args.game, spec, args.seed, args.out, progress=progress)
    finally:
        for bar in bars.values():
            bar.close()
    size = read_sidecar(args.out)["size_bytes"]
    how = "copied from the cache (built" if cached else "built"
    print(
        f"{how} in {abstraction.build_seconds:.1f} s{')' if cached else ''}: "
        f"{', '.join(f'{r.buckets:,} {r.method}' for r in abstraction.rounds)} buckets; "
        f"{size:,} bytes in {args.out}"
    )
    return 0


def run_show(args: argparse.Namespace) -> int:
    from cfr_agents.abstraction.store import read_sidecar

    sidecar = read_sidecar(args.directory)
    seed = "no seed" if sidecar["seed"] is None else f"seed {sidecar['seed']}"
    print(f"{sidecar['game']}: {seed}, built in {sidecar['build_seconds']:.1f} s, {sidecar['size_bytes']:,} bytes")
    rows = [("round", "board", "method", "buckets", "bins", "classes")]
    rows += [
        (
            str(r["round"]),
            str(r["board_cards"]),
            r["method"],
            f"{r['buckets']:,}",
            str(r["bins"] or "-"),
            f"{r['classes']:,}",
        )
        for r in sidecar["rounds"]
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print(
            "  ".join(
                cell.ljust(width) if column == 2 else cell.rjust(width)  # the method left, the numbers right
                for column, (cell, width) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
    return 0
