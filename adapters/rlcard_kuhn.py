"""Kuhn poker as an RLCard-native game and environment: ``rlcard.make("kuhn-poker")``.

RLCard ships no Kuhn poker, so this module is the one place its rules live. They are
OpenSpiel's ``kuhn_poker``: a three-card deck J < Q < K, an ante of 1 chip each,
player 0 acts first, actions pass (0) and bet (1), bet size 1, payoffs in chips.

The engine deals the way RLCard's engines do (``np_random.shuffle`` of the deck,
then ``deck.pop()`` to player 0 and player 1), so the adapter enumerates its deals
with the same mechanism it uses for Leduc. Importing :mod:`adapters` registers the
environment with RLCard's registry.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
from rlcard.envs import Env

ENV_ID = "kuhn-poker"
RANKS = ("J", "Q", "K")
ACTIONS = ("pass", "bet")
ANTE = 1
BET = 1


class KuhnPokerGame:
    """The RLCard ``Game`` object: ``init_game``/``step``/``step_back``/``get_state``/... ."""

    def __init__(self, allow_step_back: bool = False) -> None:
        self.allow_step_back = allow_step_back
        self.np_random: Any = np.random.RandomState()
        self.num_players = 2

    def configure(self, game_config: dict[str, Any]) -> None:
        """Kuhn poker has no configurable rules."""

    def init_game(self) -> tuple[dict[str, Any], int]:
        self.deck = list(RANKS)
        self.np_random.shuffle(self.deck)
        self.hands = [self.deck.pop() for _ in range(self.num_players)]
        self.history: list[str] = []
        self.game_pointer = 0
        return self.get_state(self.game_pointer), self.game_pointer

    def step(self, action: str) -> tuple[dict[str, Any], int]:
        if action not in self.get_legal_actions():
            raise ValueError(f"{action!r} is not a legal Kuhn poker action here")
        self.history.append(action)
        self.game_pointer = 1 - self.game_pointer
        return self.get_state(self.game_pointer), self.game_pointer

    def step_back(self) -> bool:
        if not self.history:
            return False
        self.history.pop()
        self.game_pointer = 1 - self.game_pointer
        return True

    def get_num_players(self) -> int:
        return self.num_players

    @staticmethod
    def get_num_actions() -> int:
        return len(ACTIONS)

    def get_player_id(self) -> int:
        return self.game_pointer

    def get_legal_actions(self) -> list[str]:
        return [] if self.is_over() else list(ACTIONS)

    def is_over(self) -> bool:
        h = self.history
        return h in (["pass", "pass"], ["bet", "pass"], ["bet", "bet"]) or len(h) == 3

    def get_state(self, player: int) -> dict[str, Any]:
        return {
            "hand": self.hands[player],
            "history": list(self.history),
            "legal_actions": self.get_legal_actions(),
            "current_player": self.game_pointer,
        }

    def get_payoffs(self) -> np.ndarray:
        """Chips won by each player: the pot minus the player's own contribution."""
        h = self.history
        bets = [ANTE, ANTE]
        for turn, action in enumerate(h):
            if action == "bet":
                bets[turn % 2] += BET
        if h[-1] == "pass" and "bet" in h:  # the player facing a bet folded
            winner = 1 - (len(h) - 1) % 2
        else:  # showdown
            winner = 0 if RANKS.index(self.hands[0]) > RANKS.index(self.hands[1]) else 1
        payoffs = np.array([-bets[0], -bets[1]], dtype=float)
        payoffs[winner] += sum(bets)
        return payoffs


class KuhnPokerEnv(Env):  # type: ignore[misc]
    """The RLCard ``Env``: action ids ``0 = pass``, ``1 = bet``; ``obs`` is card one-hot + history."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.name = ENV_ID
        self.game = KuhnPokerGame()
        super().__init__(config)
        self.actions = list(ACTIONS)
        self.state_shape = [[3 + 2 * 3] for _ in range(self.num_players)]
        self.action_shape = [None for _ in range(self.num_players)]

    def _get_legal_actions(self) -> OrderedDict[int, None]:
        return OrderedDict((ACTIONS.index(a), None) for a in self.game.get_legal_actions())

    def _extract_state(self, state: dict[str, Any]) -> dict[str, Any]:
        obs = np.zeros(3 + 2 * 3)
        obs[RANKS.index(state["hand"])] = 1
        for turn, action in enumerate(state["history"]):
            obs[3 + 2 * turn + ACTIONS.index(action)] = 1
        return {
            "obs": obs,
            "legal_actions": OrderedDict((ACTIONS.index(a), None) for a in state["legal_actions"]),
            "raw_obs": state,
            "raw_legal_actions": list(state["legal_actions"]),
            "action_record": self.action_recorder,
        }

    def _decode_action(self, action_id: int) -> str:
        if action_id not in range(len(ACTIONS)):
            raise ValueError(f"Kuhn poker has no action id {action_id}")
        return ACTIONS[action_id]

    def get_payoffs(self) -> np.ndarray:
        return self.game.get_payoffs()

    def get_perfect_information(self) -> dict[str, Any]:
        return {
            "hand_cards": list(self.game.hands),
            "history": list(self.game.history),
            "current_player": self.game.game_pointer,
            "legal_actions": self.game.get_legal_actions(),
        }


def register() -> None:
    """Register ``kuhn-poker`` with RLCard's registry (idempotent)."""
    from rlcard.envs.registration import register as rlcard_register
    from rlcard.envs.registration import registry

    if ENV_ID not in registry.env_specs:
        rlcard_register(env_id=ENV_ID, entry_point=f"{__name__}:KuhnPokerEnv")
