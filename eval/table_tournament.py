r"""Tournaments of ``n`` seats: every table of ``n`` distinct agents of a list (its combinations) plays a match of
``n`` seats (:mod:`eval.table`), and each agent's results are averaged over its tables.

Table ``t`` (in the order of :func:`tables_of`) draws its streams from ``SeedSequence(seed, spawn_key=(t,))``, so the
results do not depend on how many workers play them or in what order they finish. Work goes to an executor
(:mod:`cfr_agents.jobs`) as :class:`~eval.table.TableSpec`, never as live agents; on Ray a policy file travels as its
contents.

Agent ``k`` sits at :math:`T_k` tables; its standing is the mean of its sampled means :math:`\bar y_{k,t}`, with
standard error :math:`\sqrt{\sum_t \mathrm{SE}_{k,t}^2} / T_k` (the tables are independent), and the mean of its
exact values when every table has them.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from adapters.inputs import InputError
from cfr_agents.jobs import Executor, RayExecutor
from eval.environments import Z_95
from eval.table import Seats, TableReport, TableSpec, check_table_hands, play_table
from eval.tournament import display_names, policy_contents


def tables_of(agents: Sequence[str], seats: int) -> list[tuple[str, ...]]:
    """Every table of ``seats`` distinct agents, in the order of :func:`itertools.combinations`."""
    return list(itertools.combinations(agents, seats))


@dataclass(frozen=True)
class Standing:
    """An agent's payoff per hand over all its tables: sampled (mean, standard error, 95% CI) and exact."""

    agent: str
    tables: int
    mean: float
    standard_error: float
    ci95: tuple[float, float]
    exact: float | None
    """The mean of its exact values, or ``None`` when a table of it has none."""

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "tables": self.tables,
            "mean": self.mean,
            "standard_error": self.standard_error,
            "ci95": list(self.ci95),
            "exact": self.exact,
        }


@dataclass(frozen=True)
class TableTournamentResult:
    """Every table's report and every agent's standing."""

    game_id: str
    units: str
    agents: tuple[str, ...]
    hands: int
    seed: int
    tables: tuple[TableReport, ...]

    @property
    def standings(self) -> tuple[Standing, ...]:
        """One per agent, in the order of :attr:`agents` (the module docstring says how they are combined)."""
        standings = []
        for agent in self.agents:
            results = [r for table in self.tables for r in table.results if r.agent == agent]
            mean = sum(r.mean for r in results) / len(results)
            error = math.sqrt(sum(r.standard_error**2 for r in results)) / len(results)
            exacts = [r.exact for r in results]
            exact = None if None in exacts else sum(e for e in exacts if e is not None) / len(exacts)
            standings.append(
                Standing(agent, len(results), mean, error, (mean - Z_95 * error, mean + Z_95 * error), exact)
            )
        return tuple(standings)

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "units": self.units,
            "agents": list(self.agents),
            "hands": self.hands,
            "seed": self.seed,
            "standings": [standing.to_json() for standing in self.standings],
            "tables": [table.to_json() for table in self.tables],
        }


def check_table_agents(game_id: str, agents: Sequence[str]) -> Seats:
    """Refuse fewer agents than seats, a name given twice, and any agent that does not load for ``game_id``."""
    seats = Seats(game_id)
    players = seats.game.num_players
    if len(agents) < players:
        raise InputError(f"{seats.game_id} has {players} players: a tournament needs at least {players} agents")
    repeated = sorted({name for name in agents if list(agents).count(name) > 1})
    if repeated:
        raise InputError(f"agent {repeated[0]!r} is named twice")
    for name in agents:
        seats.opponent(name)
    return seats


def run_table_tournament(
    game_id: str,
    agents: Sequence[str],
    hands: int,
    seed: int,
    executor: Executor,
    on_done: Callable[[str], None] | None = None,
) -> TableTournamentResult:
    """Play every table of distinct agents on ``executor`` (local processes or Ray)."""
    seats = check_table_agents(game_id, agents)
    check_table_hands(hands, seats.game.num_players)
    files = policy_contents(agents) if isinstance(executor, RayExecutor) else {}
    specs = [
        TableSpec(seats.game_id, table, hands, seed, spawn_key=(index,), files=files)
        for index, table in enumerate(tables_of(agents, seats.game.num_players))
    ]
    report: Callable[[TableSpec, TableReport], None] | None = None
    if on_done is not None:
        done = on_done

        def report(spec: TableSpec, _: TableReport) -> None:
            done(", ".join(spec.agents))

    tables: list[TableReport] = executor.map(run_table_job, specs, report)
    return TableTournamentResult(seats.game_id, seats.game.units, tuple(agents), hands, seed, tuple(tables))


_SEATS: dict[str, Seats] = {}


def run_table_job(spec: TableSpec) -> TableReport:
    """Play one table from its spec (in a worker, or in this process), its agents built once per process and game."""
    seats = _SEATS.get(spec.game_id)
    if seats is None:
        seats = _SEATS[spec.game_id] = Seats(spec.game_id)
    with contextlib.redirect_stdout(io.StringIO()):
        return play_table(spec, seats)


def markdown(result: TableTournamentResult) -> str:
    """Each agent's standing (sampled with its 95% half-width, exact), then one line per table."""
    unit = result.units
    shown = dict(zip(result.agents, display_names(result.agents), strict=True))
    lines = [
        f"{result.game_id}: each agent's payoff per hand in {unit}, averaged over its tables of "
        f"{len(result.tables[0].agents)}; {result.hands:,} hands per table, every deal in every seat order; 95% "
        "half-width after ±, exact value in brackets.",
        "",
        f"| agent | tables | mean ({unit}/hand) | exact ({unit}/hand) |",
        "|---|---:|---:|---:|",
    ]
    for standing in result.standings:
        exact = "n/a (not queryable)" if standing.exact is None else f"{standing.exact:+.4f}"
        lines.append(
            f"| `{shown[standing.agent]}` | {standing.tables} | {standing.mean:+.4f} ± "
            f"{Z_95 * standing.standard_error:.4f} | {exact} |"
        )
    lines += ["", "Tables (each agent's payoff per hand; exact in brackets):", ""]
    for table in result.tables:
        cells = [
            f"`{shown[r.agent]}` {r.mean:+.4f} ± {Z_95 * r.standard_error:.4f}"
            + ("" if r.exact is None else f" [{r.exact:+.4f}]")
            for r in table.results
        ]
        lines.append("- " + "; ".join(cells))
    return "\n".join(lines) + "\n"


CSV_FIELDS = ("table", "agent", "hands", "mean", "standard_error", "ci95_low", "ci95_high", "units", "exact")


def csv_text(result: TableTournamentResult) -> str:
    """One row per agent per table (``table`` is the table's index)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_FIELDS)
    for index, table in enumerate(result.tables):
        for r in table.results:
            writer.writerow(
                [
                    index,
                    r.agent,
                    table.hands,
                    repr(r.mean),
                    repr(r.standard_error),
                    repr(r.ci95[0]),
                    repr(r.ci95[1]),
                    table.units,
                    "" if r.exact is None else repr(r.exact),
                ]
            )
    return out.getvalue()


def json_text(result: TableTournamentResult) -> str:
    return json.dumps(result.to_json(), indent=2) + "\n"


__all__ = [
    "Standing",
    "TableTournamentResult",
    "check_table_agents",
    "csv_text",
    "json_text",
    "markdown",
    "run_table_job",
    "run_table_tournament",
    "tables_of",
]
