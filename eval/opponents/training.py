"""Train an opponent family by self-play and measure it exactly: what ``cfr-agents train-opponent`` runs.

Deep CFR and SD-CFR train through the one training loop of every solver (:func:`cfr_agents.training.train`),
the other families (NFSP, DQN, RLCard's ``CFRAgent``) episode by episode or iteration by iteration; every family's
curve is :class:`~cfr_agents.training.CurvePoint`. On a game no compiled tree holds (``rlcard:limit-holdem``) only the
families that train in the environment alone train; their NashConv is not computed there, and RLCard's own
evaluation of them is recorded instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from adapters.inputs import ParameterError
from adapters.rlcard import RLCardGame
from cfr_agents.training import CurvePoint
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree
from eval.agents import strategy_of
from eval.exploitability import exploitability_of_strategy
from eval.opponents.provenance import Provenance, library_versions
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
    on_check: Callable[[CurvePoint], None] = lambda point: None,
    overrides: Mapping[str, Any] | None = None,
) -> tuple[Any, Provenance]:
    """Train up to ``amount`` episodes or iterations from ``seed``; the agent and its provenance, with
    the exact NashConv of its strategy on the compiled tree and the curve of the checks made (none on a game
    without a compiled tree, where ``checks`` are refused). ``overrides`` replace single hyperparameters of the
    preset, for the families that take them."""
    training, game = trainable(kind, game_id)
    if overrides and not training.takes_overrides:
        raise ParameterError("{kind} takes a named {preset} only, not single hyperparameters ({overrides})", kind=kind)
    if preset is not None and preset not in training.presets:
        raise ParameterError(
            "{kind} has no {preset} {got!r}; known: {known}", kind=kind, got=preset, known=", ".join(training.presets)
        )
    treeless = isinstance(game, RLCardGame) and not game.compiled and training.trains_without_tree
    if treeless and checks.every is not None:
        raise ParameterError(
            "{check_every} measures the exact NashConv on the compiled tree; {game} has none", game=game.game_id
        )
    tree = None if treeless else compile_tree(game)  # a family that needs the tree is refused here, in one line
    curve: list[CurvePoint] = []
    check_seconds = 0.0
    started = time.perf_counter()

    def nash_conv(tree: CompiledTree, strategy: FloatArray) -> float:
        """The exact NashConv of ``strategy``, its time kept out of the training time."""
        nonlocal check_seconds
        check_started = time.perf_counter()
        value = exploitability_of_strategy(tree, strategy).nash_conv
        check_seconds += time.perf_counter() - check_started
        return value

    def checked(point: CurvePoint) -> None:
        curve.append(point)
        on_check(point)

    def progress(done: int, agent: Any) -> bool:
        on_progress(done)
        if tree is None or checks.every is None or (done % checks.every and done != amount):
            return False
        elapsed = time.perf_counter() - started - check_seconds
        value = nash_conv(tree, strategy_of(agent, tree))
        checked(CurvePoint(done, elapsed, value))
        target = checks.target_exploitability
        return target is not None and value / 2 <= target

    chosen = preset if preset is not None else next(iter(training.presets))
    rng = np.random.default_rng(seed)
    if training.takes_overrides:  # neural CFR: the training loop of every solver checks and stops
        target = None if checks.target_exploitability is None else 2 * checks.target_exploitability
        trained = training.train(
            game,
            amount,
            rng,
            chosen,
            on_progress,
            dict(overrides or {}),
            nash_conv=nash_conv,
            every=checks.every,
            target_nash_conv=target,
            on_point=checked,
        )
    else:
        trained = training.train(game, amount, rng, chosen, progress)
    evaluating = 0.0 if trained.evaluation is None else trained.evaluation.seconds
    seconds = time.perf_counter() - started - check_seconds - evaluating
    # The saved agent, scored as saved: it may differ from what the last check scored (a thinned SD-CFR model).
    final = None if tree is None else exploitability_of_strategy(tree, strategy_of(trained.agent, tree)).nash_conv
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
        nash_conv=final,
        exploitability=None if final is None else final / 2,
        curve=tuple(curve),
        stopped_by="target_exploitability" if trained.amount < amount else "amount",
        evaluation=trained.evaluation,
    )
    return trained.agent, provenance
