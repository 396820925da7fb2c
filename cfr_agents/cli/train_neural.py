"""``cfr-agents train --algo deep-cfr|sd-cfr``: neural CFR's options and run (see :mod:`eval.opponents.neural`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from adapters.inputs import InputError
from cfr_agents.cli.common import mbb, non_negative_float, non_negative_int, positive_float, positive_int
from cfr_agents.files import write_atomic

NEURAL = ("deep-cfr", "sd-cfr")
HYPERPARAMETERS: dict[str, tuple[Any, str]] = {
    "traversals": (positive_int, "external-sampling traversals per player per iteration"),
    "hidden": (None, "hidden layer widths, e.g. 64,64,64"),
    "advantage_batches": (positive_int, "SGD steps each time a value network is trained"),
    "advantage_batch_size": (positive_int, "value-network mini-batch size"),
    "advantage_memory": (positive_int, "capacity of each player's advantage reservoir"),
    "advantage_init": (None, "scratch (retrain from fresh weights each iteration) or last (warm start)"),
    "average_batches": (positive_int, "SGD steps of the average-strategy network (deep-cfr)"),
    "average_batch_size": (positive_int, "average-network mini-batch size (deep-cfr)"),
    "strategy_memory": (positive_int, "capacity of the strategy reservoir (deep-cfr)"),
    "learning_rate": (positive_float, "Adam's step size eta"),
    "learning_rate_decay": (non_negative_float, "kappa: value-network step eta*min(1, t0/t)^kappa (0: constant)"),
    "decay_start": (positive_int, "t0 of --learning-rate-decay"),
    "gradient_clip": (positive_float, "gradient-norm clipping"),
    "threads": (positive_int, "torch threads"),
    "kept_networks": (
        non_negative_int,
        "sd-cfr model file: the value networks of at most N iterations per player (0: all)",
    ),
}
"""Every hyperparameter of :class:`~cfr_agents.solvers.neural.NeuralSettings`, as ``--traversals`` ..."""
TABULAR: tuple[str, ...] = ("sampling", "averaging", "epsilon", "chance_draws", "target_nash_conv", "time_limit")
TABULAR += ("alpha", "beta", "gamma", "checkpoint", "checkpoint_every", "resume")


def register_options(command: Any) -> None:
    """The neural options of ``train`` (its other options are the tabular solvers')."""
    group = command.add_argument_group("neural CFR (--algo deep-cfr or sd-cfr)")
    group.add_argument(
        "--preset", help="hyperparameter set: paper (default; the papers' Leduc setup), fast or fast-large"
    )
    group.add_argument(
        "--eval-every", type=positive_int, metavar="N", help="score the average policy exactly every N iterations"
    )
    for name, (kind, text) in HYPERPARAMETERS.items():
        group.add_argument(f"--{name.replace('_', '-')}", type=kind, help=f"{text} (default: the preset's)")


def given_neural_options(args: argparse.Namespace) -> list[str]:
    """The neural options given on the command line."""
    names = ["preset", "eval_every", *HYPERPARAMETERS]
    return [f"--{name.replace('_', '-')}" for name in names if getattr(args, name) is not None]


def run(args: argparse.Namespace) -> int:
    """Train a Deep CFR or SD-CFR model: ``--out FILE.json`` and ``FILE.safetensors``, ``--curve`` from the
    exact checks of ``--eval-every``."""
    from tqdm import tqdm

    from eval.opponents.neural import PRESETS, outputs, save, settings_of
    from eval.opponents.training import Checks, train

    given = [f"--{name.replace('_', '-')}" for name in TABULAR if getattr(args, name) not in (None, False)]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise InputError(f"{', '.join(given)} {verb} to the tabular solvers, not --algo {args.algo}")
    if args.game is None or args.iterations is None:
        raise InputError(f"--algo {args.algo} needs --game and --iterations")
    if not args.out.endswith(".json"):
        raise InputError(f"--out must name a .json file (the weights go beside it), got {args.out!r}")
    if args.curve is not None and args.eval_every is None:
        raise InputError("--curve needs --eval-every N (the exact checks are the curve's points)")
    preset = args.preset or next(iter(PRESETS))
    if preset not in PRESETS:
        raise InputError(f"unknown --preset {preset!r}; choose from {', '.join(PRESETS)}")
    overrides = {name: getattr(args, name) for name in HYPERPARAMETERS if getattr(args, name) is not None}
    if "hidden" in overrides:
        overrides["hidden"] = _widths(overrides["hidden"])
    settings_of(preset, overrides)  # refused now, before the game is built
    from cfr_agents.files import check_outputs

    check_outputs(*outputs(args.out), args.curve)
    show = not (args.quiet or args.json)
    with tqdm(total=args.iterations, unit="it", disable=None if show else True, file=sys.stderr) as bar:
        model, provenance = train(
            args.algo,
            args.game,
            args.iterations,
            0 if args.seed is None else args.seed,
            lambda done: bar.update(done - bar.n),
            preset=preset,
            checks=Checks(args.eval_every),
            on_check=lambda point: bar.set_postfix(nash_conv=f"{point.nash_conv:.4g}") if show else None,
            overrides=overrides,
        )
    save(args.out, model, provenance)
    if args.curve:
        rows = ["iteration,seconds,nash_conv,nodes_touched"]
        rows += [f"{p.amount},{p.seconds!r},{p.nash_conv!r},{p.nodes_touched}" for p in provenance.curve]
        write_atomic(args.curve, "\n".join(rows) + "\n")
    if args.json:
        print(json.dumps({**provenance.to_json(), "out": args.out}, allow_nan=False))
    else:
        nodes = provenance.hyperparameters.get("nodes_touched")
        print(
            f"{args.algo} on {provenance.game}: {provenance.describe()}, {nodes:,} nodes touched; NashConv "
            f"{provenance.nash_conv:.6g} {provenance.units}{mbb(provenance.nash_conv, provenance.units)}, "
            f"exploitability {provenance.exploitability:.6g} {provenance.units}; saved {args.out}"
        )
    return 0


def _widths(text: str) -> list[int]:
    try:
        widths = [int(part) for part in text.split(",")]
    except ValueError:
        raise InputError(f"--hidden {text!r} is not a list of widths like 64,64") from None
    if not widths or min(widths) < 1 or max(widths) > 4096:
        raise InputError(f"--hidden widths must be from 1 to 4096, got {text!r}")
    return widths
