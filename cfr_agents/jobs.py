"""Run independent jobs in local processes or on Ray; a job whose worker dies is retried.

Every executor has one method, :meth:`Executor.map`: ``function(item)`` for each item, results in
the order of the items whatever order the workers finish in. ``function`` is a module-level
function (workers import it by name) and each item is a spec -- plain data such as names, file
paths, numbers and seeds, never a live agent or solver -- so a result depends only on its spec, not
on which worker ran it or how many there were.

* :class:`LocalPool` -- ``K`` local processes (``concurrent.futures`` on the ``forkserver`` start
  method, which imports the function's module once, or ``spawn``); ``K = 1`` runs in this process.
  When a worker process dies, the pool is broken: what it had not finished goes to a fresh pool.
  Within :meth:`LocalPool.kept`, the processes outlive each :meth:`~LocalPool.map`, keeping what they
  loaded and cached (rounds of scale-out MCCFR send one ``map`` a round to the same workers).
* :class:`RayExecutor` -- Ray tasks on a local Ray runtime or on a cluster
  (``ray.init(address=...)``); Ray retries a task whose worker dies (``max_retries``) or that
  raises (``retry_exceptions``).

Each job runs at most :data:`ATTEMPTS` times. Jobs that checkpoint as they go (sweep jobs do) resume
from their last checkpoint when retried.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.resource_tracker as resource_tracker
import os
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, redirect_stdout
from types import FrameType
from typing import Any, Protocol, TypeVar

from adapters.inputs import InputError, ParameterError, require_extra

T = TypeVar("T")
R = TypeVar("R")

ATTEMPTS = 4
"""Runs of one job before its failure is final (a dead worker costs every job it was running one)."""


class JobFailedError(RuntimeError):
    """A job failed on every attempt."""


class Executor(Protocol):
    workers: int

    def map(
        self, function: Callable[[T], R], items: Sequence[T], on_done: Callable[[T, R], None] | None = None
    ) -> list[R]:
        """``[function(item) for item in items]``; ``on_done(item, result)`` as each one finishes."""
        ...


def default_workers() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1


class LocalPool:
    """``workers`` local processes; ``workers == 1`` runs the jobs in order in this process."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ParameterError("{workers} must be at least 1, got {given}", given=workers)
        self.workers = workers
        self._keeping = False
        self._kept: ProcessPoolExecutor | None = None

    @contextmanager
    def kept(self) -> Iterator[LocalPool]:
        """Within the block, :meth:`map` keeps its worker processes from one call to the next (a pool a worker
        died in is replaced); they stop as the block ends."""
        self._keeping = True
        try:
            yield self
        except BaseException:
            self._release(terminate=True)
            raise
        else:
            self._release(terminate=False)
        finally:
            self._keeping = False

    def _release(self, terminate: bool) -> None:
        if self._kept is not None:
            _stop(self._kept, terminate)
            self._kept = None

    def map(
        self, function: Callable[[T], R], items: Sequence[T], on_done: Callable[[T, R], None] | None = None
    ) -> list[R]:
        if self.workers == 1 or (len(items) <= 1 and not self._keeping):
            results: list[R] = []
            for item in items:
                results.append(function(item))
                if on_done is not None:
                    on_done(item, results[-1])
            return results
        done: dict[int, R] = {}
        attempts = [0] * len(items)
        pending = list(range(len(items)))
        while pending:  # a pool whose worker died is broken: what it had not finished goes to a fresh one
            with self._pool(len(pending), function.__module__) as pool:
                with _ctrl_c_held():  # the fork server and the workers start deaf to Ctrl-C; this process answers it
                    futures: dict[Future[R], int] = {pool.submit(function, items[index]): index for index in pending}
                pending = []
                for future in as_completed(futures):
                    index = futures[future]
                    try:
                        done[index] = future.result()
                    except InputError:
                        raise
                    except (BrokenProcessPool, Exception) as error:
                        if isinstance(error, BrokenProcessPool) and pool is self._kept:
                            self._release(terminate=True)  # its replacement starts with the next attempt
                        attempts[index] += 1
                        if attempts[index] >= ATTEMPTS:
                            raise JobFailedError(f"a job failed {ATTEMPTS} times; last: {_reason(error)}") from None
                        pending.append(index)
                        continue
                    if on_done is not None:
                        on_done(items[index], done[index])
        return [done[index] for index in range(len(items))]

    @contextmanager
    def _pool(self, jobs: int, module: str) -> Iterator[ProcessPoolExecutor]:
        """The kept pool (started at its first use), or a pool of at most ``jobs`` processes for one call."""
        if not self._keeping:
            with _pool(min(self.workers, jobs), module) as pool:
                yield pool
            return
        if self._kept is None:
            self._kept = _start(self.workers, module)
        try:
            yield self._kept
        except BaseException:
            self._release(terminate=True)
            raise


def _reason(error: BaseException) -> str:
    return "its worker process died" if isinstance(error, BrokenProcessPool) else f"{type(error).__name__}: {error}"


@contextmanager
def _pool(workers: int, module: str) -> Iterator[ProcessPoolExecutor]:
    pool = _start(workers, module)
    try:
        yield pool
    except BaseException:  # Ctrl-C or a refused job: the other results are not wanted, so do not wait for them
        _stop(pool, terminate=True)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _start(workers: int, module: str) -> ProcessPoolExecutor:
    context: multiprocessing.context.BaseContext
    if "forkserver" in multiprocessing.get_all_start_methods():
        server = multiprocessing.get_context("forkserver")
        server.set_forkserver_preload([module])
        context = server  # imported once; each worker is a fork of that server
    else:  # pragma: no cover - platforms without forkserver
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


def _stop(pool: ProcessPoolExecutor, terminate: bool) -> None:
    """Shut ``pool`` down; with ``terminate``, without waiting for the jobs it is running."""
    if terminate:
        for process in list((pool._processes or {}).values()):  # Python 3.14 has pool.terminate_workers()
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


@contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Ctrl-C waits for the end of the block, where the workers started in it are known and can be stopped.

    SIGINT is blocked in this thread, so the processes started here (the fork server, and the workers
    forked from it) keep it blocked and leave Ctrl-C to this process, which stops them, instead of each
    printing its own traceback; a Ctrl-C that reaches this process meanwhile is raised as the block
    ends. A second one is raised at once.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield  # pragma: no cover - a pool started off the main thread, or not on POSIX
        return
    resource_tracker.ensure_running()  # starting, it unblocks SIGINT: so it starts first
    interrupted = False

    def later(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupted
        if interrupted:
            raise KeyboardInterrupt
        interrupted = True

    handler = signal.signal(signal.SIGINT, later)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
    if interrupted:
        raise KeyboardInterrupt


class RayExecutor:
    """Ray tasks: on the cluster at ``address`` (``HOST:PORT``), or on a local Ray runtime."""

    def __init__(self, address: str | None) -> None:
        ray: Any = require_extra("ray", "ray", "running on Ray")
        self._ray = ray
        self.address = address
        if address is not None:
            _check_reachable(address)
        if not ray.is_initialized():
            options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None:
                options["num_cpus"] = default_workers()
            try:
                with _captured_output():  # Ray's C++ core logs its retries straight to file descriptors 1 and 2
                    ray.init(address=address, **options)
            except (ConnectionError, RuntimeError, ValueError) as error:
                raise InputError(f"cannot start or join Ray at {address or 'a local runtime'}: {error}") from None
        self.workers = int(ray.cluster_resources().get("CPU", 1))

    def put(self, value: object) -> Any:
        """A reference to ``value`` in the object store, which tasks handed it read without a copy each."""
        return self._ray.put(value)

    def map(
        self, function: Callable[[T], R], items: Sequence[T], on_done: Callable[[T, R], None] | None = None
    ) -> list[R]:
        ray = self._ray
        task = ray.remote(max_retries=ATTEMPTS - 1, retry_exceptions=True)(function)
        references = [task.remote(item) for item in items]
        index = {reference: position for position, reference in enumerate(references)}
        results: dict[int, R] = {}
        remaining = list(references)
        with redirect_stdout(sys.stderr):  # Ray's own notices (a worker died, ...) stay off our stdout
            while remaining:
                (ready,), remaining = ray.wait(remaining, num_returns=1)
                try:
                    results[index[ready]] = ray.get(ready)
                except ray.exceptions.RayError as error:
                    raise JobFailedError(f"a job failed {ATTEMPTS} times; last: {error}") from None
                if on_done is not None:
                    on_done(items[index[ready]], results[index[ready]])
        return [results[position] for position in range(len(items))]


@contextmanager
def _captured_output() -> Iterator[None]:
    """File descriptors 1 and 2 go to a temporary file within the block (so do Python's streams)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for descriptor in saved:
                os.close(descriptor)


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Refuse an address nothing listens on at once (``ray.init`` would wait for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ParameterError("{ray} address must be HOST:PORT, got {address!r}", address=address)
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as error:
        raise InputError(f"cannot reach Ray at {address}: {error.strerror or error}") from None


def executor(workers: int | None, ray: str | None) -> Executor:
    """``--workers K`` (default: the number of cores), or ``--ray [ADDRESS]`` (``ray`` is ``""`` for a
    local Ray runtime, ``None`` without ``--ray``)."""
    if ray is not None:
        if workers is not None:
            raise ParameterError("give {workers} or {ray}, not both")
        return RayExecutor(ray or None)
    return LocalPool(workers or default_workers())
