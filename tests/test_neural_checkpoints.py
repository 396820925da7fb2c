"""Neural CFR through ``train``'s one loop: ``--checkpoint``, ``--resume`` and ``--time-limit`` give, on one machine,
the model an uninterrupted run gives, byte for byte; checkpoints for another game, algorithm or settings, or
declaring more than they hold, are refused in one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cfr_agents.checkpoint import NeuralCheckpoint, read_checkpoint
from tests.support import CliRun, run_cli

pytest.importorskip("torch")

KUHN = "openspiel:kuhn_poker"
TINY = ["--traversals", "20", "--advantage-batches", "3", "--advantage-batch-size", "32", "--hidden", "8"]
"""Neural settings of a few milliseconds an iteration on Kuhn."""
DEEP = ["--average-batches", "3", "--average-batch-size", "32"]
TIMES = ("training_seconds",)
"""The sidecar fields that differ between two runs of one model: times."""


def train(folder: Path, *argv: str) -> CliRun:
    result = run_cli(["train", "--quiet", *argv])
    assert result.status == 0, result.err
    return result


def fresh(algorithm: str, *more: str) -> list[str]:
    """``train`` options of a new tiny run of ``algorithm`` on Kuhn."""
    return ["--game", KUHN, "--algo", algorithm, *TINY, *(DEEP if algorithm == "deep-cfr" else []), *more]


def same_model(folder: Path, one: str, other: str) -> None:
    """The two models' weights are the same bytes and their sidecars agree but for times and the weights' name."""
    assert (folder / f"{one}.safetensors").read_bytes() == (folder / f"{other}.safetensors").read_bytes()
    mine, theirs = (json.loads((folder / f"{name}.json").read_text()) for name in (one, other))
    for data in (mine, theirs):
        data.pop("weights")
        for name in TIMES:
            data.pop(name)
    assert mine == theirs


def same_checkpoint(one: Path, other: Path) -> None:
    mine, theirs = read_checkpoint(one), read_checkpoint(other)
    assert mine.iteration == theirs.iteration and sorted(mine.arrays) == sorted(theirs.arrays)
    for name, array in mine.arrays.items():
        assert array.dtype == theirs.arrays[name].dtype and np.array_equal(array, theirs.arrays[name]), name


@pytest.mark.parametrize("algorithm", ["sd-cfr", "deep-cfr"])
def test_a_resumed_run_gives_the_uninterrupted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, algorithm: str
) -> None:
    monkeypatch.chdir(tmp_path)
    train(tmp_path, *fresh(algorithm, "--iterations", "3", "--checkpoint", "c.npz", "--out", "part.json"))
    saved = read_checkpoint("c.npz")
    assert isinstance(saved, NeuralCheckpoint) and saved.iteration == 3 and saved.algorithm == algorithm
    resumed = train(tmp_path, "--resume", "c.npz", "--iterations", "7", "--out", "resumed.json", "--json")
    report = json.loads(resumed.out)
    assert (report["resumed_from"], report["iterations"], report["iterations_run"]) == (3, 7, 4)
    train(tmp_path, *fresh(algorithm, "--iterations", "7", "--checkpoint", "whole.npz", "--out", "whole.json"))
    same_model(tmp_path, "resumed", "whole")
    same_checkpoint(tmp_path / "c.npz", tmp_path / "whole.npz")  # the resumed run kept checkpointing into c.npz


@pytest.mark.parametrize("algorithm", ["sd-cfr", "deep-cfr"])
def test_a_run_stopped_by_its_time_limit_resumes_to_the_uninterrupted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, algorithm: str
) -> None:
    monkeypatch.chdir(tmp_path)
    stopped = train(tmp_path, *fresh(algorithm, "--time-limit", "0.2", "--checkpoint", "c.npz", "--out", "part.json"))
    assert "stopped by time_limit" in stopped.out
    reached = read_checkpoint("c.npz").iteration
    assert reached >= 1
    total = str(reached + 2)
    train(tmp_path, "--resume", "c.npz", "--iterations", total, "--out", "resumed.json")
    train(tmp_path, *fresh(algorithm, "--iterations", total, "--out", "whole.json"))
    same_model(tmp_path, "resumed", "whole")


@pytest.mark.slow
def test_leduc_sd_cfr_stopped_after_a_minute_resumes_to_the_uninterrupted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``train --game openspiel:leduc_poker --algo sd-cfr --time-limit 60 --checkpoint c.npz``, then ``--resume``:
    the model of an uninterrupted run, with the papers' settings."""
    monkeypatch.chdir(tmp_path)
    leduc = ["--game", "openspiel:leduc_poker", "--algo", "sd-cfr"]
    train(tmp_path, *leduc, "--time-limit", "60", "--checkpoint", "c.npz", "--out", "part.json")
    total = str(read_checkpoint("c.npz").iteration + 2)
    train(tmp_path, "--resume", "c.npz", "--iterations", total, "--out", "resumed.json")
    train(tmp_path, *leduc, "--iterations", total, "--out", "whole.json")
    same_model(tmp_path, "resumed", "whole")


@pytest.fixture
def checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An SD-CFR checkpoint of Kuhn at iteration 2, in the working directory."""
    monkeypatch.chdir(tmp_path)
    train(tmp_path, *fresh("sd-cfr", "--iterations", "2", "--checkpoint", "c.npz", "--out", "m.json"))
    return tmp_path / "c.npz"


def refused(argv: list[str], message: str) -> None:
    result = run_cli(["train", "--quiet", *argv])
    assert result.status == 2 and result.out == "" and len(result.err.splitlines()) == 1, result
    assert message in result.err and "Traceback" not in result.err, result.err
    assert not Path("p.json").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--game", "openspiel:leduc_poker"], "the checkpoint is for game 'openspiel:kuhn_poker'"),
        (["--algo", "deep-cfr"], "the checkpoint is for algorithm 'sd-cfr', not 'deep-cfr'"),
        (["--algo", "cfr"], "the checkpoint is for algorithm 'sd-cfr', not 'cfr'"),
        (["--seed", "4"], "the checkpoint is for seed 0, not 4"),
        (["--traversals", "21"], "the checkpoint was trained with --traversals 20, not 21"),
        (["--hidden", "8,8"], "the checkpoint was trained with --hidden 8, not 8,8"),
        (["--preset", "fast"], "the checkpoint was trained with --preset paper, not 'fast'"),
        (["--iterations", "2"], "the checkpoint is already at iteration 2"),
        (["--sampling", "external"], "--sampling applies to the tabular solvers, not --algo sd-cfr"),
        (["--kept-networks", "1", "--strategy-memory", "5"], "--strategy-memory applies to --algo deep-cfr only"),
        (["--value-scale", "2"], "the checkpoint was trained with --value-scale 1.0, not 2.0"),
    ],
)
def test_resuming_with_other_settings_is_refused(checkpoint: Path, extra: list[str], message: str) -> None:
    refused(["--resume", "c.npz", "--iterations", "4", "--out", "p.json", *extra], message)
    assert read_checkpoint(checkpoint).iteration == 2


@pytest.mark.parametrize(("setting", "default"), [("inputs", "cards"), ("value_scale", 1.0), ("traversal", "external")])
def test_a_checkpoint_written_before_a_setting_resumes_with_its_default(
    checkpoint: Path, setting: str, default: object
) -> None:
    """Settings added later (``inputs``, ``value_scale``, ``traversal``) take their default in a checkpoint that
    lacks them: the run resumes to the model of the checkpoint as written."""
    older = checkpoint.with_name("older.npz")
    older.write_bytes(checkpoint.read_bytes())
    header = json.loads(arrays_of(older)["header"].tobytes())
    assert header["settings"].pop(setting) == default
    resume_changed(older, {"settings": header["settings"]})
    train(checkpoint.parent, "--resume", "c.npz", "--iterations", "3", "--out", "as_written.json")
    train(checkpoint.parent, "--resume", "older.npz", "--iterations", "3", "--out", "older.json")
    same_model(checkpoint.parent, "as_written", "older")


def resume_changed(path: Path, header: dict[str, Any] | None = None, **arrays: np.ndarray) -> None:
    """Rewrite the checkpoint with ``header`` fields and ``arrays`` changed."""
    with np.load(path) as archive:
        content = {name: archive[name] for name in archive.files}
    saved = json.loads(content["header"].tobytes())
    saved.update(header or {})
    content.update(arrays)
    saved["arrays"] = sorted(set(content) - {"header"})
    content["header"] = np.frombuffer(json.dumps(saved).encode(), dtype=np.uint8)
    np.savez(path, **content)


def arrays_of(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"header": {"kind": "quantum"}}, "is of kind 'quantum'"),
        ({"header": {"algorithm": "dream"}}, "names unknown neural algorithm 'dream'"),
        ({"header": {"preset": "huge"}}, "names unknown preset 'huge'"),
        ({"header": {"settings": {"traversals": 20}}}, "has no valid setting 'hidden'"),
        ({"header": {"rules_fingerprint": "sha256:0"}}, "with rules sha256:0"),
        ({"settings": {"advantage_memory": 10**9}}, "advantage_memory must be at most 100,000,000"),
        ({"settings": {"hidden": [4096] * 40}}, "hidden has 40 layers; at most 16"),
        ({"settings": {"hidden": [16]}}, "'value0.0.weight' is float32[8, 11], expected float32[16, 11]"),
        ({"settings": {"inputs": "pixels"}}, "inputs must be one of cards, strength"),
        ({"settings": {"traversal": "outcome"}}, "traversal must be one of external, public-chance"),
        ({"settings": {"inputs": 1}}, "has no valid setting 'inputs'"),
        ({"settings": {"value_scale": 0}}, "value_scale must be in [0.001, 1e9], got 0.0"),
        ({"arrays": {"advantage0.infoset": "out of range"}}, "names infosets the tree does not have"),
        ({"arrays": {"advantage0.iteration": "ahead"}}, "names iterations not yet run"),
        ({"arrays": {"current": "nan"}}, "array 'current' holds values that are not finite"),
        ({"arrays": {"counters": "short"}}, "array 'counters' is int64[6], expected int64[7]"),
        ({"arrays": {"stream": "zero"}}, "the xoshiro256** state of all zeros"),
        ({"arrays": {"kept.value0.9.0.weight": "ahead"}}, "is not a network of iterations 1 to 2"),
        ({"arrays": {"extra": "x"}}, "holds arrays this solver does not have: extra"),
    ],
)
def test_a_checkpoint_that_does_not_fit_its_solver_is_refused(
    checkpoint: Path, change: dict[str, Any], message: str
) -> None:
    """Each field and array a neural checkpoint declares is checked against the game, the settings and
    :data:`~cfr_agents.solvers.neural.LIMITS` before it is used."""
    arrays = arrays_of(checkpoint)
    header = dict(change.get("header", {}))
    if "settings" in change:
        header["settings"] = {**json.loads(arrays["header"].tobytes())["settings"], **change["settings"]}
    broken: dict[str, np.ndarray] = {}
    for name, how in change.get("arrays", {}).items():
        if how == "out of range":
            broken[name] = arrays[name] + np.int32(12)
        elif how == "ahead":
            broken[name] = arrays.get(name, arrays["value0.0.weight"]) + (np.int32(5) if name in arrays else 0)
        elif how == "nan":
            broken[name] = np.where(arrays[name] > -1, np.nan, 0.0)
        elif how == "short":
            broken[name] = arrays[name][:-1]
        elif how == "zero":
            broken[name] = np.zeros_like(arrays[name])
        else:
            broken[name] = np.zeros(1)
    resume_changed(checkpoint, header, **broken)
    refused(["--resume", "c.npz", "--iterations", "4", "--out", "p.json"], message)


def test_ctrl_c_checkpoints_a_neural_run_that_resumes(tmp_path: Path) -> None:
    """Ctrl-C during a neural run writes the checkpoint at the end of the current iteration; it resumes."""
    import signal
    import subprocess
    import time

    from tests.support import start_interruptible

    command = [sys.executable, "-m", "cfr_agents", "train", "--quiet", *fresh("sd-cfr", "--iterations", "100000")]
    command += ["--out", "p.json", "--checkpoint", "c.npz", "--checkpoint-every", "0.2"]
    process = start_interruptible(command, cwd=tmp_path, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not (tmp_path / "c.npz").exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130 and stderr.strip().splitlines() == ["cfr-agents: interrupted; checkpoint written"]
    reached = read_checkpoint(tmp_path / "c.npz").iteration
    resumed = run_cli(
        [
            "train",
            "--quiet",
            "--resume",
            str(tmp_path / "c.npz"),
            "--iterations",
            str(reached + 1),
            "--out",
            str(tmp_path / "p.json"),
        ]
    )
    assert resumed.status == 0, resumed.err


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    """The arrays of a valid SD-CFR checkpoint of Kuhn, header included."""
    folder = tmp_path_factory.mktemp("valid-neural")
    argv = fresh("sd-cfr", "--iterations", "2", "--checkpoint", str(folder / "c.npz"), "--out", str(folder / "m.json"))
    assert run_cli(["train", "--quiet", *argv]).status == 0
    return arrays_of(folder / "c.npz")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_mutated_neural_checkpoints_load_or_are_refused_in_one_line(
    tmp_path: Path, valid: dict[str, np.ndarray], data: st.DataObject
) -> None:
    """A header field or a setting set to any JSON value, or an array replaced by one of another shape or dtype:
    the checkpoint gives a solver in a state that runs, or is refused with one line, never a traceback."""
    from adapters.inputs import InputError
    from tests.strategies import json_values
    from tests.support import tree

    header = json.loads(valid["header"].tobytes())
    arrays: dict[str, Any] = dict(valid)
    if data.draw(st.booleans()):
        header["settings"][data.draw(st.sampled_from(sorted(header["settings"])))] = data.draw(json_values)
    else:
        header[data.draw(st.sampled_from(sorted(header)))] = data.draw(json_values)
    if data.draw(st.booleans()):
        name = data.draw(st.sampled_from(sorted(set(valid) - {"header"})))
        shape = data.draw(st.lists(st.integers(0, 3), max_size=2))
        arrays[name] = np.zeros(shape, dtype=data.draw(st.sampled_from([np.float64, np.float32, np.int32, np.uint8])))
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    np.savez(tmp_path / "c.npz", **arrays)
    try:
        saved = read_checkpoint(tmp_path / "c.npz")
        solver = saved.solver(tree(saved.game_id))
    except InputError as error:
        assert "\n" not in str(error)
        return
    solver.run(1)
