"""``cfr-agents train --abstraction DIR``: MCCFR through a card abstraction, its strategy files, checkpoints that
resume bit for bit, and one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import rlcard

import eval.train_report
from adapters.holdem.betting import DECISION
from adapters.holdem.engine import RLCARD_LIMIT, holdem_engine
from adapters.rlcard import shared_game
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.abstract_strategy import AbstractStrategy, load_abstract_strategy, save_abstract_strategy
from cfr_agents.abstraction import (
    Abstraction,
    RoundSpec,
    build_abstraction,
    class_counts,
    parse_spec,
    save_abstraction,
)
from cfr_agents.checkpoint import Checkpoint, CheckpointError, read_checkpoint
from cfr_agents.public_tree.strategy_file import StrategyFileError
from eval.agents import as_agent
from eval.exploitability import exploitability_of_strategy
from eval.holdem import AbstractHands, exploitability, game_tree
from eval.lbr import lbr_report
from eval.opponents.rlcard_builtin import FIXED, FixedAgent
from tests.support import run_cli, tree

GAME = "holdem-8"


def built(directory: Path, spec: str, game: str = GAME) -> Path:
    """``directory``, where the abstraction of ``game`` by ``spec`` is saved (seed 0)."""
    save_abstraction(build_abstraction(game, parse_spec(spec, class_counts(game)), np.random.default_rng(0)), directory)
    return directory


@pytest.fixture(scope="module")
def abstraction(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built(tmp_path_factory.mktemp("abstractions") / "h8", "lossless,6")


def train(abstraction: Path, *options: str) -> tuple[int, str, str]:
    status, out, err = run_cli(["train", "--abstraction", str(abstraction), "--algo", "dcfr", "--quiet", *options])
    return status, out, err


def checkpointed(abstraction: Path, folder: Path, iterations: int, *extra: str) -> Path:
    """``folder/c.npz``, the checkpoint of a run of ``iterations`` iterations (its strategy ``folder/a.npz``)."""
    options = ("--iterations", str(iterations), "--out", str(folder / "a.npz"), "--checkpoint", str(folder / "c.npz"))
    assert train(abstraction, *options, *extra)[0] == 0
    return folder / "c.npz"


def assert_refused(status: int, err: str, message: str) -> None:
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("sampling", ["external", "public-chance"])
def test_a_resumed_run_writes_the_strategy_a_whole_run_writes(abstraction: Path, tmp_path: Path, sampling: str) -> None:
    """The deal depends on the generator's state alone, which the checkpoint holds."""
    checkpoint = checkpointed(abstraction, tmp_path, 1000, "--sampling", sampling)
    saved = read_checkpoint(checkpoint)
    assert isinstance(saved, Checkpoint) and saved.engine == "abstraction"
    resume = ["train", "--resume", str(checkpoint), "--iterations", "2000", "--out", str(tmp_path / "b.npz"), "--quiet"]
    assert run_cli(resume)[0] == 0
    whole = ("--iterations", "2000", "--out", str(tmp_path / "whole.npz"), "--sampling", sampling)
    assert train(abstraction, *whole)[0] == 0
    assert (tmp_path / "b.npz").read_bytes() == (tmp_path / "whole.npz").read_bytes()


def test_the_saved_strategy_scores_as_the_report_says(abstraction: Path, tmp_path: Path) -> None:
    status, out, _ = train(abstraction, "--iterations", "2000", "--out", str(tmp_path / "s.json"), "--json")
    assert status == 0
    report = json.loads(out)
    strategy = load_abstract_strategy(tmp_path / "s.npz", game_id=GAME)
    assert strategy.iterations == report["iterations"] == 2000
    assert strategy.parameters["sampling"] == "external"
    score = exploitability(game_tree(GAME), AbstractHands(strategy.game, strategy.strategy))
    assert abs(score.nash_conv - report["nash_conv"]) < 1e-6  # float32 on disk


def test_a_strategy_read_through_another_abstraction_is_refused(abstraction: Path, tmp_path: Path) -> None:
    game = AbstractGame.load(abstraction)
    save_abstract_strategy(
        tmp_path / "u.npz", game, game.uniform_strategy(), algorithm="cfr", parameters={}, iterations=0
    )
    other = built(tmp_path / "other", "lossless,5")
    with pytest.raises(StrategyFileError, match="another"):
        load_abstract_strategy(tmp_path / "u.json", abstraction=other)
    (tmp_path / "u.npz").write_bytes((tmp_path / "u.npz").read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(StrategyFileError, match="SHA-256"):
        load_abstract_strategy(tmp_path / "u.json")


def test_a_checkpoint_resumed_on_another_abstraction_is_refused(abstraction: Path, tmp_path: Path) -> None:
    checkpoint = checkpointed(abstraction, tmp_path, 100)
    other = built(tmp_path / "other", "lossless,5")
    saved = read_checkpoint(checkpoint)
    assert isinstance(saved, Checkpoint)
    with pytest.raises(CheckpointError, match="another"):
        saved.abstract_game(other)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--sampling", "none"], "no tree to walk in full"),
        (["--engine", "tree"], "--engine does not apply with --abstraction"),
        (["--averaging", "full"], "walks the whole game tree"),
        (["--game", "holdem-6"], "is for"),
        (["--out", "s.pkl"], "names neither"),
        (["--algo", "sd-cfr"], "trains on the compiled tree"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    abstraction: Path, tmp_path: Path, options: list[str], message: str
) -> None:
    argv = ["--iterations", "10", "--out", str(tmp_path / "s.npz"), *options]
    if "--out" in options:
        argv = ["--iterations", "10", *options]
    status, _, err = train(abstraction, *argv)
    assert_refused(status, err, message)


def test_a_game_nothing_scores_trains_without_a_target(
    abstraction: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no public tree fits (hulh, RLCard's game) training runs and reports no NashConv; a target is refused."""
    monkeypatch.setattr(eval.train_report, "scores_exactly", lambda tree: False)
    monkeypatch.setattr("cfr_agents.cli.train.scores_exactly", lambda tree: False)
    status, _, err = train(abstraction, "--target-nash-conv", "1", "--out", str(tmp_path / "s.npz"))
    assert status == 2 and "no public tree fits" in err
    status, out, err = train(abstraction, "--iterations", "100", "--out", str(tmp_path / "s.npz"), "--json")
    assert status == 0, err
    assert json.loads(out)["nash_conv"] is None


def test_the_file_is_an_agent_of_the_exploitability_command(tmp_path: Path) -> None:
    """``exploitability`` asks the file at a state of each infoset of the compiled tree and scores it as training
    scored it on the public tree; ``match`` plays it. On holdem-6 (3,480 infosets to ask; holdem-8 has 9,632)."""
    small = built(tmp_path / "h6", "lossless,6", "holdem-6")
    status, out, _ = train(small, "--iterations", "3000", "--out", str(tmp_path / "s.npz"), "--json")
    assert status == 0
    reported = json.loads(out)["nash_conv"]
    status, out, err = run_cli(["exploitability", str(tmp_path / "s.npz"), "--json"])
    assert status == 0, err
    assert abs(json.loads(out)["nash_conv"] - reported) < 1e-6
    status, out, err = run_cli(
        ["match", str(tmp_path / "s.json"), "random", "--game", "holdem-6", "--hands", "200", "--quiet"]
    )
    assert status == 0 and "exact" in out, err


@pytest.mark.slow
def test_its_strategy_on_the_compiled_tree_scores_as_on_the_public_tree(abstraction: Path, tmp_path: Path) -> None:
    """Asked at a ``pyspiel`` state of every infoset of the compiled tree, the file plays what the public tree
    reads of it; it plays a match in OpenSpiel's game beside its exact value."""
    status, out, _ = train(abstraction, "--iterations", "3000", "--out", str(tmp_path / "s.npz"), "--json")
    assert status == 0
    compiled = tree(GAME)
    strategy = as_agent(load_abstract_strategy(tmp_path / "s.npz")).strategy(compiled)
    assert abs(exploitability_of_strategy(compiled, strategy).nash_conv - json.loads(out)["nash_conv"]) < 1e-6
    status, out, err = run_cli(
        ["match", str(tmp_path / "s.json"), "random", "--game", GAME, "--hands", "200", "--quiet"]
    )
    assert status == 0 and "exact" in out, err


class _OneBucket(Abstraction):
    """Every hand in bucket 0 of every round: a strategy of one row per betting node (for the RLCard agent's
    bookkeeping, without building a 52-card abstraction)."""

    def bucket(self, round_: int, hole: object, board: object) -> int:
        return 0


def test_an_rlcard_strategy_plays_in_rlcards_env_from_its_state() -> None:
    """The agent finds the betting node and the player to act from the env's action record (in both seats, every
    round) and answers over RLCard's legal actions: a strategy that bets whenever it can plays as always-raise."""
    engine = holdem_engine(RLCARD_LIMIT)
    rounds = tuple(RoundSpec("ehs2", 1) for _ in range(engine.rules.num_rounds))
    tables = build_abstraction(GAME, parse_spec(None, class_counts(GAME)), np.random.default_rng(0)).tables
    game = AbstractGame(engine, _OneBucket(RLCARD_LIMIT, engine.rules, rounds, (1,) * len(rounds), tables))
    strategy = np.zeros((game.num_rows, 3))
    for node in np.flatnonzero(engine.betting.kind == DECISION).tolist():
        legal = engine.legal_actions(node)
        strategy[game.row(node, 0), legal.index(2 if 2 in legal else 1)] = 1.0
    agent = AbstractStrategy(game, strategy, "test", {}, 0).rlcard_agent()
    always_raise = FixedAgent(shared_game("limit-holdem").actions, FIXED["always-raise"])
    env = rlcard.make("limit-holdem", config={"seed": 3})
    decisions = 0
    for hand in range(80):
        state, player = env.reset()
        while not env.is_over():
            if player == hand % 2:
                ours, theirs = agent.eval_step(state)[0], always_raise.eval_step(state)[0]
                assert ours == theirs, (state["action_record"], state["raw_legal_actions"])
                decisions += 1
                state, player = env.step(ours)
            else:
                state, player = env.step(int(np.random.default_rng(hand).choice(list(state["legal_actions"]))))
    assert decisions > 100


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--sampling", "outcome"], "is for sampling 'external', not 'outcome'"),
        (["--game", "holdem-6"], "the checkpoint is for game"),
        (["--algo", "cfr+"], "is for algorithm 'dcfr'"),
        (["--iterations", "50"], "already at iteration 100"),
    ],
)
def test_resuming_with_options_that_contradict_the_checkpoint_is_refused(
    abstraction: Path, tmp_path: Path, options: list[str], message: str
) -> None:
    checkpoint = checkpointed(abstraction, tmp_path, 100)
    argv = ["train", "--resume", str(checkpoint), "--out", str(tmp_path / "b.npz"), "--quiet", *options]
    assert_refused(*run_cli(argv if "--iterations" in options else [*argv, "--iterations", "200"])[::2], message)


def test_no_output_overwrites_the_abstraction_read(abstraction: Path, tmp_path: Path) -> None:
    """The abstraction's files are inputs: of ``--abstraction DIR``, and of a strategy whose sidecar names it."""
    tables = abstraction / "tables.npz"
    before = tables.read_bytes()
    status, _, err = train(abstraction, "--iterations", "5", "--out", str(tables))
    assert status == 2 and "would overwrite the input" in err, err
    assert train(abstraction, "--iterations", "5", "--out", str(tmp_path / "s.npz"))[0] == 0
    status, _, err = run_cli(["best-response", str(tmp_path / "s.json"), "--game", GAME, "--out", str(tables)])
    assert status == 2 and "would overwrite the input" in err, err
    assert tables.read_bytes() == before


def test_local_best_response_reads_the_file_and_never_beats_the_best_response(
    abstraction: Path, tmp_path: Path
) -> None:
    status, out, _ = train(abstraction, "--iterations", "3000", "--out", str(tmp_path / "s.npz"), "--json")
    assert status == 0
    report = lbr_report(str(tmp_path / "s.json"), GAME, hands=0)
    assert abs(report.best_response - json.loads(out)["exploitability"]) < 1e-6
    assert report.exact <= report.best_response + 1e-9
