"""``cfr-agents train --algo deep-cfr|sd-cfr``: neural CFR's options (see :mod:`cfr_agents.solvers.neural`),
and which options of ``train`` apply to which family of solvers."""

from __future__ import annotations

import argparse
from typing import Any

from adapters.inputs import InputError
from cfr_agents.cli.common import Within, non_negative_int, positive_int
from cfr_agents.solvers.neural import NEURAL, PRESETS, NeuralSettings, foreign_settings, settings_of
from cfr_agents.solvers.neural.solver import GRADIENT_CLIP, LEARNING_RATE, LEARNING_RATE_DECAY, VALUE_SCALE

HYPERPARAMETERS: dict[str, tuple[Any, str]] = {
    "traversals": (positive_int, "traversals per player per iteration (deals; boards with --traversal public-chance)"),
    "traversal": (
        None,
        "external (one deal and the opponent's actions drawn per traversal) or public-chance (one board per "
        "traversal, every hand's exact regrets; hold'em engine only)",
    ),
    "hidden": (None, "hidden layer widths, e.g. 64,64,64"),
    "advantage_batches": (positive_int, "SGD steps each time a value network is trained"),
    "advantage_batch_size": (positive_int, "value-network mini-batch size"),
    "advantage_memory": (positive_int, "capacity of each player's advantage reservoir"),
    "advantage_init": (None, "scratch (retrain from fresh weights each iteration) or last (warm start)"),
    "average_batches": (positive_int, "SGD steps of the average-strategy network (deep-cfr)"),
    "average_batch_size": (positive_int, "average-network mini-batch size (deep-cfr)"),
    "strategy_memory": (positive_int, "capacity of the strategy reservoir (deep-cfr)"),
    "learning_rate": (Within(LEARNING_RATE), f"Adam's step size eta, in {LEARNING_RATE}"),
    "learning_rate_decay": (
        Within(LEARNING_RATE_DECAY),
        f"kappa, in {LEARNING_RATE_DECAY}: value-network step eta*min(1, t0/t)^kappa (0: constant)",
    ),
    "decay_start": (positive_int, "t0 of --learning-rate-decay"),
    "gradient_clip": (Within(GRADIENT_CLIP), f"gradient-norm clipping, in {GRADIENT_CLIP}"),
    "value_scale": (
        Within(VALUE_SCALE),
        f"s, in {VALUE_SCALE}: value networks fit the regrets divided by s (the same strategy; a better fit "
        "when s is near the game's largest stake)",
    ),
    "threads": (positive_int, "torch threads"),
    "kept_networks": (
        non_negative_int,
        "sd-cfr model file: the value networks of at most N iterations per player (0: all)",
    ),
    "inputs": (
        None,
        "cards (the information-state tensor), strength (with the hand's E[HS]; hold'em engine only) or canonical "
        "(the tensor of the state's suit-canonical image, as scoring reads it; hold'em games of one board round)",
    ),
}
"""Every hyperparameter of :class:`~cfr_agents.solvers.neural.NeuralSettings`, as ``--traversals`` ..."""
TABULAR_ONLY = ("suit_isomorphism", "sampling", "averaging", "epsilon", "chance_draws", "alpha", "beta", "gamma")
"""Options of ``train`` that only the full-tree and sampled solvers take."""
NEURAL_ONLY = ("preset", *HYPERPARAMETERS)
"""Options of ``train`` that only the neural solvers take."""


def register_options(command: Any) -> None:
    """The neural options of ``train`` (its other options are every solver's, or the tabular solvers')."""
    group = command.add_argument_group("neural CFR (--algo deep-cfr or sd-cfr)")
    group.add_argument(
        "--preset",
        help=f"hyperparameter set: {', '.join(PRESETS)} (default {next(iter(PRESETS))}: the papers' Leduc setup)",
    )
    for name, (kind, text) in HYPERPARAMETERS.items():
        group.add_argument(f"--{name.replace('_', '-')}", type=kind, help=f"{text} (default: the preset's)")


def flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def refuse_inapplicable(args: argparse.Namespace, algorithm: str) -> None:
    """Refuse, in one line, the options given that ``algorithm``'s family does not take."""
    given = {name for name, value in vars(args).items() if value is not None and value is not False}
    if algorithm in NEURAL:
        tabular = [flag(name) for name in TABULAR_ONLY if name in given]
        if tabular:
            raise InputError(f"{', '.join(tabular)} {_verb(tabular)} to the tabular solvers, not --algo {algorithm}")
        foreign = [name for name in foreign_settings(algorithm) if name in given]
        if foreign:
            owner = next(other for other in NEURAL if other != algorithm)
            flags = [flag(name) for name in foreign]
            raise InputError(f"{', '.join(flags)} {_verb(flags)} to --algo {owner} only, not {algorithm}")
        return
    neural = [flag(name) for name in NEURAL_ONLY if name in given]
    if neural:
        raise InputError(f"{', '.join(neural)} {_verb(neural)} to --algo deep-cfr or sd-cfr only")


def _verb(flags: list[str]) -> str:
    return "applies" if len(flags) == 1 else "apply"


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The hyperparameters given, as :class:`NeuralSettings`' fields (``--hidden 64,64`` -> ``(64, 64)``)."""
    given = {name: getattr(args, name) for name in HYPERPARAMETERS if getattr(args, name) is not None}
    if "hidden" in given:
        given["hidden"] = _widths(given["hidden"])
    return given


def preset(args: argparse.Namespace) -> str:
    """``--preset``, the first preset when it is not given; an unknown one (an empty name too) is refused."""
    chosen: str = next(iter(PRESETS)) if args.preset is None else args.preset
    if chosen not in PRESETS:
        raise InputError(f"unknown --preset {chosen!r}; choose from {', '.join(PRESETS)}")
    return chosen


def settings(args: argparse.Namespace) -> NeuralSettings:
    """The settings of ``--preset`` with the hyperparameters given, checked."""
    return settings_of(preset(args), overrides(args))


def check_resume(args: argparse.Namespace, saved: NeuralSettings, saved_preset: str) -> None:
    """Refuse hyperparameters (or a preset) that contradict the checkpoint being resumed."""
    if args.preset is not None and args.preset != saved_preset:
        raise InputError(f"the checkpoint was trained with --preset {saved_preset}, not {args.preset!r}")
    for name, value in overrides(args).items():
        if getattr(saved, name) != value:
            shown = ",".join(map(str, value)) if name == "hidden" else value
            mine = getattr(saved, name)
            mine = ",".join(map(str, mine)) if name == "hidden" else mine
            raise InputError(f"the checkpoint was trained with {flag(name)} {mine}, not {shown}")


def _widths(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"--hidden {text!r} is not a list of widths like 64,64") from None
