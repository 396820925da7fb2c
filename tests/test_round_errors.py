"""``benchmarks.round_errors``: each row against the same quantities assembled node by node through the agent
interface, and seat shares that name the right seat (its one-line refusals are in test_benchmarks.py)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from benchmarks import round_errors
from cfr_agents.public_tree.engine import FloatArray, canonical_random_strategy
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.strategy_file import load_strategy, save_strategy
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers import ALGORITHMS
from eval import holdem

GAME = "holdem-6"


@dataclass(frozen=True)
class Either:
    """``second``'s play at the decision nodes ``pick`` chooses, ``first``'s elsewhere, asked node by node (the
    path :func:`eval.holdem.strategy_array` takes for an agent that is not an array)."""

    first: holdem.ArrayHands
    second: holdem.ArrayHands
    pick: Callable[[int], bool]

    def probabilities(self, tree: PublicTree, segment: int, node: int) -> FloatArray:
        return (self.second if self.pick(node) else self.first).probabilities(tree, segment, node)


def saved(directory: Path, name: str, tree: PublicTree, strategy: FloatArray) -> str:
    path = directory / f"{name}.json"
    save_strategy(path, tree, strategy, algorithm=name, parameters={}, iterations=0)
    return str(path)


def in_round(tree: PublicTree, r: int, node: int) -> bool:
    return int(tree.betting.round[node]) == r


def nash_conv_mbb(tree: PublicTree, agent: holdem.HandStrategy) -> float:
    return holdem.exploitability(tree, agent).nash_conv * 1000 / tree.rules.big_blind


def test_each_row_is_what_the_node_by_node_profiles_score(tmp_path: Path) -> None:
    """A random model and a model that plays DCFR's reference as player 1 and random as player 0: NashConv, each
    round replaced, and each seat's share, against profiles assembled node by node and scored by
    :func:`eval.holdem.exploitability`; the gain from the last round on is at most NashConv and positive."""
    tree = holdem.game_tree(GAME)
    solver = PublicTreeSolver(tree, ALGORITHMS["dcfr"], "dcfr")
    solver.run(40)
    reference = saved(tmp_path, "reference", tree, solver.average_strategy())
    noise = saved(tmp_path, "noise", tree, canonical_random_strategy(tree, np.random.default_rng(3)))
    ref, rnd = (holdem.hand_strategy(load_strategy(path)) for path in (reference, noise))
    assert isinstance(ref, holdem.ArrayHands) and isinstance(rnd, holdem.ArrayHands)
    betting = tree.betting
    half = Either(rnd, ref, lambda node: int(betting.player[node]) == 1)
    halves = saved(tmp_path, "halves", tree, holdem.strategy_array(tree, half).strategy)
    round_errors.main(["--game", GAME, "--models", f"{noise},{halves}", "--reference", reference,
                       "--out", str(tmp_path / "r")])  # fmt: skip
    report = json.loads((tmp_path / "r.json").read_text())
    epsilon = report["reference_nash_conv_mbb"]
    assert epsilon == pytest.approx(nash_conv_mbb(tree, ref), rel=1e-9) and 0 < epsilon < 100
    noise_row, halves_row = report["rows"]
    for row, agent in ((noise_row, rnd), (halves_row, holdem.hand_strategy(load_strategy(halves)))):
        assert row["nash_conv_mbb"] == pytest.approx(nash_conv_mbb(tree, agent), rel=1e-9)
        assert sum(row["seat_shares_mbb"]) == pytest.approx(row["nash_conv_mbb"], rel=1e-12)
        assert isinstance(agent, holdem.ArrayHands)
        for r, value in enumerate(row["round_replaced_nash_conv_mbb"]):
            mixed = Either(agent, ref, functools.partial(in_round, tree, r))
            assert value == pytest.approx(nash_conv_mbb(tree, mixed), rel=1e-9)
        gain = row["from_round_gain_mbb"]
        assert gain[0] == row["nash_conv_mbb"] and 0 < gain[-1] < gain[0]
    seat_0, seat_1 = halves_row["seat_shares_mbb"]
    assert abs(seat_1) <= epsilon and seat_0 > 10 * epsilon  # player 1 plays the reference: seat 1 loses ~0
    table = (tmp_path / "r.md").read_text()
    assert table.count("|") > 0 and "preflop from the reference" in table and "gain from the flop on" in table
