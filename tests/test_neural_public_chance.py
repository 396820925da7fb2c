"""Public-chance-sampled regret targets on the hold'em engine: over every board, the kept samples' targets sum to the
exact counterfactual regrets that external sampling estimates, under any strategy, and a solver trained on them
learns; the option is refused where there is no board to draw."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from adapters.holdem.betting import DECISION
from adapters.tensors import encoder
from cfr_agents.neural_policy import from_solver
from cfr_agents.public_tree.tree import build_public_tree
from cfr_agents.solvers.neural import settings_of
from cfr_agents.solvers.neural.holdem import HoldemNeuralSolver
from cfr_agents.solvers.neural.public_chance import board_regrets
from cfr_agents.solvers.sampling import kernel_tree
from eval import holdem
from tests.support import game, run_cli, tree
from tests.test_neural import counterfactual_regrets

torch = pytest.importorskip("torch")

SMALL = "holdem-6"
"""Two hole cards and one board card from a 6-card deck: its compiled tree holds the exact regrets."""
QUICK = {"traversals": 20, "advantage_batches": 30, "advantage_batch_size": 1024, "hidden": [32, 32]}


def solver(seed: int = 0, algorithm: str = "sd-cfr", **overrides: object) -> HoldemNeuralSolver:
    settings = settings_of("fast", {**QUICK, "traversal": "public-chance", **overrides})
    return HoldemNeuralSolver(SMALL, algorithm, settings, np.random.default_rng(seed))


def compiled_rows(s: HoldemNeuralSolver) -> dict[bytes, int]:
    """The compiled tree's infoset row of each information-state tensor."""
    compiled = tree(SMALL)
    tensors = encoder(game(SMALL)).of_keys(compiled.infoset_keys).astype(np.float32)
    return {bytes(t.tobytes()): row for row, t in enumerate(tensors)}


def boards(s: HoldemNeuralSolver) -> list[np.ndarray]:
    """Every board (each round's cards, in order), all equally likely."""
    size = sum(s.tensors.rules.board_cards)
    return [np.array(b, dtype=np.int64) for b in itertools.permutations(range(s.tensors.rules.deck_size), size)]


@pytest.mark.parametrize("player", [0, 1])
def test_over_every_board_the_kept_targets_sum_to_the_exact_counterfactual_regrets(player: int) -> None:
    r"""Under a random strategy :math:`\sigma`, :math:`\sum_b P(b) \frac{1}{H_b} \sum_{h \in I} w(d, h)\,
    r(d, h, a) / m(d, h)` (what one board adds to the memory in expectation, per hand it leaves) is
    :math:`r(I,a) = \sum_{h \in I} \pi_{-i}(h)(v(ha) - v(h))`, computed by brute force on the compiled tree: what
    one external-sampling traversal adds in expectation."""
    s = solver()
    compiled = tree(SMALL)
    rng = np.random.default_rng(7 + player)
    legal = np.zeros((compiled.num_infosets, 3), dtype=bool)
    for row, actions in enumerate(compiled.infoset_actions):
        legal[row, : len(actions)] = True
    strategy = np.where(legal, rng.random(legal.shape) + 0.05, 0.0)
    strategy /= strategy.sum(axis=1, keepdims=True)
    nodes, values, cdf, _, _ = kernel_tree(compiled)
    exact = counterfactual_regrets(nodes, values, cdf, strategy, player, compiled.num_infosets)
    row_of = compiled_rows(s)
    betting = s.tree.engine.betting
    decisions = np.flatnonzero(betting.kind == DECISION)
    expected = np.zeros_like(exact)
    every = boards(s)
    for board in every:
        hands = s.walk.hands[s.walk.valid(board)]
        cards = np.concatenate([hands, hands, np.broadcast_to(board, (hands.shape[0], board.size))], axis=1)
        rows = (np.arange(hands.shape[0])[None, :] * betting.num_nodes + decisions[:, None]).ravel()
        infosets = [row_of[bytes(t.tobytes())] for t in s.inputs(s.keys(cards, rows))]
        sigma = np.zeros((betting.num_nodes, hands.shape[0], 3))
        sigma[decisions] = strategy[infosets].reshape(decisions.size, hands.shape[0], 3)
        found = board_regrets(s.walk, board, player, sigma)
        keys = s.keys(cards, found.own_hands * betting.num_nodes + found.own_nodes)
        for tensor, target, keep in zip(s.inputs(keys), found.targets, found.keep, strict=True):
            expected[row_of[bytes(tensor.tobytes())]] += keep * target / (len(every) * hands.shape[0])
    mine = compiled.infoset_player == player
    assert np.abs(exact[mine]).max() > 1.0
    np.testing.assert_allclose(expected[mine], exact[mine], rtol=0, atol=1e-9)


def test_the_solver_keeps_each_candidate_with_its_probability() -> None:
    r"""Under uniform :math:`\sigma^1`, the regrets the solver's public-chance traversals keep in infoset :math:`I`,
    summed and divided by the boards times the hands a board leaves, estimate the exact :math:`r(I, a)`; checked to
    4.5 standard errors (over boards) where at least 200 samples land."""
    s = solver(seed=1)
    compiled = tree(SMALL)
    nodes, values, cdf, _, _ = kernel_tree(compiled)
    exact = counterfactual_regrets(nodes, values, cdf, compiled.uniform_strategy(), 0, compiled.num_infosets)
    row_of = compiled_rows(s)
    count, hands = 1200, s.walk.valid(boards(s)[0]).size
    per_board = np.zeros((count, compiled.num_infosets, 3))
    landed = np.zeros(compiled.num_infosets, dtype=np.int64)
    for b in range(count):
        samples = s.public_chance(0, 1)
        keys, where = np.unique(samples.own_keys, return_inverse=True)
        rows = np.array([row_of[bytes(t.tobytes())] for t in s.inputs(keys)])[where]
        np.add.at(per_board[b], rows, samples.regrets / hands)
        np.add.at(landed, rows, 1)
    mean = per_board.mean(axis=0)
    error = per_board.std(axis=0) / np.sqrt(count)
    checked = np.flatnonzero(landed >= 200)
    assert checked.size >= 20
    assert (compiled.infoset_player[landed > 0] == 0).all()
    for row in checked:
        n = len(compiled.infoset_actions[row])
        gap = np.abs(mean[row, :n] - exact[row, :n])
        assert np.all(gap <= 4.5 * error[row, :n] + 1e-9), (compiled.infoset_keys[row], mean[row], exact[row])


@pytest.mark.parametrize("algorithm", ["sd-cfr", pytest.param("deep-cfr", marks=pytest.mark.slow)])
def test_a_model_trained_on_public_chance_targets_learns(algorithm: str) -> None:
    """A few iterations take the model's exact NashConv well below the uniform strategy's: SD-CFR's value networks,
    and Deep CFR's average network trained on the opponent's decisions kept with their own reach."""
    s = solver(algorithm=algorithm, average_batches=50, average_batch_size=1024)
    s.run(6)
    model = from_solver(s)
    public = build_public_tree(holdem.game_tree(SMALL).game_string, canonical=False)
    trained = holdem.exploitability(public, holdem.NeuralHands(model)).nash_conv
    uniform = holdem.exploitability(public, holdem.UniformHands()).nash_conv
    assert trained < 0.6 * uniform


@pytest.mark.parametrize(
    ("game_id", "extra", "message"),
    [
        ("openspiel:kuhn_poker", [], "--traversal public-chance draws hold'em boards on the hold'em engine, not"),
        (SMALL, ["--engine", "tree"], "--traversal public-chance draws hold'em boards on the hold'em engine, not"),
        (SMALL, [], "--traversal must be one of external, public-chance, got 'outcome'"),
    ],
)
def test_public_chance_is_refused_in_one_line_where_there_is_no_board_to_draw(
    tmp_path: Path, game_id: str, extra: list[str], message: str
) -> None:
    traversal = "outcome" if "outcome" in message else "public-chance"
    args = ["train", "--game", game_id, "--algo", "sd-cfr", "--traversal", traversal, "--iterations", "1", *extra]
    result = run_cli([*args, "--out", str(tmp_path / "m.json")])
    assert result.status == 2
    assert result.err.count("\n") == 1 and message in result.err, result.err
