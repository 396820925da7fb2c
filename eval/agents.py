r"""Any agent, normalised once when it loads, behind one face: :class:`Agent`.

An agent is one of our :class:`~cfr_agents.policy.Policy` tables, a hold'em game's public-tree strategy
(:class:`~cfr_agents.public_tree.strategy_file.PublicStrategy`, a strategy file), an OpenSpiel policy
(``open_spiel.python.policy.Policy`` or ``pyspiel.Policy``), or an RLCard agent (``use_raw`` and
``eval_step``). :func:`as_agent` tells which, once; everything downstream asks the :class:`Agent`:

* :meth:`Agent.strategy`: its exact ``(N, A)`` strategy on a compiled tree (below);
* :meth:`Agent.policy`: that strategy as a :class:`~cfr_agents.policy.Policy`;
* :meth:`Agent.rlcard_player`: an agent for RLCard's env that samples from its own generator;
* :meth:`Agent.openspiel_player`: an OpenSpiel policy, for matches in OpenSpiel's games;
* :attr:`Agent.infoset_only`: whether its action probabilities depend on the acting player's infoset
  alone. A match asks such an agent once per infoset and reuses the answer (:meth:`Agent.match_policy`,
  :class:`InfosetMemo`; in RLCard's env it plays through :class:`~cfr_agents.rlcard_agent.PolicyAgent`,
  which keeps each infoset's row), while the hand is still played in the real environment and the agent
  still samples from its own generator.

>>> from cfr_agents.policy import Policy
>>> from cfr_agents.tree import load_tree
>>> tree = load_tree("openspiel:kuhn_poker")
>>> agent = as_agent(Policy.uniform(tree))
>>> float(agent.strategy(tree)[0].sum())
1.0

How a toolkit agent is read: the exact strategy of any agent on the compiled tree is an ``(N, A)``
array :math:`\sigma(I, a)`.

The tree is built from the toolkit's own engine, so every infoset :math:`I` has a state the
toolkit would hand an agent there. :func:`strategy_of` queries the agent once per infoset:

* our :class:`~cfr_agents.policy.Policy`: its table, row for row;
* an ``open_spiel.python.policy.Policy`` or a ``pyspiel.Policy`` (``openspiel:`` games, and RLCard
  games through the game bridged into OpenSpiel): ``action_probabilities(state)`` at a
  ``pyspiel`` state of :math:`I`;
* an RLCard agent (``use_raw``, ``eval_step``): the exact env state dict of :math:`I` -- ``obs``,
  ``legal_actions``, ``raw_obs``, ``raw_legal_actions``, ``action_record`` -- as RLCard's env
  builds it (``env._extract_state`` of the engine's state, the action record of the path).
  Its probabilities are ``info["probs"]`` of ``eval_step`` when present; otherwise the action it
  returns counts as probability 1. An agent that sees RLCard's lossy ``obs`` gets the same row
  in every infoset that shares an observation, because that is how it plays.

Every agent that is not one of our policies is asked twice, in opposite orders; an agent whose
answers differ (it keeps state, or samples without reporting probabilities) is refused rather
than mis-scored. RLCard's and OpenSpiel's agents sample from NumPy's global generator inside
``eval_step``/``step``; its state is restored afterwards, so scoring an agent leaves it as it was.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
import rlcard
from open_spiel.python import policy as openspiel_policy

from adapters import Game, State, load_game
from adapters.games import canonical_game_id
from adapters.holdem.engine import HoldemEngine, holdem_engine
from adapters.holdem.rules import limit_rules
from adapters.inputs import InputError, UnsupportedGameError
from adapters.openspiel import OpenSpielState
from adapters.pyspiel_game import BridgedGame, openspiel_game_of
from adapters.rlcard import PREFIX, RLCardGame, RLCardState
from cfr_agents.abstract_strategy import AbstractStrategy
from cfr_agents.holdem_play import HoldemPolicy, HoldemRLCardAgent
from cfr_agents.neural_policy import NeuralPolicy
from cfr_agents.policy import Policy
from cfr_agents.public_tree import public_by_default
from cfr_agents.public_tree.neural import Materialiser, StatePlayer, network_strategy
from cfr_agents.public_tree.strategy_file import PublicStrategy
from cfr_agents.solvers.neural.holdem import engine_tensors
from cfr_agents.tree import CompiledTree, FloatArray
from eval.environments import OpenSpielPolicy, RLCardAgent

_OPENSPIEL_TABLES = (openspiel_policy.TabularPolicy, openspiel_policy.UniformRandomPolicy)
"""OpenSpiel policies whose answer at a state is a fixed function of its information state."""

TOLERANCE = 1e-9
"""Largest difference between two answers of an agent at the same state that counts as equal."""
SUM_TOLERANCE = 1e-5
"""Probabilities reported by an agent must sum to 1 within this (NFSP's are float32)."""


class AgentQueryError(InputError):
    """An agent that cannot be scored exactly: stateful, random without probabilities, or illegal."""


@dataclass(frozen=True, eq=False)
class InfosetStates:
    """One adapter state per infoset row of a tree (every state of an infoset looks the same
    to the player to act, so any one of them stands for it)."""

    tree: CompiledTree
    game: Game
    states: tuple[State, ...]


@functools.lru_cache(maxsize=8)
def infoset_states(tree: CompiledTree) -> InfosetStates:
    """A state of each infoset: the first decision node of the infoset in the tree's node order,
    reached by replaying only the edges on the paths from the root to those nodes."""
    game = load_game(tree.game_id, any_players=True)  # the tree's own game, of any number of players
    if game.rules_fingerprint != tree.rules_fingerprint:
        raise InputError(f"the installed {tree.game_id} has other rules than the tree")
    num_nodes = tree.node_kind.shape[0]
    parent = np.full(num_nodes, -1, dtype=np.int64)
    parent[tree.child_node] = np.repeat(np.arange(num_nodes), np.diff(tree.child_start))
    action = np.full(num_nodes, -1, dtype=np.int64)
    action[tree.child_node] = tree.child_action
    decisions = np.flatnonzero(tree.node_infoset >= 0)
    infosets, first = np.unique(tree.node_infoset[decisions], return_index=True)
    representative = decisions[first]  # infoset order: np.unique sorts 0, 1, ..., N - 1
    assert np.array_equal(infosets, np.arange(tree.num_infosets))
    needed: set[int] = set()
    for node in representative.tolist():
        while node >= 0 and node not in needed:
            needed.add(node)
            node = int(parent[node])
    states: dict[int, State] = {0: game.new_initial_state()}
    for node in sorted(needed - {0}):  # preorder: a parent's index is below its children's
        states[node] = states[int(parent[node])].child(int(action[node]))
    found = tuple(states[int(node)] for node in representative)
    for row, state in enumerate(found):
        if state.information_state_key(int(tree.infoset_player[row])) != tree.infoset_keys[row]:
            raise InputError(f"the tree of {tree.game_id} does not match the game at {tree.infoset_keys[row]!r}")
    return InfosetStates(tree, game, found)


def openspiel_strategy(agent: Any, tree: CompiledTree) -> FloatArray:
    """The strategy of an OpenSpiel policy (``action_probabilities(state)``) on ``tree``."""
    return _checked(_openspiel_rows(agent, infoset_states(tree)), tree, describe(agent))


def rlcard_strategy(agent: Any, tree: CompiledTree) -> FloatArray:
    """The strategy of an RLCard agent (``eval_step(state)``) on the tree of an ``rlcard:`` game."""
    if not tree.game_id.startswith(PREFIX):
        raise InputError(f"an RLCard agent plays rlcard: games, not {tree.game_id}")
    return _checked(_rlcard_rows(agent, infoset_states(tree)), tree, describe(agent))


@contextlib.contextmanager
def preserved_global_rng() -> Iterator[None]:
    """Restore NumPy's global generator, which RLCard's and OpenSpiel's agents draw from."""
    saved = np.random.get_state()
    try:
        yield
    finally:
        np.random.set_state(saved)


def describe(agent: object) -> str:
    """``"agent <module>.<class>"``: how refusals name an agent."""
    return f"agent {type(agent).__module__}.{type(agent).__qualname__}"


def _checked(row_of: Callable[[int], FloatArray], tree: CompiledTree, name: str) -> FloatArray:
    """Rows in order, then again in reverse order; refuse an agent whose answers differ."""
    with preserved_global_rng():
        first = np.stack([row_of(row) for row in range(tree.num_infosets)])
        second = np.stack([row_of(row) for row in reversed(range(tree.num_infosets))])[::-1]
    differs = np.flatnonzero(np.abs(first - second).max(axis=1) > TOLERANCE)
    if differs.size:
        row = int(differs[0])
        raise AgentQueryError(
            f"{name} answered infoset {tree.infoset_keys[row]!r} differently when asked again "
            f"({_fmt(first[row])} then {_fmt(second[row])}): it keeps state or samples without "
            "reporting probabilities, so it cannot be scored exactly"
        )
    strategy: FloatArray = first
    return strategy


def _fmt(row: FloatArray) -> str:
    return "[" + ", ".join(f"{p:.4g}" for p in row) + "]"


def _row(tree: CompiledTree, row: int, probabilities: Mapping[int, float], name: str, tolerance: float) -> FloatArray:
    """An ``(A,)`` row from ``{action id: probability}``, refusing illegal or unnormalised ones."""
    actions = tree.infoset_actions[row]
    out = np.zeros(tree.max_actions)
    for action, probability in probabilities.items():
        if action in actions:
            out[actions.index(action)] = probability
        elif probability > 0:
            raise AgentQueryError(f"{name} plays illegal action {action} at infoset {tree.infoset_keys[row]!r}")
    total = out.sum()
    if not np.all(out >= 0) or abs(total - 1.0) > tolerance:
        raise AgentQueryError(
            f"{name} reports probabilities {_fmt(out)} (sum {total:.9g}) at infoset {tree.infoset_keys[row]!r}"
        )
    normalised: FloatArray = out / total
    return normalised


def _openspiel_rows(agent: Any, states: InfosetStates) -> Callable[[int], FloatArray]:
    name = describe(agent)
    bridged: BridgedGame | None = None
    if not isinstance(states.game, RLCardGame):
        to_pyspiel: Callable[[State], pyspiel.State] = _native_state
    else:
        game = openspiel_game_of(states.game)
        assert isinstance(game, BridgedGame)
        bridged = game

        def to_pyspiel(state: State) -> pyspiel.State:
            assert isinstance(state, RLCardState)
            return bridged.state_after(state.history())

    def row_of(row: int) -> FloatArray:
        answer = agent.action_probabilities(to_pyspiel(states.states[row]))
        return _row(states.tree, row, {int(a): float(p) for a, p in answer.items()}, name, SUM_TOLERANCE)

    return row_of


def _native_state(state: State) -> pyspiel.State:
    if not isinstance(state, OpenSpielState):
        raise InputError(f"an OpenSpiel policy needs an openspiel: or rlcard: game, not {state}")
    return state.pyspiel_state


def rlcard_env_state(env: Any, state: RLCardState) -> dict[str, Any]:
    """The state dict RLCard's ``env`` hands the player to act at ``state``: ``env._extract_state``
    of the engine's ``get_state(player)``, with this path's ``action_record``.

    The engine and record are read from the adapter state without changing it.
    """
    engine = state._engine  # read-only: adapter states never mutate their engine
    player = state.current_player()
    env_state: dict[str, Any] = env._extract_state(engine.get_state(player))
    env_state["action_record"] = list(state._record)
    return env_state


def _rlcard_rows(agent: Any, states: InfosetStates) -> Callable[[int], FloatArray]:
    game = states.game
    assert isinstance(game, RLCardGame)
    env = rlcard.make(game.spec.env_id)
    name = describe(agent)
    ids = {action: i for i, action in enumerate(game.actions)}

    def row_of(row: int) -> FloatArray:
        state = states.states[row]
        assert isinstance(state, RLCardState)
        action, info = agent.eval_step(rlcard_env_state(env, state))
        probs = info.get("probs") if isinstance(info, Mapping) else None
        if probs:
            answer = {_action_id(a, ids, name): float(p) for a, p in probs.items()}
        else:
            answer = {_action_id(action, ids, name): 1.0}
        return _row(states.tree, row, answer, name, SUM_TOLERANCE)

    return row_of


def _action_id(action: object, ids: Mapping[str, int], name: str) -> int:
    """An RLCard action given as a raw name (``"raise"``) or as an action id."""
    if isinstance(action, str):
        if action not in ids:
            raise AgentQueryError(f"{name} answered with unknown action {action!r}")
        return ids[action]
    if isinstance(action, int | np.integer):
        return int(action)
    raise AgentQueryError(f"{name} answered with {action!r}, neither an action name nor an action id")


class Agent:
    """An agent as evaluation sees it. Subclasses say how to read its strategy; the rest follows."""

    raw: Any
    """The object that was loaded (a policy, an OpenSpiel policy, an RLCard agent)."""

    infoset_only: bool = False
    """Whether the agent's action probabilities are a fixed function of the acting player's infoset
    (a table, a trained model): then asking it again at the same infoset gives the same answer, bit for
    bit, and a match asks it once per infoset. ``False`` for agents that may keep state or see more."""

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

    def rlcard_env_player(self, game: RLCardGame, rng: np.random.Generator) -> RLCardAgent:
        """An agent for RLCard's env of a game without a compiled tree (``rlcard:limit-holdem``): only an agent
        that plays in the env itself has one."""
        raise InputError(f"{describe(self.raw)} plays from a compiled tree, which {game.game_id} does not have")

    def openspiel_player(self) -> Any:
        """An OpenSpiel policy to play in OpenSpiel's own game."""
        raise NotImplementedError

    def match_policy(self) -> OpenSpielPolicy:
        """The OpenSpiel policy one match plays: :meth:`openspiel_player`, asked once per infoset and its
        answers reused when the agent is :attr:`infoset_only` (:class:`InfosetMemo`)."""
        policy: OpenSpielPolicy = self.openspiel_player()
        return InfosetMemo(policy) if self.infoset_only else policy


class InfosetMemo:
    """An OpenSpiel policy that asks ``policy`` once per infoset -- the acting player and its
    information-state string -- and answers every later state of that infoset with the same
    ``{action: probability}``: the very object the first query returned, so a match draws the same
    actions from the same generator as it would asking every time. Only for :attr:`Agent.infoset_only`
    agents, whose answers do not depend on anything else."""

    def __init__(self, policy: OpenSpielPolicy) -> None:
        self.policy = policy
        self._answers: dict[tuple[int, str], dict[int, float]] = {}

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        player = state.current_player() if player_id is None else player_id
        key = (player, state.information_state_string(player))
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = self.policy.action_probabilities(state, player_id)
        return answer


class TableAgent(Agent):
    """One of our policies: its table, row for row."""

    raw: Policy
    infoset_only = True

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
    """A neural CFR model (:class:`~cfr_agents.neural_policy.NeuralPolicy`): scored and played from its one
    strategy, computed once over every infoset (:attr:`~cfr_agents.neural_policy.NeuralPolicy.strategy`)."""

    raw: NeuralPolicy
    infoset_only = True

    def __init__(self, model: NeuralPolicy) -> None:
        self.raw = model

    def strategy(self, tree: CompiledTree) -> FloatArray:
        return self.raw.strategy_on(tree)

    def rlcard_player(self, tree: CompiledTree, rng: np.random.Generator) -> RLCardAgent:
        if tree.game_id != self.raw.game_id:
            raise InputError(f"the model is for {self.raw.game_id}, not {tree.game_id}")
        return self.raw.rlcard_agent(rng)

    def rlcard_env_player(self, game: RLCardGame, rng: np.random.Generator) -> RLCardAgent:
        if not self.raw.on_engine:
            return super().rlcard_env_player(game, rng)
        return OwnStreamAgent(HoldemRLCardAgent(self.engine, self.state_player), game, rng)

    def openspiel_player(self) -> Any:
        if on_public_tree(self.raw.game_id):
            try:
                return self.on_public_tree.openspiel_policy()
            except UnsupportedGameError:  # no public tree fits one machine (hulh): the networks are asked per state
                return HoldemPolicy(self.engine, self.state_player)
        return self.raw.openspiel_policy()

    @functools.cached_property
    def engine(self) -> HoldemEngine:
        return holdem_engine(self.raw.game_id)

    @functools.cached_property
    def state_player(self) -> StatePlayer:
        """The model asked one information state at a time (games no tree holds)."""
        return StatePlayer(network_strategy(self.raw), engine_tensors(self.engine), self.engine.betting)

    @property
    def on_public_tree(self) -> PublicStrategy:
        """The model on its game's public tree (:func:`materialised`)."""
        return materialised(self.raw)


@functools.lru_cache(maxsize=2)
def materialised(model: NeuralPolicy) -> PublicStrategy:
    """A model of a game that runs on its public tree (``fhp``), as it is scored there: the strategy of every
    information state of the tree with suit-canonical boards, each hand read by the networks as its canonical image
    (:class:`~cfr_agents.public_tree.neural.Materialiser`), computed once per process for the last two models
    (2.6 GB on FHP; on two idle cores, a (64, 64, 64) network in about 30 s, SD-CFR's ten (128, 128) networks in
    about 5 minutes); exact values read it, and a match plays it in OpenSpiel's game."""
    from cfr_agents.public_tree import public_tree

    tree = public_tree(canonical_game_id(model.game_id))
    strategy = Materialiser(tree, network_strategy(model)).strategy()
    return PublicStrategy(tree.game_id, tree, strategy, model.algorithm, {}, model.iterations, {})


def on_public_tree(game_id: str) -> bool:
    """Whether ``game_id`` runs on its public tree: a two-player limit hold'em game the compiled tree does not take
    (:func:`~cfr_agents.public_tree.public_by_default`)."""
    try:
        return public_by_default(limit_rules(game_id))
    except UnsupportedGameError:  # a universal_poker game the public tree does not model: the compiled tree's
        return False


class PublicStrategyAgent(Agent):
    """A strategy over a hold'em game's public tree (:class:`~cfr_agents.public_tree.strategy_file.PublicStrategy`):
    on a compiled tree, each infoset's entries are found by its information-state string
    (:class:`~cfr_agents.public_tree.infosets.Locator`); in OpenSpiel's game it plays by
    ``action_probabilities(state)``. Asked a public node at a time by :mod:`eval.holdem`."""

    raw: PublicStrategy
    infoset_only = True

    def __init__(self, strategy: PublicStrategy) -> None:
        self.raw = strategy

    def strategy(self, tree: CompiledTree) -> FloatArray:
        public = self.raw.tree
        if tree.game_id != self.raw.game_id or tree.rules_fingerprint != public.rules_fingerprint:
            raise InputError(f"the public-tree strategy is for {self.raw.game_id}, not {tree.game_id}")
        betting = public.betting
        strategy = np.zeros(tree.action_mask.shape)
        for row, key in enumerate(tree.infoset_keys):
            location = self.raw.locator.locate(key)
            n = int(betting.num_children[location.node])
            actions = betting.action[betting.first_child[location.node] + np.arange(n)].tolist()
            if actions != list(tree.infoset_actions[row]):
                raise InputError(f"the public tree of {self.raw.game_id} has actions {actions} at {key!r}")
            strategy[row, :n] = self.raw.strategy[location.indices(public)]
        return strategy

    def openspiel_player(self) -> Any:
        return self.raw.openspiel_policy()


class AbstractStrategyAgent(Agent):
    """A strategy of a limit hold'em game through a card abstraction
    (:class:`~cfr_agents.abstract_strategy.AbstractStrategy`): on a compiled tree (the small hold'em games) and in
    OpenSpiel's game it plays by ``action_probabilities(state)``, in RLCard's env (``rlcard:limit-holdem``) from
    the env's state; :mod:`eval.holdem` asks it a public node at a time."""

    raw: AbstractStrategy
    infoset_only = True

    def __init__(self, strategy: AbstractStrategy) -> None:
        self.raw = strategy

    def strategy(self, tree: CompiledTree) -> FloatArray:
        if tree.game_id != self.raw.game_id:
            raise InputError(f"the abstract strategy is for {self.raw.game_id}, not {tree.game_id}")
        return openspiel_strategy(self.raw.openspiel_policy(), tree)

    def openspiel_player(self) -> Any:
        return self.raw.openspiel_policy()

    def rlcard_env_player(self, game: RLCardGame, rng: np.random.Generator) -> RLCardAgent:
        return OwnStreamAgent(self.raw.rlcard_agent(), game, rng)


class OpenSpielAgent(Agent):
    """An OpenSpiel policy: ``action_probabilities(state)`` at a state of every infoset (RLCard's games
    through the game bridged into OpenSpiel). OpenSpiel's tables (``TabularPolicy``, ``UniformRandomPolicy``)
    are :attr:`infoset_only`; any other policy is asked at every state."""

    def __init__(self, policy: Any) -> None:
        self.raw = policy
        self.infoset_only = isinstance(policy, _OPENSPIEL_TABLES)

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
        return self.rlcard_env_player(game, rng)

    def rlcard_env_player(self, game: RLCardGame, rng: np.random.Generator) -> RLCardAgent:
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
    if isinstance(agent, PublicStrategy):
        return PublicStrategyAgent(agent)
    if isinstance(agent, AbstractStrategy):
        return AbstractStrategyAgent(agent)
    if isinstance(agent, openspiel_policy.Policy | pyspiel.Policy):
        return OpenSpielAgent(agent)
    if hasattr(agent, "eval_step") and hasattr(agent, "use_raw"):
        return RLCardEnvAgent(agent)
    raise InputError(
        f"cannot query {describe(agent)}: give a cfr_agents Policy, a public-tree strategy, an OpenSpiel policy "
        "or an RLCard agent (use_raw, eval_step)"
    )


def strategy_of(agent: object, tree: CompiledTree) -> FloatArray:
    """The ``(N, A)`` strategy ``agent`` plays on ``tree`` (see :mod:`eval.agents`)."""
    return as_agent(agent).strategy(tree)
