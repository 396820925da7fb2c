r"""A trained Deep CFR or Single Deep CFR model: it plays by running its networks at each decision.

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
  The path comes from the compiled tree's parent sequences; every :math:`\sigma^t_p` on it is one forward
  pass of :math:`\theta^{t-1}_p` over the path.

A :class:`NeuralPolicy` answers :meth:`~NeuralPolicy.action_probabilities` by infoset key, so it is a
:class:`~cfr_agents.policy_table.PolicyTable`: :meth:`~NeuralPolicy.rlcard_agent` plays it in RLCard's env,
and :meth:`~NeuralPolicy.openspiel_policy` is an ``open_spiel.python.policy.Policy`` that runs the
networks at each state it is asked about.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from adapters import Game, load_game
from adapters.inputs import InputError
from adapters.tensors import encoder
from cfr_agents.solvers.neural import DeepCFRSolver, NeuralSolver, SingleDeepCFRSolver, networks
from cfr_agents.tree import CompiledTree, FloatArray, load_tree

if TYPE_CHECKING:
    from cfr_agents.rlcard_agent import PolicyAgent

KINDS = ("deep-cfr", "sd-cfr")


@dataclass(frozen=True, eq=False)
class NeuralPolicy:
    """A Deep CFR (``average.*`` weights) or SD-CFR (``value<p>.<t>.*`` weights) model of one game."""

    game_id: str
    rules_fingerprint: str
    algorithm: str
    hidden: tuple[int, ...]
    iterations: int
    weights: Mapping[str, NDArray[np.float32]] = field(repr=False)

    def __post_init__(self) -> None:
        if self.algorithm not in KINDS:
            raise InputError(f"a neural model is {' or '.join(KINDS)}, not {self.algorithm!r}")
        self._networks()  # refuses missing or misshapen weights now, not at the first decision

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
    def _encoder(self) -> Any:
        return encoder(self.game())

    def _networks(self) -> dict[str, Any]:
        """The networks by name (``average``, or ``value<p>.<t>``), built from the weights once."""
        cache: dict[str, Any] | None = self.__dict__.get("_built")
        if cache is not None:
            return cache
        tree = self.tree
        inputs, width = encoder(load_game(self.game_id)).size, tree.action_mask.shape[1]
        names = sorted({name.rsplit(".", 2)[0] for name in self.weights})
        built = {}
        for name in names:
            network = networks.mlp(inputs, self.hidden, width, networks.torch_module().Generator().manual_seed(0))
            networks.load_weights(network, self.weights, name)
            built[name] = network
        if self.algorithm == "deep-cfr" and "average" not in built:
            raise InputError("a Deep CFR model needs its average-strategy network (average.* weights)")
        if self.algorithm == "sd-cfr":
            for t in self.kept_iterations:
                lacking = next((p for p in range(2) if f"value{p}.{t}" not in built), None)
                if lacking is not None or not 1 <= t < self.iterations:
                    raise InputError(
                        f"an SD-CFR model of {self.iterations} iterations cannot hold network value0.{t}"
                        if lacking is None
                        else f"the SD-CFR model lacks network value{lacking}.{t}"
                    )
        object.__setattr__(self, "_built", built)
        return built

    @functools.cached_property
    def kept_iterations(self) -> tuple[int, ...]:
        r"""SD-CFR: the iterations :math:`t` whose value networks :math:`\theta^t_p` the model keeps (all of
        :math:`1, \dots, T-1` unless it was thinned to ``kept_networks``)."""
        names = (name.split(".")[1] for name in self.weights if name.startswith("value"))
        return tuple(sorted({int(t) for t in names if t.isdigit()}))

    def action_probabilities(self, key: str) -> Mapping[int, float]:
        """``{action id: probability}`` at the infoset ``key``, from the networks."""
        row = self._index.get(key)
        if row is None:
            raise InputError(f"the model's game {self.game_id} has no infoset {key!r}")
        actions = self.tree.infoset_actions[row]
        probabilities = self._rows([row])[0]
        return dict(zip(actions, probabilities[: len(actions)].tolist(), strict=True))

    def strategy_on(self, tree: CompiledTree) -> FloatArray:
        """The ``(N, A)`` strategy on the model's own tree, every infoset at once."""
        if tree.game_id != self.game_id or tree.rules_fingerprint != self.rules_fingerprint:
            raise InputError(f"the model is for {self.game_id}, not {tree.game_id}")
        return self._rows(list(range(tree.num_infosets)))

    def _rows(self, rows: list[int]) -> FloatArray:
        tree, built = self.tree, self._networks()
        torch = networks.torch_module()
        if self.algorithm == "deep-cfr":
            tensors = torch.from_numpy(self._encoder.of_keys([tree.infoset_keys[row] for row in rows]))
            return networks.softmax(networks.predict(built["average"], tensors), tree.action_mask[rows])
        return self._single_deep(rows)

    def _single_deep(self, rows: list[int]) -> FloatArray:
        r""":math:`\bar\sigma_p(I)` at ``rows``: each row's own path, every iteration strategy on it."""
        tree = self.tree
        width = tree.action_mask.shape[1]
        torch = networks.torch_module()
        paths = {row: _own_path(tree, row) for row in rows}
        needed = sorted({infoset for path in paths.values() for infoset, _ in path} | set(rows))
        position = {infoset: index for index, infoset in enumerate(needed)}
        tensors = torch.from_numpy(self._encoder.of_keys([tree.infoset_keys[i] for i in needed]))
        mask = tree.action_mask[needed]
        players = tree.infoset_player[needed]
        uniform = mask / mask.sum(axis=1, keepdims=True)
        strategies = [(1, uniform)]  # sigma^1, weight 1
        previous = 0
        for (
            t
        ) in self.kept_iterations:  # sigma^{t+1} from theta^t_p, weighing its block: sum of s, previous+1 < s <= t+1
            weight = (t + 1) * (t + 2) // 2 - (previous + 1) * (previous + 2) // 2
            previous = t
            sigma = np.empty_like(uniform)
            for player in range(2):
                chosen = players == player
                if chosen.any():
                    advantages = networks.predict(self._networks()[f"value{player}.{t}"], tensors[chosen])
                    sigma[chosen] = networks.regret_matching(advantages, mask[chosen])
            strategies.append((weight, sigma))
        result = np.zeros((len(rows), width))
        for out, row in enumerate(rows):
            numerator, denominator = np.zeros(width), 0.0
            for weight, sigma in strategies:
                reach = 1.0
                for infoset, column in paths[row]:
                    reach *= sigma[position[infoset], column]  # pi^{sigma^t}_p(I)
                numerator += weight * reach * sigma[position[row]]
                denominator += weight * reach
            result[out] = numerator / denominator if denominator > 0 else uniform[position[row]]
        return result

    def rlcard_agent(self, seed: int | np.random.Generator | None = None) -> PolicyAgent:
        """An RLCard agent that plays the model (``rlcard:`` games); ``seed`` drives its sampling."""
        from cfr_agents.rlcard_agent import PolicyAgent

        return PolicyAgent(self, np.random.default_rng(seed))

    def openspiel_policy(self) -> Any:
        """An ``open_spiel.python.policy.Policy`` of OpenSpiel's game (or the bridged one for ``rlcard:``
        games) that runs the networks at each state it is asked about."""
        from open_spiel.python import policy as openspiel_policy

        from adapters.pyspiel_game import openspiel_game_of

        model = self

        class NetworkPolicy(openspiel_policy.Policy):  # type: ignore[misc]
            def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
                player = state.current_player() if player_id is None else player_id
                return dict(model.action_probabilities(state.information_state_string(player)))

        pyspiel_game = openspiel_game_of(self.game())
        return NetworkPolicy(pyspiel_game, list(range(pyspiel_game.num_players())))


def from_solver(solver: NeuralSolver) -> NeuralPolicy:
    """The model of a Deep CFR solver (its average network, trained now if it is not) or of an SD-CFR
    solver (every value network it kept)."""
    if isinstance(solver, DeepCFRSolver):
        solver.average_strategy()
        weights = networks.weights_of(solver.average_network, "average")
    else:
        assert isinstance(solver, SingleDeepCFRSolver)
        played: Sequence[int] = range(1, solver.iteration)  # theta^T defines sigma^{T+1}, which no iteration played
        keep = solver.settings.kept_networks
        if keep and keep < len(played):  # blocks of equal linear weight: t_j ~ (T-1) sqrt(j/K), the last among them
            played = sorted({played[math.ceil(len(played) * math.sqrt((j + 1) / keep)) - 1] for j in range(keep)})
        chosen = {f"value{p}.{t}" for t in played for p in range(2)}
        weights = {
            name: value for name, value in getattr(solver, "kept", {}).items() if name.rsplit(".", 2)[0] in chosen
        }
    return NeuralPolicy(
        solver.tree.game_id,
        solver.tree.rules_fingerprint,
        solver.algorithm,
        solver.settings.hidden,
        solver.iteration,
        weights,
    )


def _own_path(tree: CompiledTree, row: int) -> list[tuple[int, int]]:
    """The ``(infoset, column)`` sequences of the acting player before infoset ``row``, first to last."""
    width = tree.action_mask.shape[1]
    root = tree.num_infosets * width
    path = []
    sequence = int(tree.parent_sequence[row])
    while sequence != root:
        infoset, column = divmod(sequence, width)
        path.append((infoset, column))
        sequence = int(tree.parent_sequence[infoset])
    return path[::-1]
