"""Hold'em cards: the compiled evaluator against ACPC's own tables, phevaluator, OpenSpiel's showdowns and
RLCard's judge; private hands and their indexing; suit isomorphism against brute force.

The ACPC reference below reads the tables of ``rankCardset`` from the ``evalHandTables`` that OpenSpiel ships
and runs the function's steps on arrays of card sets; no value of ours enters it.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import open_spiel
import pyspiel
import pytest
from numpy.typing import NDArray
from phevaluator import evaluate_cards  # type: ignore[import-untyped]
from rlcard.games.limitholdem.utils import compare_hands

from adapters.holdem import (
    RANK_BOUND,
    board_mask,
    board_orbits,
    canonical_board,
    card_id,
    card_name,
    card_permutation,
    hand_index_table,
    hand_masks,
    hand_permutation,
    hand_rank,
    parse_cards,
    private_hands,
    rank_hands,
    stabilizer,
    suit_permutations,
)
from adapters.inputs import InputError

IntArray = NDArray[np.int64]
NO_BOARD = np.empty(0, dtype=np.int64)
TABLES = Path(open_spiel.__file__).parent / "games/universal_poker/acpc/project_acpc_server/evalHandTables"


# ---------------------------------------------------------------------------------------------------------------
# References and helpers


@functools.cache
def acpc_tables() -> dict[str, IntArray]:
    """Every ``static const`` table of ACPC's ``evalHandTables`` by name, and its ``HANDCLASS_*`` offsets."""
    text = TABLES.read_text()
    found = re.finditer(r"static const uint\d+_t (\w+)\s*\[\s*\d+\s*\]\s*=\s*\{([^}]*)\}", text)
    tables = {m[1]: np.array([int(x) for x in m[2].split(",") if x.strip()], dtype=np.int64) for m in found}
    classes = re.finditer(r"#define (HANDCLASS_\w+) (\d+)", text)
    return tables | {m[1]: np.array(int(m[2])) for m in classes}


def acpc_rank(cards: IntArray, num_suits: int) -> IntArray:
    """ACPC's ``rankCardset`` of each row of card ids ``(N, k)``, its steps run on arrays with its own tables;
    card ``c`` is rank ``c // num_suits``, suit ``c % num_suits`` (OpenSpiel's numbering)."""
    t = acpc_tables()
    by_suit = np.zeros((4, cards.shape[0]), dtype=np.int64)
    for suit in range(num_suits):
        by_suit[suit] = np.bitwise_or.reduce(np.where(cards % num_suits == suit, 1 << (cards // num_suits), 0), axis=1)
    c0, c1, c2, c3 = by_suit
    postponed = t["oneSuitVal"][by_suit].max(axis=0)
    s0, s1 = c0 | c1, c0 & c1
    s2 = s1 & c2
    s1 = s1 | (s0 & c2)
    s0 = s0 | c2
    s3 = s2 & c3
    s2 = s2 | (s1 & c3)
    s1 = s1 | (s0 & c3)
    s0 = s0 | c3
    top = t["topBit"]
    quad = top[s3]
    quads = t["quadsVal"][quad] + top[s0 ^ (1 << quad)]
    trip = top[s2]
    other_pairs = s1 ^ (1 << trip)
    full_house_other = t["HANDCLASS_FULL_HOUSE"] - t["HANDCLASS_TRIPS"]  # fullHouseOtherVal
    full_house = t["tripsVal"][trip] + full_house_other + top[other_pairs]
    straight_or_high = t["anySuitVal"][s0]
    trips = t["tripsVal"][trip] + t["tripsOtherVal"][s0 ^ (1 << trip)]
    pair = top[s1]
    rest, other = s0 ^ (1 << pair), s1 ^ (1 << pair)
    second = top[other]
    two_pair = t["pairsVal"][pair] + t["twoPairOtherVal"][second] + top[rest ^ (1 << second)]
    one_pair = t["pairsVal"][pair] + t["pairOtherVal"][rest]
    conditions = [  # the order of rankCardset's returns
        postponed >= t["HANDCLASS_STRAIGHT_FLUSH"],
        s3 != 0,
        (s2 != 0) & (other_pairs != 0),
        postponed != 0,
        straight_or_high >= t["HANDCLASS_STRAIGHT"],
        s2 != 0,
        (s1 != 0) & (other != 0),
        s1 != 0,
    ]
    values = [postponed, quads, full_house, postponed, straight_or_high, trips, two_pair, one_pair]
    return np.select(conditions, values, straight_or_high)


def assert_same_order(ours: IntArray, theirs: IntArray) -> None:
    """Both arrays order every pair of entries alike, ties included (bigger is stronger in both): sorted by ours
    then theirs, theirs never decreases and rises exactly where ours rises."""
    order = np.lexsort((theirs, ours))
    a, b = np.diff(ours[order]), np.diff(theirs[order])
    assert (b >= 0).all(), "an inversion"
    assert ((a > 0) == (b > 0)).all(), "a tie of one that the other breaks"


def all_sets(num_cards: int, size: int) -> IntArray:
    """Every set of ``size`` cards of ``num_cards``, increasing rows."""
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(num_cards), size)), np.int64)
    return flat.reshape(math.comb(num_cards, size), size)


def random_sets(rng: np.random.Generator, count: int, num_cards: int, size: int) -> IntArray:
    """``count`` uniform random sets of ``size`` distinct cards of ``num_cards`` (sorted rows; drawn with
    replacement and the rows with a repeated card thrown away)."""
    kept: list[IntArray] = []
    total = 0
    while total < count:
        draw = np.sort(rng.integers(0, num_cards, size=(2 * count, size)), axis=1)
        draw = draw[(np.diff(draw, axis=1) > 0).all(axis=1)]
        kept.append(draw)
        total += draw.shape[0]
    return np.concatenate(kept)[:count]


def phevaluator_strength(hands: IntArray) -> IntArray:
    """phevaluator's rank of each row (its cards ``rank * 4 + suit`` as ours with 4 suits), negated so that
    bigger is stronger."""
    return -np.array([evaluate_cards(*row) for row in hands.tolist()], dtype=np.int64)


# ---------------------------------------------------------------------------------------------------------------
# The evaluator against ACPC's tables


def test_acpc_order_on_every_set_of_up_to_five_cards() -> None:
    """All 2,893,163 sets of 1 to 5 cards of the 52-card deck, ranked together: ours orders them as
    ``rankCardset``, across card counts too, and gives the five-card hands their 7,462 distinct values."""
    sets = [all_sets(52, size) for size in range(1, 6)]
    ours = np.concatenate([rank_hands(cards, NO_BOARD, 4) for cards in sets])
    theirs = np.concatenate([acpc_rank(cards, 4) for cards in sets])
    assert ours.shape == (2_893_163,)
    assert ours.min() >= 0 and ours.max() < RANK_BOUND
    assert_same_order(ours, theirs)
    assert len(np.unique(ours[-sets[4].shape[0] :])) == 7462  # the distinct five-card hand values of poker


@pytest.mark.parametrize("num_suits", [1, 2, 3, 4])
def test_acpc_order_on_every_deck_and_card_count(num_suits: int) -> None:
    """Every deck of ``num_suits`` suits and 1 to 13 ranks, every card count 1 to 7 (all sets where there are at
    most 20,000, else 20,000 random ones): ours orders them as ``rankCardset``. :func:`hand_rank`, and
    :func:`rank_hands` with the cards split into a hand and a board, agree with :func:`rank_hands` on the whole."""
    rng = np.random.default_rng(num_suits)
    for num_ranks in range(1, 14):
        n = num_ranks * num_suits
        for size in range(1, min(7, n) + 1):
            many = math.comb(n, size) > 20_000
            cards = random_sets(rng, 20_000, n, size) if many else all_sets(n, size)
            together = rank_hands(cards, NO_BOARD, num_suits)
            assert_same_order(together, acpc_rank(cards, num_suits))
            some = cards[:100]
            assert [hand_rank(row, num_suits) for row in some] == together[:100].tolist()
            split = [rank_hands(row[None, : size // 2], row[size // 2 :], num_suits)[0] for row in some]
            assert split == together[:100].tolist()


@pytest.mark.slow
def test_acpc_order_on_every_six_card_set() -> None:
    """All 20,358,520 six-card sets of the 52-card deck with all the sets of 1 to 5 cards, in chunks."""
    ours, theirs = [], []
    for size in range(1, 7):
        combos = itertools.combinations(range(52), size)
        while chunk := list(itertools.islice(combos, 2_000_000)):
            cards = np.array(chunk, dtype=np.int64)
            ours.append(rank_hands(cards, NO_BOARD, 4))
            theirs.append(acpc_rank(cards, 4))
    assert sum(map(len, ours)) == sum(math.comb(52, size) for size in range(1, 7))
    assert_same_order(np.concatenate(ours), np.concatenate(theirs))


# ---------------------------------------------------------------------------------------------------------------
# The evaluator against phevaluator


@pytest.mark.slow
def test_every_five_card_hand_in_phevaluator_order() -> None:
    """All 2,598,960 five-card hands: the same order and ties as phevaluator's, one Python call a hand (the default
    suite orders every five-card hand as ACPC's ``rankCardset`` does, and random seven-card hands as phevaluator
    does)."""
    hands = all_sets(52, 5)
    ours = rank_hands(hands, NO_BOARD, 4)
    assert_same_order(ours, phevaluator_strength(hands))
    assert len(np.unique(ours)) == 7462  # the distinct five-card hand values of poker


@pytest.mark.parametrize("count", [200_000, pytest.param(10_000_000, marks=pytest.mark.slow)])
def test_random_seven_card_hands_in_phevaluator_order(count: int) -> None:
    """Random seven-card hands (the first seven cards of seeded shuffles), ranked a million at a time: the same
    order and ties as phevaluator's."""
    rng = np.random.default_rng(7)
    chunk = 1_000_000
    for start in range(0, count, chunk):
        cards = rng.permuted(np.tile(np.arange(52, dtype=np.int64), (min(chunk, count - start), 1)), axis=1)[:, :7]
        ours = rank_hands(np.ascontiguousarray(cards), NO_BOARD, 4)
        assert_same_order(ours, phevaluator_strength(cards))


# ---------------------------------------------------------------------------------------------------------------
# The evaluator against OpenSpiel's showdowns


def limit_game(num_ranks: int, num_suits: int, hole: int, boards: str) -> str:
    """A two-player limit ``universal_poker`` game string with these cards."""
    rounds = len(boards.split())
    each = " ".join(["2"] * rounds)
    return (
        f"universal_poker(betting=limit,numPlayers=2,numRounds={rounds},blind=2 1,"
        f"firstPlayer=2{' 1' * (rounds - 1)},numSuits={num_suits},numRanks={num_ranks},numHoleCards={hole},"
        f"numBoardCards={boards},raiseSize={each},maxRaises={each})"
    )


FHP = (
    "universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,numSuits=4,numRanks=13,"
    "numHoleCards=2,numBoardCards=0 3,raiseSize=100 100,maxRaises=3 3)"
)
GAMES = {
    "fhp": (FHP, 4, 2),
    "hulh": (pyspiel.hulh_game_string("fcpa"), 4, 2),
    "2+1 on 3x2": (limit_game(3, 2, 2, "0 1"), 2, 2),
    "2+1 on 4x3": (limit_game(4, 3, 2, "0 1"), 3, 2),
    "1+1 on 13x4": (limit_game(13, 4, 1, "0 1"), 4, 1),
    "1+0 on 13x4": (limit_game(13, 4, 1, "0 0"), 4, 1),
    "2+2 on 13x4": (limit_game(13, 4, 2, "0 2"), 4, 2),
    "2+4 on 13x4": (limit_game(13, 4, 2, "0 3 1"), 4, 2),
    "2+3 on 13x1": (limit_game(13, 1, 2, "0 3"), 1, 2),
    "1+2 on 6x2": (limit_game(6, 2, 1, "0 1 1"), 2, 1),
}
"""Games by the cards each player shows down: OpenSpiel's FHP and HULH, and small decks for every card count."""


def showdown_signs(game_string: str, num_suits: int, hole: int, deals: int, seed: int) -> tuple[IntArray, IntArray]:
    """Play ``deals`` random deals to showdown with check/call; the sign of player 0's return, and the sign of
    our comparison of the two hands with the board (the deal is ours: hole cards of player 0, of player 1, then
    the boards, applied as chance actions)."""
    game = pyspiel.load_game(game_string)
    params = game.get_parameters()
    num_cards = params["numRanks"] * params["numSuits"]
    needed = 2 * hole + sum(int(b) for b in str(params["numBoardCards"]).split())
    rng = np.random.default_rng(seed)
    theirs, ours = np.empty(deals, dtype=np.int64), np.empty(deals, dtype=np.int64)
    for d in range(deals):
        deal = rng.permutation(num_cards)[:needed]
        state = game.new_initial_state()
        cards = iter(deal.tolist())
        while not state.is_terminal():
            state.apply_action(next(cards) if state.is_chance_node() else 1)
        board = deal[2 * hole :]
        mine = hand_rank(np.concatenate([deal[:hole], board]), num_suits)
        other = hand_rank(np.concatenate([deal[hole : 2 * hole], board]), num_suits)
        theirs[d], ours[d] = np.sign(state.returns()[0]), np.sign(mine - other)
    return theirs, ours


@pytest.mark.parametrize("name", list(GAMES))
@pytest.mark.parametrize("deals", [4_000, pytest.param(200_000, marks=pytest.mark.slow)])
def test_showdowns_as_openspiel_decides_them(name: str, deals: int) -> None:
    game_string, num_suits, hole = GAMES[name]
    theirs, ours = showdown_signs(game_string, num_suits, hole, deals, seed=len(name))
    wrong = np.flatnonzero(theirs != ours)
    assert wrong.size == 0, f"{wrong.size} of {deals} showdowns differ"
    assert {-1, 1} <= set(theirs.tolist())


# ---------------------------------------------------------------------------------------------------------------
# The evaluator against RLCard's judge


def rlcard_winners(hands: IntArray, boards: IntArray) -> IntArray:
    """RLCard's ``compare_hands`` on two 7-card hands per deal (``hands`` ``(D, 2, 2)``, boards ``(D, 5)``):
    1 if player 0 wins, -1 if player 1 does, 0 for a split. RLCard writes a card as suit then rank (``'SA'``)."""
    names = ["CDHS"[card % 4] + "23456789TJQKA"[card // 4] for card in range(52)]
    out = np.empty(hands.shape[0], dtype=np.int64)
    for d in range(hands.shape[0]):
        seven = [[names[c] for c in [*hands[d, p], *boards[d]]] for p in (0, 1)]
        first, second = compare_hands(seven)
        out[d] = first - second
    return out


@pytest.mark.parametrize("deals", [10_000, pytest.param(200_000, marks=pytest.mark.slow)])
def test_seven_card_showdowns_as_rlcard_judges_them(deals: int) -> None:
    rng = np.random.default_rng(11)
    cards = rng.permuted(np.tile(np.arange(52, dtype=np.int64), (deals, 1)), axis=1)[:, :9]
    hands, boards = cards[:, :4].reshape(deals, 2, 2), cards[:, 4:]
    ours = np.array(
        [np.sign(rank_hands(hands[d], boards[d], 4) @ np.array([1, -1])) for d in range(deals)], dtype=np.int64
    )
    theirs = rlcard_winners(hands, boards)
    assert (ours == theirs).all(), f"{(ours != theirs).sum()} of {deals} differ"
    assert {-1, 0, 1} <= set(theirs.tolist())


# ---------------------------------------------------------------------------------------------------------------
# Cards, hands and their indexing


def test_card_names_as_openspiel_prints_them() -> None:
    """The names of the cards OpenSpiel deals, as its state prints them, for decks of 1 to 4 suits."""
    rng = np.random.default_rng(3)
    for num_suits in (1, 2, 3, 4):
        game = pyspiel.load_game(limit_game(13, num_suits, 2, "0 1"))
        for _ in range(20):
            deal = rng.permutation(13 * num_suits)[:4]
            state = game.new_initial_state()
            for card in deal.tolist():
                state.apply_action(card)
            printed = re.findall(r"P([01]) Cards: (\S+)", str(state))
            assert len(printed) == 2
            for player, text in printed:
                hand = deal[2 * int(player) : 2 * int(player) + 2].tolist()
                assert sorted(parse_cards(text, num_suits)) == sorted(hand)
                assert {card_name(c, num_suits) for c in hand} == {text[:2], text[2:]}
    assert card_name(3, 2) == "3d" and card_name(51, 4) == "As" and card_id(12, 3, 4) == 51


def test_parse_cards_reads_and_refuses() -> None:
    assert parse_cards("As Kd, 2c", 4) == [51, 45, 0]
    assert parse_cards("", 4) == []
    for text, num_suits in [("Ah", 2), ("Xs", 4), ("As As", 4), ("A", 4), ("Asx", 4)]:
        with pytest.raises(InputError):
            parse_cards(text, num_suits)
    for args in [(13, 0, 4), (0, 4, 4), (0, 0, 5)]:
        with pytest.raises(InputError):
            card_id(*args)
    with pytest.raises(InputError):
        card_name(52, 4)


@pytest.mark.parametrize(("num_ranks", "num_suits", "hole"), [(13, 4, 2), (13, 4, 1), (3, 2, 2), (4, 3, 3)])
def test_private_hands_and_their_index(num_ranks: int, num_suits: int, hole: int) -> None:
    n = num_ranks * num_suits
    hands = private_hands(num_ranks, num_suits, hole)
    assert hands.shape == (math.comb(n, hole), hole) and hands.dtype == np.int64
    assert (np.diff(hands, axis=1) > 0).all() and hands.min() >= 0 and hands.max() < n
    order = np.lexsort(hands.T[::-1])
    assert (order == np.arange(len(hands))).all()
    assert len({tuple(row) for row in hands.tolist()}) == len(hands)
    table = hand_index_table(hands, n)
    assert table.shape == (n,) * hole
    assert (table[tuple(hands.T)] == np.arange(len(hands))).all()
    assert (table >= 0).sum() == len(hands)
    masks = hand_masks(hands)
    assert masks.dtype == np.uint64 and len(np.unique(masks)) == len(hands)
    assert all(bin(int(m)).count("1") == hole for m in masks)
    assert all(int(masks[i]) == sum(1 << c for c in hands[i].tolist()) for i in range(0, len(hands), 37))


def test_private_hands_1326() -> None:
    hands = private_hands(13, 4, 2)
    assert len(hands) == 1326 and hands[0].tolist() == [0, 1] and hands[-1].tolist() == [50, 51]


def test_board_mask_marks_hands_that_share_a_card() -> None:
    hands = private_hands(13, 4, 2)
    board = parse_cards("As Kd 2c", 4)
    sharing = (hand_masks(hands) & board_mask(board)) != 0
    assert sharing.tolist() == [bool(set(row) & set(board)) for row in hands.tolist()]
    for bad in ([1, 1], [64]):
        with pytest.raises(InputError):
            board_mask(bad)


def test_deck_and_hand_refusals() -> None:
    for args in [(14, 4, 2), (13, 5, 2), (0, 4, 2), (13, 4, 0), (2, 1, 3)]:
        with pytest.raises(InputError):
            private_hands(*args)
    with pytest.raises(InputError):
        hand_index_table(np.array([[1, 0]]), 4)
    with pytest.raises(InputError):
        hand_index_table(np.array([[0, 4]]), 4)


# ---------------------------------------------------------------------------------------------------------------
# Suit isomorphism


def brute_stabilizer(boards: Sequence[Sequence[int]], num_suits: int) -> list[tuple[int, ...]]:
    """The suit permutations fixing each board as a set, by direct mapping of each card."""
    return [
        perm
        for perm in itertools.permutations(range(num_suits))
        if all({c - c % num_suits + perm[c % num_suits] for c in board} == set(board) for board in boards)
    ]


def brute_orbits(
    num_ranks: int, num_suits: int, size: int, previous: Sequence[Sequence[int]]
) -> dict[tuple[int, ...], frozenset[tuple[int, ...]]]:
    """Each orbit of boards under the brute-force stabilizer, keyed by its smallest sorted board."""
    group = brute_stabilizer(previous, num_suits)
    taken = {c for board in previous for c in board}
    left = [c for c in range(num_ranks * num_suits) if c not in taken]
    orbits: dict[tuple[int, ...], frozenset[tuple[int, ...]]] = {}
    for board in itertools.combinations(left, size):
        orbit = frozenset(tuple(sorted(c - c % num_suits + perm[c % num_suits] for c in board)) for perm in group)
        orbits[min(orbit)] = orbit
    return orbits


SMALL_CASES = [
    (4, 3, 1, ()),
    (4, 3, 3, ()),
    (4, 3, 2, ((0, 1),)),
    (4, 3, 1, ((0,), (5,))),
    (3, 4, 2, ()),
    (3, 4, 3, ((0, 4, 8),)),
    (5, 4, 1, ((0, 5, 10), (19,))),
    (5, 2, 2, ((2,),)),
    (6, 1, 3, ()),
    (4, 3, 0, ((0, 1),)),
]


@pytest.mark.parametrize(("num_ranks", "num_suits", "size", "previous"), SMALL_CASES)
def test_orbits_against_brute_force(
    num_ranks: int, num_suits: int, size: int, previous: tuple[tuple[int, ...], ...]
) -> None:
    """Representatives, orbit sizes and stabilizers on small decks as brute force finds them; every board maps
    into its orbit's representative, by a permutation of the stabilizer."""
    orbits = brute_orbits(num_ranks, num_suits, size, previous)
    group = stabilizer(previous, num_ranks, num_suits)
    assert sorted(map(tuple, group.tolist())) == sorted(brute_stabilizer(previous, num_suits))
    assert group[0].tolist() == list(range(num_suits))
    reps, weights = board_orbits(num_ranks, num_suits, size, previous)
    assert reps.shape == (len(orbits), size)
    assert [tuple(r) for r in reps.tolist()] == sorted(orbits)
    assert weights.tolist() == [len(orbits[tuple(r)]) for r in reps.tolist()]
    for rep, orbit in orbits.items():
        for board in orbit:
            canonical, perm = canonical_board(board, num_ranks, num_suits, previous)
            assert tuple(canonical.tolist()) == rep
            assert tuple(perm.tolist()) in {tuple(g) for g in group.tolist()}
            image = card_permutation(perm, num_ranks, num_suits)[list(board)]
            assert sorted(image.tolist()) == list(rep)


def test_fhp_flops() -> None:
    reps, weights = board_orbits(13, 4, 3)
    assert reps.shape == (1755, 3) and weights.sum() == 22_100
    assert (np.diff(reps, axis=1) > 0).all()
    assert (np.lexsort(reps.T[::-1]) == np.arange(1755)).all()
    assert sorted(set(weights.tolist())) == [4, 12, 24]


@pytest.mark.slow
def test_five_card_boards() -> None:
    """The 2,598,960 five-card boards make 134,459 suit orbits."""
    reps, weights = board_orbits(13, 4, 5)
    assert len(reps) == 134_459 and weights.sum() == 2_598_960


@pytest.mark.parametrize("count", [600, pytest.param(22_100, marks=pytest.mark.slow)])
def test_every_flop_maps_to_one_representative(count: int) -> None:
    """Flops (a random sample, or all of them) map to a listed representative; on all 22,100 each
    representative is reached by exactly its weight of flops."""
    reps, weights = board_orbits(13, 4, 3)
    row = {tuple(r): i for i, r in enumerate(reps.tolist())}
    flops = all_sets(52, 3)
    if count < len(flops):
        flops = flops[np.random.default_rng(5).choice(len(flops), count, replace=False)]
    reached = np.zeros(len(reps), dtype=np.int64)
    for flop in flops:
        canonical, perm = canonical_board(flop, 13, 4)
        reached[row[tuple(canonical.tolist())]] += 1
        assert sorted(card_permutation(perm, 13, 4)[flop].tolist()) == canonical.tolist()
    if count == len(flops) == 22_100:
        assert (reached == weights).all()


def test_one_suit_every_board_its_own_orbit() -> None:
    reps, weights = board_orbits(13, 1, 3)
    assert reps.tolist() == [list(b) for b in itertools.combinations(range(13), 3)]
    assert (weights == 1).all()
    assert suit_permutations(1).tolist() == [[0]]


def test_suit_permutations() -> None:
    perms = suit_permutations(4)
    assert perms.shape == (24, 4) and perms[0].tolist() == [0, 1, 2, 3]
    assert len({tuple(p) for p in perms.tolist()}) == 24
    with pytest.raises(InputError):
        card_permutation([0, 0, 1, 2], 13, 4)


def test_turns_after_a_flop() -> None:
    """HULH's turn after a monotone flop: the stabilizer keeps the flop's suit and permutes the other three."""
    flop = parse_cards("As Ks Qs", 4)
    assert len(stabilizer([flop], 13, 4)) == 6
    reps, weights = board_orbits(13, 4, 1, [flop])
    assert weights.sum() == 49
    assert len(reps) == 10 + 13  # a spade of the 10 left, or one of 13 ranks in another suit
    with pytest.raises(InputError):
        board_orbits(13, 4, 1, [flop, flop])


@pytest.mark.parametrize(
    ("num_ranks", "num_suits", "hole", "board_size"), [(13, 4, 2, 5), (13, 4, 2, 3), (4, 3, 2, 1), (13, 4, 1, 2)]
)
def test_hand_permutation_is_a_bijection_that_keeps_strength(
    num_ranks: int, num_suits: int, hole: int, board_size: int
) -> None:
    """For every suit permutation: the image row of each hand holds the hand's mapped cards, every row is hit
    once, and a hand on a board is as strong as its image on the board's image."""
    hands = private_hands(num_ranks, num_suits, hole)
    rng = np.random.default_rng(13)
    boards = [rng.permutation(num_ranks * num_suits)[:board_size] for _ in range(3)]
    for perm in suit_permutations(num_suits):
        cards = card_permutation(perm, num_ranks, num_suits)
        rows = hand_permutation(hands, cards)
        assert (np.sort(rows) == np.arange(len(hands))).all()
        assert (hands[rows] == np.sort(cards[hands], axis=1)).all()
        for board in boards:
            apart = (hand_masks(hands) & board_mask(board.tolist())) == 0
            before = rank_hands(hands, board, num_suits)
            after = rank_hands(hands, cards[board], num_suits)
            assert (after[rows][apart] == before[apart]).all()


def test_hand_permutation_refuses_hands_not_closed() -> None:
    hands = np.array([[0, 1], [0, 4]], dtype=np.int64)
    with pytest.raises(InputError):
        hand_permutation(hands, card_permutation([1, 0, 2, 3], 13, 4))
