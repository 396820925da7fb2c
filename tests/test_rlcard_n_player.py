"""Three-player Leduc on RLCard's engine (``rlcard:leduc-holdem(game_num_players=3)``): random play through the
adapter's states, and through its compiled tree's walk, follows the engine's own play and payoffs; the id is refused
in one line without ``any_players``; the conformance check and the OpenSpiel bridge take n players, and OpenSpiel's
own ``nash_conv`` and ``CFRSolver`` agree with ours on a bridged three-player game."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from open_spiel.python.algorithms import cfr
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from rlcard.games.leducholdem.game import LeducholdemGame

import adapters
from adapters import CHANCE, TERMINAL, InputError, State
from adapters.conformance import check_game
from adapters.pyspiel_game import as_pyspiel_game
from adapters.rlcard import LEDUC_ROLES, RLCardGame, RLCardState
from cfr_agents import make_solver
from cfr_agents.tree import load_tree
from eval.exploitability import exploitability_of_strategy
from tests.support import card_name, openspiel_table, run_cli, trained_and_scored

LEDUC3 = "rlcard:leduc-holdem(game_num_players=3)"
KUHN3 = "openspiel:kuhn_poker(players=3)"


def leduc3() -> RLCardGame:
    game = adapters.load_game(LEDUC3, any_players=True)
    assert isinstance(game, RLCardGame)
    return game


# --- the game id ------------------------------------------------------------------------------


def test_three_player_leduc_loads_only_with_any_players() -> None:
    game = leduc3()
    assert (game.game_id, game.num_players, game.zero_sum) == (LEDUC3, 3, True)
    assert game.new_initial_state().num_players() == 3
    assert game.rules()["num_players"] == 3
    with pytest.raises(InputError) as refused:
        adapters.load_game(LEDUC3)
    assert str(refused.value) == (
        f"{LEDUC3!r} is not a two-player zero-sum sequential game with perfect recall (3 players); n-player games of "
        "RLCard's engines run with train (full-tree and sampled algorithms) and exploitability"
    )


@pytest.mark.parametrize(
    ("game_id", "message"),
    [
        ("rlcard:leduc-holdem(game_num_players=4)", "rlcard:leduc-holdem takes game_num_players=3"),
        ("rlcard:leduc-holdem(game_num_players=2)", "(two players: rlcard:leduc-holdem)"),
        ("rlcard:leduc-holdem(players=3)", "got rlcard:leduc-holdem(players=3)"),
        ("rlcard:leduc-holdem(game_num_players=3,seed=1)", "rlcard:leduc-holdem takes game_num_players=3"),
        ("rlcard:kuhn-poker(game_num_players=3)", "rlcard:kuhn-poker takes no parameters"),
        ("rlcard:limit-holdem(game_num_players=3)", "rlcard:limit-holdem takes no parameters"),
        ("rlcard:uno(game_num_players=3)", "unsupported RLCard game 'uno'"),
    ],
)
def test_other_parameters_are_refused_in_one_line(game_id: str, message: str) -> None:
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")) as refused:
        adapters.load_game(game_id, any_players=True)
    assert "\n" not in str(refused.value)


def test_two_player_leduc_keeps_its_deal_rules_and_players() -> None:
    two = adapters.load_game("rlcard:leduc-holdem", any_players=True)
    assert isinstance(two, RLCardGame)
    assert (two.game_id, two.num_players, two.spec.deal) == ("rlcard:leduc-holdem", 2, ("card", "card", "seat"))
    assert two.rules()["num_players"] == 2
    assert two.rules_fingerprint != leduc3().rules_fingerprint
    assert leduc3().spec.deal == ("card", "card", "card", "seat")


# --- random play against the engine ---------------------------------------------------------------


def engine_of(seed: int) -> Any:
    """RLCard's Leduc engine configured for three players as RLCard configures it, dealt by its own generator."""
    engine = LeducholdemGame()
    engine.configure({"game_num_players": 3})
    engine.np_random = np.random.RandomState(seed)
    engine.init_game()
    return engine


def expected_key(engine: Any, player: int, small_blind: int, names: list[str]) -> str:
    """What ``player`` sees on the engine: its seat, its card, the public card, its role and the actions so far."""
    public = engine.public_card.get_index() if engine.public_card is not None else "-"
    role = LEDUC_ROLES[(player - small_blind) % 3]
    return f"{player}|{engine.players[player].hand.get_index()}|{public}|{role}|{'-'.join(names)}"


def test_random_play_through_states_and_the_tree_walk_follows_the_engine() -> None:
    """Over 2,000 deals, dealt and played by the engine with random actions: at every step the adapter's state and the
    compiled tree's walk (:meth:`~adapters.Game.tree_ops`) have the engine's player, legal actions and keys (the key
    the play-time function builds from the engine's state, and what the player sees), and at the end its payoffs."""
    game = leduc3()
    ops = game.tree_ops()
    rng = np.random.default_rng(0)
    seen_roles: set[str] = set()
    showdowns_after_a_fold = 0
    for seed in range(2000):
        engine = engine_of(seed)
        small_blind = int(engine.game_pointer)
        deal = [game.deck_index[card_name(player.hand)] for player in engine.players] + [small_blind]
        state: State = game.new_initial_state()
        walked = ops.root
        for outcome in deal:
            assert state.current_player() == ops.player(walked) == CHANCE
            state, walked = state.child(outcome), ops.child(walked, outcome)
        record: list[tuple[int, str]] = []
        while not engine.is_over():
            if state.is_chance_node():  # the engine dealt the public card on the last action
                public = game.deck_index[card_name(engine.public_card)]
                assert ops.player(walked) == CHANCE and public in state.legal_actions()
                assert [o for o, _ in ops.outcomes(walked)] == list(state.legal_actions())
                state, walked = state.child(public), ops.child(walked, public)
            player = int(engine.get_player_id())
            legal = tuple(sorted(game.actions.index(name) for name in engine.get_legal_actions()))
            assert state.current_player() == ops.player(walked) == player
            assert state.legal_actions() == tuple(ops.actions(walked)) == legal
            assert isinstance(state, RLCardState)
            assert state.chips() == tuple(float(p.in_chips) for p in engine.players)
            names = [name for _, name in record]
            for p in range(3):
                assert state.information_state_key(p) == expected_key(engine, p, small_blind, names)
            env_state = {"raw_obs": engine.get_state(player), "action_record": record}
            assert ops.key(walked, player) == game.key_from_env_state(env_state) == state.information_state_key(player)
            seen_roles.add(state.information_state_key(player).split("|")[3])
            action = int(rng.choice(legal))
            record.append((player, game.actions[action]))
            engine.step(game.actions[action])
            state, walked = state.child(action), ops.child(walked, action)
        assert state.current_player() == ops.player(walked) == TERMINAL
        payoffs = tuple(float(payoff) for payoff in engine.get_payoffs())
        assert state.returns() == tuple(ops.returns(walked)) == payoffs
        assert abs(sum(payoffs)) < 1e-12
        folded = sum(p.status == "folded" for p in engine.players)
        showdowns_after_a_fold += folded == 1 and engine.public_card is not None
    assert seen_roles == set(LEDUC_ROLES)
    assert showdowns_after_a_fold > 20  # hands where two players see the showdown after the third folded


# --- the conformance check and the bridge take n players --------------------------------------------


def test_the_conformance_check_takes_n_player_and_general_sum_games() -> None:
    check_game(adapters.load_game(KUHN3, any_players=True))
    check_game(adapters.load_game("openspiel:kuhn_poker(players=4)", any_players=True), playouts=50)
    check_game(adapters.load_game("openspiel:sheriff(num_rounds=1,max_items=1,max_bribe=1)", any_players=True))


def test_a_bridged_three_player_game_has_three_players_and_openspiels_nash_conv_equals_ours() -> None:
    """Three-player Kuhn's adapter, bridged: OpenSpiel's Python ``nash_conv`` on the bridged game equals ours to 1e-9
    for the uniform profile and a CFR+ one, and its ``CFRSolver`` run on the bridged game has our CFR iterates."""
    bridged = as_pyspiel_game(adapters.load_game(KUHN3, any_players=True))
    game_type = bridged.get_type()
    assert (bridged.num_players(), game_type.min_num_players, game_type.max_num_players) == (3, 3, 3)
    assert bridged.new_initial_state().returns() == [0.0, 0.0, 0.0]
    tree = load_tree(KUHN3, any_players=True)
    solver = make_solver(tree, "cfr+")
    solver.run(30)
    for strategy in (tree.uniform_strategy(), solver.average_strategy()):
        ours = exploitability_of_strategy(tree, strategy).nash_conv
        theirs = openspiel_exploitability.nash_conv(bridged, openspiel_table(tree, strategy, bridged))
        assert theirs == pytest.approx(ours, abs=1e-9)
    reference, ours_cfr = cfr.CFRSolver(bridged), make_solver(tree, "cfr")
    for _ in range(5):
        reference.evaluate_and_update_policy()
        ours_cfr.iterate()
        expected = reference.average_policy().action_probability_array
        actual = openspiel_table(tree, ours_cfr.average_strategy(), bridged).action_probability_array
        np.testing.assert_allclose(actual, expected, rtol=0, atol=1e-9)


# --- the whole game (slow: its tree has 189,864 infosets and takes about a minute to build) -----------


@pytest.mark.slow
def test_bridged_three_player_leduc_follows_the_adapter() -> None:
    """Random play through the bridged game beside the adapter: three players' information states and returns."""
    game = leduc3()
    bridged = as_pyspiel_game(game)
    assert (bridged.num_players(), bridged.get_type().max_num_players) == (3, 3)
    rng = np.random.default_rng(1)
    for _ in range(100):
        state = bridged.new_initial_state()
        ours: State = game.new_initial_state()
        while not ours.is_terminal():
            assert state.current_player() == ours.current_player()
            assert state.legal_actions() == list(ours.legal_actions())
            if not ours.is_chance_node():
                for p in range(3):
                    assert state.information_state_string(p) == ours.information_state_key(p)
            action = int(rng.choice(ours.legal_actions()))
            state.apply_action(action)
            ours = ours.child(action)
        assert state.returns() == list(ours.returns()) and len(state.returns()) == 3


@pytest.mark.slow
def test_train_exploitability_and_match_on_three_player_leduc(tmp_path: Path) -> None:
    trained_and_scored(tmp_path / "leduc3.json", LEDUC3, "dcfr+", 20)
    tree = load_tree(LEDUC3, any_players=True)
    uniform = run_cli(["exploitability", "random", "--game", LEDUC3])  # RLCard's RandomAgent reads two players only
    assert uniform.status == 0, uniform.err
    assert f"NashConv {exploitability_of_strategy(tree, tree.uniform_strategy()).nash_conv:.12g}" in uniform.out
    match = run_cli(["match", "--game", LEDUC3, "--hands", "12", "random", "random", "random"])
    assert match.status == 2
    assert match.err.strip().endswith("RLCard's env cannot play more than two players")
    assert match.err.count("\n") == 1
