"""Games and compiled trees built once per test session, and values the tests share."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Iterator
from typing import Any

import pyspiel
import pytest
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.policy import TabularPolicy

import adapters
from adapters import Game
from adapters.rlcard import RLCardGame
from cfr_agents.tree import CompiledTree, compile_tree

GAME_IDS = (
    "openspiel:kuhn_poker",
    "openspiel:leduc_poker",
    "rlcard:kuhn-poker",
    "rlcard:leduc-holdem",
)


@functools.cache
def game(game_id: str) -> Game:
    return adapters.load_game(game_id)


@functools.cache
def tree(game_id: str) -> CompiledTree:
    return compile_tree(game(game_id))


def cli_commands() -> dict[str, argparse.ArgumentParser]:
    """Every command of ``cfr-agents`` and its parser, as :func:`cfr_agents.cli.build_parser` registers them."""
    from cfr_agents.cli import build_parser

    [commands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def card_name(card: Any) -> str:
    """An RLCard card as the adapter names it (Leduc's ``Card`` objects, Kuhn's rank strings)."""
    return str(card.get_index()) if hasattr(card, "get_index") else str(card)


def rlcard_deal(engine: Any, game: RLCardGame) -> list[int]:
    """The adapter's chance outcomes for the deal an RLCard engine made: the hands (and for Leduc
    the small-blind seat, who acts first)."""
    hands = [p.hand for p in engine.players] if hasattr(engine, "players") else list(engine.hands)
    outcomes = [game.deck_index[card_name(card)] for card in hands]
    if "seat" in game.spec.deal:
        outcomes.append(int(engine.game_pointer))
    return outcomes


RLCARD_LEDUC_SMALL_BLIND_VALUE = 0.0119127
"""RLCard Leduc's value for the small blind, in BB, as published in the README: OpenSpiel's
sequence-form LP on the bridged game, rerun by the test below. Player 0's value, which averages
the two seats, is 0: the seat is a fair coin and the seats have the same rules."""


def values_by_role(pyspiel_game: pyspiel.Game, policies: list[TabularPolicy]) -> dict[str, float]:
    """Player 0's expected value seated as small blind (``SB``) and as big blind (``BB``).

    The role is read from player 0's information state at the first decision after the deal.
    """
    weighted = {"SB": 0.0, "BB": 0.0}
    mass = {"SB": 0.0, "BB": 0.0}

    def deals(state: pyspiel.State, reach: float) -> Iterator[tuple[pyspiel.State, float]]:
        if not state.is_chance_node():
            yield state, reach
            return
        for outcome, probability in state.chance_outcomes():
            yield from deals(state.child(outcome), reach * probability)

    for state, reach in deals(pyspiel_game.new_initial_state(), 1.0):
        role = state.information_state_string(0).split("|")[3]
        weighted[role] += reach * expected_game_score.policy_value(state, policies)[0]
        mass[role] += reach
    assert mass == pytest.approx({"SB": 0.5, "BB": 0.5})
    return {role: weighted[role] / mass[role] for role in weighted}
