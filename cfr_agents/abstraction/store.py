"""Abstractions on disk: a directory holding a JSON sidecar and the tables, written atomically, read with bounds;
and a cache of built abstractions.

A directory ``DIR`` holds two files:

* ``tables.npz``: the arrays of :class:`~cfr_agents.abstraction.tables.AbstractionTables`, each a stored
  (uncompressed) ``.npy`` member, read with ``allow_pickle=False``;
* ``abstraction.json``, the sidecar, written after the tables: ``format`` (:data:`FORMAT`), ``format_version``
  (:data:`FORMAT_VERSION`), ``game`` (the canonical id), ``rules_fingerprint``
  (:attr:`adapters.base.Game.rules_fingerprint`), ``rounds`` (per round: ``board_cards`` dealt so far,
  ``method``, ``buckets``, ``bins``, lossless ``classes`` and canonical ``boards``), ``seed`` (or ``null``),
  ``build_seconds``, ``size_bytes`` (of ``tables.npz``), ``versions`` (Python and the libraries), ``arrays``
  (each array's dtype and shape) and ``arrays_sha256`` (:func:`cfr_agents.tree_cache.digest` of the arrays).

**Writing** (:func:`save_abstraction`) is atomic: a new directory is written under a temporary name beside it and
renamed into place; in an existing directory the tables are replaced first and the sidecar last, each file
atomically, so a crash leaves either the old abstraction or tables whose digest the sidecar does not hold -- never
a directory that loads something half written.

**Reading** (:func:`load_abstraction`) refuses, in one line (:class:`AbstractionFileError`): a path that is not a
directory of these two regular files; a sidecar larger than :data:`~adapters.inputs.MAX_SIDECAR_BYTES` or tables
larger than :data:`MAX_TABLES_BYTES`; a sidecar of another format or version or with a field missing or of the
wrong type; an abstraction of another game than the one asked for, or of rules whose fingerprint is not the
installed game's; an archive that is truncated or damaged, holds compressed members, other arrays, or arrays of
other dtypes or shapes than the sidecar's and the rules' (checked on each member's ``.npy`` header before it is
read); arrays whose digest is not the sidecar's; lookups that are not the game's (suit permutations, hand
indexing) or indices and buckets out of range.

**Cache** (:func:`build_cached`): ``$XDG_CACHE_HOME/cfr-agents/abstractions/`` (beside the tree cache,
:mod:`cfr_agents.tree_cache`, with its off switch ``CFR_AGENTS_NO_TREE_CACHE``) holds one abstraction directory
per (game, rules fingerprint, spec, seed, code fingerprint); a build that finds its entry copies it. An entry that
does not load is reported in one warning line and built anew.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import platform
import re
import shutil
import stat
import sys
import tempfile
import zipfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

import cfr_agents.tree_cache as tree_cache
from adapters import load_game
from adapters.games import canonical_game_id
from adapters.holdem.rules import LimitRules
from adapters.inputs import (
    GIB,
    MAX_SIDECAR_BYTES,
    InputError,
    NpySpec,
    kind_of,
    npz_archive,
    open_regular,
    read_json,
    read_npy_member,
)
from cfr_agents.abstraction.build import Progress, build_abstraction, game_indexes, game_rules
from cfr_agents.abstraction.spec import METHODS, RoundSpec
from cfr_agents.abstraction.tables import Abstraction, AbstractionTables
from cfr_agents.files import output_dir, replacing

FORMAT: Final = "cfr-agents-abstraction"
FORMAT_VERSION: Final = 1
SIDECAR: Final = "abstraction.json"
TABLES: Final = "tables.npz"
FILES: Final = (TABLES, SIDECAR)
"""The files of an abstraction directory, in the order they are written."""
MAX_TABLES_BYTES: Final = 8 * GIB
"""The largest ``tables.npz`` read (heads-up limit hold'em's take about 0.8 GB)."""
_LIBRARIES: Final = ("cfr-agents", "numpy", "numba", "open_spiel", "rlcard")
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


class AbstractionFileError(InputError):
    """An abstraction directory that is missing, damaged, or for another game or rules."""


def save_abstraction(abstraction: Abstraction, path: str | os.PathLike[str]) -> None:
    """Write ``abstraction`` as the directory ``path`` (created, or its two files replaced), atomically (module
    docstring)."""
    arrays = abstraction.tables._asdict()
    sidecar = _sidecar(abstraction, arrays)

    def write_tables(target: Path) -> None:
        with target.open("wb") as handle:
            np.savez(handle, allow_pickle=False, **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        sidecar["size_bytes"] = target.stat().st_size

    def write_sidecar(target: Path) -> None:
        with target.open("w", encoding="utf-8") as handle:
            handle.write(json.dumps(sidecar, indent=1, allow_nan=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    write_directory(path, (write_tables, write_sidecar))


def write_directory(path: str | os.PathLike[str], writers: Sequence[Callable[[Path], None]]) -> None:
    """Write the files :data:`FILES` of the directory ``path`` in order, each by its writer (given the path to write
    it at): into a temporary directory renamed to ``path`` when there is none, else each replaced atomically. A
    ``path`` that exists and is not a directory is refused."""
    target = _named(path)
    try:
        mode = target.stat().st_mode if target.exists() else None
    except OSError as error:
        raise InputError(f"cannot write abstraction {os.fspath(path)!r}: {error.strerror}") from None
    if mode is not None and not stat.S_ISDIR(mode):
        raise InputError(f"cannot write abstraction {os.fspath(path)!r}: it is {_kind(mode)}, not a directory")
    if mode is not None:
        for name, write in zip(FILES, writers, strict=True):
            with replacing(target / name) as temporary:
                write(temporary)
        return
    try:
        temporary = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
        umask = os.umask(0)
        os.umask(umask)
        temporary.chmod(0o777 & ~umask)
    except OSError as error:
        raise InputError(f"cannot write abstraction {os.fspath(path)!r}: {error.strerror}") from None
    try:
        for name, write in zip(FILES, writers, strict=True):
            write(temporary / name)
        os.rename(temporary, target)
    except BaseException as error:
        shutil.rmtree(temporary, ignore_errors=True)
        if isinstance(error, OSError):
            raise InputError(f"cannot write abstraction {os.fspath(path)!r}: {error.strerror}") from None
        raise


def check_out(path: str | os.PathLike[str]) -> None:
    """Refuse, before any work, a directory :func:`save_abstraction` could not write: an empty name, an existing
    file that is not a directory, a parent that does not exist or cannot be written."""
    output_dir(os.fspath(_named(path)), FILES, create=False)


def _named(path: str | os.PathLike[str]) -> Path:
    """``path`` as a directory to write, refused when it is empty (it would name the current directory)."""
    if not os.fspath(path):
        raise InputError("an abstraction directory to write needs a name, not ''")
    return Path(path)


def load_abstraction(path: str | os.PathLike[str], game_id: str | None = None) -> Abstraction:
    """The abstraction in the directory ``path``; with ``game_id``, one of another game is refused. Every
    refusal of the module docstring is one line (:class:`AbstractionFileError`)."""
    fail = _failure(path)
    sidecar = read_sidecar(path)
    game = sidecar["game"]
    if game_id is not None and canonical_game_id(game_id) != game:
        raise fail(f"is for {game}, not {canonical_game_id(game_id)}")
    try:
        fingerprint = load_game(game).rules_fingerprint
        _, rules = game_rules(game)
    except InputError as error:
        raise fail(f"is for a game that is not limit hold'em here: {error}") from None
    if fingerprint != sidecar["rules_fingerprint"]:
        raise fail(
            f"was made for rules {sidecar['rules_fingerprint']} of {game}, "
            f"but the installed game has rules {fingerprint}"
        )
    rounds = tuple(RoundSpec(r["method"], r["buckets"], r["bins"]) for r in sidecar["rounds"])
    if len(rounds) != rules.num_rounds or [r["board_cards"] for r in sidecar["rounds"]] != list(
        np.cumsum(rules.board_cards)
    ):
        raise fail(f"has rounds that are not the {rules.num_rounds} rounds of {game}")
    expected = _expected_arrays(rules, [r["boards"] for r in sidecar["rounds"]], fail)
    if sidecar["arrays"] != {name: {"dtype": d.str, "shape": list(s)} for name, (d, s) in expected.items()}:
        raise fail(f"lists arrays that are not those of an abstraction of {game}")
    arrays = _read_tables(Path(path) / TABLES, expected, fail)
    if tree_cache.digest(arrays) != sidecar["arrays_sha256"]:
        raise fail(f"has tables whose digest is not the one in its {SIDECAR}")
    tables = AbstractionTables(**arrays)
    _check_tables(tables, rules, rounds, [r["boards"] for r in sidecar["rounds"]], fail)
    return Abstraction(
        game_id=game,
        rules=rules,
        rounds=rounds,
        classes=tuple(r["classes"] for r in sidecar["rounds"]),
        tables=tables,
        seed=sidecar["seed"],
        build_seconds=float(sidecar["build_seconds"]),
    )


def read_sidecar(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The checked sidecar of the abstraction directory ``path`` (its tables unread)."""
    fail = _failure(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise fail("does not exist") from None
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        raise fail(f"cannot be read: {getattr(error, 'strerror', None) or error}") from None
    if not stat.S_ISDIR(mode):
        raise fail(f"is {_kind(mode)}, not a directory holding {SIDECAR} and {TABLES}")
    return _read_sidecar(Path(path) / SIDECAR, fail)


def _kind(mode: int) -> str:
    """What a file that is not a directory is: ``"a regular file"``, ``"a FIFO"``, ..."""
    return "a regular file" if stat.S_ISREG(mode) else kind_of(mode)


def _failure(path: str | os.PathLike[str]) -> Callable[[str], AbstractionFileError]:
    """The refusal of the abstraction ``path`` for a problem: ``abstraction 'DIR' <problem>``."""
    shown = os.fspath(path)
    return lambda problem: AbstractionFileError(f"abstraction {shown!r} {problem}")


def cache_directory() -> Path:
    """``$XDG_CACHE_HOME/cfr-agents/abstractions`` (beside :func:`cfr_agents.tree_cache.directory`)."""
    return tree_cache.directory().parent / "abstractions"


def build_cached(
    game_id: str,
    spec: Sequence[RoundSpec],
    seed: int,
    out: str | os.PathLike[str],
    *,
    progress: Progress | None = None,
) -> tuple[Abstraction, bool]:
    """Build the abstraction of ``game_id`` that ``spec`` describes, its k-means seeded by ``seed``, and write it
    to the directory ``out``; or copy it there from the cache when the cache holds it (module docstring). Returns
    the abstraction and whether it came from the cache."""
    game, _ = game_rules(game_id)
    check_out(out)
    entry = _entry_path(game, tuple(spec), seed) if tree_cache.enabled() else None
    if entry is not None and entry.exists():
        try:
            cached = load_abstraction(entry, game)
        except InputError as error:
            _warn(f"{error}; building it anew")
        else:
            write_directory(out, [functools.partial(_copy, entry / name) for name in FILES])
            return cached, True
    built = dataclasses.replace(
        build_abstraction(game, spec, np.random.default_rng(seed), progress=progress), seed=seed
    )
    save_abstraction(built, out)
    if entry is not None:
        _store(entry, Path(out))
    return built, False


def _entry_path(game: str, spec: tuple[RoundSpec, ...], seed: int) -> Path:
    """The cache directory of an abstraction: a readable part of the game id, the hash of what it is built from,
    then the hash of the code that builds it (entries of older code share the first two parts)."""
    key = {
        "format": FORMAT_VERSION,
        "game": game,
        "rules_fingerprint": load_game(game).rules_fingerprint,
        "rounds": [dataclasses.asdict(round_) for round_ in spec],
        "seed": seed,
    }
    what = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
    code = hashlib.sha256(json.dumps([_code_fingerprint(), _versions()], sort_keys=True).encode()).hexdigest()[:16]
    readable = re.sub(r"[^0-9A-Za-z]+", "_", game).strip("_")[:60]
    return cache_directory() / f"{readable}-{what}-{code}"


def _store(entry: Path, built: Path) -> None:
    """Copy the abstraction directory ``built`` into the cache as ``entry`` and delete the entries of the same
    abstraction built by other code; a cache that cannot be written is reported in one warning line."""
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_directory(entry, [functools.partial(_copy, built / name) for name in FILES])
        for other in entry.parent.glob(entry.name.rsplit("-", 1)[0] + "-*"):
            if other != entry and other.is_dir() and not other.is_symlink():
                shutil.rmtree(other, ignore_errors=True)
    except (OSError, InputError) as error:
        _warn(f"cannot store the abstraction in the cache {str(entry.parent)!r} ({error})")


def _copy(source: Path, target: Path) -> None:
    with open_regular(source, "cached abstraction file", MAX_TABLES_BYTES) as reader, target.open("wb") as writer:
        shutil.copyfileobj(reader, writer, 1 << 24)
        writer.flush()
        os.fsync(writer.fileno())


def _warn(message: str) -> None:
    print(f"cfr-agents: warning: {' '.join(message.split())}", file=sys.stderr)


@functools.cache
def _code_fingerprint() -> str:
    """``sha256:<hex>`` of the source of this package and of :mod:`adapters.holdem`."""
    import adapters.holdem

    sources = [*sorted(Path(__file__).parent.glob("*.py")), *sorted(Path(adapters.holdem.__file__).parent.glob("*.py"))]
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


def _versions() -> dict[str, str]:
    return {"python": platform.python_version(), **tree_cache.installed_versions(_LIBRARIES)}


def _sidecar(abstraction: Abstraction, arrays: Mapping[str, NDArray[Any]]) -> dict[str, Any]:
    _, boards = game_indexes(abstraction.rules)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": abstraction.game_id,
        "rules_fingerprint": load_game(abstraction.game_id).rules_fingerprint,
        "rounds": [
            {
                "round": number,
                "board_cards": size,
                "method": round_.method,
                "buckets": round_.buckets,
                "bins": round_.bins,
                "classes": classes,
                "boards": board.num_boards,
            }
            for number, (round_, size, classes, board) in enumerate(
                zip(abstraction.rounds, abstraction.board_sizes, abstraction.classes, boards, strict=True)
            )
        ],
        "seed": abstraction.seed,
        "build_seconds": round(abstraction.build_seconds, 3),
        "size_bytes": 0,
        "versions": _versions(),
        "arrays": {name: {"dtype": array.dtype.str, "shape": list(array.shape)} for name, array in arrays.items()},
        "arrays_sha256": tree_cache.digest(arrays),
    }


_FIELDS: Final[Mapping[str, type | tuple[type, ...]]] = {
    "format": str,
    "format_version": int,
    "game": str,
    "rules_fingerprint": str,
    "rounds": list,
    "seed": (int, type(None)),
    "build_seconds": (int, float),
    "size_bytes": int,
    "versions": dict,
    "arrays": dict,
    "arrays_sha256": str,
}
_ROUND_FIELDS: Final = ("round", "board_cards", "buckets", "bins", "classes", "boards")


def _read_sidecar(path: Path, fail: Callable[[str], AbstractionFileError]) -> dict[str, Any]:
    if not path.exists() and not path.is_symlink():
        raise fail(f"holds no {SIDECAR}")
    sidecar = read_json(path, "abstraction sidecar", AbstractionFileError, limit=MAX_SIDECAR_BYTES)
    if not isinstance(sidecar, dict) or sidecar.get("format") != FORMAT:
        raise fail(f"has a {SIDECAR} that is not a {FORMAT} sidecar")
    if sidecar.get("format_version") != FORMAT_VERSION:
        raise fail(f"has format_version {sidecar.get('format_version')!r}; this version reads {FORMAT_VERSION}")
    for name, kind in _FIELDS.items():
        value = sidecar.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise fail(f"has no valid {name!r} field in its {SIDECAR}")
    rounds = sidecar["rounds"]
    if not all(
        isinstance(r, dict)
        and all(
            isinstance(r.get(key), int) and not isinstance(r.get(key), bool) and r[key] >= 0 for key in _ROUND_FIELDS
        )
        and r.get("method") in METHODS
        for r in rounds
    ):
        raise fail(f"has no valid 'rounds' field in its {SIDECAR}")
    if not _SHA256.fullmatch(sidecar["arrays_sha256"]) or (sidecar["seed"] is not None and sidecar["seed"] < 0):
        raise fail(f"has an invalid 'arrays_sha256' or 'seed' in its {SIDECAR}")
    return sidecar


def _expected_arrays(
    rules: LimitRules, boards: Sequence[int], fail: Callable[[str], AbstractionFileError]
) -> dict[str, tuple[np.dtype[Any], tuple[int, ...]]]:
    """The dtype and shape of each array of an abstraction of ``rules`` whose rounds have ``boards`` canonical
    boards."""
    n, k = rules.deck_size, rules.num_hole_cards
    sizes = np.cumsum(rules.board_cards)
    sets = [math.comb(n, int(size)) for size in sizes]
    if any(not 1 <= count <= total for count, total in zip(boards, sets, strict=True)):
        raise fail("has rounds with more canonical boards than board sets")
    num_rounds, num_hands = rules.num_rounds, math.comb(n, k)
    most = max(k, int(sizes[-1]))
    return {
        "num_buckets": (np.dtype("<i8"), (num_rounds,)),
        "board_offset": (np.dtype("<i8"), (num_rounds,)),
        "board_class": (np.dtype("<i4"), (sum(sets),)),
        "board_perm": (np.dtype("|i1"), (sum(sets),)),
        "card_perm": (np.dtype("<i8"), (math.factorial(rules.num_suits), n)),
        "hand_of_colex": (np.dtype("<i8"), (num_hands,)),
        "binomial": (np.dtype("<i8"), (n + 1, most + 1)),
        "bucket_offset": (np.dtype("<i8"), (num_rounds,)),
        "buckets": (np.dtype("<i4"), (sum(boards) * num_hands,)),
    }


def _read_tables(
    path: Path,
    expected: Mapping[str, NpySpec],
    fail: Callable[[str], AbstractionFileError],
) -> dict[str, NDArray[Any]]:
    """The arrays of ``tables.npz``: exactly the members ``expected`` names, each stored uncompressed with the
    declared dtype and shape filling its bytes, checked on its ``.npy`` header before it is read."""

    def damaged(problem: str) -> AbstractionFileError:
        return fail(
            f"has a {TABLES} whose {problem}" if problem.startswith("member") else f"has a {TABLES} that {problem}"
        )

    with open_regular(path, "abstraction tables", MAX_TABLES_BYTES, AbstractionFileError) as handle:
        try:
            with npz_archive(handle, damaged, expected) as (archive, members):
                return {name: read_npy_member(archive, info, damaged, expected[name]) for name, info in members.items()}
        except AbstractionFileError:
            raise
        except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, SyntaxError) as error:
            raise fail(f"has a {TABLES} that is not a readable .npz archive ({error})") from None


def _check_tables(
    tables: AbstractionTables,
    rules: LimitRules,
    rounds: tuple[RoundSpec, ...],
    boards: Sequence[int],
    fail: Callable[[str], AbstractionFileError],
) -> None:
    """Refuse tables whose lookups are not the game's, or whose indices or buckets are out of range."""
    cards, _ = game_indexes(rules)
    sets = np.cumsum([0, *(math.comb(rules.deck_size, int(size)) for size in np.cumsum(rules.board_cards))])
    lengths = np.cumsum([0, *(count * cards.num_hands for count in boards)])
    if not (
        np.array_equal(tables.card_perm, cards.card_perm)
        and np.array_equal(tables.hand_of_colex, cards.hand_of_colex)
        and np.array_equal(tables.binomial, cards.binomial)
        and np.array_equal(tables.board_offset, sets[:-1])
        and np.array_equal(tables.bucket_offset, lengths[:-1])
        and np.array_equal(tables.num_buckets, [round_.buckets for round_ in rounds])
    ):
        raise fail(f"has lookups that are not those of {len(rounds)} rounds of its game")
    for number, round_ in enumerate(rounds):
        board_class = tables.board_class[sets[number] : sets[number + 1]]
        board_perm = tables.board_perm[sets[number] : sets[number + 1]]
        buckets = tables.buckets[lengths[number] : lengths[number + 1]]
        if (
            round_.buckets < 1
            or board_class.min() < 0
            or board_class.max() >= boards[number]
            or board_perm.min() < 0
            or board_perm.max() >= cards.card_perm.shape[0]
            or buckets.min() < -1
            or buckets.max() >= round_.buckets
        ):
            raise fail(f"has indices or buckets out of range in round {number}")
