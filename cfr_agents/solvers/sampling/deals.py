r"""What a traversal reads of the game besides the kernels' node arrays: the deal.

On a compiled tree the deal is part of the tree -- chance nodes are walked like any other -- and there is nothing
more to read: the kernels pass ``None``, and :func:`infoset_at`, :func:`terminal_value` and :func:`draw_deal`
compile to what the walk would do without them (``nodes[node, INDEX]``, ``values[node, player]``, nothing), at
no cost.

On the limit hold'em engine (:mod:`adapters.holdem.engine`) the kernels' nodes are the *betting tree* and the
cards are dealt once per traversal, at its start (:func:`draw_deal`), into a :class:`HoldemDeal`:

* each player's bucket :math:`b_i(r)` in each round :math:`r` under a card abstraction
  (:func:`cfr_agents.abstraction.bucket_of`), so the infoset of player :math:`i` at betting node :math:`d` of
  round :math:`r` is row ``nodes[d, INDEX]`` :math:`+\ b_i(r)` of the regret tables (:func:`infoset_at`): each
  decision node owns one row per bucket of its round;
* the showdown's result :math:`s_i \in \{1, 0, -1\}` for player :math:`i` (win, tie, loss), so a showdown's value
  is ``values[z, i]`` :math:`\cdot\ s_i` with ``values[z, i]`` the stake (:func:`terminal_value`); a fold's value
  does not depend on the cards.

The betting tree's deal nodes stay chance nodes with one child: the cards they stand for are already drawn.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numba import njit, types
from numba.extending import overload

from adapters.holdem.betting import DEAL, DECISION, FOLD, SHOWDOWN
from adapters.holdem.cards import cards_rank, hand_masks, private_hands
from adapters.holdem.engine import HoldemEngine
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.abstraction import AbstractionTables, bucket_of
from cfr_agents.solvers.sampling.kernel_support import (
    CHANCE,
    CODE,
    COUNT,
    FIRST,
    INDEX,
    PLAYER_0,
    TERMINAL,
    KernelTree,
    uniform,
)


class HoldemDeal(NamedTuple):
    """The engine's deal: what :func:`draw_deal` reads (the rules, the abstraction) and writes (the cards)."""

    round: np.ndarray
    """int64 ``(nodes,)``: the betting round of each kernel node."""
    showdown: np.ndarray
    """bool ``(nodes,)``: whether the node is a showdown."""
    board_end: np.ndarray
    """int64 ``(R,)``: the board cards dealt by the end of each round's deal (cumulative)."""
    num_hole: int
    num_suits: int
    tables: AbstractionTables
    deck: np.ndarray
    """int64 ``(deck_size,)``: the deck, shuffled in place (scratch)."""
    cards: np.ndarray
    """int64: the deal, player 0's hole cards, player 1's, then the board in order."""
    bucket: np.ndarray
    """int64 ``(2, R)``: :math:`b_i(r)`."""
    sign: np.ndarray
    r"""float64 ``(2,)``: :math:`s_i`."""
    hands: np.ndarray
    """int64 ``(H, k)``: every private hand (:func:`~adapters.holdem.cards.private_hands`), for the schemes that
    walk vectors over them (:mod:`~cfr_agents.solvers.sampling.public_chance`)."""
    hand_masks: np.ndarray
    """int64 ``(H,)``: the bit mask of each hand's cards."""


def infoset_at(nodes: np.ndarray, node: int, player: int, deal: Any) -> int:
    """The regret-table row of the infoset at decision ``node`` of ``player`` (compiled only)."""
    raise NotImplementedError


def terminal_value(values: np.ndarray, node: int, player: int, deal: Any) -> float:
    """:math:`u_i(z)` at terminal ``node`` for ``player`` (compiled only)."""
    raise NotImplementedError


def draw_deal(deal: Any, rng: np.ndarray) -> None:
    """Deal the cards of a traversal (compiled only)."""
    raise NotImplementedError


def _is_holdem(deal: Any) -> bool:
    return isinstance(deal, types.BaseNamedTuple) and getattr(deal, "instance_class", None) is HoldemDeal


# Numba checks that an implementation's parameters match the overload's, annotations included: hence ``Any``.


@overload(infoset_at)
def _infoset_at(nodes: Any, node: Any, player: Any, deal: Any) -> Any:
    if isinstance(deal, types.NoneType):

        def tree_infoset(nodes: Any, node: Any, player: Any, deal: Any) -> int:
            return nodes[node, INDEX]  # type: ignore[no-any-return]

        return tree_infoset
    if _is_holdem(deal):

        def holdem_infoset(nodes: Any, node: Any, player: Any, deal: Any) -> int:
            return nodes[node, INDEX] + deal.bucket[player, deal.round[node]]  # type: ignore[no-any-return]

        return holdem_infoset
    return None


@overload(terminal_value, inline="always")
def _terminal_value(values: Any, node: Any, player: Any, deal: Any) -> Any:
    if isinstance(deal, types.NoneType):

        def tree_value(values: Any, node: Any, player: Any, deal: Any) -> float:
            return values[node, player]  # type: ignore[no-any-return]  # u_i(z)

        return tree_value
    if _is_holdem(deal):

        def holdem_value(values: Any, node: Any, player: Any, deal: Any) -> float:
            value: float = values[node, player]
            return value * deal.sign[player] if deal.showdown[node] else value

        return holdem_value
    return None


@overload(draw_deal, inline="always")
def _draw_deal(deal: Any, rng: Any) -> Any:
    if isinstance(deal, types.NoneType):

        def no_deal(deal: Any, rng: Any) -> None:
            return None

        return no_deal
    if _is_holdem(deal):

        def holdem_deal(deal: Any, rng: Any) -> None:
            _deal_holdem(deal, rng)

        return holdem_deal
    return None


@njit(cache=True, error_model="numpy")
def _deal_holdem(deal: HoldemDeal, rng: np.ndarray) -> None:
    r"""Draw the cards without replacement (a partial Fisher-Yates shuffle of ``deck``), then :math:`b_i(r)` and
    :math:`s_i`. Allocates nothing: it runs inside the kernels' loops, which are compiled without reference
    counting."""
    deck, cards, k = deal.deck, deal.cards, deal.num_hole
    n = deck.shape[0]
    for i in range(n):  # from the ordered deck each time: a deal depends on the generator's state alone
        deck[i] = i
    for i in range(cards.shape[0]):
        j = i + int(uniform(rng) * (n - i))
        deck[i], deck[j] = deck[j], deck[i]
        cards[i] = deck[i]
    board = cards[2 * k :]
    for player in range(2):
        hole = cards[player * k : (player + 1) * k]
        for r in range(deal.board_end.shape[0]):
            deal.bucket[player, r] = bucket_of(deal.tables, r, hole, board[: deal.board_end[r]])
    first = cards_rank(cards[:k], board, deal.num_suits)
    second = cards_rank(cards[k : 2 * k], board, deal.num_suits)
    outcome = 1.0 if first > second else -1.0 if first < second else 0.0
    deal.sign[0], deal.sign[1] = outcome, -outcome


def terminal_values(engine: HoldemEngine) -> np.ndarray:
    """``(N, 2)`` over the engine's betting tree: at a fold each player's payoff, at a showdown the stake (each
    player's payoff is the stake times :math:`s_i`, the deal's showdown result), 0 elsewhere."""
    betting = engine.betting
    kind = betting.kind.astype(np.int64)
    values = np.zeros((betting.num_nodes, 2))
    folder = betting.player.astype(np.int64)
    for z in np.flatnonzero(kind == FOLD):  # the folder loses what it put in
        lost = betting.spent[z, folder[z]] * engine.payoff_scale
        values[z, folder[z]], values[z, 1 - folder[z]] = -lost, lost
    showdown = kind == SHOWDOWN
    values[showdown] = betting.spent[showdown, :1] * engine.payoff_scale  # the stake, times s_i per deal
    return values


def betting_kernel(engine: HoldemEngine, row_base: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The engine's betting tree as the kernels read it (:data:`~.kernel_support.CODE`), without its deal:
    ``(nodes, values, cdf, depth_bound)``, a decision node's infoset column holding ``row_base[node]``, a
    showdown's value the stake (times :math:`s_i` per deal), a deal node a chance node with one child."""
    betting = engine.betting
    kind = betting.kind.astype(np.int64)
    count = betting.num_nodes
    nodes = np.zeros((count, 4), dtype=np.int64)
    nodes[:, CODE] = np.select(
        [kind == DECISION, kind == DEAL], [PLAYER_0 + betting.player.astype(np.int64), CHANCE], TERMINAL
    )
    nodes[:, INDEX] = np.maximum(row_base, 0)
    nodes[:, FIRST] = np.maximum(betting.first_child, 0)
    nodes[:, COUNT] = betting.num_children
    values = terminal_values(engine)
    cdf = np.zeros(count)
    cdf[betting.first_child[kind == DEAL]] = 1.0
    depth = np.zeros(count, dtype=np.int64)
    for node in range(count):  # children follow their parents
        first, n = nodes[node, FIRST], nodes[node, COUNT]
        depth[first : first + n] = depth[node] + 1
    return nodes, values, cdf, int(depth.max()) + 1


def holdem_kernel(game: AbstractGame) -> KernelTree:
    """The betting tree as the kernels read it (:func:`betting_kernel`; a node's infoset column holds its first
    row, :attr:`AbstractGame.row_base`), with a fresh deal."""
    engine = game.engine
    betting, rules = engine.betting, engine.rules
    nodes, values, cdf, depth_bound = betting_kernel(engine, game.row_base)
    k = rules.num_hole_cards
    hands = private_hands(rules.num_ranks, rules.num_suits, k)
    deal = HoldemDeal(
        round=betting.round.astype(np.int64),
        showdown=betting.kind == SHOWDOWN,
        board_end=np.cumsum(rules.board_cards).astype(np.int64),
        num_hole=k,
        num_suits=rules.num_suits,
        tables=game.abstraction.kernel_tables(),
        deck=np.arange(rules.deck_size, dtype=np.int64),
        cards=np.zeros(2 * k + sum(rules.board_cards), dtype=np.int64),
        bucket=np.zeros((2, rules.num_rounds), dtype=np.int64),
        sign=np.zeros(2),
        hands=hands,
        hand_masks=hand_masks(hands).astype(np.int64),
    )
    return nodes, values, cdf, depth_bound, deal
