"""HS-PCFR+ (Zhang, McAleer & Sandholm 2024) against a direct transcription of its recursion.

The paper's HS-PCFR+(30) is Predictive CFR+ whose average strategy follows the hyperparameter schedule
:math:`\\mathrm{HS}_\\gamma(t) = 30 - 5t/T` (:math:`T`: the run's number of iterations):

* :math:`R^t = [R^{t-1} + r^t]^+` and :math:`\\sigma^{t+1} \\propto [R^t + r^t]^+` (PCFR+'s iterates);
* :math:`C^{t+1} = C^t (t/(t+1))^{\\gamma_t} + \\pi_i(I)\\,\\sigma^{t+1}(I)` with :math:`\\gamma_t = 30 - 5t/T`.

The reference below walks OpenSpiel's game tree recursively (alternating updates, one dictionary per
infoset, as :mod:`tests.test_discount_first` does for DCFR+) and multiplies by the paper's factors one
iteration at a time. From the same state, our compiled solver's next iterate must be the recursion's.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from adapters.inputs import InputError
from cfr_agents import make_solver
from cfr_agents.checkpoint import load_checkpoint, save_checkpoint
from cfr_agents.solvers import ALGORITHMS, UpdateRule
from cfr_agents.solvers.full_tree import normalise
from cfr_agents.tree import CompiledTree
from tests.support import run_cli, tree
from tests.test_discount_first import Reference

HS = ALGORITHMS["hs-pcfr+"]


def paper_gamma(s: int, start: float, horizon: int) -> float:
    """:math:`\\mathrm{HS}_\\gamma(s) = \\gamma_0 - 5 s/T`; past :math:`T` (beyond the paper) it stays at
    :math:`\\gamma_0 - 5`."""
    return start - 5.0 * min(s, horizon) / horizon


def paper_log_scale(t: int, start: float, horizon: int) -> float:
    """:math:`\\ln \\prod_{s=1}^{t-1} ((s+1)/s)^{\\gamma_s}`: how much more iteration :math:`t` weighs than
    iteration 1."""
    return sum(paper_gamma(s, start, horizon) * math.log((s + 1) / s) for s in range(1, t))


class HSReference(Reference):
    """PCFR+'s iterates, and the average as the paper's recursion with a scheduled exponent."""

    def __init__(self, game: pyspiel.Game, start: float, horizon: int) -> None:
        super().__init__(game, alpha=math.inf, gamma=start, predictive=True)
        self.start, self.horizon = start, horizon

    def iterate(self) -> None:
        self.t += 1
        t = self.t
        scale = (((t - 1) / t) ** paper_gamma(t - 1, self.start, self.horizon)) if t > 1 else 0.0
        for player in range(2):
            for node in self.infosets.values():
                node.instant, node.reach = defaultdict(float), 0.0
            self.walk(self.game.new_initial_state(), player, 1.0, 1.0)
            for node in self.infosets.values():
                if node.player != player:
                    continue
                for a in node.actions:
                    node.regret[a] = max(node.regret[a] + node.instant[a], 0.0)  # R^t = [R^{t-1} + r^t]^+
                    node.cumulative[a] = node.cumulative[a] * scale + node.reach * node.policy[a]
                target = {a: max(node.regret[a] + node.instant[a], 0.0) for a in node.actions}  # [R^t + r^t]^+
                total = node.total = sum(target.values())
                node.policy = {a: target[a] / total if total > 0 else 1.0 / len(node.actions) for a in node.actions}

    def load(self, compiled: CompiledTree, state: dict[str, np.ndarray]) -> None:
        r"""Take over a compiled solver's state. Its average numerator weights iteration :math:`s` by
        :math:`e^{L_s - K}` (``K = scalars[1]``), the paper's :math:`C^t` by :math:`e^{L_s - L_t}`."""
        t = int(state["scalars"][0])
        self.t = t
        factor = math.exp(state["scalars"][1] - paper_log_scale(t, self.start, self.horizon))
        for key, node in self.infosets.items():
            row = compiled.index[key]
            for column, a in enumerate(compiled.infoset_actions[row]):
                node.policy[a] = float(state["sigma"][row, column])
                node.regret[a] = float(state["regret"][row, column])
                node.cumulative[a] = float(state["cumulative"][row, column]) * factor


@pytest.mark.parametrize(
    ("game", "rule", "steps"),
    [
        ("kuhn_poker", HS, 10),
        ("kuhn_poker", replace(HS, gamma=15.0, horizon=6), 10),  # HS-PCFR+(15), and past a short horizon
        ("leduc_poker", HS, 3),
    ],
    ids=["kuhn-30", "kuhn-15-T6", "leduc-30"],
)
def test_each_update_equals_the_papers_recursion(game: str, rule: UpdateRule, steps: int) -> None:
    """From the same state, one iteration of ours and one of the recursion agree: regrets and average to
    1e-12, and the next strategy wherever regret matching's denominator is not a rounding-level tie."""
    compiled = tree(f"openspiel:{game}")
    reference = HSReference(pyspiel.load_game(game), rule.gamma, rule.horizon)
    solver = make_solver(compiled, "hs-pcfr+", rule)
    reference.iterate()  # the first iteration from the uniform strategy: no state to share yet
    solver.iterate()
    for _ in range(steps):
        reference.load(compiled, solver.state())
        reference.iterate()
        solver.iterate()
        ours = solver.state()
        regrets = np.zeros_like(ours["regret"])
        current = np.zeros_like(ours["sigma"])
        for key, node in reference.infosets.items():
            row = compiled.index[key]
            for column, a in enumerate(compiled.infoset_actions[row]):
                regrets[row, column], current[row, column] = node.regret[a], node.policy[a]
        np.testing.assert_allclose(ours["regret"], regrets, atol=1e-12)
        decided = reference.targets(compiled) > 1e-9
        np.testing.assert_allclose(ours["sigma"][decided], current[decided], atol=1e-12)
        assert decided.mean() > 0.5
        np.testing.assert_allclose(solver.average_strategy(), reference.average(compiled), atol=1e-12)


@pytest.mark.parametrize(
    ("game_id", "rule", "iterations"),
    [
        ("openspiel:leduc_poker", HS, 1000),  # the paper's run: T = 1000 iterations
        ("openspiel:leduc_poker", replace(HS, gamma=15.0, horizon=300), 1000),  # HS-PCFR+(15), and on past T
    ],
    ids=["leduc-30-T1000", "leduc-15-past-T300"],
)
def test_the_average_is_the_schedule_over_a_whole_run(game_id: str, rule: UpdateRule, iterations: int) -> None:
    r"""The paper's recursion :math:`C^t = C^{t-1}((t-1)/t)^{\gamma_{t-1}} + x^t`, fed the solver's own
    contributions :math:`x^t(I) = \pi_i^{\sigma^t}(I)\,\sigma^t(I)` for ``iterations`` iterations, normalises
    to the solver's average (the weights' closed form drifts from the product of factors by a relative 1e-13)."""
    compiled = tree(game_id)
    solver = make_solver(compiled, "hs-pcfr+", rule)
    recursion = np.zeros(compiled.action_mask.shape)
    for t in range(1, iterations + 1):
        state = solver.state()  # sigma^t, and the realization plan x of sigma^t for both players
        contribution = state["reach"][compiled.parent_sequence][:, None] * state["sigma"]
        scale = ((t - 1) / t) ** paper_gamma(t - 1, rule.gamma, rule.horizon) if t > 1 else 0.0
        recursion = recursion * scale + contribution
        solver.iterate()
    np.testing.assert_allclose(solver.average_strategy(), normalise(recursion, compiled), atol=1e-11)


def test_the_iterates_are_pcfr_plus_bit_for_bit() -> None:
    """The schedule only reweights the average: regrets and strategies are PCFR+'s, to the last bit."""
    compiled = tree("openspiel:leduc_poker")
    scheduled, plain = make_solver(compiled, "hs-pcfr+"), make_solver(compiled, "pcfr+")
    scheduled.run(200)
    plain.run(200)
    ours, theirs = scheduled.state(), plain.state()
    for name in ("regret", "sigma", "reach"):
        assert np.array_equal(ours[name], theirs[name]), name
    assert np.abs(scheduled.average_strategy() - plain.average_strategy()).max() > 1e-3


def test_it_converges_and_refuses_sampling() -> None:
    from eval import exploitability_of_strategy

    compiled = tree("openspiel:leduc_poker")
    solver = make_solver(compiled, "hs-pcfr+")
    values = []
    for iterations in (100, 1000):
        solver.run(iterations - solver.iteration)
        values.append(exploitability_of_strategy(compiled, solver.average_strategy()).nash_conv)
    assert values[1] < values[0] / 10 and values[1] < 3e-3
    kuhn = tree("openspiel:kuhn_poker")
    solver = make_solver(kuhn, "hs-pcfr+")
    solver.run(100)
    assert exploitability_of_strategy(kuhn, solver.average_strategy()).nash_conv < 1e-9  # PCFR+'s: 5e-5
    with pytest.raises(InputError, match="does not combine with sampling"):
        make_solver(compiled, "hs-pcfr+", sampling="external", rng=np.random.default_rng(0))
    scheduled_cfr_plus = replace(ALGORITHMS["cfr+"], gamma_change=-0.5)
    with pytest.raises(InputError, match=r"hyperparameter schedule .* full tree only"):
        make_solver(compiled, "cfr+", scheduled_cfr_plus, sampling="external", rng=np.random.default_rng(0))


def test_a_checkpoint_keeps_the_schedule_and_resumes_bit_for_bit(tmp_path: Path) -> None:
    compiled = tree("openspiel:kuhn_poker")
    rule = replace(HS, gamma=15.0, horizon=40)
    first = make_solver(compiled, "hs-pcfr+", rule)
    first.run(25)
    save_checkpoint(tmp_path / "c.npz", first, seed=0)
    saved = load_checkpoint(tmp_path / "c.npz")
    assert saved.rule == rule
    resumed = saved.solver(compiled)
    resumed.run(35)
    straight = make_solver(compiled, "hs-pcfr+", rule)
    straight.run(60)
    for name, array in straight.state().items():
        assert np.array_equal(resumed.state()[name], array), name
    plain = make_solver(compiled, "pcfr+")  # a rule without a schedule writes no schedule fields ...
    plain.run(3)
    save_checkpoint(tmp_path / "p.npz", plain, seed=0)
    with np.load(tmp_path / "p.npz") as archive:
        header = json.loads(archive["header"].tobytes())
    assert "gamma_change" not in header["rule"] and "horizon" not in header["rule"]
    assert load_checkpoint(tmp_path / "p.npz").rule == ALGORITHMS["pcfr+"]  # ... and reads back as before


def test_the_command_line_sets_the_schedules_start_and_horizon(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    argv = ["train", "--game", "openspiel:kuhn_poker", "--algo", "hs-pcfr+", "--iterations", "20", "--quiet"]
    assert run_cli([*argv, "--gamma", "15", "--out", str(out)]).status == 0
    parameters = json.loads(out.read_text())["parameters"]
    assert (parameters["gamma"], parameters["gamma_change"], parameters["horizon"]) == (
        15.0,
        -5.0,
        20,
    )  # T = --iterations
    assert parameters["predictive"] is True
    refused = run_cli([*argv, "--alpha", "2", "--out", str(tmp_path / "q.json")])
    assert refused.status == 2 and "do not apply to --algo hs-pcfr+" in refused.err
