r"""Deep CFR and Single Deep CFR on the limit hold'em engine: no tree, information-state tensors, the cards dealt per
traversal.

A two-player limit ``universal_poker`` game (``fhp``, ``hulh``, the small hold'em games) or RLCard's
``limit-holdem`` has no compiled tree to hold the strategy of every infoset, so iteration :math:`t` of Deep CFR
(Brown, Lerer, Gross & Sandholm 2019, Algorithm 1; the same iteration as :mod:`~cfr_agents.solvers.neural.solver`
runs on a compiled tree) runs, for each player :math:`p` in turn, a chunk of deals at a time:

1. :math:`K` deals :math:`c_k` are drawn (``rng``), every card of a hand;
2. the traversals walk the betting tree level by level for all :math:`K` deals at once
   (:meth:`HoldemNeuralSolver.traverse`). At each level :math:`\sigma^t(I)` is computed at the decision nodes
   reached, for the player :math:`q` to act, by regret matching on :math:`V(I \mid \theta_q)` (uniform before
   :math:`\theta_q` is trained): one batched forward pass per player, :math:`I` read as its information-state
   tensor (:func:`engine_tensors`: :math:`q`'s position, hole cards, the board dealt so far and the betting);
3. external sampling: at :math:`p`'s nodes every action, and from the deepest level up
   :math:`\tilde v(I) = \sum_a \sigma^t(I,a)\,\tilde v(Ia)` and :math:`\tilde r^t(I,a) = \tilde v(Ia) - \tilde v(I)`
   into :math:`\mathcal M_{V,p}`; at the opponent's nodes one action drawn from :math:`\sigma^t(I)` and, for
   Deep CFR, :math:`(I, t, \sigma^t(I))` into :math:`\mathcal M_\Pi`; chance is the deal itself. A sample's
   infoset is kept as a key, the node and the cards its player sees, packed into one ``int64``
   (:meth:`HoldemNeuralSolver.keys`). The networks run only where the traversals go, a few dozen nodes a
   deal, not at every node of a betting tree of thousands. With ``traversal="public-chance"`` a traversal draws the
   board alone and takes every hand's exact regrets given it instead (:mod:`~cfr_agents.solvers.neural.public_chance`,
   :meth:`HoldemNeuralSolver.public_chance`);
4. :math:`\theta_p` is trained on mini-batches of :math:`\mathcal M_{V,p}`, each sample's tensor rebuilt from
   its key, to minimise :math:`\sum_i t_i \sum_a (V(I_i, a \mid \theta_p) - \tilde r_i(a) / s)^2 / \sum_i t_i`, the
   regrets in units of ``value_scale`` :math:`s`.

The model (:meth:`HoldemNeuralSolver.model`) is a :class:`~cfr_agents.neural_policy.NeuralPolicy`: Deep CFR's
average network :math:`\Pi`, trained on :math:`\mathcal M_\Pi` when the model is made, or SD-CFR's value
networks :math:`\theta^t_p` of every iteration, whose mixture :math:`\bar\sigma_p(I) \propto \sum_t t\,
\pi^{\sigma^t}_p(I)\,\sigma^t_p(I)` the public tree scores exactly (:mod:`cfr_agents.public_tree.neural`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numba import njit
from numpy.typing import NDArray

import cfr_agents.solvers.neural.networks as networks
from adapters import load_game
from adapters.holdem.betting import DEAL, DECISION, FOLD, SHOWDOWN
from adapters.holdem.cards import cards_rank
from adapters.holdem.engine import HoldemEngine, holdem_engine
from adapters.holdem.tensors import HoldemTensors, holdem_tensors
from adapters.inputs import InputError, UnsupportedGameError
from adapters.openspiel import PREFIX, OpenSpielGame
from cfr_agents.abstraction.strength_input import strength_input
from cfr_agents.abstraction.suit_images import suit_images
from cfr_agents.solvers.neural.public_chance import BoardWalk, board_regrets
from cfr_agents.solvers.neural.sd_cfr import kept_weights
from cfr_agents.solvers.neural.solver import TRAVERSAL_CHUNK, NeuralSettings, check_network_size, weighted_step
from cfr_agents.solvers.neural.solver import Memory as _Memory
from cfr_agents.solvers.sampling.deals import terminal_values
from cfr_agents.tree import FloatArray

IntArray = NDArray[np.int64]
CARD_BITS = 6
"""Bits of one card in a key: a card id plus one (0: no card), for decks of up to 63 cards."""


@dataclass(frozen=True)
class EngineGame:
    """What the training loop reads of a game trained on the hold'em engine (the compiled tree's surface)."""

    engine: HoldemEngine

    @property
    def game_id(self) -> str:
        return self.engine.game_id

    @functools.cached_property
    def rules_fingerprint(self) -> str:
        return load_game(self.game_id).rules_fingerprint

    @property
    def units(self) -> str:
        return self.engine.units

    @property
    def num_decision_nodes(self) -> int:
        """Decision nodes of the betting tree."""
        return int((self.engine.betting.kind == DECISION).sum())

    @property
    def num_terminals(self) -> int:
        """Fold and showdown nodes of the betting tree."""
        return int(np.isin(self.engine.betting.kind, (FOLD, SHOWDOWN)).sum())

    @property
    def build_seconds(self) -> float:
        """Nothing is built beyond the betting tree."""
        return 0.0

    def summary(self) -> str:
        return (
            f"{self.game_id}: {self.num_decision_nodes:,} betting decisions, dealt per traversal on the hold'em "
            "engine (no tree held)"
        )


def engine_tensors(engine: HoldemEngine) -> HoldemTensors:
    """The information-state tensors of the engine's game: OpenSpiel's for a ``universal_poker`` game; for RLCard's
    limit hold'em, which has none, the same layout (:mod:`adapters.holdem.tensors`) over its rules and betting: the
    player's position (0 the big blind, 1 the small blind), its hole cards, the board and every action in order,
    an exact encoding of the whole history the player has seen."""
    if not engine.seat_drawn:
        return holdem_tensors(OpenSpielGame(engine.game_id.removeprefix(PREFIX)).pyspiel_game)
    betting, rules = engine.betting, engine.rules
    actions = max(len(sequence.replace("|", "")) for sequence in betting.sequence)
    return HoldemTensors(rules, 2 * rules.num_hole_cards + sum(rules.board_cards) + actions)


@njit(cache=True, error_model="numpy")
def showdown_signs(cards: np.ndarray, num_hole: int, num_suits: int) -> np.ndarray:
    r""":math:`s_i \in \{1, 0, -1\}` of each deal ``cards[k]`` (player 0's hole cards, player 1's, the board): whether
    player :math:`i`'s hand wins, ties or loses at a showdown."""
    signs = np.zeros((cards.shape[0], 2))
    for k in range(cards.shape[0]):
        board = cards[k, 2 * num_hole :]
        first = cards_rank(cards[k, :num_hole], board, num_suits)
        second = cards_rank(cards[k, num_hole : 2 * num_hole], board, num_suits)
        outcome = 1.0 if first > second else -1.0 if first < second else 0.0
        signs[k, 0], signs[k, 1] = outcome, -outcome
    return signs


class Samples(NamedTuple):
    """What traversals for one player offer the memories."""

    own_keys: IntArray
    """The traverser's infosets (:meth:`HoldemNeuralSolver.keys`)."""
    regrets: FloatArray
    r""":math:`\tilde r^t(I, \cdot)` at each."""
    other_keys: IntArray
    """The opponent's infosets met."""
    strategies: FloatArray
    r""":math:`\sigma^t(I)` at each."""


class HoldemNeuralSolver:
    """Deep CFR (``deep-cfr``) or Single Deep CFR (``sd-cfr``) on the hold'em engine (module docstring)."""

    def __init__(self, game_id: str, algorithm: str, settings: NeuralSettings, rng: np.random.Generator) -> None:
        if algorithm not in ("deep-cfr", "sd-cfr"):
            raise InputError(f"neural CFR on the hold'em engine is deep-cfr or sd-cfr, not {algorithm!r}")
        settings.check()
        torch = networks.torch_module()
        torch.set_num_threads(settings.threads)
        engine = holdem_engine(game_id)
        self.tensors = engine_tensors(engine)
        self.tree = EngineGame(engine)
        self.algorithm, self.settings, self._rng = algorithm, settings, rng
        betting, rules = engine.betting, engine.rules
        self._nodes = betting.num_nodes
        self._values = terminal_values(engine)
        self.walk = BoardWalk(engine, self._values)
        """The betting tree and private hands a public-chance traversal walks
        (:mod:`~cfr_agents.solvers.neural.public_chance`)."""
        self._player = betting.player.astype(np.int64)
        self._templates = self.tensors.betting_templates(betting)
        self._templates_torch = torch.from_numpy(self._templates)
        self._mask = np.arange(3)[None, :] < betting.num_children.astype(np.int64)[:, None]
        self._decisions = [np.flatnonzero((betting.kind == DECISION) & (self._player == p)) for p in range(2)]
        self._hole = rules.num_hole_cards
        self._visible = self._hole + np.cumsum(rules.board_cards)[betting.round.astype(np.int64)]
        """The cards the player to act sees at each node: its hole cards and the board dealt by the node's round."""
        self._dealt = 2 * self._hole + sum(rules.board_cards)
        self._node_bits = max(1, (self._nodes - 1).bit_length())
        self._card_shifts = self._node_bits + CARD_BITS * np.arange(int(self._visible.max()), dtype=np.int64)
        """Where each seen card's field starts in a key (:meth:`keys`), after the node's bits."""
        if self._node_bits + CARD_BITS * int(self._visible.max()) > 63 or rules.deck_size >= 1 << CARD_BITS:
            raise UnsupportedGameError(f"{game_id}'s information states do not pack into 63-bit keys")
        self.strength = strength_input(engine.game_id) if settings.inputs == "strength" else None
        """The hand-strength input, read after the tensor (``inputs="strength"``)."""
        self.images = suit_images(engine.game_id) if settings.inputs == "canonical" else None
        """The suit-canonical images every key is made of (``inputs="canonical"``)."""
        check_network_size(settings.hidden, self.num_inputs, 3)
        self._torch_seed = int(rng.integers(2**63))
        self._torch_rng = torch.Generator().manual_seed(self._torch_seed)
        self._stream = rng.integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False)
        if not self._stream.any():
            self._stream[0] = np.uint64(1)  # xoshiro's one forbidden state
        self.value_networks = [self._fresh_network() for _ in range(2)]
        self._trained = [False, False]
        self._optimisers: list[Any] = [None, None]
        self.advantage_memories = [_Memory(settings.advantage_memory, 3, np.int64) for _ in range(2)]
        self.strategy_memory = _Memory(settings.strategy_memory if algorithm == "deep-cfr" else 1, 3, np.int64)
        self.kept: dict[str, NDArray[np.float32]] = {}
        r"""SD-CFR: every value network trained so far, ``value<p>.<t>.*`` (:math:`\theta^t_p`)."""
        self.iteration = 0
        self.nodes_touched = 0
        self.training_seconds = 0.0

    @property
    def num_inputs(self) -> int:
        """The networks' inputs: the information-state tensor, then the strength input when it is read."""
        return self.tensors.size + (self.strength is not None)

    def _fresh_network(self, generator: Any = None) -> Any:
        return networks.mlp(
            self.num_inputs, self.settings.hidden, 3, self._torch_rng if generator is None else generator
        )

    @property
    def chunk(self) -> int:
        """Deals walked at once: at most :data:`~cfr_agents.solvers.neural.solver.TRAVERSAL_CHUNK`."""
        return min(self.settings.traversals, TRAVERSAL_CHUNK)

    def run(self, iterations: int) -> None:
        """``iterations`` iterations: both players' traversals and value-network training."""
        public = self.settings.traversal == "public-chance"
        for _ in range(iterations):
            self.iteration += 1
            t = self.iteration
            for player in range(2):
                for first in range(0, self.settings.traversals, self.chunk):
                    count = min(self.chunk, self.settings.traversals - first)
                    samples = self.public_chance(player, count) if public else self.traverse(player, count)
                    regrets = samples.regrets / self.settings.value_scale  # r~ / s
                    self.advantage_memories[player].store(samples.own_keys, regrets, t, self._stream)
                    if self.algorithm == "deep-cfr":
                        self.strategy_memory.store(samples.other_keys, samples.strategies, t, self._stream)
                self._train_value_network(player)

    def traverse(self, player: int, count: int) -> Samples:
        r"""``count`` external-sampling traversals for ``player`` under :math:`\sigma^t` (the networks as they are),
        one fresh deal each, walked level by level for all deals at once: at each level the networks run once per
        player on the decision nodes reached, the traverser's nodes open every action, the opponent's draw one
        from :math:`\sigma^t(I)`, a deal node passes to its round. Then, from the deepest level up,
        :math:`\tilde v(I) = \sum_a \sigma^t(I,a)\,\tilde v(Ia)` at the traverser's nodes (the child's value
        elsewhere), and :math:`\tilde r^t(I,a) = \tilde v(Ia) - \tilde v(I)`. Returns the samples, the traverser's
        by level."""
        betting = self.tree.engine.betting
        cards = self.deal(count)
        signs = showdown_signs(cards, self._hole, self.tensors.rules.num_suits)
        deal, node = [np.arange(count)], [np.zeros(count, dtype=np.int64)]
        parent, weight = [np.full(count, -1)], [np.ones(count)]
        sigma_of: list[FloatArray] = []
        opens: list[IntArray] = []  # per level: the first child item of each item (-1 where it has none)
        total = 0
        while True:
            level_deal, level_node = deal[-1], node[-1]
            items = total + np.arange(level_node.size)
            total += level_node.size
            kind = betting.kind[level_node]
            sigma = np.zeros((level_node.size, 3))
            decision = np.flatnonzero(kind == DECISION)
            for mover in range(2):
                rows = decision[self._player[level_node[decision]] == mover]
                if rows.size:
                    sigma[rows] = self._sigma(mover, level_deal[rows] * self._nodes + level_node[rows], cards)
            sigma_of.append(sigma)
            mine = (kind == DECISION) & (self._player[level_node] == player)
            single = (kind == DEAL) | ((kind == DECISION) & ~mine)
            drawn = np.zeros(level_node.size, dtype=np.int64)
            other = np.flatnonzero((kind == DECISION) & ~mine)
            above = self._rng.random(other.size)[:, None] > np.cumsum(sigma[other], axis=1)
            drawn[other] = np.minimum(above.sum(axis=1), betting.num_children[level_node[other]] - 1)  # a ~ sigma(I)
            width = np.where(mine, betting.num_children[level_node], single.astype(np.int64))
            first_item = total + np.cumsum(width) - width
            opens.append(np.where(width > 0, first_item, -1))
            if not width.any():
                break
            source = np.repeat(np.arange(level_node.size), width)
            offset = np.arange(source.size) - np.repeat(np.cumsum(width) - width, width)
            action = np.where(mine[source], offset, drawn[source])
            deal.append(level_deal[source])
            node.append(betting.first_child[level_node[source]].astype(np.int64) + action)
            parent.append(items[source])
            weight.append(np.where(mine[source], sigma[source, np.minimum(action, 2)], 1.0))
        all_deal, all_node = np.concatenate(deal), np.concatenate(node)
        all_parent, all_weight = np.concatenate(parent), np.concatenate(weight)
        value = np.zeros(total)
        kind = betting.kind[all_node]
        ends = np.flatnonzero(np.isin(kind, (FOLD, SHOWDOWN)))
        stake = self._values[all_node[ends], player]
        value[ends] = np.where(kind[ends] == SHOWDOWN, stake * signs[all_deal[ends], player], stake)  # u_i(z)
        starts = np.cumsum([0] + [level.size for level in node])
        for level in range(len(node) - 1, 0, -1):  # children hand their values up, deepest level first
            items = np.arange(starts[level], starts[level + 1])
            np.add.at(value, all_parent[items], all_weight[items] * value[items])  # v(I) = sum_a sigma(I,a) v(Ia)
        sigma = np.concatenate(sigma_of)
        first = np.concatenate(opens)
        own = np.flatnonzero((kind == DECISION) & (self._player[all_node] == player))
        children = first[own][:, None] + np.arange(3)[None, :]
        legal = self._mask[all_node[own]]
        regrets = np.where(legal, value[np.where(legal, children, 0)] - value[own][:, None], 0.0)  # v(Ia) - v(I)
        seen = np.flatnonzero((kind == DECISION) & (self._player[all_node] != player))
        self.nodes_touched += total
        own_rows = all_deal[own] * self._nodes + all_node[own]
        seen_rows = all_deal[seen] * self._nodes + all_node[seen]
        return Samples(self.keys(cards, own_rows), regrets, self.keys(cards, seen_rows), sigma[seen])

    def public_chance(self, player: int, count: int) -> Samples:
        r"""``count`` public-chance traversals for ``player`` under :math:`\sigma^t`
        (:mod:`~cfr_agents.solvers.neural.public_chance`), one fresh board each: the networks run once per player on
        every decision node for every hand the board leaves, and each candidate sample is kept with its probability
        :math:`w` (the opponent's, for Deep CFR's strategy memory: its own reach)."""
        parts: list[Samples] = []
        walk, deck = self.walk, self.tensors.rules.deck_size
        for _ in range(count):
            board = np.argsort(self._rng.random(deck))[: self._dealt - 2 * self._hole].astype(np.int64)
            hands = walk.hands[walk.valid(board)]
            cards = np.concatenate([hands, hands, np.broadcast_to(board, (hands.shape[0], board.size))], axis=1)
            sigma = np.zeros((self._nodes, hands.shape[0], 3))
            for mover in range(2):  # sigma^t(I_{d,h}) at every decision d of mover, every hand h
                nodes = self._decisions[mover]
                rows = (np.arange(hands.shape[0])[None, :] * self._nodes + nodes[:, None]).ravel()
                sigma[nodes] = self._sigma(mover, rows, cards).reshape(nodes.size, hands.shape[0], 3)
            found = board_regrets(walk, board, player, sigma)
            kept = self._rng.random(found.keep.size) < found.keep  # kept with probability w(d, h)
            seen = np.zeros(found.other_keep.size, dtype=bool)
            if self.algorithm == "deep-cfr":
                seen = self._rng.random(found.other_keep.size) < found.other_keep  # pi_{-p}(d, h')
            parts.append(
                Samples(
                    self.keys(cards, found.own_hands[kept] * self._nodes + found.own_nodes[kept]),
                    found.targets[kept],
                    self.keys(cards, found.other_hands[seen] * self._nodes + found.other_nodes[seen]),
                    sigma[found.other_nodes[seen], found.other_hands[seen]],
                )
            )
            self.nodes_touched += self._nodes * hands.shape[0]
        return Samples(*(np.concatenate(column) for column in zip(*parts, strict=True)))

    def _sigma(self, player: int, rows: IntArray, cards: IntArray) -> FloatArray:
        r""":math:`\sigma^t` of ``player`` at rows :math:`kN + d` (decision nodes of ``player`` under ``cards[k]``):
        regret matching on its value network's advantages, uniform before the network is trained."""
        mask = self._mask[rows % self._nodes]
        if not self._trained[player]:
            uniform: FloatArray = mask / mask.sum(axis=1, keepdims=True)
            return uniform
        with networks.torch_module().no_grad():
            advantages = self.forward(self.value_networks[player], self.keys(cards, rows)).double().numpy()
        if not np.isfinite(advantages).all():
            raise self._not_finite(f"the advantages player {player}'s value network predicts")
        return networks.regret_matching(advantages, mask)

    def deal(self, count: int) -> IntArray:
        """``(count, cards)``: every card of ``count`` hands, drawn without replacement (player 0's hole cards,
        player 1's, then the board in order)."""
        deck = self.tensors.rules.deck_size
        order: IntArray = np.argsort(self._rng.random((count, deck)), axis=1)[:, : self._dealt].astype(np.int64)
        return order

    def keys(self, cards: IntArray, rows: IntArray) -> IntArray:
        r"""The key of the infoset at row :math:`kN + d` of each of ``rows``: node :math:`d`, then each card the
        player to act sees at :math:`d` under deal ``cards[k]`` (its hole cards, then the board dealt so far; their
        suit-canonical image with ``inputs="canonical"``), plus one, in :data:`CARD_BITS` bits each (0 where fewer
        cards are seen)."""
        deal, node = np.divmod(np.asarray(rows, dtype=np.int64), self._nodes)
        player = self._player[node]
        seen = self._visible[node]
        width = int(self._visible.max())
        column = np.arange(width)[None, :]
        hole = cards[deal[:, None], player[:, None] * self._hole + np.minimum(column, self._hole - 1)]
        board = cards[deal[:, None], np.minimum(2 * self._hole + column - self._hole, self._dealt - 1)]
        visible = np.where(column < self._hole, hole, board)
        if self.images is not None:
            k = self._hole
            visible[:, :k], visible[:, k:] = self.images.mapped(visible[:, :k], visible[:, k:], seen > k)
        packed = np.where(column < seen[:, None], visible + 1, 0)
        keys: IntArray = node | np.bitwise_or.reduce(packed << self._card_shifts[None, :], axis=1)
        return keys

    def _decode(self, keys: IntArray) -> tuple[IntArray, IntArray]:
        """Each key's node, and ``(len(keys), cards seen at most)``: the cards its player sees (:meth:`keys`), -1
        where fewer are seen."""
        node = keys & ((1 << self._node_bits) - 1)
        cards: IntArray = ((keys[:, None] >> self._card_shifts[None, :]) & ((1 << CARD_BITS) - 1)) - 1
        return node, cards

    def _strengths(self, node: IntArray, cards: IntArray) -> NDArray[np.float32]:
        """The strength input :math:`s_r(h, b)` of each decoded key (:meth:`_decode`): its node's round, hole cards
        and board."""
        assert self.strength is not None
        rounds = self.tree.engine.betting.round[node].astype(np.int64)
        return self.strength.of_deals(rounds, cards[:, : self._hole], np.maximum(cards[:, self._hole :], 0))

    def inputs(self, keys: IntArray) -> NDArray[np.float32]:
        """``(len(keys), num_inputs)``: the information-state tensor of each key (:meth:`keys`): its node's
        template, the player's hole cards and the board one-hot, then the strength input when it is read."""
        node, cards = self._decode(keys)
        out: NDArray[np.float32] = np.zeros((keys.size, self.num_inputs), dtype=np.float32)
        out[:, : self.tensors.size] = self._templates[node]
        rows = np.arange(keys.size)
        for j in range(cards.shape[1]):
            present = cards[:, j] >= 0
            offset = self.tensors.hole_offset if j < self._hole else self.tensors.board_offset
            out[rows[present], offset + cards[present, j]] = 1.0
        if self.strength is not None:
            out[:, -1] = self._strengths(node, cards)
        return out

    def forward(self, network: Any, keys: IntArray) -> Any:
        r"""The network's outputs at the inputs of ``keys`` (:meth:`inputs`), its first layer gathered rather than
        multiplied: :math:`W x + b = (W t_d + b) + \sum_{c} W_{:,c} + s\,W_{:,s}` over the one-hot entries of the
        cards (and the strength input :math:`s`, when read), with :math:`t_d` the node's template, so the product
        with the hundred-odd inputs runs once per betting node, not once per row (as
        :mod:`cfr_agents.public_tree.neural` reads a model). The sum is one weighted bag of rows per key
        (``embedding_bag``) of the table :math:`[W T^\top + b;\ W_{\mathrm{hole}};\ W_{\mathrm{board}};\ 0;\
        W_{:,s}]`: the node's row, then each card's column of the hole or the board block, the zero row where no
        card is seen, and the strength's column weighted by :math:`s`."""
        torch = networks.torch_module()
        first, rest = network[0], network[1:]
        columns = first.weight.T
        cards, tensors = self.tensors.num_cards, self.tensors
        table = torch.cat(
            [
                self._templates_torch @ columns[: tensors.size] + first.bias,  # W t_d + b
                columns[tensors.hole_offset : tensors.hole_offset + cards],
                columns[tensors.board_offset : tensors.board_offset + cards],
                columns.new_zeros((1, columns.shape[1])),
                columns[tensors.size :],  # W_{:,s}
            ]
        )
        node, seen = self._decode(keys)
        blank = self._nodes + 2 * cards
        block = np.where(np.arange(seen.shape[1]) < self._hole, self._nodes, self._nodes + cards)
        bag = np.concatenate([node[:, None], np.where(seen >= 0, block + seen, blank)], axis=1)  # + W_{:,c}
        weights = None
        if self.strength is not None:
            bag = np.concatenate([bag, np.full((keys.size, 1), blank + 1)], axis=1)
            weights = np.ones(bag.shape, dtype=np.float32)
            weights[:, -1] = self._strengths(node, seen)  # + s W_{:,s}
        hidden = torch.nn.functional.embedding_bag(
            torch.from_numpy(bag),
            table,
            mode="sum",
            padding_idx=blank,
            per_sample_weights=None if weights is None else torch.from_numpy(weights),
        )
        return rest(hidden)

    def _train_value_network(self, player: int) -> None:
        """Train :math:`\\theta_p` on mini-batches of :math:`\\mathcal M_{V,p}` (weighted by iteration)."""
        started = time.perf_counter()
        memory = self.advantage_memories[player]
        if memory.filled == 0:
            return
        if self.settings.advantage_init == "scratch" or self._optimisers[player] is None:
            if self.settings.advantage_init == "scratch":
                self.value_networks[player] = self._fresh_network()
            self._optimisers[player] = self._optimiser(self.value_networks[player])
        for group in self._optimisers[player].param_groups:
            group["lr"] = self.settings.step_size(self.iteration)
        self._fit(self.value_networks[player], self._optimisers[player], memory, softmax=False, rng=self._rng)
        if not networks.is_finite(self.value_networks[player]):
            raise self._not_finite(f"the weights of player {player}'s value network")
        self._trained[player] = True
        if self.algorithm == "sd-cfr":
            self.kept |= networks.weights_of(self.value_networks[player], f"value{player}.{self.iteration}")
        self.training_seconds += time.perf_counter() - started

    def _optimiser(self, network: Any) -> Any:
        return networks.torch_module().optim.Adam(network.parameters(), lr=self.settings.learning_rate)

    def _fit(self, network: Any, optimiser: Any, memory: _Memory, *, softmax: bool, rng: np.random.Generator) -> None:
        r"""Adam on mini-batches drawn uniformly from ``memory``: each step minimises
        :math:`\sum_i t_i \sum_{a\ \mathrm{legal}} (f(I_i)_a - y_i(a))^2 / \sum_i t_i` over its samples."""
        batches, size = (
            (self.settings.average_batches, self.settings.average_batch_size)
            if softmax
            else (self.settings.advantage_batches, self.settings.advantage_batch_size)
        )
        for _ in range(batches):
            index = rng.integers(0, memory.filled, size=size)
            keys = memory.infoset[index]
            weight = memory.iteration[index].astype(np.float64)  # t_i
            weighted_step(
                network,
                optimiser,
                self.forward(network, keys),
                self._mask[keys & ((1 << self._node_bits) - 1)],
                memory.values[index],
                weight / weight.sum(),  # t_i / sum_i t_i
                softmax=softmax,
                clip=self.settings.gradient_clip,
            )

    def _not_finite(self, what: str) -> InputError:
        return InputError(
            f"{self.algorithm}: {what} are not finite after iteration {self.iteration} "
            f"(--learning-rate {self.settings.learning_rate:g})"
        )

    def average_network(self) -> Any:
        r"""Deep CFR's :math:`\Pi`, trained now on :math:`\mathcal M_\Pi` from fresh weights and a generator seeded by
        the solver's seed and the iteration alone (the solver's own streams are untouched)."""
        if self.strategy_memory.filled == 0:
            raise InputError("deep-cfr: the strategy memory is empty; run an iteration first")
        rng = np.random.default_rng((self._torch_seed, self.iteration))
        network = self._fresh_network(networks.torch_module().Generator().manual_seed(int(rng.integers(2**63))))
        self._fit(network, self._optimiser(network), self.strategy_memory, softmax=True, rng=rng)
        if not networks.is_finite(network):
            raise self._not_finite("the weights of the average-strategy network")
        return network

    def model_weights(self) -> dict[str, NDArray[np.float32]]:
        """The weights a model file holds: Deep CFR's average network, or SD-CFR's value networks of iterations
        1 to :math:`T-1` (thinned to ``kept_networks`` blocks of equal linear weight, as on a compiled tree)."""
        if self.algorithm == "deep-cfr":
            return networks.weights_of(self.average_network(), "average")
        return kept_weights(self.kept, self.iteration, self.settings.kept_networks)

    def compile(self) -> float:
        """Compile the traversal, reservoir and showdown kernels (or load them from Numba's cache) on one deal and a
        scratch solver; seconds taken."""
        started = time.perf_counter()
        ones = self.settings.smallest()
        scratch = HoldemNeuralSolver(self.tree.game_id, self.algorithm, ones, np.random.default_rng(0))
        scratch.run(1)
        return time.perf_counter() - started

    def average_strategy(self) -> FloatArray:
        """Refused: no table holds the strategy of every infoset; the model is scored on the public tree."""
        raise InputError(f"{self.algorithm} on the hold'em engine has no strategy table; score its model instead")

    def parameters(self) -> Mapping[str, object]:
        return {
            **self.settings.parameters(),
            "sampling": self.settings.traversal,
            "engine": "holdem",
            "nodes_touched": self.nodes_touched,
        }

    def state(self, *, copy: bool = True) -> dict[str, np.ndarray]:
        """The networks, the optimisers' moments, the reservoirs (views of their filled rows, ``copy`` or not), the
        kept networks and the counters, as arrays (what :func:`cfr_agents.training.check_finite` reads)."""
        state: dict[str, np.ndarray] = {
            "counters": np.array([self.iteration, self.nodes_touched, *self._trained], np.int64)
        }
        for player in range(2):
            state |= networks.weights_of(self.value_networks[player], f"value{player}")
            if self._optimisers[player] is not None:
                state |= networks.optimiser_state(self._optimisers[player], f"adam{player}")
            state |= self.advantage_memories[player].state(f"advantage{player}")
        state |= {f"kept.{name}": value for name, value in self.kept.items()}
        return state | self.strategy_memory.state("strategy")

    def restore(self, state: Mapping[str, np.ndarray]) -> None:
        """Refused: neural CFR on the hold'em engine does not resume from a checkpoint."""
        raise InputError(f"{self.algorithm} on the hold'em engine does not resume from a checkpoint")
