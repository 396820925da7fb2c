"""OpenSpiel's C++ solvers run for ``N`` iterations: ``openspiel-cfr:N``, ``openspiel-cfr+:N``,
``openspiel-mccfr-es:N``, ``openspiel-mccfr-os:N``.

They run on OpenSpiel's own game for ``openspiel:`` games, and on the adapter game bridged into
OpenSpiel (``python_rlcard_leduc_holdem``, ...) for RLCard games: the C++ solvers accept Python
games, so they solve RLCard's rules through RLCard's engine -- slowly, since every node is a
Python call (CFR+ takes about 0.6 s per iteration on bridged RLCard Leduc against 10 ms on
OpenSpiel's Leduc), so the default iteration counts are smaller there.
The opponent is the solver's average policy (:class:`AveragePolicy`); the Monte Carlo solvers are
seeded with :data:`SEED`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyspiel
from open_spiel.python import policy as openspiel_policy

from adapters import Game
from adapters.openspiel import OpenSpielGame
from adapters.pyspiel_game import openspiel_game_of
from eval.opponents.base import FULL, Opponent

SEED = 0
"""The seed of the Monte Carlo solvers, so a name always builds the same opponent."""


@dataclass(frozen=True)
class Solver:
    summary: str
    default_iterations: int
    """On OpenSpiel's own games."""
    bridged_iterations: int
    """On games bridged into OpenSpiel (RLCard's)."""
    make: Callable[[pyspiel.Game], Any]
    sampled: bool
    """Monte Carlo: ``run_iteration()``; else ``evaluate_and_update_policy()``."""


SOLVERS: dict[str, Solver] = {
    "openspiel-cfr": Solver("OpenSpiel's C++ CFRSolver", 1000, 20, pyspiel.CFRSolver, sampled=False),
    "openspiel-cfr+": Solver("OpenSpiel's C++ CFRPlusSolver", 1000, 20, pyspiel.CFRPlusSolver, sampled=False),
    "openspiel-mccfr-es": Solver(
        "OpenSpiel's C++ external-sampling MCCFR",
        100_000,
        5_000,
        lambda game: pyspiel.ExternalSamplingMCCFRSolver(game, seed=SEED),
        sampled=True,
    ),
    "openspiel-mccfr-os": Solver(
        "OpenSpiel's C++ outcome-sampling MCCFR",
        1_000_000,
        20_000,
        lambda game: pyspiel.OutcomeSamplingMCCFRSolver(game, seed=SEED),
        sampled=True,
    ),
}


class AveragePolicy(openspiel_policy.Policy):  # type: ignore[misc]
    """A C++ solver's average policy as an OpenSpiel policy. It holds the solver: the
    ``pyspiel.Policy`` of ``average_policy()`` points into it and must not outlive it."""

    def __init__(self, game: pyspiel.Game, solver: Any) -> None:
        super().__init__(game, list(range(game.num_players())))
        self.solver = solver
        self.average = solver.average_policy()

    def action_probabilities(self, state: pyspiel.State, player_id: int | None = None) -> dict[int, float]:
        return dict(self.average.action_probabilities(state))


def solve(name: str, game: Game, iterations: int) -> tuple[AveragePolicy, float]:
    """The average policy of solver ``name`` after ``iterations``, and the seconds it took."""
    solver_spec = SOLVERS[name]
    started = time.perf_counter()
    pyspiel_game = openspiel_game_of(game)
    solver = solver_spec.make(pyspiel_game)
    step = solver.run_iteration if solver_spec.sampled else solver.evaluate_and_update_policy
    for _ in range(iterations):
        step()
    return AveragePolicy(pyspiel_game, solver), time.perf_counter() - started


def default_iterations(name: str, game: Game) -> int:
    """The iterations ``name`` runs when no count is given."""
    solver = SOLVERS[name]
    return solver.default_iterations if isinstance(game, OpenSpielGame) else solver.bridged_iterations


def builder(name: str) -> Callable[[Game, int | None], Opponent]:
    """How the registry builds ``name``: ``None`` iterations means the default."""

    def build(game: Game, iterations: int | None) -> Opponent:
        count = iterations or default_iterations(name, game)
        policy, seconds = solve(name, game, count)
        return Opponent.of(f"{name}:{count}", game.game_id, policy, f"{count:,} iterations, {seconds:.1f} s", FULL)

    return build
