"""Games and compiled trees built once per test session."""

from __future__ import annotations

import functools

import adapters
from adapters import Game
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
