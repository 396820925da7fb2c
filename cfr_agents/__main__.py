"""``python -m cfr_agents`` is the ``cfr-agents`` command."""

import sys

from cfr_agents.cli import main

sys.exit(main())
