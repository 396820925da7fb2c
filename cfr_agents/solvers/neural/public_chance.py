r"""Public-chance-sampled regret targets for Deep CFR and SD-CFR on the hold'em engine: one board per traversal, exact
counterfactual regrets of every private hand given that board.

External sampling (:meth:`~cfr_agents.solvers.neural.holdem.HoldemNeuralSolver.traverse`) draws the whole deal and
one opponent action per opponent node, so a sample's regret :math:`\tilde r^t(I,a)` carries the noise of the
opponent's hand and actions. Public chance sampling (Johanson, Bard, Lanctot, Gibson & Bowling 2012) draws only the
public cards :math:`b` (every round's board) and walks the betting tree once with vectors over the private hands
:math:`h` that :math:`b` leaves, for traverser :math:`p`:

1. top-down, the opponent's reach :math:`\pi_{-p}(d, h')` at each node :math:`d`: 1 at the root, times
   :math:`\sigma^t(I_{d,h'}, a)` at the opponent's decisions;
2. at a terminal :math:`z`, :math:`v_p(z, h) = u_p(z) \sum_{h' \cap h = \emptyset} \pi_{-p}(z, h')` after a fold,
   :math:`v_p(z, h) = u_p(z) \sum_{h' \cap h = \emptyset} \pi_{-p}(z, h')\,\mathrm{sgn}(\mathrm{rank}(h, b) -
   \mathrm{rank}(h', b))` at a showdown (the sweeps of :mod:`cfr_agents.solvers.hand_sweeps`, :math:`O(H)` each);
3. bottom-up, :math:`v_p(d, h) = \sum_a \sigma^t(I_{d,h}, a)\, v_p(da, h)` at the traverser's decisions and
   :math:`\sum_a v_p(da, h)` at the opponent's (its reach is already in the children's values), and
   :math:`r(d, h, a) = v_p(da, h) - v_p(d, h)`.

Every (decision :math:`d` of :math:`p`, hand :math:`h`) is a candidate sample of :math:`I = I_{d,h}`: its target is
:math:`r(d, h, \cdot) / m(d, h)`, with :math:`m(d, h) = \sum_{h' \cap h = \emptyset} \pi_{-p}(d, h')` the opponent's
reach mass, and it is kept with probability :math:`w(d, h) = m(d, h) / n(h)`, :math:`n(h)` the opponent hands
compatible with :math:`h`: the probability that an external-sampling traversal of a deal with board :math:`b` and
hand :math:`h` reaches :math:`d`. So the memory holds each infoset as often as external sampling would put it there,
and a sample's target is the expectation of external sampling's :math:`\tilde r^t(I, \cdot)` over the opponent's
hand and actions given :math:`b` (:func:`board_regrets` returns every candidate with :math:`w`; the solver draws
the kept ones). Deep CFR's strategy memory gets the opponent's decisions the same way: (:math:`d`, :math:`h'`) kept
with probability :math:`\pi_{-p}(d, h')`, its own reach, and target :math:`\sigma^t(I_{d,h'})`.

One traversal (``traversals`` counts boards) thus stands for one external-sampling traversal of every hand the
board leaves.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from adapters.holdem.betting import DEAL, DECISION, FOLD, SHOWDOWN
from adapters.holdem.cards import board_mask, hand_masks, private_hands, rank_hands
from adapters.holdem.engine import HoldemEngine
from cfr_agents.solvers.hand_sweeps import fold, showdown
from cfr_agents.tree import FloatArray

IntArray = NDArray[np.int64]


class BoardRegrets(NamedTuple):
    """What one board's traversal for one player offers: rows of (decision node, hand) (:func:`board_regrets`)."""

    own_nodes: IntArray
    """The traverser's decision node of each candidate sample."""
    own_hands: IntArray
    """Its hand, an index into the hands the board leaves."""
    targets: FloatArray
    r""":math:`r(d, h, \cdot) / m(d, h)` (0 past the node's actions)."""
    keep: FloatArray
    r""":math:`w(d, h)`, the probability of keeping the sample."""
    other_nodes: IntArray
    """The opponent's decision node of each of its candidate samples."""
    other_hands: IntArray
    other_keep: FloatArray
    r""":math:`\pi_{-p}(d, h')`, the opponent's own reach."""


@dataclass(frozen=True)
class BoardWalk:
    """The betting tree of an engine's game and its private hands, as :func:`board_regrets` walks them."""

    engine: HoldemEngine
    values: FloatArray
    """``(N, 2)``: :func:`~cfr_agents.solvers.sampling.deals.terminal_values`."""

    def __post_init__(self) -> None:
        betting = self.engine.betting
        if not (betting.parent[1:] < np.arange(1, betting.num_nodes)).all():
            raise ValueError("the betting tree is not numbered parents first")

    @functools.cached_property
    def hands(self) -> IntArray:
        """Every private hand of the deck, ``(H, hole)``."""
        rules = self.engine.rules
        return private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)

    def valid(self, board: IntArray) -> IntArray:
        """The hands (rows of :attr:`hands`) that ``board`` (every round's cards) leaves."""
        return np.flatnonzero((self.masks & board_mask(board.tolist())) == 0)

    @functools.cached_property
    def masks(self) -> NDArray[np.uint64]:
        """The bit mask of each hand of :attr:`hands`."""
        return hand_masks(self.hands)


def board_regrets(walk: BoardWalk, board: IntArray, player: int, sigma: FloatArray) -> BoardRegrets:
    r"""One public-chance traversal for ``player`` with ``board`` dealt (module docstring). ``sigma`` ``(N, H_b, 3)``
    holds :math:`\sigma^t(I_{d,h})` at every decision node :math:`d` for each hand the board leaves
    (:meth:`BoardWalk.valid`, in that order)."""
    engine = walk.engine
    betting = engine.betting
    hands = walk.hands[walk.valid(board)]
    strength = rank_hands(hands, board, engine.rules.num_suits)
    order = np.argsort(strength)
    ranks = strength[order]
    count = hands.shape[0]
    live, card_sum = np.ones(count), np.zeros(engine.rules.deck_size)
    kind, mover = betting.kind.astype(np.int64), betting.player.astype(np.int64)
    nodes = betting.num_nodes
    reach = np.ones((nodes, count))
    for node in range(1, nodes):  # pi_{-p}(d, h'), parents first
        parent = int(betting.parent[node])
        reach[node] = reach[parent]
        if kind[parent] == DECISION and mover[parent] != player:
            reach[node] *= sigma[parent, :, node - int(betting.first_child[parent])]
    value = np.zeros_like(reach)
    for z in np.flatnonzero(kind == FOLD).tolist():  # u_p(z) sum_{h' disjoint from h} pi_{-p}(z, h')
        fold(reach[z], hands, card_sum, walk.values[z, player], live, value[z])
    for z in np.flatnonzero(kind == SHOWDOWN).tolist():  # u_p(z) sum_{h'} pi_{-p}(z, h') sgn(rank h - rank h')
        showdown(reach[z], hands, order, ranks, card_sum, walk.values[z, player], live, value[z])
    for node in range(nodes - 1, -1, -1):  # children first
        first, width = int(betting.first_child[node]), int(betting.num_children[node])
        if kind[node] == DEAL:
            value[node] = value[first]
        elif kind[node] == DECISION:
            children = value[first : first + width]
            if mover[node] == player:
                value[node] = np.einsum("ah,ha->h", children, sigma[node, :, :width])  # sum_a sigma v(da)
            else:
                value[node] = children.sum(axis=0)
    own = np.flatnonzero((kind == DECISION) & (mover == player))
    other = np.flatnonzero((kind == DECISION) & (mover != player))
    mass, regrets = np.zeros((own.size, count)), np.zeros((own.size, count, 3))
    for j, node in enumerate(own.tolist()):
        fold(reach[node], hands, card_sum, 1.0, live, mass[j])  # m(d, h) = sum_{h' disjoint from h} pi_{-p}(d, h')
        first, width = int(betting.first_child[node]), int(betting.num_children[node])
        regrets[j, :, :width] = (value[first : first + width] - value[node]).T  # v(da, h) - v(d, h)
    compatible = np.zeros(count)
    fold(live, hands, card_sum, 1.0, live, compatible)  # n(h)
    reached = mass > 0.0
    targets = regrets / np.where(reached, mass, 1.0)[..., None]  # r / m
    keep = mass / compatible[None, :]  # w = m / n(h)
    rows, columns = np.nonzero(reached)
    other_reach = reach[other]
    other_rows, other_columns = np.nonzero(other_reach > 0.0)
    return BoardRegrets(
        own[rows],
        columns.astype(np.int64),
        targets[rows, columns],
        keep[rows, columns],
        other[other_rows],
        other_columns.astype(np.int64),
        other_reach[other_rows, other_columns],
    )
