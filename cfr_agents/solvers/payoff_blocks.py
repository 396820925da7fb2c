r"""The sequence-form payoff matrix in public blocks, so that its product with a realization plan costs
about one operation per row and column of a block instead of one per terminal.

The full-tree iteration's terminal pass computes, for the updating player :math:`i`,

.. math::

   q(\sigma_i) = \sum_{\sigma_{-i}} A_i(\sigma_i, \sigma_{-i})\, x_{-i}(\sigma_{-i}), \qquad
   A_i(\sigma_i, \sigma_{-i}) = \sum_{z:\ \sigma_i(z) = \sigma_i,\ \sigma_{-i}(z) = \sigma_{-i}} c(z)\, u_i(z).

Terminals that share a *public history* -- the path with the chance outcomes dealt before anyone acts
left out -- form a block of :math:`A_i`: its rows are the updater's last sequences and its columns the
opponent's, one per private hand. In poker, and in Liar's Dice, almost every block is *ranked*: there is
a scale :math:`k` and a strength :math:`s` of every row and column such that
:math:`A_i(r, c) = k\,\mathrm{sign}(s(r) - s(c))` on the block's entries -- a showdown (the stronger hand
takes the pot, equal hands split it) or a fold (every row wins, or every row loses). With the columns
sorted by strength and :math:`P` the prefix sums of :math:`x_{-i}` in that order, a row's product is then

.. math::

   \sum_c k\,\mathrm{sign}(s(r) - s(c))\, x_{-i}(c) = k\,\bigl(P[\mathrm{lo}(r)] + P[\mathrm{hi}(r)] - P[n]\bigr),

with :math:`\mathrm{lo}(r)` and :math:`\mathrm{hi}(r)` the numbers of columns weaker than :math:`r` and no
stronger than :math:`r`. Pairs a block lacks (hands that share a card) are taken back by one correction
entry each, :math:`-k\,\mathrm{sign}(s(r) - s(c))`; most are ties, whose correction is zero. Blocks that
are not ranked, and blocks that are cheaper as they are, stay as entries, one per sequence pair.

The split changes only the order of a sum: the products equal the terminal-by-terminal ones to rounding.
Any grouping of the terminals gives the same products; the public histories only make the blocks ranked.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from cfr_agents.tree import KIND_CHANCE, KIND_DECISION, KIND_TERMINAL, CompiledTree, FloatArray, IntArray, within
from cfr_agents.tree_cache import load_or_build_derived

MISSING = 2
"""A block's pattern marks the pairs it lacks with this (its entries are -1, 0 or 1)."""
SCALE_RTOL = 1e-12
"""An entry is ``k`` times a sign when it is so to this relative tolerance."""
INDEX_FIELDS = ("row_sequence", "row_low", "row_high", "column_sequence", "entry_row", "entry_column")
"""The fields that the kernel uses as indices: unsigned (:func:`index_type`)."""
BLOCK_STEP, BLOCK_OVERHEAD = 2, 8
"""A block's row, column or correction costs about ``BLOCK_STEP`` terminals taken one by one in the order of the
walk, and a block ``BLOCK_OVERHEAD`` more (measured on Leduc, 13-rank Leduc and Liar's Dice): a block is kept
only where it is cheaper, so games of few hands (Leduc's 6 cards) stay terminal by terminal."""


IndexArray = NDArray[np.unsignedinteger[Any]]


def index_type(size: int) -> type[np.unsignedinteger[Any]]:
    """The unsigned type of indices below ``size``, for the kernels: Numba checks a signed index for Python's
    negative indexing on every access, an unsigned one not (measured on Leduc's terminal pass: 7.2 µs signed,
    5.1 µs as ``uint32``)."""
    return np.uint32 if size <= np.iinfo(np.uint32).max else np.uint64


@dataclass(frozen=True, eq=False)
class PayoffBlocks:
    """Both players' :math:`A_i` as ranked blocks and remaining entries. Player ``p``'s blocks are
    ``block_bounds[p, 0]:block_bounds[p, 1]`` and its entries ``entry_bounds[p, 0]:entry_bounds[p, 1]``;
    rows and columns of block ``b`` are ``row_start[b]:row_start[b + 1]`` and
    ``column_start[b]:column_start[b + 1]``."""

    block_bounds: IntArray
    scale: FloatArray
    """:math:`k` of each block."""
    row_start: IntArray
    row_sequence: IndexArray
    """The updater's sequence of each row."""
    row_low: IndexArray
    """:math:`\\mathrm{lo}(r)`: the block's columns weaker than the row."""
    row_high: IndexArray
    """:math:`\\mathrm{hi}(r)`: the block's columns no stronger than the row."""
    column_start: IntArray
    column_sequence: IndexArray
    """The opponent's sequence of each column, a block's columns in ascending strength."""
    entry_bounds: IntArray
    entry_row: IndexArray
    entry_column: IndexArray
    entry_value: FloatArray
    """:math:`q(\\text{entry\\_row}) \\mathrel{+}= \\text{entry\\_value}\\; x(\\text{entry\\_column})`."""

    @classmethod
    def empty(cls, num_players: int, kind: type[np.unsignedinteger[Any]]) -> PayoffBlocks:
        """No blocks and no entries for any of ``num_players`` players, indices of type ``kind``: for a game whose
        products are taken terminal by terminal (:func:`~cfr_agents.solvers.full_tree_kernel.add_terminal_products`)."""
        none = np.zeros(0, dtype=kind)
        bounds = np.zeros((num_players, 2), dtype=np.int64)
        return cls(
            block_bounds=bounds,
            scale=np.zeros(0),
            row_start=np.zeros(1, dtype=np.int64),
            row_sequence=none,
            row_low=none,
            row_high=none,
            column_start=np.zeros(1, dtype=np.int64),
            column_sequence=none,
            entry_bounds=bounds,
            entry_row=none,
            entry_column=none,
            entry_value=np.zeros(0),
        )

    @property
    def max_columns(self) -> int:
        """The most columns of any block (the prefix sums' scratch length is one more)."""
        return int(np.diff(self.column_start).max(initial=0))

    def arrays(self) -> tuple[NDArray[np.generic], ...]:
        """The arrays in the order :func:`add_products` takes them after ``player`` (the fields' order)."""
        return tuple(getattr(self, field.name) for field in fields(self))

    def product(self, player: int, x: FloatArray) -> FloatArray:
        """:math:`A_i x_{-i}` for ``player`` :math:`i`, one entry per sequence (:func:`add_products`)."""
        q = np.zeros_like(x)
        kernel: Any = add_products
        kernel(player, *self.arrays(), x, q, np.zeros(self.max_columns + 1))
        return q

    @property
    def nbytes(self) -> int:
        return sum(value.nbytes for value in vars(self).values() if isinstance(value, np.ndarray))


@functools.lru_cache(maxsize=8)
def payoff_blocks(tree: CompiledTree) -> PayoffBlocks:
    """The blocks of ``tree``: laid out once per tree and process (the eight last used are kept), and kept
    in the tree cache beside the tree when the tree is cached (:func:`cfr_agents.tree_cache.load_or_build_derived`).
    A tree of more than two players, or of payoffs that do not add up to 0, is refused."""
    tree.require_two_player_zero_sum("the payoff blocks")
    if tree.cache_header is None:
        return _lay_out(tree)
    build = functools.partial(_lay_out, tree)
    decode = functools.partial(_from_arrays, tree)
    return load_or_build_derived(tree.cache_header, "payoff-blocks", (Path(__file__),), build, _to_arrays, decode)


def _to_arrays(blocks: PayoffBlocks) -> dict[str, NDArray[np.generic]]:
    return {field.name: array for field, array in zip(fields(PayoffBlocks), blocks.arrays(), strict=True)}


def _from_arrays(tree: CompiledTree, arrays: Mapping[str, NDArray[Any]]) -> PayoffBlocks:
    """The blocks stored by :func:`_to_arrays`, once every index is checked to lie where the kernel reads
    (it does not check bounds); ``ValueError`` otherwise."""
    kinds: dict[str, type[np.generic]] = {
        field.name: np.float64 if field.name in ("scale", "entry_value") else np.int64 for field in fields(PayoffBlocks)
    }
    kinds |= dict.fromkeys(INDEX_FIELDS, index_type(tree.num_sequences))
    if set(arrays) != set(kinds) or any(arrays[name].dtype != kind for name, kind in kinds.items()):
        raise ValueError("the stored arrays are not payoff blocks")
    blocks = PayoffBlocks(**{name: arrays[name] for name in kinds})
    if any(array.ndim != (2 if name.endswith("_bounds") else 1) for name, array in arrays.items()):
        raise ValueError("the stored payoff blocks have other dimensions than payoff blocks")
    rows, columns = np.diff(blocks.row_start), np.diff(blocks.column_start)
    entries = blocks.entry_bounds
    checks = (
        blocks.block_bounds.shape == entries.shape == (2, 2),
        all(_split_in_two(bounds) for bounds in (blocks.block_bounds, entries)),
        blocks.block_bounds[1, 1] == blocks.scale.size == rows.size == columns.size,
        entries[1, 1] == blocks.entry_row.size == blocks.entry_column.size == blocks.entry_value.size,
        np.isfinite(blocks.scale).all() and np.isfinite(blocks.entry_value).all(),
        (rows >= 0).all() and (columns >= 0).all() and blocks.row_start[0] == blocks.column_start[0] == 0,
        blocks.row_start[-1] == blocks.row_sequence.size == blocks.row_low.size == blocks.row_high.size,
        blocks.column_start[-1] == blocks.column_sequence.size,
        all(within(a, tree.num_sequences) for a in (blocks.row_sequence, blocks.column_sequence)),
        all(within(a, tree.num_sequences) for a in (blocks.entry_row, blocks.entry_column)),
        (blocks.row_low >= 0).all() and (blocks.row_low <= blocks.row_high).all(),
        (blocks.row_high <= np.repeat(columns, rows)).all(),
    )
    if not all(checks):
        raise ValueError("the stored payoff blocks do not fit the tree")
    return blocks


def _split_in_two(bounds: IntArray) -> bool:
    """Whether ``bounds`` (shape ``(2, 2)``) cut ``0:n`` into two consecutive slices, player 0's and then 1's."""
    return bool(bounds[0, 0] == 0 and 0 <= bounds[0, 1] == bounds[1, 0] <= bounds[1, 1])


def _lay_out(tree: CompiledTree) -> PayoffBlocks:
    terminal_group, group, first, values = _entries(tree)
    sequences = tree.terminal_sequence[:, first]
    players = [_player_blocks(group, sequences[p], sequences[1 - p], values[p]) for p in range(2)]
    for player, gathered in enumerate(players):  # the rest terminal by terminal, in the order of the walk
        value = tree.terminal_chance * tree.terminal_utility[player]
        kept = np.flatnonzero(~gathered.blocked[terminal_group] & (value != 0.0))
        rest = (tree.terminal_sequence[player, kept], tree.terminal_sequence[1 - player, kept], value[kept])
        gathered.entries.insert(0, rest)
    entries = [entry for p in players for entry in p.entries]
    kind = index_type(tree.num_sequences)
    return PayoffBlocks(
        block_bounds=_bounds([len(p.scale) for p in players]),
        scale=np.array([scale for p in players for scale in p.scale], dtype=np.float64),
        row_start=_starts([rows.size for p in players for rows in p.rows]),
        row_sequence=_joined([rows for p in players for rows in p.rows], kind),
        row_low=_joined([low for p in players for low in p.low], kind),
        row_high=_joined([high for p in players for high in p.high], kind),
        column_start=_starts([columns.size for p in players for columns in p.columns]),
        column_sequence=_joined([columns for p in players for columns in p.columns], kind),
        entry_bounds=_bounds([sum(entry[0].size for entry in p.entries) for p in players]),
        entry_row=_joined([entry[0] for entry in entries], kind),
        entry_column=_joined([entry[1] for entry in entries], kind),
        entry_value=np.concatenate([entry[2] for entry in entries]).astype(np.float64),
    )


@njit(cache=True, error_model="numpy")
def add_products(
    player: int,
    block_bounds: np.ndarray,
    scale: np.ndarray,
    row_start: np.ndarray,
    row_sequence: np.ndarray,
    row_low: np.ndarray,
    row_high: np.ndarray,
    column_start: np.ndarray,
    column_sequence: np.ndarray,
    entry_bounds: np.ndarray,
    entry_row: np.ndarray,
    entry_column: np.ndarray,
    entry_value: np.ndarray,
    x: np.ndarray,
    q: np.ndarray,
    prefix: np.ndarray,
) -> None:
    r""":math:`q \mathrel{+}= A_i x_{-i}` for ``player`` :math:`i`, block by block and then entry by entry;
    ``prefix`` is scratch of at least :attr:`PayoffBlocks.max_columns` + 1 entries."""
    # Loops count from 0 over slices: indices known to be non-negative skip Python's negative-index wraparound.
    prefix[0] = 0.0
    for block in range(block_bounds[player, 0], block_bounds[player, 1]):
        columns = column_sequence[column_start[block] : column_start[block + 1]]
        total = 0.0
        for j in range(columns.shape[0]):  # P: prefix sums of x_{-i} by ascending strength
            total += x[columns[j]]
            prefix[j + 1] = total
        k = scale[block]
        first, last = row_start[block], row_start[block + 1]
        rows, low, high = row_sequence[first:last], row_low[first:last], row_high[first:last]
        for r in range(rows.shape[0]):  # k (P[lo] + P[hi] - P[n])
            q[rows[r]] += k * (prefix[low[r]] + prefix[high[r]] - total)
    first, last = entry_bounds[player, 0], entry_bounds[player, 1]
    rows, columns, values = entry_row[first:last], entry_column[first:last], entry_value[first:last]
    for e in range(rows.shape[0]):
        q[rows[e]] += values[e] * x[columns[e]]


def _joined(arrays: list[IntArray], kind: type[np.unsignedinteger[Any]]) -> IndexArray:
    joined: IndexArray = np.concatenate(arrays).astype(kind) if arrays else np.zeros(0, dtype=kind)
    return joined


def _starts(counts: list[int]) -> IntArray:
    starts = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    return starts


def _bounds(counts: list[int]) -> IntArray:
    return np.array([[0, counts[0]], [counts[0], counts[0] + counts[1]]], dtype=np.int64)


def public_histories(tree: CompiledTree) -> IntArray:
    """A number for each terminal's public history: equal numbers, equal paths once the chance outcomes
    dealt before the first decision are left out."""
    num_nodes = tree.node_kind.shape[0]
    history = np.zeros(num_nodes, dtype=np.int64)
    acted = np.zeros(num_nodes, dtype=bool)
    """A decision lies above the node (its chance outcomes are public from then on)."""
    frontier = np.zeros(1, dtype=np.int64)
    next_number = 1
    width = int(tree.child_action.max(initial=0)) + 1
    while frontier.size:
        counts = tree.child_start[frontier + 1] - tree.child_start[frontier]
        parents = np.repeat(frontier, counts)
        edges = np.arange(counts.sum()) + np.repeat(tree.child_start[frontier] - np.cumsum(counts) + counts, counts)
        children = tree.child_node[edges]
        kind = tree.node_kind[parents]
        private = (kind == KIND_CHANCE) & ~acted[parents]
        acted[children] = acted[parents] | (kind == KIND_DECISION)
        key = history[parents] * width + tree.child_action[edges]
        unique, inverse = np.unique(key[~private], return_inverse=True)
        history[children] = history[parents]
        history[children[~private]] = next_number + inverse
        next_number += unique.size
        frontier = children[tree.node_kind[children] != KIND_TERMINAL]
    terminals = np.flatnonzero(tree.node_kind == KIND_TERMINAL)
    numbers: IntArray = np.unique(history[terminals], return_inverse=True)[1].astype(np.int64)
    return numbers


@dataclass
class _Player:
    """One player's blocks and entries while they are gathered."""

    scale: list[float]
    rows: list[IntArray]
    low: list[IntArray]
    high: list[IntArray]
    columns: list[IntArray]
    entries: list[tuple[IntArray, IntArray, FloatArray]]
    blocked: NDArray[np.bool_]
    """Per group: whether it is a ranked block (its terminals are not kept one by one)."""


@dataclass(frozen=True)
class _Shape:
    """What a block's pattern of signs gives, in the block's own row and column numbers."""

    low: IntArray
    high: IntArray
    column_order: IntArray
    """The block's columns by ascending strength."""
    lacking_row: IntArray
    lacking_column: IntArray
    taken_back: FloatArray
    r""":math:`\mathrm{sign}(s(r) - s(c))` of each lacking pair whose correction is not zero."""


def _entries(tree: CompiledTree) -> tuple[IntArray, IntArray, IntArray, FloatArray]:
    """The group of each terminal (its public history, split into connected parts), and the terminals
    in ``(group, player 0's sequence, player 1's sequence)`` order with pairs that repeat summed: each
    entry's group, the index of its first terminal, and its summed ``c(z) u_p(z)`` per player ``p``."""
    rows, columns = tree.terminal_sequence
    group = _connected(public_histories(tree), rows, columns)
    order = np.lexsort((columns, rows, group))
    new = np.ones(order.size, dtype=bool)
    new[1:] = (np.diff(group[order]) != 0) | (np.diff(rows[order]) != 0) | (np.diff(columns[order]) != 0)
    entry = np.cumsum(new) - 1
    weighted = tree.terminal_chance[order] * tree.terminal_utility[:, order]
    values: FloatArray = np.stack([np.bincount(entry, weights=u, minlength=int(new.sum())) for u in weighted])
    return group, group[order[new]], order[new].astype(np.int64), values


def _player_blocks(group: IntArray, rows: IntArray, columns: IntArray, values: FloatArray) -> _Player:
    """The ranked blocks and remaining entries of a player's :math:`A_i` (``rows``: its sequences)."""
    order = np.lexsort((columns, rows, group))
    group, rows, columns, values = group[order], rows[order], columns[order], values[order]
    gathered = _Player([], [], [], [], [], [], np.zeros(int(group.max(initial=-1)) + 1, dtype=bool))
    if group.size == 0:
        return gathered
    starts = np.flatnonzero(np.concatenate(([True], np.diff(group) != 0)))
    stops = np.append(starts[1:], group.size)
    scale = np.maximum.reduceat(np.abs(values), starts)
    signs = np.rint(np.divide(values, scale[group], out=np.zeros_like(values), where=scale[group] > 0))
    off = np.abs(signs * scale[group] - values) > SCALE_RTOL * scale[group]
    exact = ~np.logical_or.reduceat(off, starts)
    row_node, row_of_node = _nodes(group, rows)
    column_node, column_of_node = _nodes(group, columns)
    first_row, first_column = row_node[starts], np.minimum.reduceat(column_node, starts)
    num_rows = np.maximum.reduceat(row_node, starts) - first_row + 1
    num_columns = np.maximum.reduceat(column_node, starts) - first_column + 1
    local_row, local_column = row_node - first_row[group], column_node - first_column[group]
    shapes: dict[bytes, _Shape | None] = {}
    blocked = gathered.blocked  # groups are numbered 0, 1, ... in the order of ``starts``
    signs8 = signs.astype(np.int8)
    for g in np.flatnonzero(exact & (scale > 0)).tolist():
        part = slice(int(starts[g]), int(stops[g]))
        pattern = np.full((int(num_rows[g]), int(num_columns[g])), MISSING, dtype=np.int8)
        pattern[local_row[part], local_column[part]] = signs8[part]
        key = pattern.tobytes() + bytes(str(pattern.shape), "ascii")
        if key not in shapes:
            shapes[key] = _shape(pattern)
        shape = shapes[key]
        if shape is None:
            continue  # not ranked
        steps = pattern.shape[0] + pattern.shape[1] + shape.taken_back.size
        if BLOCK_STEP * steps + BLOCK_OVERHEAD >= part.stop - part.start:
            continue  # cheaper terminal by terminal
        blocked[g] = True
        block_rows = row_of_node[first_row[g] : first_row[g] + num_rows[g]]
        block_columns = column_of_node[first_column[g] : first_column[g] + num_columns[g]]
        gathered.scale.append(float(scale[g]))
        gathered.rows.append(block_rows)
        gathered.low.append(shape.low)
        gathered.high.append(shape.high)
        gathered.columns.append(block_columns[shape.column_order])
        gathered.entries.append(
            (block_rows[shape.lacking_row], block_columns[shape.lacking_column], -scale[g] * shape.taken_back)
        )
    return gathered


def _connected(group: IntArray, rows: IntArray, columns: IntArray) -> IntArray:
    """Each group split into the connected parts of its rows and columns (linked by the entries between
    them): a chance outcome that both players see but that is dealt before anyone acts -- who sits in which
    blind, say -- leaves disjoint blocks in one public history."""
    row_node, column_node = _nodes(group, rows)[0], _nodes(group, columns)[0]
    row_label = np.arange(row_node.max(initial=-1) + 1)  # rows and columns start with labels of their own
    column_label = np.arange(column_node.max(initial=-1) + 1) + row_label.size
    while True:  # each node takes the least label it is linked to, until none changes
        label = np.minimum(row_label[row_node], column_label[column_node])
        moved = False
        for labels, nodes in ((row_label, row_node), (column_label, column_node)):
            before = labels.copy()
            np.minimum.at(labels, nodes, label)
            moved |= not np.array_equal(before, labels)
        if not moved:
            break
    parts: IntArray = np.unique(row_label[row_node], return_inverse=True)[1]
    return parts.astype(np.int64)


def _nodes(group: IntArray, ids: IntArray) -> tuple[IntArray, IntArray]:
    """Each entry's ``(group, id)`` pair numbered in sorted order, and each number's ``id``."""
    span = int(ids.max(initial=0)) + 1
    _, first, node = np.unique(group * span + ids, return_index=True, return_inverse=True)
    return node.astype(np.int64), ids[first]


def _shape(pattern: NDArray[np.int8]) -> _Shape | None:
    """The ranked form of a block's pattern of signs, or ``None`` if no strengths fit it."""
    strengths = _strengths(pattern)
    if strengths is None:
        return None
    row_strength, column_strength = strengths
    order = np.argsort(column_strength, kind="stable")
    ranked = column_strength[order]
    lacking_row, lacking_column = np.nonzero(pattern == MISSING)
    taken_back = np.sign(row_strength[lacking_row] - column_strength[lacking_column])
    kept = taken_back != 0
    return _Shape(
        low=np.searchsorted(ranked, row_strength, side="left").astype(np.int64),
        high=np.searchsorted(ranked, row_strength, side="right").astype(np.int64),
        column_order=order.astype(np.int64),
        lacking_row=lacking_row[kept].astype(np.int64),
        lacking_column=lacking_column[kept].astype(np.int64),
        taken_back=taken_back[kept].astype(np.float64),
    )


def _strengths(pattern: NDArray[np.int8]) -> tuple[IntArray, IntArray] | None:
    """Strengths of rows and columns with ``sign(s(r) - s(c)) = pattern[r, c]`` wherever the pattern has an
    entry, or ``None`` if there are none: the longest chains of "beats" below each row and column, with
    ties made equal, found by relaxing the constraints until nothing moves."""
    num_rows, num_columns = pattern.shape
    row, column = np.nonzero(pattern != MISSING)
    sign = pattern[row, column].astype(np.int64)
    column_item = column + num_rows  # rows are items 0..R-1, columns R..R+C-1
    strict = sign != 0
    winner = np.where(sign > 0, row, column_item)[strict]
    loser = np.where(sign > 0, column_item, row)[strict]
    tie_a, tie_b = row[~strict], column_item[~strict]
    level = np.zeros(num_rows + num_columns, dtype=np.int64)
    for _ in range(4 * (num_rows + num_columns) + 4):
        moved = level.copy()
        np.maximum.at(moved, winner, level[loser] + 1)
        np.maximum.at(moved, tie_a, moved[tie_b])
        np.maximum.at(moved, tie_b, moved[tie_a])
        if np.array_equal(moved, level):
            break
        level = moved
    else:
        return None  # a cycle: no strengths fit
    if not np.array_equal(np.sign(level[row] - level[column_item]), sign):
        return None
    return level[:num_rows], level[num_rows:]
