"""Path safety, in one place: what a command may write, and that it never writes over a file it reads.

**Outputs.** An output path is resolved first: a symlink is written through to its target (the link stays
a link), a missing file is created, and anything that exists but is not a regular file -- a directory, a
device, a FIFO, a socket -- is refused, so writing never replaces it (:func:`check_writable`). Writing is
atomic: a file is either its old content or its complete new content, never half (:func:`replacing`,
:func:`write_atomic`). Two outputs of one command that name one file are refused (:func:`check_outputs`),
as is an output directory that cannot be made (:func:`output_dir`).

**No output may be an input.** :func:`check_no_overwrite` refuses an output that is one of the files a
command reads (:class:`Read`), compared by identity: through symlinks and hard links. What a command reads
is every file it loads, resolved as its loader resolves it -- a model's weights by its sidecar's
``weights`` field (:func:`file_beside`), a checkpoint, a hand log, a tree-cache entry.

Reading is :mod:`adapters.inputs`' (bounded reads of regular files only).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from adapters.inputs import InputError, ParameterError, kind_of


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
        raise InputError(f"cannot write {shown!r}: it is {kind_of(mode)}")
    if not directory_exists:
        raise InputError(f"cannot write {shown!r}: directory {str(target.parent)!r} does not exist")
    if not can_create_in(target.parent):
        raise InputError(f"cannot write {shown!r}: directory {str(target.parent)!r} is not writable")
    return target


def can_create_in(directory: Path) -> bool:
    """Whether a file can be created in ``directory``, found by creating and removing one, as an atomic write
    would: permission bits say nothing to root, and file systems such as ``/proc`` refuse every new file."""
    try:
        descriptor, probe = tempfile.mkstemp(dir=directory, prefix=".", suffix=".probe")
    except OSError:
        return False
    os.close(descriptor)
    os.unlink(probe)
    return True


def check_outputs(*paths: str | os.PathLike[str] | None) -> None:
    """:func:`check_writable` for each path given, and refuse two that name one file (after
    following symlinks; hard links to one file count as one)."""
    seen: dict[object, str] = {}
    for path in paths:
        if path is not None:
            target = check_writable(path)
            identity = file_identity(target) or target
            if identity in seen:
                raise InputError(f"output files {seen[identity]!r} and {os.fspath(path)!r} are the same file")
            seen[identity] = os.fspath(path)


def file_identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    """``(device, inode)`` of the regular file ``path`` resolves to (symlinks followed; hard links to one
    file are one), else ``None``: missing, not a regular file, or a name the file system cannot look up."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


@dataclass(frozen=True)
class Read:
    """A file a command reads."""

    path: Path
    source: str
    """The argument it comes from (an output declared to update that argument may name it)."""
    what: str | None = None
    """How it is read when not directly: ``"the weights of 'model.json'"``, ``"a tree-cache entry"``."""


def check_no_overwrite(
    reads: Iterable[Read],
    flag: str,
    output: str,
    *,
    holds: Sequence[str] = (),
    beside: Sequence[str] = (),
    updates: str | None = None,
) -> None:
    """Refuse, in one line, the output ``output`` of the argument ``flag`` (``--out``) when it, one of the
    files ``holds`` it writes in it as a directory, or one of the files it writes beside itself with its
    suffix replaced by one of ``beside`` (a model's ``.safetensors``), is one of ``reads`` -- but the reads of
    ``updates``, the argument whose file it may update in place (``train --checkpoint F --resume F``)."""
    inputs: dict[tuple[int, int], Read] = {}
    for read in reads:
        identity = file_identity(read.path)
        if identity is not None:
            inputs.setdefault(identity, read)
    written = [Path(output), *(Path(output) / name for name in holds)]
    if Path(output).name:  # '' and '.' name no file to write beside (what writes them refuses them)
        written += [Path(output).with_suffix(suffix) for suffix in beside if Path(output).suffix != suffix]
    for path in written:
        identity = file_identity(path)
        overwritten = None if identity is None else inputs.get(identity)
        if overwritten is not None and overwritten.source != updates:
            raise InputError(
                f"{flag} {output!r} would overwrite the input {os.fspath(overwritten.path)!r}"
                + (f" ({overwritten.what})" if overwritten.what else "")
                + (f" (it writes {os.fspath(path)!r})" if path != Path(output) else "")
            )


def file_beside(holder: str | os.PathLike[str], name: object, field: str) -> Path:
    """The file ``name`` in the directory of the file ``holder``, as ``holder``'s ``field`` names it (a model
    sidecar's ``weights``). Only a plain file name is taken: an absolute path, a separator (``/``, ``\\``),
    ``.``, ``..`` or an empty name is refused in one line, so a file can name no file elsewhere."""
    if not isinstance(name, str) or name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        raise InputError(f"{os.fspath(holder)!r}: its {field!r} must name a file in its own directory, got {name!r}")
    return Path(holder).parent / name


def output_dir(out: str, names: Sequence[str], *, create: bool = True) -> Path:
    """``out`` as a directory to write into, with the files ``names`` in it checked writable
    (:func:`check_outputs`: no special files, no two that are one).

    A missing directory whose parent exists is created; with ``create=False`` it is only checked to be
    creatable, so that a command that may still refuse its input leaves nothing behind (it calls again,
    creating it, when it writes).
    """
    path = Path(out)
    try:
        exists, is_dir = path.exists(), path.is_dir()
    except OSError as error:  # a name longer than the file system allows, ...
        raise ParameterError("cannot use {out} {path!r}: {reason}", path=out, reason=error.strerror) from None
    if exists and not is_dir:
        raise ParameterError("{out} {path!r} is not a directory", path=out)
    if not exists:
        if not create:
            _check_creatable(path, out)
            return path
        try:
            path.mkdir()
        except OSError as error:
            raise InputError(f"cannot create directory {out!r}: {error.strerror}") from None
    check_outputs(*(path / name for name in names))
    return path


def _check_creatable(path: Path, out: str) -> None:
    """Refuse, as ``mkdir`` would, a directory that could not be created."""
    parent = path.absolute().parent
    if not parent.is_dir():
        problem = errno.ENOTDIR if parent.exists() else errno.ENOENT
    elif not can_create_in(parent):
        problem = errno.EACCES
    else:
        return
    raise InputError(f"cannot create directory {out!r}: {os.strerror(problem)}")


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
