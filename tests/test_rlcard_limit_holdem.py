"""``rlcard:limit-holdem`` as RLCard 1.2.0 plays it: the adapter in lockstep with RLCard's env over random hands,
and each rule of the engine that the documentation states, checked on the engine itself."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
import rlcard

import adapters
from adapters.base import State
from adapters.rlcard import RLCardGame
from eval.opponents import shipped_model
from tests.support import run_cli

GAME = "rlcard:limit-holdem"


def game() -> RLCardGame:
    loaded = adapters.load_game(GAME)
    assert isinstance(loaded, RLCardGame)
    return loaded


def env(seed: int) -> Any:
    return rlcard.make("limit-holdem", config={"seed": seed})


def deal_like(environment: Any) -> State:
    """The adapter's state after the env's deal: the same hole cards, dealt in the engine's order (player 0's
    first card, player 1's, player 0's second, player 1's), and the same small-blind seat."""
    ours = game()
    players = environment.game.players
    small_blind = next(i for i, player in enumerate(players) if player.in_chips == environment.game.small_blind)
    state: State = ours.new_initial_state()
    for card in (players[0].hand[0], players[1].hand[0], players[0].hand[1], players[1].hand[1]):
        state = state.child(ours.deck_index[card.get_index()])
    return state.child(small_blind)


@pytest.mark.parametrize("hands", [300, pytest.param(20_000, marks=pytest.mark.slow)])
def test_random_hands_follow_rlcards_env_action_for_action(hands: int) -> None:
    """Random legal play (300 hands; 20,000 under ``slow``): the same player to act, the same legal actions, the
    same information-state key from the adapter and from the env's own state (its ``raw_obs`` and action record),
    the board dealt as the env deals it, and the same payoffs."""
    ours = game()
    rng = np.random.default_rng(7)
    for seed in range(hands):
        environment = env(seed)
        _, player = environment.reset()
        state = deal_like(environment)
        board = 0
        while not environment.is_over():
            public = environment.game.public_cards
            while board < len(public):  # the env dealt: the adapter deals the same cards
                assert state.is_chance_node()
                state = state.child(ours.deck_index[public[board].get_index()])
                board += 1
            player = environment.get_player_id()
            assert state.current_player() == player
            legal = sorted(environment.game.get_legal_actions())
            assert sorted(ours.action_name(a) for a in state.legal_actions()) == legal
            assert state.information_state_key(player) == ours.key_from_env_state(environment.get_state(player))
            name = legal[int(rng.integers(len(legal)))]
            environment.step(environment.actions.index(name))
            state = state.child(ours.actions.index(name))
        assert state.is_terminal()
        assert state.returns() == pytest.approx(tuple(environment.get_payoffs()))


def play(environment: Any, *names: str) -> Any:
    for name in names:
        environment.step(environment.actions.index(name))
    return environment.game


def test_the_small_blind_seat_is_drawn_after_the_deal_at_random() -> None:
    ours = game()
    state: State = ours.new_initial_state()
    for card in range(4):
        assert state.is_chance_node()
        state = state.child(card)
    assert state.chance_outcomes() == ((0, 0.5), (1, 0.5))
    seats = [env(seed).reset()[1] for seed in range(200)]
    assert 60 < sum(seats) < 140


def test_raises_are_two_chips_preflop_and_on_the_flop_and_four_on_the_turn_and_river() -> None:
    environment = env(1)
    _, first = environment.reset()
    engine = environment.game
    chips = [player.in_chips for player in engine.players]
    assert sorted(chips) == [1, 2] and chips[first] == 1  # the small blind acts first preflop
    play(environment, "raise")
    assert engine.players[first].in_chips == 4  # calls 1, raises 2
    for round_, size in enumerate((2, 2, 4, 4)):
        if round_ > 0:
            acting = environment.get_player_id()
            before = max(player.in_chips for player in engine.players)
            play(environment, "raise")
            assert engine.players[acting].in_chips == before + size
        play(environment, "call")
        assert len(engine.public_cards) == (3, 4, 5, 5)[round_] or environment.is_over()


def test_at_most_four_raises_a_round_the_blinds_not_counted() -> None:
    """Five bets preflop (the big blind and four raises), where the ACPC rules of HULH allow four."""
    environment = env(2)
    environment.reset()
    engine = play(environment, "raise", "raise", "raise", "raise")
    assert "raise" not in engine.get_legal_actions()
    assert max(player.in_chips for player in engine.players) == 2 + 4 * 2


def test_after_a_limp_and_a_check_the_small_blind_leads_the_flop() -> None:
    """After preflop, the first to act is whoever did not act last in the round before."""
    environment = env(3)
    _, small_blind = environment.reset()
    engine = play(environment, "call", "check")
    assert len(engine.public_cards) == 3 and environment.get_player_id() == small_blind
    environment = env(3)
    environment.reset()
    engine = play(environment, "call", "raise", "call")  # the small blind acts last: the big blind leads
    assert len(engine.public_cards) == 3 and environment.get_player_id() == 1 - small_blind


def test_fold_is_legal_where_check_is_and_illegal_ids_become_check_or_fold() -> None:
    environment = env(4)
    environment.reset()
    engine = play(environment, "call")
    assert {"check", "fold"} <= set(engine.get_legal_actions())
    assert environment._decode_action(environment.actions.index("call")) == "check"
    play(environment, "raise", "raise", "raise", "raise")
    assert "raise" not in engine.get_legal_actions() and "check" not in engine.get_legal_actions()
    assert environment._decode_action(environment.actions.index("raise")) == "fold"


def test_payoffs_are_in_big_blinds() -> None:
    environment = env(5)
    _, small_blind = environment.reset()
    play(environment, "fold")
    payoffs = environment.get_payoffs()
    assert payoffs[small_blind] == -0.5 and payoffs[1 - small_blind] == 0.5


def test_the_information_state_key_names_the_seat_role_cards_board_and_rounds() -> None:
    ours = game()
    state: State = ours.new_initial_state()
    for card in ("SA", "HK", "S2", "DQ"):
        state = state.child(ours.deck_index[card])
    state = state.child(1)  # player 1 is the small blind
    assert state.information_state_key(1) == "1|SB|DQ-HK||".replace("||", "|-|")
    for name in ("raise", "call"):
        state = state.child(ours.actions.index(name))
    for card in ("C9", "C2", "D7"):
        state = state.child(ours.deck_index[card])
    assert state.information_state_key(0) == "0|BB|S2-SA|C2-C9-D7|raise-call/"


def test_the_game_has_no_compiled_tree_and_says_so_in_one_line() -> None:
    run = run_cli(["exploitability", "random", "--game", GAME])
    assert run.status == 2 and len(run.err.strip().splitlines()) == 1
    assert "no compiled tree holds it" in run.err


def test_always_call_and_always_raise_take_their_first_legal_choice() -> None:
    """Every decision of 200 hands in RLCard's env: ``always-call`` calls or checks, ``always-raise`` raises where
    it may, else calls or checks; neither folds."""
    from eval.opponents.rlcard_builtin import FIXED, FixedAgent

    names = game().actions
    for name, preference in FIXED.items():
        agent = FixedAgent(names, preference)
        for seed in range(100):
            environment = env(seed)
            state, _ = environment.reset()
            while not environment.is_over():
                action, info = agent.eval_step(state)
                legal = list(state["raw_legal_actions"])
                expected = next(choice for choice in preference if choice in legal)
                assert names[action] == expected and info["probs"][expected] == 1.0, name
                state, _ = environment.step(action)


def test_a_match_in_rlcards_env_has_no_exact_value() -> None:
    argv = ["match", "rlcard-limit-rule-v1", "always-call", "--game", GAME, "--hands", "200", "--json"]
    run = run_cli(argv)
    assert run.status == 0, run.err
    report = json.loads(run.out)
    assert report["hands"] == 200 and report["exact"] is None
    assert "rlcard:limit-holdem has no compiled tree" in report["exact_note"]
    listed = run_cli(["opponents", "--game", GAME, "--json"])
    names = [entry["name"] for entry in json.loads(listed.out)["opponents"]]
    models = [name for name in ("rlcard-nfsp", "rlcard-dqn") if shipped_model(name, game()).is_file()]
    assert names == ["random", "rlcard-limit-rule-v1", "always-call", "always-raise", *models]
