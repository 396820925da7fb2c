"""Run independent jobs in local processes or on Ray; a job that dies is retried.

A job is a *spec*: the dotted name of a module-level function and a JSON-able mapping of arguments
(names, file paths, seeds). Specs, never live objects, cross process and machine boundaries, so a
job's result depends only on its spec, never on which worker ran it or how many there were.

Two executors with one interface, :meth:`Executor.run`:

* :class:`LocalPool` -- ``K`` local processes (``concurrent.futures`` with the ``spawn`` start
  method). A job whose process dies is resubmitted to a fresh pool; a job that raises is retried.
* :class:`RayExecutor` -- Ray tasks on a local Ray runtime or a cluster (``ray.init(address=...)``);
  Ray retries a task whose worker dies (``max_retries``) or that raises (``retry_exceptions``).

Jobs that checkpoint as they go (as training jobs do) resume from their last checkpoint when retried.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import socket
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from typing import Any, Protocol

from adapters.errors import InputError

ATTEMPTS = 4
"""Runs of one job before its failure is final (a dead worker costs every job it was running one)."""


class MissingExtraError(InputError):
    """An optional dependency is not installed."""


class JobFailedError(RuntimeError):
    """A job failed on every attempt."""


@dataclass(frozen=True)
class Job:
    """``function(**arguments)``, named so that any worker can import it."""

    key: str
    function: str
    """``"package.module:function"``."""
    arguments: Mapping[str, Any]


def call(function: str, arguments: Mapping[str, Any]) -> Any:
    """Import ``function`` (``"module:name"``) and call it with ``arguments``: what a worker runs."""
    module, _, name = function.partition(":")
    target: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return target(**arguments)


class Executor(Protocol):
    workers: int

    def run(self, jobs: Sequence[Job], on_result: Callable[[Job, Any], None] | None = None) -> dict[str, Any]:
        """Every job's result by key; ``on_result`` is called as each one finishes."""
        ...


class LocalPool:
    """``workers`` local processes; ``workers == 1`` runs the jobs in order in this process."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise InputError(f"--workers must be at least 1, got {workers}")
        self.workers = workers

    def run(self, jobs: Sequence[Job], on_result: Callable[[Job, Any], None] | None = None) -> dict[str, Any]:
        results: dict[str, Any] = {}
        if self.workers == 1:
            for job in jobs:
                results[job.key] = _retrying(job)
                if on_result is not None:
                    on_result(job, results[job.key])
            return results
        attempts = dict.fromkeys((job.key for job in jobs), 0)
        pending = list(jobs)
        while pending:  # a pool whose worker died is broken: what it had not finished goes to a fresh one
            with _pool(min(self.workers, len(pending))) as pool:
                futures = {pool.submit(call, job.function, job.arguments): job for job in pending}
                pending = []
                for future in as_completed(futures):
                    job = futures[future]
                    try:
                        results[job.key] = future.result()
                    except BrokenProcessPool:
                        pending.append(_count(job, attempts, "its worker process died"))
                        continue
                    except InputError:
                        raise
                    except Exception as error:
                        pending.append(_count(job, attempts, f"{type(error).__name__}: {error}"))
                        continue
                    if on_result is not None:
                        on_result(job, results[job.key])
        return results


def _count(job: Job, attempts: dict[str, int], reason: str) -> Job:
    attempts[job.key] += 1
    if attempts[job.key] >= ATTEMPTS:
        raise JobFailedError(f"job {job.key} failed {ATTEMPTS} times; last: {reason}")
    return job


def _retrying(job: Job) -> Any:
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return call(job.function, job.arguments)
        except InputError:
            raise
        except Exception as error:
            if attempt == ATTEMPTS:
                raise JobFailedError(f"job {job.key} failed {ATTEMPTS} times; last: {error}") from error
    raise AssertionError("unreachable")


@contextmanager
def _pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    try:
        yield pool
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Ray tasks: on the cluster at ``address`` (``HOST:PORT``), or on a local Ray runtime."""

    def __init__(self, address: str | None, workers: int | None = None) -> None:
        try:
            import ray as ray_module
        except ImportError:
            raise MissingExtraError("--ray needs Ray: pip install 'cfr-agents[ray]'") from None
        ray: Any = ray_module
        self._ray = ray
        if address is not None:
            _check_reachable(address)
        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None:
                options["num_cpus"] = workers or os.cpu_count() or 1
            try:
                ray.init(address=address, **options)
            except (ConnectionError, RuntimeError, ValueError) as error:
                raise InputError(f"cannot start or join Ray at {address or 'a local runtime'}: {error}") from None
        self.workers = int(ray.cluster_resources().get("CPU", 1))

    def run(self, jobs: Sequence[Job], on_result: Callable[[Job, Any], None] | None = None) -> dict[str, Any]:
        ray = self._ray
        task = ray.remote(max_retries=ATTEMPTS - 1, retry_exceptions=True)(call)
        references = {task.remote(job.function, dict(job.arguments)): job for job in jobs}
        results: dict[str, Any] = {}
        remaining = list(references)
        with redirect_stdout(sys.stderr):  # Ray's own notices (a worker died, ...) stay off our stdout
            while remaining:
                (done,), remaining = ray.wait(remaining, num_returns=1)
                job = references[done]
                try:
                    results[job.key] = ray.get(done)
                except ray.exceptions.RayError as error:
                    raise JobFailedError(f"job {job.key} failed {ATTEMPTS} times; last: {error}") from None
                if on_result is not None:
                    on_result(job, results[job.key])
        return results


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse an address nothing listens on at once (``ray.init`` would wait for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"--ray address must be HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise InputError(f"cannot reach Ray at {address}: {error.strerror or error}") from None


def executor(workers: int | None, ray_address: str | None, use_ray: bool) -> Executor:
    """``--workers K`` (default: the number of cores) or ``--ray [ADDRESS]``."""
    if use_ray:
        if workers is not None:
            raise InputError("give --workers or --ray, not both")
        return RayExecutor(ray_address)
    return LocalPool(workers or os.cpu_count() or 1)
