"""What the opponent registry is made of: a built :class:`Opponent`, and the spec of a family
(:class:`Family`, with :class:`Training` for the families ``cfr-agents train-opponent`` trains).

A leaf of :mod:`eval.opponents`: the family modules build opponents with these types, and
:mod:`eval.opponents.registry` lists one :class:`Family` per family.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters import Game
from eval.agents import Agent, as_agent
from eval.opponents.provenance import Provenance, Trained

FULL = "full information state"
LOSSY = "RLCard's lossy obs"


@dataclass(frozen=True)
class Opponent:
    """A built opponent: the agent, normalised once (:class:`eval.agents.Agent`), and what the
    opponent table says of it."""

    name: str
    game_id: str
    agent: Agent
    trained: str
    """How it was made: ``"40,000 episodes, 17.0 min"``, ``"as RLCard ships it"``, ..."""
    observes: str
    """:data:`FULL` or :data:`LOSSY` (RLCard's ``obs``: hand, public card, chip counts)."""
    provenance: Provenance | None = None
    algorithm: str | None = None
    """A policy file's algorithm, a model file's family; ``None`` for a named opponent."""
    iterations: int | None = None
    """A policy file's or a trained table's iterations; ``None`` otherwise."""

    @classmethod
    def of(cls, name: str, game_id: str, agent: object, trained: str, observes: str, **more: Any) -> Opponent:
        """An opponent around any agent object (:func:`eval.agents.as_agent`)."""
        return cls(name, game_id, as_agent(agent), trained, observes, **more)


@dataclass(frozen=True)
class Training:
    """How ``cfr-agents train-opponent`` trains a family, and how its files are written and read."""

    toolkit: str
    """``"rlcard:"`` or ``"openspiel:"``: the games it trains on."""
    unit: str
    """``"episodes"`` or ``"iterations"``: what its amount counts."""
    observes: str
    presets: Mapping[str, Mapping[str, Any]]
    """Named hyperparameter sets (``--hyperparameters``); the first is the default."""
    train: Callable[..., Trained[Any]]
    """``train(game, amount, rng, preset, on_progress)``, and ``overrides=`` (hyperparameters replacing the
    preset's) when :attr:`takes_overrides`."""
    save: Callable[[str | Path, Any, Provenance], None]
    """Write the trained agent and its provenance (atomically)."""
    load: Callable[[Path, Mapping[str, Any], Provenance, Game], object]
    """The playing agent of a saved file, for a game (refusing another game or other rules)."""
    outputs: Callable[[str | Path], tuple[Path, ...]] = field(default=lambda path: (Path(path),))
    """Every file :attr:`save` writes for ``--out path``."""
    takes_overrides: bool = False
    """Whether single hyperparameters may replace the preset's (``cfr-agents train --traversals ...``)."""
    trains_without_tree: bool = False
    """Whether it trains on a game no compiled tree holds (``rlcard:limit-holdem``): in the game's environment alone,
    its NashConv then not computed and RLCard's own evaluation of it recorded instead."""


@dataclass(frozen=True)
class Family:
    """One registry entry: its name, where it applies, how to build it (``argument`` is ``N`` of
    ``NAME:N``), whether it needs torch, and how to train it."""

    name: str
    summary: str
    applies: Callable[[Game], bool]
    build: Callable[[Game, int | None], Opponent]
    needs_torch: bool = False
    takes_iterations: bool = False
    training: Training | None = None
