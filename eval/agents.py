"""Any agent, normalised once when it loads, behind one face: :class:`Agent`.

An agent is one of our :class:`~cfr_agents.policy.Policy` tables, an OpenSpiel policy
(``open_spiel.python.policy.Policy`` or ``pyspiel.Policy``), or an RLCard agent (``use_raw`` and
``eval_step``). :func:`as_agent` tells which, once; everything downstream asks the :class:`Agent`:

* :meth:`Agent.strategy`: its exact ``(N, A)`` strategy on a compiled tree (:mod:`eval.strategy_of`);
* :meth:`Agent.policy`: that strategy as a :class:`~cfr_agents.policy.Policy`;
* :meth:`Agent.rlcard_player`: an agent for RLCard's env that samples from its own generator;
* :meth:`Agent.openspiel_player`: an OpenSpiel policy, for matches in OpenSpiel's games.

>>> from cfr_agents.neural_policy import NeuralPolicy
from cfr_agents.policy import Policy
>>> from cfr_agents.tree import load_tree
>>> tree = load_tree("openspiel:kuhn_poker")
>>> agent = as_agent(Policy.uniform(tree))
>>> float(agent.strategy(tree)[0].sum())
1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python import policy as openspiel_policy

from adapters import load_game
from adapters.errors import InputError
from adapters.rlcard import RLCardGame
from cfr_agents.neural_policy import NeuralPolicy
from cfr_agents.policy import Policy
from cfr_agents.tree import CompiledTree, FloatArray
from eval.match import RLCardAgent
from eval.strategy_of import describe, openspiel_strategy, rlcard_strategy


class Agent:
    """An agent as evaluation sees it. Subclasses say how to read its strategy; the rest follows."""

    raw: Any
    """The object that was loaded (a policy, an OpenSpiel policy, an RLCard agent)."""

    def strategy(self, tree: CompiledTree) -> FloatArray:
        """The exact ``(N, A)`` strategy :math:`\\sigma(I, a)` on ``tree``."""
        raise NotImplementedError

    def policy(self, tree: CompiledTree, name: str = "") -> Policy:
        """The exact strategy on ``tree`` as a policy (``algorithm`` is ``name``)."""
        return Policy.from_strategy(
            tree, self.strategy(tree), algorithm=name or describe(self.raw), parameters={}, iterations=0
        )

    def rlcard_player(self, tree: CompiledTree, rng: np.random.Generator) -> RLCardAgent:
        """An agent for RLCard's env on ``tree``'s game that samples from ``rng``: by default the
        exact strategy played as a table."""
        return self.policy(tree).rlcard_agent(rng)

    def openspiel_player(self) -> Any:
        """An OpenSpiel policy to play in OpenSpiel's own game."""
        raise NotImplementedError


class TableAgent(Agent):
    """One of our policies: its table, row for row."""

    raw: Policy

    def __init__(self, policy: Policy) -> None:
        self.raw = policy

    def strategy(self, tree: CompiledTree) -> FloatArray:
        return self.raw.strategy_on(tree)

    def policy(self, tree: CompiledTree, name: str = "") -> Policy:
        self.raw.check_game(tree.game_id, tree.rules_fingerprint, tree.units)
        return self.raw

    def openspiel_player(self) -> Any:
        return self.raw.openspiel_policy()


class NetworkAgent(Agent):
    """A neural CFR model (:class:`~cfr_agents.neural_policy.NeuralPolicy`): scored by one batched forward
    pass over every infoset; in RLCard's env and in OpenSpiel it runs its networks at each decision."""

    raw: NeuralPolicy

    def __init__(self, model: NeuralPolicy) -> None:
        self.raw = model

    def strategy(self, tree: CompiledTree) -> FloatArray:
        return self.raw.strategy_on(tree)

    def rlcard_player(self, tree: CompiledTree, rng: np.random.Generator) -> RLCardAgent:
        if tree.game_id != self.raw.game_id:
            raise InputError(f"the model is for {self.raw.game_id}, not {tree.game_id}")
        return self.raw.rlcard_agent(rng)

    def openspiel_player(self) -> Any:
        return self.raw.openspiel_policy()


class OpenSpielAgent(Agent):
    """An OpenSpiel policy: ``action_probabilities(state)`` at a state of every infoset (RLCard's games
    through the game bridged into OpenSpiel)."""

    def __init__(self, policy: Any) -> None:
        self.raw = policy

    def strategy(self, tree: CompiledTree) -> FloatArray:
        return openspiel_strategy(self.raw, tree)

    def openspiel_player(self) -> Any:
        return self.raw


class RLCardEnvAgent(Agent):
    """An RLCard agent: ``eval_step`` at the exact env state of every infoset; in RLCard's env it is
    asked at every decision (:class:`OwnStreamAgent`)."""

    def __init__(self, agent: Any) -> None:
        self.raw = agent

    def strategy(self, tree: CompiledTree) -> FloatArray:
        return rlcard_strategy(self.raw, tree)

    def rlcard_player(self, tree: CompiledTree, rng: np.random.Generator) -> RLCardAgent:
        game = load_game(tree.game_id)
        if not isinstance(game, RLCardGame):
            raise InputError(f"{describe(self.raw)} is an RLCard agent; it plays rlcard: games, not {tree.game_id}")
        return OwnStreamAgent(self.raw, game, rng)

    def openspiel_player(self) -> Any:
        raise InputError(f"{describe(self.raw)} is an RLCard agent; it plays rlcard: games")


class OwnStreamAgent:
    """An RLCard agent asked at every decision, its reported probabilities sampled with its own
    generator; ``use_raw`` is always ``False``.

    RLCard's agents sample from NumPy's global generator, which every agent in the process shares, so
    when the agent reports its probabilities (``info["probs"]``: RLCard's ``RandomAgent``, ``CFRAgent``
    and ``NFSPAgent`` do) the action is drawn from them with the agent's own generator; an agent that
    reports none (RLCard's rule agents, which are deterministic) plays the action it returns.
    """

    use_raw = False

    def __init__(self, agent: Any, game: RLCardGame, rng: np.random.Generator) -> None:
        self.agent = agent
        self.rng = rng
        self._ids = {name: i for i, name in enumerate(game.actions)}

    def eval_step(self, state: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        action, info = self.agent.eval_step(state)
        probs = info.get("probs") if isinstance(info, Mapping) else None
        if probs:
            names = list(state["raw_legal_actions"])
            weights = np.array([float(probs.get(name, 0.0)) for name in names])
            if weights.sum() > 0:
                cumulative = np.cumsum(weights / weights.sum())
                index = min(int(np.searchsorted(cumulative, self.rng.random(), side="right")), len(names) - 1)
                return self._ids[names[index]], info
        if isinstance(action, str):
            return self._ids[action], info
        return int(action), info

    def step(self, state: Mapping[str, Any]) -> int:
        return self.eval_step(state)[0]


def as_agent(agent: object) -> Agent:
    """``agent`` behind the :class:`Agent` face; the one place that tells the kinds of agent apart."""
    if isinstance(agent, Agent):
        return agent
    if isinstance(agent, Policy):
        return TableAgent(agent)
    if isinstance(agent, NeuralPolicy):
        return NetworkAgent(agent)
    if isinstance(agent, openspiel_policy.Policy | pyspiel.Policy):
        return OpenSpielAgent(agent)
    if hasattr(agent, "eval_step") and hasattr(agent, "use_raw"):
        return RLCardEnvAgent(agent)
    raise InputError(
        f"cannot query {describe(agent)}: give a cfr_agents Policy, an OpenSpiel policy "
        "or an RLCard agent (use_raw, eval_step)"
    )


def strategy_of(agent: object, tree: CompiledTree) -> FloatArray:
    """The ``(N, A)`` strategy ``agent`` plays on ``tree`` (see :mod:`eval.strategy_of`)."""
    return as_agent(agent).strategy(tree)
