r"""The exact strategy of any agent on the compiled tree: an ``(N, A)`` array :math:`\sigma(I, a)`.

The tree is built from the toolkit's own engine, so every infoset :math:`I` has a state the
toolkit would hand an agent there. :func:`eval.strategy_of` (:mod:`eval.agents`) queries the agent once per infoset:

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

from adapters import Game, State, load_game
from adapters.errors import InputError
from adapters.openspiel import OpenSpielState
from adapters.pyspiel_game import BridgedGame, BridgedState, openspiel_game_of
from adapters.rlcard import PREFIX, RLCardGame, RLCardState
from cfr_agents.tree import CompiledTree, FloatArray

TOLERANCE = 1e-9
"""Largest difference between two answers of an agent at the same state that counts as equal."""
_SUM_TOLERANCE = 1e-5
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
    game = load_game(tree.game_id)
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
            return BridgedState(bridged, state)

    def row_of(row: int) -> FloatArray:
        answer = agent.action_probabilities(to_pyspiel(states.states[row]))
        return _row(states.tree, row, {int(a): float(p) for a, p in answer.items()}, name, _SUM_TOLERANCE)

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
        return _row(states.tree, row, answer, name, _SUM_TOLERANCE)

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
