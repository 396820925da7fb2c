r"""Strategies of abstract games on disk: one distribution per (betting node, bucket) row, and the abstraction
they are read through.

A strategy of an :class:`~cfr_agents.abstract_game.AbstractGame` is the ``(rows, 3)`` array :math:`\sigma(d, b,
a)`, each row a distribution over its betting node's legal actions, zero past them. It is saved as two files
with one stem, as public-tree strategies are (:func:`~cfr_agents.public_tree.strategy_file.strategy_paths`):

* ``<stem>.npz``: one stored float32 array, the rows one after another
  (:func:`~cfr_agents.public_tree.strategy_file.write_probabilities`);
* ``<stem>.json``: the sidecar, written last: ``format`` (:data:`FORMAT`), ``format_version``, ``game``,
  ``rules_fingerprint``, ``abstraction`` (the directory the abstraction was loaded from, resolved),
  ``abstraction_sha256`` (the digest of its tables), ``rows``, ``algorithm``, ``parameters``, ``iterations``
  and ``npz_sha256`` (the SHA-256 of the ``.npz`` file).

Loading reads the abstraction from the sidecar's directory (or the one given) and refuses, in one line, tables
whose digest is not the sidecar's, another game or rules, another number of rows, an archive whose SHA-256 is
not the sidecar's, and rows that are not distributions over their node's legal actions.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import pyspiel
from numpy.typing import NDArray

from adapters.games import canonical_game_id
from adapters.holdem.engine import RLCARD_LIMIT
from adapters.inputs import MAX_SIDECAR_BYTES, InputError, read_json
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.files import check_outputs
from cfr_agents.holdem_play import HoldemPolicy, HoldemRLCardAgent, Position, openspiel_position
from cfr_agents.public_tree.strategy_file import (
    ROW_TOLERANCE,
    StrategyFileError,
    read_archive,
    strategy_paths,
    write_pair,
)

FORMAT: Final = "cfr-agents-abstract-strategy"
FORMAT_VERSION: Final = 1
FloatArray = NDArray[np.float64]
_FIELDS: Final[Mapping[str, type]] = {
    "game": str,
    "rules_fingerprint": str,
    "abstraction": str,
    "abstraction_sha256": str,
    "rows": int,
    "algorithm": str,
    "parameters": dict,
    "iterations": int,
    "npz_sha256": str,
}


@dataclass(frozen=True)
class AbstractStrategy:
    """A strategy read back by :func:`load_abstract_strategy`."""

    game: AbstractGame
    strategy: FloatArray = field(repr=False)
    """``(rows, 3)`` float64, each row divided by its sum."""
    algorithm: str
    parameters: Mapping[str, object]
    iterations: int

    @property
    def game_id(self) -> str:
        return self.game.game_id

    def at(self, position: Position) -> FloatArray:
        """The probabilities of the legal actions at ``position``: the row of its betting node and its bucket."""
        game = self.game
        bucket = game.abstraction.bucket(int(game.engine.betting.round[position.node]), position.hole, position.board)
        n = int(game.engine.betting.num_children[position.node])
        row: FloatArray = self.strategy[game.row(position.node, bucket), :n]
        return row

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        """``{action: probability}`` at ``state``, a ``pyspiel`` state of this ``universal_poker`` game where
        ``player_id`` (by default the player to act) acts (:meth:`at`)."""
        engine = self.game.engine
        position = openspiel_position(engine, state, player_id)
        return dict(zip(engine.legal_actions(position.node), self.at(position).tolist(), strict=True))

    def openspiel_policy(self) -> HoldemPolicy:
        """This strategy as an ``open_spiel.python.policy.Policy`` of OpenSpiel's game."""
        if self.game_id == RLCARD_LIMIT:
            raise InputError(f"a strategy of {RLCARD_LIMIT} plays in RLCard's env, not in an OpenSpiel game")
        return HoldemPolicy(self.game.engine, self.at)

    def rlcard_agent(self) -> HoldemRLCardAgent:
        """This strategy as an agent of RLCard's ``limit-holdem`` env (a strategy of ``rlcard:limit-holdem``)."""
        if self.game_id != RLCARD_LIMIT:
            raise InputError(f"a strategy of {self.game_id} plays in OpenSpiel's game, not in RLCard's env")
        return HoldemRLCardAgent(self.game.engine, self.at)


def check_rows(game: AbstractGame, strategy: FloatArray, chunk: int = 1 << 20) -> str | None:
    """What is wrong with ``strategy`` as a ``(rows, 3)`` strategy of ``game``, or ``None``; read a ``chunk`` of
    rows at a time, so that its temporaries stay small beside a strategy of gigabytes."""
    if strategy.shape != (game.num_rows, 3):
        return f"has shape {list(strategy.shape)}, not [{game.num_rows}, 3]"
    for start in range(0, game.num_rows, chunk):
        rows = strategy[start : start + chunk]
        num_actions = game.actions_of(slice(start, start + chunk))
        legal = np.arange(3)[None, :] < num_actions[:, None]
        total = rows.sum(axis=1)
        for problem, bad in (
            ("a probability that is not finite", ~np.isfinite(rows).all(axis=1)),
            ("a negative probability", (rows < 0).any(axis=1)),
            ("a probability on an illegal action", ((rows != 0) & ~legal).any(axis=1)),
            ("probabilities summing to {total:.9g}", ~(np.abs(total - 1.0) <= ROW_TOLERANCE)),
        ):
            if bad.any():
                row = start + int(np.flatnonzero(bad)[0])
                node = int(game.nodes_of(np.array([row]))[0])
                where = f"betting {game.engine.betting.sequence[node]!r}, bucket {row - int(game.row_base[node])}"
                return "has " + problem.format(total=total[row - start]) + f" at {where}"
    return None


def save_abstract_strategy(
    path: str | os.PathLike[str],
    game: AbstractGame,
    strategy: FloatArray,
    *,
    algorithm: str,
    parameters: Mapping[str, object],
    iterations: int,
) -> None:
    """Write ``strategy`` as the pair of files ``path`` names, each atomically, the sidecar last; a strategy
    that is not ``game``'s, a game not loaded from an abstraction directory (:meth:`AbstractGame.load`), or
    parameters that are not JSON, are refused before anything is written."""
    if game.source is None:
        raise StrategyFileError("cannot save a strategy of an abstraction that is not in a directory: save it first")
    arrays_path, sidecar_path = strategy_paths(path)
    check_outputs(arrays_path, sidecar_path)
    given = np.asarray(strategy, dtype=np.float64)
    problem = check_rows(game, given)
    if problem is not None:
        raise StrategyFileError(f"cannot save the {algorithm} strategy: it {problem}; nothing was written")
    header: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": game.game_id,
        "rules_fingerprint": game.rules_fingerprint,
        "abstraction": str(game.source),
        "abstraction_sha256": game.abstraction_sha256,
        "rows": game.num_rows,
        "algorithm": algorithm,
        "parameters": dict(parameters),
        "iterations": iterations,
        "npz_sha256": "",
    }
    try:
        json.dumps(header, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise StrategyFileError(f"cannot save the {algorithm} strategy: parameters are not JSON ({error})") from None
    write_pair(arrays_path, sidecar_path, given.reshape(-1), header)


def is_abstract_strategy(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names the sidecar (or archive) of an abstract strategy: its sidecar says this format."""
    try:
        _, sidecar = strategy_paths(path)
        data = read_json(sidecar, "strategy sidecar", StrategyFileError, limit=MAX_SIDECAR_BYTES)
    except InputError:
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def files_read(path: str | os.PathLike[str]) -> list[Path]:
    """What loading the abstract strategy ``path`` names reads besides ``path``: the other file of its pair and
    the files of the abstraction its sidecar names (nothing for any other file)."""
    if not is_abstract_strategy(path):
        return []
    arrays, sidecar = strategy_paths(path)
    data = read_json(sidecar, "abstract strategy sidecar", StrategyFileError, limit=MAX_SIDECAR_BYTES)
    directory = Path(str(data.get("abstraction", "")))
    held = sorted(entry for entry in directory.iterdir() if entry.is_file()) if directory.is_dir() else []
    return [arrays, sidecar, *held]


def load_abstract_strategy(
    path: str | os.PathLike[str], *, game_id: str | None = None, abstraction: str | os.PathLike[str] | None = None
) -> AbstractStrategy:
    """The strategy of the pair of files ``path`` names, read through the abstraction in the directory its
    sidecar names (or ``abstraction``); with ``game_id``, a file for another game is refused."""
    arrays_path, sidecar_path = strategy_paths(path)

    def fail(problem: str) -> StrategyFileError:
        return StrategyFileError(f"abstract strategy {str(sidecar_path)!r} {problem}")

    header = _read_sidecar(sidecar_path, fail)
    if game_id is not None and canonical_game_id(game_id) != canonical_game_id(header["game"]):
        raise fail(f"is for {header['game']}, not {canonical_game_id(game_id)}")
    directory = Path(header["abstraction"] if abstraction is None else abstraction)
    game = AbstractGame.load(directory, header["game"])
    if game.abstraction_sha256 != header["abstraction_sha256"]:
        raise fail(f"was trained on the abstraction {header['abstraction_sha256']}; {str(directory)!r} is another")
    if game.rules_fingerprint != header["rules_fingerprint"]:
        raise fail(f"was made for rules {header['rules_fingerprint']}; the installed game has {game.rules_fingerprint}")
    if header["rows"] != game.num_rows:
        raise fail(f"declares {header['rows']:,} rows; the abstract game has {game.num_rows:,}")

    size = game.num_rows * 3
    strategy = read_archive(arrays_path, "abstract strategy", size, header["npz_sha256"]).reshape(-1, 3)
    problem = check_rows(game, strategy)
    if problem is not None:
        raise StrategyFileError(f"abstract strategy {str(arrays_path)!r} {problem}")
    strategy /= strategy.sum(axis=1, keepdims=True)
    return AbstractStrategy(game, strategy, header["algorithm"], header["parameters"], header["iterations"])


def _read_sidecar(path: Path, fail: Callable[[str], StrategyFileError]) -> dict[str, Any]:
    data = read_json(path, "abstract strategy sidecar", StrategyFileError, limit=MAX_SIDECAR_BYTES)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise fail(f"is not a {FORMAT} sidecar")
    version = data.get("format_version")
    if isinstance(version, bool) or version != FORMAT_VERSION:
        raise fail(f"has format_version {version!r}; this version reads {FORMAT_VERSION}")
    for name, kind in _FIELDS.items():
        value = data.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise fail(f"has no valid {name!r} field")
    if data["iterations"] < 0 or data["rows"] < 1:
        raise fail(f"has {data['iterations']} iterations and {data['rows']} rows")
    return data
