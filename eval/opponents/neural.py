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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from adapters import Game
from adapters.inputs import InputError
from adapters.tensors import encoder
from cfr_agents.files import replacing, write_atomic
from cfr_agents.neural_policy import NeuralPolicy, from_solver
from cfr_agents.solvers.neural import NeuralSettings, NeuralSolver, make_neural_solver
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree
from eval.agents import Agent
from eval.opponents.nfsp import outputs, weights_path
from eval.opponents.provenance import Progress, Provenance, Trained, check_game

_FAST: Mapping[str, Any] = {
    "traversals": 5000,
    "hidden": [128, 128],
    "advantage_batches": 50,
    "advantage_batch_size": 16384,
    "advantage_init": "last",
    "learning_rate": 2e-3,
    "average_batches": 2000,
    "average_batch_size": 16384,
}
PRESETS: Mapping[str, Mapping[str, Any]] = {
    "paper": {},
    "fast": _FAST,
    "fast-large": {
        **_FAST,
        "advantage_batch_size": 262144,
        "advantage_memory": 50_000_000,
        "learning_rate_decay": 0.5,
        "decay_start": 100,
    },
}
"""``paper``: :class:`~cfr_agents.solvers.neural.NeuralSettings`' defaults, the papers' Leduc setup; ``fast``:
smaller networks and batches that converge on Kuhn within a minute on one CPU core; ``fast-large``: ``fast`` with
16 times the advantage mini-batch, 50 times the advantage memory and a step size falling as :math:`t^{-1/2}` after
iteration 100, for Leduc-sized games, where the noise of the mini-batches' regret targets limits ``fast``."""


class TrainingAgent(Agent):
    """A solver while it trains, as evaluation sees it: its exact average strategy, one batched pass."""

    def __init__(self, solver: NeuralSolver) -> None:
        self.raw = solver

    def strategy(self, tree: CompiledTree) -> FloatArray:
        strategy: FloatArray = self.raw.average_strategy()
        return strategy

    @property
    def nodes_touched(self) -> int:
        """Nodes the traversals touched so far (recorded with each exact check)."""
        return int(self.raw.nodes_touched)


def settings_of(preset: str, overrides: Mapping[str, Any] | None = None) -> NeuralSettings:
    """The settings of a preset, with ``overrides`` (hyperparameters named as :class:`NeuralSettings`' fields)."""
    values = {**PRESETS[preset], **(overrides or {})}
    if "hidden" in values:
        values["hidden"] = tuple(values["hidden"])
    unknown = sorted(set(values) - set(NeuralSettings.__dataclass_fields__))
    if unknown:
        raise InputError(f"unknown neural CFR hyperparameter {unknown[0]!r}")
    settings = NeuralSettings(**values)
    settings.check()
    return settings


def train(algorithm: str) -> Any:
    """The :attr:`~eval.opponents.base.Training.train` function of ``algorithm``."""

    def run(
        game: Game,
        iterations: int,
        rng: np.random.Generator,
        preset: str,
        on_progress: Progress,
        overrides: Mapping[str, Any],
    ) -> Trained[Any]:
        settings = settings_of(preset, overrides)
        tree = compile_tree(game)
        solver = make_neural_solver(tree, encoder(game).of_keys(tree.infoset_keys), algorithm, settings, rng=rng)
        agent = TrainingAgent(solver)
        for done in range(1, iterations + 1):
            solver.run(1)
            if on_progress(done, agent):
                break
        parameters = {"preset": preset, **settings.parameters(), "nodes_touched": solver.nodes_touched}
        return Trained(from_solver(solver), parameters, solver.iteration)

    return run


def check_trainable(game: Game) -> None:
    """Refuse, before any work, a game without information-state tensors."""
    encoder(game)


def save(sidecar: str | Path, model: NeuralPolicy, provenance: Provenance) -> None:
    """Write the weights (safetensors, float32 arrays only) and then the JSON sidecar, each atomically."""
    from safetensors.numpy import save as serialize

    weights = weights_path(sidecar)
    content = serialize({name: np.ascontiguousarray(value) for name, value in model.weights.items()})
    with replacing(weights) as temporary:
        temporary.write_bytes(content)
    data = {
        **provenance.to_json(),
        "hidden": list(model.hidden),
        "weights": weights.name,
        "weights_sha256": hashlib.sha256(content).hexdigest(),
    }
    write_atomic(sidecar, json.dumps(data, indent=1) + "\n")


def load_model(sidecar: str | Path, data: Mapping[str, Any], provenance: Provenance) -> NeuralPolicy:
    """The model a sidecar written by :func:`save` describes (its weights checked against the digest)."""
    from safetensors.numpy import load

    weights = Path(sidecar).parent / str(data.get("weights", ""))
    try:
        content = weights.read_bytes()
    except OSError as error:
        raise InputError(f"cannot read the weights of {str(sidecar)!r}: {error.strerror}") from None
    if hashlib.sha256(content).hexdigest() != data.get("weights_sha256"):
        raise InputError(f"{str(weights)!r} is not the weights file its sidecar {str(sidecar)!r} describes")
    hidden = data.get("hidden")
    if not isinstance(hidden, list) or not all(isinstance(width, int) for width in hidden):
        raise InputError(f"{str(sidecar)!r} lacks the networks' hidden widths")
    assert provenance.iterations is not None
    return NeuralPolicy(
        provenance.game,
        provenance.rules_fingerprint,
        provenance.kind,
        tuple(hidden),
        provenance.iterations,
        load(content),
    )


def load(sidecar: Path, data: Mapping[str, Any], provenance: Provenance, game: Game) -> NeuralPolicy:
    """The playing model of a sidecar, for ``game`` (another game or other rules are refused)."""
    check_game(provenance, game.game_id, game.rules_fingerprint, str(sidecar))
    return load_model(sidecar, data, provenance)


__all__ = [
    "PRESETS",
    "TrainingAgent",
    "check_trainable",
    "load",
    "load_model",
    "outputs",
    "save",
    "settings_of",
    "train",
]
