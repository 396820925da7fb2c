"""What every command shares: the one-line-error parser, argument types and exit codes."""

from __future__ import annotations

import argparse
import math
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType
from typing import Any, NoReturn

from adapters.inputs import InputError, Interval
from cfr_agents.exit_status import EXIT_DISAGREE as EXIT_DISAGREE
from cfr_agents.exit_status import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from cfr_agents.exit_status import EXIT_USAGE as EXIT_USAGE

_LINE_BREAKS = {ord(c): repr(c)[1:-1] for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(message: str) -> str:
    """``message`` with every line break (whatever ``str.splitlines`` splits at) written as its escape,
    so an error stays one line even when it quotes what the user typed."""
    return message.translate(_LINE_BREAKS)


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line, exit status 2 (argparse would print the whole usage first). It begins as every error
        of the command does, ``cfr-agents: error:``, then names the sub-command: ``cfr-agents: error:
        train: argument --iterations: ...``."""
        program, _, command = self.prog.partition(" ")
        where = f"{command}: " if command else ""
        self.exit(EXIT_USAGE, f"{program}: error: {where}{one_line(message)}\n")

    def format_help(self) -> str:
        """argparse's help with reStructuredText double backticks removed: docstrings read plainly."""
        return super().format_help().replace("``", "")


GLOBAL_OPTIONS = ("--version", "--no-tree-cache")
"""The options of ``cfr-agents`` itself, which go before the command."""


class CommandParser(Parser):
    """The parser of a command (``cfr-agents train``, ``cfr-agents plot curves``). An option of ``cfr-agents``
    itself given after the command is refused in one line that names the command and says where the option
    goes; argparse would say ``unrecognized arguments`` without naming the command, or first ask for the
    command's required arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for option in GLOBAL_OPTIONS:
            self.add_argument(
                option, action=_BeforeTheCommand, nargs=0, default=argparse.SUPPRESS, help=argparse.SUPPRESS
            )


class _BeforeTheCommand(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: str | None = None) -> None:
        program, _, command = parser.prog.partition(" ")
        parser.error(
            f"{option} is an option of {program} itself: give it before the command ({program} {option} {command} ...)"
        )


MAX_COUNT = 10**12
"""The most iterations or episodes a command takes: days of work at millions a second, and within the
64-bit counters the solvers keep."""
MAX_HANDS = 10**9
"""The most hands a match (or each match of a tournament) plays: a day or more of play at RLCard's
speed; memory does not grow with the hands."""
MAX_WORKERS = 1024
"""The most local worker processes ``--workers`` starts."""


def magnitude(value: int) -> str:
    """``value`` as a reader takes it in: ``10^12`` for a power of ten, ``a 5,000-digit number`` for one
    too long to show, else its digits."""
    digits = str(abs(value))
    if value > 0 and len(digits) > 3 and digits == "1" + "0" * (len(digits) - 1):
        return f"10^{len(digits) - 1}"
    if len(digits) > 30:
        return f"a{' negative' if value < 0 else ''} {len(digits):,}-digit number"
    return str(value)


def _shown(text: str) -> str:
    """What the user typed, quoted, shortened if it is long."""
    return repr(text) if len(text) <= 40 else f"{text[:20]!r}... ({len(text):,} characters)"


def _integer(text: str, minimum: int | None, what: str, maximum: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        digits = text.strip().replace("_", "")
        negative = digits.startswith("-")
        digits = digits.lstrip("+-")
        if not (digits.isdecimal() and len(digits) > 4300):  # more digits than int() converts
            raise argparse.ArgumentTypeError(f"{_shown(text)} is not an integer") from None
        number = f"a{' negative' if negative else ''} {len(digits):,}-digit number"
        if negative and minimum is not None:
            raise argparse.ArgumentTypeError(f"must be a {what} integer, got {number}") from None
        if maximum is not None and not negative:
            raise argparse.ArgumentTypeError(f"must be at most {magnitude(maximum)}, got {number}") from None
        raise argparse.ArgumentTypeError(f"{number} is too long for an integer") from None
    if minimum is not None and value < minimum:
        raise argparse.ArgumentTypeError(f"must be a {what} integer, got {magnitude(value)}")
    if maximum is not None and value > maximum:
        raise argparse.ArgumentTypeError(f"must be at most {magnitude(maximum)}, got {magnitude(value)}")
    return value


def positive_int(text: str) -> int:
    """A count of work (iterations, episodes, ...): from 1 to :data:`MAX_COUNT`."""
    return _integer(text, 1, "positive", MAX_COUNT)


def non_negative_int(text: str) -> int:
    return _integer(text, 0, "non-negative")


def workers(text: str) -> int:
    """``--workers``: from 1 to :data:`MAX_WORKERS`."""
    return _integer(text, 1, "positive", MAX_WORKERS)


def hands(text: str) -> int:
    """``--hands``: at most :data:`MAX_HANDS` (:func:`eval.match.check_hands` asks for an even number, at least 4)."""
    return _integer(text, None, "", MAX_HANDS)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a number") from None


@dataclass(frozen=True)
class Within:
    """The type of an option whose values are ``allowed`` (its help names them): anything else is refused in
    one line."""

    allowed: Interval

    def __call__(self, text: str) -> float:
        value = _number(text)
        if value not in self.allowed:
            raise argparse.ArgumentTypeError(self.allowed.refusal(value))
        return value


def real(text: str) -> float:
    """Any number but nan, for an option whose range the library checks (``--alpha``: :class:`UpdateRule`)."""
    value = _number(text)
    if math.isnan(value):
        raise argparse.ArgumentTypeError("must be a number, got nan")
    return value


def physical_bytes() -> int:
    """The machine's memory, in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def gb(size: int) -> str:
    """``size`` bytes in GB, or in MB below one GB."""
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.1f} MB"


def check_memory(what: str, needs: int) -> str:
    """``memory: about N at the peak, of M here`` for a job that needs ``needs`` bytes at its peak; refused in one
    line, before anything is allocated, where the machine has less."""
    here = physical_bytes()
    if needs > here:
        raise InputError(f"{what} needs about {gb(needs)} of memory at the peak; this machine has {gb(here)}")
    return f"memory: about {gb(needs)} at the peak, of {gb(here)} here"


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
    command.add_argument(
        "--workers", type=workers, help=f"local worker processes (default: the number of cores; at most {MAX_WORKERS})"
    )
    command.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="HOST:PORT",
        help="run on Ray: a local runtime, or the cluster at HOST:PORT (extra 'ray')",
    )


def plotting_unavailable() -> str | None:
    """``None`` when matplotlib can draw, else the one-line reason (the extra to install): commands whose
    results stand without their plot write the rest and say why the plot is missing."""
    from adapters.inputs import MissingExtraError
    from eval.plots import pyplot

    try:
        pyplot()
    except MissingExtraError as error:
        return str(error)
    return None
