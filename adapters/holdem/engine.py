r"""Limit hold'em without a game tree: the betting tree and the cards, dealt as play goes.

A hand of two-player limit hold'em is a path through the **betting tree** -- the betting sequences, which do not
depend on the cards: 169 nodes in Flop Hold'em, 17,221 in heads-up limit hold'em -- and a **deal**. A
:class:`HoldemEngine` holds the betting tree (:class:`~adapters.holdem.betting.BettingTree`) and the rules of the
deal; a transition is an array lookup and a showdown is the compiled evaluator
(:func:`~adapters.holdem.cards.hand_rank`), so compiled code can walk the game, and no part of a game tree of
:math:`10^{14}` information states is ever built.

Two toolkits, each read from its own states:

* OpenSpiel's limit ``universal_poker`` (``hulh``, ``fhp``, ...): the betting tree of
  :func:`~adapters.holdem.betting.betting_tree`, payoffs in chips;
* RLCard's ``limit-holdem``: the betting tree walked on RLCard's engine through the adapter
  (:func:`rlcard_betting_tree`), the big blind as player 0 and the small blind as player 1 (HULH's seating);
  payoffs in big blinds. RLCard draws the small blind's seat after the deal: ``seat_drawn``.

A deal is an array of card ids (``rank * num_suits + suit``, OpenSpiel's): player 0's hole cards, player 1's, then
the board cards of every round in order (:meth:`HoldemEngine.deal`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from adapters.holdem.betting import DEAL, DECISION, FOLD, SHOWDOWN, BettingTree, betting_tree, walk_betting
from adapters.holdem.cards import hand_rank, parse_cards
from adapters.holdem.rules import LimitRules, limit_rules
from adapters.inputs import UnsupportedGameError

RLCARD_LIMIT = "rlcard:limit-holdem"
_FOLD, _CALL, _RAISE = 0, 1, 2
"""OpenSpiel's limit action ids."""


@dataclass(frozen=True)
class HoldemEngine:
    """A two-player limit hold'em game as its betting tree and the rules of its deal (module docstring)."""

    game_id: str
    rules: LimitRules
    betting: BettingTree
    units: str
    payoff_scale: float
    """Payoff units per chip: 1 (chips) for ``universal_poker``, ``1 / big_blind`` for RLCard."""
    seat_drawn: bool
    """Whether the seats of the two positions are drawn at random after the deal (RLCard)."""

    @property
    def root(self) -> int:
        """The first decision: the root, past nothing (no cards are dealt before the first betting round)."""
        return 0

    def deal(self, rng: np.random.Generator) -> NDArray[np.int64]:
        """Every card of a hand, drawn without replacement: player 0's hole cards, player 1's, then the board."""
        rules = self.rules
        count = 2 * rules.num_hole_cards + sum(rules.board_cards)
        cards: NDArray[np.int64] = rng.permutation(rules.deck_size)[:count].astype(np.int64)
        return cards

    def legal_actions(self, node: int) -> list[int]:
        """OpenSpiel's action ids (0 fold, 1 check/call, 2 bet/raise) legal at decision ``node``."""
        first, n = int(self.betting.first_child[node]), int(self.betting.num_children[node])
        return [int(a) for a in self.betting.action[first : first + n]]

    def child(self, node: int, action: int) -> int:
        """The node after ``action`` at decision ``node``, or after the cards are dealt at a deal node."""
        betting = self.betting
        if int(betting.kind[node]) == DEAL:
            return int(betting.first_child[node])
        actions = self.legal_actions(node)
        if action not in actions:
            raise UnsupportedGameError(f"action {action} is not legal at {betting.sequence[node]!r}: {actions}")
        return int(betting.first_child[node]) + actions.index(action)

    def board(self, cards: NDArray[np.int64], round_: int) -> NDArray[np.int64]:
        """The board cards dealt up to and including ``round_``."""
        start = 2 * self.rules.num_hole_cards
        return cards[start : start + sum(self.rules.board_cards[: round_ + 1])]

    def payoffs(self, node: int, cards: NDArray[np.int64]) -> tuple[float, float]:
        """Each player's payoff at terminal ``node`` of the hand dealt ``cards``, in :attr:`units`."""
        betting, rules = self.betting, self.rules
        kind, spent = int(betting.kind[node]), betting.spent[node]
        if kind == FOLD:
            folder = int(betting.player[node])
            won = float(spent[folder]) * self.payoff_scale
            return (-won, won) if folder == 0 else (won, -won)
        if kind != SHOWDOWN:
            raise UnsupportedGameError(f"node {betting.sequence[node]!r} is not terminal")
        k = rules.num_hole_cards
        board = self.board(cards, rules.num_rounds - 1)
        first = hand_rank(np.concatenate((cards[:k], board)), rules.num_suits)
        second = hand_rank(np.concatenate((cards[k : 2 * k], board)), rules.num_suits)
        stake = float(spent[0]) * self.payoff_scale
        won = stake if first > second else -stake if first < second else 0.0
        return won, -won

    def is_decision(self, node: int) -> bool:
        return int(self.betting.kind[node]) == DECISION


class _RLCardBetting:
    """An RLCard limit hold'em state (:class:`~adapters.rlcard.RLCardState`) as :func:`walk_betting` reads states:
    OpenSpiel's action ids, returns in chips, any card at a chance node."""

    def __init__(self, state: Any, actions: list[str], big_blind: float) -> None:
        self.state = state
        self._actions = actions
        self._big_blind = big_blind

    def is_chance_node(self) -> bool:
        return bool(self.state.is_chance_node())

    def is_terminal(self) -> bool:
        return bool(self.state.is_terminal())

    def current_player(self) -> int:
        return int(self.state.current_player())

    def legal_actions(self) -> list[int]:
        if self.state.is_chance_node():
            return [int(self.state.chance_outcomes()[0][0])]
        names = {self._actions[a] for a in self.state.legal_actions()}
        return sorted({"fold": _FOLD, "call": _CALL, "check": _CALL, "raise": _RAISE}[name] for name in names)

    def child(self, action: int) -> _RLCardBetting:
        if self.state.is_chance_node():
            return _RLCardBetting(self.state.child(action), self._actions, self._big_blind)
        names = {self._actions[a] for a in self.state.legal_actions()}
        name = {_FOLD: "fold", _RAISE: "raise"}.get(action, "call" if "call" in names else "check")
        return _RLCardBetting(self.state.child(self._actions.index(name)), self._actions, self._big_blind)

    def returns(self) -> list[float]:
        return [float(value) * self._big_blind for value in self.state.returns()]

    def history(self) -> list[int]:
        return list(self.state.history())

    def spent(self) -> tuple[float, float]:
        chips: tuple[float, float] = self.state.chips()
        return chips


def rlcard_betting_tree() -> BettingTree:
    """RLCard's limit hold'em betting, walked on its engine through the adapter with the small blind in seat 1."""
    from adapters.rlcard import shared_game

    game = shared_game(RLCARD_LIMIT.removeprefix("rlcard:"))
    state: Any = game.new_initial_state()
    for card in range(4):
        state = state.child(card)
    state = state.child(1)  # the small blind's seat
    big_blind = float(game.rules()["big_blind"])  # type: ignore[arg-type]
    return walk_betting(_RLCardBetting(state, list(game.actions), big_blind), lambda s: s.spent())


@functools.lru_cache(maxsize=8)
def holdem_engine(game_id: str) -> HoldemEngine:
    """The engine of ``rlcard:limit-holdem`` or of a two-player limit ``universal_poker`` game (a game id or a
    named game: ``hulh``, ``fhp``), built once per process: its betting tree is walked on the toolkit's own engine
    (RLCard's: 23,780 nodes, a few seconds). The engine is shared, so nothing may change its arrays."""
    import pyspiel

    from adapters.games import canonical_game_id

    if game_id == RLCARD_LIMIT:
        rules = LimitRules(
            num_ranks=13,
            num_suits=4,
            num_hole_cards=2,
            num_rounds=4,
            board_cards=(0, 3, 1, 1),
            blinds=(2, 1),
            raise_size=(2, 2, 4, 4),
            max_raises=(4, 4, 4, 4),
            first_player=(1, -1, -1, -1),  # later rounds: whoever did not act last in the round before
        )
        return HoldemEngine(RLCARD_LIMIT, rules, rlcard_betting_tree(), "BB", 1.0 / rules.big_blind, True)
    game = canonical_game_id(game_id)
    rules_found = limit_rules(game)
    if rules_found is None:
        raise UnsupportedGameError(f"{game} is neither {RLCARD_LIMIT} nor a two-player limit universal_poker game")
    tree = betting_tree(pyspiel.load_game(game.removeprefix("openspiel:")))
    return HoldemEngine(game, rules_found, tree, "chips", 1.0, False)


def rlcard_card(name: str) -> int:
    """The card id of RLCard's card name (suit then rank: ``'SA'``, ``'H2'``, ``'CT'``)."""
    return parse_cards(name[1] + name[0].lower(), 4)[0]
