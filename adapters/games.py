"""Game ids to adapter games: ``openspiel:<pyspiel game string>``, ``rlcard:<env id>``, ``pettingzoo:<environment>``
(``pettingzoo:leduc_holdem_v4``, played through PettingZoo's AEC API; :mod:`adapters.pettingzoo`), or a named game.

A named game (:data:`NAMED_GAMES`, e.g. ``fhp``) is another spelling of one ``openspiel:`` id, its canonical
id: :func:`load_game` gives the same game for both, whose :attr:`~adapters.base.Game.game_id` is the canonical
id, so results, policy files and rules fingerprints name the game one way whichever spelling was given.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

import pyspiel

from adapters.base import Game
from adapters.inputs import UnknownGameError


@dataclass(frozen=True)
class NamedGame:
    """A short name of a game: the canonical id it stands for, and what the game is, in one line."""

    game_id: str
    description: str


def _limit_poker(cards: str, maximum_raises: str, board: str) -> str:
    """Two-player limit ``universal_poker`` with Flop Hold'em's blinds (big 100 first, small 50), raises of 100
    in both of its two rounds, the small blind first before the board and the big blind first after it."""
    return (
        "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=100 50,firstPlayer=2 1,"
        f"{cards},numHoleCards=2,numBoardCards=0 {board},raiseSize=100 100,maxRaises={maximum_raises})"
    )


NAMED_GAMES: Final[Mapping[str, NamedGame]] = MappingProxyType(
    {
        "fhp": NamedGame(
            _limit_poker("numSuits=4,numRanks=13", "3 3", "3"),
            "Flop Hold'em as Deep CFR defines it: 52 cards, 2 private, a 3-card flop, blinds 50/100, raises 100, "
            "at most 3 raises a round",
        ),
        "fhp-acpc": NamedGame(
            _limit_poker("numSuits=4,numRanks=13", "3 4", "3"),
            "heads-up limit hold'em cut after the flop: Flop Hold'em with at most 3 raises preflop, 4 on the flop",
        ),
        "hulh": NamedGame(
            "openspiel:" + pyspiel.hulh_game_string("fcpa"),
            "heads-up limit Texas hold'em, ACPC rules: blinds 5/10, raises 10/10/20/20, at most 3/4/4/4 raises",
        ),
        "holdem-6": NamedGame(
            _limit_poker("numSuits=2,numRanks=3", "3 3", "1"),
            "calibration hold'em: 6 cards (3 ranks x 2 suits), 2 private, 1 board card, Flop Hold'em's betting",
        ),
        "holdem-8": NamedGame(
            _limit_poker("numSuits=2,numRanks=4", "3 3", "1"),
            "calibration hold'em: 8 cards (4 ranks x 2 suits), 2 private, 1 board card, Flop Hold'em's betting",
        ),
        "holdem-12": NamedGame(
            _limit_poker("numSuits=4,numRanks=3", "3 3", "1"),
            "calibration hold'em: 12 cards (3 ranks x 4 suits), 2 private, 1 board card, Flop Hold'em's betting",
        ),
    }
)
"""The named games, by name; each names its canonical ``openspiel:`` id and says what the game is."""


def canonical_game_id(game_id: str) -> str:
    """The id ``game_id`` stands for: a named game's ``openspiel:`` id, any other id as it is."""
    named = NAMED_GAMES.get(game_id)
    return game_id if named is None else named.game_id


def load_game(game_id: str, *, any_players: bool = False) -> Game:
    """The game for ``openspiel:<pyspiel game string>``, ``rlcard:<env id>``, ``pettingzoo:<environment>`` or a name
    in :data:`NAMED_GAMES`: a two-player zero-sum game, or with ``any_players`` an OpenSpiel game of any number of
    players and any utility or ``rlcard:leduc-holdem(game_num_players=3)`` (what the compiled tree, the full-tree
    solvers and exact NashConv take)."""
    toolkit, _, name = canonical_game_id(game_id).partition(":")
    if not name:
        raise UnknownGameError(
            f"game id {game_id!r} must look like 'openspiel:leduc_poker' or 'rlcard:leduc-holdem', "
            f"or be a named game: {', '.join(NAMED_GAMES)}"
        )
    if toolkit == "openspiel":
        from adapters.openspiel import OpenSpielGame

        return OpenSpielGame(name, any_players=any_players)
    if toolkit == "rlcard":
        from adapters.rlcard import RLCardGame

        return RLCardGame(name, any_players=any_players)
    if toolkit == "pettingzoo":
        from adapters.pettingzoo import PettingZooGame

        return PettingZooGame(name)
    raise UnknownGameError(
        f"unknown toolkit {toolkit!r} in game id {game_id!r}; use openspiel:, rlcard: or pettingzoo:"
    )
