"""A Policy as ``open_spiel.python.policy.TabularPolicy``.

For an ``openspiel:`` policy the table is on OpenSpiel's own game; for any other game it is
on the game bridged into OpenSpiel (:func:`adapters.pyspiel_game.as_pyspiel_game`), whose
information-state strings are the policy's keys. Either way rows are filled key for key.
"""

from __future__ import annotations

from open_spiel.python.policy import TabularPolicy

from adapters.inputs import InputError
from adapters.pyspiel_game import openspiel_game_of
from cfr_agents.policy_table import PolicyTable


def to_tabular_policy(policy: PolicyTable) -> TabularPolicy:
    """Fill a ``TabularPolicy`` row per OpenSpiel information state; a missing state or an
    illegal action is refused."""
    tabular = TabularPolicy(openspiel_game_of(policy.game()))
    legal = tabular.legal_actions_mask
    for key, row in tabular.state_lookup.items():
        probabilities = policy.action_probabilities(key)
        tabular.action_probability_array[row, :] = 0.0
        for action, probability in probabilities.items():
            if not (0 <= action < legal.shape[1] and legal[row, action]):
                raise InputError(f"the policy plays illegal action {action} at infoset {key!r}")
            tabular.action_probability_array[row, action] = probability
    return tabular
