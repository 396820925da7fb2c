r"""Agents asked at a public history of a limit hold'em game for every private hand at once: :class:`RangeQuery`.

Local best response (:mod:`eval.lbr_sampled`), AIVAT on the engine (:mod:`eval.aivat_holdem`) and the re-solving
agent (:mod:`eval.resolving`) track or imagine an agent's whole range, so they ask it for every hand it may hold.
:func:`range_query` gives any agent that face, once:

* an abstract strategy is read for every hand at once through its buckets (:class:`AbstractRange`);
* a neural model trained on the engine, by one forward pass for the live hands (:class:`NetworkRange`);
* ``random`` is uniform (:class:`UniformRange`), and an RLCard agent that ignores its cards is asked for one hand
  (:class:`CardBlind`);
* an agent that answers for every hand itself (:class:`RangeAgent`: the re-solving agent) gives its own query;
* any other OpenSpiel policy (``universal_poker``) or RLCard agent (``rlcard:limit-holdem``) is asked hand by hand
  at the state its toolkit would hand it (:class:`OpenSpielRange`, :class:`RLCardRange`), only for the hands in the
  range and once per public node.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar

import numpy as np
import pyspiel
from numpy.typing import NDArray
from open_spiel.python.policy import UniformRandomPolicy

from adapters.games import canonical_game_id
from adapters.holdem.betting import DEAL
from adapters.holdem.cards import board_mask, hand_masks
from adapters.holdem.engine import RLCARD_LIMIT, HoldemEngine, rlcard_card
from adapters.inputs import InputError
from adapters.openspiel import PREFIX
from cfr_agents.abstract_strategy import AbstractStrategy
from cfr_agents.holdem_play import RLCARD_IDS, walk_actions
from cfr_agents.public_tree.neural import StatePlayer
from eval.agents import (
    SUM_TOLERANCE,
    AbstractStrategyAgent,
    Agent,
    AgentQueryError,
    NetworkAgent,
    OpenSpielAgent,
    RLCardEnvAgent,
    preserved_global_rng,
    rlcard_env_state,
)
from eval.environments import OpenSpielPolicy

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]

FOLD: Final = 0
CALL: Final = 1
RAISE: Final = 2
"""OpenSpiel's action ids of a limit game."""


class RangeQuery(Protocol):
    """An agent asked at a public history for every private hand at once."""

    def probabilities(self, node: int, board: IntArray, actions: Sequence[int], live: BoolArray) -> FloatArray:
        """``(num_actions, H)``: column ``o`` is :math:`\\sigma(d, o, \\cdot)` over the legal actions of decision
        ``node`` (:math:`d`), in action order, for the agent holding hand ``o`` (a row of
        :func:`~adapters.holdem.cards.private_hands`) after the betting ``actions`` (OpenSpiel's ids from the root)
        with the cards ``board`` dealt so far (in deal order). Only the columns where ``live`` is true are read
        (the range's support); the others may hold any distribution."""
        ...


class UniformRange:
    """``random``: :math:`\\sigma(d, o, a) = 1 / |A(d)|`."""

    def __init__(self, engine: HoldemEngine, num_hands: int) -> None:
        self.engine = engine
        self.num_hands = num_hands

    def probabilities(self, node: int, board: IntArray, actions: Sequence[int], live: BoolArray) -> FloatArray:
        n = int(self.engine.betting.num_children[node])
        return np.full((n, self.num_hands), 1.0 / n)


class AbstractRange:
    """An abstract strategy, vectorised: hand :math:`o` at betting node :math:`d` of round :math:`r` plays row
    :math:`\\operatorname{base}(d) + b_r(o, B)` of the strategy, its bucket on the board so far
    (:meth:`~cfr_agents.abstraction.tables.Abstraction.buckets` for every hand at once, kept for the board)."""

    def __init__(self, strategy: AbstractStrategy, hands: IntArray) -> None:
        self.strategy = strategy
        self.hands = hands
        self._buckets: dict[tuple[int, bytes], IntArray] = {}

    def probabilities(self, node: int, board: IntArray, actions: Sequence[int], live: BoolArray) -> FloatArray:
        game = self.strategy.game
        round_ = int(game.engine.betting.round[node])
        key = (round_, board.tobytes())
        buckets = self._buckets.get(key)
        if buckets is None:
            if len(self._buckets) >= 8:  # the boards of one hand's rounds
                self._buckets.clear()
            found = game.abstraction.buckets(round_, self.hands, board)
            buckets = self._buckets[key] = np.maximum(found, 0)  # -1: a hand that meets the board, never in range
        n = int(game.engine.betting.num_children[node])
        block: FloatArray = self.strategy.strategy[int(game.row_base[node]) + buckets, :n].T
        return block


class NetworkRange:
    """A neural model trained on the engine, vectorised: every live hand's tensors at the node and at the player's
    own earlier decisions, one forward pass per network (:meth:`~cfr_agents.public_tree.neural.StatePlayer.hands`)."""

    def __init__(self, player: StatePlayer, engine: HoldemEngine, hands: IntArray) -> None:
        self.player, self.engine, self.hands = player, engine, hands

    def probabilities(self, node: int, board: IntArray, actions: Sequence[int], live: BoolArray) -> FloatArray:
        found, path = walk_actions(self.engine, actions)
        if found != node:
            raise InputError(f"the betting {list(actions)} does not lead to node {node}")
        n = int(self.engine.betting.num_children[node])
        out = np.full((n, self.hands.shape[0]), 1.0 / n)
        out[:, live] = self.player.hands(node, list(board), path, self.hands[live])
        return out


ANSWERS_KEPT: Final = 512
"""Public nodes whose answers a per-hand query keeps (a preflop node is the same public node in every hand)."""


Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


def recently_used(cache: OrderedDict[Key, Value], key: Key, make: Callable[[], Value], bound: int) -> Value:
    """``cache[key]``, made by ``make()`` when missing; the cache keeps the ``bound`` entries used last."""
    found = cache.get(key)
    if found is None:
        found = cache[key] = make()
        while len(cache) > bound:
            cache.popitem(last=False)
    else:
        cache.move_to_end(key)
    return found


class PerHandQuery:
    """What the per-hand queries share: the engine, the hands, and the answers at the public nodes met so far, kept
    (least recently used first out) with the hands they hold: a later query at the node asks only the hands it
    lacks. An agent's answer at an information state is taken to be fixed, as its range assumes."""

    imaginable = False
    """Whether asking it for every hand at a node costs little enough for AIVAT to imagine its other hands
    (:mod:`eval.aivat_holdem`): RLCard's rule agents, 0.04 s for the 1,326 hands of a preflop node, and RLCard's
    NFSP and DQN, their network run once for all the hands; not a network run hand by hand (RLCard's NFSP through
    ``eval_step``, 0.62 s)."""

    def __init__(self, engine: HoldemEngine, hands: IntArray, name: str) -> None:
        self.engine = engine
        self.hands = hands
        self.masks = hand_masks(hands).astype(np.int64)
        self.name = name
        self._kept: OrderedDict[tuple[int, bytes], tuple[FloatArray, BoolArray]] = OrderedDict()

    def probabilities(self, node: int, board: IntArray, actions: Sequence[int], live: BoolArray) -> FloatArray:
        n = int(self.engine.betting.num_children[node])
        out, asked = recently_used(
            self._kept,
            (node, board.tobytes()),
            lambda: (np.full((n, self.hands.shape[0]), 1.0 / n), np.zeros(self.hands.shape[0], bool)),
            ANSWERS_KEPT,
        )
        dealt = int(board_mask(board.tolist()))
        wanted = live & ~asked & ((self.masks & dealt) == 0)  # a hand that meets the board is never in range
        if wanted.any():
            self.answer(node, board, actions, np.flatnonzero(wanted).tolist(), out)
            asked |= wanted
        return out

    def answer(self, node: int, board: IntArray, actions: Sequence[int], rows: list[int], out: FloatArray) -> None:
        """Write the agent's answer for each hand of ``rows`` into its column of ``out``."""
        raise NotImplementedError

    def other_hand(self, taken: int) -> list[int]:
        """The lowest cards of the deck outside the bit mask ``taken``: the other player's hole cards."""
        k = self.engine.rules.num_hole_cards
        return [card for card in range(self.engine.rules.deck_size) if not taken >> card & 1][:k]

    def column(self, answer: Mapping[int, float], legal: list[int], where: Callable[[], str]) -> list[float]:
        """``answer`` (``{OpenSpiel action id: probability}``) over ``legal``; an illegal action with positive
        probability, a negative one, or a sum off 1 by more than :data:`~eval.agents.SUM_TOLERANCE` is refused,
        the message saying ``where()``."""
        column = [float(answer.get(a, 0.0)) for a in legal]
        total = sum(column)
        if (
            any(p < 0 for p in column)
            or abs(total - 1.0) > SUM_TOLERANCE
            or any(int(a) not in legal and p > 0 for a, p in answer.items())
        ):
            raise AgentQueryError(f"{self.name} answers {dict(answer)} at {where()}: not a distribution over {legal}")
        return [p / total for p in column]


class OpenSpielRange(PerHandQuery):
    """Any OpenSpiel policy of a ``universal_poker`` game, asked hand by hand at a ``pyspiel`` state of each
    information state: the hand's hole cards (the other player holds the lowest cards left), then the betting and
    the board cards where each round's betting ends, as :class:`eval.holdem.StateHands` builds it."""

    def __init__(self, policy: OpenSpielPolicy, engine: HoldemEngine, hands: IntArray, name: str) -> None:
        super().__init__(engine, hands, name)
        self.policy = policy
        self.game = pyspiel.load_game(engine.game_id.removeprefix(PREFIX))

    def path(self, actions: Sequence[int], board: IntArray) -> list[int]:
        """OpenSpiel's actions after the hole cards: each bet or call, and each round's board cards."""
        engine, betting = self.engine, self.engine.betting
        sizes = np.cumsum(engine.rules.board_cards)
        node, path = engine.root, []
        for action in actions:
            path.append(int(action))
            node = engine.child(node, int(action))
            while int(betting.kind[node]) == DEAL:
                round_ = int(betting.round[node]) + 1
                path.extend(int(card) for card in board[int(sizes[round_ - 1]) : int(sizes[round_])])
                node = engine.child(node, 0)
        return path

    def answer(self, node: int, board: IntArray, actions: Sequence[int], rows: list[int], out: FloatArray) -> None:
        legal = self.engine.legal_actions(node)
        player = int(self.engine.betting.player[node])
        path = self.path(actions, board)
        dealt = int(board_mask(board.tolist()))
        for o in rows:
            hand = self.hands[o].tolist()
            other = self.other_hand(int(self.masks[o]) | dealt)
            state = self.game.new_initial_state()
            for card in (*hand, *other) if player == 0 else (*other, *hand):
                state.apply_action(card)
            for action in path:
                state.apply_action(action)
            answer = self.policy.action_probabilities(state)
            where = functools.partial(_state_text, state)
            out[:, o] = self.column({int(a): float(p) for a, p in answer.items()}, legal, where)


def _state_text(state: Any) -> str:
    return repr(str(state))


class RLCardRange(PerHandQuery):
    """An RLCard agent of ``rlcard:limit-holdem`` (``eval_step``), asked hand by hand with the state dict RLCard's
    env hands it: the public history replayed once on the adapter's :class:`~adapters.rlcard.RLCardState` (the
    small blind in seat 1, as the engine seats it), read by :func:`eval.agents.rlcard_env_state`, then RLCard's own
    ``env._extract_state`` of that raw state holding each hand in turn (``obs``, ``raw_obs``, legal actions), with
    the path's ``action_record``. Its probabilities are ``info["probs"]`` when it reports them, else the action it
    returns has probability 1; an action id RLCard's env would not take is read as the env reads it (check if legal,
    else fold)."""

    def __init__(self, agent: Any, engine: HoldemEngine, hands: IntArray, name: str) -> None:
        import rlcard

        from adapters.rlcard import shared_game

        super().__init__(engine, hands, name)
        self.agent = agent
        self.game = shared_game(RLCARD_LIMIT.removeprefix("rlcard:"))
        self.env = rlcard.make(self.game.spec.env_id)
        self.outcome = {rlcard_card(card): i for i, card in enumerate(self.game.deck)}
        """The adapter's chance outcome (RLCard's deck index) of each card id."""
        self.names = [[self.game.deck[self.outcome[int(card)]] for card in hand] for hand in hands]
        self.batched = bool(getattr(agent, "batched", False))
        """Whether the agent answers for many hands in one pass of its network (RLCard's NFSP and DQN,
        :meth:`eval.opponents.nfsp.SeatedAgents.batch_probabilities`), not hand by hand through ``eval_step``."""

    def state(self, actions: Sequence[int], board: IntArray) -> Any:
        """The adapter's state after ``actions``, the board dealt where RLCard's engine deals it."""
        free = self.other_hand(int(board_mask(board.tolist())))
        free += self.other_hand(int(board_mask([*board.tolist(), *free])))
        state: Any = self.game.new_initial_state()
        for card in (free[0], free[2], free[1], free[3]):  # RLCard deals player 0's first card, player 1's, ...
            state = state.child(self.outcome[card])
        state = state.child(1)  # the small blind's seat: player 1
        dealt = iter(board.tolist())
        for action in actions:
            names = {self.game.actions[a] for a in state.legal_actions()}
            name = {FOLD: "fold", RAISE: "raise"}.get(int(action), "call" if "call" in names else "check")
            state = state.child(self.game.actions.index(name))
            while state.is_chance_node():
                state = state.child(self.outcome[next(dealt)])
        return state

    def env_state(self, template: Mapping[str, Any], row: int) -> dict[str, Any]:
        """The state dict of ``template`` (:func:`eval.agents.rlcard_env_state` at the public node) with the player
        to act holding hand ``row``, as RLCard's env builds it."""
        env_state: dict[str, Any] = self.env._extract_state({**template["raw_obs"], "hand": self.names[row]})
        env_state["action_record"] = list(template["action_record"])
        return env_state

    def answer(self, node: int, board: IntArray, actions: Sequence[int], rows: list[int], out: FloatArray) -> None:
        legal = self.engine.legal_actions(node)
        state = self.state(actions, board)
        if state.current_player() != int(self.engine.betting.player[node]):
            raise InputError(f"RLCard's engine and the betting tree disagree on who acts after {list(actions)}")
        template = rlcard_env_state(self.env, state)
        names = list(template["raw_legal_actions"])
        if self.batched:
            self._answer_batched(template, legal, rows, out)
            return
        with preserved_global_rng():
            for o in rows:
                action, info = self.agent.eval_step(self.env_state(template, o))
                probs = info.get("probs") if isinstance(info, Mapping) else None
                answer: dict[int, float] = {}
                for taken, p in probs.items() if probs else [(action, 1.0)]:
                    action_id = RLCARD_IDS[self._name(taken, names, probs is None)]
                    answer[action_id] = answer.get(action_id, 0.0) + float(p)
                out[:, o] = self.column(
                    answer,
                    legal,
                    functools.partial(self._where, template, o),
                )

    def _answer_batched(self, template: Mapping[str, Any], legal: list[int], rows: list[int], out: FloatArray) -> None:
        """:meth:`answer` with the network run once for every hand of ``rows``."""
        ids = list(template["legal_actions"])
        obs = np.stack([self.env_state(template, o)["obs"] for o in rows])
        for o, row in zip(rows, self.agent.batch_probabilities(template, obs, ids), strict=True):
            answer = {RLCARD_IDS[self.game.actions[i]]: float(row[i]) for i in ids}
            out[:, o] = self.column(answer, legal, functools.partial(self._where, template, o))

    def _where(self, template: Mapping[str, Any], row: int) -> str:
        raw = template["raw_obs"]
        return f"hand {self.names[row]}, board {raw['public_cards']}, actions {template['action_record']}"

    def _name(self, action: object, legal: list[str], returned: bool) -> str:
        """The name of an action an agent gave (a name, or an id of ``env.actions``)."""
        if isinstance(action, int | np.integer) and 0 <= int(action) < len(self.game.actions):
            name = self.game.actions[int(action)]
            if returned and name not in legal:  # RLCard's env._decode_action
                return "check" if "check" in legal else "fold"
            return name
        if isinstance(action, str) and action in RLCARD_IDS:
            return action
        raise AgentQueryError(f"{self.name} answered {action!r}: not one of {legal}")


class RangeAgent(Agent):
    """An agent that answers for every hand at once itself (the re-solving agent, :mod:`eval.resolving`)."""

    def range_query(self, engine: HoldemEngine, hands: IntArray, name: str) -> RangeQuery:
        """The agent asked on ``engine``'s game for each of ``hands`` (every private hand of the game, in
        :func:`~adapters.holdem.cards.private_hands`' order)."""
        raise NotImplementedError


def range_query(agent: Agent, engine: HoldemEngine, hands: IntArray, name: str) -> RangeQuery:
    """``agent`` (an :class:`~eval.agents.Agent`) asked for every hand at once on ``engine``'s game: vectorised for
    an abstract strategy, a model trained on the engine and uniform play, its own query for a :class:`RangeAgent`,
    hand by hand for any other OpenSpiel policy (``universal_poker``) or RLCard agent (``rlcard:limit-holdem``)."""
    if isinstance(agent, RangeAgent):
        return agent.range_query(engine, hands, name)
    if isinstance(agent, AbstractStrategyAgent):
        if agent.raw.game_id != engine.game_id:
            raise InputError(f"agent {name!r} is a strategy of {agent.raw.game_id}, not of {engine.game_id}")
        return AbstractRange(agent.raw, hands)
    if isinstance(agent, OpenSpielAgent) and isinstance(agent.raw, UniformRandomPolicy):
        return UniformRange(engine, hands.shape[0])
    if isinstance(agent, NetworkAgent) and agent.raw.on_engine:
        if canonical_game_id(agent.raw.game_id) != engine.game_id:
            raise InputError(f"agent {name!r} is a model of {agent.raw.game_id}, not of {engine.game_id}")
        return NetworkRange(agent.state_player, engine, hands)
    if engine.game_id == RLCARD_LIMIT:
        if not isinstance(agent, RLCardEnvAgent):
            raise InputError(f"agent {name!r} does not play in RLCard's env, which {RLCARD_LIMIT} is played in")
        from rlcard.agents import RandomAgent  # loaded with the agent
        from rlcard.models.limitholdem_rule_models import LimitholdemRuleAgentV1

        per_hand = RLCardRange(agent.raw, engine, hands, name)
        per_hand.imaginable = per_hand.batched or isinstance(agent.raw, LimitholdemRuleAgentV1)
        blind = isinstance(agent.raw, RandomAgent) or getattr(agent.raw, "card_blind", False)
        return CardBlind(per_hand) if blind else per_hand
    return OpenSpielRange(agent.openspiel_player(), engine, hands, name)


class CardBlind:
    """An agent whose answer does not depend on its cards (RLCard's ``RandomAgent``, ``always-call``,
    ``always-raise``): asked for one hand of the range at each public node, its answer stands for every hand."""

    def __init__(self, per_hand: RangeQuery) -> None:
        self.per_hand = per_hand

    def probabilities(self, node: int, board: IntArray, actions: Sequence[int], live: BoolArray) -> FloatArray:
        one = np.zeros_like(live)
        first = int(np.flatnonzero(live)[0])
        one[first] = True
        column = np.asarray(self.per_hand.probabilities(node, board, actions, one))[:, first]
        return np.repeat(column[:, None], live.shape[0], axis=1)
