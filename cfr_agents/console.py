"""The ``cfr-agents`` command's entry point, light enough to answer Ctrl-C while the toolkits load.

Importing the CLI loads NumPy, OpenSpiel and RLCard, which takes a noticeable moment; an
interrupt then is answered like one during a run: one line ``cfr-agents: interrupted`` and exit
status 130, never a traceback. This module imports only :mod:`cfr_agents.exit_status` at import time.
"""

from __future__ import annotations

import sys

from cfr_agents.exit_status import EXIT_INTERRUPTED


def main() -> int:
    """Load the CLI and run it on ``sys.argv``."""
    try:
        from cfr_agents.cli import main as run_cli
    except KeyboardInterrupt:
        print("cfr-agents: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return run_cli()
