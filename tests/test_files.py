"""Output paths: symlinks are written through, special files refused, coinciding outputs refused.

Special files are made inside the test's temporary directory (a FIFO, a unix socket); no test
ever names a real device.
"""

from __future__ import annotations

import os
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from adapters.inputs import InputError
from cfr_agents.files import can_create_in, check_outputs, write_atomic
from tests.support import run_cli

TRAIN = ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "3", "--quiet"]


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.fixture
def unix_socket(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(path))
        yield path


def test_a_symlink_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "real" / "policy.json"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    chain = tmp_path / "chain.json"
    chain.symlink_to(link)
    assert run_cli([*TRAIN, "--out", str(chain)]).status == 0
    assert chain.is_symlink() and link.is_symlink() and os.readlink(link) == str(target)
    assert '"cfr-agents-policy"' in target.read_text()
    assert sorted(p.name for p in target.parent.iterdir()) == ["policy.json"]  # no temporary left


def test_a_dangling_symlink_creates_its_target(tmp_path: Path) -> None:
    link = tmp_path / "link.txt"
    link.symlink_to("made.txt")
    write_atomic(link, "hello\n")
    assert link.is_symlink() and (tmp_path / "made.txt").read_text() == "hello\n"


SPECIAL: dict[str, Callable[[Path], Path]] = {
    "a FIFO": lambda tmp: fifo(tmp / "pipe"),
    "a directory": lambda tmp: tmp,
    "a FIFO behind a symlink": lambda tmp: _link(tmp / "to-pipe", fifo(tmp / "pipe")),
}


def _link(link: Path, target: Path) -> Path:
    link.symlink_to(target)
    return link


@pytest.mark.parametrize("kind", SPECIAL)
@pytest.mark.parametrize("option", ["--out", "--curve"])
def test_special_files_are_refused_and_left_alone(tmp_path: Path, kind: str, option: str) -> None:
    special = SPECIAL[kind](tmp_path)
    before = os.stat(special).st_mode
    outputs = {"--out": str(tmp_path / "p.json"), "--curve": str(tmp_path / "c.csv"), option: str(special)}
    status, _, err = run_cli([*TRAIN, *(x for pair in outputs.items() for x in pair)])
    assert status == 2 and err.count("\n") == 1 and err.startswith("cfr-agents: error: cannot write")
    assert kind.split(" behind")[0].removeprefix("a ") in err
    assert os.stat(special).st_mode == before
    assert not (tmp_path / "p.json").exists() and not (tmp_path / "c.csv").exists()


def test_a_socket_is_refused(unix_socket: Path) -> None:
    with pytest.raises(InputError, match="it is a socket"):
        write_atomic(unix_socket, "x")
    assert stat.S_ISSOCK(unix_socket.stat().st_mode)


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(InputError, match="symbolic links"):
        write_atomic(tmp_path / "a", "x")
    assert (tmp_path / "a").is_symlink() and (tmp_path / "b").is_symlink()


@pytest.mark.parametrize("alias", ["same", "symlink", "hard link", "dot path"])
def test_outputs_that_name_one_file_are_refused_before_training(tmp_path: Path, alias: str) -> None:
    out = tmp_path / "policy.json"
    out.write_text("old")
    other = tmp_path / "." / "policy.json" if alias == "dot path" else tmp_path / "curve.csv"
    if alias == "same":
        other = out
    elif alias == "symlink":
        other.symlink_to(out)
    elif alias == "hard link":
        os.link(out, other)
    status, _, err = run_cli([*TRAIN[:-1], "--out", str(out), "--curve", str(other)])
    assert status == 2 and err.count("\n") == 1 and "are the same file" in err
    assert "infosets" not in err and out.read_text() == "old"


def test_distinct_outputs_pass_and_missing_ones_are_skipped(tmp_path: Path) -> None:
    check_outputs(tmp_path / "a.json", None, tmp_path / "b.csv")


@pytest.mark.parametrize("name", ["n" * 300, "d" * 5000, "nul\0byte"], ids=["long name", "long path", "NUL"])
def test_unusable_names_are_refused_with_one_line(tmp_path: Path, name: str) -> None:
    with pytest.raises(InputError, match="cannot write") as error:
        write_atomic(tmp_path / name, "x")
    assert "\n" not in str(error.value) and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc file system here")
def test_a_directory_that_takes_no_new_file_is_refused_even_to_root(tmp_path: Path) -> None:
    """``/proc`` passes every permission check for root yet takes no new file: a file is created and removed to
    find out, before any work, and nothing is left behind where it can."""
    assert not can_create_in(Path("/proc"))
    assert can_create_in(tmp_path) and list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="directory '/proc' is not writable"):
        check_outputs("/proc/out.json")
