"""RLCard games behind the adapter interface: ``rlcard:leduc-holdem``, ``rlcard:kuhn-poker`` and
``rlcard:limit-holdem``, and three-player Leduc.

The adapter drives RLCard's own game engine; it never re-implements a rule. What it
adds is control of chance, so that every chance event can be enumerated:

* RLCard engines deal by ``np_random.shuffle(deck)`` then ``deck.pop()``, and Leduc
  picks the small-blind seat with ``np_random.randint``. Before ``init_game`` the
  adapter installs a :class:`_ScriptedRandom` that arranges the deck so the chosen
  cards pop in order and returns the chosen seat. Its chance outcomes are indices
  into the engine's unshuffled deck (Leduc: ``SJ HJ SQ HQ SK HK``) and seat numbers.
* When a player action makes the engine deal (Leduc's public card at the end of round
  1; limit hold'em's flop, turn and river), the adapter turns it into chance nodes, one per
  card: the chosen cards are moved to the top of a copy of the deck, in order, and the action
  is replayed, so the engine deals them.

``rlcard:leduc-holdem(game_num_players=3)`` is Leduc's engine configured for three players, as RLCard's
``game_num_players`` configures it; only ``adapters.load_game(..., any_players=True)`` loads it. RLCard's env
cannot play it (its observation has room for two players' chips), so nothing here runs it through the env.

``rlcard:limit-holdem`` (about :math:`10^{14}` information states) has no compiled tree:
:meth:`RLCardGame.tree_ops` refuses it, and its states are played one at a time.

Information-state keys come from the hand, the public card, the seat role and the
full action history -- never from RLCard's lossy ``obs`` vector. The same function
builds the key from an RLCard environment state at play time
(:meth:`RLCardGame.key_from_env_state`), so a trained policy is looked up exactly.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import rlcard

import adapters.rlcard_kuhn as rlcard_kuhn
from adapters.base import CHANCE, NUM_PLAYERS, TERMINAL, Game, GameFacts, State, TreeOps, replay
from adapters.inputs import InputError, UnknownGameError, UnsupportedGameError

PREFIX = "rlcard:"
ActionRecord = Sequence[tuple[int, str]]
"""``(player, action name)`` pairs in order, as in RLCard's ``state["action_record"]``."""


LEDUC_ROLES = ("SB", "BB", "NB")
"""The roles of Leduc's seats from the small blind on, in the order they act in round 1: small blind, big blind, and
(three players) the seat that posts no blind."""


def leduc_infoset_key(raw_obs: Mapping[str, Any], player: int, record: ActionRecord, num_players: int = 2) -> str:
    """``seat|hand|public|role|actions``, e.g. ``"1|HK|SQ|BB|raise-call-check"``.

    The seat is the RLCard player id (each seat is a player of the game). The role is the seat's place after the small
    blind, who acts first in round 1 (the first entry of the action record, or the player to act while the record is
    empty), in :data:`LEDUC_ROLES`: ``SB``, then ``BB``, then ``NB`` among ``num_players`` seats.
    Card names are RLCard's (suit then rank); ``-`` stands for no public card yet.
    """
    first_actor = record[0][0] if record else raw_obs["current_player"]
    role = LEDUC_ROLES[(player - first_actor) % num_players]
    public = raw_obs["public_card"] or "-"
    history = "-".join(action for _, action in record)
    return f"{player}|{raw_obs['hand']}|{public}|{role}|{history}"


def kuhn_infoset_key(raw_obs: Mapping[str, Any], player: int, record: ActionRecord) -> str:
    """OpenSpiel's ``kuhn_poker`` key: card index (J=0, Q=1, K=2) then ``p``/``b`` per action.

    Identical keys make a policy for one game a policy for the other.
    """
    history = "".join("p" if action == "pass" else "b" for _, action in record)
    return f"{rlcard_kuhn.RANKS.index(raw_obs['hand'])}{history}"


def limit_holdem_infoset_key(raw_obs: Mapping[str, Any], player: int, record: ActionRecord) -> str:
    """``seat|role|hand|board|actions``, e.g. ``"0|SB|HK-SA|C2-D7-S9/H4|call-check/raise-call/check"``.

    The hand's two cards sorted (the deal's order tells the player nothing); the board's cards by round (the
    flop's sorted), rounds separated by ``/``, as the betting's rounds are. The role is ``SB`` for the small blind,
    who acts first preflop. A round ends when both players have checked or called since its last raise (the blinds
    are not raises), which is when RLCard's engine deals the next round's cards."""
    first_actor = record[0][0] if record else player
    role = "SB" if first_actor == player else "BB"
    board = list(raw_obs["public_cards"])
    rounds = [sorted(board[:3]), *([card] for card in board[3:])] if board else []
    betting, actions, calls = [], [], 0
    for _, action in record:
        actions.append(action)
        calls = 1 if action == "raise" else calls + 1 if action in ("call", "check") else calls
        if calls >= 2:
            betting.append("-".join(actions))
            actions, calls = [], 0
    history = "/".join([*betting, "-".join(actions)]) if actions or not betting else "/".join(betting) + "/"
    public = "/".join("-".join(cards) for cards in rounds) or "-"
    return f"{player}|{role}|{'-'.join(sorted(raw_obs['hand']))}|{public}|{history}"


def _card_name(card: Any) -> str:
    return str(card.get_index()) if hasattr(card, "get_index") else str(card)


@dataclass(frozen=True)
class _Spec:
    """What differs between RLCard games: where the deck is, the deal, the key, the rules."""

    env_id: str
    units: str
    deal: tuple[str, ...]
    """Chance events before the first decision, in engine order: ``"card"`` or ``"seat"``; player ``i`` holds the
    ``i``-th card (limit hold'em: the ``i``-th and ``i + num_players``-th)."""
    deck: Callable[[Any], list[Any]]
    clone: Callable[[Any], Any]
    hold_cards: Callable[[Any, Sequence[Any], Any], None]
    """Give the players of an engine (a clone, never a state's) the given cards, player ``i`` the
    ``i``-th, and make the public card the one given (``None``: none dealt); nothing else changes."""
    key: Callable[[Mapping[str, Any], int, ActionRecord], str]
    rules: Callable[[Any], dict[str, object]]
    acting: Callable[[Mapping[str, Any], ActionRecord], int]
    """The player to act, from an RLCard env state's ``raw_obs`` and action record."""
    compiled: bool = True
    """Whether the game is small enough for a compiled tree (:meth:`RLCardGame.tree_ops`)."""
    facts: Callable[[Any], GameFacts] | None = None
    """For a game too large to walk, what the OpenSpiel bridge needs, from the engine's rules."""


def _leduc_deck(engine: Any) -> list[Any]:
    deck: list[Any] = engine.dealer.deck
    return deck


def _kuhn_deck(engine: Any) -> list[Any]:
    deck: list[Any] = engine.deck
    return deck


def shallow_copy(thing: Any) -> Any:
    """``copy.copy`` of a plain object (one with a ``__dict__``, no ``__slots__`` and no ``__copy__``,
    as RLCard's game objects are): a new instance of its class sharing its attribute values."""
    clone = object.__new__(type(thing))
    clone.__dict__.update(thing.__dict__)
    return clone


def _clone_leduc(engine: Any) -> Any:
    """A copy that shares nothing mutable with ``engine`` (the fields RLCard's own
    ``step_back`` snapshots: round, its raised chips, players, deck, public card)."""
    clone = shallow_copy(engine)
    clone.round = shallow_copy(engine.round)
    clone.round.raised = list(engine.round.raised)
    clone.players = [shallow_copy(player) for player in engine.players]
    clone.dealer = shallow_copy(engine.dealer)
    clone.dealer.deck = list(engine.dealer.deck)
    clone.history = []
    return clone


def _leduc_hold_cards(engine: Any, hands: Sequence[Any], public: Any) -> None:
    for player, card in zip(engine.players, hands, strict=True):
        player.hand = card
    engine.public_card = public


def _kuhn_hold_cards(engine: Any, hands: Sequence[Any], public: Any) -> None:
    engine.hands = list(hands)


def _clone_kuhn(engine: Any) -> Any:
    clone = shallow_copy(engine)
    clone.deck = list(engine.deck)
    clone.hands = list(engine.hands)
    clone.history = list(engine.history)
    return clone


def _limit_deck(engine: Any) -> list[Any]:
    deck: list[Any] = engine.dealer.deck
    return deck


def _clone_limit(engine: Any) -> Any:
    """A copy that shares nothing mutable with ``engine`` (the fields RLCard's own ``step_back`` snapshots:
    round, its raised chips, players, deck, public cards, raises per round)."""
    clone = _clone_leduc(engine)
    clone.public_cards = list(engine.public_cards)
    clone.history_raise_nums = list(engine.history_raise_nums)
    return clone


def _limit_hold_cards(engine: Any, hands: Sequence[Any], public: Any) -> None:
    for player, cards in zip(engine.players, hands, strict=True):
        player.hand = list(cards)
    engine.public_cards = list(public or [])


def _limit_acting(raw_obs: Mapping[str, Any], record: ActionRecord) -> int:
    """Two players, no one folded: the player after the last to act, or the small blind (fewer chips in) first."""
    if record:
        return 1 - int(record[-1][0])
    chips = list(raw_obs["all_chips"])
    return int(chips.index(min(chips)))


def _current_player(raw_obs: Mapping[str, Any], record: ActionRecord) -> int:
    return int(raw_obs["current_player"])


def _limit_facts(engine: Any) -> GameFacts:
    """From the rules: each round ends at most 6 decisions in (a check or limp, the raises, a call); a player puts
    in at most the big blind and the raises of every round; 4 hole cards, a seat and 5 board cards are dealt."""
    raises = (engine.raise_amount, engine.raise_amount, 2 * engine.raise_amount, 2 * engine.raise_amount)
    most = engine.big_blind + sum(engine.allowed_raise_num * size for size in raises)
    return GameFacts(
        num_distinct_actions=4,
        max_chance_outcomes=52,
        min_utility=-most / engine.big_blind,
        max_utility=most / engine.big_blind,
        max_game_length=4 * (engine.allowed_raise_num + 2),
        max_chance_nodes_in_history=10,
    )


def _limit_rules(engine: Any) -> dict[str, object]:
    return {
        "toolkit": "rlcard",
        "env": "limit-holdem",
        "small_blind": engine.small_blind,
        "big_blind": engine.big_blind,
        "raise_amount": [engine.raise_amount, engine.raise_amount, 2 * engine.raise_amount, 2 * engine.raise_amount],
        "allowed_raise_num": engine.allowed_raise_num,
        "num_players": engine.num_players,
        "payoff_unit": "big_blind",
    }


def _leduc_rules(engine: Any) -> dict[str, object]:
    return {
        "toolkit": "rlcard",
        "env": "leduc-holdem",
        "small_blind": engine.small_blind,
        "big_blind": engine.big_blind,
        "raise_amount": engine.raise_amount,
        "allowed_raise_num": engine.allowed_raise_num,
        "num_players": engine.num_players,
        "payoff_unit": "big_blind",
    }


def _kuhn_rules(engine: Any) -> dict[str, object]:
    return {
        "toolkit": "rlcard",
        "env": rlcard_kuhn.ENV_ID,
        "ranks": list(rlcard_kuhn.RANKS),
        "ante": rlcard_kuhn.ANTE,
        "bet": rlcard_kuhn.BET,
        "first_player": 0,
    }


_SPECS = {
    "leduc-holdem": _Spec(
        env_id="leduc-holdem",
        units="BB",
        deal=("card", "card", "seat"),
        deck=_leduc_deck,
        clone=_clone_leduc,
        hold_cards=_leduc_hold_cards,
        key=leduc_infoset_key,
        rules=_leduc_rules,
        acting=_current_player,
    ),
    rlcard_kuhn.ENV_ID: _Spec(
        env_id=rlcard_kuhn.ENV_ID,
        units="chips",
        deal=("card", "card"),
        deck=_kuhn_deck,
        clone=_clone_kuhn,
        hold_cards=_kuhn_hold_cards,
        key=kuhn_infoset_key,
        rules=_kuhn_rules,
        acting=_current_player,
    ),
    "limit-holdem": _Spec(
        env_id="limit-holdem",
        units="BB",
        deal=("card", "card", "card", "card", "seat"),  # hole cards alternate: player i holds the i-th and i+2-th
        deck=_limit_deck,
        clone=_clone_limit,
        hold_cards=_limit_hold_cards,
        key=limit_holdem_infoset_key,
        rules=_limit_rules,
        acting=_limit_acting,
        compiled=False,
        facts=_limit_facts,
    ),
}


def _leduc_of(num_players: int) -> _Spec:
    """Leduc's engine for ``num_players`` players: it deals each player a card, then draws the small blind's seat, and
    the key names the roles of that many seats."""
    key = functools.partial(leduc_infoset_key, num_players=num_players)
    return dataclasses.replace(_SPECS["leduc-holdem"], deal=("card",) * num_players + ("seat",), key=key)


_N_PLAYER_SPECS: dict[str, dict[int, _Spec]] = {"leduc-holdem": {3: _leduc_of(3)}}
"""The engines that play more than two players: the spec for each ``game_num_players`` they take."""
_PARAMETERS = re.compile(r"(?P<env_id>[^()]*)\((?P<parameters>.*)\)")


def parse_name(name: str) -> tuple[str, int]:
    """The env id and number of players of ``<env id>`` (two players) or ``<env id>(game_num_players=N)`` (RLCard's own
    config key; ``rlcard:leduc-holdem(game_num_players=3)``); another parameter or number is refused."""
    match = _PARAMETERS.fullmatch(name)
    env_id, parameters = (name, None) if match is None else (match["env_id"], match["parameters"])
    if env_id not in _SPECS:
        raise UnknownGameError(f"unsupported RLCard game {env_id!r}; supported: {', '.join(sorted(_SPECS))}")
    if parameters is None:
        return env_id, NUM_PLAYERS
    counts = _N_PLAYER_SPECS.get(env_id, {})
    value = parameters.removeprefix("game_num_players=")
    if value != parameters and value.isdigit() and int(value) in counts:
        return env_id, int(value)
    takes = " or ".join(f"game_num_players={count}" for count in counts) or "no parameters"
    raise UnsupportedGameError(f"{PREFIX}{env_id} takes {takes} (two players: {PREFIX}{env_id}), got {PREFIX}{name}")


def _uniform(cards: Sequence[int]) -> tuple[tuple[int, float], ...]:
    return tuple((card, 1.0 / len(cards)) for card in cards)


class _ScriptedRandom:
    """Stands in for the engine's ``np_random`` during ``init_game``: it deals the chosen cards
    (indices into the unshuffled deck, in pop order) and draws the chosen seats. Any other
    random call fails loudly, so a change in the engine cannot go unnoticed."""

    def __init__(self, cards: Sequence[int], seats: Sequence[int]) -> None:
        self._cards = list(cards)
        self._seats = iter(seats)
        self.unshuffled: list[Any] = []

    def shuffle(self, deck: list[Any]) -> None:
        self.unshuffled = list(deck)
        chosen = [deck[i] for i in self._cards]
        rest = [card for i, card in enumerate(deck) if i not in self._cards]
        deck[:] = rest + chosen[::-1]

    def randint(self, low: int, high: int) -> int:
        seat = next(self._seats)
        if seat not in range(low, high):
            raise InputError(f"scripted seat {seat} is outside [{low}, {high})")
        return seat


class RLCardState(State):
    """A deal in progress (no engine yet), a decision, a pending public deal, or a terminal.

    ``_engine`` is never mutated once a state holds it: every transition works on a clone. While the engine
    is about to deal public cards, ``_pending`` holds the action that makes it deal, how many cards it deals and
    the cards chosen so far.
    ``_history`` is every id applied since the initial state, chance outcomes included: a
    state pickles as its game id and that history, and unpickles by replaying it.
    """

    __slots__ = ("_deal", "_engine", "_game", "_history", "_pending", "_record")

    def __init__(
        self,
        game: RLCardGame,
        deal: tuple[int, ...],
        engine: Any,
        pending: tuple[str, int, tuple[int, ...]] | None,
        record: tuple[tuple[int, str], ...],
        history: tuple[int, ...],
    ) -> None:
        self._game = game
        self._deal = deal
        self._engine = engine
        self._pending = pending
        self._record = record
        self._history = history

    def __reduce__(self) -> tuple[Callable[[RLCardGame, tuple[int, ...]], State], tuple[RLCardGame, tuple[int, ...]]]:
        return replay, (self._game, self._history)

    def _player(self) -> int:
        if self._engine is None or self._pending is not None:
            return CHANCE
        if self._engine.is_over():
            return TERMINAL
        return int(self._engine.get_player_id())

    def _outcomes(self) -> tuple[tuple[int, float], ...]:
        game = self._game
        if self._engine is None:
            return game.deal_outcomes(self._deal)
        return game.public_outcomes(self._engine, self._pending[2] if self._pending is not None else ())

    def _actions(self) -> tuple[int, ...]:
        names = self._engine.get_legal_actions()
        return tuple(sorted(self._game.actions.index(name) for name in names))

    def _apply(self, action: int) -> RLCardState:
        game = self._game
        history = (*self._history, action)
        if self._engine is None:
            deal = (*self._deal, action)
            if len(deal) < len(game.spec.deal):
                return RLCardState(game, deal, None, None, (), history)
            return RLCardState(game, deal, game.deal_engine(deal), None, (), history)
        if self._pending is not None:
            name, count, chosen = self._pending
            chosen = (*chosen, action)
            if len(chosen) < count:
                return RLCardState(game, self._deal, self._engine, (name, count, chosen), self._record, history)
            engine = game.spec.clone(self._engine)
            game.stack_deck(engine, chosen)
            engine.step(name)
            return RLCardState(game, self._deal, engine, None, self._record, history)
        name = game.actions[action]
        record = (*self._record, (self._player(), name))
        engine = game.spec.clone(self._engine)
        cards_left = len(game.spec.deck(engine))
        engine.step(name)
        dealt = cards_left - len(game.spec.deck(engine))
        if dealt:  # the engine dealt: make it chance nodes, one per card
            return RLCardState(game, self._deal, self._engine, (name, dealt, ()), record, history)
        return RLCardState(game, self._deal, engine, None, record, history)

    def num_players(self) -> int:
        return self._game.num_players

    def history(self) -> tuple[int, ...]:
        """The ids applied from the initial state, chance outcomes included."""
        return self._history

    def chips(self) -> tuple[float, ...]:
        """The chips each player has put in the pot so far; zeros before the deal."""
        if self._engine is None:
            return (0.0,) * self._game.num_players
        return tuple(float(player.in_chips) for player in self._engine.players)

    def _payoffs(self) -> tuple[float, ...]:
        return tuple(float(payoff) for payoff in self._engine.get_payoffs())

    def _key(self, player: int) -> str:
        if self._engine is None:
            raise InputError("no information state before the cards are dealt")
        raw_obs = self._engine.get_state(player)
        return self._game.spec.key(raw_obs, player, self._record)

    def __str__(self) -> str:
        return f"deal {list(self._deal)} actions {[a for _, a in self._record]}"


class _Plan:
    """One node of the betting that follows a deal's seat outcomes, played once on RLCard's engine.

    RLCard's engines never read the cards to run the betting (who acts, the legal actions, the
    chips, when a public card is dealt and when the hand ends); the cards matter only to the keys
    and the payoffs. So one plan per seat assignment serves every deal with it, and
    :class:`_PlannedWalk` takes each deal's keys and payoffs from its own cards.
    """

    __slots__ = ("_children", "_game", "actions", "dealt", "engine", "player", "record")

    def __init__(self, game: RLCardGame, engine: Any, record: tuple[tuple[int, str], ...], dealt: _Plan | None) -> None:
        self._game = game
        self._children: dict[int, _Plan] = {}
        self.engine = engine
        """The engine at this node, after the representative deal the plan was played with."""
        self.record = record
        self.dealt = dealt
        """At a public deal (a chance node): the plan after the engine dealt."""
        self.actions: tuple[int, ...] = ()
        if dealt is not None:
            self.player = CHANCE
        elif engine.is_over():
            self.player = TERMINAL
        else:
            self.player = int(engine.get_player_id())
            self.actions = tuple(sorted(game.actions.index(name) for name in engine.get_legal_actions()))

    def child(self, action: int) -> _Plan:
        """The plan after player action ``action``, played on a clone of the engine the first time."""
        plan = self._children.get(action)
        if plan is None:
            game = self._game
            name = game.actions[action]
            record = (*self.record, (self.player, name))
            engine = game.spec.clone(self.engine)
            cards_left = len(game.spec.deck(engine))
            engine.step(name)
            plan = _Plan(game, engine, record, None)
            if len(game.spec.deck(engine)) < cards_left:  # the engine dealt: a chance node first
                plan = _Plan(game, self.engine, record, plan)
            self._children[action] = plan
        return plan


_Walked = tuple[tuple[int, ...], _Plan | None, tuple[int, ...], int]
"""A state of :class:`_PlannedWalk`: the deal so far, its betting plan (``None`` while dealing), the
players' cards (outcome ids, player ``i``'s the ``i``-th; once dealt) and the public card's (``-1``:
none dealt)."""


class _PlannedWalk:
    """The operations of :meth:`RLCardGame.tree_ops`: each deal's betting is its seats' :class:`_Plan`,
    its keys come from the key function and its payoffs from an engine holding its cards."""

    def __init__(self, game: RLCardGame) -> None:
        self._game = game
        self._plans: dict[tuple[int, ...], _Plan] = {}
        self._showdowns: dict[_Plan, Any] = {}
        """Per terminal plan, a clone of its engine that takes each deal's cards in turn."""

    def ops(self) -> TreeOps[_Walked]:
        return TreeOps(
            root=((), None, (), -1),
            player=self.player,
            outcomes=self.outcomes,
            actions=self.actions,
            child=self.child,
            returns=self.returns,
            key=self.key,
        )

    def player(self, state: _Walked) -> int:
        plan = state[1]
        return CHANCE if plan is None else plan.player

    def outcomes(self, state: _Walked) -> tuple[tuple[int, float], ...]:
        deal, plan, hands, public = state
        game = self._game
        if plan is None:
            return game.deal_outcomes(deal)
        return _uniform([card for card in range(len(game.deck)) if card not in hands and card != public])

    def actions(self, state: _Walked) -> tuple[int, ...]:
        plan = state[1]
        assert plan is not None
        return plan.actions

    def child(self, state: _Walked, action: int) -> _Walked:
        deal, plan, hands, public = state
        if plan is None:
            deal = (*deal, action)
            if len(deal) < len(self._game.spec.deal):
                return deal, None, (), -1
            return deal, self._plan(deal), tuple(self._game.dealt_cards(deal)), -1
        if plan.dealt is not None:
            return deal, plan.dealt, hands, action
        return deal, plan.child(action), hands, public

    def returns(self, state: _Walked) -> tuple[float, ...]:
        _, plan, hands, public = state
        assert plan is not None
        showdown = self._showdowns.get(plan)
        if showdown is None:
            showdown = self._showdowns[plan] = self._game.spec.clone(plan.engine)
        cards = self._game.cards
        self._game.spec.hold_cards(showdown, [cards[card] for card in hands], cards[public] if public >= 0 else None)
        return tuple(float(payoff) for payoff in showdown.get_payoffs())

    def key(self, state: _Walked, player: int) -> str:
        _, plan, hands, public = state
        assert plan is not None
        deck = self._game.deck
        raw_obs = {
            "hand": deck[hands[player]],
            "public_card": deck[public] if public >= 0 else None,
            "current_player": plan.player,
        }
        return self._game.spec.key(raw_obs, player, plan.record)

    def _plan(self, deal: tuple[int, ...]) -> _Plan:
        seats = tuple(o for o, e in zip(deal, self._game.spec.deal, strict=True) if e == "seat")
        plan = self._plans.get(seats)
        if plan is None:
            plan = self._plans[seats] = _Plan(self._game, self._game.deal_engine(deal), (), None)
        return plan


class RLCardGame(Game):
    """``rlcard:<env id>`` for ``leduc-holdem``, ``kuhn-poker`` and ``limit-holdem``; with ``any_players``, also
    ``rlcard:leduc-holdem(game_num_players=3)``, Leduc's engine configured for three players as RLCard configures it
    (its env cannot play them: its observation has room for two players' chips)."""

    def __init__(self, name: str, *, any_players: bool = False) -> None:
        env_id, num_players = parse_name(name)
        if num_players != NUM_PLAYERS and not any_players:
            raise UnsupportedGameError(
                f"{PREFIX + name!r} is not a two-player zero-sum sequential game with perfect recall ({num_players} "
                "players); n-player games of RLCard's engines run with train (full-tree and sampled algorithms) and "
                "exploitability"
            )
        rlcard_kuhn.register()
        self.name = name
        self.spec = _SPECS[env_id] if num_players == NUM_PLAYERS else _N_PLAYER_SPECS[env_id][num_players]
        self.game_id = PREFIX + name
        self.units = self.spec.units
        env = rlcard.make(env_id)
        self.actions: list[str] = list(env.actions)
        self.num_distinct_actions = len(self.actions)
        self._template = env.game
        if num_players != NUM_PLAYERS:
            self._template.configure({"game_num_players": num_players})
        self.num_players = int(self._template.num_players)
        probe = _ScriptedRandom([], [0] * self.spec.deal.count("seat"))
        self._template.np_random = probe
        self._template.init_game()
        self.cards = list(probe.unshuffled)
        """The engine's card objects in unshuffled deck order (card outcome ``i`` is ``cards[i]``)."""
        self.deck = [_card_name(card) for card in self.cards]
        self.deck_index = {name: i for i, name in enumerate(self.deck)}

    def deal_outcomes(self, deal: Sequence[int]) -> tuple[tuple[int, float], ...]:
        """The chance outcomes after the first ``len(deal)`` events of the deal: a seat, or a card
        of those not dealt yet."""
        if self.spec.deal[len(deal)] == "seat":
            return tuple((seat, 1.0 / self.num_players) for seat in range(self.num_players))
        return _uniform([i for i in range(len(self.deck)) if i not in self.dealt_cards(deal)])

    def dealt_cards(self, deal: Sequence[int]) -> list[int]:
        """The card outcomes of ``deal``, in order: player ``i`` holds the ``i``-th."""
        return [o for o, e in zip(deal, self.spec.deal, strict=False) if e == "card"]

    def scripted_random(self, deal: Sequence[int]) -> Any:
        """What an engine's ``np_random`` must be for its ``init_game`` to deal the chance outcomes ``deal``
        (a whole deal); it draws nothing else."""
        seats = [o for o, e in zip(deal, self.spec.deal, strict=True) if e == "seat"]
        return _ScriptedRandom(self.dealt_cards(deal), seats)

    def deal_engine(self, deal: Sequence[int]) -> Any:
        """A fresh engine after ``init_game`` with the chance outcomes ``deal``."""
        engine = copy.copy(self._template)
        engine.np_random = self.scripted_random(deal)
        engine.init_game()
        return engine

    def public_outcomes(self, engine: Any, chosen: Sequence[int]) -> tuple[tuple[int, float], ...]:
        """The chance outcomes of the next public card ``engine`` deals, the cards ``chosen`` for this deal
        already set aside: each card left in its deck, uniformly."""
        left = (self.deck_index[_card_name(card)] for card in self.spec.deck(engine))
        return _uniform(sorted(card for card in left if card not in chosen))

    def stack_deck(self, engine: Any, chosen: Sequence[int]) -> None:
        """Put the cards ``chosen`` (outcome ids) on top of ``engine``'s deck, so that its next deals give them
        in that order."""
        deck = self.spec.deck(engine)
        cards = [next(c for c in deck if self.deck_index[_card_name(c)] == card) for card in chosen]
        for card in cards:
            deck.remove(card)
        deck.extend(reversed(cards))  # deal_card() pops them next, in the order chosen

    def new_initial_state(self) -> RLCardState:
        return RLCardState(self, (), None, None, (), ())

    def tree_ops(self) -> TreeOps[Any]:
        """Operations that play each seat assignment's betting once on the engine (see :class:`_Plan`)
        and give every deal its keys, from the key function that :meth:`key_from_env_state` uses, and
        its payoffs, from ``get_payoffs()`` of the engine holding the deal's cards. They answer as
        :class:`RLCardState` does, state for state. A game too large for a compiled tree
        (``rlcard:limit-holdem``) is refused."""
        if not self.spec.compiled:
            raise UnsupportedGameError(
                f"{self.game_id} has about 10^14 information states: no compiled tree holds it; its states are "
                "played one at a time"
            )
        return _PlannedWalk(self).ops()

    def __reduce__(self) -> tuple[Callable[[str], RLCardGame], tuple[str]]:
        """Pickled as its name (the game id without ``rlcard:``); unpickled as this process's one game of that name."""
        return shared_game, (self.name,)

    def action_name(self, action: int) -> str:
        return self.actions[action]

    @property
    def compiled(self) -> bool:
        """Whether a compiled tree holds the game (not ``rlcard:limit-holdem``)."""
        return self.spec.compiled

    def bridge_facts(self) -> GameFacts | None:
        """From the rules for a game too large to walk (``rlcard:limit-holdem``); ``None`` for the others."""
        return None if self.spec.facts is None else self.spec.facts(self._template)

    def rules(self) -> Mapping[str, object]:
        return {**self.spec.rules(self._template), "deck": self.deck, "actions": self.actions}

    def key_from_env_state(self, env_state: Mapping[str, Any]) -> str:
        """The information-state key of the player to act, from an RLCard env state dict."""
        raw_obs = env_state["raw_obs"]
        record = [(int(p), str(a)) for p, a in env_state["action_record"]]
        return self.spec.key(raw_obs, self.spec.acting(raw_obs, record), record)


@functools.cache
def shared_game(name: str) -> RLCardGame:
    """One :class:`RLCardGame` per name (``leduc-holdem``, ``leduc-holdem(game_num_players=3)``...) in this process:
    what an unpickled game or state uses (any number of players, as the pickled game was loaded)."""
    return RLCardGame(name, any_players=True)
