"""The betting tree of a two-player limit hold'em game, read from the toolkit's own states: OpenSpiel's
``universal_poker`` (:func:`betting_tree`), or any state with ``pyspiel``'s surface (:func:`walk_betting`; RLCard's
limit hold'em, :func:`adapters.holdem.engine.rlcard_betting_tree`).

Betting in limit poker does not depend on the cards, so one walk of ``pyspiel`` states with any fixed
deal visits every betting sequence: at each decision the legal actions are OpenSpiel's, at each
terminal the chips each player put in are OpenSpiel's (its state's ``Spent`` line), and a chance node
between rounds marks the end of a betting round. No rule is re-derived here.

The nodes are laid out round subtree by round subtree: the betting of one round that starts at an
*entry* node (the root, or the node after a round's cards are dealt) is a contiguous range in
preorder, parents before children, and ends at fold and showdown terminals and at *deal* nodes, each
of which leads to the entry of a later range.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol

import numpy as np
import pyspiel
from numpy.typing import NDArray

from adapters.inputs import UnsupportedGameError

DECISION: Final = 0
FOLD: Final = 1
SHOWDOWN: Final = 2
DEAL: Final = 3
"""Node kinds: a player's decision, a fold, a showdown, and the end of a betting round (cards to deal)."""

ACTION_LETTERS: Final = "fcr"
"""OpenSpiel's limit actions 0, 1, 2 (fold, check/call, bet/raise) as its ``Sequences`` string writes them."""

_SPENT = re.compile(r"Spent: \[P0: (\d+)\s+P1: (\d+)\s*\]")


@dataclass(frozen=True)
class BettingTree:
    """Every betting sequence of the game, one node each, in round-subtree preorder (module docstring)."""

    kind: NDArray[np.int8]
    """:data:`DECISION`, :data:`FOLD`, :data:`SHOWDOWN` or :data:`DEAL`."""
    player: NDArray[np.int8]
    """The player to act at a decision; the player who folded at a fold; -1 elsewhere."""
    round: NDArray[np.int8]
    """The betting round, from 0."""
    parent: NDArray[np.int32]
    """The node before; -1 at the root. A round's entry has its deal node as parent."""
    action: NDArray[np.int8]
    """OpenSpiel's action id (0 fold, 1 check/call, 2 bet/raise) from the parent; -1 at an entry."""
    first_child: NDArray[np.int32]
    """At a decision, the first of its children (one per legal action, in action order); at a deal, the
    next round's entry; -1 at terminals."""
    num_children: NDArray[np.int8]
    """Legal actions at a decision, 1 at a deal, 0 at terminals."""
    spent: NDArray[np.float64]
    """``(N, 2)``: chips each player has put in the pot at the node."""
    ranges: NDArray[np.int32]
    """``(E, 2)``: ``[start, stop)`` of each round subtree; ``ranges[0]`` starts at the root."""
    sequence: tuple[str, ...]
    """OpenSpiel's ``Sequences`` string for each node: the actions so far, rounds separated by ``|``."""

    @property
    def num_nodes(self) -> int:
        return int(self.kind.shape[0])

    @property
    def num_rounds(self) -> int:
        return int(self.round.max()) + 1

    def range_of(self, entry: int) -> int:
        """The index in :attr:`ranges` of the round subtree that starts at ``entry``."""
        found = np.flatnonzero(self.ranges[:, 0] == entry)
        if found.size != 1:
            raise ValueError(f"node {entry} starts no round subtree")
        return int(found[0])


class BettingState(Protocol):
    """What :func:`walk_betting` reads of a state: ``pyspiel``'s surface, with OpenSpiel's limit action ids (0
    fold, 1 check/call, 2 bet/raise) and returns in chips."""

    def is_chance_node(self) -> bool: ...
    def is_terminal(self) -> bool: ...
    def current_player(self) -> int: ...
    def legal_actions(self) -> list[int]: ...
    def child(self, action: int) -> Any: ...
    def returns(self) -> list[float]: ...
    def history(self) -> list[int]: ...


def betting_tree(game: pyspiel.Game) -> BettingTree:
    """Walk ``game``'s betting once, with the first legal cards dealt at every chance node."""
    if game.num_players() != 2:
        raise UnsupportedGameError(f"the betting tree needs two players, not {game.num_players()}")
    return walk_betting(game.new_initial_state(), _spent)


def walk_betting(root: BettingState, spent_of: Callable[[Any], tuple[float, float]]) -> BettingTree:
    """The betting tree from ``root``, the first legal cards dealt at every chance node; ``spent_of(state)``: the
    chips each player has put in."""
    kind: list[int] = []
    player: list[int] = []
    rounds: list[int] = []
    parent: list[int] = []
    action: list[int] = []
    first_child: list[int] = []
    num_children: list[int] = []
    spent: list[tuple[float, float]] = []
    sequence: list[str] = []
    ranges: list[tuple[int, int]] = []

    def add(state: Any, up: int, via: int, round_: int, history: str) -> int:
        node_kind, node_player, chips = _describe(state, spent_of(state), via, player[up] if up >= 0 else -1)
        kind.append(node_kind)
        player.append(node_player)
        rounds.append(round_)
        parent.append(up)
        action.append(via)
        first_child.append(-1)
        num_children.append(0)
        spent.append(chips)
        sequence.append(history)
        return len(kind) - 1

    entries: list[tuple[Any, int, int, str]] = [(_deal(root), -1, 0, "")]
    while entries:
        start_state, up, round_, history = entries.pop(0)
        start = len(kind)
        add(start_state, up, -1, round_, history)
        if up >= 0:
            first_child[up], num_children[up] = start, 1
        frontier = [(start, start_state)]
        while frontier:  # breadth-first inside the round, so each decision's children are contiguous
            node, state = frontier.pop(0)
            if kind[node] == DECISION:
                legal = state.legal_actions()
                first_child[node], num_children[node] = len(kind), len(legal)
                for act in legal:
                    child = state.child(act)
                    child_node = add(child, node, act, round_, sequence[node] + ACTION_LETTERS[act])
                    frontier.append((child_node, child))
            elif kind[node] == DEAL:
                entries.append((_deal(state), node, round_ + 1, sequence[node] + "|"))
        ranges.append((start, len(kind)))
    return BettingTree(
        kind=np.array(kind, dtype=np.int8),
        player=np.array(player, dtype=np.int8),
        round=np.array(rounds, dtype=np.int8),
        parent=np.array(parent, dtype=np.int32),
        action=np.array(action, dtype=np.int8),
        first_child=np.array(first_child, dtype=np.int32),
        num_children=np.array(num_children, dtype=np.int8),
        spent=np.array(spent, dtype=np.float64).reshape(-1, 2),
        ranges=np.array(ranges, dtype=np.int32).reshape(-1, 2),
        sequence=tuple(sequence),
    )


def _deal(state: Any) -> Any:
    """``state`` after the first legal card at every chance node until a player acts or the game ends."""
    while state.is_chance_node():
        state = state.child(state.legal_actions()[0])
    return state


def _describe(state: Any, chips: tuple[float, float], via: int, mover: int) -> tuple[int, int, tuple[float, float]]:
    """``(kind, player, spent)`` of a node reached by action ``via`` of ``mover``, ``chips`` in; a terminal's
    returns must be the chips lost (a fold loses what the folder put in; a showdown is between equal stakes)."""
    if state.is_chance_node():
        return DEAL, -1, chips
    if not state.is_terminal():
        return DECISION, int(state.current_player()), chips
    if via == 0:  # a fold
        returns = state.returns()  # read at folds only: a showdown's depend on the cards
        if returns[mover] != -chips[mover]:
            raise UnsupportedGameError(f"a fold in {state.history()} returns {returns}, not the folder's stake")
        return FOLD, mover, chips
    if chips[0] != chips[1]:
        raise UnsupportedGameError(f"a showdown in {state.history()} between unequal stakes {chips}")
    return SHOWDOWN, -1, chips


def _spent(state: pyspiel.State) -> tuple[float, float]:
    match = _SPENT.search(str(state))
    if match is None:
        raise UnsupportedGameError("universal_poker's state shows no 'Spent' line: not a limit poker game")
    return float(match.group(1)), float(match.group(2))
