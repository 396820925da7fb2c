"""The Policy users hold: action probabilities per infoset, a JSON file, RLCard and OpenSpiel faces.

File format (``format_version`` 1), documented in the README::

    {"format": "cfr-agents-policy", "format_version": 1,
     "game": "openspiel:leduc_poker", "rules_fingerprint": "sha256:...", "units": "chips",
     "algorithm": "cfr+", "parameters": {...}, "iterations": 1000,
     "policy": {"<infoset key>": {"<action id>": probability, ...}, ...}}

For ``openspiel:`` games the keys are OpenSpiel's ``information_state_string()`` and the
action ids OpenSpiel's, so the table loads into ``TabularPolicy`` without this package.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from adapters import Game, load_game
from adapters.inputs import InputError, read_json
from cfr_agents.files import write_atomic
from cfr_agents.tree import (
    CompiledTree,
    FloatArray,
    check_same_strategic_form,
    legal_action_ids,
    lifted_rows,
    load_tree,
)

if TYPE_CHECKING:
    from open_spiel.python.policy import TabularPolicy

    from cfr_agents.rlcard_agent import PolicyAgent

FORMAT = "cfr-agents-policy"
FORMAT_VERSION = 1
_TOLERANCE = 1e-6


class PolicyFileError(InputError):
    """A policy file that is missing, corrupt, or for other rules."""


@dataclass(frozen=True)
class Policy:
    """Action probabilities per infoset key, with where they came from."""

    game_id: str
    rules_fingerprint: str
    units: str
    algorithm: str
    parameters: Mapping[str, object]
    iterations: int
    table: Mapping[str, Mapping[int, float]] = field(repr=False)

    @classmethod
    def from_strategy(
        cls,
        tree: CompiledTree,
        strategy: FloatArray,
        *,
        algorithm: str,
        parameters: Mapping[str, object],
        iterations: int,
    ) -> Policy:
        """The policy of an ``(N, A)`` strategy array on ``tree``."""
        rows = strategy.tolist()
        table = {
            key: dict(zip(actions, row[: len(actions)], strict=True))
            for key, actions, row in zip(tree.infoset_keys, tree.infoset_actions, rows, strict=True)
        }
        return cls(
            game_id=tree.game_id,
            rules_fingerprint=tree.rules_fingerprint,
            units=tree.units,
            algorithm=algorithm,
            parameters=dict(parameters),
            iterations=iterations,
            table=table,
        )

    @classmethod
    def uniform(cls, tree: CompiledTree) -> Policy:
        return cls.from_strategy(tree, tree.uniform_strategy(), algorithm="uniform", parameters={}, iterations=0)

    def action_probabilities(self, key: str) -> Mapping[int, float]:
        try:
            return self.table[key]
        except KeyError:
            raise InputError(f"the policy has no entry for infoset {key!r}") from None

    def check_game(self, game_id: str, rules_fingerprint: str, units: str | None = None) -> None:
        """Refuse use on another game, on other rules, or (when ``units`` is given) in other units."""
        if game_id != self.game_id:
            raise InputError(f"the policy is for {self.game_id}, not {game_id}")
        if rules_fingerprint != self.rules_fingerprint:
            raise InputError(
                f"the policy was made for rules {self.rules_fingerprint} of {self.game_id}, "
                f"but the installed game has rules {rules_fingerprint}"
            )
        if units is not None and units != self.units:
            raise InputError(f"the policy is in {self.units!r}, but {game_id} pays in {units!r}")

    def strategy_on(self, tree: CompiledTree) -> FloatArray:
        """The ``(N, A)`` strategy array on ``tree``; a missing infoset or action is refused."""
        self.check_game(tree.game_id, tree.rules_fingerprint, tree.units)
        if isinstance(self.table, StrategyTable) and self.table.tree is tree:
            return self.table.strategy.copy()
        strategy = np.zeros(tree.action_mask.shape)
        for row, (key, actions) in enumerate(zip(tree.infoset_keys, tree.infoset_actions, strict=True)):
            probabilities = self.action_probabilities(key)
            for action, probability in probabilities.items():
                if action not in actions:
                    raise InputError(f"the policy plays illegal action {action} at infoset {key!r}")
                strategy[row, actions.index(action)] = probability
        return strategy

    def for_game(self, game_id: str) -> Policy:
        """This policy for another game with the same strategic form: the same infoset keys,
        players, legal actions and sequence-form payoffs (``openspiel:kuhn_poker`` and
        ``rlcard:kuhn-poker``), checked on both compiled trees; or lifted to the full game from its
        lossless reduction (:meth:`adapters.Game.reduction`: ``openspiel:leduc_poker`` from
        ``openspiel:leduc_poker(suit_isomorphism=True)``), each infoset playing its class's row; any
        other game is refused."""
        source, target = load_tree(self.game_id), load_tree(game_id)
        strategy = self.strategy_on(source)  # the table fits its own game
        reduction = load_game(game_id).reduction()
        if reduction is not None and reduction.game_id == self.game_id:
            lifted = strategy[lifted_rows(target, source, reduction)]
            return Policy.from_strategy(
                target, lifted, algorithm=self.algorithm, parameters=self.parameters, iterations=self.iterations
            )
        check_same_strategic_form(source, target)
        return replace(self, game_id=target.game_id, rules_fingerprint=target.rules_fingerprint)

    def game(self) -> Game:
        """The game this policy is for, after checking the installed rules still match (an n-player or general-sum
        game too: the policy was made on its tree)."""
        game = load_game(self.game_id, any_players=True)
        self.check_game(game.game_id, game.rules_fingerprint, game.units)
        return game

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "game": self.game_id,
            "rules_fingerprint": self.rules_fingerprint,
            "units": self.units,
            "algorithm": self.algorithm,
            "parameters": dict(self.parameters),
            "iterations": self.iterations,
            "policy": {key: {str(a): p for a, p in row.items()} for key, row in self.table.items()},
        }

    def save(self, path: str | Path) -> None:
        """Write the JSON file atomically; a probability that is not finite is refused, and nothing is written."""
        if not all(math.isfinite(p) for row in self.table.values() for p in row.values()):
            raise InputError(f"the {self.algorithm} policy holds probabilities that are not finite; nothing was saved")
        write_atomic(path, json.dumps(self.to_json(), indent=1) + "\n")

    def rlcard_agent(self, seed: int | np.random.Generator | None = None) -> PolicyAgent:
        """An RLCard agent playing this policy (``rlcard:`` games); ``seed`` drives its sampling."""
        from cfr_agents.rlcard_agent import PolicyAgent

        return PolicyAgent(self, np.random.default_rng(seed))

    def openspiel_policy(self) -> TabularPolicy:
        """This policy as ``open_spiel.python.policy.TabularPolicy``: of OpenSpiel's own game for
        ``openspiel:`` games, of the game bridged into OpenSpiel for the others
        (``python_rlcard_leduc_holdem``, ...); the policy's ``.game`` is that pyspiel game."""
        from cfr_agents.openspiel_policy import to_tabular_policy

        return to_tabular_policy(self)


class StrategyTable(Mapping[str, Mapping[int, float]]):
    """A policy's table read from an ``(N, A)`` strategy array on its tree: each infoset's row, by legal action,
    made when it is looked up."""

    def __init__(self, tree: CompiledTree, strategy: FloatArray) -> None:
        self.tree, self.strategy = tree, strategy

    def __getitem__(self, key: str) -> Mapping[int, float]:
        row = self.tree.index[key]
        actions = self.tree.infoset_actions[row]
        return dict(zip(actions, self.strategy[row, : len(actions)].tolist(), strict=True))

    def __contains__(self, key: object) -> bool:
        return key in self.tree.index

    def __iter__(self) -> Iterator[str]:
        return iter(self.tree.infoset_keys)

    def __len__(self) -> int:
        return self.tree.num_infosets


def load_policy(path: str | Path) -> Policy:
    """Read a policy file; refuse a missing, corrupt or mismatched one with a one-line error.

    Refused: a file that is not UTF-8 JSON, lacks a field or has one of the wrong type (a
    probability written as a string or a boolean, a negative ``iterations``); a game that cannot
    be loaded, or whose rules fingerprint or units differ from the installed game's; an infoset
    the game does not have, or one of the game's infosets missing; an action not legal at its
    infoset; a negative probability, or probabilities not summing to 1. A legal action missing
    from a row has probability 0: the loaded policy lists it with 0.
    """
    source = Path(path)
    return policy_of_json(read_json(source, "policy file", PolicyFileError), str(source))


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def policy_of_json(data: object, source: str) -> Policy:
    """The policy in the JSON value ``data`` of the policy file ``source``, refused as :func:`load_policy` says.

    Its rows are checked and placed in an ``(N, A)`` strategy array on the game's compiled tree with whole-array
    operations (:func:`_strategy`); only when these find a fault are the rows checked one by one, in the file's
    order, to name the first."""

    def fail(problem: str) -> PolicyFileError:
        return PolicyFileError(f"policy file {source!r} {problem}")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise fail(f"is not a {FORMAT} file")
    version = data.get("format_version")
    if not (_is_number(version) and version == FORMAT_VERSION):
        raise fail(f"has format_version {version!r}; this version reads {FORMAT_VERSION}")
    expected = {
        "game": str,
        "rules_fingerprint": str,
        "units": str,
        "algorithm": str,
        "parameters": dict,
        "iterations": int,
        "policy": dict,
    }
    for name, kind in expected.items():
        value = data.get(name)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise fail(f"has no valid {name!r} field")
    if data["iterations"] < 0:
        raise fail(f"has a negative 'iterations' field ({data['iterations']})")
    rows: dict[str, Any] = data["policy"]
    keys, values = list(rows), list(rows.values())
    probabilities = _probabilities(values)
    if probabilities is None:
        for key, row in rows.items():
            _check_row(key, row, fail)
        raise AssertionError("a row the whole-array check refuses passes the row check")  # pragma: no cover
    try:
        tree = load_tree(data["game"], any_players=True)  # the policy's own game, of any number of players
    except InputError as error:
        raise fail(f"is for a game that cannot be loaded: {error}") from None
    policy = Policy(
        game_id=data["game"],
        rules_fingerprint=data["rules_fingerprint"],
        units=data["units"],
        algorithm=data["algorithm"],
        parameters=data["parameters"],
        iterations=data["iterations"],
        table={},
    )
    try:
        policy.check_game(tree.game_id, tree.rules_fingerprint, tree.units)
    except InputError as error:
        raise fail(f"does not fit the installed game: {error}") from None
    strategy = _strategy(tree, keys, values, probabilities)
    if strategy is None:
        for key, row in rows.items():
            _check_actions(tree, key, row, fail)
        missing = [key for key in tree.infoset_keys if key not in rows]
        raise fail(f"has no entry for {len(missing)} of {tree.game_id}'s infosets, e.g. {missing[0]!r}")
    return replace(policy, table=StrategyTable(tree, strategy))


def _probabilities(rows: list[Any]) -> FloatArray | None:
    """The probabilities of ``rows`` one after another, if every row is a non-empty object of numbers in
    ``[0, 1]`` (to :data:`_TOLERANCE`) summing to 1 (to :data:`_TOLERANCE`, exactly summed); else ``None``."""
    if rows and (set(map(type, rows)) != {dict} or not all(rows)):
        return None
    values = list(itertools.chain.from_iterable(map(dict.values, rows)))
    if not set(map(type, values)) <= {int, float}:
        return None
    try:
        probabilities = np.array(values, dtype=np.float64)
    except OverflowError:  # an integer past the floats: not a probability
        return None
    if not ((probabilities >= 0) & (probabilities <= 1 + _TOLERANCE)).all():
        return None
    totals = np.fromiter(map(math.fsum, map(dict.values, rows)), np.float64, len(rows))
    return probabilities if (np.abs(totals - 1.0) <= _TOLERANCE).all() else None


def _check_row(key: str, row: object, fail: Callable[[str], PolicyFileError]) -> None:
    """Refuse the row of infoset ``key`` unless it is a non-empty object of numbers in ``[0, 1]`` summing to 1."""
    if not isinstance(row, dict) or not row:
        raise fail(f"has no action probabilities for infoset {key!r}")
    if not all(_is_number(p) for p in row.values()):
        raise fail(f"has a probability that is not a number at infoset {key!r}")
    if not all(0 <= p <= 1 + _TOLERANCE for p in row.values()):  # also refuses NaN
        raise fail(f"has a probability outside [0, 1] at infoset {key!r}")
    total = math.fsum(row.values())
    if abs(total - 1.0) > _TOLERANCE:
        raise fail(f"has probabilities summing to {total:.9g} at infoset {key!r}")


def _strategy(
    tree: CompiledTree, keys: list[str], rows: list[dict[str, Any]], probabilities: FloatArray
) -> FloatArray | None:
    """The ``(N, A)`` strategy array of checked ``rows`` (their ``probabilities`` one after another), if each of
    ``keys`` is an infoset of ``tree``, each action of its row (written as its id) legal there, and every infoset
    of ``tree`` given a row; else ``None``. Legal actions a row leaves out have probability 0."""
    found = list(map(tree.index.get, keys))
    if len(keys) != tree.num_infosets or None in found:
        return None
    ids = legal_action_ids(tree)
    named = {str(action): action for action in np.unique(ids[tree.action_mask]).tolist()}
    actions = list(map(named.get, itertools.chain.from_iterable(rows)))
    if None in actions:
        return None
    infosets = np.repeat(np.array(found, dtype=np.int64), np.fromiter(map(len, rows), np.int64, len(rows)))
    columns = ids[infosets] == np.array(actions, dtype=np.int64)[:, None]
    if not columns.any(axis=1).all():
        return None
    strategy = np.zeros(tree.action_mask.shape)
    strategy[infosets, columns.argmax(axis=1)] = probabilities
    return strategy


def _check_actions(
    tree: CompiledTree, key: str, row: Mapping[str, object], fail: Callable[[str], PolicyFileError]
) -> None:
    """Refuse the row of infoset ``key`` unless ``tree`` has that infoset and each of its actions is legal there."""
    if key not in tree.index:
        raise fail(f"has infoset {key!r}, which {tree.game_id} does not have")
    legal = tree.infoset_actions[tree.index[key]]
    illegal = set(row) - {str(action) for action in legal}
    if illegal:
        raise fail(f"plays action {min(illegal)!r} at infoset {key!r}, where the legal actions are {list(legal)}")
