"""Where a trained opponent came from, and the JSON files that carry it (never pickle).

Every file we write for a trained opponent -- an NFSP sidecar beside its weights, an RLCard
``CFRAgent`` table -- starts with the same fields: ``format``, ``format_version``, ``kind``,
``game``, ``rules_fingerprint``, ``units``, ``episodes`` or ``iterations``, ``seed``,
``hyperparameters``, ``training_seconds``, ``versions`` and the exact ``nash_conv`` and
``exploitability`` of what was trained (on the compiled tree, in the game's units).
"""

from __future__ import annotations

import math
import platform
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any, Generic, TypeVar

from adapters.inputs import InputError
from cfr_agents.training import CurvePoint

Progress = Callable[[int, Any], bool]
"""Called by a trainer after each episode or iteration with the count so far and the agent as it
plays now; ``True`` stops training there."""

AgentT = TypeVar("AgentT")


@dataclass(frozen=True)
class Trained(Generic[AgentT]):
    """What a trainer returns."""

    agent: AgentT
    hyperparameters: dict[str, Any]
    amount: int
    """Episodes or iterations run (fewer than asked when the callback stopped training)."""


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
    """The registry name of its family (:data:`eval.opponents.FAMILIES`): ``rlcard-nfsp``, ``openspiel-nfsp``,
    ``rlcard-cfr``."""
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
    curve: tuple[CurvePoint, ...] = field(default=())
    """Exact NashConv against the episodes or iterations trained, at the checks made during training (none in
    files trained without ``--check-every``, ``--eval-every`` or ``--curve``): the curve type of every solver,
    its ``seconds`` the training time so far (building the agents included, the checks excluded)."""
    stopped_by: str = "amount"
    """``train-opponent``: ``"amount"`` (all episodes or iterations ran) or ``"target_exploitability"``; ``train``
    (Deep CFR, SD-CFR): what stopped its loop, ``"iterations"``, ``"time_limit"`` or ``"target_nash_conv"``."""

    def describe(self) -> str:
        """``"40,000 episodes, 17.0 min"``: what the opponent table prints."""
        amount = f"{self.episodes:,} episodes" if self.episodes is not None else f"{self.iterations:,} iterations"
        return f"{amount}, {_duration(self.training_seconds)}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["curve"] = [
            [
                point.iteration,
                point.seconds,
                point.nash_conv,
                *([] if point.nodes_touched is None else [point.nodes_touched]),
            ]
            for point in self.curve
        ]
        return {"format": FORMAT, "format_version": FORMAT_VERSION, **data}


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


_TEXT, _COUNT, _NUMBER, _OBJECT = "a string", "an integer", "a finite number", "an object"
_FIELDS: Mapping[str, str] = {
    "kind": _TEXT,
    "game": _TEXT,
    "rules_fingerprint": _TEXT,
    "units": _TEXT,
    "episodes": _COUNT,
    "iterations": _COUNT,
    "seed": _COUNT,
    "hyperparameters": _OBJECT,
    "training_seconds": _NUMBER,
    "versions": _OBJECT,
    "nash_conv": _NUMBER,
    "exploitability": _NUMBER,
    "stopped_by": _TEXT,
}
"""What each field of :class:`Provenance` but ``curve`` must be (``episodes`` and ``iterations`` may be null)."""


def _is(value: object, kind: str) -> bool:
    """Whether the JSON ``value`` is ``kind``, one of the kinds of :data:`_FIELDS` (a boolean is no number)."""
    if kind == _TEXT:
        return isinstance(value, str)
    if kind == _OBJECT:
        return isinstance(value, dict)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, int) if kind == _COUNT else math.isfinite(value)


def provenance_of(data: object, source: str) -> Provenance:
    """Check the common fields of a trained-opponent JSON object: each present (but ``curve`` and
    ``stopped_by``) and of its type, episodes or iterations counted, each point of the curve an iteration,
    seconds and NashConv, and the nodes touched if counted."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{source!r} is not a {FORMAT} file")
    if data.get("format_version") != FORMAT_VERSION:
        raise InputError(f"{source!r} has format_version {data.get('format_version')!r}; this reads {FORMAT_VERSION}")
    optional = {"curve", "stopped_by"}
    missing = [name for name in Provenance.__dataclass_fields__ if name not in optional and name not in data]
    if missing:
        raise InputError(f"{source!r} lacks the field {missing[0]!r}")
    for name, kind in _FIELDS.items():
        value = data.get(name)
        if name in data and not _is(value, kind) and not (value is None and name in ("episodes", "iterations")):
            raise InputError(f"{source!r}: its field {name!r} must be {kind}")
    if data["episodes"] is None and data["iterations"] is None:
        raise InputError(f"{source!r} gives neither the episodes nor the iterations trained")
    curve = data.get("curve", [])
    kinds = (_COUNT, _NUMBER, _NUMBER, _COUNT)
    if not isinstance(curve, list) or not all(
        isinstance(point, list) and len(point) in (3, 4) and all(map(_is, point, kinds)) for point in curve
    ):
        raise InputError(f"{source!r}: its field 'curve' must hold [iteration, seconds, NashConv(, nodes)] points")
    values = {name: data[name] for name in Provenance.__dataclass_fields__ if name in data}
    points = tuple(CurvePoint(point[0], float(point[1]), float(point[2]), *point[3:]) for point in curve)
    return Provenance(**{**values, "curve": points})


def check_game(provenance: Provenance, game_id: str, rules_fingerprint: str, source: str) -> None:
    """Refuse a trained opponent used on another game or on changed rules."""
    if provenance.game != game_id:
        raise InputError(f"{source} was trained on {provenance.game}, not {game_id}")
    if provenance.rules_fingerprint != rules_fingerprint:
        raise InputError(f"{source} was trained on other rules of {game_id} ({provenance.rules_fingerprint})")
