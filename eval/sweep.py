"""Parameter sweeps: train every combination of a grid over several seeds, checkpointing each job.

A job is one (configuration, seed): :func:`train_job` trains it in its own directory
``DIR/jobs/<configuration>-seed<k>/``, measuring NashConv at log-spaced iterations (ten per decade)
and stopping at the first mark where a target is met, at an iteration cap or at a time limit. Marks
make "iterations to the target" independent of timing, so the results (all but the seconds) are the
same for any number of workers, on Ray or not, and after a retry. Every ``checkpoint_every`` seconds
the job writes ``progress.json`` (its curve so far) and then ``checkpoint.npz`` (the solver's state);
a retried or rerun job resumes from them (one killed before its first checkpoint starts afresh), and a finished
job's ``result.json`` is reused as it is.

Each job directory also holds ``spec.json``, the complete settings of the work stored there. A rerun in
the same directory reuses a result only for the same settings. With other stopping rules it extends the
stored run when that run is the start of the new one (a result that ran 200 iterations extends to 500), and
refuses, naming the setting, when it is not (fewer iterations than already run, a target the run passed
on its way) or when the job itself differs (game, algorithm, sampling, rule or sampling options).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from adapters import load_game
from adapters.inputs import InputError, ParameterError, read_json
from cfr_agents.checkpoint import load_checkpoint, save_checkpoint
from cfr_agents.files import write_atomic
from cfr_agents.solvers import ALGORITHMS, TUNABLE, Solver, make_solver
from cfr_agents.solvers.sampling import check_sampling
from cfr_agents.training import log_spaced
from cfr_agents.tree import compile_tree
from eval.exploitability import exploitability_of_strategy

RULE_KEYS = tuple(sorted({key for keys in TUNABLE.values() for key in keys}))
"""The grid keys that set the update rule, for the algorithms of :data:`~cfr_agents.solvers.TUNABLE`."""
SAMPLING_KEYS = ("epsilon", "averaging", "chance_draws")
MAX_JOBS = 100_000
"""The most jobs (configurations times seeds) a sweep takes: each is a directory and at least a solver run."""
BATCH_SECONDS = 0.5
"""With a time limit, iterations run in batches of about this long between marks."""


@dataclass(frozen=True)
class Configuration:
    """One point of the grid: the update rule's overrides and the sampling options."""

    values: tuple[tuple[str, float | str], ...]

    @property
    def name(self) -> str:
        return ",".join(f"{key}={value}" for key, value in self.values) or "default"


def parse_grid(grid: str, algorithm: str, sampling: str) -> list[Configuration]:
    """``"alpha=1,1.5;gamma=1,2"`` -> every combination; keys and values are checked here, a number against
    its parameter's range too (:class:`~cfr_agents.solvers.UpdateRule`,
    :func:`~cfr_agents.solvers.sampling.check_sampling`)."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    axes: dict[str, list[float | str]] = {}
    for part in filter(None, (piece.strip() for piece in grid.split(";"))):
        key, equals, values = part.partition("=")
        key = key.strip()
        if not equals or not values.strip():
            raise ParameterError("{grid} part {part!r} is not KEY=V1,V2,...", part=part)
        if key in axes:
            raise ParameterError("{grid} names {key!r} twice", key=key)
        if key in RULE_KEYS and key not in TUNABLE.get(algorithm, ()):
            tunable = "; ".join(f"{algo}: {', '.join(keys)}" for algo, keys in TUNABLE.items())
            raise ParameterError(
                "{grid} key {key!r} does not apply to {algorithm_name} ({tunable})",
                key=key,
                algorithm_name=algorithm,
                tunable=tunable,
            )
        if key in SAMPLING_KEYS and sampling == "none":
            raise ParameterError("{grid} key {key!r} applies to sampled solvers only (give {sampling})", key=key)
        if key not in RULE_KEYS + SAMPLING_KEYS:
            raise ParameterError(
                "unknown {grid} key {key!r}; choose from {keys}", key=key, keys=", ".join(RULE_KEYS + SAMPLING_KEYS)
            )
        parsed = [_value(key, value.strip()) for value in values.split(",")]
        repeated = next((value for index, value in enumerate(parsed) if value in parsed[:index]), None)
        if repeated is not None:
            raise ParameterError("{grid} gives {key}={repeated} twice", key=key, repeated=repeated)
        axes[key] = parsed
    if not axes:
        raise ParameterError("{grid} is empty; give KEY=V1,V2[;KEY=...]")
    size = math.prod(len(values) for values in axes.values())
    if size > MAX_JOBS:
        raise ParameterError(
            "{grid} has {size:,} combinations; a sweep takes at most {most:,} jobs", size=size, most=MAX_JOBS
        )
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
        raise ParameterError("{grid} value {text!r} of {key!r} is not a number", text=text, key=key) from None
    if math.isnan(value):
        raise ParameterError("{grid} value of {key!r} is nan", key=key)
    return value


def _settings(
    algorithm: str, sampling: str, configuration: Configuration, iterations: int | None = None
) -> dict[str, Any]:
    """A job's rule and sampling options; a scheduled rule spans ``iterations`` (its horizon :math:`T`)."""
    values = dict(configuration.values)
    overrides: dict[str, Any] = {k: float(v) for k, v in values.items() if k in RULE_KEYS}
    rule = replace(ALGORITHMS[algorithm], **overrides)
    if rule.scheduled and iterations is not None:
        rule = replace(rule, horizon=iterations)
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
        "rule": {k: getattr(rule, k) for k in (*TUNABLE.get(algorithm, ()), *(("horizon",) if rule.scheduled else ()))},
        "averaging": averaging,
        "epsilon": epsilon,
        "chance_draws": chance_draws,
    }


def parse_seeds(seeds: str) -> list[int]:
    """``"0-4"`` or ``"0,3,7"`` (or both, ``"0-2,9"``): distinct non-negative seeds in order."""
    chosen: list[int] = []
    parts: list[range] = []
    try:
        for part in seeds.split(","):
            first, dash, last = part.strip().partition("-")
            parts.append(range(int(first), int(last) + 1) if dash else range(int(first), int(first) + 1))
    except ValueError:
        raise ParameterError("{seeds} {given} is not a list like 0-4 or 0,3,7", given=_shown(seeds)) from None
    count = sum(max(0, part.stop - part.start) for part in parts)  # counted before any list is built
    if count > MAX_JOBS:
        raise ParameterError(
            "{seeds} names {count:,} seeds; a sweep takes at most {most:,} jobs", count=count, most=MAX_JOBS
        )
    for seed_range in parts:
        chosen.extend(seed_range)
    if not chosen or min(chosen) < 0 or len(set(chosen)) != len(chosen):
        raise ParameterError("{seeds} {given} must name distinct non-negative seeds", given=_shown(seeds))
    return chosen


def check_size(configurations: Sequence[Configuration], seeds: Sequence[int]) -> None:
    """Refuse more than :data:`MAX_JOBS` jobs in all."""
    if len(configurations) * len(seeds) > MAX_JOBS:
        raise InputError(
            f"{len(configurations):,} configurations times {len(seeds):,} seeds is "
            f"{len(configurations) * len(seeds):,} jobs; a sweep takes at most {MAX_JOBS:,}"
        )


def _shown(text: str) -> str:
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text):,} characters)"


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
            "settings": _settings(algorithm, sampling, configuration, stop.iterations),
            "seed": seed,
            "iterations": stop.iterations,
            "target_nash_conv": stop.target_nash_conv,
            "time_limit": stop.time_limit,
            "checkpoint_every": checkpoint_every,
        }
        for configuration in configurations
        for seed in seeds
    ]


JOB_SETTINGS = {
    "game_id": "game",
    "algorithm": "algo",
    "sampling": "sampling",
    "settings": "grid values",
    "seed": "seed",
}
"""What makes a job the job it is (a spec field, and the name a refusal gives it)."""
STOP_SETTINGS = ("iterations", "target_nash_conv", "time_limit")
"""When a job stops (the fields of :class:`Stop`): stored work made under other values is extended when it can be."""


@dataclass(frozen=True)
class Stored:
    """What a job directory holds: the curve up to its checkpoint and, if the job finished for the
    stored stopping rules, its result."""

    curve: list[list[float]]
    """``[iteration, solve seconds, NashConv]`` up to the checkpoint's iteration."""
    result: dict[str, Any] | None


def stored_work(spec: Mapping[str, Any]) -> Stored | None:
    """The work stored in ``spec``'s directory that the job can use: ``None`` for none, the stored result
    when it was made with the same settings, else the curve of a run that the new one extends. Refuses,
    in one line naming the setting, work made for another job or that the new stopping rules cannot
    extend: a run past ``iterations`` or ``time_limit``, or one that met ``target_nash_conv`` at an earlier
    mark and ran on.
    """
    folder = Path(spec["directory"])
    files = {name: folder / name for name in ("spec.json", "progress.json", "checkpoint.npz", "result.json")}
    present = {name for name, path in files.items() if path.exists()}
    if not present - {"spec.json"}:
        return None
    where = f"job {spec['key']} in {str(folder.parent.parent)!r}"
    if present == {"spec.json", "progress.json"}:
        return None  # killed while writing its first checkpoint (progress goes first): nothing to resume
    if "spec.json" not in present or not {"progress.json", "checkpoint.npz"} <= present:
        raise InputError(f"{where} holds files of an unknown run (no spec.json or no checkpoint); use a new directory")
    old = _read(files["spec.json"], where, {})
    for field, name in JOB_SETTINGS.items():
        if old.get(field) != spec[field]:
            raise InputError(
                f"{where} was run with {name} {_setting(old.get(field))}, not {_setting(spec[field])}; "
                "use a new directory"
            )
    curve = _read(files["progress.json"], where, {"curve": _is_curve})["curve"]
    if "result.json" in present and all(old.get(field) == spec[field] for field in STOP_SETTINGS):
        return Stored(curve, _read(files["result.json"], where, RESULT_FIELDS))
    iteration, seconds = int(curve[-1][0]), curve[-1][1]
    if spec["iterations"] is not None and iteration > spec["iterations"]:
        raise ParameterError(
            "{where} already ran {done:,} iterations, more than {iterations} {asked:,}; use a new directory",
            where=where,
            done=iteration,
            asked=spec["iterations"],
        )
    if spec["time_limit"] is not None and seconds > spec["time_limit"]:
        raise ParameterError(
            "{where} already ran {seconds:.3g} s, more than {time_limit} {asked:g}; use a new directory",
            where=where,
            seconds=seconds,
            asked=spec["time_limit"],
        )
    target = spec["target_nash_conv"]
    passed = next(
        (point for point in curve[:-1] if target is not None and _is_mark(int(point[0])) and point[2] <= target), None
    )
    if passed is not None:
        raise ParameterError(
            "{where} met {target_nash_conv} {target:g} at iteration {met:,} and ran on to {done:,}; "
            "use a new directory",
            where=where,
            target=target,
            met=int(passed[0]),
            done=iteration,
        )
    return Stored(curve, None)


def _read(path: Path, where: str, fields: Mapping[str, Callable[[Any], bool]]) -> dict[str, Any]:
    """The JSON object in a job's file, each of its ``fields`` checked: ``fields[name](value)`` holds."""
    data = read_json(path, f"{where}: file")
    if not isinstance(data, dict):
        raise InputError(f"{where}: file {str(path)!r} is not a JSON object; use a new directory")
    for name, valid in fields.items():
        if not valid(data.get(name)):
            raise InputError(f"{where}: file {str(path)!r} has no valid {name!r}; use a new directory")
    return data


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_curve(value: Any) -> bool:
    """Whether ``value`` is a curve as a job stores it: one or more ``[iteration, solve seconds, NashConv]``."""
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(
            isinstance(point, list) and len(point) == 3 and _is_count(point[0]) and all(map(_is_number, point[1:]))
            for point in value
        )
    )


RESULT_FIELDS: Mapping[str, Callable[[Any], bool]] = {
    "iterations": _is_count,
    "solve_seconds": _is_number,
    "nash_conv": _is_number,
    "stopped_by": lambda value: isinstance(value, str),
    "target_iterations": lambda value: value is None or _is_count(value),
    "target_seconds": lambda value: value is None or _is_number(value),
    "curve": _is_curve,
}
"""The fields of a job's ``result.json`` (:func:`train_job` writes them)."""


def _setting(value: Any) -> str:
    return repr(value) if isinstance(value, str) else json.dumps(value)


def train_job(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Train one configuration and seed (a spec of :func:`jobs`), from the work its directory holds
    (:func:`stored_work`): a finished result for the same settings is returned as it is, a checkpoint is
    resumed and run on to the new stopping rules."""
    directory, game_id, algorithm, sampling, settings, seed = (
        spec[name] for name in ("directory", "game_id", "algorithm", "sampling", "settings", "seed")
    )
    iterations, target_nash_conv, time_limit = spec["iterations"], spec["target_nash_conv"], spec["time_limit"]
    checkpoint_every = spec["checkpoint_every"]
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    stored = stored_work(spec)
    if stored is not None and stored.result is not None:
        return stored.result
    done = folder / "result.json"
    done.unlink(missing_ok=True)  # made for other stopping rules: first gone, then the new ones recorded
    write_atomic(
        folder / "spec.json", json.dumps({field: spec[field] for field in (*JOB_SETTINGS, *STOP_SETTINGS)}) + "\n"
    )
    write_atomic(folder / "worker.pid", f"{os.getpid()}\n")  # which process runs the job, for operators
    tree = compile_tree(load_game(game_id))
    checkpoint_path, progress_path = folder / "checkpoint.npz", folder / "progress.json"
    curve: list[list[float]] = []  # [iteration, solve seconds, NashConv]
    if stored is not None:
        solver: Solver = load_checkpoint(checkpoint_path).solver(tree, take=True)
        curve = [point for point in stored.curve if point[0] <= solver.iteration]
        if not curve or curve[-1][0] != solver.iteration:  # a checkpoint is written where NashConv is measured
            raise InputError(
                f"job {spec['key']} in {str(folder.parent.parent)!r}: its progress.json does not reach the "
                f"iteration {solver.iteration:,} of its checkpoint; use a new directory"
            )
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
    stopped_by = _stopped(curve, solver.iteration, solve, spec)
    if curve and not stopped_by and not _is_mark(int(curve[-1][0])):
        curve.pop()  # a stop of the stored run's rules, not of these: a fresh run measures at marks only
    last_save = time.monotonic()
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


def _stopped(curve: Sequence[Sequence[float]], iteration: int, solve: float, spec: Mapping[str, Any]) -> str:
    """Which of ``spec``'s stopping rules a resumed run already meets at its checkpoint, or ``""``."""
    if not curve:
        return ""
    if spec["iterations"] is not None and iteration >= spec["iterations"]:
        return "iterations"
    if spec["time_limit"] is not None and solve >= spec["time_limit"]:
        return "time_limit"
    target = spec["target_nash_conv"]
    if target is not None and curve[-1][2] <= target and _is_mark(iteration):
        return "target_nash_conv"
    return ""


def _is_mark(iteration: int) -> bool:
    """Whether a run measures NashConv at ``iteration`` whatever its stopping rules (:func:`log_spaced`)."""
    return iteration in itertools.takewhile(lambda mark: mark <= iteration, log_spaced())


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
