"""What every command shares: the one-line-error parser, argument types and exit codes."""

from __future__ import annotations

import argparse
import math
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from adapters.errors import InputError
from cfr_agents.exit_status import EXIT_DISAGREE as EXIT_DISAGREE
from cfr_agents.exit_status import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from cfr_agents.exit_status import EXIT_USAGE as EXIT_USAGE
from cfr_agents.files import check_outputs

_LINE_BREAKS = {ord(c): repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(message: str) -> str:
    """``message`` with every line break (whatever ``str.splitlines`` splits at) written as its escape,
    so an error stays one line even when it quotes what the user typed."""
    return message.translate(_LINE_BREAKS)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, exit status 2 (argparse would print the whole usage first)."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)}\n")

    def format_help(self) -> str:
        """argparse's help with reStructuredText double backticks removed: docstrings read plainly."""
        return super().format_help().replace("``", "")


def _integer(text: str, minimum: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be a {what} integer, got {value}")
    return value


def positive_int(text: str) -> int:
    return _integer(text, 1, "positive")


def non_negative_int(text: str) -> int:
    return _integer(text, 0, "non-negative")


def positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def real(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError("must be a number, got nan")
    return value


def mbb(value: float, units: str) -> str:
    """`` (N mbb)`` for games paid in big blinds, else nothing."""
    return f" ({value * 1000:.4g} mbb)" if units == "BB" else ""


class _Interrupt:
    requested = False


@contextmanager
def deferred_interrupt() -> Iterator[_Interrupt]:
    """Within the block, Ctrl-C (SIGINT) only sets ``.requested``; the caller acts on it at a safe point.

    A second Ctrl-C interrupts at once. Outside the main thread, signals are left alone.
    """
    state = _Interrupt()
    if threading.current_thread() is not threading.main_thread():
        yield state
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if state.requested:
            raise KeyboardInterrupt
        state.requested = True

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield state
    finally:
        signal.signal(signal.SIGINT, previous)


def add_executor_options(command: Any) -> None:
    """``--workers K`` and ``--ray [HOST:PORT]`` (see :func:`cfr_agents.jobs.executor`)."""
    command.add_argument("--workers", type=positive_int, help="local worker processes (default: the number of cores)")
    command.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="HOST:PORT",
        help="run on Ray: a local runtime, or the cluster at HOST:PORT (extra 'ray')",
    )


def output_dir(out: str, names: Sequence[str]) -> Path:
    """``out`` as a directory to write into (created if its parent exists), with the files ``names`` in it
    checked writable (:func:`cfr_agents.files.check_outputs`: no special files, no two that are one)."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise InputError(f"--out {out!r} is not a directory")
    if not path.exists():
        try:
            path.mkdir()
        except OSError as error:
            raise InputError(f"cannot create directory {out!r}: {error.strerror}") from None
    check_outputs(*(path / name for name in names))
    return path
