"""Properties of ``cfr-agents`` under hostile input: one property test per class of input, so that each class
runs its own examples.

1. Model sidecars renamed, copied elsewhere, or with ``weights`` pointed anywhere, used as an agent while an
   output names the weights: status 0 or 2 (one line), no file read is written over, weights that are not the
   model's own never load.
2. Devices, a FIFO and a directory, directly and through symlinks, as every input argument of every command
   (taken from the parser): one line and status 2, within a time bound and a memory bound.
3. Tree-cache entries with edited bytes, indices, lengths or shapes: ``train`` and ``exploitability`` either
   give a fresh build's policy and NashConv (with one warning line when the entry is damaged) or refuse in one
   line; never another result.
4. Extreme numbers for every float option of every command (taken from the parser): a refusal in one line or
   a run; nothing written holds a number that is not finite.
5. JSON nested 1,000 to 200,000 deep, in every file a command reads JSON from, as the whole file or as one of
   its fields: one line, status 2, naming the file. Shallower nesting: one line or a run.

Commands run in this process (:func:`tests.support.run_cli`), under a timer: a command still running after its
bound (a read blocked on a FIFO, a loop that does not end) fails its example.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import shutil
import stat
import sys
import tempfile
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from numpy.typing import NDArray

from cfr_agents import Policy, tree_cache
from cfr_agents.cli.common import Within, real
from cfr_agents.cli.paths import path_actions
from cfr_agents.solvers.payoff_blocks import payoff_blocks
from cfr_agents.tree import loaded_tree
from eval.agents import infoset_states
from eval.opponents.registry import MODELS
from tests.support import CliRun, Overtime, run_cli, time_limit, tree
from tests.test_exploit_cli import learning_file
from tests.test_no_overwrite import COMMANDS

KUHN = "openspiel:kuhn_poker"
LEDUC = "openspiel:leduc_poker"
RLCARD_LEDUC = "rlcard:leduc-holdem"
SECONDS = 60.0
"""The longest any example's command may run (the slowest, Leduc NFSP's exact exploitability, takes about 2 s)."""
SPECIAL_SECONDS = 10.0
"""The longest a command may take to refuse a special file: it is refused by its type, never read."""
MAX_TRACED_BYTES = 64 * 2**20
"""The most memory a command that refuses a special file may allocate (``/dev/zero`` read on would take it all)."""


def assert_refused(result: CliRun) -> None:
    lines = result.err.splitlines()
    assert result.status == 2 and len(lines) == 1 and lines[0].startswith("cfr-agents: error: "), result


def run(argv: Sequence[str], cwd: Path, seconds: float = SECONDS) -> CliRun:
    """``cfr-agents argv`` in the directory ``cwd``, which must end within ``seconds`` with status 0 or 2 (one
    ``cfr-agents: error:`` line), and no traceback."""
    try:
        with contextlib.chdir(cwd), time_limit(seconds):
            result = run_cli(argv)
    except Overtime:
        raise AssertionError(f"cfr-agents {' '.join(argv)} still running after {seconds:g} s") from None
    assert "Traceback" not in result.err, result.err
    assert result.status in (0, 2), result
    if result.status == 2:
        assert_refused(result)
    return result


def clear_tree_caches() -> None:
    """Forget the trees and payoff blocks this process holds, so the next command reads the tree cache
    as a command started afresh does."""
    loaded_tree.cache_clear()
    payoff_blocks.cache_clear()
    infoset_states.cache_clear()


def digest_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def regular_files(root: Path) -> dict[Path, str]:
    """The digest of every regular file under ``root`` (symlinks not followed)."""
    return {path: digest_of(path) for path in root.rglob("*") if stat.S_ISREG(path.lstat().st_mode)}


@pytest.fixture(scope="session")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory of valid inputs -- ``kuhn.json`` (a policy), ``log.jsonl`` (a hand log), ``curve.csv``,
    ``k.npz`` (a checkpoint), ``frontier.json``, ``learning.json``, ``abstraction`` (a card abstraction's
    directory) -- and the special files of :data:`SPECIAL`."""
    folder = tmp_path_factory.mktemp("inputs")
    Policy.uniform(tree(KUHN)).save(folder / "kuhn.json")
    train = ["train", "--game", KUHN, "--algo", "dcfr", "--iterations", "20", "--quiet", "--out", "p.json"]
    steps = [
        [*train, "--curve", "curve.csv", "--checkpoint", "k.npz"],
        ["match", "kuhn.json", "random", "--game", KUHN, "--hands", "20", "--quiet", "--log", "log.jsonl"],
        ["exploit", "random", "--game", KUHN, "--frontier", "--points", "3", "--no-lp", "--quiet", "--out", "fr"],
        ["abstraction", "build", "--game", "holdem-6", "--quiet", "--out", "abstraction"],
    ]
    for argv in steps:
        assert run(argv, folder).status == 0
    shutil.copy(folder / "fr" / "frontier.json", folder)
    learning_file(folder / "learning.json", ("random",))
    os.mkfifo(folder / "pipe")
    (folder / "folder").mkdir()
    return folder


# --- 1. renamed and re-pointed sidecars --------------------------------------------------------------------

NFSP = "openspiel-nfsp_leduc_poker"
MODEL_GAMES = {"sd-cfr": KUHN, "deep-cfr": KUHN, NFSP: LEDUC}
"""The models: the two neural ones trained by :func:`models`, and a shipped NFSP pair."""


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An SD-CFR and a Deep CFR model of Kuhn poker trained for 2 iterations of 100 traversals and 2 SGD steps a
    network (the preset's networks, not its thousands of steps), and a shipped NFSP model of Leduc: each a sidecar
    ``<model>.json`` and the weights it names."""
    folder = tmp_path_factory.mktemp("models")
    brief = ["--preset", "fast", "--iterations", "2", "--traversals", "100", "--advantage-batches", "2", "--quiet"]
    for algorithm, extra in (("sd-cfr", []), ("deep-cfr", ["--average-batches", "2"])):
        argv = ["train", "--game", KUHN, "--algo", algorithm, *brief, *extra, "--out", f"{algorithm}.json"]
        assert run(argv, folder).status == 0
    for suffix in (".json", ".safetensors"):
        shutil.copy(MODELS / f"{NFSP}{suffix}", folder / f"{NFSP}{suffix}")
    return folder


def special_entries(folder: Path) -> None:
    """What a sidecar's ``weights`` may name in ``folder`` that is no weights file."""
    (folder / "sub").mkdir()
    os.mkfifo(folder / "pipe")
    (folder / "zero").symlink_to("/dev/zero")


def model_commands(sidecar: str, game: str, target: str) -> list[list[str]]:
    """Every command that takes the model as an agent, each writing ``target`` where it writes."""
    return [
        ["exploitability", sidecar],
        ["best-response", sidecar, "--out", target],
        ["match", sidecar, "random", "--game", game, "--hands", "4", "--quiet", "--log", target],
        ["tournament", sidecar, "random", "--game", game, "--hands", "4", "--workers", "1", "--quiet", "--out", target],
        ["exploit", sidecar, "--game", game, "--p", "0.5", "--precision", "0.05", "--quiet", "--out", target],
        ["plot", "strategy", sidecar, "--line", "pass", "--out", target],
    ]


def plain_name(name: object) -> bool:
    """Whether a sidecar's ``weights`` names a file in the sidecar's own directory."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\0" not in name


def identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISREG(info.st_mode) else None


@given(data=st.data())
def test_renamed_and_repointed_sidecars(models: Path, data: st.DataObject) -> None:
    model = data.draw(st.sampled_from(sorted(MODEL_GAMES)), label="model")
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        home, away = root / "home", root / "away"
        shutil.copytree(models, home)
        away.mkdir()
        for folder in (home, away):
            special_entries(folder)
        document = json.loads((home / f"{model}.json").read_text())
        weights = home / document["weights"]
        others = sorted({json.loads(p.read_text())["weights"] for p in home.glob("*.json")} - {weights.name})

        place = data.draw(st.sampled_from(["renamed", "copied away", "away beside a symlink", "away beside a link"]))
        sidecar = (home if place == "renamed" else away) / "model.json"
        if place == "away beside a symlink":
            (away / weights.name).symlink_to(weights)
        elif place == "away beside a link":
            os.link(weights, away / weights.name)
        repointed = data.draw(
            st.just("<unchanged>")
            | st.sampled_from(
                [
                    str(weights),
                    f"../home/{weights.name}",
                    *others,
                    "nope.safetensors",
                    "sub",
                    "pipe",
                    "zero",
                    "/dev/zero",
                    "model.json",
                    "",
                    ".",
                    "..",
                ]
            )
            | st.sampled_from([None, 3, [weights.name], {"name": weights.name}]),
            label="weights",
        )
        if repointed != "<unchanged>":
            document["weights"] = repointed
        sidecar.write_text(json.dumps(document))
        if place == "renamed":
            (home / f"{model}.json").unlink()
        (root / "weights-link").symlink_to(weights)
        os.link(weights, root / "weights-hard-link")
        named = sidecar.parent / document["weights"] if plain_name(document["weights"]) else None
        target = data.draw(
            st.sampled_from(
                [weights, sidecar, root / "weights-link", root / "weights-hard-link", root / "new.out", root / "t"]
                + ([named] if named is not None else [])
            ),
            label="output",
        )
        argv = data.draw(st.sampled_from(model_commands(str(sidecar), MODEL_GAMES[model], str(target))))

        reads = {identity(path) for path in (sidecar, named) if path is not None} - {None}
        before = regular_files(root)
        result = run(argv, root)
        event(f"status {result.status}")
        after = regular_files(root)
        for path, digest in before.items():
            if identity(path) in reads:
                assert after.get(path) == digest, f"{path} was read and written over"
        if result.status == 0:
            assert named is not None and digest_of(named) == digest_of(models / weights.name), "other weights loaded"


# --- 2. special files as every input -----------------------------------------------------------------------

SPECIAL = ("/dev/zero", "/dev/null", "/dev/urandom", "pipe", "folder")
"""Files that are not regular files: devices, a FIFO no one writes (opened to read, it would block), a directory
(the last two in :func:`inputs`)."""

INPUT_RUNS: dict[str, dict[str, list[str]]] = {
    "train": {
        "resume": ["k.npz"],
        "checkpoint": ["k2.npz"],
        "iterations": ["40"],
        "quiet": [],
        "out": ["p2.json"],
        "abstraction": ["abstraction"],
    },
    "exploitability": {"agent": ["kuhn.json"]},
    "opponents": {"game": [KUHN], "table": ["random"]},
    "best-response": {"agent": ["kuhn.json"], "out": ["br.json"]},
    "match": {
        "agent_a": ["kuhn.json"],
        "agent_b": ["random"],
        "agent_more": [],
        "game": [KUHN],
        "hands": ["4"],
        "quiet": [],
    },
    "tournament": {
        "agents": ["kuhn.json", "random"],
        "game": [KUHN],
        "hands": ["4"],
        "workers": ["1"],
        "quiet": [],
        "out": ["t"],
    },
    "exploit": {"opponent": ["random"], "game": [KUHN], "hands": ["log.jsonl"], "quiet": [], "out": ["x"]},
    "plot curves": {"files": ["curve.csv"], "out": ["c.png"]},
    "plot strategy": {"policy": ["kuhn.json"], "line": ["pass"], "out": ["s.png"]},
    "plot frontier": {"file": ["frontier.json"], "out": ["f.png"]},
    "plot learning": {"file": ["learning.json"], "out": ["l.png"]},
    "lbr": {"agent": ["kuhn.json"], "game": ["holdem-6"], "hands": ["0"]},
    "play": {"agent": ["kuhn.json"], "game": [KUHN], "hands": ["1"]},
    "report": {"agent": ["kuhn.json"], "vs": ["kuhn.json"], "out": ["r.html"]},
    "abstraction show": {"directory": ["abstraction"]},
}
"""For each command with inputs, a run on the valid files of :func:`inputs`: ``dest`` -> its values."""

INPUTS = sorted((name, action.dest) for name, parser in COMMANDS.items() for action in path_actions(parser, "input"))
"""Every input argument of every command: ``(command, dest)``."""


def argv_of(name: str, given: Mapping[str, list[str]]) -> list[str]:
    """``name``'s words, then each argument of ``given`` (its option, if it has one, and its values)."""
    argv = name.split()
    for action in COMMANDS[name]._actions:
        if action.dest in given:
            argv += [*action.option_strings[:1], *given[action.dest]]
    return argv


def test_every_input_is_fuzzed() -> None:
    assert {"train", "exploit", "plot learning"} <= {name for name, _ in INPUTS}
    assert all(dest in INPUT_RUNS.get(name, {}) for name, dest in INPUTS)


@contextlib.contextmanager
def traced_peak() -> Iterator[list[int]]:
    """The most memory Python and NumPy held at once within the block, in bytes (appended to the list yielded)."""
    tracemalloc.start()
    peak: list[int] = []
    try:
        yield peak
    finally:
        peak.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()


@given(data=st.data())
def test_special_files_as_every_input(inputs: Path, data: st.DataObject) -> None:
    name, dest = data.draw(st.sampled_from(INPUTS), label="input")
    special = data.draw(st.sampled_from(SPECIAL), label="special")
    if data.draw(st.booleans(), label="through a symlink"):
        suffix = data.draw(st.sampled_from(["", ".json", ".csv", ".npz", ".jsonl"]), label="suffix")
        link = inputs / f"link-to-{Path(special).name}{suffix}"
        if not link.is_symlink():
            link.symlink_to(special)
        special = link.name
    given_ = dict(INPUT_RUNS[name])
    [action] = [a for a in COMMANDS[name]._actions if a.dest == dest]
    keep = action.nargs in ("+", "*") and data.draw(st.booleans(), label="after a valid one")
    given_[dest] = [*given_[dest], special] if keep else [special]
    argv = argv_of(name, given_)
    with traced_peak() as peak:
        result = run(argv, inputs, SPECIAL_SECONDS)
    event(name)
    assert_refused(result)
    assert peak[0] < MAX_TRACED_BYTES, f"{peak[0]:,} bytes"


# --- 3. edited tree-cache entries --------------------------------------------------------------------------

TRAIN = ["train", "--game", KUHN, "--algo", "dcfr", "--iterations", "50", "--quiet", "--json", "--out", "p.json"]
EXPLOITABILITY = ["exploitability", "p.json", "--json"]


@dataclass(frozen=True)
class Fresh:
    """What a fresh build gives, and the tree cache's entries as a first run stores them."""

    policy: bytes = field(repr=False)
    nash_conv: float
    entries: dict[str, bytes] = field(repr=False)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """As :func:`repr` writes it (the bytes left out), where Hypothesis shows a failing example."""
        printer.text(repr(self))


@pytest.fixture(scope="session")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Fresh:
    folder = tmp_path_factory.mktemp("tree-cache")
    clear_tree_caches()
    assert run(["--no-tree-cache", *TRAIN], folder).status == 0
    nash_conv = json.loads(run(["--no-tree-cache", *EXPLOITABILITY], folder).out)["nash_conv"]
    policy = (folder / "p.json").read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder / "xdg"))
        clear_tree_caches()
        assert run(TRAIN, folder).status == 0
        entries = {path.name: path.read_bytes() for path in tree_cache.directory().glob("*.npz")}
    clear_tree_caches()
    assert len(entries) == 2  # the tree and its payoff blocks
    return Fresh(policy, nash_conv, entries)


Arrays = dict[str, NDArray[Any]]
IDS = frozenset({"child_action"})
"""Arrays of ids rather than indices: a chance edge's outcome id has no bound a tree holds (one that fits the tree
but is wrong is the digest's to catch, :mod:`cfr_agents.tree_cache`)."""


def members(content: bytes) -> Arrays:
    """An entry's members (its arrays and ``header``), as NumPy reads them."""
    with np.load(io.BytesIO(content), allow_pickle=False) as entry:
        return {name: entry[name] for name in entry.files}


def write_entry(path: Path, arrays: Arrays, claims: Mapping[str, tuple[int, ...]]) -> None:
    """An uncompressed ``.npz`` of ``arrays``; each array named in ``claims`` is written with its bytes but a
    header that declares the shape ``claims`` gives."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w") as member:
                if name in claims:
                    declared = {"descr": np.lib.format.dtype_to_descr(array.dtype), "fortran_order": False}
                    np.lib.format.write_array_header_1_0(member, {**declared, "shape": claims[name]})
                    member.write(np.ascontiguousarray(array).tobytes())
                else:
                    np.lib.format.write_array(member, array, allow_pickle=False)


def edit_entry(path: Path, data: st.DataObject) -> str:
    """Edit the entry at ``path`` as drawn: bytes of the file flipped or cut, or one array's values, indices,
    length or shape changed -- under the header as stored (its digest then stale) or under a header with the
    digest of the edited arrays, as a faulty writer would store them (then only for edits that no tree or
    payoff blocks can hold: an index out of range or negative, a value not finite, a length or shape changed;
    not in the arrays of :data:`IDS`). What was done, in words."""
    content = path.read_bytes()
    how = data.draw(st.sampled_from(["flip", "cut", "values", "index", "not finite", "length", "shape", "declared"]))
    if how == "flip":
        at = data.draw(st.integers(0, len(content) - 1), label="at")
        flipped = content[at] ^ data.draw(st.integers(1, 255), label="mask")
        path.write_bytes(content[:at] + bytes([flipped]) + content[at + 1 :])
        return how
    if how == "cut":
        path.write_bytes(content[: data.draw(st.integers(0, len(content) - 1), label="length")])
        return how
    arrays = members(content)
    header = arrays.pop("header")
    kinds: dict[str, Callable[[NDArray[Any]], bool]] = {
        "values": lambda a: a.size > 0,
        "index": lambda a: a.size > 0 and a.dtype.kind in "iu" and a.dtype != np.uint8,  # uint8: text, no index
        "not finite": lambda a: a.size > 0 and a.dtype.kind == "f",
        "length": lambda a: a.size > 0,
        "shape": lambda a: a.size > 1,
        "declared": lambda a: True,
    }
    name = data.draw(st.sampled_from(sorted(n for n, a in arrays.items() if kinds[how](a))), label="array")
    array = arrays[name].copy()
    claims: dict[str, tuple[int, ...]] = {}
    forged = how != "values"
    if how == "values":  # a byte of the array's data flipped
        raw = array.reshape(-1).view(np.uint8)
        raw[data.draw(st.integers(0, raw.size - 1), label="byte")] ^= data.draw(st.integers(1, 255), label="mask")
    elif how == "index":  # out of range: beyond any index a tree of fewer than 2^31 nodes holds
        bounds = np.iinfo(array.dtype)
        what = data.draw(st.sampled_from(["out of range", "negative", "another"]), label="index")
        low, high = {
            "out of range": (min(2**31, bounds.max), bounds.max),
            "negative": (max(bounds.min, -(2**31)) if bounds.min < 0 else -(2**31), -1),  # unsigned: 2^31 and more
            "another": (0, max(int(array.max()), 0)),
        }[what]
        forged = what != "another"
        at = data.draw(st.integers(0, array.size - 1), label="at")
        array.reshape(-1)[at] = np.array(data.draw(st.integers(low, high), label="value")).astype(array.dtype)
    elif how == "not finite":
        array.reshape(-1)[data.draw(st.integers(0, array.size - 1), label="at")] = data.draw(
            st.sampled_from([math.nan, math.inf, -math.inf]), label="value"
        )
    elif how == "length":
        array = array.reshape(-1)[: data.draw(st.integers(0, array.size - 1), label="length")]
    elif how == "shape":
        shapes = [(array.size,), (1, array.size), (array.size, 1), array.shape[::-1]]
        array = array.reshape(data.draw(st.sampled_from([s for s in shapes if s != array.shape]), label="shape"))
    else:  # a shape whose bytes the member does not hold
        claims[name] = data.draw(
            st.lists(st.integers(0, 2**20), max_size=3).map(tuple).filter(lambda s: math.prod(s) != array.size),
            label="declared",
        )
    arrays[name] = array
    stored = json.loads(str(header[()]))
    forged = forged and not claims and name not in IDS and data.draw(st.booleans(), label="digest of the edited arrays")
    if forged:
        stored["digest"] = tree_cache.digest(arrays)
    write_entry(path, {**arrays, "header": np.array(json.dumps(stored, sort_keys=True))}, claims)
    return f"{how}{', digest of the edited arrays' if forged else ''}"


def same_members(content: bytes, original: bytes) -> bool:
    """Whether ``content`` holds the members of ``original``: the same names, types, shapes and values."""
    try:
        ours, theirs = members(content), members(original)
    except Exception:  # numpy and zipfile refuse a damaged archive each their own way
        return False
    return ours.keys() == theirs.keys() and all(
        ours[n].dtype == theirs[n].dtype and ours[n].shape == theirs[n].shape and np.array_equal(ours[n], theirs[n])
        for n in ours
    )


def warnings_of(result: CliRun) -> list[str]:
    return [line for line in result.err.splitlines() if line.startswith("cfr-agents: warning: ")]


@given(data=st.data())
def test_edited_tree_cache_entries(fresh: Fresh, data: st.DataObject) -> None:
    with contextlib.ExitStack() as stack:
        stack.callback(clear_tree_caches)
        root = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        patch = stack.enter_context(pytest.MonkeyPatch.context())
        patch.setenv("XDG_CACHE_HOME", str(root / "xdg"))
        directory = tree_cache.directory()
        directory.mkdir(parents=True)
        for name, content in fresh.entries.items():
            (directory / name).write_bytes(content)
        name = data.draw(st.sampled_from(sorted(fresh.entries)), label="entry")
        how = edit_entry(directory / name, data)
        damaged = not same_members((directory / name).read_bytes(), fresh.entries[name])

        clear_tree_caches()
        trained = run(TRAIN, root)
        clear_tree_caches()
        warned = warnings_of(trained)
        event(f"{how}: status {trained.status}, {len(warned)} warning line(s), {'' if damaged else 'not '}damaged")
        if trained.status == 2:
            return
        assert len(warned) <= 1 and (len(warned) == 1 or not damaged), trained.err
        assert warned == [] or "tree cache entry" in warned[0], warned
        assert (root / "p.json").read_bytes() == fresh.policy
        assert json.loads(trained.out)["nash_conv"] == fresh.nash_conv
        scored = run(EXPLOITABILITY, root)
        assert scored.status == 0 and warnings_of(scored) == [], scored
        assert json.loads(scored.out)["nash_conv"] == fresh.nash_conv


# --- 4. extreme numbers for every float option -------------------------------------------------------------

FLOAT_OPTIONS = sorted(
    (name, action.option_strings[0])
    for name, parser in COMMANDS.items()
    for action in parser._actions
    if action.type is real or isinstance(action.type, Within)
)
"""Every option of every command that takes a float: ``(command, option)``."""

FLOAT_RUNS: dict[str, tuple[list[str], dict[str, str | None]]] = {
    "train": (
        [],
        {"--game": KUHN, "--algo": "dcfr", "--iterations": "20", "--quiet": None, "--json": None, "--out": "p.json"},
    ),
    "train-opponent": (
        ["sd-cfr"],
        {
            "--game": KUHN,
            "--iterations": "2",
            "--seed": "0",
            "--hyperparameters": "fast",
            "--check-every": "1",
            "--quiet": None,
            "--json": None,
            "--out": "o.json",
        },
    ),
    "exploit": (
        ["random"],
        {"--game": KUHN, "--hands": "log.jsonl", "--max-iterations": "5000", "--json": None, "--out": "x"},
    ),
    "sweep": (
        [],
        {
            "--game": KUHN,
            "--algo": "dcfr",
            "--grid": "alpha=1,2",
            "--iterations": "20",
            "--workers": "1",
            "--json": None,
            "--out": "sweep",
        },
    ),
}
"""For each command with float options, the positional arguments and options of a short run it accepts."""

NEURAL_TRAIN: dict[str, str | None] = {"--algo": "sd-cfr", "--preset": "fast", "--iterations": "2"}
CONTEXT: dict[tuple[str, str], dict[str, str | None]] = {
    ("train", "--epsilon"): {"--sampling": "outcome"},
    ("train", "--checkpoint-every"): {"--checkpoint": "k.npz"},
    ("train", "--learning-rate"): NEURAL_TRAIN,
    ("train", "--learning-rate-decay"): NEURAL_TRAIN,
    ("train", "--gradient-clip"): NEURAL_TRAIN,
    ("train", "--value-scale"): NEURAL_TRAIN,
    ("exploit", "--p"): {"--hands": "<none>"},
}
"""What an option needs to take effect: options added or changed (``"<none>"``: removed)."""

EXTREMES = [
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "5e-324",
    "-5e-324",
    "2.2250738585072014e-308",
    "2.225073858507201e-308",
    "1e-300",
    "-1e-300",
    "inf",
    "-inf",
    "Infinity",
    "nan",
    "-nan",
    "NaN",
    "-0.0",
    "0",
    "1e309",
    "1" + "0" * 400,
    "-" + "9" * 5000,
    "0." + "0" * 400 + "1",
]
ORDINARY = ["0.5", "1", "2", "1e-6", "0.01", "50", "100"]
"""Values in range for some options, so that an extreme value of one option meets runs of the others."""
NUMBERS = (
    st.sampled_from(EXTREMES)
    | st.floats().map(repr)
    | st.integers(-(10**400), 10**400).map(str)
    | st.sampled_from(ORDINARY)
)


def test_every_float_option_is_fuzzed() -> None:
    assert {("train", "--alpha"), ("exploit", "--p"), ("sweep", "--time-limit")} <= set(FLOAT_OPTIONS)
    assert {name for name, _ in FLOAT_OPTIONS} <= set(FLOAT_RUNS)


def finite_json(text: str, where: str) -> None:
    """Refuse JSON that holds ``NaN``, ``Infinity`` or a number too large for a float."""

    def constant(name: str) -> None:
        raise AssertionError(f"{where} holds {name}")

    def number(text: str) -> float:
        assert math.isfinite(float(text)), f"{where} holds {text}"
        return float(text)

    json.loads(text, parse_constant=constant, parse_float=number)


@given(data=st.data())
def test_extreme_numbers_for_every_float_option(inputs: Path, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted({name for name, _ in FLOAT_OPTIONS})), label="command")
    options = data.draw(
        st.lists(st.sampled_from([o for n, o in FLOAT_OPTIONS if n == name]), min_size=1, max_size=3, unique=True),
        label="options",
    )
    positionals, given_ = FLOAT_RUNS[name]
    given_ = dict(given_)
    for option in options:
        given_.update(CONTEXT.get((name, option), {}))
    argv = [*name.split(), *positionals]
    for option, value in given_.items():
        if value != "<none>":
            argv += [option] if value is None else [option, value]
    argv += [f"{option}={data.draw(NUMBERS, label=option)}" for option in options]
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        shutil.copy(inputs / "log.jsonl", root)
        result = run(argv, root)
        event(f"{name}: status {result.status}")
        if result.status == 0:
            finite_json(result.out, "the printed JSON")
        for path in root.rglob("*.json"):
            finite_json(path.read_text(), str(path.relative_to(root)))


# --- 5. deeply nested JSON in every reader -----------------------------------------------------------------


def nested(depth: int, kind: str) -> str:
    """A JSON value nested ``depth`` deep: arrays, objects, or the two in turn."""
    opening = {"array": ["["], "object": ['{"a":'], "both": ["[", '{"a":']}[kind]
    closing = {"[": "]", '{"a":': "}"}
    opened = [opening[level % len(opening)] for level in range(depth)]
    return "".join(opened) + "0" + "".join(closing[o] for o in reversed(opened))


@contextlib.contextmanager
def program_stack() -> Iterator[None]:
    """The recursion limit a ``cfr-agents`` process has (Python's default 1,000 frames, nearly all free) above
    the frames this process already uses: Hypothesis raises the limit while a test runs, and JSON nested deeper
    than a real process could parse would reach code the process never runs."""
    depth, frame = 0, sys._getframe()
    while frame.f_back is not None:
        depth, frame = depth + 1, frame.f_back
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


PLACEHOLDER = "@@nested@@"


def with_nested(document: Any, field: str | None, value: str) -> str:
    """``document`` as JSON with its ``field`` (the whole document when ``None``) replaced by the JSON ``value``."""
    if field is None:
        return value
    return json.dumps({**document, field: PLACEHOLDER}).replace(json.dumps(PLACEHOLDER), value)


@dataclass(frozen=True)
class Reader:
    """A file a command reads JSON from: how to write it in a directory (given the JSON to put in the drawn
    field), and the commands that read it."""

    name: str
    document: Callable[[Path], Any]
    """The valid document, from the directory of valid inputs."""
    write: Callable[[Path, Path, str], str]
    """``write(inputs, root, text)``: write ``text`` where the reader reads it under ``root``; its shown path."""
    commands: Callable[[str], list[list[str]]]


def agent_commands(game: str) -> Callable[[str], list[list[str]]]:
    def commands(agent: str) -> list[list[str]]:
        return [
            ["exploitability", agent],
            ["best-response", agent, "--out", "br.json"],
            ["match", agent, "random", "--game", game, "--hands", "4", "--quiet"],
            ["tournament", agent, "random", "--game", game, "--hands", "4", "--workers", "1", "--quiet", "--out", "t"],
            ["exploit", agent, "--game", game, "--p", "0.5", "--precision", "0.05", "--quiet", "--out", "x"],
            ["opponents", "--game", game, "--table", agent],
            ["plot", "strategy", agent, "--line", "pass", "--out", "s.png"],
        ]

    return commands


def written_as(name: str) -> Callable[[Path, Path, str], str]:
    def write(inputs: Path, root: Path, text: str) -> str:
        (root / name).write_text(text)
        return name

    return write


def sidecar_beside_weights(inputs: Path, root: Path, text: str) -> str:
    shutil.copy(inputs / "sd-cfr.safetensors", root)
    (root / "model.json").write_text(text)
    return "model.json"


def hand_log_line(inputs: Path, root: Path, text: str) -> str:
    """The log of :func:`inputs` with its first line replaced by ``text`` (on one line)."""
    lines = (inputs / "log.jsonl").read_text().splitlines()
    (root / "log.jsonl").write_text("\n".join([text.replace("\n", " "), *lines[1:]]) + "\n")
    return "log.jsonl"


def checkpoint_header(inputs: Path, root: Path, text: str) -> str:
    with np.load(inputs / "k.npz", allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    arrays["header"] = np.frombuffer(text.encode(), dtype=np.uint8)
    np.savez(root / "k.npz", allow_pickle=False, **arrays)
    return "k.npz"


def checkpoint_document(inputs: Path) -> Any:
    with np.load(inputs / "k.npz", allow_pickle=False) as archive:
        return json.loads(archive["header"].tobytes())


SWEEP = ["sweep", "--game", KUHN, "--algo", "dcfr", "--grid", "alpha=1", "--iterations", "20", "--workers", "1"]
SWEEP_JOB = Path("sweep", "jobs", "alpha=1.0-seed0")


def sweep_file(name: str) -> Callable[[Path, Path, str], str]:
    def write(inputs: Path, root: Path, text: str) -> str:
        shutil.copytree(inputs / "sweep", root / "sweep")
        (root / SWEEP_JOB / name).write_text(text)
        return str(SWEEP_JOB / name)

    return write


def sweep_document(name: str) -> Callable[[Path], Any]:
    return lambda inputs: json.loads((inputs / SWEEP_JOB / name).read_text())


READERS = [
    Reader(
        "policy file", lambda i: json.loads((i / "kuhn.json").read_text()), written_as("p.json"), agent_commands(KUHN)
    ),
    Reader(
        "model sidecar",
        lambda i: json.loads((i / "sd-cfr.json").read_text()),
        sidecar_beside_weights,
        agent_commands(KUHN),
    ),
    Reader(
        "opponent table",
        lambda i: json.loads((MODELS / "rlcard-cfr_leduc-holdem.json").read_text()),
        written_as("table.json"),
        lambda f: [["exploitability", f], ["match", f, "random", "--game", RLCARD_LEDUC, "--hands", "4", "--quiet"]],
    ),
    Reader(
        "frontier file",
        lambda i: json.loads((i / "frontier.json").read_text()),
        written_as("frontier.json"),
        lambda f: [["plot", "frontier", f, "--out", "f.png"]],
    ),
    Reader(
        "learning file",
        lambda i: json.loads((i / "learning.json").read_text()),
        written_as("learning.json"),
        lambda f: [["plot", "learning", f, "--out", "l.png"]],
    ),
    Reader(
        "hand log",
        lambda i: json.loads((i / "log.jsonl").read_text().splitlines()[0]),
        hand_log_line,
        lambda f: [["exploit", "random", "--game", KUHN, "--hands", f, "--quiet", "--out", "x"]],
    ),
    Reader(
        "checkpoint header",
        checkpoint_document,
        checkpoint_header,
        lambda f: [
            ["train", "--resume", f, "--checkpoint", "k2.npz", "--iterations", "40", "--quiet", "--out", "p.json"]
        ],
    ),
    *(
        Reader(f"sweep {name}", sweep_document(name), sweep_file(name), lambda f: [[*SWEEP, "--out", "sweep"]])
        for name in ("spec.json", "progress.json", "result.json")
    ),
]


@pytest.fixture(scope="session")
def readable(inputs: Path, models: Path) -> Path:
    """:func:`inputs` with the SD-CFR model of :func:`models` (``sd-cfr.json`` and its weights) and a sweep's
    directory, ``sweep``."""
    for suffix in (".json", ".safetensors"):
        shutil.copy(models / f"sd-cfr{suffix}", inputs)
    assert run([*SWEEP, "--out", "sweep"], inputs).status == 0
    return inputs


@given(data=st.data())
def test_deeply_nested_json_in_every_reader(readable: Path, data: st.DataObject) -> None:
    reader = data.draw(st.sampled_from(READERS), label="reader")
    document = reader.document(readable)
    field = data.draw(st.none() | st.sampled_from(sorted(document)), label="field")
    deep = st.integers(1000, 200_000) | st.sampled_from([1000, 200_000])
    depth = data.draw(deep | st.integers(1, 999), label="depth")
    text = with_nested(document, field, nested(depth, data.draw(st.sampled_from(["array", "object", "both"]))))
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        shown = reader.write(readable, root, text)
        argv = data.draw(st.sampled_from(reader.commands(shown)), label="command")
        with program_stack():
            result = run(argv, root)
    event(f"{reader.name}, {'deep' if depth >= 1000 else 'shallow'}: status {result.status}")
    if depth >= 1000:
        assert_refused(result)
        assert shown in result.err, result.err
