"""Games of more than two players, and general-sum games, on the compiled tree: the full-tree solvers against
OpenSpiel's, iterate for iterate, NashConv against OpenSpiel's ``nash_conv``, and the commands that take them or
refuse them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, discounted_cfr
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import eval.agent_report
from adapters import load_game
from adapters.inputs import UnsupportedGameError
from cfr_agents import make_solver
from cfr_agents.solvers import ALGORITHMS
from cfr_agents.solvers.neural import make_neural_solver
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree, load_tree
from eval.exploitability import exploitability_of_strategy
from tests.support import openspiel_table, resumed_and_whole, run_cli, trained_and_scored

KUHN3 = "openspiel:kuhn_poker(players=3)"
KUHN4 = "openspiel:kuhn_poker(players=4)"
LEDUC3 = "openspiel:leduc_poker(players=3)"
SHERIFF = "openspiel:sheriff(num_rounds=2,max_items=2,max_bribe=2)"
"""A small two-player general-sum game."""

SOLVERS: dict[str, Callable[..., cfr._CFRSolver]] = {
    "cfr": cfr.CFRSolver,
    "cfr+": cfr.CFRPlusSolver,
    "lcfr": discounted_cfr.LCFRSolver,
    "dcfr": discounted_cfr.DCFRSolver,
}


def n_player_tree(game_id: str) -> CompiledTree:
    return load_tree(game_id, any_players=True)


def openspiel_nash_conv(tree: CompiledTree, strategy: FloatArray) -> float:
    pyspiel_game = pyspiel.load_game(tree.game_id.removeprefix("openspiel:"))
    return float(openspiel_exploitability.nash_conv(pyspiel_game, openspiel_table(tree, strategy, pyspiel_game)))


def test_the_tree_keeps_every_players_payoffs_and_levels() -> None:
    tree = n_player_tree(KUHN3)
    assert tree.num_players == 3 and len(tree.levels) == 3
    assert tree.terminal_sequence.shape == tree.terminal_utility.shape == (3, tree.num_terminals)
    assert tree.constant_sum and not tree.two_player_zero_sum
    # Each player's infosets are its own: the levels hold them, and every terminal ends in that player's sequence.
    for player in range(3):
        rows = tree.player_slice(player)
        assert (tree.infoset_player[rows] == player).all()
    np.testing.assert_allclose(tree.terminal_utility.sum(axis=0), 0.0, atol=1e-12)


def test_an_n_player_tree_round_trips_through_the_tree_cache() -> None:
    game = load_game(KUHN4, any_players=True)
    built = compile_tree(game, cache=False)
    compile_tree(game)  # stores it when the cache is on
    loaded = compile_tree(game)
    for name in ("terminal_sequence", "terminal_utility", "infoset_player", "parent_sequence"):
        assert np.array_equal(getattr(built, name), getattr(loaded, name))
    assert built.levels == loaded.levels


@pytest.mark.parametrize("game_id", [KUHN3, KUHN4, SHERIFF])
def test_nash_conv_equals_openspiels_for_uniform_and_trained_profiles(game_id: str) -> None:
    tree = n_player_tree(game_id)
    solver = make_solver(tree, "cfr+")
    solver.run(30)
    for strategy in (tree.uniform_strategy(), solver.average_strategy()):
        ours = exploitability_of_strategy(tree, strategy)
        assert ours.nash_conv == pytest.approx(openspiel_nash_conv(tree, strategy), abs=1e-9)
        assert len(ours.best_response_values) == len(ours.policy_values) == tree.num_players


def test_exploitability_is_nash_conv_over_n_or_nan_when_the_game_is_not_constant_sum() -> None:
    kuhn = n_player_tree(KUHN4)
    measured = exploitability_of_strategy(kuhn, kuhn.uniform_strategy())
    assert measured.exploitability == pytest.approx(measured.nash_conv / 4)
    sheriff = n_player_tree(SHERIFF)
    assert not sheriff.constant_sum
    assert np.isnan(exploitability_of_strategy(sheriff, sheriff.uniform_strategy()).exploitability)


@pytest.mark.parametrize("algorithm", sorted(SOLVERS))
def test_three_player_kuhn_iterates_equal_openspiels(algorithm: str) -> None:
    tree = n_player_tree(KUHN3)
    reference = SOLVERS[algorithm](pyspiel.load_game(KUHN3.removeprefix("openspiel:")))
    ours = make_solver(tree, algorithm)
    for iteration in range(1, 41):
        reference.evaluate_and_update_policy()
        ours.iterate()
        if iteration in (1, 2, 10, 40):
            expected = reference.average_policy().action_probability_array
            actual = ours.average_policy().openspiel_policy().action_probability_array
            np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["cfr", "cfr+"])
def test_three_player_leduc_iterates_and_nash_conv_equal_openspiels_cpp(algorithm: str) -> None:
    """Ten iterations of OpenSpiel's C++ solver take about 30 s on three-player Leduc."""
    tree = n_player_tree(LEDUC3)
    pyspiel_game = pyspiel.load_game(LEDUC3.removeprefix("openspiel:"))
    reference = (pyspiel.CFRSolver if algorithm == "cfr" else pyspiel.CFRPlusSolver)(pyspiel_game)
    ours = make_solver(tree, algorithm)
    for _ in range(10):
        reference.evaluate_and_update_policy()
        ours.iterate()
    table = reference.tabular_average_policy().policy_table()
    strategy = ours.average_strategy()
    for i, key in enumerate(tree.infoset_keys):
        theirs = dict(table[key])
        np.testing.assert_allclose(
            strategy[i, : len(tree.infoset_actions[i])], [theirs[a] for a in tree.infoset_actions[i]], atol=1e-9
        )
    expected = pyspiel.nash_conv(pyspiel_game, reference.average_policy())
    assert exploitability_of_strategy(tree, strategy).nash_conv == pytest.approx(expected, abs=1e-9)


@pytest.mark.slow
def test_three_player_leduc_uniform_nash_conv_equals_openspiels_cpp() -> None:
    """OpenSpiel's C++ ``nash_conv`` takes about 50 s here."""
    tree = n_player_tree(LEDUC3)
    pyspiel_game = pyspiel.load_game(LEDUC3.removeprefix("openspiel:"))
    expected = pyspiel.nash_conv(pyspiel_game, pyspiel.UniformRandomPolicy(pyspiel_game))
    assert exploitability_of_strategy(tree, tree.uniform_strategy()).nash_conv == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_every_update_rule_runs_and_lowers_nash_conv_in_three_player_kuhn(algorithm: str) -> None:
    tree = n_player_tree(KUHN3)
    solver = make_solver(tree, algorithm)
    uniform = exploitability_of_strategy(tree, tree.uniform_strategy()).nash_conv
    solver.run(200)
    assert exploitability_of_strategy(tree, solver.average_strategy()).nash_conv < uniform / 20


def test_loading_refuses_n_player_games_unless_asked() -> None:
    with pytest.raises(UnsupportedGameError, match=r"\(3 players\); n-player and general-sum games run with train"):
        load_game(KUHN3)
    with pytest.raises(UnsupportedGameError, match="utility GENERAL_SUM"):
        load_game(SHERIFF)
    assert load_game(KUHN3, any_players=True).num_players == 3
    assert not load_game(SHERIFF, any_players=True).zero_sum


def test_the_two_player_kernels_refuse_n_player_trees() -> None:
    tree = n_player_tree(KUHN3)
    with pytest.raises(UnsupportedGameError, match=r"neural CFR's solvers need a two-player .* 3 players"):
        make_neural_solver(tree, np.zeros((tree.num_infosets, 1), np.float32), "deep-cfr", rng=np.random.default_rng(0))


@pytest.mark.parametrize("long", [False, True])
def test_train_then_exploitability_on_three_player_kuhn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, long: bool
) -> None:
    """Scored and cross-checked; a cross-check that will take long (here: any, its threshold set to 0) says so on
    standard error first, and only then."""
    if long:
        monkeypatch.setattr(eval.agent_report, "LONG_CROSS_CHECK_NODES", 0)
    scored = trained_and_scored(tmp_path / "k3.json", KUHN3, "cfr+", 300, "--cross-check")
    assert "agree" in scored.out
    histories = n_player_tree(KUHN3).node_kind.shape[0]
    notice = (
        f"OpenSpiel's nash_conv walks the {histories:,} histories of {KUHN3} in Python: at this size it takes minutes\n"
    )
    assert scored.err == (notice if long else "")


def test_train_reports_no_exploitability_in_a_general_sum_game(tmp_path: Path) -> None:
    out = tmp_path / "sheriff.json"
    trained = run_cli(["train", "--game", SHERIFF, "--algo", "cfr", "--iterations", "50", "--out", str(out)])
    assert trained.status == 0, trained.err
    assert "exploitability undefined" in trained.out
    scored = run_cli(["exploitability", str(out), "--json"])
    assert scored.status == 0 and '"exploitability": NaN' in scored.out


@pytest.mark.parametrize(
    "options",
    [
        ["--algo", "deep-cfr"],
        ["--engine", "public-tree"],
    ],
)
def test_train_refuses_what_does_not_take_n_players_in_one_line(tmp_path: Path, options: list[str]) -> None:
    argv = ["train", "--game", KUHN3, "--algo", "cfr", "--iterations", "5", "--out", str(tmp_path / "p.json")]
    result = run_cli([*argv, *options])
    assert result.status == 2
    assert len(result.err.strip().splitlines()) == 1 and "takes two-player zero-sum games" in result.err
    assert not (tmp_path / "p.json").exists()


def test_commands_for_two_players_refuse_an_n_player_policy(tmp_path: Path) -> None:
    out = tmp_path / "k3.json"
    assert run_cli(["train", "--game", KUHN3, "--algo", "cfr", "--iterations", "5", "--out", str(out)]).status == 0
    result = run_cli(["match", str(out), "random", "--hands", "10"])
    assert result.status == 2 and "3 players" in result.err


def test_a_checkpointed_n_player_run_resumes_to_the_uninterrupted_result(tmp_path: Path) -> None:
    resumed, whole = resumed_and_whole(tmp_path, ["train", "--game", KUHN3, "--algo", "dcfr"], 25, 60, KUHN3)
    np.testing.assert_allclose(resumed, whole, rtol=0, atol=1e-12)
