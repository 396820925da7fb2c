"""The public tree of two-player limit hold'em games: betting sequences x boards, with vectors over private hands.

:mod:`~cfr_agents.public_tree.tree` builds it, :mod:`~cfr_agents.public_tree.kernels` and
:mod:`~cfr_agents.public_tree.engine` compute values, best responses and CFR updates over it,
:mod:`~cfr_agents.public_tree.solver` runs full-game CFR, and :mod:`~cfr_agents.public_tree.infosets` finds
OpenSpiel's information states in it.
"""

from __future__ import annotations

from adapters.holdem.rules import LimitRules
from adapters.inputs import UnsupportedGameError
from adapters.openspiel import PREFIX
from cfr_agents.public_tree.tree import PublicTree, build_public_tree

COMPILED_TREE_CARDS = 12
"""The largest deck of a hold'em game (two hole cards) the compiled tree takes: 12 cards and one board card make
about 1.4e7 nodes (``holdem-12``); past it, hold'em games run on the public tree."""


def public_by_default(rules: LimitRules | None) -> bool:
    """Whether a game runs on its public tree unless told otherwise: a two-player limit hold'em game (two hole
    cards) with a deck past :data:`COMPILED_TREE_CARDS`, such as ``fhp``, ``fhp-acpc`` and ``hulh``."""
    return rules is not None and rules.num_hole_cards == 2 and rules.deck_size > COMPILED_TREE_CARDS


def public_tree(game_id: str) -> PublicTree:
    """The public tree, with suit-canonical boards, of ``openspiel:<universal_poker game string>``."""
    if not game_id.startswith(PREFIX):
        raise UnsupportedGameError(f"the public tree runs OpenSpiel universal_poker games, not {game_id}")
    return build_public_tree(game_id.removeprefix(PREFIX), canonical=True)
