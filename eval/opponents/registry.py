"""Named opponents in one registry: one :class:`~eval.opponents.base.Family` spec per family.

A name is one of :data:`FAMILIES` (``random``, ``rlcard-rule-v1``, ...), an OpenSpiel solver with
an iteration count (``openspiel-cfr+:1000``), or the path of a file: a policy file, or a model
file written by ``cfr-agents train-opponent`` (an NFSP sidecar, an RLCard CFR table). On a limit hold'em game of
two rounds or more, any of them as the blueprint of the re-solving agent (:data:`RESOLVING`):
``resolve:AGENT``, ``resolve-safe:AGENT``, ``resolve:N:AGENT`` re-solving by ``N`` iterations.

A new kind of opponent is one more :class:`~eval.opponents.base.Family` below: how it applies, how it
is built, and, if ``train-opponent`` trains it, its :class:`~eval.opponents.base.Training`.

>>> [family.name for family in available("openspiel:kuhn_poker")][:3]
['random', 'openspiel-cfr', 'openspiel-cfr+']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Final

import eval.opponents.dqn as dqn
import eval.opponents.neural as neural
import eval.opponents.nfsp as nfsp
import eval.opponents.openspiel_solvers as openspiel_solvers
from adapters import Game, load_game
from adapters.games import canonical_game_id
from adapters.holdem.engine import holdem_engine
from adapters.inputs import InputError, UnsupportedGameError, read_json
from adapters.openspiel import OpenSpielGame
from adapters.pettingzoo import PettingZooGame
from adapters.rlcard import RLCardGame
from cfr_agents.abstract_strategy import FORMAT as ABSTRACT_FORMAT
from cfr_agents.abstract_strategy import AbstractStrategy, load_abstract_strategy
from cfr_agents.policy import FORMAT as POLICY_FORMAT
from cfr_agents.policy import Policy, policy_of_json
from cfr_agents.public_tree.strategy_file import FORMAT as STRATEGY_FORMAT
from cfr_agents.public_tree.strategy_file import PublicStrategy, load_strategy, strategy_paths
from cfr_agents.tree import load_tree
from eval.opponents.base import FULL, LOSSY, Family, Opponent, Training
from eval.opponents.provenance import FORMAT as MODEL_FORMAT
from eval.opponents.provenance import provenance_of
from eval.resolving import ITERATIONS, ResolvingAgent

MODELS = Path(__file__).parent / "models"
"""The shipped trained opponents: ``<family>_<game name>.json`` (and ``.safetensors`` for NFSP)."""


def shipped_model(family: str, game: Game) -> Path:
    """Where the shipped model of ``family`` for ``game`` lives (it may not exist)."""
    return MODELS / f"{family}_{game.game_id.partition(':')[2]}.json"


def _everywhere(game: Game) -> bool:
    return True


def _rlcard_leduc(game: Game) -> bool:
    return game.game_id == "rlcard:leduc-holdem"


def _rlcard_limit(game: Game) -> bool:
    return game.game_id == "rlcard:limit-holdem"


def _solvable(game: Game) -> bool:
    """Every game whose tree OpenSpiel's solvers can walk: not one too large for a compiled tree, nor a ``pettingzoo:``
    game: OpenSpiel policies are read on ``openspiel:`` and ``rlcard:`` games only (:mod:`eval.agents`)."""
    return not isinstance(game, PettingZooGame) and (not isinstance(game, RLCardGame) or game.compiled)


def _fixed(name: str) -> Callable[[Game, int | None], Opponent]:
    return lambda game, iterations: _rlcard_builtin().fixed_opponent(name)(game, iterations)


def _has_model(family: str) -> Callable[[Game], bool]:
    return lambda game: shipped_model(family, game).is_file()


def _shipped(family: str) -> Callable[[Game, int | None], Opponent]:
    def build(game: Game, _: int | None) -> Opponent:
        return load_model_file(shipped_model(family, game), game, name=family)

    return build


def _rlcard_builtin() -> ModuleType:
    """RLCard's agents import torch as they load (about 3 s), so their module is loaded when first used."""
    import eval.opponents.rlcard_builtin as rlcard_builtin

    return rlcard_builtin


def _rule(name: str) -> Callable[[Game, int | None], Opponent]:
    return lambda game, iterations: _rlcard_builtin().rule_opponent(name)(game, iterations)


def _random(game: Game, _: int | None) -> Opponent:
    if isinstance(game, RLCardGame) and game.num_players == 2:
        agent = _rlcard_builtin().random_agent(game)
        return Opponent.of("random", game.game_id, agent, "RLCard's RandomAgent", LOSSY)
    if isinstance(game, RLCardGame):  # RLCard's env, which its RandomAgent reads, encodes two players only
        uniform = Policy.uniform(load_tree(game.game_id, any_players=True))
        return Opponent.of("random", game.game_id, uniform, "uniform over the legal actions", FULL)
    if isinstance(game, PettingZooGame):
        return Opponent.of(
            "random", game.game_id, Policy.uniform(load_tree(game.game_id)), "uniform over the mask", FULL
        )
    from open_spiel.python.policy import UniformRandomPolicy

    assert isinstance(game, OpenSpielGame)
    return Opponent.of("random", game.game_id, UniformRandomPolicy(game.pyspiel_game), "uniform", FULL)


FAMILIES: Mapping[str, Family] = {
    family.name: family
    for family in (
        Family(
            "random",
            "RLCard's RandomAgent (two-player rlcard:); uniform play (openspiel:, pettingzoo:, rlcard: for 3+)",
            _everywhere,
            _random,
        ),
        Family(
            "rlcard-rule-v1",
            "RLCard's leduc-holdem-rule-v1: raise, else call, else check",
            _rlcard_leduc,
            _rule("rlcard-rule-v1"),
        ),
        Family(
            "rlcard-rule-v2",
            "RLCard's leduc-holdem-rule-v2 (folds every hand pre-flop)",
            _rlcard_leduc,
            _rule("rlcard-rule-v2"),
        ),
        Family(
            "rlcard-limit-rule-v1",
            "RLCard's limit-holdem-rule-v1: raises with pairs and strong cards, else calls or folds",
            _rlcard_limit,
            _rule("rlcard-limit-rule-v1"),
        ),
        Family("always-call", "checks or calls, never folds or raises", _rlcard_limit, _fixed("always-call")),
        Family("always-raise", "bets or raises, else calls or checks", _rlcard_limit, _fixed("always-raise")),
        Family(
            "rlcard-pretrained-cfr",
            "RLCard's bundled leduc-holdem-cfr model, NumPy 2 compatible",
            _rlcard_leduc,
            lambda game, iterations: _rlcard_builtin().pretrained_opponent(game, iterations),
        ),
        Family(
            "rlcard-cfr",
            "RLCard's chance-sampling CFRAgent, trained by train-opponent",
            _has_model("rlcard-cfr"),
            _shipped("rlcard-cfr"),
            training=Training(
                "rlcard:",
                "iterations",
                LOSSY,
                {"rlcard": {}},  # CFRAgent has no settings
                lambda *arguments: _rlcard_builtin().train_cfr(*arguments),
                lambda *arguments: _rlcard_builtin().save_cfr(*arguments),
                lambda *arguments: _rlcard_builtin().load_cfr(*arguments),
            ),
        ),
        Family(
            "rlcard-nfsp",
            "RLCard's NFSPAgent, in self-play or against random as run_rl.py trains it; trained by train-opponent",
            _has_model("rlcard-nfsp"),
            _shipped("rlcard-nfsp"),
            needs_torch=True,
            training=Training(
                "rlcard:",
                "episodes",
                LOSSY,
                nfsp.RLCARD_PRESETS,
                nfsp.train_rlcard,
                nfsp.save,
                nfsp.load_rlcard,
                nfsp.outputs,
                trains_without_tree=True,
            ),
        ),
        Family(
            "rlcard-dqn",
            "RLCard's DQNAgent, against random as run_rl.py trains it; trained by train-opponent",
            _has_model("rlcard-dqn"),
            _shipped("rlcard-dqn"),
            needs_torch=True,
            training=Training(
                "rlcard:",
                "episodes",
                LOSSY,
                dqn.PRESETS,
                dqn.train,
                nfsp.save,
                dqn.load,
                nfsp.outputs,
                trains_without_tree=True,
            ),
        ),
        Family(
            "openspiel-nfsp",
            "OpenSpiel's PyTorch NFSP, self-play, trained by train-opponent",
            _has_model("openspiel-nfsp"),
            _shipped("openspiel-nfsp"),
            needs_torch=True,
            training=Training(
                "openspiel:",
                "episodes",
                FULL,
                nfsp.OPENSPIEL_PRESETS,
                nfsp.train_openspiel,
                nfsp.save,
                nfsp.load_openspiel,
                nfsp.outputs,
            ),
        ),
        *(
            Family(
                name,
                f"{summary}, trained by train --algo {name}",
                _has_model(name),
                _shipped(name),
                needs_torch=True,
                training=Training(
                    "",
                    "iterations",
                    FULL,
                    neural.PRESETS,
                    neural.train(name),
                    neural.save,
                    neural.load,
                    neural.outputs,
                    takes_overrides=True,
                ),
            )
            for name, summary in (
                ("deep-cfr", "Deep CFR (Brown et al. 2019): its average-strategy network"),
                ("sd-cfr", "Single Deep CFR (Steinberger 2019): its value networks' mixture"),
            )
        ),
        *(
            Family(
                name,
                f"{solver.summary} for N iterations (default {solver.default_iterations:,}; "
                f"{solver.bridged_iterations:,} on bridged RLCard games)",
                _solvable,
                openspiel_solvers.builder(name),
                takes_iterations=True,
            )
            for name, solver in openspiel_solvers.SOLVERS.items()
        ),
    )
}

TRAINABLE: Mapping[str, Training] = {
    name: family.training for name, family in FAMILIES.items() if family.training is not None
}
"""The families ``cfr-agents train-opponent`` trains, and how."""


def available(game_id: str, *, any_players: bool = False) -> list[Family]:
    """The registry entries that apply to ``game_id``, in registry order; an n-player or general-sum game only with
    ``any_players`` (:func:`adapters.load_game`)."""
    game = load_game(game_id, any_players=any_players)
    return [family for family in FAMILIES.values() if family.applies(game)]


def is_file_name(name: str) -> bool:
    """A name that stands for a file rather than a registry entry (one longer than the file system
    allows is a file's, to be refused as one)."""
    if name.endswith((".json", ".npz")) or "/" in name:
        return True
    try:
        return Path(name).is_file()
    except (OSError, ValueError):  # a name too long for the file system; a NUL
        return True


RESOLVING: Mapping[str, bool] = {"resolve": False, "resolve-safe": True}
"""The re-solving agent's prefixes (:class:`eval.resolving.ResolvingAgent`), and whether each re-solves safely."""


RESOLVE_SUMMARY: Final = (
    "AGENT re-solving each endgame at play time, unsafe or safe, by N DCFR iterations (default 200)"
)


def resolves(game_id: str) -> bool:
    """Whether ``game_id`` has endgames to re-solve: a limit hold'em game on the engine, of two rounds or more."""
    try:
        return holdem_engine(canonical_game_id(game_id)).rules.num_rounds >= 2
    except (InputError, UnsupportedGameError):
        return False


def _resolving(name: str, game_id: str | None, any_players: bool) -> Opponent:
    """The re-solving agent ``resolve[-safe]:[N:]AGENT`` (:data:`RESOLVING`), ``AGENT`` loaded as any opponent."""
    prefix, _, rest = name.partition(":")
    count, _, blueprint = rest.partition(":")
    if not count.isdigit():
        count, blueprint = "", rest
    if not blueprint:
        raise InputError(f"{name!r}: name the blueprint agent after {prefix}:")
    iterations = _iterations(name, count) or ITERATIONS
    inner = load_opponent(blueprint, game_id, any_players=any_players)
    if not resolves(inner.game_id):
        raise InputError(f"{name!r}: {inner.game_id} has no endgames to re-solve (limit hold'em of 2 rounds or more)")
    safe = RESOLVING[prefix]
    agent = ResolvingAgent(inner.agent, holdem_engine(inner.game_id), blueprint, iterations=iterations, safe=safe)
    how = f"each endgame re-solved{' safely' if safe else ''} by {iterations:,} DCFR iterations"
    return Opponent.of(name, inner.game_id, agent, f"{inner.trained}; {how}", inner.observes)


def _require_extras(family: Family) -> None:
    if family.needs_torch:
        nfsp.require_torch(family.name)


def load_opponent(name: str, game_id: str | None = None, *, any_players: bool = False) -> Opponent:
    """Build the opponent ``name`` for ``game_id`` (a file carries its own game; ``game_id``, if
    given, must agree with it); an n-player or general-sum game only with ``any_players``
    (:func:`adapters.load_game`)."""
    if name.partition(":")[0] in RESOLVING:
        return _resolving(name, game_id, any_players)
    if is_file_name(name):
        game = load_game(game_id, any_players=any_players) if game_id is not None else None
        return load_model_file(Path(name), game, name=name)
    family_name, _, count = name.partition(":")
    family = FAMILIES.get(family_name)
    if family is None:
        if Path(name).is_dir():
            raise InputError(f"{name!r} is a directory, not a policy or model file")
        raise InputError(
            f"unknown opponent {name!r}; known: {', '.join(FAMILIES)}, a policy or model file, or resolve:AGENT"
        )
    if game_id is None:
        raise InputError(f"opponent {name!r} needs a game: name the game it is to play")
    game = load_game(game_id, any_players=any_players)
    if not family.applies(game):
        names = ", ".join(f.name for f in FAMILIES.values() if f.applies(game))
        raise InputError(f"opponent {family_name!r} is not available for {game_id}; available: {names}")
    iterations = _iterations(name, count) if family.takes_iterations else None
    if count and not family.takes_iterations:
        raise InputError(f"opponent {family_name!r} takes no iteration count (got {name!r})")
    _require_extras(family)
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
    """A policy file, a public-tree or abstract strategy (its ``.npz`` or ``.json``) or a trained-opponent file as
    an opponent (for ``game``, if given)."""
    if path.suffix == ".npz" and not path.is_file():  # named before its sidecar, which is read first
        raise InputError(f"file {str(path)!r} does not exist")
    data = read_json(strategy_paths(path)[1] if path.suffix == ".npz" else path, "file")
    kind = data.get("format") if isinstance(data, dict) else None
    if kind in (STRATEGY_FORMAT, ABSTRACT_FORMAT):
        game_id = None if game is None else game.game_id
        strategy: PublicStrategy | AbstractStrategy = (
            load_strategy(path, game_id=game_id)
            if kind == STRATEGY_FORMAT
            else load_abstract_strategy(path, game_id=game_id)
        )
        trained = f"{strategy.algorithm}, {strategy.iterations:,} iterations"
        return Opponent.of(
            name,
            strategy.game_id,
            strategy,
            trained,
            FULL,
            algorithm=strategy.algorithm,
            iterations=strategy.iterations,
        )
    if kind == POLICY_FORMAT:
        policy = policy_of_json(data, str(path))  # the file is read once
        if game is not None:
            policy.check_game(game.game_id, game.rules_fingerprint)
        trained = f"{policy.algorithm}, {policy.iterations:,} iterations"
        return Opponent.of(
            name, policy.game_id, policy, trained, FULL, algorithm=policy.algorithm, iterations=policy.iterations
        )
    if kind != MODEL_FORMAT:
        raise InputError(f"{str(path)!r} is neither a policy file nor an opponent model file")
    assert isinstance(data, dict)
    provenance = provenance_of(data, str(path))
    family = FAMILIES.get(provenance.kind)
    if family is None or family.training is None:
        raise InputError(f"{str(path)!r}: no trainable opponent family is called {provenance.kind!r}")
    _require_extras(family)
    target = game if game is not None else load_game(provenance.game)
    agent = family.training.load(path, data, provenance, target)
    return Opponent.of(
        name,
        target.game_id,
        agent,
        provenance.describe(),
        family.training.observes,
        provenance=provenance,
        algorithm=provenance.kind,
        iterations=provenance.iterations,
    )


def trainable(kind: str, game_id: str) -> tuple[Training, Game]:
    """Refuse, before any work, a family that ``train-opponent`` cannot train on ``game_id``, or
    that needs a missing extra; its training spec and the game."""
    family = FAMILIES.get(kind)
    if family is None or family.training is None:
        raise InputError(f"train-opponent trains {', '.join(TRAINABLE)}, not {kind!r}")
    game = load_game(game_id)
    if not game_id.startswith(family.training.toolkit):
        raise InputError(f"{kind} trains on {family.training.toolkit} games, not {game_id}")
    if kind in ("deep-cfr", "sd-cfr"):
        neural.check_trainable(game)
    _require_extras(family)
    return family.training, game
