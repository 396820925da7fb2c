"""No command writes over one of its own inputs, and plots are written in the format their suffix names.

The cases are generated from :func:`cfr_agents.cli.build_parser`: every command's path arguments are
declared inputs or outputs (:mod:`cfr_agents.cli.paths`), and every pair (output, input) of every
command is tried with the output naming the input itself, a symlink to it, and a hard link to it. A
command added later is covered as soon as it declares its paths, and
:func:`test_every_string_argument_is_declared_a_path_or_not` fails until it does. What an input makes a
command read beside it is an input too: the weights its model sidecar names, the tree cache's entries.
"""

from __future__ import annotations

import argparse
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cfr_agents import tree_cache
from cfr_agents.cli import build_parser
from cfr_agents.cli.paths import HOLDS, ROLE, UPDATES, path_actions
from eval.opponents.registry import MODELS
from tests.support import run_cli

NOT_PATHS = {
    ("train", "game"),
    ("train", "averaging"),
    ("train", "preset"),
    ("train", "hidden"),
    ("train", "advantage_init"),
    ("train", "inputs"),
    ("train", "traversal"),
    ("train", "ray"),
    ("exploitability", "game"),
    ("opponents", "game"),
    ("best-response", "game"),
    ("train-opponent", "game"),
    ("train-opponent", "preset"),
    ("match", "game"),
    ("tournament", "game"),
    ("tournament", "ray"),
    ("exploit", "game"),
    ("plot strategy", "line"),
    ("sweep", "game"),
    ("sweep", "seeds"),
    ("sweep", "grid"),
    ("sweep", "ray"),
    ("lbr", "game"),
    ("play", "game"),
    ("report", "game"),
    ("serve", "host"),
    ("serve", "dir"),
    ("serve", "out"),
    ("abstraction build", "game"),
    ("abstraction build", "buckets"),
}
"""Arguments that take free text but name no file: ``(command, dest)``."""


def leaf_commands(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``("plot curves", parser)`` and the like: every command that runs, with the words that name it."""
    nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not nested:
        yield " ".join(words), parser
    for action in nested:
        for name, child in action.choices.items():
            yield from leaf_commands(child, (*words, name))


COMMANDS = dict(leaf_commands(build_parser()))


def _takes_text(action: argparse.Action) -> bool:
    return (
        not isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction))
        and action.nargs != 0
        and action.type is None
        and action.choices is None
    )


def test_every_string_argument_is_declared_a_path_or_not() -> None:
    undeclared = [
        (name, action.dest)
        for name, parser in COMMANDS.items()
        for action in parser._actions
        if _takes_text(action) and getattr(action, ROLE, None) is None and (name, action.dest) not in NOT_PATHS
    ]
    assert not undeclared, "declare these with add_input/add_output, or list them in NOT_PATHS"
    stale = [key for key in NOT_PATHS if key[0] not in COMMANDS or not _has(COMMANDS[key[0]], key[1])]
    assert not stale


def _has(parser: argparse.ArgumentParser, dest: str) -> bool:
    return any(action.dest == dest for action in parser._actions)


def _filler(action: argparse.Action) -> str:
    """A value the parser accepts for ``action`` (no command runs: the overwrite check comes first)."""
    if action.choices is not None:
        return str(next(iter(action.choices)))
    if action.dest == "game":
        return "openspiel:kuhn_poker"
    return "4" if action.type is not None else "x"


def _argv(name: str, parser: argparse.ArgumentParser, given: dict[str, str]) -> list[str]:
    """``name``'s words, then a value for every required argument and every argument in ``given``."""
    groups = [g for g in parser._mutually_exclusive_groups if g.required]
    first_of_group = {id(g._group_actions[0]) for g in groups}
    argv = name.split()
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        needed = action.required or id(action) in first_of_group
        if action.dest not in given and not needed:
            continue
        value = given.get(action.dest) or _filler(action)
        argv += [*action.option_strings[:1], value]
    return argv


CASES = [
    pytest.param(name, output.dest, input_.dest, link, id=f"{name}-{output.dest}-{input_.dest}-{link}")
    for name, parser in COMMANDS.items()
    for output in path_actions(parser, "output")
    for input_ in path_actions(parser, "input")
    if getattr(output, UPDATES) != input_.dest
    for link in ("same", "symlink", "hardlink")
]


def test_there_are_cases_for_the_reported_commands() -> None:
    commands = {case.values[0] for case in CASES}
    assert {"plot curves", "plot strategy", "best-response", "train", "tournament"} <= commands


@pytest.mark.parametrize(("name", "output", "input_", "link"), CASES)
def test_no_output_may_be_an_input(tmp_path: Path, name: str, output: str, input_: str, link: str) -> None:
    parser = COMMANDS[name]
    [action] = [a for a in parser._actions if a.dest == output]
    holds: tuple[str, ...] = getattr(action, HOLDS)
    if holds:  # an output directory is refused when a file it writes there is the input
        (tmp_path / "out").mkdir()
        place, out = tmp_path / "out" / holds[0], str(tmp_path / "out")
    else:
        place = tmp_path / "output.json"
        out = str(place)
    source = place if link == "same" else tmp_path / "input.json"
    source.write_text("the input\n")
    if link != "same":
        (os.symlink if link == "symlink" else os.link)(source, place)
    status, _, err = run_cli(_argv(name, parser, {input_: str(source), output: out}))
    assert status == 2, err
    assert err.count("\n") == 1 and "would overwrite the input" in err, err
    assert source.read_text() == "the input\n"


@pytest.mark.parametrize("family", ["deep-cfr_leduc_poker", "openspiel-nfsp_leduc_poker"])
def test_a_models_weights_are_the_file_its_sidecar_names(tmp_path: Path, family: str) -> None:
    """A renamed sidecar (``mv sd.json model.json``) still reads ``sd.safetensors``: no output may land there."""
    weights, sidecar = tmp_path / f"{family}.safetensors", tmp_path / "model.json"
    shutil.copy(MODELS / weights.name, weights)
    shutil.copy(MODELS / f"{family}.json", sidecar)
    before = weights.read_bytes()
    for argv in (
        ["best-response", str(sidecar), "--out", str(weights)],
        ["match", str(sidecar), "random", "--hands", "4", "--log", str(weights)],
    ):
        status, _, err = run_cli(argv)
        assert status == 2 and err.count("\n") == 1, err
        assert f"would overwrite the input {str(weights)!r} (the weights of {str(sidecar)!r})" in err, err
    assert weights.read_bytes() == before


def test_a_tree_cache_entry_is_an_input(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    argv = ["best-response", "random", "--game", "openspiel:kuhn_poker", "--out"]
    assert run_cli([*argv, str(tmp_path / "br.json")]).status == 0  # compiles the tree, and caches it
    [entry] = tree_cache.directory().glob("*.npz")
    before = entry.read_bytes()
    status, _, err = run_cli([*argv, str(entry)])
    assert status == 2 and err.count("\n") == 1 and "(a tree-cache entry)" in err, err
    assert entry.read_bytes() == before


def test_resume_may_checkpoint_into_the_file_it_resumes(tmp_path: Path) -> None:
    checkpoint = tmp_path / "k.npz"
    base = ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--quiet", "--checkpoint", str(checkpoint)]
    assert run_cli([*base, "--iterations", "5", "--out", str(tmp_path / "a.json")]).status == 0
    again = ["train", "--resume", str(checkpoint), "--checkpoint", str(checkpoint), "--quiet"]
    assert run_cli([*again, "--iterations", "9", "--out", str(tmp_path / "b.json")]).status == 0
    refused = run_cli(["train", "--resume", str(checkpoint), "--iterations", "12", "--out", str(checkpoint)])
    assert refused.status == 2 and "would overwrite the input" in refused.err


def test_the_weights_a_model_writes_beside_its_sidecar_may_not_be_an_input(tmp_path: Path) -> None:
    """``train --out m.json`` writes a neural model's weights to ``m.safetensors``: that file is an output too."""
    pytest.importorskip("torch")
    checkpoint = tmp_path / "m.safetensors"  # a checkpoint, whatever its name
    base = ["train", "--game", "openspiel:kuhn_poker", "--algo", "sd-cfr", "--preset", "fast", "--traversals", "50"]
    base += ["--quiet", "--checkpoint", str(checkpoint)]
    assert run_cli([*base, "--iterations", "1", "--out", str(tmp_path / "a.json")]).status == 0
    before = checkpoint.read_bytes()
    refused = run_cli(["train", "--resume", str(checkpoint), "--iterations", "2", "--out", str(tmp_path / "m.json")])
    assert refused.status == 2 and refused.err.count("\n") == 1, refused.err
    assert f"would overwrite the input {str(checkpoint)!r}" in refused.err
    assert checkpoint.read_bytes() == before and not (tmp_path / "m.json").exists()


@pytest.fixture(scope="module")
def curve(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("curve") / "kuhn.csv"
    argv = ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr+", "--iterations", "50", "--quiet"]
    assert run_cli([*argv, "--out", str(path.with_suffix(".json")), "--curve", str(path)]).status == 0
    return path


@pytest.mark.parametrize(
    ("suffix", "magic"), [(".png", b"\x89PNG"), (".pdf", b"%PDF"), (".svg", b"<?xml"), (".PS", b"%!PS")]
)
def test_plots_are_written_in_the_format_their_suffix_names(
    curve: Path, tmp_path: Path, suffix: str, magic: bytes
) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / f"curves{suffix}"
    assert run_cli(["plot", "curves", str(curve), "--out", str(out)]).status == 0
    assert out.read_bytes().startswith(magic)


@pytest.mark.parametrize("name", ["curves.jpg", "curves", "curves.png.txt"])
def test_a_suffix_that_names_no_format_is_refused(curve: Path, tmp_path: Path, name: str) -> None:
    pytest.importorskip("matplotlib")
    status, _, err = run_cli(["plot", "curves", str(curve), "--out", str(tmp_path / name)])
    assert status == 2 and err.count("\n") == 1 and ".png, .pdf" in err, err
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("out", ["", "."])
def test_an_output_that_names_no_file_is_refused_in_one_line(out: str) -> None:
    """``--out ''`` names no file to write the weights beside: refused as the directory it is, not a traceback."""
    status, _, err = run_cli(
        ["train", "--game", "openspiel:kuhn_poker", "--algo", "cfr", "--iterations", "3", "--out", out]
    )
    assert status == 2 and "is a directory" in err and len(err.strip().splitlines()) == 1, err
