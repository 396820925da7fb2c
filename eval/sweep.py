"""Parameter sweeps: train every combination of a grid over several seeds, checkpointing each job.

A job is one (configuration, seed): :func:`train_job` trains it in its own directory
``DIR/jobs/<configuration>-seed<k>/``, measuring NashConv at log-spaced iterations (ten per decade)
and stopping at the first mark where a target is met, at an iteration cap or at a time limit. Marks
make "iterations to the target" independent of timing, so the results (all but the seconds) are the
same for any number of workers, on Ray or not, and after a retry. Every ``checkpoint_every`` seconds
the job writes ``progress.json`` (its curve so far) and then ``checkpoint.npz`` (the solver's state);
a retried or rerun job resumes from them, and a finished job's ``result.json`` is reused as it is.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from adapters import load_game
from adapters.errors import InputError
from cfr_agents.checkpoint import load_checkpoint, save_checkpoint
from cfr_agents.files import write_atomic
from cfr_agents.solvers import ALGORITHMS, Solver, make_solver
from cfr_agents.solvers.sampling import check_sampling
from cfr_agents.training import log_spaced
from cfr_agents.tree import compile_tree
from eval.exploitability import exploitability_of_strategy

RULE_KEYS = ("alpha", "beta", "gamma")
SAMPLING_KEYS = ("epsilon", "averaging", "chance_draws")
BATCH_SECONDS = 0.5
"""With a time limit, iterations run in batches of about this long between marks."""


@dataclass(frozen=True)
class Configuration:
    """One point of the grid: the update rule's overrides and the sampling options."""

    values: tuple[tuple[str, float | str], ...]

    @property
    def name(self) -> str:
        return ",".join(f"{key}={value}" for key, value in self.values) or "default"


def parse_grid(text: str, algorithm: str, sampling: str) -> list[Configuration]:
    """``"alpha=1,1.5;gamma=1,2"`` -> every combination; keys and values are checked here."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    axes: dict[str, list[float | str]] = {}
    for part in filter(None, (piece.strip() for piece in text.split(";"))):
        key, equals, values = part.partition("=")
        key = key.strip()
        if not equals or not values.strip():
            raise InputError(f"--grid part {part!r} is not KEY=V1,V2,...")
        if key in axes:
            raise InputError(f"--grid names {key!r} twice")
        if key in RULE_KEYS and algorithm != "dcfr":
            raise InputError(f"--grid key {key!r} applies to --algo dcfr only")
        if key in SAMPLING_KEYS and sampling == "none":
            raise InputError(f"--grid key {key!r} applies to sampled solvers only (give --sampling)")
        if key not in RULE_KEYS + SAMPLING_KEYS:
            raise InputError(f"unknown --grid key {key!r}; choose from {', '.join(RULE_KEYS + SAMPLING_KEYS)}")
        axes[key] = [_value(key, value.strip()) for value in values.split(",")]
    if not axes:
        raise InputError("--grid is empty; give KEY=V1,V2[;KEY=...]")
    combinations = itertools.product(*axes.values())
    configurations = [Configuration(tuple(zip(axes, combo, strict=True))) for combo in combinations]
    for configuration in configurations:
        _settings(algorithm, sampling, configuration)  # refuse what does not combine, before any job runs
    return configurations


def _value(key: str, text: str) -> float | str:
    if key in ("averaging", "chance_draws"):
        return text
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"--grid value {text!r} of {key!r} is not a number") from None
    if math.isnan(value):
        raise InputError(f"--grid value of {key!r} is nan")
    return value


def _settings(algorithm: str, sampling: str, configuration: Configuration) -> dict[str, Any]:
    values = dict(configuration.values)
    overrides: dict[str, Any] = {k: float(v) for k, v in values.items() if k in RULE_KEYS}
    rule = replace(ALGORITHMS[algorithm], **overrides)
    averaging = values.get("averaging")
    epsilon = values.get("epsilon")
    chance_draws = values.get("chance_draws")
    if sampling != "none":
        check_sampling(
            sampling,
            rule,
            None if averaging is None else str(averaging),
            None if epsilon is None else float(epsilon),
            None if chance_draws is None else str(chance_draws),
        )
    return {
        "rule": {k: getattr(rule, k) for k in RULE_KEYS},
        "averaging": averaging,
        "epsilon": epsilon,
        "chance_draws": chance_draws,
    }


def parse_seeds(text: str) -> list[int]:
    """``"0-4"`` or ``"0,3,7"`` (or both, ``"0-2,9"``): distinct non-negative seeds in order."""
    seeds: list[int] = []
    try:
        for part in text.split(","):
            first, dash, last = part.strip().partition("-")
            seeds.extend(range(int(first), int(last) + 1) if dash else [int(first)])
    except ValueError:
        raise InputError(f"--seeds {text!r} is not a list like 0-4 or 0,3,7") from None
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise InputError(f"--seeds {text!r} must name distinct non-negative seeds")
    return seeds


@dataclass(frozen=True)
class Stop:
    iterations: int | None
    target_nash_conv: float | None
    time_limit: float | None


def jobs(
    directory: Path,
    game_id: str,
    algorithm: str,
    sampling: str,
    configurations: Sequence[Configuration],
    seeds: Sequence[int],
    stop: Stop,
    checkpoint_every: float,
) -> list[dict[str, Any]]:
    """One spec for :func:`train_job` per (configuration, seed)."""
    game_id = load_game(game_id).game_id
    return [
        {
            "key": f"{configuration.name}-seed{seed}",
            "configuration": configuration.name,
            "directory": str(directory / "jobs" / f"{configuration.name}-seed{seed}"),
            "game_id": game_id,
            "algorithm": algorithm,
            "sampling": sampling,
            "settings": _settings(algorithm, sampling, configuration),
            "seed": seed,
            "iterations": stop.iterations,
            "target_nash_conv": stop.target_nash_conv,
            "time_limit": stop.time_limit,
            "checkpoint_every": checkpoint_every,
        }
        for configuration in configurations
        for seed in seeds
    ]


def train_job(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Train one configuration and seed (a spec of :func:`jobs`), resuming from the job directory's
    checkpoint if there is one."""
    directory, game_id, algorithm, sampling, settings, seed = (
        spec[name] for name in ("directory", "game_id", "algorithm", "sampling", "settings", "seed")
    )
    iterations, target_nash_conv, time_limit = spec["iterations"], spec["target_nash_conv"], spec["time_limit"]
    checkpoint_every = spec["checkpoint_every"]
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    done = folder / "result.json"
    if done.exists():
        finished: dict[str, Any] = json.loads(done.read_text())
        return finished
    write_atomic(folder / "worker.pid", f"{os.getpid()}\n")  # which process runs the job, for operators
    tree = compile_tree(load_game(game_id))
    checkpoint_path, progress_path = folder / "checkpoint.npz", folder / "progress.json"
    curve: list[list[float]] = []  # [iteration, solve seconds, NashConv]
    if checkpoint_path.exists() and progress_path.exists():
        solver: Solver = load_checkpoint(checkpoint_path).solver(tree)
        curve = [point for point in json.loads(progress_path.read_text())["curve"] if point[0] <= solver.iteration]
        assert curve and curve[-1][0] == solver.iteration, "a checkpoint is always written at a mark"
    else:
        rule = replace(ALGORITHMS[algorithm], **settings["rule"])
        solver = make_solver(
            tree,
            algorithm,
            rule,
            sampling=sampling,
            rng=np.random.default_rng(seed),
            averaging=settings["averaging"],
            epsilon=settings["epsilon"],
            chance_draws=settings["chance_draws"],
        )
    solve = curve[-1][1] if curve else 0.0
    marks = (mark for mark in log_spaced() if mark > solver.iteration)
    mark = next(marks)
    last_save = time.monotonic()
    stopped_by = ""
    while not stopped_by:
        goal = mark if iterations is None else min(mark, iterations)
        if time_limit is not None and solver.iteration > 0:
            rate = solver.iteration / max(solve, 1e-9)
            goal = min(goal, solver.iteration + max(1, int(rate * BATCH_SECONDS)))
        started = time.perf_counter()
        solver.run(goal - solver.iteration)
        solve += time.perf_counter() - started
        at_mark = solver.iteration == mark
        stopped_by = (
            "iterations"
            if iterations is not None and solver.iteration >= iterations
            else "time_limit"
            if time_limit is not None and solve >= time_limit
            else ""
        )
        if at_mark or stopped_by:
            nash_conv = exploitability_of_strategy(tree, solver.average_strategy()).nash_conv
            curve.append([solver.iteration, solve, nash_conv])
            if target_nash_conv is not None and nash_conv <= target_nash_conv:
                stopped_by = "target_nash_conv"
            if at_mark:
                mark = next(marks)
            if stopped_by or time.monotonic() - last_save >= checkpoint_every:
                write_atomic(progress_path, json.dumps({"iteration": solver.iteration, "curve": curve}))
                save_checkpoint(checkpoint_path, solver, seed)
                last_save = time.monotonic()
    reached = next((point for point in curve if target_nash_conv is not None and point[2] <= target_nash_conv), None)
    result = {
        "iterations": solver.iteration,
        "solve_seconds": solve,
        "nash_conv": curve[-1][2],
        "stopped_by": stopped_by,
        "target_iterations": None if reached is None else int(reached[0]),
        "target_seconds": None if reached is None else reached[1],
        "curve": curve,
    }
    write_atomic(done, json.dumps(result))
    return result


@dataclass(frozen=True)
class Spread:
    mean: float
    std: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        return cls(
            statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0, min(values), max(values)
        )


@dataclass(frozen=True)
class Summary:
    """One configuration over its seeds."""

    configuration: str
    seeds: int
    nash_conv: Spread
    reached: int
    """Seeds that reached the target (0 without one)."""
    target_iterations: Spread | None
    target_seconds: Spread | None
    """Over the seeds that reached the target, when all did."""


def summarise(
    configurations: Sequence[Configuration], seeds: Sequence[int], results: Mapping[str, Any]
) -> list[Summary]:
    summaries = []
    for configuration in configurations:
        runs = [results[f"{configuration.name}-seed{seed}"] for seed in seeds]
        reached = [run for run in runs if run["target_iterations"] is not None]
        complete = len(reached) == len(runs)
        summaries.append(
            Summary(
                configuration=configuration.name,
                seeds=len(runs),
                nash_conv=Spread.of([run["nash_conv"] for run in runs]),
                reached=len(reached),
                target_iterations=Spread.of([run["target_iterations"] for run in reached]) if complete else None,
                target_seconds=Spread.of([run["target_seconds"] for run in reached]) if complete else None,
            )
        )
    return summaries


def best(summaries: Sequence[Summary]) -> Summary:
    """Fastest to the target on average among those whose every seed reached it; else lowest mean NashConv."""
    timed = [summary for summary in summaries if summary.target_seconds is not None]
    if timed:
        return min(timed, key=lambda summary: summary.target_seconds.mean if summary.target_seconds else 0.0)
    return min(summaries, key=lambda summary: summary.nash_conv.mean)
