"""Train an opponent family by self-play and measure it exactly: what ``cfr-agents train-opponent`` runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cfr_agents.tree import compile_tree
from eval.exploitability import exploitability_of_strategy
from eval.opponents import nfsp, rlcard_builtin
from eval.opponents.provenance import KINDS, Provenance, check_request, library_versions
from eval.strategy_of import strategy_of


@dataclass(frozen=True)
class Trainer:
    train: Callable[[Any, int, np.random.Generator, Callable[[int], None]], tuple[Any, dict[str, Any], float]]
    save: Callable[[str | Path, Any, Provenance], None]


TRAINERS: dict[str, Trainer] = {
    "rlcard-nfsp": Trainer(nfsp.train_rlcard, nfsp.save),
    "openspiel-nfsp": Trainer(nfsp.train_openspiel, nfsp.save),
    "rlcard-cfr": Trainer(rlcard_builtin.train_cfr, rlcard_builtin.save_cfr),
}
assert TRAINERS.keys() == KINDS.keys()


def train(
    kind: str, game_id: str, amount: int, seed: int, on_progress: Callable[[int], None]
) -> tuple[Any, Provenance]:
    """Train ``amount`` episodes or iterations from ``seed``; the agent and its provenance,
    with the exact NashConv of its strategy on the compiled tree."""
    game = check_request(kind, game_id)
    trainer = TRAINERS[kind]
    agent, hyperparameters, seconds = trainer.train(game, amount, np.random.default_rng(seed), on_progress)
    tree = compile_tree(game)
    measured = exploitability_of_strategy(tree, strategy_of(agent, tree))
    provenance = Provenance(
        kind=kind,
        game=game.game_id,
        rules_fingerprint=game.rules_fingerprint,
        units=game.units,
        episodes=amount if KINDS[kind].unit == "episodes" else None,
        iterations=amount if KINDS[kind].unit == "iterations" else None,
        seed=seed,
        hyperparameters=hyperparameters,
        training_seconds=seconds,
        versions=library_versions(),
        nash_conv=measured.nash_conv,
        exploitability=measured.exploitability,
    )
    return agent, provenance
