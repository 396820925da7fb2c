r"""OpenSpiel's ``information_state_tensor`` of a two-player limit ``universal_poker`` game, for every private hand
of a public node at once, without ``pyspiel`` states.

The layout is that of ``UniversalPokerState::InformationStateTensor`` (OpenSpiel's ``universal_poker.cc``), with
:math:`n` = ``numRanks * numSuits`` cards and :math:`L` = ``game.max_game_length()``:

* ``[0:2]`` the player whose information state it is, one-hot;
* ``[2:2+n]`` that player's hole cards, one-hot by card id (the chance action that deals the card);
* ``[2+n:2+2n]`` the board cards dealt so far, one-hot;
* ``[2+2n:2+2n+2L]`` the action sequence, two values per entry, in the order OpenSpiel applies them: every card
  dealt (both players' hole cards first, then each round's board cards before the round's betting) is ``0 0``, a
  fold ``0 0``, a check or call ``1 0``, a bet or raise ``0 1``; unused entries ``0 0``;
* ``[2+2n+2L:2+2n+3L]`` each entry's bet size, which a limit game always gives as 0 (ACPC fixes the size).

Everything but the hole cards is public: a public node -- the player, the board cards and the betting
sequence (OpenSpiel's ``Sequences`` string, ``'fcr'`` letters with rounds separated by ``'|'``) -- gives one
*template* (:meth:`HoldemTensors.template`), and the tensor of hand :math:`h` is the template plus the one-hot of
:math:`h`'s cards at ``[2:2+n]`` (:meth:`HoldemTensors.of_hands`). A network's first layer is then
:math:`W x_h + b = (W t + b) + \sum_{c \in h} W_{:, 2 + c}`, which :attr:`HoldemTensors.hole_offset` locates.

Suit isomorphism is not in the tensor: the tensor of a suit-permuted information state is that of its image's
cards; a caller that wants a canonical board's inputs maps the board with
:func:`~adapters.holdem.suits.canonical_board` and the hands with :func:`~adapters.holdem.suits.hand_permutation`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
from numpy.typing import NDArray

from adapters.holdem.betting import ACTION_LETTERS, DECISION, BettingTree
from adapters.holdem.rules import LimitRules, limit_rules
from adapters.inputs import InputError, UnsupportedGameError

FloatArray32 = NDArray[np.float32]

NUM_PLAYERS = 2
_CALL, _RAISE = ACTION_LETTERS[1], ACTION_LETTERS[2]
"""The sequence letters whose entry sets a bit: call at the entry's first value, raise at its second."""


@dataclass(frozen=True)
class HoldemTensors:
    """The information-state tensors of one limit ``universal_poker`` game (module docstring)."""

    rules: LimitRules
    max_game_length: int
    """:math:`L`: the action-sequence entries the tensor holds (``game.max_game_length()``)."""

    @property
    def num_cards(self) -> int:
        return self.rules.deck_size

    @property
    def hole_offset(self) -> int:
        """Where the hole cards' one-hot starts: the value of card ``c`` is at ``hole_offset + c``."""
        return NUM_PLAYERS

    @property
    def board_offset(self) -> int:
        return NUM_PLAYERS + self.num_cards

    @property
    def actions_offset(self) -> int:
        return NUM_PLAYERS + 2 * self.num_cards

    @property
    def size(self) -> int:
        return NUM_PLAYERS + 2 * self.num_cards + 3 * self.max_game_length

    def template(self, player: int, sequence: str, board: Sequence[int]) -> FloatArray32:
        """``(size,)``: the tensor of ``player``'s information state after the betting ``sequence`` with the board
        cards ``board`` dealt, without its hole cards."""
        cards = self._cards(board)
        dealt = sum(self.rules.board_cards[: sequence.count("|") + 1])
        if cards.size != dealt:
            raise InputError(f"the betting {sequence!r} comes with {dealt} board cards, not {cards.size}")
        out = np.zeros(self.size, dtype=np.float32)
        self._betting(out, player, sequence)
        out[self.board_offset + cards] = 1.0
        return out

    def of_hands(self, template: FloatArray32, hands: NDArray[np.int64]) -> FloatArray32:
        """``(H, size)``: ``template`` with each row of ``hands`` ``(H, k)`` (card ids) one-hot at the hole cards."""
        hands = np.asarray(hands, dtype=np.int64)
        out = np.repeat(template[None, :], hands.shape[0], axis=0)
        out[np.arange(hands.shape[0])[:, None], self.hole_offset + hands] = 1.0
        return out

    def of_node(self, player: int, sequence: str, board: Sequence[int], hands: NDArray[np.int64]) -> FloatArray32:
        """``(H, size)``: the tensor of every hand of ``hands`` at one public node (:meth:`template`,
        :meth:`of_hands`). A hand that shares a card with the board gets a row no state has."""
        return self.of_hands(self.template(player, sequence, board), hands)

    def betting_templates(self, betting: BettingTree) -> FloatArray32:
        """``(N, size)``: per betting node, the template of the player to act with no board card (zeros at nodes
        other than decisions); add a board's one-hot (:meth:`board_part`) for a node under that board."""
        out = np.zeros((betting.num_nodes, self.size), dtype=np.float32)
        for node in np.flatnonzero(betting.kind == DECISION):
            self._betting(out[node], int(betting.player[node]), betting.sequence[node])
        return out

    def board_part(self, board: Sequence[int]) -> FloatArray32:
        """``(size,)``: the board cards' one-hot alone."""
        out = np.zeros(self.size, dtype=np.float32)
        out[self.board_offset + self._cards(board)] = 1.0
        return out

    def cards_of(self, rows: NDArray[Any]) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """The inverse of the cards' one-hot in ``rows`` ``(N, size)``: the hole cards ``(N, k)``, the board cards
        ``(N, board cards of the last round)`` in ascending order, those dealt first, and how many are dealt
        ``(N,)``."""
        n = self.num_cards
        holes = np.nonzero(rows[:, self.hole_offset : self.hole_offset + n])[1].reshape(-1, self.rules.num_hole_cards)
        dealt = rows[:, self.board_offset : self.board_offset + n] > 0
        boards = np.argsort(~dealt, axis=1, kind="stable")[:, : sum(self.rules.board_cards)]
        return holes.astype(np.int64), boards.astype(np.int64), dealt.sum(axis=1).astype(np.int64)

    def _cards(self, cards: Sequence[int]) -> NDArray[np.int64]:
        found = np.asarray(cards, dtype=np.int64).reshape(-1)
        if found.size and (found.min() < 0 or found.max() >= self.num_cards or np.unique(found).size != found.size):
            raise InputError(f"cards {list(found)} are not distinct cards of a {self.num_cards}-card deck")
        return found

    def _betting(self, out: FloatArray32, player: int, sequence: str) -> None:
        """Write the player's one-hot and the action sequence into ``out``."""
        rules = self.rules
        rounds = sequence.split("|")
        if player not in (0, 1) or len(rounds) > rules.num_rounds or set(sequence) - set(ACTION_LETTERS + "|"):
            raise InputError(f"no information state of player {player} after the betting {sequence!r}")
        out[player] = 1.0
        entry = NUM_PLAYERS * rules.num_hole_cards  # the hole cards' deals
        for round_, actions in enumerate(rounds):
            entry += rules.board_cards[round_]  # the round's board cards, dealt before its betting
            for letter in actions:
                if entry >= self.max_game_length:
                    raise InputError(f"the betting {sequence!r} is longer than the game allows")
                if letter == _CALL:
                    out[self.actions_offset + 2 * entry] = 1.0
                elif letter == _RAISE:
                    out[self.actions_offset + 2 * entry + 1] = 1.0
                entry += 1


def holdem_tensors(game: pyspiel.Game) -> HoldemTensors:
    """The tensors of a two-player limit ``universal_poker`` game; another game, or one whose tensor is not the
    layout of the module docstring, is refused in one line."""
    rules = limit_rules(game)
    if rules is None:
        raise UnsupportedGameError(f"{game} is not a two-player limit universal_poker game")
    tensors = HoldemTensors(rules, int(game.max_game_length()))
    shape = list(game.information_state_tensor_shape())
    if shape != [tensors.size]:
        raise UnsupportedGameError(f"{game}'s information-state tensor has shape {shape}, not [{tensors.size}]")
    return tensors
