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

from adapters.base import CHANCE, TERMINAL, Game, Reduction, State
from adapters.games import load_game
from adapters.inputs import (
    IllegalActionError,
    InputError,
    UnknownGameError,
    UnsupportedGameError,
)
from adapters.pyspiel_game import register as register_pyspiel_games
from adapters.rlcard_kuhn import register as register_rlcard_kuhn

register_rlcard_kuhn()
register_pyspiel_games()


__all__ = [
    "CHANCE",
    "TERMINAL",
    "Game",
    "IllegalActionError",
    "InputError",
    "Reduction",
    "State",
    "UnknownGameError",
    "UnsupportedGameError",
    "load_game",
]
