"""The compiled game tree: one walk over an adapter, then arrays that solvers and evaluators share.

The walk (:func:`adapters.walk.walk`) records the tree in preorder; :func:`compile_tree` numbers its
infosets and sequences with whole-array operations, and keeps the result in the on-disk tree cache
(:mod:`cfr_agents.tree_cache`), from which later processes load it instead of walking again.

Layout (``A`` = the most legal actions at any infoset, ``N`` = infosets):

* Infosets are numbered so that each player's infosets are contiguous and, within a
  player, ordered by *depth* -- the number of that player's own earlier decisions on
  the path. :attr:`CompiledTree.levels` gives the ``(start, stop)`` slice of each
  ``(player, depth)`` group, so a solver touches a whole level with one array operation.
* A *sequence* ``(I, a)`` (infoset ``I``, action column ``a``) has the flat index
  ``I * A + a``; :data:`root_sequence` ``= N * A`` is the empty sequence. Per-sequence
  vectors therefore have length ``N * A + 1`` and reshape to ``(N, A)`` without copying.
* ``parent_sequence[I]`` is the acting player's previous sequence before ``I`` (perfect
  recall makes it unique -- the compiler checks it).
* Terminal ``z`` carries ``terminal_sequence[p, z]`` (player ``p``'s last sequence on
  the path), the chance reach ``terminal_chance[z]`` and ``terminal_utility[p, z]``, for each
  of the game's players (two, or n for an n-player game).

The node-level structure (CSR children, chance probabilities, infoset per node) is
kept as well, for samplers and for exact values between arbitrary agents.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from numba import njit
from numpy.typing import NDArray

from adapters import Game, Reduction, load_game
from adapters.base import NUM_PLAYERS
from adapters.holdem.rules import COMPILED_TREE_CARDS, limit_rules, public_by_default
from adapters.inputs import InputError, UnsupportedGameError
from adapters.walk import Walk, walk
from cfr_agents.tree_cache import entry_header, load_or_build

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def state_arrays(arrays: Mapping[str, NDArray[Any]], copy: bool) -> dict[str, NDArray[Any]]:
    """A solver's state, what a checkpoint holds: copies of ``arrays``, or read-only views of them (no memory, but
    they change with the solver's next iteration)."""
    if copy:
        return {name: array.copy() for name, array in arrays.items()}
    views = {name: array.view() for name, array in arrays.items()}
    for view in views.values():
        view.flags.writeable = False
    return views


KIND_CHANCE, KIND_DECISION, KIND_TERMINAL = 0, 1, 2


@dataclass(frozen=True, eq=False)
class CompiledTree:
    """The arrays of one game; build with :func:`compile_tree`."""

    game_id: str
    units: str
    rules_fingerprint: str
    build_seconds: float
    infoset_keys: tuple[str, ...]
    infoset_player: IntArray
    infoset_actions: tuple[tuple[int, ...], ...]
    """Legal action ids of each infoset, ascending; column ``a`` of a row holds the ``a``-th."""
    action_mask: NDArray[np.bool_]
    """``(N, A)``: ``True`` where the column is a legal action."""
    parent_sequence: IntArray
    levels: tuple[tuple[tuple[int, int], ...], ...]
    """``levels[p][d] = (start, stop)``: player ``p``'s infosets at own depth ``d``."""
    terminal_sequence: IntArray
    terminal_chance: FloatArray
    terminal_utility: FloatArray
    node_kind: NDArray[np.int8]
    node_infoset: IntArray
    """Infoset of a decision node, ``-1`` elsewhere."""
    node_terminal: IntArray
    """Terminal index of a terminal node, ``-1`` elsewhere."""
    child_start: IntArray
    """Children of node ``n`` are ``child_node[child_start[n]:child_start[n + 1]]``."""
    child_node: IntArray
    child_action: IntArray
    """The action (decision) or outcome (chance) leading to each child."""
    child_probability: FloatArray
    """Chance probability of each edge out of a chance node; ``1.0`` elsewhere."""
    from_cache: bool = False
    """Loaded from the tree cache (:mod:`cfr_agents.tree_cache`); :attr:`build_seconds` is then the
    time the load took."""
    cache_header: Mapping[str, object] | None = field(default=None, repr=False)
    """The header of the tree's entry in the tree cache (``None`` when the cache is off or does not hold the
    game): arrays derived from the tree are cached beside it under the same key."""
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {key: i for i, key in enumerate(self.infoset_keys)})

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_keys)

    @property
    def num_players(self) -> int:
        return int(self.terminal_utility.shape[0])

    @functools.cached_property
    def constant_sum(self) -> bool:
        """The payoffs add up to one total at every terminal, within rounding: exploitability, ``NashConv / n``,
        means something (:mod:`eval.exploitability`)."""
        totals = self.terminal_utility.sum(axis=0)
        return bool(np.allclose(totals, totals[0], rtol=0.0, atol=1e-9))

    @functools.cached_property
    def two_player_zero_sum(self) -> bool:
        """Two players whose payoffs add up to 0 at every terminal, within rounding: the games the
        two-player kernels (payoff blocks, sampled solvers, matches) are for."""
        return self.num_players == NUM_PLAYERS and bool(
            np.allclose(self.terminal_utility.sum(axis=0), 0.0, rtol=0.0, atol=1e-9)
        )

    def require_two_player_zero_sum(self, what: str) -> None:
        """Refuse, in one line, to run ``what`` on an n-player or general-sum tree."""
        if not self.two_player_zero_sum:
            raise UnsupportedGameError(
                f"{what} need a two-player zero-sum game; {self.game_id} has {self.num_players} players"
                + ("" if self.num_players != NUM_PLAYERS else " and payoffs that do not add up to 0")
            )

    @property
    def max_actions(self) -> int:
        return int(self.action_mask.shape[1])

    @property
    def root_sequence(self) -> int:
        return self.num_infosets * self.max_actions

    @property
    def num_sequences(self) -> int:
        """Length of a per-sequence vector (all ``(I, a)`` cells plus the empty sequence)."""
        return self.root_sequence + 1

    @property
    def num_terminals(self) -> int:
        return int(self.terminal_chance.shape[0])

    @property
    def num_decision_nodes(self) -> int:
        return int(np.count_nonzero(self.node_kind == KIND_DECISION))

    @property
    def num_chance_nodes(self) -> int:
        return int(np.count_nonzero(self.node_kind == KIND_CHANCE))

    def player_slice(self, player: int) -> slice:
        """The contiguous infoset range of ``player``."""
        groups = self.levels[player]
        return slice(groups[0][0], groups[-1][1]) if groups else slice(0, 0)

    def uniform_strategy(self, rows: IntArray | None = None) -> FloatArray:
        """``(N, A)`` uniform over legal actions; only ``rows``' when given."""
        mask = (self.action_mask if rows is None else self.action_mask[rows]).astype(np.float64)
        uniform: FloatArray = mask / mask.sum(axis=1, keepdims=True)
        return uniform

    def fill_realization(self, strategy: FloatArray, x: FloatArray, player: int) -> None:
        """Top-down over ``player``'s levels: :math:`x(Ia) = x(\\mathrm{parent}(I))\\,\\sigma(I,a)`.

        ``x`` is a per-sequence vector with ``x[root_sequence] = 1``; only ``player``'s cells change.
        """
        cells = x[:-1].reshape(strategy.shape)
        for start, stop in self.levels[player]:
            parents = self.parent_sequence[start:stop]
            np.multiply(x[parents][:, None], strategy[start:stop], out=cells[start:stop])

    def realization_plan(self, strategy: FloatArray) -> FloatArray:
        """Every player's realization plan of an ``(N, A)`` strategy, as one per-sequence vector."""
        x = np.zeros(self.num_sequences)
        x[self.root_sequence] = 1.0
        for player in range(self.num_players):
            self.fill_realization(strategy, x, player)
        return x

    def summary(self) -> str:
        how = "loaded from the tree cache" if self.from_cache else "built"
        return (
            f"{self.game_id}: {self.num_infosets:,} infosets, {self.num_decision_nodes:,} decision "
            f"nodes, {self.num_terminals:,} terminals; {how} in {self.build_seconds:.2f} s"
        )


def compile_tree(game: Game, *, cache: bool = True) -> CompiledTree:
    """Walk ``game`` once and return its :class:`CompiledTree` (build time included). A hold'em game past
    :data:`~adapters.holdem.rules.COMPILED_TREE_CARDS` cards is refused in one line: it runs on its public tree.

    With ``cache`` (the default), the tree cache (:mod:`cfr_agents.tree_cache`) is used when it is
    on: a tree built before for the same game, rules and versions is loaded instead of walked, and a
    tree walked now is stored. ``cache=False`` always walks and stores nothing.
    """
    if _past_the_compiled_tree(game):
        raise UnsupportedGameError(
            f"{game.game_id} is a hold'em game past {COMPILED_TREE_CARDS} cards, too large for the compiled tree: "
            "it runs on its public tree (train, exploitability, match, tournament, exploit, best-response)"
        )
    started = time.perf_counter()
    build = functools.partial(_build, game, started)
    if not cache:
        return build()
    tree = load_or_build(game, build, _to_arrays, functools.partial(_from_arrays, game, started))
    object.__setattr__(tree, "cache_header", entry_header(game))
    return tree


def _past_the_compiled_tree(game: Game) -> bool:
    """Whether ``game`` is a hold'em game the compiled tree leaves to the public tree; a limit game the public
    tree does not model (three hole cards, say) stays the compiled tree's."""
    try:
        return public_by_default(limit_rules(game))
    except UnsupportedGameError:
        return False


def _build(game: Game, started: float) -> CompiledTree:
    return _assemble(walk(game), game, started)


def check_same_strategic_form(source: CompiledTree, target: CompiledTree) -> None:
    """Refuse, naming the first difference, two trees that a strategy cannot move between.

    They must have the same infoset keys in the same order, the same players, legal actions and
    parent sequences (so a strategy array means the same on both), the same units, and the same
    sequence-form payoffs: for every pair of sequences, the chance-weighted payoff of the
    terminals that end in it, to 1e-12. Terminal order and node layout may differ; every value
    or best response computed from a strategy is then the same on both.
    """
    same = {
        "units": source.units == target.units,
        "infoset keys": source.infoset_keys == target.infoset_keys,
        "legal actions": source.infoset_actions == target.infoset_actions,
        "players": np.array_equal(source.infoset_player, target.infoset_player),
        "sequences": np.array_equal(source.parent_sequence, target.parent_sequence),
        "sequence-form payoffs": _same_payoffs(source, target),
    }
    problem = next((name for name, equal in same.items() if not equal), None)
    if problem is not None:
        raise InputError(f"{source.game_id} and {target.game_id} are not the same game: their {problem} differ")


def lifted_rows(full: CompiledTree, reduced: CompiledTree, reduction: Reduction) -> IntArray:
    """Row of ``reduced`` for each infoset of ``full`` under a lossless :class:`~adapters.Reduction`:
    ``strategy[rows]`` plays the full game as ``strategy`` plays the reduced one. A full infoset whose
    canonical key the reduced tree lacks, or whose player or legal actions differ from it, is refused."""
    if reduced.game_id != reduction.game_id or reduced.units != full.units:
        raise InputError(f"{reduced.game_id} is not the reduction {reduction.game_id} of {full.game_id}")
    rows = np.empty(full.num_infosets, dtype=np.int64)
    for i, key in enumerate(full.infoset_keys):
        row = reduced.index.get(reduction.canonical_key(key), -1)
        if row < 0 or reduced.infoset_player[row] != full.infoset_player[i]:
            raise InputError(f"{reduced.game_id} has no infoset for {key!r} of {full.game_id}")
        if reduced.infoset_actions[row] != full.infoset_actions[i]:
            raise InputError(f"{reduced.game_id} has other legal actions than {full.game_id} at {key!r}")
        rows[i] = row
    return rows


def _sequence_form_payoffs(tree: CompiledTree) -> tuple[IntArray, FloatArray]:
    """The tuples of every player's sequences that end terminals, sorted (one row each), and each tuple's
    chance-weighted payoffs."""
    unique, inverse = np.unique(tree.terminal_sequence.T, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    payoffs = [np.bincount(inverse, tree.terminal_chance * u, len(unique)) for u in tree.terminal_utility]
    return unique.astype(np.int64), np.stack(payoffs).astype(np.float64)


def _same_payoffs(source: CompiledTree, target: CompiledTree) -> bool:
    (ours, our_payoffs), (theirs, their_payoffs) = _sequence_form_payoffs(source), _sequence_form_payoffs(target)
    return (
        ours.shape == theirs.shape
        and np.array_equal(ours, theirs)
        and np.allclose(our_payoffs, their_payoffs, rtol=0, atol=1e-12)
    )


def load_tree(game_id: str, *, any_players: bool = False) -> CompiledTree:
    """The compiled tree of ``game_id``, compiled once per process (the eight last used are kept); an n-player or
    general-sum game only with ``any_players``, refused otherwise as :func:`adapters.load_game` refuses it.

    Callers share it, so they must not write to its arrays (nothing in this package does). The tree
    cache serves it as it serves :func:`compile_tree`. Callers with and without ``any_players`` share one tree.
    """
    tree = loaded_tree(game_id)
    if not any_players and not tree.two_player_zero_sum:
        load_game(game_id)  # raises the adapter's one-line refusal
    return tree


@functools.lru_cache(maxsize=8)
def loaded_tree(game_id: str) -> CompiledTree:
    """The trees :func:`load_tree` hands out, of games of any number of players (``loaded_tree.cache_clear()``
    forgets them)."""
    return compile_tree(load_game(game_id, any_players=True))


def _assemble(tree: Walk, game: Game, started: float) -> CompiledTree:
    """Number infosets and sequences, and lay out the node arrays, from one :class:`Walk`."""
    num_infosets = len(tree.keys)
    if num_infosets == 0:
        raise UnsupportedGameError(f"{game.game_id} has no decision nodes")
    parent = tree.parent
    num_nodes = tree.num_nodes
    node_kind = np.full(num_nodes, KIND_TERMINAL, dtype=np.int8)
    node_kind[tree.chance_nodes] = KIND_CHANCE
    node_kind[tree.decision_nodes] = KIND_DECISION
    child_start = np.zeros(num_nodes + 1, dtype=np.int64)
    np.cumsum(np.bincount(parent[1:], minlength=num_nodes), out=child_start[1:])
    child_node = np.argsort(parent[1:], kind="stable") + 1  # by parent, then in visiting order
    width = int(tree.key_width.max())
    node_key = np.full(num_nodes, -1, dtype=np.int64)
    node_key[tree.decision_nodes] = tree.decision_keys
    # Each edge out of a decision node as a sequence of old key numbers, key * width + column, in the
    # parents' order; moved to the children, it is each node's incoming sequence (-1 at the root).
    edge_parent = parent[child_node]
    from_chance = node_kind[edge_parent] == KIND_CHANCE
    sequence_of_edge = node_key[edge_parent] * width + np.arange(num_nodes - 1) - child_start[edge_parent]
    edge_sequence = np.full(num_nodes, -1, dtype=np.int64)
    edge_sequence[child_node] = sequence_of_edge
    key_action = np.full((num_infosets, width), -1, dtype=np.int64)
    key_action[np.arange(width) < tree.key_width[:, None]] = list(itertools.chain.from_iterable(tree.key_actions))
    child_action = key_action.ravel()[np.where(from_chance, 0, sequence_of_edge)]  # chance edges: below
    child_action[from_chance] = tree.chance_outcome
    decision_player = tree.key_player[tree.decision_keys]
    node_player = np.full(num_nodes, -1, dtype=np.int64)
    node_player[tree.decision_nodes] = decision_player
    parent_player = np.full(num_nodes, -1, dtype=np.int64)
    parent_player[1:] = node_player[parent[1:]]
    last = [_last_sequences(parent, parent_player == player, edge_sequence) for player in range(game.num_players)]

    arrived = np.stack(last)[decision_player, tree.decision_nodes]
    earlier_max = np.maximum.accumulate(np.concatenate(([-1], tree.decision_keys[:-1])))
    first_visit = tree.decision_keys > earlier_max  # keys are numbered in order of first visit
    key_parent = arrived[first_visit]
    forgetful = np.flatnonzero(arrived != key_parent[tree.decision_keys])
    if forgetful.size:
        key = tree.keys[int(tree.decision_keys[forgetful[0]])]
        raise UnsupportedGameError(
            f"{game.game_id}: infoset {key!r} is reached after different own actions (the keys are not perfect-recall)"
        )
    depth = _own_depths(np.where(key_parent < 0, -1, key_parent // width))

    # Number infosets by (player, depth, discovery order).
    order = np.lexsort((np.arange(num_infosets), depth, tree.key_player))
    new_index = np.empty(num_infosets, dtype=np.int64)
    new_index[order] = np.arange(num_infosets)
    # Old sequence number -> flat sequence index; the last entry serves -1, the empty sequence.
    renumbered = np.append((new_index[:, None] * width + np.arange(width)).ravel(), num_infosets * width)

    ordered = order.tolist()
    node_infoset = np.full(num_nodes, -1, dtype=np.int64)
    node_infoset[tree.decision_nodes] = new_index[tree.decision_keys]
    terminals = np.flatnonzero(node_kind == KIND_TERMINAL)
    node_terminal = np.full(num_nodes, -1, dtype=np.int64)
    node_terminal[terminals] = np.arange(terminals.size)
    child_probability = np.ones(num_nodes - 1, dtype=np.float64)
    child_probability[from_chance] = tree.chance_probability
    return CompiledTree(
        game_id=game.game_id,
        units=game.units,
        rules_fingerprint=game.rules_fingerprint,
        build_seconds=time.perf_counter() - started,
        infoset_keys=tuple(map(tree.keys.__getitem__, ordered)),
        infoset_player=tree.key_player[order],
        infoset_actions=tuple(map(tree.key_actions.__getitem__, ordered)),
        action_mask=np.arange(width) < tree.key_width[order][:, None],
        parent_sequence=renumbered[key_parent[order]],
        levels=_levels(tree.key_player[order], depth[order], game.num_players),
        terminal_sequence=np.stack([renumbered[sequences[terminals]] for sequences in last]),
        terminal_chance=tree.terminal_reach,
        terminal_utility=tree.terminal_returns.T.copy(),
        node_kind=node_kind,
        node_infoset=node_infoset,
        node_terminal=node_terminal,
        child_start=child_start,
        child_node=child_node,
        child_action=child_action,
        child_probability=child_probability,
    )


def _last_sequences(parent: IntArray, own: NDArray[np.bool_], edge_sequence: IntArray) -> IntArray:
    """A player's last sequence on the path to each node: the incoming edge's sequence of the nearest
    node, the node itself or an ancestor, whose incoming edge is ``own`` (the player acted at its
    parent); ``-1`` if there is none. Every node climbs at once, and a node stops at its first own
    edge -- in games of alternating moves, one or two steps up."""
    last: IntArray = np.where(own, edge_sequence, -1)
    pending = np.flatnonzero(~own)
    pending = pending[pending > 0]  # the root has no path above it
    reached = parent[pending]
    while pending.size:
        found = own[reached]
        last[pending[found]] = edge_sequence[reached[found]]
        climbing = ~found & (reached > 0)
        pending = pending[climbing]
        reached = parent[reached[climbing]]
    return last


def _own_depths(parent_key: IntArray) -> IntArray:
    """Each key's count of own earlier decisions: one more than its parent key's, ``0`` below the root."""
    depth = np.zeros(parent_key.shape[0], dtype=np.int64)
    while True:
        deeper = np.where(parent_key < 0, 0, depth[parent_key] + 1)
        if np.array_equal(deeper, depth):
            return depth
        depth = deeper


def _levels(players: IntArray, depths: IntArray, num_players: int) -> tuple[tuple[tuple[int, int], ...], ...]:
    """``(start, stop)`` of each ``(player, depth)`` run of infosets sorted by player, then depth, for each of
    ``num_players`` players."""
    change = np.flatnonzero((np.diff(players) != 0) | (np.diff(depths) != 0)) + 1
    starts = np.concatenate(([0], change))
    stops = np.concatenate((change, [players.shape[0]]))
    levels: list[list[tuple[int, int]]] = [[] for _ in range(num_players)]
    for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
        levels[int(players[start])].append((start, stop))
    return tuple(tuple(groups) for groups in levels)


_STORED: dict[str, type[np.generic]] = {
    "key_text": np.uint8,
    "key_length": np.int64,
    "infoset_player": np.int64,
    "action_set_ids": np.int64,
    "action_set_width": np.int64,
    "infoset_action_set": np.int64,
    "action_mask": np.bool_,
    "parent_sequence": np.int64,
    "levels": np.int64,
    "terminal_sequence": np.int64,
    "terminal_chance": np.float64,
    "terminal_utility": np.float64,
    "node_kind": np.int8,
    "node_infoset": np.int64,
    "node_terminal": np.int64,
    "child_start": np.int64,
    "child_node": np.int64,
    "child_action": np.int64,
    "child_probability": np.float64,
}
"""The arrays of a tree in the cache and their types: the keys as UTF-8 text and their lengths in
characters; the distinct tuples of legal actions (their ids one after another, and their widths) and
the tuple of each infoset; ``(player, start, stop)`` per level; every other array as the tree holds it."""


def _to_arrays(tree: CompiledTree) -> dict[str, NDArray[np.generic]]:
    """``tree`` as the arrays :data:`_STORED` lists (game id, units and rules are the cache header's)."""
    levels = [(player, start, stop) for player, groups in enumerate(tree.levels) for start, stop in groups]
    action_sets: dict[tuple[int, ...], int] = {}
    chosen = [action_sets.setdefault(actions, len(action_sets)) for actions in tree.infoset_actions]
    return {
        "key_text": np.frombuffer("".join(tree.infoset_keys).encode(), dtype=np.uint8),
        "key_length": np.array([len(key) for key in tree.infoset_keys], dtype=np.int64),
        "infoset_player": tree.infoset_player,
        "action_set_ids": np.array([a for actions in action_sets for a in actions], dtype=np.int64),
        "action_set_width": np.array([len(actions) for actions in action_sets], dtype=np.int64),
        "infoset_action_set": np.array(chosen, dtype=np.int64),
        "action_mask": tree.action_mask,
        "parent_sequence": tree.parent_sequence,
        "levels": np.array(levels, dtype=np.int64).reshape(-1, 3),
        "terminal_sequence": tree.terminal_sequence,
        "terminal_chance": tree.terminal_chance,
        "terminal_utility": tree.terminal_utility,
        "node_kind": tree.node_kind,
        "node_infoset": tree.node_infoset,
        "node_terminal": tree.node_terminal,
        "child_start": tree.child_start,
        "child_node": tree.child_node,
        "child_action": tree.child_action,
        "child_probability": tree.child_probability,
    }


def _from_arrays(game: Game, started: float, arrays: Mapping[str, NDArray[Any]]) -> CompiledTree:
    """The tree of ``game`` from the arrays of :func:`_to_arrays`; arrays that do not fit together
    (:func:`check_structure`) are refused with ``ValueError``."""
    _require(
        set(arrays) == set(_STORED) and all(arrays[name].dtype == kind for name, kind in _STORED.items()),
        "the stored arrays are not those of a compiled tree",
    )
    one_dimensional = set(_STORED) - {"action_mask", "levels", "terminal_sequence", "terminal_utility"}
    _require(
        all(arrays[name].ndim == 1 for name in one_dimensional)
        and arrays["action_mask"].ndim == 2
        and arrays["levels"].ndim == 2
        and arrays["levels"].shape[1] == 3,
        "the stored arrays have other dimensions than a tree's",
    )
    mask = arrays["action_mask"]
    keys = _split(arrays["key_text"].tobytes().decode(), arrays["key_length"].tolist())
    action_sets = [tuple(ids) for ids in _split(arrays["action_set_ids"].tolist(), arrays["action_set_width"].tolist())]
    chosen = arrays["infoset_action_set"]
    _require(
        len(keys) == mask.shape[0] == chosen.shape[0] and within(chosen, len(action_sets)),
        "the stored keys or legal actions do not match the stored infosets",
    )
    _require(within(arrays["levels"][:, 0], game.num_players), "a stored level belongs to no player")
    levels: list[list[tuple[int, int]]] = [[] for _ in range(game.num_players)]
    for player, start, stop in arrays["levels"].tolist():
        levels[player].append((start, stop))
    tree = CompiledTree(
        game_id=game.game_id,
        units=game.units,
        rules_fingerprint=game.rules_fingerprint,
        build_seconds=time.perf_counter() - started,
        infoset_keys=tuple(keys),
        infoset_player=arrays["infoset_player"],
        infoset_actions=tuple([action_sets[i] for i in chosen.tolist()]),
        action_mask=mask,
        parent_sequence=arrays["parent_sequence"],
        levels=tuple(tuple(groups) for groups in levels),
        terminal_sequence=arrays["terminal_sequence"],
        terminal_chance=arrays["terminal_chance"],
        terminal_utility=arrays["terminal_utility"],
        node_kind=arrays["node_kind"],
        node_infoset=arrays["node_infoset"],
        node_terminal=arrays["node_terminal"],
        child_start=arrays["child_start"],
        child_node=arrays["child_node"],
        child_action=arrays["child_action"],
        child_probability=arrays["child_probability"],
        from_cache=True,
    )
    check_structure(tree)
    return tree


def check_structure(tree: CompiledTree) -> None:
    """Refuse (``ValueError``, naming the first fault) arrays that do not make a compiled tree, so that a tree
    loaded from the cache never sends a solver or an evaluator outside an array or round a cycle: every
    index in range; the children a tree (each node but the root the child of exactly one node numbered before
    it); each decision node's children its infoset's legal actions, in order, with probability 1; each chance
    node's probabilities summing to 1; the terminals numbered in order, as many as the terminals' arrays hold;
    the levels the infosets in order, by player and own depth; every parent and terminal sequence the empty one
    or a legal action of an infoset of its player, each infoset's level one below its parent sequence's; chance
    reaches probabilities and payoffs finite. Values that fit all this but are wrong are the digest's to catch
    (:mod:`cfr_agents.tree_cache`). The node and terminal arrays are checked by compiled loops
    (:func:`_node_fault`, :func:`_sequences_fit`, :func:`_terminal_values_fit`), which release the GIL."""
    num_infosets, width = tree.action_mask.shape
    num_nodes, num_terminals = tree.node_kind.shape[0], tree.num_terminals
    num_edges = num_nodes - 1
    shapes = {
        "infoset_player": (num_infosets,),
        "parent_sequence": (num_infosets,),
        "terminal_sequence": (tree.num_players, num_terminals),
        "terminal_utility": (tree.num_players, num_terminals),
        "node_infoset": (num_nodes,),
        "node_terminal": (num_nodes,),
        "child_start": (num_nodes + 1,),
        "child_node": (num_edges,),
        "child_action": (num_edges,),
        "child_probability": (num_edges,),
    }
    _require(
        num_infosets > 0 and width > 0 and all(getattr(tree, name).shape == shape for name, shape in shapes.items()),
        "the arrays' shapes do not fit together",
    )
    _require(len(tree.index) == num_infosets, "two infosets have one key")

    widths = tree.action_mask.sum(axis=1)
    _require(
        np.array_equal(tree.action_mask, np.arange(width) < widths[:, None])
        and widths.min() > 0
        and widths.max() == width
        and [len(actions) for actions in tree.infoset_actions] == widths.tolist(),
        "the action masks are not the infosets' legal actions",
    )
    actions = legal_action_ids(tree)
    _require(
        (actions[tree.action_mask] >= 0).all() and (np.diff(actions, axis=1)[tree.action_mask[:, 1:]] > 0).all(),
        "the legal actions are not ascending action ids",
    )

    _require(tree.num_players >= NUM_PLAYERS, "the tree has fewer than two players")
    _require(within(tree.infoset_player, tree.num_players), "an infoset belongs to no player")
    spans = [(player, start, stop) for player, groups in enumerate(tree.levels) for start, stop in groups]
    starts, stops = [start for _, start, _ in spans], [stop for _, _, stop in spans]
    _require(
        len(tree.levels) == tree.num_players
        and starts[:1] == [0]
        and starts[1:] == stops[:-1]
        and stops[-1:] == [num_infosets]
        and all(start < stop for start, stop in zip(starts, stops, strict=True)),
        "the levels are not the infosets in order",
    )
    owner = np.repeat([player for player, _, _ in spans], np.subtract(stops, starts))
    depth = np.concatenate(
        [np.repeat(np.arange(len(groups)), [stop - start for start, stop in groups]) for groups in tree.levels]
    )
    _require(np.array_equal(owner, tree.infoset_player), "a level holds another player's infosets")

    fault = _node_fault(
        tree.node_kind,
        tree.node_infoset,
        tree.node_terminal,
        num_terminals,
        tree.child_start,
        tree.child_node,
        tree.child_action,
        tree.child_probability,
        actions,
        widths,
    )
    if fault:
        raise ValueError(_NODE_FAULTS[fault - 1])
    _require(
        _sequences_fit(
            tree.parent_sequence,
            tree.infoset_player,
            tree.terminal_sequence,
            np.where(tree.action_mask, tree.infoset_player[:, None], -1).ravel(),
        ),
        "a parent or terminal sequence is out of range, not a legal action, or another player's",
    )
    first = tree.parent_sequence == tree.root_sequence
    _require(
        (depth[first] == 0).all() and np.array_equal(depth[~first], depth[tree.parent_sequence[~first] // width] + 1),
        "an infoset's level is not one below its parent sequence's",
    )
    _require(
        _terminal_values_fit(tree.terminal_chance, tree.terminal_utility),
        "a terminal's chance reach is not a probability, or its payoff is not finite",
    )


_NODE_FAULTS = (
    "the node kinds and their children's bounds do not fit together",
    "the children do not form a tree",
    "the decision nodes' infosets are out of range, or an infoset has no node",
    "the terminals are not numbered in order, or not as many as the terminals' arrays hold",
    "a decision node's children are not its infoset's legal actions",
    "a chance node's probabilities do not sum to 1",
)
"""What :func:`_node_fault` ``k`` stands for: ``_NODE_FAULTS[k - 1]``."""


@njit(cache=True, nogil=True, error_model="numpy")
def _node_fault(
    kind: NDArray[np.int8],
    infoset: IntArray,
    terminal_index: IntArray,
    num_terminals: int,
    child_start: IntArray,
    child_node: IntArray,
    child_action: IntArray,
    child_probability: FloatArray,
    actions: IntArray,
    widths: IntArray,
) -> int:
    """The first of :data:`_NODE_FAULTS` the node arrays show (its number from 1), or 0; each check a loop over
    the nodes or edges that relies only on those before it, and reads no array out of its bounds. The shapes
    are checked already: ``child_start`` has one entry more than the nodes, ``child_node``, ``child_action`` and
    ``child_probability`` one fewer; ``actions`` holds each infoset's legal action ids, ``widths`` how many, at
    least one and at most its width."""
    num_nodes, num_edges = kind.shape[0], child_node.shape[0]
    num_infosets = actions.shape[0]
    if kind[0] == KIND_TERMINAL or child_start[0] != 0 or child_start[num_nodes] != num_edges:
        return 1
    for node in range(num_nodes):
        count = child_start[node + 1] - child_start[node]
        if kind[node] < KIND_CHANCE or kind[node] > KIND_TERMINAL or count < 0:
            return 1
        if (count == 0) != (kind[node] == KIND_TERMINAL):
            return 1
    # The children's bounds rise from 0 to the number of edges: each edge is one node's child.
    parented = np.zeros(num_nodes, dtype=np.bool_)
    for edge in range(num_edges):
        child = child_node[edge]
        if child <= 0 or child >= num_nodes or parented[child]:
            return 2
        parented[child] = True  # as many edges as nodes but the root: each of those is a child once
    for node in range(num_nodes):
        for edge in range(child_start[node], child_start[node + 1]):
            if child_node[edge] <= node:
                return 2
    reached = np.zeros(num_infosets, dtype=np.bool_)
    for node in range(num_nodes):
        row = infoset[node]
        if (row >= 0) != (kind[node] == KIND_DECISION) or row < -1 or row >= num_infosets:
            return 3
        if row >= 0:
            reached[row] = True
    if not reached.all():
        return 3
    terminals = 0
    for node in range(num_nodes):
        if kind[node] != KIND_TERMINAL:
            if terminal_index[node] != -1:
                return 4
        elif terminal_index[node] != terminals:
            return 4
        else:
            terminals += 1
    if terminals != num_terminals:
        return 4
    for node in range(num_nodes):
        row, start = infoset[node], child_start[node]
        if row >= 0:
            if child_start[node + 1] - start != widths[row]:
                return 5
            for column in range(widths[row]):
                if child_action[start + column] != actions[row, column] or child_probability[start + column] != 1.0:
                    return 5
    for edge in range(num_edges):
        if not (np.isfinite(child_probability[edge]) and child_probability[edge] >= 0.0):
            return 6
    for node in range(num_nodes):
        if kind[node] == KIND_CHANCE:
            total = 0.0
            for edge in range(child_start[node], child_start[node + 1]):
                total += child_probability[edge]
            if abs(total - 1.0) > 1e-9:
                return 6
    return 0


@njit(cache=True, nogil=True, error_model="numpy")
def _sequences_fit(
    parent_sequence: IntArray, infoset_player: IntArray, terminal_sequence: IntArray, sequence_player: IntArray
) -> bool:
    """Whether every parent sequence (of its infoset's player) and terminal sequence (of its row's player) is
    the empty one, ``N * A``, or a sequence ``(I, a)`` of that player: ``sequence_player`` holds the player of
    each legal ``(I, a)`` and ``-1`` where ``a`` is not legal at ``I``. The shapes are checked already."""
    for row in range(parent_sequence.shape[0]):
        if not _sequence_fits(parent_sequence[row], infoset_player[row], sequence_player):
            return False
    for player in range(terminal_sequence.shape[0]):
        for terminal in range(terminal_sequence.shape[1]):
            if not _sequence_fits(terminal_sequence[player, terminal], player, sequence_player):
                return False
    return True


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _sequence_fits(sequence: int, player: int, sequence_player: IntArray) -> bool:
    root = sequence_player.shape[0]
    return bool(sequence == root or (0 <= sequence < root and sequence_player[sequence] == player))


@njit(cache=True, nogil=True, error_model="numpy")
def _terminal_values_fit(chance: FloatArray, utility: FloatArray) -> bool:
    """Whether every chance reach is in ``[0, 1]`` and every payoff finite."""
    for terminal in range(chance.shape[0]):
        if not (chance[terminal] >= 0.0 and chance[terminal] <= 1.0):
            return False
    for player in range(utility.shape[0]):
        for terminal in range(utility.shape[1]):
            if not np.isfinite(utility[player, terminal]):
                return False
    return True


def legal_action_ids(tree: CompiledTree) -> IntArray:
    """``(N, A)``: each infoset's legal action ids in their columns, ``-1`` in the others."""
    ids = np.full(tree.action_mask.shape, -1, dtype=np.int64)
    ids[tree.action_mask] = list(itertools.chain.from_iterable(tree.infoset_actions))
    return ids


def _require(holds: bool | np.bool_, fault: str) -> None:
    if not holds:
        raise ValueError(fault)


def within(indices: NDArray[np.integer[Any]], size: int) -> bool:
    """Whether every index is in ``[0, size)``."""
    return bool(indices.size == 0 or (indices.min() >= 0 and indices.max() < size))


Pieces = TypeVar("Pieces", str, list[int])


def _split(whole: Pieces, lengths: list[int]) -> list[Pieces]:
    """``whole`` cut into consecutive pieces of ``lengths``, which must use all of it (else ``ValueError``)."""
    stops = list(itertools.accumulate(lengths))
    if (stops[-1] if stops else 0) != len(whole):
        raise ValueError("the stored pieces do not add up")
    return [whole[stop - length : stop] for stop, length in zip(stops, lengths, strict=True)]
