"""Atomic output: a file is either its old content or its complete new content, never half."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from adapters.errors import InputError


def check_writable(path: str | os.PathLike[str]) -> Path:
    """Refuse, before any work is done, a target that :func:`replacing` could not replace."""
    target = Path(path)
    directory = target.parent
    if target.is_dir():
        raise InputError(f"cannot write {str(target)!r}: it is a directory")
    if not directory.is_dir():
        raise InputError(f"cannot write {str(target)!r}: directory {str(directory)!r} does not exist")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"cannot write {str(target)!r}: directory {str(directory)!r} is not writable")
    return target


def _new_file_mode(target: Path) -> int:
    """The target's own mode if it exists, else what ``open()`` would give a new file (0666 - umask)."""
    if target.exists():
        return target.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside ``path`` to write; renamed over ``path`` when the block ends,
    removed if it raises (also on Ctrl-C). A failing file system call is an :class:`InputError`."""
    target = check_writable(path)
    try:
        descriptor, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.fchmod(descriptor, _new_file_mode(target))
        os.close(descriptor)
    except OSError as error:
        raise InputError(f"cannot write {str(target)!r}: {error.strerror}") from None
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise InputError(f"cannot write {str(target)!r}: {error.strerror}") from None
        raise


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, flushed to disk before the rename."""
    with replacing(path) as temporary, temporary.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
