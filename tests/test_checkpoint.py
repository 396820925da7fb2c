"""Checkpoints: an interrupted and resumed run equals an uninterrupted one bit for bit; foreign,
corrupt and mismatched checkpoints are refused with one line."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cfr_agents import make_solver
from cfr_agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from cfr_agents.solvers import SCHEMES
from cfr_agents.solvers.full_tree import normalise
from cfr_agents.solvers.sampling import CHANCE_DRAWS
from tests.support import CliRun, in_one_process, run_cli, start_interruptible, tree

CONFIGURATIONS = [
    ("cfr+", "none", None),
    ("dcfr", "none", None),
    *(("dcfr", scheme, draws) for scheme in sorted(SCHEMES) for draws in CHANCE_DRAWS),
]


@pytest.mark.parametrize(("algorithm", "sampling", "chance_draws"), CONFIGURATIONS)
def test_resumed_solver_equals_an_uninterrupted_one(
    tmp_path: Path, algorithm: str, sampling: str, chance_draws: str | None
) -> None:
    """On one machine (two runs in one process): resumed state equals uninterrupted state bit for bit."""
    t = tree("openspiel:leduc_poker")
    rng = np.random.default_rng(11)
    whole = make_solver(t, algorithm, sampling=sampling, rng=np.random.default_rng(11), chance_draws=chance_draws)
    whole.run(300)
    first = make_solver(t, algorithm, sampling=sampling, rng=rng, chance_draws=chance_draws)
    first.run(120)
    save_checkpoint(tmp_path / "c.npz", first, seed=11)
    resumed = load_checkpoint(tmp_path / "c.npz").solver(t)
    assert resumed.iteration == 120
    resumed.run(180)
    assert np.array_equal(resumed.average_strategy(), whole.average_strategy())
    assert np.array_equal(resumed.current_strategy(), whole.current_strategy())


def train(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "cfr_agents", "train", "--quiet", *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)


@pytest.mark.parametrize("sampling", ["none", "external"])
def test_cli_resume_gives_the_same_policy_file_byte_for_byte(tmp_path: Path, sampling: str) -> None:
    """On one machine: the resumed run's file equals the uninterrupted run's, byte for byte. The runs before it are
    in this process, the resumed one in a process of its own: it has nothing but the checkpoint to go on."""
    common = ["train", "--quiet", "--game", "rlcard:leduc-holdem", "--algo", "dcfr", "--sampling", sampling]
    common += ["--seed", "4"]
    assert run_cli([*common, "--iterations", "2000", "--out", str(tmp_path / "whole.json")]).status == 0
    part = ["--iterations", "700", "--out", str(tmp_path / "part.json"), "--checkpoint", str(tmp_path / "c.npz")]
    assert run_cli([*common, *part]).status == 0
    resumed = train(tmp_path, "--resume", "c.npz", "--iterations", "2000", "--out", "resumed.json", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["resumed_from"] == 700
    assert (tmp_path / "resumed.json").read_bytes() == (tmp_path / "whole.json").read_bytes()
    assert load_checkpoint(tmp_path / "c.npz").iteration == 2000  # the resumed run kept checkpointing there


def test_ctrl_c_writes_a_checkpoint_that_resumes(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "cfr_agents",
        "train",
        "--game",
        "openspiel:leduc_poker",
        "--algo",
        "cfr",
        "--sampling",
        "external",
        "--iterations",
        "1000000000",
        "--out",
        "p.json",
        "--quiet",
        "--checkpoint",
        "c.npz",
        "--checkpoint-every",
        "0.5",
    ]
    process = start_interruptible(command, cwd=tmp_path, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (tmp_path / "c.npz").exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)  # the first periodic checkpoint shows that training runs
    first = load_checkpoint(tmp_path / "c.npz").iteration
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr.strip().splitlines() == ["cfr-agents: interrupted; checkpoint written"]
    assert not (tmp_path / "p.json").exists()
    saved = load_checkpoint(tmp_path / "c.npz")
    assert saved.iteration > first
    resume = ["train", "--quiet", "--resume", str(tmp_path / "c.npz"), "--iterations", str(saved.iteration + 10)]
    resumed = run_cli([*resume, "--out", str(tmp_path / "p.json")])
    assert resumed.status == 0, resumed.err


def kuhn_checkpoint(folder: Path) -> Path:
    """``folder/c.npz``: 10 iterations of external-sampling CFR on Kuhn poker, seed 0."""
    solver = make_solver(tree("openspiel:kuhn_poker"), "cfr", sampling="external", rng=np.random.default_rng(0))
    solver.run(10)
    save_checkpoint(folder / "c.npz", solver, seed=0)
    return folder / "c.npz"


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    return kuhn_checkpoint(tmp_path)


def rewrite_header(path: Path, **changes: object) -> None:
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}
    header = json.loads(arrays["header"].tobytes())
    header.update(changes)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(path, **arrays)


CONTRADICTING = [
    (["--game", "openspiel:leduc_poker"], "is for game"),
    (["--algo", "cfr+"], "is for algorithm 'cfr'"),
    (["--sampling", "outcome"], "is for sampling 'external'"),
    (["--sampling", "none"], "is for sampling 'external'"),
    (["--seed", "3"], "is for seed 0"),
    (["--chance-draws", "stratified"], "is for chance_draws 'independent'"),
]
"""Options of a resume that contradict the checkpoint, and what the refusal says."""
FOREIGN: list[tuple[dict[str, object], str]] = [
    ({"format_version": 1}, "format_version 1"),
    ({"format_version": 3}, "format_version 3"),
    ({"format": "something-else"}, "is not a cfr-agents-checkpoint file"),
    ({"game": "openspiel:leduc_poker"}, "is for openspiel:leduc_poker"),
    ({"rules_fingerprint": "sha256:0"}, "with rules sha256:0"),
    ({"algorithm": "xcfr"}, "unknown algorithm"),
    ({"sampling": "bogus"}, "unknown sampling scheme"),
    ({"chance_draws": "sobol"}, "unknown chance draws"),
]
"""Changes to a checkpoint's header, and what the refusal of a resume from it says."""


@pytest.fixture(scope="module")
def refused_resumes(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, CliRun]]:
    """The resumes of :data:`CONTRADICTING`, then of :data:`FOREIGN`, each from a checkpoint in a folder of its own
    (its header changed for the latter), in one process."""
    resumes: list[tuple[list[str], dict[str, object]]] = [(extra, {}) for extra, _ in CONTRADICTING]
    resumes += [([], changes) for changes, _ in FOREIGN]
    runs = []
    for extra, changes in resumes:
        folder = tmp_path_factory.mktemp("refused")
        saved = kuhn_checkpoint(folder)
        if changes:
            rewrite_header(saved, **changes)
        runs.append(
            (folder, ["train", "--quiet", "--resume", "c.npz", "--iterations", "20", "--out", "p.json", *extra])
        )
    return list(zip([folder for folder, _ in runs], in_one_process(runs), strict=True))


@pytest.mark.parametrize(("extra", "message"), CONTRADICTING)
def test_resuming_with_contradicting_options_is_refused(
    refused_resumes: list[tuple[Path, CliRun]], extra: list[str], message: str
) -> None:
    folder, result = refused_resumes[CONTRADICTING.index((extra, message))]
    assert result.status == 2 and result.out == ""
    assert len(result.err.splitlines()) == 1 and message in result.err, result.err
    assert not (folder / "p.json").exists()


@pytest.mark.parametrize(("changes", "message"), FOREIGN)
def test_foreign_checkpoints_are_refused(
    refused_resumes: list[tuple[Path, CliRun]], changes: dict[str, object], message: str
) -> None:
    _, result = refused_resumes[len(CONTRADICTING) + FOREIGN.index((changes, message))]
    assert result.status == 2 and len(result.err.splitlines()) == 1, result.err
    assert message in result.err and "Traceback" not in result.err


def test_corrupt_and_missing_checkpoints_are_refused(tmp_path: Path) -> None:
    (tmp_path / "junk.npz").write_bytes(os.urandom(200))
    with pytest.raises(CheckpointError, match=r"not a readable \.npz"):
        load_checkpoint(tmp_path / "junk.npz")
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "missing.npz")
    np.savez(tmp_path / "pickled.npz", header=np.array([{"a": 1}], dtype=object))
    with pytest.raises(CheckpointError, match=r"not a readable \.npz"):  # object arrays would need pickle
        load_checkpoint(tmp_path / "pickled.npz")


def test_a_checkpoint_array_of_the_wrong_shape_is_refused(checkpoint: Path) -> None:
    with np.load(checkpoint) as archive:
        arrays = {name: archive[name] for name in archive.files}
    arrays["regret"] = arrays["regret"][:-1]
    np.savez(checkpoint, **arrays)
    with pytest.raises(CheckpointError, match="'regret'"):
        load_checkpoint(checkpoint).solver(tree("openspiel:kuhn_poker"))


def test_a_member_declaring_more_than_it_holds_is_refused_before_anything_is_allocated(checkpoint: Path) -> None:
    """A ``.npy`` header may declare any shape: 10^12 float64 values (8 TB) declared by a member of a few hundred
    bytes are refused by their declaration, never allocated."""
    with np.load(checkpoint) as archive:
        arrays = {name: archive[name] for name in archive.files}
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**12,)})
    with zipfile.ZipFile(checkpoint, "w") as rewritten:
        for name, array in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, array)
            content = header.getvalue() + array.tobytes() if name == "cumulative" else member.getvalue()
            rewritten.writestr(f"{name}.npy", content)
    with pytest.raises(
        CheckpointError, match=r"'cumulative.npy' declares float64\[1000000000000\], not what its 320 bytes hold\)$"
    ):
        load_checkpoint(checkpoint)


def test_a_compressed_checkpoint_is_refused(checkpoint: Path) -> None:
    with np.load(checkpoint) as archive:
        arrays = {name: archive[name] for name in archive.files}
    np.savez_compressed(checkpoint, **arrays)
    with pytest.raises(CheckpointError, match=r"'header\.npy' is compressed"):
        load_checkpoint(checkpoint)


def test_a_state_that_is_not_finite_is_never_saved(tmp_path: Path) -> None:
    """A solver whose regrets hold a NaN is refused by the checkpoint writer (nothing written), by the training
    loop (one line naming the solver), and its policy by the policy writer."""
    from adapters.inputs import InputError
    from cfr_agents.policy import Policy
    from cfr_agents.training import StopRule, train
    from cfr_agents.tree import CompiledTree
    from eval.train_report import nash_conv

    solver = make_solver(tree("openspiel:kuhn_poker"), "cfr")
    solver.run(2)
    state = solver.state()
    state["regret"][3, 0] = np.nan
    solver.restore(state)
    with pytest.raises(CheckpointError, match=r"cfr: its 'regret' holds values that are not finite at iteration 2"):
        save_checkpoint(tmp_path / "c.npz", solver, seed=0)
    with pytest.raises(InputError, match=r"^cfr: its .* holds values that are not finite at iteration 3$"):
        train(solver, StopRule(iterations=3), nash_conv)
    strategy = solver.average_strategy()
    strategy[3] = np.nan  # as a normalised average of non-finite weights would be
    assert isinstance(solver.tree, CompiledTree)
    policy = Policy.from_strategy(solver.tree, strategy, algorithm="cfr", parameters={}, iterations=3)
    with pytest.raises(InputError, match="the cfr policy holds probabilities that are not finite; nothing was saved"):
        policy.save(tmp_path / "p.json")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sampling", ["none", "external"])
def test_the_state_is_copies_or_read_only_views_of_what_the_solver_holds(sampling: str) -> None:
    """``state()`` is a checkpoint's copies; ``state(copy=False)``, what checks and checkpoints read of a state of
    gigabytes, is read-only views that follow the solver's next iteration."""
    solver = make_solver(tree("openspiel:kuhn_poker"), "dcfr", sampling=sampling, rng=np.random.default_rng(0))
    solver.run(3)
    copies, views = solver.state(), solver.state(copy=False)
    assert copies.keys() == views.keys()
    for name, view in views.items():
        assert np.array_equal(copies[name], view) and not view.flags.writeable, name
        with pytest.raises(ValueError):
            view[...] = 0
    solver.run(1)
    regret = solver.state()["regret"]
    assert np.array_equal(views["regret"], regret) and not np.array_equal(copies["regret"], regret)


def test_averages_normalised_a_chunk_of_rows_at_a_time_are_the_whole_tables() -> None:
    """:func:`normalise` by chunks of rows gives the one-shot division bit for bit, the uniform row where nothing
    was accumulated."""
    compiled = tree("openspiel:leduc_poker")
    rng = np.random.default_rng(1)
    weights = rng.random(compiled.action_mask.shape) * compiled.action_mask
    weights[rng.random(len(weights)) < 0.3] = 0.0
    totals = weights.sum(axis=1, keepdims=True)
    whole = np.divide(weights, totals, out=compiled.uniform_strategy(), where=totals > 0)
    for chunk in (1, 7, 100, len(weights)):
        assert normalise(weights, compiled, chunk).tobytes() == whole.tobytes()


@pytest.mark.parametrize("sampling", ["none", "external"])
def test_a_checkpoint_taken_gives_its_arrays_to_the_solver(tmp_path: Path, sampling: str) -> None:
    """``solver(take=True)``, as ``train --resume`` reads a checkpoint of an abstraction: the run goes on as from
    copies; a sampled solver keeps the loaded tables as its own, not a second copy; the checkpoint holds none."""
    t = tree("openspiel:leduc_poker")
    first = make_solver(t, "dcfr", sampling=sampling, rng=np.random.default_rng(3))
    first.run(50)
    save_checkpoint(tmp_path / "c.npz", first, seed=3)
    copied = load_checkpoint(tmp_path / "c.npz").solver(t)
    saved = load_checkpoint(tmp_path / "c.npz")
    regret = saved.arrays["regret"]
    taken = saved.solver(t, take=True)
    assert saved.arrays == {}
    assert np.shares_memory(taken.state(copy=False)["regret"], regret) == (sampling != "none")
    copied.run(50)
    taken.run(50)
    assert np.array_equal(taken.average_strategy(), copied.average_strategy())
    assert np.array_equal(taken.current_strategy(), copied.current_strategy())
