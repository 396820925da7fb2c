"""A Policy as an RLCard agent: ``use_raw = False``, ``step`` and ``eval_step``.

It works in ``env.run`` and ``rlcard.utils.tournament``. The agent rebuilds the
perfect-recall infoset key from the env state (hand, public card, seat role and
``state["action_record"]``) with the adapter's own key function, so it looks up
exactly the infoset the policy was trained on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from adapters.errors import InputError
from adapters.rlcard import RLCardGame

if TYPE_CHECKING:
    from cfr_agents.policy import Policy


class PolicyAgent:
    """Samples its actions from a :class:`~cfr_agents.policy.Policy` with its own Generator."""

    use_raw = False

    def __init__(self, policy: Policy, rng: np.random.Generator) -> None:
        game = policy.game()
        if not isinstance(game, RLCardGame):
            raise InputError(f"rlcard_agent() needs a policy for an rlcard: game, not {policy.game_id}")
        self.policy = policy
        self.rng = rng
        self._game = game

    def probabilities(self, state: Mapping[str, Any]) -> dict[int, float]:
        """Probabilities of the legal action ids in an RLCard env state."""
        key = self._game.key_from_env_state(state)
        table = self.policy.action_probabilities(key)
        legal = list(state["legal_actions"])
        if set(table) != set(legal):
            raise InputError(f"the policy's actions {sorted(table)} at {key!r} differ from legal {legal}")
        return {action: table[action] for action in legal}

    def step(self, state: Mapping[str, Any]) -> int:
        probabilities = self.probabilities(state)
        actions = list(probabilities)
        weights = np.array([probabilities[a] for a in actions])
        return int(actions[self.rng.choice(len(actions), p=weights / weights.sum())])

    def eval_step(self, state: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """The sampled action and ``{"probs": {raw action name: probability}}``, as RLCard's agents."""
        probabilities = self.probabilities(state)
        names = {a: self._game.action_name(a) for a in probabilities}
        return self.step(state), {"probs": {names[a]: p for a, p in probabilities.items()}}
