"""Where a trained opponent came from, and the JSON files that carry it (never pickle).

Every file we write for a trained opponent -- an NFSP sidecar beside its weights, an RLCard
``CFRAgent`` table -- starts with the same fields: ``format``, ``format_version``, ``kind``,
``game``, ``rules_fingerprint``, ``units``, ``episodes`` or ``iterations``, ``seed``,
``hyperparameters``, ``training_seconds``, ``versions`` and the exact ``nash_conv`` and
``exploitability`` of what was trained (on the compiled tree, in the game's units).
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from importlib import metadata
from typing import Any

from adapters import Game, load_game
from adapters.errors import InputError


@dataclass(frozen=True)
class Kind:
    """What a trainable family trains on and what its amount counts."""

    toolkit: str
    """``"rlcard:"`` or ``"openspiel:"``: the games it trains on."""
    unit: str
    """``"episodes"`` or ``"iterations"``."""


KINDS: Mapping[str, Kind] = {
    "openspiel-nfsp": Kind("openspiel:", "episodes"),
    "rlcard-cfr": Kind("rlcard:", "iterations"),
    "rlcard-nfsp": Kind("rlcard:", "episodes"),
}
"""The families ``cfr-agents train-opponent`` trains (:data:`eval.opponents.training.TRAINERS`)."""
FORMAT = "cfr-agents-opponent"
FORMAT_VERSION = 1
_LIBRARIES = ("cfr-agents", "numpy", "rlcard", "open_spiel", "torch")


def library_versions() -> dict[str, str]:
    """Python and the installed versions of the libraries training depends on."""
    versions = {"python": platform.python_version()}
    for name in _LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


@dataclass(frozen=True)
class Provenance:
    """How an opponent was trained and how exploitable the result is."""

    kind: str
    """The registry name of its family: ``rlcard-nfsp``, ``openspiel-nfsp``, ``rlcard-cfr``."""
    game: str
    rules_fingerprint: str
    units: str
    episodes: int | None
    """Self-play episodes (NFSP), else ``None``."""
    iterations: int | None
    """Solver iterations (RLCard's ``CFRAgent.train()`` calls), else ``None``."""
    seed: int
    hyperparameters: Mapping[str, Any]
    training_seconds: float
    versions: Mapping[str, str]
    nash_conv: float
    """Exact NashConv of the trained agent's strategy on the compiled tree, in :attr:`units`."""
    exploitability: float

    def describe(self) -> str:
        """``"40,000 episodes, 17.0 min"``: what the opponent table prints."""
        amount = f"{self.episodes:,} episodes" if self.episodes is not None else f"{self.iterations:,} iterations"
        return f"{amount}, {_duration(self.training_seconds)}"

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, **asdict(self)}


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def provenance_of(data: object, source: str) -> Provenance:
    """Check the common fields of a trained-opponent JSON object."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{source!r} is not a {FORMAT} file")
    if data.get("format_version") != FORMAT_VERSION:
        raise InputError(f"{source!r} has format_version {data.get('format_version')!r}; this reads {FORMAT_VERSION}")
    fields = Provenance.__dataclass_fields__
    try:
        values = {name: data[name] for name in fields}
        return Provenance(**values)
    except (KeyError, TypeError) as error:
        raise InputError(f"{source!r} lacks the field {error}") from None


def check_request(kind: str, game_id: str) -> Game:
    """Refuse, before any work, a family that cannot train on ``game_id`` or needs a missing extra."""
    game = load_game(game_id)
    if not game_id.startswith(KINDS[kind].toolkit):
        raise InputError(f"{kind} trains on {KINDS[kind].toolkit} games, not {game_id}")
    if kind.endswith("nfsp"):
        from eval.opponents.nfsp import require_torch

        require_torch(kind)
    return game


def check_game(provenance: Provenance, game_id: str, rules_fingerprint: str, source: str) -> None:
    """Refuse a trained opponent used on another game or on changed rules."""
    if provenance.game != game_id:
        raise InputError(f"{source} was trained on {provenance.game}, not {game_id}")
    if provenance.rules_fingerprint != rules_fingerprint:
        raise InputError(f"{source} was trained on other rules of {game_id} ({provenance.rules_fingerprint})")
