"""Neural CFR on the hold'em engine: sample keys that decode to OpenSpiel's information-state tensors, traversals
whose regrets are unbiased samples of the exact counterfactual regrets, and models that score alike on the compiled
tree and on the public tree, play alike state by state, and learn."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from adapters.holdem import card_permutation, suit_permutations
from adapters.holdem.betting import DECISION
from adapters.holdem.cards import private_hands
from adapters.inputs import InputError
from adapters.tensors import encoder
from cfr_agents.holdem_play import HoldemPolicy, Position, walk_actions
from cfr_agents.neural_policy import NeuralPolicy, from_solver
from cfr_agents.public_tree.neural import Materialiser, network_strategy
from cfr_agents.public_tree.tree import build_public_tree
from cfr_agents.solvers.neural import settings_of
from cfr_agents.solvers.neural.holdem import HoldemNeuralSolver
from cfr_agents.solvers.sampling import kernel_tree
from cfr_agents.training import TrainingRun
from eval import holdem
from eval.agents import NetworkAgent, openspiel_strategy
from eval.exploitability import exploitability_of_strategy
from eval.opponents import load_opponent
from eval.opponents.neural import save_trained
from eval.ranges import range_query
from tests.support import game, run_cli, tree
from tests.test_neural import counterfactual_regrets, first_targets

torch = pytest.importorskip("torch")

SMALL = "holdem-6"
"""Two hole cards and one board card from a 6-card deck: a compiled tree and a public tree both hold it."""
QUICK = {"traversals": 300, "advantage_batches": 30, "advantage_batch_size": 1024, "hidden": [32, 32]}
QUICK_AVERAGE = {"average_batches": 50, "average_batch_size": 1024}


def solver(game_id: str = SMALL, algorithm: str = "sd-cfr", seed: int = 0, **overrides: object) -> HoldemNeuralSolver:
    return HoldemNeuralSolver(
        game_id, algorithm, settings_of("fast", {**QUICK, **overrides}), np.random.default_rng(seed)
    )


def every_decision(s: HoldemNeuralSolver, deals: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``deals`` fresh deals, the rows of every decision node of each, and OpenSpiel's tensor of the acting player's
    information state at each row (its hole cards, the board dealt by the node's round, the betting sequence)."""
    betting, rules = s.tree.engine.betting, s.tensors.rules
    cards = s.deal(deals)
    decisions = np.flatnonzero(betting.kind == DECISION)
    rows = (np.arange(deals)[:, None] * betting.num_nodes + decisions[None, :]).ravel()
    k = rules.num_hole_cards
    tensors = []
    for row in rows:
        deal, node = divmod(int(row), betting.num_nodes)
        player = int(betting.player[node])
        board = cards[deal, 2 * k : 2 * k + sum(rules.board_cards[: int(betting.round[node]) + 1])]
        hole = cards[deal, player * k : (player + 1) * k][None, :]
        tensors.append(s.tensors.of_node(player, betting.sequence[node], list(board), hole)[0])
    return cards, rows, np.array(tensors, dtype=np.float64)


@pytest.mark.parametrize("game_id", [SMALL, "fhp"])
def test_sample_keys_decode_to_the_information_state_tensors(game_id: str) -> None:
    """Every decision node of every deal: the key's tensor is OpenSpiel's tensor of the acting player's information
    state."""
    s = solver(game_id)
    cards, rows, expected = every_decision(s, 5)
    np.testing.assert_array_equal(s.inputs(s.keys(cards, rows)), expected)


@pytest.mark.parametrize("game_id", [SMALL, "fhp"])
def test_canonical_keys_read_each_states_image_alike_for_its_whole_orbit(game_id: str) -> None:
    """With ``inputs="canonical"`` every key's tensor is the tensor of its information state's suit-canonical image
    (what a model reads, :meth:`SuitImages.of_tensors`), and the deals moved by any suit permutation give the same
    keys."""
    s = solver(game_id, inputs="canonical")
    assert s.images is not None
    rules = s.tensors.rules
    cards, rows, raw = every_decision(s, 5)
    keys = s.keys(cards, rows)
    np.testing.assert_array_equal(s.inputs(keys), s.images.of_tensors(s.tensors, raw))
    for perm in suit_permutations(rules.num_suits):
        moved = card_permutation(perm, rules.num_ranks, rules.num_suits)[cards]
        np.testing.assert_array_equal(s.keys(moved, rows), keys)


def test_a_model_reading_canonical_images_scores_alike_on_the_compiled_and_the_canonical_public_tree() -> None:
    """Its compiled tree reads every infoset as its image, as the public tree with suit-canonical boards does: the
    two NashConvs agree (within float32 rounding of the forward passes). A tree with every board is refused."""
    s = solver(SMALL, "sd-cfr", inputs="canonical")
    s.run(6)
    model = from_solver(s)
    assert model.inputs == "canonical"
    on_compiled = exploitability_of_strategy(model.tree, model.strategy).nash_conv
    canonical = build_public_tree(holdem.game_tree(SMALL).game_string, canonical=True)
    assert holdem.exploitability(canonical, holdem.NeuralHands(model)).nash_conv == pytest.approx(on_compiled, rel=1e-5)
    with pytest.raises(InputError, match="suit-canonical boards, not on one with every board"):
        Materialiser(build_public_tree(canonical.game_string, canonical=False), network_strategy(model))


@pytest.mark.parametrize(
    ("game_id", "inputs"),
    [
        (SMALL, "cards"),
        (SMALL, "strength"),
        ("fhp", "cards"),
        ("fhp", "strength"),
        pytest.param("rlcard:limit-holdem", "cards", marks=pytest.mark.slow),
    ],
)
def test_the_gathered_first_layer_is_the_network_on_the_inputs(game_id: str, inputs: str) -> None:
    """The solver's forward pass (the first layer summed from a table's rows) gives the network's outputs on the
    keys' inputs, and the same gradient, within float32 rounding; the strength input is the hand's on the board of
    the node's round."""
    s = solver(game_id, hidden=[64, 32], inputs=inputs)
    betting = s.tree.engine.betting
    decisions = np.flatnonzero(betting.kind == DECISION)
    rows = np.arange(400) % 50 * betting.num_nodes + np.random.default_rng(3).choice(decisions, 400)
    cards = s.deal(50)
    keys = s.keys(cards, rows)
    gathered, dense = s.value_networks[0], s._fresh_network()
    dense.load_state_dict(gathered.state_dict())
    tensors = s.inputs(keys)
    assert tensors.shape == (400, s.tensors.size + (inputs == "strength"))
    got, expected = s.forward(gathered, keys), dense(torch.from_numpy(tensors))
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    (got**2).sum().backward()
    (expected**2).sum().backward()
    for mine, theirs in zip(gathered.parameters(), dense.parameters(), strict=True):
        torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-4, atol=1e-4)
    if s.strength is not None:
        k, sizes = s.tensors.rules.num_hole_cards, s.strength.board_sizes
        for row, value in zip(rows.tolist(), tensors[:, -1].tolist(), strict=True):
            deal, node = divmod(row, betting.num_nodes)
            player, round_ = int(betting.player[node]), int(betting.round[node])
            hole = cards[deal, player * k : (player + 1) * k]
            board = cards[deal, 2 * k : 2 * k + sizes[round_]]
            assert value == s.strength.of_board(round_, hole[None, :], board)[0]


@pytest.mark.parametrize("player", [0, 1])
def test_traversal_regrets_are_unbiased_samples_of_the_counterfactual_regrets(player: int) -> None:
    r"""Under uniform :math:`\sigma^1`, the sampled regrets that land in infoset :math:`I`, summed and divided by the
    traversals, estimate :math:`r(I,a) = \sum_{h \in I} \pi_{-i}(h)(v(ha) - v(h))`, computed exactly on the compiled
    tree (infosets matched by their tensors); checked to 4.5 standard errors where at least 200 samples land."""
    s = solver(SMALL, seed=player)
    compiled = tree(SMALL)
    nodes, values, cdf, _, _ = kernel_tree(compiled)
    exact = counterfactual_regrets(nodes, values, cdf, compiled.uniform_strategy(), player, compiled.num_infosets)
    row_of = {
        bytes(t.tobytes()): row
        for row, t in enumerate(encoder(game(SMALL)).of_keys(compiled.infoset_keys).astype(np.float32))
    }
    traversals = 60_000
    sums: dict[int, np.ndarray] = defaultdict(lambda: np.zeros(3))
    squares: dict[int, np.ndarray] = defaultdict(lambda: np.zeros(3))
    counts: dict[int, int] = defaultdict(int)
    for _ in range(traversals // 3000):
        samples = s.traverse(player, 3000)
        for tensor, regret in zip(s.inputs(samples.own_keys), samples.regrets, strict=True):
            row = row_of[bytes(tensor.tobytes())]
            sums[row] += regret
            squares[row] += regret**2
            counts[row] += 1
    checked = 0
    for row, total in sums.items():
        assert compiled.infoset_player[row] == player
        n = len(compiled.infoset_actions[row])
        mean = total[:n] / traversals
        variance = squares[row][:n] / traversals - mean**2
        error = np.sqrt(np.maximum(variance, 1e-300) / traversals)
        if counts[row] >= 200:
            assert np.all(np.abs(mean - exact[row, :n]) <= 4.5 * error + 1e-9), (compiled.infoset_keys[row], mean)
            checked += 1
    assert checked >= 20


@pytest.mark.parametrize("inputs", ["cards", pytest.param("strength", marks=pytest.mark.slow)])
def test_a_model_trained_on_the_engine_scores_alike_on_both_trees_and_learns(inputs: str) -> None:
    """Its exact NashConv on the compiled tree equals the one on the public tree with every board (within float32
    rounding of the forward passes), and after a few iterations it is well below the uniform strategy's."""
    s = solver(SMALL, "sd-cfr", inputs=inputs)
    s.run(6)
    model = from_solver(s)
    on_compiled = exploitability_of_strategy(model.tree, model.strategy).nash_conv
    public = build_public_tree(holdem.game_tree(SMALL).game_string, canonical=False)
    on_public = holdem.exploitability(public, holdem.NeuralHands(model)).nash_conv
    uniform = holdem.exploitability(public, holdem.UniformHands()).nash_conv
    assert on_public == pytest.approx(on_compiled, rel=1e-5)
    assert on_compiled < 0.6 * uniform


def test_the_value_networks_fit_the_regrets_divided_by_the_value_scale_on_the_engine() -> None:
    unscaled, scaled = first_targets(lambda **scale: solver(SMALL, **scale))
    assert np.abs(unscaled).max() > 100  # chips: the blinds are 50 and 100
    np.testing.assert_array_equal(scaled, unscaled / 4)


def test_the_same_seed_gives_the_same_networks_on_one_machine() -> None:
    first, second = (solver(SMALL, "deep-cfr", seed=3, **QUICK_AVERAGE) for _ in range(2))
    for s in (first, second):
        s.run(2)
    a, b = first.model_weights(), second.model_weights()
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert first.state().keys() == second.state().keys()


def test_the_model_is_on_disk_before_its_scoring_and_a_stopped_scoring_keeps_it(tmp_path: Path) -> None:
    """Scoring a model of FHP takes up to an hour: the model is saved before it, without a NashConv, so Ctrl-C
    during the scoring leaves a model that loads; a finished scoring writes the NashConv into the sidecar."""
    trained = solver(SMALL, "sd-cfr")
    trained.run(2)
    run = TrainingRun(0, 2, 1.0, 0.0, float("nan"), "iterations", (), 0.0)
    out = tmp_path / "m.json"

    def stopped(model: NeuralPolicy) -> float:
        assert json.loads(out.read_text())["nash_conv"] is None  # saved, not yet scored
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        save_trained(out, trained, run, seed=0, preset="fast", curve=False, score=stopped)
    loaded = load_opponent(str(out), SMALL).agent
    assert isinstance(loaded, NetworkAgent) and loaded.raw.iterations == 2
    assert save_trained(out, trained, run, seed=0, preset="fast", curve=False, score=lambda model: 1.25) == 1.25
    assert json.loads(out.read_text())["nash_conv"] == 1.25


@pytest.mark.slow
def test_train_on_the_engine_writes_a_model_that_exploitability_scores_alike(tmp_path: Path) -> None:
    """Trained with the strength input, which the model file records and its readers read (a bad value refused)."""
    inputs = "strength"
    out = tmp_path / "m.json"
    args = ["train", "--game", SMALL, "--engine", "public-tree", "--algo", "deep-cfr", "--preset", "fast"]
    args += ["--traversals", "200", "--advantage-batches", "10", "--average-batches", "50", "--iterations", "2"]
    result = run_cli([*args, "--inputs", inputs, "--out", str(out), "--seed", "1"])
    assert result.status == 0, result.err
    saved = json.loads(out.read_text())
    scored = run_cli(["exploitability", str(out), "--json"])
    assert scored.status == 0, scored.err
    assert json.loads(scored.out)["nash_conv"] == pytest.approx(saved["nash_conv"], rel=1e-9)
    assert saved["hyperparameters"]["engine"] == "holdem"
    assert saved["inputs"] == saved["hyperparameters"]["inputs"] == inputs
    saved["inputs"] = "pixels"
    out.write_text(json.dumps(saved))
    refused = run_cli(["exploitability", str(out)])
    assert refused.status == 2 and refused.err.count("\n") == 1 and "not 'pixels'" in refused.err, refused.err


@pytest.mark.parametrize(
    ("inputs", "game", "extra", "message"),
    [
        ("strength", "openspiel:kuhn_poker", [], "--inputs strength reads hold'em cards on the hold'em engine, not"),
        ("strength", SMALL, ["--engine", "tree"], "--inputs strength reads hold'em cards on the hold'em engine, not"),
        pytest.param(
            "strength",
            "rlcard:limit-holdem",
            [],
            "classes of (board, hand) pairs or more, beyond the",
            marks=pytest.mark.slow,
        ),
        ("canonical", SMALL, ["--engine", "tree"], "--inputs canonical reads hold'em cards on the hold'em engine, not"),
        ("canonical", "hulh", [], "suit-canonical inputs need a game whose board is dealt in one round, not 3 rounds"),
    ],
)
def test_inputs_are_refused_in_one_line_where_they_cannot_be_read(
    tmp_path: Path, inputs: str, game: str, extra: list[str], message: str
) -> None:
    args = ["train", "--game", game, "--algo", "sd-cfr", "--inputs", inputs, "--iterations", "1", *extra]
    result = run_cli([*args, "--out", str(tmp_path / "m.json")])
    assert result.status == 2
    assert result.err.count("\n") == 1 and message in result.err, result.err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--checkpoint", "c.npz"], "--checkpoint does not apply to --algo sd-cfr on the hold'em engine"),
        (["--curve", "c.csv"], "--curve does not apply to --algo sd-cfr on the hold'em engine"),
    ],
)
def test_options_the_engine_does_not_take_are_refused_in_one_line(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    args = ["train", "--game", "fhp", "--algo", "sd-cfr", "--iterations", "1", "--out", str(tmp_path / "m.json")]
    result = run_cli([*args, *extra])
    assert result.status == 2
    assert result.err.count("\n") == 1 and message in result.err, result.err


def test_rlcard_tensors_encode_the_whole_history_exactly() -> None:
    """RLCard's limit hold'em has no tensors of its own: the engine's encode the player's position, cards and every
    action, so no two decision nodes share a template, and a card changes the tensor."""
    s = solver("rlcard:limit-holdem")
    betting = s.tree.engine.betting
    decisions = np.flatnonzero(betting.kind == DECISION)
    templates = s.tensors.betting_templates(betting)[decisions]
    assert np.unique(templates, axis=0).shape[0] == decisions.size
    cards = s.deal(2)
    rows = np.concatenate([decisions, betting.num_nodes + decisions])
    inputs = s.inputs(s.keys(cards, rows))
    assert np.unique(inputs, axis=0).shape[0] == rows.size


@pytest.mark.parametrize(
    ("algorithm", "inputs"),
    [("deep-cfr", "cards"), ("sd-cfr", "canonical"), pytest.param("sd-cfr", "strength", marks=pytest.mark.slow)],
)
def test_the_model_asked_state_by_state_plays_its_exact_strategy(algorithm: str, inputs: str) -> None:
    """Asked one OpenSpiel information state at a time (as on games no tree holds), a model trained on the engine
    plays, at every infoset of the compiled tree, the strategy computed there for every infoset at once (SD-CFR's
    mixture with its reaches over the player's own earlier decisions)."""
    s = solver(SMALL, algorithm, inputs=inputs, **QUICK_AVERAGE)
    s.run(3)
    model = from_solver(s)
    compiled = model.tree
    player = NetworkAgent(model)
    policy = HoldemPolicy(player.engine, player.state_player)
    expected = openspiel_strategy(policy, compiled)
    np.testing.assert_allclose(expected, model.strategy, atol=1e-9)


def test_lbr_asks_a_model_for_its_whole_range_at_once_as_it_plays_each_hand() -> None:
    """LBR's range query of a model trained on the engine answers, for every live hand at once, what the model plays
    holding that hand alone; the hands that are not live are left uniform."""
    s = solver(SMALL, "sd-cfr")
    s.run(3)
    agent = NetworkAgent(from_solver(s))
    engine = agent.engine
    rules = engine.rules
    hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    query = range_query(agent, engine, hands, "model")
    betting = engine.betting
    node, path = walk_actions(engine, [1, 2])  # call, raise: the small blind acts again
    board = np.array([], dtype=np.int64)
    live = np.arange(hands.shape[0]) % 3 != 0
    block = query.probabilities(node, board, [1, 2], live)
    n = int(betting.num_children[node])
    for h in range(hands.shape[0]):
        if live[h]:
            expected = agent.state_player(Position(node, list(hands[h]), [], path))
            np.testing.assert_allclose(block[:, h], expected, atol=1e-12)
        else:
            np.testing.assert_array_equal(block[:, h], np.full(n, 1.0 / n))


def test_a_model_of_rlcards_game_plays_in_rlcards_env(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    args = ["train", "--game", "rlcard:limit-holdem", "--algo", "sd-cfr", "--preset", "fast", "--traversals", "20"]
    result = run_cli([*args, "--advantage-batches", "2", "--hidden", "16", "--iterations", "2", "--out", str(out)])
    assert result.status == 0, result.err
    assert json.loads(out.read_text())["nash_conv"] is None
    played = run_cli(["match", str(out), "always-call", "--game", "rlcard:limit-holdem", "--hands", "20", "--json"])
    assert played.status == 0, played.err
    assert json.loads(played.out)["hands"] == 20


def test_a_model_file_of_the_engine_loads_with_its_shapes_checked() -> None:
    s = solver(SMALL, "sd-cfr")
    s.run(2)
    weights = s.model_weights()
    model = NeuralPolicy(s.tree.game_id, s.tree.rules_fingerprint, "sd-cfr", s.settings.hidden, 2, weights)
    assert model.num_outputs == 3
    broken = {**weights, "value0.1.0.weight": weights["value0.1.0.weight"][:, :-1]}
    with pytest.raises(Exception, match="another shape"):
        NeuralPolicy(s.tree.game_id, s.tree.rules_fingerprint, "sd-cfr", s.settings.hidden, 2, broken)


@pytest.mark.slow
def test_a_model_of_fhp_plays_its_exact_value_in_universal_poker(tmp_path: Path) -> None:
    """On Flop Hold'em a model is scored on the public tree and plays that same strategy in OpenSpiel's game: the
    sampled mean lands within 4 standard errors of the exact value (minutes: two materialisations of FHP)."""
    out = tmp_path / "f.json"
    args = ["train", "--game", "fhp", "--algo", "sd-cfr", "--preset", "fast", "--traversals", "200", "--hidden", "16"]
    trained = run_cli([*args, "--advantage-batches", "2", "--iterations", "2", "--out", str(out)])
    assert trained.status == 0, trained.err
    played = run_cli(["match", str(out), "random", "--game", "fhp", "--hands", "2000", "--json"])
    assert played.status == 0, played.err
    result = json.loads(played.out)
    assert abs(result["mean"] - result["exact"]) <= 4 * result["standard_error"]
