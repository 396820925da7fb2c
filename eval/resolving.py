r"""An agent that re-solves each endgame when play reaches it, in games no public tree holds (``hulh``, RLCard's).

The agent plays its blueprint :math:`\sigma_B` (any agent asked for every hand at once, a
:class:`~eval.ranges.RangeQuery`) before the last round. At the first decision of the last round it builds the
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

Endgames and their re-solved strategies are kept per public state (and acting player, when safe), the last
:data:`KEPT` of them. :class:`ResolvingAgent` seats it in matches, tournaments and LBR (the registry's
``resolve:BLUEPRINT`` and ``resolve-safe:BLUEPRINT``, :func:`eval.opponents.load_opponent`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from adapters.holdem.betting import DECISION, BettingTree
from adapters.holdem.cards import hand_index_table, private_hands
from adapters.holdem.engine import RLCARD_LIMIT, HoldemEngine
from adapters.inputs import InputError
from adapters.rlcard import RLCardGame
from cfr_agents.holdem_play import HoldemPolicy, HoldemRLCardAgent, Position, walk_actions
from cfr_agents.public_tree.engine import Engine, FloatArray, own_placement, profile
from cfr_agents.public_tree.kernels import EVALUATE
from cfr_agents.public_tree.safe_endgame import GadgetSolver
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.subgame import Subgames
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers import ALGORITHMS
from eval.agents import Agent, OwnStreamAgent, openspiel_strategy
from eval.environments import RLCardAgent
from eval.ranges import BoolArray, IntArray, RangeAgent, RangeQuery, range_query, recently_used

KEPT: Final = 64
"""Endgames an agent keeps, and strategies in them (one hand of play reaches one endgame)."""
BLUEPRINT: Final = -2
"""The key, in place of an acting player, of the blueprint's strategy among an agent's kept strategies."""
ITERATIONS: Final = 200
"""Iterations an endgame is re-solved by, unless told (a ``hulh`` river: 0.17 s on one core)."""


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
        self._endgames: OrderedDict[tuple[int, bytes], Endgame] = OrderedDict()
        self._solved: OrderedDict[tuple[int, bytes, int], FloatArray] = OrderedDict()
        self.solves = 0
        """Endgames re-solved so far."""

    def probabilities(self, node: int, board: np.ndarray, actions: Sequence[int], live: BoolArray) -> FloatArray:
        betting = self.engine.betting
        if int(betting.round[node]) != self._last:
            return np.asarray(self.blueprint.probabilities(node, board, actions, live), dtype=np.float64)
        endgame = self.endgame(node, board, actions)
        strategy = self.strategy(endgame, int(betting.player[node]))
        n, count = int(betting.num_children[node]), self.hands.shape[0]
        start = int(endgame.tree.node_offset[node])
        block: FloatArray = strategy[start : start + n * count].reshape(n, count)
        return block

    def endgame(self, node: int, board: np.ndarray, actions: Sequence[int]) -> Endgame:
        """The endgame that holds decision ``node`` of the last round after the betting ``actions`` (OpenSpiel's ids
        from the root) on the whole ``board``: its subgame, with both players' ranges at its entry."""
        found, path = walk_actions(self.engine, actions)
        if found != node:
            raise InputError(f"the betting {list(actions)} does not lead to node {node}")
        cards, entry = np.asarray(board, dtype=np.int64), self.subgames.entry(node)

        def build() -> Endgame:
            before = [(d, choice) for d, choice in path if int(self.engine.betting.round[d]) < self._last]
            history = tuple(int(action) for action in actions[: len(before)])
            return Endgame(entry, self.subgames.tree(entry, cards, self.ranges(cards, history, before)), history, cards)

        return recently_used(self._endgames, (entry, cards.tobytes()), build, KEPT)

    def strategy(self, endgame: Endgame, player: int) -> FloatArray:
        """The re-solved strategy of ``endgame``, laid out over its subgame, which ``player`` plays (both players'
        from one solve when unsafe): solved on the first request, kept for the next ones."""
        resolver = player if self.safe else -1

        def solve() -> FloatArray:
            rule = ALGORITHMS[self.algorithm]
            if resolver < 0:
                solver = PublicTreeSolver(endgame.tree, rule, self.algorithm)
            else:
                solver = GadgetSolver(endgame.tree, rule, self.algorithm, self.blueprint_in(endgame), resolver)
            solver.run(self.iterations)
            self.solves += 1
            return solver.average_strategy()

        return recently_used(self._solved, (endgame.entry, endgame.board.tobytes(), resolver), solve, KEPT)

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

    def blueprint_in(self, endgame: Endgame) -> FloatArray:
        """The blueprint's strategy in ``endgame``, laid out over its subgame: asked at each decision, with the
        betting from the root to it, for the hands in range of the player to act; kept beside the re-solved
        strategies (each safe solve and :meth:`gains` read it)."""
        key = (endgame.entry, endgame.board.tobytes(), BLUEPRINT)
        return recently_used(self._solved, key, lambda: self._blueprint_in(endgame), KEPT)

    def _blueprint_in(self, endgame: Endgame) -> FloatArray:
        tree, betting, count = endgame.tree, self.engine.betting, self.hands.shape[0]
        assert tree.root_reach is not None
        strategy = np.zeros(tree.size)
        start, stop = betting.ranges[int(tree.segments.range_index[0])]
        for node in range(int(start), int(stop)):
            if int(betting.kind[node]) != DECISION:
                continue
            n, offset = int(betting.num_children[node]), int(tree.node_offset[node])
            taken = (*endgame.actions, *_actions_from(betting, int(start), node))
            live = tree.root_reach[int(betting.player[node])] > 0.0
            block = self.blueprint.probabilities(node, endgame.board, taken, live)
            strategy[offset : offset + n * count] = np.asarray(block, dtype=np.float64).reshape(-1)
        return strategy

    def gains(self, endgame: Endgame) -> FloatArray:
        r"""``(2,)``: what each seat :math:`p` gains in ``endgame``, in chips per hand that reaches it, by playing
        the re-solved strategy against the blueprint instead of the blueprint, exactly over both ranges:

        .. math:: g_p = \frac{\sum_h r_p(h)\,\big(q_p^{(\hat\sigma_p, \sigma_{B,-p})}(h) - q_p^{\sigma_B}(h)\big)}
                  {\sum_{h \cap h' = \emptyset} r_p(h)\,r_{-p}(h')},

        :math:`q_p` the counterfactual values at the entry (sums over the opponent's range). Before the last round
        the two agents play alike, so over hands of play sampled from the blueprint the mean of :math:`g_p` at the
        endgames reached (0 where a hand ends sooner) is the re-solving agent's expected gain head to head."""
        tree = endgame.tree
        assert tree.root_reach is not None
        engine, own, blueprint = Engine(tree), own_placement(tree), self.blueprint_in(endgame)
        reach = tree.root_reach
        apart = (tree.masks[:, None] & tree.masks[None, :]) == 0
        out = np.zeros(2)
        for p in range(2):
            resolved = self.strategy(endgame, p)
            mine = profile(resolved, blueprint, own, own) if p == 0 else profile(blueprint, resolved, own, own)
            difference = engine.root_values(p, EVALUATE, mine) - engine.root_values(
                p, EVALUATE, profile(blueprint, blueprint, own, own)
            )
            pairs = float(reach[p] @ apart @ reach[1 - p])  # sum over h, h' apart of r_p(h) r_-p(h')
            out[p] = float(reach[p] @ difference) / pairs if pairs > 0.0 else 0.0
        return out


@dataclass(frozen=True)
class Endgame:
    """An endgame reached in play: its subgame (both ranges at the root), the betting before it and the board."""

    entry: int
    """The betting node that starts the last round."""
    tree: PublicTree
    actions: tuple[int, ...]
    """OpenSpiel's action ids from the root to the last round's entry."""
    board: NDArray[np.int64]
    """Every board card, in deal order."""


def _actions_from(betting: BettingTree, entry: int, node: int) -> list[int]:
    """The actions (OpenSpiel's ids) from the round's ``entry`` to ``node`` within its subtree."""
    taken: list[int] = []
    while node != entry:
        taken.append(int(betting.action[node]))
        node = int(betting.parent[node])
    return taken[::-1]


class ResolvingAgent(RangeAgent):
    """The re-solving agent (:class:`ResolvingRange`) of ``blueprint``, any agent that can be asked for every hand
    at once (:func:`eval.ranges.range_query`), on ``engine``'s game, as evaluation seats agents: in RLCard's env
    (``rlcard:limit-holdem``), as an OpenSpiel policy (``universal_poker``), and for LBR and AIVAT, which ask it for
    every hand at once. It answers each information state from the hand's column of that answer, so a hand that
    reaches an endgame plays its re-solved strategy; its answers depend on the information state alone."""

    raw: ResolvingRange
    infoset_only = True

    def __init__(
        self,
        blueprint: Agent,
        engine: HoldemEngine,
        name: str,
        *,
        iterations: int = ITERATIONS,
        safe: bool = False,
        algorithm: str = "dcfr",
    ) -> None:
        self.engine = engine
        rules = engine.rules
        hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
        query = range_query(blueprint, engine, hands, name)
        self.raw = ResolvingRange(query, engine, iterations=iterations, safe=safe, algorithm=algorithm)
        self._row = hand_index_table(self.raw.hands, engine.rules.deck_size)

    def range_query(self, engine: HoldemEngine, hands: IntArray, name: str) -> RangeQuery:
        if engine.game_id != self.engine.game_id or not np.array_equal(hands, self.raw.hands):
            raise InputError(f"{name!r} re-solves endgames of {self.engine.game_id}, not of {engine.game_id}")
        return self.raw

    def answer(self, position: Position) -> FloatArray:
        """The probabilities of ``position``'s legal actions for the hand it holds."""
        row = int(self._row[tuple(sorted(position.hole))])
        live = np.zeros(self.raw.hands.shape[0], dtype=bool)
        live[row] = True
        actions = [self.engine.legal_actions(node)[choice] for node, choice in position.path]
        board = np.asarray(position.board, dtype=np.int64)
        column: FloatArray = np.asarray(self.raw.probabilities(position.node, board, actions, live))[:, row]
        return column

    def strategy(self, tree: Any) -> FloatArray:
        return openspiel_strategy(self.openspiel_player(), tree)

    def openspiel_player(self) -> Any:
        if self.engine.game_id == RLCARD_LIMIT:
            raise InputError(f"the re-solving agent of {RLCARD_LIMIT} plays in RLCard's env")
        return HoldemPolicy(self.engine, self.answer)

    def rlcard_env_player(self, game: RLCardGame, rng: np.random.Generator) -> RLCardAgent:
        if game.game_id != self.engine.game_id:
            raise InputError(f"the re-solving agent plays {self.engine.game_id}, not {game.game_id}")
        return OwnStreamAgent(HoldemRLCardAgent(self.engine, self.answer), game, rng)
