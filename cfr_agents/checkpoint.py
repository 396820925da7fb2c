"""Checkpoints: a solver's whole state, to resume a run bit for bit. No pickle.

A checkpoint is a NumPy ``.npz`` archive (a zip of ``.npy`` arrays, read with
``allow_pickle=False``) holding the solver's state arrays and one more, ``header``: the UTF-8 bytes
of a JSON object::

    {"format": "cfr-agents-checkpoint", "format_version": 2,
     "game": "openspiel:leduc_poker", "rules_fingerprint": "sha256:...",
     "algorithm": "dcfr", "rule": {"alpha": 1.5, "beta": 0.0, "gamma": 2.0, "predictive": false},
     "sampling": "external", "averaging": "simple", "epsilon": null, "chance_draws": "independent",
     "seed": 0, "iteration": 12000,
     "arrays": ["regret", "cumulative", ...]}

A rule with a hyperparameter schedule (``hs-pcfr+``) also has ``"gamma_change"`` and ``"horizon"``;
where they are absent (no schedule, or a file written before schedules existed) they are 0 and 1000.

Full-tree solvers save ``regret``, ``cumulative``, ``sigma``, ``reach`` and ``scalars``
(iteration, average-weight scale); sampled solvers save ``regret``, ``cumulative``, ``log_at``,
``weight_at``, ``scalars``, ``rng`` (the xoshiro256** state) and ``shift`` (the stratified chance
sequence's shifts), see
:mod:`cfr_agents.solvers.sampling.kernel_support`.
"""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.npyio import NpzFile

from adapters.inputs import InputError
from cfr_agents.files import replacing
from cfr_agents.solvers import ALGORITHMS, SCHEMES, SampledSolver, Solver, UpdateRule, make_solver
from cfr_agents.solvers.update_rule import DEFAULT_HORIZON
from cfr_agents.tree import CompiledTree

FORMAT = "cfr-agents-checkpoint"
FORMAT_VERSION = 2
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
"""How a ``.npz`` archive (a zip file, possibly empty) begins."""


class CheckpointError(InputError):
    """A checkpoint that is missing, corrupt, or for another game, algorithm or scheme."""


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint read back: what it was made by, and the state arrays."""

    game_id: str
    rules_fingerprint: str
    algorithm: str
    rule: UpdateRule
    sampling: str
    averaging: str | None
    epsilon: float | None
    chance_draws: str | None
    seed: int
    iteration: int
    arrays: dict[str, np.ndarray]

    def check(self, **given: object) -> None:
        """Refuse a run that asks for another ``game``, ``algorithm`` or ``sampling`` than this one's."""
        for name, value in given.items():
            mine = getattr(self, "game_id" if name == "game" else name)
            if value is not None and value != mine:
                raise CheckpointError(f"the checkpoint is for {name} {mine!r}, not {value!r}")

    def solver(self, tree: CompiledTree) -> Solver:
        """A solver in exactly the saved state, on ``tree`` (which must be the checkpoint's game and rules)."""
        if (tree.game_id, tree.rules_fingerprint) != (self.game_id, self.rules_fingerprint):
            raise CheckpointError(
                f"the checkpoint is for {self.game_id} with rules {self.rules_fingerprint}, "
                f"not {tree.game_id} with rules {tree.rules_fingerprint}"
            )
        try:
            solver = make_solver(
                tree,
                self.algorithm,
                self.rule,
                sampling=self.sampling,
                rng=np.random.default_rng(self.seed),
                averaging=self.averaging,
                epsilon=self.epsilon,
                chance_draws=self.chance_draws,
            )
        except InputError as error:
            raise CheckpointError(f"the checkpoint's solver settings do not combine: {error}") from None
        expected = solver.state()
        if set(self.arrays) != set(expected):
            raise CheckpointError(f"the checkpoint holds arrays {sorted(self.arrays)}, expected {sorted(expected)}")
        for name, array in self.arrays.items():
            if array.shape != expected[name].shape or array.dtype != expected[name].dtype:
                raise CheckpointError(
                    f"checkpoint array {name!r} is {array.dtype}{list(array.shape)}, "
                    f"expected {expected[name].dtype}{list(expected[name].shape)}"
                )
        solver.restore(self.arrays)
        return solver


def save_checkpoint(path: str | os.PathLike[str], solver: Solver, seed: int) -> None:
    """Write ``solver``'s whole state to ``path`` atomically."""
    state = solver.state()
    scheme = (
        (solver.scheme.name, solver.averaging, solver.epsilon, solver.chance_draws)
        if isinstance(solver, SampledSolver)
        else None
    )
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": solver.tree.game_id,
        "rules_fingerprint": solver.tree.rules_fingerprint,
        "algorithm": solver.algorithm,
        "rule": solver.rule.parameters(),
        "sampling": scheme[0] if scheme else "none",
        "averaging": scheme[1] if scheme else None,
        "epsilon": scheme[2] if scheme else None,
        "chance_draws": scheme[3] if scheme else None,
        "seed": seed,
        "iteration": solver.iteration,
        "arrays": sorted(state),
    }
    buffer = io.BytesIO()
    np.savez(buffer, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **state)
    with replacing(path) as temporary, temporary.open("wb") as handle:
        handle.write(buffer.getvalue())
        handle.flush()
        os.fsync(handle.fileno())


def load_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a checkpoint; a missing, corrupt or foreign file is a one-line :class:`CheckpointError`."""
    source = str(Path(path))

    def unreadable(reason: object) -> CheckpointError:
        return CheckpointError(f"checkpoint {source!r} is not a readable .npz archive ({reason})")

    try:
        with open(source, "rb") as handle:
            magic = handle.read(len(ZIP_MAGIC[0]))
        if magic not in ZIP_MAGIC:  # np.load would take the file for a pickle (or a lone .npy array)
            raise unreadable("not a zip file")
        with np.load(source, allow_pickle=False) as archive:
            arrays = {name: _member(archive, name, unreadable) for name in archive.files}
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {source!r} does not exist") from None
    except (OSError, EOFError, zipfile.BadZipFile, KeyError) as error:
        raise unreadable(error) from None
    return _from_arrays(arrays, source)


def _member(archive: NpzFile, name: str, unreadable: Callable[[str], CheckpointError]) -> np.ndarray:
    """Member ``name`` of an open ``.npz`` archive, which must be a ``.npy`` array of plain values."""
    try:
        array = archive[name]
    except ValueError:  # an object array, which only pickle could load, or a damaged .npy header
        array = None
    if not isinstance(array, np.ndarray):  # NumPy hands back a member that is not .npy as bytes
        raise unreadable(f"member {name!r} is not a NumPy array of plain values")
    return array


def _from_arrays(arrays: dict[str, np.ndarray], source: str) -> Checkpoint:
    def fail(problem: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {source!r} {problem}")

    raw = arrays.pop("header", None)
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise fail(f"has no {FORMAT} header")
    try:
        header: Any = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise fail("has a header that is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise fail(f"is not a {FORMAT} file")
    if header.get("format_version") != FORMAT_VERSION:
        raise fail(f"has format_version {header.get('format_version')!r}; this version reads {FORMAT_VERSION}")
    expected = {
        "game": str,
        "rules_fingerprint": str,
        "algorithm": str,
        "rule": dict,
        "sampling": str,
        "seed": int,
        "iteration": int,
        "arrays": list,
    }
    for name, kind in expected.items():
        if not isinstance(header.get(name), kind) or (isinstance(header.get(name), bool) and kind is int):
            raise fail(f"has no valid {name!r} field")
    if header["seed"] < 0 or header["iteration"] < 0:
        raise fail("has a negative seed or iteration")
    if not all(isinstance(name, str) for name in header["arrays"]):
        raise fail("has no valid 'arrays' field")
    if header["algorithm"] not in ALGORITHMS:
        raise fail(f"names unknown algorithm {header['algorithm']!r}")
    if header["sampling"] != "none" and header["sampling"] not in SCHEMES:
        raise fail(f"names unknown sampling scheme {header['sampling']!r}")
    if sorted(arrays) != sorted(header["arrays"]):
        raise fail(f"holds arrays {sorted(arrays)}, but its header lists {header['arrays']}")
    return Checkpoint(
        game_id=header["game"],
        rules_fingerprint=header["rules_fingerprint"],
        algorithm=header["algorithm"],
        rule=_rule(header["rule"], fail),
        sampling=header["sampling"],
        averaging=_optional(header, "averaging", str, fail),
        epsilon=_optional(header, "epsilon", float, fail),
        chance_draws=_optional(header, "chance_draws", str, fail),
        seed=header["seed"],
        iteration=header["iteration"],
        arrays=arrays,
    )


def _rule(data: dict[str, Any], fail: Any) -> UpdateRule:
    try:
        numbers = {name: float(data[name]) for name in ("alpha", "beta", "gamma")}
        predictive = data["predictive"]
        discount_first = data.get("discount_first", False)  # absent before DCFR+ joined
        gamma_change = float(data.get("gamma_change", 0.0))  # absent without a schedule (and before HS-PCFR+)
        horizon = data.get("horizon", DEFAULT_HORIZON)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise fail("has no valid 'rule' field") from None
    flags = (predictive, discount_first)
    if (
        not all(isinstance(flag, bool) for flag in flags)
        or any(math.isnan(v) for v in numbers.values())
        or math.isnan(gamma_change)
        or isinstance(horizon, bool)
        or not isinstance(horizon, int)
    ):
        raise fail("has no valid 'rule' field")
    try:
        return UpdateRule(
            **numbers, predictive=predictive, discount_first=discount_first, gamma_change=gamma_change, horizon=horizon
        )
    except InputError as error:
        raise fail(f"has an invalid rule: {error}") from None


def _optional(header: dict[str, Any], name: str, kind: type, fail: Any) -> Any:
    value = header.get(name)
    if value is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind):
        raise fail(f"has no valid {name!r} field")
    return value
