r"""Round-robin tournaments: every pair of agents plays a duplicate match (both seats), and every
agent's exact exploitability stands beside its results.

Work goes to an executor (:mod:`cfr_agents.jobs`: local worker processes, or Ray) as specs -- the
game id, agent names or file paths, hands and seeds (:class:`~eval.match.MatchSpec`,
:class:`AgentJob`; on Ray also the contents of policy files) -- never as pickled live agents: each
worker builds the agents it needs from their names. Pairing ``k`` (in the order of
:func:`pairings`) draws its streams from ``SeedSequence(seed, spawn_key=(k,))``, so the results do
not depend on how many workers play them, on which executor, or in what order they finish.

A hold'em game that runs on its public tree (``fhp``) takes public-tree strategy files and ``random``
(:mod:`eval.match`); each worker holds every agent's strategy it plays (2.6 GB a strategy on Flop Hold'em), so
such a tournament wants few workers.

With ``aivat`` (:func:`run_tournament`), each match in which one agent's exact strategy can be queried carries its
AIVAT estimate too (:mod:`eval.aivat`): in ``results.json`` (each match's ``aivat``), ``results.csv``
(``aivat_mean``, ``aivat_standard_error``, empty without it) and below the table of ``results.md``.

A match refused while it is played (an :class:`~adapters.inputs.InputError`: an agent that cannot be asked, a hand
AIVAT cannot read) costs that match only: it is kept as a :class:`MatchFailure`, its agents and its one-line
reason, and every other match still plays and is reported (``failed`` in ``results.json``, a list below the table
of ``results.md``, ``failed`` in its cells; ``results.csv`` holds the matches played).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from adapters import load_game
from adapters.inputs import MAX_JSON_BYTES, InputError, read_json, read_regular
from cfr_agents.jobs import Executor, RayExecutor
from cfr_agents.policy import FORMAT as POLICY_FORMAT
from eval.environments import Z_95
from eval.holdem import big_blind
from eval.match import (
    Agents,
    AgentScore,
    MatchReport,
    MatchSpec,
    check_aivat_game,
    check_hands,
    knows_a_strategy,
    no_tree,
    play_match,
)
from eval.opponents import is_file_name
from eval.opponents.nfsp import one_thread
from eval.tournament_store import JobStore, fingerprint, settings


@dataclass(frozen=True)
class AgentJob:
    """Score one agent exactly: what a worker needs."""

    game_id: str
    name: str
    files: Mapping[str, str] = field(default_factory=dict)
    """As :attr:`eval.match.MatchSpec.files`."""


@dataclass(frozen=True)
class MatchFailure:
    """A match refused while it was played: its agents (``A`` first) and the refusal's message."""

    agents: tuple[str, str]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"agents": list(self.agents), "reason": self.reason}


@dataclass(frozen=True)
class TournamentResult:
    """A round robin's matches (``A`` = the first named of each pairing) and each agent's exploitability."""

    game_id: str
    units: str
    agents: tuple[str, ...]
    hands: int
    seed: int
    matches: tuple[MatchReport, ...]
    scores: tuple[AgentScore, ...]
    failed: tuple[MatchFailure, ...] = ()
    """The matches refused while they were played (:class:`MatchFailure`), in the order of :func:`pairings`."""

    def match(self, row: str, column: str) -> tuple[float, float, float | None] | None:
        """``row``'s (mean, standard error, exact value) against ``column``; ``None`` on the diagonal and for a match
        refused (:attr:`failed`)."""
        for report in self.matches:
            if report.agents == (row, column):
                return report.mean, report.standard_error, report.exact
            if report.agents == (column, row):
                return -report.mean, report.standard_error, None if report.exact is None else -report.exact
        return None

    def field_mean(self, agent: str) -> float | None:
        """``agent``'s mean payoff over all its matches played; ``None`` when none was."""
        values = [cell[0] for other in self.agents if other != agent and (cell := self.match(agent, other))]
        return sum(values) / len(values) if values else None

    def failure(self, row: str, column: str) -> MatchFailure | None:
        """The refusal of the match of ``row`` and ``column`` (either as ``A``), ``None`` if it was not refused."""
        return next((failed for failed in self.failed if set(failed.agents) == {row, column}), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "units": self.units,
            "agents": list(self.agents),
            "hands": self.hands,
            "seed": self.seed,
            "matches": [report.to_json() for report in self.matches],
            "exploitability": [score.to_json() for score in self.scores],
            "failed": [failure.to_json() for failure in self.failed],
        }


def display_names(agents: Sequence[str]) -> list[str]:
    """Short names for tables and plots: a file's stem (``out/dcfr.json`` -> ``dcfr``), unless two collide."""
    short = [Path(name).stem if is_file_name(name) else name for name in agents]
    return short if len(set(short)) == len(short) else list(agents)


def pairings(agents: Sequence[str]) -> list[tuple[str, str]]:
    """Every unordered pair, in order: (0, 1), (0, 2), ..., (1, 2), ..."""
    return [(a, b) for i, a in enumerate(agents) for b in agents[i + 1 :]]


def check_agents(game_id: str, agents: Sequence[str]) -> None:
    """Refuse fewer than two agents, a name given twice, and any agent that does not load for ``game_id``."""
    if len(agents) < 2:
        raise InputError(f"a tournament needs at least 2 agents, got {len(agents)}")
    repeated = sorted({name for name in agents if list(agents).count(name) > 1})
    if repeated:
        raise InputError(f"agent {repeated[0]!r} is named twice")
    loaded = Agents()
    for name in agents:
        loaded.opponent(name, game_id)


def run_tournament(
    game_id: str,
    agents: Sequence[str],
    hands: int,
    seed: int,
    executor: Executor,
    on_done: Callable[[str], None] | None = None,
    *,
    aivat: bool = False,
    store: JobStore | None = None,
) -> TournamentResult:
    """Play the round robin on ``executor`` (local processes or Ray); a match refused while it is played is kept
    as a :class:`MatchFailure` and the others go on (module docstring).

    On Ray, a policy file travels as its contents, so a worker on another machine needs no shared disk.
    With ``aivat``, every match in which one agent's exact strategy can be queried is estimated with AIVAT as
    well (:mod:`eval.aivat`); a match of two agents that cannot be queried has none. A game that runs on its
    public tree is refused. With ``store``, each job's result is written there as it finishes, and a job stored
    with the same settings and agent files is read back instead of done again (:mod:`eval.tournament_store`).
    """
    check_hands(hands)
    if aivat:
        check_aivat_game(game_id)
    check_agents(game_id, agents)
    units = load_game(game_id).units
    files = policy_contents(agents) if isinstance(executor, RayExecutor) else {}
    specs = [
        MatchSpec(game_id, pair, hands, seed, spawn_key=(index,), files=files, aivat=aivat)
        for index, pair in enumerate(pairings(agents))
    ]
    jobs: list[AgentJob] = [AgentJob(game_id, name, files) for name in agents]
    work: list[MatchSpec | AgentJob] = [*specs, *jobs]
    slots = [("match", k) for k in range(len(specs))] + [("score", i) for i in range(len(jobs))]
    results: list[MatchReport | MatchFailure | AgentScore | None] = [None] * len(work)
    if store is not None:  # the agents' files are looked at only when there is a store to compare them with
        stamps = {name: fingerprint(name) for name in agents}
        wanted = [
            settings(*slot, job if isinstance(job, MatchSpec) else (job.game_id, job.name), stamps)
            for slot, job in zip(slots, work, strict=True)
        ]
        results = [store.read(*slot, want) for slot, want in zip(slots, wanted, strict=True)]
    position = {id(job): index for index, job in enumerate(work)}

    def finished(job: MatchSpec | AgentJob, result: MatchReport | MatchFailure | AgentScore) -> None:
        index = position[id(job)]
        if store is not None and not isinstance(result, MatchFailure):
            store.write(*slots[index], wanted[index], result)
        if on_done is not None:
            on_done(label(job))

    if on_done is not None:
        for job, kept in zip(work, results, strict=True):
            if kept is not None:
                on_done(f"{label(job)} (played before: read back)")
    todo = [job for job, kept in zip(work, results, strict=True) if kept is None]
    for job, result in zip(todo, executor.map(run_job, todo, finished), strict=True):
        results[position[id(job)]] = result
    matches = tuple(r for r in results if isinstance(r, MatchReport))
    scores = tuple(r for r in results if isinstance(r, AgentScore))
    failed = tuple(r for r in results if isinstance(r, MatchFailure))
    return TournamentResult(game_id, units, tuple(agents), hands, seed, matches, scores, failed)


def policy_contents(agents: Sequence[str]) -> dict[str, str]:
    """The text of each agent that is a policy file, by name (model files and public-tree strategies stay paths)."""
    contents = {}
    for name in agents:
        if is_file_name(name) and Path(name).suffix != ".npz":
            data = read_json(name, "file")
            if isinstance(data, dict) and data.get("format") == POLICY_FORMAT:
                contents[name] = read_regular(name, "policy file", MAX_JSON_BYTES).decode("utf-8")
    return contents


def label(job: MatchSpec | AgentJob) -> str:
    return f"{job.agents[0]} vs {job.agents[1]}" if isinstance(job, MatchSpec) else f"exploitability of {job.name}"


_AGENTS: Agents | None = None


def _worker_agents() -> Agents:
    """This process's agents, built on first use from their names."""
    global _AGENTS
    if _AGENTS is None:
        _AGENTS = Agents()
    return _AGENTS


def run_job(job: MatchSpec | AgentJob) -> MatchReport | MatchFailure | AgentScore:
    """Play or score one job from its spec (in a worker, or in this process), on one thread; a match refused
    while it is played gives its :class:`MatchFailure`."""
    agents = _worker_agents()
    agents.provide(job.files)
    with _quiet(), one_thread():
        if isinstance(job, MatchSpec):
            if job.aivat and not knows_a_strategy(agents, job.game_id, job.agents):
                job = replace(job, aivat=False)  # neither strategy is known: no AIVAT estimate for this match
            try:
                return play_match(job, agents)
            except InputError as error:
                return MatchFailure(job.agents, str(error))
        return agents.score(job.name, job.game_id)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """RLCard's agents print progress with carriage returns while they load or act; drop it."""
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def markdown(result: TournamentResult) -> str:
    """A table to paste into a paper: each row agent's mean payoff per hand against each column
    agent (sampled, with its 95% half-width; the exact value in brackets; ``failed`` for a match refused while it
    was played, listed with its reason below the table), its mean over the field and its exact exploitability."""
    unit = result.units
    chips_per_big_blind = big_blind(result.game_id, unit)
    in_mbb = (
        ""
        if chips_per_big_blind is None
        else " (1 BB = 1000 mbb)"
        if unit == "BB"
        else f" (a big blind is {chips_per_big_blind:g} {unit}; mbb = {unit} x {1000 / chips_per_big_blind:g})"
    )
    head = ["agent", *result.agents, f"mean ({unit}/hand)", f"exploitability ({unit})"]
    lines = [
        f"{result.game_id}: row agent's payoff per hand against the column agent, in {unit}"
        + in_mbb
        + f"; {result.hands:,} hands per match in duplicate pairs; 95% half-width after ±, exact value in "
        "brackets; exploitability = NashConv / 2, exact.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|",
    ]
    scores = {score.name: score for score in result.scores}
    shown = dict(zip(result.agents, display_names(result.agents), strict=True))
    head[1 : 1 + len(result.agents)] = [shown[agent] for agent in result.agents]
    lines[2] = "| " + " | ".join(head) + " |"
    missing = "n/a (no compiled tree)" if no_tree(result.game_id) else "n/a (not queryable)"
    for row in result.agents:
        cells = [f"`{shown[row]}`"]
        for column in result.agents:
            cell = result.match(row, column)
            if cell is None:
                cells.append("failed" if result.failure(row, column) else "--")
                continue
            mean, error, exact = cell
            text = f"{mean:+.3f} ± {1.959963984540054 * error:.3f}"
            cells.append(text + (f" [{exact:+.3f}]" if exact is not None else ""))
        field = result.field_mean(row)
        cells.append("--" if field is None else f"{field:+.3f}")
        score = scores[row]
        cells.append(missing if score.exploitability is None else f"{score.exploitability:.4g}")
        lines.append("| " + " | ".join(cells) + " |")
    estimated = [report for report in result.matches if report.aivat is not None]
    if estimated:
        lines += ["", f"AIVAT ({unit}/hand, 95% half-width after ±; the agent whose exact strategy it uses):", ""]
        for report in estimated:
            assert report.aivat is not None
            a, b = (shown[name] for name in report.agents)
            lines.append(
                f"- `{a}` vs `{b}`: {report.aivat.mean:+.3f} ± {Z_95 * report.aivat.standard_error:.3f} "
                f"(plain {report.mean:+.3f} ± {Z_95 * report.standard_error:.3f}; `{shown[report.aivat.known]}` known)"
            )
    if result.failed:
        lines += ["", "Failed (no result):", ""]
        lines += [
            f"- `{shown[failure.agents[0]]}` vs `{shown[failure.agents[1]]}`: {failure.reason}"
            for failure in result.failed
        ]
    return "\n".join(lines) + "\n"


CSV_FIELDS = (
    "agent_a",
    "agent_b",
    "hands",
    "mean",
    "standard_error",
    "ci95_low",
    "ci95_high",
    "units",
    "mbb_per_hand",
    "exact",
    "exact_within_ci95",
    "agent_a_exploitability",
    "agent_b_exploitability",
    "aivat_mean",
    "aivat_standard_error",
)


def csv_text(result: TournamentResult) -> str:
    """One row per match (``A``'s payoff), with both agents' exploitability."""
    scores = {score.name: score.exploitability for score in result.scores}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for report in result.matches:
        a, b = report.agents
        writer.writerow(
            [
                a,
                b,
                report.hands,
                repr(report.mean),
                repr(report.standard_error),
                repr(report.ci95[0]),
                repr(report.ci95[1]),
                report.units,
                _cell(report.mbb_per_hand),
                _cell(report.exact),
                "" if report.exact_within_ci95 is None else report.exact_within_ci95,
                _cell(scores[a]),
                _cell(scores[b]),
                _cell(None if report.aivat is None else report.aivat.mean),
                _cell(None if report.aivat is None else report.aivat.standard_error),
            ]
        )
    return out.getvalue()


def _cell(value: float | None) -> str:
    return "" if value is None else repr(value)


def json_text(result: TournamentResult) -> str:
    return json.dumps(result.to_json(), indent=2) + "\n"


__all__ = [
    "AgentJob",
    "MatchFailure",
    "TournamentResult",
    "check_agents",
    "csv_text",
    "json_text",
    "markdown",
    "pairings",
    "run_tournament",
]
