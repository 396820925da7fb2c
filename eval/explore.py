r"""The strategy explorer: a policy's betting tree as public nodes, each with the strategy of every private hand,
its reach, the value of each action against an opponent and where the best response would play otherwise.

A *public node* is what both seats see: the betting so far and the public cards. Starting from the root, the
chance events that deal private cards are expanded at once; every public move (an action, or a public card) leads
to a child public node. A public node is named by its *path*: the public moves from the root, ids joined by
``.`` (``""`` is the root; ``"1.2.4"`` three moves down). Each one holds the tree nodes of every private deal
that reaches it (:class:`_Group`), and is built when it is first asked for, so a large tree opens at once.

At a decision public node of player :math:`p`, each private hand :math:`h` of :math:`p` is one infoset
:math:`I`; the view shows, for each policy :math:`\sigma` explored, against an opponent strategy :math:`\tau`
(the best response to :math:`\sigma`, :func:`eval.best_response.best_response_strategy`, or another policy):

* ``strategy``: :math:`\sigma(I, a)` for every legal action :math:`a`;
* ``reach``: :math:`x_p(I)`, the probability that :math:`\sigma` plays to :math:`I` (its realization plan at
  :math:`I`'s parent sequence, :meth:`~cfr_agents.tree.CompiledTree.realization_plan`);
* ``share``: the hand's share of the node's reach,
  :math:`\sum_{n \in I} \pi_c(n)\,x_p(n)\,x_{-p}^\tau(n)` normalised over the node's hands;
* ``values``: :math:`v(I, a) = Q(Ia) / \sum_{n \in I} w(n)` with :math:`w(n) = \pi_c(n)\,x_{-p}^\tau(n)`,
  the expected payoff of :math:`p` holding :math:`h` that plays :math:`a` and then :math:`\sigma` against
  :math:`\tau`, where :math:`Q(Ia) = \sum_{z \sqsupseteq Ia} \pi_c(z)\,x_{-p}^\tau(z)\,
  \frac{x_p(z)}{x_p(Ia)}\,u_p(z)` is computed bottom-up over :math:`p`'s sequences (:func:`sequence_values`,
  the expectation beside :func:`eval.exploitability.best_response_sequence_values`' maximum), on the profile
  that seats :math:`\sigma` in :math:`p` and :math:`\tau` in the other seat (:func:`eval.head_to_head.seated_profile`);
* ``best_response``: the action :math:`a^* = \arg\max_a \mathrm{BR}(Ia)` of :math:`p`'s best response to
  :math:`\tau` (:func:`eval.exploitability.best_response_sequence_values`, normalised by the same
  :math:`\sum w`), and its ``gain``: :math:`\max_a \mathrm{BR}(Ia)/\sum w - \sum_a \sigma(I,a)\,v(I,a)`, what
  best-responding from :math:`I` on would add for this hand. ``deviates`` is true where the policy does not
  already play :math:`a^*` (with probability below :data:`PURE`) and the gain is positive.

Where :math:`\tau` never reaches :math:`I` (:math:`\sum w = 0`) the values and the best response are ``None``.
The games are those of the compiled tree: Kuhn, Leduc in both toolkits, the small hold'em games.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyspiel

from adapters import Game, load_game
from adapters.base import NUM_PLAYERS
from adapters.inputs import InputError, ParameterError
from adapters.openspiel import OpenSpielGame
from adapters.rlcard import RLCardGame
from cfr_agents.tree import KIND_CHANCE, KIND_DECISION, KIND_TERMINAL, CompiledTree, FloatArray, IntArray, load_tree
from eval import holdem
from eval.best_response import best_response_strategy
from eval.exploitability import best_response_sequence_values, exploitability_of_strategy, policy_values
from eval.head_to_head import seated_profile
from eval.match import Agents, no_tree
from eval.play import action_name, game_name, openspiel_card, seen_by

BEST_RESPONSE = "best-response"
"""The default opponent: each policy's own best response."""
OTHER = "other"
"""Each of two policies against the other."""
AGAINST = (BEST_RESPONSE, OTHER)
PURE = 1 - 1e-6
"""The probability at or above which a policy already plays the best response's action."""
MAX_PATH_MOVES = 64
"""The most moves a path may name (deeper than any game here)."""


@dataclass(frozen=True)
class Explored:
    """One policy of an explorer: its name, its ``(N, A)`` strategy and the opponent's."""

    name: str
    strategy: FloatArray
    opponent: FloatArray
    opponent_name: str


@dataclass
class _Group:
    """The tree nodes of one public node, one per private deal that reaches it, as parallel lists."""

    nodes: list[int]
    chance: list[float]
    """:math:`\\pi_c(n)`."""
    cards: list[tuple[tuple[int, ...], tuple[int, ...]]]
    """Each seat's private chance outcomes."""
    last: list[tuple[int, int]]
    """Each seat's last sequence on the path (the tree's empty sequence before its first action)."""
    history: tuple[int, ...]
    """The ids from the root to the first node (what a toolkit replays)."""
    events: int
    """Chance events on the path."""
    line: tuple[tuple[int, str], ...]
    """The public moves: ``(player, name)``, player -1 for public cards."""


@dataclass
class Explorer:
    """Views of the public nodes of ``tree`` for one or two policies (module docstring), built on demand."""

    tree: CompiledTree
    game: Game
    policies: tuple[Explored, ...]
    against: str
    _groups: dict[str, _Group] = field(default_factory=dict, repr=False)
    _plans: dict[tuple[int, int], FloatArray] = field(default_factory=dict, repr=False)
    _values: dict[tuple[int, int], tuple[FloatArray, FloatArray]] = field(default_factory=dict, repr=False)
    _names: dict[int, str] = field(default_factory=dict, repr=False)

    def summary(self) -> dict[str, Any]:
        """The game and each policy's exact exploitability and value against its opponent, per seat."""
        tree = self.tree
        shown = []
        for index, explored in enumerate(self.policies):
            scored = exploitability_of_strategy(tree, explored.strategy)
            seats = [policy_values(tree, self._plan(index, p))[p] for p in range(NUM_PLAYERS)]
            shown.append(
                {
                    "name": explored.name,
                    "against": explored.opponent_name,
                    "exploitability": scored.exploitability,
                    "nash_conv": scored.nash_conv,
                    "value": _finite(float(np.mean(seats))),
                    "seat_values": [_finite(v) for v in seats],
                }
            )
        return {
            "game": tree.game_id,
            "game_name": game_name(tree.game_id),
            "units": tree.units,
            "infosets": tree.num_infosets,
            "against": self.against,
            "policies": shown,
        }

    def view(self, path: str) -> dict[str, Any]:
        """The public node at ``path`` as JSON-ready data; a path that names no public node is a
        :class:`ParameterError`."""
        group = self._group(path)
        tree = self.tree
        first = group.nodes[0]
        kind = int(tree.node_kind[first])
        view: dict[str, Any] = {
            "path": path,
            "line": [{"player": player, "text": text} for player, text in group.line],
            "kind": {KIND_CHANCE: "chance", KIND_DECISION: "decision", KIND_TERMINAL: "terminal"}[kind],
            "player": None,
            "moves": [],
        }
        if kind == KIND_TERMINAL:
            return view
        moves = sorted({int(a) for n in group.nodes for a in self._edges(n)[1]})
        view["moves"] = [
            {"id": move, "name": self._move_name(group, move), "path": join_path(path, move)} for move in moves
        ]
        if kind == KIND_CHANCE:
            return view
        player = int(tree.infoset_player[tree.node_infoset[first]])
        view["player"] = player
        hands = self._hands(group, player)
        infosets = [int(tree.node_infoset[group.nodes[entries[0]]]) for _, entries in hands]
        view["hands"] = [label for label, _ in hands]
        view["keys"] = [tree.infoset_keys[infoset] for infoset in infosets]
        view["actions"] = [self._action(a) for a in tree.infoset_actions[infosets[0]]]
        view["policies"] = [
            self._policy_view(index, group, player, hands, infosets) for index in range(len(self.policies))
        ]
        return view

    def paths(self, limit: int) -> list[str]:
        """Every public node's path, breadth first; more than ``limit`` of them is a :class:`ParameterError`."""
        found, frontier = [""], [""]
        while frontier:
            following = []
            for path in frontier:
                for move in self.view(path)["moves"]:
                    following.append(move["path"])
            found += following
            if len(found) > limit:
                raise ParameterError(
                    "{game} has more than {limit} public nodes: too many for one page",
                    game=game_name(self.tree.game_id),
                    limit=f"{limit:,}",
                )
            frontier = following
        return found

    # --- the public nodes --------------------------------------------------------------------------------------

    def _group(self, path: str) -> _Group:
        known = self._groups.get(path)
        if known is not None:
            return known
        if path == "":
            group = self._settle(_Group([0], [1.0], [((), ())], [(self._root_sequence,) * 2], (), 0, ()))
        else:
            parent, _, last = path.rpartition(".")
            if not last.isdigit() or len(path.split(".")) > MAX_PATH_MOVES:
                raise ParameterError("{path} {given!r} is not a list of move ids joined by '.'", given=path[:80])
            group = self._child(self._group(parent), int(last), path)
        self._groups[path] = group
        return group

    @property
    def _root_sequence(self) -> int:
        return self.tree.root_sequence

    def _edges(self, node: int) -> tuple[IntArray, IntArray]:
        """The children of ``node`` and the ids (actions or outcomes) that lead to them."""
        tree = self.tree
        start, stop = int(tree.child_start[node]), int(tree.child_start[node + 1])
        return tree.child_node[start:stop], tree.child_action[start:stop]

    def _child(self, group: _Group, move: int, path: str) -> _Group:
        """The public node that ``move`` leads to from ``group``: each node's child by that action or outcome."""
        tree = self.tree
        kind = int(tree.node_kind[group.nodes[0]])
        child = _Group([], [], [], [], (), group.events + (kind == KIND_CHANCE), group.line)
        for index, node in enumerate(group.nodes):
            children, ids = self._edges(node)
            found = np.flatnonzero(ids == move)
            if not found.size:
                continue
            column = int(found[0])
            last = group.last[index]
            chance = group.chance[index]
            if kind == KIND_DECISION:
                infoset = int(tree.node_infoset[node])
                player = int(tree.infoset_player[infoset])
                sequence = infoset * tree.max_actions + tree.infoset_actions[infoset].index(move)
                last = (sequence, last[1]) if player == 0 else (last[0], sequence)
            else:
                chance *= float(tree.child_probability[int(tree.child_start[node]) + column])
            if not child.nodes:
                child.history = (*group.history, move)
            child.nodes.append(int(children[column]))
            child.chance.append(chance)
            child.cards.append(group.cards[index])
            child.last.append(last)
        if kind == KIND_TERMINAL or not child.nodes:
            raise ParameterError("{path} {given!r} names no public node", given=path[:80])
        player = -1 if kind == KIND_CHANCE else int(tree.infoset_player[tree.node_infoset[group.nodes[0]]])
        child.line = (*group.line, (player, self._move_name(group, move)))
        return self._settle(child)

    def _settle(self, group: _Group) -> _Group:
        """Expand the chance events that deal private cards until the nodes are public: a decision, a public chance
        event or a terminal."""
        tree = self.tree
        while int(tree.node_kind[group.nodes[0]]) == KIND_CHANCE:
            seat = self._private_to(group)
            if seat < 0:
                return group
            dealt = _Group([], [], [], [], (), group.events + 1, group.line)
            for index, node in enumerate(group.nodes):
                children, ids = self._edges(node)
                start = int(tree.child_start[node])
                for column, (child, outcome) in enumerate(zip(children.tolist(), ids.tolist(), strict=True)):
                    if not dealt.nodes:
                        dealt.history = (*group.history, outcome)
                    cards = list(group.cards[index])
                    cards[seat] = (*cards[seat], outcome)
                    dealt.nodes.append(child)
                    dealt.chance.append(group.chance[index] * float(tree.child_probability[start + column]))
                    dealt.cards.append((cards[0], cards[1]))
                    dealt.last.append(group.last[index])
            group = dealt
        return group

    def _private_to(self, group: _Group) -> int:
        """The seat the chance event at ``group`` deals a private card to, or -1 for a public event: RLCard's deal
        gives its ``j``-th card to seat ``j % 2`` and its other events (the small blind's seat) are public, as is
        every event after it; on OpenSpiel's states, an event is private to the one seat that sees it
        (:func:`eval.play.seen_by`)."""
        game = self.game
        if isinstance(game, RLCardGame):
            deal = game.spec.deal
            if group.events >= len(deal) or deal[group.events] != "card":
                return -1
            return deal[: group.events].count("card") % NUM_PLAYERS
        state = self._state(group.history)
        seers = seen_by(state, int(state.chance_outcomes()[0][0]))
        return seers[0] if len(seers) == 1 else -1

    def _state(self, history: Sequence[int]) -> pyspiel.State:
        if not isinstance(self.game, OpenSpielGame):
            raise InputError(f"the explorer reads OpenSpiel and RLCard games, not {self.game.game_id}")
        state = self.game.pyspiel_game.new_initial_state()
        for move in history:
            state.apply_action(move)
        return state

    def _move_name(self, group: _Group, move: int) -> str:
        if int(self.tree.node_kind[group.nodes[0]]) == KIND_DECISION:
            return self._action(move)
        return self._card(group.events, move)

    def _action(self, action: int) -> str:
        """The game's name of ``action``, as ``play`` shows it (:func:`eval.play.action_name`: ``Fold``, ``Bet``)."""
        return action_name(self.game.action_name(action))

    def _card(self, events: int, outcome: int) -> str:
        """The name of a chance outcome, the ``events``-th chance event of its path: the toolkit's card name
        (:func:`eval.play.openspiel_card`, RLCard's deck), or the seat that posts RLCard's small blind."""
        game = self.game
        if isinstance(game, RLCardGame):
            deal = game.spec.deal
            if events < len(deal) and deal[events] == "seat":
                return f"SB seat {outcome}"
            return str(game.deck[outcome])
        if outcome not in self._names:
            self._names[outcome] = openspiel_card(self._state(()), outcome)
        return self._names[outcome]

    def _hands(self, group: _Group, player: int) -> list[tuple[str, list[int]]]:
        """``player``'s private hands at ``group`` in card order, each as its label (card names, highest first:
        ``Ks Qh``) and the indices of its nodes."""
        by_hand: dict[tuple[int, ...], list[int]] = {}
        for index, cards in enumerate(group.cards):
            by_hand.setdefault(tuple(sorted(cards[player])), []).append(index)
        return [
            (" ".join(self._card(0, outcome) for outcome in reversed(hand)), entries)
            for hand, entries in sorted(by_hand.items())
        ]

    # --- the policies' numbers ---------------------------------------------------------------------------------

    def _profile(self, index: int, player: int) -> FloatArray:
        """Policy ``index`` seated in ``player``, its opponent in the other seat."""
        explored = self.policies[index]
        return seated_profile(self.tree, explored.strategy, explored.opponent, player)

    def _plan(self, index: int, player: int) -> FloatArray:
        """The realization plan :math:`x` of :meth:`_profile`."""
        key = (index, player)
        if key not in self._plans:
            self._plans[key] = self.tree.realization_plan(self._profile(index, player))
        return self._plans[key]

    def _numbers(self, index: int, player: int) -> tuple[FloatArray, FloatArray]:
        r"""The sequence values :math:`Q(Ia)` of :meth:`_profile` (:func:`sequence_values`) and its best response's
        :math:`\mathrm{BR}(Ia)` (:func:`eval.exploitability.best_response_sequence_values`)."""
        key = (index, player)
        if key not in self._values:
            x = self._plan(index, player)
            strategy = self.policies[index].strategy
            self._values[key] = (
                sequence_values(self.tree, x, strategy, player),
                best_response_sequence_values(self.tree, x, player),
            )
        return self._values[key]

    def _policy_view(
        self,
        index: int,
        group: _Group,
        player: int,
        hands: list[tuple[str, list[int]]],
        infosets: list[int],
    ) -> dict[str, Any]:
        tree = self.tree
        explored = self.policies[index]
        x = self._plan(index, player)
        other = 1 - player
        width = len(tree.infoset_actions[infosets[0]])
        strategy: list[list[float]] = []
        reach: list[float] = []
        mass: list[float] = []
        values: list[list[float] | None] = []
        best: list[dict[str, Any] | None] = []
        for (_, entries), infoset in zip(hands, infosets, strict=True):
            sigma = explored.strategy[infoset, :width]
            strategy.append([float(p) for p in sigma])
            own = float(x[tree.parent_sequence[infoset]])
            reach.append(own)
            weights = np.array([group.chance[e] * x[group.last[e][other]] for e in entries])
            total = float(weights.sum())
            mass.append(own * total)
            if total <= 0:
                values.append(None)
                best.append(None)
                continue
            expected, response = self._numbers(index, player)
            cells = slice(infoset * tree.max_actions, infoset * tree.max_actions + width)
            action_values = [float(q) / total for q in expected[cells]]
            values.append(action_values)
            best_values = response[cells] / total
            choice = int(np.argmax(best_values))
            gain = float(best_values[choice]) - float(sigma @ np.array(action_values))
            best.append(
                {
                    "action": choice,
                    "value": float(best_values[choice]),
                    "gain": gain,
                    "deviates": bool(sigma[choice] < PURE and gain > 1e-12),
                }
            )
        whole = sum(mass)
        return {
            "name": explored.name,
            "against": explored.opponent_name,
            "strategy": strategy,
            "reach": reach,
            "share": [m / whole if whole > 0 else None for m in mass],
            "values": values,
            "best_response": best,
        }


def sequence_values(tree: CompiledTree, x: FloatArray, strategy: FloatArray, player: int) -> FloatArray:
    r"""Per-sequence expected values of ``player`` following ``strategy`` against the opponent's realization plan in
    ``x``: entry ``I * A + a`` is :math:`Q(Ia) = \sum_{z \sqsupseteq Ia} \pi_c(z)\,x_{-p}(z)\,
    \frac{x_p(z)}{x_p(Ia)}\,u_p(z)`, the value of playing :math:`a` at :math:`I` and ``strategy`` below, weighted by
    the chance and opponent reach (so :math:`Q(Ia) / \sum_{n \in I} \pi_c(n)\,x_{-p}(n)` is the hand's expected
    payoff). Bottom-up over ``player``'s infosets by depth:
    :math:`Q(Ia) = \sum_{z:\,\mathrm{last}_p(z) = Ia} \pi_c(z)\,x_{-p}(z)\,u_p(z)
    + \sum_{J:\,\mathrm{parent}(J) = Ia} \sum_b \sigma(J, b)\,Q(Jb)`: the expectation where
    :func:`eval.exploitability.best_response_sequence_values` takes the maximum. The last entry is ``player``'s value.
    """
    weights = tree.terminal_chance * tree.terminal_utility[player] * x[tree.terminal_sequence[1 - player]]
    q = np.bincount(tree.terminal_sequence[player], weights=weights, minlength=tree.num_sequences)
    q_cells = q[:-1].reshape(tree.action_mask.shape)
    for start, stop in reversed(tree.levels[player]):
        expected = (strategy[start:stop] * q_cells[start:stop]).sum(axis=1)  # sum_b sigma(J, b) Q(Jb)
        np.add.at(q, tree.parent_sequence[start:stop], expected)
    values: FloatArray = q.astype(np.float64, copy=False)
    return values


def join_path(path: str, move: int) -> str:
    """The path one ``move`` below ``path``."""
    return f"{path}.{move}" if path else str(move)


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def check_against(against: str, policies: int) -> None:
    """``against`` is one of :data:`AGAINST`; ``other`` needs two policies."""
    if against not in AGAINST:
        raise ParameterError("{against} {given!r}: choose one of {choices}", given=against, choices=", ".join(AGAINST))
    if against == OTHER and policies != 2:
        raise ParameterError("{against} {given!r} needs two policies, one against the other", given=against)


def open_explorer(
    names: Sequence[str],
    game_id: str,
    against: str = BEST_RESPONSE,
    agents: Agents | None = None,
    *,
    labels: Sequence[str] | None = None,
) -> Explorer:
    """An explorer of the agents ``names`` (one or two: policy or model files, or named agents with a strategy on
    the compiled tree) on ``game_id``, each against its best response or, with ``against="other"``, against the
    other; ``labels``: the names shown (``names`` by default). A game off the compiled tree, or an agent whose exact
    strategy cannot be read, is refused in one line."""
    if not 1 <= len(names) <= 2:
        raise ParameterError("{policies}: explore one policy or two side by side, not {count}", count=len(names))
    check_against(against, len(names))
    reason = no_tree(game_id) or (
        f"{game_name(game_id)} runs on its public tree" if holdem.on_public_tree(game_id) else ""
    )
    if reason:
        raise InputError(f"the explorer reads games of the compiled tree: {reason}")
    agents = agents or Agents()
    tree = load_tree(game_id)
    strategies = []
    for name in names:
        strategy = agents.strategy(name, game_id)
        if isinstance(strategy, str):
            raise InputError(f"{name!r} has no exact strategy to explore: {strategy}")
        strategies.append(strategy)
    shown = list(names if labels is None else labels)
    explored = []
    for index, (name, strategy) in enumerate(zip(shown, strategies, strict=True)):
        if against == OTHER:
            opponent, opponent_name = strategies[1 - index], shown[1 - index]
        else:
            opponent, opponent_name = best_response_strategy(tree, strategy), BEST_RESPONSE
        explored.append(Explored(name, strategy, opponent, opponent_name))
    return Explorer(tree, load_game(game_id), tuple(explored), against)


__all__ = [
    "AGAINST",
    "BEST_RESPONSE",
    "OTHER",
    "Explored",
    "Explorer",
    "check_against",
    "join_path",
    "open_explorer",
    "sequence_values",
]
