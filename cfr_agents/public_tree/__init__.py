"""The public tree of two-player limit hold'em games: betting sequences x boards, with vectors over private hands.

:mod:`~cfr_agents.public_tree.tree` builds it, :mod:`~cfr_agents.public_tree.kernels` and
:mod:`~cfr_agents.public_tree.engine` compute values, best responses and CFR updates over it,
:mod:`~cfr_agents.public_tree.solver` runs full-game CFR, and :mod:`~cfr_agents.public_tree.infosets` finds
OpenSpiel's information states in it.
"""

from __future__ import annotations

from adapters.holdem.rules import COMPILED_TREE_CARDS, public_by_default
from adapters.inputs import UnsupportedGameError
from adapters.openspiel import PREFIX
from cfr_agents.public_tree.tree import PublicTree, build_public_tree

__all__ = ["COMPILED_TREE_CARDS", "public_by_default", "public_tree"]


def public_tree(game_id: str) -> PublicTree:
    """The public tree, with suit-canonical boards, of ``openspiel:<universal_poker game string>``."""
    if not game_id.startswith(PREFIX):
        raise UnsupportedGameError(f"the public tree runs OpenSpiel universal_poker games, not {game_id}")
    return build_public_tree(game_id.removeprefix(PREFIX), canonical=True)
