"""The rules of a two-player limit ``universal_poker`` game, as OpenSpiel's loaded game states them.

:class:`LimitRules` is read from ``pyspiel.Game.get_parameters()``; no number is typed in here. OpenSpiel
writes per-player and per-round values as space-separated text (``blind="100 50"``: player 0 posts 100,
player 1 posts 50) and ``firstPlayer`` from 1; :class:`LimitRules` holds them as tuples of ints, players from 0.

Values a game pays are in chips; :attr:`LimitRules.big_blind` is in chips too, so a value ``v`` per hand is
``v / big_blind * 1000`` milli-big-blinds per game (mbb/g).
"""

from __future__ import annotations

from dataclasses import dataclass

import pyspiel

from adapters.base import Game
from adapters.games import load_game
from adapters.inputs import UnsupportedGameError
from adapters.openspiel import OpenSpielGame

MAX_HOLE_CARDS = 2
"""The most private cards per player the public-tree engine holds a hand index for."""

_PER_ROUND = ("numBoardCards", "raiseSize", "maxRaises", "firstPlayer")
"""The parameters that give one value per betting round."""
_SUBGAME = ("boardCards", "potSize", "handReaches")
"""The parameters that start the game inside a hand (a fixed board, a pot, the hands' reach): a subgame."""


@dataclass(frozen=True)
class LimitRules:
    """Deck, deal and betting of a two-player limit ``universal_poker`` game; tuples per round are indexed
    by round from 0, tuples per player by player from 0."""

    num_ranks: int
    num_suits: int
    num_hole_cards: int
    """Private cards dealt to each player."""
    num_rounds: int
    board_cards: tuple[int, ...]
    """Public cards dealt at the start of each round (``(0, 3)`` for Flop Hold'em)."""
    blinds: tuple[int, int]
    """Chips each player posts before the deal."""
    raise_size: tuple[int, ...]
    """Chips of each bet or raise in each round."""
    max_raises: tuple[int, ...]
    """The most bets and raises in each round (the blinds do not count)."""
    first_player: tuple[int, ...]
    """The player who acts first in each round; ``-1``: whoever did not act last in the round before (RLCard's
    limit hold'em, :func:`adapters.holdem.engine.holdem_engine`)."""

    @property
    def big_blind(self) -> int:
        """The larger blind, in chips: the unit of mbb/g (a value ``v`` is ``v / big_blind * 1000`` mbb/g)."""
        return max(self.blinds)

    @property
    def deck_size(self) -> int:
        return self.num_ranks * self.num_suits


def limit_rules(game: pyspiel.Game | Game | str) -> LimitRules | None:
    """The :class:`LimitRules` of ``game`` (a ``pyspiel`` game, an adapter game, or a game id or name that
    :func:`adapters.load_game` accepts), or ``None`` when it is not a two-player limit ``universal_poker``
    game. A game the public-tree engine does not model is refused in one line (:class:`UnsupportedGameError`):
    more than :data:`MAX_HOLE_CARDS` private cards, a per-round parameter without one value per round (a
    missing ``maxRaises`` lets a round raise 255 times), or a subgame's parameters."""
    found = _limit_game(game)
    if found is None:
        return None
    parameters = found.get_parameters()
    defaults = pyspiel.load_game("universal_poker").get_parameters()
    num_rounds = int(parameters["numRounds"])
    per_round = {key: _numbers(parameters[key]) for key in _PER_ROUND}
    blinds = _numbers(parameters["blind"])
    short = next((key for key, values in per_round.items() if len(values) != num_rounds), None)
    subgame = [key for key in _SUBGAME if parameters[key] != defaults[key]]
    problem = (
        f"{parameters['numHoleCards']} hole cards; the public-tree engine handles at most {MAX_HOLE_CARDS}"
        if int(parameters["numHoleCards"]) > MAX_HOLE_CARDS
        else f"{short}={parameters[short]!r} for {num_rounds} rounds; the public-tree engine needs one value a round"
        if short is not None
        else f"blind={parameters['blind']!r}; the public-tree engine needs one blind per player"
        if len(blinds) != 2
        else f"{', '.join(subgame)} set, a subgame the public-tree engine does not model"
        if subgame
        else ""
    )
    if problem:
        raise UnsupportedGameError(f"{str(found)!r} has {problem}")
    return LimitRules(
        num_ranks=int(parameters["numRanks"]),
        num_suits=int(parameters["numSuits"]),
        num_hole_cards=int(parameters["numHoleCards"]),
        num_rounds=num_rounds,
        board_cards=per_round["numBoardCards"],
        blinds=(blinds[0], blinds[1]),
        raise_size=per_round["raiseSize"],
        max_raises=per_round["maxRaises"],
        first_player=tuple(player - 1 for player in per_round["firstPlayer"]),
    )


def is_limit_holdem(game_id: str) -> bool:
    """Whether ``game_id`` (or a named game, ``fhp``) is a two-player limit ``universal_poker`` game."""
    return _limit_game(game_id) is not None


def _limit_game(game: pyspiel.Game | Game | str) -> pyspiel.Game | None:
    """``game``'s ``pyspiel`` game if it is two-player limit ``universal_poker``, else ``None``. A game id is
    loaded by :func:`adapters.load_game` (and refused as it refuses); a ``pyspiel`` game is loaded again from
    its string, so it meets the refusals every ``openspiel:`` id meets."""
    if isinstance(game, str):
        game = load_game(game)
    found = game.pyspiel_game if isinstance(game, OpenSpielGame) else game if isinstance(game, pyspiel.Game) else None
    if (
        found is None
        or found.get_type().short_name != "universal_poker"
        or found.num_players() != 2
        or found.get_parameters()["betting"] != "limit"
    ):
        return None
    return found if isinstance(game, OpenSpielGame) else OpenSpielGame(str(found)).pyspiel_game


def _numbers(value: object) -> tuple[int, ...]:
    """OpenSpiel's space-separated numbers (``"100 50"``) as ints."""
    return tuple(int(part) for part in str(value).split())


COMPILED_TREE_CARDS = 12
"""The largest deck of a hold'em game (two hole cards) the compiled tree takes: 12 cards and one board card make
about 1.4e7 nodes (``holdem-12``); past it, hold'em games run on their public tree
(:mod:`cfr_agents.public_tree`)."""


def public_by_default(rules: LimitRules | None) -> bool:
    """Whether a game runs on its public tree, the compiled tree refusing it: a two-player limit hold'em game
    (two hole cards) with a deck past :data:`COMPILED_TREE_CARDS`, such as ``fhp``, ``fhp-acpc`` and ``hulh``."""
    return rules is not None and rules.num_hole_cards == 2 and rules.deck_size > COMPILED_TREE_CARDS
