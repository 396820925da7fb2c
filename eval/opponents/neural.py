"""Deep CFR and Single Deep CFR models (:mod:`cfr_agents.solvers.neural`) as trained opponents.

``cfr-agents train --algo deep-cfr|sd-cfr`` (or ``train-opponent deep-cfr|sd-cfr``) trains on any game with
information-state tensors and writes a weights-only ``.safetensors`` file with a JSON sidecar. The
sidecar is a :class:`~eval.opponents.provenance.Provenance`: game, rules, iterations, seed, every
hyperparameter, training seconds (exact checks excluded), nodes touched, library versions, the exact
NashConv and exploitability, and the curve of the checks. It adds the networks' hidden widths and the
weights' SHA-256. A model loads by path wherever an agent is accepted; it plays by running its networks
(:class:`~cfr_agents.neural_policy.NeuralPolicy`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

import cfr_agents.training as training
from adapters import Game
from adapters.inputs import InputError
from adapters.tensors import encoder
from cfr_agents.files import replacing, write_atomic
from cfr_agents.neural_policy import NeuralPolicy, from_solver
from cfr_agents.solvers.neural import PRESETS, NeuralSolver, make_neural_solver, settings_of
from cfr_agents.solvers.neural.holdem import EngineGame, HoldemNeuralSolver
from cfr_agents.training import CurvePoint, StopRule, TrainingRun
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree
from eval.exploitability import exploitability_of_strategy
from eval.opponents.nfsp import outputs, parse_weights, read_weights, weights_path
from eval.opponents.provenance import Provenance, Trained, check_game, library_versions


def train(algorithm: str) -> Callable[..., Trained[NeuralPolicy]]:
    """The :attr:`~eval.opponents.base.Training.train` function of ``algorithm``: ``run(game, iterations, rng,
    preset, on_progress, overrides, *, nash_conv, every, target_nash_conv, on_point)`` trains through
    :func:`cfr_agents.training.train` -- NashConv measured by ``nash_conv`` every ``every`` iterations (each
    point handed to ``on_point``), stopping at ``iterations`` or at the first of those checks at or below
    ``target_nash_conv`` -- and calls ``on_progress(iteration)`` as it goes."""

    def run(
        game: Game,
        iterations: int,
        rng: np.random.Generator,
        preset: str,
        on_progress: Callable[[int], None],
        overrides: Mapping[str, Any],
        *,
        nash_conv: Callable[[CompiledTree, FloatArray], float],
        every: int | None = None,
        target_nash_conv: float | None = None,
        on_point: Callable[[CurvePoint], None] | None = None,
    ) -> Trained[NeuralPolicy]:
        settings = settings_of(preset, overrides)
        tree = compile_tree(game)
        solver = make_neural_solver(tree, encoder(game).of_keys(tree.infoset_keys), algorithm, settings, rng=rng)
        solver.compile()  # Numba compiles or loads its cache here, outside the curve's training time
        training.train(
            solver,
            StopRule(iterations, target_nash_conv),
            nash_conv,
            record_curve=every is not None,
            every=every,
            on_progress=lambda iteration, _: on_progress(iteration),
            on_point=on_point,
        )
        return Trained(from_solver(solver), {"preset": preset, **solver.parameters()}, solver.iteration)

    return run


def save_trained(
    sidecar: str | Path,
    solver: NeuralSolver | HoldemNeuralSolver,
    run: TrainingRun,
    *,
    seed: int,
    preset: str,
    curve: bool,
    score: Callable[[NeuralPolicy], float | None] | None = None,
) -> float | None:
    """Save the model of ``solver`` after ``run`` (:func:`save`), with its provenance and, if ``curve``, the run's
    curve; its exact NashConv, as saved (an SD-CFR model thinned to ``kept_networks`` plays other than the
    solver's average). A model trained on the hold'em engine is scored by ``score``
    (:func:`eval.train_report.engine_nash_conv`), ``None`` where nothing scores it; it is saved first without its
    NashConv, so a scoring stopped part way (an hour on FHP for a mixture of many networks) leaves the model."""
    model = from_solver(solver)
    tree = solver.tree

    def provenance(nash_conv: float | None) -> Provenance:
        return Provenance(
            kind=solver.algorithm,
            game=tree.game_id,
            rules_fingerprint=tree.rules_fingerprint,
            units=tree.units,
            episodes=None,
            iterations=solver.iteration,
            seed=seed,
            hyperparameters={"preset": preset, **solver.parameters()},
            training_seconds=run.solve_seconds,
            versions=library_versions(),
            nash_conv=nash_conv,
            exploitability=None if nash_conv is None else nash_conv / 2,
            curve=run.curve if curve else (),
            stopped_by=run.stopped_by,
        )

    if isinstance(tree, EngineGame):
        save(
            sidecar, model, provenance(None)
        )  # on disk before a scoring that can take an hour: stopping it keeps the model
        nash_conv = None if score is None else score(model)
        if nash_conv is None:
            return None
    else:
        nash_conv = exploitability_of_strategy(tree, model.strategy_on(tree)).nash_conv
    save(sidecar, model, provenance(nash_conv))
    return nash_conv


def check_trainable(game: Game) -> None:
    """Refuse, before any work, a game without information-state tensors."""
    encoder(game)


def save(sidecar: str | Path, model: NeuralPolicy, provenance: Provenance) -> None:
    """Write the weights (safetensors, float32 arrays only) and then the JSON sidecar, each atomically; weights
    that are not finite are refused, and nothing is written."""
    from safetensors.numpy import save as serialize

    bad = next((name for name, value in model.weights.items() if not np.isfinite(value).all()), None)
    if bad is not None:
        raise InputError(f"the {model.algorithm} model's weights {bad!r} are not finite; nothing was saved")
    weights = weights_path(sidecar)
    content = serialize({name: np.ascontiguousarray(value) for name, value in model.weights.items()})
    with replacing(weights) as temporary:
        temporary.write_bytes(content)
    data = {
        **provenance.to_json(),
        "hidden": list(model.hidden),
        "inputs": model.inputs,
        "weights": weights.name,
        "weights_sha256": hashlib.sha256(content).hexdigest(),
    }
    write_atomic(sidecar, json.dumps(data, indent=1) + "\n")


def load_model(sidecar: str | Path, data: Mapping[str, Any], provenance: Provenance) -> NeuralPolicy:
    """The model a sidecar written by :func:`save` describes (its weights checked against the digest)."""
    from safetensors.numpy import load

    weights, content = read_weights(sidecar, data)
    hidden = data.get("hidden")
    if not isinstance(hidden, list) or not all(isinstance(width, int) for width in hidden):
        raise InputError(f"{str(sidecar)!r} lacks the networks' hidden widths")
    inputs = data.get("inputs", "cards")  # absent from the files written before the strength input
    if not isinstance(inputs, str):
        raise InputError(f"{str(sidecar)!r} names the networks' inputs {inputs!r}, not a string")
    assert provenance.iterations is not None
    return NeuralPolicy(
        provenance.game,
        provenance.rules_fingerprint,
        provenance.kind,
        tuple(hidden),
        provenance.iterations,
        parse_weights(load, content, weights),
        inputs,
    )


def load(sidecar: Path, data: Mapping[str, Any], provenance: Provenance, game: Game) -> NeuralPolicy:
    """The playing model of a sidecar, for ``game`` (another game or other rules are refused)."""
    check_game(provenance, game.game_id, game.rules_fingerprint, str(sidecar))
    return load_model(sidecar, data, provenance)


__all__ = [
    "PRESETS",
    "check_trainable",
    "load",
    "load_model",
    "outputs",
    "save",
    "save_trained",
    "settings_of",
    "train",
]
