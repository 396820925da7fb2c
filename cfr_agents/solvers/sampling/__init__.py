r"""Monte Carlo CFR: the update rules of :mod:`cfr_agents.solvers` applied to sampled regrets.

One iteration is one traversal per player, player 0 first (OpenSpiel's convention), for any number of
players and any payoffs (zero-sum or not): each traversal samples every player but its traverser, whose
counterfactual weight is the product of all the other players' reaches and chance's. Each scheme is
a compiled kernel (one module each): its hooks on the one traversal every kernel shares
(:mod:`~cfr_agents.solvers.sampling.walk`), which walks the compiled tree's node arrays iteratively with
an explicit stack. Each draws from its own xoshiro256** stream seeded by the caller's
``numpy.random.Generator``, and applies :class:`~cfr_agents.solvers.update_rule.UpdateRule` to the
sampled regrets :math:`\tilde r^t` as Brown & Sandholm (2019) apply it to MCCFR: regret matching
(``cfr``), regret matching+ (``cfr+``), linear (``lcfr``) or discounted (``dcfr``) weighting. Discounts
owed by rows a traversal does not reach are paid when it next does
(:mod:`~cfr_agents.solvers.sampling.kernel_support`), so the result equals discounting every row
every iteration.

================= =========================================== ================================
scheme            paper                                       averaging (first = default)
================= =========================================== ================================
``chance``        Zinkevich et al. 2007; Lanctot et al. 2009  ``reach``
``external``      Lanctot et al. 2009                         ``simple``, ``full``
``outcome``       Lanctot et al. 2009 (epsilon-greedy)        ``stochastic``, ``optimistic``
``pure``          Gibson 2014; Wolff & Tan                    ``sampled``
``public-chance`` Johanson et al. 2012 (abstract hold'em      ``reach``
                  games only: vectors over the private hands)
================= =========================================== ================================

Every scheme draws chance outcomes independently at each chance node (``chance_draws="independent"``,
as the papers do) or from one stratified uniform per traversal (``"stratified"``: randomised
quasi-Monte Carlo, see :mod:`~cfr_agents.solvers.sampling.kernel_support`), which keeps each
iteration's sampled regrets unbiased and spreads the deals evenly over iterations.

A sampled solver also runs in synchronous rounds of batches, on several local processes or on Ray, each batch's
traversals against the round's snapshot of the strategy (:mod:`~cfr_agents.solvers.sampling.scale_out`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from adapters.inputs import InputError, Interval, ParameterError
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.policy import Policy
from cfr_agents.solvers.full_tree import normalise
from cfr_agents.solvers.sampling import chance, external, kernel_support, outcome, public_chance, pure
from cfr_agents.solvers.sampling.deals import holdem_kernel
from cfr_agents.solvers.sampling.kernel_support import KernelTree
from cfr_agents.solvers.update_rule import UpdateRule
from cfr_agents.tree import KIND_CHANCE, KIND_TERMINAL, CompiledTree, FloatArray, state_arrays

DEFAULT_EPSILON = 0.6
EPSILON = Interval(0.01, 1.0)
"""Outcome sampling's exploration: one traverser decision's importance weight is at most ``|A|/epsilon`` and
the sampled regrets' variance grows as its power along a path, so below 0.01 it swamps any run."""
CHANCE_DRAWS = ("independent", "stratified")
"""How chance outcomes are drawn (the default first; see :mod:`.kernel_support`): a fresh uniform at
every chance node, or one stratified uniform per traversal that drives all of them."""


@dataclass(frozen=True)
class Scheme:
    name: str
    kernel: ModuleType
    averaging: tuple[str, ...]
    """Averaging modes, the default first; their index is the kernel's mode code."""


SCHEMES: dict[str, Scheme] = {
    scheme.name: scheme
    for scheme in (
        Scheme("chance", chance, ("reach",)),
        Scheme("external", external, ("simple", "full")),
        Scheme("outcome", outcome, ("stochastic", "optimistic")),
        Scheme("pure", pure, ("sampled",)),
    )
}
"""The schemes of every game: a compiled tree or an abstract hold'em game."""
PUBLIC_CHANCE = "public-chance"
HAND_SCHEMES: dict[str, Scheme] = {PUBLIC_CHANCE: Scheme(PUBLIC_CHANCE, public_chance, ("reach",))}
"""The schemes that walk vectors over the private hands: abstract hold'em games only."""
ALL_SCHEMES = {**SCHEMES, **HAND_SCHEMES}
SAMPLING_CHOICES = ("none", *ALL_SCHEMES)


def check_sampling(
    sampling: str, rule: UpdateRule, averaging: str | None, epsilon: float | None, chance_draws: str | None = None
) -> None:
    """Refuse what cannot be combined, with a one-line reason."""
    if sampling not in ALL_SCHEMES:
        raise InputError(f"unknown sampling scheme {sampling!r}; choose from {', '.join(SAMPLING_CHOICES)}")
    scheme = ALL_SCHEMES[sampling]
    if rule.predictive:
        raise ParameterError(
            "predictive CFR+ needs the full instantaneous regret vector of every infoset each iteration; "
            "it does not combine with sampling ({sampling} none)"
        )
    if rule.discount_first:
        raise ParameterError(
            "DCFR+ and PDCFR+ discount each regret before adding the new one, every iteration; "
            "they run on the full tree only ({sampling} none)"
        )
    if rule.scheduled:
        raise ParameterError(
            "a hyperparameter schedule (HS-PCFR+) moves the average's exponent every iteration; "
            "it runs on the full tree only ({sampling} none)"
        )
    if averaging is not None and averaging not in scheme.averaging:
        raise ParameterError(
            "{averaging} {given} does not apply to {scheme} sampling; choose from {choices}",
            given=averaging,
            scheme=sampling,
            choices=", ".join(scheme.averaging),
        )
    if epsilon is not None:
        if sampling != "outcome":
            raise ParameterError("{epsilon} only applies to {sampling} outcome")
        EPSILON.check("epsilon", epsilon)
    if chance_draws is not None and chance_draws not in CHANCE_DRAWS:
        raise InputError(f"unknown chance draws {chance_draws!r}; choose from {', '.join(CHANCE_DRAWS)}")


def check_abstract(sampling: str, averaging: str | None, chance_draws: str | None) -> None:
    """Refuse what needs a game tree on an abstract game (:class:`~cfr_agents.abstract_game.AbstractGame`),
    whose cards are dealt once per traversal."""
    if averaging == "full":
        raise ParameterError("{averaging} full walks the whole game tree every iteration; an abstract game has none")
    if chance_draws == "stratified":
        raise ParameterError(
            "{chance_draws} stratified draws chance node by node from a tree; an abstract game deals its cards "
            "at once (independent)"
        )


def kernel_tree(tree: CompiledTree) -> KernelTree:
    """The tree as the kernels read it: ``nodes`` (breadth-first, see :data:`.kernel_support.CODE`),
    ``values[node, p]`` (player ``p``'s utility at terminals), ``cdf[node]`` (the cumulative chance
    probability of a chance outcome among its siblings), a bound on the frames a path can need, and no deal (the
    tree deals its own cards)."""
    order = np.empty(len(tree.node_kind), dtype=np.int64)
    order[0], filled = 0, 1
    for position in range(len(order)):  # breadth-first: a node's children get consecutive numbers
        node = order[position]
        children = tree.child_node[tree.child_start[node] : tree.child_start[node + 1]]
        order[filled : filled + len(children)] = children
        filled += len(children)
    number = np.empty_like(order)
    number[order] = np.arange(len(order))
    nodes = np.zeros((len(order), 4), dtype=np.int64)
    values = np.zeros((len(order), tree.num_players))
    cdf = np.zeros(len(order))
    depth = np.zeros(len(order), dtype=np.int64)
    for node in order:
        first, stop = tree.child_start[node], tree.child_start[node + 1]
        row = number[node]
        kind = tree.node_kind[node]
        if kind == KIND_TERMINAL:
            nodes[row] = (kernel_support.TERMINAL, tree.node_terminal[node], 0, 0)
            values[row] = tree.terminal_utility[:, tree.node_terminal[node]]
            continue
        children = number[tree.child_node[first:stop]]
        if kind == KIND_CHANCE:
            nodes[row] = (kernel_support.CHANCE, -1, children[0], len(children))
            cdf[children] = np.cumsum(tree.child_probability[first:stop])
        else:
            infoset = tree.node_infoset[node]
            nodes[row] = (1 + tree.infoset_player[infoset], infoset, children[0], len(children))
        depth[children] = depth[row] + 1
    return nodes, values, cdf, int(depth.max()) + 1, None


def kernel_seeds(rng: np.random.Generator, players: int) -> tuple[np.ndarray, np.ndarray]:
    """A kernel's ``rng`` (the four words of its xoshiro256** state) and ``shift`` (its stratified chance
    sequences' shifts, one per player), drawn from ``rng`` in that order."""
    words = rng.integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False)
    if not words.any():
        words[0] = np.uint64(1)  # xoshiro's one forbidden state
    return words, rng.integers(0, 2**64, size=players, dtype=np.uint64, endpoint=False)


def table_bytes(game: CompiledTree | AbstractGame) -> int:
    """The memory a :class:`SampledSolver` on ``game`` holds in its tables, in bytes: ``regret``, ``current``,
    ``cumulative`` (a row of ``width`` float64 each), ``log_at`` and ``weight_at`` (three more numbers a row); for
    an abstract game, its abstraction's tables too."""
    if isinstance(game, AbstractGame):
        rows, width = game.num_rows, 3
        extra = sum(array.nbytes for array in game.abstraction.kernel_tables())
    else:
        (rows, width), extra = game.action_mask.shape, 0
    return 8 * rows * (3 * width + 3) + extra


class SampledSolver:
    """MCCFR under an :class:`UpdateRule`; the same surface as the full-tree solver."""

    STATE_ARRAYS = ("regret", "cumulative", "log_at", "weight_at", "scalars", "rng", "shift")

    def __init__(
        self,
        tree: CompiledTree | AbstractGame,
        rule: UpdateRule,
        algorithm: str,
        sampling: str,
        rng: np.random.Generator,
        *,
        averaging: str | None = None,
        epsilon: float | None = None,
        chance_draws: str | None = None,
    ) -> None:
        check_sampling(sampling, rule, averaging, epsilon, chance_draws)
        if isinstance(tree, AbstractGame):
            check_abstract(sampling, averaging, chance_draws)
        elif sampling == PUBLIC_CHANCE:
            raise ParameterError(
                "{sampling} public-chance walks vectors over the private hands of a hold'em game; "
                "train through a card abstraction ({abstraction} DIR)"
            )
        self.tree = tree
        self.rule = rule
        self.algorithm = algorithm
        self.scheme = ALL_SCHEMES[sampling]
        self.averaging = averaging or self.scheme.averaging[0]
        self.epsilon = (DEFAULT_EPSILON if epsilon is None else epsilon) if sampling == "outcome" else None
        self.chance_draws = chance_draws or CHANCE_DRAWS[0]
        if isinstance(tree, AbstractGame):
            self._kernel_tree = holdem_kernel(tree)
            self._num_actions = tree.num_actions
        else:
            self._kernel_tree = kernel_tree(tree)
            self._num_actions = tree.action_mask.sum(axis=1).astype(np.int64)
        n, width = (tree.num_rows, 3) if isinstance(tree, AbstractGame) else tree.action_mask.shape
        self.regret = np.zeros((n, width))
        self.cumulative = np.zeros((n, width))
        self.log_at = np.zeros((n, 2))
        self.weight_at = np.zeros(n)
        self.scalars = np.zeros(kernel_support.NUM_SCALARS)
        self.current = kernel_support.current_strategy(self.regret, self._num_actions)
        self.rng, self.shift = kernel_seeds(rng, self._kernel_tree[1].shape[1])

    @property
    def iteration(self) -> int:
        return int(self.scalars[kernel_support.ITERATION])

    def run(self, iterations: int) -> None:
        """Run ``iterations`` iterations in one call to the compiled kernel."""
        kernel: Callable[..., None] = self.scheme.kernel.run
        state = (
            self.regret,
            self.current,
            self.cumulative,
            self.log_at,
            self.weight_at,
            self.scalars,
            self.rng,
            self.shift,
        )
        options = (
            self.rule.alpha,
            self.rule.beta,
            self.rule.gamma,
            self.scheme.averaging.index(self.averaging),
            self.epsilon or 0.0,
            CHANCE_DRAWS.index(self.chance_draws),
        )
        kernel(iterations, self._kernel_tree, state, options)

    def iterate(self) -> None:
        self.run(1)

    def compile(self) -> float:
        """Compile this scheme's kernel, or load it from Numba's cache, on scratch state; seconds taken.

        Numba compiles on first call; call this before timing iterations to keep compilation out.
        """
        started = time.perf_counter()
        scratch = SampledSolver(
            self.tree,
            self.rule,
            self.algorithm,
            self.scheme.name,
            np.random.default_rng(0),
            averaging=self.averaging,
            epsilon=self.epsilon,
            chance_draws=self.chance_draws,
        )
        scratch.run(1)
        return time.perf_counter() - started

    def current_strategy(self) -> FloatArray:
        r""":math:`\sigma^{T+1}`: regret matching on every row (owed discounts scale a row's positive part by
        one factor, so they do not change it)."""
        current: FloatArray = self.current.copy()
        return current

    def average_strategy(self) -> FloatArray:
        """``(N, A)`` normalised :math:`C^T`; uniform where nothing was accumulated."""
        return normalise(self.cumulative, self.tree)

    def average_policy(self) -> Policy:
        return self._policy(self.average_strategy())

    def current_policy(self) -> Policy:
        return self._policy(self.current_strategy())

    def parameters(self) -> Mapping[str, object]:
        parameters: dict[str, object] = {
            **self.rule.parameters(),
            "sampling": self.scheme.name,
            "averaging": self.averaging,
            "chance_draws": self.chance_draws,
        }
        if self.epsilon is not None:
            parameters["epsilon"] = self.epsilon
        return parameters

    def state(self, *, copy: bool = True) -> dict[str, np.ndarray]:
        """The whole mutable state, as arrays (a checkpoint): copies, or read-only views."""
        return state_arrays({name: getattr(self, name) for name in self.STATE_ARRAYS}, copy)

    def restore(self, state: Mapping[str, np.ndarray], *, take: bool = False) -> None:
        """Continue from :meth:`state`: from copies of its arrays or, with ``take``, from the arrays themselves
        wherever they can be the solver's own (C-ordered and writable), so that tables of gigabytes are not held
        twice. A caller that takes gives the arrays up: the solver's iterations change them."""
        for name in self.STATE_ARRAYS:
            current = getattr(self, name)
            value = state[name]
            if value.shape != current.shape or value.dtype != current.dtype:
                raise InputError(f"checkpoint array {name!r} has shape {value.shape}, expected {current.shape}")
            if take and value.flags.c_contiguous and value.flags.writeable:
                setattr(self, name, value)
            else:
                current[...] = value
        kernel_support.match_regrets(self.regret, self._num_actions, self.current)  # in place: no second table

    def _policy(self, strategy: FloatArray) -> Policy:
        if isinstance(self.tree, AbstractGame):
            raise InputError(
                "a strategy of an abstract game is a table of (betting node, bucket) rows, not a policy of infosets: "
                "read average_strategy() and save it with cfr_agents.abstract_game.save_strategy"
            )
        return Policy.from_strategy(
            self.tree, strategy, algorithm=self.algorithm, parameters=self.parameters(), iterations=self.iteration
        )
