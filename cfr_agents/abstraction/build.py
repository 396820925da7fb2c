"""Building an abstraction: the lookups of every round, the last round's hand strength, then each round's
buckets by its method (:mod:`~cfr_agents.abstraction.spec`)."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

from adapters.holdem.engine import holdem_engine
from adapters.holdem.rules import LimitRules
from adapters.inputs import InputError
from cfr_agents.abstraction.indexing import BoardIndex, CardIndex, board_index, card_index
from cfr_agents.abstraction.kmeans_emd import kmeans_emd
from cfr_agents.abstraction.lossless import RoundClasses, class_table, count_classes, round_classes
from cfr_agents.abstraction.percentile import percentile_buckets
from cfr_agents.abstraction.spec import METHODS, RoundSpec
from cfr_agents.abstraction.strength import final_strength, round_strength
from cfr_agents.abstraction.tables import Abstraction, AbstractionTables

Progress = Callable[[str, int, int], None]
"""Called as work goes: the stage (``"hand strength"``, ``"round 1: k-means"``, ...), the units done, the units
of the stage in all."""
MAX_BOARD_SETS: Final = 1 << 26
"""The most board sets of a round an abstraction indexes (heads-up limit hold'em's river has 2,598,960)."""
MAX_TABLE_ENTRIES: Final = 1 << 28
"""The most (canonical board, hand) entries of a round's table (heads-up limit hold'em's river has 178,292,634)."""
KMEANS_ITERATIONS: Final = 30
"""Lloyd iterations of the ``emd`` method's k-means at most."""


@functools.lru_cache(maxsize=8)
def game_rules(game_id: str) -> tuple[str, LimitRules]:
    """The canonical id and rules of a two-player limit hold'em game (refused in one line otherwise), whose
    board sets an abstraction can index (at most :data:`MAX_BOARD_SETS` a round)."""
    engine = holdem_engine(game_id)
    rules = engine.rules
    sets = math.comb(rules.deck_size, sum(rules.board_cards))
    if sets > MAX_BOARD_SETS:
        raise InputError(
            f"{engine.game_id} deals {sum(rules.board_cards)} board cards from {rules.deck_size}: {sets:,} board sets, "
            f"more than the {MAX_BOARD_SETS:,} an abstraction indexes"
        )
    return engine.game_id, rules


@functools.lru_cache(maxsize=2)
def game_indexes(rules: LimitRules) -> tuple[CardIndex, tuple[BoardIndex, ...]]:
    """The card index of ``rules`` and the board index of each round (rounds that deal no card share one)."""
    cards = card_index(rules)
    sizes = [int(size) for size in np.cumsum(rules.board_cards)]
    built = {size: board_index(cards, size) for size in sorted(set(sizes))}
    for round_, size in enumerate(sizes):
        entries = built[size].num_boards * cards.num_hands
        if entries > MAX_TABLE_ENTRIES:
            raise InputError(
                f"round {round_} has {entries:,} (canonical board, hand) pairs, more than the {MAX_TABLE_ENTRIES:,} "
                "an abstraction's table holds"
            )
    return cards, tuple(built[size] for size in sizes)


def class_counts(game_id: str) -> tuple[int, ...]:
    """The lossless classes of (board set, hand) pairs of each round of ``game_id`` (169 preflop for 52 cards)."""
    _, rules = game_rules(game_id)
    cards, boards = game_indexes(rules)
    return tuple(count_classes(cards, board) for board in boards)


SMALL_ARRAYS: Final = 1 << 20
"""What :func:`peak_bytes` allows for the arrays it does not count one by one (the card and board indexes)."""


def peak_bytes(game_id: str, spec: Sequence[RoundSpec]) -> int:
    r"""The bytes of the arrays building the abstraction ``spec`` of ``game_id`` holds at its peak, estimated from
    their sizes before any is allocated. With :math:`H` hands, :math:`B_r` canonical boards, :math:`C_r` classes and
    :math:`S_r` board sets in round :math:`r`, a round's table :math:`T_r = 4 B_r H` (int32), the peak is the larger of

    * while round :math:`r` is bucketed: the tables so far, :math:`\sum_{s \le r} T_s`, and :math:`c_r C_r` for
      its classes: :math:`c_r = 7` for the hand, weight and label of each (int16, int8, int32) when it is lossless,
      :math:`31` with E[HS], E[HS^2] (float64) and their ordering (int64) for ``ehs2``, :math:`55 + 4 b_r` for
      ``emd``'s histograms of :math:`b_r` float32 bins and k-means' float64 weight, two bounds and int64 label;
    * as the rounds' tables are joined: twice :math:`\sum_r T_r`, and the last round's classes, :math:`7 C_R`;

    plus the last round's hand strength (float32 over its boards, :math:`4 B_R H`) when a round is lossy, each
    board set's canonical board and permutation (int32, int8: :math:`5 \sum_r S_r`), and :data:`SMALL_ARRAYS`.
    A spec that does not fit the game is refused as :func:`build_abstraction` refuses it."""
    game, rules = game_rules(game_id)
    cards, boards = game_indexes(rules)
    classes = class_counts(game_id)
    _check_spec(game, tuple(spec), classes)
    tables = [4 * board.num_boards * cards.num_hands for board in boards]
    per_class = [{"lossless": 7, "ehs2": 31}.get(round_.method, 55 + 4 * round_.bins) for round_ in spec]
    bucketing = [sum(tables[: r + 1]) + per_class[r] * classes[r] for r in range(len(classes))]
    joining = 2 * sum(tables) + 7 * classes[-1]
    strength = tables[-1] if any(round_.method != "lossless" for round_ in spec) else 0
    board_sets = 5 * sum(board.board_class.shape[0] for board in boards)
    return int(strength + max(joining, *bucketing) + board_sets + SMALL_ARRAYS)


def build_abstraction(
    game_id: str, spec: Sequence[RoundSpec], rng: np.random.Generator, *, progress: Progress | None = None
) -> Abstraction:
    """The abstraction of ``game_id`` that ``spec`` (one :class:`RoundSpec` a round) describes; ``rng`` draws the
    k-means++ seeds of the ``emd`` rounds. A spec that does not fit the game is refused in one line."""
    started = time.perf_counter()
    game, rules = game_rules(game_id)
    cards, boards = game_indexes(rules)
    classes = tuple(count_classes(cards, board) for board in boards)
    rounds = tuple(spec)
    _check_spec(game, rounds, classes)
    report = progress or (lambda stage, done, total: None)
    last = boards[-1]
    strength = None
    if any(round_.method != "lossless" for round_ in rounds):
        strength = final_strength(
            cards, last.canonical, lambda done, total: report("hand strength (last round)", done, total)
        )
    tables = []
    for number, (round_, board) in enumerate(zip(rounds, boards, strict=True)):
        grouped = round_classes(cards, board)
        if strength is None or round_.method == "lossless":
            labels = np.arange(grouped.count, dtype=np.int32)
        else:
            labels = _buckets(
                number, round_, cards, board, grouped, last, strength, rng, report, number == len(rounds) - 1
            )
        tables.append(class_table(cards, board, grouped, labels))
    return Abstraction(
        game_id=game,
        rules=rules,
        rounds=rounds,
        classes=classes,
        tables=lookup_tables(cards, boards, tables, [round_.buckets for round_ in rounds]),
        build_seconds=time.perf_counter() - started,
    )


def lookup_tables(
    cards: CardIndex, boards: Sequence[BoardIndex], tables: Sequence[NDArray[np.int32]], num_buckets: Sequence[int]
) -> AbstractionTables:
    """The :class:`AbstractionTables` of each round's ``(B_r, H)`` table of labels (:func:`class_table`), end to end,
    with the board lookups of ``boards``."""
    sizes = np.cumsum([0, *(math.comb(cards.num_cards, board.size) for board in boards)])
    lengths = np.cumsum([0, *(table.size for table in tables)])
    return AbstractionTables(
        num_buckets=np.array(num_buckets, dtype=np.int64),
        board_offset=sizes[:-1].astype(np.int64),
        board_class=np.concatenate([board.board_class for board in boards]),
        board_perm=np.concatenate([board.board_perm for board in boards]),
        card_perm=cards.card_perm,
        hand_of_colex=cards.hand_of_colex,
        binomial=cards.binomial,
        bucket_offset=lengths[:-1].astype(np.int64),
        buckets=np.concatenate([table.reshape(-1) for table in tables]),
    )


def _check_spec(game: str, rounds: tuple[RoundSpec, ...], classes: tuple[int, ...]) -> None:
    """Refuse a spec that does not have one valid entry per round of ``game``."""
    if len(rounds) != len(classes):
        raise InputError(
            f"{game} has {len(classes)} rounds, so an abstraction of it takes {len(classes)}, not {len(rounds)}"
        )
    for number, (round_, count) in enumerate(zip(rounds, classes, strict=True)):
        problem = (
            f"has the unknown method {round_.method!r} (one of {', '.join(METHODS)})"
            if round_.method not in METHODS
            else f"is lossless with {round_.buckets:,} buckets, not its {count:,} classes"
            if round_.method == "lossless" and round_.buckets != count
            else f"takes 1 to {count:,} buckets, not {round_.buckets:,}"
            if not 1 <= round_.buckets <= count
            else "is the last: its equity histograms are points (use ehs2)"
            if round_.method == "emd" and number == len(rounds) - 1
            else f"has {round_.bins} bins (an equity histogram has 2 or more)"
            if round_.method == "emd" and round_.bins < 2
            else ""
        )
        if problem:
            raise InputError(f"round {number} of an abstraction of {game} {problem}")


def _buckets(
    number: int,
    round_: RoundSpec,
    cards: CardIndex,
    board: BoardIndex,
    grouped: RoundClasses,
    last: BoardIndex,
    strength: NDArray[np.float32],
    rng: np.random.Generator,
    report: Progress,
    is_last: bool,
) -> NDArray[np.int32]:
    """The bucket of each class of round ``number`` by its method: E[HS^2] percentiles (HS at the last round), or
    k-means of equity histograms under EMD with the clusters numbered by their centroids' mean equity."""
    emd = round_.method == "emd"
    stage = f"round {number}: {'equity histograms' if emd else 'HS' if is_last else 'E[HS^2]'}"
    values = round_strength(
        cards, board, grouped, last, strength, round_.bins if emd else 0, lambda done, total: report(stage, done, total)
    )
    if not emd:
        return percentile_buckets(values.ehs if is_last else values.ehs2, grouped.weight, round_.buckets)
    clustered = kmeans_emd(
        values.histogram,
        grouped.weight.astype(np.float64),
        round_.buckets,
        rng,
        iterations=KMEANS_ITERATIONS,
        progress=lambda iteration, inertia: report(f"round {number}: k-means", iteration, KMEANS_ITERATIONS),
    )
    mean_equity = clustered.centroids @ ((np.arange(round_.bins) + 0.5) / round_.bins)
    order = np.empty(round_.buckets, dtype=np.int32)
    order[np.argsort(mean_equity, kind="stable")] = np.arange(round_.buckets, dtype=np.int32)
    buckets: NDArray[np.int32] = order[clustered.labels]
    return buckets
