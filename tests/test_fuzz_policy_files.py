"""Properties of policies and policy files.

- Arbitrary bytes, arbitrary JSON and mutated valid documents fed to the loader: each either loads
  a policy that fits its game, or is refused with a one-line :class:`PolicyFileError`.
- Random valid policies: NashConv is at least -1e-12, equals OpenSpiel's ``nash_conv`` to 1e-9, and
  survives a save and load unchanged.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

from cfr_agents import Policy, PolicyFileError, load_policy
from cfr_agents.tree import CompiledTree, load_tree
from eval import exploitability
from tests.strategies import json_values
from tests.support import GAME_IDS, tree

KUHN = "rlcard:kuhn-poker"
FIELDS = (
    "format",
    "format_version",
    "game",
    "rules_fingerprint",
    "units",
    "algorithm",
    "parameters",
    "iterations",
    "policy",
)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def valid_document() -> dict[str, Any]:
    return Policy.uniform(tree(KUHN)).to_json()


def load_or_refuse(path: Path) -> Policy | None:
    """The loaded policy, checked to fit its game; ``None`` if refused with one line."""
    try:
        policy = load_policy(path)
    except PolicyFileError as error:
        assert "\n" not in str(error) and "policy file " in str(error)
        return None
    t = load_tree(policy.game_id)
    assert set(policy.table) == set(t.infoset_keys)
    for key, row in policy.table.items():
        assert tuple(row) == t.infoset_actions[t.index[key]]
        assert math.isclose(sum(row.values()), 1.0, abs_tol=1e-6) and min(row.values()) >= 0
    assert exploitability(policy, t).nash_conv >= -1e-12
    return policy


@given(content=st.binary(max_size=3000))
def test_arbitrary_bytes(workdir: Path, content: bytes) -> None:
    (workdir / "bytes.json").write_bytes(content)
    load_or_refuse(workdir / "bytes.json")


@given(value=json_values)
def test_arbitrary_json(workdir: Path, value: object) -> None:
    (workdir / "value.json").write_text(json.dumps(value))
    assert load_or_refuse(workdir / "value.json") is None


Mutation = tuple[str, str, str, object]


def mutations(document: dict[str, Any]) -> st.SearchStrategy[Mutation]:
    """``(where, key, action, value)``: replace or delete a field, a row or one probability."""
    keys = st.sampled_from(sorted(document["policy"])) | st.text(max_size=6)
    value = json_values | st.just("<delete>")
    return st.one_of(
        st.tuples(st.just("field"), st.sampled_from(FIELDS) | st.text(max_size=6), st.just(""), value),
        st.tuples(st.just("row"), keys, st.just(""), value),
        st.tuples(st.just("cell"), keys, st.sampled_from(["0", "1", "2", "-1", "01", " 1"]), value),
    )


def mutate(document: dict[str, Any], mutation: Mutation) -> None:
    where, key, action, value = mutation
    table = document["policy"] if isinstance(document.get("policy"), dict) else {}
    target: Any = {"field": document, "row": table}.get(where)
    if where == "cell":
        target = table.setdefault(key, {})
        if not isinstance(target, dict):
            return
        key = action
    if value == "<delete>":
        target.pop(key, None)
    else:
        target[key] = value


@given(data=st.data())
def test_mutated_documents(workdir: Path, valid_document: dict[str, Any], data: st.DataObject) -> None:
    document = json.loads(json.dumps(valid_document))
    for mutation in data.draw(st.lists(mutations(valid_document), min_size=1, max_size=3)):
        mutate(document, mutation)
    (workdir / "mutated.json").write_text(json.dumps(document))
    load_or_refuse(workdir / "mutated.json")


def random_policy(t: CompiledTree, seed: int, sparsity: float, skew: float) -> Policy:
    """A random strategy: each legal action zeroed with probability ``sparsity`` (one is always kept;
    ``sparsity`` 1 gives a pure strategy), the rest weighted by ``uniform ** skew``."""
    rng = np.random.default_rng(seed)
    weights = rng.random(t.action_mask.shape) ** skew * t.action_mask
    weights[rng.random(weights.shape) < sparsity] = 0.0
    keep = np.argmax(np.where(t.action_mask, rng.random(weights.shape), -1.0), axis=1)
    rows = np.arange(t.num_infosets)
    weights[rows, keep] = np.maximum(weights[rows, keep], 1e-3)
    strategy = weights / weights.sum(axis=1, keepdims=True)
    return Policy.from_strategy(t, strategy, algorithm="random", parameters={"seed": seed}, iterations=0)


SHARE = {"openspiel:kuhn_poker": 1, "rlcard:kuhn-poker": 1, "openspiel:leduc_poker": 10, "rlcard:leduc-holdem": 20}
"""1/n of the profile's examples per game: OpenSpiel's nash_conv takes ~0.25 s on Leduc, ~3 s on the bridged
RLCard Leduc, which runs in ``make test-slow`` only (tests/test_openspiel_bridge.py checks three policies there)."""


@pytest.mark.parametrize(
    "game_id", [pytest.param(g, marks=[pytest.mark.slow] if SHARE[g] >= 20 else []) for g in GAME_IDS]
)
def test_random_policies_nash_conv_equals_openspiel(game_id: str, workdir: Path) -> None:
    t = tree(game_id)

    @settings(max_examples=max(1, settings().max_examples // SHARE[game_id]))
    @given(
        seed=st.integers(0, 2**32 - 1),
        sparsity=st.sampled_from([0.0, 1.0]) | st.floats(0, 1),
        skew=st.sampled_from([1.0]) | st.floats(0.1, 8),
    )
    def check(seed: int, sparsity: float, skew: float) -> None:
        policy = random_policy(t, seed, sparsity, skew)
        ours = exploitability(policy, t).nash_conv
        assert ours >= -1e-12
        tabular = policy.openspiel_policy()
        theirs = openspiel_exploitability.nash_conv(tabular.game, tabular)
        assert abs(ours - theirs) <= 1e-9
        path = workdir / "random.json"
        policy.save(path)
        loaded = load_policy(path)
        assert loaded.table == policy.table and exploitability(loaded, t).nash_conv == ours

    check()
