"""What the RLCard and OpenSpiel faces of a policy read from it: a leaf module, so that
:mod:`cfr_agents.rlcard_agent` and :mod:`cfr_agents.openspiel_policy` need not import
:mod:`cfr_agents.policy` (which offers them as ``Policy.rlcard_agent()`` and ``Policy.openspiel_policy()``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from adapters import Game


class PolicyTable(Protocol):
    """Action probabilities per infoset key of one game (:class:`cfr_agents.policy.Policy` is one)."""

    @property
    def game_id(self) -> str: ...

    def action_probabilities(self, key: str) -> Mapping[int, float]:
        """``{action id: probability}`` at the infoset ``key``."""
        ...

    def game(self) -> Game:
        """The game, after checking the installed rules are the ones the table was made for."""
        ...
