"""``cfr-agents``: train CFR-family policies and measure their exploitability.

Bad input (unknown game or algorithm, bad numbers, a missing, corrupt or mismatched
policy file) prints one line ``cfr-agents: error: ...`` and exits with status 2.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, NoReturn

from adapters import load_game
from adapters.errors import InputError
from cfr_agents.files import check_writable, write_atomic
from cfr_agents.policy import load_policy
from cfr_agents.solvers import ALGORITHMS, make_solver
from cfr_agents.training import StopRule, TrainingRun, train
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree
from eval.exploitability import exploitability, exploitability_of_strategy

EXIT_USAGE = 2
EXIT_DISAGREE = 1


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, exit status 2 (argparse would print the whole usage first)."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _real(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError("must be a number, got nan")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cfr-agents", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    train_cmd = commands.add_parser("train", help="train a policy and save it as JSON")
    train_cmd.add_argument("--game", required=True, help="openspiel:<game string> or rlcard:<env id>")
    train_cmd.add_argument("--algo", required=True, choices=sorted(ALGORITHMS), help="solver")
    train_cmd.add_argument("--iterations", type=_positive_int, help="iterations to run (a cap with targets)")
    train_cmd.add_argument("--target-nash-conv", type=_positive_float, metavar="X", help="stop at NashConv <= X")
    train_cmd.add_argument("--time-limit", type=_positive_float, metavar="S", help="stop after S seconds")
    train_cmd.add_argument("--seed", type=int, default=0, help="random seed, recorded (default 0)")
    train_cmd.add_argument("--alpha", type=_real, help="DCFR alpha (default 1.5)")
    train_cmd.add_argument("--beta", type=_real, help="DCFR beta (default 0)")
    train_cmd.add_argument("--gamma", type=_real, help="DCFR gamma (default 2)")
    train_cmd.add_argument("--out", required=True, metavar="FILE", help="policy file to write")
    train_cmd.add_argument("--curve", metavar="FILE.csv", help="write (iteration, seconds, nash_conv)")
    train_cmd.add_argument("--json", action="store_true", help="print one JSON object")
    train_cmd.add_argument("--quiet", action="store_true", help="no progress bar")

    exp_cmd = commands.add_parser("exploitability", help="exact NashConv of a policy file")
    exp_cmd.add_argument("file", help="policy file")
    exp_cmd.add_argument("--cross-check", action="store_true", help="also compute it with OpenSpiel")
    exp_cmd.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


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


def _train(args: argparse.Namespace) -> int:
    overrides = {k: getattr(args, k) for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None}
    if overrides and args.algo != "dcfr":
        raise InputError(f"--{'/--'.join(overrides)} only apply to --algo dcfr")
    if args.iterations is None and args.target_nash_conv is None and args.time_limit is None:
        raise InputError("give --iterations, --target-nash-conv or --time-limit")
    rule = replace(ALGORITHMS[args.algo], **overrides)
    for path in (args.out, args.curve):
        if path is not None:
            check_writable(path)
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
            f"NashConv {run.nash_conv:.6g} {tree.units}{_mbb(run.nash_conv, tree.units)}, "
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

        return train(solver, stop, _nash_conv, record_curve=curve, on_progress=progress)


def _write_curve(path: str, run: TrainingRun) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["iteration", "seconds", "nash_conv"])
    for point in run.curve:
        writer.writerow([point.iteration, f"{point.seconds:.6f}", repr(point.nash_conv)])
    write_atomic(path, buffer.getvalue())


def _mbb(value: float, units: str) -> str:
    return f" ({value * 1000:.4g} mbb)" if units == "BB" else ""


def _exploitability(args: argparse.Namespace) -> int:
    policy = load_policy(args.file)
    tree = compile_tree(policy.game())
    ours = exploitability(policy, tree)
    result: dict[str, Any] = {
        "file": args.file,
        "game": policy.game_id,
        "algo": policy.algorithm,
        "iterations": policy.iterations,
        "units": ours.units,
        "nash_conv": ours.nash_conv,
        "exploitability": ours.exploitability,
        "policy_values": list(ours.policy_values),
        "build_seconds": tree.build_seconds,
    }
    status = 0
    if args.cross_check:
        from eval.cross_check import TOLERANCE, openspiel_cross_check

        theirs = openspiel_cross_check(policy)
        difference = ours.nash_conv - theirs.nash_conv
        agree = abs(difference) <= TOLERANCE
        result.update(
            openspiel_nash_conv=theirs.nash_conv,
            difference=difference,
            agree=agree,
            openspiel_game=theirs.openspiel_game,
            openspiel_game_source=theirs.source,
        )
        status = 0 if agree else EXIT_DISAGREE
    if args.json:
        print(json.dumps(result))
        return status
    print(
        f"{policy.game_id} ({policy.algorithm}, {policy.iterations:,} iterations): NashConv "
        f"{ours.nash_conv:.12g} {ours.units}{_mbb(ours.nash_conv, ours.units)}, "
        f"exploitability {ours.exploitability:.12g} {ours.units}"
    )
    if args.cross_check:
        print(
            f"OpenSpiel nash_conv {result['openspiel_nash_conv']:.12g} {ours.units} on "
            f"{result['openspiel_game']} ({result['openspiel_game_source']}); "
            f"difference {result['difference']:.3g} ({'agree' if status == 0 else 'DISAGREE'} "
            f"within {TOLERANCE:g})"
        )
    return status


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "train":
            return _train(args)
        return _exploitability(args)
    except InputError as error:
        print(f"cfr-agents: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("cfr-agents: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
