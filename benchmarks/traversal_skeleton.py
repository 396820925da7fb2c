"""The sampling kernels on the shared traversal skeleton (:mod:`cfr_agents.solvers.sampling.walk`) against the
hand-written loops they replaced, side by side in one process.

Run from the repository root::

    .venv/bin/python benchmarks/traversal_skeleton.py [--revision REV] [--games IDS] [--schemes NAMES]
        [--rounds N] [--batch-seconds S]

The old kernels (``cfr_agents/solvers/sampling/*.py`` and ``neural/traversal.py`` at ``--revision``) are read
from git when the benchmark runs (``git show``), written to a temporary package and imported under another
name; nothing of them is kept. Both sets run in a child process with an empty Numba cache (a temporary
``NUMBA_CACHE_DIR``), so both compile cold. Per game and scheme:

* **compile**: CPU seconds of the first call on scratch state (compilation), apart from the timed runs;
* **iterations/s**: after a warm-up, ``--rounds`` rounds of one batch of about ``--batch-seconds`` each, old
  and new alternating (and which one goes first alternating too), each batch timed in the CPU time of the
  benchmark's thread (so that time the machine gives to other processes is not counted); the median of
  each, and the median of the rounds' ratios new / old, which must be at least 0.95;
* **identical**: both solvers, seeded alike, end in bit-identical states after the same iterations.

The neural row times Deep CFR's traversals (:func:`cfr_agents.solvers.neural.traversal.traverse`) the same way,
in traversals/s under a fixed strategy. A second child process with the same cache directory then reports
each kernel's first call from Numba's cache.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

import numpy as np

import adapters
from benchmarks.report import OneLineParser, one_line_errors
from cfr_agents.solvers import SampledSolver
from cfr_agents.solvers.neural import traversal
from cfr_agents.solvers.sampling import kernel_tree
from cfr_agents.solvers.update_rule import UpdateRule
from cfr_agents.tree import CompiledTree, compile_tree

ROOT = Path(__file__).resolve().parents[1]
REVISION = "85ba16e"
"""The last revision with one hand-written traversal loop per kernel."""
OLD_FILES = {
    "kernel_support": "cfr_agents/solvers/sampling/kernel_support.py",
    "chance": "cfr_agents/solvers/sampling/chance.py",
    "external": "cfr_agents/solvers/sampling/external.py",
    "outcome": "cfr_agents/solvers/sampling/outcome.py",
    "pure": "cfr_agents/solvers/sampling/pure.py",
    "traversal": "cfr_agents/solvers/neural/traversal.py",
}
OLD_PACKAGE = "old_sampling_kernels"
GAMES = ("openspiel:leduc_poker", "rlcard:leduc-holdem")
NEURAL = "neural"
SCHEME_NAMES = ("external", "outcome", "chance", "pure", NEURAL)
LEAST_RATIO = 0.95
NEURAL_SEED = 3


def write_old_package(revision: str, directory: Path) -> None:
    """The kernels at ``revision`` as the package :data:`OLD_PACKAGE` in ``directory``."""
    package = directory / OLD_PACKAGE
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, path in OLD_FILES.items():
        source = subprocess.run(
            ["git", "show", f"{revision}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        source = source.replace("cfr_agents.solvers.sampling.kernel_support", f"{OLD_PACKAGE}.kernel_support")
        (package / f"{name}.py").write_text(source)


class Contender:
    """One kernel, old or new, ready to be timed: ``step(k)`` runs ``k`` iterations (or traversals)."""

    def __init__(self, scheme: str, tree: CompiledTree, old: ModuleType | None) -> None:
        """The new kernel of ``scheme``, or the old one from the package ``old``."""
        module = None if old is None else getattr(old, "traversal" if scheme == NEURAL else scheme)
        self.scheme = scheme
        self.tree = tree
        self.module = module
        self.steps = 0
        self.first_call = 0.0
        """Seconds of the first step."""
        if scheme == NEURAL:
            self.nodes, self.values, self.cdf, self.depth_bound, _ = kernel_tree(tree)
            strategy = tree.uniform_strategy() * np.random.default_rng(NEURAL_SEED).random(tree.action_mask.shape)
            self.strategy = strategy * tree.action_mask / (strategy * tree.action_mask).sum(axis=1, keepdims=True)
            self.rng = np.random.default_rng(1).integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False)
            self.outputs: tuple[object, ...] = ()
        else:
            self.solver = SampledSolver(tree, UpdateRule(), "cfr", scheme, np.random.default_rng(0))
            if module is not None:
                self.solver.scheme = dataclasses.replace(self.solver.scheme, kernel=module)

    def prepare(self, count: int) -> None:
        """Room for the samples of ``count`` traversals (neural), so that no timed step allocates."""
        if self.scheme == NEURAL:
            own, other = traversal.visit_bounds(self.nodes).max(axis=0) * count
            self.own_infoset, self.other_infoset = np.empty(own, np.int64), np.empty(other, np.int64)
            self.own_regret = np.zeros((own, self.strategy.shape[1]))

    def step(self, count: int) -> None:
        self.steps += 1
        if self.scheme != NEURAL:
            self.solver.run(count)
            return
        traverse = traversal.traverse if self.module is None else self.module.traverse
        written = traverse(
            count, self.steps % 2, self.nodes, self.values, self.cdf, self.depth_bound, self.strategy, self.rng,
            self.own_infoset, self.own_regret, self.other_infoset,
        )  # fmt: skip
        owns, others = written[0], written[1]
        self.outputs = (written, self.own_infoset[:owns], self.own_regret[:owns], self.other_infoset[:others])

    def timed(self, count: int) -> float:
        """CPU seconds of this thread in :meth:`step` (time the machine gave to others is not counted)."""
        started = time.thread_time()
        self.step(count)
        return time.thread_time() - started

    def kernel(self) -> Any:
        """The compiled function this contender times."""
        if self.scheme == NEURAL:
            return (self.module or traversal).traverse
        return self.solver.scheme.kernel.run

    def fingerprint(self) -> list[np.ndarray]:
        """Everything the runs produced, to compare old with new."""
        if self.scheme == NEURAL:
            written, *arrays = self.outputs
            return [np.asarray(written), *(np.asarray(array) for array in arrays), self.rng]
        return [*self.solver.state().values(), self.solver.current]


def first_call(scheme: str, tree: CompiledTree, module: ModuleType | None) -> Contender:
    """A contender that has made its first step: compiled, or loaded from Numba's cache."""
    contender = Contender(scheme, tree, module)
    contender.prepare(1)
    contender.first_call = contender.timed(1)
    return contender


def measure(scheme: str, tree: CompiledTree, old: ModuleType, rounds: int, batch_seconds: float) -> list[str]:
    """One table row: compile seconds, rates and their ratio, and whether the results are identical."""
    compiled = first_call(scheme, tree, old), first_call(scheme, tree, None)
    scratch = compiled[1]
    batch = 1
    while (elapsed := scratch.timed(batch)) < batch_seconds / 4:
        batch *= 2
        scratch.prepare(batch)
    batch = max(1, round(batch * batch_seconds / elapsed))
    contenders = Contender(scheme, tree, old), Contender(scheme, tree, None)
    for contender in contenders:
        contender.prepare(batch)
        contender.step(2)
    rates: tuple[list[float], list[float]] = ([], [])
    for round_ in range(rounds):
        for k in (0, 1) if round_ % 2 == 0 else (1, 0):
            rates[k].append(batch / contenders[k].timed(batch))
    ratio = statistics.median(new / old_rate for old_rate, new in zip(*rates, strict=True))
    identical = all(
        a.dtype == b.dtype and np.array_equal(a, b)
        for a, b in zip(contenders[0].fingerprint(), contenders[1].fingerprint(), strict=True)
    )
    return [
        scheme,
        f"{compiled[0].first_call:.2f} / {compiled[1].first_call:.2f}",
        f"{statistics.median(rates[0]):,.0f}",
        f"{statistics.median(rates[1]):,.0f}",
        f"{ratio:.3f}",
        "yes" if identical else "NO",
        "ok" if ratio >= LEAST_RATIO and identical else "FAIL",
    ]


def load(scheme: str, tree: CompiledTree, old: ModuleType) -> list[str]:
    """One table row: the first call of each kernel in this process, and whether Numba's cache served it."""
    cells = [scheme]
    for module in (old, None):
        contender = first_call(scheme, tree, module)
        kernel = contender.kernel()
        cells.append(f"{contender.first_call:.2f} ({'cache' if sum(kernel.stats.cache_hits.values()) else 'compiled'})")
    return cells


def child(options: argparse.Namespace) -> None:
    sys.path.insert(0, options.old_path)
    old = importlib.import_module(OLD_PACKAGE)
    for name in OLD_FILES:
        setattr(old, name, importlib.import_module(f"{OLD_PACKAGE}.{name}"))
    for game_id in options.games.split(","):
        tree = compile_tree(adapters.load_game(game_id))
        if options.child == "measure":
            header = ["scheme", "compile CPU s, old / new", "old it/s", "new it/s", "new / old", "identical", "verdict"]
        else:
            header = ["scheme", "first call old, CPU s", "first call new, CPU s"]
        print(f"\n{game_id} ({options.child})\n")
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for scheme in options.schemes.split(","):
            if options.child == "measure":
                row = measure(scheme, tree, old, options.rounds, options.batch_seconds)
            else:
                row = load(scheme, tree, old)
            print("| " + " | ".join(row) + " |", flush=True)


def parse_options(argv: Sequence[str]) -> argparse.Namespace:
    parser = OneLineParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--revision", default=REVISION, help=f"the old kernels' revision (default {REVISION})")
    parser.add_argument("--games", default=",".join(GAMES))
    parser.add_argument("--schemes", default=",".join(SCHEME_NAMES))
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--batch-seconds", type=float, default=0.1)
    parser.add_argument("--child", choices=("measure", "load"), help=argparse.SUPPRESS)
    parser.add_argument("--old-path", help=argparse.SUPPRESS)
    options = parser.parse(argv)
    unknown = set(options.schemes.split(",")) - set(SCHEME_NAMES)
    if unknown:
        parser.error(f"--schemes takes {', '.join(SCHEME_NAMES)}")
    if options.rounds < 1 or options.batch_seconds <= 0:
        parser.error("--rounds must be at least 1 and --batch-seconds positive")
    return options


@one_line_errors
def main(argv: Sequence[str] | None = None) -> None:
    arguments = list(sys.argv[1:] if argv is None else argv)
    options = parse_options(arguments)
    if options.child:
        child(options)
        return
    with tempfile.TemporaryDirectory() as temporary:
        write_old_package(options.revision, Path(temporary))
        environment = {**os.environ, "NUMBA_CACHE_DIR": str(Path(temporary) / "numba")}
        for stage in ("measure", "load"):
            subprocess.run(
                [sys.executable, __file__, *arguments, "--child", stage, "--old-path", temporary],
                cwd=ROOT,
                env=environment,
                check=True,
            )


if __name__ == "__main__":
    main()
