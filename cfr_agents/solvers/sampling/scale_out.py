r"""Scale-out MCCFR: synchronous rounds of batches of traversals, run by local processes or on Ray, whose summed
regret and average-strategy increments are applied at the end of each round.

The rounds (:class:`ScaleOutSolver`). Round :math:`k = 1, 2, \ldots` starts from the snapshot
:math:`\sigma^k = \mathrm{RM}(R^{k-1})` of every row. Each of :math:`B` batches :math:`b = 0, \ldots, B-1` runs
:math:`M` iterations of the scheme (a traversal for player 0, then one for player 1) against :math:`\sigma^k`, which
stays fixed throughout (delayed updates: :func:`~.kernel_support.update_regrets` on a batch's state, which
:func:`~.kernel_support.is_delayed` marks), with its own generator, seeded by
``SeedSequence(seed, spawn_key=(k, b))`` -- child :math:`b` of ``SeedSequence(seed, spawn_key=(k,)).spawn(B)``.
It returns its sums of the sampled regrets and of the scheme's average-strategy increments, each taken with
weight 1,

.. math:: \Delta_b(I,a) = \sum_{m=1}^{M} \tilde r_{b,m}(I,a), \qquad A_b(I,a) = \sum_{m=1}^{M} \tilde a_{b,m}(I,a),

and the round applies the update rule with :math:`t = k`, its sums taken in batch order, left to right:

.. math::

    R^k(I,a) = d_\pm(k)\,\big(((R^{k-1}(I,a) + \Delta_0(I,a)) + \Delta_1(I,a)) + \cdots + \Delta_{B-1}(I,a)\big),
    \qquad C^k(I,a) = (C^{k-1}(I,a) + w_k A_0(I,a)) + \cdots + w_k A_{B-1}(I,a),

with :math:`d_\pm(k)` the sign's discount and :math:`w_k = k^\gamma` (:func:`~.kernel_support.begin_iteration`),
then :math:`\sigma^{k+1} = \mathrm{RM}(R^k)` on every row.

The iteration count. The rule's :math:`t` is the round: :math:`k` rounds are :math:`k` iterations of the rule and
:math:`kBM` iterations of the scheme (traversal pairs), and :attr:`ScaleOutSolver.iteration` counts rounds (what
``--iterations``, the progress bar, checkpoints and the curve count with ``--workers``). Each
:math:`\Delta_b / M` is an unbiased estimate of the counterfactual regret :math:`r^k(I,a)` of :math:`\sigma^k`, so
this is MCCFR with delayed updates: the rule's recursion with :math:`r^k` estimated by :math:`BM` samples; the
constant factor :math:`BM` scales every :math:`R^k` alike, which neither the discounts (they depend on signs) nor
regret matching see. With :math:`B = M = 1` it is MCCFR whose two traversals of an iteration both see
:math:`\sigma^t` (simultaneous updates), where one process updates player 0's rows before player 1's traversal.

Lazy discounts. One process pays a row's discounts when a traversal next reaches it
(:mod:`~.kernel_support`); here every row is updated at the end of every round (the sums, then
:func:`~.kernel_support.update_regrets` with a zero sampled regret, which pays what the row owes and applies
:math:`d_\pm(k)`), so no row owes anything when the next snapshot is taken.

Determinism. A batch's increments depend on :math:`\sigma^k`, its seed and :math:`M` alone, and they are summed in
batch order, so the run depends on (seed, :math:`B`, :math:`M`, rounds) and the solver's settings, not on the
number of workers :math:`K` nor on which worker ran which batch: bit for bit on one machine. Across machines,
Numba compiles for each CPU, and its float64 arithmetic (``exp``, ``log``) may differ in the last bits.

Where the batches run (:class:`Workers`): in this process one after another (:math:`K = 1`), on :math:`K` local
processes, or on Ray. Batches run in waves of :math:`K`, batch :math:`b` of a wave in slot :math:`b \bmod K`:

* local processes map the snapshot and their slots' :math:`\Delta` and :math:`A` from files in shared memory
  (``/dev/shm``): a task carries names and numbers, never a table, and the processes keep the game they loaded
  from one round to the next (:meth:`cfr_agents.jobs.LocalPool.kept`);
* on Ray, the snapshot goes to the object store once a round (``ray.put``), each task copies it and returns its
  increments, and a wave of :math:`K` (the cluster's CPUs) bounds the increments held at once.

Memory (:func:`scale_out_bytes`): the solver's tables (:func:`~cfr_agents.solvers.sampling.table_bytes`), whose
current strategy is the snapshot the workers read, plus for each slot its :math:`\Delta` and :math:`A`, and for
each worker process its own copy of the game (an abstraction's tables).
"""

from __future__ import annotations

import math
import shutil
import tempfile
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numba import njit

from adapters import load_game
from adapters.inputs import ParameterError
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.jobs import Executor, LocalPool, RayExecutor
from cfr_agents.solvers.sampling import ALL_SCHEMES, CHANCE_DRAWS, SampledSolver, kernel_seeds, kernel_tree, table_bytes
from cfr_agents.solvers.sampling.deals import holdem_kernel
from cfr_agents.solvers.sampling.kernel_support import (
    NUM_SCALARS,
    WEIGHT,
    KernelOptions,
    KernelTree,
    begin_iteration,
    update_regrets,
)
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree

DEFAULT_BATCHES = 8
""":math:`B` unless given: fixed, never the number of workers, so that a run's result does not depend on them."""
DEFAULT_BATCH_ITERATIONS = 10_000
""":math:`M` unless given."""
MAX_BATCHES = 1_000_000
MAX_BATCH_ITERATIONS = 10**9
PROCESS_BYTES = 200 * 2**20
"""What a worker process holds besides its tables and its game: Python, NumPy, Numba and the compiled kernels (about
0.2 GB, as measured for the main process of a run on ``rlcard:limit-holdem``)."""


@dataclass(frozen=True)
class Rounds:
    """:math:`B` batches of :math:`M` iterations a round (module docstring)."""

    batches: int = DEFAULT_BATCHES
    batch_iterations: int = DEFAULT_BATCH_ITERATIONS

    def __post_init__(self) -> None:
        for name, high in (("batches", MAX_BATCHES), ("batch_iterations", MAX_BATCH_ITERATIONS)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
                raise ParameterError(
                    f"{{{name}}} must be a whole number from 1 to {high:,}, got {{given!r}}", given=value
                )

    def parameters(self) -> dict[str, int]:
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass(frozen=True)
class Task:
    """One batch, as a worker is sent it: plain data, never a table (:mod:`cfr_agents.jobs`)."""

    game: str
    """The abstraction's directory (``abstract``), or the game id of a compiled tree."""
    abstract: bool
    scheme: str
    options: KernelOptions
    seed: int
    round: int
    batch: int
    iterations: int
    shape: tuple[int, int]
    snapshot: Any
    """Local processes: the file holding :math:`\\sigma^k`; Ray: its object reference."""
    slot: str | None
    """Local processes: the directory of the slot's files (``delta``, ``average``); Ray: ``None`` (returned)."""


def batch_options(solver: SampledSolver) -> KernelOptions:
    """The kernel options of a batch: ``solver``'s scheme, averaging, epsilon and chance draws, with no discount and
    weight 1 (:math:`\\alpha = \\beta = \\infty`, :math:`\\gamma = 0`): the round applies the rule."""
    averaging = solver.scheme.averaging.index(solver.averaging)
    return (math.inf, math.inf, 0.0, averaging, solver.epsilon or 0.0, CHANCE_DRAWS.index(solver.chance_draws))


def run_batch(
    tree: KernelTree,
    scheme: str,
    options: KernelOptions,
    snapshot: FloatArray,
    delta: FloatArray,
    average: FloatArray,
    seed: int,
    round_: int,
    batch: int,
    iterations: int,
) -> None:
    r""":math:`\Delta_b` into ``delta`` and :math:`A_b` into ``average``: ``iterations`` iterations against
    ``snapshot``, with the generator of ``SeedSequence(seed, spawn_key=(round_, batch))``."""
    delta[...] = 0.0
    average[...] = 0.0
    generator = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(round_, batch)))
    words, shift = kernel_seeds(generator, tree[1].shape[1])
    no_rows = np.zeros((0, 2))  # is_delayed: the batch owes and keeps no discounts
    state = (delta, snapshot, average, no_rows, np.zeros(0), np.zeros(NUM_SCALARS), words, shift)
    ALL_SCHEMES[scheme].kernel.run(iterations, tree, state, options)


@lru_cache(maxsize=2)
def _worker_tree(game: str, abstract: bool) -> KernelTree:
    """The kernels' tree of a task's game, built once per worker process."""
    if abstract:
        return holdem_kernel(AbstractGame.load(game))
    return kernel_tree(compile_tree(load_game(game, any_players=True)))


def _mapped(path: str | Path, shape: tuple[int, int], mode: Literal["r", "r+", "w+"] = "r+") -> FloatArray:
    """The float64 table of ``shape`` in file ``path``, mapped (shared with every process that maps it)."""
    table: FloatArray = np.memmap(path, dtype=np.float64, mode=mode, shape=shape).view(np.ndarray)
    return table


def _run_task(task: Task, snapshot: FloatArray, delta: FloatArray, average: FloatArray) -> None:
    """:func:`run_batch` of ``task`` in a worker, on the game it loaded once."""
    tree = _worker_tree(task.game, task.abstract)
    run_batch(
        tree, task.scheme, task.options, snapshot, delta, average, task.seed, task.round, task.batch, task.iterations
    )


@lru_cache(maxsize=64)
def _shared(path: str, shape: tuple[int, int]) -> FloatArray:
    """A shared file mapped once in a worker process: its pages stay mapped from one batch to the next."""
    return _mapped(path, shape)


def local_batch(task: Task) -> None:
    """A batch in a local worker process: the snapshot and the slot are files it maps."""
    slot, shape = Path(str(task.slot)), task.shape
    _run_task(
        task, _shared(task.snapshot, shape), _shared(str(slot / "delta"), shape), _shared(str(slot / "average"), shape)
    )


def ray_batch(task: Task) -> tuple[FloatArray, FloatArray]:
    """A batch in a Ray task: the snapshot from the object store (copied: the kernels take writable tables); the
    increments returned."""
    import ray

    delta, average = np.empty(task.shape), np.empty(task.shape)
    _run_task(task, np.array(ray.get(task.snapshot)), delta, average)
    return delta, average


@njit(cache=True, error_model="numpy")
def _add_batch(
    regret: np.ndarray, cumulative: np.ndarray, weight: float, delta: np.ndarray, average: np.ndarray
) -> None:
    r""":math:`R \mathrel{+}= \Delta_b` and :math:`C \mathrel{+}= w_k A_b`, entry by entry."""
    rows, width = regret.shape
    for row in range(rows):
        for a in range(width):
            regret[row, a] += delta[row, a]
            cumulative[row, a] += weight * average[row, a]


@njit(cache=True, error_model="numpy")
def _settle(
    regret: np.ndarray,
    log_at: np.ndarray,
    current: np.ndarray,
    scalars: np.ndarray,
    alpha: float,
    beta: float,
    num_actions: np.ndarray,
) -> None:
    r""":math:`R^k = d_\pm(k)\,(\cdot)` and :math:`\sigma^{k+1} = \mathrm{RM}(R^k)` on every row, paying what it
    owes: :func:`~.kernel_support.update_regrets` with a zero sampled regret."""
    zero = np.zeros(regret.shape[1])
    for row in range(regret.shape[0]):
        update_regrets(regret, log_at, current, row, num_actions[row], zero, scalars, alpha, beta)


class Workers:
    """Where the batches of a round run: ``executor`` is a :class:`~cfr_agents.jobs.LocalPool` (one worker: this
    process) or a :class:`~cfr_agents.jobs.RayExecutor`."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.count = executor.workers
        self.in_process = isinstance(executor, LocalPool) and executor.workers == 1
        self.ray = isinstance(executor, RayExecutor)


class ScaleOutSolver:
    """MCCFR in synchronous rounds (module docstring) on the tables of ``solver``, a fresh or restored
    :class:`~cfr_agents.solvers.sampling.SampledSolver`; the surface of the other solvers, one iteration a round."""

    def __init__(self, solver: SampledSolver, seed: int, rounds: Rounds, workers: Workers) -> None:
        if solver.averaging == "optimistic":
            raise ParameterError(
                "{averaging} optimistic credits the iterations a row missed from its own clock, which a batch of "
                "delayed updates does not keep: scale-out takes {averaging} stochastic"
            )
        if isinstance(solver.tree, AbstractGame) and solver.tree.source is None and not workers.in_process:
            raise ParameterError("an abstraction that is not in a directory cannot be sent to workers")
        self.solver = solver
        self.seed = seed
        self.rounds = rounds
        self.workers = workers
        self._stack = ExitStack()
        self._files: Path | None = None
        self._slots: list[tuple[FloatArray, FloatArray]] = []
        """Each local slot's :math:`\\Delta` and :math:`A`, mapped."""

    @property
    def tree(self) -> CompiledTree | AbstractGame:
        return self.solver.tree

    @property
    def algorithm(self) -> str:
        return self.solver.algorithm

    @property
    def iteration(self) -> int:
        """Rounds run: the rule's :math:`t`."""
        return self.solver.iteration

    def compile(self) -> float:
        """Compile the kernels here and start the workers, each loading the game and its kernels with a batch of no
        iterations (outside the timed run, as one process compiles its kernels); seconds taken."""
        started = time.perf_counter()
        self.solver.compile()
        rows = np.zeros((1, self.solver.regret.shape[1]))
        _add_batch(rows, rows.copy(), 1.0, rows.copy(), rows.copy())
        _settle(rows, np.zeros((1, 2)), rows.copy(), np.zeros(NUM_SCALARS), 1.0, 1.0, np.ones(1, np.int64))
        if not self.workers.in_process:
            warm = [replace(task, iterations=0) for task in self._tasks(0, range(self.workers.count))]
            self.workers.executor.map(ray_batch if self.workers.ray else local_batch, warm)
        return time.perf_counter() - started

    def run(self, rounds: int) -> None:
        """``rounds`` rounds."""
        for _ in range(rounds):
            self._round()

    def iterate(self) -> None:
        self.run(1)

    def _round(self) -> None:
        solver, rule = self.solver, self.solver.rule
        k = solver.iteration + 1
        begin_iteration(solver.scalars, rule.alpha, rule.beta, rule.gamma, solver.cumulative, solver.weight_at)
        weight = float(solver.scalars[WEIGHT])
        for increments in self._increments(k):
            for delta, average in increments:
                _add_batch(solver.regret, solver.cumulative, weight, delta, average)
        _settle(
            solver.regret,
            solver.log_at,
            solver.current,
            solver.scalars,
            rule.alpha,
            rule.beta,
            solver._num_actions,
        )

    def _increments(self, k: int) -> Iterator[Sequence[tuple[FloatArray, FloatArray]]]:
        """Each wave's :math:`(\\Delta_b, A_b)` in batch order, batch :math:`b` in slot :math:`b \\bmod K`."""
        solver, batches = self.solver, self.rounds.batches
        if self.workers.in_process:
            delta, average = np.empty(solver.regret.shape), np.empty(solver.regret.shape)
            for b in range(batches):
                run_batch(
                    solver._kernel_tree,
                    solver.scheme.name,
                    batch_options(solver),
                    solver.current,
                    delta,
                    average,
                    self.seed,
                    k,
                    b,
                    self.rounds.batch_iterations,
                )
                yield ((delta, average),)
            return
        for first in range(0, batches, self.workers.count):
            wave = range(first, min(first + self.workers.count, batches))
            tasks = self._tasks(k, wave)
            if self.workers.ray:
                yield self.workers.executor.map(ray_batch, tasks)
            else:
                self.workers.executor.map(local_batch, tasks)
                yield [self._slot(b % self.workers.count) for b in wave]

    def _tasks(self, k: int, wave: range) -> list[Task]:
        """The tasks of the batches ``wave`` of round ``k``."""
        tree, snapshot = self.solver.tree, self._snapshot()
        return [
            Task(
                game=str(tree.source) if isinstance(tree, AbstractGame) else tree.game_id,
                abstract=isinstance(tree, AbstractGame),
                scheme=self.solver.scheme.name,
                options=batch_options(self.solver),
                seed=self.seed,
                round=k,
                batch=b,
                iterations=self.rounds.batch_iterations,
                shape=self.solver.regret.shape,
                snapshot=snapshot,
                slot=None if self.workers.ray else str(self._directory() / f"slot{b % self.workers.count}"),
            )
            for b in wave
        ]

    def _snapshot(self) -> Any:
        """:math:`\\sigma^k` where the workers read it: the object store (Ray), or the file the solver's current
        strategy lives in (local processes)."""
        if self.workers.ray:
            assert isinstance(self.workers.executor, RayExecutor)
            return self.workers.executor.put(self.solver.current)
        return str(self._directory() / "snapshot")

    def _slot(self, slot: int) -> tuple[FloatArray, FloatArray]:
        self._directory()
        return self._slots[slot]

    def _directory(self) -> Path:
        """The shared-memory files of local workers, made at first use: the snapshot, which becomes the solver's
        ``current`` table, and each slot's increments; removed by :meth:`close`."""
        if self._files is None:
            shm = Path("/dev/shm")
            folder = Path(tempfile.mkdtemp(prefix="cfr-agents-scale-out-", dir=shm if shm.is_dir() else None))
            removal = weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)  # at the latest, at exit
            self._stack.callback(removal)
            shape = self.solver.regret.shape
            snapshot = _mapped(folder / "snapshot", shape, "w+")
            snapshot[...] = self.solver.current
            self.solver.current = snapshot
            for slot in range(self.workers.count):
                (folder / f"slot{slot}").mkdir()
                delta, average = (_mapped(folder / f"slot{slot}" / name, shape, "w+") for name in ("delta", "average"))
                self._slots.append((delta, average))
            assert isinstance(self.workers.executor, LocalPool)
            self._stack.enter_context(self.workers.executor.kept())
            self._files = folder
        return self._files

    def close(self) -> None:
        """Stop the workers and remove the shared files; the tables stay usable."""
        if self._files is not None:
            self.solver.current = np.array(self.solver.current)
            self._files, self._slots = None, []
        self._stack.close()

    def __enter__(self) -> ScaleOutSolver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def current_strategy(self) -> FloatArray:
        return self.solver.current_strategy()

    def average_strategy(self) -> FloatArray:
        return self.solver.average_strategy()

    def average_policy(self) -> Any:
        return self.solver.average_policy()

    def parameters(self) -> dict[str, object]:
        return {**self.solver.parameters(), **self.rounds.parameters()}

    def state(self, *, copy: bool = True) -> dict[str, np.ndarray]:
        return self.solver.state(copy=copy)

    def restore(self, state: Any) -> None:
        self.solver.restore(state)
        if self._files is not None:
            snapshot = _mapped(self._files / "snapshot", self.solver.regret.shape)
            snapshot[...] = self.solver.current
            self.solver.current = snapshot


def scale_out_bytes(game: CompiledTree | AbstractGame, workers: Workers) -> int:
    """The memory a :class:`ScaleOutSolver` on ``game`` needs at its peak, in bytes: the solver's tables, a slot's
    :math:`\\Delta` and :math:`A` for each worker, and each worker process's copy of the game and its runtime
    (:data:`PROCESS_BYTES`; on Ray, a copy of the snapshot too)."""
    if isinstance(game, AbstractGame):
        rows, width = game.num_rows, 3
        own_game = sum(array.nbytes for array in game.abstraction.kernel_tables())
    else:
        (rows, width) = game.action_mask.shape
        own_game = sum(value.nbytes for value in vars(game).values() if isinstance(value, np.ndarray))
    table = 8 * rows * width
    own_process = 0 if workers.in_process else own_game + PROCESS_BYTES
    per_worker = 2 * table + own_process + (table if workers.ray else 0)
    return table_bytes(game) + workers.count * per_worker
