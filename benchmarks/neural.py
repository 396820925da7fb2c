"""Neural CFR side by side: our Deep CFR and SD-CFR, OpenSpiel's PyTorch Deep CFR, and our tabular
external-sampling MCCFR, on the same machine with the same thread count, scored exactly.

Run from the repository root (``make bench-neural``)::

    .venv/bin/python benchmarks/neural.py [--game G] [--minutes 5,20] [--seeds 3,1] [--checks N] [--out FILE.md]

Each (contender, seed) runs in a fresh process, pinned to one core, on one torch thread, and trains until
its budget of training time is spent: CPU seconds of its process, which on an idle core are wall seconds
and which another process on the machine does not inflate. ``--parallel`` runs go at once, each on its own
core. Seed 0 trains for the longest budget and is scored at every shorter budget on the way; the other
seeds train for the budgets that ask for them. Every run is also scored exactly at ``--checks`` evenly
spaced times; the scoring (for Deep CFR, training the average-strategy network on the strategy memory as
it is then) is not counted as training. The table gives exploitability (NashConv / 2, in the game's
units) at each budget (the median over seeds), and when each contender first reached OpenSpiel's value
at the longest budget.

OpenSpiel's Deep CFR runs with the settings of its own example (``deep_cfr_pytorch.py``), iteration by
iteration through the solver's own methods. It is scored two ways: as OpenSpiel's ``nash_conv`` sees its
``action_probabilities`` (a softmax over all actions, cut to the legal ones *without* renormalising:
the probabilities of a state may sum to less than 1), and renormalised over the legal actions.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

import numpy as np

from benchmarks.report import OneLineParser, Table, load_average, machine_facts, now, one_line_errors, progress, verdict
from cfr_agents.files import write_atomic
from eval.plots import pyplot, save_figure

CONTENDERS = ("sd-cfr", "deep-cfr", "openspiel-deep-cfr", "mccfr-external")
OPENSPIEL_EXAMPLE: dict[str, Any] = {
    "policy_network_layers": (64,),
    "advantage_network_layers": (64,),
    "num_traversals": 375,
    "reinitialize_advantage_networks": True,
    "learning_rate": 1e-3,
    "batch_size_advantage": 256,
    "batch_size_strategy": 256,
    "memory_capacity": 100_000,
    "policy_network_train_steps": 2500,
    "advantage_network_train_steps": 375,
}
"""The settings of OpenSpiel's ``examples/deep_cfr_pytorch.py``."""
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "neural.md"
RIVALS = {"openspiel-deep-cfr": "OpenSpiel's Deep CFR", "mccfr-external": "tabular MCCFR"}
"""The contenders that are not neural CFR of ours, as plot titles name them."""
TARGETS: dict[str, tuple[tuple[str, float, float], ...]] = {
    "openspiel:leduc_poker": (("sd-cfr", 5.0, 0.10), ("sd-cfr", 20.0, 0.06), ("deep-cfr", 5.0, 0.15)),
    "openspiel:kuhn_poker": (("sd-cfr", 1.0, 0.01), ("deep-cfr", 1.0, 0.01)),
}
"""Per game: (contender, minutes, most exploitability) that the median at that budget must meet."""
HALF_OF_OPENSPIEL = ("sd-cfr", "deep-cfr")
"""Where OpenSpiel's Deep CFR runs, each of these must be at most half of it at every budget (medians, as scored
by OpenSpiel's own ``exploitability``)."""


def run_one(
    contender: str, game_id: str, seed: int, marks: Sequence[float], preset: str, overrides: dict[str, Any]
) -> dict[str, Any]:
    """In this process: train ``contender`` until the last of ``marks`` (CPU seconds of training), scored
    exactly at each mark."""
    import torch

    import adapters
    from adapters.tensors import encoder
    from cfr_agents.tree import compile_tree
    from eval.exploitability import exploitability_of_strategy

    torch.set_num_threads(1)
    game = adapters.load_game(game_id)
    tree = compile_tree(game)
    points: list[list[float]] = []
    step: Callable[[], None]
    scores: Callable[[], dict[str, float]]

    def score(strategy: np.ndarray) -> float:
        return float(exploitability_of_strategy(tree, strategy).nash_conv / 2)

    if contender in ("sd-cfr", "deep-cfr"):
        from cfr_agents.solvers.neural import make_neural_solver
        from eval.opponents.neural import settings_of

        solver = make_neural_solver(
            tree,
            encoder(game).of_keys(tree.infoset_keys),
            contender,
            settings_of(preset, overrides),
            rng=np.random.default_rng(seed),
        )
        step, scores = (lambda: solver.run(1)), (lambda: {"exact": score(solver.average_strategy())})
    elif contender == "mccfr-external":
        import cfr_agents

        sampled = cfr_agents.make_solver(tree, "cfr", sampling="external", rng=np.random.default_rng(seed))
        sampled.compile()
        step, scores = (lambda: sampled.run(1000)), (lambda: {"exact": score(sampled.average_strategy())})
    else:
        step, scores = _openspiel(game, tree, seed, score)
    trained = wall = 0.0
    iterations = 0
    labels: list[str] = []
    for mark in marks:
        while trained < mark:
            started, started_wall = time.process_time(), time.perf_counter()
            step()
            trained += time.process_time() - started
            wall += time.perf_counter() - started_wall
            iterations += 1
        scored = scores()
        labels = list(scored)
        points.append([mark, iterations, *scored.values(), trained, wall])
    return {"contender": contender, "seed": seed, "seconds": max(marks), "points": points, "labels": labels}


def _openspiel(
    game: Any, tree: Any, seed: int, score: Callable[[np.ndarray], float]
) -> tuple[Callable[[], None], Callable[[], dict[str, float]]]:
    """OpenSpiel's Deep CFR, one iteration per step, as its ``solve()`` loop runs them."""
    import random

    import pyspiel
    import torch
    from open_spiel.python import policy as openspiel_policy
    from open_spiel.python.pytorch import deep_cfr

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    pyspiel_game = pyspiel.load_game(game.game_id.removeprefix("openspiel:"))
    solver = deep_cfr.DeepCFRSolver(pyspiel_game, num_iterations=1, **OPENSPIEL_EXAMPLE)

    def step() -> None:
        for player in range(2):
            for _ in range(OPENSPIEL_EXAMPLE["num_traversals"]):
                solver._traverse_game_tree(solver._root_node, player)
            solver._reinitialize_advantage_network(player)
            solver._learn_advantage_network(player)
        solver._iteration += 1

    def scores() -> dict[str, float]:
        solver._reinitialize_policy_network()
        solver._learn_strategy_network()
        table = openspiel_policy.tabular_policy_from_callable(pyspiel_game, solver.action_probabilities)
        as_is = pyspiel.nash_conv(pyspiel_game, openspiel_policy.python_policy_to_pyspiel_policy(table)) / 2
        strategy = np.zeros(tree.action_mask.shape)  # read raw: its rows need not sum to 1
        for row, (key, actions) in enumerate(zip(tree.infoset_keys, tree.infoset_actions, strict=True)):
            strategy[row, : len(actions)] = table.action_probability_array[table.state_lookup[key], list(actions)]
        totals = strategy.sum(axis=1, keepdims=True)
        renormalised = strategy / np.where(totals > 0, totals, 1.0)
        return {"exact": float(as_is), "renormalised": score(renormalised)}

    return step, scores


def plan(budgets: Sequence[float], seeds: Sequence[int], checks: int) -> list[tuple[int, list[float]]]:
    """``(seed, marks)`` of each run: seed ``k`` trains for the longest budget that asks for ``k + 1`` seeds, and
    is scored at it, at every shorter budget and at ``checks`` evenly spaced times."""
    runs = []
    for seed in range(max(seeds)):
        longest = max(budget for budget, count in zip(budgets, seeds, strict=True) if count > seed)
        marks = {budget for budget in budgets if budget <= longest}
        marks |= {longest * (k + 1) / checks for k in range(checks)}
        runs.append((seed, sorted(marks)))
    return runs


def fresh(
    contender: str, game_id: str, seed: int, marks: Sequence[float], preset: str, overrides: str, core: int
) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--one", contender, "--game", game_id, "--seed", str(seed)]
    argv += ["--marks", ",".join(map(repr, marks)), "--preset", preset, "--overrides", overrides]
    done = subprocess.run(
        argv, check=True, capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, {core})
    )
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def table(game_id: str, runs: Sequence[dict[str, Any]], budgets: Sequence[float], seeds: Sequence[int]) -> Table:
    longest = max(budgets)
    reference = (
        statistics.median(
            point[2]
            for run in runs
            if run["contender"] == "openspiel-deep-cfr"
            for point in run["points"]
            if point[0] == longest
        )
        if any(run["contender"] == "openspiel-deep-cfr" for run in runs)
        else None
    )
    rows = []
    for contender in CONTENDERS:
        mine = [run for run in runs if run["contender"] == contender]
        if not mine:
            continue
        cells = []
        for budget, count in zip(budgets, seeds, strict=True):
            finals = [point for run in mine if run["seed"] < count for point in run["points"] if point[0] == budget]
            values = [point[2] for point in finals]
            renormalised = [point[3] for point in finals if len(point) > 5]
            cell = f"{statistics.median(values):.4f}" if values else "-"
            if renormalised:
                cell += f" (renormalised {statistics.median(renormalised):.4f})"
            cells.append(cell + f" [{len(values)} seed{'s' if len(values) != 1 else ''}]")
        reached = "-"
        if reference is not None:
            times = [point[0] for run in mine for point in run["points"] if point[2] <= reference]
            reached = f"{min(times):.0f} s" if times else "not within the budget"
        rows.append((contender, *cells, reached))
    headers = (
        "contender",
        *(f"exploitability at {budget / 60:g} min" for budget in budgets),
        "first at OpenSpiel's value",
    )
    notes = [] if reference is None else [f"OpenSpiel's value at {longest / 60:g} min: {reference:.4f}."]
    notes += targets(game_id, runs, budgets, seeds)
    return Table(f"{game_id}: exploitability (NashConv / 2) after training time", headers, tuple(rows), tuple(notes))


def median_at(runs: Sequence[dict[str, Any]], contender: str, budget: float, seeds: int) -> float | None:
    """The median exploitability of ``contender``'s first ``seeds`` seeds at ``budget`` seconds (as OpenSpiel
    scores OpenSpiel's policy: not renormalised)."""
    values = [
        point[2]
        for run in runs
        if run["contender"] == contender and run["seed"] < seeds
        for point in run["points"]
        if point[0] == budget
    ]
    return statistics.median(values) if values else None


def targets(game_id: str, runs: Sequence[dict[str, Any]], budgets: Sequence[float], seeds: Sequence[int]) -> list[str]:
    """One line per target of :data:`TARGETS` and :data:`HALF_OF_OPENSPIEL`, with the measured value and verdict."""
    lines = []
    count = dict(zip(budgets, seeds, strict=True))
    for contender, minutes, most in TARGETS.get(game_id, ()):
        budget = minutes * 60
        value = median_at(runs, contender, budget, count.get(budget, 1)) if budget in count else None
        shown = "not measured" if value is None else f"{value:.4f}: {verdict(value <= most)}"
        lines.append(f"Target: {contender} at {minutes:g} min <= {most:g}: {shown}.")
    for budget, seeds_here in count.items():
        theirs = median_at(runs, "openspiel-deep-cfr", budget, seeds_here)
        if theirs is None:
            continue
        for contender in HALF_OF_OPENSPIEL:
            ours = median_at(runs, contender, budget, seeds_here)
            if ours is not None:
                passed = verdict(ours <= theirs / 2)
                lines.append(
                    f"Target: {contender} at {budget / 60:g} min at most half of OpenSpiel's Deep CFR "
                    f"({theirs:.4f} / 2 = {theirs / 2:.4f}): {ours:.4f}: {passed}."
                )
    return lines


def plot(path: Path, game_id: str, runs: Sequence[dict[str, Any]]) -> None:
    """Exploitability against training time, one line per run (the longest runs thick), log-scaled."""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(9, 5.5))
    longest = max(run["seconds"] for run in runs)
    for index, contender in enumerate(CONTENDERS):
        for run in (run for run in runs if run["contender"] == contender):
            main_run = run["seconds"] == longest and run["seed"] == 0
            seconds = [point[0] for point in run["points"]]
            values = [point[2] for point in run["points"]]
            style = {"linewidth": 2.2 if main_run else 0.9, "alpha": 1.0 if main_run else 0.6, "marker": "o"}
            label = f"{contender} (seed {run['seed']})" if main_run else None
            axes.plot(seconds, values, color=f"C{index}", label=label, markersize=3, **style)
            if contender == "openspiel-deep-cfr" and main_run:
                renormalised = [point[3] for point in run["points"]]
                axes.plot(seconds, renormalised, color=f"C{index}", linestyle="--", label=f"{contender} renormalised")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("training time (CPU seconds on one core; exact checks excluded)")
    axes.set_ylabel("exploitability (NashConv / 2)")
    present = {run["contender"] for run in runs}
    rivals = [name for contender, name in RIVALS.items() if contender in present]
    axes.set_title(f"{game_id}: neural CFR" + (f" beside {' and '.join(rivals)}" if rivals else ""))
    axes.grid(True, which="both", alpha=0.25)
    axes.legend(fontsize=8)
    figure.tight_layout()
    save_figure(figure, path, dpi=110)


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="openspiel:leduc_poker")
    parser.add_argument("--minutes", default="5,20", help="training budgets, minutes")
    parser.add_argument("--seeds", default="3,1", help="seeds per budget")
    parser.add_argument("--checks", type=int, default=10, help="exact checks per run")
    parser.add_argument("--preset", default="fast", help="our neural preset")
    parser.add_argument("--overrides", default="{}", help="our hyperparameters beside the preset's, as JSON")
    parser.add_argument("--parallel", type=int, default=1, help="runs at once, each pinned to its own core")
    parser.add_argument("--contenders", default=",".join(CONTENDERS))
    parser.add_output("--out", suffixes=("", ".json", ".png"), default=DEFAULT_OUT)
    parser.add_argument("--replot", type=Path, help="redraw FILE.png and the table from a run's FILE.json, no training")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--marks", help=argparse.SUPPRESS)
    options = parser.parse(argv, child="one")
    if options.one:
        print(
            json.dumps(
                run_one(
                    options.one,
                    options.game,
                    options.seed,
                    [float(mark) for mark in options.marks.split(",")],
                    options.preset,
                    json.loads(options.overrides),
                )
            )
        )
        return 0
    budgets = [float(m) * 60 for m in options.minutes.split(",")]
    seeds = [int(s) for s in options.seeds.split(",")]
    if options.replot:
        saved = json.loads(options.replot.read_text())
        checked = {point[0] for run in saved for point in run["points"]}
        if max(budgets) not in checked:
            parser.error(
                f"--replot {options.replot}: no run of it was checked at {max(budgets):g} s; give the --game, "
                "--minutes and --seeds of the command that wrote it (the first line of its .md)"
            )
        result = table(options.game, saved, budgets, seeds)
        print(result.text())
        report = options.replot.with_suffix(".md")
        if report.exists():  # the run's header (command, machine, load) kept, its table drawn again
            header = report.read_text().split("\n## ", 1)[0].rstrip("\n")
            write_atomic(report, header + "\n\n" + result.markdown())
        plot(options.replot.with_suffix(".png"), options.game, saved)
        return 0
    contenders = [c for c in options.contenders.split(",") if c]
    if options.game.startswith("rlcard:"):
        contenders = [c for c in contenders if c != "openspiel-deep-cfr"]  # OpenSpiel's runs on its own games
    started_load = load_average()
    jobs = [
        (contender, seed, marks) for seed, marks in plan(budgets, seeds, options.checks) for contender in contenders
    ]
    jobs.sort(key=lambda job: -job[2][-1])  # the longest first, so that parallel runs end together
    cores = sorted(os.sched_getaffinity(0))[: max(1, options.parallel)]
    free: queue.SimpleQueue[int] = queue.SimpleQueue()
    for core in cores:
        free.put(core)

    def launch(job: tuple[str, int, list[float]]) -> dict[str, Any]:
        contender, seed, marks = job
        core = free.get()
        try:
            progress(f"neural: {contender} seed {seed}, {marks[-1] / 60:g} min, core {core}")
            return fresh(contender, options.game, seed, marks, options.preset, options.overrides, core)
        finally:
            free.put(core)

    with ThreadPoolExecutor(len(cores)) as pool:
        runs = list(pool.map(launch, jobs))
    write_atomic(options.out.with_suffix(".json"), json.dumps(runs) + "\n")  # first: the runs are the work
    result = table(options.game, runs, budgets, seeds)
    print(result.text())
    facts = {
        **machine_facts(),
        "torch threads": "1",
        "runs at once": f"{len(cores)}, each pinned to its own core",
        "our preset": f"{options.preset} {options.overrides}",
        "load average before / after": f"{started_load} / {load_average()}",
    }
    command = "benchmarks/neural.py " + " ".join(argv if argv is not None else sys.argv[1:])
    header = [
        "# Neural CFR side by side",
        "",
        f"`{command.strip()}`, {now()}. " + "; ".join(f"{k}: {v}" for k, v in facts.items()) + ".",
    ]
    write_atomic(options.out, "\n".join(header) + "\n\n" + result.markdown())
    plot(options.out.with_suffix(".png"), options.game, runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
