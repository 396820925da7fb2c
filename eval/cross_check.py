"""The same NashConv computed by OpenSpiel's own ``exploitability.nash_conv``.

An ``openspiel:`` policy is measured on its native ``pyspiel`` game. Any other policy
(``rlcard:``) is measured on its adapter game bridged into OpenSpiel
(:func:`adapters.pyspiel_game.as_pyspiel_game`), whose information-state strings are the
policy's own keys, so the policy table fills a ``TabularPolicy`` row for row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from open_spiel.python.algorithms import exploitability as openspiel_exploitability

from adapters.pyspiel_game import BridgedGame
from cfr_agents.policy import Policy

TOLERANCE = 1e-9
"""Largest difference between our NashConv and OpenSpiel's that counts as agreement."""


@dataclass(frozen=True)
class OpenSpielNashConv:
    """OpenSpiel's NashConv of a policy, and the OpenSpiel game it was computed on."""

    game_id: str
    openspiel_game: str
    """The ``pyspiel`` game, as OpenSpiel names it: ``"leduc_poker()"``, ``"python_rlcard_leduc_holdem()"``."""
    source: Literal["native", "bridged"]
    """``"native"``: OpenSpiel's own game; ``"bridged"``: the adapter game as an OpenSpiel Python game."""
    nash_conv: float
    """In the game's units, like :attr:`eval.Exploitability.nash_conv`."""


def openspiel_cross_check(policy: Policy) -> OpenSpielNashConv:
    """OpenSpiel's NashConv of ``policy``: on the native game for ``openspiel:``, else on the bridged one."""
    tabular = policy.openspiel_policy()
    pyspiel_game = tabular.game
    return OpenSpielNashConv(
        game_id=policy.game_id,
        openspiel_game=str(pyspiel_game),
        source="bridged" if isinstance(pyspiel_game, BridgedGame) else "native",
        nash_conv=float(openspiel_exploitability.nash_conv(pyspiel_game, tabular)),
    )
