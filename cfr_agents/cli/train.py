"""``cfr-agents train``: train a policy on any game and save it as JSON."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from dataclasses import asdict, dataclass, replace
from typing import Any

from adapters import load_game
from adapters.errors import InputError
from cfr_agents.cli.common import mbb, positive_float, positive_int, real
from cfr_agents.files import check_outputs, write_atomic
from cfr_agents.solvers import ALGORITHMS, make_solver
from cfr_agents.training import StopRule, TrainingRun, train
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree
from eval.exploitability import exploitability_of_strategy


def register(commands: Any) -> None:
    command = commands.add_parser("train", help="train a policy and save it as JSON")
    command.add_argument("--game", required=True, help="openspiel:<game string> or rlcard:<env id>")
    command.add_argument("--algo", required=True, choices=sorted(ALGORITHMS), help="solver")
    command.add_argument("--iterations", type=positive_int, help="iterations to run (a cap with targets)")
    command.add_argument("--target-nash-conv", type=positive_float, metavar="X", help="stop at NashConv <= X")
    command.add_argument("--time-limit", type=positive_float, metavar="S", help="stop after S seconds")
    command.add_argument("--seed", type=int, default=0, help="random seed, recorded (default 0)")
    command.add_argument("--alpha", type=real, help="DCFR alpha (default 1.5)")
    command.add_argument("--beta", type=real, help="DCFR beta (default 0)")
    command.add_argument("--gamma", type=real, help="DCFR gamma (default 2)")
    command.add_argument("--out", required=True, metavar="FILE", help="policy file to write")
    command.add_argument("--curve", metavar="FILE.csv", help="write (iteration, seconds, nash_conv)")
    command.add_argument("--json", action="store_true", help="print one JSON object")
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    command.set_defaults(run=run)


@dataclass(frozen=True)
class TrainReport:
    """What ``train --json`` prints."""

    game: str
    algo: str
    parameters: dict[str, Any]
    seed: int
    iterations: int
    stopped_by: str
    units: str
    infosets: int
    decision_nodes: int
    terminals: int
    build_seconds: float
    solve_seconds: float
    check_seconds: float
    iterations_per_second: float
    nash_conv: float
    exploitability: float
    peak_rss_mb: float
    out: str


def run(args: argparse.Namespace) -> int:
    overrides = {k: getattr(args, k) for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None}
    if overrides and args.algo != "dcfr":
        raise InputError(f"--{'/--'.join(overrides)} only apply to --algo dcfr")
    if args.iterations is None and args.target_nash_conv is None and args.time_limit is None:
        raise InputError("give --iterations, --target-nash-conv or --time-limit")
    rule = replace(ALGORITHMS[args.algo], **overrides)
    check_outputs(args.out, args.curve)
    game = load_game(args.game)
    tree = compile_tree(game)
    solver = make_solver(tree, args.algo, rule)
    if not args.json and not args.quiet:
        print(tree.summary(), file=sys.stderr)
    stop = StopRule(args.iterations, args.target_nash_conv, args.time_limit)
    run = _run_with_progress(solver, stop, show=not args.quiet and not args.json, curve=bool(args.curve))
    policy = replace(solver.average_policy(), parameters={**rule.parameters(), "seed": args.seed})
    policy.save(args.out)
    if args.curve:
        _write_curve(args.curve, run)
    report = TrainReport(
        game=tree.game_id,
        algo=args.algo,
        parameters=rule.parameters(),
        seed=args.seed,
        iterations=run.iterations,
        stopped_by=run.stopped_by,
        units=tree.units,
        infosets=tree.num_infosets,
        decision_nodes=tree.num_decision_nodes,
        terminals=tree.num_terminals,
        build_seconds=tree.build_seconds,
        solve_seconds=run.solve_seconds,
        check_seconds=run.check_seconds,
        iterations_per_second=run.iterations_per_second,
        nash_conv=run.nash_conv,
        exploitability=run.nash_conv / 2,
        peak_rss_mb=run.peak_rss_mb,
        out=args.out,
    )
    if args.json:
        print(json.dumps(asdict(report)))
    else:
        print(
            f"{args.algo}: {run.iterations:,} iterations in {run.solve_seconds:.3f} s "
            f"({run.iterations_per_second:,.0f} it/s, stopped by {run.stopped_by}); "
            f"NashConv {run.nash_conv:.6g} {tree.units}{mbb(run.nash_conv, tree.units)}, "
            f"exploitability {run.nash_conv / 2:.6g} {tree.units}; saved {args.out}"
        )
    return 0


def _nash_conv(tree: CompiledTree, strategy: FloatArray) -> float:
    return exploitability_of_strategy(tree, strategy).nash_conv


def _run_with_progress(solver: Any, stop: StopRule, *, show: bool, curve: bool) -> TrainingRun:
    from tqdm import tqdm

    with tqdm(total=stop.iterations, disable=None if show else True, unit="it", file=sys.stderr, leave=False) as bar:

        def progress(iteration: int, nash_conv: float | None) -> None:
            bar.update(iteration - bar.n)
            if nash_conv is not None:
                bar.set_postfix_str(f"NashConv {nash_conv:.3g}", refresh=False)

        # A visible bar shows NashConv measured at the curve's log-spaced iterations.
        return train(solver, stop, _nash_conv, record_curve=curve or not bar.disable, on_progress=progress)


def _write_curve(path: str, run: TrainingRun) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["iteration", "seconds", "nash_conv"])
    for point in run.curve:
        writer.writerow([point.iteration, f"{point.seconds:.6f}", repr(point.nash_conv)])
    write_atomic(path, buffer.getvalue())

