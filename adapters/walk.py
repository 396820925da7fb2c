"""One depth-first enumeration of a whole game tree, recorded as flat arrays in preorder.

:func:`walk` visits every state of a game once, with the operations the game hands out
(:meth:`adapters.base.Game.tree_ops`), and records what a compiler of the tree needs: each node's
parent, the chance nodes and their outcomes, the information-state key of each decision node
(numbered in order of discovery) with the key's player and legal actions, and the reach and returns
of each terminal. Nodes are numbered in preorder and children are visited in the order of
``chance_outcomes()`` or ascending legal actions, so the numbering is the one a recursive walk gives.

The inner loop makes as few calls per node as the enumeration allows: the child, its acting player,
the key at a decision node (legal actions once per key if the toolkit guarantees they follow it), the
returns at a terminal. A state's last child is made from the state itself where the toolkit can.
Everything else -- which nodes are decisions, the edges' actions -- follows from :attr:`Walk.parent`
and the keys with whole-array operations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from adapters.base import CHANCE, TERMINAL, Game
from adapters.inputs import UnsupportedGameError

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Walk:
    """A game tree in preorder. Node ``0`` is the root; every other node follows its parent."""

    parent: IntArray
    """Parent of each node, ``-1`` for the root."""
    chance_nodes: IntArray
    """The chance nodes, ascending."""
    decision_nodes: IntArray
    """The decision nodes, ascending: the nodes with children that are not chance nodes. Every other
    node is a terminal."""
    decision_keys: IntArray
    """The key number of each decision node (an index into :attr:`keys`)."""
    chance_outcome: IntArray
    """The outcomes of every chance node, node by node in ascending order, each node's in the order
    its children were visited (a decision node's children follow its key's legal actions)."""
    chance_probability: FloatArray
    """The probability of each of :attr:`chance_outcome`."""
    terminal_reach: FloatArray
    """Product of the chance probabilities on the path to each terminal, terminals in preorder."""
    terminal_returns: FloatArray
    """``(terminals, players)``: each terminal's returns."""
    keys: tuple[str, ...]
    """The information-state keys of the decision nodes, in order of first visit."""
    key_player: IntArray
    key_actions: tuple[tuple[int, ...], ...]
    """Legal actions at each key, ascending."""
    key_width: IntArray
    """The number of legal actions at each key."""

    @property
    def num_nodes(self) -> int:
        return int(self.parent.shape[0])


def walk(game: Game) -> Walk:
    """Enumerate ``game``'s whole tree depth first; see the module docstring.

    A key met again with another acting player or other legal actions is refused with
    :class:`~adapters.inputs.UnsupportedGameError`.
    """
    ops = game.tree_ops()
    player_of, outcomes_of, actions_of = ops.player, ops.outcomes, ops.actions
    child_of, apply_in_place, returns_of, key_of = ops.child, ops.apply_in_place, ops.returns, ops.key
    check_actions = not ops.actions_follow_key
    parents: list[int] = [-1]
    chance_nodes: list[int] = []
    decision_keys: list[int] = []
    chance_outcomes: list[int] = []
    chance_probabilities: list[float] = []
    terminal_reach: list[float] = []
    terminal_returns: list[float] = []
    keys: dict[str, int] = {}
    key_player: list[int] = []
    key_actions: list[Any] = []
    add_parent, add_reach, add_returns = parents.append, terminal_reach.append, terminal_returns.extend

    def chance(state: Any, node: int, reach: float) -> None:
        pairs = outcomes_of(state)
        chance_nodes.append(node)
        for outcome, probability in pairs:
            chance_outcomes.append(outcome)
            chance_probabilities.append(probability)
        for outcome, probability in pairs:
            child = child_of(state, outcome)
            player = player_of(child)
            add_parent(node)
            if player == TERMINAL:
                add_returns(returns_of(child))
                add_reach(reach * probability)
            elif player == CHANCE:
                chance(child, len(parents) - 1, reach * probability)
            else:
                decision(child, len(parents) - 1, player, reach * probability)

    def decision(state: Any, node: int, player: int, reach: float) -> None:
        key = key_of(state, player)
        number = keys.get(key)
        if number is None:
            number = keys[key] = len(key_player)
            key_player.append(player)
            key_actions.append(actions := actions_of(state))
            if not actions:
                raise UnsupportedGameError(f"{game.game_id}: infoset {key!r} has no legal actions")
        else:
            actions = key_actions[number]
            if key_player[number] != player or (check_actions and actions_of(state) != actions):
                raise UnsupportedGameError(
                    f"{game.game_id}: infoset {key!r} has different players or legal actions at two states"
                )
        decision_keys.append(number)
        last = actions[-1]
        for action in actions:
            if action == last and apply_in_place is not None:  # the state is not needed after its last child
                apply_in_place(state, action)
                child = state
            else:
                child = child_of(state, action)
            child_player = player_of(child)
            add_parent(node)
            if child_player == TERMINAL:
                add_returns(returns_of(child))
                add_reach(reach)
            elif child_player == CHANCE:
                chance(child, len(parents) - 1, reach)
            else:
                decision(child, len(parents) - 1, child_player, reach)

    root_player = player_of(ops.root)
    if root_player == TERMINAL:
        add_returns(returns_of(ops.root))
        add_reach(1.0)
    elif root_player == CHANCE:
        chance(ops.root, 0, 1.0)
    else:
        decision(ops.root, 0, root_player, 1.0)
    parent = _ints(parents)
    inner = np.bincount(parent[1:], minlength=parent.shape[0]) > 0  # decision and chance nodes have children
    inner[chance_nodes] = False
    return Walk(
        parent=parent,
        chance_nodes=_ints(chance_nodes),
        decision_nodes=np.flatnonzero(inner),
        decision_keys=_ints(decision_keys),
        chance_outcome=_ints(chance_outcomes),
        chance_probability=_floats(chance_probabilities),
        terminal_reach=_floats(terminal_reach),
        terminal_returns=_floats(terminal_returns).reshape(-1, game.num_players),
        keys=tuple(keys),
        key_player=_ints(key_player),
        key_actions=tuple(map(tuple, key_actions)),
        key_width=np.array(list(map(len, key_actions)), dtype=np.int64),
    )


def _ints(values: list[int]) -> IntArray:
    return np.fromiter(values, dtype=np.int64, count=len(values))


def _floats(values: list[float]) -> FloatArray:
    return np.fromiter(values, dtype=np.float64, count=len(values))
