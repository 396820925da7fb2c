r"""The neural CFR solver: Deep CFR's iteration (Brown, Lerer, Gross & Sandholm 2019, Algorithm 1), with the
average strategy of Deep CFR (:mod:`.deep_cfr`) or of Single Deep CFR (:mod:`.sd_cfr`).

Iteration :math:`t`, for each player :math:`p` in turn:

1. :math:`\sigma^t` of every infoset from the value networks, in one batched forward pass
   (:mod:`.networks`); before any training, :math:`\sigma^1` is uniform (regret matching on zero regrets);
2. ``traversals`` external-sampling traversals for :math:`p` (:func:`.traversal.traverse`), whose samples
   enter :math:`p`'s advantage memory :math:`\mathcal M_{V,p}` and the strategy memory :math:`\mathcal M_\Pi`
   (reservoirs, :func:`.traversal.reservoir_store`);
3. the value network :math:`\theta_p` is trained -- from scratch by default, as in the paper -- on
   mini-batches drawn from :math:`\mathcal M_{V,p}` to minimise the linearly weighted loss
   :math:`\sum_i t_i \sum_a (V(I_i, a \mid \theta_p) - \tilde r_i(a))^2 / \sum_i t_i`.

The player whose traversals come second meets the first player's network of this iteration, as in the
paper's algorithm. Player :math:`p`'s iteration strategy :math:`\sigma^t_p` is the one its own traversal
used.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

import cfr_agents.solvers.neural.networks as networks
import cfr_agents.solvers.neural.traversal as traversal
from adapters.inputs import InputError
from cfr_agents.policy import Policy
from cfr_agents.solvers.sampling import kernel_tree
from cfr_agents.tree import CompiledTree, FloatArray

ADVANTAGE_INIT = ("scratch", "last")
TRAVERSAL_CHUNK = 4096
"""Traversals per call of the compiled kernel: their samples' buffers are sized for this many."""
LIMITS = {"memory": 10**8, "batch_size": 10**6, "threads": 1024}
"""Bounds on reservoir capacities, mini-batch sizes and threads (checked before anything is allocated)."""


@dataclass(frozen=True)
class NeuralSettings:
    """Every hyperparameter, with the defaults of the papers' Leduc experiments (Steinberger 2019, whose
    Leduc setup runs Deep CFR and SD-CFR side by side; the advantage network is retrained from scratch
    each iteration, as Brown et al. 2019 do)."""

    traversals: int = 1500
    """External-sampling traversals per player per iteration (K)."""
    hidden: tuple[int, ...] = (64, 64, 64)
    """Hidden layer widths of every network."""
    advantage_batches: int = 750
    """Mini-batch SGD steps each time a value network is trained."""
    advantage_batch_size: int = 2048
    advantage_memory: int = 1_000_000
    """Capacity of each player's advantage reservoir."""
    advantage_init: str = "scratch"
    """``scratch``: fresh weights every iteration (Deep CFR); ``last``: warm-started from the last ones."""
    average_batches: int = 5000
    """SGD steps of the average-strategy network (Deep CFR only)."""
    average_batch_size: int = 2048
    strategy_memory: int = 1_000_000
    """Capacity of the strategy reservoir (Deep CFR only)."""
    learning_rate: float = 1e-3
    r"""Adam's step size :math:`\eta`, for every network."""
    learning_rate_decay: float = 0.0
    r"""The value networks' step size at iteration :math:`t` is
    :math:`\eta_t = \eta \min(1, t_0 / t)^\kappa`, with this :math:`\kappa` (0: constant, as in the papers)."""
    decay_start: int = 1
    """:math:`t_0`, the last iteration at the full step size when ``learning_rate_decay`` is positive."""
    gradient_clip: float = 10.0
    """Gradient norms are clipped to this."""
    threads: int = 1
    """torch's intra-op threads (set explicitly: results then do not depend on the machine's core count)."""
    kept_networks: int = 0
    """SD-CFR's model file: the value networks of at most this many iterations per player, splitting the linear
    weight into equal blocks, the last among them (0: every iteration's). Training is unchanged; the model
    plays, and is scored as, the mixture over the kept iterations (:mod:`cfr_agents.neural_policy`)."""

    def check(self) -> None:
        counts = {name: getattr(self, name) for name in ("traversals", "advantage_batches", "advantage_batch_size")}
        counts |= {name: getattr(self, name) for name in ("advantage_memory", "average_batch_size", "threads")}
        counts |= {"average_batches": self.average_batches, "strategy_memory": self.strategy_memory}
        counts |= {"decay_start": self.decay_start}
        bad = next((name for name, value in counts.items() if not (isinstance(value, int) and value >= 1)), None)
        if not (isinstance(self.kept_networks, int) and self.kept_networks >= 0):
            raise InputError(f"kept_networks must be 0 (all) or a positive integer, got {self.kept_networks!r}")
        if bad is not None:
            raise InputError(f"{bad} must be a positive integer, got {counts[bad]!r}")
        for name, value in counts.items():
            limit = next((bound for suffix, bound in LIMITS.items() if name.endswith(suffix)), None)
            if limit is not None and value > limit:
                raise InputError(f"{name} must be at most {limit:,}, got {value:,}")
        if not self.hidden or any(width < 1 for width in self.hidden):
            raise InputError(f"hidden layer widths must be positive, got {self.hidden}")
        if self.advantage_init not in ADVANTAGE_INIT:
            raise InputError(f"advantage_init must be one of {', '.join(ADVANTAGE_INIT)}, got {self.advantage_init!r}")
        if not (np.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise InputError(f"learning_rate must be positive, got {self.learning_rate}")
        if not (np.isfinite(self.learning_rate_decay) and self.learning_rate_decay >= 0):
            raise InputError(f"learning_rate_decay must be 0 or positive, got {self.learning_rate_decay}")
        if not (np.isfinite(self.gradient_clip) and self.gradient_clip > 0):
            raise InputError(f"gradient_clip must be positive, got {self.gradient_clip}")

    def parameters(self) -> dict[str, object]:
        values = asdict(self)
        values["hidden"] = list(self.hidden)
        return values


class Memory:
    """One reservoir: each sample's infoset, iteration and values (regrets or a strategy), ``8 + 4 * width``
    bytes a sample (pages are touched, so held in memory, only as the reservoir fills)."""

    def __init__(self, capacity: int, width: int) -> None:
        self.infoset = np.zeros(capacity, np.int32)
        self.iteration = np.zeros(capacity, np.int32)
        self.values = np.zeros((capacity, width), np.float32)
        self.seen = 0

    @property
    def filled(self) -> int:
        return min(self.seen, len(self.infoset))

    def means(self, index: NDArray[np.int64], count: int) -> tuple[FloatArray, FloatArray]:
        r""":math:`W_I = \sum_{i: I_i = I} t_i` and :math:`\bar y_I = \sum_{i: I_i = I} t_i y_i / W_I` for each of
        ``count`` infosets, over the held samples ``index`` (repeats counted; :math:`\bar y_I = 0` where none
        falls)."""
        total, sums = traversal.weighted_sums(index, self.infoset, self.iteration, self.values, count)
        means: FloatArray = sums / np.where(total > 0.0, total, 1.0)[:, None]
        return total, means

    def store(self, infosets: NDArray[np.int64], values: NDArray[Any], iteration: int, rng: NDArray[np.uint64]) -> None:
        self.seen = traversal.reservoir_store(
            self.infoset, self.iteration, self.values, self.seen, infosets, values.astype(np.float32), iteration, rng
        )


class NeuralSolver(ABC):
    """Deep CFR's iterations on a compiled tree; :meth:`average_strategy` is the variant's."""

    def __init__(
        self,
        tree: CompiledTree,
        tensors: NDArray[np.float32],
        algorithm: str,
        settings: NeuralSettings,
        rng: np.random.Generator,
    ) -> None:
        settings.check()
        torch = networks.torch_module()
        torch.set_num_threads(settings.threads)
        if tensors.shape[0] != tree.num_infosets:
            raise InputError(f"{tensors.shape[0]} tensors for {tree.num_infosets} infosets")
        self.tree = tree
        self.algorithm = algorithm
        self.settings = settings
        self._rng = rng
        self._kernel_tree = kernel_tree(tree)
        self._bounds = traversal.visit_bounds(self._kernel_tree[0])
        self._inputs = torch.from_numpy(np.ascontiguousarray(tensors, dtype=np.float32))
        self._mask = tree.action_mask
        width = self._mask.shape[1]
        self._torch_rng = torch.Generator().manual_seed(int(rng.integers(2**63)))
        self._stream = rng.integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False)
        if not self._stream.any():
            self._stream[0] = np.uint64(1)  # xoshiro's one forbidden state
        self.value_networks = [self._fresh_network(width) for _ in range(2)]
        self._trained = [False, False]
        self._optimisers: list[Any] = [None, None]
        """Each value network's Adam, kept with its moments across iterations when warm-starting
        (``advantage_init="last"``): a fresh Adam's first steps move every weight by about the step size,
        however small the correction the new samples ask for."""
        self.advantage_memories = [Memory(settings.advantage_memory, width) for _ in range(2)]
        self.strategy_memory = Memory(settings.strategy_memory, width)
        self.current = tree.uniform_strategy()
        """:math:`\\sigma^t` of every infoset, from the value networks (uniform before any training)."""
        self.cumulative = np.zeros_like(self.current)
        r""":math:`\sum_t t\,\pi^{\sigma^t}_p(I)\,\sigma^t_p(I,\cdot)`, the exact linear average of the iteration
        strategies (what Single Deep CFR plays)."""
        self.iteration = 0
        self.nodes_touched = 0
        self.training_seconds = 0.0
        """Seconds spent training networks (the rest of :meth:`run` is traversals and forward passes)."""

    def _fresh_network(self, width: int) -> Any:
        return networks.mlp(self._inputs.shape[1], self.settings.hidden, width, self._torch_rng)

    def run(self, iterations: int) -> None:
        """``iterations`` iterations of Deep CFR (both players' traversals and value-network training)."""
        nodes, values, cdf, depth_bound = self._kernel_tree
        for _ in range(iterations):
            self.iteration += 1
            t = self.iteration
            for player in range(2):
                self._refresh(1 - player)
                self._accumulate(player, t)
                chunk = min(self.settings.traversals, TRAVERSAL_CHUNK)
                own_bound, other_bound = self._bounds[player] * chunk
                own_infoset = np.empty(own_bound, np.int64)
                own_regret = np.zeros((own_bound, self._mask.shape[1]))
                other_infoset = np.empty(other_bound, np.int64)
                for first in range(0, self.settings.traversals, chunk):  # buffers bounded by the chunk
                    owns, others, touched = traversal.traverse(
                        min(chunk, self.settings.traversals - first),
                        player,
                        nodes,
                        values,
                        cdf,
                        depth_bound,
                        self.current,
                        self._stream,
                        own_infoset,
                        own_regret,
                        other_infoset,
                    )
                    self.nodes_touched += touched
                    self.advantage_memories[player].store(own_infoset[:owns], own_regret[:owns], t, self._stream)
                    visited = other_infoset[:others]
                    self.strategy_memory.store(visited, self.current[visited], t, self._stream)
                self._train_value_network(player)

    def _refresh(self, player: int) -> None:
        """:math:`\\sigma` of ``player``'s infosets from its value network (uniform before any training)."""
        if not self._trained[player]:
            return
        rows = self.tree.infoset_player == player
        advantages = networks.predict(self.value_networks[player], self._inputs[rows])
        self.current[rows] = networks.regret_matching(advantages, self._mask[rows])

    def _accumulate(self, player: int, t: int) -> None:
        r"""Refresh :math:`\sigma^t_p` and add :math:`t\,\pi^{\sigma^t}_p(I)\,\sigma^t_p(I,\cdot)` to the average."""
        self._refresh(player)
        reach = self.own_reach(player)
        rows = self.tree.infoset_player == player
        self.cumulative[rows] += t * reach[rows, None] * self.current[rows]

    def own_reach(self, player: int) -> FloatArray:
        r""":math:`\pi^{\sigma}_p(I)` for every infoset of ``player``: the product of its own action probabilities
        on the path, by levels of own depth (each infoset's parent sequence is one level up)."""
        flat = np.append(self.current.reshape(-1), 1.0)  # sequences I*A+a, then the empty sequence
        reach = np.zeros(self.tree.num_infosets)
        sequence_reach = np.zeros_like(flat)
        sequence_reach[-1] = 1.0
        width = self._mask.shape[1]
        for start, stop in self.tree.levels[player]:
            reach[start:stop] = sequence_reach[self.tree.parent_sequence[start:stop]]
            sequence_reach[start * width : stop * width] = (reach[start:stop, None] * self.current[start:stop]).reshape(
                -1
            )
        return reach

    def _train_value_network(self, player: int) -> None:
        """Train :math:`\\theta_p` on mini-batches of :math:`\\mathcal M_{V,p}` (weighted by iteration)."""
        started = time.perf_counter()
        memory = self.advantage_memories[player]
        if memory.filled == 0:
            return
        if self.settings.advantage_init == "scratch":
            self.value_networks[player] = self._fresh_network(self._mask.shape[1])
            self._optimisers[player] = None
        if self._optimisers[player] is None:
            self._optimisers[player] = self._optimiser(self.value_networks[player])
        for group in self._optimisers[player].param_groups:
            group["lr"] = self.step_size()
        self._fit(
            self.value_networks[player],
            self._optimisers[player],
            memory,
            self.settings.advantage_batches,
            self.settings.advantage_batch_size,
            softmax=False,
        )
        self._trained[player] = True
        self._kept(player)
        self.training_seconds += time.perf_counter() - started

    def step_size(self) -> float:
        r""":math:`\eta_t = \eta \min(1, t_0 / t)^\kappa`, the value networks' step size at this iteration."""
        t, t0, kappa = self.iteration, self.settings.decay_start, self.settings.learning_rate_decay
        return float(self.settings.learning_rate * min(1.0, t0 / t) ** kappa)  # eta min(1, t0/t)^kappa

    @abstractmethod
    def _kept(self, player: int) -> None:
        """What the variant keeps of ``player``'s value network just trained."""

    def _optimiser(self, network: Any) -> Any:
        """Adam on the network's weights, with step size ``learning_rate``."""
        return networks.torch_module().optim.Adam(network.parameters(), lr=self.settings.learning_rate)

    def _fit(
        self, network: Any, optimiser: Any, memory: Memory, batches: int, batch_size: int, *, softmax: bool
    ) -> None:
        r"""Adam on mini-batches of ``batch_size`` samples drawn uniformly from ``memory``, each step minimising

        .. math::

           L = \frac{1}{\sum_i t_i} \sum_i t_i \sum_{a\ \mathrm{legal}} (f(I_i)_a - y_i(a))^2
             = \frac{1}{\sum_i t_i} \sum_I W_I \lVert f(I) - \bar y_I \rVert^2 + \mathrm{const},
           \qquad W_I = \sum_{i: I_i = I} t_i,\ \bar y_I = \sum_{i: I_i = I} t_i y_i / W_I,

        where :math:`f` is the network's output (its softmax over legal actions when ``softmax``). The two
        forms have the same gradient, so each step runs the network once per distinct infoset of the
        batch rather than once per sample: the mini-batch step of the paper, at the cost of its distinct
        infosets."""
        torch = networks.torch_module()
        for _ in range(batches):
            index = self._rng.integers(0, memory.filled, size=batch_size)
            total, means = memory.means(index, len(self._mask))
            rows = np.flatnonzero(total)
            legal = torch.from_numpy(self._mask[rows])
            target = torch.from_numpy(means[rows].astype(np.float32))  # y_bar_I
            mass = torch.from_numpy((total[rows] / total.sum()).astype(np.float32))  # W_I / sum_i t_i
            output = network(self._inputs[rows])
            if softmax:
                output = torch.softmax(output.masked_fill(~legal, -torch.inf), dim=1)
            error = ((output - target) ** 2).masked_fill(~legal, 0.0).sum(dim=1)
            loss = (mass * error).sum()  # sum_I (W_I / sum_i t_i) ||f(I) - y_bar_I||^2
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(network.parameters(), self.settings.gradient_clip)
            optimiser.step()

    def current_strategy(self) -> FloatArray:
        """:math:`\\sigma` from the value networks as they are now, for every infoset."""
        for player in range(2):
            self._refresh(player)
        current: FloatArray = self.current.copy()
        return current

    def tabular_average(self) -> FloatArray:
        r""":math:`\bar\sigma(I) \propto \sum_t t\,\pi^{\sigma^t}_p(I)\,\sigma^t_p(I)`: the iteration strategies'
        exact linear average; uniform where nothing was accumulated."""
        from cfr_agents.solvers.full_tree import normalise

        return normalise(self.cumulative, self.tree.uniform_strategy())

    @abstractmethod
    def average_strategy(self) -> FloatArray:
        """The variant's average strategy, for every infoset."""

    def average_policy(self) -> Policy:
        return Policy.from_strategy(
            self.tree,
            self.average_strategy(),
            algorithm=self.algorithm,
            parameters=self.parameters(),
            iterations=self.iteration,
        )

    def parameters(self) -> Mapping[str, object]:
        return {**self.settings.parameters(), "nodes_touched": self.nodes_touched}
