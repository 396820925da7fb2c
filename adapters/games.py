"""Game ids to adapter games: ``openspiel:<pyspiel game string>`` and ``rlcard:<env id>``."""

from __future__ import annotations

from adapters.base import Game
from adapters.inputs import UnknownGameError


def load_game(game_id: str) -> Game:
    """The game for ``openspiel:<pyspiel game string>`` or ``rlcard:<env id>``."""
    toolkit, _, name = game_id.partition(":")
    if not name:
        raise UnknownGameError(f"game id {game_id!r} must look like 'openspiel:leduc_poker' or 'rlcard:leduc-holdem'")
    if toolkit == "openspiel":
        from adapters.openspiel import OpenSpielGame

        return OpenSpielGame(name)
    if toolkit == "rlcard":
        from adapters.rlcard import RLCardGame

        return RLCardGame(name)
    raise UnknownGameError(f"unknown toolkit {toolkit!r} in game id {game_id!r}; use openspiel: or rlcard:")
