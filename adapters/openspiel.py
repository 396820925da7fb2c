"""OpenSpiel games behind the adapter interface: ``openspiel:<pyspiel game string>``.

Every rule comes from ``pyspiel``; this module only translates. Information-state
keys are OpenSpiel's ``information_state_string(player)`` and action ids are
OpenSpiel's, so a policy trained here loads into ``open_spiel.python.policy.TabularPolicy``.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import pyspiel

from adapters.base import NUM_PLAYERS, Game, Reduction, State, TreeOps
from adapters.inputs import UnknownGameError, UnsupportedGameError

PREFIX = "openspiel:"


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence OpenSpiel's C++ error printing so a bad game string gives one clean line."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _load_pyspiel(game_string: str) -> pyspiel.Game:
    name = game_string.split("(", 1)[0]
    if name not in pyspiel.registered_names():
        raise UnknownGameError(f"unknown OpenSpiel game {name!r}")
    if name == "universal_poker":
        _check_universal_poker(game_string)
    try:
        with _quiet_stderr():
            return pyspiel.load_game(game_string)
    except Exception as error:  # SpielError, or a C++ exception as pybind maps it (nfg_game: IndexError)
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise UnknownGameError(f"OpenSpiel cannot load {game_string!r}: {first_line}") from None


_ACPC_RANGES: Final = (
    ("numRounds", 1, 4),
    ("numPlayers", 2, 10),
    ("numSuits", 1, 4),
    ("numRanks", 1, 13),
    ("numHoleCards", 1, 3),
)
"""The counts OpenSpiel's ACPC game reader accepts (its ``MAX_ROUNDS``, ``MAX_PLAYERS``, ``MAX_SUITS``,
``MAX_RANKS`` and ``MAX_HOLE_CARDS``)."""


def _check_universal_poker(game_string: str) -> None:
    """Refuse in one line the ``universal_poker`` games that OpenSpiel 2.0.2 crashes the process on or plays
    wrongly (:func:`_universal_poker_problem`)."""
    try:
        given = pyspiel.game_parameters_from_string(game_string)
    except Exception as error:  # SpielError: a malformed parameter list
        first_line = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise UnknownGameError(f"OpenSpiel cannot parse {game_string!r}: {first_line}") from None
    [game_type] = [game for game in pyspiel.registered_games() if game.short_name == "universal_poker"]
    problem = _universal_poker_problem({**game_type.parameter_specification, **given})
    if problem:
        raise UnknownGameError(f"OpenSpiel cannot load {game_string!r}: universal_poker's {problem}")


def _universal_poker_problem(parameters: Mapping[str, object]) -> str:
    """Why OpenSpiel cannot play ``universal_poker`` with ``parameters`` (all of them, defaults included),
    as ``"<parameter> ..."``, or ``""``.

    OpenSpiel's ACPC game reader refuses a game it cannot play by printing a line ("invalid number of ranks:
    14", "only read 2 blinds, need 3") and returning no game, which OpenSpiel then uses: the process dies
    with a segmentation fault. Its checks are made here first: the counts of :data:`_ACPC_RANGES`; a stack
    and a blind for each player, no blind above its stack; for each round a number of board cards, with
    limit betting a raise size, and a first player among the players (1 when not given); enough cards to
    deal. Limit betting under ``bettingAbstraction=fullgame`` is refused too: OpenSpiel 2.0.2 then gives
    1,201 actions, a raise that folds, and aborts inside ACPC (the default abstraction, ``fcpa``, is right).
    """
    limit = parameters["betting"] == "limit"
    if limit and parameters["bettingAbstraction"] == "fullgame":
        return (
            "bettingAbstraction=fullgame breaks limit betting in OpenSpiel 2.0.2 (1,201 actions, a raise that "
            "folds, an abort inside ACPC); leave it out (fcpa, the default, plays limit right)"
        )
    count = {key: _whole_number(key, parameters[key]) for key, _, _ in _ACPC_RANGES}
    for key, low, high in _ACPC_RANGES:
        if not low <= count[key] <= high:
            return f"{key} must be from {low} to {high}, got {count[key]}"
    players, rounds, hole = count["numPlayers"], count["numRounds"], count["numHoleCards"]
    lists = {key: _whole_numbers(key, parameters[key]) for key in ("stack", "blind", "numBoardCards", "raiseSize")}
    needed = {"stack": (players, "players"), "blind": (players, "players"), "numBoardCards": (rounds, "rounds")}
    for key, (number, of) in (needed | ({"raiseSize": (rounds, "rounds")} if limit else {})).items():
        if len(lists[key]) < number:
            return f"{key} gives {len(lists[key])} values for {number} {of}"
    for player in range(players):
        if lists["blind"][player] > lists["stack"][player]:
            return f"blind {lists['blind'][player]} of player {player} is more than its stack {lists['stack'][player]}"
    first = (*_whole_numbers("firstPlayer", parameters["firstPlayer"]), *(1,) * rounds)
    for round_ in range(rounds):
        if not 1 <= first[round_] <= players:
            return f"firstPlayer of round {round_ + 1} must be from 1 to {players}, got {first[round_]}"
    board = sum(lists["numBoardCards"][:rounds])
    if players * hole + board > count["numRanks"] * count["numSuits"]:
        return (
            f"{players} players' {hole} hole cards and {board} board cards need {players * hole + board} cards; "
            f"the deck has {count['numRanks'] * count['numSuits']}"
        )
    return ""


def _whole_number(key: str, value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise UnknownGameError(f"universal_poker's {key} must be a whole number, got {value!r}") from None


def _whole_numbers(key: str, value: object) -> tuple[int, ...]:
    """OpenSpiel's space-separated counts (``"100 50"``), each 0 or more."""
    try:
        numbers = tuple(int(part) for part in str(value).split())
    except ValueError:
        numbers = (-1,)
    if min(numbers, default=0) < 0:
        raise UnknownGameError(f"universal_poker's {key} must be whole numbers of 0 or more, got {value!r}") from None
    return numbers


def check_supported(game: pyspiel.Game, game_string: str, *, any_players: bool = False) -> None:
    """Refuse what the interface cannot represent: sequential games with perfect-recall information states and
    enumerable chance; two-player zero-sum, unless ``any_players`` also lets in n-player and general-sum games."""
    game_type = game.get_type()
    problems = []
    if game.num_players() != NUM_PLAYERS and not (any_players and game.num_players() > 1):
        problems.append(f"{game.num_players()} players")
    if game_type.utility != pyspiel.GameType.Utility.ZERO_SUM and not any_players:
        problems.append(f"utility {game_type.utility.name}")
    if game_type.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        problems.append(f"dynamics {game_type.dynamics.name}")
    if not game_type.provides_information_state_string:
        problems.append("no perfect-recall information state string")
    if game_type.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        problems.append("sampled (non-enumerable) chance")
    if problems:
        kind = "sequential game" if any_players else "two-player zero-sum sequential game"
        only_players_or_utility = all(p.endswith(" players") or p.startswith("utility ") for p in problems)
        hint = (
            "; n-player and general-sum games run with train (full-tree and sampled algorithms), exploitability, "
            "match, tournament and opponents"
            if only_players_or_utility and not any_players
            else ""
        )
        raise UnsupportedGameError(f"{game_string!r} is not a {kind} with perfect recall ({', '.join(problems)}){hint}")


class OpenSpielState(State):
    """Wraps a ``pyspiel.State``; children are new pyspiel states, the receiver never changes."""

    __slots__ = ("_state",)

    def __init__(self, state: pyspiel.State) -> None:
        self._state = state

    @property
    def pyspiel_state(self) -> pyspiel.State:
        return self._state

    def _player(self) -> int:
        return int(self._state.current_player())

    def _outcomes(self) -> tuple[tuple[int, float], ...]:
        return tuple((int(a), float(p)) for a, p in self._state.chance_outcomes())

    def _actions(self) -> tuple[int, ...]:
        return tuple(self._state.legal_actions())

    def _apply(self, action: int) -> OpenSpielState:
        return OpenSpielState(self._state.child(action))

    def num_players(self) -> int:
        return int(self._state.num_players())

    def _payoffs(self) -> tuple[float, ...]:
        return tuple(float(value) for value in self._state.returns())

    def _key(self, player: int) -> str:
        return str(self._state.information_state_string(player))

    def __str__(self) -> str:
        return f"history {self._state.history()}"


class OpenSpielGame(Game):
    """``openspiel:<game string>``, e.g. ``openspiel:leduc_poker`` or ``openspiel:kuhn_poker()``; with
    ``any_players``, n-player and general-sum games too (``openspiel:kuhn_poker(players=3)``)."""

    units = "chips"

    def __init__(self, game_string: str, *, any_players: bool = False) -> None:
        self.pyspiel_game = _load_pyspiel(game_string)
        check_supported(self.pyspiel_game, game_string, any_players=any_players)
        self.game_id = PREFIX + game_string
        self.num_distinct_actions = self.pyspiel_game.num_distinct_actions()
        self.num_players = self.pyspiel_game.num_players()
        self.zero_sum = self.pyspiel_game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM

    def new_initial_state(self) -> OpenSpielState:
        return OpenSpielState(self.pyspiel_game.new_initial_state())

    def tree_ops(self) -> TreeOps[Any]:
        """``pyspiel.State`` methods on ``pyspiel`` states: what :class:`OpenSpielState` calls, unwrapped.

        Legal actions are asked once per information state, as OpenSpiel's own tabular policies do
        (``GetLegalActionsMap`` reads them from the first state of each).
        """
        return TreeOps(
            root=self.pyspiel_game.new_initial_state(),
            player=pyspiel.State.current_player,
            outcomes=pyspiel.State.chance_outcomes,
            actions=pyspiel.State.legal_actions,
            child=pyspiel.State.child,
            returns=pyspiel.State.returns,
            key=pyspiel.State.information_state_string,
            apply_in_place=pyspiel.State.apply_action,
            actions_follow_key=True,
        )

    def action_name(self, action: int) -> str:
        state = self.pyspiel_game.new_initial_state()
        while state.is_chance_node():
            state = state.child(state.chance_outcomes()[0][0])
        return str(state.action_to_string(state.current_player(), action))

    def reduction(self) -> Reduction | None:
        """Leduc poker's suit isomorphism: ``leduc_poker(suit_isomorphism=True)`` deals ranks, each with
        the chance weight of its suits, so card ``c`` of the full game becomes rank ``c // 2`` in the
        ``[Private: c]`` and ``[Public: c]`` fields of the information-state string."""
        parameters = self.pyspiel_game.get_parameters()
        if self.pyspiel_game.get_type().short_name != "leduc_poker" or parameters["suit_isomorphism"]:
            return None
        defaults = pyspiel.load_game("leduc_poker").get_parameters()
        changed = {name: value for name, value in parameters.items() if defaults[name] != value}
        given = ",".join(f"{name}={value}" for name, value in sorted({**changed, "suit_isomorphism": True}.items()))
        return Reduction(game_id=f"{PREFIX}leduc_poker({given})", canonical_key=_leduc_ranks)

    def rules(self) -> Mapping[str, object]:
        parameters = {key: _jsonable(value) for key, value in self.pyspiel_game.get_parameters().items()}
        return {
            "toolkit": "open_spiel",
            "game": self.pyspiel_game.get_type().short_name,
            "parameters": parameters,
        }


_LEDUC_CARD = re.compile(r"\[(Private|Public): (\d+)\]")


def _leduc_ranks(key: str) -> str:
    """A Leduc information-state string with each card replaced by its rank (OpenSpiel's card // suits)."""
    return _LEDUC_CARD.sub(lambda card: f"[{card[1]}: {int(card[2]) // 2}]", key)


def _jsonable(value: object) -> object:
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)
