"""What users hand us, checked at the lowest layer: the errors they can fix (each message one line that names
the problem), optional extras that may be missing, and bounded, strict reading of their files.

Every file a command reads is opened by :func:`open_regular` (or :func:`read_regular`, :func:`read_json`):
only a regular file is read. Its type is looked up before it is opened, so a FIFO, a device, a socket or a
directory is refused by name and never opened (a FIFO would block, ``/dev/zero`` never ends); it is opened
without blocking and its type checked again on the open descriptor, so a file swapped for a FIFO between
the two is refused too. Its size is checked against the limit of its kind (the ``MAX_*`` constants below,
tabled in ``docs/formats.md``) before a byte is read.
"""

import contextlib
import functools
import importlib
import json
import math
import os
import stat
import string
import sys
import zipfile
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, Any, BinaryIO, Literal

import numpy as np
from numpy.typing import NDArray

KIB, MIB, GIB = 2**10, 2**20, 2**30
MAX_JSON_BYTES = 256 * MIB
"""A policy file, an opponent model file (an RLCard CFR table), a sweep's or tournament's result file."""
MAX_SIDECAR_BYTES = 16 * MIB
"""The JSON sidecar of a model with weights (NFSP, Deep CFR, SD-CFR)."""
MAX_WEIGHTS_BYTES = 4 * GIB
"""A model's ``.safetensors`` weights."""
MAX_LOG_LINE_BYTES = 1 * MIB
"""One line of a hand log (a log itself may be as long as the hands it holds: it is read line by line)."""
MAX_RESULTS_BYTES = 64 * MIB
"""A curve CSV (``train --curve``), a frontier file (``exploit --frontier``), a learning file."""
MAX_CHECKPOINT_BYTES = 16 * GIB
"""A checkpoint archive; each array it declares must also fit in the bytes its member holds."""
MAX_STRATEGY_BYTES = 4 * GIB
"""A public-tree strategy's ``.npz`` (float32 probabilities: Flop Hold'em's take 1.3 GB); its sidecar is at most
:data:`MAX_SIDECAR_BYTES`."""


class InputError(ValueError):
    """A request the user can fix: unknown game, illegal action, bad policy file, ..."""


class UnknownGameError(InputError):
    """A game id that no adapter recognises."""


class UnsupportedGameError(InputError):
    """A game the interface cannot represent (not two-player zero-sum sequential perfect-recall)."""


class IllegalActionError(InputError):
    """An action that is not legal in the state it was applied to."""


class MissingExtraError(InputError):
    """An optional dependency is not installed: ``torch`` (``[nfsp]``), ``matplotlib`` (``[plot]``),
    ``ray`` (``[ray]``), ... The message names the extra to install."""


class ParameterError(InputError):
    """A refusal whose message names parameters of the call refused, each as the caller spells it.

    ``template`` is a :meth:`str.format` string whose every field is either a keyword of ``values``, a value
    shown as given (``{got!r}``, ``{count:,}``), or else the name of a parameter: ``ParameterError("{epsilon}
    applies to {sampling} outcome only")``. ``str(error)`` writes each parameter as its name (``epsilon``);
    :meth:`render` writes it as an interface does (the command line's ``--epsilon``). Anything the user
    typed goes in ``values``, never in the template, so its braces stay text.
    """

    def __init__(self, template: str, **values: object) -> None:
        self.template = template
        self.values = values
        super().__init__(self.render(lambda name: name))

    @property
    def parameters(self) -> tuple[str, ...]:
        """The parameters the message names, in order, each once."""
        fields = (field for _, field, _, _ in string.Formatter().parse(self.template) if field)
        return tuple(dict.fromkeys(field for field in fields if field not in self.values))

    def render(self, spell: Callable[[str], str]) -> str:
        """The message with each parameter ``name`` written ``spell(name)``."""
        return self.template.format_map({**{name: spell(name) for name in self.parameters}, **self.values})

    def __reduce__(self) -> tuple[Any, ...]:
        """Made again from the template and values (as it crosses to or from a worker process)."""
        return functools.partial(type(self), self.template, **self.values), ()


def _number(value: float) -> str:
    """``value`` as a bound is written: ``100``, ``0.01``, ``1e-15``, ``1e9``, ``inf``."""
    return f"{value:g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


@dataclass(frozen=True)
class Interval:
    """The numbers a float parameter takes: from ``low`` (excluded when ``open_low``) to ``high``, both
    finite, and the infinities in ``infinities``, each taken for a meaning its parameter documents
    (``alpha = inf``: no discount). A subnormal number (nonzero, below 2.2e-308 in size) is in no interval."""

    low: float
    high: float
    open_low: bool = False
    infinities: tuple[float, ...] = ()

    def __str__(self) -> str:
        """``[0, 100]``, ``(0, 1e9]``, ``[0, 50] or inf``, ``[-50, 50], -inf or inf``."""
        *first, last = [f"{'(' if self.open_low else '['}{_number(self.low)}, {_number(self.high)}]"] + [
            _number(value) for value in self.infinities
        ]
        return f"{', '.join(first)} or {last}" if first else last

    def __contains__(self, value: float) -> bool:
        if value in self.infinities:
            return True
        if 0.0 < abs(value) < sys.float_info.min:
            return False
        return (self.low < value if self.open_low else self.low <= value) and value <= self.high

    def refusal(self, value: float) -> str:
        """Why ``value`` is refused: ``"must be in [0, 100], got 1e+308"``."""
        subnormal = ", a subnormal number" if 0.0 < abs(value) < sys.float_info.min else ""
        return f"must be in {self}, got {value!r}{subnormal}"

    def check(self, name: str, value: float) -> float:
        """``value``, when it is in the interval; else a :class:`ParameterError` that names the parameter ``name``."""
        if value not in self:
            raise ParameterError(f"{{{name}}} {{refusal}}", refusal=self.refusal(value))
        return value


def require_extra(module: str, extra: str, needed_by: str) -> ModuleType:
    """``import module``, or a one-line :class:`MissingExtraError`:
    ``"<needed_by> needs <module>, which is not installed: pip install 'cfr-agents[<extra>]'"``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"{needed_by} needs {module}, which is not installed: pip install 'cfr-agents[{extra}]'"
        ) from None


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, from its ``st_mode``: ``"a FIFO"``, ``"a directory"``, ..."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def size_text(size: int) -> str:
    """A byte count as a limit is written: ``16 MiB``, ``4 GiB``, ``1,500 bytes``."""
    for unit, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit:,} {name}"
    return f"{size:,} bytes"


def check_regular(
    path: str | os.PathLike[str], what: str, error: type[InputError] = InputError, *, limit: int | None = None
) -> os.stat_result:
    """The ``os.stat`` of ``path`` (symlinks followed) when it names a regular file of at most ``limit`` bytes
    (``None``: any size); otherwise a one-line ``error`` that calls the file ``what``: it does not exist, it
    is a directory, a FIFO, a device or a socket, it is too large, or it cannot be looked up (a name longer
    than the file system allows, a NUL in it)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"{what} {os.fspath(path)!r} does not exist") from None
    except (OSError, ValueError) as problem:  # ValueError: a NUL in the path
        detail = getattr(problem, "strerror", None) or problem
        raise error(f"cannot read {what} {os.fspath(path)!r}: {detail}") from None
    _check_found(info, path, what, error, limit)
    return info


def _check_found(
    info: os.stat_result, path: str | os.PathLike[str], what: str, error: type[InputError], limit: int | None
) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{what} {os.fspath(path)!r} is {kind_of(info.st_mode)}, not a regular file")
    if limit is not None and info.st_size > limit:
        raise error(
            f"{what} {os.fspath(path)!r} is {size_text(info.st_size)}, more than the {size_text(limit)} it may be"
        )


def open_regular(
    path: str | os.PathLike[str], what: str, limit: int | None, error: type[InputError] = InputError
) -> BinaryIO:
    """``path`` open for reading in binary, when it is a regular file of at most ``limit`` bytes (``None``:
    any size; the caller then bounds what it reads at once); refused in one line as :func:`check_regular`
    refuses. The type is checked again on the open descriptor (a file replaced by a FIFO in between is
    refused, and opening never blocks). The caller closes it."""
    check_regular(path, what, error, limit=limit)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as problem:
        raise error(f"cannot read {what} {os.fspath(path)!r}: {problem.strerror}") from None
    try:
        _check_found(os.fstat(descriptor), path, what, error, limit)
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_regular(path: str | os.PathLike[str], what: str, limit: int, error: type[InputError] = InputError) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (see :func:`open_regular`; a file
    that grows past ``limit`` while it is read is refused too). What is read at once is the file's size and
    one byte, not ``limit``: a read allocates all it may read before it reads."""
    source = os.fspath(path)
    with open_regular(path, what, limit, error) as handle:
        try:
            size = min(os.fstat(handle.fileno()).st_size, limit)
            content = handle.read(size + 1)
            if len(content) > size:  # it grew since: read on, up to the limit
                content += handle.read(limit + 1 - len(content))
        except OSError as problem:
            raise error(f"cannot read {what} {source!r}: {problem.strerror}") from None
    if len(content) > limit:
        raise error(f"{what} {source!r} is more than the {size_text(limit)} it may be")
    return content


NpySpec = tuple[np.dtype[Any], tuple[int, ...]]
"""The dtype and shape an ``.npz`` member must hold."""
_NPY_CHUNK = 64 * MIB


@contextlib.contextmanager
def npz_archive(
    handle: BinaryIO, fail: Callable[[str], Exception], names: Collection[str] | None = None
) -> Iterator[tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]]:
    """The ``.npz`` archive open as ``handle`` and its members by array name, once the archive's directory is
    checked: ``.npy`` members only, each once, exactly ``names`` when given, all stored uncompressed and together
    no larger than the file (so no member can declare more than the file holds). A refusal is ``fail(problem)``;
    a damaged zip raises what :mod:`zipfile` raises, for the caller to name."""
    size = os.fstat(handle.fileno()).st_size
    with zipfile.ZipFile(handle) as archive:
        members: dict[str, zipfile.ZipInfo] = {}
        for info in archive.infolist():
            name = info.filename.removesuffix(".npy")
            if name == info.filename:
                raise fail(f"member {info.filename!r} is not a .npy array")
            if name in members:
                raise fail(f"holds the member {info.filename!r} twice")
            if info.compress_type != zipfile.ZIP_STORED:
                raise fail(f"member {info.filename!r} is compressed; it is stored as it is")
            members[name] = info
        if names is not None and sorted(members) != sorted(names):
            raise fail(f"holds the arrays {sorted(members)[:8]}, not {sorted(names)}")
        declared = sum(info.file_size for info in members.values())
        if declared > size:
            raise fail(f"has members of {declared:,} bytes in all, more than the file's {size:,}")
        yield archive, members


@contextlib.contextmanager
def npy_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, fail: Callable[[str], Exception], expect: NpySpec | None = None
) -> Iterator[tuple[IO[bytes], tuple[int, ...], np.dtype[Any], Literal["C", "F"]]]:
    """Member ``info`` of ``archive`` (from :func:`npz_archive`) open at its data, with the shape, dtype and order
    (``"C"`` or ``"F"``) its ``.npy`` header declares, once that header is checked and before a byte of data is
    read: a known ``.npy`` version; plain values (Python objects only pickle could load are refused); the
    ``expect``-ed dtype and shape when given; and a declared array that fills exactly the bytes the member
    holds."""
    name = info.filename
    with archive.open(info) as stream:
        try:
            version = np.lib.format.read_magic(stream)
            if version not in ((1, 0), (2, 0)):
                raise fail(f"member {name!r} is in the unknown .npy version {version}")
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            declared, fortran, dtype = read(stream)
        except (ValueError, TypeError, SyntaxError) as error:
            raise fail(f"member {name!r} has no readable .npy header ({error})") from None
        shape = tuple(int(length) for length in declared)
        if dtype.hasobject:
            raise fail(f"member {name!r} holds its values as Python objects, which only pickle could load")
        if expect is not None and (dtype != expect[0] or shape != expect[1]):
            raise fail(f"member {name!r} is stored as {dtype}{list(shape)}, not {expect[0]}{list(expect[1])}")
        if dtype.itemsize == 0 or info.file_size != stream.tell() + math.prod(shape) * dtype.itemsize:
            raise fail(f"member {name!r} declares {dtype}{list(shape)}, not what its {info.file_size:,} bytes hold")
        yield stream, shape, dtype, "F" if fortran else "C"


def read_npy_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, fail: Callable[[str], Exception], expect: NpySpec | None = None
) -> NDArray[Any]:
    """The array member ``info`` of ``archive`` holds, checked as :func:`npy_member` checks it and read in chunks
    into an array of its declared shape and order."""
    with npy_member(archive, info, fail, expect) as (stream, shape, dtype, order):
        flat = np.empty(math.prod(shape), dtype)
        buffer = flat.view(np.uint8).data
        for start in range(0, len(buffer), _NPY_CHUNK):
            data = stream.read(min(_NPY_CHUNK, len(buffer) - start))
            buffer[start : start + len(data)] = data
            if start + len(data) != min(start + _NPY_CHUNK, len(buffer)):
                raise fail(f"member {info.filename!r} ends before its array does")
    return flat.reshape(shape, order=order)


def read_json(path: str | Path, what: str, error: type[InputError] = InputError, *, limit: int = MAX_JSON_BYTES) -> Any:
    """The JSON value in the file ``path``; refused in one line, an ``error`` that calls the file ``what``
    (``"policy file"``), as :func:`read_regular` refuses (missing, not a regular file, larger than ``limit``,
    unreadable, a name longer than the file system allows) and as :func:`parse_json` refuses its text."""
    source = str(path)
    content = read_regular(path, what, limit, error)
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(f"cannot read {what} {source!r}: {problem}") from None
    return parse_json(text, f"{what} {source!r}", error)


def parse_json(text: str, where: str, error: type[InputError] = InputError) -> Any:
    """The JSON value ``text`` holds; refused in one line, ``<where> is not valid JSON (<why>)``, when it is
    not JSON (the line of the problem, or its column in a text of one line), or is JSON that Python will
    not hold: a key given twice, a number of more than 4,300 digits, nesting deeper than the recursion
    limit."""
    try:
        return json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as problem:
        at = f"line {problem.lineno}" if "\n" in text else f"column {problem.colno}"
        raise error(f"{where} is not valid JSON ({at}: {problem.msg})") from None
    except RecursionError:
        raise error(f"{where} is not valid JSON (nested too deeply)") from None
    except ValueError as problem:  # a duplicate key, a 5,000-digit number
        raise error(f"{where} is not valid JSON ({problem})") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict; a key given twice (JSON would keep the last) is refused."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen.add(key)
    return dict(pairs)
