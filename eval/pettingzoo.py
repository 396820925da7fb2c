r"""Our agents as policies of PettingZoo's AEC environments: the classic RLCard ones and OpenSpiel's through Shimmy.

PettingZoo (the Farama Foundation's multi-agent API) wraps RLCard's Leduc and limit hold'em as
``leduc_holdem_v4`` and ``texas_holdem_v4``, and Shimmy's ``OpenSpielCompatibilityV0`` wraps any OpenSpiel game.
An agent of such an environment is asked ``policy(observation, agent, info)`` for the agent named ``agent``
(``player_0``, ``player_1``) with what ``env.last()`` returns; the ``action_mask`` of the legal actions is in the
observation dict of a classic environment and in the info dict under Shimmy. It answers one legal action id.

The observation PettingZoo hands over is lossy: RLCard's ``obs`` vector merges the private and public cards and
drops the order of the actions, so a policy that sees only it plays a smaller game. :class:`PettingZooPolicy`
reads the state itself from the environment it is bound to -- RLCard's state of the player (``raw_obs`` and
``action_record``) under a classic environment, the ``pyspiel`` state under Shimmy -- and plays the agent there
exactly as a match seats it (:func:`~eval.match.rlcard_seat`, :func:`~eval.match.openspiel_seat`), sampling from
its own generator. It checks that the observation's mask is the state's legal actions before it answers.

Under Shimmy 2.0.1 what an agent wins is not its value in the game: Shimmy ends a game once its steps, chance
events included, reach the game's ``max_game_length()`` (unfinished and unpaid), and reports ``player_1``'s final
reward twice in ``env.last()`` (docs/pettingzoo.md).

    >>> from pettingzoo.classic import leduc_holdem_v4
    >>> env = leduc_holdem_v4.env()
    >>> policy = PettingZooPolicy("random", env, np.random.default_rng(0))
    >>> env.reset(seed=0)
    >>> for name in env.agent_iter():
    ...     observation, reward, termination, truncation, info = env.last()
    ...     env.step(None if termination or truncation else policy(observation, name, info))
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

import adapters
from adapters.games import canonical_game_id
from adapters.inputs import InputError, require_extra
from adapters.openspiel import PREFIX as OPENSPIEL_PREFIX
from adapters.rlcard import RLCardGame
from eval.agents import AgentQueryError
from eval.environments import OpenSpielPolicy, RLCardAgent, draw
from eval.match import openspiel_seat, rlcard_seat
from eval.opponents import load_opponent

CLASSIC: Final[Mapping[str, str]] = {"leduc_holdem_v4": "rlcard:leduc-holdem", "texas_holdem_v4": "rlcard:limit-holdem"}
"""PettingZoo's classic RLCard environments we play, by name, and our id of the RLCard game each wraps."""


def pettingzoo_game(env: Any) -> str:
    """Our id of the game a PettingZoo environment plays: a classic RLCard one (:data:`CLASSIC`) or an OpenSpiel
    game under Shimmy's ``OpenSpielCompatibilityV0``; another is refused in one line."""
    raw = env.unwrapped
    name = raw.metadata.get("name", type(raw).__name__)
    if name in CLASSIC:
        return CLASSIC[name]
    game = getattr(raw, "_env", None)
    if game is not None and hasattr(game, "new_initial_state"):  # Shimmy's pyspiel game
        return canonical_game_id(OPENSPIEL_PREFIX + str(game).removesuffix("()"))
    raise InputError(f"PettingZoo policies play {', '.join(CLASSIC)} and Shimmy's OpenSpiel games, not {name!r}")


class PettingZooPolicy:
    """The agent ``name`` (a registry name, a policy or a model file) as a policy of the PettingZoo environment
    ``env``: ``policy(observation, agent)`` is the action it plays as ``agent`` at the environment's current state,
    drawn from ``rng``. Bound to ``env``, as it reads the state there (module docstring)."""

    def __init__(self, name: str, env: Any, rng: np.random.Generator) -> None:
        require_extra("pettingzoo", "pettingzoo", "a PettingZoo policy")
        self.env = env
        self.game_id = pettingzoo_game(env)
        self.name = name
        agent = load_opponent(name, self.game_id).agent
        game = adapters.load_game(self.game_id)
        self._rng = rng
        self._rlcard: RLCardAgent | None = rlcard_seat(agent, game, rng) if isinstance(game, RLCardGame) else None
        self._openspiel: OpenSpielPolicy | None = None if self._rlcard else openspiel_seat(agent, self.game_id)

    def __call__(self, observation: Any, agent: str, info: Mapping[str, Any] | None = None) -> int:
        raw = self.env.unwrapped
        player = raw.possible_agents.index(agent)
        holder = observation if isinstance(observation, Mapping) else info or {}
        if "action_mask" not in holder:
            raise InputError(f"no action mask for {agent}: a classic environment's observation holds it, Shimmy's info")
        mask = np.asarray(holder["action_mask"]).astype(bool)
        if self._rlcard is not None:
            state = raw.env.get_state(player)
            legal = sorted(int(action) for action in state["legal_actions"])
            action, _ = self._rlcard.eval_step(state)
            action = int(action)
        else:
            assert self._openspiel is not None
            game_state = raw.game_state
            if game_state.current_player() != player:
                raise AgentQueryError(f"{agent} is not the player to act at {game_state.history()}")
            legal = sorted(game_state.legal_actions(player))
            action = draw(self._openspiel.action_probabilities(game_state), self._rng)
        if np.flatnonzero(mask).tolist() != legal:
            raise AgentQueryError(
                f"the observation's action mask {mask.astype(int).tolist()} is not {agent}'s legal {legal}"
            )
        if action not in legal:
            raise AgentQueryError(f"{self.name} answers {action}, not one of {agent}'s legal actions {legal}")
        return action


__all__ = ["CLASSIC", "PettingZooPolicy", "pettingzoo_game"]
