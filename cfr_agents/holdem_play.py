"""Strategies of limit hold'em games played one information state at a time, in OpenSpiel's ``universal_poker``
game or in RLCard's ``limit-holdem`` env, on the engine's betting tree (:class:`~adapters.holdem.engine.HoldemEngine`).

A strategy answers at a :class:`Position`: the decision node of the player to act, its hole cards, the board dealt
so far and the path of decisions that led there. :func:`openspiel_position` reads one from an OpenSpiel information
state, :func:`rlcard_position` from an RLCard state (the betting from its ``action_record``, the cards from its
``raw_obs``). :class:`HoldemPolicy` and :class:`HoldemRLCardAgent` play any function of a position in each toolkit:
abstract strategies (:mod:`cfr_agents.abstract_strategy`) and neural models trained on the engine do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import pyspiel
from numpy.typing import NDArray
from open_spiel.python import policy as openspiel_policy

from adapters.holdem.betting import ACTION_LETTERS, DEAL
from adapters.holdem.cards import information_state_fields
from adapters.holdem.engine import HoldemEngine, rlcard_card
from adapters.inputs import InputError
from adapters.openspiel import PREFIX
from adapters.rlcard import shared_game

FloatArray = NDArray[np.float64]
RLCARD_IDS: Final = {"fold": 0, "check": 1, "call": 1, "raise": 2}
"""RLCard's limit hold'em actions as the engine's ids (OpenSpiel's: fold, check/call, bet/raise)."""


@dataclass(frozen=True)
class Position:
    """Where the player to act stands."""

    node: int
    """Its decision node of the betting tree."""
    hole: list[int]
    board: list[int]
    """The board cards dealt so far."""
    path: list[tuple[int, int]]
    """Every decision of the hand so far, both players', as ``(node, index of the action taken)``."""


Answer = Callable[[Position], FloatArray]
"""A strategy: the probabilities of a position's legal actions, in the engine's order."""


def decision(engine: HoldemEngine, node: int) -> int:
    """``node``, or past the deals after it, the first node where a player acts or the hand ends."""
    while int(engine.betting.kind[node]) == DEAL:
        node = engine.child(node, 0)
    return node


def walk_actions(engine: HoldemEngine, actions: Sequence[int]) -> tuple[int, list[tuple[int, int]]]:
    """The decision node after the engine's action ids ``actions`` from the root, and the path there."""
    node, path = decision(engine, engine.root), []
    for action in actions:
        legal = engine.legal_actions(node)
        if action not in legal:
            raise InputError(f"action {action} is not legal after {engine.betting.sequence[node]!r}")
        path.append((node, legal.index(action)))
        node = decision(engine, engine.child(node, action))
    if not engine.is_decision(node):
        raise InputError(f"no one acts after the betting {engine.betting.sequence[node]!r}")
    return node, path


def openspiel_position(engine: HoldemEngine, state: pyspiel.State, player_id: int | None) -> Position:
    """The position of ``player_id`` (by default the player to act) at a ``pyspiel`` state of the engine's game."""
    player = state.current_player() if player_id is None else player_id
    if player not in (0, 1) or player != state.current_player():
        raise InputError(f"player {player} does not act in state {str(state)!r}")
    hole, board, sequence = information_state_fields(state.information_state_string(player), engine.rules.num_suits)
    node, path = walk_actions(engine, [ACTION_LETTERS.index(letter) for letter in sequence if letter != "|"])
    return Position(node, list(hole), list(board), path)


def rlcard_position(engine: HoldemEngine, state: Mapping[str, Any]) -> Position:
    """The position of the player to act at an RLCard ``limit-holdem`` state. Whose turn it is follows from the
    record alone: RLCard's small blind acts first, and in every later round whoever did not act last leads, so the
    player to act is the one who did not make the record's last action, and the small blind is the one who made its
    first (or the player to act, before any action). The engine seats the big blind as player 0 and the small blind
    as player 1."""
    record = list(state["action_record"])
    node, path = walk_actions(engine, [RLCARD_IDS[name] for _, name in record])
    me = 1 - int(record[-1][0]) if record else None
    small_blind = me if not record else int(record[0][0])
    if int(engine.betting.player[node]) != (1 if me == small_blind else 0):
        raise InputError(f"the action record {record} does not lead to the player to act")
    raw = state["raw_obs"]
    return Position(node, [rlcard_card(c) for c in raw["hand"]], [rlcard_card(c) for c in raw["public_cards"]], path)


class HoldemPolicy(openspiel_policy.Policy):  # type: ignore[misc]
    """A strategy of a ``universal_poker`` game as OpenSpiel's policy, asked state by state."""

    def __init__(self, engine: HoldemEngine, answer: Answer) -> None:
        super().__init__(pyspiel.load_game(engine.game_id.removeprefix(PREFIX)), [0, 1])
        self.engine, self.answer = engine, answer

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        position = openspiel_position(self.engine, state, player_id)
        return dict(zip(self.engine.legal_actions(position.node), self.answer(position).tolist(), strict=True))


class HoldemRLCardAgent:
    """A strategy of ``rlcard:limit-holdem`` as an agent of RLCard's env (``eval_step``, ``step``): its probabilities
    over ``raw_legal_actions`` (``info["probs"]``); ``step`` takes the likeliest action."""

    use_raw = False

    def __init__(self, engine: HoldemEngine, answer: Answer) -> None:
        self.engine, self.answer = engine, answer
        self._names = list(shared_game(engine.game_id.removeprefix("rlcard:")).actions)

    def probabilities(self, state: Mapping[str, Any]) -> dict[str, float]:
        """``{action name: probability}`` over ``state["raw_legal_actions"]``."""
        position = rlcard_position(self.engine, state)
        by_id = dict(zip(self.engine.legal_actions(position.node), self.answer(position).tolist(), strict=True))
        legal = list(state["raw_legal_actions"])
        if sorted({RLCARD_IDS[name] for name in legal}) != sorted(by_id):
            raise InputError(f"RLCard's legal actions {legal} are not the engine's {sorted(by_id)}")
        return {name: by_id[RLCARD_IDS[name]] for name in legal}

    def eval_step(self, state: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        probs = self.probabilities(state)
        return self._names.index(max(probs, key=probs.__getitem__)), {"probs": probs}

    def step(self, state: Mapping[str, Any]) -> int:
        return self.eval_step(state)[0]
