"""Any adapter game as an OpenSpiel Python game, so OpenSpiel's own algorithms run on its rules.

:func:`as_pyspiel_game` wraps an :class:`adapters.Game` in a ``pyspiel.Game`` of as many players as
it has. Its states hold a state of the adapter's tree operations (attribute ``node``:
:meth:`adapters.Game.tree_ops`, the walk the compiled tree is built by, or, for a game too large to
walk, :func:`adapters.base.state_ops`) and replace it with its child on every move: the rules stay in
the toolkit the adapter drives, and a walked RLCard state shares its engine with every state of the
same betting (:meth:`adapters.rlcard.RLCardGame.tree_ops`), so OpenSpiel's algorithms that hold every
state of a tree hold no engine per state. ``information_state_string(player)`` is the adapter's
``information_state_key(player)``, so a policy file of an ``rlcard:`` game (keys are adapter keys,
action ids are adapter action ids) fills ``open_spiel.python.policy.TabularPolicy(bridged_game)``
without any mapping.

Importing :mod:`adapters` registers these names with ``pyspiel.register_game``
(:data:`REGISTERED_GAMES`); nothing is built until ``pyspiel.load_game`` is called:

* ``python_rlcard_leduc_holdem`` -- ``rlcard:leduc-holdem`` (payoffs in big blinds);
* ``python_rlcard_kuhn_poker`` -- ``rlcard:kuhn-poker`` (payoffs in chips);
* ``python_rlcard_limit_holdem`` -- ``rlcard:limit-holdem`` (payoffs in big blinds; too large to walk, so its
  facts come from its rules, :meth:`adapters.rlcard.RLCardGame.bridge_facts`).

>>> import adapters, pyspiel
>>> game = pyspiel.load_game("python_rlcard_kuhn_poker")
>>> state = game.new_initial_state().child(2).child(0)
>>> state.information_state_string(0), state.legal_actions()
('2', [0, 1])

Bridged games and states pickle (``pickle``, ``multiprocessing``) as the adapter game id and
the history of applied ids, and ``pyspiel.serialize_game_and_state`` round-trips the
registered games, so OpenSpiel's ``random_sim_test(..., serialize=True)`` passes.

The bridged game provides the perfect-recall information-state string only: no
observation strings and no tensors. Chance outcome ids and player action ids are the
adapter's; ``__str__`` of a state is its full history of applied ids (chance included).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar, Final

import pyspiel

from adapters.base import CHANCE, NUM_PLAYERS, TERMINAL, Game, GameFacts, TreeOps, state_ops
from adapters.inputs import InputError, UnsupportedGameError

REGISTERED_GAMES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "python_rlcard_leduc_holdem": "rlcard:leduc-holdem",
        "python_rlcard_kuhn_poker": "rlcard:kuhn-poker",
        "python_rlcard_limit_holdem": "rlcard:limit-holdem",
    }
)
"""``pyspiel.load_game`` name -> adapter game id, registered at ``import adapters``."""


def measure(game: Game) -> GameFacts:
    """Walk ``game`` once, with the operations of its :meth:`~adapters.base.Game.tree_ops`; the largest ids, extreme
    payoffs and longest paths it meets."""
    ops = game.tree_ops()
    max_outcome = -1
    utilities: set[float] = set()
    longest_decisions = longest_chance = 0
    stack: list[tuple[Any, int, int]] = [(ops.root, 0, 0)]
    while stack:
        state, decisions, chances = stack.pop()
        player = ops.player(state)
        if player == TERMINAL:
            utilities.update(ops.returns(state))
            longest_decisions = max(longest_decisions, decisions)
            longest_chance = max(longest_chance, chances)
        elif player == CHANCE:
            for outcome, _ in ops.outcomes(state):
                max_outcome = max(max_outcome, outcome)
                stack.append((ops.child(state, outcome), decisions, chances + 1))
        else:
            stack.extend((ops.child(state, action), decisions + 1, chances) for action in ops.actions(state))
    if not utilities:
        raise UnsupportedGameError(f"{game.game_id} has no terminal states")
    return GameFacts(
        num_distinct_actions=game.num_distinct_actions,
        max_chance_outcomes=max_outcome + 1,
        min_utility=min(utilities),
        max_utility=max(utilities),
        max_game_length=longest_decisions,
        max_chance_nodes_in_history=longest_chance,
    )


_MEASURED: dict[tuple[str, str], GameFacts] = {}


def _facts(game: Game) -> GameFacts:
    """:func:`measure`, once per game id and rules in a process (``pyspiel.load_game`` builds anew); a game too
    large to walk states its own (:meth:`~adapters.base.Game.bridge_facts`)."""
    key = (game.game_id, game.rules_fingerprint)
    if key not in _MEASURED:
        stated = game.bridge_facts()
        _MEASURED[key] = stated if stated is not None else measure(game)
    return _MEASURED[key]


def short_name(game_id: str) -> str:
    """The registered name of ``game_id`` if it has one, else ``python_`` + the id in ``snake_case``."""
    for name, registered_id in REGISTERED_GAMES.items():
        if registered_id == game_id:
            return name
    return "python_" + re.sub(r"[^0-9A-Za-z]+", "_", game_id).strip("_").lower()


def _game_type(name: str, game_id: str, num_players: int = NUM_PLAYERS, *, zero_sum: bool = True) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=name,
        long_name=f"{game_id} through the cfr-agents adapter",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.ZERO_SUM if zero_sum else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=num_players,
        min_num_players=num_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=False,
        provides_observation_tensor=False,
        parameter_specification={},
    )


class BridgedGame(pyspiel.Game):  # type: ignore[misc]
    """A ``pyspiel.Game`` whose states are driven by an adapter game's states, with as many players as it has."""

    def __init__(self, game: Game, params: Mapping[str, Any] | None = None) -> None:
        facts = _facts(game)
        info = pyspiel.GameInfo(
            num_distinct_actions=facts.num_distinct_actions,
            max_chance_outcomes=facts.max_chance_outcomes,
            num_players=game.num_players,
            min_utility=facts.min_utility,
            max_utility=facts.max_utility,
            utility_sum=0.0 if game.zero_sum else None,
            max_game_length=facts.max_game_length,
        )
        game_type = _game_type(short_name(game.game_id), game.game_id, game.num_players, zero_sum=game.zero_sum)
        super().__init__(game_type, info, dict(params or {}))
        self.adapter_game = game
        self.facts = facts
        self.walk = Walk(game)

    def new_initial_state(self) -> BridgedState:
        return BridgedState(self, Node(self.walk.ops.root))

    def state_after(self, history: Iterable[int]) -> BridgedState:
        """The state after the ids in ``history`` (chance outcomes included), each checked for legality."""
        state = self.new_initial_state()
        for action in history:
            state.apply_action(action)
        return state

    def __reduce__(self) -> tuple[Callable[[str], BridgedGame], tuple[str]]:
        """Pickled as its adapter game id (``pickle``, ``multiprocessing``); see :func:`bridged_game`."""
        return bridged_game, (self.adapter_game.game_id,)

    def max_chance_nodes_in_history(self) -> int:
        return self.facts.max_chance_nodes_in_history

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: Mapping[str, Any] | None = None
    ) -> InformationStateObserver:
        """The perfect-recall information-state observer; other observation types are refused."""
        if params:
            raise InputError(f"observer parameters are not supported, got {dict(params)}")
        if not _is_information_state(iig_obs_type):
            raise InputError(
                f"{self.adapter_game.game_id} as an OpenSpiel game provides only the perfect-recall "
                "information state string"
            )
        return InformationStateObserver()


def _is_information_state(iig_obs_type: pyspiel.IIGObservationType | None) -> bool:
    return (
        iig_obs_type is not None
        and bool(iig_obs_type.perfect_recall)
        and bool(iig_obs_type.public_info)
        and iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
    )


class Walk:
    """The tree operations a bridged game's states move by: the game's own walk (:meth:`~adapters.base.Game.tree_ops`)
    or, for a game too large to walk, its states' methods (:func:`~adapters.base.state_ops`). Shared by every state
    of the game: a clone copies it to itself; pickled (OpenSpiel's serialization pickles a state's attributes) as
    its game, and unpickled as a new walk of it."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.ops: TreeOps[Any] = game.tree_ops() if game.bridge_facts() is None else state_ops(game)

    def __deepcopy__(self, memo: dict[int, object]) -> Walk:
        return self

    def __reduce__(self) -> tuple[type[Walk], tuple[Game]]:
        return Walk, (self.game,)


class Node:
    """A state of the tree operations (:class:`Walk`), never changed (a move makes a new one): a clone copies it to
    itself."""

    __slots__ = ("state",)

    def __init__(self, state: Any) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict[int, object]) -> Node:
        return self


class BridgedState(pyspiel.State):  # type: ignore[misc]
    """A ``pyspiel.State`` holding a state of its game's tree operations in :attr:`node`.

    OpenSpiel's ``clone()`` deep-copies every Python attribute; both attributes here copy
    to themselves (a :class:`Node` is never changed, the game's :class:`Walk` is shared),
    so a clone costs no copy of the toolkit objects behind the state.
    """

    def __init__(self, game: BridgedGame, node: Node) -> None:
        super().__init__(game)
        self.node = node
        self._walk = game.walk

    def current_player(self) -> int:
        return self._walk.ops.player(self.node.state)

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._walk.ops.actions(self.node.state))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return list(self._walk.ops.outcomes(self.node.state))

    def _apply_action(self, action: int) -> None:
        """The child by ``action``; an id that is not legal here is refused (:class:`~adapters.inputs.InputError`)."""
        if action not in self.legal_actions():
            raise InputError(f"action {action} is not legal here (legal: {self.legal_actions()})")
        self.node = Node(self._walk.ops.child(self.node.state, action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == CHANCE:
            return f"chance outcome {action}"
        game: BridgedGame = self.get_game()
        return game.adapter_game.action_name(action)

    def returns(self) -> list[float]:
        """Payoffs at a terminal; zeros before it (rewards come only at the end)."""
        if not self.is_terminal():
            return [0.0] * self.num_players()
        return list(self._walk.ops.returns(self.node.state))

    def information_state_key(self, player: int) -> str:
        """The adapter's information-state key of ``player`` here."""
        return self._walk.ops.key(self.node.state, player)

    def __str__(self) -> str:
        """The applied ids, chance outcomes included: unique per history."""
        return " ".join(str(action) for action in self.history())

    def __reduce__(self) -> tuple[Callable[[BridgedGame, list[int]], BridgedState], tuple[BridgedGame, list[int]]]:
        """Pickled as its game and history; unpickled by replaying the history."""
        return _replay_bridged, (self.get_game(), self.history())


def _replay_bridged(game: BridgedGame, history: list[int]) -> BridgedState:
    return game.state_after(history)


class InformationStateObserver:
    """OpenSpiel's Python observer interface for the perfect-recall information state.

    The string is the adapter's ``information_state_key(player)``; there is no tensor.
    """

    tensor = None
    dict: Mapping[str, Any] = MappingProxyType({})

    def set_from(self, state: BridgedState, player: int) -> None:
        """No tensor to fill."""

    def string_from(self, state: BridgedState, player: int) -> str:
        return state.information_state_key(player)


def as_pyspiel_game(game: Game) -> BridgedGame:
    """``game`` as a ``pyspiel.Game``; its GameInfo comes from one walk of ``game``'s tree."""
    return BridgedGame(game)


def openspiel_game_of(game: Game) -> pyspiel.Game:
    """The OpenSpiel game of ``game``: OpenSpiel's own for ``openspiel:`` games, else the bridged game."""
    from adapters.openspiel import OpenSpielGame

    return game.pyspiel_game if isinstance(game, OpenSpielGame) else as_pyspiel_game(game)


class RegisteredGame(BridgedGame):
    """Base of the classes handed to ``pyspiel.register_game``; ``pyspiel`` calls them with parameters.

    The creator is a class, as in OpenSpiel's own Python games: ``pyspiel`` keeps it until
    the process exits, and a class (unlike e.g. a ``functools.partial``) is never freed by
    that last release, which happens after the interpreter has shut down. Each is a
    module-level class, found under its own name.
    """

    adapter_game_id: ClassVar[str]

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        from adapters.games import load_game

        super().__init__(load_game(self.adapter_game_id), params)


class RLCardLeducHoldem(RegisteredGame):
    """``python_rlcard_leduc_holdem``: ``rlcard:leduc-holdem``."""

    adapter_game_id = REGISTERED_GAMES["python_rlcard_leduc_holdem"]


class RLCardKuhnPoker(RegisteredGame):
    """``python_rlcard_kuhn_poker``: ``rlcard:kuhn-poker``."""

    adapter_game_id = REGISTERED_GAMES["python_rlcard_kuhn_poker"]


class RLCardLimitHoldem(RegisteredGame):
    """``python_rlcard_limit_holdem``: ``rlcard:limit-holdem``."""

    adapter_game_id = REGISTERED_GAMES["python_rlcard_limit_holdem"]


_CREATORS: Final[Mapping[str, type[RegisteredGame]]] = MappingProxyType(
    {
        "python_rlcard_leduc_holdem": RLCardLeducHoldem,
        "python_rlcard_kuhn_poker": RLCardKuhnPoker,
        "python_rlcard_limit_holdem": RLCardLimitHoldem,
    }
)


def bridged_game(game_id: str) -> BridgedGame:
    """The bridged game of ``game_id``: the registered ``pyspiel`` game if it has a name in
    :data:`REGISTERED_GAMES`, else a new bridge. A pickled bridged game unpickles through it."""
    name = short_name(game_id)
    if name in REGISTERED_GAMES:
        loaded: BridgedGame = pyspiel.load_game(name)
        return loaded
    from adapters.games import load_game

    return as_pyspiel_game(load_game(game_id, any_players=True))


def register() -> None:
    """Register :data:`REGISTERED_GAMES` with ``pyspiel`` (idempotent; builds no game)."""
    registered = set(pyspiel.registered_names())
    for name, game_id in REGISTERED_GAMES.items():
        if name not in registered:
            pyspiel.register_game(_game_type(name, game_id), _CREATORS[name])
