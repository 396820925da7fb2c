"""Side-by-side benchmark of our solvers against OpenSpiel's and LiteEFG's (``make bench``).

Run from the repository root::

    .venv/bin/python benchmarks/solvers.py [--families full-tree,sampling] [--games NAMES] [--budget SECONDS]
                                           [--quick] [--seeds N] [--no-compile-timing] [--out DIR]

Families (one module each; shared measurement in :mod:`benchmarks.measure`, presentation in
:mod:`benchmarks.report`):

* ``full-tree`` (:mod:`benchmarks.full_tree`): our CFR family against OpenSpiel's C++ CFR/CFR+ and
  LiteEFG on OpenSpiel Kuhn and Leduc;
* ``sampling`` (:mod:`benchmarks.sampling`): our Monte Carlo CFR against OpenSpiel's C++ and Python
  MCCFR on OpenSpiel Leduc, RLCard Leduc and Liar's Dice.

Results go to stdout as plain-text tables and to ``--out`` as ``results.md``, ``curves.csv`` and one
``nash_conv_vs_time_<game>.png`` per game (full-tree and sampled solvers together), each written atomically.
"""

from __future__ import annotations

import importlib.util
import math
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

from benchmarks import full_tree, sampling
from benchmarks.measure import Settings
from benchmarks.report import (
    FamilyResult,
    OneLineParser,
    load_average,
    machine_facts,
    markdown_report,
    now,
    one_line_errors,
    write_curves,
    write_plot,
)
from cfr_agents.files import write_atomic


@dataclass(frozen=True)
class Family:
    games: tuple[str, ...]
    """Every game name the family knows."""
    default_games: tuple[str, ...]
    needs: tuple[str, ...]
    """Modules of the ``bench`` extra it imports."""


FAMILIES: dict[str, Family] = {
    "full-tree": Family(tuple(full_tree.GAMES), tuple(full_tree.GAMES), ("matplotlib", "LiteEFG")),
    "sampling": Family(tuple(sampling.GAMES), sampling.DEFAULT_GAMES, ("matplotlib",)),
}
DEFAULT_BUDGET = 30.0
QUICK_BUDGET = 2.0
DEFAULT_SEEDS = 3
DEFAULT_OUT = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Options:
    families: dict[str, tuple[str, ...]]
    """Selected family to the games it runs."""
    settings: Settings
    out: Path
    command: str


def _names(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name.strip() for name in text.split(",") if name.strip()))


def parse_options(argv: Sequence[str]) -> Options:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    names = ", ".join(FAMILIES)
    parser.add_argument("--families", default=",".join(FAMILIES), help=f"comma-separated subset of: {names}")
    known = ", ".join(dict.fromkeys(game for family in FAMILIES.values() for game in family.games))
    parser.add_argument("--games", help=f"comma-separated subset of: {known} (default: each family's own)")
    parser.add_argument("--budget", type=float, help=f"solve seconds per solver per game (default {DEFAULT_BUDGET:g})")
    parser.add_argument(
        "--quick", action="store_true", help=f"smoke run: budget {QUICK_BUDGET:g} s unless --budget, fewer speed rounds"
    )
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="seeds of the median rows (default 3)")
    parser.add_argument("--no-compile-timing", action="store_true", help="skip timing JIT compilation")
    parser.add_output("--out", suffixes=None, default=DEFAULT_OUT, help="output directory (default benchmarks/results)")
    options = parser.parse(argv)
    chosen = _names(options.families)
    if not chosen or any(name not in FAMILIES for name in chosen):
        parser.error(f"--families takes a comma-separated subset of {', '.join(FAMILIES)}, not {options.families!r}")
    families: dict[str, tuple[str, ...]] = {}
    if options.games is None:
        families = {name: FAMILIES[name].default_games for name in chosen}
    else:
        games = _names(options.games)
        unknown = [game for game in games if not any(game in FAMILIES[name].games for name in chosen)]
        if not games or unknown:
            parser.error(
                f"--games takes a comma-separated subset of {known} (for the chosen families), not {options.games!r}"
            )
        families = {name: tuple(game for game in games if game in FAMILIES[name].games) for name in chosen}
        idle = [name for name, run in families.items() if not run]
        if idle:
            parser.error(
                f"--games {options.games!r} gives family {idle[0]} nothing to run"
                f" (it runs {', '.join(FAMILIES[idle[0]].games)})"
            )
    budget = options.budget if options.budget is not None else (QUICK_BUDGET if options.quick else DEFAULT_BUDGET)
    if not (math.isfinite(budget) and budget > 0):
        parser.error(f"--budget must be a positive number of seconds, not {budget}")
    if options.seeds < 1:
        parser.error(f"--seeds must be a positive number, not {options.seeds}")
    needed = dict.fromkeys(module for name in families for module in FAMILIES[name].needs)
    missing = [module for module in needed if importlib.util.find_spec(module) is None]
    if missing:
        parser.error(f"{missing[0]} is not installed; install the bench extra: .venv/bin/pip install -e '.[bench]'")
    settings = Settings(
        budget=budget,
        speed_rounds=3 if options.quick else 9,
        batch_seconds=0.03 if options.quick else 0.1,
        seeds=options.seeds,
        compile_timing=not options.no_compile_timing,
    )
    return Options(families, settings, options.out, shlex.join(sys.orig_argv))


def run_families(options: Options) -> list[FamilyResult]:
    runners: dict[str, Callable[[tuple[str, ...]], FamilyResult]] = {
        "full-tree": lambda games: full_tree.run(games, options.settings),
        "sampling": lambda games: sampling.run(games, options.settings, options.families.get("full-tree", ())),
    }
    return [runners[name](games) for name, games in options.families.items()]


def write_results(
    options: Options, facts: dict[str, str], notes: Sequence[str], results: Sequence[FamilyResult]
) -> None:
    out = options.out
    sections = [result.section for result in results]
    write_atomic(out / "results.md", markdown_report(options.command, facts, notes, sections))
    runs = [run for result in results for run in result.runs]
    write_curves(out / "curves.csv", runs)
    figures = [figure for result in results for figure in result.figures]
    for game in dict.fromkeys(figure.game for figure in figures):
        same = [figure for figure in figures if figure.game == game]
        thresholds = sorted({value for figure in same for value in figure.thresholds})
        plotted = [run for run in runs if run.game == game and run.seed == 0]
        write_plot(out / f"nash_conv_vs_time_{game}.png", same[0].title, same[0].units, plotted, thresholds)


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(sys.argv[1:] if argv is None else argv)
    started = time.perf_counter()
    facts = machine_facts()
    results = run_families(options)
    facts["load average at the end (1, 5, 15 min)"] = load_average()
    notes = [note for result in results for note in result.notes]
    header = [f"date: {now()}", f"command: {options.command}"]
    header += [f"{name}: {value}" for name, value in facts.items()] + notes
    print("\n".join(header) + "\n")
    for result in results:
        print(f"#### {result.section.name}\n")
        print("\n".join(table.text() for table in result.section.tables))
    write_results(options, facts, notes, results)
    print(f"wrote {options.out}/results.md, curves.csv and the plots; {time.perf_counter() - started:.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
