"""``cfr-agents train`` on a hold'em game's public tree: the engine chosen, the strategy file, checkpoints and
resume, and the refusals of options that do not apply."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cfr_agents.checkpoint import Checkpoint, read_checkpoint
from cfr_agents.public_tree.strategy_file import load_strategy
from tests.support import run_cli

GAME = "holdem-6"


def train(tmp_path: Path, name: str, *options: str) -> dict[str, object]:
    run = run_cli(["train", "--game", GAME, "--algo", "dcfr", "--out", str(tmp_path / name), "--json", *options])
    assert run.status == 0, run.err
    report: dict[str, object] = json.loads(run.out)
    return report


def test_train_runs_full_game_cfr_on_the_public_tree_and_saves_a_strategy_file(tmp_path: Path) -> None:
    report = train(tmp_path, "six.npz", "--engine", "public-tree", "--iterations", "30")
    assert report["parameters"]["engine"] == "public-tree"  # type: ignore[index]
    assert report["iterations"] == 30
    saved = load_strategy(tmp_path / "six.npz")
    assert saved.iterations == 30 and saved.algorithm == "dcfr"
    assert report["nash_conv"] == pytest.approx(_nash_conv(saved), rel=1e-5)  # the file holds float32


def _nash_conv(saved: object) -> float:
    from eval.exploitability import public_exploitability

    return public_exploitability(saved.tree, saved.strategy).nash_conv  # type: ignore[attr-defined]


def test_a_resumed_public_tree_run_equals_a_run_without_a_stop(tmp_path: Path) -> None:
    train(tmp_path, "whole.npz", "--engine", "public-tree", "--iterations", "40", "--checkpoint", str(tmp_path / "a"))
    train(tmp_path, "half.npz", "--engine", "public-tree", "--iterations", "17", "--checkpoint", str(tmp_path / "b"))
    half = read_checkpoint(tmp_path / "b")
    assert isinstance(half, Checkpoint) and half.engine == "public-tree"
    train(tmp_path, "resumed.npz", "--iterations", "40", "--resume", str(tmp_path / "b"))
    whole, resumed = read_checkpoint(tmp_path / "a"), read_checkpoint(tmp_path / "b")
    assert resumed.iteration == whole.iteration == 40
    for name in ("regret", "cumulative", "sigma", "scalars"):
        assert np.array_equal(whole.arrays[name], resumed.arrays[name]), name


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--engine", "tree"], "the compiled tree takes hold'em games of up to 12 cards"),
        (["--sampling", "external"], "--sampling does not apply to full-game CFR on the public tree"),
        (["--suit-isomorphism"], "--suit-isomorphism does not apply to full-game CFR on the public tree"),
    ],
)
def test_options_that_do_not_apply_to_flop_holdem_are_refused_in_one_line(
    tmp_path: Path, options: list[str], message: str
) -> None:
    run = run_cli(
        ["train", "--game", "fhp", "--algo", "dcfr", "--iterations", "1", "--out", str(tmp_path / "x.npz"), *options]
    )
    assert run.status == 2
    assert message in run.err and len(run.err.strip().splitlines()) == 1


def test_the_public_tree_engine_refuses_a_game_that_is_not_limit_holdem(tmp_path: Path) -> None:
    run = run_cli(
        ["train", "--game", "openspiel:kuhn_poker", "--engine", "public-tree", "--algo", "cfr", "--iterations", "1",
         "--out", str(tmp_path / "x.npz")]
    )  # fmt: skip
    assert run.status == 2
    assert "two-player limit universal_poker" in run.err and len(run.err.strip().splitlines()) == 1


def test_train_prints_the_memory_a_public_tree_run_needs_and_refuses_one_the_machine_cannot_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["train", "--game", GAME, "--engine", "public-tree", "--algo", "dcfr", "--iterations", "2"]
    run = run_cli([*argv, "--out", str(tmp_path / "six.npz")])
    assert run.status == 0 and "memory: about " in run.err and " at the peak, of " in run.err
    monkeypatch.setattr("cfr_agents.cli.common.physical_bytes", lambda: 1000)
    run = run_cli([*argv, "--out", str(tmp_path / "small.npz")])
    assert run.status == 2 and len(run.err.strip().splitlines()) == 1
    assert "of memory at the peak; this machine has 0.0 MB" in run.err
    assert not (tmp_path / "small.npz").exists()


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("six.npz", [], "the compiled tree's solvers write a JSON policy; .npz names the public tree's"),
        ("six.txt", ["--engine", "public-tree"], "a public-tree strategy is a .npz archive and its .json sidecar"),
    ],
)
def test_an_out_file_of_the_other_engines_format_is_refused_before_training(
    tmp_path: Path, name: str, options: list[str], message: str
) -> None:
    run = run_cli(
        ["train", "--game", GAME, "--algo", "dcfr", "--iterations", "2", "--out", str(tmp_path / name), *options]
    )
    assert run.status == 2 and message in run.err and len(run.err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("out", "options", "flag"), [("c.json", ["--checkpoint", "c.npz"], "--checkpoint c.npz"),
                                                     ("d.npz", ["--curve", "d.json"], "--curve d.json")])  # fmt: skip
def test_an_out_pair_that_holds_the_checkpoint_or_the_curve_is_refused_before_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str, options: list[str], flag: str
) -> None:
    """``--out c.json`` writes ``c.npz`` too: a checkpoint or curve of that name would overwrite the strategy."""
    monkeypatch.chdir(tmp_path)
    run = run_cli(["train", "--game", GAME, "--engine", "public-tree", "--algo", "dcfr", "--iterations", "2",
                   "--out", out, *options])  # fmt: skip
    assert run.status == 2 and f"{flag} is one of them" in run.err and len(run.err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
