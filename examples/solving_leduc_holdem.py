"""Wolff & Tan, "Solving Leduc Hold'em Counterfactual Regret Minimization" (Stanford), rerun with exact
evaluation.

    python examples/solving_leduc_holdem.py                          # the paper's setup: about 10 minutes
    python examples/solving_leduc_holdem.py --iterations 5000 --hands 2000   # a quick look

The paper trains PureCFR, PureCFR+ and MCCFR on RLCard's Leduc for 35,000 iterations and, every 1,000,
plays 10,000 hands against a random agent, RLCard's NFSP and RLCard's CFR, and estimates exploitability
by Monte Carlo sampling at chance nodes. Here the same three systems -- PureCFR = ``cfr`` with ``pure``
sampling, PureCFR+ = ``cfr+`` with ``pure``, MCCFR = ``cfr`` with ``external`` sampling -- and our
full-tree DCFR beside them are scored every 1,000 iterations by:

* the exact exploitability (NashConv / 2, in BB) on the compiled tree;
* against each opponent, the exact value per hand (both agents' exact strategies on the tree) and the
  sampled value of a 10,000-hand duplicate match in RLCard's env, with its standard error.

By default the opponents are played by their exact strategy tables (``eval.strategy_of``, the same
distribution of play as the live agents, which ``cfr-agents match`` plays and the test suite checks
against the exact values); ``--live-opponents`` asks the live agents at every decision (NFSP's network
forward pass makes that several times slower).

Work runs on ``--workers`` local processes, sent as specs: systems train in parallel and write a policy
file every 1,000 iterations; every (policy file, opponent) match is a job with its own seeds from
``SeedSequence(seed, spawn_key=...)``, so the numbers do not depend on the number of workers.
Writes ``solving_leduc_holdem.csv`` (one row per system, checkpoint and opponent) and
``solving_leduc_holdem.png`` (four panels, as the paper's Figure 1) to ``--out-dir``.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from adapters.inputs import InputError
from cfr_agents import make_solver
from cfr_agents.cli.common import non_negative_int, one_line, positive_int
from cfr_agents.files import check_outputs, write_atomic
from cfr_agents.jobs import LocalPool, default_workers
from cfr_agents.tree import load_tree
from eval import exploitability
from eval.match import Agents, MatchReport, MatchSpec, check_hands
from eval.tournament import run_job

GAME = "rlcard:leduc-holdem"
SYSTEMS: dict[str, tuple[str, str]] = {
    "PureCFR": ("cfr", "pure"),
    "PureCFR+": ("cfr+", "pure"),
    "MCCFR": ("cfr", "external"),
    "DCFR": ("dcfr", "none"),
}
"""The paper's three systems as (update rule, sampling), and our full-tree DCFR."""
OPPONENTS = ("random", "rlcard-nfsp", "rlcard-cfr")
RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class TrainJob:
    system: str
    index: int
    iterations: int
    every: int
    seed: int
    directory: str


@dataclass(frozen=True)
class Checkpoint:
    system: str
    iteration: int
    train_seconds: float
    nash_conv: float
    exploitability: float
    policy_file: str
    cpu_seconds: float
    """CPU time of the worker to train up to here, evaluate and save."""


def play(spec: MatchSpec) -> tuple[MatchReport, float]:
    """One match job and the CPU seconds it took its worker."""
    started = time.process_time()
    report = run_job(spec)
    assert isinstance(report, MatchReport)
    return report, time.process_time() - started


def train(job: TrainJob) -> list[Checkpoint]:
    """Train one system, saving its average policy and exact exploitability every ``job.every`` iterations."""
    algorithm, sampling = SYSTEMS[job.system]
    tree = load_tree(GAME)
    rng = np.random.default_rng(np.random.SeedSequence(job.seed, spawn_key=(0, job.index)))
    solver = make_solver(tree, algorithm, sampling=sampling, rng=None if sampling == "none" else rng)
    checkpoints, seconds, cpu = [], 0.0, time.process_time()
    while solver.iteration < job.iterations:
        started = time.perf_counter()
        solver.run(min(job.every, job.iterations - solver.iteration))
        seconds += time.perf_counter() - started
        policy = solver.average_policy()
        path = Path(job.directory) / f"{job.system}_{solver.iteration}.json"
        policy.save(path)
        score = exploitability(policy, tree)
        checkpoints.append(
            Checkpoint(
                job.system,
                solver.iteration,
                seconds,
                score.nash_conv,
                score.exploitability,
                str(path),
                time.process_time() - cpu,
            )
        )
    return checkpoints


def opponent_source(text: str) -> tuple[str, str]:
    """``LABEL=AGENT`` or ``AGENT`` (its own label)."""
    label, _, agent = text.partition("=")
    return (label, agent) if agent else (text, text)


def available_opponents(requested: Sequence[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(label, agent, how it was made) of each opponent that loads; the others are reported and skipped."""
    agents, found = Agents(), []
    for label, agent in requested:
        try:
            opponent = agents.opponent(agent, GAME)
        except InputError as error:
            print(f"skipping {label}: {one_line(str(error))}", file=sys.stderr)
            continue
        found.append((label, agent, opponent.trained))
    return found


def csv_rows(
    checkpoints: Sequence[Checkpoint], opponents: Sequence[tuple[str, str, str]], reports: Sequence[MatchReport]
) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "system",
            "algorithm",
            "sampling",
            "iteration",
            "train_seconds",
            "nash_conv_bb",
            "exploitability_bb",
            "opponent",
            "opponent_agent",
            "hands",
            "sampled_bb",
            "standard_error_bb",
            "exact_bb",
        ]
    )
    by_checkpoint = iter(reports)
    for checkpoint in checkpoints:
        algorithm, sampling = SYSTEMS[checkpoint.system]
        for label, agent, _ in opponents:
            report = next(by_checkpoint)
            writer.writerow(
                [
                    checkpoint.system,
                    algorithm,
                    sampling,
                    checkpoint.iteration,
                    f"{checkpoint.train_seconds:.3f}",
                    repr(checkpoint.nash_conv),
                    repr(checkpoint.exploitability),
                    label,
                    agent,
                    report.hands,
                    repr(report.mean),
                    repr(report.standard_error),
                    _cell(report.exact),
                ]
            )
    return out.getvalue()


def _cell(value: float | None) -> str:
    return "" if value is None else repr(value)


def figure(
    checkpoints: Sequence[Checkpoint],
    opponents: Sequence[tuple[str, str, str]],
    reports: Sequence[MatchReport],
    hands: int,
    out: Path,
) -> None:
    """Four panels as the paper's Figure 1: value against each of (up to) three opponents, exploitability."""
    from eval.plots import pyplot, save_figure

    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    panels = list(axes.flat)
    colors = dict(zip(SYSTEMS, ("tab:blue", "tab:orange", "tab:green", "tab:red"), strict=True))
    n = len(opponents)
    for o, (label, _, trained) in enumerate(opponents[:3]):
        ax = panels[o]
        for system in SYSTEMS:
            rows = [(c, reports[i * n + o]) for i, c in enumerate(checkpoints) if c.system == system]
            if not rows:
                continue
            xs = [c.iteration for c, _ in rows]
            ax.errorbar(
                xs,
                [r.mean for _, r in rows],
                yerr=[1.96 * r.standard_error for _, r in rows],
                fmt="o",
                markersize=2.5,
                linewidth=0.8,
                alpha=0.55,
                color=colors[system],
            )
            if all(r.exact is not None for _, r in rows):
                ax.plot(xs, [r.exact for _, r in rows], color=colors[system], label=system)
        ax.axhline(0, color="grey", linewidth=0.6)
        ax.set_title(f"against {label} ({trained})", fontsize=9)
        ax.set_xlabel("iterations")
        ax.set_ylabel("BB per hand")
        ax.legend(fontsize=8, title=f"line: exact; dots: {hands:,} hands ± 95%", title_fontsize=7)
    for o in range(len(opponents[:3]), 3):
        panels[o].text(0.5, 0.5, "opponent not available", ha="center", va="center")
        panels[o].set_axis_off()
    ax = panels[3]
    for system in SYSTEMS:
        mine = [c for c in checkpoints if c.system == system]
        ax.plot([c.iteration for c in mine], [c.exploitability for c in mine], color=colors[system], label=system)
    ax.set_yscale("log")
    ax.set_xlabel("iterations")
    ax.set_ylabel("exploitability (BB), exact")
    ax.set_title("exact exploitability (NashConv / 2)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle("RLCard Leduc Hold'em: the Stanford experiment with exact evaluation", fontsize=11)
    fig.tight_layout()
    save_figure(fig, out)


def summary(
    checkpoints: Sequence[Checkpoint],
    opponents: Sequence[tuple[str, str, str]],
    reports: Sequence[MatchReport],
    marks: Sequence[int],
) -> str:
    lines = [
        "exact exploitability (BB; 1 BB = 1000 mbb) at iteration:",
        "| system | " + " | ".join(f"{m:,}" for m in marks) + " |",
        "|---|" + "---:|" * len(marks),
    ]
    for system in SYSTEMS:
        values = {c.iteration: c.exploitability for c in checkpoints if c.system == system}
        lines.append(f"| {system} | " + " | ".join(f"{values[m]:.4g}" if m in values else "" for m in marks) + " |")
    last = max(c.iteration for c in checkpoints)
    lines += [
        "",
        f"value per hand at iteration {last:,} (BB): sampled ± standard error [exact]",
        "| system | " + " | ".join(label for label, _, _ in opponents) + " |",
        "|---|" + "---:|" * len(opponents),
    ]
    n = len(opponents)
    for i, checkpoint in enumerate(checkpoints):
        if checkpoint.iteration == last:
            cells = [f"{r.mean:+.3f} ± {r.standard_error:.3f} [{_exact(r)}]" for r in reports[i * n : (i + 1) * n]]
            lines.append(f"| {checkpoint.system} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _exact(report: MatchReport) -> str:
    return "n/a" if report.exact is None else f"{report.exact:+.3f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=positive_int, default=35_000, help="per system (default 35,000)")
    parser.add_argument("--every", type=positive_int, default=1_000, help="evaluate every N iterations (1,000)")
    parser.add_argument("--hands", type=int, default=10_000, help="hands per sampled evaluation (10,000)")
    parser.add_argument(
        "--opponent",
        action="append",
        metavar="[LABEL=]AGENT",
        help=f"an opponent: a registry name or a model/policy file; repeat (default: {', '.join(OPPONENTS)})",
    )
    parser.add_argument("--systems", nargs="+", choices=list(SYSTEMS), default=list(SYSTEMS))
    parser.add_argument("--live-opponents", action="store_true", help="ask the live agents at every decision")
    parser.add_argument("--workers", type=positive_int, default=None, help="local processes (default: cores)")
    parser.add_argument("--seed", type=non_negative_int, default=0)
    parser.add_argument("--out-dir", default=str(RESULTS), help="where to write the CSV and PNG (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except InputError as error:
        print(f"solving_leduc_holdem.py: error: {one_line(str(error))}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    from eval.plots import pyplot

    check_hands(args.hands)
    if args.every > args.iterations:
        raise InputError(f"--every {args.every} is more than --iterations {args.iterations}")
    pyplot()  # refuse now, not after ten minutes, when matplotlib is missing
    out_dir = Path(args.out_dir)
    if not out_dir.is_dir():
        raise InputError(f"--out-dir {args.out_dir!r} is not a directory")
    csv_path, png_path = out_dir / "solving_leduc_holdem.csv", out_dir / "solving_leduc_holdem.png"
    check_outputs(csv_path, png_path)
    opponents = available_opponents([opponent_source(o) for o in (args.opponent or OPPONENTS)])
    if not opponents:
        raise InputError("no opponent is available")
    workers = args.workers or default_workers()
    started = time.perf_counter()
    pool = LocalPool(workers)
    with tempfile.TemporaryDirectory(prefix="solving-leduc-") as directory, pool.kept():  # one start-up, two phases
        jobs = [
            TrainJob(system, i, args.iterations, args.every, args.seed, directory)
            for i, system in enumerate(args.systems)
        ]
        trained = pool.map(train, jobs, lambda job, _: print(f"trained {job.system}", file=sys.stderr))
        checkpoints = [c for runs in trained for c in runs]
        print(f"training and exact exploitability: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        specs = [
            MatchSpec(
                GAME, (c.policy_file, agent), args.hands, args.seed, spawn_key=(1, i, o), tables=not args.live_opponents
            )
            for i, c in enumerate(checkpoints)
            for o, (_, agent, _) in enumerate(opponents)
        ]
        done = [0]

        def progress(spec: MatchSpec, result: tuple[MatchReport, float]) -> None:
            done[0] += 1
            if done[0] % max(1, len(specs) // 10) == 0 or done[0] == len(specs):
                print(f"matches: {done[0]}/{len(specs)} ({time.perf_counter() - started:.0f} s)", file=sys.stderr)

        played = pool.map(play, specs, progress)
    matches = [report for report, _ in played]
    elapsed = time.perf_counter() - started
    cpu = sum(cpu for _, cpu in played) + sum(runs[-1].cpu_seconds for runs in trained)
    write_atomic(csv_path, csv_rows(checkpoints, opponents, matches))
    figure(checkpoints, opponents, matches, args.hands, png_path)
    marks = sorted({m for m in (args.every, 5 * args.every, 10 * args.every, args.iterations) if m <= args.iterations})
    print(summary(checkpoints, opponents, matches, marks))
    hands = len(matches) * args.hands
    print(
        f"{len(checkpoints)} checkpoints, {hands:,} hands on {workers} workers in {elapsed:.0f} s "
        f"({math.floor(elapsed / 60)} min {elapsed % 60:.0f} s; the workers' CPU time {cpu:.0f} s, "
        f"load average {os.getloadavg()[0]:.1f}); wrote {csv_path} and {png_path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
