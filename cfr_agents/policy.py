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

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from adapters import Game, load_game
from adapters.errors import InputError
from cfr_agents.files import write_atomic

if TYPE_CHECKING:
    from open_spiel.python.policy import TabularPolicy

    from cfr_agents.rlcard_agent import PolicyAgent
    from cfr_agents.tree import CompiledTree, FloatArray

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

    def check_game(self, game_id: str, rules_fingerprint: str) -> None:
        """Refuse use on another game or on other rules."""
        if game_id != self.game_id:
            raise InputError(f"the policy is for {self.game_id}, not {game_id}")
        if rules_fingerprint != self.rules_fingerprint:
            raise InputError(
                f"the policy was made for rules {self.rules_fingerprint} of {self.game_id}, "
                f"but the installed game has rules {rules_fingerprint}"
            )

    def strategy_on(self, tree: CompiledTree) -> FloatArray:
        """The ``(N, A)`` strategy array on ``tree``; a missing infoset or action is refused."""
        self.check_game(tree.game_id, tree.rules_fingerprint)
        strategy = np.zeros(tree.action_mask.shape)
        for row, (key, actions) in enumerate(zip(tree.infoset_keys, tree.infoset_actions, strict=True)):
            probabilities = self.action_probabilities(key)
            for action, probability in probabilities.items():
                if action not in actions:
                    raise InputError(f"the policy plays illegal action {action} at infoset {key!r}")
                strategy[row, actions.index(action)] = probability
        return strategy

    def game(self) -> Game:
        """The game this policy is for, after checking the installed rules still match."""
        game = load_game(self.game_id)
        self.check_game(game.game_id, game.rules_fingerprint)
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
        """Write the JSON file atomically."""
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


def load_policy(path: str | Path) -> Policy:
    """Read a policy file; refuse a missing, corrupt or mismatched one with a one-line error."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PolicyFileError(f"policy file {str(source)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise PolicyFileError(f"cannot read policy file {str(source)!r}: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise PolicyFileError(
            f"policy file {str(source)!r} is not valid JSON (line {error.lineno}: {error.msg})"
        ) from None
    policy = _from_json(data, str(source))
    try:
        policy.game()
    except InputError as error:
        raise PolicyFileError(f"policy file {str(source)!r}: {error}") from None
    return policy


def _from_json(data: object, source: str) -> Policy:
    def fail(problem: str) -> PolicyFileError:
        return PolicyFileError(f"policy file {source!r} {problem}")

    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise fail(f"is not a {FORMAT} file")
    if data.get("format_version") != FORMAT_VERSION:
        raise fail(f"has format_version {data.get('format_version')!r}; this version reads {FORMAT_VERSION}")
    expected = {"game": str, "rules_fingerprint": str, "units": str, "algorithm": str,
                "parameters": dict, "iterations": int, "policy": dict}  # fmt: skip
    for name, kind in expected.items():
        if not isinstance(data.get(name), kind):
            raise fail(f"has no valid {name!r} field")
    table: dict[str, dict[int, float]] = {}
    for key, row in data["policy"].items():
        if not isinstance(row, dict) or not row:
            raise fail(f"has no action probabilities for infoset {key!r}")
        try:
            parsed = {int(a): float(p) for a, p in row.items()}
        except (TypeError, ValueError):
            raise fail(f"has a non-numeric action or probability at infoset {key!r}") from None
        if any(not math.isfinite(p) or p < 0 for p in parsed.values()):
            raise fail(f"has a negative or non-finite probability at infoset {key!r}")
        if abs(sum(parsed.values()) - 1.0) > _TOLERANCE:
            raise fail(f"has probabilities summing to {sum(parsed.values()):.9g} at infoset {key!r}")
        table[key] = parsed
    return Policy(
        game_id=data["game"],
        rules_fingerprint=data["rules_fingerprint"],
        units=data["units"],
        algorithm=data["algorithm"],
        parameters=data["parameters"],
        iterations=data["iterations"],
        table=table,
    )
