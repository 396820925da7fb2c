r"""A trained Deep CFR or Single Deep CFR model: it plays the strategy its networks define, computed once.

* Deep CFR plays its average-strategy network: :math:`\Pi(I)`, the softmax of its outputs over the
  legal actions.
* Single Deep CFR plays the mixture of its iteration strategies that linear CFR averages. At infoset
  :math:`I` of player :math:`p`, reached by its own earlier decisions :math:`(I_0, a_0), \dots,
  (I_{k-1}, a_{k-1})`,

  .. math::

     \bar\sigma_p(I) = \frac{\sum_t t\,\pi^{\sigma^t}_p(I)\,\sigma^t_p(I)}{\sum_t t\,\pi^{\sigma^t}_p(I)},
     \qquad \pi^{\sigma^t}_p(I) = \prod_{j<k} \sigma^t_p(I_j, a_j),

  where :math:`\sigma^1` is uniform and :math:`\sigma^{t+1}_p` is regret matching on the value network
  :math:`\theta^t_p` kept after iteration :math:`t`. A model thinned to ``kept_networks`` keeps the networks
  :math:`\theta^{t_1}, \dots, \theta^{t_K}` only; each :math:`\sigma^{t_j+1}` then stands for its block of
  iterations and weighs the block's linear weight :math:`\sum_{t_{j-1}+1 < s \le t_j+1} s` (the weight
  :math:`t_j + 1` alone when every network is kept). The kept iterations split the linear weight into
  equal blocks, :math:`t_j \approx (T-1)\sqrt{j/K}`, so the mixture is an equally weighted average of
  :math:`K` iteration strategies.
  Every :math:`\pi^{\sigma^t}_p(I)` is the realization plan of :math:`\sigma^t` at :math:`I`'s parent
  sequence on the compiled tree.

The model's strategy is computed in one place, :attr:`NeuralPolicy.strategy`: every infoset at once, once
per model, in ``float64``. Each layer :math:`h' = W h + b` is evaluated with NumPy's own dot-product loop
(``einsum``, one thread, no BLAS): the same operations in the same order whatever the BLAS library, its
thread count or torch's, so scoring, exact head-to-head values and play read the same bits in every
command and process. Every query (:meth:`~NeuralPolicy.strategy_on`,
:meth:`~NeuralPolicy.action_probabilities`) reads a row of it.

A :class:`NeuralPolicy` answers :meth:`~NeuralPolicy.action_probabilities` by infoset key, so it is a
:class:`~cfr_agents.policy_table.PolicyTable`: :meth:`~NeuralPolicy.rlcard_agent` plays it in RLCard's env,
and :meth:`~NeuralPolicy.openspiel_policy` is an ``open_spiel.python.policy.Policy`` that reads it at each
state it is asked about.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from adapters import Game, load_game
from adapters.inputs import InputError
from adapters.tensors import encoder
from cfr_agents.solvers.neural import DeepCFRSolver, NeuralSolver, SingleDeepCFRSolver, networks
from cfr_agents.solvers.neural.holdem import HoldemNeuralSolver
from cfr_agents.solvers.neural.sd_cfr import kept_weights
from cfr_agents.solvers.neural.solver import INPUTS
from cfr_agents.tree import CompiledTree, FloatArray, load_tree

if TYPE_CHECKING:
    from cfr_agents.abstraction.suit_images import SuitImages
    from cfr_agents.rlcard_agent import PolicyAgent

KINDS = ("deep-cfr", "sd-cfr")


Layer = tuple[NDArray[np.float64], NDArray[np.float64]]
"""One layer's weight :math:`W` (``(out, in)``) and bias :math:`b`."""


@dataclass(frozen=True, eq=False)
class NeuralPolicy:
    """A Deep CFR (``average.*`` weights) or SD-CFR (``value<p>.<t>.*`` weights) model of one game."""

    game_id: str
    rules_fingerprint: str
    algorithm: str
    hidden: tuple[int, ...]
    iterations: int
    weights: Mapping[str, NDArray[np.float32]] = field(repr=False)
    inputs: str = "cards"
    """What the networks read (:data:`~cfr_agents.solvers.neural.solver.INPUTS`): the information-state tensor; or
    on the hold'em engine the tensor then the hand's strength (:mod:`cfr_agents.abstraction.strength_input`), or the
    tensor of the state's suit-canonical image (:mod:`cfr_agents.abstraction.suit_images`)."""

    def __post_init__(self) -> None:
        if self.algorithm not in KINDS:
            raise InputError(f"a neural model is {' or '.join(KINDS)}, not {self.algorithm!r}")
        if self.inputs not in INPUTS or (self.inputs != "cards" and not self.on_engine):
            raise InputError(
                f"a neural model of {self.game_id} reads {' or '.join(INPUTS if self.on_engine else INPUTS[:1])}, "
                f"not {self.inputs!r}"
            )
        if self.inputs == "canonical":
            _ = self.images  # refuses a game whose board is dealt in more than one round
        _ = self._layers  # refuses missing or misshapen weights now, not at the first decision

    @property
    def tree(self) -> CompiledTree:
        return load_tree(self.game_id)

    def game(self) -> Game:
        """The game, after checking the installed rules are the ones the model was trained on."""
        game = load_game(self.game_id)
        if game.rules_fingerprint != self.rules_fingerprint:
            raise InputError(
                f"the model was trained on rules {self.rules_fingerprint} of {self.game_id}, "
                f"but the installed game has rules {game.rules_fingerprint}"
            )
        return game

    @functools.cached_property
    def _index(self) -> dict[str, int]:
        return {key: row for row, key in enumerate(self.tree.infoset_keys)}

    @functools.cached_property
    def _layers(self) -> dict[str, tuple[Layer, ...]]:
        """Each network by name (``average``, or ``value<p>.<t>``): its layers' ``float64`` weights and biases,
        ``inputs -> hidden... -> actions``, stored as ``<name>.<2k>.weight`` and ``.bias`` (torch's
        ``Sequential`` numbering, ReLU between layers)."""
        widths = [self.num_inputs, *self.hidden, self.num_outputs]
        layers: dict[str, tuple[Layer, ...]] = {}
        for name in sorted({key.rsplit(".", 2)[0] for key in self.weights}):
            network = []
            for index, (fan_in, fan_out) in enumerate(itertools.pairwise(widths)):
                weight = self._array(f"{name}.{2 * index}.weight", (fan_out, fan_in))
                bias = self._array(f"{name}.{2 * index}.bias", (fan_out,))
                network.append((weight, bias))
            layers[name] = tuple(network)
        if self.algorithm == "deep-cfr" and "average" not in layers:
            raise InputError("a Deep CFR model needs its average-strategy network (average.* weights)")
        if self.algorithm == "sd-cfr":
            for t in self.kept_iterations:
                lacking = next((p for p in range(2) if f"value{p}.{t}" not in layers), None)
                if lacking is not None or not 1 <= t < self.iterations:
                    raise InputError(
                        f"an SD-CFR model of {self.iterations} iterations cannot hold network value0.{t}"
                        if lacking is None
                        else f"the SD-CFR model lacks network value{lacking}.{t}"
                    )
        return layers

    @functools.cached_property
    def on_engine(self) -> bool:
        """Whether the model's game is a two-player limit hold'em game, which the hold'em engine runs (RLCard's, or
        a ``universal_poker`` one): its networks read the engine's tensors and answer fold, call and raise."""
        from adapters.holdem.engine import RLCARD_LIMIT
        from adapters.holdem.rules import limit_rules
        from adapters.inputs import UnsupportedGameError

        try:
            return self.game_id == RLCARD_LIMIT or limit_rules(self.game_id) is not None
        except UnsupportedGameError:
            return False

    @property
    def num_inputs(self) -> int:
        """The networks' inputs: the information-state tensor's size, plus one for the strength input."""
        if self.on_engine:
            from adapters.holdem.engine import holdem_engine
            from cfr_agents.solvers.neural.holdem import engine_tensors

            return engine_tensors(holdem_engine(self.game_id)).size + (self.inputs == "strength")
        return encoder(load_game(self.game_id)).size

    @functools.cached_property
    def images(self) -> SuitImages:
        """The suit-canonical images the networks read (``inputs="canonical"``)."""
        from cfr_agents.abstraction.suit_images import suit_images

        return suit_images(self.game_id)

    def network_inputs(self, tensors: NDArray[Any]) -> NDArray[np.float64]:
        """``tensors`` ``(N, size)`` (information-state tensors of the engine's layout, :mod:`adapters.holdem.tensors`)
        as the networks read them: with the strength input :math:`s_r(h, b)` after them, or their cards replaced by
        their suit-canonical image, when the model reads that; the round, hole cards and board decoded from the
        one-hot."""
        rows = np.asarray(tensors, dtype=np.float64)
        if self.inputs == "cards":
            return rows
        from adapters.holdem.engine import holdem_engine
        from cfr_agents.abstraction.strength_input import strength_input
        from cfr_agents.solvers.neural.holdem import engine_tensors

        layout = engine_tensors(holdem_engine(self.game_id))
        if self.inputs == "canonical":
            return self.images.of_tensors(layout, rows)
        strength = strength_input(self.game_id)
        holes, boards, count = layout.cards_of(rows)
        rounds = np.searchsorted(np.asarray(strength.board_sizes), count)
        return np.concatenate([rows, strength.of_deals(rounds, holes, boards)[:, None].astype(np.float64)], axis=1)

    @property
    def num_outputs(self) -> int:
        """The networks' outputs: fold, call and raise in a limit hold'em game, else one per column of the compiled
        tree's strategy."""
        return 3 if self.on_engine else int(self.tree.action_mask.shape[1])

    @property
    def layers(self) -> Mapping[str, tuple[Layer, ...]]:
        """Each network's ``float64`` layers by name (``average``, or ``value<p>.<t>``), checked."""
        return self._layers

    def _array(self, name: str, shape: tuple[int, ...]) -> NDArray[np.float64]:
        array = self.weights.get(name)
        if array is None or tuple(array.shape) != shape:
            raise InputError(f"network weights {name} are missing or have another shape")
        return np.asarray(array, dtype=np.float64)

    @functools.cached_property
    def kept_iterations(self) -> tuple[int, ...]:
        r"""SD-CFR: the iterations :math:`t` whose value networks :math:`\theta^t_p` the model keeps (all of
        :math:`1, \dots, T-1` unless it was thinned to ``kept_networks``)."""
        names = (name.split(".")[1] for name in self.weights if name.startswith("value"))
        return tuple(sorted({int(t) for t in names if t.isdigit()}))

    @functools.cached_property
    def iteration_weights(self) -> tuple[tuple[int, int], ...]:
        r"""SD-CFR: each kept iteration :math:`t` with the linear weight :math:`\sum_{t_{j-1}+1 < s \le t+1} s` of
        the block of iterations :math:`\sigma^{t+1}` stands for."""
        weights, previous = [], 0
        for t in self.kept_iterations:
            weights.append((t, (t + 1) * (t + 2) // 2 - (previous + 1) * (previous + 2) // 2))
            previous = t
        return tuple(weights)

    def thinned(self, keep: int) -> NeuralPolicy:
        """SD-CFR: the model with ``keep`` of its kept networks, in blocks of equal linear weight
        (:func:`~cfr_agents.solvers.neural.sd_cfr.kept_weights`), as if it had been trained with
        ``kept_networks=keep``; all of them when it holds no more."""
        if self.algorithm != "sd-cfr":
            raise InputError(f"a {self.algorithm} model has no iteration networks to thin")
        return replace(self, weights=kept_weights(self.weights, self.iterations, keep, self.kept_iterations))

    def action_probabilities(self, key: str) -> Mapping[int, float]:
        """``{action id: probability}`` at the infoset ``key``: its row of :attr:`strategy`."""
        row = self._index.get(key)
        if row is None:
            raise InputError(f"the model's game {self.game_id} has no infoset {key!r}")
        actions = self.tree.infoset_actions[row]
        return dict(zip(actions, self.strategy[row, : len(actions)].tolist(), strict=True))

    def strategy_on(self, tree: CompiledTree) -> FloatArray:
        """The ``(N, A)`` strategy on the model's own tree (a copy of :attr:`strategy`)."""
        if tree.game_id != self.game_id or tree.rules_fingerprint != self.rules_fingerprint:
            raise InputError(f"the model is for {self.game_id}, not {tree.game_id}")
        return self.strategy.copy()

    @functools.cached_property
    def strategy(self) -> FloatArray:
        r"""The model's ``(N, A)`` strategy on its tree: :math:`\Pi(I)` (Deep CFR) or :math:`\bar\sigma_p(I)`
        (SD-CFR) at every infoset, each network evaluated once on the infosets of its player. Every answer the
        model gives is read from it. Do not write to it."""
        tree = self.tree
        inputs = self.network_inputs(self._encoder.of_keys(list(tree.infoset_keys)))
        if self.algorithm == "deep-cfr":
            strategy = networks.softmax(_forward(self._layers["average"], inputs), tree.action_mask)
        else:
            strategy = self._single_deep(inputs)
        strategy.flags.writeable = False
        return strategy

    @functools.cached_property
    def _encoder(self) -> Any:
        return encoder(self.game())

    def _single_deep(self, inputs: FloatArray) -> FloatArray:
        r""":math:`\bar\sigma_p(I)` at every infoset: the weighted sums over the iteration strategies, in order."""
        tree = self.tree
        numerator, denominator = np.zeros(tree.action_mask.shape), np.zeros(tree.num_infosets)
        for weight, sigma in self._iteration_strategies(inputs):
            reach = tree.realization_plan(sigma)[tree.parent_sequence]  # pi^{sigma^t}_p(I)
            numerator += weight * reach[:, None] * sigma
            denominator += weight * reach
        reached = denominator > 0
        mixture: FloatArray = np.where(
            reached[:, None], numerator / np.where(reached, denominator, 1.0)[:, None], tree.uniform_strategy()
        )
        return mixture

    def _iteration_strategies(self, inputs: FloatArray) -> Iterator[tuple[int, FloatArray]]:
        r""":math:`\sigma^1` (uniform, weight 1), then each kept :math:`\sigma^{t+1}`, regret matching on
        :math:`\theta^t_p` at player :math:`p`'s infosets, with its block's linear weight
        :math:`\sum_{t_{j-1}+1 < s \le t+1} s`."""
        tree = self.tree
        mask = tree.action_mask
        yield 1, tree.uniform_strategy()
        for t, weight in self.iteration_weights:
            sigma = np.zeros(mask.shape)
            for player in range(2):
                rows = tree.infoset_player == player
                advantages = _forward(self._layers[f"value{player}.{t}"], inputs[rows])
                sigma[rows] = networks.regret_matching(advantages, mask[rows])
            yield weight, sigma

    def rlcard_agent(self, seed: int | np.random.Generator | None = None) -> PolicyAgent:
        """An RLCard agent that plays the model (``rlcard:`` games); ``seed`` drives its sampling."""
        from cfr_agents.rlcard_agent import PolicyAgent

        return PolicyAgent(self, np.random.default_rng(seed))

    def openspiel_policy(self) -> Any:
        """An ``open_spiel.python.policy.Policy`` of OpenSpiel's game (or the bridged one for ``rlcard:``
        games) that reads :attr:`strategy` at each state it is asked about."""
        from open_spiel.python import policy as openspiel_policy

        from adapters.pyspiel_game import openspiel_game_of

        model = self

        class NetworkPolicy(openspiel_policy.Policy):  # type: ignore[misc]
            def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
                player = state.current_player() if player_id is None else player_id
                return dict(model.action_probabilities(state.information_state_string(player)))

        pyspiel_game = openspiel_game_of(self.game())
        return NetworkPolicy(pyspiel_game, list(range(pyspiel_game.num_players())))


def from_solver(solver: NeuralSolver | HoldemNeuralSolver) -> NeuralPolicy:
    """The model of a Deep CFR solver (its average network, trained now if it is not) or of an SD-CFR
    solver (every value network it kept), on a compiled tree or on the hold'em engine."""
    if isinstance(solver, HoldemNeuralSolver):
        weights = solver.model_weights()
    elif isinstance(solver, DeepCFRSolver):
        solver.average_strategy()
        weights = networks.weights_of(solver.average_network, "average")
    else:
        assert isinstance(solver, SingleDeepCFRSolver)
        weights = kept_weights(solver.kept, solver.iteration, solver.settings.kept_networks)
    return NeuralPolicy(
        solver.tree.game_id,
        solver.tree.rules_fingerprint,
        solver.algorithm,
        solver.settings.hidden,
        solver.iteration,
        weights,
        solver.settings.inputs,
    )


def _forward(layers: Sequence[Layer], inputs: FloatArray) -> FloatArray:
    r"""The network's outputs on the rows of ``inputs``: :math:`h \mapsto W h + b` layer by layer, ReLU between.
    Each output is one dot product over the layer's inputs in NumPy's own loop (``einsum``, not BLAS): its
    value depends on that row and the weights only, not on the batch, the BLAS library or any thread count."""
    hidden = inputs
    for index, (weight, bias) in enumerate(layers):
        hidden = np.einsum("nk,mk->nm", hidden, weight, optimize=False) + bias
        if index < len(layers) - 1:
            hidden = np.maximum(hidden, 0.0)
    return hidden
