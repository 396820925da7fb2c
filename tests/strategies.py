"""Hypothesis strategies the property tests share."""

from __future__ import annotations

from hypothesis import strategies as st

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=12,
)
"""Any JSON value, nested a little (floats include nan and infinities, as ``json.dumps`` writes them)."""
