"""The on-disk tree cache: a cached tree is the built tree, field for field; damaged entries are
rebuilt, a version change misses, the off switch and an unwritable directory are honoured."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import adapters
from adapters.openspiel import OpenSpielGame
from adapters.pyspiel_game import BridgedGame
from cfr_agents import tree_cache
from cfr_agents.tree import compile_tree, load_tree
from tests.support import assert_same_tree

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
    load_tree.cache_clear()
    yield tmp_path / "xdg" / "cfr-agents" / "trees"
    load_tree.cache_clear()


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.npz")) if directory.is_dir() else []


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
    load_tree.cache_clear()
    loaded = load_tree("openspiel:kuhn_poker")
    assert not built.from_cache and loaded.from_cache
    assert_same_tree(loaded, built)


def test_an_entry_is_an_npz_without_pickles_holding_its_json_header(cache_home: Path) -> None:
    game = adapters.load_game("openspiel:leduc_poker")
    compile_tree(game)
    (path,) = entries(cache_home)
    with np.load(path, allow_pickle=False) as entry:
        header = json.loads(str(entry["header"][()]))
        assert all(entry[name].dtype != object for name in entry.files)
    assert header == tree_cache.header(game)
    assert header["game_id"] == "openspiel:leduc_poker"
    assert header["rules_fingerprint"] == game.rules_fingerprint
    assert header["format"] == tree_cache.FORMAT_VERSION
    assert set(header["versions"]) == {"cfr-agents", "open_spiel", "rlcard", "numpy"}
    assert path == tree_cache.entry_path(header)


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(b"not a zip file" * 100)
    else:  # one byte flipped in the middle of the arrays: the zip checksum no longer matches
        middle = len(data) // 2
        path.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1 :])


@pytest.mark.parametrize("how", ["truncated", "empty", "garbage", "flipped"])
def test_a_damaged_entry_is_rebuilt_and_replaced(how: str, cache_home: Path) -> None:
    game = adapters.load_game("openspiel:leduc_poker")
    built = compile_tree(game)
    (path,) = entries(cache_home)
    damage(path, how)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rebuilt = compile_tree(game)
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


def test_an_unwritable_cache_directory_falls_back_to_building_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # .../a-file/cfr-agents/trees cannot be made
    with pytest.warns(tree_cache.TreeCacheWarning, match="cannot store compiled trees") as caught:
        first = compile_tree(adapters.load_game("openspiel:kuhn_poker"))
        second = compile_tree(adapters.load_game("openspiel:leduc_poker"))
    assert len(caught) == 1
    assert not first.from_cache and not second.from_cache
    assert_same_tree(first, compile_tree(adapters.load_game("openspiel:kuhn_poker"), cache=False))


def test_an_entry_path_taken_by_a_directory_falls_back_to_building(cache_home: Path) -> None:
    game = adapters.load_game("openspiel:kuhn_poker")
    tree_cache.entry_path(tree_cache.header(game)).mkdir(parents=True)
    with pytest.warns(tree_cache.TreeCacheWarning):
        tree = compile_tree(game)
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


def test_no_home_directory_falls_back_to_building(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(Path, "home", no_home)
    with pytest.warns(tree_cache.TreeCacheWarning, match="no directory for the tree cache"):
        tree = compile_tree(adapters.load_game("openspiel:kuhn_poker"))
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
    load_tree.cache_clear()
    assert run_cli(argv).status == 0
    assert len(list(cache_home.rglob("*.npz"))) == 1


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
