"""Checkpoints: a solver's whole state, to resume a run bit for bit. No pickle.

A checkpoint is a NumPy ``.npz`` archive (a zip of uncompressed ``.npy`` arrays of plain values, never
objects) holding the solver's state arrays and one more, ``header``: the UTF-8 bytes of a JSON object. Its
``kind`` says which family of solver wrote it. A full-tree or sampled solver's (``"tabular"``)::

    {"format": "cfr-agents-checkpoint", "format_version": 2, "kind": "tabular",
     "game": "openspiel:leduc_poker", "rules_fingerprint": "sha256:...",
     "algorithm": "dcfr", "rule": {"alpha": 1.5, "beta": 0.0, "gamma": 2.0, "predictive": false},
     "sampling": "external", "averaging": "simple", "epsilon": null, "chance_draws": "independent",
     "seed": 0, "iteration": 12000,
     "arrays": ["regret", "cumulative", ...]}

A rule with a hyperparameter schedule (``hs-pcfr+``) also has ``"gamma_change"`` and ``"horizon"``;
where they are absent (no schedule, or a file written before schedules existed) they are 0 and 1000.
A header without ``kind`` is a tabular one (written before neural checkpoints existed).
A tabular header's ``engine`` is ``"tree"`` (the compiled tree; also when absent) or ``"public-tree"``: full-game
CFR on a hold'em game's public tree (:class:`~cfr_agents.public_tree.solver.PublicTreeSolver`), which saves
``regret``, ``cumulative``, ``sigma`` (arrays laid out as its strategies) and ``scalars``, or ``"abstraction"``:
a sampled solver on a limit hold'em game through a card abstraction
(:class:`~cfr_agents.abstract_game.AbstractGame`), whose header also names the abstraction's directory
(``abstraction``) and the digest of its tables (``abstraction_sha256``).
A sampled solver run in synchronous rounds (:class:`~cfr_agents.solvers.sampling.scale_out.ScaleOutSolver`) also
records its rounds' shape, ``batches`` (:math:`B`) and ``batch_iterations`` (:math:`M`), and its ``iteration`` counts
rounds; where they are absent, one process wrote the file.

Full-tree solvers save ``regret``, ``cumulative``, ``sigma``, ``reach`` and ``scalars``
(iteration, average-weight scale); sampled solvers save ``regret``, ``cumulative``, ``log_at``,
``weight_at``, ``scalars``, ``rng`` (the xoshiro256** state) and ``shift`` (the stratified chance
sequence's shifts), see :mod:`cfr_agents.solvers.sampling.kernel_support`.

A Deep CFR or SD-CFR solver's (``"neural"``) has ``algorithm`` (``deep-cfr`` or ``sd-cfr``), ``settings``
(every field of :class:`~cfr_agents.solvers.neural.NeuralSettings`) and ``preset`` (the name the settings
started from) in place of the rule and sampling fields, and saves the arrays of
:meth:`~cfr_agents.solvers.neural.NeuralSolver.state`: the networks' weights, Adam's moments and step
counts, the reservoirs' filled rows, SD-CFR's kept networks, the accumulated average, and the numpy,
xoshiro256** and torch generators' states.

What a file declares is bounded before it is believed: the file's size (:data:`adapters.inputs.MAX_CHECKPOINT_BYTES`),
each array's size against the bytes its member holds, and a neural checkpoint's reservoir capacities and
networks against :data:`~cfr_agents.solvers.neural.LIMITS`. A solver whose state holds a value that is not
finite is never saved.
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np

from adapters.inputs import MAX_CHECKPOINT_BYTES, InputError, npz_archive, open_regular, read_npy_member
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.files import replacing
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers import ALGORITHMS, ALL_SCHEMES, SampledSolver, Solver, UpdateRule, make_solver
from cfr_agents.solvers.neural import NEURAL, PRESETS, NeuralSettings, NeuralSolver, infoset_tensors
from cfr_agents.solvers.sampling.scale_out import Rounds, ScaleOutSolver
from cfr_agents.solvers.update_rule import DEFAULT_HORIZON
from cfr_agents.training import Trainable, not_finite
from cfr_agents.tree import CompiledTree

FORMAT = "cfr-agents-checkpoint"
FORMAT_VERSION = 2
KINDS = ("tabular", "neural")
ENGINES = ("tree", "public-tree", "abstraction")
"""What a tabular checkpoint's ``engine`` field may say (a header without one is ``"tree"``)."""
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
"""How a ``.npz`` archive (a zip file, possibly empty) begins."""


class CheckpointError(InputError):
    """A checkpoint that is missing, corrupt, or for another game, algorithm or scheme."""


@dataclass(frozen=True)
class _Saved:
    """What every checkpoint holds: the game, the algorithm, the seed, the iteration and the state arrays."""

    game_id: str
    rules_fingerprint: str
    algorithm: str
    seed: int
    iteration: int
    arrays: dict[str, np.ndarray]

    def check(self, **given: object) -> None:
        """Refuse a run that asks for another ``game``, ``algorithm``, ``seed`` or other setting than this one's."""
        for name, value in given.items():
            mine = getattr(self, "game_id" if name == "game" else name)
            if value is not None and value != mine:
                raise CheckpointError(f"the checkpoint is for {name} {mine!r}, not {value!r}")

    def _check_tree(self, tree: CompiledTree | PublicTree | AbstractGame) -> None:
        if (tree.game_id, tree.rules_fingerprint) != (self.game_id, self.rules_fingerprint):
            raise CheckpointError(
                f"the checkpoint is for {self.game_id} with rules {self.rules_fingerprint}, "
                f"not {tree.game_id} with rules {tree.rules_fingerprint}"
            )


@dataclass(frozen=True)
class Checkpoint(_Saved):
    """A full-tree or sampled solver's checkpoint read back (``kind`` ``"tabular"``)."""

    rule: UpdateRule
    sampling: str
    averaging: str | None
    epsilon: float | None
    chance_draws: str | None
    engine: str = "tree"
    """``"tree"``: a solver on the compiled tree; ``"public-tree"``: full-game CFR on a hold'em game's public tree;
    ``"abstraction"``: a sampled solver on an abstract game."""
    abstraction: str | None = None
    """The abstraction's directory (``"abstraction"`` engine)."""
    abstraction_sha256: str | None = None
    rounds: Rounds | None = None
    """The shape of a scale-out run's rounds; ``None`` for a run in one process."""

    def abstract_game(self, path: str | os.PathLike[str] | None = None) -> AbstractGame:
        """The abstract game of the abstraction in ``path`` (by default the directory the checkpoint names), which
        must be the one the checkpoint was trained on."""
        if self.engine != "abstraction" or self.abstraction is None:
            raise CheckpointError(f"the checkpoint was not written by a solver on an abstraction of {self.game_id}")
        game = AbstractGame.load(self.abstraction if path is None else path, self.game_id)
        if game.abstraction_sha256 != self.abstraction_sha256:
            raise CheckpointError(
                f"the checkpoint was trained on the abstraction {self.abstraction_sha256}; {str(game.source)!r} is "
                f"another ({game.abstraction_sha256})"
            )
        return game

    def solver(self, tree: CompiledTree | AbstractGame, *, take: bool = False) -> Solver:
        """A solver in exactly the saved state, on ``tree`` (which must be the checkpoint's game and rules, and for
        an abstract game the checkpoint's abstraction). With ``take`` the checkpoint gives its arrays to the solver
        and holds none afterwards: a sampled solver keeps them as its own, so that a resumed run of gigabytes holds
        its tables once."""
        self._check_tree(tree)
        if isinstance(tree, AbstractGame) and tree.abstraction_sha256 != self.abstraction_sha256:
            raise CheckpointError(f"the checkpoint was trained on another abstraction ({self.abstraction_sha256})")
        if self.engine != ("abstraction" if isinstance(tree, AbstractGame) else "tree"):
            where = {"public-tree": "full-game CFR on its public tree", "abstraction": "a solver on an abstraction"}
            written = where.get(self.engine, "a solver on its compiled tree")
            raise CheckpointError(f"the checkpoint of {self.game_id} was written by {written}")
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
        expected = solver.state(copy=False)
        if set(self.arrays) != set(expected):
            raise CheckpointError(f"the checkpoint holds arrays {sorted(self.arrays)}, expected {sorted(expected)}")
        for name, array in self.arrays.items():
            if array.shape != expected[name].shape or array.dtype != expected[name].dtype:
                raise CheckpointError(
                    f"checkpoint array {name!r} is {array.dtype}{list(array.shape)}, "
                    f"expected {expected[name].dtype}{list(expected[name].shape)}"
                )
        solver.restore(self.arrays, take=take)
        if take:
            self.arrays.clear()
        return solver

    def public_solver(self, tree: PublicTree) -> PublicTreeSolver:
        """Full-game CFR on ``tree`` (the checkpoint's game and rules) in exactly the saved state."""
        self._check_tree(tree)
        if self.engine != "public-tree":
            raise CheckpointError(f"the checkpoint was written by a solver on {self.game_id}'s compiled tree")
        solver = PublicTreeSolver(tree, self.rule, self.algorithm)
        try:
            solver.restore(self.arrays)
        except (InputError, KeyError) as error:
            raise CheckpointError(f"the checkpoint does not fit {tree.game_id}'s public tree: {error}") from None
        return solver


@dataclass(frozen=True)
class NeuralCheckpoint(_Saved):
    """A Deep CFR or SD-CFR solver's checkpoint read back (``kind`` ``"neural"``)."""

    settings: NeuralSettings
    preset: str

    def solver(self, tree: CompiledTree) -> NeuralSolver:
        """A solver in exactly the saved state, on ``tree`` (which must be the checkpoint's game and rules)."""
        self._check_tree(tree)
        solver = NEURAL[self.algorithm](
            tree, infoset_tensors(tree), self.algorithm, self.settings, np.random.default_rng(self.seed)
        )
        try:
            solver.restore(self.arrays)
        except InputError as error:
            raise CheckpointError(
                f"the checkpoint does not fit a {self.algorithm} solver of its settings: {error}"
            ) from None
        return solver


AnyCheckpoint: TypeAlias = Checkpoint | NeuralCheckpoint


def save_checkpoint(
    path: str | os.PathLike[str], solver: Trainable, seed: int, preset: str = next(iter(PRESETS))
) -> None:
    """Write ``solver``'s whole state to ``path`` atomically (``preset``: the name a neural solver's settings
    started from). A state holding a value that is not finite is refused, and nothing is written."""
    state = solver.state(copy=False)
    for name, array in state.items():
        if not_finite(name, array):
            raise CheckpointError(
                f"{solver.algorithm}: its {name!r} holds values that are not finite at iteration "
                f"{solver.iteration}; no checkpoint was written"
            )
    common = {"format": FORMAT, "format_version": FORMAT_VERSION}
    identity = {"game": solver.tree.game_id, "rules_fingerprint": solver.tree.rules_fingerprint}
    if isinstance(solver, NeuralSolver):
        settings: dict[str, Any] = {"settings": solver.settings.parameters(), "preset": preset}
        header = {**common, "kind": "neural", **identity, "algorithm": solver.algorithm, **settings}
    else:
        rounds = solver.rounds if isinstance(solver, ScaleOutSolver) else None
        if isinstance(solver, ScaleOutSolver):
            solver = solver.solver
        scheme = (
            (solver.scheme.name, solver.averaging, solver.epsilon, solver.chance_draws)
            if isinstance(solver, SampledSolver)
            else None
        )
        assert isinstance(solver, Solver | PublicTreeSolver)
        abstract = solver.tree if isinstance(solver.tree, AbstractGame) else None
        header = {
            **common,
            "kind": "tabular",
            "engine": "public-tree" if isinstance(solver, PublicTreeSolver) else "abstraction" if abstract else "tree",
            **identity,
            "algorithm": solver.algorithm,
            "rule": solver.rule.parameters(),
            "sampling": scheme[0] if scheme else "none",
            "averaging": scheme[1] if scheme else None,
            "epsilon": scheme[2] if scheme else None,
            "chance_draws": scheme[3] if scheme else None,
        }
        if abstract is not None:
            if abstract.source is None:
                raise CheckpointError("a solver on an abstraction that is not in a directory cannot be checkpointed")
            header |= {"abstraction": str(abstract.source), "abstraction_sha256": abstract.abstraction_sha256}
        if rounds is not None:
            header |= rounds.parameters()
    header |= {"seed": seed, "iteration": solver.iteration, "arrays": sorted(state)}
    arrays: dict[str, Any] = {"header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8), **state}
    with replacing(path) as temporary, temporary.open("wb") as handle:
        np.savez(handle, **arrays)
        handle.flush()
        os.fsync(handle.fileno())


def load_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Read a full-tree or sampled solver's checkpoint (:func:`read_checkpoint`; a neural one is refused)."""
    saved = read_checkpoint(path)
    if not isinstance(saved, Checkpoint):
        raise CheckpointError(
            f"checkpoint {os.fspath(path)!r} is {saved.algorithm}'s, not a full-tree or sampled solver's"
        )
    return saved


def read_checkpoint(path: str | os.PathLike[str]) -> AnyCheckpoint:
    """Read a checkpoint of any solver; a missing, corrupt, oversized or foreign file is a one-line
    :class:`CheckpointError`."""
    source = os.fspath(Path(path))

    def unreadable(reason: object) -> CheckpointError:
        return CheckpointError(f"checkpoint {source!r} is not a readable .npz archive ({reason})")

    with open_regular(path, "checkpoint", MAX_CHECKPOINT_BYTES, CheckpointError) as handle:
        try:
            if handle.read(len(ZIP_MAGIC[0])) not in ZIP_MAGIC:  # np.load would take it for a pickle or a .npy
                raise unreadable("not a zip file")
            handle.seek(0)
            with npz_archive(handle, unreadable) as (archive, members):
                arrays = {name: read_npy_member(archive, info, unreadable) for name, info in members.items()}
        except CheckpointError:
            raise
        except (OSError, EOFError, zipfile.BadZipFile, zipfile.LargeZipFile, KeyError, ValueError) as error:
            raise unreadable(error) from None
    return _from_arrays(arrays, source)


def _from_arrays(arrays: dict[str, np.ndarray], source: str) -> AnyCheckpoint:
    def fail(problem: str) -> CheckpointError:
        return CheckpointError(f"checkpoint {source!r} {problem}")

    raw = arrays.pop("header", None)
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise fail(f"has no {FORMAT} header")
    try:
        header: Any = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise fail("has a header that is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise fail(f"is not a {FORMAT} file")
    if header.get("format_version") != FORMAT_VERSION:
        raise fail(f"has format_version {header.get('format_version')!r}; this version reads {FORMAT_VERSION}")
    kind = header.get("kind", "tabular")
    if kind not in KINDS:
        raise fail(f"is of kind {kind!r}; this version reads {' and '.join(KINDS)}")
    expected = {"game": str, "rules_fingerprint": str, "algorithm": str, "seed": int, "iteration": int, "arrays": list}
    expected |= {"rule": dict, "sampling": str} if kind == "tabular" else {"settings": dict, "preset": str}
    for name, type_ in expected.items():
        if not isinstance(header.get(name), type_) or (isinstance(header.get(name), bool) and type_ is int):
            raise fail(f"has no valid {name!r} field")
    if header["seed"] < 0 or header["iteration"] < 0:
        raise fail("has a negative seed or iteration")
    if not all(isinstance(name, str) for name in header["arrays"]):
        raise fail("has no valid 'arrays' field")
    if sorted(arrays) != sorted(header["arrays"]):
        raise fail(f"holds arrays {sorted(arrays)[:8]}, but its header lists {sorted(header['arrays'])[:8]}")
    common = {
        "game_id": header["game"],
        "rules_fingerprint": header["rules_fingerprint"],
        "algorithm": header["algorithm"],
        "seed": header["seed"],
        "iteration": header["iteration"],
        "arrays": arrays,
    }
    if kind == "neural":
        if header["algorithm"] not in NEURAL:
            raise fail(f"names unknown neural algorithm {header['algorithm']!r}")
        if header["preset"] not in PRESETS:
            raise fail(f"names unknown preset {header['preset']!r}")
        return NeuralCheckpoint(**common, settings=_settings(header["settings"], fail), preset=header["preset"])
    if header["algorithm"] not in ALGORITHMS:
        raise fail(f"names unknown algorithm {header['algorithm']!r}")
    if header["sampling"] != "none" and header["sampling"] not in ALL_SCHEMES:
        raise fail(f"names unknown sampling scheme {header['sampling']!r}")
    engine = header.get("engine", "tree")
    samples = header["sampling"] != "none"
    if engine not in ENGINES or (engine == "public-tree" and samples) or (engine == "abstraction" and not samples):
        raise fail(f"names unknown engine {engine!r} (or one that does not sample as it would)")
    if engine == "abstraction" and not all(
        isinstance(header.get(k), str) for k in ("abstraction", "abstraction_sha256")
    ):
        raise fail("has no valid 'abstraction' and 'abstraction_sha256' fields")
    return Checkpoint(
        **common,
        rule=_rule(header["rule"], fail),
        sampling=header["sampling"],
        averaging=_optional(header, "averaging", str, fail),
        epsilon=_optional(header, "epsilon", float, fail),
        chance_draws=_optional(header, "chance_draws", str, fail),
        engine=engine,
        abstraction=header.get("abstraction") if engine == "abstraction" else None,
        abstraction_sha256=header.get("abstraction_sha256") if engine == "abstraction" else None,
        rounds=_rounds(header, samples, fail),
    )


def _rounds(header: dict[str, Any], samples: bool, fail: Callable[[str], CheckpointError]) -> Rounds | None:
    """A scale-out run's rounds (both fields, or neither), of a sampled solver only."""
    given = {name: header[name] for name in ("batches", "batch_iterations") if name in header}
    if not given:
        return None
    if len(given) != 2 or not samples:
        raise fail("has no valid 'batches' and 'batch_iterations' fields")
    try:
        return Rounds(**given)
    except InputError as error:
        raise fail(f"has invalid rounds: {error}") from None


_LATER_SETTINGS = ("inputs", "value_scale", "traversal")
"""Settings absent from the checkpoints written before they existed: such a checkpoint has their default."""


def _settings(data: dict[str, Any], fail: Callable[[str], CheckpointError]) -> NeuralSettings:
    """Every field of :class:`NeuralSettings`, each of its type, within its range and :data:`LIMITS`."""
    values: dict[str, Any] = {}
    for field in fields(NeuralSettings):
        default = getattr(NeuralSettings, field.name)
        value: Any = data.get(field.name, default if field.name in _LATER_SETTINGS else None)
        if isinstance(default, tuple):
            valid = isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            value = tuple(value) if valid else None
        elif isinstance(default, float):
            valid = isinstance(value, (int, float)) and not isinstance(value, bool)
        else:
            valid = isinstance(value, type(default)) and not isinstance(value, bool)
        if not valid:
            raise fail(f"has no valid setting {field.name!r}")
        values[field.name] = float(value) if isinstance(default, float) else value
    if set(data) - set(values):
        raise fail(f"has settings {sorted(set(data) - set(values))} that neural CFR does not have")
    settings = NeuralSettings(**values)
    try:
        settings.check()
    except InputError as error:
        raise fail(f"has invalid settings: {error}") from None
    return settings


def _rule(data: dict[str, Any], fail: Callable[[str], CheckpointError]) -> UpdateRule:
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


def _optional(header: dict[str, Any], name: str, kind: type, fail: Callable[[str], CheckpointError]) -> Any:
    value = header.get(name)
    if value is None:
        return None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind):
        raise fail(f"has no valid {name!r} field")
    return value
