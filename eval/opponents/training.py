"""Train an opponent family by self-play and measure it exactly: what ``cfr-agents train-opponent`` runs."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from adapters.inputs import InputError
from cfr_agents.tree import compile_tree
from eval.agents import strategy_of
from eval.exploitability import exploitability_of_strategy
from eval.opponents.provenance import CheckPoint, Provenance, library_versions
from eval.opponents.registry import trainable


@dataclass(frozen=True)
class Checks:
    """Exact checks during training: every ``every`` episodes or iterations (and at the end), stopping
    at the first check whose exploitability is at most ``target_exploitability``, if given."""

    every: int | None = None
    target_exploitability: float | None = None


def train(
    kind: str,
    game_id: str,
    amount: int,
    seed: int,
    on_progress: Callable[[int], None],
    *,
    preset: str | None = None,
    checks: Checks = Checks(),
    on_check: Callable[[CheckPoint], None] = lambda point: None,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Any, Provenance]:
    """Train up to ``amount`` episodes or iterations from ``seed``; the agent and its provenance, with
    the exact NashConv of its strategy on the compiled tree and the curve of the checks made.
    ``overrides`` replace single hyperparameters of the preset, for the families that take them."""
    training, game = trainable(kind, game_id)
    if overrides and not training.takes_overrides:
        raise InputError(f"{kind} takes named presets only (--hyperparameters), not single hyperparameters")
    if preset is not None and preset not in training.presets:
        raise InputError(f"{kind} has no --hyperparameters {preset!r}; known: {', '.join(training.presets)}")
    tree = compile_tree(game)
    curve: list[CheckPoint] = []
    check_seconds = 0.0
    started = time.perf_counter()

    def progress(done: int, agent: Any) -> bool:
        nonlocal check_seconds
        on_progress(done)
        if checks.every is None or (done % checks.every and done != amount):
            return False
        check_started = time.perf_counter()
        nash_conv = exploitability_of_strategy(tree, strategy_of(agent, tree)).nash_conv
        nodes = getattr(agent, "nodes_touched", None)  # what a sampling trainer reports, if it does
        curve.append(CheckPoint(done, check_started - started - check_seconds, nash_conv, nodes))
        check_seconds += time.perf_counter() - check_started
        on_check(curve[-1])
        target = checks.target_exploitability
        return target is not None and nash_conv / 2 <= target

    chosen = preset if preset is not None else next(iter(training.presets))
    more = {"overrides": dict(overrides or {})} if training.takes_overrides else {}
    trained = training.train(game, amount, np.random.default_rng(seed), chosen, progress, **more)
    seconds = time.perf_counter() - started - check_seconds
    # The saved agent, scored as saved: it may differ from what the last check scored (a thinned SD-CFR model).
    nash_conv = exploitability_of_strategy(tree, strategy_of(trained.agent, tree)).nash_conv
    provenance = Provenance(
        kind=kind,
        game=game.game_id,
        rules_fingerprint=game.rules_fingerprint,
        units=game.units,
        episodes=trained.amount if training.unit == "episodes" else None,
        iterations=trained.amount if training.unit == "iterations" else None,
        seed=seed,
        hyperparameters=trained.hyperparameters,
        training_seconds=seconds,
        versions=library_versions(),
        nash_conv=nash_conv,
        exploitability=nash_conv / 2,
        curve=tuple(curve),
        stopped_by="target_exploitability" if trained.amount < amount else "amount",
    )
    return trained.agent, provenance
