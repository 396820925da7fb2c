"""An on-disk cache of compiled game trees, so a tree built once is loaded in a fraction of its build time.

An entry is one ``.npz`` file (read with ``allow_pickle=False``; nothing is pickled) holding the
tree's arrays and a JSON header: the game id, its rules fingerprint, :data:`FORMAT_VERSION`, the
installed versions of cfr-agents, open_spiel, rlcard and numpy (and pettingzoo for a ``pettingzoo:`` game, whose
tree is built by stepping PettingZoo's env), and a fingerprint of the source code
that builds trees (the ``adapters`` package and :mod:`cfr_agents.tree`, so an edited checkout never
loads a tree its code would not build). The file name is derived from the whole header: a change of
any of these misses the cache, and the tree is built anew and stored in place of the old entry.

* **Where**: ``$XDG_CACHE_HOME/cfr-agents/trees/`` (``~/.cache/cfr-agents/trees/`` when
  ``XDG_CACHE_HOME`` is unset, empty or relative). Delete the directory to empty the cache.
* **Off switch**: set ``CFR_AGENTS_NO_TREE_CACHE`` to anything but ``""`` or ``"0"``
  (``cfr-agents --no-tree-cache`` sets it); trees are then always built and never stored.
* **Which games**: those :func:`adapters.load_game` makes, whose trees follow from their id, rules
  and the versions above (see :func:`cacheable`); other adapters, and OpenSpiel games written in
  Python outside OpenSpiel and cfr-agents, are always built.
* **Derived arrays**: arrays computed from a cached tree -- the full-tree solver's payoff blocks
  (:mod:`cfr_agents.solvers.payoff_blocks`) -- are an entry of their own beside the tree's, keyed by the
  tree's header, their name and a fingerprint of the code that derives them
  (:func:`load_or_build_derived`).
* **Safety**: entries are written to a temporary file and renamed into place, so a reader sees a
  whole entry or none. The header also holds a SHA-256 digest of the arrays (:func:`digest`: each
  array's name, type, shape and bytes), and the decoder checks that the arrays fit together (every
  index in range; :func:`cfr_agents.tree.check_structure` for a tree). Only a regular file is read
  (:func:`adapters.inputs.open_regular`: a FIFO is never opened), of at most :data:`MAX_ENTRY_BYTES`,
  and each array's declared shape and type must fill exactly the bytes its member holds before it is
  read. An entry that fails any of this is reported in one line on stderr, ``cfr-agents: warning:
  ...``, built anew and replaced. A cache directory that cannot be written leaves trees built as
  without a cache, with one warning per process.
* **Loading**: each array's data start at a multiple of 64 bytes in the file (:func:`_save`), so an entry
  that only its owner can write is mapped into memory copy-on-write and its arrays view the mapping: nothing
  is copied, and processes loading one tree share its pages. Entries others may write, and arrays that are not
  aligned, are read straight into arrays of their own. The digest is computed in a second thread while the decoder
  checks the arrays.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import json
import math
import mmap
import os
import re
import stat
import struct
import sys
import zipfile
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeVar

import numpy as np
from numpy.typing import NDArray

import adapters
from adapters import Game
from adapters.inputs import GIB, InputError, npy_member, npz_archive, open_regular
from adapters.openspiel import OpenSpielGame
from adapters.pettingzoo import PettingZooGame
from adapters.rlcard import RLCardGame
from cfr_agents.files import replacing

DISABLE_VARIABLE: Final = "CFR_AGENTS_NO_TREE_CACHE"
"""Set to anything but ``""`` or ``"0"`` to turn the cache off."""
FORMAT_VERSION: Final = 2
"""The layout of an entry; raised whenever the arrays stored or their meaning change."""
VERSIONED_DISTRIBUTIONS: Final = ("cfr-agents", "open_spiel", "rlcard", "numpy")
MAX_ENTRY_BYTES: Final = 16 * GIB
"""The largest entry: arrays that take more are not stored (the tree is built each time), and a larger file
in the cache is refused unread."""
_HEADER: Final = "header"
"""The member of an entry that holds its JSON header; the others are the tree's arrays."""
_DIGEST: Final = "digest"
"""The field of a stored header that holds :func:`digest` of the entry's arrays."""
_ALIGNMENT: Final = 64
"""Where in an entry the data of each array start: at a multiple of this many bytes (:func:`_save`)."""
_PADDING_FIELD: Final = 0xD935
"""The id of the zip extra field that pads a member's local header (the one Android's ``zipalign`` writes)."""
_LOCAL_HEADER_BYTES: Final = 30
"""The fixed part of a zip member's local header."""

T = TypeVar("T")
Arrays = Mapping[str, NDArray[Any]]


def enabled() -> bool:
    """Whether the cache is on: :data:`DISABLE_VARIABLE` is unset, empty or ``"0"``."""
    return os.environ.get(DISABLE_VARIABLE, "") in ("", "0")


def directory() -> Path:
    """``$XDG_CACHE_HOME/cfr-agents/trees``, or ``~/.cache/cfr-agents/trees`` without an absolute
    ``XDG_CACHE_HOME`` (as the XDG base directory specification says)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "cfr-agents" / "trees"


def cacheable(game: Game) -> bool:
    """Whether ``game``'s tree follows from its header: RLCard and PettingZoo games, and OpenSpiel games whose
    ``pyspiel`` game is OpenSpiel's own (C++ or Python) or one of :mod:`adapters.pyspiel_game`. Other
    adapters, and games written in Python elsewhere, could change with no version in the header."""
    if type(game) in (RLCardGame, PettingZooGame):
        return True
    if type(game) is OpenSpielGame:
        module = type(game.pyspiel_game).__module__
        return module == "pyspiel" or module.startswith(("open_spiel.", "adapters."))
    return False


def header(game: Game) -> dict[str, object]:
    """What an entry for ``game`` must record; its file name is derived from all of it."""
    return {
        "format": FORMAT_VERSION,
        "game_id": game.game_id,
        "rules_fingerprint": game.rules_fingerprint,
        "versions": {**_versions(), **(_pettingzoo_version() if isinstance(game, PettingZooGame) else {})},
        "code": _code_fingerprint(),
    }


def entry_path(entry_header: Mapping[str, object]) -> Path:
    """The file of the entry with ``entry_header``: a readable part of the game id, then the hash."""
    canonical = json.dumps(entry_header, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode()).hexdigest()[:32]
    readable = re.sub(r"[^0-9A-Za-z]+", "_", str(entry_header["game_id"])).strip("_")[:60]
    return directory() / f"{readable}-{digest}.npz"


def entry_header(game: Game) -> dict[str, object] | None:
    """The header of ``game``'s entry, or ``None`` when the cache is off or does not hold the game."""
    return header(game) if enabled() and cacheable(game) else None


def load_or_build(
    game: Game, build: Callable[[], T], encode: Callable[[T], Arrays], decode: Callable[[Arrays], T]
) -> T:
    """``decode`` of ``game``'s entry if the cache holds a good one, else ``build()``, stored as ``encode``
    gives it. With the cache off, or for a game it does not hold, just ``build()``."""
    expected = entry_header(game)
    return build() if expected is None else _load_or_build(expected, build, encode, decode)


def load_or_build_derived(
    tree_header: Mapping[str, object],
    name: str,
    sources: tuple[Path, ...],
    build: Callable[[], T],
    encode: Callable[[T], Arrays],
    decode: Callable[[Arrays], T],
) -> T:
    """Like :func:`load_or_build`, for arrays derived from a cached tree (``tree_header`` is its entry's
    header): an entry of its own named ``name``, keyed also by a fingerprint of the ``sources`` that derive it."""
    if not enabled():
        return build()
    expected = {**tree_header, "derived": name, "derived_code": _fingerprint(sources)}
    return _load_or_build(expected, build, encode, decode)


def _load_or_build(
    expected: Mapping[str, object], build: Callable[[], T], encode: Callable[[T], Arrays], decode: Callable[[Arrays], T]
) -> T:
    try:
        path = entry_path(expected)
    except RuntimeError as error:  # no XDG_CACHE_HOME and no home directory to default to
        _warn_once(f"no directory for the tree cache ({error}); building compiled trees instead")
        return build()
    loaded = _read(path, expected, decode)
    if loaded is not None:
        return loaded
    built = build()
    if _write(path, expected, encode(built)):
        _remove_superseded(path, expected)
    return built


def _read(path: Path, expected: Mapping[str, object], decode: Callable[[Arrays], T]) -> T | None:
    """The decoded entry at ``path``, or ``None`` if there is none. An entry that is refused -- not a regular
    file, too large, unreadable, truncated or damaged, under another header than ``expected``, with arrays
    that differ from its digest or that ``decode`` refuses -- is reported in one line and also ``None``: the
    caller builds it anew and replaces it."""
    try:
        handle = open_regular(path, "tree cache entry", MAX_ENTRY_BYTES)
    except InputError as refused:
        if os.path.isfile(path):  # too large; what is not a regular file is reported if it cannot be replaced
            _warn(f"{refused}; building it anew")
        return None
    try:
        with handle:
            arrays = _read_members(handle)
        if _HEADER not in arrays:
            raise ValueError("it has no header")
        stored = json.loads(str(arrays.pop(_HEADER)[()]))
        stored_digest = stored.pop(_DIGEST, None) if isinstance(stored, dict) else None
        if stored != expected:
            raise ValueError("its header is not the one its name stands for")
        with ThreadPoolExecutor(max_workers=1) as pool:
            hashing = pool.submit(digest, arrays)  # beside the decoding: both only read the arrays
            try:
                decoded = decode(arrays)
            except Exception:
                _check_digest(hashing, stored_digest)  # arrays that differ from the digest are the fault to name
                raise
            _check_digest(hashing, stored_digest)
        return decoded
    except Exception as error:  # zipfile, numpy, json and the decoder each refuse a damaged entry their own way
        _warn(f"tree cache entry {str(path)!r} is damaged ({str(error) or type(error).__name__}); building it anew")
        return None


def _check_digest(hashing: Future[str], stored_digest: object) -> None:
    if hashing.result() != stored_digest:
        raise ValueError("its arrays differ from the digest in its header")


def _read_members(handle: BinaryIO, only: str | None = None) -> dict[str, NDArray[Any]]:
    """The arrays of the ``.npz`` entry open as ``handle`` (only the one named ``only``, if given), each checked
    on its archive entry and ``.npy`` header before it is read (:func:`~adapters.inputs.npz_archive`,
    :func:`~adapters.inputs.npy_member`): a damaged entry is refused (``ValueError``) before anything larger than
    the file is allocated. The arrays of an entry only its owner can write are mapped in place where their data
    are aligned (:func:`_mapping`); the others are read straight into arrays of their own."""
    with npz_archive(handle, ValueError) as (archive, members):
        mapping = _mapping(handle) if only is None else None
        return {
            name: _read_member(handle, archive, info, mapping) for name, info in members.items() if only in (None, name)
        }


def _mapping(handle: BinaryIO) -> mmap.mmap | None:
    """The file open as ``handle`` mapped copy-on-write (writes stay in this process), if it is owned by this
    process's user and writable by no one else; else ``None``. Arrays viewing the mapping are checked once, so no
    other user may be able to change the file under them; entries are never rewritten in place (a new entry
    replaces the file by a rename, which leaves a mapped file as it was)."""
    status = os.fstat(handle.fileno())
    if status.st_uid != os.geteuid() or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)


def _read_member(
    handle: BinaryIO, archive: zipfile.ZipFile, info: zipfile.ZipInfo, mapping: mmap.mmap | None
) -> NDArray[Any]:
    """The array of member ``info``, its ``.npy`` header checked (:func:`~adapters.inputs.npy_member`): a view of
    ``mapping`` when its data are aligned there, else read from the file into an array of its own. The zip's
    CRC is not computed: the entry's digest covers every byte of its arrays."""
    with npy_member(archive, info, ValueError) as (stream, shape, dtype, order):
        start = _data_offset(handle, info) + stream.tell()
    count = math.prod(shape)
    if mapping is not None and start % dtype.alignment == 0:
        flat = np.frombuffer(mapping, dtype, count, start)
    else:
        flat = np.empty(count, dtype)
        data, done = flat.view(np.uint8).data, 0
        while done < flat.nbytes:
            read = os.preadv(handle.fileno(), [data[done:]], start + done)
            if read == 0:
                raise ValueError(f"member {info.filename!r} ends before its array does")
            done += read
    return flat.reshape(shape, order=order)


def _data_offset(handle: BinaryIO, info: zipfile.ZipInfo) -> int:
    """Where member ``info``'s data start in the file: after its local header of 30 bytes, its name and its
    extra field, whose lengths the header holds at bytes 26 and 28 (the ZIP format)."""
    handle.seek(info.header_offset)
    local = handle.read(_LOCAL_HEADER_BYTES)
    if len(local) != _LOCAL_HEADER_BYTES or local[:4] != b"PK\x03\x04":
        raise ValueError(f"member {info.filename!r} has no local header")
    name_length, extra_length = struct.unpack_from("<HH", local, 26)
    return int(info.header_offset + _LOCAL_HEADER_BYTES + name_length + extra_length)


def digest(arrays: Arrays) -> str:
    """``sha256:<hex>`` of each array's name, type, shape and bytes (in C order), the arrays by name."""
    hashed = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        hashed.update(f"{name}\0{array.dtype.str}\0{array.shape}\0".encode())
        hashed.update(array.reshape(-1).view(np.uint8).data)
    return "sha256:" + hashed.hexdigest()


def _write(path: Path, entry_header: Mapping[str, object], arrays: Arrays) -> bool:
    """Store an entry atomically (a temporary file beside it, then a rename), its header holding the arrays'
    :func:`digest`; warn once if impossible. An entry larger than :data:`MAX_ENTRY_BYTES` is not kept (it
    would not be read). Whether it was stored."""
    if sum(array.nbytes for array in arrays.values()) > MAX_ENTRY_BYTES:
        return False
    stored = json.dumps({**entry_header, _DIGEST: digest(arrays)}, sort_keys=True)
    members = {**arrays, _HEADER: np.array(stored)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with replacing(path) as temporary, temporary.open("wb") as handle:
            _save(handle, members)
            if handle.tell() > MAX_ENTRY_BYTES:
                raise _TooLarge
            handle.flush()
            os.fsync(handle.fileno())
    except _TooLarge:
        return False
    except (OSError, InputError) as error:
        _warn_once(f"cannot store compiled trees in {str(path.parent)!r} ({error}); building them instead")
        return False
    return True


def _save(handle: BinaryIO, members: Arrays) -> None:
    """``members`` as an ``.npz`` file (what :func:`numpy.savez` writes: each array an uncompressed ``.npy``
    member, no pickles) in which every array's data start at a multiple of :data:`_ALIGNMENT` bytes, so that
    they can be mapped in place: a padding field in each member's local header puts its ``.npy`` header, itself
    a multiple of 64 bytes long, there."""
    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in members.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            # The local header, the name, this padding field's own 4 bytes and the 20 of the ZIP64 field.
            fixed = handle.tell() + _LOCAL_HEADER_BYTES + len(info.filename.encode()) + 4 + 20
            padding = -fixed % _ALIGNMENT
            info.extra = struct.pack("<HH", _PADDING_FIELD, padding) + bytes(padding)
            with archive.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)


def _remove_superseded(path: Path, entry_header: Mapping[str, object]) -> None:
    """Delete the other entries of the same game, rules and kind (the tree, or the same derived arrays) --
    older versions or code: the entry at ``path`` replaces them. Only regular files are read, their headers
    alone; files that cannot be read or deleted are left alone."""
    same_game = {name: entry_header.get(name) for name in ("game_id", "rules_fingerprint", "derived")}
    for other in path.parent.glob(glob.escape(path.name.rsplit("-", 1)[0]) + "-*.npz"):
        if other == path:
            continue
        try:
            with open_regular(other, "tree cache entry", MAX_ENTRY_BYTES) as handle:
                theirs = json.loads(str(_read_members(handle, only=_HEADER)[_HEADER][()]))
            if {name: theirs.get(name) for name in same_game} == same_game:
                other.unlink()
        except Exception:  # another process's entry may vanish or be half-written: not ours to judge
            continue


class _TooLarge(Exception):
    """An entry came out larger than :data:`MAX_ENTRY_BYTES`: its temporary file is removed."""


_warned = False
"""Whether this process has warned that it cannot store trees (it warns once at most)."""


def _warn_once(message: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        _warn(message)


def _warn(message: str) -> None:
    """``cfr-agents: warning: <message>`` as one line on stderr (line breaks in it become spaces)."""
    print(f"cfr-agents: warning: {' '.join(message.split())}", file=sys.stderr)


def installed_versions(distributions: Iterable[str]) -> dict[str, str]:
    """The installed version of each distribution (``"not installed"`` for one that is not)."""
    versions = {}
    for distribution in distributions:
        try:
            versions[distribution] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            versions[distribution] = "not installed"
    return versions


@functools.cache
def _versions() -> dict[str, str]:
    return installed_versions(VERSIONED_DISTRIBUTIONS)


@functools.cache
def _pettingzoo_version() -> dict[str, str]:
    return installed_versions(("pettingzoo",))


@functools.cache
def _code_fingerprint() -> str:
    """``sha256:<hex>`` of the source of the ``adapters`` package and of :mod:`cfr_agents.tree`."""
    return _fingerprint((*sorted(Path(adapters.__path__[0]).glob("*.py")), Path(__file__).with_name("tree.py")))


@functools.cache
def _fingerprint(sources: tuple[Path, ...]) -> str:
    """``sha256:<hex>`` of the names and contents of ``sources``."""
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()
