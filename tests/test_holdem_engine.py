"""The hold'em engine (betting tree and cards, no game tree) against both toolkits, hand for hand: OpenSpiel's
``universal_poker`` (``fhp``, ``hulh``) and RLCard's ``limit-holdem`` env, over random hands."""

from __future__ import annotations

import re

import numpy as np
import pyspiel
import pytest
import rlcard

import adapters  # noqa: F401  (registers RLCard's kuhn-poker and the bridged games)
from adapters.holdem.betting import DEAL, DECISION, FOLD, SHOWDOWN, walk_betting
from adapters.holdem.engine import holdem_engine, rlcard_card
from adapters.inputs import UnsupportedGameError

NAMES = {0: "fold", 2: "raise"}


def _name(action: int, legal: list[str]) -> str:
    return NAMES.get(action, "call" if "call" in legal else "check")


@pytest.mark.parametrize(
    ("game", "hands"), [("fhp", 400), ("hulh", 400), pytest.param("hulh", 20_000, marks=pytest.mark.slow)]
)
def test_hands_follow_universal_poker(game: str, hands: int) -> None:
    """Random deals and random legal actions: the engine's legal actions are ``pyspiel``'s at every decision, its
    rounds end where ``pyspiel`` deals, and its payoffs are ``pyspiel``'s returns."""
    engine = holdem_engine(game)
    spiel = pyspiel.load_game(engine.game_id.removeprefix("openspiel:"))
    rules, rng = engine.rules, np.random.default_rng(0)
    for _ in range(hands):
        cards = engine.deal(rng)
        state = spiel.new_initial_state()
        for card in cards[: 2 * rules.num_hole_cards]:
            state.apply_action(int(card))
        node, dealt = engine.root, 2 * rules.num_hole_cards
        while not state.is_terminal():
            if state.is_chance_node():
                assert int(engine.betting.kind[node]) == DEAL
                round_ = int(engine.betting.round[node]) + 1
                for card in cards[dealt : dealt + rules.board_cards[round_]]:
                    state.apply_action(int(card))
                dealt += rules.board_cards[round_]
                node = engine.child(node, -1)
                continue
            assert engine.is_decision(node) and int(engine.betting.player[node]) == state.current_player()
            assert engine.legal_actions(node) == state.legal_actions()
            action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
            node = engine.child(node, action)
        assert engine.payoffs(node, cards) == tuple(state.returns())


@pytest.mark.parametrize("hands", [400, pytest.param(20_000, marks=pytest.mark.slow)])
def test_hands_follow_rlcards_limit_holdem(hands: int) -> None:
    """RLCard's env deals and draws the small blind's seat; the engine holds the big blind as player 0 and the small
    blind as player 1. At every decision the same position acts with the same legal actions; rounds end where the
    env deals; the payoffs are the env's, in big blinds."""
    engine = holdem_engine("rlcard:limit-holdem")
    rng = np.random.default_rng(1)
    for seed in range(hands):
        env = rlcard.make("limit-holdem", config={"seed": seed})
        env.reset()
        game = env.game
        small = next(i for i, player in enumerate(game.players) if player.in_chips == game.small_blind)
        seat_of = (1 - small, small)  # position -> seat
        holes = [rlcard_card(card.get_index()) for p in seat_of for card in game.players[p].hand]
        node, board = engine.root, 0
        while not env.is_over():
            if len(game.public_cards) > board:
                assert int(engine.betting.kind[node]) == DEAL
                node, board = engine.child(node, -1), len(game.public_cards)
            position = int(engine.betting.player[node])
            assert seat_of[position] == env.get_player_id()
            legal = game.get_legal_actions()
            ids = sorted({0 if a == "fold" else 2 if a == "raise" else 1 for a in legal})
            assert engine.legal_actions(node) == ids
            action = int(rng.choice(ids))
            env.step(env.actions.index(_name(action, legal)))
            node = engine.child(node, action)
        cards = np.array(holes + [rlcard_card(card.get_index()) for card in game.public_cards], dtype=np.int64)
        if int(engine.betting.kind[node]) == DEAL:  # a fold cannot end here: only a showdown after the river
            pytest.fail("the env ended a hand the engine has not ended")
        payoffs = env.get_payoffs()
        assert engine.payoffs(node, cards) == pytest.approx((payoffs[seat_of[0]], payoffs[seat_of[1]]))


def test_the_betting_trees_size() -> None:
    """Five bets preflop and four a round after in RLCard's game against HULH's four and five: more sequences."""
    assert holdem_engine("hulh").betting.num_nodes == 17_221
    assert holdem_engine("rlcard:limit-holdem").betting.num_nodes > 17_221


class OneBet:
    """A one-decision betting game for :func:`walk_betting`: player 0 folds (action 0) or calls (action 1) to a
    showdown, having put in ``stakes``; a fold returns ``fold_returns``."""

    def __init__(self, stakes: tuple[float, float], fold_returns: list[float], via: int = -1) -> None:
        self.stakes, self.fold_returns, self.via = stakes, fold_returns, via

    def is_chance_node(self) -> bool:
        return False

    def is_terminal(self) -> bool:
        return self.via >= 0

    def current_player(self) -> int:
        return 0

    def legal_actions(self) -> list[int]:
        return [] if self.is_terminal() else [0, 1]

    def child(self, action: int) -> OneBet:
        return OneBet(self.stakes, self.fold_returns, action)

    def returns(self) -> list[float]:
        assert self.via == 0, "a showdown's returns are never read: they depend on the cards"
        return self.fold_returns

    def history(self) -> list[int]:
        return [] if self.via < 0 else [self.via]


@pytest.mark.parametrize(
    ("stakes", "fold_returns", "refusal"),
    [
        ((1.0, 1.0), [-1.0, 1.0], None),
        ((1.0, 1.0), [-2.0, 2.0], "returns [-2.0, 2.0], not the folder's stake"),
        ((1.0, 2.0), [-1.0, 1.0], "between unequal stakes (1.0, 2.0)"),
    ],
)
def test_a_betting_walk_refuses_folds_and_showdowns_it_cannot_pay(
    stakes: tuple[float, float], fold_returns: list[float], refusal: str | None
) -> None:
    """A fold must lose what the folder put in and a showdown be between equal stakes: the engine pays by those."""
    if refusal is None:
        walked = walk_betting(OneBet(stakes, fold_returns), lambda state: state.stakes)
        assert walked.kind.tolist() == [DECISION, FOLD, SHOWDOWN]
        return
    with pytest.raises(UnsupportedGameError, match=re.escape(refusal)):
        walk_betting(OneBet(stakes, fold_returns), lambda state: state.stakes)
