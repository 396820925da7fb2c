"""``rlcard-dqn``: RLCard's ``DQNAgent`` (PyTorch; Mnih et al. 2015, with double-DQN targets), trained exactly as
RLCard's ``examples/run_rl.py`` trains it.

The one preset, ``rlcard-run-rl``, is the example's: a multilayer perceptron of 64-64 (``mlp_layers``), every other
setting ``DQNAgent``'s default, and the example's protocol (:data:`eval.opponents.nfsp.RUN_RL`): one learner in seat
0 against RLCard's ``RandomAgent``, fed its own transitions, evaluated by RLCard's ``tournament`` every 100 episodes
over 2,000 games. :func:`eval.opponents.nfsp.train_in_env` is the loop, as for ``rlcard-nfsp``.

A trained agent is saved as ``rlcard-nfsp`` is (:func:`eval.opponents.nfsp.save`): its Q-network alone, ``seat0.*``
in a weights-only ``.safetensors`` file, and a JSON sidecar with the weights' SHA-256. It plays greedily, as
``DQNAgent.eval_step`` does: the legal action of largest Q-value, the same in every seat (RLCard's ``obs`` does not
name the seat). It observes RLCard's lossy ``obs``. torch is the optional ``[nfsp]`` extra.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np

from adapters import Game
from adapters.rlcard import RLCardGame
from eval.opponents.nfsp import (
    RUN_RL,
    SeatedAgents,
    constructor_defaults,
    load_in_env,
    require_torch,
    train_in_env,
)
from eval.opponents.provenance import Progress, Provenance, Trained

EXAMPLE: Mapping[str, Any] = {"mlp_layers": [64, 64]}
"""The layer sizes of RLCard's DQN example (``examples/run_rl.py``); the rest are ``DQNAgent``'s defaults, recorded
in full in each sidecar."""

PRESETS: Mapping[str, Mapping[str, Any]] = {"rlcard-run-rl": {**EXAMPLE, **RUN_RL}}
"""``train-opponent rlcard-dqn --hyperparameters NAME``: RLCard's example, the only one for DQN."""

NETWORK = attrgetter("q_estimator.qnet")
"""What plays of ``DQNAgent``: the Q-network of its estimator (the target network only trains)."""


def hyperparameters(preset: str) -> dict[str, Any]:
    """Every setting of the preset ``preset``: ``DQNAgent``'s defaults with the preset's over them."""
    from rlcard.agents.dqn_agent import DQNAgent

    return {**constructor_defaults(DQNAgent), **PRESETS[preset]}


def _agent(num_actions: int, state_shape: Sequence[int], settings: Mapping[str, Any]) -> Any:
    torch = require_torch("rlcard-dqn")
    from rlcard.agents.dqn_agent import DQNAgent

    return DQNAgent(num_actions=num_actions, state_shape=state_shape, device=torch.device("cpu"), **settings)


def train(
    game: RLCardGame, episodes: int, rng: np.random.Generator, preset: str, on_progress: Progress
) -> Trained[SeatedAgents]:
    """``DQNAgent`` trained up to ``episodes`` by :func:`eval.opponents.nfsp.train_in_env`."""
    return train_in_env(game, episodes, rng, preset, hyperparameters(preset), _agent, NETWORK, on_progress)


def load(sidecar: str | Path, data: Mapping[str, Any], provenance: Provenance, game: Game) -> SeatedAgents:
    """The playing agent of an ``rlcard-dqn`` sidecar, for ``game`` (refusing another game or other rules, weights
    that are not those the sidecar describes, and settings that are not its preset's)."""
    return load_in_env(sidecar, data, provenance, game, PRESETS, hyperparameters, _agent, NETWORK)
