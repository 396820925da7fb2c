"""Every file a command reads is read bounded and checked: only regular files (a FIFO never blocks,
``/dev/zero`` is never read), each kind within its size limit, a model's weights only where its sidecar
may name them and only when safetensors can parse them, and hand logs line by line -- each line UTF-8,
not nested too deeply, and the hand the game itself deals and plays along its history. Appending to a
log starts on a line of its own. Each refusal is one line and exit status 2.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import resource
import shutil
import signal
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import pytest

import eval.hand_log
import eval.opponents.nfsp
import eval.plots
from adapters.inputs import MAX_WEIGHTS_BYTES, InputError, npz_archive, read_npy_member, read_regular
from eval.opponents.registry import MODELS
from tests.support import in_one_process, run_cli

KUHN = "openspiel:kuhn_poker"
MODEL = "deep-cfr_leduc_poker"
"""A shipped model (a sidecar and its weights) small enough to copy into every test."""


def refused(argv: list[str], *words: str) -> str:
    """Run ``cfr-agents argv``; assert one ``cfr-agents: error:`` line holding every one of ``words``, exit 2."""
    status, printed, err = run_cli(argv)
    assert (status, printed) == (2, ""), (status, err)
    assert len(err.splitlines()) == 1 and err.startswith("cfr-agents: error: "), err
    assert all(word in err for word in words), err
    return err


@pytest.fixture(scope="module")
def policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``k.json``: CFR+ on Kuhn, 100 iterations."""
    path = tmp_path_factory.mktemp("policy") / "k.json"
    argv = ["train", "--game", KUHN, "--algo", "cfr+", "--iterations", "100", "--quiet", "--out", str(path)]
    assert run_cli(argv).status == 0
    return path


def logged(path: Path, game_id: str = KUHN, hands: int = 20) -> Path:
    """``path``, with ``hands`` hands of random against random appended (``match --log``)."""
    argv = ["match", "random", "random", "--game", game_id, "--hands", str(hands), "--log", str(path), "--quiet"]
    status, _, err = run_cli(argv)
    assert status == 0, err
    return path


def exploit(log: Path, game_id: str = KUHN) -> list[str]:
    return ["exploit", "random", "--game", game_id, "--hands", str(log), "--out", str(log.with_name("dbr.json"))]


def model(folder: Path, sidecar: str = "model.json", **fields: object) -> Path:
    """The shipped :data:`MODEL` copied into ``folder``, its sidecar named ``sidecar`` and given ``fields``."""
    shutil.copy(MODELS / f"{MODEL}.safetensors", folder)
    data = {**json.loads((MODELS / f"{MODEL}.json").read_text()), **fields}
    (folder / sidecar).write_text(json.dumps(data))
    return folder / sidecar


# --- appending to a hand log ------------------------------------------------------------------------


def test_a_log_whose_last_line_lacks_its_line_break_is_not_appended_to(tmp_path: Path, policy: Path) -> None:
    log = tmp_path / "l.jsonl"
    log.write_bytes(b"x")
    argv = ["match", str(policy), "random", "--game", KUHN, "--hands", "20", "--log", str(log)]
    refused(argv, repr(str(log)), "does not end with a line break")
    assert log.read_bytes() == b"x"


def test_a_log_is_appended_to_after_its_last_line(tmp_path: Path) -> None:
    log = logged(logged(tmp_path / "l.jsonl", hands=4), hands=6)
    assert [json.loads(line)["format"] for line in log.read_text().splitlines()] == ["cfr-agents-hands"] * 10


# --- special files and sizes ----------------------------------------------------------------------


def _at_most_4_gib() -> None:
    """In the child: an address-space limit, so a reader that would run on without end fails quickly."""
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


DEV_ZERO = {
    "policy": (["exploitability", "/dev/zero"], "file"),
    "hand log": (["exploit", "random", "--game", KUHN, "--hands", "/dev/zero", "--out", "dbr.json"], "hand log"),
    "curve": (["plot", "curves", "/dev/zero", "--out", "c.png"], "curve file"),
    "frontier": (["plot", "frontier", "/dev/zero", "--out", "f.png"], "frontier file"),
    "checkpoint": (
        ["train", "--resume", "/dev/zero", "--checkpoint", "c.npz", "--iterations", "5", "--out", "p.json"],
        "checkpoint",
    ),
    "weights": (["exploitability", "zero.json"], "weights file"),
}
"""A command reading ``/dev/zero`` as each kind of file, and the words its refusal names the file with."""


@pytest.fixture(scope="module")
def dev_zero_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str, str]]:
    """The commands of :data:`DEV_ZERO`, run one after another in one child process under a 4 GiB address-space
    limit, in a directory where ``zero`` links to ``/dev/zero`` and the sidecar ``zero.json`` names it as its
    weights: (status, output, error) by kind."""
    folder = tmp_path_factory.mktemp("dev-zero")
    (folder / "zero").symlink_to("/dev/zero")
    model(folder, "zero.json", weights="zero")
    runs = in_one_process([(folder, argv) for argv, _ in DEV_ZERO.values()], preexec_fn=_at_most_4_gib)
    return {kind: (int(run.status), run.out, run.err) for kind, run in zip(DEV_ZERO, runs, strict=True)}


@pytest.mark.parametrize("kind", DEV_ZERO)
def test_dev_zero_is_refused_by_its_type(dev_zero_runs: dict[str, tuple[int, str, str]], kind: str) -> None:
    status, out, err = dev_zero_runs[kind]
    assert (status, out) == (2, ""), err[-2000:]
    assert len(err.splitlines()) == 1, err
    assert f"{DEV_ZERO[kind][1]} '" in err and "is a character device, not a regular file" in err


@pytest.fixture
def alarm() -> Iterator[None]:
    """A test that would block (opening a FIFO no one writes) fails after 60 s instead of hanging."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError("a reader blocked on a FIFO")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


FIFO_READERS: dict[str, list[str]] = {
    "policy": ["exploitability", "pipe.json"],
    "match agent": ["match", "pipe.json", "random", "--game", KUHN, "--hands", "4"],
    "tournament agent": ["tournament", "random", "pipe.json", "--game", KUHN, "--hands", "4", "--out", "t"],
    "plot strategy": ["plot", "strategy", "pipe.json", "--line", "pass", "--out", "s.png"],
    "hand log": exploit(Path("pipe.json")),
    "curve": ["plot", "curves", "pipe.json", "--out", "c.png"],
    "frontier": ["plot", "frontier", "pipe.json", "--out", "f.png"],
    "learning": ["plot", "learning", "pipe.json", "--out", "l.png"],
    "checkpoint": ["train", "--resume", "pipe.json", "--checkpoint", "c.npz", "--iterations", "5", "--out", "p.json"],
    "weights": ["exploitability", "model.json"],
}


@pytest.mark.parametrize("reader", FIFO_READERS)
def test_a_fifo_at_any_input_name_is_refused_without_blocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alarm: None, reader: str
) -> None:
    os.mkfifo(tmp_path / "pipe.json")
    model(tmp_path, weights="pipe.json")
    monkeypatch.chdir(tmp_path)
    refused(FIFO_READERS[reader], "'pipe.json' is a FIFO, not a regular file")


def test_a_file_is_read_without_allocating_its_limit(tmp_path: Path) -> None:
    """Weights of 1,000 bytes are read in about that much memory, not the 4 GiB a weights file may take (a read
    allocates all it may read first: 4 GiB are more than many machines can give)."""
    weights = tmp_path / "w.safetensors"
    weights.write_bytes(bytes(range(250)) * 4)
    tracemalloc.start()
    try:
        content = read_regular(weights, "weights file", MAX_WEIGHTS_BYTES)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert content == weights.read_bytes() and peak < 2**20


@pytest.mark.parametrize(("limit", "read"), [(100, True), (95, False)])
def test_a_file_that_grows_while_it_is_read_is_read_up_to_its_limit(tmp_path: Path, limit: int, read: bool) -> None:
    """A file of 100 bytes whose size is looked up as 90 (it grew after): read whole within a limit of 100,
    refused beyond a limit of 95."""
    path = tmp_path / "growing.json"
    path.write_bytes(b"7" * 100)
    looked_up: dict[str, Callable[..., os.stat_result]] = {"stat": os.stat, "fstat": os.fstat}

    def shrunk(name: str) -> Callable[..., os.stat_result]:
        def call(*args: Any, **kwargs: Any) -> os.stat_result:
            info = looked_up[name](*args, **kwargs)
            return os.stat_result((*info[:6], 90, *info[7:]))

        return call

    with pytest.MonkeyPatch.context() as patch:
        for name in looked_up:
            patch.setattr(os, name, shrunk(name))
        if read:
            assert read_regular(path, "file", limit) == b"7" * 100
        else:
            with pytest.raises(InputError, match="is more than the 95 bytes it may be"):
                read_regular(path, "file", limit)


def test_a_sidecar_beyond_its_size_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eval.opponents.nfsp, "MAX_SIDECAR_BYTES", 1000)
    sidecar = model(tmp_path)
    refused(["exploitability", str(sidecar)], f"model file {str(sidecar)!r} is ", "more than the 1,000 bytes")


def test_a_curve_beyond_its_size_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eval.plots, "MAX_RESULTS_BYTES", 10)
    curve = tmp_path / "c.csv"
    curve.write_text("iteration,seconds,nash_conv\n1,1,1\n")
    size = curve.stat().st_size
    refused(
        ["plot", "curves", str(curve), "--out", str(tmp_path / "c.png")], f"is {size} bytes, more than the 10 bytes"
    )


def test_a_hand_log_line_beyond_its_size_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = logged(tmp_path / "l.jsonl", hands=4)
    monkeypatch.setattr(eval.hand_log, "MAX_LOG_LINE_BYTES", len(_lines(log)[0]) - 1)
    refused(exploit(log), "line 1: longer than the")


def _npz(members: dict[str, bytes], compression: int = zipfile.ZIP_STORED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _npy(shape: tuple[int, ...], data: bytes) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return buffer.getvalue() + data


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (_npz({"regret.npy": _npy((10**12,), bytes(16))}), "member 'regret.npy' declares"),
        (_npz({"regret.npy": _npy((2,), bytes(16))}, zipfile.ZIP_DEFLATED), "member 'regret.npy' is compressed"),
    ],
    ids=["declared size", "compressed"],
)
def test_a_checkpoint_whose_arrays_do_not_fit_its_members_is_refused(
    tmp_path: Path, content: bytes, words: str
) -> None:
    checkpoint = tmp_path / "c.npz"
    checkpoint.write_bytes(content)
    argv = ["train", "--resume", str(checkpoint), "--iterations", "5", "--out", str(tmp_path / "p.json")]
    refused(argv, f"checkpoint {str(checkpoint)!r} is not a readable .npz archive", words)


# --- sidecars and weights -----------------------------------------------------------------------


WEIGHTS_NAMES: dict[str, Callable[[Path], object]] = {
    "absolute": lambda folder: str(MODELS / f"{MODEL}.safetensors"),
    "climbing out": lambda folder: os.path.relpath(MODELS / f"{MODEL}.safetensors", folder),
    "a separator": lambda folder: f"sub/{MODEL}.safetensors",
    "empty": lambda folder: "",
    "dot-dot": lambda folder: "..",
    "not a string": lambda folder: 7,
}
"""Names a sidecar may not give its weights, though most name real weights: the shipped ones, or a copy."""


@pytest.mark.parametrize("kind", WEIGHTS_NAMES)
def test_a_sidecar_names_weights_in_its_own_directory_only(tmp_path: Path, kind: str) -> None:
    name = WEIGHTS_NAMES[kind](tmp_path)
    (tmp_path / "sub").mkdir()
    shutil.copy(MODELS / f"{MODEL}.safetensors", tmp_path / "sub")
    sidecar = model(tmp_path, weights=name)
    refused(["exploitability", str(sidecar)], "its 'weights' must name a file in its own directory", repr(name))


def _forged(folder: Path, family: str, content: bytes) -> Path:
    """A copy of the shipped ``family`` model whose weights are ``content``, its digest updated to match."""
    (folder / "w.safetensors").write_bytes(content)
    data = json.loads((MODELS / f"{family}.json").read_text())
    data.update(weights="w.safetensors", weights_sha256=hashlib.sha256(content).hexdigest())
    sidecar = folder / "forged.json"
    sidecar.write_text(json.dumps(data))
    return sidecar


MALFORMED: dict[str, Callable[[bytes], bytes]] = {
    "truncated": lambda real: real[: len(real) // 2],
    "header length": lambda real: (2**40).to_bytes(8, "little") + real[8:],
    "header not JSON": lambda real: (8).to_bytes(8, "little") + b"not json",
    "offsets beyond the data": lambda real: _safetensors(
        {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}
    ),
    "shape against offsets": lambda real: _safetensors(
        {"a": {"dtype": "F32", "shape": [9], "data_offsets": [0, 4]}}, 4
    ),
}


def _safetensors(header: dict[str, Any], data: int = 0) -> bytes:
    text = json.dumps(header).encode()
    return len(text).to_bytes(8, "little") + text + bytes(data)


@pytest.mark.parametrize("family", [MODEL, "openspiel-nfsp_leduc_poker"])
@pytest.mark.parametrize("damage", MALFORMED)
def test_weights_safetensors_cannot_parse_are_refused_though_their_digest_matches(
    tmp_path: Path, family: str, damage: str
) -> None:
    if family.startswith("openspiel-nfsp"):
        pytest.importorskip("torch")
    real = (MODELS / f"{family}.safetensors").read_bytes()
    sidecar = _forged(tmp_path, family, MALFORMED[damage](real))
    refused(["exploitability", str(sidecar)], repr(str(tmp_path / "w.safetensors")), "is not a safetensors file")


# --- hand logs, line by line --------------------------------------------------------------------


def _lines(log: Path) -> list[bytes]:
    return log.read_bytes().splitlines(keepends=True)


def _with_line(log: Path, number: int, line: bytes) -> Path:
    lines = _lines(log)
    lines[number - 1] = line
    log.write_bytes(b"".join(lines))
    return log


def test_a_log_line_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    log = _with_line(logged(tmp_path / "l.jsonl", hands=4), 2, b"[" * 100_000 + b"\n")
    refused(exploit(log), "line 2 is not valid JSON (nested too deeply)")


def test_a_bad_byte_is_reported_on_its_own_line(tmp_path: Path) -> None:
    log = logged(tmp_path / "l.jsonl")
    line = _lines(log)[5]
    log = _with_line(log, 6, line[:40] + b"\xff" + line[41:])
    refused(exploit(log), "line 6: not UTF-8 text")


CHANGES: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], str]] = {
    "swapped private cards": (lambda hand: {"private_cards": hand["private_cards"][::-1]}, "the private cards"),
    "a card of the other seat": (lambda hand: {"private_cards": hand["private_cards"][1:] * 2}, "the private cards"),
    "public cards on Kuhn": (lambda hand: {"public_cards": hand["private_cards"][0]}, "the public cards"),
    "swapped private events": (lambda hand: {"private_events": hand["private_events"][::-1]}, "the private events"),
    "empty private events": (lambda hand: {"private_events": [[], []]}, "the private events"),
    "an action's name not its id's": (
        lambda hand: {"actions": [[*hand["actions"][0][:2], hand["actions"][1][2]], *hand["actions"][1:]]},
        "'s action ",
    ),
}
"""Changes to a line of a Kuhn log, each with what the refusal names. The line changed is one whose first
two actions differ, so that the second's name is not the first's."""


@pytest.mark.parametrize("game_id", [KUHN, "rlcard:kuhn-poker"])
@pytest.mark.parametrize("change", CHANGES)
def test_a_hand_the_game_would_not_deal_or_play_is_refused(tmp_path: Path, game_id: str, change: str) -> None:
    log = logged(tmp_path / "l.jsonl", game_id)
    hands = [json.loads(line) for line in _lines(log)]
    number = next(n for n, hand in enumerate(hands, 1) if hand["actions"][0][1] != hand["actions"][1][1])
    edit, words = CHANGES[change]
    line = json.dumps({**hands[number - 1], **edit(hands[number - 1])}).encode() + b"\n"
    refused(exploit(_with_line(log, number, line), game_id), f"line {number}: ", words)


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    with path.open("rb") as handle, npz_archive(handle, InputError) as (archive, members):
        return {name: read_npy_member(archive, info, InputError) for name, info in members.items()}


def test_the_shared_npz_reader_reads_what_numpy_writes_in_either_order(tmp_path: Path) -> None:
    arrays = {"c": np.arange(12.0).reshape(3, 4), "f": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3))}
    np.savez(tmp_path / "a.npz", c=arrays["c"], f=arrays["f"])
    read = _read_npz(tmp_path / "a.npz")
    assert sorted(read) == ["c", "f"]
    for name, array in arrays.items():
        assert read[name].dtype == array.dtype
        np.testing.assert_array_equal(read[name], array)


@pytest.mark.parametrize(
    ("members", "words"),
    [
        ({"a.npy": _npy((2,), bytes(16)), "notes.txt": b"hi"}, "member 'notes.txt' is not a .npy array"),
        ({"a.npy": _npy((2,), bytes(16)), "b.npy": _npy((3,), bytes(16))}, "member 'b.npy' declares float64[3]"),
        ({"a.npy": b"\x93NUMPY\x03\x00junk"}, "member 'a.npy' is in the unknown .npy version (3, 0)"),
        ({"a.npy": b"not an array"}, "member 'a.npy' has no readable .npy header"),
    ],
    ids=["not .npy", "short", "version", "no header"],
)
def test_the_shared_npz_reader_refuses_a_damaged_member_before_reading_it(
    tmp_path: Path, members: dict[str, bytes], words: str
) -> None:
    path = tmp_path / "a.npz"
    path.write_bytes(_npz(members))
    with pytest.raises(InputError) as refused:
        _read_npz(path)
    assert words in str(refused.value)
