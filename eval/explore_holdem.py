r"""The explorer of the hold'em games past the compiled tree (``fhp``, ``hulh``, ``rlcard:limit-holdem``): a policy's
strategy for every private hand along the betting tree, for a board the user deals card by card.

The betting tree is the game's (:class:`~adapters.holdem.engine.HoldemEngine`: its betting sequences, which do not
depend on the cards). A path is the public moves from the root, ids joined by ``.`` as in :mod:`eval.explore`:
betting actions (OpenSpiel's limit ids: 0 fold, 1 check or call, 2 bet or raise) and, where a round deals the
board, the board's cards one at a time (OpenSpiel's card ids, ``rank * num_suits + suit``). At a decision of
player :math:`p`, every two-card hand that the board leaves is shown with :math:`\sigma(h, a)`, read from:

* an abstraction strategy (:class:`~cfr_agents.abstract_strategy.AbstractStrategy`): the row of the betting node
  and the hand's bucket on the board, :math:`\sigma(d, b_r(h, B), a)`, on every one of these games;
* any other agent of an OpenSpiel game (a public-tree strategy file, ``random``): its OpenSpiel policy asked at the
  ``universal_poker`` state the path reaches with :math:`p` holding :math:`h` (the other seat holding the first
  two cards left; no strategy reads them).

No exact value fits these games here -- a best response or an action's value needs the whole game below the node
-- so reach, values and the best response are ``None``, and the summary says why (``cfr-agents lbr`` bounds an
agent's exploitability on them).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyspiel

from adapters.games import canonical_game_id
from adapters.holdem.betting import DEAL, DECISION
from adapters.holdem.cards import card_name
from adapters.holdem.engine import RLCARD_LIMIT, HoldemEngine, holdem_engine
from adapters.inputs import InputError, ParameterError
from eval import holdem
from eval.agents import AbstractStrategyAgent
from eval.environments import OpenSpielPolicy
from eval.explore import BEST_RESPONSE, Explorer, join_path, open_explorer
from eval.match import Agents, no_tree
from eval.play import game_name, seen_by

HOLE_CARDS = 2
ACTION_NAMES = ("Fold", "Call", "Raise")
"""The limit actions by id (a call with nothing to call is a check, a raise with nothing to raise a bet)."""
NO_VALUES = "no exact value fits this game: the best response and the values need the whole game below a node"
Rows = Callable[[int, tuple[int, ...], list[tuple[int, int]], list[int], int], list[list[float]]]
"""``rows(node, moves, hands, board, player)``: each hand's distribution over the node's legal actions."""


@dataclass
class _Place:
    """Where a path leads: the betting node, the board so far and the board cards still to deal before ``node``."""

    node: int
    board: list[int]
    pending: int
    line: list[tuple[int, str]]


@dataclass
class HoldemExplorer:
    """Views of one or two policies of a big hold'em game (module docstring), in :mod:`eval.explore`'s shape."""

    engine: HoldemEngine
    names: tuple[str, ...]
    rows: tuple[Rows, ...]
    _places: dict[str, _Place] = field(default_factory=dict, repr=False)

    def summary(self) -> dict[str, Any]:
        game_id = self.engine.game_id
        return {
            "game": game_id,
            "game_name": game_name(game_id),
            "units": self.engine.units,
            "infosets": None,
            "against": None,
            "note": NO_VALUES,
            "policies": [
                {"name": name, "against": None, "exploitability": None, "nash_conv": None, "value": None}
                for name in self.names
            ],
        }

    def view(self, path: str) -> dict[str, Any]:
        """The public node at ``path``; one that names no public node is a :class:`ParameterError`."""
        place = self._place(path)
        betting = self.engine.betting
        view: dict[str, Any] = {
            "path": path,
            "line": [{"player": player, "text": text} for player, text in place.line],
            "player": None,
            "moves": [],
        }
        kind = int(betting.kind[place.node])
        if place.pending:
            view["kind"] = "chance"
            view["moves"] = [
                {"id": card, "name": self._card(card), "path": join_path(path, card)}
                for card in range(self.engine.rules.deck_size)
                if card not in place.board
            ]
            return view
        if kind != DECISION:
            view["kind"] = "terminal"
            return view
        player = int(betting.player[place.node])
        legal = self.engine.legal_actions(place.node)
        hands = [
            hand
            for hand in itertools.combinations(range(self.engine.rules.deck_size), 2)
            if not set(hand) & set(place.board)
        ]
        labels = [f"{self._card(hand[1])} {self._card(hand[0])}" for hand in hands]
        sequence = betting.sequence[place.node]
        moves = tuple(int(move) for move in path.split(".")) if path else ()
        view.update(
            kind="decision",
            player=player,
            moves=[{"id": a, "name": ACTION_NAMES[a], "path": join_path(path, a)} for a in legal],
            hands=labels,
            keys=[f"{label}|{' '.join(map(self._card, place.board))}|{sequence}" for label in labels],
            actions=[ACTION_NAMES[a] for a in legal],
            note=NO_VALUES,
            policies=[
                {
                    "name": name,
                    "against": None,
                    "strategy": rows(place.node, moves, hands, place.board, player),
                    "reach": [None] * len(hands),
                    "share": [None] * len(hands),
                    "values": [None] * len(hands),
                    "best_response": [None] * len(hands),
                }
                for name, rows in zip(self.names, self.rows, strict=True)
            ],
        )
        return view

    def paths(self, limit: int) -> list[str]:
        """Refused: a page holds the public nodes of the compiled tree's games, not the boards of these."""
        raise ParameterError(
            "{game} has too many public nodes for one page: explore it with cfr-agents serve",
            game=game_name(self.engine.game_id),
        )

    def _card(self, card: int) -> str:
        return card_name(card, self.engine.rules.num_suits)

    def _place(self, path: str) -> _Place:
        known = self._places.get(path)
        if known is not None:
            return known
        if not path:
            place = _Place(self.engine.root, [], 0, [])
        else:
            parent, _, last = path.rpartition(".")
            if not last.isdigit() or len(path) > 400:
                raise ParameterError("{path} {given!r} is not a list of move ids joined by '.'", given=path[:80])
            place = self._move(self._place(parent), int(last), path)
        self._places[path] = place
        return place

    def _move(self, place: _Place, move: int, path: str) -> _Place:
        engine, betting = self.engine, self.engine.betting
        if place.pending:
            if not 0 <= move < engine.rules.deck_size or move in place.board:
                raise ParameterError("{path} {given!r} names no public node", given=path[:80])
            return self._settled(
                _Place(place.node, [*place.board, move], place.pending - 1, [*place.line, (-1, self._card(move))])
            )
        if int(betting.kind[place.node]) != DECISION or move not in engine.legal_actions(place.node):
            raise ParameterError("{path} {given!r} names no public node", given=path[:80])
        player = int(betting.player[place.node])
        child = engine.child(place.node, move)
        return self._settled(_Place(child, place.board, 0, [*place.line, (player, ACTION_NAMES[move])]))

    def _settled(self, place: _Place) -> _Place:
        """At a deal with all its cards chosen, the node past it; at a deal not yet dealt, the cards it needs."""
        engine, betting = self.engine, self.engine.betting
        if int(betting.kind[place.node]) != DEAL:
            return place
        if place.pending:
            return place
        dealt = sum(engine.rules.board_cards[: int(betting.round[place.node]) + 2])
        if len(place.board) < dealt:
            return _Place(place.node, place.board, dealt - len(place.board), place.line)
        return self._settled(_Place(engine.child(place.node, 0), place.board, 0, place.line))


def abstract_rows(agent: AbstractStrategyAgent) -> Rows:
    """An abstraction strategy's rows: :math:`\\sigma(d, b_r(h, B), \\cdot)` for the betting node :math:`d` and each
    hand's bucket on the board."""
    strategy = agent.raw
    game = strategy.game
    betting = game.engine.betting

    def rows(
        node: int, moves: tuple[int, ...], hands: list[tuple[int, int]], board: list[int], player: int
    ) -> list[list[float]]:
        width = len(game.engine.legal_actions(node))
        round_ = int(betting.round[node])
        return [
            [
                float(p)
                for p in strategy.strategy[game.row(node, game.abstraction.bucket(round_, list(hand), board))][:width]
            ]
            for hand in hands
        ]

    return rows


def openspiel_rows(policy: OpenSpielPolicy, game: pyspiel.Game, deck_size: int) -> Rows:
    """An OpenSpiel policy's rows, asked at the state each hand reaches: the hole cards dealt first (``p``'s the
    hand, the other seat's the first two cards the hand and the board leave), then the path's moves -- betting
    actions and board cards, which are ``universal_poker``'s own ids."""
    root = game.new_initial_state()
    seats: list[int] = []
    state = root.clone()
    while state.is_chance_node() and len(seats) < 2 * HOLE_CARDS:
        outcome = int(state.chance_outcomes()[0][0])
        seen = seen_by(state, outcome)
        seats.append(seen[0] if len(seen) == 1 else -1)
        state.apply_action(outcome)

    def rows(
        node: int, moves: tuple[int, ...], hands: list[tuple[int, int]], board: list[int], player: int
    ) -> list[list[float]]:
        found = []
        for hand in hands:
            other = [card for card in range(deck_size) if card not in hand and card not in board][:HOLE_CARDS]
            held = {player: list(hand), 1 - player: other}
            state = root.clone()
            for seat in seats:
                state.apply_action(held[seat].pop(0))
            for move in moves:
                state.apply_action(move)
            answer = policy.action_probabilities(state)
            found.append([float(answer.get(a, 0.0)) for a in sorted(state.legal_actions())])
        return found

    return rows


def open_holdem_explorer(
    names: Sequence[str], game_id: str, agents: Agents | None = None, *, labels: Sequence[str] | None = None
) -> HoldemExplorer:
    """An explorer of one or two agents of a big hold'em game: abstraction strategies on every such game, any agent
    with an OpenSpiel policy on OpenSpiel's; others are refused in one line."""
    agents = agents or Agents()
    engine = holdem_engine(game_id)
    rows: list[Rows] = []
    for name in names:
        agent = agents.opponent(name, game_id).agent
        if isinstance(agent, AbstractStrategyAgent):
            rows.append(abstract_rows(agent))
        elif game_id == RLCARD_LIMIT or canonical_game_id(game_id) == RLCARD_LIMIT:
            raise InputError(f"the explorer reads abstraction strategies of {RLCARD_LIMIT}; {name!r} is not one")
        else:
            pyspiel_game = pyspiel.load_game(canonical_game_id(game_id).removeprefix("openspiel:"))
            rows.append(openspiel_rows(agent.openspiel_player(), pyspiel_game, engine.rules.deck_size))
    return HoldemExplorer(engine, tuple(labels or names), tuple(rows))


def open_views(
    names: Sequence[str],
    game_id: str,
    against: str = BEST_RESPONSE,
    agents: Agents | None = None,
    *,
    labels: Sequence[str] | None = None,
) -> Explorer | HoldemExplorer:
    """The explorer of ``game_id``: :func:`eval.explore.open_explorer` on the games of the compiled tree,
    :func:`open_holdem_explorer` on the hold'em games past it (``against`` then has nothing to value)."""
    if no_tree(game_id) or holdem.on_public_tree(game_id):
        return open_holdem_explorer(names, game_id, agents, labels=labels)
    return open_explorer(names, game_id, against, agents, labels=labels)


__all__ = ["HoldemExplorer", "abstract_rows", "open_holdem_explorer", "open_views", "openspiel_rows"]
