"""The one game interface every adapter implements.

A :class:`Game` hands out an initial :class:`State`; a state is immutable and
answers everything a solver or an evaluator needs:

* ``current_player()`` -- a player ``0`` to ``n - 1``, :data:`CHANCE` or :data:`TERMINAL`;
* ``chance_outcomes()`` -- ``(outcome, probability)`` pairs with exact probabilities;
* ``legal_actions()`` -- the acting player's action ids, ascending;
* ``child(action)`` -- the state after ``action`` (the receiver is not modified);
* ``returns()`` -- one payoff per player at a terminal, in :attr:`Game.units`;
* ``information_state_key(player)`` -- a perfect-recall key of what ``player`` knows.

Public methods check their preconditions and delegate to small private hooks
(``_player``, ``_outcomes``, ``_actions``, ``_apply``, ``_payoffs``, ``_key``),
so every adapter refuses an illegal action or a misplaced call the same way.

A whole-tree walk (:func:`adapters.walk.walk`) asks the game for its :class:`TreeOps`: the same six
operations as plain functions over states of any type. By default they are the checked public
methods above; an adapter may hand out its toolkit's own states and calls instead, which answer
alike but skip the checks a walk that only follows legal moves never needs.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Final, Generic, TypeVar

from adapters.inputs import IllegalActionError, InputError

CHANCE: Final = -1
"""``current_player()`` of a chance node (OpenSpiel's ``pyspiel.PlayerId.CHANCE``)."""
TERMINAL: Final = -4
"""``current_player()`` of a terminal state (OpenSpiel's ``pyspiel.PlayerId.TERMINAL``)."""

NUM_PLAYERS: Final = 2
"""The players of every game but the n-player ones an adapter loads on request (:attr:`Game.num_players`)."""


class State(ABC):
    """An immutable game state; see the module docstring for the contract."""

    def current_player(self) -> int:
        """The acting player at a decision node, :data:`CHANCE` or :data:`TERMINAL` otherwise."""
        return self._player()

    def num_players(self) -> int:
        """The game's number of players."""
        return NUM_PLAYERS

    def is_terminal(self) -> bool:
        return self._player() == TERMINAL

    def is_chance_node(self) -> bool:
        return self._player() == CHANCE

    def chance_outcomes(self) -> tuple[tuple[int, float], ...]:
        """The ``(outcome, probability)`` pairs of a chance node; probabilities sum to 1."""
        if not self.is_chance_node():
            raise InputError(f"chance_outcomes() called at a non-chance state {self}")
        return self._outcomes()

    def legal_actions(self) -> tuple[int, ...]:
        """Action ids of the player to act (the outcomes at a chance node); empty at a terminal."""
        player = self._player()
        if player == TERMINAL:
            return ()
        if player == CHANCE:
            return tuple(outcome for outcome, _ in self._outcomes())
        return self._actions()

    def child(self, action: int) -> State:
        """The state after ``action``; an action that is not legal here is refused."""
        if action not in self.legal_actions():
            raise IllegalActionError(
                f"action {action} is not legal in state {self}; legal: {list(self.legal_actions())}"
            )
        return self._apply(action)

    def returns(self) -> tuple[float, ...]:
        """Payoff per player at a terminal state, in the game's units."""
        if not self.is_terminal():
            raise InputError(f"returns() called at a non-terminal state {self}")
        return self._payoffs()

    def information_state_key(self, player: int) -> str:
        """A perfect-recall key of everything ``player`` has observed so far."""
        if player not in range(self.num_players()):
            raise InputError(f"no player {player} in a {self.num_players()}-player game")
        return self._key(player)

    def __deepcopy__(self, memo: dict[int, object]) -> State:
        """The state itself: states are immutable, so a copy could never differ from it.

        ``pyspiel``'s ``clone()`` of a Python state deep-copies every attribute; returning
        ``self`` keeps cloning a bridged state cheap and lets clones share the toolkit
        objects behind a state (an RLCard engine, a ``pyspiel.State``), which no
        transition ever mutates (each works on a copy).
        """
        return self

    @abstractmethod
    def _player(self) -> int: ...

    @abstractmethod
    def _outcomes(self) -> tuple[tuple[int, float], ...]: ...

    @abstractmethod
    def _actions(self) -> tuple[int, ...]: ...

    @abstractmethod
    def _apply(self, action: int) -> State: ...

    @abstractmethod
    def _payoffs(self) -> tuple[float, ...]: ...

    @abstractmethod
    def _key(self, player: int) -> str: ...


S = TypeVar("S")


@dataclass(frozen=True)
class TreeOps(Generic[S]):
    """The operations of a whole-tree walk as plain functions of a state of type ``S``.

    Each answers as the :class:`State` method of the same meaning does (``player`` is
    ``current_player``, ``outcomes`` is ``chance_outcomes``, ``actions`` is ``legal_actions``,
    ``child``, ``returns``, ``key`` is ``information_state_key``); the sequences may be lists or
    tuples; ``child`` leaves its state as it was. If :attr:`actions_follow_key`, ``actions`` is asked
    once per key, at its first state.
    """

    root: S
    player: Callable[[S], int]
    outcomes: Callable[[S], Sequence[tuple[int, float]]]
    actions: Callable[[S], Sequence[int]]
    child: Callable[[S, int], S]
    returns: Callable[[S], Sequence[float]]
    key: Callable[[S, int], str]
    apply_in_place: Callable[[S, int], None] | None = None
    """Turns a state itself into its child: the walk makes a state's last child this way, as it no
    longer needs the state. ``None`` (states that cannot change): ``child`` makes every child."""
    actions_follow_key: bool = False
    """The toolkit guarantees that the states of one key have the same legal actions; otherwise the
    walk asks every state and refuses a key whose states differ."""


@dataclass(frozen=True)
class GameFacts:
    """What ``pyspiel.GameInfo`` needs of a game (:mod:`adapters.pyspiel_game`), measured by one walk of its tree
    or, for a game too large to walk, stated from its rules (:meth:`Game.bridge_facts`)."""

    num_distinct_actions: int
    max_chance_outcomes: int
    """One more than the largest chance outcome id, so every outcome id is below it."""
    min_utility: float
    max_utility: float
    max_game_length: int
    """Most player decisions on any path (OpenSpiel's convention: chance nodes not counted)."""
    max_chance_nodes_in_history: int


class Game(ABC):
    """An extensive-form game with perfect recall: two-player zero-sum, unless an adapter was asked for an
    n-player or general-sum game (:attr:`num_players`, :attr:`zero_sum`)."""

    game_id: str
    """The id :func:`adapters.load_game` accepts, e.g. ``"openspiel:leduc_poker"``."""
    units: str
    """The unit of :meth:`State.returns`: ``"chips"`` or ``"BB"`` (big blinds)."""
    num_distinct_actions: int
    """Player action ids lie in ``range(num_distinct_actions)``."""
    num_players: int = NUM_PLAYERS
    zero_sum: bool = True
    """The payoffs of every terminal add up to 0."""

    @abstractmethod
    def new_initial_state(self) -> State: ...

    @abstractmethod
    def action_name(self, action: int) -> str:
        """A human-readable name of a player action id."""

    @abstractmethod
    def rules(self) -> Mapping[str, object]:
        """The rule parameters that define the game, as JSON-serialisable values."""

    def tree_ops(self) -> TreeOps[Any]:
        """The operations :func:`adapters.walk.walk` enumerates the tree with: by default
        :func:`state_ops`."""
        return state_ops(self)

    def bridge_facts(self) -> GameFacts | None:
        """What the OpenSpiel bridge needs, stated by a game too large to walk; ``None`` (the default): the bridge
        measures it by a walk of the tree."""
        return None

    def reduction(self) -> Reduction | None:
        """A lossless reduction of this game, or ``None`` (the default) when the adapter knows none."""
        return None

    @cached_property
    def rules_fingerprint(self) -> str:
        """``sha256:<hex>`` of :meth:`rules` in canonical JSON: equal iff the rules are equal."""
        canonical = json.dumps(self.rules(), sort_keys=True, separators=(",", ":"))
        return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.game_id}>"


@dataclass(frozen=True)
class Reduction:
    """A smaller game with the same strategic content (Gilpin & Sandholm's lossless abstraction).

    Its infosets are the classes of :attr:`canonical_key` over the full game's keys, with the same
    players and legal actions, and chance weights that add up over each class. Play that reads each
    full infoset's row at its canonical key is worth, against any opponent, what the reduced play is
    worth in the reduced game, so an equilibrium of the reduced game lifts to one of the full game.
    """

    game_id: str
    """The reduced game's id."""
    canonical_key: Callable[[str], str]
    """The reduced game's key of a full game's infoset key."""


def replay(game: Game, history: Iterable[int]) -> State:
    """The state of ``game`` after the ids in ``history``, chance outcomes included, each checked
    for legality: how a state is rebuilt from what it pickles as."""
    state = game.new_initial_state()
    for action in history:
        state = state.child(action)
    return state


def state_ops(game: Game) -> TreeOps[State]:
    """The public, checked :class:`State` methods as tree operations, from ``game.new_initial_state()``: what a game
    plays by, whether or not its tree can be walked."""
    return TreeOps(
        root=game.new_initial_state(),
        player=lambda state: state.current_player(),
        outcomes=lambda state: state.chance_outcomes(),
        actions=lambda state: state.legal_actions(),
        child=lambda state, action: state.child(action),
        returns=lambda state: state.returns(),
        key=lambda state, player: state.information_state_key(player),
    )
