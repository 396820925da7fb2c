r"""Suit isomorphism: the suits of a poker deck are interchangeable, so boards come in orbits of equal boards.

A permutation :math:`\pi` of the ``num_suits`` suits (an array ``perm`` with ``perm[s]`` the image of suit
``s``) maps card ``(rank, suit)`` to ``(rank, perm[suit])`` (:func:`card_permutation`), hence hands and boards
to hands and boards, and keeps every hand's strength (suits only matter by being equal or not). After the boards
:math:`B_1, \dots, B_{r-1}` of earlier rounds are dealt, only the permutations that map each :math:`B_i` onto
itself (as a set) keep the public state: the *stabilizer* :math:`G` of those boards (:func:`stabilizer`). The
next round's boards fall into orbits under :math:`G`; one *canonical* board stands for each orbit, weighted by
the orbit's size :math:`|G| / |G_b|` (:func:`board_orbits`). For the flop of full hold'em (:math:`G` = all 24
permutations) the 22,100 flops make 1,755 orbits.

Canonical board rule: the lexicographically smallest sorted image :math:`\operatorname{sort}(\pi(b))`,
:math:`\pi \in G`, of any board :math:`b` of the orbit (card ids compared in order).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from adapters.holdem.cards import board_mask, check_deck, hand_index_table
from adapters.inputs import InputError

IntArray = NDArray[np.int64]


def suit_permutations(num_suits: int) -> IntArray:
    """Every permutation of ``num_suits`` suits, ``(num_suits!, num_suits)`` int64, in lexicographic order (the
    identity first; 24 rows for 4 suits)."""
    check_deck(1, num_suits)
    return np.array(list(itertools.permutations(range(num_suits))), dtype=np.int64).reshape(-1, num_suits)


def card_permutation(perm: Sequence[int] | IntArray, num_ranks: int, num_suits: int) -> IntArray:
    """The image of every card of the ``num_ranks`` x ``num_suits`` deck under the suit permutation ``perm``:
    ``(n,)`` int64 whose entry ``rank * num_suits + suit`` is ``rank * num_suits + perm[suit]``."""
    n = check_deck(num_ranks, num_suits)
    perm = np.asarray(perm, dtype=np.int64)
    if perm.shape != (num_suits,) or sorted(perm.tolist()) != list(range(num_suits)):
        raise InputError(f"a suit permutation lists each of the {num_suits} suits once, not {perm.tolist()}")
    cards = np.arange(n, dtype=np.int64)
    return cards - cards % num_suits + perm[cards % num_suits]


def hand_permutation(hands: IntArray, card_perm: IntArray) -> IntArray:
    """The row of each hand's image: ``(H,)`` int64 whose entry ``i`` is the row of ``hands`` ``(H, k)`` (rows
    increasing, e.g. :func:`~adapters.holdem.cards.private_hands`) holding the cards ``card_perm[hands[i]]``.
    ``hands`` must hold every image (it does when it holds every hand of the deck); then the result is a
    permutation of the rows."""
    card_perm = np.asarray(card_perm, dtype=np.int64)
    table = hand_index_table(hands, card_perm.shape[0])
    images = np.sort(card_perm[np.asarray(hands, dtype=np.int64)], axis=1)
    rows: IntArray = table[tuple(images.T)]
    if (rows < 0).any():
        raise InputError("the hands do not hold the image of every hand under the permutation")
    return rows


def _check_boards(boards: Sequence[Sequence[int]], num_cards: int) -> list[IntArray]:
    """The boards as arrays, refused unless their cards are distinct cards of the deck."""
    arrays = [np.asarray(board, dtype=np.int64).reshape(-1) for board in boards]
    cards = np.concatenate([np.empty(0, dtype=np.int64), *arrays])
    if len(np.unique(cards)) != len(cards) or ((cards < 0) | (cards >= num_cards)).any():
        raise InputError(f"boards must hold distinct cards of a deck of {num_cards}, not {cards.tolist()}")
    return arrays


def stabilizer(previous_boards: Sequence[Sequence[int]], num_ranks: int, num_suits: int) -> IntArray:
    """The suit permutations that map each of ``previous_boards`` (the boards of earlier rounds) onto itself as
    a set: ``(G', num_suits)`` int64, rows of :func:`suit_permutations` in its order (the identity first)."""
    boards = _check_boards(previous_boards, check_deck(num_ranks, num_suits))
    perms = suit_permutations(num_suits)
    keep = [
        all(board_mask(image[board]) == board_mask(board) for board in boards)
        for image in (card_permutation(perm, num_ranks, num_suits) for perm in perms)
    ]
    kept: IntArray = perms[np.array(keep, dtype=bool)]
    return kept


def _lex_keys(boards: IntArray, num_cards: int) -> IntArray:
    """One int64 per sorted board, in the boards' lexicographic order: the board's cards as base-``n`` digits."""
    weights = num_cards ** np.arange(boards.shape[1] - 1, -1, -1, dtype=np.int64)
    keys: IntArray = boards @ weights
    return keys


def board_orbits(
    num_ranks: int, num_suits: int, size: int, previous_boards: Sequence[Sequence[int]] = ()
) -> tuple[IntArray, IntArray]:
    r"""The boards of ``size`` new cards up to the :func:`stabilizer` of ``previous_boards``.

    Boards are sets of ``size`` cards of the ``num_ranks`` x ``num_suits`` deck disjoint from the previous
    boards (hole cards are not removed: a board's weight counts the boards of the deck). Returns the canonical
    board of each orbit (module docstring: the lexicographically smallest sorted image), ``(m, size)`` int64 with
    increasing rows in lexicographic order, and each orbit's size, ``(m,)`` int64, which sum to
    :math:`\binom{n - |B_{<r}|}{size}`."""
    n = check_deck(num_ranks, num_suits)
    taken = {int(card) for board in _check_boards(previous_boards, n) for card in board}
    left = [card for card in range(n) if card not in taken]
    if not 0 <= size <= len(left):
        raise InputError(f"a board of {size} cards cannot be dealt from the {len(left)} cards left")
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(left, size)), dtype=np.int64)
    boards = flat.reshape(math.comb(len(left), size), size)
    own = _lex_keys(boards, n)
    smallest = own.copy()
    for perm in stabilizer(previous_boards, num_ranks, num_suits)[1:]:
        image = np.sort(card_permutation(perm, num_ranks, num_suits)[boards], axis=1)
        np.minimum(smallest, _lex_keys(image, n), out=smallest)
    canonical = own == smallest  # boards ascend, so representatives and np.unique's sorted keys share one order
    _, weights = np.unique(smallest, return_counts=True)
    return boards[canonical], weights.astype(np.int64)


def canonical_board(
    cards: Sequence[int] | IntArray,
    num_ranks: int,
    num_suits: int,
    previous_boards: Sequence[Sequence[int]] = (),
) -> tuple[IntArray, IntArray]:
    """The canonical board of the orbit of ``cards`` (a board of the round after ``previous_boards``), sorted, as
    :func:`board_orbits` lists it, and a suit permutation of the stabilizer that maps ``cards`` onto it (the
    first in :func:`stabilizer`'s order).

    To look up a strategy stored over canonical boards for board ``b`` and hand ``h``: with
    ``(c, perm) = canonical_board(b, ...)`` and ``p = card_permutation(perm, ...)``, the stored entry is that of
    board ``c`` and hand ``sorted(p[h])`` (row :func:`hand_permutation` ``(hands, p)[row of h]``)."""
    n = check_deck(num_ranks, num_suits)
    board = np.asarray(cards, dtype=np.int64).reshape(-1)
    _check_boards([*previous_boards, board.tolist()], n)
    perms = stabilizer(previous_boards, num_ranks, num_suits)
    images = [sorted(card_permutation(perm, num_ranks, num_suits)[board].tolist()) for perm in perms]
    first = min(range(len(images)), key=images.__getitem__)
    return np.array(images[first], dtype=np.int64).reshape(-1), perms[first]
