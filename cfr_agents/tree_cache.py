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
"""

from __future__ import annotations

import functools
import glob
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, BinaryIO, Final, TypeVar

import numpy as np
from numpy.typing import NDArray

import adapters
from adapters import Game
from adapters.inputs import GIB, InputError, npz_archive, open_regular, read_npy_member
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
        if stored_digest != digest(arrays):
            raise ValueError("its arrays differ from the digest in its header")
        return decode(arrays)
    except Exception as error:  # zipfile, numpy, json and the decoder each refuse a damaged entry their own way
        _warn(f"tree cache entry {str(path)!r} is damaged ({str(error) or type(error).__name__}); building it anew")
        return None


def _read_members(handle: BinaryIO, only: str | None = None) -> dict[str, NDArray[Any]]:
    """The arrays of the ``.npz`` entry open as ``handle`` (only the one named ``only``, if given), each checked
    on its archive entry and ``.npy`` header before it is read (:func:`~adapters.inputs.npz_archive`,
    :func:`~adapters.inputs.read_npy_member`): a damaged entry is refused (``ValueError``) before anything
    larger than the file is allocated."""
    with npz_archive(handle, ValueError) as (archive, members):
        return {
            name: read_npy_member(archive, info, ValueError) for name, info in members.items() if only in (None, name)
        }


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
            np.savez(handle, allow_pickle=False, **members)
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
