"""Every adapter as an OpenSpiel Python game: the same states, keys and payoffs as the adapter, and
OpenSpiel's own algorithms (nash_conv, expected_game_score, sequence_form_lp) agreeing with ours on
RLCard's rules."""

from __future__ import annotations

import copy
import dataclasses
import doctest
import functools
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import expected_game_score, get_all_states, sequence_form_lp
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from open_spiel.python.policy import TabularPolicy

import adapters.pyspiel_game
import eval.agent_report
import eval.cross_check
from adapters import CHANCE, TERMINAL, InputError
from adapters.pyspiel_game import REGISTERED_GAMES, BridgedGame, as_pyspiel_game
from cfr_agents import Policy, make_solver
from cfr_agents.tree import CompiledTree
from eval import exploitability
from tests.support import RLCARD_LEDUC_SMALL_BLIND_VALUE, game, run_cli, tree, values_by_role

LEDUC = "rlcard:leduc-holdem"
KUHN = "rlcard:kuhn-poker"
OPENSPIEL_LEDUC_VALUE = -0.085606424078  # player 0 of leduc_poker, OpenSpiel's sequence_form_lp_test


@functools.cache
def bridged(game_id: str) -> BridgedGame:
    """One bridged game per adapter for the whole module (its transitions are shared by the tests)."""
    return as_pyspiel_game(game(game_id))


def first_action_policy(t: CompiledTree) -> Policy:
    strategy = np.zeros(t.action_mask.shape)
    strategy[:, 0] = 1.0
    return Policy.from_strategy(t, strategy, algorithm="first-action", parameters={}, iterations=0)


@functools.cache
def trained_policy(game_id: str) -> Policy:
    solver = make_solver(tree(game_id), "cfr+")
    solver.run(50)
    return solver.average_policy()


POLICIES = {
    "trained": lambda t: trained_policy(t.game_id),
    "uniform": Policy.uniform,
    "first-action": first_action_policy,
}


def tabular(pyspiel_game: pyspiel.Game, table: Mapping[str, Mapping[Any, float]]) -> TabularPolicy:
    """A ``TabularPolicy`` filled key for key from a policy table (action ids as int or JSON str)."""
    result = TabularPolicy(pyspiel_game)
    result.action_probability_array[:] = 0.0
    for key, row in result.state_lookup.items():
        for action, probability in table[key].items():
            result.action_probability_array[row, int(action)] = probability
    return result


# --- the bridge reproduces the adapter ----------------------------------------------------


def test_bridged_states_match_the_adapter(game_id: str) -> None:
    """A walk of the bridged game beside an independent walk of the adapter, state by state."""
    adapter, pyspiel_game = game(game_id), bridged(game_id)
    nodes = max_outcome = longest = longest_chance = 0
    utilities: list[float] = []
    stack = [(pyspiel_game.new_initial_state(), adapter.new_initial_state(), 0, 0)]
    while stack:
        ours, theirs, decisions, chances = stack.pop()
        nodes += 1
        player = theirs.current_player()
        assert ours.current_player() == player
        assert ours.is_terminal() == (player == TERMINAL) and ours.is_chance_node() == (player == CHANCE)
        if player == TERMINAL:
            assert ours.returns() == list(theirs.returns())
            utilities += ours.returns()
            longest, longest_chance = max(longest, decisions), max(longest_chance, chances)
        elif player == CHANCE:
            outcomes = theirs.chance_outcomes()
            assert ours.chance_outcomes() == list(outcomes)
            assert ours.legal_actions() == [outcome for outcome, _ in outcomes]
            assert ours.returns() == [0.0, 0.0]
            max_outcome = max(max_outcome, *(outcome for outcome, _ in outcomes))
            stack += [(ours.child(o), theirs.child(o), decisions, chances + 1) for o, _ in outcomes]
        else:
            assert ours.legal_actions() == list(theirs.legal_actions())
            for p in (0, 1):
                assert ours.information_state_string(p) == theirs.information_state_key(p)
            stack += [(ours.child(a), theirs.child(a), decisions + 1, chances) for a in theirs.legal_actions()]
    assert nodes == len(tree(game_id).node_kind)
    # get_all_states dedupes on str(state): every history must keep its own string.
    everything = get_all_states.get_all_states(pyspiel_game, include_chance_states=True, to_string=str)
    assert len(everything) == nodes
    assert (pyspiel_game.num_distinct_actions(), pyspiel_game.max_chance_outcomes()) == (
        adapter.num_distinct_actions,
        max_outcome + 1,
    )
    assert (pyspiel_game.min_utility(), pyspiel_game.max_utility()) == (min(utilities), max(utilities))
    assert pyspiel_game.max_game_length() == longest
    assert pyspiel_game.max_chance_nodes_in_history() == longest_chance


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker"])
def test_bridged_game_info_equals_openspiel_native(name: str) -> None:
    native = pyspiel.load_game(name)
    ours = bridged(f"openspiel:{name}")
    for method in (
        "num_distinct_actions",
        "max_chance_outcomes",
        "min_utility",
        "max_utility",
        "max_game_length",
        "max_chance_nodes_in_history",
        "num_players",
        "utility_sum",
    ):
        assert getattr(ours, method)() == getattr(native, method)(), method
    assert ours.get_type().provides_information_state_string
    assert ours.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC


def test_clone_shares_the_immutable_node() -> None:
    state = bridged(LEDUC).new_initial_state().child(0).child(1).child(0)
    assert copy.deepcopy(state.node) is state.node
    clone = state.clone()
    assert clone.node is state.node and str(clone) == str(state) == "0 1 0"
    clone.apply_action(clone.legal_actions()[0])
    assert state.history() == [0, 1, 0] and clone.node is not state.node


@pytest.mark.parametrize("game_id", [LEDUC, "rlcard:limit-holdem"])
def test_an_illegal_id_is_refused(game_id: str) -> None:
    """The walk's moves do not check legality themselves: the bridged state does, on a walked game and on one too
    large to walk."""
    state = bridged(game_id).new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    illegal = max(state.legal_actions()) + 1
    with pytest.raises(InputError, match=f"action {illegal} is not legal here"):
        state.apply_action(illegal)


def test_registered_names_load_through_pyspiel() -> None:
    assert dict(REGISTERED_GAMES) == {
        "python_rlcard_leduc_holdem": LEDUC,
        "python_rlcard_kuhn_poker": KUHN,
        "python_rlcard_limit_holdem": "rlcard:limit-holdem",
    }
    adapters.pyspiel_game.register()  # idempotent
    loaded = pyspiel.load_game("python_rlcard_kuhn_poker")
    assert isinstance(loaded, BridgedGame) and loaded.adapter_game.game_id == KUHN
    assert str(loaded) == "python_rlcard_kuhn_poker()"
    # Registering builds no game, and a process that registered and loaded exits cleanly.
    script = (
        "import adapters, adapters.pyspiel_game as bridge, pyspiel\n"
        "assert not bridge._MEASURED\n"
        "game = pyspiel.load_game('python_rlcard_kuhn_poker')\n"
        "print(game.new_initial_state().child(0).child(2).information_state_string(1))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (0, "2\n", "")


def test_observations_other_than_the_information_state_are_refused() -> None:
    state = bridged(KUHN).new_initial_state().child(0).child(1)
    with pytest.raises(InputError, match="perfect-recall information state"):
        state.observation_string(0)


def test_module_doctest() -> None:
    result = doctest.testmod(adapters.pyspiel_game)
    assert result.attempted > 0 and result.failed == 0


# --- OpenSpiel's algorithms on RLCard's rules ---------------------------------------------


@pytest.mark.parametrize(
    "kind", [pytest.param(kind, marks=() if kind == "trained" else pytest.mark.slow) for kind in sorted(POLICIES)]
)
def test_rlcard_leduc_nash_conv_equals_openspiel_on_the_bridged_game(kind: str) -> None:
    t = tree(LEDUC)
    policy = POLICIES[kind](t)
    theirs = openspiel_exploitability.nash_conv(bridged(LEDUC), tabular(bridged(LEDUC), policy.table))
    ours = exploitability(policy, t).nash_conv
    assert ours == pytest.approx(theirs, abs=1e-9)


def test_rlcard_kuhn_bridged_equals_openspiel_kuhn_poker() -> None:
    native = pyspiel.load_game("kuhn_poker")
    t = tree(KUHN)
    assert set(TabularPolicy(native).state_lookup) == set(t.infoset_keys)
    for policy in (trained_policy(KUHN), Policy.uniform(t), first_action_policy(t)):
        on_native = openspiel_exploitability.nash_conv(native, tabular(native, policy.table))
        on_bridged = openspiel_exploitability.nash_conv(bridged(KUHN), tabular(bridged(KUHN), policy.table))
        assert on_bridged == pytest.approx(on_native, abs=1e-12)
        assert exploitability(policy, t).nash_conv == pytest.approx(on_native, abs=1e-9)


def test_rlcard_policy_file_loads_into_tabular_policy_without_our_code(tmp_path: Path) -> None:
    path = tmp_path / "leduc.json"
    trained_policy(LEDUC).save(path)
    data = json.loads(path.read_text())
    loaded = TabularPolicy(pyspiel.load_game("python_rlcard_leduc_holdem"))
    assert set(loaded.state_lookup) == set(data["policy"])
    for key, row in loaded.state_lookup.items():
        loaded.action_probability_array[row] = 0.0
        for action, probability in data["policy"][key].items():
            assert loaded.legal_actions_mask[row, int(action)]
            loaded.action_probability_array[row, int(action)] = probability
    expected = tabular(bridged(LEDUC), trained_policy(LEDUC).table)
    assert loaded.state_lookup == expected.state_lookup
    np.testing.assert_array_equal(loaded.action_probability_array, expected.action_probability_array)


@pytest.mark.parametrize("kind", ["trained", "first-action"])
def test_expected_game_score_equals_our_policy_values(kind: str) -> None:
    t = tree(LEDUC)
    policy = POLICIES[kind](t)
    openspiel_policy = tabular(bridged(LEDUC), policy.table)
    theirs = expected_game_score.policy_value(bridged(LEDUC).new_initial_state(), [openspiel_policy] * 2)
    np.testing.assert_allclose(theirs, exploitability(policy, t).policy_values, rtol=0, atol=1e-12)


def test_rlcard_leduc_game_value_from_openspiel_lp_equals_converged_cfr() -> None:
    # OpenSpiel's LP, as shipped, reproduces its published Leduc value first.
    native_value, _, _, _ = sequence_form_lp.solve_zero_sum_game(pyspiel.load_game("leduc_poker"))
    assert native_value == pytest.approx(OPENSPIEL_LEDUC_VALUE, abs=1e-9)

    lp_value_0, lp_value_1, lp_policy_0, lp_policy_1 = sequence_form_lp.solve_zero_sum_game(bridged(LEDUC))
    t = tree(LEDUC)
    solver = make_solver(t, "dcfr")
    measured = exploitability(solver.average_policy(), t)
    while measured.nash_conv > 1e-5:
        solver.run(1000)
        measured = exploitability(solver.average_policy(), t)
    # |u_0(sigma) - v*| <= NashConv, and per seat (each reached with probability 1/2) <= 2 NashConv.
    assert measured.policy_values[0] == pytest.approx(lp_value_0, abs=1e-4)
    assert lp_value_1 == pytest.approx(-lp_value_0, abs=1e-6)
    ours = values_by_role(bridged(LEDUC), [tabular(bridged(LEDUC), solver.average_policy().table)] * 2)
    lp = values_by_role(bridged(LEDUC), [lp_policy_0, lp_policy_1])
    assert ours["SB"] == pytest.approx(lp["SB"], abs=1e-4)
    assert ours["BB"] == pytest.approx(lp["BB"], abs=1e-4)
    assert lp_value_0 == pytest.approx(0.0, abs=1e-9)
    assert lp["SB"] == pytest.approx(RLCARD_LEDUC_SMALL_BLIND_VALUE, abs=1e-6)
    assert lp["BB"] == pytest.approx(-RLCARD_LEDUC_SMALL_BLIND_VALUE, abs=1e-6)


# --- the cross-check and the command line -------------------------------------------------


def test_cross_check_refuses_a_policy_missing_an_infoset() -> None:
    policy = trained_policy(KUHN)
    missing = sorted(policy.table)[3]
    partial = dataclasses.replace(policy, table={k: v for k, v in policy.table.items() if k != missing})
    with pytest.raises(InputError, match=f"infoset {missing!r}"):
        eval.cross_check.openspiel_cross_check(partial)


def test_cli_cross_check_on_an_rlcard_file(tmp_path: Path) -> None:
    """On RLCard's Kuhn poker (bridged Leduc's NashConv is OpenSpiel's, by
    ``test_rlcard_leduc_nash_conv_equals_openspiel_on_the_bridged_game``)."""
    path = tmp_path / "kuhn.json"
    trained_policy(KUHN).save(path)
    status, printed, _ = run_cli(["exploitability", str(path), "--cross-check", "--json"])
    assert status == 0
    report = json.loads(printed)
    assert set(report) >= {
        "file",
        "game",
        "algo",
        "iterations",
        "units",
        "nash_conv",
        "exploitability",
        "policy_values",
        "build_seconds",
        "openspiel_nash_conv",
        "difference",
        "agree",
    }
    assert (report["openspiel_game"], report["openspiel_game_source"]) == ("python_rlcard_kuhn_poker()", "bridged")
    assert report["agree"] and abs(report["difference"]) <= 1e-9
    assert report["difference"] == report["nash_conv"] - report["openspiel_nash_conv"]


def test_cli_cross_check_text_and_disagreement(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "kuhn.json"
    trained_policy(KUHN).save(path)
    status, printed, _ = run_cli(["exploitability", str(path), "--cross-check"])
    assert status == 0
    lines = printed.splitlines()
    assert "python_rlcard_kuhn_poker() (bridged)" in lines[-1] and "(agree within 1e-09)" in lines[-1]

    real = eval.cross_check.openspiel_cross_check

    def off_by_a_little(policy: Policy) -> eval.cross_check.OpenSpielNashConv:
        result = real(policy)
        return dataclasses.replace(result, nash_conv=result.nash_conv + 1e-6)

    monkeypatch.setattr(eval.agent_report, "openspiel_cross_check", off_by_a_little)
    status, printed, _ = run_cli(["exploitability", str(path), "--cross-check"])
    assert status == 1 and "DISAGREE" in printed


def test_native_openspiel_cross_check_names_its_game() -> None:
    policy = trained_policy("openspiel:kuhn_poker")
    result = eval.cross_check.openspiel_cross_check(policy)
    assert (result.openspiel_game, result.source) == ("kuhn_poker()", "native")
    assert result.nash_conv == pytest.approx(exploitability(policy, tree("openspiel:kuhn_poker")).nash_conv, abs=1e-9)
