"""The public tree of two-player limit hold'em games: betting sequences x boards, with vectors over private hands.

:mod:`~cfr_agents.public_tree.tree` builds it, :mod:`~cfr_agents.public_tree.kernels` and
:mod:`~cfr_agents.public_tree.engine` compute values, best responses and CFR updates over it,
:mod:`~cfr_agents.public_tree.solver` runs full-game CFR, and :mod:`~cfr_agents.public_tree.infosets` finds
OpenSpiel's information states in it.
"""
