r"""AIVAT: an unbiased, lower-variance estimate of a match's value when one agent's strategy is known.

Burch, Schmid, Moravčík, Morrill & Bowling, "AIVAT: A New Variance Reduction Technique for Agent
Evaluation in Imperfect Information Games", AAAI 2018.

After each hand of a match on the compiled tree every card is known, so the hand is a path
:math:`\emptyset = h_0, h_1, \dots, h_T = z` of the tree. Let :math:`K` be the seat whose strategy
:math:`\sigma_K` is known exactly (one of our policies or models, or any agent :func:`eval.strategy_of` can
query) and :math:`v_p(h)` any fixed value function of the histories for the seat :math:`p` whose payoff is
estimated. The AIVAT value of the hand for :math:`p` is

.. math::

    \hat u_p(z) = u_p(z)
      - \sum_{h c \sqsubseteq z,\ h \in H_c} \Big[ v_p(hc) - \sum_{c'} \pi_c(c' \mid h)\, v_p(hc') \Big]
      - \sum_{h a \sqsubseteq z,\ P(h) = K} \Big[ v_p(ha) - \sum_{a'} \sigma_K(a' \mid h)\, v_p(ha') \Big].

The opponent's actions get no correction: its strategy is unknown. Given the history before it, each
bracket has expectation zero -- the event after :math:`h` is drawn from exactly the distribution the
bracket subtracts -- so :math:`\mathbb E[\hat u_p(z)] = \mathbb E[u_p(z)]` for *any* fixed :math:`v_p`:
the estimate is unbiased whatever the value function, and the value function only decides how much
variance the corrections remove.

The value function (:func:`self_play_values`) is the exact expected value of :math:`\sigma_K` played
against itself, :math:`v_p(h) = \sum_{z \sqsupseteq h} \pi^{\sigma_K}(h, z)\, u_p(z)`, one backward pass
over the tree. Then at chance nodes and at :math:`K`'s nodes the subtracted sum is :math:`v_p(h)` itself,
so the corrections cancel the luck of the cards and of :math:`K`'s own sampling; what remains is the
value of :math:`\sigma_K` against itself plus the change in value at the opponent's decisions.

A played hand is mapped onto the tree by the hand log's mapper (:class:`eval.hand_log.HandReader`: RLCard's
env through :meth:`~eval.hand_log.TreePaths.complete`, OpenSpiel's ``state.history()`` as it is), and
:class:`AivatRecorder` is a :class:`~eval.hand_log.HandReader` that scores each hand as it is handed over.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from adapters.base import NUM_PLAYERS
from adapters.inputs import InputError
from cfr_agents.tree import KIND_DECISION, KIND_TERMINAL, CompiledTree, FloatArray, IntArray
from eval.environments import Z_95, PairSamples
from eval.hand_log import HandReader, TreePaths

PAYOFF_TOLERANCE = 1e-9
"""How far a hand's payoff on replay may be from the payoff it was played for, relative (at least 1 unit)."""


def node_depths(tree: CompiledTree) -> IntArray:
    """Each node's number of edges from the root, top-down a level at a time (no recursion)."""
    depth = np.zeros(tree.node_kind.shape[0], dtype=np.int64)
    frontier = np.zeros(1, dtype=np.int64)
    level = 0
    while frontier.size:
        starts, stops = tree.child_start[frontier], tree.child_start[frontier + 1]
        counts = stops - starts
        edges = np.repeat(stops - counts.cumsum(), counts) + np.arange(int(counts.sum()))
        frontier = tree.child_node[edges]
        level += 1
        depth[frontier] = level
    return depth


def edge_weights(tree: CompiledTree, strategy: FloatArray) -> FloatArray:
    r"""The probability of each edge given its parent: :math:`\pi_c(c \mid h)` out of a chance node,
    :math:`\sigma(a \mid h)` (``strategy``'s row of the node's infoset) out of a decision node."""
    parent = edge_parents(tree)
    column = np.arange(tree.child_node.shape[0]) - tree.child_start[parent]
    infoset = tree.node_infoset[parent]
    decision = infoset >= 0
    weights: FloatArray = np.where(
        decision, strategy[np.where(decision, infoset, 0), np.where(decision, column, 0)], tree.child_probability
    )
    return weights


def edge_parents(tree: CompiledTree) -> IntArray:
    """The node each edge leaves (edges are laid out parent by parent)."""
    parents: IntArray = np.repeat(np.arange(tree.node_kind.shape[0]), np.diff(tree.child_start))
    return parents


def expected_children(tree: CompiledTree, weights: FloatArray, values: FloatArray) -> FloatArray:
    r""":math:`\sum_{e \in \mathrm{children}(h)} w(e)\, v_p(\mathrm{child}(e))` for every node and seat,
    ``(2, nodes)``; 0 at terminals."""
    parent = edge_parents(tree)
    num_nodes = tree.node_kind.shape[0]
    expected: FloatArray = np.stack(
        [np.bincount(parent, weights * values[p, tree.child_node], num_nodes) for p in range(NUM_PLAYERS)]
    )
    return expected


def self_play_values(tree: CompiledTree, strategy: FloatArray) -> FloatArray:
    r""":math:`v_p(h)`, ``(2, nodes)``: each seat's exact expected payoff from node :math:`h` on when both
    seats play ``strategy``. Bottom-up a depth at a time:
    :math:`v_p(z) = u_p(z)`, :math:`v_p(h) = \sum_c \pi_c(c \mid h)\, v_p(hc)` at chance nodes and
    :math:`v_p(h) = \sum_a \sigma(a \mid h)\, v_p(ha)` at decision nodes."""
    if strategy.shape != tree.action_mask.shape:
        raise ValueError(f"the strategy has shape {strategy.shape}, the tree needs {tree.action_mask.shape}")
    num_nodes = tree.node_kind.shape[0]
    values = np.zeros((NUM_PLAYERS, num_nodes))
    terminal = tree.node_kind == KIND_TERMINAL
    values[:, terminal] = tree.terminal_utility[:, tree.node_terminal[terminal]]  # v_p(z) = u_p(z)
    weights = edge_weights(tree, strategy)
    parent = edge_parents(tree)
    depth = node_depths(tree)
    parent_depth = depth[parent]
    for level in range(int(depth.max()) - 1, -1, -1):
        edges = np.flatnonzero(parent_depth == level)
        nodes = np.unique(parent[edges])
        for p in range(NUM_PLAYERS):
            # v_p(h) = sum_e w(e) v_p(child(e)) over the edges out of h
            totals = np.bincount(parent[edges], weights[edges] * values[p, tree.child_node[edges]], num_nodes)
            values[p, nodes] = totals[nodes]
    return values


@dataclass(frozen=True, eq=False)
class Aivat:
    r"""The AIVAT corrections of one tree, known strategy and value function.

    ``terms[p, e]`` is the bracket of the module docstring for the edge :math:`e` from :math:`h` to its
    child: :math:`v_p(\mathrm{child}(e)) - \sum_{e'} w(e')\, v_p(\mathrm{child}(e'))`, the sum over the
    edges out of :math:`h`. A hand adds up the terms of its chance edges and of the known seat's edges."""

    tree: CompiledTree
    strategy: FloatArray
    """:math:`\\sigma_K`, ``(N, A)``: only the known seat's rows are used."""
    values: FloatArray
    """:math:`v_p(h)`, ``(2, nodes)``."""
    terms: FloatArray
    """``(2, edges)``."""
    incoming: IntArray
    """The edge into each node (``-1`` at the root)."""
    edge_player: IntArray
    """The player acting at each edge's parent: ``-1`` for chance edges."""
    paths: TreePaths

    @classmethod
    def build(cls, tree: CompiledTree, strategy: FloatArray, values: FloatArray | None = None) -> Aivat:
        """The corrections for the known strategy ``strategy`` with the value function ``values``
        (``(2, nodes)``; by default :func:`self_play_values` of ``strategy``)."""
        if strategy.shape != tree.action_mask.shape:
            raise ValueError(f"the strategy has shape {strategy.shape}, the tree needs {tree.action_mask.shape}")
        if values is None:
            values = self_play_values(tree, strategy)
        elif values.shape != (NUM_PLAYERS, tree.node_kind.shape[0]):
            raise ValueError(
                f"the values have shape {values.shape}, the tree needs {(NUM_PLAYERS, tree.node_kind.shape[0])}"
            )
        weights = edge_weights(tree, strategy)
        parent = edge_parents(tree)
        expected = expected_children(tree, weights, values)
        terms = values[:, tree.child_node] - expected[:, parent]  # v_p(h.c) - sum_c' w(c') v_p(h.c')
        incoming = np.full(tree.node_kind.shape[0], -1, dtype=np.int64)
        incoming[tree.child_node] = np.arange(tree.child_node.shape[0])
        infoset = tree.node_infoset[parent]
        edge_player = np.where(
            tree.node_kind[parent] == KIND_DECISION, tree.infoset_player[np.maximum(infoset, 0)], -1
        ).astype(np.int64)
        return cls(tree, strategy, values, terms, incoming, edge_player, TreePaths(tree))

    def corrections(self, nodes: Sequence[int], payoff_seat: int, known_seat: int) -> FloatArray:
        """The terms subtracted from ``payoff_seat``'s payoff for the hand through ``nodes`` (root first, a
        terminal last), one per edge: the chance edges' and ``known_seat``'s edges', 0 for the other seat's."""
        edges = self.incoming[np.asarray(nodes[1:], dtype=np.int64)]
        corrected = self.edge_player[edges] != 1 - known_seat  # chance (-1) or the known seat
        terms: FloatArray = np.where(corrected, self.terms[payoff_seat, edges], 0.0)
        return terms

    def hand_value(self, nodes: Sequence[int], payoff_seat: int, known_seat: int) -> float:
        r""":math:`\hat u_p(z)` of the hand through ``nodes`` for :math:`p` = ``payoff_seat``, with
        :math:`K` = ``known_seat`` the seat that played the known strategy."""
        terminal = int(self.tree.node_terminal[nodes[-1]])
        if terminal < 0:
            raise ValueError("the hand's last node is not a terminal")
        u = float(self.tree.terminal_utility[payoff_seat, terminal])  # u_p(z)
        return u - float(self.corrections(nodes, payoff_seat, known_seat).sum())

    def history_value(self, history: Sequence[int], payoff_seat: int, known_seat: int) -> float:
        """:meth:`hand_value` of the hand that applies ``history`` (every action and chance outcome id) to
        the game's initial state."""
        return self.score(history, payoff_seat, known_seat)[1]

    def score(self, history: Sequence[int], payoff_seat: int, known_seat: int) -> tuple[float, float]:
        r""":math:`u_p(z)` and :math:`\hat u_p(z)` of the hand ``history`` (:meth:`history_value`)."""
        nodes = self.paths.follow(history)
        u = float(self.tree.terminal_utility[payoff_seat, int(self.tree.node_terminal[nodes[-1]])])
        return u, self.hand_value(nodes, payoff_seat, known_seat)


class HandScorer(Protocol):
    """What :class:`AivatRecorder` scores hands with: :class:`Aivat` on the compiled tree, or
    :class:`eval.aivat_holdem.HoldemAivat` on the hold'em engine."""

    def score(self, history: Sequence[int], payoff_seat: int, known_seat: int) -> tuple[float, float]:
        r""":math:`u_p(z)` and :math:`\hat u_p(z)` of the hand ``history`` for ``payoff_seat``, ``known_seat``
        playing the known strategy."""
        ...


@dataclass(frozen=True)
class AivatEstimate:
    """``A``'s AIVAT payoff per hand: the mean over duplicate pairs of both hands' AIVAT values."""

    known: str
    """The agent whose strategy is the known one."""
    hands: int
    mean: float
    standard_error: float
    ci95: tuple[float, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "known": self.known,
            "hands": self.hands,
            "mean": self.mean,
            "standard_error": self.standard_error,
            "ci95": list(self.ci95),
        }


class AivatRecorder(HandReader):
    """Scores every hand a match hands over (:class:`~eval.hand_log.HandReader`) with ``aivat`` (a
    :class:`HandScorer`), and passes it on to ``log`` if one is given. A hand whose payoff on replay is not the one
    it was played for is refused: the replay has gone wrong.

    ``known`` is the index in the match's agents (``0``: ``A``, ``1``: ``B``) of the agent that plays the known
    strategy of ``agents``; every value is ``A``'s payoff. Hands come in duplicate pairs, both seats in turn. With
    ``keep_hands``, every hand's plain payoff and AIVAT value for ``A`` are kept (for a benchmark); otherwise only
    running moments, so memory does not grow with the match."""

    def __init__(
        self,
        game_id: str,
        agents: tuple[str, str],
        aivat: HandScorer,
        known: int,
        pairs: int,
        *,
        log: HandReader | None = None,
        keep_hands: bool = False,
    ) -> None:
        super().__init__(game_id)
        self.agents = agents
        self.aivat = aivat
        self.known = known
        self.log = log
        self.samples = PairSamples(pairs)
        self.payoffs: list[float] | None = [] if keep_hands else None
        """``A``'s payoff of every hand, in order (with ``keep_hands``)."""
        self.values: list[float] | None = [] if keep_hands else None
        """``A``'s AIVAT value of every hand, in order (with ``keep_hands``)."""
        self._pair = 0.0
        self._in_pair = 0

    def record(self, a_seat: int, history: Sequence[int], payoffs: Sequence[float]) -> None:
        known_seat = a_seat if self.known == 0 else 1 - a_seat
        u, value = self.aivat.score(history, a_seat, known_seat)
        self.check_replay(u, history, payoffs[a_seat])
        if self.payoffs is not None and self.values is not None:
            self.payoffs.append(float(payoffs[a_seat]))
            self.values.append(value)
        self._pair += value
        self._in_pair += 1
        if self._in_pair == NUM_PLAYERS:
            self.samples.add(self._pair / NUM_PLAYERS)
            self._pair, self._in_pair = 0.0, 0
        if self.log is not None:
            self.log.record(a_seat, history, payoffs)

    def check_replay(self, u: float, history: Sequence[int], paid: float) -> None:
        """Refuse a hand whose payoff on replay, ``u``, is not ``paid``, what it was played for."""
        if abs(u - float(paid)) > PAYOFF_TOLERANCE * max(1.0, abs(u)):
            raise InputError(f"{self.game_id}: the hand {list(history)} pays {u} on replay, {paid} in play")

    def close(self) -> None:
        if self.log is not None:
            self.log.close()

    def estimate(self) -> AivatEstimate:
        """The mean of the pairs' AIVAT values, its standard error and normal 95% interval."""
        pairs, mean, deviation = self.samples.moments()
        error = deviation / math.sqrt(pairs)
        return AivatEstimate(
            known=self.agents[self.known],
            hands=NUM_PLAYERS * pairs,
            mean=mean,
            standard_error=error,
            ci95=(mean - Z_95 * error, mean + Z_95 * error),
        )


__all__ = [
    "Aivat",
    "AivatEstimate",
    "AivatRecorder",
    "HandScorer",
    "edge_weights",
    "node_depths",
    "self_play_values",
]
