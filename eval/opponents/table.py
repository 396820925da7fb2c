r"""The opponent table: every opponent of a game scored exactly against random, our DCFR
equilibrium and each other, beside its exploitability. No sampling: each entry is
:func:`eval.exact_head_to_head` of two strategies from :func:`eval.strategy_of`.

An agent that sees RLCard's lossy ``obs`` plays one row for all infosets that share an
observation (:func:`distinct_observations` counts them); its exploitability is therefore bounded
away from 0 whatever it learns, unlike the full-information agents.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from adapters import load_game
from adapters.rlcard import RLCardGame, RLCardState
from cfr_agents.solvers import make_solver
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree
from eval.agents import infoset_states, rlcard_env_state
from eval.exploitability import exploitability_of_strategy
from eval.head_to_head import exact_head_to_head
from eval.opponents.base import LOSSY, Opponent
from eval.opponents.registry import load_opponent

EQUILIBRIUM_ITERATIONS = 3000
"""DCFR iterations for the equilibrium column (NashConv below 1e-5 on both Leducs)."""


@dataclass(frozen=True)
class Row:
    name: str
    trained: str
    observes: str
    nash_conv: float
    exploitability: float
    vs_random: float
    vs_equilibrium: float
    vs: tuple[float, ...]
    """Exact value per hand against each row's opponent, in row order (seats swapped)."""
    strategy_seconds: float
    """Time to query the agent at every infoset."""


@dataclass(frozen=True)
class OpponentTable:
    game_id: str
    units: str
    equilibrium: str
    """How the equilibrium column was computed: algorithm, iterations, its NashConv."""
    infosets: int
    distinct_observations: int | None
    """RLCard's ``obs`` values over the tree's infosets (``None`` for OpenSpiel games)."""
    rows: tuple[Row, ...]

    def markdown(self) -> str:
        """The table as printed in the README: values in the game's units per hand, row vs column."""
        names = [row.name for row in self.rows]
        header = ["opponent", "trained", "observes", "exploitability", "vs random", "vs DCFR", *names]
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for row in self.rows:
            cells = [
                f"`{row.name}`",
                row.trained,
                row.observes,
                _value(row.exploitability, self.units),
                f"{row.vs_random:+.4f}",
                f"{row.vs_equilibrium:+.4f}",
                *(f"{v:+.4f}" for v in row.vs),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


def _value(value: float, units: str) -> str:
    return f"{value:.4f} {units}" + (f" ({value * 1000:,.0f} mbb)" if units == "BB" else "")


def distinct_observations(tree: CompiledTree) -> int | None:
    """How many different RLCard ``obs`` vectors the tree's infosets show (RLCard games only)."""
    states = infoset_states(tree)
    if not isinstance(states.game, RLCardGame):
        return None
    import rlcard

    env = rlcard.make(states.game.spec.env_id)
    seen = set()
    for state in states.states:
        assert isinstance(state, RLCardState)
        seen.add(rlcard_env_state(env, state)["obs"].tobytes())
    return len(seen)


def equilibrium(tree: CompiledTree) -> tuple[FloatArray, str]:
    """Our DCFR average strategy after :data:`EQUILIBRIUM_ITERATIONS`, and how it was made."""
    solver = make_solver(tree, "dcfr")
    solver.run(EQUILIBRIUM_ITERATIONS)
    strategy = solver.average_policy().strategy_on(tree)
    nash_conv = exploitability_of_strategy(tree, strategy).nash_conv
    return strategy, f"cfr-agents dcfr, {EQUILIBRIUM_ITERATIONS:,} iterations (NashConv {nash_conv:.1e} {tree.units})"


def opponent_table(game_id: str, names: Sequence[str]) -> OpponentTable:
    """Build each named opponent for ``game_id`` and score every pair exactly."""
    tree = compile_tree(load_game(game_id))
    random_strategy = load_opponent("random", game_id).agent.strategy(tree)
    equilibrium_strategy, how = equilibrium(tree)
    scored: list[tuple[Opponent, FloatArray, float]] = []
    for name in names:
        opponent = load_opponent(name, game_id)
        started = time.perf_counter()
        strategy = opponent.agent.strategy(tree)
        scored.append((opponent, strategy, time.perf_counter() - started))
    rows = []
    for opponent, strategy, seconds in scored:
        measured = exploitability_of_strategy(tree, strategy)
        rows.append(
            Row(
                name=opponent.name,
                trained=opponent.trained,
                observes=opponent.observes,
                nash_conv=measured.nash_conv,
                exploitability=measured.exploitability,
                vs_random=exact_head_to_head(tree, strategy, random_strategy).value,
                vs_equilibrium=exact_head_to_head(tree, strategy, equilibrium_strategy).value,
                vs=tuple(exact_head_to_head(tree, strategy, other).value for _, other, _ in scored),
                strategy_seconds=seconds,
            )
        )
    lossy = any(opponent.observes == LOSSY for opponent, _, _ in scored)
    return OpponentTable(
        game_id=game_id,
        units=tree.units,
        equilibrium=how,
        infosets=tree.num_infosets,
        distinct_observations=distinct_observations(tree) if lossy else None,
        rows=tuple(rows),
    )
