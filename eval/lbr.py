r"""Local best response (LBR; Lisý & Bowling 2017) against an agent of a two-player limit hold'em game.

LBR is a best response that looks one action ahead. At each of its decisions it keeps the agent's *range*: the
probability of each private hand :math:`o` of the agent given the public history, by Bayes' rule,
:math:`r(o) \propto \prod \sigma(I_o, a)` over the agent's actions so far, with the hands that meet the board or
LBR's own cards removed. It then assumes that both players check or call to the showdown after its action, and
takes the action of highest

* fold: :math:`U = 0` (the chips already in the pot are lost either way);
* check or call: :math:`U = w\,P - (1 - w)\,A`;
* bet or raise by :math:`a` more than a call: :math:`U = f\,P + (1 - f)\,\big(w\,(P + a) - (1 - w)\,(A + a)\big)`,

with :math:`P` the pot, :math:`A` the amount to call, :math:`w` LBR's probability of winning the showdown against
the range (ties count half) over every way to deal the rest of the board, and :math:`f` the range's probability
of folding to the raise (the paper's Algorithm 1, its limit form: one raise size). Where two actions are worth the
same, LBR prefers check/call, then bet/raise, then fold. With ``call_until`` = :math:`R`, LBR checks or calls in
every round before :math:`R` (the paper's variants that only call while the range is wide).

**Vectorised over ranges.** At a public node the range is the agent's reach vector :math:`\pi(o)`, one for every
hand LBR may hold up to card removal, so one sweep over the hands sorted by strength gives :math:`w` for all of
LBR's hands at once: :math:`w(h) = \tfrac12 + (W(h) - L(h)) / (2 N(h))`, where :math:`W` and :math:`L` are the
range's reach on weaker and on stronger hands that share no card with :math:`h` and :math:`N` its reach on all such
hands, summed over the rest of the board (:func:`~cfr_agents.solvers.hand_sweeps.showdown` and
:func:`~cfr_agents.solvers.hand_sweeps.fold`, with the boards of later rounds gathered as the engine gathers
values). :math:`f(h)` is the same card-removal sum of :math:`\pi(o)\,\sigma(I'_o, \text{fold})` over that of
:math:`\pi(o)`. LBR is thus a pure strategy over the whole public tree (:func:`lbr_strategy`), and its value
against the agent is computed exactly by the engine (:func:`local_best_response`), beside the agent's exact
best-response values: LBR's is a lower bound on them. :func:`play_lbr` plays it in OpenSpiel's
``universal_poker``, in duplicate pairs, where the exact value cannot be computed.

Where the game has no public tree (``hulh``, ``rlcard:limit-holdem``), :mod:`eval.lbr_sampled` plays LBR hand by
hand on the compiled engine, with the same utilities, and only its sampled value is known; :func:`run_lbr` picks.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
from tqdm import tqdm

from adapters.games import canonical_game_id
from adapters.holdem.betting import DEAL, DECISION
from adapters.holdem.rules import limit_rules
from adapters.inputs import InputError, ParameterError
from adapters.openspiel import PREFIX
from cfr_agents.public_tree.engine import Engine, FloatArray, own_placement, profile, uniform_strategy
from cfr_agents.public_tree.strategy_file import PublicStrategy
from cfr_agents.public_tree.tree import PublicTree, build_public_tree
from cfr_agents.solvers.hand_sweeps import fold, showdown
from eval.environments import OpenSpielPolicy, PairSamples, draw
from eval.holdem import Placed, batched, check_name, hand_strategy, is_batched, on_public_tree, strategy_array, tree_for
from eval.lbr_sampled import (
    PREFERENCE,
    SEATS,
    LBRRun,
    Sampled,
    SampledLBRReport,
    lbr_game,
    no_public_tree,
    sampled_lbr_report,
)
from eval.opponents import load_opponent
from eval.ranges import CALL, FOLD, RAISE


@dataclass(frozen=True)
class LBRValues:
    """LBR's exact value in each seat against an agent, beside the agent's exact best-response values, in the
    game's units (chips)."""

    seat_values: tuple[float, float]
    best_response_values: tuple[float, float]

    @property
    def value(self) -> float:
        """LBR's value over both seats, a lower bound on the agent's exploitability (NashConv / 2)."""
        return (self.seat_values[0] + self.seat_values[1]) / 2

    @property
    def exploitability(self) -> float:
        """The agent's exploitability, the mean of its two best-response values (the game is zero-sum)."""
        return (self.best_response_values[0] + self.best_response_values[1]) / 2


class _Sums:
    """Card-removal sums over the agent's range on one public tree: :math:`N`, :math:`W - L`, summed over the rest
    of the board."""

    def __init__(self, tree: PublicTree) -> None:
        self.tree = tree
        self.card_sum = np.zeros(64)
        self.last_round = int(tree.segments.round_start.shape[0]) - 2

    def valid(self, s: int) -> FloatArray:
        """1 for the hands that share no card with segment ``s``'s board, else 0."""
        valid: FloatArray = ((self.tree.masks & self.tree.segments.board_mask[s]) == 0).astype(np.float64)
        return valid

    def compatible(self, s: int, reach: FloatArray) -> FloatArray:
        """:math:`\\sum_{o \\cap h = \\emptyset} r(o)` for every hand ``h`` valid on segment ``s``'s board."""
        out = np.empty(self.tree.num_hands)
        fold(reach, self.tree.hands, self.card_sum, 1.0, self.valid(s), out)
        return out

    def checkdown(self, s: int, reach: FloatArray) -> tuple[FloatArray, FloatArray]:
        """:math:`(W - L, N)` for every hand against ``reach`` (already zero on hands that meet segment ``s``'s
        board), summed over every way to deal the boards of the rounds after segment ``s``'s."""
        tree, segments = self.tree, self.tree.segments
        hands = tree.num_hands
        if int(np.searchsorted(segments.round_start, s, side="right")) - 1 == self.last_round:
            board = int(segments.board_id[s])
            margin = np.empty(hands)
            showdown(
                reach,
                tree.hands,
                tree.showdown_order[board],
                tree.showdown_rank[board],
                self.card_sum,
                1.0,
                self.valid(s),
                margin,
            )
            return margin, self.compatible(s, reach)
        slot = int(segments.first_slot[s])  # every deal node of a segment deals the same boards
        margin_sum, count_sum = np.zeros(hands), np.zeros(hands)
        for child in range(int(tree.slot_children[slot]), int(tree.slot_children[slot + 1])):
            margin, count = self.checkdown(child, reach * self.valid(child))
            margin_sum += segments.weight[child] * margin
            count_sum += segments.weight[child] * count
        group = int(segments.group[s])  # symmetrised over the board's stabilizer, as the engine's gather does
        members = tree.group_members[tree.group_start[group] : tree.group_start[group + 1]]
        out_margin, out_count = np.zeros(hands), np.zeros(hands)
        for member in members.tolist():
            permutation = tree.permutations[member]
            out_margin[permutation] += margin_sum / members.shape[0]
            out_count[permutation] += count_sum / members.shape[0]
        return out_margin, out_count


def lbr_strategy(
    tree: PublicTree, agent: Placed, seat: int, *, call_until: int = 0, out: FloatArray | None = None
) -> FloatArray:
    """LBR's pure strategy in seat ``seat`` against ``agent``, as a strategy array on ``tree`` (module docstring):
    one-hot at ``seat``'s decision nodes, written into ``out`` (a new uniform strategy by default) and returned;
    the other seat's entries are left as they are."""
    if seat not in (0, 1):
        raise ParameterError("{seat} must be 0 or 1, got {given!r}", given=seat)
    rounds = int(tree.segments.round_start.shape[0]) - 1
    if isinstance(call_until, bool) or not isinstance(call_until, int) or not 0 <= call_until < rounds:
        raise ParameterError(
            "{call_until} must be a round from 0 to {last}, got {given!r}", last=rounds - 1, given=call_until
        )
    betting, segments, hands = tree.betting, tree.segments, tree.num_hands
    strategy = uniform_strategy(tree) if out is None else out
    sums = _Sums(tree)
    deal_reach = np.zeros((max(tree.num_slots, 1), hands))
    columns = np.arange(hands)
    for s in range(segments.count):  # rounds in order: a segment's parent slot is filled before it
        start, stop = (int(x) for x in betting.ranges[segments.range_index[s]])
        parent = int(segments.parent_slot[s])
        reach = np.empty((stop - start, hands))
        valid = sums.valid(s)
        reach[0] = valid if parent < 0 else deal_reach[parent] * valid
        for node in range(start, stop):  # parents before children
            kind, local = int(betting.kind[node]), node - start
            if kind == DEAL:
                deal_reach[int(segments.first_slot[s] + tree.node_slot[node])] = reach[local]
            if kind != DECISION:
                continue
            n, first = int(betting.num_children[node]), int(betting.first_child[node])
            if int(betting.player[node]) != seat:  # the agent's range follows its actions: Bayes' rule
                reach[first - start : first - start + n] = reach[local] * _agent_block(tree, agent, s, node)
                continue
            reach[first - start : first - start + n] = reach[local]
            chosen = _decide(tree, agent, sums, s, node, reach[local], seat, call_until)
            base = int(segments.offset[s] + tree.node_offset[node])
            block = strategy[base : base + n * hands].reshape(n, hands)
            block[:] = 0.0
            block[chosen, columns] = 1.0
    return strategy


def _agent_block(tree: PublicTree, agent: Placed, s: int, node: int) -> FloatArray:
    """The agent's ``(actions, H)`` probabilities at ``node`` of segment ``s``."""
    n, hands = int(tree.betting.num_children[node]), tree.num_hands
    base = int(agent.placement.offset[s] + tree.node_offset[node])
    block = agent.strategy[base : base + n * hands].reshape(n, hands)
    read: FloatArray = block[:, tree.permutations[agent.placement.permutation[s]]]
    return read


def _decide(
    tree: PublicTree,
    agent: Placed,
    sums: _Sums,
    s: int,
    node: int,
    reach: FloatArray,
    seat: int,
    call_until: int,
) -> np.ndarray:
    """The index of the child LBR takes at ``node`` of segment ``s``, for every hand, against the range ``reach``."""
    betting = tree.betting
    n, first = int(betting.num_children[node]), int(betting.first_child[node])
    actions = [int(a) for a in betting.action[first : first + n]]
    call = actions.index(CALL)
    if int(betting.round[node]) < call_until:
        return np.full(tree.num_hands, call)
    margin, count = sums.checkdown(s, reach)
    seen = count > 0.0
    win = np.where(seen, 0.5 + margin / np.where(seen, 2.0 * count, 1.0), 0.5)  # w = 1/2 + (W - L) / 2N
    spent = betting.spent
    pot = float(spent[node, 0] + spent[node, 1])
    asked = float(spent[node, 1 - seat] - spent[node, seat])
    utility = np.full((n, tree.num_hands), -math.inf)
    utility[call] = win * pot - (1.0 - win) * asked  # U(call) = w P - (1 - w) A
    if FOLD in actions:
        utility[actions.index(FOLD)] = 0.0
    if RAISE in actions:
        child = first + actions.index(RAISE)
        more = float(spent[child, seat] - spent[node, 1 - seat])  # a: what the raise adds to a call
        folds = _fold_probability(tree, agent, sums, s, child, reach, seat)
        utility[actions.index(RAISE)] = folds * pot + (1.0 - folds) * (  # U(raise) = f P + (1 - f)(...)
            win * (pot + more) - (1.0 - win) * (asked + more)
        )
    order = [actions.index(a) for a in PREFERENCE if a in actions]
    best = np.asarray(order)[np.argmax(utility[order], axis=0)]  # the first of the preferred among the best
    return np.where(seen, best, call)


def _fold_probability(
    tree: PublicTree, agent: Placed, sums: _Sums, s: int, child: int, reach: FloatArray, seat: int
) -> FloatArray:
    """:math:`f(h)`: the range's probability of folding at ``child`` (the node after LBR's raise), by hand."""
    betting = tree.betting
    if int(betting.kind[child]) != DECISION or int(betting.player[child]) == seat:
        return np.zeros(tree.num_hands)
    first = int(betting.first_child[child])
    if int(betting.action[first]) != FOLD:
        return np.zeros(tree.num_hands)
    folding = sums.compatible(s, reach * _agent_block(tree, agent, s, child)[0])
    total = sums.compatible(s, reach)
    folds: FloatArray = np.where(total > 0.0, folding / np.where(total > 0.0, total, 1.0), 0.0)
    return folds


def local_best_response(
    tree: PublicTree, agent: Placed, *, call_until: int = 0, engine: Engine | None = None
) -> tuple[FloatArray, LBRValues]:
    """LBR in both seats against ``agent`` as one strategy array (seat ``p``'s LBR at player ``p``'s nodes), and
    its exact values beside the agent's exact best-response values."""
    strategy = uniform_strategy(tree)
    for seat in (0, 1):
        lbr_strategy(tree, agent, seat, call_until=call_until, out=strategy)
    passes = Engine(tree) if engine is None else engine
    own = own_placement(tree)
    against = profile(agent.strategy, agent.strategy, agent.placement, agent.placement)
    seat_values = (
        passes.value(0, profile(strategy, agent.strategy, own, agent.placement)),
        passes.value(1, profile(agent.strategy, strategy, agent.placement, own)),
    )
    best = (passes.best_response_value(0, against), passes.best_response_value(1, against))
    return strategy, LBRValues(seat_values, best)


def play_lbr(
    game: pyspiel.Game,
    lbr: OpenSpielPolicy,
    agent: OpenSpielPolicy,
    seat: str,
    pairs: int,
    rng: np.random.Generator,
    *,
    show_progress: bool = False,
) -> Sampled:
    """LBR against ``agent`` in ``game`` (OpenSpiel's ``universal_poker``), ``pairs`` duplicate pairs: both hands of
    a pair see the same cards, LBR in seat 0 and then in seat 1 (``seat="both"``), or LBR in one seat holding first
    its cards and then the agent's. Cards and both players' draws come from ``rng``."""
    if seat not in SEATS:
        raise ParameterError("{seat} must be one of {seats}; got {given!r}", seats=", ".join(SEATS), given=seat)
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 2:
        raise ParameterError("LBR needs at least 2 {pairs} of hands to estimate its error, got {given!r}", given=pairs)
    params = game.get_parameters()
    hole = int(params.get("numHoleCards", 1))
    deck = int(params["numSuits"]) * int(params["numRanks"])
    samples = PairSamples(pairs)
    for _ in tqdm(range(pairs), disable=not show_progress, unit="pair", leave=False, mininterval=0.5):
        cards = rng.permutation(deck).tolist()
        first, second = cards[:hole], cards[hole : 2 * hole]
        rest = cards[2 * hole :]
        if seat == "both":
            hands = ((0, first + second), (1, first + second))
        else:
            own = int(seat)
            hands = ((own, first + second), (own, second + first))
        total = 0.0
        for lbr_seat, hole_cards in hands:
            state = game.new_initial_state()
            dealt = iter(hole_cards + rest)
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(next(dealt))
                    continue
                player = state.current_player()
                state.apply_action(draw((lbr if player == lbr_seat else agent).action_probabilities(state), rng))
            total += float(state.returns()[lbr_seat])
        samples.add(total / 2)
    _, mean, deviation = samples.moments()
    return Sampled(pairs, mean, deviation / math.sqrt(pairs))


@dataclass(frozen=True)
class LBRReport(LBRRun):
    """``cfr-agents lbr``: LBR's value against an agent, exact and over sampled duplicate pairs, beside the agent's
    exact best-response value, for one seat or both (their mean)."""

    exact: float
    """LBR's exact value (chips per hand)."""
    best_response: float
    """The exact best response's value in the same seat(s): the agent's exploitability for both seats."""
    sampled: Sampled | None
    exact_seconds: float
    """Building the tree, reading the agent, computing LBR in both seats and the four exact values."""
    play_seconds: float

    @property
    def ratio(self) -> float | None:
        """LBR's exact value over the best response's, how tight the bound is; ``None`` where LBR does not win (it
        then bounds nothing)."""
        return self.exact / self.best_response if self.exact > 0 and self.best_response > 0 else None

    def to_json(self) -> dict[str, Any]:
        sampled = self.sampled
        value = self.exact if sampled is None else sampled.mean
        error = 0.0 if sampled is None else sampled.standard_error
        ci95 = (value, value) if sampled is None else sampled.ci95
        return {
            **self.run_json(),
            "hands": 0 if sampled is None else 2 * sampled.pairs,
            "value": value,
            "standard_error": error,
            "ci95": list(ci95),
            "value_mbb": self.mbb(value),
            "exact": self.exact,
            "exact_mbb": self.mbb(self.exact),
            "best_response": self.best_response,
            "best_response_mbb": self.mbb(self.best_response),
            "ratio": self.ratio,
            "exact_seconds": self.exact_seconds,
            "play_seconds": self.play_seconds,
        }


def lbr_report(
    name: str,
    game_id: str,
    *,
    hands: int,
    seat: str = "both",
    seed: int = 0,
    call_until: int = 0,
    show_progress: bool = False,
) -> LBRReport:
    """LBR against the agent ``name`` (a strategy or policy file, or a named opponent) on ``game_id``, a two-player
    limit ``universal_poker`` game: exact on the game's public tree, and over ``hands`` hands (duplicate pairs;
    0 for none) played in ``universal_poker`` with cards and draws from ``seed``."""
    started = time.perf_counter()
    game = lbr_game(game_id, seat, seed)
    if isinstance(hands, bool) or not isinstance(hands, int) or (hands != 0 and (hands < 4 or hands % 2)):
        raise ParameterError(
            "{hands} must be 0 or an even number of at least 4 (duplicate pairs), got {given!r}", given=hands
        )
    missing = no_public_tree(game)
    if missing:
        raise InputError(f"{game} has no public tree for the exact value ({missing}): sampled_lbr_report plays it")
    check_name(name, game)
    opponent = load_opponent(name, game)
    if opponent.game_id != game:
        raise InputError(f"agent {name!r} plays {opponent.game_id}, not {game}")
    public = on_public_tree(game)
    agent = batched(opponent.agent, name, game) if public else hand_strategy(opponent.agent)
    tree = (
        tree_for(game, [agent]) if is_batched(agent) else build_public_tree(game.removeprefix(PREFIX), canonical=False)
    )
    placed = strategy_array(tree, agent)
    strategy, values = local_best_response(tree, placed, call_until=call_until)
    computed = time.perf_counter()
    sampled = None
    if hands:
        lbr = PublicStrategy(game, tree, strategy, "lbr", {"call_until": call_until}, 0, {})
        play = opponent.agent.openspiel_player() if public else opponent.agent.match_policy()
        sampled = play_lbr(
            pyspiel.load_game(tree.game_string),
            lbr,
            play,
            seat,
            hands // 2,
            np.random.default_rng(seed),
            show_progress=show_progress,
        )
    index = None if seat == "both" else int(seat)
    return LBRReport(
        agent=name,
        game=game,
        units=tree.units,
        big_blind=float(tree.rules.big_blind),
        seat=seat,
        call_until=call_until,
        exact=values.value if index is None else values.seat_values[index],
        best_response=values.exploitability if index is None else values.best_response_values[index],
        sampled=sampled,
        exact_seconds=computed - started,
        play_seconds=time.perf_counter() - computed,
    )


def run_lbr(
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
) -> LBRReport | SampledLBRReport:
    """``cfr-agents lbr``: :func:`lbr_report` on a game with a public tree (``call_until`` 0 by default), else LBR
    played hand by hand on the compiled engine (:func:`eval.lbr_sampled.sampled_lbr_report`, ``call_until`` the
    first round whose showdown is enumerated, by default) by ``workers`` processes, its last round played or in
    expectation (``last_round``)."""
    game = canonical_game_id(game_id)
    if no_public_tree(game):
        return sampled_lbr_report(
            name,
            game_id,
            hands=hands,
            seat=seat,
            seed=seed,
            call_until=call_until,
            workers=workers,
            show_progress=show_progress,
            last_round=last_round,
        )
    on_engine_only = {"workers": (workers, 1), "last_round": (last_round, "sampled")}
    for option, (given, default) in on_engine_only.items():
        if given != default and game.startswith(PREFIX) and limit_rules(game) is not None:
            raise ParameterError(
                f"{{{option}}} applies where LBR is played on the compiled engine (no public tree); {{game}} has a "
                "public tree, got {given!r}",
                game=game_id,
                given=given,
            )
    return lbr_report(
        name,
        game,
        hands=hands,
        seat=seat,
        seed=seed,
        call_until=0 if call_until is None else call_until,
        show_progress=show_progress,
    )
