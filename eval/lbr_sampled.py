r"""Local best response played hand by hand on the compiled limit hold'em engine: LBR where no public tree exists.

Lisý & Bowling (2017) play LBR against an agent one hand at a time, as this module does on
:class:`~adapters.holdem.engine.HoldemEngine` (``hulh``, ``rlcard:limit-holdem``, and every game
:mod:`eval.lbr` also computes exactly). Cards come from :meth:`~adapters.holdem.engine.HoldemEngine.deal`, and
hands are played in duplicate pairs as :func:`eval.lbr.play_lbr` pairs them: with ``seat="both"`` both hands of a
pair see the same cards with LBR in seat 0 and then in seat 1; with one seat, LBR holds first its own cards and
then the agent's.

**Range.** LBR keeps :math:`r(o)` over every private hand :math:`o` of the agent
(:func:`~adapters.holdem.cards.private_hands`): uniform at first over the hands that share no card with LBR's hole
cards, the hands that meet a board card set to 0 as the board is dealt, and at each action :math:`a` the agent
takes at betting node :math:`d`, :math:`r(o) \leftarrow r(o)\,\sigma(d, o, a)` (Bayes' rule). The agent answers
for every hand at once through :class:`RangeQuery`; its own move is drawn from its answer for the hand it holds.

**Decision.** At its decision node :math:`d` (pot :math:`P`, amount to call :math:`A`) LBR takes the action of
highest utility, preferring call, then raise, then fold where two are worth the same (the paper's Algorithm 1,
its limit form, as :mod:`eval.lbr` states it):

* fold: :math:`U = 0`; call: :math:`U = w P - (1 - w) A`;
* raise by :math:`a` more than a call: :math:`U = f P + (1 - f)\,(w (P + a) - (1 - w)(A + a))`,

with :math:`f = \sum_o r(o)\,\sigma(d', o, \text{fold}) / \sum_o r(o)` at the node :math:`d'` after LBR's raise,
and :math:`w` LBR's probability of winning the showdown against the range, ties half, over every way to deal the
rest of the board: for LBR's hand :math:`h` on the board :math:`B` dealt so far,

.. math:: w = \frac12 + \frac{\sum_o r(o)\,M(o)}{2 \sum_o r(o)\,K(o)}, \qquad
   M(o) = \sum_{c} \operatorname{sign}\big(\rho(h \cup B \cup c) - \rho(o \cup B \cup c)\big), \quad K(o) = \sum_c 1,

the sums over the completions :math:`c` of the board that share no card with :math:`h` or :math:`o`, and
:math:`\rho` the evaluator (:func:`~adapters.holdem.cards.rank_hands`). :math:`M` and :math:`K` do not depend on the
range: they are enumerated exactly once per round, board and hand (compiled, iterative), kept up to suit
isomorphism (:func:`~adapters.holdem.suits.suit_permutations`; FHP's preflop has 169 classes of hands), and every
decision of the round is then two dot products. The two hands of a pair share their board, so a round's tables
are enumerated for both of LBR's hands at once. Before round ``call_until`` LBR checks or calls.

**Cost.** A round whose board is completed in more than :data:`MAX_SHOWDOWN_BOARDS` ways is not enumerated:
``call_until`` must be at least the first round that is (:func:`first_enumerable_round`): 0 for FHP (22,100
flops), 1 for ``hulh`` and ``rlcard:limit-holdem`` (:math:`\binom{52}{5}` boards preflop, 1,176 turn and river
pairs on the flop), LBR then calling preflop as the paper's variants do.

**The last round in expectation** (``last_round``). From the last round's first decision on, the rest of the hand
can be walked rather than played: LBR's hand :math:`h` and the whole board :math:`B` are known, LBR acts as it would
(from its range along the way), and every action of the agent is followed, weighted by :math:`\sigma(d, o, a)`:

.. math:: V(o) = \sum_z \pi_{-}(z \mid o)\,u(z, o),

:math:`z` the last round's terminal histories LBR's actions lead to, :math:`\pi_{-}(z \mid o)` the agent's
probability of its actions on the way holding :math:`o`, and :math:`u` LBR's payoff (a fold's stake, or at showdown
:math:`\operatorname{sign}(\rho(h \cup B) - \rho(o \cup B))` times the stake).

* ``"expected"``: the hand scores :math:`V(o^*)`, :math:`o^*` the agent's hand: the expected payoff given the deal
  and the betting before the last round. Its mean is LBR's value (the tower rule), and for each pair as well as each
  hand its variance is at most that of the played hand (Rao-Blackwell), duplicate pairs keeping their effect.
* ``"over-range"``: the hand scores :math:`\sum_o r(o)\,V(o) / \sum_o r(o)`, the agent's hand summed over the range
  :math:`r` LBR holds at the round's entry, its posterior given what LBR has seen: the expected payoff given LBR's
  hand, the board and the betting before the last round. Its mean is LBR's value too, but a duplicate pair no longer
  cancels the luck of the deal (each hand forgets the other's cards), so its variance may be larger. Two agents
  that play alike before the last round (a blueprint and its re-solving agent, :mod:`eval.resolving`), scored on the
  same seeds, then differ pair by pair only by what they do in the last round, with none of the luck of the
  agent's hand in the difference.

**Value.** LBR's value is the mean of its payoffs per hand in the game's units
(:meth:`~adapters.holdem.engine.HoldemEngine.payoffs`: chips, or big blinds on RLCard), over pairs, with its
standard error; in expectation it is at most what a best response wins. :func:`sampled_lbr_report` plays the
pairs in blocks of :data:`BLOCK_PAIRS`, each dealt from its own child of the seed, in this process or in worker
processes (:class:`cfr_agents.jobs.LocalPool`): the hands do not depend on how many play them.

**Agents**: any agent asked for every hand at once (:func:`eval.ranges.range_query`).
"""

from __future__ import annotations

import functools
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
from numba import njit
from numpy.typing import NDArray
from tqdm import tqdm

from adapters.games import canonical_game_id
from adapters.holdem.betting import DEAL, DECISION, SHOWDOWN
from adapters.holdem.betting import FOLD as FOLD_NODE
from adapters.holdem.cards import board_mask, hand_index_table, hand_masks, private_hands, rank_hands
from adapters.holdem.engine import RLCARD_LIMIT, HoldemEngine, holdem_engine
from adapters.holdem.rules import LimitRules, limit_rules
from adapters.holdem.suits import card_permutation, hand_permutation, suit_permutations
from adapters.inputs import InputError, ParameterError
from adapters.openspiel import PREFIX
from cfr_agents.jobs import LocalPool
from cfr_agents.public_tree.tree import MAX_SEGMENTS, segments_at_least
from eval.agents import AbstractStrategyAgent, AgentQueryError
from eval.environments import Z_95, PairSamples
from eval.opponents import load_opponent
from eval.ranges import CALL, FOLD, RAISE, FloatArray, IntArray, RangeQuery, range_query

PREFERENCE: Final = (CALL, RAISE, FOLD)
"""OpenSpiel's action ids, in the order LBR prefers them when they are worth the same."""
SEATS: Final = ("0", "1", "both")
LAST_ROUND: Final = ("sampled", "expected", "over-range")
"""How LBR's last round is scored: played; in expectation over the agent's actions; over its hand too (module
docstring)."""
MAX_SHOWDOWN_BOARDS: Final = 25_000
"""The most completions of the board one showdown table enumerates (FHP's preflop: :math:`\\binom{52}{3}` =
22,100); a round with more is not enumerated (:func:`first_enumerable_round`)."""
CACHED_TABLES: Final = 4096
"""Showdown tables kept, least recently used first out (two int32 vectors each: 43 MB with 1,326 hands)."""


@dataclass(frozen=True)
class Sampled:
    """LBR's mean payoff per hand over duplicate pairs, in the game's units."""

    pairs: int
    mean: float
    standard_error: float

    @property
    def ci95(self) -> tuple[float, float]:
        return (self.mean - Z_95 * self.standard_error, self.mean + Z_95 * self.standard_error)


@njit(cache=True)
def completion_sets(cards: IntArray, size: int) -> IntArray:
    """Every set of ``size`` of ``cards`` ``(n,)``, one row each in lexicographic order of positions."""
    n = cards.shape[0]
    count = 1
    for i in range(size):  # C(n, size), exactly, one factor at a time
        count = count * (n - i) // (i + 1)
    out = np.empty((count, size), dtype=np.int64)
    position = np.arange(size)
    for row in range(count):
        for j in range(size):
            out[row, j] = cards[position[j]]
        i = size - 1
        while i >= 0 and position[i] == n - size + i:
            i -= 1
        if i < 0:
            break
        position[i] += 1
        for j in range(i + 1, size):
            position[j] = position[j - 1] + 1
    return out


@njit(cache=True)
def showdown_tables(
    mine: IntArray, hands: IntArray, masks: IntArray, board: IntArray, completions: IntArray, num_suits: int
) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
    """:math:`M` and :math:`K` (module docstring), ``(L, H)`` int32, of each of LBR's hands ``mine`` ``(L, k)``
    against each of ``hands`` ``(H, k)`` (bit masks ``masks``) on ``board``, over the ``completions`` ``(C, t)``
    of the board (sets of cards outside it): every hand ranked once per completion, whichever of LBR's hands it
    is compared with."""
    lbr, count_hands = mine.shape[0], hands.shape[0]
    margin = np.zeros((lbr, count_hands), dtype=np.int32)
    count = np.zeros((lbr, count_hands), dtype=np.int32)
    mine_masks = np.zeros(lbr, dtype=np.int64)
    for l in range(lbr):  # noqa: E741
        for card in mine[l]:
            mine_masks[l] |= np.int64(1) << card
    base = np.int64(0)
    for card in board:
        base |= np.int64(1) << card
    m = board.shape[0]
    full = np.empty(m + completions.shape[1], dtype=np.int64)
    full[:m] = board
    for c in range(completions.shape[0]):
        dealt = base
        for j in range(completions.shape[1]):
            full[m + j] = completions[c, j]
            dealt |= np.int64(1) << completions[c, j]
        ranks = rank_hands(hands, full, num_suits)  # rho(o B c); a hand that meets B c is skipped below
        own = rank_hands(mine, full, num_suits)  # rho(h B c)
        for l in range(lbr):  # noqa: E741
            if mine_masks[l] & dealt:
                continue
            rank, blocked = own[l], mine_masks[l] | dealt
            for o in range(count_hands):
                if masks[o] & blocked:
                    continue
                margin[l, o] += (rank > ranks[o]) - (rank < ranks[o])  # sign(rho(h B c) - rho(o B c))
                count[l, o] += 1
    return margin, count


def board_completions(rules: LimitRules, round_: int) -> int:
    """How many ways the board dealt by the end of ``round_`` can be completed (what one table enumerates)."""
    dealt = sum(rules.board_cards[: round_ + 1])
    return math.comb(rules.deck_size - dealt, sum(rules.board_cards) - dealt)


def first_enumerable_round(rules: LimitRules) -> int:
    """The first round whose showdown tables enumerate at most :data:`MAX_SHOWDOWN_BOARDS` boards."""
    return next(r for r in range(rules.num_rounds) if board_completions(rules, r) <= MAX_SHOWDOWN_BOARDS)


def check_call_until(rules: LimitRules, call_until: int) -> None:
    """Refuse a ``call_until`` that is not a round, or one before :func:`first_enumerable_round`."""
    last = rules.num_rounds - 1
    if isinstance(call_until, bool) or not isinstance(call_until, int) or not 0 <= call_until <= last:
        raise ParameterError(
            "{call_until} must be a round from 0 to {last}, got {given!r}", last=last, given=call_until
        )
    first = first_enumerable_round(rules)
    if call_until < first:
        raise ParameterError(
            "{call_until} must be at least {first} here: LBR's odds in round {given} would deal the rest of the "
            "board {boards:,} ways at each decision (at most {most:,})",
            first=first,
            given=call_until,
            boards=board_completions(rules, call_until),
            most=MAX_SHOWDOWN_BOARDS,
        )


class ShowdownTables:
    """:math:`M` and :math:`K` of LBR's hands on the boards met so far, kept up to suit isomorphism: the table of
    ``(B, h)`` is kept for the least image of ``(B, h)`` under the suit permutations :math:`\\pi`, whose entry
    :math:`\\pi(o)` is the entry :math:`o` of ``(B, h)`` (strength does not see suits)."""

    def __init__(self, rules: LimitRules, hands: IntArray) -> None:
        self.rules = rules
        self.hands = hands
        self.masks = hand_masks(hands).astype(np.int64)
        perms = suit_permutations(rules.num_suits)
        self.card_perms = np.stack([card_permutation(p, rules.num_ranks, rules.num_suits) for p in perms])
        self.row_perms = np.stack([hand_permutation(hands, cards) for cards in self.card_perms])
        self._kept: OrderedDict[tuple[int, bytes], tuple[NDArray[np.int32], NDArray[np.int32]]] = OrderedDict()
        self.enumerated = 0
        """Tables enumerated so far (the others were found kept)."""

    def _key(self, round_: int, board: IntArray, hole: IntArray) -> tuple[tuple[int, bytes], int]:
        """The key of ``(board, hole)``'s least image and the permutation that maps it there."""
        images = np.concatenate(
            (np.sort(self.card_perms[:, board], axis=1), np.sort(self.card_perms[:, hole], axis=1)), axis=1
        )
        least = int(np.lexsort(images.T[::-1])[0])
        return (round_, images[least].tobytes()), least

    def tables(
        self, round_: int, board: IntArray, hole: IntArray, partner: IntArray | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """:math:`(M, K)` ``(H,)`` of LBR holding ``hole`` on ``board`` in ``round_``; with ``partner`` (the other
        hand LBR holds on the same board), its tables are enumerated in the same pass if not kept."""
        wanted = [hole] if partner is None else [hole, partner]
        keys = [self._key(round_, board, cards) for cards in wanted]
        missing = [i for i, (key, _) in enumerate(keys) if key not in self._kept]
        if missing:
            left = np.setdiff1d(np.arange(self.rules.deck_size), board)
            completions = completion_sets(left, sum(self.rules.board_cards) - board.shape[0])
            mine = np.stack([wanted[i] for i in missing]).astype(np.int64)
            margin, count = showdown_tables(mine, self.hands, self.masks, board, completions, self.rules.num_suits)
            for row, i in enumerate(missing):
                key, perm = keys[i]
                kept_margin, kept_count = np.empty_like(margin[row]), np.empty_like(count[row])
                kept_margin[self.row_perms[perm]] = margin[row]
                kept_count[self.row_perms[perm]] = count[row]
                self._kept[key] = (kept_margin, kept_count)
                self.enumerated += 1
            while len(self._kept) > CACHED_TABLES:
                self._kept.popitem(last=False)
        key, perm = keys[0]
        self._kept.move_to_end(key)
        kept_margin, kept_count = self._kept[key]
        rows = self.row_perms[perm]
        return kept_margin[rows].astype(np.float64), kept_count[rows].astype(np.float64)


@dataclass(frozen=True)
class LBRDecision:
    """One decision of sampled LBR, as :func:`sampled_lbr` reports it to ``on_decision``."""

    seat: int
    node: int
    cards: IntArray
    """The hand's cards: player 0's hole cards, player 1's, then the board (:meth:`HoldemEngine.deal`)."""
    actions: tuple[int, ...]
    """The betting before the decision, OpenSpiel's ids from the root."""
    action: int
    """What LBR did."""
    utilities: Mapping[int, float]
    """:math:`U` of each legal action; empty before round ``call_until``."""
    win: float | None
    fold: float | None


@dataclass
class _Hand:
    """The hand LBR is playing: the deal, LBR's seat and hole cards, the hole cards it holds in the pair's other
    hand, the agent's hand's row in the hand table, and the agent's answers so far, one per node."""

    cards: IntArray
    seat: int
    mine: IntArray
    partner: IntArray | None
    row: int
    answers: dict[int, FloatArray] = field(default_factory=dict)


class _Game:
    """One LBR run: the engine, the agent, the showdown tables and the options; each hand played is a
    :class:`_Hand`."""

    def __init__(
        self,
        engine: HoldemEngine,
        agent: RangeQuery,
        tables: ShowdownTables,
        call_until: int,
        on_decision: Callable[[LBRDecision], None] | None,
        last_round: str = "sampled",
    ) -> None:
        self.engine = engine
        self.last_round = last_round
        """How the last round is scored (:data:`LAST_ROUND`)."""
        self.agent = agent
        self.hands = tables.hands
        self.masks = tables.masks
        self.index = hand_index_table(tables.hands, engine.rules.deck_size)
        self.tables = tables
        self.call_until = call_until
        self.on_decision = on_decision

    def pairs(
        self, seat: str, pairs: int, rng: np.random.Generator, progress: Callable[[int], object] | None
    ) -> FloatArray:
        """LBR's mean payoff over each of ``pairs`` duplicate pairs, dealt and played with ``rng``; ``progress(2)``
        after each pair."""
        k = self.engine.rules.num_hole_cards
        values = np.empty(pairs)
        for i in range(pairs):
            cards = self.engine.deal(rng)
            if seat == "both":
                played = ((0, cards), (1, cards))
            else:
                swapped = np.concatenate((cards[k : 2 * k], cards[:k], cards[2 * k :]))
                played = ((int(seat), cards), (int(seat), swapped))
            partner = played[1][1][played[1][0] * k : (played[1][0] + 1) * k]
            total = self.play(played[0][1], played[0][0], partner, rng)
            total += self.play(played[1][1], played[1][0], None, rng)
            values[i] = total / 2
            if progress is not None:
                progress(2)
        return values

    def play(self, cards: IntArray, seat: int, partner: IntArray | None, rng: np.random.Generator) -> float:
        """LBR's payoff in seat ``seat`` of the hand dealt ``cards``, the agent drawing from ``rng``; ``partner``:
        the hole cards LBR holds in the pair's other hand, on the same board."""
        engine, betting = self.engine, self.engine.betting
        k = engine.rules.num_hole_cards
        mine, theirs = cards[seat * k : (seat + 1) * k], cards[(1 - seat) * k : (2 - seat) * k]
        hand = _Hand(cards, seat, mine, partner, int(self.index[tuple(np.sort(theirs).tolist())]))
        reach = ((self.masks & int(board_mask(mine.tolist()))) == 0).astype(np.float64)  # r(o): uniform, o ∩ h = ∅
        node, round_, actions = engine.root, 0, list[int]()
        board = engine.board(cards, 0)
        while True:
            kind = int(betting.kind[node])
            if kind == DEAL:
                node = engine.child(node, 0)
                round_ = int(betting.round[node])
                board = engine.board(cards, round_)
                reach[(self.masks & int(board_mask(board.tolist()))) != 0] = 0.0  # o ∩ B ≠ ∅: r(o) = 0
                if self.last_round != "sampled" and round_ == engine.rules.num_rounds - 1:
                    return self._last_round(hand, node, board, actions, reach)
                continue
            if kind != DECISION:
                return engine.payoffs(node, cards)[seat]
            if int(betting.player[node]) != seat:
                sigma = self._ask(hand, node, board, actions, reach)
                column = sigma[:, hand.row]
                cumulative = np.cumsum(column / column.sum())
                choice = min(int(np.searchsorted(cumulative, rng.random(), side="right")), column.shape[0] - 1)
                reach *= sigma[choice]  # r(o) <- r(o) sigma(d, o, a)
            else:
                choice = self._decide(hand, node, round_, board, actions, reach)
            actions.append(int(betting.action[int(betting.first_child[node]) + choice]))
            node = int(betting.first_child[node]) + choice

    def _last_round(self, hand: _Hand, entry: int, board: IntArray, actions: list[int], reach: FloatArray) -> float:
        r"""LBR's payoff from the last round's ``entry`` in expectation (module docstring): :math:`V(o^*)` for the
        agent's hand :math:`o^*` (``"expected"``), or :math:`\sum_o r(o) V(o) / \sum_o r(o)` (``"over-range"``).
        LBR decides as in play, from its range :math:`r(o) \pi_-(\cdot \mid o)` along the way; every action of the
        agent is walked, weighted by :math:`\sigma(d, o, a)`, without recursion."""
        engine, betting, seat, row = self.engine, self.engine.betting, hand.seat, hand.row
        margin, _ = self.tables.tables(engine.rules.num_rounds - 1, board, hand.mine, hand.partner)
        # margin: sign(rho(h B) - rho(o B))
        values = np.zeros_like(reach)  # sum_z r(o) pi_-(z | o) u(z, o)
        stack = [(entry, actions, reach)]
        while stack:
            node, taken, weight = stack.pop()
            kind, first = int(betting.kind[node]), int(betting.first_child[node])
            if kind == FOLD_NODE:
                folder = int(betting.player[node])
                stake = float(betting.spent[node, folder]) * engine.payoff_scale
                values += (stake if folder != seat else -stake) * weight
            elif kind == SHOWDOWN:
                values += float(betting.spent[node, seat]) * engine.payoff_scale * margin * weight
            elif int(betting.player[node]) != seat:
                sigma = self._ask(hand, node, board, taken, weight)
                for i in range(int(betting.num_children[node])):
                    branch = weight * sigma[i]  # r(o) sigma(d, o, a)
                    if branch[row] > 0.0 if self.last_round == "expected" else branch.any():
                        stack.append((first + i, [*taken, int(betting.action[first + i])], branch))
            else:
                choice = self._decide(hand, node, int(betting.round[node]), board, taken, weight)
                stack.append((first + choice, [*taken, int(betting.action[first + choice])], weight))
        if self.last_round == "expected":
            return float(values[row] / reach[row])  # V(o*): r(o*) > 0, the agent having played its actions
        return float(values.sum() / reach.sum())

    def _ask(self, hand: _Hand, node: int, board: IntArray, actions: list[int], reach: FloatArray) -> FloatArray:
        """The agent's ``(actions, H)`` answer at ``node``, asked once per node and hand (the range, and so the
        hands asked for, is the same each time a hand asks at a node)."""
        found = hand.answers.get(node)
        if found is None:
            live = reach > 0.0
            live[hand.row] = True
            found = hand.answers[node] = np.asarray(self.agent.probabilities(node, board, tuple(actions), live))
            n = int(self.engine.betting.num_children[node])
            if found.shape != (n, self.hands.shape[0]):
                raise AgentQueryError(f"an agent answered {found.shape} at a node with {n} actions")
        return found

    def _decide(
        self, hand: _Hand, node: int, round_: int, board: IntArray, actions: list[int], reach: FloatArray
    ) -> int:
        """The index of the child LBR takes at ``node`` (module docstring)."""
        betting, seat = self.engine.betting, hand.seat
        legal = self.engine.legal_actions(node)
        call = legal.index(CALL)
        utilities: dict[int, float] = {}
        win = fold = None
        choice = call
        if round_ >= self.call_until:
            margin, count = self.tables.tables(round_, board, hand.mine, hand.partner)
            seen = float(reach @ count)  # sum_o r(o) K(o)
            if seen > 0.0:
                win = 0.5 + float(reach @ margin) / (2.0 * seen)  # w = 1/2 + sum r M / (2 sum r K)
                spent = betting.spent
                pot = float(spent[node, 0] + spent[node, 1])
                asked = float(spent[node, 1 - seat] - spent[node, seat])
                utilities[CALL] = win * pot - (1.0 - win) * asked  # U(call) = w P - (1 - w) A
                if FOLD in legal:
                    utilities[FOLD] = 0.0
                if RAISE in legal:
                    child = int(betting.first_child[node]) + legal.index(RAISE)
                    more = float(spent[child, seat] - spent[node, 1 - seat])  # a: what the raise adds to a call
                    fold = self._fold(hand, child, board, [*actions, RAISE], reach)
                    utilities[RAISE] = fold * pot + (1.0 - fold) * (  # U(raise) = f P + (1 - f)(...)
                        win * (pot + more) - (1.0 - win) * (asked + more)
                    )
                best = max(utilities[a] for a in PREFERENCE if a in utilities)
                choice = legal.index(next(a for a in PREFERENCE if a in utilities and utilities[a] == best))
        if self.on_decision is not None:
            decision = LBRDecision(seat, node, hand.cards, tuple(actions), legal[choice], utilities, win, fold)
            self.on_decision(decision)
        return choice

    def _fold(self, hand: _Hand, child: int, board: IntArray, actions: list[int], reach: FloatArray) -> float:
        """:math:`f = \\sum_o r(o) \\sigma(d', o, \\text{fold}) / \\sum_o r(o)` at ``child`` (:math:`d'`)."""
        betting = self.engine.betting
        if int(betting.kind[child]) != DECISION or int(betting.player[child]) == hand.seat:
            return 0.0
        if int(betting.action[int(betting.first_child[child])]) != FOLD:
            return 0.0
        total = float(reach.sum())
        if total <= 0.0:
            return 0.0
        return float(reach @ self._ask(hand, child, board, actions, reach)[0]) / total


def sampled_lbr(
    engine: HoldemEngine,
    agent: RangeQuery,
    seat: str,
    pairs: int,
    rng: np.random.Generator,
    *,
    call_until: int,
    show_progress: bool = False,
    on_decision: Callable[[LBRDecision], None] | None = None,
    tables: ShowdownTables | None = None,
    last_round: str = "sampled",
) -> Sampled:
    """LBR against ``agent`` over ``pairs`` duplicate pairs of hands of ``engine``'s game (module docstring), cards
    and the agent's moves drawn from ``rng``; ``on_decision`` sees each of LBR's decisions (with ``last_round``
    ``"expected"``, those of the last round's walk too); ``tables``: showdown tables kept from an earlier run of the
    same game (a new store by default)."""
    _check_play(seat, pairs, last_round)
    rules = engine.rules
    check_call_until(rules, call_until)
    if tables is None:
        tables = ShowdownTables(rules, private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards))
    elif tables.rules != rules:
        raise InputError("the showdown tables are of another game")
    game = _Game(engine, agent, tables, call_until, on_decision, last_round)
    samples = PairSamples(pairs)
    with tqdm(total=2 * pairs, disable=not show_progress, unit="hand", leave=False, mininterval=0.5) as bar:
        for value in game.pairs(seat, pairs, rng, bar.update).tolist():
            samples.add(value)
    return _sampled(samples)


def pair_values(
    engine: HoldemEngine,
    agent: RangeQuery,
    seat: str,
    seeds: Sequence[np.random.SeedSequence],
    *,
    call_until: int,
    tables: ShowdownTables,
    last_round: str = "sampled",
) -> FloatArray:
    """LBR's mean payoff over each duplicate pair against ``agent``, pair ``i`` dealt and played from its own seed
    ``seeds[i]``: two agents scored on the same seeds meet the same deals, so their difference is measured pair by
    pair (common random numbers)."""
    _check_play(seat, max(len(seeds), 2), last_round)
    check_call_until(engine.rules, call_until)
    game = _Game(engine, agent, tables, call_until, None, last_round)
    return np.array([game.pairs(seat, 1, np.random.default_rng(seed), None)[0] for seed in seeds])


def _check_play(seat: str, pairs: int, last_round: str) -> None:
    check_last_round(last_round)
    if seat not in SEATS:
        raise ParameterError("{seat} must be one of {seats}; got {given!r}", seats=", ".join(SEATS), given=seat)
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 2:
        raise ParameterError("LBR needs at least 2 {pairs} of hands to estimate its error, got {given!r}", given=pairs)


def check_last_round(last_round: str) -> None:
    """Refuse a ``last_round`` that is not one of :data:`LAST_ROUND`."""
    if last_round not in LAST_ROUND:
        raise ParameterError(
            "{last_round} must be one of {choices}; got {given!r}", choices=", ".join(LAST_ROUND), given=last_round
        )


def _sampled(samples: PairSamples) -> Sampled:
    pairs, mean, deviation = samples.moments()
    return Sampled(pairs, mean, deviation / math.sqrt(pairs))


def lbr_game(game_id: str, seat: str, seed: int) -> str:
    """The canonical id of ``game_id``, once it is checked to be a game LBR plays (a two-player limit
    ``universal_poker`` game or RLCard's limit hold'em), and ``seat`` and ``seed`` are checked; refused in one line."""
    if seat not in SEATS:
        raise ParameterError("{seat} must be one of {seats}; got {given!r}", seats=", ".join(SEATS), given=seat)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ParameterError("{seed} must be a whole number of at least 0, got {given!r}", given=seed)
    game = canonical_game_id(game_id)
    if game != RLCARD_LIMIT and (not game.startswith(PREFIX) or limit_rules(game) is None):
        raise InputError(
            f"LBR runs on two-player limit universal_poker games (fhp, holdem-6, hulh, ...) and {RLCARD_LIMIT}, "
            f"not {game}"
        )
    return game


def no_public_tree(game_id: str) -> str:
    """Why ``game_id`` (canonical) has no public tree to compute LBR exactly on: RLCard's limit hold'em, or a
    ``universal_poker`` game whose tree is too large (``hulh``); empty for every other game."""
    if game_id == RLCARD_LIMIT:
        return f"{RLCARD_LIMIT} is played in RLCard's engine, which has no public tree"
    if not game_id.startswith(PREFIX) or limit_rules(game_id) is None:
        return ""
    engine = holdem_engine(game_id)
    at_least = segments_at_least(engine.betting, engine.rules)
    if at_least <= MAX_SEGMENTS:
        return ""
    return (
        f"its public tree would have at least {at_least:.2g} segments, more than the {MAX_SEGMENTS:,} one machine holds"
    )


@dataclass(frozen=True)
class LBRRun:
    """What every ``cfr-agents lbr`` report states first: the agent, the game, its units, the seat(s) LBR played
    and the round it checks or calls until."""

    agent: str
    game: str
    units: str
    big_blind: float
    """A big blind in :attr:`units`."""
    seat: str
    call_until: int

    def mbb(self, value: float) -> float:
        """``value`` in milli-big-blinds per hand."""
        return value / self.big_blind * 1000

    def run_json(self) -> dict[str, Any]:
        """The fields above (but the big blind) for ``--json``."""
        return {
            "agent": self.agent,
            "game": self.game,
            "units": self.units,
            "seat": self.seat,
            "call_until": self.call_until,
        }


@dataclass(frozen=True)
class SampledLBRReport(LBRRun):
    """``cfr-agents lbr`` on a game with no public tree: LBR's value over sampled duplicate pairs alone."""

    sampled: Sampled
    last_round: str
    """How the last round was scored (:data:`LAST_ROUND`)."""
    no_exact: str
    """Why no exact value is computed."""
    setup_seconds: float
    """Building the engine and reading the agent."""
    play_seconds: float
    tables: int
    """Showdown tables enumerated."""

    def to_json(self) -> dict[str, Any]:
        sampled = self.sampled
        return {
            **self.run_json(),
            "hands": 2 * sampled.pairs,
            "value": sampled.mean,
            "standard_error": sampled.standard_error,
            "ci95": list(sampled.ci95),
            "value_mbb": self.mbb(sampled.mean),
            "last_round": self.last_round,
            "exact": None,
            "exact_mbb": None,
            "best_response": None,
            "best_response_mbb": None,
            "ratio": None,
            "no_exact": self.no_exact,
            "exact_seconds": None,
            "setup_seconds": self.setup_seconds,
            "play_seconds": self.play_seconds,
            "showdown_tables": self.tables,
        }


BLOCK_PAIRS: Final = 500
"""Pairs per block of :func:`sampled_lbr_report`: each block is dealt and played from its own child of the seed's
:class:`numpy.random.SeedSequence`, so the hands do not depend on how many processes play them."""


@dataclass(frozen=True)
class _Block:
    """A block of pairs for one process to play: plain data (the agent is named, not held)."""

    name: str
    game: str
    seat: str
    call_until: int
    last_round: str
    pairs: int
    seed: np.random.SeedSequence


@functools.lru_cache(maxsize=1)
def _prepared(name: str, game: str) -> tuple[HoldemEngine, RangeQuery, ShowdownTables]:
    """The engine, the agent ``name`` asked for every hand at once, and the showdown tables of ``game``, built once
    per process and report."""
    opponent = load_opponent(name, game)
    if opponent.game_id != game:
        raise InputError(f"agent {name!r} plays {opponent.game_id}, not {game}")
    agent = opponent.agent
    engine = agent.raw.game.engine if isinstance(agent, AbstractStrategyAgent) else holdem_engine(game)
    rules = engine.rules
    private = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    return engine, range_query(agent, engine, private, name), ShowdownTables(rules, private)


def _play_block(block: _Block, progress: Callable[[int], object] | None = None) -> tuple[FloatArray, int]:
    """Each pair's mean payoff to LBR over ``block``, and the showdown tables enumerated for it."""
    engine, query, tables = _prepared(block.name, block.game)
    before = tables.enumerated
    game = _Game(engine, query, tables, block.call_until, None, block.last_round)
    values = game.pairs(block.seat, block.pairs, np.random.default_rng(block.seed), progress)
    return values, tables.enumerated - before


def sampled_lbr_report(
    name: str,
    game_id: str,
    *,
    hands: int,
    seat: str = "both",
    seed: int = 0,
    call_until: int | None = None,
    workers: int = 1,
    show_progress: bool = False,
    last_round: str = "sampled",
) -> SampledLBRReport:
    """LBR against the agent ``name`` (a strategy or model file, or a named opponent) on ``game_id``, a game with no
    public tree (:func:`no_public_tree`), over ``hands`` hands in duplicate pairs, in blocks of
    :data:`BLOCK_PAIRS` pairs played by ``workers`` local processes (:class:`cfr_agents.jobs.LocalPool`), the cards
    and draws of each block from its own child of ``seed``; ``call_until`` defaults to
    :func:`first_enumerable_round`; ``last_round`` (:data:`LAST_ROUND`): the last round played, or in expectation."""
    started = time.perf_counter()
    game = lbr_game(game_id, seat, seed)
    check_last_round(last_round)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ParameterError("{workers} must be at least 1, got {given!r}", given=workers)
    reason = no_public_tree(game)
    if not reason:
        raise InputError(f"{game} has a public tree: LBR is computed exactly there (eval.lbr.lbr_report)")
    if isinstance(hands, bool) or not isinstance(hands, int) or hands < 4 or hands % 2:
        raise ParameterError(
            "{hands} must be an even number of at least 4 (duplicate pairs): with no public tree, LBR's value is "
            "the hands played alone; got {given!r}",
            given=hands,
        )
    try:
        engine, _, _ = _prepared(name, game)
        rules = engine.rules
        chosen = first_enumerable_round(rules) if call_until is None else call_until
        check_call_until(rules, chosen)
        pairs = hands // 2
        seeds = np.random.SeedSequence(seed).spawn(-(-pairs // BLOCK_PAIRS))
        blocks = [
            _Block(name, game, seat, chosen, last_round, min(BLOCK_PAIRS, pairs - i * BLOCK_PAIRS), child)
            for i, child in enumerate(seeds)
        ]
        computed = time.perf_counter()
        samples, enumerated = PairSamples(pairs), 0
        with tqdm(total=hands, disable=not show_progress, unit="hand", leave=False, mininterval=0.5) as bar:
            if workers == 1:
                played: Iterable[tuple[FloatArray, int]] = (_play_block(block, bar.update) for block in blocks)
            else:
                _prepared.cache_clear()  # each worker reads the agent itself
                played = LocalPool(workers).map(_play_block, blocks, lambda block, _: bar.update(2 * block.pairs))
            for values, count in played:  # in block order, however many processes played them
                for value in values.tolist():
                    samples.add(value)
                enumerated += count
    finally:
        _prepared.cache_clear()
    return SampledLBRReport(
        agent=name,
        game=game,
        units=engine.units,
        big_blind=rules.big_blind * engine.payoff_scale,
        seat=seat,
        call_until=chosen,
        sampled=_sampled(samples),
        last_round=last_round,
        no_exact=reason,
        setup_seconds=computed - started,
        play_seconds=time.perf_counter() - computed,
        tables=enumerated,
    )
