"""Public-tree strategy files: float32 probabilities in a ``.npz`` with a JSON sidecar, read back renormalised,
refused in one line when anything does not fit, played as an OpenSpiel policy worth the engine's NashConv."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import cfr_agents.public_tree.strategy_file as strategy_file
from adapters.games import canonical_game_id
from adapters.inputs import InputError
from adapters.openspiel import PREFIX
from cfr_agents.public_tree.engine import Engine, normalised, own_placement, profile
from cfr_agents.public_tree.solver import PublicTreeSolver
from cfr_agents.public_tree.strategy_file import StrategyFileError, load_strategy, save_strategy
from cfr_agents.public_tree.tree import PublicTree, build_public_tree
from cfr_agents.solvers import ALGORITHMS
from tests.test_holdem_agents import ONE_RAISE

GAME = "holdem-6"


@cache
def tree(game: str = GAME) -> PublicTree:
    return build_public_tree(canonical_game_id(game).removeprefix(PREFIX))


@cache
def solver(game: str = GAME) -> PublicTreeSolver:
    solved = PublicTreeSolver(tree(game), ALGORITHMS["cfr+"], "cfr+")
    solved.run(5)
    return solved


def average() -> np.ndarray:
    return solver().average_strategy()


def save(path: Path, strategy: np.ndarray | None = None, game: str = GAME) -> Path:
    save_strategy(
        path,
        tree(game),
        solver(game).average_strategy() if strategy is None else strategy,
        algorithm="cfr+",
        parameters=solver(game).parameters(),
        iterations=solver(game).iteration,
        extra={"seconds": 1.5},
    )
    return path


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    return save(tmp_path / "h.npz")


def test_a_strategy_loads_back_to_float32_precision_with_each_distribution_summing_to_1(saved: Path) -> None:
    original = average()
    with np.load(saved, allow_pickle=False) as archive:
        assert archive.files == ["probabilities"] and archive["probabilities"].dtype == np.float32
    for named in (saved, saved.with_suffix(".json")):
        loaded = load_strategy(named)
        assert loaded.strategy.dtype == np.float64 and loaded.strategy.shape == (tree().size,)
        assert np.abs(loaded.strategy - original).max() <= 2.0**-24 * 2
        assert np.abs(normalised(loaded.tree, loaded.strategy) - loaded.strategy).max() < 1e-15
        stored = original.astype(np.float32).astype(np.float64)
        assert np.abs(normalised(loaded.tree, stored) - loaded.strategy).max() < 1e-15
        assert loaded.game_id == canonical_game_id(GAME) and loaded.tree.canonical
        assert (loaded.algorithm, loaded.iterations) == ("cfr+", 5)
        assert loaded.parameters == json.loads(json.dumps(solver().parameters()))
        assert loaded.header["extra"] == {"seconds": 1.5}


def test_an_array_written_and_read_in_many_chunks_is_numpys_array(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The archive is written and read a chunk at a time (no float32 copy of a whole FHP strategy): with chunks of
    1,000 entries, NumPy reads back the float32 array, and the loader renormalises it as it does any file."""
    monkeypatch.setattr(strategy_file, "_CHUNK", 1000)
    path = save(tmp_path / "chunked.npz")
    with np.load(path, allow_pickle=False) as archive:
        assert np.array_equal(archive["probabilities"], average().astype(np.float32))
    loaded = load_strategy(path)
    assert np.array_equal(loaded.strategy, normalised(loaded.tree, average().astype(np.float32).astype(np.float64)))


def test_a_path_that_is_neither_file_of_the_pair_is_refused(tmp_path: Path) -> None:
    for call in (lambda: load_strategy(tmp_path / "h.txt"), lambda: save(tmp_path / "h")):
        with pytest.raises(StrategyFileError, match=r"\.npz archive and its \.json sidecar: .* names neither"):
            call()
    assert list(tmp_path.iterdir()) == []


def sidecar_of(npz: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(npz.with_suffix(".json").read_text())
    return data


def edit_sidecar(npz: Path, **changes: object) -> None:
    npz.with_suffix(".json").write_text(json.dumps(sidecar_of(npz) | changes))


def forge(npz: Path, compress: bool = False, **arrays: Any) -> None:
    """Replace the archive and name its SHA-256 in the sidecar: a file made to pass the digest check."""
    (np.savez_compressed if compress else np.savez)(npz, **arrays)
    edit_sidecar(npz, npz_sha256=hashlib.sha256(npz.read_bytes()).hexdigest())


def stored(npz: Path) -> np.ndarray:
    with np.load(npz, allow_pickle=False) as archive:
        array: np.ndarray = archive["probabilities"].copy()
    return array


def root_row(hand: int) -> np.ndarray:
    """The entries of the first decision (the root, where the small blind acts first) for one hand."""
    actions = int(tree().betting.num_children[0])
    indices: np.ndarray = np.arange(actions) * tree().num_hands + hand
    return indices


def with_row(npz: Path, values: list[float]) -> None:
    probabilities = stored(npz)
    probabilities[root_row(3)] = values
    forge(npz, probabilities=probabilities)


def flip_a_byte(npz: Path) -> None:
    content = bytearray(npz.read_bytes())
    content[len(content) // 2] ^= 0x01
    npz.write_bytes(bytes(content))


def two_members(npz: Path) -> None:
    forge(npz, probabilities=stored(npz), more=np.zeros(2))


def not_a_zip(npz: Path) -> None:
    npz.write_bytes(b"\x93NUMPY" + bytes(100))
    edit_sidecar(npz, npz_sha256=hashlib.sha256(npz.read_bytes()).hexdigest())


REFUSALS: dict[str, tuple[Callable[[Path], object], str]] = {
    "missing sidecar": (lambda npz: npz.with_suffix(".json").unlink(), "sidecar '{json}' does not exist"),
    "missing arrays": (lambda npz: npz.unlink(), "strategy '{npz}' does not exist"),
    "sidecar not JSON": (lambda npz: npz.with_suffix(".json").write_text("{"), "'{json}' is not valid JSON"),
    "another format": (lambda npz: edit_sidecar(npz, format="x"), "is not a cfr-agents-public-strategy sidecar"),
    "another version": (lambda npz: edit_sidecar(npz, format_version=2), "format_version 2; this version reads 1"),
    "a field missing": (lambda npz: edit_sidecar(npz, layout_fingerprint=None), "no valid 'layout_fingerprint'"),
    "a flipped byte": (flip_a_byte, "strategy '{npz}' has SHA-256 "),
    "other rules": (lambda npz: edit_sidecar(npz, rules_fingerprint="sha256:0"), "made for rules sha256:0 of "),
    "another layout": (
        lambda npz: edit_sidecar(npz, layout_fingerprint="sha256:" + "0" * 64),
        "has layout sha256:000",
    ),
    "every board": (lambda npz: edit_sidecar(npz, canonical=False), "but the public tree of openspiel:universal_poker"),
    "another size": (
        lambda npz: edit_sidecar(npz, size=tree().size + 1),
        "declares {bigger:,} entries, but the public tree has {size:,}",
    ),
    "another dtype": (lambda npz: edit_sidecar(npz, dtype="float64"), "dtype 'float64'; this version reads float32"),
    "float64 array": (
        lambda npz: forge(npz, probabilities=stored(npz).astype(np.float64)),
        "as float64[{size}], not float32[{size}]",
    ),
    "short array": (
        lambda npz: forge(npz, probabilities=stored(npz)[:-1]),
        "as float32[{smaller}], not float32[{size}]",
    ),
    "a pickle": (
        lambda npz: forge(npz, probabilities=np.array([{"a": 1}], dtype=object)),
        "as Python objects, which only pickle could load",
    ),
    "compressed": (lambda npz: forge(npz, True, probabilities=stored(npz)), "compressed; it is stored as it is"),
    "two arrays": (two_members, "holds the arrays ['more', 'probabilities'], not ['probabilities']"),
    "not a zip": (not_a_zip, "is not a readable .npz archive"),
    "not finite": (lambda npz: with_row(npz, [np.nan, 0.5, 0.5]), "a probability that is not finite at betting ''"),
    "negative": (lambda npz: with_row(npz, [-0.25, 0.75, 0.5]), "a negative probability at betting ''"),
    "far from 1": (lambda npz: with_row(npz, [0.25, 0.25, 0.25]), "probabilities summing to 0.75 at betting ''"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_damaged_or_foreign_file_is_refused_in_one_line(saved: Path, case: str) -> None:
    damage, message = REFUSALS[case]
    damage(saved)
    with pytest.raises(StrategyFileError) as refused:
        load_strategy(saved)
    text = str(refused.value)
    size = tree().size
    expected = message.format(npz=saved, json=saved.with_suffix(".json"), size=size, bigger=size + 1, smaller=size - 1)
    assert "\n" not in text and expected in text, text


def test_the_information_state_of_a_bad_distribution_is_named(saved: Path) -> None:
    """Hand 3 of holdem-6 at the root: cards 2c 2d 3c 3d 4c 4d are 0 to 5, and hands are pairs of them in
    lexicographic order, (0, 1), (0, 2), (0, 3), (0, 4): 2c4c."""
    with_row(saved, [0.5, 0.5, 0.5])
    with pytest.raises(StrategyFileError, match=r"summing to 1\.5 at betting '', board '', hand '2c4c'$"):
        load_strategy(saved)


@pytest.mark.parametrize("which", ["npz", "json"])
def test_a_file_beyond_its_size_limit_is_refused(saved: Path, monkeypatch: pytest.MonkeyPatch, which: str) -> None:
    path = saved.with_suffix(f".{which}")
    limit = "MAX_STRATEGY_BYTES" if which == "npz" else "MAX_SIDECAR_BYTES"
    monkeypatch.setattr(strategy_file, limit, path.stat().st_size - 1)
    with pytest.raises(StrategyFileError, match=f"is {path.stat().st_size:,} bytes, more than the "):
        load_strategy(saved)


def test_a_file_saved_for_holdem_6_is_refused_for_holdem_8(saved: Path) -> None:
    assert load_strategy(saved, game_id=GAME).game_id == load_strategy(saved, game_id=canonical_game_id(GAME)).game_id
    with pytest.raises(StrategyFileError) as refused:
        load_strategy(saved, game_id="holdem-8")
    assert str(refused.value).endswith(f"is for {canonical_game_id(GAME)}, not {canonical_game_id('holdem-8')}")


def test_what_load_would_refuse_is_never_saved(tmp_path: Path) -> None:
    strategy = average()
    negative = strategy.copy()
    negative[root_row(0)] = [-0.5, 1.0, 0.5]
    not_finite = strategy.copy()
    not_finite[7] = np.inf
    refusals = {
        "a negative probability at betting ''": negative,
        "a probability that is not finite at betting ''": not_finite,
        f"takes {tree().size:,} probabilities": strategy[:-1],
    }
    for message, bad in refusals.items():
        with pytest.raises(StrategyFileError, match=message):
            save(tmp_path / "h.json", bad)
    with pytest.raises(StrategyFileError, match="not JSON"):
        save_strategy(tmp_path / "h.npz", tree(), strategy, algorithm="x", parameters={"a": np.nan}, iterations=1)
    assert list(tmp_path.iterdir()) == []


def test_the_loaded_strategys_nash_conv_in_openspiel_equals_the_engines(tmp_path: Path) -> None:
    """OpenSpiel's own best responses, on pyspiel states, to the strategy read through ``Locator`` (boards mapped
    to canonical boards, hole cards permuted with them), against the engine's on the loaded (float32) array; on
    holdem-6's cards with one raise a round, whose every history OpenSpiel's Python NashConv walks in seconds."""
    loaded = load_strategy(save(tmp_path / "h.npz", game=ONE_RAISE))
    placement = own_placement(loaded.tree)
    both = profile(loaded.strategy, loaded.strategy, placement, placement)
    engine = Engine(loaded.tree)
    ours = sum(engine.best_response_value(player, both) for player in range(2))
    game = pyspiel.load_game(loaded.tree.game_string)
    theirs = openspiel_exploitability.nash_conv(game, loaded.openspiel_policy())
    assert ours > 1.0 and ours == pytest.approx(theirs, abs=1e-9)


def test_a_state_of_another_game_or_where_no_player_acts_is_refused(saved: Path) -> None:
    loaded = load_strategy(saved)
    with pytest.raises(InputError, match="player -1 does not act"):
        loaded.action_probabilities(pyspiel.load_game(loaded.tree.game_string).new_initial_state())
    state = pyspiel.load_game(canonical_game_id("holdem-8").removeprefix(PREFIX)).new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    with pytest.raises(InputError, match="is not a state of"):
        loaded.action_probabilities(state)


def test_an_interrupted_save_leaves_the_previous_files_whole(saved: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C after the new archive is written but before it is renamed into place: the old pair stays."""
    before = {path.name: path.read_bytes() for path in saved.parent.iterdir()}
    real = strategy_file.write_probabilities

    def interrupted(handle: Any, strategy: Any) -> None:
        real(handle, strategy)
        raise KeyboardInterrupt

    monkeypatch.setattr(strategy_file, "write_probabilities", interrupted)
    with pytest.raises(KeyboardInterrupt):
        save(saved, uniform_rows())
    assert {path.name: path.read_bytes() for path in saved.parent.iterdir()} == before
    assert np.abs(load_strategy(saved).strategy - average()).max() < 1e-7


def test_a_save_interrupted_before_its_sidecar_leaves_a_pair_that_is_refused(
    saved: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sidecar is written last: stopped while it is written, the new archive sits beside the old sidecar,
    whole, which names the old archive's digest; the pair is refused, never read as the wrong strategy."""
    sidecar = saved.with_suffix(".json").read_bytes()
    real, calls = os.fsync, []

    def fsync(descriptor: int) -> None:
        calls.append(descriptor)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(descriptor)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        save(saved, uniform_rows())
    monkeypatch.undo()
    assert sorted(path.name for path in saved.parent.iterdir()) == ["h.json", "h.npz"]
    assert saved.with_suffix(".json").read_bytes() == sidecar
    with pytest.raises(StrategyFileError, match=r"has SHA-256 .*, not the .* its sidecar names"):
        load_strategy(saved)


def uniform_rows() -> np.ndarray:
    """Every distribution uniform: the normalised all-ones array."""
    return normalised(tree(), np.ones(tree().size))
