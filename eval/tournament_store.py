"""What a tournament keeps of the work it has done, so that a rerun picks up where a stopped one left off.

Each job of a round robin (a pairing's match, an agent's exploitability) is written, as it finishes, to its own
file in ``DIR/jobs/`` (atomically: a file is whole or absent): ``match-<k>.json`` for pairing ``k`` (in the order of
:func:`eval.tournament.pairings`), ``score-<i>.json`` for agent ``i``. Each file holds the job's settings -- the
game, its agents, hands, seed, pairing, ``aivat`` -- and, for every agent that is a file, the size and modification
time of each file loading it reads (the file, a model's weights, an abstract strategy's pair and abstraction), with
the job's result.

A rerun with the same ``--out`` reads a job's file back instead of doing the job when its settings and its agents'
files are the same: as a match draws its streams from its seed and pairing alone, that is the result the job
would give again. A job whose stored settings differ, or whose file is missing, is done afresh and its file
replaced. A file that is not one this module wrote (not JSON, another format, a field of the wrong type) is
refused in one line, naming it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from adapters.inputs import InputError, read_json
from cfr_agents.abstract_strategy import files_read
from cfr_agents.files import check_writable, write_atomic
from eval.aivat import AivatEstimate
from eval.match import AgentScore, MatchReport, MatchSpec
from eval.opponents import is_file_name
from eval.opponents.nfsp import weights_read

FORMAT = "cfr-agents-tournament-job"
VERSION = 1
MAX_JOB_BYTES = 1 << 20
"""The largest job file read back (one match's report is about a kilobyte)."""

Job = MatchSpec | tuple[str, str]
"""A match, or ``(game_id, agent)``: an agent's exploitability."""


def fingerprint(name: str) -> dict[str, list[int]] | None:
    """``[size, modification time in ns]`` of each file loading the agent ``name`` reads, by path; ``None`` for a
    named agent (``random``, ``rlcard-dqn``)."""
    if not is_file_name(name):
        return None
    read = [Path(name)]
    weights = weights_read(name)
    if weights is not None:
        read.append(weights)
    read += files_read(name)
    stamps: dict[str, list[int]] = {}
    for path in read:
        try:
            info = os.stat(path)
        except OSError:
            continue  # the loader refuses it when the job runs
        stamps[os.path.realpath(path)] = [info.st_size, info.st_mtime_ns]
    return stamps


def settings(kind: str, index: int, job: Job, fingerprints: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a stored result of ``job`` (``kind`` ``"match"`` or ``"score"``, its ``index``) must have."""
    if isinstance(job, MatchSpec):
        names = list(job.agents)
        head: dict[str, Any] = {"game": job.game_id, "agents": names, "hands": job.hands, "seed": job.seed}
        head |= {"spawn_key": list(job.spawn_key), "aivat": job.aivat}
    else:
        names = [job[1]]
        head = {"game": job[0], "agents": names}
    return {"kind": kind, "index": index, **head, "files": {name: fingerprints[name] for name in names}}


class JobStore:
    """The directory ``jobs/`` of a tournament's output directory ``out``, created if missing."""

    def __init__(self, out: Path) -> None:
        self.directory = out / "jobs"
        try:
            self.directory.mkdir(exist_ok=True)
        except OSError as error:
            raise InputError(f"cannot create directory {str(self.directory)!r}: {error.strerror}") from None
        check_writable(self.path("match", 0))  # refused now, not after the first job is done

    def path(self, kind: str, index: int) -> Path:
        return self.directory / f"{kind}-{index}.json"

    def read(self, kind: str, index: int, wanted: Mapping[str, Any]) -> MatchReport | AgentScore | None:
        """The stored result of the job with the settings ``wanted``; ``None`` when there is none, or it was
        done with other settings."""
        path = self.path(kind, index)
        if not path.exists():
            return None
        data = read_json(path, "tournament job file", limit=MAX_JOB_BYTES)
        where = f"tournament job file {str(path)!r}"
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"{where} is not a {FORMAT} file")
        if data.get("version") != VERSION:
            raise InputError(f"{where} has version {data.get('version')!r}; this version reads {VERSION}")
        if data.get("settings") != wanted:
            return None
        result = data.get("result")
        read = match_report(result, where) if kind == "match" else agent_score(result, where)
        agents = list(read.agents) if isinstance(read, MatchReport) else [read.name]
        if agents != wanted["agents"] or (isinstance(read, MatchReport) and read.game_id != wanted["game"]):
            raise InputError(f"{where}: its result is not for the job its settings name")
        return read

    def write(self, kind: str, index: int, wanted: Mapping[str, Any], result: MatchReport | AgentScore) -> None:
        document = {"format": FORMAT, "version": VERSION, "settings": dict(wanted), "result": result.to_json()}
        write_atomic(self.path(kind, index), json.dumps(document, indent=2) + "\n")


def _field(data: Any, key: str, check: Callable[[Any], bool], where: str) -> Any:
    if not isinstance(data, dict) or key not in data or not check(data[key]):
        raise InputError(f"{where}: its result has no valid {key!r}")
    return data[key]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_number(item) for item in value)


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def match_report(data: Any, where: str) -> MatchReport:
    """The :class:`~eval.match.MatchReport` whose :meth:`~eval.match.MatchReport.to_json` is ``data``."""
    from eval.holdem import big_blind

    agents = _field(data, "agents", lambda v: isinstance(v, list) and len(v) == 2 and all(map(_text, v)), where)
    game_id, units = _field(data, "game", _text, where), _field(data, "units", _text, where)
    seats = _field(data, "exact_seat_values", _optional(_pair), where)
    aivat = _field(data, "aivat", _optional(lambda v: isinstance(v, dict)), where)
    return MatchReport(
        game_id=game_id,
        agents=(agents[0], agents[1]),
        units=units,
        hands=_field(data, "hands", _count, where),
        mean=float(_field(data, "mean", _number, where)),
        standard_error=float(_field(data, "standard_error", _number, where)),
        ci95=tuple(map(float, _field(data, "ci95", _pair, where))),  # type: ignore[arg-type]
        exact=_float(_field(data, "exact", _optional(_number), where)),
        exact_seat_values=None if seats is None else (float(seats[0]), float(seats[1])),
        exact_note=_field(data, "exact_note", _text, where),
        big_blind=big_blind(game_id, units),
        aivat=None if aivat is None else _aivat(aivat, where),
    )


def _aivat(data: Mapping[str, Any], where: str) -> AivatEstimate:
    return AivatEstimate(
        known=_field(data, "known", _text, where),
        hands=_field(data, "hands", _count, where),
        mean=float(_field(data, "mean", _number, where)),
        standard_error=float(_field(data, "standard_error", _number, where)),
        ci95=tuple(map(float, _field(data, "ci95", _pair, where))),  # type: ignore[arg-type]
    )


def agent_score(data: Any, where: str) -> AgentScore:
    """The :class:`~eval.match.AgentScore` whose :meth:`~eval.match.AgentScore.to_json` is ``data``."""
    return AgentScore(
        name=_field(data, "agent", _text, where),
        units=_field(data, "units", _text, where),
        nash_conv=_float(_field(data, "nash_conv", _optional(_number), where)),
        exploitability=_float(_field(data, "exploitability", _optional(_number), where)),
        note=_field(data, "note", _text, where),
    )


def _float(value: int | float | None) -> float | None:
    return None if value is None else float(value)


__all__ = ["FORMAT", "JobStore", "agent_score", "fingerprint", "match_report", "settings"]
