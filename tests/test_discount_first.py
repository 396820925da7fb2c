"""DCFR+ and PDCFR+ (Xu et al. 2024) against a direct transcription of their recursions.

The reference below walks OpenSpiel's game tree recursively and keeps one dictionary per infoset, as
the paper states the updates (alternating: traverse for player ``i``, then update ``i``'s infosets):

* DCFR+: :math:`R^t = [R^{t-1} d(t-1) + r^t]^+`, :math:`\\sigma^{t+1} \\propto [R^t]^+`;
* PDCFR+: the same :math:`R^t`, and :math:`\\sigma^{t+1} \\propto [R^t d(t) + r^t]^+`;
* both: :math:`C^t = C^{t-1} ((t-1)/t)^\\gamma + \\pi_i(I)\\,\\sigma^t(I)`;

with :math:`d(s) = s^\\alpha / (s^\\alpha + 1)`. From the same state, our compiled solver's next iterate must be the
recursion's.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from cfr_agents import make_solver
from cfr_agents.solvers import ALGORITHMS
from cfr_agents.tree import CompiledTree
from tests.support import run_cli, tree


def d(s: float, alpha: float) -> float:
    return float(s**alpha / (s**alpha + 1.0))


@dataclass
class Infoset:
    player: int
    actions: list[int]
    policy: dict[int, float]
    regret: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    instant: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    cumulative: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    reach: float = 0.0
    total: float = 0.0


class Reference:
    def __init__(self, game: pyspiel.Game, alpha: float, gamma: float, predictive: bool) -> None:
        self.game, self.alpha, self.gamma, self.predictive = game, alpha, gamma, predictive
        self.infosets: dict[str, Infoset] = {}
        self.t = 0

    def infoset(self, state: pyspiel.State) -> Infoset:
        key = state.information_state_string()
        if key not in self.infosets:
            actions = state.legal_actions()
            self.infosets[key] = Infoset(state.current_player(), actions, {a: 1.0 / len(actions) for a in actions})
        return self.infosets[key]

    def walk(self, state: pyspiel.State, player: int, mine: float, theirs: float) -> float:
        if state.is_terminal():
            return float(state.returns()[player])
        if state.is_chance_node():
            return float(
                sum(p * self.walk(state.child(a), player, mine, theirs * p) for a, p in state.chance_outcomes())
            )
        node = self.infoset(state)
        if state.current_player() != player:
            return sum(
                node.policy[a] * self.walk(state.child(a), player, mine, theirs * node.policy[a]) for a in node.actions
            )
        values = {a: self.walk(state.child(a), player, mine * node.policy[a], theirs) for a in node.actions}
        value = sum(node.policy[a] * values[a] for a in node.actions)
        for a in node.actions:
            node.instant[a] += theirs * (values[a] - value)
        node.reach = mine  # pi_i(I): the same at every history of I (perfect recall)
        return value

    def iterate(self) -> None:
        self.t += 1
        t = self.t
        for player in range(2):
            for node in self.infosets.values():
                node.instant, node.reach = defaultdict(float), 0.0
            self.walk(self.game.new_initial_state(), player, 1.0, 1.0)
            for node in self.infosets.values():
                if node.player != player:
                    continue
                for a in node.actions:
                    node.regret[a] = max(node.regret[a] * (d(t - 1, self.alpha) if t > 1 else 1.0) + node.instant[a], 0)
                for a in node.actions:
                    scale = ((t - 1) / t) ** self.gamma if t > 1 else 0.0
                    node.cumulative[a] = node.cumulative[a] * scale + node.reach * node.policy[a]
                if self.predictive:
                    target = {a: max(node.regret[a] * d(t, self.alpha) + node.instant[a], 0.0) for a in node.actions}
                else:
                    target = {a: max(node.regret[a], 0.0) for a in node.actions}
                total = node.total = sum(target.values())
                node.policy = {a: target[a] / total if total > 0 else 1.0 / len(node.actions) for a in node.actions}

    def load(self, compiled: CompiledTree, state: dict[str, np.ndarray]) -> None:
        r"""Take over a compiled solver's state: its current strategy, :math:`[R^t]^+`, and its average
        numerator, which weights iteration :math:`s` by :math:`s^\gamma` where the paper's
        :math:`C^t` weights it by :math:`(s/t)^\gamma`."""
        t = int(state["scalars"][0])
        self.t = t
        for key, node in self.infosets.items():
            row = compiled.index[key]
            for column, a in enumerate(compiled.infoset_actions[row]):
                node.policy[a] = float(state["sigma"][row, column])
                node.regret[a] = max(float(state["regret"][row, column]), 0.0)
                node.cumulative[a] = float(state["cumulative"][row, column]) / t**self.gamma

    def average(self, compiled: CompiledTree) -> np.ndarray:
        """The normalised :math:`C^t`, as an ``(N, A)`` array in the compiled tree's rows."""
        average = np.zeros(compiled.action_mask.shape)
        for key, node in self.infosets.items():
            row = compiled.index[key]
            total = sum(node.cumulative.values())
            for column, a in enumerate(compiled.infoset_actions[row]):
                average[row, column] = node.cumulative[a] / total if total > 0 else 1.0 / len(node.actions)
        return average

    def targets(self, compiled: CompiledTree) -> np.ndarray:
        """Each infoset's regret-matching denominator at the last update (0: the strategy is uniform)."""
        totals = np.zeros(compiled.num_infosets)
        for key, node in self.infosets.items():
            totals[compiled.index[key]] = node.total
        return totals


@pytest.mark.parametrize(("algorithm", "predictive"), [("dcfr+", False), ("pdcfr+", True)])
@pytest.mark.parametrize("game", ["kuhn_poker", "leduc_poker"])
def test_each_update_equals_the_papers_recursion(algorithm: str, predictive: bool, game: str) -> None:
    """From the same state, one iteration of ours and one of the recursion agree: regrets and average to
    1e-12, and the next strategy wherever regret matching's denominator is not a rounding-level tie (a
    mathematically zero regret computed as 1e-17 in one order and 0 in another picks another strategy)."""
    compiled = tree(f"openspiel:{game}")
    rule = ALGORITHMS[algorithm]
    reference = Reference(pyspiel.load_game(game), rule.alpha, rule.gamma, predictive)
    solver = make_solver(compiled, algorithm)
    reference.iterate()  # the first iteration from the uniform strategy: no state to share yet
    solver.iterate()
    for _ in range(3 if game == "leduc_poker" else 10):
        state = solver.state()
        reference.load(compiled, state)
        reference.iterate()
        solver.iterate()
        ours = solver.state()
        regrets = np.zeros_like(ours["regret"])
        current = np.zeros_like(ours["sigma"])
        for key, node in reference.infosets.items():
            row = compiled.index[key]
            for column, a in enumerate(compiled.infoset_actions[row]):
                regrets[row, column], current[row, column] = node.regret[a], node.policy[a]
        np.testing.assert_allclose(np.maximum(ours["regret"], 0.0), regrets, atol=1e-12)
        decided = reference.targets(compiled) > 1e-9
        np.testing.assert_allclose(ours["sigma"][decided], current[decided], atol=1e-12)
        assert decided.mean() > 0.5
        np.testing.assert_allclose(solver.average_strategy(), reference.average(compiled), atol=1e-12)


@pytest.mark.parametrize("algorithm", ["dcfr+", "pdcfr+"])
def test_they_converge_and_refuse_sampling(algorithm: str) -> None:
    from adapters.inputs import InputError
    from eval import exploitability_of_strategy

    compiled = tree("openspiel:leduc_poker")
    solver = make_solver(compiled, algorithm)
    values = []
    for iterations in (100, 2000):
        solver.run(iterations - solver.iteration)
        values.append(exploitability_of_strategy(compiled, solver.average_strategy()).nash_conv)
    assert values[1] < values[0] / 10 and values[1] < 1e-3
    with pytest.raises(InputError, match=r"full tree only|does not combine with sampling"):
        make_solver(compiled, algorithm, sampling="external", rng=np.random.default_rng(0))


def test_the_command_line_sets_their_alpha_and_gamma(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    argv = ["train", "--game", "openspiel:kuhn_poker", "--algo", "pdcfr+", "--iterations", "20", "--quiet"]
    assert run_cli([*argv, "--alpha", "2", "--gamma", "3", "--out", str(out)]).status == 0
    parameters = json.loads(out.read_text())["parameters"]
    assert (parameters["alpha"], parameters["gamma"], parameters["discount_first"]) == (2.0, 3.0, True)
