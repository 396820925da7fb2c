"""The ``cfr-agents`` command's entry point, light enough to answer Ctrl-C while the toolkits load.

Importing the CLI loads NumPy, OpenSpiel and RLCard, which takes a noticeable moment; an
interrupt then is answered like one during a run: one line ``cfr-agents: interrupted`` and exit
status 130, never a traceback. An extension module interrupted while it initialises (``pyspiel``)
reports an ``ImportError`` rather than the ``KeyboardInterrupt``, so the interrupt is noted as it
arrives; and since code run by an extension's initialisation leaves the interpreter marked as ended
by an unhandled Ctrl-C (it would then exit by SIGINT, not 130), an interrupted load leaves at once
with :func:`os._exit` (nothing has been written yet). The mark can also come later, from an interrupt that lands in
code an extension runs for a lazy import during the command: a command that ends interrupted (status 130) also
leaves with :func:`os._exit`, after flushing its streams and running the ``atexit`` handlers. This module imports
only :mod:`cfr_agents.exit_status` at import time.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
from types import FrameType

from cfr_agents.exit_status import EXIT_INTERRUPTED


def main() -> int:
    """Load the CLI and run it on ``sys.argv``."""
    received: list[int] = []

    def interrupted(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    # An ignored SIGINT (a background job, nohup) stays ignored.
    watching = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    unraisable = sys.unraisablehook

    def quiet(event: sys.UnraisableHookArgs) -> None:
        """The interrupt raised inside a callback the import machinery runs (a module lock's) is not printed."""
        if not isinstance(event.exc_value, KeyboardInterrupt):
            unraisable(event)

    if watching:
        signal.signal(signal.SIGINT, interrupted)
        sys.unraisablehook = quiet
    try:
        from cfr_agents.cli import main as run_cli
    except KeyboardInterrupt:
        received.append(signal.SIGINT)
    except ImportError:
        if not received:
            raise
    finally:
        if watching:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            sys.unraisablehook = unraisable
    if received:  # also where an import swallowed the interrupt
        print("cfr-agents: interrupted", file=sys.stderr, flush=True)
        os._exit(EXIT_INTERRUPTED)
    status = run_cli()
    if status == EXIT_INTERRUPTED:  # the interpreter may be marked as ended by Ctrl-C: leave with 130 ourselves
        sys.stdout.flush()
        sys.stderr.flush()
        atexit._run_exitfuncs()
        os._exit(EXIT_INTERRUPTED)
    return status
