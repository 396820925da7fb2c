"""Neural CFR: traversals that sample the exact regrets, uniform reservoirs, networks that reproduce
regret matching, and short Deep CFR and SD-CFR runs that converge, the same for the same seed."""

from __future__ import annotations

import csv
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

import cfr_agents
from adapters.tensors import encoder
from cfr_agents.solvers.neural import NeuralSettings, make_neural_solver, networks, traversal
from cfr_agents.solvers.sampling import kernel_tree
from eval.exploitability import exploitability_of_strategy
from tests.support import game, run_cli, tree

torch = pytest.importorskip("torch")

KUHN = "openspiel:kuhn_poker"


def counterfactual_regrets(
    nodes: np.ndarray, values: np.ndarray, cdf: np.ndarray, sigma: np.ndarray, player: int, infosets: int
) -> np.ndarray:
    """r(I, a) = sum over h in I of pi_-i(h) (v(ha) - v(h)), by brute force over the kernel's node arrays
    (breadth-first: parents before children)."""
    from cfr_agents.solvers.sampling.kernel_support import CHANCE, CODE, COUNT, FIRST, INDEX, TERMINAL

    others = np.ones(len(nodes))  # pi_-i(h): chance and the opponent
    for node in range(len(nodes)):
        code, first, count = nodes[node, CODE], nodes[node, FIRST], nodes[node, COUNT]
        if code == TERMINAL:
            continue
        for a in range(count):
            child = first + a
            if code == CHANCE:
                probability = cdf[child] - (cdf[child - 1] if a > 0 else 0.0)
            elif code == 1 + player:
                probability = 1.0
            else:
                probability = sigma[nodes[node, INDEX], a]
            others[child] = others[node] * probability
    value = values[:, player].copy()
    regret = np.zeros((infosets, sigma.shape[1]))
    for node in range(len(nodes) - 1, -1, -1):
        code, first, count = nodes[node, CODE], nodes[node, FIRST], nodes[node, COUNT]
        if code == TERMINAL:
            continue
        children = value[first : first + count]
        if code == CHANCE:
            value[node] = sum((others[first + a] / others[node]) * children[a] for a in range(count))
            continue
        infoset = nodes[node, INDEX]
        value[node] = float(sigma[infoset, :count] @ children)
        if code == 1 + player:
            regret[infoset, :count] += others[node] * (children - value[node])
    return regret


@pytest.mark.parametrize("game_id", [KUHN, "rlcard:leduc-holdem"])
@pytest.mark.parametrize("player", [0, 1])
def test_traversal_regrets_are_unbiased_samples_of_the_counterfactual_regrets(game_id: str, player: int) -> None:
    """Under uniform play, the traversals' regret samples summed per infoset, over the number of
    traversals, estimate the counterfactual regret r(I, a) of the uniform profile. Cells are
    checked to 4.5 standard errors where at least 200 samples make the normal approximation hold."""
    compiled = tree(game_id)
    nodes, values, cdf, depth_bound, _ = kernel_tree(compiled)
    current = compiled.uniform_strategy()
    traversals = 20_000
    own_bound, other_bound = traversal.visit_bounds(nodes)[player] * traversals
    own_infoset, other_infoset = np.empty(own_bound, np.int64), np.empty(other_bound, np.int64)
    own_regret = np.zeros((own_bound, compiled.action_mask.shape[1]))
    rng = np.random.default_rng(1).integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False)
    owns, others, touched = traversal.traverse(
        traversals, player, nodes, values, cdf, depth_bound, current, rng, own_infoset, own_regret, other_infoset
    )
    assert owns > 0 and others > 0 and touched > owns + others
    assert set(compiled.infoset_player[own_infoset[:owns]]) == {player}
    assert set(compiled.infoset_player[other_infoset[:others]]) == {1 - player}
    n = compiled.num_infosets
    sums = np.zeros((n, own_regret.shape[1]))
    squares = np.zeros_like(sums)
    visits = np.bincount(own_infoset[:owns], minlength=n)
    np.add.at(sums, own_infoset[:owns], own_regret[:owns])
    np.add.at(squares, own_infoset[:owns], own_regret[:owns] ** 2)
    mean = sums / traversals  # E[sum of the samples at I in one traversal] = r^1(I, .)
    standard_error = np.sqrt(np.maximum(squares / traversals - mean**2, 0.0) / traversals)
    regret = counterfactual_regrets(nodes, values, cdf, current, player, n)
    rows = (compiled.infoset_player == player) & (visits >= 200)
    assert rows.sum() >= min(6, (compiled.infoset_player == player).sum() // 4)
    assert np.all(np.abs(mean[rows] - regret[rows]) <= 4.5 * standard_error[rows] + 1e-12)
    assert standard_error[rows].max() > 0


def test_reservoir_keeps_every_offered_sample_with_equal_probability() -> None:
    """Offer 50 samples to a reservoir of 10, 20,000 times: each sample is held 2,000 times in expectation."""
    capacity, offered, repeats = 10, 50, 20_000
    held = np.zeros(offered)
    rng = np.random.default_rng(2).integers(0, 2**64, size=4, dtype=np.uint64, endpoint=False)
    values = np.zeros((offered, 1), np.float32)
    for _ in range(repeats):
        infoset, iteration = np.zeros(capacity, np.int32), np.zeros(capacity, np.int32)
        memory = np.zeros((capacity, 1), np.float32)
        seen = 0
        for first in range(0, offered, 7):  # offered in batches of 7, as traversals deliver them
            batch = np.arange(first, min(first + 7, offered))
            seen = traversal.reservoir_store(infoset, iteration, memory, seen, batch, values[batch], 1, rng)
        held[infoset] += 1
    assert held.sum() == capacity * repeats
    expected = capacity * repeats / offered
    statistic = float(((held - expected) ** 2 / expected).sum())  # chi-squared, offered - 1 = 49 dof
    dof = offered - 1
    z = 3.719  # the standard normal's 1 - 1e-4 quantile
    critical = dof * (1 - 2 / (9 * dof) + z * (2 / (9 * dof)) ** 0.5) ** 3  # Wilson-Hilferty: P(chi2 > it) ~ 1e-4
    assert statistic < critical, (statistic, critical, held)


def test_an_advantage_network_fitted_to_exact_regrets_reproduces_regret_matching() -> None:
    """Trained to (near) zero loss on Kuhn's exact cumulative regrets after 10 CFR iterations, the value
    network's regret matching is tabular regret matching (argmax where no regret is positive)."""
    compiled = tree(KUHN)
    solver = cfr_agents.make_solver(compiled, "cfr")
    solver.run(10)
    regret = solver.state()["regret"]
    inputs = torch.from_numpy(encoder(game(KUHN)).of_keys(compiled.infoset_keys)).double()
    target = torch.from_numpy(regret)
    torch.set_num_threads(1)
    network = networks.mlp(inputs.shape[1], (64, 64), regret.shape[1], torch.Generator().manual_seed(0)).double()
    illegal = ~torch.from_numpy(compiled.action_mask)
    optimiser = torch.optim.LBFGS(  # float64 and L-BFGS: zero loss on any CPU, where Adam's float32 stalls at 1e-4
        network.parameters(), max_iter=500, tolerance_grad=1e-12, tolerance_change=1e-15, line_search_fn="strong_wolfe"
    )

    def loss() -> Any:
        optimiser.zero_grad()
        value = ((network(inputs) - target) ** 2).masked_fill(illegal, 0.0).sum()
        value.backward()
        return value

    for _ in range(4):
        optimiser.step(loss)
    assert loss().item() < 1e-9
    ours = networks.regret_matching(networks.predict(network, inputs), compiled.action_mask)
    positive = np.maximum(regret, 0.0)
    has_positive = positive.sum(axis=1) > 1e-9
    expected = solver.current_strategy()
    np.testing.assert_allclose(ours[has_positive], expected[has_positive], atol=1e-3)
    best = np.argmax(np.where(compiled.action_mask, regret, -np.inf), axis=1)
    assert all(ours[i, best[i]] == 1.0 for i in np.flatnonzero(~has_positive))


FAST = NeuralSettings(
    traversals=400,
    advantage_batches=30,
    advantage_batch_size=256,
    advantage_init="last",
    average_batches=400,
    average_batch_size=256,
)
"""Kuhn settings for the default suite (seconds, not minutes): warm-started value networks, as ``fast`` trains them,
need a third of the steps of networks trained from scratch. After 30 iterations, seeds 0-3 reached NashConv
0.045-0.100 (SD-CFR) and 0.052-0.120 (Deep CFR), under the thresholds below."""


TINY = replace(
    FAST,
    traversals=20,
    advantage_batches=3,
    advantage_batch_size=32,
    advantage_init="scratch",
    average_batches=3,
    hidden=(8,),
)
"""Settings of a few milliseconds an iteration on Kuhn."""


def kuhn_solver(algorithm: str, settings: NeuralSettings = TINY, seed: int = 0) -> Any:
    compiled = tree(KUHN)
    tensors = encoder(game(KUHN)).of_keys(compiled.infoset_keys)
    return make_neural_solver(compiled, tensors, algorithm, settings, rng=np.random.default_rng(seed))


def first_targets(make: Any) -> list[NDArray[np.float32]]:
    r"""The value-network targets of player 0 after one iteration of ``make(value_scale=s)``'s solver, for
    :math:`s` = 1 and 4: both drawn under the uniform :math:`\sigma^1`, so from the same samples."""
    targets = []
    for scale in (1.0, 4.0):
        solver = make(value_scale=scale)
        solver.run(1)
        memory = solver.advantage_memories[0]
        targets.append(memory.values[: memory.filled].copy())
    return targets


def test_the_value_networks_fit_the_regrets_divided_by_the_value_scale() -> None:
    r""":math:`\tilde r / s` is what the value network fits: the same samples, divided by :math:`s` (4, a power of
    two, divides ``float32`` numbers exactly)."""
    unscaled, scaled = first_targets(lambda **scale: kuhn_solver("sd-cfr", replace(TINY, **scale)))
    assert np.abs(unscaled).max() > 0.5
    np.testing.assert_array_equal(scaled, unscaled / 4)


@pytest.mark.parametrize(("algorithm", "threshold"), [("sd-cfr", 0.12), ("deep-cfr", 0.15)])
def test_short_runs_on_kuhn_reach_a_documented_nash_conv(algorithm: str, threshold: float) -> None:
    compiled = tree(KUHN)
    solver = make_neural_solver(
        compiled, encoder(game(KUHN)).of_keys(compiled.infoset_keys), algorithm, FAST, rng=np.random.default_rng(0)
    )
    solver.run(30)
    nash_conv = exploitability_of_strategy(compiled, solver.average_strategy()).nash_conv
    uniform = exploitability_of_strategy(compiled, compiled.uniform_strategy()).nash_conv
    assert nash_conv <= threshold < uniform, nash_conv
    assert solver.nodes_touched > 30 * 2 * FAST.traversals


LEDUC_THRESHOLDS = {"sd-cfr": 0.3, "deep-cfr": 0.4}
"""NashConv after 200 iterations of the ``fast`` preset on either Leduc (uniform play: 4.75 chips on OpenSpiel's,
2.94 on RLCard's, whose units are big blinds)."""


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["sd-cfr", "deep-cfr"])
@pytest.mark.parametrize("game_id", ["openspiel:leduc_poker", "rlcard:leduc-holdem"])
def test_leduc_runs_reach_a_documented_nash_conv(algorithm: str, game_id: str) -> None:
    from eval.opponents.neural import settings_of

    compiled = tree(game_id)
    solver = make_neural_solver(
        compiled,
        encoder(game(game_id)).of_keys(compiled.infoset_keys),
        algorithm,
        settings_of("fast"),
        rng=np.random.default_rng(0),
    )
    solver.run(200)
    nash_conv = exploitability_of_strategy(compiled, solver.average_strategy()).nash_conv
    assert nash_conv <= LEDUC_THRESHOLDS[algorithm], nash_conv


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["sd-cfr", "deep-cfr"])
def test_a_shipped_model_plays_its_exact_value_in_rlcard_s_env(algorithm: str) -> None:
    """The shipped Leduc model, running its networks at each decision in RLCard's own env: a duplicate match
    against random agrees with the exact value within 4 standard errors."""
    status, printed, err = run_cli(
        ["match", algorithm, "random", "--game", "rlcard:leduc-holdem", "--hands", "20000", "--json", "--quiet"]
    )
    assert status == 0, err
    match = json.loads(printed)
    assert abs(match["mean"] - match["exact"]) <= 4 * match["standard_error"], match


def test_the_same_seed_gives_the_same_model_on_one_machine() -> None:
    compiled = tree(KUHN)
    tensors = encoder(game(KUHN)).of_keys(compiled.infoset_keys)
    runs = []
    for _ in range(2):
        solver = make_neural_solver(compiled, tensors, "deep-cfr", FAST, rng=np.random.default_rng(7))
        solver.run(2)
        runs.append((solver.average_strategy(), networks.weights_of(solver.value_networks[1], "v1")))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    for name, value in runs[0][1].items():
        np.testing.assert_array_equal(value, runs[1][1][name])


@pytest.mark.parametrize("advantage_init", ["last", "scratch"])
def test_the_value_networks_step_size_decays_from_t0(advantage_init: str) -> None:
    """eta_t = eta min(1, t0/t)^kappa: eta = 0.004, t0 = 2, kappa = 1 gives 0.004, 0.004, 0.004 * 2/3, 0.004 / 2."""
    compiled = tree(KUHN)
    settings = replace(
        FAST, traversals=20, advantage_batches=2, learning_rate=0.004, learning_rate_decay=1.0, decay_start=2
    )
    solver = make_neural_solver(
        compiled,
        encoder(game(KUHN)).of_keys(compiled.infoset_keys),
        "sd-cfr",
        replace(settings, advantage_init=advantage_init),
        rng=np.random.default_rng(0),
    )
    steps = []
    for _ in range(4):
        solver.run(1)
        steps.append([group["lr"] for optimiser in solver._optimisers for group in optimiser.param_groups])
    np.testing.assert_allclose(steps, [[0.004] * 2, [0.004] * 2, [0.004 * 2 / 3] * 2, [0.004 / 2] * 2], rtol=1e-15)


def test_bad_settings_are_refused_in_one_line() -> None:
    from adapters.inputs import InputError

    with pytest.raises(InputError, match="traversals must be a positive integer"):
        NeuralSettings(traversals=0).check()
    with pytest.raises(InputError, match="advantage_init must be one of scratch, last"):
        NeuralSettings(advantage_init="warm").check()
    with pytest.raises(InputError, match=r"learning_rate_decay must be in \[0, 1\], got -1.0"):
        NeuralSettings(learning_rate_decay=-1.0).check()
    for name, value in (("learning_rate", 1e308), ("learning_rate", 5e-324), ("gradient_clip", float("inf"))):
        with pytest.raises(InputError, match=f"^{name} must be in "):
            settings: dict[str, Any] = {name: value}
            NeuralSettings(**settings).check()
    with pytest.raises(InputError, match="decay_start must be a positive integer"):
        NeuralSettings(decay_start=0).check()
    with pytest.raises(InputError, match=r"^value_scale must be in \[0.001, 1e9\], got 0.0$"):
        NeuralSettings(value_scale=0.0).check()


@pytest.mark.parametrize("algorithm", ["deep-cfr", "sd-cfr"])
@pytest.mark.parametrize("game_id", [KUHN, "rlcard:kuhn-poker"])
def test_a_model_plays_what_the_solver_scored(algorithm: str, game_id: str) -> None:
    """The model, running its networks per infoset (and, for SD-CFR, along each infoset's own path), plays
    the solver's average strategy: for SD-CFR the reach-weighted mixture the solver accumulated."""
    from cfr_agents.neural_policy import from_solver

    compiled = tree(game_id)
    solver = make_neural_solver(
        compiled, encoder(game(game_id)).of_keys(compiled.infoset_keys), algorithm, FAST, rng=np.random.default_rng(3)
    )
    solver.run(3)
    model = from_solver(solver)
    expected = solver.average_strategy()
    np.testing.assert_allclose(model.strategy_on(compiled), expected, rtol=0, atol=1e-5)
    for row, key in enumerate(compiled.infoset_keys):
        by_action = model.action_probabilities(key)
        assert list(by_action) == list(compiled.infoset_actions[row])
        np.testing.assert_allclose(list(by_action.values()), expected[row, : len(by_action)], atol=1e-5)


def test_a_thinned_sd_cfr_model_plays_the_block_weighted_mixture_of_its_kept_iterations() -> None:
    """``kept_networks=K`` keeps K networks per player at t_j = ceil((T-1) sqrt(j/K)) of the played 1..T-1, and the
    model plays sum_j w_j pi^{sigma_j}(I) sigma_j(I) over sigma^1 (weight 1) and each kept sigma^{t_j+1}, weighted by
    its block's linear weight; recomputed here level by level on the tree rather than along each infoset's path."""

    from cfr_agents.neural_policy import from_solver
    from cfr_agents.solvers.full_tree import normalise

    compiled = tree(KUHN)
    settings = replace(TINY, kept_networks=3)
    solver = kuhn_solver("sd-cfr", settings, seed=5)
    solver.run(10)
    model = from_solver(solver)
    assert model.kept_iterations == (6, 8, 9)  # ceil(9 sqrt(1/3)) = 6, ceil(9 sqrt(2/3)) = 8, and 9
    assert len(model.weights) == 3 * 2 * 2 * (len(settings.hidden) + 1)  # weight and bias of each layer
    inputs = torch.from_numpy(encoder(game(KUHN)).of_keys(compiled.infoset_keys))
    mixture = np.zeros(compiled.action_mask.shape)
    blocks = {
        1: 1,
        7: sum(range(2, 8)),
        9: 8 + 9,
        10: 10,
    }  # sigma^s: the linear weights of the iterations it stands for
    for s, weight in blocks.items():
        sigma = compiled.uniform_strategy()
        if s > 1:
            for player in range(2):
                rows = compiled.infoset_player == player
                network = networks.mlp(inputs.shape[1], settings.hidden, sigma.shape[1], torch.Generator())
                networks.load_weights(network, model.weights, f"value{player}.{s - 1}")
                sigma[rows] = networks.regret_matching(
                    networks.predict(network, inputs[rows]), compiled.action_mask[rows]
                )
        solver.current = sigma
        reach = np.where(compiled.infoset_player == 0, solver.own_reach(0), solver.own_reach(1))
        mixture += weight * reach[:, None] * sigma
    expected = normalise(mixture, compiled)
    np.testing.assert_allclose(model.strategy_on(compiled), expected, rtol=0, atol=1e-6)
    assert not np.allclose(expected, solver.average_strategy(), atol=1e-3)  # thinning changed what is played


def test_thinning_a_saved_model_keeps_what_training_with_fewer_networks_keeps() -> None:
    """A model of every iteration's networks thinned to K holds the networks a model trained with
    ``kept_networks=K`` holds; thinned again, each block ends at the first kept network at or after its t_j."""
    from cfr_agents.neural_policy import from_solver
    from cfr_agents.solvers.neural.sd_cfr import SingleDeepCFRSolver, kept_weights

    solver = kuhn_solver("sd-cfr", seed=5)
    assert isinstance(solver, SingleDeepCFRSolver)
    solver.run(10)
    every = from_solver(solver)
    assert every.kept_iterations == tuple(range(1, 10))
    thinned = every.thinned(3)
    assert thinned.kept_iterations == (6, 8, 9)
    expected = kept_weights(solver.kept, 10, 3)
    assert sorted(thinned.weights) == sorted(expected)
    assert all(np.array_equal(thinned.weights[name], expected[name]) for name in expected)
    assert thinned.thinned(2).kept_iterations == (8, 9)  # t_1 = ceil(9 sqrt(1/2)) = 7: the first kept after is 8
    assert thinned.thinned(5).kept_iterations == (6, 8, 9) and every.thinned(0).kept_iterations == every.kept_iterations


def train_model(folder: Path, algorithm: str, game_id: str = "rlcard:kuhn-poker") -> tuple[Path, dict[str, Any]]:
    """``cfr-agents train --algo ALGORITHM`` with the fast preset (Deep CFR's average network trained for 50 steps):
    the model's sidecar and its JSON report."""
    out = folder / f"{algorithm}.json"
    argv = ["train", "--game", game_id, "--algo", algorithm, "--iterations", "6", "--preset", "fast"]
    argv += ["--traversals", "200", "--eval-every", "3", "--curve", str(folder / "c.csv"), "--json", "--out", str(out)]
    if algorithm == "deep-cfr":  # not the preset's 2,000 steps, taken at every curve point
        argv += ["--average-batches", "50"]
    status, printed, err = run_cli(argv)
    assert status == 0, err
    return out, json.loads(printed)


@pytest.mark.parametrize("algorithm", ["deep-cfr", "sd-cfr"])
def test_a_trained_model_is_scored_and_played_by_path(tmp_path: Path, algorithm: str) -> None:
    sidecar, report = train_model(tmp_path, algorithm)
    assert sidecar.with_suffix(".safetensors").exists()
    assert (report["algo"], report["iterations"], report["stopped_by"]) == (algorithm, 6, "iterations")
    assert report["parameters"]["traversals"] == 200 and report["parameters"]["nodes_touched"] > 0
    provenance = json.loads(sidecar.read_text())
    assert (provenance["kind"], provenance["iterations"], provenance["nash_conv"]) == (
        algorithm,
        6,
        report["nash_conv"],
    )
    assert provenance["hyperparameters"] == {"preset": "fast", **report["parameters"]}
    assert [point[0] for point in provenance["curve"]] == [3, 6]
    rows = list(csv.DictReader((tmp_path / "c.csv").open()))
    assert [(row["iteration"], row["nodes_touched"]) for row in rows] == [
        (str(p[0]), str(p[3])) for p in provenance["curve"]
    ]
    status, printed, _ = run_cli(["exploitability", str(sidecar), "--json"])
    assert status == 0 and json.loads(printed)["nash_conv"] == report["nash_conv"]  # one scoring path
    status, printed, err = run_cli(["match", str(sidecar), "random", "--hands", "4000", "--json"])
    assert status == 0, err
    match = json.loads(printed)
    assert abs(match["mean"] - match["exact"]) <= 4 * match["standard_error"]


def test_a_model_whose_weights_were_changed_is_refused(tmp_path: Path) -> None:
    sidecar, _ = train_model(tmp_path, "sd-cfr")
    weights = sidecar.with_suffix(".safetensors")
    weights.write_bytes(weights.read_bytes()[:-1] + b"\x00")
    status, _, err = run_cli(["exploitability", str(sidecar)])
    assert status == 2 and "is not the weights file its sidecar" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--algo", "deep-cfr", "--sampling", "external"], "--sampling applies to the tabular solvers"),
        (["--algo", "cfr", "--traversals", "5"], "--traversals applies to --algo deep-cfr or sd-cfr only"),
        (["--algo", "sd-cfr", "--hidden", "64,x"], "is not a list of widths"),
        (["--algo", "sd-cfr", "--advantage-init", "warm"], "--advantage-init must be one of scratch, last"),
        (["--algo", "sd-cfr", "--inputs", "pixels"], "--inputs must be one of cards, strength"),
        (["--algo", "sd-cfr", "--advantage-memory", "1000000000"], "--advantage-memory must be at most 100,000,000"),
        (["--algo", "sd-cfr", "--preset", "huge"], "unknown --preset 'huge'"),
        (["--algo", "sd-cfr", "--preset", ""], "unknown --preset ''"),
        (["--algo", "deep-cfr", "--kept-networks", "3"], "--kept-networks applies to --algo sd-cfr only"),
        (["--algo", "sd-cfr", "--strategy-memory", "9"], "--strategy-memory applies to --algo deep-cfr only"),
        (["--algo", "sd-cfr", "--average-batches", "9"], "--average-batches applies to --algo deep-cfr only"),
        (["--algo", "sd-cfr", "--average-batch-size", "9"], "--average-batch-size applies to --algo deep-cfr only"),
        (["--algo", "sd-cfr", "--hidden", ",".join(["4096"] * 200)], "--hidden has 200 layers; at most 16"),
        (["--algo", "sd-cfr", "--hidden", "4096,4096,4096"], "weights and biases; at most 10,000,000"),
        (["--algo", "sd-cfr", "--hidden", "64,0"], "--hidden widths must be from 1 to 4,096"),
        (["--algo", "sd-cfr", "--learning-rate-decay", "-0.5"], "--learning-rate-decay: must be in [0, 1], got -0.5"),
        (["--algo", "deep-cfr", "--game", "openspiel:leduc_poker(suit_isomorphism=True,bogus=1)"], "bogus"),
    ],
)
def test_bad_neural_options_are_refused_in_one_line(tmp_path: Path, extra: list[str], message: str) -> None:
    argv = ["train", "--game", "openspiel:kuhn_poker", "--iterations", "2", "--out", str(tmp_path / "m.json"), *extra]
    status, printed, err = run_cli(argv)
    assert (status, printed) == (2, "") and len(err.splitlines()) == 1 and message in err, err
    assert list(tmp_path.iterdir()) == []


def test_without_torch_neural_training_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    argv = ["train", "--game", "openspiel:kuhn_poker", "--algo", "sd-cfr", "--iterations", "2"]
    status, _, err = run_cli([*argv, "--out", str(tmp_path / "m.json")])
    assert status == 2 and "pip install 'cfr-agents[nfsp]'" in err and len(err.splitlines()) == 1


def assert_same_state(one: dict[str, np.ndarray], other: dict[str, np.ndarray]) -> None:
    assert sorted(one) == sorted(other)
    for name, array in one.items():
        assert array.dtype == other[name].dtype and np.array_equal(array, other[name]), name


@pytest.mark.parametrize("algorithm", ["deep-cfr", "sd-cfr"])
@pytest.mark.parametrize("advantage_init", ["scratch", "last"])
def test_a_restored_solver_continues_bit_for_bit(algorithm: str, advantage_init: str) -> None:
    """``state()`` after 4 iterations, restored into a solver built from another seed, runs 3 more iterations
    exactly as the solver that ran 7 at once: networks, Adam's moments, reservoirs, streams and the average."""
    settings = replace(TINY, advantage_init=advantage_init, advantage_memory=150, strategy_memory=150)
    whole, part = kuhn_solver(algorithm, settings), kuhn_solver(algorithm, settings)
    whole.run(7)
    part.run(4)
    resumed = kuhn_solver(algorithm, settings, seed=99)
    resumed.restore(part.state())
    resumed.run(3)
    assert resumed.iteration == 7 and resumed.nodes_touched == whole.nodes_touched
    assert whole.advantage_memories[0].seen > 150  # full reservoirs: slots drawn from the stream
    assert_same_state(resumed.state(), whole.state())
    np.testing.assert_array_equal(resumed.average_strategy(), whole.average_strategy())


def test_asking_for_deep_cfr_s_average_leaves_the_iterations_unchanged() -> None:
    """The average-strategy network is trained from a generator of its own: asking for it between iterations
    (an exact check, a curve point) changes neither the iterations that follow nor the network itself."""
    asked, quiet = kuhn_solver("deep-cfr"), kuhn_solver("deep-cfr")
    for _ in range(4):
        asked.run(1)
        asked.average_strategy()
    quiet.run(4)
    assert_same_state(asked.state(), quiet.state())
    np.testing.assert_array_equal(asked.average_strategy(), quiet.average_strategy())


@pytest.mark.parametrize("algorithm", ["deep-cfr", "sd-cfr"])
def test_a_diverging_network_stops_the_run_in_one_line(tmp_path: Path, algorithm: str) -> None:
    """A value network whose weights became infinite (as Adam with a step of 1e308 made them, before steps were
    bounded): the run stops, naming the network, before anything is scored or saved."""
    from adapters.inputs import InputError
    from cfr_agents.checkpoint import save_checkpoint
    from cfr_agents.training import StopRule, train

    with pytest.raises(InputError, match=r"learning_rate must be in \(0, 1\], got 1e\+308"):
        kuhn_solver(algorithm, replace(TINY, learning_rate=1e308))
    solver = kuhn_solver(algorithm, TINY)
    solver.run(1)
    with torch.no_grad():
        next(solver.value_networks[0].parameters()).fill_(float("inf"))
    with pytest.raises(InputError, match=r"value network .* not finite") as refused:
        train(solver, StopRule(iterations=3), lambda t, strategy: exploitability_of_strategy(t, strategy).nash_conv)
    assert "\n" not in str(refused.value)
    with pytest.raises(InputError, match="not finite"):
        save_checkpoint(tmp_path / "c.npz", solver, seed=0)
    assert list(tmp_path.iterdir()) == []


def test_a_model_with_weights_that_are_not_finite_is_not_saved(tmp_path: Path) -> None:
    from adapters.inputs import InputError
    from cfr_agents.neural_policy import from_solver
    from eval.opponents.neural import save
    from eval.opponents.provenance import Provenance

    solver = kuhn_solver("sd-cfr")
    solver.run(3)
    model = from_solver(solver)
    name = sorted(model.weights)[0]
    model.weights[name][0] = np.nan
    provenance = Provenance("sd-cfr", KUHN, "", "chips", None, 3, 0, {}, 0.0, {}, 0.0, 0.0)
    with pytest.raises(InputError, match=f"weights {name!r} are not finite; nothing was saved"):
        save(tmp_path / "m.json", model, provenance)
    assert list(tmp_path.iterdir()) == []
