"""Properties of the checkpoint loader: arbitrary bytes, arbitrary headers and mutated valid
archives either load a checkpoint that resumes into a solver of its game, or are refused with a
one-line :class:`CheckpointError` -- never a traceback, never pickle."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.inputs import InputError
from cfr_agents import make_solver
from cfr_agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from tests.strategies import json_values
from tests.support import tree

KUHN = "openspiel:kuhn_poker"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-checkpoints")


@pytest.fixture(scope="module", params=["none", "external"])
def valid(request: pytest.FixtureRequest, workdir: Path) -> dict[str, np.ndarray]:
    """The arrays of a valid checkpoint (full-tree or sampled), header included."""
    solver = make_solver(tree(KUHN), "dcfr", sampling=str(request.param), rng=np.random.default_rng(0))
    solver.run(5)
    path = workdir / f"valid-{request.param}.npz"
    save_checkpoint(path, solver, seed=0)
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files}


def load_or_refuse(path: Path) -> None:
    """Either a checkpoint that builds a solver in its saved state, or a one-line refusal."""
    try:
        checkpoint = load_checkpoint(path)
    except CheckpointError as error:
        assert "\n" not in str(error) and "checkpoint" in str(error)
        return
    try:
        solver = checkpoint.solver(tree(checkpoint.game_id))
    except InputError as error:  # the game cannot be loaded, or the checkpoint does not fit it
        assert "\n" not in str(error)
        return
    assert solver.iteration == int(solver.state()["scalars"][0])


def write(path: Path, arrays: dict[str, np.ndarray]) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, allow_pickle=False, **arrays)
    path.write_bytes(buffer.getvalue())


@given(content=st.binary(max_size=2000))
def test_arbitrary_bytes(workdir: Path, content: bytes) -> None:
    (workdir / "bytes.npz").write_bytes(content)
    load_or_refuse(workdir / "bytes.npz")


@given(content=st.binary(max_size=2000), name=st.sampled_from(["header.npy", "regret.npy", "x.npy"]))
def test_a_zip_of_arbitrary_members(workdir: Path, content: bytes, name: str) -> None:
    with zipfile.ZipFile(workdir / "zip.npz", "w") as archive:
        archive.writestr(name, content)
    load_or_refuse(workdir / "zip.npz")


@given(value=json_values)
def test_arbitrary_headers(workdir: Path, valid: dict[str, np.ndarray], value: object) -> None:
    header = np.frombuffer(json.dumps(value).encode(), dtype=np.uint8)
    write(workdir / "header.npz", {**valid, "header": header})
    load_or_refuse(workdir / "header.npz")


def header_of(valid: dict[str, np.ndarray]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(valid["header"].tobytes())
    return loaded


@given(data=st.data())
def test_mutated_headers_and_arrays(workdir: Path, valid: dict[str, np.ndarray], data: st.DataObject) -> None:
    header = header_of(valid)
    arrays = dict(valid)
    field = data.draw(st.sampled_from(sorted(header)))
    header[field] = data.draw(json_values)
    if data.draw(st.booleans()):
        name = data.draw(st.sampled_from(sorted(header_of(valid)["arrays"])))
        shape = data.draw(st.lists(st.integers(0, 4), max_size=3))
        dtype = data.draw(st.sampled_from([np.float64, np.int64, np.uint64, np.uint8]))
        arrays[name] = np.zeros(shape, dtype=dtype)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    write(workdir / "mutated.npz", arrays)
    load_or_refuse(workdir / "mutated.npz")
