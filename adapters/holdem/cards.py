r"""Hold'em cards as OpenSpiel's ``universal_poker`` numbers them, and a compiled hand evaluator.

Cards (OpenSpiel and ACPC conventions). A deck has ``num_ranks`` x ``num_suits`` cards, ``1 <= num_ranks <= 13``
and ``1 <= num_suits <= 4``, and uses the *lowest* ranks: rank 0 is ``'2'``, ..., rank 12 is ``'A'``; suits 0..3
are ``'c' 'd' 'h' 's'``. A card's id is :math:`\text{rank} \cdot \text{num\_suits} + \text{suit}`, the chance
action that deals it in ``universal_poker`` (with 2 suits card 3 is ``3d``; with 4 suits card 51 is ``As``).

Hand strength. A showdown in ``universal_poker`` is decided by ACPC's ``rankCardset`` (the project_acpc_server
``evalHandTables`` shipped with OpenSpiel), which ranks any set of 1 to 7 cards: straight flush, quads, full
house, flush, straight (the wheel A-2-3-4-5 needs the ace, rank 12, so a deck without it has none), trips,
two pair, pair, high card; within a class the best five cards and their kickers decide. With fewer cards it
ranks the pairs, trips and kickers among the cards there are. :func:`hand_rank` gives the same order as
``rankCardset`` on every set of cards (a bigger number is a stronger hand, equal numbers tie), and in fact the
same numbers, all in ``[0, RANK_BOUND)``:

* high card: :math:`\mathrm{colex}_5(R)`, straight: :math:`9620 + t`, flush: :math:`9633 + \mathrm{colex}_5(S)`,
  straight flush: :math:`12103 + t`, where :math:`R` is the set of ranks held, :math:`S` the ranks of the flush
  suit, :math:`t` the straight's top rank (3 for the wheel);
* pair of :math:`p`: :math:`1287 + 286p + \mathrm{colex}_3(R \setminus p)`; two pair :math:`p > q`:
  :math:`5005 + 286p + 13q + \max(R \setminus \{p, q\})` (the kicker may be a third pair's rank);
* trips of :math:`t`: :math:`8606 + 78t + \mathrm{colex}_2(R \setminus t)`; full house :math:`t` over :math:`p`:
  :math:`10920 + 78t + p`; quads of :math:`q`: :math:`11934 + 13q + \max(R \setminus q)`;

with :math:`\mathrm{colex}_k(X) = \sum_{i=1}^{k'} \binom{x_i}{i}` over the :math:`k' = \min(k, |X|)` highest
ranks :math:`x_1 < \dots < x_{k'}` of :math:`X` (the colexicographic index, which orders sets of one size by
their highest rank first), and :math:`\max \emptyset = 0`. These are the table values of ``rankCardset``,
including what they do with fewer than five cards: a hand is valued by the kickers it has, a missing kicker
counting as a deuce does (:math:`\max \emptyset = 0`) or dropping out of the colex index. Sets of one size are
ordered as poker orders them; between sizes the order is ``rankCardset``'s (four-card quads tie the same quads
with a deuce).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable
from typing import Final

import numpy as np
from numba import njit
from numpy.typing import NDArray

from adapters.inputs import InputError

RANK_CHARS: Final = "23456789TJQKA"
"""Rank ``r`` is written ``RANK_CHARS[r]`` (ACPC's and OpenSpiel's letters)."""
SUIT_CHARS: Final = "cdhs"
"""Suit ``s`` is written ``SUIT_CHARS[s]``."""
MAX_RANKS: Final = 13
MAX_SUITS: Final = 4
"""The largest deck: 13 ranks of 4 suits (ACPC's ``MAX_RANKS`` and ``MAX_SUITS``)."""
RANK_BOUND: Final = 12116
""":func:`hand_rank` is in ``[0, RANK_BOUND)``: a straight flush's top rank is at most 12 (``12103 + 12``)."""

_PAIR, _TWO_PAIR, _TRIPS = 1287, 5005, 8606
_STRAIGHT, _FLUSH, _FULL_HOUSE, _QUADS, _STRAIGHT_FLUSH = 9620, 9633, 10920, 11934, 12103
_PAIR_STEP, _TWO_PAIR_STEP, _TRIPS_STEP, _QUADS_STEP = 286, 13, 78, 13
"""Class offsets and the step of each class's leading rank (``rankCardset``'s ``HANDCLASS_*`` and ``*Val``)."""
_RANK_MASK: Final = (1 << MAX_RANKS) - 1
_SUIT_SHIFT: Final = 16
"""A card set is one int64: suit ``s`` holds its ranks' bits at ``16 s .. 16 s + 12`` (ACPC's ``Cardset``)."""


def _colex(masks: NDArray[np.int64], k: int) -> NDArray[np.int64]:
    r""":math:`\mathrm{colex}_k` of each 13-bit rank set: :math:`\sum_i \binom{x_i}{i}` over its ``k`` highest ranks."""
    bits = (masks[:, None] >> np.arange(MAX_RANKS)) & 1
    at_or_above = np.cumsum(bits[:, ::-1], axis=1)[:, ::-1]  # set bits at this rank or higher
    kept = np.minimum(bits.sum(axis=1), k)[:, None]
    position = kept - at_or_above + 1  # 1 for the lowest kept rank, ..., kept for the highest
    keep = (bits == 1) & (at_or_above <= k)
    binomial = np.array([[math.comb(x, i) for i in range(k + 1)] for x in range(MAX_RANKS)], dtype=np.int64)
    ranks = np.broadcast_to(np.arange(MAX_RANKS), bits.shape)
    index: NDArray[np.int64] = np.where(keep, binomial[ranks, np.clip(position, 0, k)], 0).sum(axis=1)
    return index


def _straight_top(masks: NDArray[np.int64]) -> NDArray[np.int64]:
    """The top rank of the highest straight in each rank set (3 for the wheel A-2-3-4-5), or -1."""
    top = np.full(masks.shape, -1, dtype=np.int64)
    wheel = (1 << 12) | 0b1111
    top[(masks & wheel) == wheel] = 3
    for high in range(4, MAX_RANKS):  # a higher straight overwrites a lower one
        run = 0b11111 << (high - 4)
        top[(masks & run) == run] = high
    return top


def _tables() -> tuple[NDArray[np.int64], ...]:
    """The five 8192-entry tables of ``rankCardset``, indexed by a 13-bit rank set: the value of one suit's cards
    as a flush (0 under five cards), as any suit's ranks (straight or high card), the colex index of a pair's
    three and trips' two kickers, and the highest rank (0 for the empty set)."""
    masks = np.arange(1 << MAX_RANKS, dtype=np.int64)
    count = np.array([bin(m).count("1") for m in range(1 << MAX_RANKS)], dtype=np.int64)
    straight, high5 = _straight_top(masks), _colex(masks, 5)
    any_suit = np.where(straight >= 0, _STRAIGHT + straight, high5)
    one_suit = np.where(count < 5, 0, np.where(straight >= 0, _STRAIGHT_FLUSH + straight, _FLUSH + high5))
    top_bit = np.zeros(masks.shape, dtype=np.int64)
    top_bit[1:] = np.floor(np.log2(masks[1:])).astype(np.int64)
    return one_suit, any_suit, _colex(masks, 3), _colex(masks, 2), top_bit


_ONE_SUIT, _ANY_SUIT, _PAIR_KICKERS, _TRIPS_KICKERS, _TOP_RANK = _tables()


@njit(cache=True)
def _rank_cardset(cards: int) -> int:
    """``rankCardset`` of an int64 card set (``16 suit + rank`` bits), step by step as ACPC computes it."""
    c0 = cards & _RANK_MASK
    c1 = (cards >> _SUIT_SHIFT) & _RANK_MASK
    c2 = (cards >> (2 * _SUIT_SHIFT)) & _RANK_MASK
    c3 = (cards >> (3 * _SUIT_SHIFT)) & _RANK_MASK
    flush = max(max(_ONE_SUIT[c0], _ONE_SUIT[c1]), max(_ONE_SUIT[c2], _ONE_SUIT[c3]))
    if flush >= _STRAIGHT_FLUSH:
        return int(flush)
    # ranks held at least once, twice, three times, four times
    once = c0 | c1
    twice = c0 & c1
    thrice = twice & c2
    twice |= once & c2
    once |= c2
    four = thrice & c3
    thrice |= twice & c3
    twice |= once & c3
    once |= c3
    if four:
        r = _TOP_RANK[four]
        return int(_QUADS + _QUADS_STEP * r + _TOP_RANK[once ^ (1 << r)])
    if thrice:
        r = _TOP_RANK[thrice]
        pairs = twice ^ (1 << r)
        if pairs:
            return int(_FULL_HOUSE + _TRIPS_STEP * r + _TOP_RANK[pairs])
        if flush:
            return int(flush)
        straight = _ANY_SUIT[once]
        if straight >= _STRAIGHT:
            return int(straight)
        return int(_TRIPS + _TRIPS_STEP * r + _TRIPS_KICKERS[once ^ (1 << r)])
    if flush:
        return int(flush)
    high = _ANY_SUIT[once]
    if high >= _STRAIGHT or not twice:
        return int(high)
    r = _TOP_RANK[twice]
    once ^= 1 << r
    twice ^= 1 << r
    if twice:
        q = _TOP_RANK[twice]
        return int(_TWO_PAIR + _PAIR_STEP * r + _TWO_PAIR_STEP * q + _TOP_RANK[once ^ (1 << q)])
    return int(_PAIR + _PAIR_STEP * r + _PAIR_KICKERS[once])


@njit(cache=True)
def _card_bit(card: int, num_suits: int) -> int:
    """The card set bit of card ``card``: suit ``card % num_suits``, rank ``card // num_suits``."""
    return 1 << (_SUIT_SHIFT * (card % num_suits) + card // num_suits)


@njit(cache=True)
def hand_rank(cards: NDArray[np.int64], num_suits: int) -> int:
    """The strength of ``cards`` (1 to 7 distinct card ids of a deck with ``num_suits`` suits): bigger is
    stronger, equal is a tie, in the order of ACPC's ``rankCardset`` that decides ``universal_poker``'s
    showdowns (module docstring), for every card count and deck size. Cards are not checked: a repeated card
    counts once, an id past the deck is another rank."""
    cardset = 0
    for card in cards:
        cardset |= _card_bit(card, num_suits)
    return _rank_cardset(cardset)


@njit(cache=True)
def cards_rank(hole: NDArray[np.int64], board: NDArray[np.int64], num_suits: int) -> int:
    """:func:`hand_rank` of ``hole`` and ``board`` together, without building their union (no allocation)."""
    cardset = 0
    for card in hole:
        cardset |= _card_bit(card, num_suits)
    for card in board:
        cardset |= _card_bit(card, num_suits)
    return _rank_cardset(cardset)


@njit(cache=True)
def rank_hands(hands: NDArray[np.int64], board: NDArray[np.int64], num_suits: int) -> NDArray[np.int64]:
    """:func:`hand_rank` of each row of ``hands`` ``(H, k)`` together with ``board`` ``(m,)``: ``(H,)`` int64.

    A hand that shares a card with the board gets an arbitrary value (the shared card counts once): mask such
    hands out, e.g. with ``hand_masks(hands) & board_mask(board)``."""
    bits = np.empty(MAX_RANKS * num_suits, dtype=np.int64)
    for card in range(bits.shape[0]):
        bits[card] = _card_bit(card, num_suits)
    common = 0
    for card in board:
        common |= bits[card]
    strength = np.empty(hands.shape[0], dtype=np.int64)
    for h in range(hands.shape[0]):
        cardset = common
        for j in range(hands.shape[1]):
            cardset |= bits[hands[h, j]]
        strength[h] = _rank_cardset(cardset)
    return strength


def check_deck(num_ranks: int, num_suits: int) -> int:
    """The number of cards of a ``num_ranks`` x ``num_suits`` deck; refused unless ``1 <= num_ranks <= 13`` and
    ``1 <= num_suits <= 4``."""
    if not 1 <= num_ranks <= MAX_RANKS or not 1 <= num_suits <= MAX_SUITS:
        raise InputError(f"a deck has 1 to {MAX_RANKS} ranks and 1 to {MAX_SUITS} suits, not {num_ranks} x {num_suits}")
    return num_ranks * num_suits


def card_id(rank: int, suit: int, num_suits: int) -> int:
    """The id of the card of ``rank`` (0 = ``'2'`` .. 12 = ``'A'``) and ``suit`` (0..3 = ``'c' 'd' 'h' 's'``)
    in a deck of ``num_suits`` suits: ``rank * num_suits + suit``."""
    check_deck(MAX_RANKS, num_suits)
    if not 0 <= rank < MAX_RANKS or not 0 <= suit < num_suits:
        raise InputError(f"no card of rank {rank} and suit {suit} in a deck of {num_suits} suits")
    return rank * num_suits + suit


def card_name(card: int, num_suits: int) -> str:
    """The name of card ``card`` in a deck of ``num_suits`` suits, rank letter then suit letter (``'As'``)."""
    check_deck(MAX_RANKS, num_suits)
    if not 0 <= card < MAX_RANKS * num_suits:
        raise InputError(f"no card {card} in a deck of {num_suits} suits")
    return RANK_CHARS[card // num_suits] + SUIT_CHARS[card % num_suits]


def parse_cards(text: str, num_suits: int) -> list[int]:
    """The card ids named in ``text`` (``'AsKd'``, ``'As Kd'`` or ``'As,Kd'``) in a deck of ``num_suits`` suits,
    in the order written; a card named twice, an unknown letter or a suit past the deck is refused."""
    check_deck(MAX_RANKS, num_suits)
    letters = "".join(text.replace(",", " ").split())
    if len(letters) % 2:
        raise InputError(f"cards are written rank then suit, e.g. 'AsKd': cannot read {text!r}")
    cards: list[int] = []
    for i in range(0, len(letters), 2):
        rank, suit = RANK_CHARS.find(letters[i].upper()), SUIT_CHARS.find(letters[i + 1].lower())
        if rank < 0 or not 0 <= suit < num_suits:
            raise InputError(
                f"no card {letters[i : i + 2]!r} in a deck of {num_suits} suits ({SUIT_CHARS[:num_suits]})"
            )
        card = rank * num_suits + suit
        if card in cards:
            raise InputError(f"card {letters[i : i + 2]!r} is named twice in {text!r}")
        cards.append(card)
    return cards


def private_hands(num_ranks: int, num_suits: int, hole: int) -> NDArray[np.int64]:
    r"""Every private hand of ``hole`` cards from the ``num_ranks`` x ``num_suits`` deck: ``(H, hole)`` int64,
    :math:`H = \binom{n}{hole}`, each row increasing, rows in lexicographic order (1326 rows for 52 cards and
    2 hole cards)."""
    n = check_deck(num_ranks, num_suits)
    if not 1 <= hole <= n:
        raise InputError(f"a hand has 1 to {n} cards in a deck of {n}, not {hole}")
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), hole)), dtype=np.int64)
    return flat.reshape(-1, hole)


def hand_masks(hands: NDArray[np.int64]) -> NDArray[np.uint64]:
    """The bit mask of each hand's cards (bit ``c`` for card ``c``): ``(H,)`` uint64 from ``(H, k)`` card ids."""
    bits = np.left_shift(np.uint64(1), np.asarray(hands).astype(np.uint64))
    masks: NDArray[np.uint64] = np.bitwise_or.reduce(bits, axis=1)
    return masks


def board_mask(cards: Iterable[int]) -> np.uint64:
    """The bit mask of ``cards`` (bit ``c`` for card ``c``), to test hands against with :func:`hand_masks`."""
    mask = 0
    for card in cards:
        if not 0 <= card < 64 or mask >> int(card) & 1:
            raise InputError(f"card {card} is not a card of a deck or is repeated in a board")
        mask |= 1 << int(card)
    return np.uint64(mask)


def hand_index_table(hands: NDArray[np.int64], num_cards: int) -> NDArray[np.int64]:
    """The row of each hand of ``hands`` ``(H, k)`` (rows increasing) indexed by its cards: ``table[c_1, ..., c_k]``
    is the row whose cards are ``c_1 < ... < c_k``, -1 for any index that is not an increasing row of ``hands``.
    For one hole card a ``(num_cards,)`` table, for two a ``(num_cards, num_cards)`` one (``num_cards ** k``
    entries in all)."""
    hands = np.asarray(hands, dtype=np.int64)
    if hands.ndim != 2 or (hands.size and (hands.min() < 0 or hands.max() >= num_cards)):
        raise InputError(f"hands must be rows of card ids below {num_cards}")
    if hands.shape[1] > 1 and not (np.diff(hands, axis=1) > 0).all():
        raise InputError("each hand's cards must be increasing")
    table = np.full((num_cards,) * hands.shape[1], -1, dtype=np.int64)
    table[tuple(hands.T)] = np.arange(hands.shape[0])
    return table


_FIELDS: Final = re.compile(r"\[Private: ([^\]]*)\]\[Public: ([^\]]*)\]\[Sequences: ([^\]]*)\]")


def information_state_fields(information_state: str, num_suits: int) -> tuple[list[int], list[int], str]:
    """The hole cards, the board cards and the betting (``Sequences``) of a ``universal_poker`` information
    state, which ends in ``[Private: <hole cards>][Public: <board cards>][Sequences: <betting>]``."""
    found = _FIELDS.search(information_state)
    if found is None:
        raise InputError(f"not a universal_poker information state: {information_state!r}")
    return parse_cards(found.group(1), num_suits), parse_cards(found.group(2), num_suits), found.group(3)
