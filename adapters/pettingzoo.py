"""PettingZoo's classic poker environments behind the adapter interface: ``pettingzoo:leduc_holdem_v4``.

PettingZoo's ``leduc_holdem_v4`` is an AEC environment (agents ``player_0`` and ``player_1`` taking turns) around
RLCard's ``leduc-holdem`` env. The adapter plays that AEC environment, as PettingZoo's registry makes it
(``pettingzoo.make("aec", "classic/leduc_holdem-v4")``, its wrappers included), through PettingZoo's own calls:

* the player to act is ``env.agent_selection`` (``player_i`` is player ``i``); a state is terminal once the env has
  terminated or truncated the agent it selects;
* the legal actions are the ``action_mask`` of ``env.observe(agent)``;
* an action is ``env.step(action)``, made on a copy of the env (:func:`copy_env`), so a state never changes;
* the returns of a terminal are the ``env.rewards`` each agent was paid, summed over the steps of the hand.

What the env leaves to its random generator becomes chance nodes, with the RLCard adapter's control of the engine
inside the env (``env.unwrapped.env.game``; :class:`adapters.rlcard.RLCardGame`): the two private cards and the
small-blind seat are dealt at ``env.reset()`` from a scripted generator, and the public card the engine deals in the
middle of a step is put on top of its deck before the step. Chance outcomes are the RLCard adapter's ids.

The observation PettingZoo hands an agent is lossy (it merges betting histories), so the information-state key is
built from the player's state in RLCard's env (``env.unwrapped.env.get_state(player)``: hand, public card and the
full ``action_record``) by the key function of ``rlcard:leduc-holdem``: the keys of the two games are the same
strings. So are the rules (:meth:`PettingZooGame.rules`: RLCard's rules, read from the engine inside the env) and
their fingerprint; the game ids differ, so a policy of one is used on the other only through
:meth:`cfr_agents.Policy.for_game`, which checks first that the two compiled trees have the same strategic form.

PettingZoo is an optional extra (``pip install 'cfr-agents[pettingzoo]'``); without it the game is refused in one
line.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

import numpy as np

from adapters.base import CHANCE, TERMINAL, Game, State, replay
from adapters.inputs import InputError, UnknownGameError, require_extra
from adapters.rlcard import RLCardGame, shallow_copy, shared_game

PREFIX: Final = "pettingzoo:"

WRAPPED: Final[Mapping[str, tuple[str, str]]] = MappingProxyType(
    {"leduc_holdem_v4": ("classic/leduc_holdem-v4", "leduc-holdem")}
)
"""The PettingZoo environments that load as games, by name: the id PettingZoo's registry makes each by and the RLCard
env id each wraps. (``texas_holdem_v4`` wraps ``rlcard:limit-holdem``, which no compiled tree holds.)"""


def copy_env(env: Any, clone_engine: Callable[[Any], Any]) -> Any:
    """A copy of the AEC env ``env`` that shares nothing ``reset`` or ``step`` changes: each wrapper copied, the
    environment's dicts and lists copied (the agents' rewards, terminations, infos, ...), RLCard's env inside copied
    with its action record, and its engine copied by ``clone_engine``."""
    clone = shallow_copy(env)
    if env is not env.unwrapped:  # a wrapper: its own flags, around a copy of the env it wraps
        clone.env = copy_env(env.env, clone_engine)
        return clone
    for name, value in vars(env).items():
        if isinstance(value, dict | list):
            setattr(clone, name, type(value)(value))
    clone.env = shallow_copy(env.env)
    clone.env.action_recorder = list(env.env.action_recorder)
    clone.env.game = clone_engine(env.env.game)
    return clone


class PettingZooState(State):
    """A deal in progress (no env yet), a decision, a public card about to be dealt, or a terminal.

    ``_env`` is never changed once a state holds it: every transition steps a copy; ``_raw`` is its
    ``env.unwrapped``, the environment inside the wrappers, whose attributes the wrappers hand out. While the engine
    is about to deal public cards, ``_pending`` holds the action whose step deals them, how many it deals and the
    cards chosen so far. ``_legal`` keeps the legal actions once asked (the env's observation builds them).
    ``_returns`` sums each agent's rewards over the steps so far. ``_history`` is every id applied since the initial
    state, chance outcomes included: a state pickles as its game and that history, and unpickles by replaying it.
    """

    __slots__ = ("_deal", "_env", "_game", "_history", "_legal", "_pending", "_raw", "_returns")

    def __init__(
        self,
        game: PettingZooGame,
        deal: tuple[int, ...],
        env: Any,
        pending: tuple[int, int, tuple[int, ...]] | None,
        returns: tuple[float, float],
        history: tuple[int, ...],
    ) -> None:
        self._game = game
        self._deal = deal
        self._env = env
        self._raw: Any = None if env is None else env.unwrapped
        self._pending = pending
        self._returns = returns
        self._history = history
        self._legal: tuple[int, ...] | None = None

    def __reduce__(
        self,
    ) -> tuple[Callable[[PettingZooGame, tuple[int, ...]], State], tuple[PettingZooGame, tuple[int, ...]]]:
        return replay, (self._game, self._history)

    def _player(self) -> int:
        if self._env is None or self._pending is not None:
            return CHANCE
        raw = self._raw
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            return TERMINAL
        return self._game.agents.index(agent)

    def _outcomes(self) -> tuple[tuple[int, float], ...]:
        rlcard = self._game.rlcard
        if self._env is None:
            return rlcard.deal_outcomes(self._deal)
        chosen = self._pending[2] if self._pending is not None else ()
        return rlcard.public_outcomes(self._raw.env.game, chosen)

    def _actions(self) -> tuple[int, ...]:
        if self._legal is None:
            observation = self._env.observe(self._raw.agent_selection)
            self._legal = tuple(int(action) for action in np.flatnonzero(observation["action_mask"]))
        return self._legal

    def _apply(self, action: int) -> PettingZooState:
        game = self._game
        history = (*self._history, action)
        if self._env is None:
            deal = (*self._deal, action)
            if len(deal) < len(game.rlcard.spec.deal):
                return PettingZooState(game, deal, None, None, (0.0, 0.0), history)
            return PettingZooState(game, deal, game.dealt_env(deal), None, (0.0, 0.0), history)
        if self._pending is not None:
            step, count, chosen = self._pending
            chosen = (*chosen, action)
            if len(chosen) < count:
                return PettingZooState(game, self._deal, self._env, (step, count, chosen), self._returns, history)
            env = game.copy_env(self._env)
            game.rlcard.stack_deck(env.unwrapped.env.game, chosen)
            return self._stepped(env, step, history)
        env = game.copy_env(self._env)
        deck = game.rlcard.spec.deck
        cards_left = len(deck(env.unwrapped.env.game))
        env.step(action)
        dealt = cards_left - len(deck(env.unwrapped.env.game))
        if dealt:  # the engine dealt public cards in the step: chance nodes first, then the step again
            return PettingZooState(game, self._deal, self._env, (action, dealt, ()), self._returns, history)
        return self._stepped(env, None, history)

    def _stepped(self, env: Any, action: int | None, history: tuple[int, ...]) -> PettingZooState:
        """The state of ``env`` after ``env.step(action)`` (already made when ``action`` is ``None``), with the rewards
        of the step added to the returns."""
        if action is not None:
            env.step(action)
        first, second = (self._returns[i] + float(env.rewards[agent]) for i, agent in enumerate(self._game.agents))
        return PettingZooState(self._game, self._deal, env, None, (first, second), history)

    def _payoffs(self) -> tuple[float, float]:
        return self._returns

    def _key(self, player: int) -> str:
        if self._env is None:
            raise InputError("no information state before the cards are dealt")
        state = self._raw.env.get_state(player)
        record = [(int(p), str(a)) for p, a in state["action_record"]]
        return self._game.rlcard.spec.key(state["raw_obs"], player, record)

    def __str__(self) -> str:
        if self._env is None:
            return f"deal {list(self._deal)}"
        record = [action for _, action in self._raw.env.action_recorder]
        return f"deal {list(self._deal)} actions {record}"


class PettingZooGame(Game):
    """``pettingzoo:<environment>`` for the environments of :data:`WRAPPED`, played through PettingZoo's AEC API
    (module docstring)."""

    def __init__(self, name: str) -> None:
        game_id = PREFIX + name
        if name not in WRAPPED:
            raise UnknownGameError(
                f"unsupported PettingZoo game {game_id!r}; supported: {', '.join(PREFIX + n for n in WRAPPED)}"
            )
        self._pettingzoo = require_extra("pettingzoo", "pettingzoo", f"the game {game_id}")
        self.game_id = game_id
        self.name = name
        self.registry_id, rlcard_id = WRAPPED[name]
        self.rlcard: RLCardGame = shared_game(rlcard_id)
        """The RLCard game the environment wraps: how its engine's chance is controlled, its keys."""
        self._template = self.environment()
        self._template.reset()
        raw = self._template.unwrapped
        self.agents: list[str] = list(raw.possible_agents)
        self.units = self.rlcard.units
        self.num_distinct_actions = int(self._template.action_space(self.agents[0]).n)
        self.actions: list[str] = list(raw.env.actions)

    def environment(self) -> Any:
        """A new environment of this game, as PettingZoo's registry makes it (``pettingzoo.make("aec", ...)``)."""
        return self._pettingzoo.make("aec", self.registry_id)

    def copy_env(self, env: Any) -> Any:
        """A copy of ``env``, one of this game's environments, that shares nothing ``reset`` or ``step`` changes."""
        return copy_env(env, self.rlcard.spec.clone)

    def dealt_env(self, deal: tuple[int, ...]) -> Any:
        """A new environment after ``env.reset()`` with the chance outcomes ``deal`` (a whole deal)."""
        env = self.copy_env(self._template)
        env.unwrapped.env.game.np_random = self.rlcard.scripted_random(deal)
        env.reset()
        return env

    def new_initial_state(self) -> PettingZooState:
        return PettingZooState(self, (), None, None, (0.0, 0.0), ())

    def __reduce__(self) -> tuple[Callable[[str], PettingZooGame], tuple[str]]:
        """Pickled as its environment's name; unpickled as this process's one game of that name."""
        return shared_game_of, (self.name,)

    def action_name(self, action: int) -> str:
        return self.actions[action]

    def rules(self) -> Mapping[str, object]:
        """RLCard's rules of the engine inside the environment, its deck and its action names: the rules of the
        RLCard game it wraps when PettingZoo makes that game as RLCard does, so both share a fingerprint."""
        engine = self._template.unwrapped.env.game
        return {**self.rlcard.spec.rules(engine), "deck": self.rlcard.deck, "actions": self.actions}


@functools.cache
def shared_game_of(name: str) -> PettingZooGame:
    """One :class:`PettingZooGame` per environment name in this process: what an unpickled game or state uses."""
    return PettingZooGame(name)
