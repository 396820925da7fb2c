"""The on-disk tree cache: a cached tree is the built tree, field for field; damaged entries (edited arrays,
arrays that do not make a tree, entries declaring more than they hold) are reported in one line and rebuilt,
FIFOs are never opened, a version change misses, the off switch and an unwritable directory are honoured."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import mmap
import os
import threading
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from numpy.typing import NDArray

import adapters
from adapters.openspiel import OpenSpielGame
from adapters.pyspiel_game import BridgedGame
from cfr_agents import make_solver, tree_cache
from cfr_agents.tree import CompiledTree, compile_tree, load_tree, loaded_tree
from eval import exploitability
from tests.support import assert_same_tree

T = TypeVar("T")

CACHED_GAMES = (
    "openspiel:kuhn_poker",
    "openspiel:leduc_poker",
    "openspiel:leduc_poker(suit_isomorphism=True)",
    "rlcard:kuhn-poker",
    "rlcard:leduc-holdem",
)


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh, empty cache for every test, the cache on, and no warning given yet."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(tree_cache.DISABLE_VARIABLE, raising=False)
    monkeypatch.setattr(tree_cache, "_warned", False)
    loaded_tree.cache_clear()
    yield tmp_path / "xdg" / "cfr-agents" / "trees"
    loaded_tree.cache_clear()


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.npz")) if directory.is_dir() else []


def members(path: Path) -> dict[str, NDArray[Any]]:
    """An entry's members as stored: its arrays and its JSON header."""
    with np.load(path, allow_pickle=False) as entry:
        return {name: entry[name] for name in entry.files}


def warning_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """What went to stderr since the last look, line by line."""
    return capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("game_id", CACHED_GAMES)
def test_a_cached_tree_is_the_built_tree(game_id: str, cache_home: Path) -> None:
    game = adapters.load_game(game_id)
    built = compile_tree(game, cache=False)
    assert entries(cache_home) == []
    first = compile_tree(game)
    assert not first.from_cache
    assert len(entries(cache_home)) == 1
    second = compile_tree(adapters.load_game(game_id))
    assert second.from_cache
    assert "loaded from the tree cache" in second.summary()
    assert second.build_seconds > 0
    assert_same_tree(first, built)
    assert_same_tree(second, built)


def test_load_tree_uses_the_cache(cache_home: Path) -> None:
    built = load_tree("openspiel:kuhn_poker")
    loaded_tree.cache_clear()
    loaded = load_tree("openspiel:kuhn_poker")
    assert not built.from_cache and loaded.from_cache
    assert_same_tree(loaded, built)


def test_an_entry_is_an_npz_without_pickles_holding_its_json_header(cache_home: Path) -> None:
    game = adapters.load_game("openspiel:leduc_poker")
    compile_tree(game)
    (path,) = entries(cache_home)
    stored = members(path)
    assert all(array.dtype != object for array in stored.values())
    header = json.loads(str(stored.pop("header")[()]))
    assert header.pop("digest") == tree_cache.digest(stored)
    assert header == tree_cache.header(game)
    assert header["game_id"] == "openspiel:leduc_poker"
    assert header["rules_fingerprint"] == game.rules_fingerprint
    assert header["format"] == tree_cache.FORMAT_VERSION
    assert set(header["versions"]) == {"cfr-agents", "open_spiel", "rlcard", "numpy"}
    assert path == tree_cache.entry_path(header)


def mapped_arrays(tree: CompiledTree) -> list[bool]:
    """For each array of ``tree``: whether it views a file mapped into memory (aligned and writable, as a built
    tree's arrays are), rather than holding its values itself."""
    found: list[bool] = []
    for field in dataclasses.fields(CompiledTree):
        array = getattr(tree, field.name)
        if isinstance(array, np.ndarray):
            assert array.flags.aligned and array.flags.writeable, field.name
            base: object = array
            while isinstance(base, np.ndarray):
                base = base.base
            found.append(isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap))
    return found


def test_an_entry_only_its_owner_can_write_is_mapped_in_place(cache_home: Path) -> None:
    """Its arrays are views of the file, not copies; an entry others may write is read into arrays of the tree's
    own, as are the arrays of an entry that are not aligned in the file (:func:`numpy.savez` stores them where
    they fall)."""
    game = adapters.load_game("openspiel:leduc_poker")
    built = compile_tree(game)
    (path,) = entries(cache_home)
    path.chmod(0o644)
    mapped = compile_tree(game)
    assert mapped.from_cache and all(mapped_arrays(mapped))
    assert_same_tree(mapped, built)
    path.chmod(0o664)
    shared = compile_tree(game)
    assert shared.from_cache and not any(mapped_arrays(shared))
    assert_same_tree(shared, built)
    stored = members(path)
    unaligned = path.with_suffix(".tmp")
    with unaligned.open("wb") as handle:
        np.savez(handle, allow_pickle=False, **stored)
    unaligned.chmod(0o644)
    unaligned.replace(path)  # a new file: the mapped tree above keeps the one it maps
    copied = compile_tree(game)
    assert copied.from_cache and not all(mapped_arrays(copied))
    assert_same_tree(copied, built)
    assert_same_tree(mapped, built)


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(b"not a zip file" * 100)
    else:  # one byte flipped in the middle of the arrays: the digest no longer matches
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])


@pytest.mark.parametrize("how", ["truncated", "empty", "garbage", "flipped"])
def test_a_damaged_entry_is_rebuilt_and_replaced(
    how: str, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = adapters.load_game("openspiel:leduc_poker")
    built = compile_tree(game)
    (path,) = entries(cache_home)
    damage(path, how)
    warning_lines(capsys)
    rebuilt = compile_tree(game)
    [warning] = warning_lines(capsys)
    assert warning.startswith(f"cfr-agents: warning: tree cache entry {str(path)!r} is damaged (")
    assert warning.endswith("); building it anew")
    assert not rebuilt.from_cache
    assert_same_tree(rebuilt, built)
    assert entries(cache_home) == [path]
    reloaded = compile_tree(game)
    assert reloaded.from_cache
    assert_same_tree(reloaded, built)


def test_an_entry_under_another_games_header_is_replaced(cache_home: Path) -> None:
    kuhn, leduc = adapters.load_game("openspiel:kuhn_poker"), adapters.load_game("openspiel:leduc_poker")
    compile_tree(kuhn)
    (kuhn_entry,) = entries(cache_home)
    leduc_entry = tree_cache.entry_path(tree_cache.header(leduc))
    kuhn_entry.replace(leduc_entry)
    rebuilt = compile_tree(leduc)
    assert not rebuilt.from_cache and rebuilt.num_infosets == 936
    assert compile_tree(leduc).from_cache


@pytest.mark.parametrize(
    "change",
    ["cfr-agents", "open_spiel", "rlcard", "numpy", "format", "code"],
)
def test_a_version_change_misses_the_cache(change: str, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    game = adapters.load_game("openspiel:kuhn_poker")
    compile_tree(game)
    assert compile_tree(game).from_cache
    (old_entry,) = entries(cache_home)
    if change == "format":
        monkeypatch.setattr(tree_cache, "FORMAT_VERSION", tree_cache.FORMAT_VERSION + 1)
    elif change == "code":
        monkeypatch.setattr(tree_cache, "_code_fingerprint", lambda: "sha256:edited")
    else:
        versions = {**tree_cache._versions(), change: "0.0.0-other"}
        monkeypatch.setattr(tree_cache, "_versions", lambda: versions)
    missed = compile_tree(game)
    assert not missed.from_cache
    (new_entry,) = entries(cache_home)  # the superseded entry is gone
    assert new_entry != old_entry
    assert compile_tree(game).from_cache


def test_other_games_and_rules_keep_their_own_entries(cache_home: Path) -> None:
    game_ids = ("openspiel:leduc_poker", "openspiel:leduc_poker(suit_isomorphism=True)", "openspiel:kuhn_poker")
    assert not any(compile_tree(adapters.load_game(game_id)).from_cache for game_id in game_ids)
    assert len(entries(cache_home)) == 3
    assert all(compile_tree(adapters.load_game(game_id)).from_cache for game_id in game_ids)


@pytest.mark.parametrize(("value", "on"), [("1", False), ("yes", False), ("0", True), ("", True)])
def test_the_environment_variable_turns_the_cache_off(
    value: str, on: bool, cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(tree_cache.DISABLE_VARIABLE, value)
    game = adapters.load_game("openspiel:kuhn_poker")
    compile_tree(game)
    again = compile_tree(game)
    assert tree_cache.enabled() is on
    assert again.from_cache is on
    assert len(entries(cache_home)) == (1 if on else 0)


def test_the_cache_is_not_read_while_turned_off(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    game = adapters.load_game("openspiel:kuhn_poker")
    compile_tree(game)
    monkeypatch.setenv(tree_cache.DISABLE_VARIABLE, "1")
    assert not compile_tree(game).from_cache
    assert not compile_tree(game, cache=False).from_cache


def test_an_unwritable_cache_directory_falls_back_to_building_with_one_warning_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # .../a-file/cfr-agents/trees cannot be made
    first = compile_tree(adapters.load_game("openspiel:kuhn_poker"))
    second = compile_tree(adapters.load_game("openspiel:leduc_poker"))
    [warning] = warning_lines(capsys)
    assert warning.startswith(
        f"cfr-agents: warning: cannot store compiled trees in {str(blocker / 'cfr-agents' / 'trees')!r}"
    )
    assert not first.from_cache and not second.from_cache
    assert_same_tree(first, compile_tree(adapters.load_game("openspiel:kuhn_poker"), cache=False))


def test_an_entry_path_taken_by_a_directory_falls_back_to_building(
    cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = adapters.load_game("openspiel:kuhn_poker")
    tree_cache.entry_path(tree_cache.header(game)).mkdir(parents=True)
    tree = compile_tree(game)
    [warning] = warning_lines(capsys)
    assert warning.startswith("cfr-agents: warning: cannot store compiled trees") and "it is a directory" in warning
    assert not tree.from_cache and tree.num_infosets == 12


def test_the_cache_lives_under_xdg_cache_home_or_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert tree_cache.directory() == tmp_path / "xdg" / "cfr-agents" / "trees"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for unset in ("", "relative/path"):
        monkeypatch.setenv("XDG_CACHE_HOME", unset)
        assert tree_cache.directory() == tmp_path / "home" / ".cache" / "cfr-agents" / "trees"


class RenamedLeduc(OpenSpielGame):
    """Another adapter class: its tree need not follow from the header, so it is never cached."""


def test_other_adapters_are_always_built(cache_home: Path) -> None:
    game = RenamedLeduc("kuhn_poker")
    assert not tree_cache.cacheable(game)
    compile_tree(game)
    assert not compile_tree(game).from_cache
    assert entries(cache_home) == []


def test_no_home_directory_falls_back_to_building(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(Path, "home", no_home)
    tree = compile_tree(adapters.load_game("openspiel:kuhn_poker"))
    assert warning_lines(capsys) == [
        "cfr-agents: warning: no directory for the tree cache (Could not determine home directory.); "
        "building compiled trees instead"
    ]
    assert not tree.from_cache and tree.num_infosets == 12


class UserKuhn(BridgedGame):
    """A ``pyspiel`` game written in Python outside OpenSpiel and cfr-agents."""


def test_python_games_from_elsewhere_are_always_built(cache_home: Path) -> None:
    assert tree_cache.cacheable(adapters.load_game("openspiel:python_rlcard_kuhn_poker"))
    game = OpenSpielGame("kuhn_poker")
    game.pyspiel_game = UserKuhn(adapters.load_game("rlcard:kuhn-poker"))
    assert not tree_cache.cacheable(game)
    assert compile_tree(game).num_infosets == 12
    assert entries(cache_home) == []


def test_no_tree_cache_on_the_command_line_neither_reads_nor_writes_the_cache(cache_home: Path) -> None:
    from tests.support import run_cli

    argv = ["exploitability", "random", "--game", "openspiel:leduc_poker", "--json"]
    assert run_cli(["--no-tree-cache", *argv]).status == 0
    assert not any(cache_home.rglob("*.npz")) and tree_cache.DISABLE_VARIABLE not in os.environ  # restored after
    loaded_tree.cache_clear()
    assert run_cli(argv).status == 0
    assert len(list(cache_home.rglob("*.npz"))) == 1


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("train", ["train", "--no-tree-cache"]),  # said before argparse would ask for --out
        ("exploitability", ["exploitability", "random", "--game", "openspiel:kuhn_poker", "--no-tree-cache"]),
        ("plot curves", ["plot", "curves", "--no-tree-cache", "--curve", "c.csv", "--out", "c.png"]),
    ],
)
def test_no_tree_cache_after_the_command_says_it_goes_before(command: str, argv: list[str], cache_home: Path) -> None:
    from tests.support import run_cli

    run = run_cli(argv)
    assert run.status == 2 and run.out == ""
    assert run.err == (
        f"cfr-agents: error: {command}: --no-tree-cache is an option of cfr-agents itself: give it before the "
        f"command (cfr-agents --no-tree-cache {command} ...)\n"
    )
    assert not cache_home.exists()


def test_payoff_blocks_are_cached_beside_their_tree(cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The full-tree solver's payoff blocks are stored once and loaded after, array for array; the tree's entry
    and the blocks' entry keep each other; a stored entry whose indices would read outside the tree is rebuilt."""
    from cfr_agents.solvers import payoff_blocks as blocks_module

    game = adapters.load_game("rlcard:leduc-holdem")
    fresh = blocks_module._lay_out(compile_tree(game, cache=False))
    tree = compile_tree(game)
    blocks_module.payoff_blocks(tree)
    assert len(entries(cache_home)) == 2
    blocks_module.payoff_blocks.cache_clear()
    with monkeypatch.context() as patched:
        patched.setattr(blocks_module, "_lay_out", lambda tree: pytest.fail("laid out again"))
        loaded = blocks_module.payoff_blocks(compile_tree(game))
    for name, array in blocks_module._to_arrays(fresh).items():
        assert np.array_equal(getattr(loaded, name), array), name
    (path,) = set(entries(cache_home)) - {tree_cache.entry_path(tree_cache.header(game))}
    with np.load(path, allow_pickle=False) as entry:
        header = json.loads(str(entry["header"][()]))
        stored = {name: entry[name] for name in entry.files if name != "header"}
    stored["entry_column"] = stored["entry_column"] + tree.num_sequences  # past the end of x
    assert tree_cache._write(path, header, stored)
    blocks_module.payoff_blocks.cache_clear()
    rebuilt = blocks_module.payoff_blocks(compile_tree(game))
    assert np.array_equal(rebuilt.entry_column, fresh.entry_column)
    assert len(entries(cache_home)) == 2


def nash_conv_after_cfr_plus(tree: CompiledTree) -> float:
    solver = make_solver(tree, "cfr+")
    solver.run(200)
    return exploitability(solver.average_policy(), tree).nash_conv


def test_an_entry_whose_arrays_were_edited_under_its_header_is_rebuilt(
    cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The header's digest of the arrays catches values that still make a tree: here the players' payoffs
    swapped, which would have the solver converge to the wrong game."""
    game = adapters.load_game("openspiel:kuhn_poker")
    right = nash_conv_after_cfr_plus(compile_tree(game, cache=False))
    compile_tree(game)
    (path,) = entries(cache_home)
    stored = members(path)
    stored["terminal_utility"] = stored["terminal_utility"][::-1].copy()
    with path.open("wb") as handle:
        np.savez(handle, allow_pickle=False, **stored)  # the header, digest and all, as it was
    warning_lines(capsys)
    tree = compile_tree(game)
    assert nash_conv_after_cfr_plus(tree) == pytest.approx(right, rel=0, abs=1e-12)
    assert not tree.from_cache
    assert warning_lines(capsys) == [
        f"cfr-agents: warning: tree cache entry {str(path)!r} is damaged (its arrays differ from the digest in its "
        "header); building it anew"
    ]
    assert compile_tree(game).from_cache  # replaced


def _first_chance_edge(arrays: dict[str, NDArray[Any]]) -> int:
    parents = np.repeat(np.arange(arrays["node_kind"].size), np.diff(arrays["child_start"]))
    return int(np.flatnonzero(arrays["node_kind"][parents] == 0)[0])


def _terminal_sequence_of_the_other_player(arrays: dict[str, NDArray[Any]]) -> None:
    sequences = arrays["terminal_sequence"]
    played = np.flatnonzero(sequences[1] != sequences[1].max())
    sequences[0, played[0]] = sequences[1, played[0]]


def _without_the_last_terminal(arrays: dict[str, NDArray[Any]]) -> None:
    for name in ("terminal_sequence", "terminal_chance", "terminal_utility"):
        arrays[name] = arrays[name][..., :-1].copy()


CORRUPTIONS: dict[str, Callable[[dict[str, NDArray[Any]]], None]] = {
    "a child index past the nodes": lambda a: a["child_node"].__setitem__(-1, a["node_kind"].size + 5),
    "a child that is the root": lambda a: a["child_node"].__setitem__(-1, 0),
    "a parent sequence past the sequences": lambda a: a["parent_sequence"].__setitem__(-1, 10**9),
    "a terminal sequence of the other player": _terminal_sequence_of_the_other_player,
    "a node's infoset past the infosets": lambda a: a["node_infoset"].__setitem__(
        int(np.flatnonzero(a["node_kind"] == 1)[0]), a["action_mask"].shape[0]
    ),
    "an action mask wider than its legal actions": lambda a: (
        a["action_mask"].__setitem__((0, slice(None)), True)
        or a["action_set_width"].__setitem__(a["infoset_action_set"][0], a["action_mask"].shape[1] + 1)
    ),
    "chance probabilities that do not sum to 1": lambda a: a["child_probability"].__setitem__(
        _first_chance_edge(a), 0.9
    ),
    "a level of a third player": lambda a: a["levels"].__setitem__((0, 0), 2),
    "a terminal numbered twice": lambda a: a["node_terminal"].__setitem__(
        int(np.flatnonzero(a["node_kind"] == 2)[1]), 0
    ),
    "terminal arrays shorter than the terminals": _without_the_last_terminal,
}


@pytest.mark.parametrize("corruption", CORRUPTIONS)
def test_an_entry_whose_arrays_do_not_make_a_tree_is_rebuilt(
    corruption: str, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Arrays stored with a digest of their own (as a faulty writer would store them) are checked as a tree:
    an index out of range would otherwise fail in the solver, or read the wrong numbers."""
    game = adapters.load_game("openspiel:kuhn_poker")
    built = compile_tree(game)
    (path,) = entries(cache_home)
    stored = members(path)
    header = json.loads(str(stored.pop("header")[()]))
    header.pop("digest", None)  # _write gives the edited arrays a digest of their own
    CORRUPTIONS[corruption](stored)
    assert tree_cache._write(path, header, stored)
    warning_lines(capsys)
    rebuilt = compile_tree(game)
    assert not rebuilt.from_cache
    assert_same_tree(rebuilt, built)
    assert nash_conv_after_cfr_plus(rebuilt) < 0.01
    [warning] = warning_lines(capsys)
    assert warning.startswith(f"cfr-agents: warning: tree cache entry {str(path)!r} is damaged (")
    assert compile_tree(game).from_cache


def finishes(call: Callable[[], T], fifos: list[Path], seconds: float = 30.0) -> T:
    """``call()`` in a thread. If it has not returned after ``seconds`` -- blocked opening a FIFO -- the FIFOs
    are opened for writing to release it and the test fails."""
    result: list[T] = []
    thread = threading.Thread(target=lambda: result.append(call()), daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(seconds)
        pytest.fail(f"still waiting after {seconds} s: a FIFO was opened")
    assert result, "the call failed"
    return result[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_at_an_entrys_name_is_never_opened(cache_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = adapters.load_game("openspiel:kuhn_poker")
    path = tree_cache.entry_path(tree_cache.header(game))
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    tree = finishes(lambda: compile_tree(game), [path])
    assert not tree.from_cache and tree.num_infosets == 12
    [warning] = warning_lines(capsys)  # it cannot be replaced either: the tree is built each time
    assert warning.startswith("cfr-agents: warning: cannot store compiled trees") and "it is a FIFO" in warning


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_among_the_superseded_entries_is_never_opened(cache_home: Path) -> None:
    game = adapters.load_game("openspiel:kuhn_poker")
    path = tree_cache.entry_path(tree_cache.header(game))
    fifo = path.with_name(f"{path.name.rsplit('-', 1)[0]}-{'0' * 32}.npz")  # named as an older entry would be
    path.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    tree = finishes(lambda: compile_tree(game), [fifo])
    assert not tree.from_cache
    assert entries(cache_home) == sorted([path, fifo])
    assert compile_tree(game).from_cache


def test_an_entry_declaring_more_than_it_holds_is_refused_before_it_is_read(
    cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One array's header claims 256 MiB in an entry of a few kilobytes: it is refused without allocating
    them."""
    game = adapters.load_game("openspiel:kuhn_poker")
    built = compile_tree(game)
    (path,) = entries(cache_home)
    stored = members(path)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for name, array in stored.items():
            with archive.open(f"{name}.npy", "w") as member:
                if name == "child_node":
                    claim = {"descr": array.dtype.str, "fortran_order": False, "shape": (2**25,)}
                    np.lib.format.write_array_header_1_0(member, claim)
                    member.write(array.tobytes())
                else:
                    np.lib.format.write_array(member, array, allow_pickle=False)
    warning_lines(capsys)
    tracemalloc.start()
    try:
        tree = compile_tree(game)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20
    assert not tree.from_cache
    assert_same_tree(tree, built)
    (warning,) = warning_lines(capsys)
    assert warning.startswith(
        f"cfr-agents: warning: tree cache entry {str(path)!r} is damaged (member 'child_node.npy' declares "
        f"{stored['child_node'].dtype}[{2**25}], not what its"
    )
    assert warning.endswith("bytes hold); building it anew")


def test_an_entry_larger_than_the_limit_is_neither_read_nor_stored(
    cache_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    game = adapters.load_game("openspiel:kuhn_poker")
    compile_tree(game)
    (path,) = entries(cache_home)
    stored_before = path.read_bytes()
    monkeypatch.setattr(tree_cache, "MAX_ENTRY_BYTES", len(stored_before) - 1)
    warning_lines(capsys)
    assert not compile_tree(game).from_cache
    [warning] = warning_lines(capsys)
    assert warning.startswith(f"cfr-agents: warning: tree cache entry {str(path)!r} is ")
    assert "more than the" in warning and warning.endswith("; building it anew")
    assert path.read_bytes() == stored_before and entries(cache_home) == [path]  # not stored again
