"""The compiled game tree: one walk over an adapter, then arrays that solvers and evaluators share.

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
  the path), the chance reach ``terminal_chance[z]`` and ``terminal_utility[p, z]``.

The node-level structure (CSR children, chance probabilities, infoset per node) is
kept as well, for samplers and for exact values between arbitrary agents.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from adapters import Game, State, load_game
from adapters.base import CHANCE, NUM_PLAYERS, TERMINAL
from adapters.errors import InputError, UnsupportedGameError

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

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
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {key: i for i, key in enumerate(self.infoset_keys)})

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_keys)

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

    def uniform_strategy(self) -> FloatArray:
        """``(N, A)`` uniform over legal actions."""
        mask = self.action_mask.astype(np.float64)
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
        """Both players' realization plans of an ``(N, A)`` strategy, as one per-sequence vector."""
        x = np.zeros(self.num_sequences)
        x[self.root_sequence] = 1.0
        for player in range(NUM_PLAYERS):
            self.fill_realization(strategy, x, player)
        return x

    def summary(self) -> str:
        return (
            f"{self.game_id}: {self.num_infosets:,} infosets, {self.num_decision_nodes:,} decision "
            f"nodes, {self.num_terminals:,} terminals; built in {self.build_seconds:.2f} s"
        )


@dataclass
class _Builder:
    """Mutable scratch space of one compilation walk."""

    keys: dict[str, int] = field(default_factory=dict)
    players: list[int] = field(default_factory=list)
    actions: list[tuple[int, ...]] = field(default_factory=list)
    parents: list[tuple[int, int]] = field(default_factory=list)
    """Per infoset: ``(parent infoset, column)`` of the own previous sequence, ``(-1, 0)`` = root."""
    depths: list[int] = field(default_factory=list)
    terminal_sequences: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    terminal_chance: list[float] = field(default_factory=list)
    terminal_utility: list[tuple[float, float]] = field(default_factory=list)
    node_kind: list[int] = field(default_factory=list)
    node_infoset: list[int] = field(default_factory=list)
    node_terminal: list[int] = field(default_factory=list)
    children: list[list[tuple[int, int, float]]] = field(default_factory=list)

    def add_node(self, kind: int, infoset: int = -1, terminal: int = -1) -> None:
        self.node_kind.append(kind)
        self.node_infoset.append(infoset)
        self.node_terminal.append(terminal)


_ROOT = (-1, 0)


_Frame = tuple[State, int, float, float, tuple[tuple[int, int], ...], tuple[int, ...], int]
"""``(state, parent node, edge probability, chance reach, last sequences, depths, edge action)``."""


def _walk(builder: _Builder, game: Game, root: State) -> None:
    """Depth-first over the whole tree, with each player's last sequence and depth on the path."""
    stack: list[_Frame] = [(root, -1, 1.0, 1.0, (_ROOT, _ROOT), (0, 0), -1)]
    while stack:
        state, parent_node, edge_probability, chance_reach, sequences, depths, edge_action = stack.pop()
        node = len(builder.node_kind)
        builder.children.append([])
        if parent_node >= 0:
            builder.children[parent_node].append((node, edge_action, edge_probability))
        player = state.current_player()
        if player == TERMINAL:
            builder.add_node(KIND_TERMINAL, terminal=len(builder.terminal_chance))
            builder.terminal_sequences.append((sequences[0], sequences[1]))
            builder.terminal_chance.append(chance_reach)
            builder.terminal_utility.append(state.returns())
        elif player == CHANCE:
            builder.add_node(KIND_CHANCE)
            for outcome, probability in reversed(state.chance_outcomes()):
                child = state.child(outcome)
                stack.append((child, node, probability, chance_reach * probability, sequences, depths, outcome))
        else:
            infoset = _infoset(builder, game, state, player, sequences[player], depths[player])
            builder.add_node(KIND_DECISION, infoset=infoset)
            actions = builder.actions[infoset]
            for column in reversed(range(len(actions))):
                next_sequences = list(sequences)
                next_sequences[player] = (infoset, column)
                next_depths = list(depths)
                next_depths[player] += 1
                child = state.child(actions[column])
                stack.append(
                    (child, node, 1.0, chance_reach, tuple(next_sequences), tuple(next_depths), actions[column])
                )


def _infoset(builder: _Builder, game: Game, state: State, player: int, parent: tuple[int, int], depth: int) -> int:
    key = state.information_state_key(player)
    actions = state.legal_actions()
    infoset = builder.keys.get(key)
    if infoset is None:
        infoset = len(builder.players)
        builder.keys[key] = infoset
        builder.players.append(player)
        builder.actions.append(actions)
        builder.parents.append(parent)
        builder.depths.append(depth)
        return infoset
    if builder.players[infoset] != player or builder.actions[infoset] != actions:
        raise UnsupportedGameError(
            f"{game.game_id}: infoset {key!r} has different players or legal actions at two states"
        )
    if builder.parents[infoset] != parent:
        raise UnsupportedGameError(
            f"{game.game_id}: infoset {key!r} is reached after different own actions (the keys are not perfect-recall)"
        )
    return infoset


def compile_tree(game: Game) -> CompiledTree:
    """Walk ``game`` once and return its :class:`CompiledTree` (build time included)."""
    started = time.perf_counter()
    builder = _Builder()
    _walk(builder, game, game.new_initial_state())
    return _assemble(builder, game, started)


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


def _sequence_form_payoffs(tree: CompiledTree) -> tuple[IntArray, FloatArray]:
    """The sequence pairs that end terminals, sorted, and each pair's chance-weighted payoffs."""
    pairs = tree.terminal_sequence[0] * tree.num_sequences + tree.terminal_sequence[1]
    unique, inverse = np.unique(pairs, return_inverse=True)
    payoffs = [np.bincount(inverse, tree.terminal_chance * u, len(unique)) for u in tree.terminal_utility]
    return unique.astype(np.int64), np.stack(payoffs).astype(np.float64)


def _same_payoffs(source: CompiledTree, target: CompiledTree) -> bool:
    (ours, our_payoffs), (theirs, their_payoffs) = _sequence_form_payoffs(source), _sequence_form_payoffs(target)
    return np.array_equal(ours, theirs) and np.allclose(our_payoffs, their_payoffs, rtol=0, atol=1e-12)


@functools.lru_cache(maxsize=8)
def load_tree(game_id: str) -> CompiledTree:
    """The compiled tree of ``game_id``, compiled once per process (the eight last used are kept).

    Callers share it, so they must not write to its arrays (nothing in this package does).
    """
    return compile_tree(load_game(game_id))


def _assemble(builder: _Builder, game: Game, started: float) -> CompiledTree:
    num_infosets = len(builder.players)
    if num_infosets == 0:
        raise UnsupportedGameError(f"{game.game_id} has no decision nodes")
    # Number infosets by (player, depth, discovery order).
    order = sorted(range(num_infosets), key=lambda i: (builder.players[i], builder.depths[i], i))
    new_index = np.empty(num_infosets, dtype=np.int64)
    new_index[order] = np.arange(num_infosets)
    width = max(len(actions) for actions in builder.actions)
    root = num_infosets * width

    def flat(sequence: tuple[int, int]) -> int:
        infoset, column = sequence
        return root if infoset < 0 else int(new_index[infoset]) * width + column

    mask = np.zeros((num_infosets, width), dtype=bool)
    parent_sequence = np.empty(num_infosets, dtype=np.int64)
    for old in range(num_infosets):
        new = new_index[old]
        mask[new, : len(builder.actions[old])] = True
        parent_sequence[new] = flat(builder.parents[old])
    keys = list(builder.keys)
    levels = []
    for player in range(NUM_PLAYERS):
        groups: dict[int, list[int]] = {}
        for old in order:
            if builder.players[old] == player:
                groups.setdefault(builder.depths[old], []).append(int(new_index[old]))
        levels.append(tuple((members[0], members[-1] + 1) for _, members in sorted(groups.items())))

    terminal_sequence = np.array(
        [[flat(pair[p]) for pair in builder.terminal_sequences] for p in range(NUM_PLAYERS)],
        dtype=np.int64,
    )
    child_start = np.zeros(len(builder.children) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in builder.children], out=child_start[1:])
    edges = [edge for children in builder.children for edge in children]
    node_infoset = np.array(builder.node_infoset, dtype=np.int64)
    decision = node_infoset >= 0
    node_infoset[decision] = new_index[node_infoset[decision]]
    return CompiledTree(
        game_id=game.game_id,
        units=game.units,
        rules_fingerprint=game.rules_fingerprint,
        build_seconds=time.perf_counter() - started,
        infoset_keys=tuple(keys[i] for i in order),
        infoset_player=np.array([builder.players[i] for i in order], dtype=np.int64),
        infoset_actions=tuple(builder.actions[i] for i in order),
        action_mask=mask,
        parent_sequence=parent_sequence,
        levels=tuple(levels),
        terminal_sequence=terminal_sequence,
        terminal_chance=np.array(builder.terminal_chance, dtype=np.float64),
        terminal_utility=np.array(builder.terminal_utility, dtype=np.float64).T.copy(),
        node_kind=np.array(builder.node_kind, dtype=np.int8),
        node_infoset=node_infoset,
        node_terminal=np.array(builder.node_terminal, dtype=np.int64),
        child_start=child_start,
        child_node=np.array([e[0] for e in edges], dtype=np.int64),
        child_action=np.array([e[1] for e in edges], dtype=np.int64),
        child_probability=np.array([e[2] for e in edges], dtype=np.float64),
    )
