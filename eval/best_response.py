r"""The exact best response to any strategy, as a pure strategy that plays like any other policy.

For each player :math:`i`, :func:`~eval.exploitability.best_response_sequence_values` gives
:math:`\mathrm{BR}(Ia)`, the value of playing :math:`a` at :math:`I` against
:math:`\sigma_{-i}` and best-responding below; the best response plays
:math:`\arg\max_a \mathrm{BR}(Ia)` at every infoset of :math:`i`, the first legal action
(lowest action id) among equal values. Where :math:`\sigma_{-i}` never reaches, every action is
worth 0 there, so the choice is arbitrary but deterministic: the lowest legal action id.

Seated in seat :math:`i` against :math:`\sigma`, it earns :math:`\mathrm{BR}_i`, so its exact
value against :math:`\sigma` over both seats is :math:`(\mathrm{BR}_0 + \mathrm{BR}_1) / 2`.
"""

from __future__ import annotations

import numpy as np

from adapters.base import NUM_PLAYERS
from cfr_agents.policy import Policy
from cfr_agents.tree import CompiledTree, FloatArray
from eval.exploitability import best_response_sequence_values


def best_response_strategy(tree: CompiledTree, strategy: FloatArray) -> FloatArray:
    """The ``(N, A)`` pure best response: each player's rows answer the other player's rows of ``strategy``."""
    x = tree.realization_plan(strategy)
    response = np.zeros(tree.action_mask.shape)
    for player in range(NUM_PLAYERS):
        rows = tree.player_slice(player)
        q = best_response_sequence_values(tree, x, player)[:-1].reshape(tree.action_mask.shape)[rows]
        choice = np.where(tree.action_mask[rows], q, -np.inf).argmax(axis=1)  # first of equal maxima
        response[rows.start + np.arange(choice.size), choice] = 1.0
    return response


def best_response_policy(tree: CompiledTree, strategy: FloatArray, *, against: str) -> Policy:
    """:func:`best_response_strategy` as a :class:`~cfr_agents.policy.Policy` (``algorithm`` says
    what it answers)."""
    return Policy.from_strategy(
        tree,
        best_response_strategy(tree, strategy),
        algorithm="best-response",
        parameters={"against": against},
        iterations=0,
    )
