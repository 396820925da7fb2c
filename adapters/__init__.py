"""One game interface over OpenSpiel and RLCard poker games.

>>> import adapters
>>> game = adapters.load_game("openspiel:kuhn_poker")
>>> state = game.new_initial_state()
>>> state.is_chance_node(), state.chance_outcomes()[0]
(True, (0, 0.3333333333333333))

Importing this package also registers ``kuhn-poker`` with RLCard, so
``rlcard.make("kuhn-poker")`` works, and registers the RLCard games with OpenSpiel
as ``python_rlcard_leduc_holdem`` and ``python_rlcard_kuhn_poker`` (see
:mod:`adapters.pyspiel_game`), so ``pyspiel.load_game`` runs OpenSpiel's algorithms on them.
"""

from adapters import pyspiel_game, rlcard_kuhn
from adapters.base import CHANCE, TERMINAL, Game, State
from adapters.errors import (
    IllegalActionError,
    InputError,
    UnknownGameError,
    UnsupportedGameError,
)

rlcard_kuhn.register()
pyspiel_game.register()


def load_game(game_id: str) -> Game:
    """The game for ``openspiel:<pyspiel game string>`` or ``rlcard:<env id>``."""
    toolkit, _, name = game_id.partition(":")
    if not name:
        raise UnknownGameError(
            f"game id {game_id!r} must look like 'openspiel:leduc_poker' or 'rlcard:leduc-holdem'"
        )
    if toolkit == "openspiel":
        from adapters.openspiel import OpenSpielGame

        return OpenSpielGame(name)
    if toolkit == "rlcard":
        from adapters.rlcard import RLCardGame

        return RLCardGame(name)
    raise UnknownGameError(f"unknown toolkit {toolkit!r} in game id {game_id!r}; use openspiel: or rlcard:")


__all__ = [
    "CHANCE",
    "TERMINAL",
    "Game",
    "IllegalActionError",
    "InputError",
    "State",
    "UnknownGameError",
    "UnsupportedGameError",
    "load_game",
]
