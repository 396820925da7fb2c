r"""An agent that re-solves each endgame when play reaches it, in games no public tree holds (``hulh``, RLCard's).

The agent plays its blueprint :math:`\sigma_B` (any agent asked for every hand at once, a
:class:`~eval.lbr_sampled.RangeQuery`) before the last round. At the first decision of the last round it builds the
endgame's public state :math:`S` (:mod:`cfr_agents.public_tree.subgame`): the round's entry and the board, and each
player's range there, replayed from the root along the public betting,

.. math:: r_p(S, h) = \prod_{(d, a) \in S,\ P(d) = p} \sigma_B(d, h, a),

the blueprint's probability of each of :math:`p`'s actions for each hand :math:`h` (asked at each of :math:`p`'s
earlier decisions with the board dealt by then). It then re-solves :math:`S` by ``iterations`` iterations of CFR
under ``algorithm``'s update rule, vectors over both players' hands, and plays the average strategy there:

* unsafe (Ganzfried & Sandholm 2015): CFR on the subgame, both players' strategies from one solve
  (:class:`~cfr_agents.public_tree.solver.PublicTreeSolver`);
* safe (Burch, Johanson & Bowling 2014): the acting player's strategy through the re-solving gadget, the opponent
  entering for at most its counterfactual best-response value against the blueprint's strategy in :math:`S`
  (:class:`~cfr_agents.public_tree.safe_endgame.GadgetSolver`; the blueprint is asked at each of the acting
  player's nodes of the endgame).

Solved strategies are kept per public state (and acting player, when safe), the last :data:`KEPT` of them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Final

import numpy as np

from adapters.holdem.betting import DECISION, BettingTree
from adapters.holdem.engine import HoldemEngine
from adapters.inputs import InputError
from cfr_agents.holdem_play import walk_actions
from cfr_agents.public_tree.engine import FloatArray
from cfr_agents.public_tree.safe_endgame import GadgetSolver
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.subgame import Subgames
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers import ALGORITHMS
from eval.lbr_sampled import BoolArray, RangeQuery

KEPT: Final = 64
"""Re-solved endgames an agent keeps (one hand of play reaches one)."""


class ResolvingRange:
    """``blueprint`` before the last round of ``engine``'s game, each endgame re-solved in it (module docstring)."""

    def __init__(
        self,
        blueprint: RangeQuery,
        engine: HoldemEngine,
        *,
        iterations: int,
        safe: bool = False,
        algorithm: str = "dcfr",
    ) -> None:
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise InputError(f"an endgame is re-solved by at least 1 iteration, not {iterations!r}")
        if algorithm not in ALGORITHMS:
            raise InputError(f"unknown algorithm {algorithm!r} to re-solve endgames by")
        if engine.rules.num_rounds < 2:
            raise InputError(f"{engine.game_id} has one round: no endgame follows a blueprint's earlier rounds")
        self.blueprint, self.engine = blueprint, engine
        self.iterations, self.safe, self.algorithm = iterations, safe, algorithm
        self.subgames = Subgames(engine.game_id, engine.rules, engine.betting)
        self.hands = self.subgames.hands
        self._last = engine.rules.num_rounds - 1
        self._solved: OrderedDict[tuple[int, bytes, int], tuple[PublicTree, FloatArray]] = OrderedDict()
        self.solves = 0
        """Endgames re-solved so far."""

    def probabilities(self, node: int, board: np.ndarray, actions: Sequence[int], live: BoolArray) -> FloatArray:
        betting = self.engine.betting
        if int(betting.round[node]) != self._last:
            return np.asarray(self.blueprint.probabilities(node, board, actions, live), dtype=np.float64)
        tree, strategy = self.solved(node, board, actions)
        n, count = int(betting.num_children[node]), self.hands.shape[0]
        start = int(tree.node_offset[node])
        block: FloatArray = strategy[start : start + n * count].reshape(n, count)
        return block

    def solved(self, node: int, board: np.ndarray, actions: Sequence[int]) -> tuple[PublicTree, FloatArray]:
        """The subgame of the endgame that holds decision ``node`` after the betting ``actions`` on the whole
        ``board``, and its re-solved strategy (laid out over it), solved on the first request."""
        found, path = walk_actions(self.engine, actions)
        if found != node:
            raise InputError(f"the betting {list(actions)} does not lead to node {node}")
        entry = self.subgames.entry(node)
        resolver = int(self.engine.betting.player[node]) if self.safe else -1
        key = (entry, np.asarray(board, dtype=np.int64).tobytes(), resolver)
        kept = self._solved.get(key)
        if kept is not None:
            self._solved.move_to_end(key)
            return kept
        before = [(d, choice) for d, choice in path if int(self.engine.betting.round[d]) < self._last]
        history = list(actions[: len(before)])
        tree = self.subgames.tree(entry, board, self.ranges(board, history, before))
        kept = self._solved[key] = (tree, self._solve(tree, history, board, resolver))
        self.solves += 1
        if len(self._solved) > KEPT:
            self._solved.popitem(last=False)
        return kept

    def ranges(self, board: np.ndarray, actions: Sequence[int], path: Sequence[tuple[int, int]]) -> FloatArray:
        r""":math:`r_p(S, h)` of both players (module docstring): 1 for every hand that misses ``board``, times the
        blueprint's probability of each action of ``path`` (``(node, choice)``, the decisions before the last
        round, taken as ``actions``) for the hand of the player who took it."""
        engine, subgames = self.engine, self.subgames
        mask = np.uint64(sum(1 << int(card) for card in board))
        reach = np.zeros((2, self.hands.shape[0]))
        reach[:, (subgames.masks & mask) == 0] = 1.0
        dealt = np.cumsum(engine.rules.board_cards)
        for i, (node, choice) in enumerate(path):
            p = int(engine.betting.player[node])
            seen = np.asarray(board[: int(dealt[int(engine.betting.round[node])])])
            sigma = self.blueprint.probabilities(node, seen, tuple(actions[:i]), reach[p] > 0.0)
            reach[p] *= sigma[choice]  # r_p(h) <- r_p(h) sigma_B(d, h, a)
        return reach

    def _solve(self, tree: PublicTree, before: Sequence[int], board: np.ndarray, resolver: int) -> FloatArray:
        rule = ALGORITHMS[self.algorithm]
        if resolver < 0:
            solver = PublicTreeSolver(tree, rule, self.algorithm)
        else:
            solver = GadgetSolver(
                tree, rule, self.algorithm, self._blueprint_in(tree, before, board, resolver), resolver
            )
        solver.run(self.iterations)
        return solver.average_strategy()

    def _blueprint_in(self, tree: PublicTree, before: Sequence[int], board: np.ndarray, player: int) -> FloatArray:
        """The blueprint's strategy in the subgame ``tree``, laid out over it: asked at ``player``'s decisions (the
        betting from the root to each), uniform at the other's."""
        betting, count = self.engine.betting, self.hands.shape[0]
        strategy = np.zeros(tree.size)
        live = tree.root_reach[player] > 0.0 if tree.root_reach is not None else np.ones(count, dtype=bool)
        start, stop = betting.ranges[int(tree.segments.range_index[0])]
        for node in range(int(start), int(stop)):
            if int(betting.kind[node]) != DECISION:
                continue
            n, offset = int(betting.num_children[node]), int(tree.node_offset[node])
            if int(betting.player[node]) == player:
                taken = (*before, *_actions_from(betting, int(start), node))
                block = self.blueprint.probabilities(node, board, taken, live)
            else:
                block = np.full((n, count), 1.0 / n)
            strategy[offset : offset + n * count] = np.asarray(block, dtype=np.float64).reshape(-1)
        return strategy


def _actions_from(betting: BettingTree, entry: int, node: int) -> list[int]:
    """The actions (OpenSpiel's ids) from the round's ``entry`` to ``node`` within its subtree."""
    taken: list[int] = []
    while node != entry:
        taken.append(int(betting.action[node]))
        node = int(betting.parent[node])
    return taken[::-1]
