"""Neural Fictitious Self-Play (Heinrich & Silver 2016) from both toolkits, and RLCard's agents trained in its env.

* ``rlcard-nfsp``: RLCard's ``NFSPAgent`` (PyTorch), trained in RLCard's env as RLCard's examples do (each
  episode every learner samples its mode, ``env.run(is_training=True)``, ``reorganize``, each learner is fed
  its own transitions): in self-play, one agent per seat, or under the preset ``rlcard-run-rl`` exactly as
  RLCard's ``examples/run_rl.py`` trains it (:data:`RUN_RL`: one learner in seat 0 against RLCard's
  ``RandomAgent``, evaluated by RLCard's ``tournament`` during training). It observes RLCard's lossy ``obs``.
  :func:`train_in_env` is the loop; ``rlcard-dqn`` (:mod:`eval.opponents.dqn`) trains with it too.
* ``openspiel-nfsp``: OpenSpiel's PyTorch ``nfsp.NFSP``, one per player, trained in OpenSpiel's
  ``rl_environment`` with the hyperparameters of OpenSpiel's ``nfsp_leduc_pytorch.py`` example.
  It observes OpenSpiel's ``information_state_tensor`` (perfect recall).

Both libraries sample from NumPy's global generator (and Python's ``random`` and torch's);
training seeds all three, and the environments, with seeds drawn from one
``numpy.random.Generator``, and runs torch on one thread, so the same seed gives the same weights.

A trained pair is saved as a weights-only ``.safetensors`` file (each seat's average-policy
network, ``seat0.*`` and ``seat1.*``: what plays; ``seat0.*`` alone for the one learner of ``rlcard-run-rl``,
which then plays every seat) and a JSON sidecar with its :class:`~eval.opponents.provenance.Provenance` and the
weights' SHA-256. Evaluation plays the average policy, as both libraries do by default. Every agent trained in
RLCard's env is also scored as RLCard's example scores it (:func:`example_evaluation`), which is all that is
measured on a game no compiled tree holds. torch is the optional ``[nfsp]`` extra.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import json
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from operator import attrgetter
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
import pyspiel
from open_spiel.python import policy as openspiel_policy

from adapters import Game
from adapters.inputs import (
    MAX_SIDECAR_BYTES,
    MAX_WEIGHTS_BYTES,
    InputError,
    check_regular,
    read_json,
    read_regular,
    require_extra,
)
from adapters.openspiel import OpenSpielGame
from adapters.rlcard import RLCardGame
from cfr_agents.files import file_beside, replacing, write_atomic
from eval.opponents.provenance import FORMAT as MODEL_FORMAT
from eval.opponents.provenance import Evaluation, Progress, Provenance, Trained, check_game

RLCARD_EXAMPLE: Mapping[str, Any] = {"hidden_layers_sizes": [64, 64], "q_mlp_layers": [64, 64]}
"""The layer sizes of RLCard's NFSP example (``examples/run_rl.py``); the rest are ``NFSPAgent``'s
defaults, recorded in full in each sidecar."""

OPENSPIEL_HYPERPARAMETERS: Mapping[str, Any] = {
    "hidden_layers_sizes": [128],
    "replay_buffer_capacity": 200_000,
    "reservoir_buffer_capacity": 2_000_000,
    "min_buffer_size_to_learn": 1000,
    "anticipatory_param": 0.1,
    "batch_size": 128,
    "learn_every": 64,
    "rl_learning_rate": 0.01,
    "sl_learning_rate": 0.01,
    "optimizer_str": "sgd",
    "loss_str": "mse",
    "update_target_network_every": 19200,
    "discount_factor": 1.0,
    "epsilon_decay_duration": 20_000_000,
    "epsilon_start": 0.06,
    "epsilon_end": 0.001,
}
"""OpenSpiel's Leduc NFSP example flags (``python/examples/leduc_nfsp.py``)."""

RLCARD_WITH_OPENSPIEL_EXAMPLE: Mapping[str, Any] = {
    "hidden_layers_sizes": [128],
    "q_mlp_layers": [128],
    "reservoir_buffer_capacity": 2_000_000,
    "q_replay_memory_size": 200_000,
    "min_buffer_size_to_learn": 1000,
    "q_replay_memory_init_size": 1000,
    "anticipatory_param": 0.1,
    "batch_size": 128,
    "q_batch_size": 128,
    "train_every": 64,
    "q_train_every": 64,
    "rl_learning_rate": 0.01,
    "sl_learning_rate": 0.01,
    "q_update_target_estimator_every": 19200 // 64,
    "q_discount_factor": 1.0,
    "q_epsilon_start": 0.06,
    "q_epsilon_end": 0.001,
    "q_epsilon_decay_steps": 20_000_000,
}
""":data:`OPENSPIEL_HYPERPARAMETERS` in ``NFSPAgent``'s terms. RLCard counts its target-network period
in training steps and OpenSpiel in environment steps, so 19,200 steps learning every 64 are 300
training steps; RLCard's optimiser stays Adam (OpenSpiel's example uses SGD)."""

RUN_RL: Mapping[str, Any] = {
    "note": (
        "RLCard 1.2.0 examples/run_rl.py (datamllab/rlcard), its defaults: layers 64-64, 5,000 episodes, the "
        "learner in seat 0 against RandomAgent, fed its own transitions; tournament(env, 2000) every 100 episodes"
    ),
    "opponent": "random",
    "evaluate_every": 100,
    "num_eval_games": 2000,
}
"""How RLCard's ``examples/run_rl.py`` trains DQN and NFSP (its defaults; the same in RLCard 1.2.0 and today): one
learner in seat 0, RLCard's ``RandomAgent`` in every other seat, the learner fed only its own transitions, and
``tournament(env, num_eval_games)[0]``, its average payoff against random play, logged after every episode whose
0-based index is a multiple of ``evaluate_every``. Its ``--num_episodes`` default, 5,000, is ``--episodes``. A preset
holding these keys trains this way; its other keys are the agent's constructor's."""

RLCARD_PRESETS: Mapping[str, Mapping[str, Any]] = {
    "rlcard-example": RLCARD_EXAMPLE,
    "openspiel-example": RLCARD_WITH_OPENSPIEL_EXAMPLE,
    "rlcard-run-rl": {**RLCARD_EXAMPLE, **RUN_RL},
}
"""``train-opponent rlcard-nfsp --hyperparameters NAME``: whose example's settings to train with (``rlcard-run-rl``:
RLCard's ``examples/run_rl.py`` exactly, against random play; the others in self-play)."""
OPENSPIEL_WITH_RLCARD_EXAMPLE: Mapping[str, Any] = {
    "hidden_layers_sizes": [64, 64],
    "replay_buffer_capacity": 20_000,
    "reservoir_buffer_capacity": 20_000,
    "min_buffer_size_to_learn": 100,
    "anticipatory_param": 0.1,
    "batch_size": 256,
    "learn_every": 1,
    "rl_learning_rate": 0.1,
    "sl_learning_rate": 0.005,
    "optimizer_str": "adam",
    "loss_str": "mse",
    "update_target_network_every": 1000,
    "discount_factor": 0.99,
    "epsilon_decay_duration": 1_000_000,
    "epsilon_start": 0.06,
    "epsilon_end": 0.0,
}
"""RLCard's NFSP example (``NFSPAgent``'s defaults, layers 64-64) in OpenSpiel's ``NFSP`` terms. OpenSpiel
shares one batch size, one learning period and one network shape between its two networks: the
supervised network's batch (256) and RLCard's 64-64 layers for both."""

OPENSPIEL_EXAMPLE_WITH_ADAM: Mapping[str, Any] = {**OPENSPIEL_HYPERPARAMETERS, "optimizer_str": "adam"}
"""OpenSpiel's example flags with Adam, RLCard's optimiser, in place of SGD: the settings ``rlcard-nfsp``
trains with under ``openspiel-example`` (:data:`RLCARD_WITH_OPENSPIEL_EXAMPLE`)."""

OPENSPIEL_PRESETS: Mapping[str, Mapping[str, Any]] = {
    "openspiel-example": OPENSPIEL_HYPERPARAMETERS,
    "rlcard-example": OPENSPIEL_WITH_RLCARD_EXAMPLE,
    "openspiel-example-adam": OPENSPIEL_EXAMPLE_WITH_ADAM,
}


def require_torch(name: str) -> ModuleType:
    """``torch``, or a one-line :class:`~adapters.inputs.MissingExtraError` naming the ``[nfsp]`` extra."""
    return require_extra("torch", "nfsp", name)


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """torch on one thread within the block (nothing to do without torch): networks evaluated in a
    worker process and in this one give the same bits, and the workers are the parallelism."""
    try:
        torch = importlib.import_module("torch")
    except ImportError:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@contextlib.contextmanager
def _seeded(rng: np.random.Generator) -> Iterator[None]:
    """Seed the global generators both libraries draw from; torch on one thread."""
    torch = require_torch("NFSP")
    np.random.seed(int(rng.integers(2**31)))
    random.seed(int(rng.integers(2**31)))
    torch.manual_seed(int(rng.integers(2**31)))
    with one_thread():
        yield


@contextlib.contextmanager
def _quiet_stdout() -> Iterator[None]:
    """RLCard's ``NFSPAgent`` prints a log line per step with carriage returns; drop them."""
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        yield


NFSP_NETWORK: Callable[[Any], Any] = attrgetter("policy_network")
"""What plays of RLCard's ``NFSPAgent``: its average-policy network (``evaluate_with="average_policy"``)."""


class SeatedAgents:
    """An RLCard agent that hands each state to the agent of the seat to act
    (``state["raw_obs"]["current_player"]``); it plays either seat of a match. A single agent (the learner of
    :data:`RUN_RL`, trained in seat 0) plays every seat: RLCard's Leduc and limit hold'em draw the small-blind
    seat at random each hand, and its ``obs`` does not name the seat. ``network`` gives an agent's network that
    plays (:data:`NFSP_NETWORK`, DQN's Q-network)."""

    use_raw = False

    def __init__(self, agents: Sequence[Any], network: Callable[[Any], Any] = NFSP_NETWORK) -> None:
        self.agents = list(agents)
        self.network = network

    def _agent(self, state: Mapping[str, Any]) -> Any:
        return self.agents[0 if len(self.agents) == 1 else int(state["raw_obs"]["current_player"])]

    def step(self, state: Mapping[str, Any]) -> int:
        return int(self._agent(state).step(state))

    def eval_step(self, state: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        action, info = self._agent(state).eval_step(state)
        return int(action), info

    def networks(self) -> list[Any]:
        """Each seat's network that plays."""
        return [self.network(seat) for seat in self.agents]

    @property
    def batched(self) -> bool:
        """Whether :meth:`batch_probabilities` answers for these agents: RLCard's ``NFSPAgent`` playing its average
        policy, and ``DQNAgent``."""
        from rlcard.agents import DQNAgent, NFSPAgent

        return all(
            isinstance(agent, DQNAgent) or (isinstance(agent, NFSPAgent) and agent.evaluate_with == "average_policy")
            for agent in self.agents
        )

    def batch_probabilities(self, state: Mapping[str, Any], obs: np.ndarray, legal: Sequence[int]) -> np.ndarray:
        """What ``eval_step`` plays at ``state`` (a state dict of RLCard's env) for each row of ``obs`` (the ``obs``
        of that state with other cards in the hand; the same legal action ids ``legal``), every row in one pass of the
        network: row :math:`i` holds the probability of each of the env's action ids. NFSP's is
        ``remove_illegal(exp(policy_network(obs)))``; DQN's is 1 on the legal action of largest Q-value. A batch and
        single rows can differ in the last bits of float32."""
        import torch
        from rlcard.agents import NFSPAgent

        agent = self._agent(state)
        with torch.no_grad():
            if isinstance(agent, NFSPAgent):  # rlcard.utils.remove_illegal, row by row
                scores = np.exp(agent.policy_network(torch.from_numpy(obs).float()).cpu().numpy())
                probabilities = np.zeros(scores.shape)
                probabilities[:, legal] = scores[:, legal]
                totals = probabilities.sum(axis=1)
                probabilities[np.ix_(np.flatnonzero(totals == 0), np.asarray(legal))] = 1 / len(legal)
                probabilities[totals > 0] /= totals[totals > 0, None]
            else:  # DQNAgent.eval_step: argmax of the Q-values masked to the legal actions
                scores = agent.q_estimator.predict_nograd(obs)
                masked = np.full(scores.shape, -np.inf)
                masked[:, legal] = scores[:, legal]
                probabilities = np.zeros(scores.shape)
                probabilities[np.arange(len(obs)), masked.argmax(axis=1)] = 1.0
        return probabilities


class NFSPPolicy(openspiel_policy.Policy):  # type: ignore[misc]
    """OpenSpiel NFSP agents as an OpenSpiel policy: each player's average-policy network at the
    ``information_state_tensor``, as OpenSpiel's ``nfsp_leduc_pytorch.py`` evaluates them."""

    def __init__(self, game: pyspiel.Game, agents: Sequence[Any]) -> None:
        super().__init__(game, list(range(len(agents))))
        self.agents = list(agents)

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        from open_spiel.python import rl_environment
        from open_spiel.python.pytorch import nfsp

        player = state.current_player()
        legal = state.legal_actions(player)
        observations = {
            "current_player": player,
            "info_state": [state.information_state_tensor(player) if p == player else None for p in range(2)],
            "legal_actions": [legal if p == player else None for p in range(2)],
        }
        time_step = rl_environment.TimeStep(observations=observations, rewards=None, discounts=None, step_type=None)
        agent = self.agents[player]
        with agent.temp_mode_as(nfsp.MODE.AVERAGE_POLICY):
            probs = agent.step(time_step, is_evaluation=True).probs
        return {action: float(probs[action]) for action in legal}

    def networks(self) -> list[Any]:
        """Each player's average-policy network (what plays)."""
        return [player._avg_network for player in self.agents]


def constructor_defaults(agent_class: type) -> dict[str, Any]:
    """The defaults of an RLCard agent's constructor but those of the env's shape, the device and saving: with a
    preset's settings over them, every setting an agent is trained with, as a sidecar records them."""
    skip = {"num_actions", "state_shape", "device", "save_path", "save_every"}
    return {
        name: parameter.default
        for name, parameter in inspect.signature(agent_class).parameters.items()
        if name not in skip and parameter.default is not inspect.Parameter.empty
    }


def _rlcard_hyperparameters(preset: str) -> dict[str, Any]:
    from rlcard.agents.nfsp_agent import NFSPAgent

    return {**constructor_defaults(NFSPAgent), **RLCARD_PRESETS[preset]}


Build = Callable[[int, Sequence[int], Mapping[str, Any]], Any]
"""``build(num_actions, state_shape, settings)``: one RLCard agent (on the CPU) with a preset's constructor
settings."""


def _nfsp_agent(num_actions: int, state_shape: Sequence[int], settings: Mapping[str, Any]) -> Any:
    torch = require_torch("rlcard-nfsp")
    from rlcard.agents.nfsp_agent import NFSPAgent

    return NFSPAgent(num_actions=num_actions, state_shape=state_shape, device=torch.device("cpu"), **settings)


def _run_rl(hyperparameters: Mapping[str, Any]) -> bool:
    """Whether ``hyperparameters`` train as :data:`RUN_RL` does (one learner against random play)."""
    return all(key in hyperparameters for key in RUN_RL)


def _learners(env: Any, hyperparameters: Mapping[str, Any], build: Build) -> list[Any]:
    """The agents being trained: one per seat in self-play, the one learner in seat 0 under :data:`RUN_RL`."""
    settings = {key: value for key, value in hyperparameters.items() if key not in RUN_RL}
    seats = 1 if _run_rl(hyperparameters) else env.num_players
    return [build(env.num_actions, env.state_shape[seat], settings) for seat in range(seats)]


@contextlib.contextmanager
def _seeded_with(seed: int) -> Iterator[None]:
    """NumPy's, Python's and torch's global generators seeded with ``seed`` within the block, as RLCard's
    ``set_seed`` seeds them, and torch on one thread; the three generators are restored afterwards."""
    torch = require_torch("RLCard's evaluation")
    numpy_state, python_state = np.random.get_state(), random.getstate()
    try:
        with torch.random.fork_rng(), one_thread():
            np.random.seed(seed)
            random.seed(seed)
            torch.manual_seed(seed)
            yield
    finally:
        np.random.set_state(numpy_state)
        random.setstate(python_state)


def example_evaluation(agent: Any, game: RLCardGame, games: int, seed: int) -> float:
    """RLCard's ``examples/run_rl.py`` evaluation of ``agent`` (:class:`~eval.opponents.provenance.Evaluation`):
    ``agent`` in seat 0 against RLCard's ``RandomAgent``, its average payoff per game over ``games`` games of
    ``rlcard.utils.tournament``, in an env and global generators seeded with ``seed``."""
    import rlcard
    from rlcard.agents import RandomAgent
    from rlcard.utils import tournament

    with _seeded_with(seed), _quiet_stdout():
        env = rlcard.make(game.spec.env_id, config={"seed": seed})
        env.set_agents([agent, *(RandomAgent(num_actions=env.num_actions) for _ in range(1, env.num_players))])
        return float(tournament(env, games)[0])


def train_in_env(
    game: RLCardGame,
    episodes: int,
    rng: np.random.Generator,
    preset: str,
    hyperparameters: Mapping[str, Any],
    build: Build,
    network: Callable[[Any], Any],
    on_progress: Progress,
) -> Trained[SeatedAgents]:
    """Up to ``episodes`` in RLCard's env, as RLCard's example loop does: each episode every learner that has
    one samples its episode policy (NFSP's mode), ``env.run(is_training=True)``, ``reorganize`` and each learner
    is fed its own transitions. In self-play every seat is a learner; under :data:`RUN_RL` one learner plays seat 0
    against RLCard's ``RandomAgent`` and is evaluated in the training env every ``evaluate_every`` episodes, as the
    example logs it. At the end, what was trained is scored by :func:`example_evaluation` over the example's
    2,000 games (``num_eval_games``), in an env seeded with a seed drawn from ``rng``."""
    import rlcard
    from rlcard.agents import RandomAgent
    from rlcard.utils import reorganize, tournament

    run_rl = _run_rl(hyperparameters)
    games = int(hyperparameters["num_eval_games"]) if run_rl else int(RUN_RL["num_eval_games"])
    every = int(hyperparameters["evaluate_every"]) if run_rl else None
    curve: list[tuple[int, float]] = []
    evaluating = 0.0
    with _seeded(rng), _quiet_stdout():
        env = rlcard.make(game.spec.env_id, config={"seed": int(rng.integers(2**31))})
        learners = _learners(env, hyperparameters, build)
        env.set_agents(
            [*learners, *(RandomAgent(num_actions=env.num_actions) for _ in range(len(learners), env.num_players))]
        )
        seated = SeatedAgents(learners, network)
        episode = 0
        while episode < episodes:
            for learner in learners:
                if hasattr(learner, "sample_episode_policy"):  # NFSP: best response or average policy
                    learner.sample_episode_policy()
            trajectories, payoffs = env.run(is_training=True)
            for learner, transitions in zip(learners, reorganize(trajectories, payoffs), strict=False):
                for transition in transitions:
                    learner.feed(transition)
            if every is not None and episode % every == 0:
                started = time.perf_counter()
                curve.append((episode, float(tournament(env, games)[0])))
                evaluating += time.perf_counter() - started
            episode += 1
            if on_progress(episode, seated):
                break
    seed = int(rng.integers(2**31))
    started = time.perf_counter()
    payoff = example_evaluation(seated, game, games, seed)
    evaluation = Evaluation(games, seed, payoff, every, tuple(curve), evaluating + time.perf_counter() - started)
    return Trained(seated, {"preset": preset, **hyperparameters}, episode, evaluation)


def train_rlcard(
    game: RLCardGame, episodes: int, rng: np.random.Generator, preset: str, on_progress: Progress
) -> Trained[SeatedAgents]:
    """RLCard's ``NFSPAgent`` trained up to ``episodes`` by :func:`train_in_env` with a preset of
    :data:`RLCARD_PRESETS`."""
    hyperparameters = _rlcard_hyperparameters(preset)
    return train_in_env(game, episodes, rng, preset, hyperparameters, _nfsp_agent, NFSP_NETWORK, on_progress)


def _openspiel_agents(pyspiel_game: pyspiel.Game, hyperparameters: Mapping[str, Any], seed: int) -> list[Any]:
    require_torch("openspiel-nfsp")
    from open_spiel.python.pytorch import nfsp

    settings = dict(hyperparameters)
    hidden = settings.pop("hidden_layers_sizes")
    return [
        nfsp.NFSP(
            player,
            pyspiel_game.information_state_tensor_size(),
            pyspiel_game.num_distinct_actions(),
            hidden,
            seed=seed + 10 * player,
            **settings,
        )
        for player in range(pyspiel_game.num_players())
    ]


def train_openspiel(
    game: OpenSpielGame, episodes: int, rng: np.random.Generator, preset: str, on_progress: Progress
) -> Trained[NFSPPolicy]:
    """Self-play up to ``episodes`` in OpenSpiel's ``rl_environment``, as OpenSpiel's example loop does."""
    from open_spiel.python import rl_environment

    hyperparameters = {**OPENSPIEL_PRESETS[preset], "seed": int(rng.integers(2**20))}
    with _seeded(rng):
        sampler = rl_environment.ChanceEventSampler(seed=int(rng.integers(2**31)))
        env = rl_environment.Environment(game.pyspiel_game, chance_event_sampler=sampler)
        settings = dict(hyperparameters)
        agents = _openspiel_agents(game.pyspiel_game, settings, settings.pop("seed"))
        policy = NFSPPolicy(game.pyspiel_game, agents)
        episode = 0
        while episode < episodes:
            episode += 1
            time_step = env.reset()
            while not time_step.last():
                player = time_step.observations["current_player"]
                time_step = env.step([agents[player].step(time_step).action])
            for agent in agents:
                agent.step(time_step)
            if on_progress(episode, policy):
                break
    return Trained(policy, {"preset": preset, **hyperparameters}, episode)


def weights_path(sidecar: str | Path) -> Path:
    """Where :func:`save` writes a sidecar's weights: beside it, ``model.json`` -> ``model.safetensors``. The
    sidecar records the name; a loader reads the file the sidecar records (:func:`weights_of`)."""
    return Path(sidecar).with_suffix(".safetensors")


def outputs(sidecar: str | Path) -> tuple[Path, ...]:
    """The two files :func:`save` writes: the sidecar and its weights."""
    return Path(sidecar), weights_path(sidecar)


def weights_of(sidecar: str | Path, data: Mapping[str, Any]) -> Path:
    """The weights file the sidecar ``data`` (read from ``sidecar``) names: its ``weights`` field, which must
    be a plain file name in the sidecar's own directory (:func:`cfr_agents.files.file_beside`)."""
    return file_beside(sidecar, data.get("weights"), "weights")


def weights_read(path: str | Path) -> Path | None:
    """The weights that loading the file ``path`` as an agent reads, found as :func:`read_weights` finds
    them; ``None`` when ``path`` is no model sidecar: not a JSON object of the opponent-model format with a
    ``weights`` field, or larger than :data:`~adapters.inputs.MAX_SIDECAR_BYTES` (a sidecar the loaders
    refuse unread). A sidecar whose ``weights`` is not a plain file name is refused in one line."""
    try:
        data = read_json(path, "model file", limit=MAX_SIDECAR_BYTES)
    except InputError:
        return None  # no sidecar; its loader says what it is instead
    if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT or "weights" not in data:
        return None
    return weights_of(path, data)


def read_weights(sidecar: str | Path, data: Mapping[str, Any]) -> tuple[Path, bytes]:
    """The weights file the sidecar ``data`` (read from ``sidecar``) names, and its bytes; refused in one
    line when the sidecar is larger than :data:`~adapters.inputs.MAX_SIDECAR_BYTES`, its ``weights`` is not
    a plain file name (:func:`weights_of`), the weights are not a regular file of at most
    :data:`~adapters.inputs.MAX_WEIGHTS_BYTES`, or their SHA-256 is not the sidecar's ``weights_sha256``."""
    check_regular(sidecar, "model file", limit=MAX_SIDECAR_BYTES)
    weights = weights_of(sidecar, data)
    content = read_regular(weights, "weights file", MAX_WEIGHTS_BYTES)
    if hashlib.sha256(content).hexdigest() != data.get("weights_sha256"):
        raise InputError(f"{str(weights)!r} is not the weights file its sidecar {str(sidecar)!r} describes")
    return weights, content


Tensors = TypeVar("Tensors")


def parse_weights(load: Callable[[bytes], Tensors], content: bytes, weights: Path) -> Tensors:
    """``load(content)``, safetensors' parser of the bytes of the file ``weights``: a file it cannot parse
    (a header that is not JSON, offsets or shapes that do not fit the bytes, an unknown dtype) is refused in
    one line."""
    from safetensors import SafetensorError

    try:
        return load(content)
    except (SafetensorError, ValueError, TypeError, KeyError, RuntimeError) as error:
        raise InputError(f"{str(weights)!r} is not a safetensors file that can be read ({error})") from None


def save(sidecar: str | Path, agent: SeatedAgents | NFSPPolicy, provenance: Provenance) -> None:
    """Write the weights (safetensors) and then the JSON sidecar, each atomically."""
    from safetensors.torch import save as serialize

    tensors = {
        f"seat{seat}.{name}": tensor.detach().contiguous()
        for seat, network in enumerate(agent.networks())
        for name, tensor in network.state_dict().items()
    }
    weights = weights_path(sidecar)
    content = serialize(tensors)
    with replacing(weights) as temporary:
        temporary.write_bytes(content)
    digest = hashlib.sha256(content).hexdigest()
    data = {**provenance.to_json(), "weights": weights.name, "weights_sha256": digest}
    write_atomic(sidecar, json.dumps(data, indent=1) + "\n")


def load_in_env(
    sidecar: str | Path,
    data: Mapping[str, Any],
    provenance: Provenance,
    game: Game,
    presets: Mapping[str, Mapping[str, Any]],
    hyperparameters: Callable[[str], Mapping[str, Any]],
    build: Build,
    network: Callable[[Any], Any],
) -> SeatedAgents:
    """The playing agents of a sidecar of an RLCard agent trained by :func:`train_in_env` (written by
    :func:`save`), for ``game``: ``hyperparameters(preset)`` are the settings of a preset of ``presets``."""
    if not isinstance(game, RLCardGame):
        raise InputError(f"{str(sidecar)!r}: {provenance.kind} cannot play {game.game_id}")
    import rlcard

    def seated(settings: dict[str, Any]) -> SeatedAgents:
        return SeatedAgents(_learners(rlcard.make(game.spec.env_id), settings, build), network)

    return _load(sidecar, data, provenance, game, presets, hyperparameters, seated)


def load_rlcard(sidecar: str | Path, data: Mapping[str, Any], provenance: Provenance, game: Game) -> SeatedAgents:
    """The playing agents of an ``rlcard-nfsp`` sidecar written by :func:`save`, for ``game``."""
    return load_in_env(
        sidecar, data, provenance, game, RLCARD_PRESETS, _rlcard_hyperparameters, _nfsp_agent, NFSP_NETWORK
    )


def load_openspiel(sidecar: str | Path, data: Mapping[str, Any], provenance: Provenance, game: Game) -> NFSPPolicy:
    """The playing policy of an ``openspiel-nfsp`` sidecar written by :func:`save`, for ``game``."""
    if not isinstance(game, OpenSpielGame):
        raise InputError(f"{str(sidecar)!r}: {provenance.kind} cannot play {game.game_id}")

    def build(settings: dict[str, Any]) -> NFSPPolicy:
        seed = settings.pop("seed")
        return NFSPPolicy(game.pyspiel_game, _openspiel_agents(game.pyspiel_game, settings, seed))

    def preset(name: str) -> dict[str, Any]:
        return {**OPENSPIEL_PRESETS[name], "seed": _seed(provenance.hyperparameters.get("seed"), sidecar)}

    return _load(sidecar, data, provenance, game, OPENSPIEL_PRESETS, preset, build)


def _seed(value: object, sidecar: str | Path) -> int:
    """The networks' seed an ``openspiel-nfsp`` sidecar records: drawn below 2^20 by :func:`train_openspiel`."""
    if type(value) is not int or not 0 <= value < 2**20:
        raise InputError(f"{str(sidecar)!r}: its seed must be an integer from 0 to 2^20 - 1, got {value!r}")
    return value


Loaded = TypeVar("Loaded", SeatedAgents, NFSPPolicy)


def _load(
    sidecar: str | Path,
    data: Mapping[str, Any],
    provenance: Provenance,
    game: Game,
    presets: Mapping[str, Mapping[str, Any]],
    preset: Callable[[str], Mapping[str, Any]],
    build: Callable[[dict[str, Any]], Loaded],
) -> Loaded:
    """Check the game and the weights' digest, build the agents from the recorded hyperparameters
    and load each seat's network. The hyperparameters are handed to RLCard's or OpenSpiel's constructors,
    which trust them, so they must be exactly those of the recorded preset of the family's ``presets``
    (``preset(name)``): models are trained from named presets only."""
    check_game(provenance, game.game_id, game.rules_fingerprint, str(sidecar))
    recorded = dict(provenance.hyperparameters)
    name = recorded.pop("preset", None)
    if not isinstance(name, str) or name not in presets:
        raise InputError(f"{str(sidecar)!r}: its hyperparameters name no preset of {provenance.kind} ({name!r})")
    expected = dict(preset(name))
    if recorded != expected:
        differ = sorted(key for key in set(recorded) | set(expected) if recorded.get(key) != expected.get(key))
        raise InputError(
            f"{str(sidecar)!r}: its hyperparameters are not those of the preset {name!r} "
            f"({', '.join(map(repr, differ[:3]))} differ)"
        )
    torch = require_torch(provenance.kind)
    from safetensors.torch import load

    weights, content = read_weights(sidecar, data)
    tensors = parse_weights(load, content, weights)
    with contextlib.ExitStack() as stack:  # building the agents reseeds the global generators
        stack.enter_context(torch.random.fork_rng())
        saved = np.random.get_state()
        stack.callback(np.random.set_state, saved)
        agent = build(expected)
    for seat, network in enumerate(agent.networks()):
        prefix = f"seat{seat}."
        state = {k.removeprefix(prefix): v for k, v in tensors.items() if k.startswith(prefix)}
        try:
            network.load_state_dict(state)
        except RuntimeError as error:
            raise InputError(f"{str(weights)!r} does not fit {provenance.kind}: {error}") from None
        network.eval()
    return agent
