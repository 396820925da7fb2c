"""Neural models on the public tree: the strategy materialised with forward passes batched over hands is the
model's own at every information state, and scores as the compiled tree scores it."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from adapters import load_game
from adapters.games import canonical_game_id
from adapters.holdem.tensors import holdem_tensors
from adapters.inputs import InputError
from adapters.openspiel import PREFIX
from adapters.tensors import encoder
from cfr_agents.neural_policy import NeuralPolicy
from cfr_agents.public_tree import neural
from cfr_agents.public_tree.engine import canonical_placement
from cfr_agents.public_tree.infosets import Locator
from cfr_agents.public_tree.neural import Materialiser, network_strategy, torch_strategy
from cfr_agents.public_tree.tree import PublicTree, build_public_tree
from eval.exploitability import exploitability_of_strategy, public_exploitability
from eval.opponents.registry import load_model_file
from tests.support import run_cli
from tests.support import tree as compiled_tree

torch = pytest.importorskip("torch")

from cfr_agents.solvers.neural import networks  # noqa: E402  (after the torch check)

MODELS = {
    "sd-cfr": ("holdem-6", ["--iterations", "4"]),
    "deep-cfr": ("holdem-6", ["--iterations", "3", "--average-batches", "20"]),
    "sd-cfr-thinned": ("holdem-6", ["--iterations", "6", "--kept-networks", "3", "--hidden", "32,32"]),
}
"""Models trained a few iterations by ``cfr-agents train``: name -> (game, options)."""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@cache
def trained(name: str, folder: Path) -> NeuralPolicy:
    game, options = MODELS[name]
    out = folder / f"{name}.json"
    argv = ["train", "--game", game, "--algo", name.removesuffix("-thinned"), "--preset", "fast", "--traversals"]
    status, _, err = run_cli([*argv, "200", "--advantage-batches", "20", *options, "--out", str(out), "--quiet"])
    assert status == 0, err
    model = load_model_file(out, None, name=name).agent.raw
    assert isinstance(model, NeuralPolicy)
    return model


@cache
def public(name: str, canonical: bool) -> PublicTree:
    return build_public_tree(canonical_game_id(name).removeprefix(PREFIX), canonical=canonical)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize(("dtype", "tolerance"), [(np.float64, 1e-12), (np.float32, 1e-6)])
def test_the_materialised_strategy_is_the_model_s_at_every_infoset(
    folder: Path, name: str, dtype: type[np.floating], tolerance: float
) -> None:
    """On the tree with every board, each compiled-tree infoset's entries (found by its key) are
    ``NeuralPolicy.action_probabilities(key)``; every decision node and hand the board leaves is one row."""
    model = trained(name, folder)
    tree = public(MODELS[name][0], False)
    materialiser = Materialiser(tree, network_strategy(model), dtype=dtype)
    strategy = materialiser.strategy()
    assert materialiser.rows == tree.num_infosets == model.tree.num_infosets
    locator = Locator(tree)
    for key in model.tree.infoset_keys:
        expected = list(model.action_probabilities(key).values())
        np.testing.assert_allclose(strategy[locator.locate(key).indices(tree)], expected, rtol=0, atol=tolerance)


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize(("dtype", "relative"), [(np.float64, 0.0), (np.float32, 1e-6)])
def test_its_exploitability_through_the_public_tree_is_the_compiled_tree_s(
    folder: Path, name: str, dtype: type[np.floating], relative: float
) -> None:
    """float64 to 1e-9; float32 strategies, whose last bits differ between CPUs, to 1e-6 of the value as well (a
    NashConv of 163 chips is summed from entries rounded at 6e-8 each)."""
    model = trained(name, folder)
    tree = public(MODELS[name][0], False)
    ours = public_exploitability(tree, Materialiser(tree, network_strategy(model), dtype=dtype).strategy())
    theirs = exploitability_of_strategy(model.tree, model.strategy_on(model.tree))
    for mine, reference in ((ours.nash_conv, theirs.nash_conv), (ours.policy_values[0], theirs.policy_values[0])):
        assert math.isclose(mine, reference, rel_tol=relative, abs_tol=1e-9 if relative == 0.0 else 1e-6), (
            mine,
            reference,
        )


@pytest.mark.parametrize("name", ["sd-cfr", "deep-cfr"])
def test_on_suit_canonical_boards_the_model_plays_suit_canonically(folder: Path, name: str) -> None:
    """On the tree with suit-canonical boards the network reads each hand's smallest image under the board's
    stabilizer, so the strategy is suit-canonical: read on every board, it scores exactly as on the canonical
    tree (a strategy that plays isomorphic hands apart does not)."""
    model = trained(name, folder)
    canonical, full = public("holdem-6", True), public("holdem-6", False)
    strategy = Materialiser(canonical, network_strategy(model), dtype=np.float64).strategy()
    there = public_exploitability(canonical, strategy)
    everywhere = public_exploitability(full, strategy, canonical_placement(full, canonical))
    assert abs(there.nash_conv - everywhere.nash_conv) <= 1e-9
    assert abs(there.policy_values[0] - everywhere.policy_values[0]) <= 1e-9


def test_chunks_and_single_nodes_give_the_whole_strategy(folder: Path) -> None:
    """An SD-CFR model's strategy chunk by chunk (each chunk's segments reading their entry reaches from parent
    segments computed again) and node by node equals the whole array."""
    model = trained("sd-cfr", folder)
    tree = public("holdem-6", True)
    whole = Materialiser(tree, network_strategy(model), dtype=np.float64).strategy()
    materialiser = Materialiser(tree, network_strategy(model), dtype=np.float64)
    bounds = list(materialiser.chunks(4 * tree.num_hands * 3))
    assert len(bounds) > tree.segments.round_start.shape[0]
    for first, stop in reversed(bounds):  # last round first: no parent is ever the last one kept
        start = int(tree.segments.offset[first])
        chunk = materialiser.chunk(first, stop)
        np.testing.assert_allclose(chunk, whole[start : start + chunk.shape[0]], rtol=0, atol=1e-12)
    assert [first for first, _ in bounds] == [0] + [stop for _, stop in bounds[:-1]]
    assert bounds[-1][1] == tree.segments.count
    fresh = Materialiser(tree, network_strategy(model), dtype=np.float64)
    for s in (tree.segments.count - 1, 0):
        for node in range(*tree.betting.ranges[tree.segments.range_index[s]]):
            if tree.node_offset[node] >= 0:
                base = int(tree.segments.offset[s] + tree.node_offset[node])
                block = fresh.probabilities(tree, s, node)
                np.testing.assert_allclose(block.ravel(), whole[base : base + block.size], rtol=0, atol=1e-12)


def test_torch_value_networks_play_regret_matching_on_openspiel_s_tensors() -> None:
    """Two seeded value networks read by regret matching, one per player: each infoset's entries are regret matching
    on the network's predictions for the compiled infoset's OpenSpiel tensor."""
    game = load_game("holdem-6")
    size = holdem_tensors(pyspiel.load_game(game.game_id.removeprefix(PREFIX))).size
    pair = [networks.mlp(size, (16, 16), 3, torch.Generator().manual_seed(seed)) for seed in (1, 2)]
    tree = public("holdem-6", False)
    strategy = Materialiser(tree, torch_strategy("holdem-6", "regret-matching", *pair)).strategy()
    reference = compiled_tree(game.game_id)
    inputs = torch.from_numpy(encoder(game).of_keys(reference.infoset_keys))
    locator = Locator(tree)
    for player in (0, 1):
        rows = np.flatnonzero(reference.infoset_player == player)
        expected = networks.regret_matching(networks.predict(pair[player], inputs[rows]), reference.action_mask[rows])
        for row, sigma in zip(rows, expected, strict=True):
            where = locator.locate(reference.infoset_keys[row]).indices(tree)
            np.testing.assert_allclose(strategy[where], sigma[: where.size], rtol=0, atol=1e-6)


def test_a_model_of_another_game_or_tensor_is_refused() -> None:
    size = holdem_tensors(pyspiel.load_game(load_game("holdem-8").game_id.removeprefix(PREFIX))).size
    network = networks.mlp(size, (4,), 3, torch.Generator().manual_seed(0))
    with pytest.raises(InputError, match=r"^the model is for openspiel:.*numRanks=4.*, not openspiel:.*numRanks=3"):
        Materialiser(public("holdem-6", True), torch_strategy("holdem-8", "softmax", network))
    small = public("holdem-6", True)
    other = torch_strategy("holdem-8", "softmax", network)
    wrong_size = replace(other, game_id=small.game_id, rules_fingerprint=small.rules_fingerprint)
    with pytest.raises(InputError, match=f"^a network of {size} inputs and 3 outputs does not read"):
        Materialiser(small, wrong_size)
    with pytest.raises(InputError, match="not 'argmax'"):
        torch_strategy("holdem-8", "argmax", network)


def test_on_suit_canonical_boards_each_hand_plays_its_image_s_row(folder: Path) -> None:
    """The networks run once per image of the hands under a canonical board's stabilizer: every hand plays the
    model's strategy at its smallest image, the image's row on the tree with every board."""
    model = trained("deep-cfr", folder)
    canonical, full = public("holdem-6", True), public("holdem-6", False)
    ours = Materialiser(canonical, network_strategy(model), dtype=np.float64).strategy()
    theirs = Materialiser(full, network_strategy(model), dtype=np.float64).strategy()
    segment_of = {(int(full.segments.range_index[s]), full.segments.boards[s]): s for s in range(full.segments.count)}
    hands = canonical.num_hands
    for s in range(canonical.segments.count):
        there = segment_of[int(canonical.segments.range_index[s]), canonical.segments.boards[s]]
        group = int(canonical.segments.group[s])
        members = canonical.group_members[canonical.group_start[group] : canonical.group_start[group + 1]]
        image = canonical.permutations[members].min(axis=0)
        valid = np.flatnonzero((canonical.masks & canonical.segments.board_mask[s]) == 0)
        for node in range(*canonical.betting.ranges[canonical.segments.range_index[s]]):
            if canonical.node_offset[node] < 0:
                continue
            size = int(canonical.betting.num_children[node]) * hands
            at = int(canonical.segments.offset[s] + canonical.node_offset[node])
            mine = ours[at : at + size].reshape(-1, hands)[:, valid]
            at = int(full.segments.offset[there] + full.node_offset[node])
            np.testing.assert_allclose(mine, theirs[at : at + size].reshape(-1, hands)[:, image[valid]], atol=1e-12)


def test_threads_write_what_one_thread_writes(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An SD-CFR model's strategy written by a thread per core (each keeping its own parents' reaches) is the one a
    single thread writes, bit for bit."""
    model = trained("sd-cfr", folder)
    tree = public("holdem-6", True)
    threaded = Materialiser(tree, network_strategy(model), dtype=np.float64)
    whole = threaded.strategy()
    monkeypatch.setattr(neural, "_cores", lambda: 1)
    alone = Materialiser(tree, network_strategy(model), dtype=np.float64)
    np.testing.assert_array_equal(alone.strategy(), whole)
    assert threaded.rows == alone.rows == tree.num_infosets


def test_openblas_runs_one_thread_while_a_strategy_is_written_and_gets_its_threads_back() -> None:
    found = neural._openblas()
    if not found:
        pytest.skip("no OpenBLAS in this process")
    get, set_threads = found[0]
    before = get()
    set_threads(2)
    try:
        with neural._blas_alone() as alone:
            assert alone
            assert get() == 1
        assert get() == 2
    finally:
        set_threads(before)
