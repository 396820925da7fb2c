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
   :math:`\sum_i t_i \sum_a (V(I_i, a \mid \theta_p) - \tilde r_i(a) / s)^2 / \sum_i t_i`, the
   regrets in units of ``value_scale`` :math:`s`.

The player whose traversals come second meets the first player's network of this iteration, as in the
paper's algorithm. Player :math:`p`'s iteration strategy :math:`\sigma^t_p` is the one its own traversal
used.

A solver has the surface of the tabular ones (:class:`cfr_agents.training.Trainable`): ``run(n)``,
``compile()``, ``average_strategy()``, ``average_policy()``, ``parameters()``, and ``state()``/``restore()``,
whose arrays hold everything the next iterations depend on -- the networks' weights, the optimisers' moments
and step counts, the reservoirs, the accumulated average and every random stream -- so that a restored
solver continues bit for bit on one machine. A value that is not finite (a network trained with too large
a step) stops the solver with one line naming the network.
"""

from __future__ import annotations

import itertools
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

import cfr_agents.solvers.neural.networks as networks
import cfr_agents.solvers.neural.traversal as traversal
from adapters.inputs import InputError, Interval, ParameterError
from cfr_agents.policy import Policy
from cfr_agents.solvers.sampling import kernel_tree
from cfr_agents.tree import CompiledTree, FloatArray, state_arrays

ADVANTAGE_INIT = ("scratch", "last")
INPUTS = ("cards", "strength", "canonical")
"""What the networks read: the information-state tensor alone; or on the hold'em engine the hand's strength too
(:mod:`cfr_agents.abstraction.strength_input`), or the tensor of the state's suit-canonical image, in games of one
board round (:mod:`cfr_agents.abstraction.suit_images`)."""
TRAVERSALS = ("external", "public-chance")
"""How a traversal samples: the whole deal and the opponent's actions (external sampling), or on the hold'em engine
the board alone, every private hand at once (:mod:`cfr_agents.solvers.neural.public_chance`)."""
TRAVERSAL_CHUNK = 4096
"""Traversals per call of the compiled kernel: their samples' buffers are sized for this many."""
LEARNING_RATE = Interval(0.0, 1.0, open_low=True)
"""Adam's step size :math:`\\eta`: Adam moves each weight by about :math:`\\eta` a step, so above 1 a step outgrows
the weights themselves (initialised below 1)."""
LEARNING_RATE_DECAY = Interval(0.0, 1.0)
""":math:`\\kappa`: up to 1 the steps :math:`\\eta \\min(1, t_0/t)^\\kappa` sum to infinity, so the networks keep
learning; above 1 their sum is finite and learning stops."""
GRADIENT_CLIP = Interval(0.0, 1e6, open_low=True)
"""The largest gradient norm a step uses."""
VALUE_SCALE = Interval(1e-3, 1e9)
r""":math:`s`, the unit of the value networks' targets, in the game's units: from a thousandth, so that the targets
:math:`\tilde r / s` of the games' payoffs stay far inside ``float32``."""
LIMITS = {"memory": 10**8, "batch_size": 10**6, "threads": 1024, "width": 4096, "layers": 16, "weights": 10**7}
"""Bounds, checked before anything is allocated: reservoir capacities (``*_memory``), mini-batch sizes
(``*_batch_size``), torch threads, the width and the number of hidden layers, and the weights and biases of
one network (:func:`network_size`; 10,000,000 float32 numbers are 40 MB, and Adam keeps two more of each)."""


@dataclass(frozen=True)
class NeuralSettings:
    """Every hyperparameter, with the defaults of the papers' Leduc experiments (Steinberger 2019, whose
    Leduc setup runs Deep CFR and SD-CFR side by side; the advantage network is retrained from scratch
    each iteration, as Brown et al. 2019 do)."""

    traversals: int = 1500
    """Traversals per player per iteration (K): deals, or boards with ``traversal="public-chance"``."""
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
    value_scale: float = 1.0
    r""":math:`s`: the value networks fit :math:`\tilde r / s`, the sampled regrets in units of :math:`s`. Regret
    matching reads the same strategy from :math:`V` and :math:`V/s`, so :math:`s` changes only the fit: Adam moves a
    weight by about :math:`\eta` a step, and targets of order one, not hundreds of chips, are what that step suits
    (on the hold'em games, whose largest stake is 700 chips, :math:`s` of 700 or more)."""
    threads: int = 1
    """torch's intra-op threads (set explicitly: results then do not depend on the machine's core count)."""
    kept_networks: int = 0
    """SD-CFR's model file: the value networks of at most this many iterations per player, splitting the linear
    weight into equal blocks, the last among them (0: every iteration's). Training is unchanged; the model
    plays, and is scored as, the mixture over the kept iterations (:mod:`cfr_agents.neural_policy`)."""
    traversal: str = "external"
    """One of :data:`TRAVERSALS`: ``public-chance`` draws one board per traversal and takes every hand's exact
    counterfactual regrets given it (hold'em games on the engine only)."""
    inputs: str = "cards"
    r"""One of :data:`INPUTS`: ``strength`` adds the hand's :math:`\mathrm{E}[\mathrm{HS}]` on the board dealt so far
    to the tensor; ``canonical`` reads every state as its suit-canonical image, as the public tree with
    suit-canonical boards reads a model, so training sees what scoring and play see (hold'em games on the engine
    only, ``canonical`` those of one board round)."""

    def check(self) -> None:
        """Refuse, in one line naming the setting, a value out of its range or beyond :data:`LIMITS`."""
        counts = {name: getattr(self, name) for name in ("traversals", "advantage_batches", "advantage_batch_size")}
        counts |= {name: getattr(self, name) for name in ("advantage_memory", "average_batch_size", "threads")}
        counts |= {"average_batches": self.average_batches, "strategy_memory": self.strategy_memory}
        counts |= {"decay_start": self.decay_start}
        bad = next((name for name, value in counts.items() if not (isinstance(value, int) and value >= 1)), None)
        if not (isinstance(self.kept_networks, int) and self.kept_networks >= 0):
            raise ParameterError(
                "{kept_networks} must be 0 (all) or a positive integer, got {got!r}", got=self.kept_networks
            )
        if bad is not None:
            raise ParameterError(f"{{{bad}}} must be a positive integer, got {{got!r}}", got=counts[bad])
        for name, value in counts.items():
            limit = next((bound for suffix, bound in LIMITS.items() if name.endswith(suffix)), None)
            if limit is not None and value > limit:
                raise ParameterError(f"{{{name}}} must be at most {{limit:,}}, got {{got:,}}", limit=limit, got=value)
        widths = list(self.hidden)
        if not widths or not all(isinstance(width, int) and 1 <= width <= LIMITS["width"] for width in widths):
            raise ParameterError(
                "{hidden} widths must be from 1 to {limit:,}, got {got}", limit=LIMITS["width"], got=widths
            )
        if len(widths) > LIMITS["layers"]:
            raise ParameterError("{hidden} has {got} layers; at most {limit}", got=len(widths), limit=LIMITS["layers"])
        check_network_size(self.hidden)
        if self.advantage_init not in ADVANTAGE_INIT:
            raise ParameterError(
                "{advantage_init} must be one of {choices}, got {got!r}",
                choices=", ".join(ADVANTAGE_INIT),
                got=self.advantage_init,
            )
        for name, allowed_values in (("inputs", INPUTS), ("traversal", TRAVERSALS)):
            if getattr(self, name) not in allowed_values:
                raise ParameterError(
                    f"{{{name}}} must be one of {{choices}}, got {{got!r}}",
                    choices=", ".join(allowed_values),
                    got=getattr(self, name),
                )
        for name, allowed in (
            ("learning_rate", LEARNING_RATE),
            ("learning_rate_decay", LEARNING_RATE_DECAY),
            ("gradient_clip", GRADIENT_CLIP),
            ("value_scale", VALUE_SCALE),
        ):
            allowed.check(name, getattr(self, name))

    def smallest(self) -> NeuralSettings:
        """These settings with one traversal, one-sample batches and reservoirs: a scratch solver that compiles the
        kernels (or loads them from Numba's cache) at the least cost."""
        return replace(
            self,
            traversals=1,
            advantage_batches=1,
            advantage_batch_size=1,
            advantage_memory=1,
            average_batches=1,
            average_batch_size=1,
            strategy_memory=1,
        )

    def step_size(self, t: int) -> float:
        r""":math:`\eta_t = \eta \min(1, t_0 / t)^\kappa`, the value networks' step size at iteration :math:`t`."""
        t0, kappa = self.decay_start, self.learning_rate_decay
        return float(self.learning_rate * min(1.0, t0 / t) ** kappa)  # eta min(1, t0/t)^kappa

    def parameters(self) -> dict[str, object]:
        values = asdict(self)
        values["hidden"] = list(self.hidden)
        return values


def network_size(inputs: int, hidden: Sequence[int], outputs: int) -> int:
    """Weights and biases of a network ``inputs -> hidden... -> outputs`` (:func:`.networks.mlp`)."""
    sizes = [inputs, *hidden, outputs]
    return sum((fan_in + 1) * fan_out for fan_in, fan_out in itertools.pairwise(sizes))


def check_network_size(hidden: Sequence[int], inputs: int = 0, outputs: int = 0) -> None:
    """Refuse networks of more than ``LIMITS["weights"]`` weights and biases: with ``inputs`` and ``outputs``
    unknown (0), those of the hidden layers alone, a bound from below."""
    size = network_size(inputs, hidden, outputs)
    if size > LIMITS["weights"]:
        counted = f"{size:,}" + (f" (on {inputs} inputs and {outputs} outputs)" if inputs else " or more")
        raise ParameterError(
            "{hidden} {widths} makes networks of {counted} weights and biases; at most {limit:,}",
            widths=",".join(map(str, hidden)),
            counted=counted,
            limit=LIMITS["weights"],
        )


_FAST: Mapping[str, Any] = {
    "traversals": 5000,
    "hidden": [128, 128],
    "advantage_batches": 50,
    "advantage_batch_size": 16384,
    "advantage_init": "last",
    "learning_rate": 2e-3,
    "average_batches": 2000,
    "average_batch_size": 16384,
}
PRESETS: Mapping[str, Mapping[str, Any]] = {
    "paper": {},
    "fast": _FAST,
    "fast-large": {
        **_FAST,
        "advantage_batch_size": 262144,
        "advantage_memory": 50_000_000,
        "learning_rate_decay": 0.5,
        "decay_start": 100,
    },
}
"""``paper``: :class:`NeuralSettings`' defaults, the papers' Leduc setup; ``fast``: smaller networks and batches
that converge on Kuhn within a minute on one CPU core; ``fast-large``: ``fast`` with 16 times the advantage
mini-batch, 50 times the advantage memory and a step size falling as :math:`t^{-1/2}` after iteration 100, for
Leduc-sized games, where the noise of the mini-batches' regret targets limits ``fast``."""


def settings_of(preset: str, overrides: Mapping[str, Any] | None = None) -> NeuralSettings:
    """The settings of ``preset`` (one of :data:`PRESETS`), with ``overrides`` (hyperparameters named as
    :class:`NeuralSettings`' fields), checked."""
    if preset not in PRESETS:
        raise ParameterError("unknown {preset} {got!r}; choose from {choices}", got=preset, choices=", ".join(PRESETS))
    values = {**PRESETS[preset], **(overrides or {})}
    if "hidden" in values:
        values["hidden"] = tuple(values["hidden"])
    unknown = sorted(set(values) - {field.name for field in fields(NeuralSettings)})
    if unknown:
        raise InputError(f"unknown neural CFR hyperparameter {unknown[0]!r}")
    settings = NeuralSettings(**values)
    settings.check()
    return settings


class Arrays:
    """Named arrays being restored: each taken once, checked for its dtype and shape (one line naming it
    otherwise); :meth:`finish` refuses any left over."""

    def __init__(self, arrays: Mapping[str, np.ndarray]) -> None:
        self._arrays = dict(arrays)
        self._taken: set[str] = set()

    def take(self, name: str, dtype: type[np.generic], shape: tuple[int, ...]) -> np.ndarray:
        array = self._arrays.get(name)
        if array is None:
            raise InputError(f"the state lacks array {name!r}")
        if array.dtype != np.dtype(dtype) or array.shape != shape:
            raise InputError(
                f"array {name!r} is {array.dtype}{list(array.shape)}, expected {np.dtype(dtype)}{list(shape)}"
            )
        self._taken.add(name)
        return array

    def names(self, prefix: str) -> list[str]:
        """The names not taken yet that begin with ``prefix``."""
        return sorted(name for name in self._arrays if name.startswith(prefix) and name not in self._taken)

    def finish(self) -> None:
        left = sorted(set(self._arrays) - self._taken)
        if left:
            raise InputError(f"the state holds arrays this solver does not have: {', '.join(left[:5])}")


def finite(array: np.ndarray, name: str) -> np.ndarray:
    """``array``, after refusing one with a value that is not finite."""
    if not np.isfinite(array).all():
        raise InputError(f"array {name!r} holds values that are not finite")
    return array


class Memory:
    """One reservoir: each sample's infoset (a row of the compiled tree, ``int32``, or a key the engine's solver
    decodes, ``int64``), iteration and values (regrets or a strategy), ``8 + 4 * width`` bytes a sample with rows
    (pages are touched, so held in memory, only as the reservoir fills)."""

    def __init__(self, capacity: int, width: int, keys: type[np.signedinteger[Any]] = np.int32) -> None:
        self.infoset = np.zeros(capacity, keys)
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

    def state(self, prefix: str) -> dict[str, np.ndarray]:
        """The held samples (views of the filled rows) and the count of samples offered, ``prefix.*``."""
        rows = self.filled
        return {
            f"{prefix}.infoset": self.infoset[:rows],
            f"{prefix}.iteration": self.iteration[:rows],
            f"{prefix}.values": self.values[:rows],
            f"{prefix}.seen": np.array(self.seen, np.int64),
        }

    def restore(self, arrays: Arrays, prefix: str, infosets: int, iteration: int) -> None:
        """The reservoir of :meth:`state`: as many rows as it had filled, infosets of the tree, iterations run."""
        seen = int(arrays.take(f"{prefix}.seen", np.int64, ()))
        if seen < 0:
            raise InputError(f"array {prefix + '.seen'!r} is negative")
        rows = min(seen, len(self.infoset))
        infoset = arrays.take(f"{prefix}.infoset", self.infoset.dtype.type, (rows,))
        when = arrays.take(f"{prefix}.iteration", np.int32, (rows,))
        values = finite(arrays.take(f"{prefix}.values", np.float32, (rows, self.values.shape[1])), f"{prefix}.values")
        if rows and not (infoset.min() >= 0 and infoset.max() < infosets):
            raise InputError(f"array {prefix + '.infoset'!r} names infosets the tree does not have")
        if rows and not (when.min() >= 1 and when.max() <= iteration):
            raise InputError(f"array {prefix + '.iteration'!r} names iterations not yet run")
        self.infoset[:rows], self.iteration[:rows], self.values[:rows] = infoset, when, values
        self.seen = seen


class NeuralSolver(ABC):
    """Deep CFR's iterations on a compiled tree; :meth:`average_strategy` is the variant's."""

    OWN_SETTINGS: ClassVar[tuple[str, ...]] = ()
    """The settings of :class:`NeuralSettings` that only this variant reads (the others' are refused)."""

    def __init__(
        self,
        tree: CompiledTree,
        tensors: NDArray[np.float32],
        algorithm: str,
        settings: NeuralSettings,
        rng: np.random.Generator,
    ) -> None:
        settings.check()
        if settings.inputs != "cards":
            raise ParameterError(
                "{inputs} {got} reads hold'em cards on the hold'em engine, not {game}'s compiled tree",
                got=settings.inputs,
                game=tree.game_id,
            )
        if settings.traversal != "external":
            raise ParameterError(
                "{traversal} {got} draws hold'em boards on the hold'em engine, not {game}'s compiled tree",
                got=settings.traversal,
                game=tree.game_id,
            )
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
        check_network_size(settings.hidden, tensors.shape[1], width)
        self._torch_seed = int(rng.integers(2**63))
        self._torch_rng = torch.Generator().manual_seed(self._torch_seed)
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

    def _fresh_network(self, width: int, generator: Any = None) -> Any:
        """A network of fresh weights, drawn from ``generator`` (by default the solver's torch stream)."""
        return networks.mlp(
            self._inputs.shape[1], self.settings.hidden, width, self._torch_rng if generator is None else generator
        )

    def run(self, iterations: int) -> None:
        """``iterations`` iterations of Deep CFR (both players' traversals and value-network training)."""
        nodes, values, cdf, depth_bound, _ = self._kernel_tree
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
                    self.advantage_memories[player].store(
                        own_infoset[:owns], own_regret[:owns] / self.settings.value_scale, t, self._stream
                    )  # r~ / s
                    visited = other_infoset[:others]
                    self.strategy_memory.store(visited, self.current[visited], t, self._stream)
                self._train_value_network(player)

    def _refresh(self, player: int) -> None:
        """:math:`\\sigma` of ``player``'s infosets from its value network (uniform before any training)."""
        if not self._trained[player]:
            return
        rows = self.tree.infoset_player == player
        advantages = networks.predict(self.value_networks[player], self._inputs[rows])
        if not np.isfinite(advantages).all():
            raise self._not_finite(f"the advantages player {player}'s value network predicts")
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
            rng=self._rng,
        )
        self._require_finite(self.value_networks[player], f"player {player}'s value network")
        self._trained[player] = True
        self._kept(player)
        self.training_seconds += time.perf_counter() - started

    def step_size(self) -> float:
        r""":math:`\eta_t`, the value networks' step size at this iteration (:meth:`NeuralSettings.step_size`)."""
        return self.settings.step_size(self.iteration)

    @abstractmethod
    def _kept(self, player: int) -> None:
        """What the variant keeps of ``player``'s value network just trained."""

    def _optimiser(self, network: Any) -> Any:
        """Adam on the network's weights, with step size ``learning_rate``."""
        return networks.torch_module().optim.Adam(network.parameters(), lr=self.settings.learning_rate)

    def _require_finite(self, network: Any, name: str) -> None:
        """Stop, in one line naming the network, when training left a weight that is not finite."""
        if not networks.is_finite(network):
            raise self._not_finite(f"the weights of {name}")

    def _not_finite(self, what: str) -> ParameterError:
        """The one-line refusal of a run whose networks produced ``what``, not finite, naming the step size."""
        return ParameterError(
            "{algorithm}: {what} are not finite after iteration {iteration} ({learning_rate} {rate:g})",
            algorithm=self.algorithm,
            what=what,
            iteration=self.iteration,
            rate=self.settings.learning_rate,
        )

    def _fit(
        self,
        network: Any,
        optimiser: Any,
        memory: Memory,
        batches: int,
        batch_size: int,
        *,
        softmax: bool,
        rng: np.random.Generator,
    ) -> None:
        r"""Adam on mini-batches of ``batch_size`` samples drawn uniformly from ``memory`` by ``rng``, each step
        minimising

        .. math::

           L = \frac{1}{\sum_i t_i} \sum_i t_i \sum_{a\ \mathrm{legal}} (f(I_i)_a - y_i(a))^2
             = \frac{1}{\sum_i t_i} \sum_I W_I \lVert f(I) - \bar y_I \rVert^2 + \mathrm{const},
           \qquad W_I = \sum_{i: I_i = I} t_i,\ \bar y_I = \sum_{i: I_i = I} t_i y_i / W_I,

        where :math:`f` is the network's output (its softmax over legal actions when ``softmax``). The two
        forms have the same gradient, so each step runs the network once per distinct infoset of the
        batch rather than once per sample: the mini-batch step of the paper, at the cost of its distinct
        infosets."""
        for _ in range(batches):
            index = rng.integers(0, memory.filled, size=batch_size)
            total, means = memory.means(index, len(self._mask))
            rows = np.flatnonzero(total)
            weighted_step(
                network,
                optimiser,
                network(self._inputs[rows]),
                self._mask[rows],
                means[rows],  # y_bar_I
                total[rows] / total.sum(),  # W_I / sum_i t_i
                softmax=softmax,
                clip=self.settings.gradient_clip,
            )

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

        return normalise(self.cumulative, self.tree)

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
        """Every setting, the traversals' scheme (external sampling) and the nodes touched so far."""
        return {**self.settings.parameters(), "sampling": "external", "nodes_touched": self.nodes_touched}

    def compile(self) -> float:
        """Compile the traversal and reservoir kernels, or load them from Numba's cache, on a scratch solver
        of one traversal and one-sample batches; seconds taken."""
        started = time.perf_counter()
        ones = self.settings.smallest()
        scratch = type(self)(self.tree, self._inputs.numpy(), self.algorithm, ones, np.random.default_rng(0))
        scratch.run(1)
        return time.perf_counter() - started

    def state(self, *, copy: bool = True) -> dict[str, np.ndarray]:
        """The whole mutable state, as arrays (a checkpoint; the reservoirs' rows are views, not copies, and
        ``current`` and ``cumulative`` read-only views with ``copy=False``):

        ``counters`` (iteration, nodes touched, whether each value network was trained, whether each has an
        optimiser, the seed of the torch stream), ``rng`` (the numpy Generator's PCG64 state), ``stream``
        (the traversals' xoshiro256** state), ``torch_rng``, ``current`` and ``cumulative``,
        ``value<p>.*`` (the value networks), ``adam<p>.<k>.*`` (each optimiser's moments and step count),
        ``advantage<p>.*`` and ``strategy.*`` (the reservoirs), and the variant's own arrays."""
        optimisers = [optimiser is not None for optimiser in self._optimisers]
        counters = [self.iteration, self.nodes_touched, *self._trained, *optimisers, self._torch_seed]
        state = {
            "counters": np.array(counters, np.int64),
            "rng": generator_state(self._rng),
            "stream": self._stream.copy(),
            "torch_rng": self._torch_rng.get_state().numpy().copy(),
            **state_arrays({"current": self.current, "cumulative": self.cumulative}, copy),
        }
        for player in range(2):
            state |= networks.weights_of(self.value_networks[player], f"value{player}")
            if self._optimisers[player] is not None:
                state |= networks.optimiser_state(self._optimisers[player], f"adam{player}")
            state |= self.advantage_memories[player].state(f"advantage{player}")
        return state | self.strategy_memory.state("strategy") | self._own_state()

    def restore(self, state: Mapping[str, np.ndarray]) -> None:
        """Continue from :meth:`state`: the following iterations are those the saved solver would have made.
        An array missing, extra, of another dtype or shape than this solver's tree and settings give, naming
        an infoset or iteration that cannot be, or holding a value that is not finite, is refused in one line."""
        arrays = Arrays(state)
        counters = arrays.take("counters", np.int64, (7,))
        iteration, nodes_touched, *flags, torch_seed = (int(value) for value in counters)
        if iteration < 0 or nodes_touched < 0 or any(flag not in (0, 1) for flag in flags) or torch_seed < 0:
            raise InputError("array 'counters' holds a negative count or a flag that is neither 0 nor 1")
        rng = arrays.take("rng", np.uint64, (6,))
        stream = arrays.take("stream", np.uint64, (4,))
        if not stream.any():
            raise InputError("array 'stream' is the xoshiro256** state of all zeros")
        torch = networks.torch_module()
        fresh = self._torch_rng.get_state()
        torch_state = arrays.take("torch_rng", np.uint8, tuple(fresh.shape))
        shape = self._mask.shape
        current = finite(arrays.take("current", np.float64, shape), "current")
        cumulative = finite(arrays.take("cumulative", np.float64, shape), "cumulative")
        for player in range(2):
            network = self._fresh_network(shape[1], torch.Generator())
            networks.load_weights(network, _taken(arrays, network, f"value{player}"), f"value{player}")
            self.value_networks[player] = network
            self._optimisers[player] = None
            if flags[2 + player]:
                self._optimisers[player] = self._optimiser(network)
                networks.load_optimiser_state(self._optimisers[player], arrays.take, f"adam{player}")
            self.advantage_memories[player].restore(arrays, f"advantage{player}", shape[0], iteration)
        self.strategy_memory.restore(arrays, "strategy", shape[0], iteration)
        self._restore_own(arrays, iteration)
        arrays.finish()
        set_generator_state(self._rng, rng)
        try:
            self._torch_rng.set_state(torch.from_numpy(torch_state.copy()))
        except RuntimeError as error:
            raise InputError(f"array 'torch_rng' is not a torch generator's state ({error})") from None
        self._stream[...] = stream
        self.current[...], self.cumulative[...] = current, cumulative
        self.iteration, self.nodes_touched, self._torch_seed = iteration, nodes_touched, torch_seed
        self._trained = [bool(flags[0]), bool(flags[1])]

    @abstractmethod
    def _own_state(self) -> dict[str, np.ndarray]:
        """The variant's own arrays of :meth:`state`."""

    @abstractmethod
    def _restore_own(self, arrays: Arrays, iteration: int) -> None:
        """Take the variant's own arrays of :meth:`state` from ``arrays`` (of a solver at ``iteration``)."""


def weighted_step(
    network: Any,
    optimiser: Any,
    output: Any,
    legal: NDArray[np.bool_],
    target: NDArray[Any],
    mass: NDArray[Any],
    *,
    softmax: bool,
    clip: float,
) -> None:
    r"""One Adam step on :math:`L = \sum_j m_j \sum_{a\ \mathrm{legal}} (f(x_j)_a - y_j(a))^2` over the rows
    :math:`j` of ``output`` (the network's outputs :math:`f(x_j)`, a torch tensor that carries their gradient),
    ``target`` :math:`y` and ``mass`` :math:`m`, with :math:`f` read through a softmax over the legal actions when
    ``softmax``, the gradient's norm clipped to ``clip``."""
    torch = networks.torch_module()
    allowed = torch.from_numpy(np.ascontiguousarray(legal))
    if softmax:
        output = torch.softmax(output.masked_fill(~allowed, -torch.inf), dim=1)
    goal = torch.from_numpy(np.asarray(target, dtype=np.float32))
    error = ((output - goal) ** 2).masked_fill(~allowed, 0.0).sum(dim=1)
    loss = (torch.from_numpy(np.asarray(mass, dtype=np.float32)) * error).sum()  # sum_j m_j ||f(x_j) - y_j||^2
    optimiser.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(network.parameters(), clip)
    optimiser.step()


def _taken(arrays: Arrays, network: Any, prefix: str) -> dict[str, np.ndarray]:
    """The arrays ``prefix.*`` of ``network``'s parameters, each taken with the parameter's shape."""
    return {
        f"{prefix}.{name}": arrays.take(f"{prefix}.{name}", np.float32, tuple(value.shape))
        for name, value in network.state_dict().items()
    }


def generator_state(rng: np.random.Generator) -> NDArray[np.uint64]:
    """A PCG64 Generator's state as six words: state and increment (128 bits each, high word first), then
    ``has_uint32`` and ``uinteger``."""
    state = rng.bit_generator.state
    if state["bit_generator"] != "PCG64":
        raise InputError(f"a neural solver's state holds a PCG64 generator, not {state['bit_generator']}")
    words = [state["state"]["state"], state["state"]["inc"]]
    low = (1 << 64) - 1
    return np.array(
        [words[0] >> 64, words[0] & low, words[1] >> 64, words[1] & low, state["has_uint32"], state["uinteger"]],
        np.uint64,
    )


def set_generator_state(rng: np.random.Generator, words: NDArray[np.uint64]) -> None:
    """Set a PCG64 Generator to the state :func:`generator_state` gave."""
    high_state, low_state, high_inc, low_inc, has_uint32, uinteger = (int(word) for word in words)
    if has_uint32 not in (0, 1) or uinteger >= 1 << 32:
        raise InputError("array 'rng' is not a PCG64 generator's state")
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": high_state << 64 | low_state, "inc": high_inc << 64 | low_inc},
        "has_uint32": has_uint32,
        "uinteger": uinteger,
    }
