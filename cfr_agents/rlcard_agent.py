"""A Policy as an RLCard agent: ``use_raw = False``, ``step`` and ``eval_step``.

It works in ``env.run`` and ``rlcard.utils.tournament``. The agent rebuilds the
perfect-recall infoset key from the env state (hand, public card, seat role and
``state["action_record"]``) with the adapter's own key function, so it looks up
exactly the infoset the policy was trained on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from adapters.inputs import InputError
from adapters.rlcard import RLCardGame
from cfr_agents.policy_table import PolicyTable


class _Row:
    """What the agent plays at one infoset: legal action ids, their probabilities, the running sums."""

    __slots__ = ("actions", "by_name", "cumulative", "probabilities")

    def __init__(self, actions: tuple[int, ...], probabilities: tuple[float, ...], names: list[str]) -> None:
        total = sum(probabilities)
        self.actions = actions
        self.probabilities = probabilities
        self.by_name = {names[a]: p for a, p in zip(actions, probabilities, strict=True)}
        running, sums = 0.0, []
        for probability in probabilities:
            running += probability / total
            sums.append(running)
        self.cumulative = tuple(sums)


class PolicyAgent:
    """Samples its actions from a policy (:class:`~cfr_agents.policy.Policy`) with its own Generator.

    Each action costs one ``rng.random()`` draw: the first action whose running probability sum
    exceeds it is played (inverse-CDF sampling over the legal actions in RLCard's order). Rows are
    cached per infoset key, so a hand costs a key and a lookup per decision.
    """

    use_raw = False

    def __init__(self, policy: PolicyTable, rng: np.random.Generator) -> None:
        game = policy.game()
        if not isinstance(game, RLCardGame):
            raise InputError(f"rlcard_agent() needs a policy for an rlcard: game, not {policy.game_id}")
        self.policy = policy
        self.rng = rng
        self._game = game
        self._rows: dict[tuple[str, tuple[int, ...]], _Row] = {}

    def _row(self, state: Mapping[str, Any]) -> _Row:
        legal = tuple(state["legal_actions"])
        key = self._game.key_from_env_state(state)
        row = self._rows.get((key, legal))
        if row is None:
            table = self.policy.action_probabilities(key)
            if set(table) != set(legal):
                raise InputError(f"the policy's actions {sorted(table)} at {key!r} differ from legal {list(legal)}")
            row = self._rows[(key, legal)] = _Row(legal, tuple(table[action] for action in legal), self._game.actions)
        return row

    def probabilities(self, state: Mapping[str, Any]) -> dict[int, float]:
        """Probabilities of the legal action ids in an RLCard env state."""
        row = self._row(state)
        return dict(zip(row.actions, row.probabilities, strict=True))

    def _sample(self, row: _Row) -> int:
        draw = self.rng.random()
        for action, running in zip(row.actions, row.cumulative, strict=True):
            if draw < running:
                return action
        return next(a for a, p in zip(reversed(row.actions), reversed(row.probabilities), strict=True) if p > 0)

    def step(self, state: Mapping[str, Any]) -> int:
        return self._sample(self._row(state))

    def eval_step(self, state: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        """The sampled action and ``{"probs": {raw action name: probability}}``, as RLCard's agents."""
        row = self._row(state)
        return self._sample(row), {"probs": dict(row.by_name)}
