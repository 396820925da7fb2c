"""``cfr-agents train-opponent KIND --game G (--episodes N | --iterations N) --seed S --out FILE``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from adapters.inputs import InputError
from cfr_agents.cli.common import Within, mbb, non_negative_int, positive_int
from cfr_agents.cli.paths import add_output
from cfr_agents.files import check_writable
from cfr_agents.training import NASH_CONV_TARGET

if TYPE_CHECKING:
    from eval.opponents.provenance import Provenance


def register(commands: Any) -> None:
    from eval.opponents import TRAINABLE

    command = commands.add_parser(
        "train-opponent", help="train RLCard's DQN or NFSP, OpenSpiel's NFSP, or RLCard's CFRAgent"
    )
    command.add_argument("kind", choices=TRAINABLE, help="opponent family")
    command.add_argument("--game", required=True, help="rlcard:<env id> or openspiel:<game string>")
    amount = command.add_mutually_exclusive_group(required=True)
    amount.add_argument("--episodes", type=positive_int, help="episodes (NFSP, DQN)")
    amount.add_argument("--iterations", type=positive_int, help="CFRAgent.train() iterations (rlcard-cfr)")
    command.add_argument("--seed", type=non_negative_int, required=True, help="seed of every generator training uses")
    presets = "; ".join(f"{kind}: {', '.join(training.presets)}" for kind, training in TRAINABLE.items())
    command.add_argument(
        "--hyperparameters",
        dest="preset",
        metavar="PRESET",
        help=f"whose example's settings to train with, the first by default ({presets})",
    )
    command.add_argument(
        "--check-every",
        type=positive_int,
        metavar="N",
        help="measure the exact NashConv every N episodes or iterations; the curve goes in the file",
    )
    command.add_argument(
        "--target-exploitability",
        type=Within(NASH_CONV_TARGET),
        metavar="E",
        help=f"stop at the first check with exploitability <= E, E in {NASH_CONV_TARGET} (needs --check-every)",
    )
    add_output(
        command,
        "--out",
        required=True,
        beside=(".safetensors",),
        metavar="FILE.json",
        help="model file (NFSP: also FILE.safetensors)",
    )
    command.add_argument("--json", action="store_true", help="print one JSON object")
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from cfr_agents.training import CurvePoint
    from eval.opponents import trainable
    from eval.opponents.training import Checks, train

    training, _ = trainable(args.kind, args.game)
    unit = training.unit
    amount = args.episodes if unit == "episodes" else args.iterations
    if amount is None:
        raise InputError(f"{args.kind} counts --{unit}")
    if not args.out.endswith(".json"):
        raise InputError(f"--out must name a .json file, got {args.out!r}")
    for path in training.outputs(args.out):
        check_writable(path)
    if args.target_exploitability is not None and args.check_every is None:
        raise InputError("--target-exploitability needs --check-every")
    checks = Checks(args.check_every, args.target_exploitability)

    show = not (args.quiet or args.json)
    with tqdm(total=amount, unit=unit[:-1], disable=None if show else True, file=sys.stderr) as bar:

        def progress(done: int) -> None:
            if done % 100 == 0 or done == amount:
                bar.update(done - bar.n)

        def checked(point: CurvePoint) -> None:
            if show:
                bar.write(
                    f"{point.iteration:,} {unit}, {point.seconds:.0f} s: NashConv {point.nash_conv:.6g}",
                    file=sys.stderr,
                )

        agent, provenance = train(
            args.kind,
            args.game,
            amount,
            args.seed,
            progress,
            preset=args.preset,
            checks=checks,
            on_check=checked,
        )
    training.save(args.out, agent, provenance)
    if args.json:
        print(json.dumps({**provenance.to_json(), "out": args.out}))
    else:
        print(f"{args.kind} on {provenance.game}: {_measured(provenance)}; saved {args.out}")
    return 0


def _measured(provenance: Provenance) -> str:
    """What was trained and how exploitable it is, or, where no compiled tree gives NashConv, what was measured."""
    if provenance.nash_conv is None:
        return provenance.describe()  # it says NashConv was not computed, and the evaluation made instead
    return (
        f"{provenance.describe()}; NashConv {provenance.nash_conv:.6g} {provenance.units}"
        f"{mbb(provenance.nash_conv, provenance.units)}, exploitability {provenance.exploitability:.6g} "
        f"{provenance.units}"
    )
