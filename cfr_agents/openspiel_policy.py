"""A Policy as ``open_spiel.python.policy.TabularPolicy`` of the OpenSpiel game it was trained on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from open_spiel.python.policy import TabularPolicy

from adapters.errors import InputError
from adapters.openspiel import OpenSpielGame

if TYPE_CHECKING:
    from cfr_agents.policy import Policy


def to_tabular_policy(policy: Policy) -> TabularPolicy:
    """Fill a ``TabularPolicy`` row per OpenSpiel information state; a missing state is refused."""
    game = policy.game()
    if not isinstance(game, OpenSpielGame):
        raise InputError(f"openspiel_policy() needs a policy for an openspiel: game, not {policy.game_id}")
    tabular = TabularPolicy(game.pyspiel_game)
    for key, row in tabular.state_lookup.items():
        probabilities = policy.action_probabilities(key)
        tabular.action_probability_array[row, :] = 0.0
        for action, probability in probabilities.items():
            tabular.action_probability_array[row, action] = probability
    return tabular
