"""Named opponents in one registry: each name builds an agent that :func:`eval.strategy_of` scores.

A name is one of :data:`FAMILIES` (``random``, ``rlcard-rule-v1``, ...), an OpenSpiel solver with
an iteration count (``openspiel-cfr+:1000``), or the path of a file: a policy file, or a model
file written by ``cfr-agents train-opponent`` (an NFSP sidecar, an RLCard CFR table).

>>> [family.name for family in available("openspiel:kuhn_poker")][:3]
['random', 'openspiel-cfr', 'openspiel-cfr+']
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from adapters import Game, load_game
from adapters.errors import InputError
from adapters.openspiel import OpenSpielGame
from adapters.rlcard import RLCardGame
from cfr_agents.policy import FORMAT as POLICY_FORMAT
from cfr_agents.policy import Policy, load_policy
from cfr_agents.tree import CompiledTree
from eval.opponents import openspiel_solvers
from eval.opponents.provenance import FORMAT as MODEL_FORMAT
from eval.opponents.provenance import Provenance, provenance_of

MODELS = Path(__file__).parent / "models"
"""The shipped trained opponents: ``<family>_<game name>.json`` (and ``.safetensors`` for NFSP)."""

FULL = "full information state"
LOSSY = "RLCard's lossy obs"


@dataclass(frozen=True)
class Opponent:
    """A built opponent: the agent to query or play, and what the opponent table says of it."""

    name: str
    game_id: str
    agent: object
    """A :class:`~cfr_agents.policy.Policy`, an OpenSpiel policy or an RLCard agent."""
    trained: str
    """How it was made: ``"40,000 episodes, 17.0 min"``, ``"as RLCard ships it"``, ..."""
    observes: str
    """:data:`FULL` or :data:`LOSSY` (RLCard's ``obs``: hand, public card, chip counts)."""
    provenance: Provenance | None = None


@dataclass(frozen=True)
class Family:
    """A registry entry: where it applies and how to build it (``argument`` is ``N`` of ``NAME:N``)."""

    name: str
    summary: str
    applies: Callable[[Game], bool]
    build: Callable[[Game, int | None], Opponent]
    needs_torch: bool = False
    takes_iterations: bool = False


def shipped_model(family: str, game: Game) -> Path:
    """Where the shipped model of ``family`` for ``game`` lives (it may not exist)."""
    return MODELS / f"{family}_{game.game_id.partition(':')[2]}.json"


def _random(game: Game, _: int | None) -> Opponent:
    if isinstance(game, RLCardGame):
        from eval.opponents import rlcard_builtin

        agent: object = rlcard_builtin.random_agent(game)
        return Opponent("random", game.game_id, agent, "RLCard's RandomAgent", LOSSY)
    from open_spiel.python.policy import UniformRandomPolicy

    assert isinstance(game, OpenSpielGame)
    return Opponent("random", game.game_id, UniformRandomPolicy(game.pyspiel_game), "uniform", FULL)


def _rule(name: str) -> Callable[[Game, int | None], Opponent]:
    def build(game: Game, _: int | None) -> Opponent:
        from eval.opponents.rlcard_builtin import RULE_AGENTS

        return Opponent(name, game.game_id, RULE_AGENTS[name](), "rules, as RLCard ships them", LOSSY)

    return build


def _pretrained(game: Game, _: int | None) -> Opponent:
    from eval.opponents.rlcard_builtin import pretrained_cfr

    agent = pretrained_cfr()
    trained = f"as RLCard ships it ({agent.iteration:,} iterations recorded)"
    return Opponent("rlcard-pretrained-cfr", game.game_id, agent, trained, LOSSY)


def _shipped(family: str) -> Callable[[Game, int | None], Opponent]:
    def build(game: Game, _: int | None) -> Opponent:
        return load_model_file(shipped_model(family, game), game, name=family)

    return build


def _is_leduc(game: Game) -> bool:
    return game.game_id == "rlcard:leduc-holdem"


def _has_model(family: str) -> Callable[[Game], bool]:
    return lambda game: shipped_model(family, game).is_file()


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family("random", "RLCard's RandomAgent (rlcard:), uniform play (openspiel:)", lambda g: True, _random),
        Family("rlcard-rule-v1", "RLCard's leduc-holdem-rule-v1: raise, else call, else check", _is_leduc,
               _rule("rlcard-rule-v1")),
        Family("rlcard-rule-v2", "RLCard's leduc-holdem-rule-v2 (folds every hand pre-flop: see README)", _is_leduc,
               _rule("rlcard-rule-v2")),
        Family("rlcard-pretrained-cfr", "RLCard's bundled leduc-holdem-cfr model, NumPy 2 compatible", _is_leduc,
               _pretrained),
        Family("rlcard-cfr", "RLCard's chance-sampling CFRAgent, trained by train-opponent", _has_model("rlcard-cfr"),
               _shipped("rlcard-cfr")),
        Family("rlcard-nfsp", "RLCard's NFSPAgent, self-play, trained by train-opponent", _has_model("rlcard-nfsp"),
               _shipped("rlcard-nfsp"), needs_torch=True),
        Family("openspiel-nfsp", "OpenSpiel's PyTorch NFSP, self-play, trained by train-opponent",
               _has_model("openspiel-nfsp"), _shipped("openspiel-nfsp"), needs_torch=True),
        *(
            Family(name, f"{solver.summary} for N iterations (default {solver.default_iterations:,}; "
                   f"{solver.bridged_iterations:,} on bridged RLCard games)",
                   lambda g: True, openspiel_solvers.builder(name), takes_iterations=True)
            for name, solver in openspiel_solvers.SOLVERS.items()
        ),
    )
}  # fmt: skip


def available(game_id: str) -> list[Family]:
    """The registry entries that apply to ``game_id``, in registry order."""
    game = load_game(game_id)
    return [family for family in FAMILIES.values() if family.applies(game)]


def is_file_name(name: str) -> bool:
    """A name that stands for a file rather than a registry entry."""
    return name.endswith(".json") or "/" in name or Path(name).is_file()


def load_opponent(name: str, game_id: str | None = None) -> Opponent:
    """Build the opponent ``name`` for ``game_id`` (a file carries its own game; ``game_id``, if
    given, must agree with it)."""
    if is_file_name(name):
        game = load_game(game_id) if game_id is not None else None
        return load_model_file(Path(name), game, name=name)
    family_name, _, count = name.partition(":")
    family = FAMILIES.get(family_name)
    if family is None:
        raise InputError(f"unknown opponent {name!r}; known: {', '.join(FAMILIES)}, or a policy or model file")
    if game_id is None:
        raise InputError(f"opponent {name!r} needs a game: give --game")
    game = load_game(game_id)
    if not family.applies(game):
        names = ", ".join(f.name for f in FAMILIES.values() if f.applies(game))
        raise InputError(f"opponent {family_name!r} is not available for {game_id}; available: {names}")
    iterations = _iterations(name, count) if family.takes_iterations else None
    if count and not family.takes_iterations:
        raise InputError(f"opponent {family_name!r} takes no iteration count (got {name!r})")
    if family.needs_torch:
        from eval.opponents.nfsp import require_torch

        require_torch(family.name)
    return family.build(game, iterations)


def _iterations(name: str, count: str) -> int | None:
    if not count:
        return None
    try:
        value = int(count)
    except ValueError:
        raise InputError(f"{name!r}: the iteration count after ':' must be an integer") from None
    if value <= 0:
        raise InputError(f"{name!r}: the iteration count must be positive")
    return value


def load_model_file(path: Path, game: Game | None, *, name: str) -> Opponent:
    """A policy file or a trained-opponent file as an opponent (for ``game``, if given)."""
    data = _read_json(path)
    kind = data.get("format") if isinstance(data, dict) else None
    if kind == POLICY_FORMAT:
        policy = load_policy(path)
        if game is not None:
            policy.check_game(game.game_id, game.rules_fingerprint)
        return _policy_opponent(name, policy)
    if kind != MODEL_FORMAT:
        raise InputError(f"{str(path)!r} is neither a policy file nor an opponent model file")
    assert isinstance(data, dict)
    provenance = provenance_of(data, str(path))
    target = game if game is not None else load_game(provenance.game)
    agent: object
    if provenance.kind == "rlcard-cfr" and isinstance(target, RLCardGame):
        from eval.opponents.rlcard_builtin import load_cfr

        agent, _ = load_cfr(path, data, target)
        observes = LOSSY
    elif provenance.kind in ("rlcard-nfsp", "openspiel-nfsp"):
        from eval.opponents import nfsp

        agent = nfsp.load(path, data, provenance, target)
        observes = LOSSY if provenance.kind == "rlcard-nfsp" else FULL
    else:
        raise InputError(f"{str(path)!r}: a {provenance.kind} model cannot play {target.game_id}")
    return Opponent(name, target.game_id, agent, provenance.describe(), observes, provenance)


def _policy_opponent(name: str, policy: Policy) -> Opponent:
    trained = f"{policy.algorithm}, {policy.iterations:,} iterations"
    return Opponent(name, policy.game_id, policy, trained, FULL)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"file {str(path)!r} does not exist") from None
    except json.JSONDecodeError as error:
        raise InputError(f"{str(path)!r} is not valid JSON (line {error.lineno}: {error.msg})") from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"cannot read {str(path)!r}: {error}") from None


def playable_rlcard_agent(opponent: Opponent, tree: CompiledTree, rng: np.random.Generator) -> Any:
    """An agent for RLCard's env: the opponent itself if it is an RLCard agent, else its exact
    strategy on ``tree`` played as a policy (sampling from ``rng``)."""
    if hasattr(opponent.agent, "eval_step") and hasattr(opponent.agent, "use_raw"):
        return opponent.agent
    from eval.strategy_of import strategy_of

    policy = opponent.agent if isinstance(opponent.agent, Policy) else Policy.from_strategy(
        tree, strategy_of(opponent.agent, tree), algorithm=opponent.name, parameters={}, iterations=0
    )  # fmt: skip
    return policy.rlcard_agent(rng)


__all__ = ["FAMILIES", "Family", "Opponent", "available", "load_opponent", "playable_rlcard_agent"]
