"""Atomic output: a file is either its old content or its complete new content, never half.

An output path is resolved first: a symlink is written through to its target (the link stays a
link), a missing file is created, and anything that exists but is not a regular file -- a
directory, a device, a FIFO, a socket -- is refused, so writing never replaces it.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from adapters.inputs import InputError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def check_writable(path: str | os.PathLike[str]) -> Path:
    """The regular file :func:`replacing` would write for ``path`` (symlinks followed); a target
    that could not be written, or is not a regular file, is refused before any work is done."""
    shown = os.fspath(path)
    try:
        target = Path(os.path.realpath(path))
        looping = target.is_symlink()  # realpath stops at a link it cannot follow: a loop
        mode = target.stat().st_mode if target.exists() and not looping else None
        directory_exists = target.parent.is_dir()
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        raise InputError(f"cannot write {shown!r}: {getattr(error, 'strerror', None) or error}") from None
    if looping:
        raise InputError(f"cannot write {shown!r}: too many levels of symbolic links")
    if mode is not None and not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise InputError(f"cannot write {shown!r}: it is {kind}")
    if not directory_exists:
        raise InputError(f"cannot write {shown!r}: directory {str(target.parent)!r} does not exist")
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise InputError(f"cannot write {shown!r}: directory {str(target.parent)!r} is not writable")
    return target


def check_outputs(*paths: str | os.PathLike[str] | None) -> None:
    """:func:`check_writable` for each path given, and refuse two that name one file (after
    following symlinks; hard links to one file count as one)."""
    seen: dict[object, str] = {}
    for path in paths:
        if path is not None:
            identity = _identity(check_writable(path))
            if identity in seen:
                raise InputError(f"output files {seen[identity]!r} and {os.fspath(path)!r} are the same file")
            seen[identity] = os.fspath(path)


def _identity(target: Path) -> object:
    """``(device, inode)`` of an existing file, else its resolved path."""
    try:
        info = target.stat()
    except OSError:
        return target
    return (info.st_dev, info.st_ino)


def _new_file_mode(target: Path) -> int:
    """The target's own mode if it exists, else what ``open()`` would give a new file (0666 - umask)."""
    if target.exists():
        return target.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path beside the file ``path`` names (symlinks followed) to write; renamed over
    that file when the block ends, removed if it raises (also on Ctrl-C). A failing file system
    call is an :class:`InputError`."""
    target = check_writable(path)
    try:
        descriptor, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.fchmod(descriptor, _new_file_mode(target))
        os.close(descriptor)
    except OSError as error:
        raise InputError(f"cannot write {os.fspath(path)!r}: {error.strerror}") from None
    temporary = Path(name)
    try:
        yield temporary
        os.replace(temporary, target)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise InputError(f"cannot write {os.fspath(path)!r}: {error.strerror}") from None
        raise


def write_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, flushed to disk before the rename."""
    with replacing(path) as temporary, temporary.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
