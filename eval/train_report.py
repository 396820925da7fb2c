"""What ``cfr-agents train`` reports of a run: the solver, the tree, the times and the exact NashConv
of the policy it saved, and the convergence curve as CSV."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Any

from cfr_agents.solvers import Solver
from cfr_agents.training import TrainingRun
from cfr_agents.tree import CompiledTree, FloatArray
from eval.exploitability import exploitability_of_strategy


def nash_conv(tree: CompiledTree, strategy: FloatArray) -> float:
    """The exact NashConv of ``strategy``: what :func:`cfr_agents.training.train` checks with."""
    return exploitability_of_strategy(tree, strategy).nash_conv


@dataclass(frozen=True)
class TrainReport:
    """What ``train --json`` prints."""

    game: str
    algo: str
    sampling: str
    parameters: dict[str, Any]
    seed: int
    iterations: int
    """The solver's iteration count at the end, the resumed checkpoint's included."""
    iterations_run: int
    """Iterations this run made: ``iterations - resumed_from`` when resuming."""
    resumed_from: int | None
    stopped_by: str
    units: str
    infosets: int
    decision_nodes: int
    terminals: int
    build_seconds: float
    compile_seconds: float
    solve_seconds: float
    """Time of this run's iterations."""
    check_seconds: float
    iterations_per_second: float | None
    """``iterations_run / solve_seconds``; ``None`` when no time was measured."""
    nash_conv: float
    exploitability: float
    peak_rss_mb: float
    out: str
    checkpoint: str | None
    policy_game: str
    """The saved policy's game: :attr:`game`, or the game it is a lossless reduction of (--suit-isomorphism)."""


def train_report(
    solver: Solver,
    training: TrainingRun,
    *,
    seed: int,
    resumed_from: int | None,
    compile_seconds: float,
    out: str,
    checkpoint: str | None,
    policy_game: str | None = None,
) -> TrainReport:
    """The report of ``training``, a run of ``solver`` whose policy was saved to ``out``."""
    tree = solver.tree
    parameters = dict(solver.parameters())
    return TrainReport(
        game=tree.game_id,
        algo=solver.algorithm,
        sampling=str(parameters["sampling"]),
        parameters=parameters,
        seed=seed,
        iterations=training.iterations,
        iterations_run=training.iterations_run,
        resumed_from=resumed_from,
        stopped_by=training.stopped_by,
        units=tree.units,
        infosets=tree.num_infosets,
        decision_nodes=tree.num_decision_nodes,
        terminals=tree.num_terminals,
        build_seconds=tree.build_seconds,
        compile_seconds=compile_seconds,
        solve_seconds=training.solve_seconds,
        check_seconds=training.check_seconds,
        iterations_per_second=training.iterations_per_second,
        nash_conv=training.nash_conv,
        exploitability=training.nash_conv / 2,
        peak_rss_mb=training.peak_rss_mb,
        out=out,
        checkpoint=checkpoint,
        policy_game=tree.game_id if policy_game is None else policy_game,
    )


def curve_csv(training: TrainingRun) -> str:
    """The curve as CSV: ``iteration,seconds,nash_conv``, one row per point of ``training.curve``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["iteration", "seconds", "nash_conv"])
    for point in training.curve:
        writer.writerow([point.iteration, f"{point.seconds:.6f}", repr(point.nash_conv)])
    return buffer.getvalue()
