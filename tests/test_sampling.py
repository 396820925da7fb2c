"""Monte Carlo CFR: unbiased sampled regrets, convergence, agreement with OpenSpiel's MCCFR,
determinism, and OpenSpiel's own NashConv of sampled policies."""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

from adapters.inputs import InputError
from cfr_agents import make_solver
from cfr_agents.solvers import SCHEMES, SampledSolver
from cfr_agents.solvers.sampling import CHANCE_DRAWS
from cfr_agents.solvers.sampling.kernel_support import stratified_uniform
from eval import exploitability_of_strategy
from tests.support import assert_within_standard_errors, run_cli, tree

SAMPLES = 20_000
"""First iterations sampled per scheme for the unbiasedness check."""
_IN_THE_DEFAULT_RUN = {("external", "independent"), ("outcome", "stratified")}
"""The same-seed cases the default run takes (every one runs under ``slow``)."""
Z_BOUND = 5.0
"""A cell fails beyond 5 standard errors: about 6e-7 per cell when the estimator is unbiased."""
ROUNDING = 5e-12
"""What a cell whose samples never varied may differ from its exact regret by: rounding of the mean."""


def first_iteration_regrets(game_id: str, sampling: str, samples: int, chance_draws: str = "independent") -> np.ndarray:
    """Player 0's sampled regrets after iteration 1 (from uniform play), one row per sample."""
    t = tree(game_id)
    solver = make_solver(t, "cfr", sampling=sampling, rng=np.random.default_rng(0), chance_draws=chance_draws)
    assert isinstance(solver, SampledSolver)
    start = solver.state()
    rows = t.player_slice(0)
    draws = np.empty((samples, *solver.regret[rows].shape))
    seeds = np.random.default_rng(12345).integers(1, 2**63, size=(samples, 4), dtype=np.uint64)
    shifts = np.random.default_rng(54321).integers(0, 2**64, size=(samples, 2), dtype=np.uint64, endpoint=False)
    for k in range(samples):
        solver.restore({**start, "rng": seeds[k], "shift": shifts[k]})
        solver.run(1)
        draws[k] = solver.regret[rows]
    return draws


@pytest.mark.parametrize("chance_draws", CHANCE_DRAWS)
@pytest.mark.parametrize("sampling", sorted(SCHEMES))
def test_sampled_regrets_are_unbiased(sampling: str, chance_draws: str) -> None:
    """E[r~^1(I,a)] = r^1(I,a): the mean over many first iterations equals the full-tree regret."""
    game_id = "openspiel:kuhn_poker"
    exact = make_solver(tree(game_id), "cfr")
    exact.run(1)
    rows = tree(game_id).player_slice(0)
    truth = exact.state()["regret"][rows]
    draws = first_iteration_regrets(game_id, sampling, SAMPLES, chance_draws)
    error = draws.std(axis=0, ddof=1) / math.sqrt(SAMPLES)
    assert_within_standard_errors(draws.mean(axis=0), truth, error, Z_BOUND, atol=ROUNDING)


def test_a_biased_estimate_would_be_caught() -> None:
    """The check above can fail: the same samples, scaled by 1.1, are rejected."""
    game_id = "openspiel:kuhn_poker"
    exact = make_solver(tree(game_id), "cfr")
    exact.run(1)
    truth = exact.state()["regret"][tree(game_id).player_slice(0)]
    draws = 1.1 * first_iteration_regrets(game_id, "external", SAMPLES)
    error = draws.std(axis=0, ddof=1) / math.sqrt(SAMPLES)
    with pytest.raises(AssertionError, match="standard errors"):
        assert_within_standard_errors(draws.mean(axis=0), truth, error, Z_BOUND, atol=ROUNDING)


@pytest.mark.parametrize("sampling", ["external", "pure"])
def test_stratified_draws_are_unbiased_past_a_decision(sampling: str) -> None:
    """Leduc's board is dealt below decisions, from the residual of the deal's uniform, and branches
    of one traversal share it: still unbiased."""
    game_id = "openspiel:leduc_poker"
    exact = make_solver(tree(game_id), "cfr")
    exact.run(1)
    truth = exact.state()["regret"][tree(game_id).player_slice(0)]
    draws = first_iteration_regrets(game_id, sampling, SAMPLES, "stratified")
    error = draws.std(axis=0, ddof=1) / math.sqrt(SAMPLES)
    assert_within_standard_errors(draws.mean(axis=0), truth, error, Z_BOUND, atol=ROUNDING)


def test_the_stratified_sequence_spreads_chance_evenly() -> None:
    """Each u_t alone is uniform (over the shift); over t, the outcomes of a 6-way chance node are
    balanced to within a few draws, where independent draws stray by about sqrt(T)."""
    shifts = np.random.default_rng(3).integers(0, 2**64, size=(2, 2), dtype=np.uint64, endpoint=False)
    counts = np.bincount([int(6 * stratified_uniform(shifts[0], 1, float(t))) for t in range(1, 60_001)], minlength=6)
    assert np.abs(counts - 10_000).max() <= 3, counts
    firsts = [
        stratified_uniform(np.array([s, s], dtype=np.uint64), 0, 1.0)
        for s in np.random.default_rng(4).integers(0, 2**64, size=20_000, dtype=np.uint64, endpoint=False)
    ]
    assert_within_standard_errors(statistics.mean(firsts), 0.5, math.sqrt(1 / 12 / 20_000), Z_BOUND)


def test_stratified_draws_beat_independent_ones_on_leduc() -> None:
    """The reason to offer them: at equal iterations, external sampling's NashConv is lower (3 seeds each)."""
    t = tree("openspiel:leduc_poker")
    results = {}
    for chance_draws in CHANCE_DRAWS:
        values = []
        for seed in range(3):
            solver = make_solver(
                t, "cfr", sampling="external", rng=np.random.default_rng(seed), chance_draws=chance_draws
            )
            solver.run(200_000)
            values.append(exploitability_of_strategy(t, solver.average_strategy()).nash_conv)
        results[chance_draws] = values
    assert max(results["stratified"]) < min(results["independent"]), results


CONVERGENCE = {
    # (iterations, NashConv bound by scheme); uniform play has NashConv 11/12 (Kuhn) and 4.75 (Leduc).
    "openspiel:kuhn_poker": (20_000, {"chance": 0.03, "external": 0.03, "outcome": 0.06, "pure": 0.03}),
    "rlcard:kuhn-poker": (20_000, {"chance": 0.03, "external": 0.03, "outcome": 0.06, "pure": 0.03}),
    "openspiel:leduc_poker": (100_000, {"chance": 0.25, "external": 0.25, "outcome": 1.5, "pure": 0.25}),
    "rlcard:leduc-holdem": (100_000, {"chance": 0.25, "external": 0.25, "outcome": 1.5, "pure": 0.25}),
}


@pytest.mark.parametrize("chance_draws", CHANCE_DRAWS)
@pytest.mark.parametrize("sampling", sorted(SCHEMES))
@pytest.mark.parametrize("game_id", sorted(CONVERGENCE))
def test_every_scheme_converges(game_id: str, sampling: str, chance_draws: str) -> None:
    iterations, bounds = CONVERGENCE[game_id]
    t = tree(game_id)
    solver = make_solver(t, "cfr", sampling=sampling, rng=np.random.default_rng(7), chance_draws=chance_draws)
    solver.run(iterations // 100)
    early = exploitability_of_strategy(t, solver.average_strategy()).nash_conv
    solver.run(iterations - solver.iteration)
    late = exploitability_of_strategy(t, solver.average_strategy()).nash_conv
    assert late < bounds[sampling] and late < early / 2


@pytest.mark.parametrize("algorithm", ["cfr+", "lcfr", "dcfr"])
@pytest.mark.parametrize("sampling", sorted(SCHEMES))
def test_every_update_rule_converges_with_every_scheme(sampling: str, algorithm: str) -> None:
    t = tree("openspiel:kuhn_poker")
    solver = make_solver(t, algorithm, sampling=sampling, rng=np.random.default_rng(3))
    solver.run(20_000)
    assert exploitability_of_strategy(t, solver.average_strategy()).nash_conv < 0.06


OPENSPIEL_SOLVERS = {
    "external": lambda game, seed: pyspiel.ExternalSamplingMCCFRSolver(game, seed, pyspiel.MCCFRAverageType.SIMPLE),
    "outcome": lambda game, seed: pyspiel.OutcomeSamplingMCCFRSolver(game, 0.6, seed),
}


@pytest.mark.parametrize("sampling", sorted(OPENSPIEL_SOLVERS))
@pytest.mark.parametrize(
    ("game_id", "iterations"), [("openspiel:kuhn_poker", 5_000), ("openspiel:leduc_poker", 10_000)]
)
def test_no_worse_than_openspiel_mccfr_at_equal_iterations(game_id: str, iterations: int, sampling: str) -> None:
    """Over 5 seeds each, our mean NashConv is at most OpenSpiel C++'s plus 2 standard errors of the difference."""
    t = tree(game_id)
    game = pyspiel.load_game(game_id.removeprefix("openspiel:"))
    ours, theirs = [], []
    for seed in range(5):
        solver = make_solver(t, "cfr", sampling=sampling, rng=np.random.default_rng(seed))
        solver.run(iterations)
        ours.append(exploitability_of_strategy(t, solver.average_strategy()).nash_conv)
        reference = OPENSPIEL_SOLVERS[sampling](game, seed + 1)
        for _ in range(iterations):
            reference.run_iteration()
        theirs.append(pyspiel.nash_conv(game, reference.average_policy(), True))
    spread = math.sqrt((statistics.variance(ours) + statistics.variance(theirs)) / 5)
    assert statistics.mean(ours) <= statistics.mean(theirs) + 2 * spread, (ours, theirs)


SCORED_BY_DEFAULT = {("openspiel:leduc_poker", "external"), ("openspiel:leduc_poker", "outcome")}
"""The cases of OpenSpiel's NashConv the default run takes: two schemes on native Leduc, outcome sampling's table
with the most infosets never reached (365 of 936, their rows uniform). Every scheme, on RLCard's Leduc bridged into
OpenSpiel too, under ``slow``; ``tests/test_openspiel_bridge.py`` scores a policy of the bridged game by OpenSpiel
in the default run."""


@pytest.mark.parametrize(
    ("game_id", "sampling"),
    [
        pytest.param(game_id, scheme, marks=() if (game_id, scheme) in SCORED_BY_DEFAULT else pytest.mark.slow)
        for game_id in ("openspiel:leduc_poker", "rlcard:leduc-holdem")
        for scheme in sorted(SCHEMES)
    ],
)
def test_openspiel_nash_conv_of_a_sampled_policy_equals_ours(game_id: str, sampling: str) -> None:
    """Native OpenSpiel Leduc, and RLCard Leduc bridged into OpenSpiel."""
    t = tree(game_id)
    solver = make_solver(t, "cfr", sampling=sampling, rng=np.random.default_rng(1))
    solver.run(2_000)
    policy = solver.average_policy()
    tabular = policy.openspiel_policy()
    theirs = openspiel_exploitability.nash_conv(tabular.game, tabular)
    assert abs(exploitability_of_strategy(t, solver.average_strategy()).nash_conv - theirs) <= 1e-9


@pytest.mark.parametrize(
    ("sampling", "chance_draws"),
    [
        pytest.param(scheme, draws, marks=() if (scheme, draws) in _IN_THE_DEFAULT_RUN else pytest.mark.slow)
        for scheme in sorted(SCHEMES)
        for draws in CHANCE_DRAWS
    ],
)
def test_the_same_seed_gives_the_same_policy_file(tmp_path: Path, sampling: str, chance_draws: str) -> None:
    """On one machine: the same seed writes the same file byte for byte, in a process of its own and in this one;
    another seed another file (two cases in the default run, every scheme and kind of draw under ``slow``)."""
    argv = ["train", "--game", "openspiel:leduc_poker", "--algo", "cfr", "--sampling", sampling]
    argv += ["--chance-draws", chance_draws, "--iterations", "3000", "--quiet"]
    command = [sys.executable, "-m", "cfr_agents", *argv, "--seed", "5", "--out", str(tmp_path / "a.json")]
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    for name, seed in (("b", "5"), ("c", "6")):
        assert run_cli([*argv, "--seed", seed, "--out", str(tmp_path / f"{name}.json")]).status == 0
    files = [(tmp_path / f"{name}.json").read_bytes() for name in "abc"]
    assert files[0] == files[1]
    assert files[0] != files[2]


def test_the_policy_file_records_the_scheme(tmp_path: Path) -> None:
    from cfr_agents import load_policy

    solver = make_solver(
        tree("openspiel:kuhn_poker"),
        "lcfr",
        sampling="outcome",
        rng=np.random.default_rng(0),
        averaging="optimistic",
        epsilon=0.4,
        chance_draws="stratified",
    )
    solver.run(10)
    solver.average_policy().save(tmp_path / "p.json")
    parameters = load_policy(tmp_path / "p.json").parameters
    assert parameters["sampling"] == "outcome" and parameters["averaging"] == "optimistic"
    assert parameters["chance_draws"] == "stratified"
    assert parameters["epsilon"] == 0.4 and parameters["gamma"] == 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"algorithm": "pcfr+", "sampling": "external"}, "does not combine with sampling"),
        ({"algorithm": "cfr", "sampling": "external", "averaging": "stochastic"}, "^averaging stochastic does not"),
        ({"algorithm": "cfr", "sampling": "external", "epsilon": 0.5}, "^epsilon only applies to sampling outcome$"),
        ({"algorithm": "cfr", "sampling": "outcome", "epsilon": 0.0}, r"^epsilon must be in \[0.01, 1\], got 0.0$"),
        ({"algorithm": "cfr", "sampling": "outcome", "epsilon": 0.001}, r"^epsilon must be in \[0.01, 1\], got 0.001$"),
        ({"algorithm": "cfr", "sampling": "outcome", "epsilon": 5e-324}, "got 5e-324, a subnormal number$"),
        ({"algorithm": "cfr", "sampling": "bogus"}, "unknown sampling scheme"),
        (
            {"algorithm": "cfr", "sampling": "none", "averaging": "simple"},
            "^averaging applies to sampled solvers only (give sampling)$",
        ),
        ({"algorithm": "cfr", "sampling": "none", "chance_draws": "stratified"}, "^chance_draws applies to sampled"),
        (
            {"algorithm": "cfr", "sampling": "none", "averaging": "full", "epsilon": 0.5},
            "^averaging and epsilon apply to sampled",
        ),
        ({"algorithm": "cfr", "sampling": "external", "chance_draws": "sobol"}, "unknown chance draws"),
    ],
)
def test_combinations_that_cannot_work_are_refused(kwargs: dict[str, object], message: str) -> None:
    algorithm = str(kwargs.pop("algorithm"))
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        make_solver(tree("openspiel:kuhn_poker"), algorithm, rng=np.random.default_rng(0), **kwargs)  # type: ignore[arg-type]


def test_a_sampled_solver_needs_a_generator() -> None:
    with pytest.raises(InputError, match=r"numpy\.random\.Generator"):
        make_solver(tree("openspiel:kuhn_poker"), "cfr", sampling="external")


@pytest.mark.parametrize("sampling", sorted(SCHEMES))
def test_any_accepted_openspiel_game_trains(sampling: str) -> None:
    """Beyond poker: Liar's Dice with three-sided dice (192 infosets), cross-checked with OpenSpiel."""
    game_id = "openspiel:liars_dice(dice_sides=3)"
    t = tree(game_id)
    solver = make_solver(t, "cfr", sampling=sampling, rng=np.random.default_rng(2))
    solver.run(200)
    early = exploitability_of_strategy(t, solver.average_strategy()).nash_conv
    solver.run(20_000)
    late = exploitability_of_strategy(t, solver.average_strategy()).nash_conv
    assert late < early / 2
    tabular = solver.average_policy().openspiel_policy()
    assert abs(openspiel_exploitability.nash_conv(tabular.game, tabular) - late) <= 1e-9
