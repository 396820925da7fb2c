r"""Exact expected value between two strategies on the compiled tree: no sampling error.

Agent ``A`` plays strategy :math:`\sigma^A` and ``B`` plays :math:`\sigma^B`. With ``A`` in seat
:math:`p`, the profile takes seat :math:`p`'s rows from :math:`\sigma^A` and the other seat's rows
from :math:`\sigma^B`, and ``A``'s value is
:math:`u_p = \sum_z \pi_c(z)\,\pi_p^{\sigma^A}(z)\,\pi_{-p}^{\sigma^B}(z)\,u_p(z)`.
A match swaps seats, so the head-to-head value is the mean over both seats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from adapters.base import NUM_PLAYERS
from cfr_agents.tree import CompiledTree, FloatArray
from eval.exploitability import policy_values


@dataclass(frozen=True)
class HeadToHead:
    """``A``'s exact expected payoff per hand against ``B``, in :attr:`units`."""

    game_id: str
    units: str
    seat_values: tuple[float, float]
    """``A``'s value when ``A`` sits in seat 0, and in seat 1."""
    value: float
    """The mean of :attr:`seat_values`: ``A``'s value in a match that swaps seats."""


def seated_profile(tree: CompiledTree, a: FloatArray, b: FloatArray, seat: int) -> FloatArray:
    """The ``(N, A)`` profile with ``seat``'s infosets from ``a`` and the other seat's from ``b``."""
    profile = b.copy()
    rows = tree.player_slice(seat)
    profile[rows] = a[rows]
    return profile


def exact_head_to_head(tree: CompiledTree, a: FloatArray, b: FloatArray) -> HeadToHead:
    """``A``'s exact value against ``B`` in each seat and averaged over seats."""
    for name, strategy in (("A", a), ("B", b)):
        if strategy.shape != tree.action_mask.shape:
            raise ValueError(f"strategy {name} has shape {strategy.shape}, the tree needs {tree.action_mask.shape}")
    seat_values = tuple(
        policy_values(tree, tree.realization_plan(seated_profile(tree, a, b, seat)))[seat]
        for seat in range(NUM_PLAYERS)
    )
    first, second = seat_values
    return HeadToHead(
        game_id=tree.game_id,
        units=tree.units,
        seat_values=(first, second),
        value=float(np.mean(seat_values)),
    )
