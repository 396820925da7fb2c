"""Information-state tensors: a fixed-length ``float32`` encoding of every infoset, for neural methods.

:func:`encoder` gives a game's :class:`Encoder`. Its :attr:`~Encoder.layout` documents the tensor,
and :meth:`~Encoder.of_keys` encodes infosets by their keys (:meth:`adapters.State.information_state_key`),
so a compiled tree's infosets are encoded in one call and a state met in play by its key.

* ``openspiel:`` games: OpenSpiel's own ``information_state_tensor``. The keys are OpenSpiel's
  information-state strings, so the tensor of a key is that of any state with that string. The
  encoder finds them in one walk of the game, the first time a key is asked for;
  :meth:`OpenSpielEncoder.of_state` reads a ``pyspiel`` state's tensor directly.
* ``rlcard:leduc-holdem``: an exact encoding of the whole key. That is the seat, the private card,
  the public card, the blind role and every action in order. RLCard's own ``obs`` is not used: it
  merges infosets (84 observations for 1,872 infosets).
* ``rlcard:kuhn-poker``: its keys are OpenSpiel's ``kuhn_poker`` keys, and so is its tensor, in
  OpenSpiel's layout.

Distinct infosets always get distinct tensors (``tests/test_tensors.py`` checks every game).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import pyspiel
from numpy.typing import NDArray

from adapters.base import Game
from adapters.inputs import InputError, UnsupportedGameError

FloatArray32 = NDArray[np.float32]


class Encoder(Protocol):
    """The tensors of one game."""

    size: int
    """The length of every tensor."""
    layout: str
    """What each slice of the tensor holds."""

    def of_keys(self, keys: Sequence[str]) -> FloatArray32:
        """``(len(keys), size)``: the tensor of each infoset key."""
        ...


class OpenSpielEncoder:
    """OpenSpiel's ``information_state_tensor``, by information-state string."""

    def __init__(self, game: pyspiel.Game) -> None:
        if not game.get_type().provides_information_state_tensor:
            raise UnsupportedGameError(f"OpenSpiel's {game} has no information-state tensor")
        self._game = game
        self.size = int(np.prod(game.information_state_tensor_shape()))
        self.layout = (
            f"OpenSpiel's information_state_tensor of {game} ({self.size} values; see the game's "
            "InformationStateTensor in OpenSpiel)"
        )
        self._tensors: dict[str, FloatArray32] | None = None

    @staticmethod
    def of_state(state: pyspiel.State, player: int) -> FloatArray32:
        """The tensor of ``player``'s infoset at a ``pyspiel`` state."""
        return np.asarray(state.information_state_tensor(player), dtype=np.float32)

    def of_keys(self, keys: Sequence[str]) -> FloatArray32:
        tensors = self._all()
        missing = next((key for key in keys if key not in tensors), None)
        if missing is not None:
            raise InputError(f"{missing!r} is not an information state of OpenSpiel's {self._game}")
        return np.stack([tensors[key] for key in keys]) if keys else np.empty((0, self.size), np.float32)

    def _all(self) -> dict[str, FloatArray32]:
        """Every decision state's tensor by its information-state string: one walk, kept."""
        if self._tensors is None:
            tensors: dict[str, FloatArray32] = {}
            stack = [self._game.new_initial_state()]
            while stack:
                state = stack.pop()
                if state.is_terminal():
                    continue
                if state.is_chance_node():
                    stack.extend(state.child(outcome) for outcome, _ in state.chance_outcomes())
                    continue
                player = state.current_player()
                key = state.information_state_string(player)
                if key not in tensors:
                    tensors[key] = self.of_state(state, player)
                stack.extend(state.child(action) for action in state.legal_actions())
            self._tensors = tensors
        return self._tensors


LEDUC_CARDS = ("SJ", "HJ", "SQ", "HQ", "SK", "HK")
"""RLCard's Leduc deck (suit then rank), in the order of the tensor's card slots."""
LEDUC_ACTIONS = ("call", "raise", "fold", "check")
"""RLCard's Leduc actions, in the order of each history slot."""
LEDUC_HISTORY = 8
"""History slots: at most 4 actions a betting round (check, raise, raise, call), so 7 before a decision."""


class LeducEncoder:
    """The whole RLCard Leduc key ``seat|hand|public|role|actions`` (:func:`adapters.rlcard.leduc_infoset_key`)."""

    size = 2 + 6 + 6 + 2 + LEDUC_HISTORY * len(LEDUC_ACTIONS)
    layout = (
        "[0:2] seat (RLCard player id) one-hot; [2:8] private card one-hot over SJ HJ SQ HQ SK HK; "
        "[8:14] public card one-hot, the same order (all 0 before it is dealt); [14:16] role one-hot "
        "(small blind, big blind); [16:48] the actions in order, 8 slots of 4 one-hot "
        "(call, raise, fold, check), unused slots 0"
    )

    def of_keys(self, keys: Sequence[str]) -> FloatArray32:
        tensors = np.zeros((len(keys), self.size), dtype=np.float32)
        for row, key in enumerate(keys):
            try:
                seat, hand, public, role, history = key.split("|")
                tensors[row, int(seat)] = 1.0  # [0:2]
                tensors[row, 2 + LEDUC_CARDS.index(hand)] = 1.0  # [2:8]
                if public != "-":
                    tensors[row, 8 + LEDUC_CARDS.index(public)] = 1.0  # [8:14]
                tensors[row, 14 + ("SB", "BB").index(role)] = 1.0  # [14:16]
                actions = history.split("-") if history else []
                if len(actions) > LEDUC_HISTORY or int(seat) not in (0, 1):
                    raise ValueError
                for slot, action in enumerate(actions):
                    tensors[row, 16 + slot * len(LEDUC_ACTIONS) + LEDUC_ACTIONS.index(action)] = 1.0
            except ValueError:
                raise InputError(f"{key!r} is not an RLCard Leduc information-state key") from None
        return tensors


def encoder(game: Game) -> Encoder:
    """The information-state tensors of ``game``; refused, in one line, for a game without them."""
    from adapters.openspiel import OpenSpielGame
    from adapters.rlcard import RLCardGame

    if isinstance(game, OpenSpielGame):
        return OpenSpielEncoder(game.pyspiel_game)
    if isinstance(game, RLCardGame) and game.game_id == "rlcard:leduc-holdem":
        return LeducEncoder()
    if isinstance(game, RLCardGame) and game.game_id == "rlcard:kuhn-poker":
        return OpenSpielEncoder(pyspiel.load_game("kuhn_poker"))
    raise UnsupportedGameError(f"{game.game_id} has no information-state tensor encoding")
