"""The entry point answers Ctrl-C during the toolkits' import with one line and status 130, however the
interrupted import reports it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import start_interruptible

CHILD = """
import importlib.abc, os, signal, sys

class Interrupted(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "cfr_agents.cli":
            try:
                os.kill(os.getpid(), signal.SIGINT)
            except KeyboardInterrupt:
                {then}
        return None

sys.meta_path.insert(0, Interrupted())
from cfr_agents.console import main
sys.exit(main())
"""
THEN = {
    "propagated": "raise",
    "reported-as-import-error": "raise ImportError('initialization failed')",  # as pyspiel's initialisation does
    "swallowed": "pass",
}


@pytest.mark.parametrize("case", sorted(THEN))
def test_ctrl_c_while_the_cli_loads_is_one_line_and_status_130(case: str) -> None:
    child = start_interruptible([sys.executable, "-c", CHILD.format(then=THEN[case])], stderr=subprocess.PIPE)
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 130, stderr
    assert stderr == "cfr-agents: interrupted\n", stderr
