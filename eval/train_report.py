"""What ``cfr-agents train`` reports of a run, one report for every solver (full-tree, sampled, neural):
the solver, the tree, the times and the exact NashConv of the policy or model it saved."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from adapters.holdem.engine import RLCARD_LIMIT
from adapters.inputs import InputError
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.neural_policy import NeuralPolicy
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers.neural.holdem import EngineGame
from cfr_agents.training import Trainable, TrainingRun
from cfr_agents.tree import CompiledTree, FloatArray
from eval import holdem
from eval.exploitability import exploitability_of, exploitability_of_strategy, public_exploitability


def nash_conv(tree: CompiledTree | PublicTree | AbstractGame, strategy: FloatArray) -> float:
    """The exact NashConv of ``strategy``: what :func:`cfr_agents.training.train` checks with. A strategy of an
    abstract game is scored on the game's public tree (:func:`scores_exactly`)."""
    if isinstance(tree, AbstractGame):
        return holdem.exploitability(holdem.game_tree(tree.game_id), holdem.AbstractHands(tree, strategy)).nash_conv
    if isinstance(tree, PublicTree):
        return public_exploitability(tree, strategy).nash_conv
    return exploitability_of_strategy(tree, strategy).nash_conv


def engine_nash_conv(model: NeuralPolicy) -> float | None:
    """The exact NashConv of a model trained on the hold'em engine, as ``exploitability`` gives it: on the compiled
    tree for the small hold'em games, else on the game's public tree with suit-canonical boards
    (:class:`eval.holdem.NeuralHands`: the model read with suit-canonical inputs); ``None`` when no public tree of
    the game fits one machine (``hulh``, RLCard's limit hold'em)."""
    if model.game_id == RLCARD_LIMIT:
        return None
    if not holdem.on_public_tree(model.game_id):  # a game of the compiled tree, scored there as every command does
        return exploitability_of_strategy(model.tree, model.strategy).nash_conv
    try:
        tree = holdem.game_tree(model.game_id)
    except InputError:
        return None
    return holdem.exploitability(tree, holdem.NeuralHands(model)).nash_conv


def scores_exactly(tree: CompiledTree | PublicTree | AbstractGame | EngineGame) -> bool:
    """Whether :func:`nash_conv` scores strategies of ``tree``: every compiled or public tree, and an abstract game
    whose public tree one machine builds (``fhp``, the small hold'em games; not ``hulh`` or RLCard's game); not the
    hold'em engine's neural CFR, which has no strategy table (its model is scored by :func:`engine_nash_conv`)."""
    if isinstance(tree, EngineGame):
        return False
    if not isinstance(tree, AbstractGame):
        return True
    try:
        holdem.game_tree(tree.game_id)
    except InputError:
        return False
    return True


def scoring_bytes(game: AbstractGame) -> int:
    """About the bytes :func:`nash_conv` adds on top of the solver's tables while it scores a strategy of ``game``
    (0 when nothing scores it, :func:`scores_exactly`), in float64: the normalised average (three numbers a row;
    normalised a chunk of rows at a time), the strategy placed on the public tree (a number per node, action and
    hand), the engine's vectors over hands at deal slots and segment entries, and the buckets of every segment's
    hands. On ``fhp`` with a lossless flop, 4.6 GB, with the tables 11.5 GB."""
    if not scores_exactly(game):
        return 0
    tree = holdem.game_tree(game.game_id)
    vectors = (3 * max(tree.num_slots, 1) + 2 * tree.segments.count) * tree.num_hands
    return 8 * (3 * game.num_rows + tree.size + vectors)


@dataclass(frozen=True)
class TrainReport:
    """What ``train --json`` prints, the same fields for every solver."""

    game: str
    algo: str
    sampling: str
    """``none`` (full tree), the MCCFR scheme, or ``external`` (the neural solvers' traversals)."""
    parameters: dict[str, Any]
    seed: int
    iterations: int
    """The solver's iteration count at the end, the resumed checkpoint's included."""
    iterations_run: int
    """Iterations this run made: ``iterations - resumed_from`` when resuming."""
    resumed_from: int | None
    stopped_by: str
    """What stopped the run: ``iterations``, ``time_limit`` or ``target_nash_conv``."""
    units: str
    infosets: int | None
    """Infosets the solver's tables hold; ``None`` for neural CFR on the hold'em engine, which holds none."""
    decision_nodes: int
    terminals: int
    build_seconds: float
    compile_seconds: float
    solve_seconds: float
    """Time of this run's iterations."""
    check_seconds: float
    iterations_per_second: float | None
    """``iterations_run / solve_seconds``; ``None`` when no time was measured."""
    nash_conv: float | None
    """Of what was saved: the policy, or the model as it plays (an SD-CFR model may keep a few networks only);
    ``None`` where nothing scores the game exactly (:func:`scores_exactly`)."""
    exploitability: float | None
    peak_rss_mb: float
    out: str
    checkpoint: str | None
    policy_game: str
    """The saved policy's game: :attr:`game`, or the game it is a lossless reduction of (--suit-isomorphism)."""


def train_report(
    solver: Trainable,
    training: TrainingRun,
    *,
    seed: int,
    resumed_from: int | None,
    compile_seconds: float,
    out: str,
    checkpoint: str | None,
    policy_game: str | None = None,
    nash_conv: float | None = None,
) -> TrainReport:
    """The report of ``training``, a run of ``solver`` whose policy or model was saved to ``out`` (``nash_conv``:
    what was saved measures, when it is not the run's last measure of the average strategy)."""
    tree = solver.tree
    measured = training.nash_conv if nash_conv is None else nash_conv
    exploitability = (
        exploitability_of(measured, tree.num_players, constant_sum=tree.constant_sum)
        if isinstance(tree, CompiledTree)
        else measured / 2  # the hold'em engines': two-player zero-sum
    )
    parameters = dict(solver.parameters())
    return TrainReport(
        game=tree.game_id,
        algo=solver.algorithm,
        sampling=str(parameters["sampling"]),
        parameters=parameters,
        seed=seed,
        iterations=training.iterations,
        iterations_run=training.iterations_run,
        resumed_from=resumed_from,
        stopped_by=training.stopped_by,
        units=tree.units,
        infosets=tree.num_infosets if not isinstance(tree, EngineGame) else None,
        decision_nodes=tree.num_decision_nodes,
        terminals=tree.num_terminals,
        build_seconds=tree.build_seconds,
        compile_seconds=compile_seconds,
        solve_seconds=training.solve_seconds,
        check_seconds=training.check_seconds,
        iterations_per_second=training.iterations_per_second,
        nash_conv=None if math.isnan(measured) else measured,
        exploitability=None if math.isnan(exploitability) else exploitability,
        peak_rss_mb=training.peak_rss_mb,
        out=out,
        checkpoint=checkpoint,
        policy_game=tree.game_id if policy_game is None else policy_game,
    )
