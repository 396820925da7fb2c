"""n-player yardsticks: our full-tree CFR on three-player Kuhn and Leduc against OpenSpiel's C++, and the
two-player kernel's speed before and after the n-player change, side by side in one run.

Run from the repository root::

    .venv/bin/python -m benchmarks.n_player [--before REV] [--budget SECONDS] [--out benchmarks/results/n_player]

1. **Speed**: ms per CFR and CFR+ iteration on ``leduc_poker(players=3)``, ours (kernel compiled first) against
   OpenSpiel's C++ ``CFRSolver`` and ``CFRPlusSolver``, each the best of batches; target: ours at least 100x faster
   for CFR+.
2. **Convergence**: solve seconds of each update rule to NashConv 1e-6 on ``kuhn_poker(players=3)`` (target: 0.1 s)
   and to 1e-3 on ``leduc_poker(players=3)`` (target: 60 s), checked twenty times per decade.
3. **Two players, before and after**: ms per CFR+ iteration of the two-player full-tree kernel on Leduc, its
   suit-isomorphic reduction and Liar's Dice, and of the external- and outcome-sampling kernels on Leduc, in this
   working tree and in a ``git worktree`` of ``--before`` (default ``HEAD~1``), each in a fresh process,
   alternating, the best of three rounds; the ratio shows whether the two-player paths kept their speed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KUHN3 = "openspiel:kuhn_poker(players=3)"
LEDUC3 = "openspiel:leduc_poker(players=3)"
TARGETS = {"speedup": 100.0, "kuhn3_seconds": 0.1, "leduc3_seconds": 60.0}
CONVERGENCE = ((KUHN3, 1e-6, "kuhn3_seconds"), (LEDUC3, 1e-3, "leduc3_seconds"))
RULES = ("cfr", "cfr+", "dcfr", "pcfr+", "dcfr+", "pdcfr+")
TWO_PLAYER_GAMES = ("openspiel:leduc_poker", "openspiel:leduc_poker(suit_isomorphism=True)", "openspiel:liars_dice")
TWO_PLAYER_SAMPLED = (("openspiel:leduc_poker", "external"), ("openspiel:leduc_poker", "outcome"))
"""Sampled kernels compared before and after: (game, scheme), CFR+ under that sampling."""
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "n_player"


def two_player_child() -> dict[str, float]:
    """In a fresh process, on whichever code ``PYTHONPATH`` puts first: ms per CFR+ iteration of each two-player
    game, full tree, and of each sampled kernel of :data:`TWO_PLAYER_SAMPLED`. It uses only what both versions have
    (``load_game``, ``compile_tree``, ``make_solver``)."""
    import numpy as np

    from adapters import load_game
    from benchmarks.cost import best_of
    from cfr_agents import make_solver
    from cfr_agents.tree import compile_tree

    figures = {}
    for game_id, sampling in [(game_id, "none") for game_id in TWO_PLAYER_GAMES] + list(TWO_PLAYER_SAMPLED):
        tree = compile_tree(load_game(game_id))
        solver = make_solver(tree, "cfr+", sampling=sampling, rng=np.random.default_rng(0))
        solver.run(1)  # compiles the kernel, or loads it from Numba's cache
        figures[row_name(game_id, sampling)] = best_of(solver.run, 5, 0.3) * 1e3
    return figures


def row_name(game_id: str, sampling: str) -> str:
    """The before-and-after table's name of a game under a sampling scheme (``"none"``: the full tree)."""
    name = game_id.removeprefix("openspiel:")
    return name if sampling == "none" else f"{name}, {sampling} sampling"


def two_player_side_by_side(before: str, rounds: int) -> dict[str, Any]:
    """:func:`two_player_child` in this tree and in a worktree of ``before``, alternating, the best of ``rounds``."""
    with tempfile.TemporaryDirectory() as scratch:
        worktree = Path(scratch) / "before"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(worktree), before],
            check=True,
            capture_output=True,
        )
        try:
            best: dict[str, dict[str, float]] = {"before": {}, "after": {}}
            for _ in range(rounds):
                for label, root in (("before", worktree), ("after", ROOT)):
                    env = {**os.environ, "PYTHONPATH": str(root)}
                    done = subprocess.run(
                        [sys.executable, __file__, "--two-player-child"],
                        check=True,
                        capture_output=True,
                        text=True,
                        env=env,
                    )
                    for game_id, value in json.loads(done.stdout.splitlines()[-1]).items():
                        best[label][game_id] = min(best[label].get(game_id, float("inf")), value)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], check=False)
    revision = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", before], check=True, capture_output=True, text=True
    ).stdout.strip()
    return {"before_revision": revision, **best}


def speed(rounds: int, batch_seconds: float) -> dict[str, dict[str, float]]:
    """ms per iteration on three-player Leduc, ours and OpenSpiel's C++, for CFR and CFR+."""
    import pyspiel

    from benchmarks.cost import best_of
    from cfr_agents import make_solver
    from cfr_agents.solvers import FullTreeSolver
    from cfr_agents.tree import load_tree

    tree = load_tree(LEDUC3, any_players=True)
    pyspiel_game = pyspiel.load_game(LEDUC3.removeprefix("openspiel:"))
    figures = {}
    for algorithm, cpp_solver in (("cfr", pyspiel.CFRSolver), ("cfr+", pyspiel.CFRPlusSolver)):
        ours = make_solver(tree, algorithm)
        assert isinstance(ours, FullTreeSolver)
        compile_seconds = ours.compile()
        cpp = cpp_solver(pyspiel_game)

        def cpp_step(iterations: int, cpp: Any = cpp) -> None:
            for _ in range(iterations):
                cpp.evaluate_and_update_policy()

        our_ms = best_of(ours.run, rounds, batch_seconds) * 1e3
        their_ms = best_of(cpp_step, 2, batch_seconds) * 1e3
        figures[algorithm] = {
            "ours_ms": our_ms,
            "openspiel_cpp_ms": their_ms,
            "ratio": their_ms / our_ms,
            "compile_seconds": compile_seconds,
        }
    return figures


def convergence(budget: float) -> dict[str, dict[str, Any]]:
    """Solve seconds and iterations of each rule to each game's NashConv target (``None``: not within ``budget``)."""
    from benchmarks.measure import nash_conv
    from benchmarks.report import progress
    from cfr_agents import make_solver
    from cfr_agents.solvers import FullTreeSolver
    from cfr_agents.training import log_spaced
    from cfr_agents.tree import load_tree

    figures: dict[str, dict[str, Any]] = {}
    for game_id, target, _ in CONVERGENCE:
        tree = load_tree(game_id, any_players=True)
        for rule in RULES:
            solver = make_solver(tree, rule)
            assert isinstance(solver, FullTreeSolver)
            compile_seconds = solver.compile()
            solve, value = 0.0, float("inf")
            for mark in log_spaced(20):
                started = time.perf_counter()
                solver.run(mark - solver.iteration)
                solve += time.perf_counter() - started
                value = nash_conv(tree, solver.average_strategy())
                if value <= target or solve >= budget:
                    break
            figures.setdefault(game_id, {})[rule] = {
                "target": target,
                "reached": value <= target,
                "seconds": solve,
                "iterations": solver.iteration,
                "nash_conv": value,
                "compile_seconds": compile_seconds,
            }
            progress(f"{game_id} {rule}: NashConv {value:.3g} after {solver.iteration:,} it, {solve:.3f} s")
    return figures


def tables(figures: dict[str, Any]) -> list[Any]:
    from benchmarks.report import Table, verdict

    rows = []
    for algorithm, f in figures["speed"].items():
        passed = f["ratio"] >= TARGETS["speedup"] if algorithm == "cfr+" else None
        rows.append(
            (
                algorithm,
                f"{f['ours_ms']:.2f}",
                f"{f['openspiel_cpp_ms']:,.0f}",
                f"{f['ratio']:,.0f}x",
                "-" if passed is None else f"{verdict(passed)} (>= {TARGETS['speedup']:g}x)",
            )
        )
    speed_table = Table(
        "Three-player Leduc: ms per iteration",
        ("algorithm", "ours", "OpenSpiel C++", "ratio", "target"),
        tuple(rows),
        ("Ours: the compiled kernel, compile time left out. Best of batches of at least 0.5 s each.",),
    )
    converge_rows = []
    for game_id, target, key in CONVERGENCE:
        runs = figures["convergence"][game_id]
        for rule, run in runs.items():
            converge_rows.append(
                (
                    game_id.removeprefix("openspiel:"),
                    rule,
                    f"{run['nash_conv']:.3g}",
                    f"{run['iterations']:,}",
                    f"{run['seconds']:.3f}",
                    f"{verdict(run['reached'] and run['seconds'] <= TARGETS[key])} "
                    f"(NashConv <= {target:g} in <= {TARGETS[key]:g} s)",
                )
            )
    converge_table = Table(
        "Convergence: solve seconds to the target NashConv",
        ("game", "rule", "NashConv", "iterations", "solve s", "target"),
        tuple(converge_rows),
        ("NashConv of the average strategy, checked twenty times per decade; compile time left out.",),
    )
    side = figures.get("two_player")
    out = [speed_table, converge_table]
    if side is not None:
        two_rows = tuple(
            (
                name,
                f"{side['before'][name]:.4g}",
                f"{side['after'][name]:.4g}",
                f"{side['after'][name] / side['before'][name]:.3f}",
            )
            for name in side["after"]
        )
        out.append(
            Table(
                f"Two players: ms per CFR+ iteration before ({side['before_revision']}) and after",
                ("game", "before", "after", "after / before"),
                two_rows,
                ("Each version in a fresh process, alternating, the best of three rounds of batches of 0.3 s.",),
            )
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--two-player-child"]:  # on whichever tree PYTHONPATH names: nothing else imported
        print(json.dumps(two_player_child()))
        return 0
    sys.path.insert(0, str(ROOT))
    from benchmarks.report import OneLineParser, one_line_errors

    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="HEAD~1", help="the revision the two-player kernel is compared with")
    parser.add_argument("--no-before", action="store_true", help="skip the before-and-after comparison")
    parser.add_argument("--budget", type=float, default=90.0, help="solve seconds per rule and game")
    parser.add_output("--out", suffixes=(".md", ".json"), default=DEFAULT_OUT, help="writes OUT.md and OUT.json")
    return one_line_errors(measure)(parser.parse(arguments), arguments)


def measure(options: argparse.Namespace, arguments: list[str]) -> int:
    """The three parts, printed and written to ``--out``'s ``.md`` and ``.json``."""
    from benchmarks.report import load_average, machine_facts, now, progress
    from cfr_agents.files import write_atomic

    facts = machine_facts()
    figures: dict[str, Any] = {}
    if not options.no_before:
        progress("two players, before and after")
        figures["two_player"] = two_player_side_by_side(options.before, 3)
    progress("three-player Leduc: speed")
    figures["speed"] = speed(3, 0.5)
    progress("convergence")
    figures["convergence"] = convergence(options.budget)
    made = tables(figures)
    text = "\n".join(table.text() for table in made)
    print(text)
    facts["load average at the end"] = load_average()
    command = "python -m benchmarks.n_player " + " ".join(arguments)
    header = [f"# n-player games ({now()})", "", f"Command: `{command.strip()}`", ""]
    header += [f"- {key}: {value}" for key, value in facts.items()]
    write_atomic(options.out.with_suffix(".md"), "\n".join(header) + "\n\n" + "\n".join(t.markdown() for t in made))
    write_atomic(options.out.with_suffix(".json"), json.dumps({"facts": facts, **figures}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
