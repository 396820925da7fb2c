"""``pettingzoo:leduc_holdem_v4``, PettingZoo's AEC env as an adapter game: it passes the conformance check, its
compiled tree is ``rlcard:leduc-holdem``'s, it shares RLCard's rules fingerprint, and a policy crosses between the
two ids only through ``Policy.for_game``."""

from __future__ import annotations

import dataclasses
import json
import pickle
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import adapters
from adapters.conformance import check_game
from adapters.inputs import InputError, UnknownGameError
from cfr_agents import Policy, make_solver
from cfr_agents.tree import check_same_strategic_form, compile_tree
from eval import exploitability
from eval.opponents import load_opponent
from tests.support import assert_same_tree, game, run_cli, tree

pytest.importorskip("pettingzoo")
from pettingzoo.classic import leduc_holdem_v4

from adapters.pettingzoo import PettingZooGame

PETTINGZOO = "pettingzoo:leduc_holdem_v4"
RLCARD = "rlcard:leduc-holdem"


def test_the_adapter_passes_the_conformance_check() -> None:
    check_game(game(PETTINGZOO), playouts=100)


def test_its_tree_is_rlcard_leducs_node_for_node() -> None:
    """Built through PettingZoo's calls (``agent_selection``, the observation's ``action_mask``, ``step``, the
    rewards), the tree has RLCard's nodes in RLCard's order: the same chance outcomes and probabilities, legal
    actions, infoset keys and players, and payoffs. Only the game id differs."""
    ours, theirs = tree(PETTINGZOO), tree(RLCARD)
    assert ours.game_id == PETTINGZOO
    assert_same_tree(dataclasses.replace(ours, game_id=RLCARD), theirs)
    check_same_strategic_form(ours, theirs)
    check_same_strategic_form(theirs, ours)


def test_the_tree_cache_keeps_its_tree_under_pettingzoos_version() -> None:
    built = tree(PETTINGZOO)
    loaded = compile_tree(adapters.load_game(PETTINGZOO))
    assert loaded.from_cache and loaded.cache_header is not None
    versions = loaded.cache_header["versions"]
    assert isinstance(versions, dict) and versions["pettingzoo"] == metadata.version("pettingzoo")
    assert_same_tree(loaded, built)


def test_its_payoffs_are_the_rewards_pettingzoo_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    """The returns are read from the env's rewards, not from RLCard's engine: scaled rewards scale them."""
    history = (0, 1, 0, 2)  # player 0 holds SJ, player 1 HJ, seat 0 posts the small blind and folds
    engine = adapters.base.replay(game(RLCARD), history).returns()
    assert engine[0] < 0  # the folding seat loses
    assert adapters.base.replay(PettingZooGame("leduc_holdem_v4"), history).returns() == engine
    monkeypatch.setattr(leduc_holdem_v4.raw_env, "_scale_rewards", lambda _, rewards: [3 * r for r in rewards])
    scaled = adapters.base.replay(PettingZooGame("leduc_holdem_v4"), history).returns()
    assert scaled == (3 * engine[0], 3 * engine[1])


def test_states_pickle_as_their_history() -> None:
    state = game(PETTINGZOO).new_initial_state()
    for action in (4, 1, 1, 1, 1):  # SK and HJ dealt, seat 1 posts the small blind, both raise
        state = state.child(action)
    copy = pickle.loads(pickle.dumps(state))
    assert str(copy) == str(state) and copy.legal_actions() == state.legal_actions()
    assert [copy.information_state_key(p) for p in (0, 1)] == [state.information_state_key(p) for p in (0, 1)]


def test_both_ids_share_a_rules_fingerprint_and_a_policy_crosses_only_by_for_game(tmp_path: Path) -> None:
    """The fingerprint hashes the rules, and the rules are the same (RLCard's, read from the engine inside the env):
    the fingerprints are equal. The game id is what a policy is checked against, so a policy file of one id is
    refused on the other in one line; ``Policy.for_game`` moves it, after checking the strategic forms are the same,
    and it is worth the same there. A policy of OpenSpiel's Leduc, another game, does not move."""
    assert game(PETTINGZOO).rules_fingerprint == game(RLCARD).rules_fingerprint
    solver = make_solver(tree(RLCARD), "cfr+")
    solver.run(20)
    policy = solver.average_policy()
    path = tmp_path / "rlcard.json"
    policy.save(path)
    with pytest.raises(InputError) as refused:
        load_opponent(str(path), PETTINGZOO)
    assert str(refused.value) == f"the policy is for {RLCARD}, not {PETTINGZOO}"
    moved = policy.for_game(PETTINGZOO)
    assert (moved.game_id, moved.rules_fingerprint, moved.table) == (PETTINGZOO, policy.rules_fingerprint, policy.table)
    value = exploitability(policy, tree(RLCARD)).nash_conv
    assert value > 1e-3
    assert exploitability(moved, tree(PETTINGZOO)).nash_conv == pytest.approx(value, abs=1e-12)
    assert moved.for_game(RLCARD) == policy
    with pytest.raises(InputError, match="not the same game: their units differ"):
        Policy.uniform(tree("openspiel:leduc_poker")).for_game(PETTINGZOO)


def test_the_fingerprint_follows_the_engine_inside_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """An env whose RLCard engine raises 4 in round 1 has other rules than RLCard's Leduc, so another fingerprint."""
    make = PettingZooGame.environment

    def bigger_raises(game: PettingZooGame) -> Any:
        env = make(game)
        env.unwrapped.env.game.raise_amount = 4
        return env

    monkeypatch.setattr(PettingZooGame, "environment", bigger_raises)
    assert PettingZooGame("leduc_holdem_v4").rules_fingerprint != game(RLCARD).rules_fingerprint


@pytest.mark.parametrize(
    ("game_id", "message"),
    [
        ("pettingzoo:texas_holdem_v4", "unsupported PettingZoo game 'pettingzoo:texas_holdem_v4'; supported: "),
        ("pettingzoo:tictactoe_v3", "supported: pettingzoo:leduc_holdem_v4"),
        ("gym:leduc", "use openspiel:, rlcard: or pettingzoo:"),
    ],
)
def test_other_ids_are_refused_in_one_line(game_id: str, message: str) -> None:
    with pytest.raises(UnknownGameError, match=message) as refused:
        adapters.load_game(game_id)
    assert "\n" not in str(refused.value)


def test_the_commands_take_the_id(tmp_path: Path) -> None:
    """``train``, ``exploitability`` and ``match`` take ``pettingzoo:leduc_holdem_v4``; ``match`` plays it in
    PettingZoo's env and refuses, in one line, what reads hands (``--log``, ``--aivat``) and opponents of RLCard's
    game; ``play`` is refused in one line."""
    policy = str(tmp_path / "pz.json")
    trained = run_cli(["train", "--game", PETTINGZOO, "--algo", "cfr+", "--iterations", "30", "--out", policy])
    assert trained.status == 0, trained.err
    scored = run_cli(["exploitability", policy, "--json"])
    assert scored.status == 0, scored.err
    nash_conv = exploitability(Policy.uniform(tree(PETTINGZOO)), tree(PETTINGZOO)).nash_conv
    assert 0 < json.loads(scored.out)["nash_conv"] < nash_conv
    played = run_cli(["match", policy, "random", "--hands", "40", "--json"])
    assert played.status == 0, played.err
    assert json.loads(played.out)["game"] == PETTINGZOO
    for argv in (
        ["match", policy, "random", "--hands", "40", "--log", str(tmp_path / "hands.jsonl")],
        ["match", policy, "random", "--hands", "40", "--aivat"],
        ["match", policy, "rlcard-rule-v1", "--hands", "40"],
        ["play", policy],
    ):
        refused = run_cli(argv)
        assert refused.status == 2 and refused.err.count("\n") == 1, (argv, refused.err)
