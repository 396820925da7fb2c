"""RLCard's own agents as opponents: ``random``, the Leduc rule models, its bundled CFR model and
its chance-sampling ``CFRAgent`` trained by us.

RLCard 1.2.0 on NumPy 2: ``CFRAgent`` keys its tables by ``state["obs"].tostring()``, and
``ndarray.tostring`` was removed in NumPy 2, so both ``CFRAgent`` and the bundled
``leduc-holdem-cfr`` model raise ``AttributeError``. :class:`NumPy2CFRAgent` is ``CFRAgent``
with that one call replaced by ``tobytes()``, which returns the same bytes -- so the bundled
tables' keys still match. Nothing in RLCard is patched and NumPy is not pinned.

What we found (reported, not patched):

* ``CFRAgent`` sees only ``obs``: the hand, the public card and the two players' chip counts.
  On Leduc that is 84 distinct observations for our 1,872 information states, so it plays the
  same row in every infoset sharing an observation and can never reach an equilibrium.
* ``leduc-holdem-rule-v2`` tests ``hand[0] == 'K'`` on suit-first card names (``"SK"``), which
  never holds, and so folds every hand before the public card when it may (it checks when it
  cannot fold).
* ``RandomAgent`` and ``CFRAgent.eval_step`` sample from NumPy's global generator.

A table trained by :func:`train_cfr` is saved as JSON keyed exactly as RLCard keys it -- the
``obs`` bytes, written in hex -- with its ``policy``, ``average_policy`` and ``regrets`` (what
RLCard's own ``save()`` pickles), never as pickle.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import rlcard
from rlcard.agents.cfr_agent import CFRAgent
from rlcard.agents.random_agent import RandomAgent
from rlcard.models.leducholdem_rule_models import LeducHoldemRuleAgentV1, LeducHoldemRuleAgentV2
from rlcard.models.limitholdem_rule_models import LimitholdemRuleAgentV1
from rlcard.models.pretrained_models import ROOT_PATH

from adapters import Game
from adapters.inputs import InputError
from adapters.rlcard import RLCardGame
from cfr_agents.files import write_atomic
from eval.opponents.base import LOSSY, Opponent
from eval.opponents.provenance import Progress, Provenance, Trained, check_game

RULE_AGENTS: Mapping[str, type] = {
    "rlcard-rule-v1": LeducHoldemRuleAgentV1,
    "rlcard-rule-v2": LeducHoldemRuleAgentV2,
    "rlcard-limit-rule-v1": LimitholdemRuleAgentV1,
}
"""RLCard's ``leduc-holdem-rule-v1`` and ``-v2`` and ``limit-holdem-rule-v1`` agents, as its model registry builds
them."""
FIXED: Mapping[str, tuple[str, ...]] = {"always-call": ("call", "check"), "always-raise": ("raise", "call", "check")}
"""The agents that always take the first legal action of a preference."""
PRETRAINED_CFR = os.path.join(ROOT_PATH, "leduc_holdem_cfr")
"""RLCard's bundled ``leduc-holdem-cfr`` tables (RLCard's own pickles, read by RLCard's ``load()``)."""
_TABLES = ("policy", "average_policy", "regrets")


class _TobytesObs(np.ndarray):
    """An ``obs`` view whose ``tostring()`` is ``tobytes()``, as it was before NumPy 2."""

    def tostring(self) -> bytes:
        return self.tobytes()


class NumPy2CFRAgent(CFRAgent):  # type: ignore[misc]
    """RLCard's ``CFRAgent`` on NumPy 2: its two ``tostring()`` calls give way to ``tobytes()``."""

    def get_state(self, player_id: int) -> tuple[bytes, list[int]]:
        state = self.env.get_state(player_id)
        return state["obs"].tobytes(), list(state["legal_actions"].keys())

    def eval_step(self, state: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        obs = np.asarray(state["obs"]).view(_TobytesObs)
        action, info = super().eval_step({**state, "obs": obs})
        return int(action), info

    def tables_json(self) -> dict[str, dict[str, list[float]]]:
        """``policy``, ``average_policy`` and ``regrets``, each ``{obs bytes in hex: row}``."""
        return {name: {key.hex(): row.tolist() for key, row in getattr(self, name).items()} for name in _TABLES}

    def load_tables(self, tables: Mapping[str, Mapping[str, list[float]]], iterations: int) -> None:
        """The inverse of :meth:`tables_json`; rows come back bit for bit. (Plain dicts: RLCard tests
        ``key in table`` before every read, so its ``defaultdict`` factories are never called.)"""
        for name in _TABLES:
            setattr(self, name, {bytes.fromhex(k): np.array(v, dtype=np.float64) for k, v in tables[name].items()})
        self.iteration = iterations


class FixedAgent:
    """An agent of RLCard's interface that always takes the first legal action of ``preference`` (:data:`FIXED`:
    always-call, always-raise), and reports it as its probabilities."""

    use_raw = False
    card_blind = True
    """Its answer does not depend on its cards (:class:`eval.ranges.CardBlind`)."""

    def __init__(self, actions: Sequence[str], preference: tuple[str, ...]) -> None:
        self.preference = preference
        self._ids = {name: i for i, name in enumerate(actions)}

    def eval_step(self, state: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        legal = list(state["raw_legal_actions"])
        choice = next(name for name in self.preference if name in legal)
        return self._ids[choice], {"probs": {name: float(name == choice) for name in legal}}

    def step(self, state: Mapping[str, Any]) -> int:
        return self.eval_step(state)[0]


def fixed_opponent(name: str) -> Callable[[Game, int | None], Opponent]:
    """How the registry builds ``always-call`` and ``always-raise``."""

    def build(game: Game, _: int | None) -> Opponent:
        assert isinstance(game, RLCardGame)
        return Opponent.of(name, game.game_id, FixedAgent(game.actions, FIXED[name]), "a fixed rule", LOSSY)

    return build


def random_agent(game: RLCardGame) -> RandomAgent:
    """RLCard's ``RandomAgent``: uniform over the legal actions (it reports its probabilities)."""
    return RandomAgent(num_actions=game.num_distinct_actions)


def rule_opponent(name: str) -> Callable[[Game, int | None], Opponent]:
    """How the registry builds ``rlcard-rule-v1`` and ``-v2``."""

    def build(game: Game, _: int | None) -> Opponent:
        return Opponent.of(name, game.game_id, RULE_AGENTS[name](), "rules, as RLCard ships them", LOSSY)

    return build


def pretrained_cfr() -> NumPy2CFRAgent:
    """RLCard's bundled ``leduc-holdem-cfr`` model, loaded by RLCard's ``CFRAgent.load()``."""
    agent = NumPy2CFRAgent(rlcard.make("leduc-holdem"), model_path=PRETRAINED_CFR)
    agent.load()
    return agent


def pretrained_opponent(game: Game, _: int | None) -> Opponent:
    """How the registry builds ``rlcard-pretrained-cfr``."""
    agent = pretrained_cfr()
    trained = f"as RLCard ships it ({agent.iteration:,} iterations recorded)"
    return Opponent.of("rlcard-pretrained-cfr", game.game_id, agent, trained, LOSSY)


def train_cfr(
    game: RLCardGame, iterations: int, rng: np.random.Generator, preset: str, on_progress: Progress
) -> Trained[NumPy2CFRAgent]:
    """Up to ``iterations`` of RLCard's chance-sampling CFR in RLCard's env (``allow_step_back``),
    dealt from a seed drawn from ``rng``."""
    env = rlcard.make(game.spec.env_id, config={"allow_step_back": True, "seed": int(rng.integers(2**31))})
    agent = NumPy2CFRAgent(env, model_path=os.devnull)
    iteration = 0
    while iteration < iterations:
        iteration += 1
        agent.train()
        if on_progress(iteration, agent):
            break
    settings = {"algorithm": "chance-sampling CFR (RLCard CFRAgent)"}  # CFRAgent has no settings
    return Trained(agent, settings, iteration)


def save_cfr(path: str | Path, agent: NumPy2CFRAgent, provenance: Provenance) -> None:
    """One JSON file: the provenance fields, ``obs_dtype`` and the three tables."""
    key = "state['obs'].tobytes().hex()"
    data = {**provenance.to_json(), "obs_dtype": "float64", "key": key, **agent.tables_json()}
    write_atomic(path, json.dumps(data) + "\n")


def load_cfr(path: str | Path, data: Mapping[str, Any], provenance: Provenance, game: Game) -> NumPy2CFRAgent:
    """An agent from a file written by :func:`save_cfr`, for ``game``."""
    check_game(provenance, game.game_id, game.rules_fingerprint, str(path))
    if not isinstance(game, RLCardGame):
        raise InputError(f"{str(path)!r}: a {provenance.kind} table cannot play {game.game_id}")
    try:
        tables = {name: data[name] for name in _TABLES}
        agent = NumPy2CFRAgent(rlcard.make(game.spec.env_id), model_path=os.devnull)
        agent.load_tables(tables, provenance.iterations or 0)
    except (KeyError, TypeError, ValueError, AttributeError) as error:  # AttributeError: a table that is no object
        raise InputError(f"{str(path)!r} has no valid RLCard CFR tables ({error})") from None
    width = game.num_distinct_actions
    for name in _TABLES:
        for row in getattr(agent, name).values():
            if row.shape != (width,) or not np.isfinite(row).all() or (name != "regrets" and (row < 0).any()):
                what = "finite numbers" if name == "regrets" else "finite numbers, none negative"
                raise InputError(f"{str(path)!r}: each row of its {name!r} table must be {width} {what}")
    return agent
