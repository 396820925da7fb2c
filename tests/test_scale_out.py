"""Scale-out MCCFR (``train --workers/--batches/--batch-iterations/--ray``): a run depends on (seed, B, M, rounds)
and not on the workers, a round is the rule applied to the batches' increments summed in batch order, a batch's
sampled regrets are unbiased against its frozen snapshot, resumed runs equal whole ones, training converges, and bad
options are refused in one line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cfr_agents.abstract_game import AbstractGame
from cfr_agents.checkpoint import Checkpoint, read_checkpoint
from cfr_agents.jobs import LocalPool, RayExecutor
from cfr_agents.solvers import ALGORITHMS, make_solver
from cfr_agents.solvers.sampling import SampledSolver, kernel_support
from cfr_agents.solvers.sampling.scale_out import (
    Rounds,
    ScaleOutSolver,
    Workers,
    batch_options,
    run_batch,
)
from cfr_agents.solvers.update_rule import discount
from eval.holdem import AbstractHands, exploitability, game_tree
from tests.support import assert_within_standard_errors, run_cli, tree
from tests.test_train_abstraction import GAME, abstraction, assert_refused, train

__all__ = ["abstraction"]  # the fixture, shared: a directory holding holdem-8's lossless-preflop, 6-bucket abstraction


def scaled(
    game: AbstractGame, algorithm: str, rounds: Rounds, workers: Workers, seed: int = 3, sampling: str = "external"
) -> ScaleOutSolver:
    solver = SampledSolver(game, ALGORITHMS[algorithm], algorithm, sampling, np.random.default_rng(seed))
    return ScaleOutSolver(solver, seed, rounds, workers)


def tables(abstraction: Path, workers: Workers, total: int, sampling: str = "external") -> dict[str, np.ndarray]:
    with scaled(AbstractGame.load(abstraction), "dcfr", Rounds(3, 200), workers, sampling=sampling) as solver:
        solver.run(total)
        return solver.state() | {"current": solver.current_strategy()}


def assert_same_bits(ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray]) -> None:
    assert ours.keys() == theirs.keys()
    for name in ours:
        assert ours[name].tobytes() == theirs[name].tobytes(), name


@pytest.mark.parametrize("sampling", ["external", "public-chance"])
def test_one_worker_and_two_give_the_same_tables(abstraction: Path, sampling: str) -> None:
    """Three batches a round, so two workers split each round 2 + 1 and the slots are reused within a round."""
    two, one = (tables(abstraction, Workers(LocalPool(n)), 4, sampling) for n in (2, 1))
    assert_same_bits(two, one)


def test_ray_gives_the_same_tables_as_one_worker(local_ray: None, abstraction: Path) -> None:
    assert_same_bits(tables(abstraction, Workers(RayExecutor(None)), 2), tables(abstraction, Workers(LocalPool(1)), 2))


@pytest.mark.parametrize("algorithm", ["cfr", "dcfr"])
def test_a_round_is_the_rule_applied_to_the_batches_summed_in_order(abstraction: Path, algorithm: str) -> None:
    """Round 2 by hand from round 1's state: each batch's increments from the snapshot sigma^2 with its own seed,
    R^2 = d(2)(R^1 + D_0 + D_1 + D_2), C^2 = C^1 + w_2 A_0 + w_2 A_1 + w_2 A_2, sigma^3 = RM(R^2). Without
    discounts (CFR) the sums are the same floating-point operations, so equal bit for bit; DCFR's discounts are
    computed here in Python, which may round ``t ** alpha`` apart from Numba."""
    rounds, seed = Rounds(3, 150), 11
    solver = scaled(AbstractGame.load(abstraction), algorithm, rounds, Workers(LocalPool(1)), seed)
    solver.run(1)
    before, snapshot = solver.state(), solver.current_strategy()
    shape, rule = before["regret"].shape, ALGORITHMS[algorithm]
    regret, cumulative = before["regret"].copy(), before["cumulative"].copy()
    for b in range(rounds.batches):
        delta, average = np.empty(shape), np.empty(shape)
        options = batch_options(solver.solver)
        run_batch(solver.solver._kernel_tree, "external", options, snapshot.copy(), delta, average, seed, 2, b, 150)
        assert np.any(delta != 0) and np.any(average != 0)
        regret += delta
        cumulative += 2.0**rule.gamma * average
    d_pos, d_neg = discount(rule.alpha, 2.0), discount(rule.beta, 2.0)
    regret = np.where(regret >= 0, regret * d_pos, regret * d_neg)
    solver.run(1)
    after = solver.state()
    positive = np.maximum(regret, 0.0)
    totals = positive.sum(axis=1, keepdims=True)
    uniform = solver.solver.tree.uniform_strategy()
    legal = uniform > 0
    matched = np.where(totals > 0, positive / np.where(totals > 0, totals, 1.0), uniform)
    if algorithm == "cfr":
        assert after["regret"].tobytes() == regret.tobytes()
        assert after["cumulative"].tobytes() == cumulative.tobytes()
    else:
        np.testing.assert_allclose(after["regret"], regret, rtol=1e-13, atol=0)
        np.testing.assert_allclose(after["cumulative"], cumulative, rtol=1e-13, atol=0)
    np.testing.assert_allclose(solver.current_strategy()[legal], matched[legal], rtol=1e-12, atol=1e-15)
    assert after["scalars"][kernel_support.ITERATION] == 2


def test_a_batch_samples_unbiased_regrets_against_its_frozen_snapshot() -> None:
    """E[D_b / M] is the counterfactual regret r(sigma) of the snapshot, for both players (the strategy does not move
    within a batch): checked against full-tree CFR's first iteration, whose player-0 regrets are r(uniform), on
    Kuhn poker. Each batch's mean is one sample."""
    kuhn = tree("openspiel:kuhn_poker")
    exact = make_solver(kuhn, "cfr")
    exact.run(1)
    player_0 = kuhn.player_slice(0)
    truth = exact.state()["regret"][player_0]
    solver = SampledSolver(kuhn, ALGORITHMS["cfr"], "cfr", "external", np.random.default_rng(0))
    batches, m = 400, 50
    shape = solver.regret.shape
    means = np.empty((batches, *truth.shape))
    delta, average = np.empty(shape), np.empty(shape)
    uniform = solver.current_strategy()
    for b in range(batches):
        run_batch(solver._kernel_tree, "external", batch_options(solver), uniform, delta, average, 7, 1, b, m)
        means[b] = delta[player_0] / m
    assert np.array_equal(solver.current_strategy(), uniform)
    error = means.std(axis=0, ddof=1) / math.sqrt(batches)
    assert_within_standard_errors(means.mean(axis=0), truth, error, 5.0, atol=1e-12)


def test_exploitability_falls_as_rounds_grow(abstraction: Path) -> None:
    """Exact NashConv of the average strategy (the abstraction's, scored on the game's public tree) after 4 and 100
    rounds of 4 batches of 250 iterations."""
    game = AbstractGame.load(abstraction)
    scores = []
    with scaled(game, "dcfr", Rounds(4, 250), Workers(LocalPool(1)), seed=5) as solver:
        for total in (4, 100):
            solver.run(total - solver.iteration)
            scores.append(exploitability(game_tree(GAME), AbstractHands(game, solver.average_strategy())).nash_conv)
    assert scores[1] < scores[0] / 3, scores


ROUNDS = ("--batches", "3", "--batch-iterations", "200")


def test_a_resumed_run_writes_what_a_whole_run_writes(abstraction: Path, tmp_path: Path) -> None:
    """Two workers for the first 3 rounds, one for the rest, against two workers throughout; the checkpoint records
    B and M, and a resume that changes them is refused."""
    first = ("--workers", "2", *ROUNDS, "--iterations", "3", "--out", str(tmp_path / "a.npz"))
    assert train(abstraction, *first, "--checkpoint", str(tmp_path / "c.npz"))[0] == 0
    saved = read_checkpoint(tmp_path / "c.npz")
    assert isinstance(saved, Checkpoint) and saved.rounds == Rounds(3, 200) and saved.iteration == 3
    resume = ["train", "--resume", str(tmp_path / "c.npz"), "--iterations", "6", "--quiet"]
    assert run_cli([*resume, "--out", str(tmp_path / "b.npz")])[0] == 0
    assert train(abstraction, "--workers", "2", *ROUNDS, "--iterations", "6", "--out", str(tmp_path / "w.npz"))[0] == 0
    assert (tmp_path / "b.npz").read_bytes() == (tmp_path / "w.npz").read_bytes()
    status, _, err = run_cli([*resume, "--batches", "4", "--out", str(tmp_path / "d.npz")])
    assert_refused(status, err, "must not change them")


def test_a_run_on_a_compiled_tree_does_not_depend_on_the_workers(tmp_path: Path) -> None:
    argv = ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr+", "--sampling", "outcome", *ROUNDS]
    argv += ["--iterations", "5", "--quiet"]
    for workers in ("1", "2"):
        assert run_cli([*argv, "--workers", workers, "--out", str(tmp_path / f"{workers}.json")])[0] == 0
    assert (tmp_path / "1.json").read_bytes() == (tmp_path / "2.json").read_bytes()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--workers", "0"], "--workers: must be a positive integer"),
        (["--batches", "0"], "--batches: must be a positive integer"),
        (["--batch-iterations", "-3"], "--batch-iterations: must be a positive integer"),
        (["--batch-iterations", str(10**10)], "--batch-iterations must be a whole number from 1 to"),
        (["--batches", "x"], "--batches: 'x' is not an integer"),
        (["--workers", "2", "--ray"], "give --workers or --ray, not both"),
        (["--batches", "2", "--sampling", "outcome", "--averaging", "optimistic"], "--averaging stochastic"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    abstraction: Path, tmp_path: Path, options: list[str], message: str
) -> None:
    status, _, err = train(abstraction, "--iterations", "2", "--out", str(tmp_path / "s.npz"), *options)
    assert_refused(status, err, message)
    assert not (tmp_path / "s.npz").exists()


def test_rounds_need_a_sampled_solver_and_a_one_process_checkpoint_stays_one(abstraction: Path, tmp_path: Path) -> None:
    kuhn = ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "3"]
    status, _, err = run_cli([*kuhn, "--workers", "2", "--out", str(tmp_path / "k.json")])
    assert_refused(status, err, "--workers runs a sampled solver in rounds")
    one = ("--iterations", "3", "--out", str(tmp_path / "a.npz"), "--checkpoint", str(tmp_path / "c.npz"))
    assert train(abstraction, *one)[0] == 0
    resume = ["train", "--resume", str(tmp_path / "c.npz"), "--iterations", "6", "--out", str(tmp_path / "b.npz")]
    status, _, err = run_cli([*resume, "--workers", "2"])
    assert_refused(status, err, "written by one process")


def test_a_run_the_machine_cannot_hold_is_refused(
    abstraction: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("cfr_agents.cli.common.physical_bytes", lambda: 1000)
    status, _, err = train(abstraction, "--workers", "2", "--iterations", "2", "--out", str(tmp_path / "s.npz"))
    assert_refused(status, err, "of memory at the peak; this machine has")
