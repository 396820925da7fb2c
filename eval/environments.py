r"""Sampled matches in the real environment -- RLCard's env, ``pyspiel`` states for OpenSpiel
games, PettingZoo's AEC env for ``pettingzoo:`` games: seats swapped, duplicate deals.

Hands come in pairs. Both hands of a pair are dealt from the same seed -- the same cards
and, in Leduc, the same small-blind seat -- with ``A`` in seat 0 for the first hand and in
seat 1 for the second, so luck of the deal cancels out. The deal seeds come from their own
stream; each agent samples from its own stream. The sample unit is a pair's mean payoff
:math:`y_k = (u^A_{k,0} + u^A_{k,1}) / 2`; the report gives :math:`\bar y`, its standard error
:math:`s_y / \sqrt{K}` and the normal 95% confidence interval :math:`\bar y \pm 1.96\,\mathrm{SE}`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import rlcard
from numpy.typing import NDArray
from tqdm import tqdm

import adapters
from adapters.inputs import InputError
from adapters.pettingzoo import PettingZooGame
from adapters.rlcard import PREFIX
from eval.hand_log import HandReader

Z_95 = 1.959963984540054
"""The 97.5% quantile of the standard normal distribution."""


class RLCardAgent(Protocol):
    """What ``env.run`` needs of an agent."""

    use_raw: bool

    def step(self, state: dict[str, Any]) -> Any: ...

    def eval_step(self, state: dict[str, Any]) -> tuple[Any, dict[str, Any]]: ...


@dataclass(frozen=True)
class MatchResult:
    """``A``'s mean payoff per hand against ``B``, in :attr:`units`."""

    game_id: str
    units: str
    hands: int
    mean: float
    standard_error: float
    ci95: tuple[float, float]

    @property
    def mbb_per_hand(self) -> float | None:
        """The mean in milli-big-blinds per hand, for games paid in big blinds."""
        return self.mean * 1000 if self.units == "BB" else None


def play_rlcard_match(
    game_id: str,
    agent_a: RLCardAgent,
    agent_b: RLCardAgent,
    pairs: int,
    deal_rng: np.random.Generator,
    *,
    show_progress: bool = False,
    log: HandReader | None = None,
) -> MatchResult:
    """Play ``pairs`` duplicate pairs of hands of ``game_id`` (an ``rlcard:`` id) in RLCard's env;
    with ``log``, append every hand to it (:meth:`~eval.hand_log.HandReader.rlcard_hand`).

    Each pair draws a deal seed from ``deal_rng``; both hands of the pair reseed the engine's
    generator with it (``env.game.np_random``, what RLCard's dealer shuffles with and what draws
    Leduc's small-blind seat), so they get the same cards and seats, with the agents swapped.
    Each hand is RLCard's own ``env.reset()`` (:func:`reset_hand`)/``env.step()`` loop, with every decision made by the
    seated agent's ``eval_step``, as ``env.run(is_training=False)`` does.
    """
    if not game_id.startswith(PREFIX):
        raise InputError(f"matches are played in RLCard environments; {game_id!r} is not an rlcard: game")
    _check_pairs(pairs)
    game = adapters.load_game(game_id)
    env = rlcard.make(game_id.removeprefix(PREFIX))
    deals = np.random.RandomState(0)
    env.game.np_random = deals
    seatings = ((agent_a, agent_b), (agent_b, agent_a))

    def hand(seat: int, deal_seed: int) -> float:
        deals.seed(deal_seed)
        payoff = _play_hand(env, seatings[seat])[seat]
        if log is not None:
            log.rlcard_hand(env, seat)
        return payoff

    return _duplicate_pairs(game_id, game.units, pairs, deal_rng, hand, show_progress)


def reset_hand(env: Any) -> tuple[dict[str, Any], int]:
    """RLCard's ``env.reset()``, the hand starting as it does in a new env: the first state and player.

    Limit hold'em's ``init_game`` builds the first player's state before it clears the raises of each round
    (``game.history_raise_nums``), so a reused env would show that player the previous hand's raises in ``obs``:
    they are cleared first, and every state of a hand depends on that hand alone."""
    game = env.game
    if hasattr(game, "history_raise_nums"):
        game.history_raise_nums = [0] * len(game.history_raise_nums)
    state, player = env.reset()
    return state, int(player)


def _play_hand(env: Any, agents: tuple[RLCardAgent, RLCardAgent]) -> tuple[float, float]:
    """One hand of RLCard's env, as ``env.run(is_training=False)`` plays it (:func:`reset_hand`); the payoffs per
    seat."""
    state, player = reset_hand(env)
    game = env.game
    while not game.is_over():
        agent = agents[player]
        action, _ = agent.eval_step(state)
        state, player = env.step(action, agent.use_raw)
    first, second = env.get_payoffs()
    return float(first), float(second)


def play_pettingzoo_match(
    game_id: str,
    agent_a: RLCardAgent,
    agent_b: RLCardAgent,
    pairs: int,
    deal_rng: np.random.Generator,
    *,
    show_progress: bool = False,
) -> MatchResult:
    """Play ``pairs`` duplicate pairs of hands of ``game_id`` (a ``pettingzoo:`` id) in PettingZoo's AEC env.

    Both hands of a pair reset the env with the same deal seed drawn from ``deal_rng`` (``env.reset(seed=...)``: the
    same cards and small-blind seat), with the agents swapped. Each hand is PettingZoo's ``agent_iter`` loop: the
    agent to act is handed RLCard's state of its player in the env inside (``env.unwrapped.env.get_state``, as
    :class:`adapters.pettingzoo.PettingZooGame` keys it; the observation is lossy) and answers by ``eval_step``, an
    action the observation's ``action_mask`` must allow. An agent's payoff is the sum of the rewards ``env.last()``
    reports to it.
    """
    game = adapters.load_game(game_id)
    if not isinstance(game, PettingZooGame):
        raise InputError(f"{game_id!r} is not a pettingzoo: game")
    _check_pairs(pairs)
    env = game.environment()
    raw = env.unwrapped
    seatings = ((agent_a, agent_b), (agent_b, agent_a))

    def hand(seat: int, deal_seed: int) -> float:
        payoff = 0.0
        env.reset(seed=deal_seed)
        for name in env.agent_iter():
            player = game.agents.index(name)
            observation, reward, termination, truncation, _ = env.last()
            if player == seat:
                payoff += float(reward)
            if termination or truncation:
                env.step(None)
                continue
            action, _ = seatings[seat][player].eval_step(raw.env.get_state(player))
            if not observation["action_mask"][action]:
                raise InputError(
                    f"{name} answered {action}, which the action mask {observation['action_mask']} does not allow"
                )
            env.step(int(action))
        return payoff

    return _duplicate_pairs(game_id, game.units, pairs, deal_rng, hand, show_progress)


class OpenSpielPolicy(Protocol):
    """What a match needs of an OpenSpiel policy."""

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]: ...


def play_openspiel_match(
    game_id: str,
    policy_a: OpenSpielPolicy,
    policy_b: OpenSpielPolicy,
    pairs: int,
    deal_rng: np.random.Generator,
    agent_rngs: tuple[np.random.Generator, np.random.Generator],
    *,
    show_progress: bool = False,
    log: HandReader | None = None,
) -> MatchResult:
    """Play ``pairs`` duplicate pairs of ``game_id`` (an ``openspiel:`` id) on ``pyspiel`` states;
    with ``log``, append every hand to it (:meth:`~eval.hand_log.HandReader.openspiel_hand`).

    Both hands of a pair draw their chance outcomes from a fresh generator seeded with the pair's
    deal seed: the k-th chance event of the second hand replays the k-th of the first, so they see
    the same cards. ``A`` samples from ``agent_rngs[0]``, ``B`` from ``[1]``.
    """
    from adapters.openspiel import OpenSpielGame

    game = adapters.load_game(game_id)
    if not isinstance(game, OpenSpielGame):
        raise InputError(f"{game_id!r} is not an openspiel: game; play it with play_rlcard_match")
    _check_pairs(pairs)

    def hand(seat: int, deal_seed: int) -> float:
        policies = (policy_a, policy_b) if seat == 0 else (policy_b, policy_a)
        rngs = agent_rngs if seat == 0 else agent_rngs[::-1]
        state = play_openspiel_hand(game.pyspiel_game, policies, rngs, deal_seed)
        if log is not None:
            log.openspiel_hand(state, seat)
        return float(state.returns()[seat])

    return _duplicate_pairs(game_id, game.units, pairs, deal_rng, hand, show_progress)


def play_openspiel_hand(
    pyspiel_game: Any, policies: Sequence[OpenSpielPolicy], rngs: Sequence[np.random.Generator], deal_seed: int
) -> Any:
    """One hand of ``pyspiel_game``, its terminal ``pyspiel`` state: every chance outcome drawn from a fresh generator
    seeded with ``deal_seed`` (so hands of one deal see the same cards), the player in seat ``p`` asked
    ``policies[p].action_probabilities(state)`` and its action drawn from ``rngs[p]``."""
    chance = np.random.default_rng(deal_seed)
    state = pyspiel_game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(draw(dict(state.chance_outcomes()), chance))
        else:
            player = state.current_player()
            state.apply_action(draw(policies[player].action_probabilities(state), rngs[player]))
    return state


def _duplicate_pairs(
    game_id: str,
    units: str,
    pairs: int,
    deal_rng: np.random.Generator,
    hand: Callable[[int, int], float],
    show_progress: bool,
) -> MatchResult:
    """``pairs`` duplicate pairs: each draws a deal seed from ``deal_rng`` and plays ``hand(seat, deal_seed)``, ``A``'s
    payoff from one hand with ``A`` in ``seat``, in seat 0 then seat 1; the sample is the pair's mean."""
    samples = PairSamples(pairs)
    for _ in tqdm(range(pairs), disable=not show_progress, unit="pair", leave=False, mininterval=0.5):
        deal_seed = int(deal_rng.integers(2**31))
        first = hand(0, deal_seed)
        samples.add((first + hand(1, deal_seed)) / 2)
    return _result(game_id, units, samples)


def _check_pairs(pairs: int) -> None:
    if pairs < 2:
        raise InputError(f"a match needs at least 2 pairs of hands to estimate its error, got {pairs}")


def draw(probabilities: Mapping[int, float], rng: np.random.Generator) -> int:
    """An action drawn with ``rng`` from ``{action: probability}`` (its keys in order, weights normalised), as a match
    draws every chance outcome and every agent's move."""
    actions = sorted(probabilities)
    weights = np.array([probabilities[a] for a in actions])
    return int(actions[rng.choice(len(actions), p=weights / weights.sum())])


CHUNK = 2**20
"""Pair payoffs held at once (8 MB): a longer match folds them into running moments a chunk at a time."""


class PairSamples:
    """The pairs' mean payoffs, summed up a chunk of :data:`CHUNK` at a time, so memory does not grow
    with the length of the match. Up to one chunk, the mean and standard deviation are NumPy's over
    all samples; past it, chunks are merged exactly (Chan, Golub and LeVeque's pairwise update)."""

    def __init__(self, pairs: int) -> None:
        self._chunk: NDArray[np.float64] = np.empty(min(pairs, CHUNK))
        self._filled = 0
        self._count = 0
        self._mean = 0.0
        self._squares = 0.0
        """The sum of squared deviations from :attr:`_mean` of the folded samples."""

    def add(self, sample: float) -> None:
        if self._filled == len(self._chunk):
            self._fold()
        self._chunk[self._filled] = sample
        self._filled += 1

    def _fold(self) -> None:
        chunk = self._chunk[: self._filled]
        count = len(chunk)
        mean = float(chunk.mean())
        total = self._count + count
        delta = mean - self._mean
        self._squares += float(np.square(chunk - mean).sum()) + delta * delta * self._count * count / total
        self._mean += delta * count / total
        self._count = total
        self._filled = 0

    def estimate(self) -> tuple[float, float, tuple[float, float]]:
        """The mean, its standard error :math:`s / \\sqrt{K}` and the normal 95% confidence interval."""
        count, mean, deviation = self.moments()
        standard_error = deviation / math.sqrt(count)
        return mean, standard_error, (mean - Z_95 * standard_error, mean + Z_95 * standard_error)

    def moments(self) -> tuple[int, float, float]:
        """The number of samples, their mean and their standard deviation (``ddof=1``)."""
        if self._count == 0:
            chunk = self._chunk[: self._filled]
            return len(chunk), float(chunk.mean()), float(chunk.std(ddof=1))
        if self._filled:
            self._fold()
        return self._count, self._mean, math.sqrt(self._squares / (self._count - 1))


def _result(game_id: str, units: str, samples: PairSamples) -> MatchResult:
    mean, standard_error, ci95 = samples.estimate()
    return MatchResult(
        game_id=game_id,
        units=units,
        hands=2 * samples.moments()[0],
        mean=mean,
        standard_error=standard_error,
        ci95=ci95,
    )
