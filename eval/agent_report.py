"""What ``cfr-agents exploitability`` reports of one agent: its exact NashConv on the compiled tree,
where it came from, and (``--cross-check``) OpenSpiel's own NashConv of the same strategy."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

from cfr_agents.tree import load_tree
from eval.cross_check import TOLERANCE, openspiel_cross_check
from eval.exploitability import exploitability_of_strategy
from eval.opponents import is_file_name, load_opponent


@dataclass(frozen=True)
class CrossCheck:
    """OpenSpiel's NashConv of the same strategy, and whether it agrees with ours."""

    openspiel_nash_conv: float
    difference: float
    """Ours minus OpenSpiel's."""
    agree: bool
    """``|difference| <= TOLERANCE`` (:data:`eval.cross_check.TOLERANCE`)."""
    openspiel_game: str
    openspiel_game_source: str
    """``"native"`` (OpenSpiel's own game) or ``"bridged"`` (the adapter game inside OpenSpiel)."""


@dataclass(frozen=True)
class ExploitabilityReport:
    """What ``exploitability --json`` prints (``--cross-check`` adds the :class:`CrossCheck` fields)."""

    agent: str
    game: str
    units: str
    file: str | None
    """The agent's path when it is a file, else ``None``."""
    algo: str | None
    """A policy file's algorithm, a model file's family; ``None`` for a named opponent."""
    iterations: int | None
    """A policy file's or an RLCard CFR table's iterations (``None`` otherwise)."""
    trained: str
    observes: str
    nash_conv: float
    exploitability: float
    nash_conv_mbb: float | None
    """In milli-big-blinds per hand, for games paid in big blinds; else ``None``."""
    exploitability_mbb: float | None
    best_response_values: tuple[float, float]
    policy_values: tuple[float, float]
    build_seconds: float
    strategy_seconds: float
    cross_check: CrossCheck | None = None

    def to_json(self) -> dict[str, Any]:
        """One flat JSON object: the fields, and the cross-check's when there is one."""
        data = asdict(self)
        check = data.pop("cross_check")
        return {**data, **(check or {})}


def exploitability_report(name: str, game_id: str | None, *, cross_check: bool = False) -> ExploitabilityReport:
    """Load the agent ``name`` (a registry name or a file; see :func:`eval.opponents.load_opponent`)
    and measure it exactly; with ``cross_check``, OpenSpiel measures the same strategy too."""
    opponent = load_opponent(name, game_id)
    tree = load_tree(opponent.game_id)
    started = time.perf_counter()
    strategy = opponent.agent.strategy(tree)
    strategy_seconds = time.perf_counter() - started
    ours = exploitability_of_strategy(tree, strategy)
    in_bb = ours.units == "BB"
    check = None
    if cross_check:
        theirs = openspiel_cross_check(opponent.agent.policy(tree, opponent.name))
        difference = ours.nash_conv - theirs.nash_conv
        check = CrossCheck(
            theirs.nash_conv, difference, abs(difference) <= TOLERANCE, theirs.openspiel_game, theirs.source
        )
    return ExploitabilityReport(
        agent=opponent.name,
        game=tree.game_id,
        units=ours.units,
        file=name if is_file_name(name) else None,
        algo=opponent.algorithm,
        iterations=opponent.iterations,
        trained=opponent.trained,
        observes=opponent.observes,
        nash_conv=ours.nash_conv,
        exploitability=ours.exploitability,
        nash_conv_mbb=ours.nash_conv * 1000 if in_bb else None,
        exploitability_mbb=ours.exploitability * 1000 if in_bb else None,
        best_response_values=ours.best_response_values,
        policy_values=ours.policy_values,
        build_seconds=tree.build_seconds,
        strategy_seconds=strategy_seconds,
        cross_check=check,
    )
