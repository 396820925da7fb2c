"""Benchmark: the exact strategy of every named opponent on RLCard Leduc, and its exploitability.

Run from the repository root (``make bench-opponents``)::

    .venv/bin/python benchmarks/opponents.py [--repeats N] [--out FILE.md]

For each opponent of ``rlcard:leduc-holdem`` (1,872 infosets) and of ``openspiel:leduc_poker``
(936 infosets), built once, this times:

* ``strategy_of(agent, tree)`` -- every infoset queried twice (the consistency check), NFSP's
  network included. *First* is the first call after the agent is built: it includes the agent's own
  one-time start-up (torch initialises its kernels on the first forward pass). *Cold* is the first
  call on another fresh tree: it also walks the game once to find a state of each infoset (cached
  per tree). *Warm* is the median of ``--repeats`` later calls. The target applies to *cold*.
* ``exploitability_of_strategy(tree, strategy)`` after that (median of ``--repeats``).

Targets (issue 9): strategy at most 2 s, exploitability at most 0.1 s, on RLCard Leduc.
Only the OpenSpiel C++ solvers' *queries* are timed, not their solving. The table goes to stdout
and, with ``--out``, to a Markdown file (written atomically).
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from adapters import load_game
from benchmarks.report import OneLineParser, one_line_errors
from cfr_agents.files import write_atomic
from cfr_agents.tree import compile_tree
from eval.agents import strategy_of
from eval.exploitability import exploitability_of_strategy
from eval.opponents import available, load_opponent

GAMES = ("rlcard:leduc-holdem", "openspiel:leduc_poker")
STRATEGY_TARGET = 2.0
EXPLOITABILITY_TARGET = 0.1
SOLVER_ITERATIONS = {"openspiel-cfr": 2, "openspiel-cfr+": 2, "openspiel-mccfr-es": 2000, "openspiel-mccfr-os": 20000}
"""Iterations of OpenSpiel's solvers here: only their policies' query time is measured."""


@dataclass(frozen=True)
class Timing:
    game: str
    agent: str
    first_seconds: float
    cold_seconds: float
    warm_seconds: float
    exploitability_seconds: float

    @property
    def passes(self) -> bool:
        return self.cold_seconds <= STRATEGY_TARGET and self.exploitability_seconds <= EXPLOITABILITY_TARGET


def time_game(game_id: str, repeats: int) -> list[Timing]:
    timings = []
    for family in available(game_id):
        name = f"{family.name}:{SOLVER_ITERATIONS[family.name]}" if family.takes_iterations else family.name
        agent = load_opponent(name, game_id).agent
        started = time.perf_counter()
        strategy_of(agent, compile_tree(load_game(game_id)))
        first = time.perf_counter() - started
        tree = compile_tree(load_game(game_id))  # a fresh tree: the first query walks the game
        started = time.perf_counter()
        strategy = strategy_of(agent, tree)
        cold = time.perf_counter() - started
        warm = []
        for _ in range(repeats):
            started = time.perf_counter()
            strategy_of(agent, tree)
            warm.append(time.perf_counter() - started)
        measure = []
        for _ in range(repeats):
            started = time.perf_counter()
            exploitability_of_strategy(tree, strategy)
            measure.append(time.perf_counter() - started)
        timings.append(Timing(game_id, name, first, cold, statistics.median(warm), statistics.median(measure)))
        print(_line(timings[-1]), flush=True)
    return timings


def _line(timing: Timing) -> str:
    return (
        f"| {timing.game} | `{timing.agent}` | {timing.first_seconds:.3f} | {timing.cold_seconds:.3f} | "
        f"{timing.warm_seconds:.3f} | "
        f"{timing.exploitability_seconds * 1000:.1f} | {'pass' if timing.passes else 'FAIL'} |"
    )


HEADER = (
    "| game | agent | strategy, first (s) | strategy, cold (s) | strategy, warm (s) | exploitability (ms) | "
    f"cold <= {STRATEGY_TARGET:g} s and <= {EXPLOITABILITY_TARGET * 1000:g} ms |\n|---|---|---|---|---|---|---|"
)


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed repeats of warm calls (default 5)")
    parser.add_output("--out", help="also write the table to this Markdown file")
    args = parser.parse(argv)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores, load {load}; "
        f"{args.repeats} repeats"
    )
    print(HEADER)
    timings = [timing for game_id in GAMES for timing in time_game(game_id, args.repeats)]
    failed = [t.agent for t in timings if not t.passes and t.game == GAMES[0]]
    verdict = "all pass" if not failed else f"FAIL: {', '.join(failed)}"
    print(f"RLCard Leduc targets: {verdict}")
    if args.out is not None:
        lines = [
            f"Load average at the start: {load}.",
            "",
            HEADER,
            *(_line(t) for t in timings),
            "",
            f"RLCard Leduc targets: {verdict}",
        ]
        write_atomic(args.out, "\n".join(lines) + "\n")
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
