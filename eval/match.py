r"""Matches between named agents: load them from the registry, seat them in the real environment,
play duplicate pairs, and put the exact value beside the sampled one.

An agent is any name :func:`eval.opponents.load_opponent` accepts: ``random``, ``rlcard-rule-v1``,
``rlcard-pretrained-cfr``, ``openspiel-cfr+:500``, ..., or a policy or model file. A match is
described by plain data -- the game id, the two names, the number of hands and a seed -- so a worker
process can rebuild it from that alone (:class:`MatchSpec`).

Randomness: the seed is a :class:`numpy.random.SeedSequence`; its first three children drive the
deals, agent ``A`` and agent ``B``, each its own stream:

* our policies sample from their own :class:`numpy.random.Generator`;
* an RLCard agent is asked with its own ``eval_step`` at every decision, its reported probabilities
  sampled with the agent's own generator (:class:`eval.agents.OwnStreamAgent`);
* OpenSpiel policies (``openspiel:`` games) are asked ``action_probabilities(state)`` and sampled
  from the agent's own generator; on an ``rlcard:`` game they play their exact strategy on the tree.

An agent whose probabilities depend on its infoset alone (:attr:`eval.agents.Agent.infoset_only`: our
policies and models, OpenSpiel's tables) is asked once per infoset in a match and its answer reused
(:meth:`eval.agents.Agent.match_policy`; in RLCard's env, :class:`~cfr_agents.rlcard_agent.PolicyAgent`
keeps each infoset's row): the same draws from the same streams as asking at every decision, without
recomputing the answer. Tournaments play every pairing with :func:`play_match`, so the same holds there.

The exact value is :func:`eval.exact_head_to_head` of both agents' exact strategies
(:func:`eval.strategy_of`); it is ``None``, with the reason in :attr:`MatchReport.exact_note`, when
either agent cannot be queried exactly.

With :attr:`MatchSpec.aivat`, every hand is also scored with AIVAT (:mod:`eval.aivat`), ``A``'s exact strategy
the known one when ``A`` can be queried, else ``B``'s: the report's :attr:`MatchReport.aivat` is the mean of the
pairs' AIVAT values, with its standard error and 95% interval, beside the plain duplicate estimate.

A hold'em game that runs on its public tree (:func:`eval.holdem.on_public_tree`: ``fhp``, ``fhp-acpc``,
``hulh``) is played in OpenSpiel's ``universal_poker`` as any ``openspiel:`` game, each agent asked at every
decision (an infoset there rarely comes twice, so no answer is kept); its agents are public-tree strategy files
and ``random``, asked for every hand at once for the exact value (:func:`eval.holdem.exact_head_to_head`); any
other agent is refused as it is named. Hold'em games pay chips: :attr:`MatchReport.mbb_per_hand` divides by the
big blind.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import adapters
from adapters.games import canonical_game_id
from adapters.holdem.cards import private_hands
from adapters.holdem.engine import HoldemEngine, holdem_engine
from adapters.inputs import InputError, ParameterError, UnsupportedGameError
from adapters.pettingzoo import PREFIX as PETTINGZOO_PREFIX
from adapters.pettingzoo import PettingZooGame
from adapters.rlcard import PREFIX as RLCARD_PREFIX
from adapters.rlcard import RLCardGame
from cfr_agents.files import write_atomic
from cfr_agents.policy import Policy
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.rlcard_agent import PolicyAgent
from cfr_agents.tree import CompiledTree, FloatArray, load_tree
from eval import holdem
from eval.agents import Agent, AgentQueryError
from eval.aivat import Aivat, AivatEstimate, AivatRecorder, HandScorer
from eval.aivat_holdem import HoldemAivat, HoldemAivatRecorder
from eval.environments import (
    MatchResult,
    OpenSpielPolicy,
    RLCardAgent,
    play_openspiel_match,
    play_pettingzoo_match,
    play_rlcard_match,
)
from eval.exploitability import exploitability_of_strategy, public_exploitability
from eval.hand_log import HandLog, HandReader
from eval.head_to_head import HeadToHead, exact_head_to_head
from eval.opponents import Opponent, load_opponent
from eval.ranges import PerHandQuery, RangeQuery, range_query

MIN_HANDS = 4
"""Two duplicate pairs: the fewest hands whose standard error can be estimated."""


def check_hands(hands: int) -> int:
    """The number of duplicate pairs for ``hands`` hands; refuse odd counts and fewer than :data:`MIN_HANDS`."""
    if hands < MIN_HANDS:
        raise ParameterError(
            "{hands} must be at least {least} (two duplicate pairs, to estimate a standard error), got {given}",
            least=MIN_HANDS,
            given=hands,
        )
    if hands % 2:
        raise ParameterError(
            "{hands} must be even: hands are played in duplicate pairs (seats swapped), got {given}", given=hands
        )
    return hands // 2


@dataclass(frozen=True)
class MatchSpec:
    """A match as plain data: what a worker process needs to play it."""

    game_id: str
    agents: tuple[str, str]
    hands: int
    seed: int
    spawn_key: tuple[int, ...] = ()
    """The position of this match's :class:`~numpy.random.SeedSequence` under ``seed``
    (a tournament's pairing index); empty for a lone match."""
    tables: bool = False
    """Play both agents by their exact strategy tables (:func:`eval.strategy_of`, sampled by our
    fast policy agent) instead of asking the live agents: the same distribution of play, without asking
    an agent that is not infoset-only (an RLCard NFSP network) at every decision. Both agents must be
    queryable; ``rlcard:`` games only."""

    files: Mapping[str, str] = field(default_factory=dict)
    """Contents of policy files among ``agents``, by name, for workers that cannot read the paths."""
    aivat: bool = False
    """Also estimate ``A``'s value with AIVAT (:mod:`eval.aivat`), ``A``'s exact strategy the known one, or
    else ``B``'s; a match in which neither can be queried exactly, or on a game that runs on its public tree,
    is refused."""

    def seed_sequence(self) -> np.random.SeedSequence:
        return np.random.SeedSequence(self.seed, spawn_key=self.spawn_key)


@dataclass(frozen=True)
class MatchReport:
    """``A``'s payoff per hand against ``B``: sampled (mean, standard error, 95% CI) and exact."""

    game_id: str
    agents: tuple[str, str]
    units: str
    hands: int
    mean: float
    standard_error: float
    ci95: tuple[float, float]
    exact: float | None
    """``A``'s exact value over both seats, or ``None`` when an agent cannot be queried exactly."""
    exact_seat_values: tuple[float, float] | None
    exact_note: str
    """Why :attr:`exact` is missing; empty when it is present."""
    big_blind: float | None = None
    """:attr:`units` per big blind (:func:`eval.holdem.big_blind`: 1 for games paid in big blinds, the big blind
    in chips for hold'em games); ``None`` for games without a big blind."""
    aivat: AivatEstimate | None = None
    """The AIVAT estimate of ``A``'s value (:mod:`eval.aivat`), when the match asked for it."""

    @property
    def mbb_per_hand(self) -> float | None:
        """The mean in milli-big-blinds per hand (``mean / big_blind * 1000``); ``None`` without a big blind."""
        return self.mbb(self.mean)

    def mbb(self, value: float) -> float | None:
        """``value`` (in :attr:`units`) in milli-big-blinds; ``None`` without a big blind."""
        return None if self.big_blind is None else value / self.big_blind * 1000

    @property
    def exact_within_ci95(self) -> bool | None:
        """Whether the exact value lies inside the sampled 95% interval (:func:`exact_against_sample`)."""
        return exact_against_sample(self.exact, self.mean, self.standard_error, self.ci95)[0]

    @property
    def exact_error_in_standard_errors(self) -> float | None:
        """``|mean - exact| / standard error`` (:func:`exact_against_sample`)."""
        return exact_against_sample(self.exact, self.mean, self.standard_error, self.ci95)[1]

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "agents": list(self.agents),
            "hands": self.hands,
            "mean": self.mean,
            "standard_error": self.standard_error,
            "ci95": list(self.ci95),
            "units": self.units,
            "mbb_per_hand": self.mbb_per_hand,
            "exact": self.exact,
            "exact_seat_values": None if self.exact_seat_values is None else list(self.exact_seat_values),
            "exact_within_ci95": self.exact_within_ci95,
            "exact_note": self.exact_note,
            "aivat": None if self.aivat is None else self.aivat.to_json(),
        }


@dataclass(frozen=True)
class AgentScore:
    """An agent's exact NashConv and exploitability (``None`` with a note when it cannot be queried)."""

    name: str
    units: str
    nash_conv: float | None
    exploitability: float | None
    note: str

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.name,
            "units": self.units,
            "nash_conv": self.nash_conv,
            "exploitability": self.exploitability,
            "note": self.note,
        }


def provided_file(content: str) -> str:
    """The path of a temporary file holding a policy file's ``content``, named by its digest and written once: what a
    worker that cannot read the policy's own path loads instead (:attr:`MatchSpec.files`)."""
    path = Path(tempfile.gettempdir()) / f"cfr-agents-{hashlib.sha256(content.encode()).hexdigest()}.json"
    if not path.exists():
        write_atomic(path, content)
    return str(path)


class Agents:
    """Opponents and their exact strategies, built once per process and game."""

    def __init__(self) -> None:
        self._opponents: dict[tuple[str, str], Opponent] = {}
        self._strategies: dict[tuple[str, str], FloatArray | str] = {}
        self._hands: dict[tuple[str, str], holdem.HandStrategy] = {}
        self._placed: dict[tuple[str, str], tuple[PublicTree, holdem.Placed]] = {}
        self._paths: dict[str, str] = {}

    def provide(self, files: Mapping[str, str]) -> None:
        """Load the named policy files from these contents (written once to content-named temporary
        files) instead of from their paths, which this process may not be able to read."""
        for name, content in files.items():
            if name not in self._paths:
                self._paths[name] = provided_file(content)

    def opponent(self, name: str, game_id: str) -> Opponent:
        """The agent ``name`` for ``game_id``; on a game that runs on its public tree, one that cannot be asked for
        every hand at once is refused (:func:`eval.holdem.check_name`, :func:`eval.holdem.batched`)."""
        key = (name, game_id)
        if key not in self._opponents:
            holdem.check_name(name, game_id)
            opponent = load_opponent(self._paths.get(name, name), game_id)
            if opponent.game_id != canonical_game_id(game_id):
                raise InputError(f"agent {name!r} plays {opponent.game_id}, not {game_id}")
            if holdem.on_public_tree(game_id):
                self._hands[key] = holdem.batched(opponent.agent, name, game_id)
            self._opponents[key] = opponent
        return self._opponents[key]

    def strategy(self, name: str, game_id: str) -> FloatArray | str:
        key = (name, game_id)
        if key not in self._strategies:
            self._strategies[key] = _exact_strategy(self.opponent(name, game_id), load_tree(game_id))
        return self._strategies[key]

    def placed(self, name: str, game_id: str, tree: PublicTree) -> holdem.Placed:
        """The agent's strategy on a public tree of ``game_id`` (:func:`eval.holdem.strategy_array`)."""
        key = (name, game_id)
        self.opponent(name, game_id)
        kept = self._placed.get(key)
        if kept is None or kept[0] is not tree:
            kept = self._placed[key] = (tree, holdem.strategy_array(tree, self._hands[key]))
        return kept[1]

    def public_tree(self, names: tuple[str, ...], game_id: str) -> PublicTree:
        """The public tree to score these agents on (:func:`eval.holdem.tree_for`)."""
        for name in names:
            self.opponent(name, game_id)
        return holdem.tree_for(game_id, [self._hands[(name, game_id)] for name in names])

    def exact(self, names: tuple[str, str], game_id: str) -> HeadToHead | str:
        """The first agent's exact value against the second, or why there is none."""
        reason = no_tree(game_id)
        if reason:
            return reason
        if holdem.on_public_tree(game_id):
            tree = self.public_tree(names, game_id)
            first, second = (self.placed(name, game_id, tree) for name in names)
            return holdem.exact_head_to_head(tree, first, second)
        strategy_a, strategy_b = (self.strategy(name, game_id) for name in names)
        if isinstance(strategy_a, str):
            return strategy_a
        if isinstance(strategy_b, str):
            return strategy_b
        return exact_head_to_head(load_tree(game_id), strategy_a, strategy_b)

    def score(self, name: str, game_id: str) -> AgentScore:
        reason = no_tree(game_id)
        if reason:
            return AgentScore(name, adapters.load_game(game_id).units, None, None, reason)
        if holdem.on_public_tree(game_id):
            tree = self.public_tree((name,), game_id)
            placed = self.placed(name, game_id, tree)
            scored = public_exploitability(tree, placed.strategy, placed.placement, holdem.engine_of(tree))
            return AgentScore(name, tree.units, scored.nash_conv, scored.exploitability, "")
        compiled = load_tree(game_id)
        strategy = self.strategy(name, game_id)
        if isinstance(strategy, str):
            return AgentScore(name, compiled.units, None, None, strategy)
        result = exploitability_of_strategy(compiled, strategy)
        return AgentScore(name, compiled.units, result.nash_conv, result.exploitability, "")


def play_match(
    spec: MatchSpec, agents: Agents | None = None, *, show_progress: bool = False, log: str | None = None
) -> MatchReport:
    """Play ``spec`` and score it exactly where both agents can be queried; with ``log``, append every
    hand to the hand log at that path (:mod:`eval.hand_log`), its seats named as in ``spec.agents``.
    With ``spec.aivat``, the report carries the AIVAT estimate as well (:mod:`eval.aivat`)."""
    return play_scored(spec, agents, show_progress=show_progress, log=log)[0]


def no_tree(game_id: str) -> str:
    """Why an ``rlcard:`` game has no exact values (``rlcard:limit-holdem``: no compiled tree holds it); empty for
    every other game."""
    if not game_id.startswith(RLCARD_PREFIX):
        return ""
    game = adapters.load_game(game_id)
    return "" if not isinstance(game, RLCardGame) or game.compiled else f"{game_id} has no compiled tree"


def off_tree(game_id: str) -> str:
    """Why ``game_id`` has no compiled tree to score on (it has none, or it runs on its public tree); empty when
    it has one."""
    if no_tree(game_id):
        return "it has none"
    return "it runs on its public tree" if holdem.on_public_tree(game_id) else ""


def check_aivat_game(game_id: str) -> None:
    """Refuse AIVAT on a game with neither a compiled tree (:mod:`eval.aivat`) nor a hold'em engine
    (:mod:`eval.aivat_holdem`), and on PettingZoo's games, whose hands it does not read."""
    if game_id.startswith(PETTINGZOO_PREFIX):
        raise ParameterError("{aivat} reads hands of openspiel: and rlcard: games, not {game}", game=game_id)
    if off_tree(game_id) and holdem_engine_of(game_id) is None:
        raise ParameterError(
            "{aivat} works on the compiled tree or the hold'em engine; {game} has neither", game=game_id
        )


def holdem_engine_of(game_id: str) -> HoldemEngine | None:
    """The hold'em engine of a limit hold'em game (:func:`adapters.holdem.engine.holdem_engine`), ``None`` else."""
    try:
        return holdem_engine(game_id)
    except (InputError, UnsupportedGameError):
        return None


def _known_query(agents: Agents, game_id: str, name: str, engine: HoldemEngine) -> RangeQuery | str:
    """Agent ``name`` asked for its strategy on the engine (:func:`eval.ranges.range_query`), or why not."""
    rules = engine.rules
    try:
        agent = agents.opponent(name, game_id).agent
        return range_query(agent, engine, private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards), name)
    except InputError as error:
        return str(error)


def knows_a_strategy(agents: Agents, game_id: str, names: tuple[str, str]) -> bool:
    """Whether either agent's strategy can be queried (what AIVAT needs)."""
    engine = holdem_engine_of(game_id) if off_tree(game_id) else None
    if engine is not None:
        return any(not isinstance(_known_query(agents, game_id, name, engine), str) for name in names)
    return any(not isinstance(agents.strategy(name, game_id), str) for name in names)


def known_scorer(
    agents: Agents, game_id: str, names: tuple[str, str], rng: np.random.Generator
) -> tuple[int, HandScorer]:
    """The index in ``names`` of the agent whose strategy AIVAT uses and the scorer of the game's hands: on the
    compiled tree, :class:`~eval.aivat.Aivat` with the exact strategy of ``A`` when it can be queried, else ``B``'s;
    on the hold'em engine, :class:`~eval.aivat_holdem.HoldemAivat` asking the agent that answers for every hand at
    once if one does, else ``A`` if it can be asked, else ``B`` (``rng`` drawing the boards of its sampled
    equities), and the other agent too if it can be asked (its other hands imagined when it answers for every hand
    at once or is cheap to ask hand by hand). Refused in one line when neither agent can be queried, or the game
    has neither."""
    check_aivat_game(game_id)
    engine = holdem_engine_of(game_id) if off_tree(game_id) else None
    if engine is not None:
        queries = [_known_query(agents, game_id, name, engine) for name in names]
        asked = [(index, query) for index, query in enumerate(queries) if not isinstance(query, str)]
        if asked:  # one that answers for every hand at once first: its other hands are imagined
            index, query = min(asked, key=lambda found: isinstance(found[1], PerHandQuery))
            other = next((found for i, found in asked if i != index), None)  # its moves are corrected too
            return index, HoldemAivat(engine, query, rng, other)
        reasons = [str(query) for query in queries]
    else:
        reasons = []
        for index, name in enumerate(names):
            strategy = agents.strategy(name, game_id)
            if not isinstance(strategy, str):
                return index, Aivat.build(load_tree(game_id), strategy)
            reasons.append(strategy)
    raise ParameterError(
        "{aivat} needs the strategy of one agent, and neither has one: {a!r} ({why_a}); {b!r} ({why_b})",
        a=names[0],
        b=names[1],
        why_a=reasons[0],
        why_b=reasons[1],
    )


def play_scored(
    spec: MatchSpec,
    agents: Agents | None = None,
    *,
    show_progress: bool = False,
    log: str | None = None,
    keep_hands: bool = False,
) -> tuple[MatchReport, AivatRecorder | None]:
    """:func:`play_match`, and with ``spec.aivat`` the recorder that scored every hand (each hand's plain
    payoff and AIVAT value kept with ``keep_hands``)."""
    agents = agents or Agents()
    pairs = check_hands(spec.hands)
    if spec.game_id.startswith(PETTINGZOO_PREFIX) and (log is not None or spec.aivat):
        raise InputError(f"hand logs and AIVAT read hands of openspiel: and rlcard: games, not {spec.game_id}")
    missing = off_tree(spec.game_id)
    if missing and log is not None:
        raise InputError(f"hand logs are read on the compiled tree; {spec.game_id}: {missing}")
    deal_seq, seq_a, seq_b, seq_equity = spec.seed_sequence().spawn(4)
    known = known_scorer(agents, spec.game_id, spec.agents, np.random.default_rng(seq_equity)) if spec.aivat else None
    first, second = (agents.opponent(name, spec.game_id) for name in spec.agents)
    deal_rng, rng_a, rng_b = (np.random.default_rng(s) for s in (deal_seq, seq_a, seq_b))
    sampled: MatchResult
    recorder: AivatRecorder | None = None
    with contextlib.ExitStack() as stack:
        hands: HandReader | None = None if log is None else HandLog(log, spec.game_id, spec.agents)
        if known is not None:
            index, scorer = known
            kind = HoldemAivatRecorder if isinstance(scorer, HoldemAivat) else AivatRecorder
            recorder = kind(spec.game_id, spec.agents, scorer, index, pairs, log=hands, keep_hands=keep_hands)
            hands = recorder
        if hands is not None:
            stack.enter_context(hands)
        if spec.tables:
            if not spec.game_id.startswith(RLCARD_PREFIX):
                raise InputError("matches by strategy tables are played in RLCard environments")
            table_a = _table_agent(agents, spec.agents[0], spec.game_id, rng_a)
            table_b = _table_agent(agents, spec.agents[1], spec.game_id, rng_b)
            sampled = play_rlcard_match(
                spec.game_id, table_a, table_b, pairs, deal_rng, show_progress=show_progress, log=hands
            )
        elif spec.game_id.startswith(RLCARD_PREFIX):
            game = adapters.load_game(spec.game_id)
            assert isinstance(game, RLCardGame)
            player_a, player_b = (
                rlcard_seat(opponent.agent, game, rng) for opponent, rng in ((first, rng_a), (second, rng_b))
            )
            sampled = play_rlcard_match(
                spec.game_id,
                player_a,
                player_b,
                pairs,
                deal_rng,
                show_progress=show_progress,
                log=hands,
            )
        elif spec.game_id.startswith(PETTINGZOO_PREFIX):
            seat_a, seat_b = (
                pettingzoo_seat(opponent.agent, spec.game_id, rng)
                for opponent, rng in ((first, rng_a), (second, rng_b))
            )
            sampled = play_pettingzoo_match(spec.game_id, seat_a, seat_b, pairs, deal_rng, show_progress=show_progress)
        else:
            policies = [openspiel_seat(opponent.agent, spec.game_id) for opponent in (first, second)]
            sampled = play_openspiel_match(
                spec.game_id,
                policies[0],
                policies[1],
                pairs,
                deal_rng,
                (rng_a, rng_b),
                show_progress=show_progress,
                log=hands,
            )
    value = agents.exact(spec.agents, spec.game_id)
    exact, seat_values, note = (None, None, value) if isinstance(value, str) else (value.value, value.seat_values, "")
    report = MatchReport(
        game_id=spec.game_id,
        agents=spec.agents,
        units=sampled.units,
        hands=sampled.hands,
        mean=sampled.mean,
        standard_error=sampled.standard_error,
        ci95=sampled.ci95,
        exact=exact,
        exact_seat_values=seat_values,
        exact_note=note,
        big_blind=holdem.big_blind(spec.game_id, sampled.units),
        aivat=None if recorder is None else recorder.estimate(),
    )
    return report, recorder


def rlcard_seat(agent: Agent, game: RLCardGame, rng: np.random.Generator) -> RLCardAgent:
    """``agent`` as a player of RLCard's env of ``game``, sampling from ``rng``, as a match seats it: its exact
    strategy played as a table on a game with a compiled tree, else the agent in the env itself."""
    return agent.rlcard_player(load_tree(game.game_id), rng) if game.compiled else agent.rlcard_env_player(game, rng)


def pettingzoo_seat(agent: Agent, game_id: str, rng: np.random.Generator) -> RLCardAgent:
    """``agent`` as a player of the PettingZoo env of ``game_id`` (a ``pettingzoo:`` id), sampling from ``rng``, as a
    match seats it: its exact strategy on the compiled tree, moved to the RLCard game the env wraps
    (:meth:`~cfr_agents.Policy.for_game` checks that the two have the same strategic form) and played from RLCard's
    state of its player in the env."""
    game = adapters.load_game(game_id)
    assert isinstance(game, PettingZooGame)
    return agent.policy(load_tree(game_id)).for_game(game.rlcard.game_id).rlcard_agent(rng)


def openspiel_seat(agent: Agent, game_id: str) -> OpenSpielPolicy:
    """``agent`` as the OpenSpiel policy a match of ``game_id`` seats: its own player on a game that runs on its
    public tree, else :meth:`~eval.agents.Agent.match_policy`."""
    policy: OpenSpielPolicy = agent.openspiel_player() if holdem.on_public_tree(game_id) else agent.match_policy()
    return policy


def _exact_strategy(opponent: Opponent, tree: CompiledTree) -> FloatArray | str:
    """The opponent's exact strategy on ``tree``, or why it has none."""
    try:
        return opponent.agent.strategy(tree)
    except AgentQueryError as error:
        return str(error)


def _table_agent(agents: Agents, name: str, game_id: str, rng: np.random.Generator) -> PolicyAgent:
    strategy = agents.strategy(name, game_id)
    if isinstance(strategy, str):
        raise InputError(f"{name!r} has no exact strategy table: {strategy}")
    policy = Policy.from_strategy(load_tree(game_id), strategy, algorithm=name, parameters={}, iterations=0)
    return PolicyAgent(policy, rng)


def describe(report: MatchReport) -> str:
    """The report as a few lines of text."""
    a, b = report.agents
    low, high = report.ci95
    mbb = report.mbb_per_hand
    lines = [
        f"{a} vs {b} on {report.game_id}, {report.hands:,} hands (duplicate pairs, seats swapped):",
        f"  sampled {report.mean:+.4f} {report.units}/hand, standard error {report.standard_error:.4f}, "
        f"95% CI [{low:+.4f}, {high:+.4f}]"
        + (f"; {mbb:+.1f} mbb/hand (CI [{report.mbb(low):+.1f}, {report.mbb(high):+.1f}])" if mbb is not None else ""),
    ]
    if report.aivat is not None:
        estimate = report.aivat
        low, high = estimate.ci95
        lines.append(
            f"  AIVAT   {estimate.mean:+.4f} {report.units}/hand, standard error {estimate.standard_error:.4f}, "
            f"95% CI [{low:+.4f}, {high:+.4f}]"
            + (f"; {report.mbb(estimate.mean):+.1f} mbb/hand" if mbb is not None else "")
            + f" (known strategy: {estimate.known}"
            + (
                f"; {(report.standard_error / estimate.standard_error) ** 2:.1f}x fewer hands than sampled for this "
                "interval)"
                if estimate.standard_error > 0
                else ")"
            )
        )
    if report.exact is None:
        lines.append(f"  exact: not available ({report.exact_note})")
    else:
        lines.append(
            f"  exact   {report.exact:+.4f} {report.units}/hand"
            + (f" ({exact_mbb:+.1f} mbb/hand)" if (exact_mbb := report.mbb(report.exact)) is not None else "")
            + f": {exact_verdict(report.exact_within_ci95, report.exact_error_in_standard_errors, report.hands)}"
        )
    return "\n".join(lines)


def exact_against_sample(
    exact: float | None, mean: float, standard_error: float, ci95: tuple[float, float]
) -> tuple[bool | None, float | None]:
    """Whether ``exact`` lies inside the sampled 95% interval ``ci95``, and ``|mean - exact| / standard error``; both
    ``None`` without an exact value, or when the interval is a point (a standard error of 0: every sample paid the
    same)."""
    if exact is None or standard_error == 0:
        return None, None
    return ci95[0] <= exact <= ci95[1], abs(mean - exact) / standard_error


def exact_verdict(within: bool | None, distance: float | None, hands: int) -> str:
    """Where an exact value lies against the sampled 95% interval of ``hands`` hands: ``within`` it or not (``None``
    when the interval is a point), ``distance`` standard errors from the mean."""
    if within is None:  # every sample paid the same
        return f"standard error 0 from {hands:,} hands: no interval to check against"
    verdict = ("inside" if within else "outside") + " the sampled 95% CI"
    if distance is not None and math.isfinite(distance):
        verdict += f" ({distance:.2f} standard errors away)"
    return verdict


__all__ = [
    "MIN_HANDS",
    "AgentScore",
    "Agents",
    "MatchReport",
    "MatchSpec",
    "check_aivat_game",
    "check_hands",
    "describe",
    "exact_verdict",
    "known_scorer",
    "knows_a_strategy",
    "off_tree",
    "play_match",
    "play_scored",
    "provided_file",
]
