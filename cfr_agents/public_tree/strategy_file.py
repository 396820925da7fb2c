r"""Public-tree strategies on disk: float32 probabilities in a ``.npz`` archive, described by a JSON sidecar.

A strategy of a :class:`~cfr_agents.public_tree.tree.PublicTree` is the flat array of
:attr:`~cfr_agents.public_tree.tree.PublicTree.size` numbers :mod:`~cfr_agents.public_tree.engine` lays out
block by block: :math:`\sigma(I, a)` for every decision node of every segment, action by action, hand by hand.
It is saved as two files with one stem, and either file's path names the pair (:func:`strategy_paths`):

* ``<stem>.npz``: a NumPy archive holding one array, :data:`MEMBER`, stored uncompressed: the strategy as
  little-endian float32 (4 bytes an entry: Flop Hold'em's 325,826,046 entries take 1.3 GB);
* ``<stem>.json``: the sidecar, written after the archive: ``format`` (:data:`FORMAT`), ``format_version``
  (:data:`FORMAT_VERSION`), ``game`` (the canonical ``openspiel:`` id), ``rules_fingerprint``
  (:attr:`adapters.base.Game.rules_fingerprint`), ``layout_fingerprint`` (:func:`layout_fingerprint`),
  ``canonical`` (suit-canonical boards or every board), ``algorithm``, ``parameters``, ``iterations``, ``size``
  (entries), ``dtype`` (``"float32"``), ``npz_sha256`` (the SHA-256 of the whole ``.npz`` file, in hex) and
  ``extra`` (a JSON object of whatever the writer adds).

Precision. Each probability is stored as the float32 nearest it (a relative error of at most
:math:`2^{-24}`). On load the array is widened to float64 and every distribution -- one decision node, one
hand, over the node's actions -- is divided by its sum, so it sums to 1 in float64. A stored distribution
whose sum is further than :data:`ROW_TOLERANCE` from 1 is refused (float32 rounding moves the sum of three
probabilities by less than :math:`2 \cdot 10^{-7}`), as is a probability that is negative or not finite.
Hands that meet the board have entries too (never read in play); they must be distributions as well.

Memory. A loaded strategy is float64 (8 bytes an entry, what the engine's passes read): the archive is read
in 16 MiB chunks straight into it, so loading takes the array and a few tens of megabytes more (2.6 GB for
Flop Hold'em).
Saving makes one float32 copy of the array (1.3 GB for Flop Hold'em).

Refusals, each one line (a :class:`StrategyFileError`): a path that is not ``.npz`` or ``.json``; a missing,
oversized (:data:`~adapters.inputs.MAX_SIDECAR_BYTES`, :data:`~adapters.inputs.MAX_STRATEGY_BYTES`) or
unreadable file; a sidecar that is not this format and version or lacks a field; another game than the one
asked for; rules whose fingerprint is not the installed game's; a layout fingerprint that is not the one of
the tree built now; another size or dtype than the tree's float32; an archive whose SHA-256 is not the
sidecar's; an archive that is not exactly one stored float32 array of the tree's size (an array of Python
objects, which only pickle could load, included); and the probabilities above.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, BinaryIO, Final

import numpy as np
import pyspiel
from open_spiel.python import policy as openspiel_policy

from adapters import load_game
from adapters.games import canonical_game_id
from adapters.holdem import card_name
from adapters.inputs import (
    MAX_SIDECAR_BYTES,
    MAX_STRATEGY_BYTES,
    InputError,
    npy_member,
    npz_archive,
    open_regular,
    read_json,
)
from adapters.openspiel import PREFIX
from cfr_agents.files import check_outputs, replacing, write_atomic
from cfr_agents.public_tree.engine import FloatArray
from cfr_agents.public_tree.infosets import Locator
from cfr_agents.public_tree.tree import PublicTree, build_public_tree

FORMAT: Final = "cfr-agents-public-strategy"
FORMAT_VERSION: Final = 1
MEMBER: Final = "probabilities"
"""The one array of the ``.npz`` archive."""
DTYPE: Final = np.dtype("<f4")
"""How probabilities are stored: little-endian float32."""
ROW_TOLERANCE: Final = 1e-6
"""How far from 1 a stored distribution's sum may be."""
_CHUNK: Final = 1 << 22
"""Entries read from the archive at once (16 MiB of float32)."""
_SHA256 = re.compile(r"[0-9a-f]{64}")


class StrategyFileError(InputError):
    """A public-tree strategy file that is missing, damaged, or for another game, rules or tree layout."""


@dataclass(frozen=True)
class PublicStrategy:
    """A strategy read back by :func:`load_strategy`: the tree it is laid out on and where it came from."""

    game_id: str
    """The game's canonical ``openspiel:`` id."""
    tree: PublicTree
    """The game's public tree, built anew, with suit-canonical boards or not as the file says."""
    strategy: FloatArray = field(repr=False)
    """``(tree.size,)`` float64: the stored float32 probabilities, each distribution divided by its sum."""
    algorithm: str
    parameters: Mapping[str, object]
    iterations: int
    header: Mapping[str, Any] = field(repr=False)
    """The whole sidecar, ``extra`` included."""

    @cached_property
    def locator(self) -> Locator:
        """Finds OpenSpiel's information states in :attr:`strategy`."""
        return Locator(self.tree)

    @cached_property
    def _game_text(self) -> str:
        return str(pyspiel.load_game(self.tree.game_string))

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        """``{action: probability}`` over the legal actions of ``state``, a ``pyspiel`` state of this game where
        ``player_id`` (by default the player to act) acts: its information state's entries of :attr:`strategy`,
        found by :attr:`locator` (the board mapped to its canonical board, the hole cards with it)."""
        if str(state.get_game()) != self._game_text:
            raise InputError(f"a state of {state.get_game()} is not a state of {self.game_id}")
        player = state.current_player() if player_id is None else player_id
        if player not in (0, 1) or player != state.current_player():
            raise InputError(f"player {player} does not act in state {str(state)!r}")
        location = self.locator.locate(state.information_state_string(player))
        probabilities = self.strategy[location.indices(self.tree)].tolist()
        return dict(zip(state.legal_actions(player), probabilities, strict=True))

    def openspiel_policy(self) -> StrategyPolicy:
        """This strategy as an ``open_spiel.python.policy.Policy`` of OpenSpiel's game."""
        return StrategyPolicy(self)


class StrategyPolicy(openspiel_policy.Policy):  # type: ignore[misc]
    """A :class:`PublicStrategy` as an ``open_spiel.python.policy.Policy`` of its game, for both players."""

    def __init__(self, strategy: PublicStrategy) -> None:
        super().__init__(pyspiel.load_game(strategy.tree.game_string), [0, 1])
        self.strategy = strategy

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        """:meth:`PublicStrategy.action_probabilities`."""
        return self.strategy.action_probabilities(state, player_id)


def strategy_paths(path: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The ``.npz`` archive and the ``.json`` sidecar of the strategy that ``path``, either of them, names."""
    given = Path(path)
    if given.suffix not in (".npz", ".json"):
        raise StrategyFileError(
            f"a public-tree strategy is a .npz archive and its .json sidecar: {os.fspath(path)!r} names neither"
        )
    return given.with_suffix(".npz"), given.with_suffix(".json")


def layout_fingerprint(tree: PublicTree) -> str:
    """``sha256:<hex>`` of what fixes the layout of a strategy array on ``tree``: every betting node's
    ``Sequences`` string, kind and number of children, the betting ranges, the hands in order, each segment's
    range and board history, and whether boards are suit-canonical. Equal fingerprints, equal layouts."""
    betting, segments = tree.betting, tree.segments
    layout = {
        "canonical": tree.canonical,
        "betting": list(zip(betting.sequence, betting.kind.tolist(), betting.num_children.tolist(), strict=True)),
        "ranges": betting.ranges.tolist(),
        "hands": tree.hands.tolist(),
        "segments": list(zip(segments.range_index.tolist(), segments.boards, strict=True)),
    }
    text = json.dumps(layout, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def save_strategy(
    path: str | os.PathLike[str],
    tree: PublicTree,
    strategy: FloatArray,
    *,
    algorithm: str,
    parameters: Mapping[str, object],
    iterations: int,
    extra: Mapping[str, object] | None = None,
) -> None:
    """Write ``strategy`` (a distribution at every decision node and hand of ``tree``) as the pair of files
    ``path`` names (:func:`strategy_paths`), each atomically, the sidecar last. A strategy of another size,
    with a probability that is negative or not finite, or a distribution whose sum is further than
    :data:`ROW_TOLERANCE` from 1, and parameters or ``extra`` that are not JSON, are refused before anything
    is written."""
    arrays_path, sidecar_path = strategy_paths(path)
    check_outputs(arrays_path, sidecar_path)
    given = np.asarray(strategy)
    if given.shape != (tree.size,) or given.dtype.kind != "f":
        raise StrategyFileError(
            f"cannot save a strategy of {given.dtype}{list(given.shape)}: {tree.game_string}'s public tree "
            f"takes {tree.size:,} probabilities"
        )
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0:
        raise StrategyFileError(f"cannot save a strategy after {iterations!r} iterations: a count of 0 or more")

    def refuse(problem: str) -> StrategyFileError:
        return StrategyFileError(f"cannot save the {algorithm} strategy: it {problem}; nothing was written")

    _check_distributions(tree, given, refuse)
    game = load_game(PREFIX + tree.game_string)
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": game.game_id,
        "rules_fingerprint": game.rules_fingerprint,
        "layout_fingerprint": layout_fingerprint(tree),
        "canonical": tree.canonical,
        "algorithm": algorithm,
        "parameters": dict(parameters),
        "iterations": iterations,
        "size": tree.size,
        "dtype": DTYPE.name,
        "npz_sha256": "",
        "extra": dict(extra or {}),
    }
    try:
        json.dumps(header, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise refuse(f"has parameters or extra fields that are not JSON ({error})") from None
    write_pair(arrays_path, sidecar_path, given, header)


def load_strategy(path: str | os.PathLike[str], *, game_id: str | None = None) -> PublicStrategy:
    """The strategy of the pair of files ``path`` names (:func:`strategy_paths`), on its game's public tree built
    now; with ``game_id``, a file for another game is refused. Every refusal of the module docstring is a
    one-line :class:`StrategyFileError`."""
    arrays_path, sidecar_path = strategy_paths(path)
    header = _read_sidecar(sidecar_path)

    def fail(problem: str) -> StrategyFileError:
        return StrategyFileError(f"public-tree strategy {str(sidecar_path)!r} {problem}")

    if game_id is not None and canonical_game_id(game_id) != canonical_game_id(header["game"]):
        raise fail(f"is for {header['game']}, not {canonical_game_id(game_id)}")
    try:
        game = load_game(header["game"])
        if not game.game_id.startswith(PREFIX):
            raise InputError(f"{game.game_id} is not an OpenSpiel universal_poker game")
        if game.rules_fingerprint != header["rules_fingerprint"]:
            raise fail(
                f"was made for rules {header['rules_fingerprint']} of {game.game_id}, "
                f"but the installed game has rules {game.rules_fingerprint}"
            )
        tree = build_public_tree(game.game_id.removeprefix(PREFIX), canonical=header["canonical"])
    except StrategyFileError:
        raise
    except InputError as error:
        raise fail(f"is for a game without a public tree: {error}") from None
    layout = layout_fingerprint(tree)
    if layout != header["layout_fingerprint"]:
        raise fail(
            f"has layout {header['layout_fingerprint']}, but the public tree of {game.game_id} built now has "
            f"layout {layout}"
        )
    if header["size"] != tree.size:
        raise fail(f"declares {header['size']:,} entries, but the public tree has {tree.size:,}")

    def damaged(problem: str) -> StrategyFileError:
        return StrategyFileError(f"public-tree strategy {str(arrays_path)!r} {problem}")

    strategy = read_archive(arrays_path, "public-tree strategy", tree.size, header["npz_sha256"])
    _check_distributions(tree, strategy, damaged)
    for _, _, block in _node_blocks(tree, strategy):
        block /= block.sum(axis=1, keepdims=True)
    return PublicStrategy(
        game_id=game.game_id,
        tree=tree,
        strategy=strategy,
        algorithm=header["algorithm"],
        parameters=header["parameters"],
        iterations=header["iterations"],
        header=header,
    )


_FIELDS: Final[Mapping[str, type]] = {
    "game": str,
    "rules_fingerprint": str,
    "layout_fingerprint": str,
    "canonical": bool,
    "algorithm": str,
    "parameters": dict,
    "iterations": int,
    "size": int,
    "dtype": str,
    "npz_sha256": str,
    "extra": dict,
}
"""The sidecar's fields besides ``format`` and ``format_version``, and their JSON types."""


def _read_sidecar(path: Path) -> dict[str, Any]:
    """The sidecar's fields, each of its type: this format and version, a count of iterations and a size of at
    least 0 and 1, the dtype ``"float32"``, a SHA-256 in hex."""
    data = read_json(path, "public-tree strategy sidecar", StrategyFileError, limit=MAX_SIDECAR_BYTES)

    def fail(problem: str) -> StrategyFileError:
        return StrategyFileError(f"public-tree strategy {str(path)!r} {problem}")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise fail(f"is not a {FORMAT} sidecar")
    version = data.get("format_version")
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise fail(f"has format_version {version!r}; this version reads {FORMAT_VERSION}")
    for name, kind in _FIELDS.items():
        value = data.get(name)
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise fail(f"has no valid {name!r} field")
    if data["iterations"] < 0 or data["size"] < 1:
        raise fail(f"has {data['iterations']} iterations and {data['size']} entries")
    if data["dtype"] != DTYPE.name:
        raise fail(f"declares dtype {data['dtype']!r}; this version reads {DTYPE.name}")
    if not _SHA256.fullmatch(data["npz_sha256"]):
        raise fail("has no valid 'npz_sha256' field")
    return data


def write_pair(arrays_path: Path, sidecar_path: Path, strategy: FloatArray, header: dict[str, Any]) -> None:
    """Write ``strategy`` (flat) as the archive ``arrays_path`` and then ``header``, with the archive's SHA-256 as
    ``npz_sha256``, as the sidecar ``sidecar_path``; each atomically."""
    with replacing(arrays_path) as temporary:
        with temporary.open("wb") as handle:
            write_probabilities(handle, strategy)
            handle.flush()
            os.fsync(handle.fileno())
        with temporary.open("rb") as written:
            header["npz_sha256"] = file_sha256(written)
    write_atomic(sidecar_path, json.dumps(header, indent=1, allow_nan=False) + "\n")


def read_archive(path: Path, what: str, size: int, sha256: str) -> FloatArray:
    """The ``size`` probabilities of the archive ``path`` (``what``: the kind of strategy, as messages name it),
    refused in one line unless its SHA-256 is ``sha256`` (its sidecar's) and it holds exactly them."""

    def damaged(problem: str) -> StrategyFileError:
        return StrategyFileError(f"{what} {str(path)!r} {problem}")

    with open_regular(path, what, MAX_STRATEGY_BYTES, StrategyFileError) as handle:
        digest = file_sha256(handle)
        if digest != sha256:
            raise damaged(f"has SHA-256 {digest}, not the {sha256} its sidecar names")
        handle.seek(0)
        return read_probabilities(handle, size, damaged)


def file_sha256(handle: BinaryIO) -> str:
    """The SHA-256, in hex, of what is left to read of ``handle``."""
    digest = hashlib.sha256()
    while chunk := handle.read(_CHUNK * DTYPE.itemsize):
        digest.update(chunk)
    return digest.hexdigest()


def write_probabilities(handle: BinaryIO, strategy: FloatArray) -> None:
    """The archive ``np.savez`` writes (one stored ``.npy`` member), narrowed to float32 chunk by chunk: no
    float32 copy of a Flop Hold'em strategy (1.3 GB) is made."""
    with (
        zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive,
        archive.open(f"{MEMBER}.npy", "w", force_zip64=True) as member,
    ):
        header = {"descr": np.lib.format.dtype_to_descr(DTYPE), "fortran_order": False, "shape": strategy.shape}
        np.lib.format.write_array_header_1_0(member, header)
        for start in range(0, strategy.shape[0], _CHUNK):
            member.write(strategy[start : start + _CHUNK].astype(DTYPE).tobytes())


def read_probabilities(handle: BinaryIO, size: int, fail: Callable[[str], StrategyFileError]) -> FloatArray:
    """The archive's one stored float32 array of ``size`` entries, widened to float64 chunk by chunk. Its
    ``.npy`` header is read and checked (:func:`~adapters.inputs.npy_member`) before any of it is: an array of
    objects (a pickle), another dtype or shape, or a member whose bytes are not exactly the declared array is
    refused."""
    try:
        with (
            npz_archive(handle, fail, [MEMBER]) as (archive, members),
            npy_member(archive, members[MEMBER], fail, (DTYPE, (size,))) as (stream, _, _, _),
        ):
            strategy = np.empty(size)
            for start in range(0, size, _CHUNK):
                count = min(_CHUNK, size - start)
                strategy[start : start + count] = np.frombuffer(stream.read(count * DTYPE.itemsize), DTYPE)
    except StrategyFileError:
        raise
    except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, SyntaxError) as error:
        raise fail(f"is not a readable .npz archive ({error})") from None
    return strategy


def _node_blocks(tree: PublicTree, array: FloatArray) -> Iterator[tuple[int, int, FloatArray]]:
    """Every decision node's distributions over a run of consecutive segments that walk one betting range (their
    blocks are consecutive in ``array``), as a view ``(segments, actions, hands)`` of ``array``; with the run's
    first segment and the node."""
    segments, betting, hands = tree.segments, tree.betting, tree.num_hands
    starts = np.flatnonzero(np.diff(segments.range_index, prepend=-1) != 0)
    for first, stop in zip(starts.tolist(), [*starts[1:].tolist(), segments.count], strict=True):
        walked = int(segments.range_index[first])
        width, base = int(tree.range_size[walked]), int(segments.offset[first])
        run = array[base : base + (stop - first) * width].reshape(stop - first, width)
        start, end = betting.ranges[walked]
        for node in range(int(start), int(end)):
            offset = int(tree.node_offset[node])
            if offset >= 0:
                actions = int(betting.num_children[node])
                yield first, node, run[:, offset : offset + actions * hands].reshape(stop - first, actions, hands)


def _check_distributions(tree: PublicTree, array: FloatArray, fail: Callable[[str], StrategyFileError]) -> None:
    """Refuse a probability that is not finite or is negative, or a distribution whose sum is further than
    :data:`ROW_TOLERANCE` from 1, naming the first such information state."""
    for first, node, block in _node_blocks(tree, array):
        total = block.sum(axis=1)
        for problem, bad in (
            ("a probability that is not finite", ~np.isfinite(block).all(axis=1)),
            ("a negative probability", (block < 0).any(axis=1)),
            ("probabilities summing to {total:.9g}", ~(np.abs(total - 1.0) <= ROW_TOLERANCE)),
        ):
            if bad.any():
                segment, hand = (int(i) for i in np.argwhere(bad)[0])
                text = problem.format(total=total[segment, hand])
                raise fail(f"has {text} at {_information_state(tree, first + segment, node, hand)}")


def _information_state(tree: PublicTree, segment: int, node: int, hand: int) -> str:
    """``betting 'cr', board '2c', hand '3c3d'``: an information state of the tree, as a message names it."""
    suits = tree.rules.num_suits
    board = "".join(card_name(card, suits) for cards in tree.segments.boards[segment] for card in cards)
    cards = "".join(card_name(int(card), suits) for card in tree.hands[hand])
    return f"betting {tree.betting.sequence[node]!r}, board {board!r}, hand {cards!r}"
