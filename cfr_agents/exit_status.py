"""Every exit status of the ``cfr-agents`` command, in one leaf module (it imports nothing)."""

EXIT_DISAGREE = 1
"""A cross-check that found a difference."""
EXIT_USAGE = 2
"""Bad input: an option, a file or a name that cannot be used (one line on stderr)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (128 + SIGINT), as shells report it."""
