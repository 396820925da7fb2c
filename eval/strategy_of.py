r"""The exact strategy of any agent on the compiled tree: an ``(N, A)`` array :math:`\sigma(I, a)`.

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
from adapters.base import CHANCE, TERMINAL
from adapters.errors import InputError
from adapters.openspiel import OpenSpielState
from adapters.pyspiel_game import BridgedGame, BridgedState, openspiel_game_of
from adapters.rlcard import PREFIX, RLCardGame, RLCardState
from cfr_agents.policy import Policy
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
    """Walk the tree's game once and keep the first state met in each infoset."""
    game = load_game(tree.game_id)
    if game.rules_fingerprint != tree.rules_fingerprint:
        raise InputError(f"the installed {tree.game_id} has other rules than the tree")
    found: dict[int, State] = {}
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        player = state.current_player()
        if player == TERMINAL:
            continue
        if player != CHANCE:
            found.setdefault(tree.index[state.information_state_key(player)], state)
        stack.extend(state.child(action) for action in state.legal_actions())
    return InfosetStates(tree, game, tuple(found[row] for row in range(tree.num_infosets)))


def strategy_of(agent: object, tree: CompiledTree) -> FloatArray:
    """The ``(N, A)`` strategy ``agent`` plays on ``tree``; see the module docstring."""
    if isinstance(agent, Policy):
        return agent.strategy_on(tree)
    if isinstance(agent, openspiel_policy.Policy | pyspiel.Policy):
        return _checked(_openspiel_rows(agent, infoset_states(tree)), tree, _describe(agent))
    if hasattr(agent, "eval_step") and hasattr(agent, "use_raw"):
        if not tree.game_id.startswith(PREFIX):
            raise InputError(f"an RLCard agent plays rlcard: games, not {tree.game_id}")
        return _checked(_rlcard_rows(agent, infoset_states(tree)), tree, _describe(agent))
    raise InputError(
        f"cannot query {_describe(agent)}: give a cfr_agents Policy, an OpenSpiel policy "
        "or an RLCard agent (use_raw, eval_step)"
    )


@contextlib.contextmanager
def preserved_global_rng() -> Iterator[None]:
    """Restore NumPy's global generator, which RLCard's and OpenSpiel's agents draw from."""
    saved = np.random.get_state()
    try:
        yield
    finally:
        np.random.set_state(saved)


def _describe(agent: object) -> str:
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


def _row(
    tree: CompiledTree, row: int, probabilities: Mapping[int, float], name: str, tolerance: float
) -> FloatArray:
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
    name = _describe(agent)
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
    name = _describe(agent)
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
