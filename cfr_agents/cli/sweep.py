"""``cfr-agents sweep``: train a grid of solver parameters over seeds, locally or on Ray; report the best."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tqdm import tqdm

from adapters.inputs import InputError
from cfr_agents.cli.common import Within, add_executor_options, positive_int
from cfr_agents.cli.paths import add_output
from cfr_agents.files import output_dir, write_atomic
from cfr_agents.jobs import executor
from cfr_agents.solvers import ALGORITHMS, SAMPLING_CHOICES
from cfr_agents.solvers.sampling import EPSILON
from cfr_agents.solvers.update_rule import ALPHA, BETA, GAMMA
from cfr_agents.training import NASH_CONV_TARGET, SECONDS
from eval.sweep import (
    Spread,
    Stop,
    Summary,
    best,
    check_size,
    jobs,
    parse_grid,
    parse_seeds,
    stored_work,
    summarise,
    train_job,
)

OUTPUTS = ("results.json", "results.csv", "results.md", "nash_conv_vs_time.png")


def register(commands: Any) -> None:
    command = commands.add_parser("sweep", help="train a grid of parameters over seeds; report the best")
    command.add_argument("--game", required=True, help="openspiel:<game string> or rlcard:<env id>")
    command.add_argument("--algo", required=True, choices=sorted(ALGORITHMS), help="update rule")
    command.add_argument("--sampling", default="none", choices=SAMPLING_CHOICES, help="none (default) or MCCFR")
    command.add_argument(
        "--grid",
        required=True,
        help='e.g. "alpha=1,1.5,2;gamma=1,2,3": alpha, beta, gamma, epsilon, averaging, chance_draws, each number in '
        f"its range (alpha {ALPHA}, beta {BETA}, gamma {GAMMA}, epsilon {EPSILON})",
    )
    command.add_argument("--seeds", default="0", help="e.g. 0-4 or 0,3,7 (default 0)")
    command.add_argument(
        "--target-nash-conv",
        type=Within(NASH_CONV_TARGET),
        metavar="X",
        help=f"stop at NashConv <= X, X in {NASH_CONV_TARGET}",
    )
    command.add_argument("--iterations", type=positive_int, help="iteration cap")
    command.add_argument(
        "--time-limit", type=Within(SECONDS), metavar="S", help=f"solve-time cap per job, seconds, in {SECONDS}"
    )
    command.add_argument(
        "--checkpoint-every",
        type=Within(SECONDS),
        default=30.0,
        metavar="SECONDS",
        help=f"seconds between a job's checkpoints, in {SECONDS} (default 30)",
    )
    add_output(
        command, "--out", holds=OUTPUTS, required=True, metavar="DIR", help="directory for results and job checkpoints"
    )
    add_executor_options(command)
    command.add_argument("--json", action="store_true", help="print the results as one JSON object")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.iterations is None and args.target_nash_conv is None and args.time_limit is None:
        raise InputError("give --target-nash-conv, --iterations or --time-limit")
    configurations = parse_grid(args.grid, args.algo, args.sampling)
    seeds = parse_seeds(args.seeds)
    check_size(configurations, seeds)
    stop = Stop(args.iterations, args.target_nash_conv, args.time_limit)
    work = jobs(Path(args.out), args.game, args.algo, args.sampling, configurations, seeds, stop, args.checkpoint_every)
    output_dir(args.out, OUTPUTS, create=False)
    for spec in work:
        stored_work(spec)  # refuses stored work made for other settings, before any job runs
    pool = executor(args.workers, args.ray)
    out = output_dir(args.out, OUTPUTS)
    with tqdm(total=len(work), unit="job", file=sys.stderr, disable=None if not args.json else True) as bar:
        finished = pool.map(train_job, work, lambda spec, result: bar.update(1))
    results = {spec["key"]: result for spec, result in zip(work, finished, strict=True)}
    summaries = summarise(configurations, seeds, results)
    winner = best(summaries)
    report = {
        "game": work[0]["game_id"],
        "algo": args.algo,
        "sampling": args.sampling,
        "grid": args.grid,
        "seeds": seeds,
        "stop": asdict(stop),
        "workers": pool.workers,
        "executor": "ray" if args.ray is not None else "local",
        "summary": [asdict(summary) for summary in summaries],
        "best": winner.configuration,
        "jobs": {spec["key"]: {**results[spec["key"]], "configuration": spec["configuration"]} for spec in work},
    }
    write_atomic(out / "results.json", json.dumps(report, indent=1) + "\n")
    write_atomic(out / "results.csv", _csv(work, results))
    table = _markdown(report, summaries)
    write_atomic(out / "results.md", table)
    plotted = _plot(out / OUTPUTS[3], [(spec["configuration"], results[spec["key"]]["curve"]) for spec in work])
    if args.json:
        print(json.dumps(report))
        return 0
    print(table, end="")
    print(f"best: {winner.configuration}" + ("" if plotted else " (no plot: pip install 'cfr-agents[plot]')"))
    return 0


def _csv(work: list[dict[str, Any]], results: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(
        [
            "configuration",
            "seed",
            "iterations",
            "solve_seconds",
            "nash_conv",
            "stopped_by",
            "target_iterations",
            "target_seconds",
        ]
    )
    for spec in work:
        result = results[spec["key"]]
        writer.writerow(
            [
                spec["configuration"],
                spec["seed"],
                result["iterations"],
                f"{result['solve_seconds']:.6f}",
                repr(result["nash_conv"]),
                result["stopped_by"],
                result["target_iterations"],
                result["target_seconds"],
            ]
        )
    return buffer.getvalue()


def _spread(spread: Spread | None, digits: str) -> str:
    if spread is None:
        return "-"
    return f"{spread.mean:{digits}} ± {spread.std:{digits}} ({spread.low:{digits}}-{spread.high:{digits}})"


def _markdown(report: dict[str, Any], summaries: list[Summary]) -> str:
    lines = [
        f"# Sweep: {report['algo']} ({report['sampling']} sampling) on {report['game']}",
        "",
        f"Grid `{report['grid']}`, seeds {report['seeds']}, stop {report['stop']}; mean ± standard deviation "
        "(lowest-highest) over seeds.",
        "",
        "| configuration | final NashConv | reached target | iterations to target | seconds to target |",
        "| --- | --- | --- | --- | --- |",
    ]
    for summary in summaries:
        mark = " **best**" if summary.configuration == report["best"] else ""
        lines.append(
            f"| {summary.configuration}{mark} | {_spread(summary.nash_conv, '.3g')} | {summary.reached}/{summary.seeds}"
            f" | {_spread(summary.target_iterations, ',.0f')} | {_spread(summary.target_seconds, '.3g')} |"
        )
    return "\n".join(lines) + "\n"


def _plot(path: Path, runs: list[tuple[str, Any]]) -> bool:
    """The NashConv-against-time plot; ``False`` without matplotlib (the results stand without it)."""
    from adapters.inputs import MissingExtraError
    from eval.plots import plot_sweep

    try:
        plot_sweep(runs, path)
    except MissingExtraError:
        return False
    return True
