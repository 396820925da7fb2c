r"""Hold'em games on their public tree: agents asked a public node at a time, for every private hand at once.

A two-player limit hold'em game past :data:`~cfr_agents.public_tree.COMPILED_TREE_CARDS` cards (``fhp``,
``fhp-acpc``, ``hulh``; :func:`on_public_tree`) has about :math:`10^{12}` histories: no compiled tree holds it.
Its public tree (:mod:`cfr_agents.public_tree`) holds one node per betting sequence and board, and at each node
a vector over the :math:`H` private hands. An agent is scored there when it answers for a whole public node:

* :class:`HandStrategy`: ``probabilities(tree, segment, node)`` is the ``(num_actions, H)`` array whose column
  :math:`h` is :math:`\sigma(I_h, \cdot)`, the agent's action probabilities at the information state
  :math:`I_h` of the player to act holding hand :math:`h` at that public node (any distribution for a hand
  that meets the board: no deal reaches it);
* :func:`strategy_array` materialises an agent as a strategy array read at a
  :class:`~cfr_agents.public_tree.engine.Placement` (:class:`Placed`), what the engine's passes take;
* :func:`exploitability`, :func:`exact_head_to_head` and :func:`best_response` score agents exactly with
  :class:`~cfr_agents.public_tree.engine.Engine`.

Three kinds of agents (:func:`hand_strategy`):

* a strategy file (:class:`~cfr_agents.public_tree.strategy_file.PublicStrategy`) or a best response
  (:class:`ArrayHands`): its array, read in place;
* ``random`` (:class:`UniformHands`): :math:`1/|A(I)|` everywhere;
* any OpenSpiel policy or other per-state agent (:class:`StateHands`): asked at one ``pyspiel`` state of each
  :math:`I_h`, exact but one query per hand and public node, :math:`10^8` on Flop Hold'em: for the small
  games only. Only the first two are *batched* (:func:`is_batched`); a game on its public tree takes only them.

Suit isomorphism. A tree built with suit-canonical boards (:func:`cfr_agents.public_tree.public_tree`, what the
commands use) keeps one board per orbit and reads the other boards through suit permutations, which is exact
for a *suit-canonical* agent (one that plays isomorphic information states alike): strategy files trained on
such a tree, ``random``, best responses to them. An agent that is not suit-canonical must be scored on a tree
with every board, ``build_public_tree(game_string, canonical=False)``; a strategy over every board is refused
on a tree with canonical boards.

Units: values are in chips; ``value / big_blind * 1000`` is in milli-big-blinds per game (:func:`big_blind`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pyspiel
from open_spiel.python.policy import UniformRandomPolicy

from adapters.games import canonical_game_id
from adapters.holdem.betting import DEAL, DECISION
from adapters.holdem.rules import limit_rules
from adapters.inputs import InputError, UnsupportedGameError, read_json
from adapters.openspiel import PREFIX
from cfr_agents.abstract_game import AbstractGame, IntArray
from cfr_agents.files import check_outputs
from cfr_agents.neural_policy import NeuralPolicy
from cfr_agents.public_tree import public_tree
from cfr_agents.public_tree.engine import (
    Engine,
    FloatArray,
    Placement,
    canonical_placement,
    own_placement,
    profile,
    uniform_strategy,
)
from cfr_agents.public_tree.neural import Materialiser, network_strategy
from cfr_agents.public_tree.strategy_file import PublicStrategy, layout_fingerprint, save_strategy, strategy_paths
from cfr_agents.public_tree.tree import PublicTree
from eval.agents import (
    SUM_TOLERANCE,
    AbstractStrategyAgent,
    Agent,
    AgentQueryError,
    PublicStrategyAgent,
    as_agent,
    describe,
    materialised,
    on_public_tree,
)
from eval.environments import OpenSpielPolicy
from eval.exploitability import Exploitability, public_exploitability
from eval.head_to_head import HeadToHead
from eval.opponents import is_file_name, load_opponent


class HandStrategy(Protocol):
    """An agent asked a public node at a time (module docstring)."""

    def probabilities(self, tree: PublicTree, segment: int, node: int) -> FloatArray:
        """``(num_actions, H)``: at decision ``node`` of ``segment`` (a betting node under a board history), column
        ``h`` is the distribution over the node's actions, in action order, of the player to act holding hand
        ``h`` (``tree.hands[h]``)."""
        ...


@dataclass(frozen=True)
class Placed:
    """A strategy array and where it is read for each segment of a tree: what the engine's passes take."""

    strategy: FloatArray
    placement: Placement


@dataclass(frozen=True, eq=False)
class ArrayHands:
    """A strategy array over ``tree``'s segments (a strategy file's, a best response): read in place, on ``tree``
    itself, on a tree of the same layout, or -- for suit-canonical boards -- on the same game's tree with every
    board (:func:`~cfr_agents.public_tree.engine.canonical_placement`)."""

    tree: PublicTree
    strategy: FloatArray
    _placements: dict[int, tuple[PublicTree, Placement]] = field(default_factory=dict, repr=False)

    def placement(self, tree: PublicTree) -> Placement:
        """Where this array is read for each segment of ``tree``; another game, or a strategy over every board
        on suit-canonical boards, is refused."""
        known = self._placements.get(id(tree))
        if known is not None and known[0] is tree:
            return known[1]
        mine = self.tree
        if tree.game_string != mine.game_string:
            raise InputError(f"a strategy of {mine.game_id} cannot be read on the public tree of {tree.game_id}")
        if tree is mine or (tree.canonical == mine.canonical and layout_fingerprint(tree) == layout_fingerprint(mine)):
            found = own_placement(tree)
        elif mine.canonical and not tree.canonical:
            found = canonical_placement(tree, mine)
        else:
            raise InputError(
                f"a strategy over every board of {mine.game_id} is not suit-canonical: score it on a tree with "
                "every board (build_public_tree(..., canonical=False))"
            )
        self._placements[id(tree)] = (tree, found)
        return found

    def probabilities(self, tree: PublicTree, segment: int, node: int) -> FloatArray:
        where = self.placement(tree)
        n, hands = int(tree.betting.num_children[node]), tree.num_hands
        base = int(where.offset[segment] + tree.node_offset[node])
        block = self.strategy[base : base + n * hands].reshape(n, hands)
        read: FloatArray = block[:, tree.permutations[where.permutation[segment]]]
        return read


@dataclass(frozen=True, eq=False)
class AbstractHands:
    """A strategy of an abstract game (:class:`~cfr_agents.abstract_game.AbstractGame`), one row per betting node
    and bucket: hand :math:`h` at betting node :math:`d` plays row :math:`(d, b_r(h, B))`, its bucket on the
    segment's board. Suit-canonical, as buckets are."""

    game: AbstractGame
    strategy: FloatArray
    """``(rows, 3)``."""
    _buckets: dict[tuple[int, int], IntArray] = field(default_factory=dict, repr=False)

    def probabilities(self, tree: PublicTree, segment: int, node: int) -> FloatArray:
        if tree.game_id != self.game.game_id:
            raise InputError(f"a strategy of {self.game.game_id} cannot be read on the public tree of {tree.game_id}")
        round_ = int(tree.betting.round[node])
        buckets = self._buckets.get((segment, round_))
        if buckets is None:
            board = [card for cards in tree.segments.boards[segment][: round_ + 1] for card in cards]
            buckets = np.maximum(self.game.abstraction.buckets(round_, tree.hands, board), 0)  # -1: no deal reaches it
            self._buckets[(segment, round_)] = buckets
        n = int(tree.betting.num_children[node])
        block: FloatArray = self.strategy[self.game.row_base[node] + buckets, :n].T
        return block


class NeuralHands:
    """A neural model (Deep CFR's average network or SD-CFR's mixture), its networks run over every hand of a public
    node at once (:class:`~cfr_agents.public_tree.neural.Materialiser`, made for the last tree asked about). On a
    tree with suit-canonical boards it reads each hand's canonical image: the model with suit-canonical inputs."""

    def __init__(self, model: NeuralPolicy) -> None:
        self.model = model
        self.strategy = network_strategy(model)
        self._materialiser: Materialiser | None = None

    def materialiser(self, tree: PublicTree) -> Materialiser:
        """The materialiser of ``tree``, kept for the next question about it."""
        if self._materialiser is None or self._materialiser.tree is not tree:
            self._materialiser = Materialiser(tree, self.strategy)
        return self._materialiser

    def probabilities(self, tree: PublicTree, segment: int, node: int) -> FloatArray:
        return self.materialiser(tree).probabilities(tree, segment, node)


class UniformHands:
    """``random``: every legal action with the same probability, at every node and hand."""

    def probabilities(self, tree: PublicTree, segment: int, node: int) -> FloatArray:
        n = int(tree.betting.num_children[node])
        return np.full((n, tree.num_hands), 1.0 / n)


@dataclass(frozen=True, eq=False)
class StateHands:
    """Any OpenSpiel policy (``action_probabilities(state)``) asked at one ``pyspiel`` state of each information
    state: the hole cards of the hand (the other player holds the lowest cards left), the segment's boards dealt
    at the deal nodes and the betting to ``node``. Exact for an agent whose answer depends on the information
    state alone; one query per hand and public node, so slow (module docstring)."""

    policy: OpenSpielPolicy
    name: str

    def probabilities(self, tree: PublicTree, segment: int, node: int) -> FloatArray:
        betting, hands = tree.betting, tree.num_hands
        n = int(betting.num_children[node])
        actions = [int(a) for a in betting.action[betting.first_child[node] + np.arange(n)]]
        player = int(betting.player[node])
        path = _actions_to(tree, segment, node)
        board = int(tree.segments.board_mask[segment])
        game = _pyspiel_game(tree.game_string)
        out = np.full((n, hands), 1.0 / n)
        for h in range(hands):
            if int(tree.masks[h]) & board:
                continue  # no deal reaches it
            other = next(o for o in range(hands) if not int(tree.masks[o]) & (board | int(tree.masks[h])))
            seated = (tree.hands[h], tree.hands[other]) if player == 0 else (tree.hands[other], tree.hands[h])
            state = game.new_initial_state()
            for card in (*seated[0].tolist(), *seated[1].tolist(), *path):
                state.apply_action(card)
            answer = self.policy.action_probabilities(state)
            out[:, h] = self._column(answer, actions, state)
        return out

    def _column(self, answer: dict[int, float], actions: list[int], state: pyspiel.State) -> FloatArray:
        column = np.array([float(answer.get(a, 0.0)) for a in actions])
        illegal = [a for a, p in answer.items() if int(a) not in actions and p > 0]
        total = column.sum()
        if illegal or not np.all(column >= 0) or abs(total - 1.0) > SUM_TOLERANCE:
            where = state.information_state_string()
            raise AgentQueryError(f"{self.name} answers {answer} at {where!r}: not a distribution over {actions}")
        normalised: FloatArray = column / total
        return normalised


@functools.cache
def _pyspiel_game(game_string: str) -> pyspiel.Game:
    return pyspiel.load_game(game_string)


def _actions_to(tree: PublicTree, segment: int, node: int) -> list[int]:
    """OpenSpiel's actions after the hole cards that reach betting ``node`` under ``segment``'s boards: each bet
    or call, and each round's board cards where a round's betting ends."""
    betting, boards = tree.betting, tree.segments.boards[segment]
    path = [node]
    while betting.parent[path[-1]] >= 0:
        path.append(int(betting.parent[path[-1]]))
    actions: list[int] = []
    for parent, child in zip(path[:0:-1], path[-2::-1], strict=True):
        if betting.kind[parent] == DEAL:
            actions.extend(boards[int(betting.round[child]) - 1])
        elif betting.kind[parent] == DECISION:
            actions.append(int(betting.action[child]))
    return actions


def is_batched(agent: HandStrategy) -> bool:
    """Whether ``agent`` answers a public node without a query per hand (a strategy array, ``random``)."""
    return isinstance(agent, ArrayHands | UniformHands | AbstractHands | NeuralHands)


def hand_strategy(agent: object) -> HandStrategy:
    """``agent`` (anything :func:`eval.agents.as_agent` takes) asked a public node at a time: a strategy file's
    array, ``random``'s uniform strategy, or any other agent's OpenSpiel policy state by state."""
    if isinstance(agent, ArrayHands | UniformHands | StateHands | AbstractHands | NeuralHands):
        return agent
    normalised: Agent = as_agent(agent)
    if isinstance(normalised, PublicStrategyAgent):
        return ArrayHands(normalised.raw.tree, normalised.raw.strategy)
    if isinstance(normalised, AbstractStrategyAgent):
        return AbstractHands(normalised.raw.game, normalised.raw.strategy)
    if isinstance(normalised.raw, UniformRandomPolicy):
        return UniformHands()
    if isinstance(normalised.raw, NeuralPolicy):
        if not on_public_tree(normalised.raw.game_id):
            return NeuralHands(normalised.raw)
        placed = materialised(normalised.raw)  # the table a match plays too
        return ArrayHands(placed.tree, placed.strategy)
    return StateHands(normalised.openspiel_player(), describe(normalised.raw))


def strategy_array(tree: PublicTree, agent: HandStrategy) -> Placed:
    """``agent``'s strategy on ``tree``: an array and where it is read. A strategy array is read in place (no
    copy); ``random`` is :func:`~cfr_agents.public_tree.engine.uniform_strategy`; a neural model is materialised
    whole (:meth:`~cfr_agents.public_tree.neural.Materialiser.strategy`); any other agent is asked at every decision
    node of every segment. On a tree with suit-canonical boards the agent must be suit-canonical
    (module docstring)."""
    if isinstance(agent, ArrayHands):
        return Placed(agent.strategy, agent.placement(tree))
    if isinstance(agent, UniformHands):
        return Placed(uniform_strategy(tree), own_placement(tree))
    if isinstance(agent, NeuralHands):  # every segment at once, on a thread per core
        return Placed(agent.materialiser(tree).strategy(), own_placement(tree))
    strategy = np.empty(tree.size)
    segments, betting = tree.segments, tree.betting
    for s in range(segments.count):
        start, stop = betting.ranges[segments.range_index[s]]
        for node in range(int(start), int(stop)):
            if tree.node_offset[node] < 0:
                continue
            n = int(betting.num_children[node])
            block = np.asarray(agent.probabilities(tree, s, node), dtype=np.float64)
            if block.shape != (n, tree.num_hands):
                raise AgentQueryError(
                    f"an agent answered {block.shape} at a node with {n} actions and {tree.num_hands} hands"
                )
            base = int(segments.offset[s] + tree.node_offset[node])
            strategy[base : base + n * tree.num_hands] = block.ravel()
    return Placed(strategy, own_placement(tree))


def big_blind(game_id: str, units: str) -> float | None:
    """How many of ``units`` make a big blind, for values in milli-big-blinds (``v / big_blind * 1000``): 1 for
    games paid in big blinds, the big blind in chips for limit hold'em games, ``None`` for the others."""
    if units == "BB":
        return 1.0
    try:
        rules = limit_rules(game_id)
    except UnsupportedGameError:
        return None
    return None if rules is None else float(rules.big_blind)


def game_tree(game_id: str) -> PublicTree:
    """The public tree, with suit-canonical boards, of ``game_id`` (or a named game), built once per process."""
    return _game_tree(canonical_game_id(game_id))


@functools.lru_cache(maxsize=2)
def _game_tree(game_id: str) -> PublicTree:
    return public_tree(game_id)


_ENGINES: list[tuple[PublicTree, Engine]] = []
"""The engines of the last two trees scored (an engine's scratch vectors are a few hundred MB on Flop Hold'em)."""


def engine_of(tree: PublicTree) -> Engine:
    """An engine for ``tree``, kept for the next call on the same tree."""
    for kept, engine in _ENGINES:
        if kept is tree:
            return engine
    engine = Engine(tree)
    _ENGINES[:] = [*_ENGINES[-1:], (tree, engine)]
    return engine


def tree_for(game_id: str, agents: Sequence[HandStrategy]) -> PublicTree:
    """The tree to score ``agents`` on: the tree of a strategy array laid out over every board if there is one
    (the others are read on it), else the tree of a strategy array (no second tree built), else the game's tree
    with suit-canonical boards (:func:`game_tree`)."""
    arrays = sorted((a.tree for a in agents if isinstance(a, ArrayHands)), key=lambda tree: tree.canonical)
    return arrays[0] if arrays else game_tree(game_id)


def exploitability(tree: PublicTree, agent: HandStrategy) -> Exploitability:
    """``agent``'s exact NashConv and exploitability on ``tree`` (:func:`eval.exploitability.public_exploitability`)."""
    placed = strategy_array(tree, agent)
    return public_exploitability(tree, placed.strategy, placed.placement, engine_of(tree))


def exact_head_to_head(tree: PublicTree, a: Placed, b: Placed) -> HeadToHead:
    """``A``'s exact value against ``B`` in each seat and averaged over seats (as
    :func:`eval.head_to_head.exact_head_to_head`): seat 0 is :math:`u_0(\\sigma^A_0, \\sigma^B_1)`, seat 1 is
    :math:`u_1(\\sigma^B_0, \\sigma^A_1)`, both by :meth:`~cfr_agents.public_tree.engine.Engine.value`."""
    engine = engine_of(tree)
    first = engine.value(0, profile(a.strategy, b.strategy, a.placement, b.placement))
    second = engine.value(1, profile(b.strategy, a.strategy, b.placement, a.placement))
    return HeadToHead(tree.game_id, tree.units, (first, second), (first + second) / 2)


@dataclass(frozen=True)
class BestResponse:
    """A best response to an agent, as a strategy that plays (:attr:`strategy`), and what it earns."""

    strategy: PublicStrategy
    values: tuple[float, float]
    """:math:`\\mathrm{BR}_0, \\mathrm{BR}_1`: its value in seat 0 and in seat 1 against the agent, in chips."""

    @property
    def value(self) -> float:
        """Its exact value against the agent over both seats: :math:`(\\mathrm{BR}_0 + \\mathrm{BR}_1) / 2`."""
        return (self.values[0] + self.values[1]) / 2


def best_response(tree: PublicTree, agent: HandStrategy, *, against: str) -> BestResponse:
    r"""The engine's pure best response to ``agent`` for both seats, as a strategy over ``tree``'s segments
    (:meth:`~cfr_agents.public_tree.engine.Engine.best_response_value` writes player :math:`i`'s
    :math:`\arg\max_a q_i(I, a)` at every one of :math:`i`'s nodes and hands): playable through its
    ``action_probabilities(state)`` and saved with :func:`~cfr_agents.public_tree.strategy_file.save_strategy`."""
    placed = strategy_array(tree, agent)
    engine = engine_of(tree)
    both = profile(placed.strategy, placed.strategy, placed.placement, placed.placement)
    response = np.zeros(tree.size)
    first, second = (engine.best_response_value(player, both, response) for player in (0, 1))
    strategy = PublicStrategy(
        game_id=tree.game_id,
        tree=tree,
        strategy=response,
        algorithm="best-response",
        parameters={"against": against},
        iterations=0,
        header={},
    )
    return BestResponse(strategy, (first, second))


def save_best_response(name: str, game_id: str | None, out: str | os.PathLike[str]) -> BestResponse:
    """The best response to the agent ``name`` (a strategy file or ``random``; ``game_id`` names the game of
    ``random``), saved as a public-tree strategy at ``out`` (its ``.npz`` or ``.json``; both are written), its
    seat values in the sidecar's ``extra``. The outputs are checked before any work."""
    check_outputs(*strategy_paths(out))
    if game_id is not None:
        check_name(name, game_id)
    opponent = load_opponent(name, game_id)
    hands = batched(opponent.agent, name, opponent.game_id)
    tree = tree_for(opponent.game_id, [hands])
    response = best_response(tree, hands, against=opponent.name)
    save_strategy(
        out,
        tree,
        response.strategy.strategy,
        algorithm=response.strategy.algorithm,
        parameters=response.strategy.parameters,
        iterations=0,
        extra={"best_response_values": list(response.values)},
    )
    return response


def check_name(name: str, game_id: str) -> None:
    """On a game that runs on its public tree, refuse an agent that cannot be asked for every hand at once,
    before it is built: there an agent is a strategy file or ``random``."""
    if on_public_tree(game_id) and not is_file_name(name) and name != "random":
        raise InputError(
            f"agent {name!r} cannot be queried for every hand at once on {game_id}, which runs on its public "
            "tree: give a public-tree strategy file (written by train) or random"
        )


def batched(agent: Agent, name: str, game_id: str) -> HandStrategy:
    """``agent`` as a :class:`HandStrategy` on a game that runs on its public tree; one that would be asked state
    by state (:math:`10^8` queries on Flop Hold'em) is refused."""
    hands = hand_strategy(agent)
    if not is_batched(hands):
        raise InputError(
            f"agent {name!r} can only be asked state by state, which {game_id} (run on its public tree) "
            "does not allow: give a public-tree strategy file or random"
        )
    return hands


def file_game(name: str) -> str | None:
    """The game a public-tree strategy file names in its sidecar (read alone, not the archive); ``None`` for
    anything else or a sidecar that does not read (the full load then says why)."""
    try:
        _, sidecar = strategy_paths(name)
        data: Any = read_json(sidecar, "public-tree strategy sidecar")
    except InputError:
        return None
    game = data.get("game") if isinstance(data, dict) else None
    return canonical_game_id(game) if isinstance(game, str) and game.startswith(PREFIX) else None


__all__ = [
    "ArrayHands",
    "BestResponse",
    "HandStrategy",
    "NeuralHands",
    "Placed",
    "StateHands",
    "UniformHands",
    "batched",
    "best_response",
    "big_blind",
    "check_name",
    "exact_head_to_head",
    "exploitability",
    "file_game",
    "game_tree",
    "hand_strategy",
    "is_batched",
    "on_public_tree",
    "save_best_response",
    "strategy_array",
    "tree_for",
]
