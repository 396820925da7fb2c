"""What ``cfr-agents exploitability`` reports of one agent: its exact NashConv on the compiled tree,
where it came from, and (``--cross-check``) OpenSpiel's own NashConv of the same strategy.

A hold'em game that runs on its public tree (:func:`eval.holdem.on_public_tree`: ``fhp``, ``fhp-acpc``, ``hulh``)
is scored there instead (:func:`eval.exploitability.public_exploitability`), exactly, for a public-tree strategy
file or ``random``; OpenSpiel cannot score such a game, so ``--cross-check`` is refused there. On the smaller
hold'em games a strategy file is scored on the compiled tree, and OpenSpiel scores it through the file's own
OpenSpiel policy (``PublicStrategy.openspiel_policy``). Hold'em games pay chips: the ``mbb`` fields divide by the
big blind (:func:`eval.holdem.big_blind`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from open_spiel.python.algorithms import exploitability as openspiel_exploitability

from adapters.inputs import ParameterError
from cfr_agents.tree import CompiledTree, load_tree
from eval import holdem
from eval.agents import PublicStrategyAgent
from eval.cross_check import TOLERANCE, OpenSpielNashConv, openspiel_cross_check
from eval.exploitability import Exploitability, exploitability_of_strategy, public_exploitability
from eval.opponents import Opponent, is_file_name, load_opponent


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
    """In milli-big-blinds per hand (``nash_conv / big_blind * 1000``) for games with a big blind (paid in big
    blinds, or hold'em games in chips); else ``None``."""
    exploitability_mbb: float | None
    best_response_values: tuple[float, ...]
    """One per player, seat 0 first."""
    policy_values: tuple[float, ...]
    build_seconds: float
    strategy_seconds: float
    cross_check: CrossCheck | None = None

    def to_json(self) -> dict[str, Any]:
        """One flat JSON object: the fields, and the cross-check's when there is one."""
        data = asdict(self)
        check = data.pop("cross_check")
        return {**data, **(check or {})}


LONG_CROSS_CHECK_NODES = 1_000_000
"""A tree of more histories than this makes OpenSpiel's Python ``nash_conv`` a matter of minutes: ``notice`` says so
before it starts (three-player RLCard Leduc's 5.5 million took 19 minutes on one core)."""


def exploitability_report(
    name: str, game_id: str | None, *, cross_check: bool = False, notice: Callable[[str], None] | None = None
) -> ExploitabilityReport:
    """Load the agent ``name`` (a registry name or a file; see :func:`eval.opponents.load_opponent`)
    and measure it exactly; with ``cross_check``, OpenSpiel measures the same strategy too, and ``notice`` (if
    given) is told first when that will take long (:data:`LONG_CROSS_CHECK_NODES`)."""
    if game_id is not None:
        holdem.check_name(name, game_id)
    named = game_id if game_id is not None else holdem.file_game(name)
    if cross_check and named is not None:
        _check_cross_check(named)
    opponent = load_opponent(name, game_id, any_players=True)
    started = time.perf_counter()
    check = None
    if holdem.on_public_tree(opponent.game_id):
        if cross_check:
            _check_cross_check(opponent.game_id)
        hands = holdem.batched(opponent.agent, opponent.name, opponent.game_id)
        public = holdem.tree_for(opponent.game_id, [hands])
        placed = holdem.strategy_array(public, hands)
        strategy_seconds = time.perf_counter() - started
        ours = public_exploitability(public, placed.strategy, placed.placement, holdem.engine_of(public))
        build_seconds = public.build_seconds
    else:
        tree = load_tree(opponent.game_id, any_players=True)
        strategy = opponent.agent.strategy(tree)
        strategy_seconds = time.perf_counter() - started
        ours = exploitability_of_strategy(tree, strategy)
        build_seconds = tree.build_seconds
        if cross_check:
            histories = int(tree.node_kind.shape[0])
            if notice is not None and histories > LONG_CROSS_CHECK_NODES:
                notice(
                    f"OpenSpiel's nash_conv walks the {histories:,} histories of {tree.game_id} in Python: "
                    "at this size it takes minutes"
                )
            theirs = _openspiel_nash_conv(opponent, tree)
            difference = ours.nash_conv - theirs.nash_conv
            check = CrossCheck(
                theirs.nash_conv, difference, abs(difference) <= TOLERANCE, theirs.openspiel_game, theirs.source
            )
    return _report(name, opponent, ours, build_seconds, strategy_seconds, check)


def _check_cross_check(game_id: str) -> None:
    """Refuse ``cross_check`` on a game that runs on its public tree: OpenSpiel's NashConv walks every history."""
    if holdem.on_public_tree(game_id):
        raise ParameterError(
            "{cross_check}: OpenSpiel cannot score {game}, which runs on its public tree (its NashConv walks "
            "every history); leave out {cross_check}",
            game=game_id,
        )


def _openspiel_nash_conv(opponent: Opponent, tree: CompiledTree) -> OpenSpielNashConv:
    """OpenSpiel's NashConv of the agent's strategy: a public-tree strategy through its own OpenSpiel policy,
    any other agent through its policy table (:func:`eval.cross_check.openspiel_cross_check`)."""
    agent = opponent.agent
    if not isinstance(agent, PublicStrategyAgent):
        return openspiel_cross_check(agent.policy(tree, opponent.name))
    policy = agent.raw.openspiel_policy()
    return OpenSpielNashConv(
        game_id=tree.game_id,
        openspiel_game=str(policy.game),
        source="native",
        nash_conv=float(openspiel_exploitability.nash_conv(policy.game, policy)),
    )


def _report(
    name: str,
    opponent: Opponent,
    ours: Exploitability,
    build_seconds: float,
    strategy_seconds: float,
    check: CrossCheck | None,
) -> ExploitabilityReport:
    big_blind = holdem.big_blind(opponent.game_id, ours.units)
    return ExploitabilityReport(
        agent=opponent.name,
        game=ours.game_id,
        units=ours.units,
        file=name if is_file_name(name) else None,
        algo=opponent.algorithm,
        iterations=opponent.iterations,
        trained=opponent.trained,
        observes=opponent.observes,
        nash_conv=ours.nash_conv,
        exploitability=ours.exploitability,
        nash_conv_mbb=None if big_blind is None else ours.nash_conv / big_blind * 1000,
        exploitability_mbb=None if big_blind is None else ours.exploitability / big_blind * 1000,
        best_response_values=ours.best_response_values,
        policy_values=ours.policy_values,
        build_seconds=build_seconds,
        strategy_seconds=strategy_seconds,
        cross_check=check,
    )
