r"""AIVAT on limit hold'em without a game tree: check-down values, imagined hands and cross-fitted gains.

:mod:`eval.aivat` scores a hand on the compiled tree, where the value function is the known strategy's exact
self-play value at every node. Limit hold'em (``rlcard:limit-holdem``, ``hulh``, ``fhp``, any two-player limit
``universal_poker`` game) has no such tree, so this module scores the hand on
:class:`~adapters.holdem.engine.HoldemEngine` with a value function that needs none (Burch, Schmid, Moravčík,
Morrill & Bowling, AAAI 2018: any value function fixed before the hand keeps AIVAT unbiased).

**Value function.** With both hands known after the hand, let :math:`m_K(h) = 2 e_K(h) - 1` be the known seat
:math:`K`'s equity margin, :math:`e_K` its probability of winning the showdown (ties half) over every completion
:math:`B'` of the board dealt by :math:`h`:
:math:`m_K(h) = \mathbb E_{B'}[\operatorname{sign}(\rho(o_K \cup B') - \rho(o_{-K} \cup B'))]`, with :math:`\rho`
the evaluator. At a betting node :math:`h` of round :math:`r`,

.. math:: v_K(h) = f(h)\, m_K(h) + e(h), \qquad f(h) = \sum_j g_j\, \phi_j(h), \qquad e(h) = \sum_j g'_j\, \phi_j(h),

with four features a round, each nonzero in its own round only: :math:`\phi = c(h)`, the larger of the two players'
chips in the pot (in the game's units), and :math:`\phi = b_r`, the round's bet, each once at the nodes where
:math:`K` acts and once where the other seat does (:func:`_features`). :math:`f` weighs the margin; :math:`e`, which
reads no card, is what :math:`K` wins beyond it, as when the player to act folds more or less often than a showdown
would pay. With :math:`g` = 1 on the stakes, 0 on the bets, and :math:`g' = 0`, it is the **check-down value**: what
:math:`K` wins if the player to act calls and both check to the
showdown. At a terminal, :math:`v_K(z) = u_K(z)`, and :math:`v_{-K} = -v_K`. The AIVAT value of the hand is then,
as in :mod:`eval.aivat`,

.. math::

    \hat u_p(z) = u_p(z)
      - \sum_{h c \sqsubseteq z,\ h \in H_c} \Big[ v_p(hc) - \sum_{c'} \pi_c(c' \mid h)\, v_p(hc') \Big]
      - \sum_{h a \sqsubseteq z,\ P(h) = K} \Big[ v_p(ha) - \sum_{a'} \sigma_K(a' \mid h)\, v_p(ha') \Big]
      - \sum_{h a \sqsubseteq z,\ P(h) = -K} \Big[ v_p(ha) - \sum_{a'} \tau(a' \mid h)\, v_p(ha') \Big],

the last sum only when the other seat's agent can be asked too (its strategy :math:`\tau`, at the hand it holds or
each it is imagined to hold; otherwise its moves get no correction), and the chance sums need no enumeration of the
cards, since :math:`m_K` is a martingale, :math:`\sum_{c'} \pi_c(c' \mid h)\, m_K(hc') = m_K(h)`, and no chip moves
at a deal: at a deal node, :math:`\sum_{c'} \pi_c(c' \mid h)\, v_K(hc') = f(h')\, m_K(h) + e(h')` with
:math:`h'` the round's first betting node, so that :math:`e` leaves no correction at a deal; at the deal of the
hands (and RLCard's draw of the small blind's seat) it is :math:`e(h')`, the deal being exchangeable.

:math:`m_K` is enumerated exactly over every completion of the board when that takes at most
:data:`EXACT_EVALUATIONS` evaluations (a hold'em flop or later), and is otherwise estimated from
:data:`EQUITY_SAMPLES` completions drawn at random by a generator of its own (hold'em's and FHP's preflop;
:meth:`HoldemAivat.range_margins`). That estimate is unbiased, independent of the cards to come and of both players'
moves, and :math:`\hat u_p` is linear in it: the estimate stays unbiased, with a little variance added.

**Imagined hands.** When :math:`K` answers for every private hand at once (our abstract strategies, uniform play,
agents blind to their cards: :func:`eval.ranges.range_query`), the estimate is the paper's imaginary
observations: :math:`\hat u_p` computed with :math:`K` holding each hand :math:`o` it may hold, averaged with
:math:`w(o) \propto \prod_t \sigma_K(a_t \mid h_t, o)` -- the expectation of :math:`\hat u_p` given everything but
:math:`K`'s cards, so unbiased too, and free of :math:`K`'s card luck. When the other seat's agent answers so too,
its hands :math:`o'` are imagined as well, with :math:`w'(o') \propto \prod_t \tau(a_t \mid h_t, o')`, and the
estimate averages over the pairs with :math:`W(o, o') = w(o)\, w'(o')` over the pairs that share no card with each
other or the board: the expectation given the public history, free of both seats' card luck. An agent asked hand by
hand is imagined too when that is cheap (RLCard's rule agents: :attr:`~eval.ranges.PerHandQuery.imaginable`);
others (RLCard's networks, OpenSpiel policies) are asked for the hand they hold only, their weights one-hot.

Over pairs, every correction is :math:`\alpha(o)\, m_r(o, o') + \beta(o)` or the same in :math:`o'`
(:meth:`HoldemAivat.parts`), so the average needs each hand's margin against the other seat's weights,
:math:`R_r(o) = \sum_{o'} w'(o') m_r(o, o')` (:meth:`HoldemAivat.range_margins`): one sweep of the hands in order of
strength a completion of the board (:func:`range_margins`), never the :math:`H^2` pairs.

**Gains.** :math:`\hat u_p` is linear in :math:`g`: :math:`\hat u_p = x_0 - g \cdot x` (:meth:`HoldemAivat.parts`).
The recorder (:class:`HoldemAivatRecorder`) keeps :math:`x_0, x` of every hand and values the match at its end
by cross-fitting (:func:`cross_fitted`): the duplicate pairs fall into two folds, and each fold is valued with the
gains of least variance on the other fold (:func:`fitted_gains`, shrunk toward the check-down gains). A hand's
value function is fixed by hands played independently of it, so each fold's estimate is unbiased; the interval
treats the pairs as independent, which their shared gains make true only as the folds grow.

:math:`K` is the agent asked for its strategy (:func:`eval.match.known_scorer`), and the other seat's agent is asked
too when it can be. Their probabilities must be the ones they played the hand with. Imagined hands stay unbiased
with :math:`\tau`'s corrections: :math:`\tau` reads the other seat's cards and the public history, never
:math:`K`'s, so each term has expectation 0 whatever hand :math:`K` is imagined to hold. Hands come from matches as
:class:`~eval.hand_log.HandReader` reads them: OpenSpiel's ``state.history()`` as it is, RLCard's env translated
into the same history (:func:`rlcard_history`), both in the engine's positions.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from numba import njit, prange

from adapters.holdem.betting import DEAL, DECISION, SHOWDOWN
from adapters.holdem.cards import board_mask, hand_index_table, hand_masks, private_hands, rank_hands
from adapters.holdem.engine import HoldemEngine, rlcard_card
from adapters.inputs import InputError
from cfr_agents.holdem_play import RLCARD_IDS
from cfr_agents.solvers.hand_sweeps import fold, showdown
from eval.aivat import AivatEstimate, AivatRecorder
from eval.environments import PairSamples
from eval.lbr_sampled import completion_sets
from eval.ranges import FloatArray, IntArray, PerHandQuery, RangeQuery

RIDGE_HANDS: Final = 20
"""How many hands' worth of weight the default gains carry in a fit (:func:`fitted_gains`)."""
EXACT_EVALUATIONS: Final = 2_000_000
"""The most hand evaluations one table of margins enumerates exactly (a hold'em flop: 1,176 completions x 1,326
hands); a table that needs more is estimated from :data:`EQUITY_SAMPLES` completions."""
EQUITY_SAMPLES: Final = 1024
"""Completions of the board drawn to estimate a table of equities too long to enumerate."""


class HoldemAivat:
    """The AIVAT value of hands of ``engine``'s game, ``known`` answering for the known seat and ``other``, when the
    other seat's agent can be asked too, for it (module docstring).

    ``rng`` draws the boards of the sampled equities only."""

    def __init__(
        self, engine: HoldemEngine, known: RangeQuery, rng: np.random.Generator, other: RangeQuery | None = None
    ) -> None:
        rules = engine.rules
        self.engine = engine
        self.known = known
        self.other = other
        """The other seat's agent, asked at the hands it may hold: its moves are corrected too; ``None``: they are
        not."""
        self.imaginary = imagined(known)
        """Whether :math:`K`'s other private hands are imagined (module docstring): when it answers for every hand
        at once, or is cheap to ask hand by hand; another agent asked hand by hand is asked for the hand it holds
        only."""
        self.imagine_other = other is not None and imagined(other)
        """Whether the other seat's private hands are imagined too, on the same terms."""
        if rules.num_hole_cards > 2:
            raise InputError(f"AIVAT on the hold'em engine takes one or two hole cards, not {rules.num_hole_cards}")
        self.rng = rng
        self.hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
        self.masks = hand_masks(self.hands).astype(np.int64)
        self.index = hand_index_table(self.hands, rules.deck_size)
        rounds = engine.betting.round.astype(np.int64)
        stake = engine.betting.spent.max(axis=1) * engine.payoff_scale
        bet = engine.payoff_scale * np.asarray(rules.raise_size, dtype=np.float64)[rounds]
        self.features = tuple(
            _features(rounds, engine.betting.player != seat, stake, bet, rules.num_rounds) for seat in (0, 1)
        )
        r""":math:`\phi_j(h)` of every betting node, ``(N, 4 R)`` for each known seat (:func:`_features`)."""
        self.gains = np.zeros(8 * rules.num_rounds)
        self.gains[: 2 * rules.num_rounds] = 1.0
        """:math:`(g, g')`: the check-down value's gains by default (module docstring)."""

    def range_margins(
        self, round_: int, board: IntArray, ranges: FloatArray, read: np.ndarray | None = None
    ) -> FloatArray:
        r""":math:`R_v(o) = \sum_{o'} x_v(o')\, m(o, o')` on the board ``board`` of ``round_`` for each range
        :math:`x_v`, a row of ``ranges`` ``(V, H)``: :math:`m(o, o') = 2 e(o, o') - 1` is the margin of hand
        :math:`o` over :math:`o'` (its probability of winning the showdown, ties half, over every completion of the
        board outside both hands), and the sum runs over the hands that share no card with :math:`o` or the board.
        Read for the hands of the boolean mask ``read`` only (0 elsewhere), by default those where a range is
        positive.

        With :math:`n` cards outside the board and :math:`s` still to come, the completions are all
        :math:`\binom{n}{s}` when that takes at most :data:`EXACT_EVALUATIONS` evaluations, else
        :data:`EQUITY_SAMPLES` drawn uniformly from them; either way, with :math:`N` of them,
        :math:`\hat m(o, o') = \binom{n}{s} / (N \binom{n - 2k}{s}) \sum_c [c \cap (o \cup o') = \emptyset]\,
        \operatorname{sign}(\rho(o B c) - \rho(o' B c))`: exact when enumerated, and unbiased when sampled (a
        completion misses both hands with probability :math:`\binom{n - 2k}{s} / \binom{n}{s}`), so that a sum over
        hands is a sum over completions of one sweep of the hands in order of strength
        (:func:`range_margins`)."""
        rules = self.engine.rules
        rows = np.flatnonzero((ranges > 0.0).any(axis=0) if read is None else read)
        size = sum(rules.board_cards) - board.shape[0]
        rest = np.setdiff1d(np.arange(rules.deck_size), board)
        everything = math.comb(rest.shape[0], size)
        if everything * rows.shape[0] <= EXACT_EVALUATIONS:
            completions = completion_sets(rest, size)
        else:  # each row: `size` distinct cards outside the board, uniformly and independently
            keys = self.rng.random((EQUITY_SAMPLES, rest.shape[0]))
            completions = rest[np.argpartition(keys, size, axis=1)[:, :size]]
        scale = everything / (completions.shape[0] * math.comb(rest.shape[0] - 2 * rules.num_hole_cards, size))
        out = np.zeros(ranges.shape)
        out[:, rows] = scale * range_margins(
            self.hands[rows], self.masks[rows], board, completions, np.ascontiguousarray(ranges[:, rows]),
            rules.num_suits,
        )  # fmt: skip
        return out

    def disjoint_sums(self, ranges: FloatArray) -> FloatArray:
        r""":math:`\sum_{o' \cap o = \emptyset} x_v(o')` for every hand :math:`o` and range :math:`x_v`, a row of
        ``ranges`` ``(V, H)``: ``(V, H)``, by inclusion-exclusion over :math:`o`'s cards (the public-tree kernel's
        fold at payoff 1 with :math:`x_v` as the opponent's reach, :func:`cfr_agents.solvers.hand_sweeps.fold`)."""
        out = np.empty(ranges.shape)
        everywhere, card_sum = np.ones(ranges.shape[1]), np.empty(64)
        for v in range(ranges.shape[0]):
            fold(np.ascontiguousarray(ranges[v]), self.hands, card_sum, 1.0, everywhere, out[v])
        return out

    def history_value(self, history: Sequence[int], payoff_seat: int, known_seat: int) -> float:
        r""":math:`\hat u_p(z)` of the hand whose universal_poker history is ``history`` (each player's hole cards,
        player 0's first, then the betting with each round's board cards where the round begins), for
        :math:`p` = ``payoff_seat`` with :math:`K` = ``known_seat``, both positions of the engine."""
        return self.score(history, payoff_seat, known_seat)[1]

    def score(self, history: Sequence[int], payoff_seat: int, known_seat: int) -> tuple[float, float]:
        r""":math:`u_p(z)` and :math:`\hat u_p(z)` of the hand ``history`` (:meth:`history_value`) with the value
        function's gains :attr:`gains`."""
        u, parts = self.parts(history, payoff_seat, known_seat)
        return u, float(parts[0] - self.gains @ parts[1:])

    def parts(self, history: Sequence[int], payoff_seat: int, known_seat: int) -> tuple[float, FloatArray]:
        r""":math:`u_p(z)`, and :math:`\hat u_p(z)` as :math:`x_0 - (g, g') \cdot x` for any gains :math:`(g, g')`:
        the AIVAT value of the hand averaged over the pairs of hands :math:`(o, o')` the two seats are imagined to
        hold, with weights :math:`W(o, o')` (module docstring). :math:`x_0` holds the payoffs and the exact terminal
        values; :math:`x_{1 + j}` the margin terms of feature :math:`\phi_j` with gain 1, then
        :math:`x_{1 + 4R + j}` its terms without a margin (:func:`_features`).

        Every value met is :math:`v_K = \gamma\, m_r(o, o') + \delta` with :math:`r` the round of the board dealt
        so far and :math:`\gamma, \delta` read off the node, so each correction is
        :math:`\alpha(o)\, m_r + \beta(o)` for the known seat's moves and the chance events, and
        :math:`\alpha'(o')\, m_r + \beta'(o')` for the other seat's: the average over the pairs is
        :math:`\sum_r [\sum_o w(o) \alpha_r(o) R_r(o) - \sum_{o'} w'(o') \alpha'_r(o') R'_r(o')] + \dots`,
        with :math:`R_r, R'_r` each seat's margins against the other's final weights (:meth:`range_margins`)."""
        engine, betting = self.engine, self.engine.betting
        hand = _Hand.read(engine, history)
        other = hand.holes[1 - known_seat]
        actual = int(self.index[tuple(np.sort(hand.holes[known_seat]).tolist())])
        held = int(self.index[tuple(np.sort(other).tolist())])
        if self.masks[actual] & int(board_mask([*other.tolist(), *hand.board.tolist()])):
            raise InputError(f"the hand {list(history)} deals a card twice")
        free = ((self.masks & int(board_mask(hand.board.tolist()))) == 0).astype(np.float64)  # pairs: disjoint below
        weights = np.zeros((2, free.shape[0]))  # w(o) for K, w'(o') for the other seat
        weights[0] = free if self.imaginary else np.eye(1, free.shape[0], actual)[0]
        weights[1] = free if self.imagine_other else np.eye(1, free.shape[0], held)[0]
        features = self.features[known_seat]
        num_rounds, split = engine.rules.num_rounds, 1 + features.shape[1]
        rows = split + features.shape[1]
        alpha = np.zeros((2, num_rounds, rows, free.shape[0]))  # coefficients of m_r, per seat's hand
        beta = np.zeros((2, rows, free.shape[0]))  # and the terms without a margin

        def value(node: int) -> tuple[FloatArray, FloatArray]:
            r""":math:`(\gamma, \delta)` of :math:`v_K` at ``node``, ``(rows,)`` each (method docstring)."""
            gamma, delta = np.zeros(rows), np.zeros(rows)
            kind = int(betting.kind[node])
            if kind in (DECISION, DEAL):  # v = f(h) (2 e_K - 1) + e(h); at a deal, sum_c' pi(c') v(h c'):
                read = node if kind == DECISION else engine.child(node, 0)  # the next node's, as m_K is a martingale
                gamma[1:split] = features[read]
                delta[split:] = features[read]
            elif kind == SHOWDOWN:  # exact: the last board is dealt
                gamma[0] = float(betting.spent[node].max()) * engine.payoff_scale
            else:  # a fold reads no card
                delta[0] = engine.payoffs(node, hand.cards)[known_seat]
            return gamma, delta

        round_ = 0
        alpha[0, 0] += value(engine.root)[0][:, None]  # the deal: v(h c) - sum_c' pi(c') v(h c') = v(h c) - 0
        node, so_far, board = engine.root, list[int](), hand.board[:0]
        for action in hand.actions:
            while int(betting.kind[node]) == DEAL:
                before = value(node)[0]
                node = engine.child(node, 0)
                alpha[0, round_] -= before[:, None]  # v(h c) - sum_c' pi(c') v(h c'), the latter on the old board
                round_ = int(betting.round[node])
                board = engine.board(hand.cards, round_)
                alpha[0, round_] += value(node)[0][:, None]
            legal = engine.legal_actions(node)
            chosen = legal.index(action)
            first = int(betting.first_child[node])
            seat = 0 if int(betting.player[node]) == known_seat else 1
            query = self.known if seat == 0 else self.other
            if query is not None:  # v(h a) - sum_a' sigma(a' | h, o) v(h a'): sigma, K's; or tau, the other seat's
                sigma = np.asarray(query.probabilities(node, board, tuple(so_far), weights[seat] > 0.0))
                if seat == 1 and sigma[chosen, held] <= 0.0:
                    raise InputError(
                        f"the other agent took an action it gives probability 0 in the hand {list(history)}"
                    )
                children = [value(first + i) for i in range(len(legal))]
                gammas, deltas = np.stack([g for g, _ in children]), np.stack([d for _, d in children])
                alpha[seat, round_] += gammas[chosen][:, None] - gammas.T @ sigma
                beta[seat] += deltas[chosen][:, None] - deltas.T @ sigma
                weights[seat] *= sigma[chosen]  # w(o) <- w(o) sigma(a | h, o)
            so_far.append(action)
            node = engine.child(node, action)
        if weights[0, actual] <= 0.0:
            raise InputError(f"the known agent took an action it gives probability 0 in the hand {list(history)}")
        gamma, delta = value(node)
        alpha[0, round_] -= gamma[:, None]  # the terminal's value, with the corrections' sign flipped below
        beta[0] -= delta[:, None]
        pairs = self.disjoint_sums(weights[::-1])  # sum over the other seat's hands paired with each hand
        total = -((beta * (weights * pairs)[:, None, :]).sum(axis=(0, 2)))
        asked = 2 if self.other is not None else 1  # R'_r weighs the other seat's corrections only
        read = np.asarray((weights > 0.0).any(axis=0))
        for r in range(round_ + 1):
            margins = np.zeros(weights.shape)  # R_r(o), R'_r(o')
            margins[:asked] = self.range_margins(r, engine.board(hand.cards, r), weights[::-1][:asked], read)
            margins[1] *= -1.0  # m(o, o') = -m(o', o)
            total -= (alpha[:, r] * (weights * margins)[:, None, :]).sum(axis=(0, 2))
        parts = total / float((weights[0] * pairs[0]).sum())  # sum_(o, o') W(o, o') x(o, o') / sum W(o, o')
        parts[1:] *= -1.0  # x_j: the coefficient subtracted with its gain
        u = engine.payoffs(node, hand.cards)[payoff_seat]
        return u, parts if payoff_seat == known_seat else -parts


def _features(
    rounds: IntArray, other_acts: np.ndarray, stake: FloatArray, bet: FloatArray, num_rounds: int
) -> FloatArray:
    r""":math:`\phi(h)` of every betting node (module docstring), ``(N, 4 R)``: column :math:`2r + a` holds the
    stake :math:`c(h)` at the nodes of round :math:`r` where :math:`K` acts (:math:`a = 0`) or the other seat does
    (:math:`a = 1`, ``other_acts``), and column :math:`2R + 2r + a` the round's bet :math:`b_r` at the same nodes."""
    columns = 2 * rounds + other_acts.astype(np.int64)
    where = np.eye(2 * num_rounds)[columns]
    return np.concatenate((where * stake[:, None], where * bet[:, None]), axis=1)


def imagined(query: RangeQuery) -> bool:
    """Whether AIVAT imagines the other hands of the agent ``query`` asks: one that answers for every hand at once,
    or one asked hand by hand that is cheap to ask (:attr:`~eval.ranges.PerHandQuery.imaginable`)."""
    return not isinstance(query, PerHandQuery) or query.imaginable


@dataclass(frozen=True)
class _Hand:
    """A hand's cards in the engine's order (player 0's hole cards, player 1's, the board dealt) and bets."""

    cards: IntArray
    holes: tuple[IntArray, IntArray]
    board: IntArray
    actions: tuple[int, ...]

    @classmethod
    def read(cls, engine: HoldemEngine, history: Sequence[int]) -> _Hand:
        """The hand of the universal_poker ``history``, its bets checked legal and its end a terminal."""
        betting, k = engine.betting, engine.rules.num_hole_cards
        moves = iter(history[2 * k :])
        board: list[int] = []
        actions: list[int] = []
        node = engine.root
        while int(betting.kind[node]) in (DECISION, DEAL):
            if int(betting.kind[node]) == DEAL:
                node = engine.child(node, 0)
                board += _take(moves, engine.rules.board_cards[int(betting.round[node])], history)
                continue
            action = next(moves, None)
            legal = engine.legal_actions(node)
            if action not in legal:
                raise InputError(f"the hand {list(history)} has {action} where {legal} are legal")
            actions.append(action)
            node = engine.child(node, action)
        if next(moves, None) is not None:
            raise InputError(f"the hand {list(history)} goes on past its end")
        holes = np.asarray(history[:k], dtype=np.int64), np.asarray(history[k : 2 * k], dtype=np.int64)
        cards = np.concatenate((*holes, np.asarray(board, dtype=np.int64)))
        return cls(cards, holes, cards[2 * k :], tuple(actions))


CHUNKS: Final = 8
"""Parts the completions of :func:`range_margins` fall into, summed in order: a fixed number, so that the sums do not
depend on the threads that run them, nor on whether threads run them at all."""
PARALLEL_EVALUATIONS: Final = 100_000
"""The hand evaluations (completions x hands) from which :func:`range_margins` runs its parts on threads: below, the
threads cost more than they save."""


def range_margins(
    hands: IntArray, masks: IntArray, board: IntArray, completions: IntArray, ranges: FloatArray, num_suits: int
) -> FloatArray:
    r""":math:`\sum_{c} [o \cap (B \cup c) = \emptyset] \sum_{o'} x_v(o')\, \operatorname{sign}(\rho(o B c) -
    \rho(o' B c))` for every hand ``o`` of ``hands`` ``(H, k)`` (bit masks ``masks``, :math:`k \le 2`) and every
    range ``x_v``, a row of ``ranges`` ``(V, H)``, over the ``completions`` ``(C, t)`` of ``board`` (sets of cards
    outside it), the inner sum over the hands :math:`o'` that share no card with :math:`o`, :math:`B` or :math:`c`:
    ``(V, H)``. Each completion ranks every hand once, and the inner sum is the public-tree kernel's showdown at
    stake 1 with :math:`x_v` as the opponent's reach (:func:`cfr_agents.solvers.hand_sweeps.showdown`: one sweep
    of the hands in order of rank with card removal), so a completion costs :math:`O(H \log H + VH)`, not
    :math:`O(VH^2)`. The completions fall into :data:`CHUNKS` parts (:func:`_margins_part`), run on threads from
    :data:`PARALLEL_EVALUATIONS` evaluations on, and summed in order: the same sums either way."""
    parts = np.zeros((CHUNKS, ranges.shape[0], hands.shape[0]))
    if completions.shape[0] * hands.shape[0] >= PARALLEL_EVALUATIONS:
        _parts_on_threads(hands, masks, board, completions, ranges, num_suits, parts)
    else:
        for chunk in range(CHUNKS):
            _margins_part(hands, masks, board, completions, ranges, num_suits, chunk, parts[chunk])
    summed: FloatArray = parts[0].copy()
    for chunk in range(1, CHUNKS):
        summed += parts[chunk]
    return summed


@njit(cache=True, parallel=True)
def _parts_on_threads(
    hands: IntArray,
    masks: IntArray,
    board: IntArray,
    completions: IntArray,
    ranges: FloatArray,
    num_suits: int,
    parts: FloatArray,
) -> None:
    for chunk in prange(CHUNKS):
        _margins_part(hands, masks, board, completions, ranges, num_suits, chunk, parts[chunk])


@njit(cache=True)
def _margins_part(
    hands: IntArray,
    masks: IntArray,
    board: IntArray,
    completions: IntArray,
    ranges: FloatArray,
    num_suits: int,
    chunk: int,
    out: FloatArray,
) -> None:
    """Part ``chunk`` of :func:`range_margins`' sums, over its share of the completions, into ``out`` ``(V, H)``."""
    count_hands = hands.shape[0]
    base = np.int64(0)
    for card in board:
        base |= np.int64(1) << card
    m, n = board.shape[0], completions.shape[0]
    full = np.empty(m + completions.shape[1], dtype=np.int64)
    full[:m] = board
    live = np.empty(count_hands)
    reach = np.empty(count_hands)
    margin = np.empty(count_hands)
    card_sum = np.empty(64)
    for c in range(chunk * n // CHUNKS, (chunk + 1) * n // CHUNKS):
        dealt = base
        for j in range(completions.shape[1]):
            full[m + j] = completions[c, j]
            dealt |= np.int64(1) << completions[c, j]
        for h in range(count_hands):
            live[h] = 1.0 if (masks[h] & dealt) == 0 else 0.0
        ranks = rank_hands(hands, full, num_suits)
        order = np.argsort(ranks)
        ordered = ranks[order]
        for v in range(ranges.shape[0]):
            for h in range(count_hands):
                reach[h] = ranges[v, h] * live[h]
            showdown(reach, hands, order, ordered, card_sum, 1.0, live, margin)  # W(o) - L(o)
            for h in range(count_hands):
                out[v, h] += margin[h]


def cross_fitted(parts: FloatArray, prior: FloatArray) -> FloatArray:
    r"""Each hand's AIVAT value :math:`x_0 - g \cdot x` (:meth:`HoldemAivat.parts`, one row per hand, duplicate pairs
    in turn) with gains fitted on the other fold's hands: the pairs fall into two folds, even and odd, and each
    fold's gains are :func:`fitted_gains` of the other's. A hand's value function is then fixed by hands played
    independently of it, so its estimate stays unbiased (cross-fitting)."""
    fold = (np.arange(parts.shape[0]) // 2) % 2
    values = np.empty(parts.shape[0])
    for f in (0, 1):
        mine = fold == f
        gains = fitted_gains(parts[~mine], prior)
        values[mine] = parts[mine, 0] - parts[mine, 1:] @ gains
    return values


def fitted_gains(parts: FloatArray, prior: FloatArray) -> FloatArray:
    r"""The gains :math:`g` that make the variance of :math:`x_0 - g \cdot x` least over the rows of ``parts``,
    shrunk toward ``prior`` as :data:`RIDGE_HANDS` hands would: with :math:`X, y` the centred :math:`x, x_0`,
    :math:`(X^\top X + \lambda I)\, g = X^\top y + \lambda g_0`, :math:`\lambda` = ``RIDGE_HANDS`` times the mean
    of :math:`\operatorname{diag}(X^\top X) / n`."""
    if parts.shape[0] == 0:
        return prior
    centred = parts - parts.mean(axis=0)
    x, y = centred[:, 1:], centred[:, 0]
    gram = x.T @ x
    ridge = RIDGE_HANDS * float(np.trace(gram)) / (gram.shape[0] * parts.shape[0])
    if ridge == 0.0:
        return prior
    gains: FloatArray = np.linalg.solve(gram + ridge * np.eye(gram.shape[0]), x.T @ y + ridge * prior)
    return gains


def _take(moves: Iterator[int], count: int, history: Sequence[int]) -> list[int]:
    cards = [next(moves, -1) for _ in range(count)]
    if min(cards, default=0) < 0:
        raise InputError(f"the hand {list(history)} ends where {count} board cards are dealt")
    return cards


def rlcard_history(engine: HoldemEngine, env: Any) -> tuple[list[int], int]:
    """The hand RLCard's limit hold'em ``env`` has just finished as a universal_poker history in the engine's
    positions (:mod:`adapters.holdem.engine`: the big blind is player 0), and the env seat of the big blind.

    RLCard draws the small blind's seat, and the small blind acts first before the flop: its seat is the first in
    ``env.action_recorder``. The actions are walked on the engine's betting tree, which puts each round's board
    cards where the round begins, as OpenSpiel's history holds them; a seat that acts where the tree says the
    other does is refused."""
    seen = env.get_perfect_information()
    played = [(int(seat), RLCARD_IDS[name]) for seat, name in env.action_recorder]
    big_blind = 1 - played[0][0]
    history = [rlcard_card(card) for seat in (big_blind, 1 - big_blind) for card in seen["hand_cards"][seat]]
    board = iter(rlcard_card(card) for card in seen["public_card"] or [])
    betting, node = engine.betting, engine.root
    for seat, action in played:
        if int(betting.player[node]) != (0 if seat == big_blind else 1):
            raise InputError(f"RLCard's env and the betting tree disagree on who acts in {env.action_recorder}")
        history.append(action)
        node = engine.child(node, action)
        while int(betting.kind[node]) == DEAL:
            node = engine.child(node, 0)
            history.extend(_take(board, engine.rules.board_cards[int(betting.round[node])], history))
    return history, big_blind


class HoldemAivatRecorder(AivatRecorder):
    """:class:`~eval.aivat.AivatRecorder` on the engine (``aivat``, a :class:`HoldemAivat`): each hand in the
    engine's positions, RLCard's translated by :func:`rlcard_history`, OpenSpiel's history as it is. The hands'
    parts are kept (``1 + 8 R`` numbers a hand) and valued at the end, cross-fitted (:func:`cross_fitted`)."""

    aivat: HoldemAivat

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.parts: list[FloatArray] = []
        """:meth:`HoldemAivat.parts` of every hand, for ``A``."""

    def rlcard_hand(self, env: Any, a_seat: int) -> None:
        history, big_blind = rlcard_history(self.aivat.engine, env)
        payoffs = [float(u) for u in env.get_payoffs()]
        self.record(0 if a_seat == big_blind else 1, history, (payoffs[big_blind], payoffs[1 - big_blind]))

    def record(self, a_seat: int, history: Sequence[int], payoffs: Sequence[float]) -> None:
        u, parts = self.aivat.parts(history, a_seat, a_seat if self.known == 0 else 1 - a_seat)
        self.check_replay(u, history, payoffs[a_seat])
        self.parts.append(parts)
        if self.payoffs is not None:
            self.payoffs.append(float(payoffs[a_seat]))
        if self.log is not None:
            self.log.record(a_seat, history, payoffs)

    def estimate(self) -> AivatEstimate:
        values = cross_fitted(np.array(self.parts), self.aivat.gains)
        if self.values is not None:
            self.values[:] = values.tolist()
        self.samples = PairSamples(values.shape[0] // 2)
        for pair in values.reshape(-1, 2).mean(axis=1).tolist():
            self.samples.add(pair)
        return super().estimate()
