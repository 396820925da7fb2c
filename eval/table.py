r"""Matches of ``n`` seats: one agent per seat of an n-player (or general-sum) OpenSpiel game, played in OpenSpiel's
own game, every seat order of the agents on every deal, beside each agent's exact value.

A match of agents :math:`0, \dots, n-1` is dealt :math:`K` times. Each deal is played once in every seat order
:math:`\rho` (agent :math:`\rho(p)` in seat :math:`p`, :math:`n!` orders), every hand of the deal drawing its chance
outcomes from a fresh generator seeded with the deal's seed (:func:`eval.environments.play_openspiel_hand`): the
n-player form of swapping seats over duplicate deals, so luck of the cards cancels out. The sample unit is one deal
in all its orders: agent :math:`k`'s sample is its mean payoff over them,
:math:`y_{k,d} = \frac{1}{n!} \sum_\rho u_{\rho^{-1}(k)}(\text{hand } d, \rho)`; the report gives :math:`\bar y_k`,
its standard error :math:`s_{y_k} / \sqrt{K}` and the normal 95% interval, for every agent.

Randomness: the seed is a :class:`numpy.random.SeedSequence`; its first child draws the deals, child :math:`k + 1`
is agent :math:`k`'s own stream. An agent is any name :func:`eval.opponents.load_opponent` accepts for the game
(``random``, OpenSpiel's solvers ``openspiel-cfr[+]:N``, ``openspiel-mccfr-es:N``, ``openspiel-mccfr-os:N``, or a
policy file trained on it) and is asked as :meth:`eval.agents.Agent.match_policy` answers.

The exact value is computed on the compiled tree from the agents' exact strategies :math:`\sigma_k`
(:meth:`eval.agents.Agent.strategy`): in order :math:`\rho`, seat :math:`p` plays agent :math:`\rho(p)`'s rows of
player :math:`p`, with realization plans :math:`x_p`, and seat :math:`p` is worth
:math:`v_p(\rho) = \sum_z \pi_c(z) \prod_j x_j(z)\, u_p(z)` (:func:`eval.exploitability.policy_values`). Agent
:math:`k`'s exact value is :math:`\frac{1}{n!} \sum_\rho v_{\rho^{-1}(k)}(\rho)`, the expectation of its sample; its
value in seat :math:`p` averages over the :math:`(n-1)!` orders that seat it there. In a constant-sum game the
agents' values add up to the constant, sampled and exact.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm import tqdm

import adapters
from adapters.games import canonical_game_id
from adapters.inputs import InputError, ParameterError
from adapters.openspiel import OpenSpielGame
from cfr_agents.tree import CompiledTree, FloatArray, load_tree
from eval.agents import AgentQueryError
from eval.environments import PairSamples, play_openspiel_hand
from eval.exploitability import policy_values
from eval.match import exact_against_sample, exact_verdict, provided_file
from eval.opponents import Opponent, load_opponent

TWO_PLAYERS = 2


def takes_seats(game_id: str) -> bool:
    """Whether matches of ``game_id`` are played here: a game of more than two players, or a general-sum game. A game
    the n-player interface cannot load (unknown, or not sequential) is left to the two-player path, which refuses it
    in its own words."""
    try:
        game = adapters.load_game(game_id, any_players=True)
    except InputError:
        return False
    return game.num_players != TWO_PLAYERS or not game.zero_sum


def seat_orders(seats: int) -> list[tuple[int, ...]]:
    """Every seat order of ``seats`` agents: ``order[p]`` is the agent in seat ``p``, in lexicographic order."""
    return list(itertools.permutations(range(seats)))


def check_table_hands(hands: int, seats: int) -> int:
    """The number of deals for ``hands`` hands at a table of ``seats``: a multiple of ``seats!`` (each deal is played
    in every seat order), at least two deals (to estimate a standard error)."""
    orders = math.factorial(seats)
    if hands < 2 * orders:
        raise ParameterError(
            "{hands} must be at least {least} at a table of {seats} (two deals, each in its {orders} seat orders, to "
            "estimate a standard error), got {given}",
            least=2 * orders,
            seats=seats,
            orders=orders,
            given=hands,
        )
    if hands % orders:
        raise ParameterError(
            "{hands} must be a multiple of {orders}: each deal is played in every seat order of {seats} agents, got "
            "{given}",
            orders=orders,
            seats=seats,
            given=hands,
        )
    return hands // orders


@dataclass(frozen=True)
class TableSpec:
    """A match of ``n`` seats as plain data: what a worker process needs to play it."""

    game_id: str
    agents: tuple[str, ...]
    hands: int
    seed: int
    spawn_key: tuple[int, ...] = ()
    """The position of this match's :class:`~numpy.random.SeedSequence` under ``seed`` (a tournament's table index);
    empty for a lone match."""
    files: Mapping[str, str] = field(default_factory=dict)
    """Contents of policy files among ``agents``, by name, for workers that cannot read the paths."""

    def seed_sequence(self) -> np.random.SeedSequence:
        return np.random.SeedSequence(self.seed, spawn_key=self.spawn_key)


class Seats:
    """The agents of one n-player game and their exact strategies, built once per process."""

    def __init__(self, game_id: str) -> None:
        game = adapters.load_game(game_id, any_players=True)
        if not isinstance(game, OpenSpielGame):
            raise InputError(
                f"matches of n seats are played in OpenSpiel's games, not {game_id}: RLCard's env cannot play more "
                "than two players"
            )
        self.game = game
        self.game_id = canonical_game_id(game_id)
        self._opponents: dict[str, Opponent] = {}
        self._strategies: dict[str, FloatArray | str] = {}
        self._paths: dict[str, str] = {}

    @property
    def tree(self) -> CompiledTree:
        return load_tree(self.game_id, any_players=True)

    def provide(self, files: Mapping[str, str]) -> None:
        """Load the named policy files from these contents (:func:`eval.match.provided_file`) instead of their
        paths."""
        for name, content in files.items():
            self._paths.setdefault(name, provided_file(content))

    def opponent(self, name: str) -> Opponent:
        """The agent ``name`` for this game; one of another game, or of a family that does not play it, is refused."""
        if name not in self._opponents:
            opponent = load_opponent(self._paths.get(name, name), self.game_id, any_players=True)
            if opponent.game_id != self.game_id:
                raise InputError(f"agent {name!r} plays {opponent.game_id}, not {self.game_id}")
            self._opponents[name] = opponent
        return self._opponents[name]

    def check(self, agents: Sequence[str]) -> None:
        """Refuse a table that does not seat one agent per player, and any agent that does not load."""
        if len(agents) != self.game.num_players:
            raise InputError(
                f"{self.game_id} has {self.game.num_players} players: give {self.game.num_players} agents, one per "
                f"seat, got {len(agents)}"
            )
        for name in agents:
            self.opponent(name)

    def strategy(self, name: str) -> FloatArray | str:
        """The agent's exact strategy on the compiled tree, or why it has none."""
        if name not in self._strategies:
            try:
                self._strategies[name] = self.opponent(name).agent.strategy(self.tree)
            except AgentQueryError as error:
                self._strategies[name] = str(error)
        return self._strategies[name]


def exact_seat_values(tree: CompiledTree, strategies: Sequence[FloatArray]) -> FloatArray:
    """``V[k, p]``: agent ``k``'s exact expected payoff in seat ``p``, averaged over the :math:`(n-1)!` seat orders
    that put it there, each order's profile taking player ``p``'s rows from the strategy of the agent in seat ``p``
    (see the module docstring). Agent ``k``'s exact value is the mean of row ``k``."""
    seats = tree.num_players
    total = np.zeros((seats, seats))
    for order in seat_orders(seats):
        profile = np.zeros_like(strategies[0])
        for seat, agent in enumerate(order):
            rows = tree.player_slice(seat)
            profile[rows] = strategies[agent][rows]
        values = policy_values(tree, tree.realization_plan(profile))
        for seat, agent in enumerate(order):
            total[agent, seat] += values[seat]
    seat_values: FloatArray = total / math.factorial(seats - 1)
    return seat_values


@dataclass(frozen=True)
class SeatResult:
    """One agent's payoff per hand at a table: sampled over the deals (mean, standard error, 95% CI) and exact."""

    agent: str
    mean: float
    standard_error: float
    ci95: tuple[float, float]
    exact: float | None
    """The exact value over every seat order, or ``None`` when an agent of the table cannot be queried exactly."""
    exact_seat_values: tuple[float, ...] | None
    """The exact value in each seat."""

    @property
    def exact_within_ci95(self) -> bool | None:
        """Whether the exact value lies inside the sampled 95% interval (:func:`eval.match.exact_against_sample`)."""
        return exact_against_sample(self.exact, self.mean, self.standard_error, self.ci95)[0]

    @property
    def exact_error_in_standard_errors(self) -> float | None:
        """``|mean - exact| / standard error`` (:func:`eval.match.exact_against_sample`)."""
        return exact_against_sample(self.exact, self.mean, self.standard_error, self.ci95)[1]

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "mean": self.mean,
            "standard_error": self.standard_error,
            "ci95": list(self.ci95),
            "exact": self.exact,
            "exact_seat_values": None if self.exact_seat_values is None else list(self.exact_seat_values),
            "exact_within_ci95": self.exact_within_ci95,
        }


@dataclass(frozen=True)
class TableReport:
    """Every agent's payoff per hand at one table, in :attr:`units`."""

    game_id: str
    agents: tuple[str, ...]
    units: str
    hands: int
    deals: int
    results: tuple[SeatResult, ...]
    """One per agent, in the order of :attr:`agents`."""
    exact_note: str
    """Why the exact values are missing; empty when they are present."""

    @property
    def seat_orders(self) -> int:
        return math.factorial(len(self.agents))

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game_id,
            "agents": list(self.agents),
            "units": self.units,
            "hands": self.hands,
            "deals": self.deals,
            "seat_orders": self.seat_orders,
            "results": [result.to_json() for result in self.results],
            "exact_note": self.exact_note,
        }


def play_table(spec: TableSpec, seats: Seats | None = None, *, show_progress: bool = False) -> TableReport:
    """Play ``spec``: every deal in every seat order (module docstring), and score it exactly where every agent can
    be queried."""
    seats = seats or Seats(spec.game_id)
    seats.provide(spec.files)
    seats.check(spec.agents)
    count = len(spec.agents)
    deals = check_table_hands(spec.hands, count)
    policies = [seats.opponent(name).agent.match_policy() for name in spec.agents]
    deal_seq, *agent_seqs = spec.seed_sequence().spawn(1 + count)
    deal_rng = np.random.default_rng(deal_seq)
    rngs = [np.random.default_rng(seq) for seq in agent_seqs]
    orders = seat_orders(count)
    samples = [PairSamples(deals) for _ in range(count)]
    for _ in tqdm(range(deals), disable=not show_progress, unit="deal", leave=False, mininterval=0.5):
        deal_seed = int(deal_rng.integers(2**31))
        payoffs = np.zeros(count)
        for order in orders:
            state = play_openspiel_hand(
                seats.game.pyspiel_game, [policies[k] for k in order], [rngs[k] for k in order], deal_seed
            )
            payoffs[list(order)] += state.returns()
        for agent, sample in enumerate(samples):
            sample.add(float(payoffs[agent]) / len(orders))
    strategies = [seats.strategy(name) for name in spec.agents]
    reasons = [f"{name!r}: {why}" for name, why in zip(spec.agents, strategies, strict=True) if isinstance(why, str)]
    exact = None if reasons else exact_seat_values(seats.tree, [s for s in strategies if not isinstance(s, str)])
    results = []
    for agent, (name, sample) in enumerate(zip(spec.agents, samples, strict=True)):
        mean, standard_error, ci95 = sample.estimate()
        results.append(
            SeatResult(
                name,
                mean,
                standard_error,
                ci95,
                None if exact is None else float(exact[agent].mean()),
                None if exact is None else tuple(float(v) for v in exact[agent]),
            )
        )
    return TableReport(
        seats.game_id, spec.agents, seats.game.units, spec.hands, deals, tuple(results), "; ".join(reasons)
    )


def describe(report: TableReport) -> str:
    """The report as a few lines of text: one per agent, sampled then exact."""
    width = max(len(name) for name in report.agents)
    lines = [
        f"{', '.join(report.agents)} on {report.game_id}, {report.hands:,} hands ({report.deals:,} deals, each in all "
        f"{report.seat_orders} seat orders); payoff per hand in {report.units}:"
    ]
    for result in report.results:
        low, high = result.ci95
        line = (
            f"  {result.agent:<{width}}  sampled {result.mean:+.4f}, standard error {result.standard_error:.4f}, "
            f"95% CI [{low:+.4f}, {high:+.4f}]"
        )
        if result.exact is not None:
            verdict = exact_verdict(result.exact_within_ci95, result.exact_error_in_standard_errors, report.hands)
            line += f"; exact {result.exact:+.4f}: {verdict}"
        lines.append(line)
    if report.exact_note:
        lines.append(f"  exact: not available ({report.exact_note})")
    return "\n".join(lines)


__all__ = [
    "SeatResult",
    "Seats",
    "TableReport",
    "TableSpec",
    "check_table_hands",
    "describe",
    "exact_seat_values",
    "play_table",
    "seat_orders",
    "takes_seats",
]
