"""Where a trained opponent came from, and the JSON files that carry it (never pickle).

Every file we write for a trained opponent -- an NFSP sidecar beside its weights, an RLCard
``CFRAgent`` table -- starts with the same fields: ``format``, ``format_version``, ``kind``,
``game``, ``rules_fingerprint``, ``units``, ``episodes`` or ``iterations``, ``seed``,
``hyperparameters``, ``training_seconds``, ``versions`` and the exact ``nash_conv`` and
``exploitability`` of what was trained (on the compiled tree, in the game's units).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any, Generic, TypeVar

from adapters.inputs import InputError

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


@dataclass(frozen=True)
class CheckPoint:
    """One exact check of an opponent during training."""

    amount: int
    """Episodes or iterations so far."""
    seconds: float
    """Training time so far (building the agents and the environment included, the checks excluded):
    the same clock as :attr:`Provenance.training_seconds`."""
    nash_conv: float
    nodes_touched: int | None = None
    """Game-tree nodes the trainer had touched (a neural CFR trainer's traversals), if it counts them."""


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
    curve: tuple[CheckPoint, ...] = field(default=())
    """Exact NashConv against the amount trained, at the checks made during training (none in files
    trained without ``--check-every``)."""
    stopped_by: str = "amount"
    """``"amount"`` (all episodes or iterations ran) or ``"target_exploitability"``."""

    def describe(self) -> str:
        """``"40,000 episodes, 17.0 min"``: what the opponent table prints."""
        amount = f"{self.episodes:,} episodes" if self.episodes is not None else f"{self.iterations:,} iterations"
        return f"{amount}, {_duration(self.training_seconds)}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["curve"] = [
            [
                point.amount,
                point.seconds,
                point.nash_conv,
                *([] if point.nodes_touched is None else [point.nodes_touched]),
            ]
            for point in self.curve
        ]
        return {"format": FORMAT, "format_version": FORMAT_VERSION, **data}


def _duration(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def provenance_of(data: object, source: str) -> Provenance:
    """Check the common fields of a trained-opponent JSON object."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{source!r} is not a {FORMAT} file")
    if data.get("format_version") != FORMAT_VERSION:
        raise InputError(f"{source!r} has format_version {data.get('format_version')!r}; this reads {FORMAT_VERSION}")
    fields = Provenance.__dataclass_fields__
    optional = {"curve", "stopped_by"}
    try:
        values = {name: data[name] for name in fields if name not in optional or name in data}
        if "curve" in values:
            values["curve"] = tuple(
                CheckPoint(int(point[0]), float(point[1]), float(point[2]), *(int(k) for k in point[3:4]))
                for point in values["curve"]
            )
        return Provenance(**values)
    except (KeyError, TypeError, ValueError) as error:
        raise InputError(f"{source!r} lacks the field {error}") from None


def check_game(provenance: Provenance, game_id: str, rules_fingerprint: str, source: str) -> None:
    """Refuse a trained opponent used on another game or on changed rules."""
    if provenance.game != game_id:
        raise InputError(f"{source} was trained on {provenance.game}, not {game_id}")
    if provenance.rules_fingerprint != rules_fingerprint:
        raise InputError(f"{source} was trained on other rules of {game_id} ({provenance.rules_fingerprint})")
