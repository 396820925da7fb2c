r"""A neural model's strategy on the public tree, with forward passes batched over the private hands.

A model plays, at information state :math:`I` of player :math:`p`,

.. math::

   \bar\sigma_p(I) = \frac{\sum_t w_t\,\pi^{\sigma^t}_p(I)\,\sigma^t_p(I)}{\sum_t w_t\,\pi^{\sigma^t}_p(I)},
   \qquad \pi^{\sigma^t}_p(I) = \prod_{j<k} \sigma^t_p(I_j, a_j),

over its *terms* :math:`(w_t, \sigma^t)` (:class:`NetworkStrategy`), with :math:`\sigma^t_p(I)` read from a network
:math:`\theta^t_p` by a decoding rule: the softmax of its outputs over the legal actions (Deep CFR's average
network :math:`\Pi`), or regret matching on its predicted advantages (:math:`V^+ / \sum V^+`, the argmax where
none is positive; Deep CFR's value networks), or uniform where a term has no network (SD-CFR's :math:`\sigma^1`).
One term is played as it is; several are SD-CFR's mixture (:mod:`cfr_agents.neural_policy`), the reach
:math:`\pi^{\sigma^t}_p` running over :math:`p`'s own decisions through the earlier rounds' segments, and a hand
no term reaches plays uniformly. :func:`network_strategy` reads a :class:`~cfr_agents.neural_policy.NeuralPolicy`,
:func:`torch_strategy` torch networks with a rule.

The inputs are OpenSpiel's information-state tensors (:mod:`adapters.holdem.tensors`): at a public node (a
segment's board history and a betting node) the tensor of hand :math:`h` is the node's template :math:`t` plus
the one-hot :math:`e_h` of its cards, so the first layer is

.. math:: W x_h + b = \underbrace{W_{\text{bet}}\,t_{\text{bet}} + b}_{\text{per betting node}}
   + \underbrace{\textstyle\sum_{c \in \text{board}} W_{:,c}}_{\text{per segment}}
   + \underbrace{\textstyle\sum_{c \in h} W_{:,c}}_{\text{per hand}},

three tables gathered and added (no product with the 100-odd inputs per row), plus :math:`s_r(h, b)\,W_{:,s}` per hand
when the model reads the strength input (:mod:`cfr_agents.abstraction.strength_input`, the segment's round and board),
and the other layers are matrix products over every hand of a decision node at once, in ``float32`` by default
(:class:`Materialiser`). In SD-CFR's mixture a term's network runs only on the hands whose own reach under that
term is positive at the node: the other hands weigh nothing in :math:`\bar\sigma_p` there, nor below (most
(term, hand) pairs past the first round, as a term's regret matching often plays an action never).
Hands that meet the board play uniformly (no deal reaches them).

Suit isomorphism. On a tree with every board the strategy is the model's own at every information state. On a
tree with suit-canonical boards the network reads each segment's canonical board and, for hand :math:`h`, the
smallest image :math:`\min_{g \in G} P_g h` of :math:`h` under the board's stabilizer :math:`G`: the model
played with suit-canonical inputs, a suit-canonical strategy, which the canonical tree scores exactly (a network's
raw play is in general not suit-canonical: score that on the tree with every board, chunk by chunk). Hands of one
image read the same inputs, so the networks and the mixture run once per image (each term's reach at a segment's
entry is the same on them: the parent segments' stabilizers contain the segment's) and the rows are copied out.
A model trained on these images (``inputs="canonical"``, :mod:`cfr_agents.abstraction.suit_images`) plays them
everywhere: on this tree as any model, asked state by state (:class:`StatePlayer`) through the same images; it is
not read on a tree with every board.

Output: the strategy array laid out as the tree's (:attr:`~cfr_agents.public_tree.tree.PublicTree.size`),
``strategy[offset[s] + node_offset[node] + a * H + h]``, or a chunk of consecutive segments of it
(:meth:`Materialiser.chunk`), laid out from its first segment's offset.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from adapters.games import canonical_game_id
from adapters.holdem.betting import DEAL, DECISION, BettingTree
from adapters.holdem.tensors import HoldemTensors, holdem_tensors
from adapters.inputs import InputError
from adapters.openspiel import PREFIX, OpenSpielGame
from cfr_agents.abstraction.strength_input import StrengthInput, strength_input
from cfr_agents.abstraction.suit_images import SuitImages, suit_images
from cfr_agents.holdem_play import Position
from cfr_agents.neural_policy import Layer, NeuralPolicy
from cfr_agents.public_tree.engine import FloatArray
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers.neural import networks

IntArray = NDArray[np.int64]
Network = tuple[Layer, ...]
"""A network's layers, ``inputs -> hidden... -> outputs``, ReLU between (:mod:`cfr_agents.neural_policy`)."""

RULES: Final = ("softmax", "regret-matching")
"""Decoding rules: the average network's softmax, regret matching on predicted advantages."""
_DECODE = {"softmax": networks.softmax, "regret-matching": networks.regret_matching}


@dataclass(frozen=True)
class NetworkStrategy:
    """The networks a model plays and how it reads them (module docstring)."""

    game_id: str
    rules_fingerprint: str
    rule: str
    """One of :data:`RULES`."""
    terms: tuple[tuple[int, tuple[Network | None, Network | None]], ...]
    """:math:`(w_t, (\\theta^t_0, \\theta^t_1))`: each term's weight and each player's network (``None``: uniform)."""
    inputs: str = "cards"
    """What the networks read: the tensor, the tensor then the strength input (``strength``), or the tensor of the
    state's suit-canonical image (``canonical``)."""

    @property
    def strength(self) -> StrengthInput | None:
        """The strength input the networks read after the tensor, if they do."""
        return strength_input(self.game_id) if self.inputs == "strength" else None

    @property
    def images(self) -> SuitImages | None:
        """The suit-canonical images the networks read, if they do (:mod:`cfr_agents.abstraction.suit_images`)."""
        return suit_images(self.game_id) if self.inputs == "canonical" else None

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise InputError(f"a network is read by {' or '.join(RULES)}, not {self.rule!r}")
        if not self.terms or any(weight <= 0 for weight, _ in self.terms):
            raise InputError("a network strategy needs terms of positive weight")


def network_strategy(model: NeuralPolicy) -> NetworkStrategy:
    """What ``model`` plays: Deep CFR's average network (softmax), or SD-CFR's uniform :math:`\\sigma^1` (weight 1)
    and each kept :math:`\\sigma^{t+1}` (regret matching on :math:`\\theta^t_p`, its block's linear weight)."""
    layers = model.layers
    if model.algorithm == "deep-cfr":
        return NetworkStrategy(
            model.game_id, model.rules_fingerprint, "softmax", ((1, (layers["average"],) * 2),), model.inputs
        )
    terms: list[tuple[int, tuple[Network | None, Network | None]]] = [(1, (None, None))]
    terms += [(weight, (layers[f"value0.{t}"], layers[f"value1.{t}"])) for t, weight in model.iteration_weights]
    return NetworkStrategy(model.game_id, model.rules_fingerprint, "regret-matching", tuple(terms), model.inputs)


def torch_strategy(game_id: str, rule: str, network: Any, network_1: Any = None) -> NetworkStrategy:
    """One torch network (:func:`~cfr_agents.solvers.neural.networks.mlp`) read by ``rule`` for both players, or
    ``network`` for player 0 and ``network_1`` for player 1 (Deep CFR's value networks)."""
    game = OpenSpielGame(canonical_game_id(game_id).removeprefix(PREFIX))
    pair = (_layers_of(network), _layers_of(network if network_1 is None else network_1))
    return NetworkStrategy(game.game_id, game.rules_fingerprint, rule, ((1, pair),))


def _layers_of(network: Any) -> Network:
    """A torch ``Sequential`` of ``Linear`` layers and ReLUs as ``float64`` layers."""
    arrays = networks.weights_of(network, "n")
    indices = sorted({int(m.group(1)) for name in arrays if (m := re.fullmatch(r"n\.(\d+)\.weight", name))})
    return tuple(
        (arrays[f"n.{i}.weight"].astype(np.float64), arrays[f"n.{i}.bias"].astype(np.float64)) for i in indices
    )


@dataclass(frozen=True)
class _Projection:
    """A network's first layer split by the parts of the tensor (module docstring), and its other layers."""

    node: NDArray[Any]
    """``(N, hidden)``: :math:`W t_{\\text{bet}} + b` per betting node (decisions only)."""
    board: NDArray[Any]
    """``(n, hidden)``: column :math:`W_{:,c}` of each board card."""
    hand: NDArray[Any]
    """``(H, hidden)``: :math:`\\sum_{c \\in h} W_{:,c}` per hand."""
    strength: NDArray[Any] | None
    """``(hidden,)``: the strength input's column :math:`W_{:,s}`, when the network reads it."""
    rest: tuple[tuple[NDArray[Any], NDArray[Any]], ...]
    """The other layers, ``(W^T, b)``."""


class Materialiser:
    """A :class:`NetworkStrategy` written into strategy arrays of one public tree (module docstring), segment by
    segment: per decision node and term, one forward pass over the hands' images under the board's stabilizer (for
    a mixture, over the images that term reaches the node with). The segments of a chunk run on one thread per
    core, each thread's products on one BLAS thread (:func:`_blas_alone`; BLAS's own threads wait for each other on
    every product, several times slower on cores shared with other work); where NumPy's BLAS cannot be held to one
    thread, on one thread of ours."""

    def __init__(self, tree: PublicTree, model: NetworkStrategy, *, dtype: type[np.floating[Any]] = np.float32) -> None:
        if (
            canonical_game_id(model.game_id) != canonical_game_id(tree.game_id)
            or model.rules_fingerprint != tree.rules_fingerprint
        ):
            raise InputError(f"the model is for {model.game_id}, not {tree.game_id}")
        if model.inputs == "canonical" and not tree.canonical:
            raise InputError(
                "a model that reads suit-canonical images is read on the public tree with suit-canonical boards, "
                "not on one with every board"
            )
        self.tree, self.model, self.dtype = tree, model, dtype
        self.tensors: HoldemTensors = holdem_tensors(OpenSpielGame(tree.game_string).pyspiel_game)
        self.strength = model.strength
        betting = tree.betting
        self._templates = self.tensors.betting_templates(betting)
        self._projections: dict[int, _Projection] = {}
        for _, pair in model.terms:
            for network in pair:
                if network is not None and id(network) not in self._projections:
                    self._projections[id(network)] = self._project(network)
        self._decisions = [
            start + np.flatnonzero(betting.kind[start:stop] == DECISION) for start, stop in betting.ranges
        ]
        self._children = betting.num_children.astype(np.int64)
        self._player = betting.player.astype(np.int64)
        self._width = int(self._children.max())
        self._kept = threading.local()
        """Per thread, :attr:`_reach_cache`."""
        self._representatives: dict[int, IntArray] = {}
        self._last: tuple[int, FloatArray] | None = None
        self.rows = 0
        """Rows (information states: a decision node and a hand the board leaves) written so far."""

    @property
    def _reach_cache(self) -> dict[int, tuple[int, NDArray[np.float64]]]:
        """Per round, the last segment whose deal nodes' reaches this thread kept: ``(segment, (slots, T, 2, H))``."""
        cache: dict[int, tuple[int, NDArray[np.float64]]] = self._kept.__dict__.setdefault("cache", {})
        return cache

    def _project(self, network: Network) -> _Projection:
        tensors, tree = self.tensors, self.tree
        (weight, bias), rest = network[0], network[1:]
        outputs = (rest[-1][0] if rest else weight).shape[0]
        size = tensors.size + (self.strength is not None)
        if weight.shape[1] != size or outputs < int(tree.betting.num_children.max()):
            raise InputError(
                f"a network of {weight.shape[1]} inputs and {outputs} outputs does not read {tree.game_id}'s "
                f"{size}-value inputs"
            )
        hole = weight[:, tensors.hole_offset : tensors.hole_offset + tensors.num_cards].T
        return _Projection(
            node=(self._templates.astype(np.float64) @ weight[:, : tensors.size].T + bias).astype(self.dtype),
            board=weight[:, tensors.board_offset : tensors.board_offset + tensors.num_cards].T.astype(self.dtype),
            hand=hole[self.tree.hands].sum(axis=1).astype(self.dtype),
            strength=None if self.strength is None else weight[:, tensors.size].astype(self.dtype),
            rest=tuple((w.T.astype(self.dtype), b.astype(self.dtype)) for w, b in rest),
        )

    def strategy(self) -> FloatArray:
        """The whole strategy array (:attr:`PublicTree.size` numbers)."""
        return self.chunk(0, self.tree.segments.count)

    def chunk(self, first: int, stop: int) -> FloatArray:
        """The entries of segments ``first`` to ``stop - 1``: ``offset[stop] - offset[first]`` numbers (the end of
        the array for the last segment), segment ``s``'s at ``offset[s] - offset[first]``."""
        tree = self.tree
        segments = tree.segments
        if not 0 <= first < stop <= segments.count:
            raise InputError(f"segments {first} to {stop - 1} are not segments of a tree of {segments.count}")
        end = tree.size if stop == segments.count else int(segments.offset[stop])
        origin = int(segments.offset[first])
        out = np.empty(end - origin)
        blocks = [range(s, min(s + _BLOCK, stop)) for s in range(first, stop, _BLOCK)]

        def write(block: range) -> int:
            return sum(self._write(s, out, origin) for s in block)

        with _blas_alone() as alone:
            threads = min(_cores(), len(blocks)) if alone else 1
            if threads == 1:
                self.rows += sum(map(write, blocks))
            else:
                with ThreadPoolExecutor(threads) as pool:
                    self.rows += sum(pool.map(write, blocks))
        return out

    def chunks(self, entries: int) -> Iterator[tuple[int, int]]:
        """``(first, stop)`` of consecutive segments of one round, each chunk at most ``entries`` strategy numbers
        (or one segment), covering the tree in order."""
        segments = self.tree.segments
        sizes = self.tree.range_size[segments.range_index]
        for r in range(segments.round_start.shape[0] - 1):
            first, stop = int(segments.round_start[r]), int(segments.round_start[r + 1])
            while first < stop:
                last = first + max(1, int(np.searchsorted(np.cumsum(sizes[first:stop]), entries, side="right")))
                yield first, min(last, stop)
                first = min(last, stop)

    def probabilities(self, tree: PublicTree, segment: int, node: int) -> FloatArray:
        """``(num_actions, H)`` at decision ``node`` of ``segment``: column ``h`` is the model's strategy of the player
        to act holding hand ``h`` (a one-segment :meth:`chunk`, kept for the segment's other nodes)."""
        if tree is not self.tree:
            raise InputError("a materialiser answers for the tree it was made for")
        if self._last is None or self._last[0] != segment:
            self._last = (segment, self.chunk(segment, segment + 1))
        base = int(tree.node_offset[node])
        n = int(self._children[node])
        return self._last[1][base : base + n * tree.num_hands].reshape(n, tree.num_hands)

    def _write(self, s: int, out: FloatArray, origin: int) -> int:
        """Write segment ``s``'s entries into ``out`` (laid out from offset ``origin``): every hand uniform, then the
        model's strategy at the hands the board leaves; returns how many rows that is."""
        tree = self.tree
        nodes, valid, image, played = self._played(s)
        start = int(tree.segments.offset[s]) - origin
        for j, node in enumerate(nodes):
            n = int(self._children[node])
            base = start + int(tree.node_offset[node])
            block = out[base : base + n * tree.num_hands].reshape(n, tree.num_hands)
            block[:] = 1.0 / n
            block[:, valid] = played[j, image, :n].T
        return nodes.size * valid.size

    def _played(self, s: int) -> tuple[IntArray, IntArray, IntArray, NDArray[np.float64]]:
        """Segment ``s``'s decision nodes, the hands its board leaves, the image each of them is read as (a column of
        the images, hands in increasing order), and the strategy played at the images, ``(nodes, images, A)``: the
        one term's, or SD-CFR's :math:`\\bar\\sigma_p` (module docstring). Walking the segment's betting range parents
        first, each term's network runs at a decision node on the images that term reaches there only: the
        others weigh nothing in the mixture, and nothing below them. Keeps each term's reaches at the segment's deal
        nodes, of every hand the board leaves."""
        tree, betting = self.tree, self.tree.betting
        segments = tree.segments
        nodes = self._decisions[segments.range_index[s]]
        valid = np.flatnonzero((tree.masks & segments.board_mask[s]) == 0)
        read, image = np.unique(self._representative(int(segments.group[s]))[valid], return_inverse=True)
        cards = np.array([c for board in segments.boards[s] for c in board], dtype=np.int64)
        strength = None
        if self.strength is not None:  # s_r(h, b) of each hand read, the segment's round r
            strength = self.strength.of_board(int(tree.betting.round[nodes[0]]), tree.hands[read], cards)
        terms = self.model.terms
        inputs = [tuple(self._hand_inputs(network, read, cards, strength) for network in pair) for _, pair in terms]
        sigma = np.empty((len(terms), nodes.size, read.size, self._width))
        row_of = {int(node): j for j, node in enumerate(nodes)}
        start, stop = (int(x) for x in betting.ranges[segments.range_index[s]])
        mixture = len(terms) > 1
        reach: dict[int, NDArray[np.float64]] = {start: self._entry_reach(s)[..., read]} if mixture else {}
        deal_reach = np.zeros((int(np.sum(betting.kind[start:stop] == DEAL)), len(terms), 2, tree.num_hands))
        for node in range(start, stop):
            if mixture and node > start:  # (T, 2, images): each term's reach of both players
                parent = int(betting.parent[node])
                below = reach[parent].copy()
                mover = int(self._player[parent])
                below[:, mover] *= sigma[:, row_of[parent], :, node - int(betting.first_child[parent])]
                if betting.kind[node] == DECISION:
                    reach[node] = below
                elif betting.kind[node] == DEAL:
                    deal_reach[int(tree.node_slot[node])][..., valid] = below[..., image]
            if betting.kind[node] != DECISION:
                continue
            player = int(self._player[node])
            for t, (_, pair) in enumerate(terms):
                rows = np.flatnonzero(reach[node][t, player] > 0.0) if mixture else None
                sigma[t, row_of[node]] = self._node_sigma(pair[player], node, inputs[t][player], read.size, rows)
        if not mixture:
            return nodes, valid, image.astype(np.int64), sigma[0]
        if deal_reach.shape[0]:
            self._reach_cache[int(segments.round_start.searchsorted(s, side="right"))] = (s, deal_reach)
        weights = np.array([weight for weight, _ in terms], dtype=np.float64)
        own = np.stack([reach[int(node)][:, int(self._player[node])] for node in nodes], axis=1)  # (T, d, v)
        weighted = weights[:, None, None] * own
        numerator = np.einsum("tdv,tdva->dva", weighted, sigma)
        denominator = weighted.sum(axis=0)
        reached = denominator > 0
        uniform = self._uniform(nodes)[:, None, :]
        played = np.where(reached[..., None], numerator / np.where(reached, denominator, 1.0)[..., None], uniform)
        return nodes, valid, image.astype(np.int64), played

    def _hand_inputs(
        self, network: Network | None, read: IntArray, cards: IntArray, strength: NDArray[Any] | None
    ) -> tuple[NDArray[Any], NDArray[Any]] | None:
        """A network's first layer at a segment: per image read, the hand's part (and the strength input's), and the
        board's part, shared by every node; ``None`` for a uniform term."""
        if network is None:
            return None
        projection = self._projections[id(network)]
        hand_part = projection.hand[read]
        if strength is not None and projection.strength is not None:
            hand_part = hand_part + np.outer(strength, projection.strength).astype(self.dtype)  # + s W_{:,s}
        return hand_part, projection.board[cards].sum(axis=0)

    def _node_sigma(
        self,
        network: Network | None,
        node: int,
        inputs: tuple[NDArray[Any], NDArray[Any]] | None,
        images: int,
        rows: IntArray | None,
    ) -> NDArray[np.float64]:
        """``(images, A)``: one term's strategy at decision ``node``, the network run on the images ``rows`` (all when
        ``None``), uniform at the others."""
        uniform = self._uniform(np.array([node]))
        if network is None or inputs is None or (rows is not None and rows.size == 0):
            return np.broadcast_to(uniform, (images, self._width)).copy()
        projection = self._projections[id(network)]
        hand_part, board_part = inputs
        first = (hand_part if rows is None else hand_part[rows]) + (projection.node[node] + board_part)
        outputs = _forward(first, projection.rest)[:, : self._width].astype(np.float64)
        mask = np.broadcast_to(uniform > 0, outputs.shape)
        decoded: NDArray[np.float64] = _DECODE[self.model.rule](outputs, mask)
        if rows is None:
            return decoded
        sigma = np.broadcast_to(uniform, (images, self._width)).copy()
        sigma[rows] = decoded
        return sigma

    def _uniform(self, nodes: IntArray) -> NDArray[np.float64]:
        """``(nodes, A)``: the uniform strategy at each decision node, 0 past its actions."""
        children = self._children[nodes][:, None]
        return (np.arange(self._width) < children) / children

    def _representative(self, group: int) -> IntArray:
        """Each hand's smallest image under the suit permutations of stabilizer ``group`` (itself when the group is
        the identity alone): the hand whose inputs the network reads."""
        tree = self.tree
        found = self._representatives.get(group)
        if found is None:
            members = tree.group_members[tree.group_start[group] : tree.group_start[group + 1]]
            found = self._representatives[group] = tree.permutations[members].min(axis=0).astype(np.int64)
        return found

    def _entry_reach(self, s: int) -> NDArray[np.float64]:
        """``(T, 2, H)``: each term's reach of each player at segment ``s``'s entry, from its parent segment's deal
        node (computed again, with its own parents, if it is not the last one kept for its round)."""
        segments = self.tree.segments
        slot = int(segments.parent_slot[s])
        if slot < 0:
            return np.ones((len(self.model.terms), 2, self.tree.num_hands))
        parent = int(np.searchsorted(segments.first_slot, slot, side="right") - 1)  # the segment owning the slot
        round_ = int(segments.round_start.searchsorted(parent, side="right"))
        kept = self._reach_cache.get(round_)
        if kept is None or kept[0] != parent:
            scratch = np.empty(int(self.tree.range_size[segments.range_index[parent]]))
            self._write(parent, scratch, int(segments.offset[parent]))  # its rows are not written out
            kept = self._reach_cache[round_]
        reach: NDArray[np.float64] = kept[1][slot - int(segments.first_slot[parent])]
        return reach


class StatePlayer:
    r"""A :class:`NetworkStrategy` asked one information state at a time, for games no public tree holds (``hulh``,
    RLCard's limit hold'em): :math:`\bar\sigma_p(I)` at a :class:`~cfr_agents.holdem_play.Position` (decision
    node :math:`d` of the betting tree, the player to act's hole cards, the board dealt so far, and the path of
    every decision of the hand so far), as :class:`~cfr_agents.holdem_play.HoldemPolicy` and
    :class:`~cfr_agents.holdem_play.HoldemRLCardAgent` ask. Each term's reach :math:`\pi^{\sigma^t}_p(I)` is the
    product of its :math:`\sigma^t_p` at the player's own earlier decisions of the path, each read with the board of
    its round; the networks run in ``float64``."""

    def __init__(self, model: NetworkStrategy, tensors: HoldemTensors, betting: BettingTree) -> None:
        self.model, self.tensors, self.betting = model, tensors, betting
        self._board_end = np.cumsum(tensors.rules.board_cards)
        self._images = model.images

    def __call__(self, position: Position) -> FloatArray:
        hole = np.asarray([position.hole], dtype=np.int64)
        played: FloatArray = self.hands(position.node, position.board, position.path, hole)[:, 0]
        return played

    def hands(
        self, node: int, board: Sequence[int], path: Sequence[tuple[int, int]], holes: NDArray[np.int64]
    ) -> FloatArray:
        """``(num_actions, H)``: the strategy at ``node`` after ``path`` with ``board`` dealt, for the player to act
        holding each row of ``holes`` ``(H, k)``: one forward pass per term over every hand and own decision."""
        betting = self.betting
        player = int(betting.player[node])
        own = [(d, a) for d, a in path if int(betting.player[d]) == player]
        visited = [d for d, _ in own] + [node]
        width = int(betting.num_children.max())
        rows = np.stack([self._inputs(player, d, board, holes) for d in visited], axis=1)  # (H, visited, inputs)
        count = rows.shape[0]
        mask = np.arange(width)[None, :] < betting.num_children[visited].astype(np.int64)[:, None]
        masks = np.tile(mask, (count, 1))
        numerator, denominator = np.zeros((count, width)), np.zeros(count)
        for weight, pair in self.model.terms:
            network = pair[player]
            if network is None:
                sigma = np.broadcast_to(mask / mask.sum(axis=1, keepdims=True), (count, *mask.shape))
            else:
                (first, bias), rest = network[0], network[1:]
                flat = rows.reshape(-1, rows.shape[2])
                outputs = _forward(flat @ first.T + bias, [(w.T, b) for w, b in rest])[:, :width]
                sigma = _DECODE[self.model.rule](outputs, masks).reshape(count, len(visited), width)
            reach = np.ones(count)
            for j, (_, a) in enumerate(own):
                reach = reach * sigma[:, j, a]  # pi^{sigma^t}_p(I)
            numerator += weight * reach[:, None] * sigma[:, -1]
            denominator += weight * reach
        n = int(betting.num_children[node])
        reached = denominator > 0.0
        played: FloatArray = np.where(
            reached[:, None], numerator[:, :n] / np.where(reached, denominator, 1.0)[:, None], 1.0 / n
        )
        return played.T

    def _inputs(self, player: int, node: int, board: Sequence[int], holes: NDArray[np.int64]) -> FloatArray:
        """``(H, inputs)``: what the networks read at decision ``node`` for each hand, with the board of its round."""
        round_ = int(self.betting.round[node])
        dealt = list(board[: int(self._board_end[round_])])
        if self._images is not None:  # the suit-canonical image of each hand, and the board's
            on_board = np.broadcast_to(np.asarray(dealt, dtype=np.int64), (holes.shape[0], len(dealt)))
            holes, boards = self._images.mapped(holes, on_board, np.full(holes.shape[0], bool(dealt)))
            dealt = boards[0].tolist()
        rows: FloatArray = self.tensors.of_node(player, self.betting.sequence[node], dealt, holes).astype(np.float64)
        strength = self.model.strength
        if strength is None:
            return rows
        return np.concatenate(
            [rows, strength.of_board(round_, holes, np.asarray(dealt, dtype=np.int64))[:, None]], axis=1
        )


_BLOCK: Final = 8
"""Consecutive segments a thread of :meth:`Materialiser.chunk` writes at a time (mostly under one parent)."""


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


@contextmanager
def _blas_alone() -> Iterator[bool]:
    """Every OpenBLAS the process has loaded (NumPy's) held to one thread while the block runs; yields whether one
    was found (other BLAS libraries are left as they are)."""
    found = _openblas()
    before = [get() for get, _ in found]
    for _, set_threads in found:
        set_threads(1)
    try:
        yield bool(found)
    finally:
        for (_, set_threads), threads in zip(found, before, strict=True):
            set_threads(threads)


@functools.cache
def _openblas() -> tuple[tuple[Callable[[], int], Callable[[int], None]], ...]:
    """``(get, set)`` of the thread count of each OpenBLAS among the process's loaded libraries (``/proc/self/maps``:
    Linux), under its plain or SciPy-build names (``scipy_openblas_set_num_threads64_``), as threadpoolctl finds
    them."""
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return ()
    paths = sorted({line.split(maxsplit=5)[-1] for line in maps.splitlines() if "openblas" in line.rsplit("/", 1)[-1]})
    found: list[tuple[Callable[[], int], Callable[[int], None]]] = []
    for path in paths:
        try:
            library = ctypes.CDLL(path)
        except OSError:  # a library file replaced since it was loaded
            continue
        for prefix, suffix in (
            ("openblas", ""),
            ("openblas", "64_"),
            ("scipy_openblas", ""),
            ("scipy_openblas", "64_"),
        ):
            get, set_threads = (
                getattr(library, f"{prefix}_{verb}_num_threads{suffix}", None) for verb in ("get", "set")
            )
            if get is not None and set_threads is not None:
                found.append((get, set_threads))
                break
    return tuple(found)


def _forward(first: NDArray[Any], rest: Sequence[tuple[NDArray[Any], NDArray[Any]]]) -> NDArray[Any]:
    """The network's outputs from its first layer's pre-activations: ReLU, then :math:`h W^T + b` layer by layer
    (matrix products), ReLU between."""
    hidden = first
    for weight_t, bias in rest:
        np.maximum(hidden, 0, out=hidden)
        hidden = hidden @ weight_t
        hidden += bias
    return hidden
