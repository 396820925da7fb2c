r"""A two-player limit hold'em game seen through a card abstraction: the information sets a sampled solver
learns, with no game tree in memory.

The engine (:class:`~adapters.holdem.engine.HoldemEngine`) holds the betting tree; the abstraction
(:class:`~cfr_agents.abstraction.Abstraction`) maps a player's hole cards and the board dealt so far to a bucket
:math:`b \in [0, B_r)` in each round :math:`r`. An abstract information set is a pair (betting node :math:`d`,
bucket :math:`b`) of the acting player: the betting sequence, which both players see, and the bucket of the
player's cards in :math:`d`'s round. Its strategy is row

.. math:: \operatorname{row}(d, b) = \operatorname{base}(d) + b

of the solver's tables, each decision node owning :math:`B_{r(d)}` consecutive rows (:attr:`AbstractGame.row_base`).
With imperfect-recall abstractions (the bucket forgets earlier rounds' cards) this is the abstract game of
Waugh et al. (2009); with a lossless abstraction it is the game itself up to suit isomorphism.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from adapters import load_game
from adapters.holdem.betting import DECISION, FOLD, SHOWDOWN
from adapters.holdem.engine import HoldemEngine, holdem_engine
from adapters.inputs import InputError
from cfr_agents.abstraction import Abstraction, load_abstraction
from cfr_agents.tree_cache import digest

IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class AbstractGame:
    """A limit hold'em engine and a card abstraction of the same game (module docstring)."""

    engine: HoldemEngine
    abstraction: Abstraction
    source: Path | None = None
    """The directory the abstraction was loaded from (:meth:`load`), which strategy files and checkpoints name."""

    def __post_init__(self) -> None:
        if self.abstraction.game_id != self.engine.game_id:
            raise InputError(
                f"the abstraction is of {self.abstraction.game_id}, not of {self.engine.game_id}; "
                "build one for this game with cfr-agents abstraction build"
            )

    @classmethod
    def of(cls, abstraction: Abstraction, source: Path | None = None) -> AbstractGame:
        """The abstract game of ``abstraction``'s game."""
        return cls(holdem_engine(abstraction.game_id), abstraction, source)

    @classmethod
    def load(cls, path: str | os.PathLike[str], game_id: str | None = None) -> AbstractGame:
        """The abstract game of the abstraction in directory ``path`` (with ``game_id``: refused for another game)."""
        return cls.of(load_abstraction(path, game_id), Path(path).resolve())

    @property
    def game_id(self) -> str:
        return self.engine.game_id

    @cached_property
    def rules_fingerprint(self) -> str:
        return load_game(self.game_id).rules_fingerprint

    @property
    def units(self) -> str:
        return self.engine.units

    @property
    def build_seconds(self) -> float:
        return self.abstraction.build_seconds

    @property
    def num_infosets(self) -> int:
        """Abstract information sets: :attr:`num_rows`."""
        return self.num_rows

    @property
    def num_decision_nodes(self) -> int:
        """Decision nodes of the betting tree."""
        return int((self.engine.betting.kind == DECISION).sum())

    @property
    def num_terminals(self) -> int:
        """Fold and showdown nodes of the betting tree."""
        return int(np.isin(self.engine.betting.kind, (FOLD, SHOWDOWN)).sum())

    def summary(self) -> str:
        buckets = "/".join(str(b) for b in self.abstraction.num_buckets)
        return (
            f"{self.game_id}: {self.num_decision_nodes:,} betting decisions x {buckets} buckets a round = "
            f"{self.num_rows:,} abstract information sets"
        )

    @cached_property
    def abstraction_sha256(self) -> str:
        """The digest of the abstraction's tables (:func:`cfr_agents.tree_cache.digest`), as its sidecar holds it."""
        return digest(dict(self.abstraction.kernel_tables()._asdict()))

    @cached_property
    def decisions(self) -> tuple[IntArray, IntArray]:
        r"""The decision nodes :math:`d` in row order, and the rows each owns, :math:`B_{r(d)}`."""
        betting = self.engine.betting
        decision = np.flatnonzero(betting.kind == DECISION)
        return decision, np.asarray(self.abstraction.num_buckets, dtype=np.int64)[betting.round[decision]]

    @cached_property
    def row_base(self) -> IntArray:
        r""":math:`\operatorname{base}(d)` of every betting node (-1 where no one acts)."""
        decision, buckets = self.decisions
        base = np.full(self.engine.betting.num_nodes, -1, dtype=np.int64)
        base[decision] = np.cumsum(buckets) - buckets
        return base

    @property
    def num_rows(self) -> int:
        """Abstract information sets: :math:`\\sum_d B_{r(d)}` over decision nodes."""
        return int(self.decisions[1].sum())

    @property
    def num_actions(self) -> IntArray:
        """Legal actions of every row (its node's)."""
        return self.actions_of(slice(None))

    def actions_of(self, rows: slice | NDArray[np.int64]) -> IntArray:
        """Legal actions of ``rows`` (their nodes')."""
        children = self.engine.betting.num_children
        if isinstance(rows, slice) and rows == slice(None):
            decision, buckets = self.decisions
            every: IntArray = np.repeat(children[decision].astype(np.int64), buckets)
            return every
        wanted = np.arange(*rows.indices(self.num_rows)) if isinstance(rows, slice) else rows
        return children[self.nodes_of(wanted)].astype(np.int64)

    def nodes_of(self, rows: NDArray[np.int64]) -> IntArray:
        """The betting node of each of ``rows``, found among the decision nodes' first rows: no table of a node per
        row is kept (it would be as long as the strategy's first column)."""
        decision = self.decisions[0]
        nodes: IntArray = decision[np.searchsorted(self.row_base[decision], rows, side="right") - 1]
        return nodes

    def row(self, node: int, bucket: int) -> int:
        """:math:`\\operatorname{row}(d, b)`."""
        return int(self.row_base[node]) + bucket

    def uniform_strategy(self, rows: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
        """``(rows, 3)``: uniform over each row's legal actions; only ``rows``' when given."""
        n = self.actions_of(slice(None) if rows is None else rows)
        strategy = (np.arange(3)[None, :] < n[:, None]).astype(np.float64)
        return strategy / n[:, None]
