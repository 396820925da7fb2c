"""Where a trained opponent came from, and the JSON files that carry it (never pickle).

Every file we write for a trained opponent -- an NFSP sidecar beside its weights, an RLCard
``CFRAgent`` table -- starts with the same fields: ``format``, ``format_version``, ``kind``,
``game``, ``rules_fingerprint``, ``units``, ``episodes`` or ``iterations``, ``seed``,
``hyperparameters``, ``training_seconds``, ``versions`` and the exact ``nash_conv`` and
``exploitability`` of what was trained (on the compiled tree, in the game's units).

A game that no compiled tree holds (``rlcard:limit-holdem``) has no exact NashConv: there both fields are
``null``, never an estimate, and the file says what is measured instead in its ``evaluation``
(:class:`Evaluation`: RLCard's own evaluation of the agent against its ``RandomAgent``).
"""

from __future__ import annotations

import math
import platform
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Generic, TypeVar

from adapters.inputs import InputError
from cfr_agents.training import CurvePoint
from cfr_agents.tree_cache import installed_versions

Progress = Callable[[int, Any], bool]
"""Called by a trainer after each episode or iteration with the count so far and the agent as it
plays now; ``True`` stops training there."""

AgentT = TypeVar("AgentT")


@dataclass(frozen=True)
class Evaluation:
    """RLCard's own evaluation of an agent, as RLCard's ``examples/run_rl.py`` reports it: the agent in seat 0
    and RLCard's ``RandomAgent`` in the other, ``rlcard.utils.tournament(env, games)[0]``, the agent's average
    payoff per game over ``games`` games (in the game's units), in an env made with ``seed`` after NumPy's,
    Python's and torch's generators are seeded with it. A sampled figure against one weak opponent: it says
    how the agent fares against random play, not how exploitable it is."""

    games: int
    seed: int
    average_payoff: float
    every: int | None = None
    """Episodes between the evaluations made during training (``evaluate_every`` of the example), if any."""
    curve: tuple[tuple[int, float], ...] = ()
    """``(episode, average payoff)`` at each evaluation during training, as the example logs it: in the training
    env itself, after the 0-based ``episode`` (so ``episode + 1`` episodes trained) for every multiple of
    :attr:`every`; its seed is the training's."""
    seconds: float = 0.0
    """Time spent evaluating, in training and after it (kept out of the training time)."""

    def describe(self, units: str) -> str:
        """``"+1.234 BB/game against RLCard's RandomAgent over 2,000 games (seed 7)"``."""
        return (
            f"{self.average_payoff:+.3f} {units}/game against RLCard's RandomAgent "
            f"over {self.games:,} games (seed {self.seed})"
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["curve"] = [list(point) for point in self.curve]
        return data


NO_TREE = "not computed (no compiled tree)"
"""What stands for a NashConv that was not computed: the game has no compiled tree."""


def nash_conv_text(value: float | None, units: str) -> str:
    """``"0.88353 BB"``, or :data:`NO_TREE` for a NashConv (or exploitability) that was not computed."""
    return NO_TREE if value is None else f"{value:.6g} {units}"


@dataclass(frozen=True)
class Trained(Generic[AgentT]):
    """What a trainer returns."""

    agent: AgentT
    hyperparameters: dict[str, Any]
    amount: int
    """Episodes or iterations run (fewer than asked when the callback stopped training)."""
    evaluation: Evaluation | None = None
    """RLCard's example evaluation of the agent, for the trainers that make it (RLCard's DQN and NFSP)."""


FORMAT = "cfr-agents-opponent"
FORMAT_VERSION = 1
_LIBRARIES = ("cfr-agents", "numpy", "rlcard", "open_spiel", "torch")


def library_versions() -> dict[str, str]:
    """Python and the installed versions of the libraries training depends on."""
    return {"python": platform.python_version(), **installed_versions(_LIBRARIES)}


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
    nash_conv: float | None
    """Exact NashConv of the trained agent's strategy on the compiled tree, in :attr:`units`; ``None`` on a game
    no compiled tree holds (the number is not estimated: :attr:`evaluation` says what is measured)."""
    exploitability: float | None
    curve: tuple[CurvePoint, ...] = field(default=())
    """Exact NashConv against the episodes or iterations trained, at the checks made during training (none in
    files trained without ``--check-every``, ``--eval-every`` or ``--curve``): the curve type of every solver,
    its ``seconds`` the training time so far (building the agents included, the checks excluded)."""
    stopped_by: str = "amount"
    """``train-opponent``: ``"amount"`` (all episodes or iterations ran) or ``"target_exploitability"``; ``train``
    (Deep CFR, SD-CFR): what stopped its loop, ``"iterations"``, ``"time_limit"`` or ``"target_nash_conv"``."""
    evaluation: Evaluation | None = None
    """RLCard's example evaluation of the trained agent (RLCard's DQN and NFSP), else ``None``."""

    def describe(self) -> str:
        """``"40,000 episodes, 17.0 min"``: what the opponent table prints; where NashConv was not computed,
        followed by ``"NashConv not computed (no compiled tree)"`` and the evaluation made instead."""
        amount = f"{self.episodes:,} episodes" if self.episodes is not None else f"{self.iterations:,} iterations"
        text = f"{amount}, {_duration(self.training_seconds)}"
        if self.nash_conv is not None:
            return text
        measured = "" if self.evaluation is None else f"; {self.evaluation.describe(self.units)}"
        return f"{text}; NashConv {NO_TREE}{measured}"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if self.evaluation is None:
            del data["evaluation"]  # files without one read as before
        else:
            data["evaluation"] = self.evaluation.to_json()
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
"""What each field of :class:`Provenance` but ``curve`` and ``evaluation`` must be (:data:`_NULLABLE` may be
null)."""
_NULLABLE = ("episodes", "iterations", "nash_conv", "exploitability")
_EVALUATION: Mapping[str, str] = {"games": _COUNT, "seed": _COUNT, "average_payoff": _NUMBER, "seconds": _NUMBER}


def _is(value: object, kind: str) -> bool:
    """Whether the JSON ``value`` is ``kind``, one of the kinds of :data:`_FIELDS` (a boolean is no number)."""
    if kind == _TEXT:
        return isinstance(value, str)
    if kind == _OBJECT:
        return isinstance(value, dict)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return isinstance(value, int) if kind == _COUNT else math.isfinite(value)


def _evaluation_of(data: object, source: str) -> Evaluation:
    """Check an ``evaluation`` object (:meth:`Evaluation.to_json`)."""
    problem = f"{source!r}: its field 'evaluation' must hold games, seed, average_payoff, seconds, every, curve"
    if not isinstance(data, dict) or set(data) != set(Evaluation.__dataclass_fields__):
        raise InputError(problem)
    every, curve = data["every"], data["curve"]
    if (
        not all(_is(data[name], kind) for name, kind in _EVALUATION.items())
        or data["games"] <= 0
        or data["seed"] < 0
        or not (every is None or (_is(every, _COUNT) and every > 0))
        or not isinstance(curve, list)
        or not all(isinstance(p, list) and len(p) == 2 and _is(p[0], _COUNT) and _is(p[1], _NUMBER) for p in curve)
    ):
        raise InputError(problem)
    return Evaluation(
        games=data["games"],
        seed=data["seed"],
        average_payoff=float(data["average_payoff"]),
        every=every,
        curve=tuple((episode, float(payoff)) for episode, payoff in curve),
        seconds=float(data["seconds"]),
    )


def provenance_of(data: object, source: str) -> Provenance:
    """Check the common fields of a trained-opponent JSON object: each present (but ``curve``, ``stopped_by``
    and ``evaluation``) and of its type, episodes or iterations counted, NashConv and exploitability both numbers
    or both null, each point of the curve an iteration, seconds and NashConv, and the nodes touched if
    counted."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{source!r} is not a {FORMAT} file")
    if data.get("format_version") != FORMAT_VERSION:
        raise InputError(f"{source!r} has format_version {data.get('format_version')!r}; this reads {FORMAT_VERSION}")
    optional = {"curve", "stopped_by", "evaluation"}
    missing = [name for name in Provenance.__dataclass_fields__ if name not in optional and name not in data]
    if missing:
        raise InputError(f"{source!r} lacks the field {missing[0]!r}")
    for name, kind in _FIELDS.items():
        value = data.get(name)
        if name in data and not _is(value, kind) and not (value is None and name in _NULLABLE):
            raise InputError(f"{source!r}: its field {name!r} must be {kind}")
    if data["episodes"] is None and data["iterations"] is None:
        raise InputError(f"{source!r} gives neither the episodes nor the iterations trained")
    if (data["nash_conv"] is None) != (data["exploitability"] is None):
        raise InputError(f"{source!r}: its fields 'nash_conv' and 'exploitability' must be both numbers or both null")
    curve = data.get("curve", [])
    kinds = (_COUNT, _NUMBER, _NUMBER, _COUNT)
    if not isinstance(curve, list) or not all(
        isinstance(point, list) and len(point) in (3, 4) and all(map(_is, point, kinds)) for point in curve
    ):
        raise InputError(f"{source!r}: its field 'curve' must hold [iteration, seconds, NashConv(, nodes)] points")
    values = {name: data[name] for name in Provenance.__dataclass_fields__ if name in data}
    points = tuple(CurvePoint(point[0], float(point[1]), float(point[2]), *point[3:]) for point in curve)
    evaluation = None if data.get("evaluation") is None else _evaluation_of(data["evaluation"], source)
    return Provenance(**{**values, "curve": points, "evaluation": evaluation})


def check_game(provenance: Provenance, game_id: str, rules_fingerprint: str, source: str) -> None:
    """Refuse a trained opponent used on another game or on changed rules."""
    if provenance.game != game_id:
        raise InputError(f"{source} was trained on {provenance.game}, not {game_id}")
    if provenance.rules_fingerprint != rules_fingerprint:
        raise InputError(f"{source} was trained on other rules of {game_id} ({provenance.rules_fingerprint})")
