"""The conformance check every adapter passes: :func:`check_game` walks a whole game and asserts
the contract of :mod:`adapters.base` at every state (in the spirit of PettingZoo's ``api_test``).

>>> import adapters
>>> from adapters.conformance import check_game
>>> check_game(adapters.load_game("openspiel:kuhn_poker"))

A broken invariant raises :class:`AssertionError` whose message names the game, the ids that lead
from the initial state to the offending state (chance outcomes included, as
:func:`adapters.base.replay` takes them), the state itself, and what failed::

    AssertionError: mygame, history [0, 1, 1] (deal [0, 1] actions ['bet']): legal actions (1, 0)
    are not ascending and distinct
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from adapters.base import CHANCE, TERMINAL, Game, State
from adapters.inputs import IllegalActionError, InputError

PROBABILITY_TOLERANCE = 1e-12
"""How far the chance probabilities of a node may sum from 1."""
ZERO_SUM_TOLERANCE = 1e-12
"""How far the returns of a terminal may sum from 0."""

NOT_A_PLAYER = (CHANCE, TERMINAL)
"""What ``current_player()`` may return besides a player ``0 .. num_players - 1``."""

History = tuple[int, ...]
"""The ids applied from the initial state, chance outcomes included."""
OwnSequence = tuple[str, int] | None
"""A player's last own decision on a path, ``(information-state key, action)``; ``None`` before any."""


@dataclass(frozen=True)
class _Infoset:
    """What the first state seen with an information-state key fixes for every other state with it."""

    player: int
    actions: tuple[int, ...]
    previous: OwnSequence
    history: History


def check_game(game: Game, *, playouts: int = 300, seed: int = 0) -> None:
    """Assert that ``game`` keeps the contract of :mod:`adapters.base` at every state.

    The whole tree is walked from ``game.new_initial_state()``; at every state:

    * ``current_player()`` is a player in ``range(game.num_players)``, :data:`~adapters.base.CHANCE` or
      :data:`~adapters.base.TERMINAL`, and ``num_players()`` is ``game.num_players``;
    * at a chance node, the ``(outcome, probability)`` pairs have distinct outcomes, probabilities
      ``p > 0`` with ``|sum p - 1| <= 1e-12``, and ``legal_actions()`` lists the outcomes;
    * at a decision node, the legal actions are non-empty, ascending, distinct and in
      ``range(game.num_distinct_actions)``, every player's information-state key is a string, and
      ``chance_outcomes()`` raises :class:`~adapters.inputs.InputError`;
    * at a terminal, ``legal_actions()`` is empty, ``returns()`` has one payoff per player with
      ``|sum r_i| <= 1e-12`` in a zero-sum game, and ``chance_outcomes()`` raises
      :class:`~adapters.inputs.InputError`; elsewhere ``returns()`` raises it;
    * ``child(a)`` refuses ids that are not legal (-1, one past the largest legal id, and the
      unused ids of ``range(game.num_distinct_actions)`` at a decision node) with
      :class:`~adapters.inputs.IllegalActionError` naming the id;
    * making every child leaves the state as it was: its player, legal actions, chance outcomes,
      keys and ``str()``;
    * keys are perfect-recall: the states that share a key have the same acting player, the same
      legal actions and the same previous own ``(key, action)`` of that player.

    The game has at least one decision node and one terminal, its :meth:`~adapters.base.Game.rules`
    are JSON-serialisable (``rules_fingerprint`` starts with ``sha256:``), and ``playouts`` hands
    from fresh initial states, with chance outcomes drawn by their probabilities and actions
    uniformly by ``numpy.random.default_rng(seed)``, all reach a terminal.

    :param game: the adapter to check.
    :param playouts: how many random hands to play to the end.
    :param seed: the seed of the playouts' generator.
    :raises AssertionError: at the first broken invariant, naming the game, the history of ids
        that reaches the state, the state, and what failed.
    """
    _check_rules(game)
    _walk(game)
    _play(game, playouts, np.random.default_rng(seed))


def _require(condition: bool, where: str, problem: str) -> None:
    if not condition:
        raise AssertionError(f"{where}: {problem}")


def _check_rules(game: Game) -> None:
    try:
        fingerprint = game.rules_fingerprint
    except (TypeError, ValueError) as error:
        raise AssertionError(f"{game.game_id}: rules() is not JSON-serialisable: {error}") from error
    _require(fingerprint.startswith("sha256:"), game.game_id, f"rules_fingerprint {fingerprint!r} is not sha256:<hex>")


def _walk(game: Game) -> None:
    """Depth-first over every state, with each player's last own decision on the path."""
    infosets: dict[str, _Infoset] = {}
    decisions = terminals = 0
    stack: list[tuple[State, History, tuple[OwnSequence, ...]]] = [
        (game.new_initial_state(), (), (None,) * game.num_players)
    ]
    while stack:
        state, history, own = stack.pop()
        where = f"{game.game_id}, history {list(history)} ({state})"
        player = state.current_player()
        _require(
            player in (*range(game.num_players), *NOT_A_PLAYER),
            where,
            f"current_player() {player!r} is not a player of {game.num_players}, CHANCE or TERMINAL",
        )
        _require(state.num_players() == game.num_players, where, f"num_players() is {state.num_players()}")
        _check_refusals(game, state, player, where)
        if player == TERMINAL:
            terminals += 1
            _check_terminal(game, state, where)
            continue
        before = _snapshot(state, player)
        if player == CHANCE:
            _check_chance(state, where)
            children = [(outcome, own) for outcome in state.legal_actions()]
        else:
            decisions += 1
            _check_decision(game, state, player, where)
            key = state.information_state_key(player)
            _check_recall(infosets, key, _Infoset(player, state.legal_actions(), own[player], history), where)
            children = [(action, _after(own, player, (key, action))) for action in state.legal_actions()]
        for action, own_after in reversed(children):
            stack.append((state.child(action), (*history, action), own_after))
        after = _snapshot(state, player)
        _require(after == before, where, f"making its children changed the state from {before} to {after}")
    _require(decisions > 0, game.game_id, "the game has no decision node")
    _require(terminals > 0, game.game_id, "the game has no terminal state")


def _after(own: tuple[OwnSequence, ...], player: int, sequence: OwnSequence) -> tuple[OwnSequence, ...]:
    return (*own[:player], sequence, *own[player + 1 :])


def _snapshot(state: State, player: int) -> tuple[object, ...]:
    """Everything the contract lets a caller read from a non-terminal state."""
    if player == CHANCE:
        return player, state.legal_actions(), state.chance_outcomes(), str(state)
    keys = tuple(state.information_state_key(p) for p in range(state.num_players()))
    return player, state.legal_actions(), keys, str(state)


def _check_chance(state: State, where: str) -> None:
    outcomes = state.chance_outcomes()
    ids = [outcome for outcome, _ in outcomes]
    probabilities = [probability for _, probability in outcomes]
    _require(len(set(ids)) == len(ids), where, f"chance outcomes {ids} are not distinct")
    _require(all(p > 0 for p in probabilities), where, f"chance probabilities {probabilities} are not all positive")
    total = math.fsum(probabilities)
    _require(abs(total - 1) <= PROBABILITY_TOLERANCE, where, f"chance probabilities {probabilities} sum to {total!r}")
    legal = state.legal_actions()
    _require(legal == tuple(ids), where, f"legal_actions() {legal} are not the chance outcomes {ids}")


def _check_decision(game: Game, state: State, player: int, where: str) -> None:
    actions = state.legal_actions()
    _require(len(actions) > 0, where, f"player {player} acts with no legal action")
    _require(list(actions) == sorted(set(actions)), where, f"legal actions {actions} are not ascending and distinct")
    _require(
        all(0 <= a < game.num_distinct_actions for a in actions),
        where,
        f"legal actions {actions} leave range(num_distinct_actions={game.num_distinct_actions})",
    )
    for p in range(game.num_players):
        key = state.information_state_key(p)
        _require(isinstance(key, str), where, f"information_state_key({p}) is {key!r}, not a string")
    _require_refusal(state.chance_outcomes, InputError, where, "chance_outcomes() at a decision node")


def _check_terminal(game: Game, state: State, where: str) -> None:
    _require(state.legal_actions() == (), where, f"a terminal has legal actions {state.legal_actions()}")
    returns = state.returns()
    _require(len(returns) == game.num_players, where, f"returns() {returns} has not one payoff per player")
    if game.zero_sum:
        _require(abs(math.fsum(returns)) <= ZERO_SUM_TOLERANCE, where, f"returns() {returns} are not zero-sum")
    _require_refusal(state.chance_outcomes, InputError, where, "chance_outcomes() at a terminal")


def _check_refusals(game: Game, state: State, player: int, where: str) -> None:
    """``returns()`` off a terminal and ``child()`` of every id that is not legal are refused."""
    if player != TERMINAL:
        _require_refusal(state.returns, InputError, where, "returns() at a non-terminal state")
    legal = state.legal_actions()
    illegal = {-1, max(legal, default=-1) + 1}
    if player not in NOT_A_PLAYER:
        illegal |= set(range(game.num_distinct_actions + 1)) - set(legal)
    for action in sorted(illegal):
        refused = functools.partial(state.child, action)
        naming = f"action {action} is not legal"
        _require_refusal(refused, IllegalActionError, where, f"child({action})", naming=naming)


def _require_refusal(
    call: Callable[[], object], error: type[Exception], where: str, what: str, *, naming: str = ""
) -> None:
    """``call()`` raises ``error``, with ``naming`` in its message."""
    try:
        call()
    except error as refusal:
        _require(naming in str(refusal), where, f"{what} raised {error.__name__} without naming {naming!r}: {refusal}")
        return
    except Exception as other:
        raise AssertionError(f"{where}: {what} raised {type(other).__name__}, not {error.__name__}: {other}") from other
    raise AssertionError(f"{where}: {what} did not raise {error.__name__}")


def _check_recall(infosets: dict[str, _Infoset], key: str, seen: _Infoset, where: str) -> None:
    first = infosets.setdefault(key, seen)
    _require(
        (first.player, first.actions) == (seen.player, seen.actions),
        where,
        f"key {key!r} has player {seen.player} and legal actions {seen.actions} here, but player {first.player} "
        f"and legal actions {first.actions} after history {list(first.history)}",
    )
    _require(
        first.previous == seen.previous,
        where,
        f"key {key!r} follows player {seen.player}'s own (key, action) {seen.previous} here, but "
        f"{first.previous} after history {list(first.history)}: the keys are not perfect-recall",
    )


def _play(game: Game, playouts: int, rng: np.random.Generator) -> None:
    """Random hands from fresh initial states, played until a terminal."""
    for _ in range(playouts):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                state = state.child(int(rng.choice(outcomes, p=probabilities)))
            else:
                state = state.child(int(rng.choice(state.legal_actions())))
