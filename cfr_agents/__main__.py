"""``python -m cfr_agents`` is the ``cfr-agents`` command."""

import sys

from cfr_agents.console import main

sys.exit(main())
