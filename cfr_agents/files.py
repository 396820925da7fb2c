"""Atomic output: a file is either its old content or its complete new content, never half."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from adapters.errors import InputError


def check_writable(path: str | os.PathLike[str]) -> Path:
    """Refuse, before any work is done, a target that :func:`write_atomic` could not replace."""
    target = Path(path)
    directory = target.parent
    if target.is_dir():
        raise InputError(f"cannot write {str(target)!r}: it is a directory")
    if not directory.is_dir():
        raise InputError(f"cannot write {str(target)!r}: directory {str(directory)!r} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"cannot write {str(target)!r}: directory {str(directory)!r} is not writable")
    return target


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, flush it to disk, then rename it over."""
    target = check_writable(path)
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as error:
        raise InputError(f"cannot write {str(target)!r}: {error.strerror}") from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise InputError(f"cannot write {str(target)!r}: {error.strerror}") from None
        raise
