"""The same NashConv computed by OpenSpiel's own ``exploitability.nash_conv``."""

from __future__ import annotations

from open_spiel.python.algorithms import exploitability as openspiel_exploitability

from adapters.errors import InputError
from adapters.openspiel import OpenSpielGame
from cfr_agents.policy import Policy

TOLERANCE = 1e-9
"""Largest difference between our NashConv and OpenSpiel's that counts as agreement."""


def openspiel_nash_conv(policy: Policy) -> float:
    """OpenSpiel's NashConv of ``policy`` on its native OpenSpiel game."""
    game = policy.game()
    if not isinstance(game, OpenSpielGame):
        raise InputError(f"no OpenSpiel version of {policy.game_id} to cross-check against")
    return float(openspiel_exploitability.nash_conv(game.pyspiel_game, policy.openspiel_policy()))
