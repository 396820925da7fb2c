"""Card abstraction for limit hold'em: the lookups against the suit-isomorphism code of :mod:`adapters.holdem.suits`,
hand strength and its moments against brute-force counts with :func:`adapters.holdem.cards.hand_rank`, the lossless
classes against an enumeration of every (board set, hand) pair, the percentile buckets' masses, the compiled bucket
lookup against Python and a reference, the files, the cache and the command."""

from __future__ import annotations

import itertools
import json
import math
import os
import tracemalloc
import zipfile
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from numba import njit
from numpy.typing import NDArray

from adapters.holdem.cards import hand_masks, hand_rank, private_hands
from adapters.holdem.rules import LimitRules
from adapters.holdem.suits import board_orbits, canonical_board, card_permutation, suit_permutations
from adapters.inputs import InputError
from cfr_agents.abstraction import (
    Abstraction,
    AbstractionFileError,
    AbstractionTables,
    RoundSpec,
    bucket_of,
    build_abstraction,
    build_cached,
    class_counts,
    load_abstraction,
    parse_spec,
    save_abstraction,
    store,
)
from cfr_agents.abstraction.build import game_indexes, game_rules, peak_bytes
from cfr_agents.abstraction.indexing import card_index
from cfr_agents.abstraction.lossless import count_classes, round_classes
from cfr_agents.abstraction.percentile import percentile_buckets
from cfr_agents.abstraction.strength import final_strength, round_strength
from cfr_agents.abstraction.strength_input import strength_input
from tests.support import run_cli

THREE_ROUNDS = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=3,blind=2 1,firstPlayer=2 1 1,numSuits=3,"
    "numRanks=4,numHoleCards=2,numBoardCards=0 1 1,raiseSize=2 2 4,maxRaises=2 2 2)"
)
"""12 cards in 3 suits, a board card in each of two rounds after the first: stabilizers of 1, 2 and 6 suit
permutations."""
ONE_CARD = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=2 1,firstPlayer=2 1,numSuits=2,"
    "numRanks=3,numHoleCards=1,numBoardCards=0 1,raiseSize=2 4,maxRaises=2 2)"
)
"""Leduc's deck and deal: one hole card."""
SMALL_GAMES = ("holdem-8", "holdem-12", THREE_ROUNDS, ONE_CARD)


def rules_of(game: str) -> LimitRules:
    return game_rules(game)[1]


def board_sizes(rules: LimitRules) -> list[int]:
    return [int(size) for size in np.cumsum(rules.board_cards)]


# --- brute-force references ---------------------------------------------------------------------------------


@cache
def showdown_ranks(game: str, board: tuple[int, ...]) -> dict[tuple[int, ...], int]:
    """:func:`hand_rank` of every hand that does not meet ``board``, with it."""
    rules = rules_of(game)
    left = [card for card in range(rules.deck_size) if card not in board]
    return {
        hand: hand_rank(np.array(hand + board), rules.num_suits)
        for hand in itertools.combinations(left, rules.num_hole_cards)
    }


@cache
def brute_strength(game: str, board: tuple[int, ...], hand: tuple[int, ...]) -> float:
    """HS by counting every opponent hand that meets neither the board nor the hand: wins + ties / 2."""
    ranks = showdown_ranks(game, board)
    mine = ranks[hand]
    score, count = 0.0, 0
    for other, theirs in ranks.items():
        if not set(other) & set(hand):
            score += 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0
            count += 1
    return score / count


def brute_moments(
    game: str, board: tuple[int, ...], hand: tuple[int, ...], bins: int
) -> tuple[float, float, NDArray[np.float64]]:
    """E[HS], E[HS^2] and the equity histogram over every run-out that meets neither the board nor the hand."""
    rules = rules_of(game)
    more = board_sizes(rules)[-1] - len(board)
    left = [card for card in range(rules.deck_size) if card not in board and card not in hand]
    values = [
        brute_strength(game, tuple(sorted(board + run_out)), hand) for run_out in itertools.combinations(left, more)
    ]
    histogram = np.bincount([min(int(v * bins), bins - 1) for v in values], minlength=bins) / len(values)
    return float(np.mean(values)), float(np.mean(np.square(values))), histogram


def orbit_key(rules: LimitRules, board: tuple[int, ...], hand: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The smallest image of the pair (board set, hand) under every suit permutation."""
    images = []
    for perm in suit_permutations(rules.num_suits):
        image = card_permutation(perm, rules.num_ranks, rules.num_suits)
        images.append((tuple(sorted(image[list(board)].tolist())), tuple(sorted(image[list(hand)].tolist()))))
    return min(images)


def pairs(rules: LimitRules, size: int) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every (board set, hand) pair of a round with ``size`` board cards."""
    for board in itertools.combinations(range(rules.deck_size), size):
        left = [card for card in range(rules.deck_size) if card not in board]
        for hand in itertools.combinations(left, rules.num_hole_cards):
            yield board, hand


def reference_bucket(abstraction: Abstraction, round_: int, hole: list[int], board: list[int]) -> int:
    """The bucket through :func:`adapters.holdem.suits.canonical_board` (all suit permutations) and the hand's row."""
    rules, tables = abstraction.rules, abstraction.tables
    canonical, perm = canonical_board(board, rules.num_ranks, rules.num_suits)
    boards = game_indexes(rules)[1][round_].canonical
    board_id = int(np.flatnonzero((boards == canonical).all(axis=1))[0]) if len(board) else 0
    image = sorted(card_permutation(perm, rules.num_ranks, rules.num_suits)[hole].tolist())
    hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    row = int(np.flatnonzero((hands == image).all(axis=1))[0])
    return int(tables.buckets[tables.bucket_offset[round_] + board_id * hands.shape[0] + row])


# --- indexing and lossless classes ----------------------------------------------------------------------------


@pytest.mark.parametrize("game", [*SMALL_GAMES, "fhp"])
def test_canonical_boards_are_board_orbits_and_each_board_maps_onto_its_own(game: str) -> None:
    rules = rules_of(game)
    cards, boards = game_indexes(rules)
    rng = np.random.default_rng(0)
    for index in boards:
        canonical, weight = board_orbits(rules.num_ranks, rules.num_suits, index.size)
        assert np.array_equal(index.canonical, canonical) and np.array_equal(index.weight, weight)
        for rank in rng.integers(0, len(index.board_class), 50):
            board = _unrank(int(rank), index.size)
            image = np.sort(cards.card_perm[index.board_perm[rank]][board])
            assert np.array_equal(image, index.canonical[index.board_class[rank]])


def _unrank(rank: int, size: int) -> list[int]:
    """The board set of colexicographic ``rank`` by search (independent of the compiled unranking)."""
    board, card = [], 60
    for i in range(size, 0, -1):
        while math.comb(card, i) > rank:
            card -= 1
        board.append(card)
        rank -= math.comb(card, i)
        card -= 1
    return sorted(board)


def test_52_cards_have_169_preflop_classes_weighted_6_4_12_and_1286792_flop_classes() -> None:
    cards, boards = game_indexes(rules_of("fhp"))
    preflop = round_classes(cards, boards[0])
    hands = cards.hands[preflop.hand]
    pair = hands[:, 0] // 4 == hands[:, 1] // 4
    suited = hands[:, 0] % 4 == hands[:, 1] % 4
    weights = preflop.weight.astype(np.int64)
    assert preflop.count == 169 and weights.sum() == 1326
    assert (weights[pair] == 6).all() and (weights[suited] == 4).all() and (weights[~pair & ~suited] == 12).all()
    assert (pair.sum(), suited.sum(), (~pair & ~suited).sum()) == (13, 78, 78)
    flop = round_classes(cards, boards[1])
    assert flop.count == count_classes(cards, boards[1]) == 1_286_792  # Waugh's figure for the flop (imperfect recall)
    assert flop.weight.astype(np.int64).sum() == math.comb(52, 3) * math.comb(49, 2)


@pytest.mark.parametrize("game", SMALL_GAMES)
def test_lossless_classes_are_the_orbits_of_every_pair(game: str) -> None:
    rules = rules_of(game)
    cards, boards = game_indexes(rules)
    for index in boards:
        classes = round_classes(cards, index)
        orbits: dict[tuple[tuple[int, ...], ...], int] = {}
        for board, hand in pairs(rules, index.size):
            key = orbit_key(rules, board, hand)
            orbits[key] = orbits.get(key, 0) + 1
        ours = {
            orbit_key(rules, tuple(index.canonical[b].tolist()), tuple(cards.hands[h].tolist())): int(w)
            for b, h, w in zip(classes.board(), classes.hand, classes.weight, strict=True)
        }
        assert ours == orbits


# --- hand strength --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("game", SMALL_GAMES)
def test_last_round_strength_is_the_brute_force_count(game: str) -> None:
    rules = rules_of(game)
    cards, boards = game_indexes(rules)
    table = final_strength(cards, boards[-1].canonical)
    for b, board in enumerate(boards[-1].canonical.tolist()):
        for h, hand in enumerate(cards.hands.tolist()):
            if set(hand) & set(board):
                assert np.isnan(table[b, h])
            else:
                assert table[b, h] == pytest.approx(brute_strength(game, tuple(board), tuple(hand)), abs=1e-6)


def test_strength_on_random_52_card_rivers_counts_every_opponent_hand() -> None:
    rules = rules_of("hulh")
    cards = card_index(rules)
    rng = np.random.default_rng(1)
    boards = np.sort(np.stack([rng.choice(52, 5, replace=False) for _ in range(3)]), axis=1)
    table = final_strength(cards, boards)
    masks = hand_masks(cards.hands)
    overlap = (masks[:, None] & masks[None, :]) != 0
    for board, row in zip(boards, table, strict=True):
        rank = np.array([hand_rank(np.concatenate((hand, board)), 4) for hand in cards.hands])
        free = (masks & np.uint64(sum(1 << int(c) for c in board))) == 0
        for h in np.flatnonzero(free)[::37]:
            opponents = free & ~overlap[h]
            assert opponents.sum() == math.comb(45, 2)
            expected = ((rank[opponents] < rank[h]).sum() + 0.5 * (rank[opponents] == rank[h]).sum()) / opponents.sum()
            assert row[h] == pytest.approx(expected, abs=1e-6)
        assert np.isnan(row[~free]).all()


@pytest.mark.parametrize("game", SMALL_GAMES)
def test_expected_strength_and_histograms_are_brute_force_over_the_run_outs(game: str) -> None:
    rules = rules_of(game)
    cards, boards = game_indexes(rules)
    table = final_strength(cards, boards[-1].canonical)
    bins = 7
    for index in boards:
        classes = round_classes(cards, index)
        values = round_strength(cards, index, classes, boards[-1], table, bins)
        for c, (b, h) in enumerate(zip(classes.board(), classes.hand, strict=True)):
            board, hand = tuple(index.canonical[b].tolist()), tuple(cards.hands[h].tolist())
            ehs, ehs2, histogram = brute_moments(game, board, hand, bins)
            assert values.ehs[c] == pytest.approx(ehs, abs=1e-6)
            assert values.ehs2[c] == pytest.approx(ehs2, abs=1e-6)
            assert np.allclose(values.histogram[c], histogram, atol=1e-6)


@pytest.mark.parametrize("game", SMALL_GAMES)
def test_the_strength_input_of_any_deal_is_its_brute_force_expected_strength(game: str) -> None:
    """A network's strength input, looked up for deals of every round at once (rounds mixed, boards in any order),
    is E[HS] over the run-outs counted by brute force; 0 for hole cards that meet the board."""
    strength, rules = strength_input(game), rules_of(game)
    k, sizes = rules.num_hole_cards, strength.board_sizes
    rng = np.random.default_rng(5)
    rounds = rng.integers(0, len(sizes), 60)
    deals = np.stack([rng.choice(rules.deck_size, k + sizes[-1], replace=False) for _ in rounds])
    got = strength.of_deals(rounds, deals[:, :k], deals[:, k:])
    for round_, deal, value in zip(rounds.tolist(), deals.tolist(), got.tolist(), strict=True):
        board, hand = tuple(sorted(deal[k : k + sizes[round_]])), tuple(sorted(deal[:k]))
        assert value == pytest.approx(brute_moments(game, board, hand, 1)[0], abs=1e-6)
    meeting = np.concatenate([deals[:1, k : k + 1], deals[:1, 1:k]], axis=1)  # a hole card on the board
    assert strength.of_deals(np.array([len(sizes) - 1]), meeting, deals[:1, k:])[0] == 0.0


def test_the_strength_input_of_a_game_of_too_many_classes_is_refused_in_one_line() -> None:
    with pytest.raises(InputError, match=r"hulh.* has [\d,]+ classes of \(board, hand\) pairs or more, beyond the"):
        strength_input("hulh")


def test_preflop_expected_strength_on_52_cards_averages_the_flops() -> None:
    rules = rules_of("fhp")
    cards, boards = game_indexes(rules)
    table = final_strength(cards, boards[1].canonical)
    classes = round_classes(cards, boards[0])
    values = round_strength(cards, boards[0], classes, boards[1], table, 0)
    flops = np.array(list(itertools.combinations(range(52), 3)))
    every_flop = final_strength(cards, flops).astype(np.float64)
    for c in (0, 84, 168):  # three classes: each is checked on every flop, evaluated directly
        h = int(classes.hand[c])
        direct = every_flop[~np.isin(flops, cards.hands[h]).any(axis=1), h]
        assert values.ehs[c] == pytest.approx(direct.mean(), abs=1e-9)
        assert values.ehs2[c] == pytest.approx(np.square(direct).mean(), abs=1e-9)


# --- percentile buckets ---------------------------------------------------------------------------------------


def assert_percentiles(
    values: NDArray[np.float64], weights: NDArray[np.float64], labels: NDArray[np.int32], k: int
) -> None:
    """Buckets follow the values, equal values share one, and each holds W / k within the heaviest group's mass."""
    order = np.argsort(values, kind="stable")
    assert (np.diff(labels[order]) >= 0).all()
    groups = np.unique(values, return_inverse=True)[1]
    heaviest = np.bincount(groups, weights=weights).max()
    for group in np.unique(groups):
        assert len(set(labels[groups == group].tolist())) == 1
    mass = np.bincount(labels, weights=weights, minlength=k)
    assert len(mass) == k and np.abs(mass - weights.sum() / k).max() <= heaviest + 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_percentile_buckets_hold_equal_mass_within_one_entry(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    values = rng.integers(0, n // 2, n) / n if seed % 2 else rng.random(n)  # ties, or none
    weights = rng.integers(1, 25, n).astype(np.float64)
    for k in (1, 3, 17, n // 4):
        assert_percentiles(values, weights, percentile_buckets(values, weights, k), k)


def test_percentile_buckets_refuse_bad_input() -> None:
    for values, weights, k in (([0.5], [1.0], 0), ([np.nan], [1.0], 2), ([0.5], [-1.0], 1), ([0.5], [1.0, 2.0], 1)):
        with pytest.raises(InputError):
            percentile_buckets(np.array(values), np.array(weights), k)


def test_ehs2_buckets_follow_expected_strength_squared() -> None:
    rules = rules_of(THREE_ROUNDS)
    spec = parse_spec("7,40,30", class_counts(THREE_ROUNDS))
    abstraction = build_abstraction(THREE_ROUNDS, spec, np.random.default_rng(0))
    cards, boards = game_indexes(rules)
    table = final_strength(cards, boards[-1].canonical)
    tables = abstraction.tables
    for number, index in enumerate(boards):
        classes = round_classes(cards, index)
        values = round_strength(cards, index, classes, boards[-1], table, 0)
        value = values.ehs if number == len(boards) - 1 else values.ehs2
        start = tables.bucket_offset[number]
        labels = tables.buckets[start + classes.board() * cards.num_hands + classes.hand]
        assert_percentiles(value, classes.weight.astype(np.float64), labels, spec[number].buckets)


# --- the lookup -----------------------------------------------------------------------------------------------


@njit(cache=True)
def compiled_buckets(tables: AbstractionTables, round_: int, deals: NDArray[np.int64], k: int) -> NDArray[np.int64]:
    """:func:`bucket_of` of each deal's first ``k`` cards (hole) and the rest (board), from compiled code."""
    out = np.empty(deals.shape[0], dtype=np.int64)
    for i in range(deals.shape[0]):
        out[i] = bucket_of(tables, round_, deals[i, :k], deals[i, k:])
    return out


@cache
def small_abstraction(game: str, method: str) -> Abstraction:
    counts = class_counts(game)
    if method == "lossless":
        spec = parse_spec(",".join(["lossless"] * len(counts)), counts)
    else:
        spec = parse_spec(",".join(str(max(1, count // 3)) for count in counts), counts, method, 8)
    return build_abstraction(game, spec, np.random.default_rng(7))


@pytest.mark.parametrize("method", ["lossless", "ehs2", pytest.param("emd", marks=pytest.mark.slow)])
@pytest.mark.parametrize("game", SMALL_GAMES)
def test_compiled_lookup_is_the_python_one_and_the_reference_and_suit_blind(game: str, method: str) -> None:
    abstraction = small_abstraction(game, method)
    rules = abstraction.rules
    rng = np.random.default_rng(3)
    perms = suit_permutations(rules.num_suits)
    k = rules.num_hole_cards
    for round_, size in enumerate(abstraction.board_sizes):
        deals = np.stack([rng.choice(rules.deck_size, k + size, replace=False) for _ in range(60)])
        compiled = compiled_buckets(abstraction.kernel_tables(), round_, deals, k)
        for deal, bucket in zip(deals.tolist(), compiled.tolist(), strict=True):
            hole, board = deal[:k], deal[k:]
            assert 0 <= bucket < abstraction.num_buckets[round_]
            assert abstraction.bucket(round_, hole, board) == bucket
            assert reference_bucket(abstraction, round_, hole, sorted(board)) == bucket
            image = card_permutation(perms[rng.integers(len(perms))], rules.num_ranks, rules.num_suits)
            moved = image[deal]
            assert abstraction.bucket(round_, moved[:k][::-1], rng.permutation(moved[k:])) == bucket


@pytest.mark.parametrize("game", SMALL_GAMES)
def test_lossless_buckets_are_equal_exactly_for_isomorphic_pairs(game: str) -> None:
    abstraction = small_abstraction(game, "lossless")
    rules = abstraction.rules
    for round_, size in enumerate(abstraction.board_sizes):
        bucket_of_orbit: dict[tuple[tuple[int, ...], ...], int] = {}
        for board, hand in pairs(rules, size):
            bucket = abstraction.bucket(round_, list(hand), list(board))
            assert bucket_of_orbit.setdefault(orbit_key(rules, board, hand), bucket) == bucket
        assert sorted(bucket_of_orbit.values()) == list(range(abstraction.num_buckets[round_]))


def test_the_python_lookup_refuses_cards_that_are_not_a_deal() -> None:
    abstraction = small_abstraction("holdem-8", "lossless")
    for round_, hole, board in (
        (2, [0, 1], [2]),
        (1, [0, 1], []),
        (1, [0, 0], [2]),
        (1, [0, 1], [1]),
        (1, [0, 9], [2]),
    ):
        with pytest.raises(InputError):
            abstraction.bucket(round_, hole, board)


def test_specs_are_refused_when_they_do_not_fit() -> None:
    counts = class_counts("holdem-8")
    assert parse_spec(None, counts) == (RoundSpec("lossless", counts[0]), RoundSpec("lossless", counts[1]))
    assert parse_spec(None, (169, 1_286_792), "emd", 30) == (RoundSpec("lossless", 169), RoundSpec("ehs2", 200))
    assert parse_spec("5, 10,lossless", (16, 84, 90), "emd", 30) == (
        RoundSpec("emd", 5, 30),
        RoundSpec("emd", 10, 30),
        RoundSpec("lossless", 90),
    )
    assert parse_spec("5,10,20", (16, 84, 90), "emd", 30)[2] == RoundSpec("ehs2", 20)
    for text in ("0,5", "5", "x,5", "5,85", "5,-1", "5,1e3", "5,5,5"):
        with pytest.raises(InputError):
            parse_spec(text, counts)
    for method, bins in (("nope", 50), ("emd", 1)):
        with pytest.raises(InputError):
            parse_spec(None, counts, method, bins)
    with pytest.raises(InputError):
        build_abstraction(
            "holdem-8", (RoundSpec("lossless", counts[0]), RoundSpec("emd", 4, 8)), np.random.default_rng()
        )
    with pytest.raises(InputError):
        build_abstraction("openspiel:kuhn_poker", (), np.random.default_rng())


@pytest.mark.slow
def test_hulh_turn_expectations_look_up_the_rivers_they_deal() -> None:
    rules = rules_of("hulh")
    cards, boards = game_indexes(rules)
    table = final_strength(cards, boards[3].canonical)
    classes = round_classes(cards, boards[2])
    values = round_strength(cards, boards[2], classes, boards[3], table, 10)
    rng = np.random.default_rng(5)
    for b in rng.choice(boards[2].num_boards, 4, replace=False):
        turn = boards[2].canonical[b]
        rivers = np.sort(np.array([[*turn, card] for card in range(52) if card not in turn]), axis=1)
        direct = final_strength(cards, rivers).astype(np.float64)
        for c in range(classes.offset[b], classes.offset[b + 1], 17):
            h = int(classes.hand[c])
            dealt = direct[~np.isin(rivers, cards.hands[h]).any(axis=1), h]
            assert values.ehs[c] == pytest.approx(dealt.mean(), abs=1e-9)
            assert values.ehs2[c] == pytest.approx(np.square(dealt).mean(), abs=1e-9)
            histogram = np.bincount(np.minimum((dealt * 10).astype(int), 9), minlength=10) / len(dealt)
            assert np.allclose(values.histogram[c], histogram, atol=1e-6)


# --- files and cache ------------------------------------------------------------------------------------------


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Abstraction, Path]:
    abstraction = small_abstraction("holdem-8", "ehs2")
    save_abstraction(abstraction, tmp_path / "abstraction")
    return abstraction, tmp_path / "abstraction"


def refusal(path: Path, game_id: str | None = None) -> str:
    with pytest.raises(AbstractionFileError) as refused:
        load_abstraction(path, game_id)
    message = str(refused.value)
    assert "\n" not in message and str(path) in message
    return message


def test_an_abstraction_round_trips(saved: tuple[Abstraction, Path]) -> None:
    abstraction, path = saved
    loaded = load_abstraction(path, "holdem-8")
    assert (loaded.game_id, loaded.rules, loaded.rounds, loaded.classes) == (
        abstraction.game_id,
        abstraction.rules,
        abstraction.rounds,
        abstraction.classes,
    )
    for name, array in abstraction.tables._asdict().items():
        stored = getattr(loaded.tables, name)
        assert stored.dtype == array.dtype and np.array_equal(stored, array), name
    sidecar = json.loads((path / store.SIDECAR).read_text())
    assert sidecar["size_bytes"] == (path / store.TABLES).stat().st_size
    assert [r["buckets"] for r in sidecar["rounds"]] == list(abstraction.num_buckets)


def test_tampered_tables_are_refused(saved: tuple[Abstraction, Path]) -> None:
    _, path = saved
    with np.load(path / store.TABLES) as archive:
        arrays = dict(archive)
    arrays["buckets"][np.flatnonzero(arrays["buckets"] > 0)[0]] -= 1
    np.savez(path / store.TABLES, **arrays)
    assert "digest" in refusal(path)


def test_an_abstraction_of_another_game_or_rules_is_refused(saved: tuple[Abstraction, Path]) -> None:
    _, path = saved
    assert "is for" in refusal(path, "holdem-6")
    sidecar = json.loads((path / store.SIDECAR).read_text())
    (path / store.SIDECAR).write_text(json.dumps({**sidecar, "rules_fingerprint": "sha256:" + "0" * 64}))
    assert "was made for rules" in refusal(path, "holdem-8")


def test_truncated_damaged_or_missing_files_are_refused(saved: tuple[Abstraction, Path], tmp_path: Path) -> None:
    _, path = saved
    tables, sidecar = path / store.TABLES, path / store.SIDECAR
    whole, text = tables.read_bytes(), sidecar.read_text()
    for cut in (len(whole) // 2, len(whole) - 10, 100):
        tables.write_bytes(whole[:cut])
        refusal(path)
    tables.write_bytes(whole)
    with zipfile.ZipFile(tables) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    with zipfile.ZipFile(tables, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    assert "compressed" in refusal(path)
    tables.write_bytes(whole)
    listed = json.loads(text)
    listed["arrays"]["buckets"]["shape"] = [1]
    sidecar.write_text(json.dumps(listed))
    refusal(path)
    for broken in ("", "[1]", json.dumps({**json.loads(text), "rounds": "two"}), text.replace('"ehs2"', '"nope"')):
        sidecar.write_text(broken)
        refusal(path)
    sidecar.unlink()
    assert "holds no" in refusal(path)
    assert "does not exist" in refusal(tmp_path / "missing")
    assert "regular file" in refusal(tables)


def test_a_failed_write_leaves_no_directory_that_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = small_abstraction("holdem-8", "lossless"), small_abstraction("holdem-8", "ehs2")

    def full_disk(handle: object, **arrays: object) -> None:
        handle.write(b"PK\x03\x04 half an archive")  # type: ignore[attr-defined]
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(np, "savez", full_disk)
        with pytest.raises(InputError):
            save_abstraction(second, tmp_path / "new")
    assert list(tmp_path.iterdir()) == []
    save_abstraction(first, tmp_path / "old")

    synced: list[int] = []
    fsync = os.fsync

    def crash_at_the_sidecar(descriptor: int) -> None:
        synced.append(descriptor)
        if len(synced) == 2:  # the tables were written; the sidecar, written second, fails
            raise OSError(5, "Input/output error")
        fsync(descriptor)

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", crash_at_the_sidecar)
        with pytest.raises(InputError):
            save_abstraction(second, tmp_path / "old")
    assert "digest" in refusal(tmp_path / "old")
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == sorted(store.FILES)


def test_a_second_build_is_a_copy_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CFR_AGENTS_NO_TREE_CACHE", raising=False)
    builds: list[int] = []
    build = build_abstraction

    def counted(*args: object, **options: object) -> Abstraction:
        builds.append(1)
        return build(*args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "build_abstraction", counted)
    spec = parse_spec("5,20", class_counts("holdem-8"), "ehs2", 8)
    first, cached = build_cached("holdem-8", spec, 3, tmp_path / "a")
    assert not cached and len(builds) == 1 and first.seed == 3
    second, cached = build_cached("holdem-8", spec, 3, tmp_path / "b")
    assert cached and len(builds) == 1
    for name in store.FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert np.array_equal(second.tables.buckets, first.tables.buckets)
    build_cached("holdem-8", spec, 4, tmp_path / "c")
    assert len(builds) == 2
    [entry] = [
        e
        for e in store.cache_directory().iterdir()
        if e.is_dir() and (e / store.SIDECAR).exists() and json.loads((e / store.SIDECAR).read_text())["seed"] == 3
    ]
    (entry / store.TABLES).write_bytes(b"damaged")
    _, cached = build_cached("holdem-8", spec, 3, tmp_path / "d")
    assert not cached and len(builds) == 3 and "warning" in capsys.readouterr().err
    monkeypatch.setenv("CFR_AGENTS_NO_TREE_CACHE", "1")
    _, cached = build_cached("holdem-8", spec, 3, tmp_path / "e")
    assert not cached and len(builds) == 4


# --- the command ----------------------------------------------------------------------------------------------


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "file").write_text("not an abstraction")
    return tmp_path


def test_build_states_its_memory_and_refuses_a_build_the_machine_cannot_hold(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["abstraction", "build", "--game", "holdem-8", "--buckets", "lossless,20", "--out"]
    built = run_cli([*argv, "a"])
    assert built.status == 0 and "memory: about " in built.err and " at the peak, of " in built.err
    monkeypatch.setattr("cfr_agents.cli.common.physical_bytes", lambda: 1000)
    refused = run_cli([*argv, "b"])
    assert refused.status == 2 and len(refused.err.strip().splitlines()) == 1
    assert "of memory at the peak; this machine has 0.0 MB" in refused.err
    assert not (workdir / "b").exists()


def test_build_and_show_on_holdem_8(workdir: Path) -> None:
    argv = ["abstraction", "build", "--game", "holdem-8", "--buckets", "lossless,20", "--quiet", "--out"]
    built = run_cli([*argv, "a"])
    assert built.status == 0 and built.err == "" and "bytes" in built.out and " s" in built.out, built
    assert load_abstraction(workdir / "a", "holdem-8").num_buckets == (16, 20)
    again = run_cli([*argv, "b"])
    assert again.status == 0 and "cache" in again.out
    shown = run_cli(["abstraction", "show", "a"])
    lines = shown.out.splitlines()
    assert shown.status == 0 and len(lines) == 4, shown
    assert lines[2].split()[:4] == ["0", "0", "lossless", "16"] and lines[3].split()[:4] == ["1", "1", "ehs2", "20"]


@pytest.mark.parametrize(
    "argv",
    [
        ["build", "--game", "nope", "--out", "out"],
        ["build", "--game", "openspiel:kuhn_poker", "--out", "out"],
        ["build", "--game", "holdem-8", "--out", "out", "--buckets", "0,5"],
        ["build", "--game", "holdem-8", "--out", "out", "--buckets", "5"],
        ["build", "--game", "holdem-8", "--out", "out", "--buckets", "x,5"],
        ["build", "--game", "holdem-8", "--out", "out", "--buckets", "5,1000"],
        ["build", "--game", "holdem-8", "--out", "out", "--method", "emd", "--bins", "1"],
        ["build", "--game", "holdem-8", "--out", "out", "--seed", "-1"],
        ["build", "--game", "holdem-8", "--out", "file"],
        ["build", "--game", "holdem-8", "--out", "missing/out"],
        ["build", "--game", "holdem-8", "--out", ""],
        ["show", "missing"],
        ["show", "file"],
    ],
)
def test_bad_input_is_refused_in_one_line(workdir: Path, argv: list[str]) -> None:
    result = run_cli(["abstraction", *argv])
    lines = result.err.splitlines()
    assert result.status == 2 and len(lines) == 1 and lines[0].startswith("cfr-agents: error:"), result
    assert not (workdir / "out").exists() and (workdir / "file").read_text() == "not an abstraction"
    assert not (workdir / store.SIDECAR).exists() and not (workdir / store.TABLES).exists()


@pytest.mark.parametrize("spec", ["lossless,3000", "lossless,lossless"])
def test_the_memory_estimate_bounds_what_building_allocates(spec: str) -> None:
    """The estimate stated before a build is at least the peak of what the build allocates (NumPy's arrays are
    traced), and not more than twice it."""
    rounds = parse_spec(spec, class_counts("fhp"))
    build_abstraction("fhp", rounds, np.random.default_rng(0))  # compiled outside the trace
    tracemalloc.start()
    try:
        build_abstraction("fhp", rounds, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= peak_bytes("fhp", rounds) <= 2 * peak
