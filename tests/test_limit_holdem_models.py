"""RLCard's DQN and NFSP on ``rlcard:limit-holdem``, trained as RLCard's ``examples/run_rl.py`` trains them: the
shipped models, their files and provenance (no NashConv without a compiled tree; RLCard's own evaluation instead),
and ``train-opponent`` on a game no compiled tree holds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import rlcard

from adapters.holdem.cards import private_hands
from adapters.holdem.engine import holdem_engine
from adapters.inputs import InputError
from adapters.rlcard import RLCardGame
from cfr_agents.holdem_play import walk_actions
from eval.agents import RLCardEnvAgent
from eval.opponents import MODELS, available, load_model_file, load_opponent, shipped_model
from eval.opponents.provenance import NO_TREE, Evaluation, Provenance, library_versions, provenance_of
from eval.ranges import CALL, RAISE, RLCardRange, range_query
from tests.support import game, run_cli

GAME = "rlcard:limit-holdem"
KINDS = ("rlcard-dqn", "rlcard-nfsp")

pytest.importorskip("torch")


def limit_holdem() -> RLCardGame:
    loaded = game(GAME)
    assert isinstance(loaded, RLCardGame)
    return loaded


def sidecar(kind: str) -> Path:
    return shipped_model(kind, limit_holdem())


def seated(kind: str) -> Any:
    """The shipped model's RLCard agent (what ``load_opponent`` wraps)."""
    agent = load_opponent(kind, GAME).agent
    assert isinstance(agent, RLCardEnvAgent)
    return agent.raw


def test_the_shipped_models_are_listed_and_record_the_example_not_a_nash_conv() -> None:
    assert [f.name for f in available(GAME)][-2:] == ["rlcard-nfsp", "rlcard-dqn"]
    for kind in KINDS:
        data = json.loads(sidecar(kind).read_text())
        provenance = provenance_of(data, kind)
        assert (data["nash_conv"], data["exploitability"]) == (None, None)
        assert provenance.hyperparameters["preset"] == "rlcard-run-rl"
        assert "examples/run_rl.py" in provenance.hyperparameters["note"]
        assert (provenance.episodes, provenance.hyperparameters["evaluate_every"]) == (5000, 100)
        evaluation = provenance.evaluation
        assert evaluation is not None and evaluation.games == provenance.hyperparameters["num_eval_games"] == 2000
        assert [episode for episode, _ in evaluation.curve] == list(range(0, 5000, 100))
        assert f"NashConv {NO_TREE}" in provenance.describe()


@pytest.mark.parametrize("kind", KINDS)
def test_a_shipped_model_plays_legal_actions_in_either_seat_and_reproduces_its_recorded_evaluation(kind: str) -> None:
    """Hands in RLCard's env with the model in both seats (RLCard's env would silently turn an illegal action into
    a check or fold, so legality is asserted here); then RLCard's example evaluation, rerun with the sidecar's seed,
    gives the recorded figure."""
    from eval.opponents.nfsp import example_evaluation

    agent = seated(kind)
    env = rlcard.make("limit-holdem", config={"seed": 3})
    decisions = 0
    for _ in range(20):
        state, _ = env.reset()
        while not env.is_over():
            action, _ = agent.eval_step(state)
            assert int(action) in state["legal_actions"], state["raw_legal_actions"]
            state, _ = env.step(int(action))
            decisions += 1
    assert decisions > 40
    evaluation = provenance_of(json.loads(sidecar(kind).read_text()), kind).evaluation
    assert evaluation is not None
    assert example_evaluation(agent, limit_holdem(), evaluation.games, evaluation.seed) == evaluation.average_payoff


@pytest.mark.parametrize("kind", KINDS)
def test_a_match_against_random_is_played_in_rlcards_env(kind: str) -> None:
    run = run_cli(["match", kind, "random", "--game", GAME, "--hands", "200", "--seed", "0", "--json"])
    assert run.status == 0, run.err
    report = json.loads(run.out)
    assert report["hands"] == 200 and report["exact"] is None and report["agents"] == [kind, "random"]


def test_tampered_weights_are_refused_by_their_digest(tmp_path: Path) -> None:
    for suffix in (".json", ".safetensors"):
        shutil.copy(sidecar("rlcard-dqn").with_suffix(suffix), tmp_path)
    weights = tmp_path / "rlcard-dqn_limit-holdem.safetensors"
    content = bytearray(weights.read_bytes())
    content[-1] ^= 1  # one bit of the last weight
    weights.write_bytes(bytes(content))
    run = run_cli(["match", str(tmp_path / "rlcard-dqn_limit-holdem.json"), "random", "--game", GAME, "--hands", "4"])
    assert run.status == 2 and len(run.err.strip().splitlines()) == 1
    assert "is not the weights file its sidecar" in run.err


@pytest.mark.parametrize(
    ("model", "game_id", "message"),
    [
        (MODELS / "rlcard-nfsp_leduc-holdem.json", GAME, "was trained on rlcard:leduc-holdem, not rlcard:limit-holdem"),
        (MODELS / "rlcard-dqn_limit-holdem.json", "rlcard:leduc-holdem", "not rlcard:leduc-holdem"),
    ],
)
def test_a_model_of_another_game_is_refused_in_one_line(model: Path, game_id: str, message: str) -> None:
    run = run_cli(["match", str(model), "random", "--game", game_id, "--hands", "4"])
    assert run.status == 2 and len(run.err.strip().splitlines()) == 1 and message in run.err, run.err


def test_a_sidecar_with_a_null_nash_conv_round_trips_and_old_sidecars_read_unchanged(tmp_path: Path) -> None:
    provenance = Provenance(
        kind="rlcard-dqn",
        game=GAME,
        rules_fingerprint=limit_holdem().rules_fingerprint,
        units="BB",
        episodes=300,
        iterations=None,
        seed=5,
        hyperparameters={"preset": "rlcard-run-rl"},
        training_seconds=1.5,
        versions=library_versions(),
        nash_conv=None,
        exploitability=None,
        evaluation=Evaluation(2000, 11, 0.25, 100, ((0, -0.5), (100, 0.125)), 3.0),
    )
    text = json.dumps(provenance.to_json())
    assert '"nash_conv": null' in text and '"exploitability": null' in text
    assert provenance_of(json.loads(text), "file") == provenance
    assert provenance.describe() == (
        f"300 episodes, 1.5 s; NashConv {NO_TREE}; +0.250 BB/game against RLCard's RandomAgent over 2,000 games "
        "(seed 11)"
    )
    with pytest.raises(InputError, match="'nash_conv' and 'exploitability' must be both numbers or both null"):
        provenance_of({**json.loads(text), "exploitability": 0.5}, "file")
    with pytest.raises(InputError, match="its field 'evaluation' must hold"):
        provenance_of({**json.loads(text), "evaluation": {"games": 2000}}, "file")
    for path in sorted(MODELS.glob("*.json")):  # every file written before: read and written back as it was
        data = json.loads(path.read_text())
        written = provenance_of(data, str(path)).to_json()
        assert {key: data[key] for key in written if key in data} == {k: v for k, v in written.items() if k in data}
        assert set(written) - set(data) <= {"curve", "stopped_by"}, path.name  # optional, written with defaults


@pytest.mark.parametrize("kind", KINDS)
def test_train_opponent_on_limit_holdem_writes_a_model_without_a_nash_conv(tmp_path: Path, kind: str) -> None:
    out = tmp_path / f"{kind}.json"
    argv = ["train-opponent", kind, "--game", GAME, "--episodes", "3", "--seed", "1", "--out", str(out)]
    run = run_cli([*argv, "--hyperparameters", "rlcard-run-rl", "--json"])
    assert run.status == 0, run.err
    written = json.loads(run.out)
    assert (written["nash_conv"], written["exploitability"], written["episodes"]) == (None, None, 3)
    assert [point[0] for point in written["evaluation"]["curve"]] == [0]  # evaluated after the first episode
    opponent = load_model_file(out, limit_holdem(), name="trained")
    assert opponent.provenance is not None and opponent.provenance.evaluation is not None
    refused = run_cli([*argv, "--check-every", "1"])
    assert refused.status == 2 and len(refused.err.strip().splitlines()) == 1
    assert "--check-every measures the exact NashConv on the compiled tree" in refused.err


def test_a_family_that_needs_the_compiled_tree_is_refused_on_limit_holdem(tmp_path: Path) -> None:
    out = str(tmp_path / "cfr.json")
    run = run_cli(["train-opponent", "rlcard-cfr", "--game", GAME, "--iterations", "1", "--seed", "0", "--out", out])
    assert run.status == 2 and len(run.err.strip().splitlines()) == 1 and "no compiled tree" in run.err


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_retraining_with_the_shipped_seed_reproduces_the_start_of_its_recorded_curve(tmp_path: Path, kind: str) -> None:
    """300 episodes from the shipped model's seed and preset: the example's evaluations after episodes 0, 100 and
    200, made in the training env, are those the shipped sidecar recorded (bit for bit on one machine)."""
    shipped = provenance_of(json.loads(sidecar(kind).read_text()), kind)
    assert shipped.evaluation is not None
    out = tmp_path / "again.json"
    argv = ["train-opponent", kind, "--game", GAME, "--episodes", "300", "--seed", str(shipped.seed)]
    run = run_cli([*argv, "--hyperparameters", "rlcard-run-rl", "--out", str(out), "--json"])
    assert run.status == 0, run.err
    again = json.loads(run.out)["evaluation"]["curve"]
    assert [tuple(point) for point in again] == list(shipped.evaluation.curve[:3])


@pytest.mark.parametrize("kind", KINDS)
def test_the_network_answers_for_every_hand_in_one_pass_what_eval_step_answers_hand_by_hand(kind: str) -> None:
    """AIVAT imagines the hands of RLCard's NFSP and DQN (``imaginable``): their network runs once for all the hands
    at a node, and gives what ``eval_step`` gives hand by hand through RLCard's env, to float32's precision."""
    engine = holdem_engine(GAME)
    rules = engine.rules
    hands = private_hands(rules.num_ranks, rules.num_suits, rules.num_hole_cards)
    batched = range_query(load_opponent(kind, GAME).agent, engine, hands, kind)
    assert isinstance(batched, RLCardRange) and batched.batched and batched.imaginable
    by_hand = RLCardRange(batched.agent, engine, hands, kind)
    by_hand.batched = False
    live = np.ones(hands.shape[0], bool)
    for actions, board in (([], []), ([RAISE], []), ([CALL, CALL], [3, 20, 41])):
        node, _ = walk_actions(engine, actions)
        dealt = np.array(board, np.int64)
        ours, theirs = (query.probabilities(node, dealt, actions, live) for query in (batched, by_hand))
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-5)
        assert np.unique(theirs.round(6), axis=1).shape[1] > 1  # the answers depend on the hand
