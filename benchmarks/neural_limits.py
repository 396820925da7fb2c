"""What limits SD-CFR on Leduc: its iterations with a *perfect fit* of the advantage memory in place of the network.

Run from the repository root::

    .venv/bin/python benchmarks/neural_limits.py [--game G] [--iterations 500] [--memories 1000000,10000000]

SD-CFR's iteration strategy is regret matching on the value network's prediction of each infoset's linearly
weighted mean of the sampled regrets in the advantage memory. Here that prediction is replaced by the mean itself,
computed exactly from the whole memory (what a network trained to zero loss on every sample would predict), with
everything else as in ``--preset fast`` (the same traversals, reservoirs and seed). What this reaches is the floor
set by the memory's sampling noise; the distance from it to the networks' figures (``benchmarks/neural.py``) is the
networks' fitting error. Each memory capacity is scored exactly at log-spaced iterations.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

import numpy as np

import adapters
import cfr_agents.solvers.neural.networks as networks
from adapters.tensors import encoder
from benchmarks.measure import nash_conv
from benchmarks.report import OneLineParser, Table, load_average, machine_facts, now, one_line_errors, progress
from cfr_agents.files import write_atomic
from cfr_agents.solvers.neural.sd_cfr import SingleDeepCFRSolver
from cfr_agents.tree import FloatArray, compile_tree
from eval.opponents.neural import settings_of

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "neural-limits.md"
MARKS = (30, 100, 200, 300, 500, 1000, 2000)


class PerfectFit(SingleDeepCFRSolver):
    r"""SD-CFR whose "network" for player :math:`p` is the exact memory mean
    :math:`\bar y_I = \sum_{i: I_i = I} t_i \tilde r_i / \sum_{i: I_i = I} t_i` over all of :math:`\mathcal M_{V,p}`."""

    means: dict[int, FloatArray]
    """Each player's :math:`\\bar y_I`, from the memory as it was when that player's network would be trained."""

    def _train_value_network(self, player: int) -> None:
        memory = self.advantage_memories[player]
        filled = memory.filled
        if filled == 0:
            return
        _, means = memory.means(np.arange(filled), len(self._mask))
        self.means = getattr(self, "means", {})
        self.means[player] = means  # y_bar_I
        self._trained[player] = True

    def _refresh(self, player: int) -> None:
        if not self._trained[player]:
            return
        rows = self.tree.infoset_player == player
        self.current[rows] = networks.regret_matching(self.means[player][rows], self._mask[rows])


def run(game_id: str, memory: int, iterations: int, seed: int) -> list[tuple[int, float, float]]:
    """(iteration, exploitability, CPU seconds) at each mark up to ``iterations``."""
    game = adapters.load_game(game_id)
    tree = compile_tree(game)
    settings = settings_of("fast", {"advantage_memory": memory})
    solver = PerfectFit(tree, encoder(game).of_keys(tree.infoset_keys), "sd-cfr", settings, np.random.default_rng(seed))
    points, cpu = [], 0.0
    for mark in [m for m in MARKS if m < iterations] + [iterations]:
        started = time.process_time()
        solver.run(mark - solver.iteration)
        cpu += time.process_time() - started
        points.append((mark, nash_conv(tree, solver.average_strategy()) / 2, cpu))
    return points


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="openspiel:leduc_poker")
    parser.add_argument("--iterations", type=int, default=500)
    parser.add_argument("--memories", default="1000000,10000000", help="advantage memory capacities, comma-separated")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_output("--out", default=DEFAULT_OUT)
    options = parser.parse(argv)
    memories = [int(value) for value in options.memories.split(",")]
    started_load = load_average()
    runs = {}
    for memory in memories:
        progress(f"neural limits: memory {memory:,}")
        runs[memory] = run(options.game, memory, options.iterations, options.seed)
    marks = [iteration for iteration, _, _ in runs[memories[0]]]
    rows = tuple(
        (f"{memory:,}", *(f"{value:.4f}" for _, value, _ in runs[memory]), f"{runs[memory][-1][2]:.0f} s")
        for memory in memories
    )
    table = Table(
        f"{options.game}: SD-CFR's exploitability with a perfect fit of the advantage memory (seed {options.seed})",
        ("advantage memory", *(f"at {mark:,} it" for mark in marks), "CPU time"),
        rows,
        ("Everything else as --preset fast; exploitability = NashConv / 2, exact.",),
    )
    print(table.text(), flush=True)
    facts = {**machine_facts(), "load average before / after": f"{started_load} / {load_average()}"}
    command = "benchmarks/neural_limits.py " + " ".join(argv if argv is not None else sys.argv[1:])
    header = (
        f"# What limits SD-CFR\n\n`{command.strip()}`, {now()}. "
        + "; ".join(f"{key}: {value}" for key, value in facts.items())
        + ".\n\n"
    )
    write_atomic(options.out, header + table.markdown())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
