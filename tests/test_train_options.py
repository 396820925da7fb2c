"""Every option of ``train`` with every family of solvers: honoured, or refused in one line with status 2.

The options come from ``train``'s parser and the families from the registries (each full-tree rule of
:data:`~cfr_agents.solvers.ALGORITHMS`, each sampling scheme of :data:`~cfr_agents.solvers.SCHEMES`, each
neural solver of :data:`~cfr_agents.solvers.neural.NEURAL`), so an option or a family added later is tried
here with no new line. What is written by hand is one valid value per option (:data:`VALUES`)."""

from __future__ import annotations

import argparse
import csv
import json
from dataclasses import fields
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from adapters.games import canonical_game_id
from cfr_agents.abstraction import build_abstraction, class_counts, parse_spec, save_abstraction
from cfr_agents.checkpoint import read_checkpoint
from cfr_agents.cli.common import GLOBAL_OPTIONS
from cfr_agents.solvers import ALGORITHMS, SCHEMES
from cfr_agents.solvers.neural import NEURAL
from cfr_agents.solvers.sampling.scale_out import DEFAULT_BATCH_ITERATIONS, DEFAULT_BATCHES
from cfr_agents.training import STOPPED_BY
from eval.train_report import TrainReport
from tests.support import CliRun, cli_commands, run_cli

pytest.importorskip("torch")

KUHN = "openspiel:kuhn_poker"
TINY = ["--traversals", "10", "--advantage-batches", "2", "--advantage-batch-size", "16", "--hidden", "4"]
"""A neural run of milliseconds on Kuhn (and ``--average-batches``, ``--average-batch-size`` for Deep CFR)."""


class Family(NamedTuple):
    name: str
    argv: list[str]
    """What makes a run of this family, after ``train --game kuhn --iterations 2``."""


FAMILIES = [
    *(Family(f"full-tree {rule}", ["--algo", rule]) for rule in ALGORITHMS),
    *(Family(f"sampled {scheme}", ["--algo", "dcfr", "--sampling", scheme]) for scheme in SCHEMES),
    *(
        Family(
            algorithm, ["--algo", algorithm, *TINY, *(["--average-batches", "2"] if algorithm == "deep-cfr" else [])]
        )
        for algorithm in NEURAL
    ),
]
VALUES: dict[str, list[str]] = {
    "--game": ["rlcard:kuhn-poker"],
    "--algo": [],  # the family's own, already given
    "--suit-isomorphism": ["--game", "openspiel:leduc_poker"],
    "--engine": ["tree"],
    "--abstraction": ["abstraction", "--game", "holdem-6", "--sampling", "external"],  # built in the run's folder
    "--sampling": ["external"],
    "--averaging": ["simple"],
    "--epsilon": ["0.5"],
    "--chance-draws": ["stratified"],
    "--workers": ["1"],
    "--batches": ["3"],
    "--batch-iterations": ["5"],
    "--ray": [],
    "--iterations": ["3"],
    "--target-nash-conv": ["5"],
    "--time-limit": ["0.001", "--iterations", "1000000"],
    "--seed": ["7"],
    "--alpha": ["1.25"],
    "--beta": ["0.25"],
    "--gamma": ["1.5"],
    "--out": ["other.json"],
    "--curve": ["c.csv"],
    "--eval-every": ["1", "--curve", "c.csv"],
    "--checkpoint": ["c.npz"],
    "--checkpoint-every": ["0.001", "--checkpoint", "c.npz"],
    "--resume": ["c.npz", "--iterations", "3"],
    "--json": [],
    "--quiet": [],
    "--preset": ["fast"],
    "--traversals": ["7"],
    "--hidden": ["5,3"],
    "--advantage-batches": ["3"],
    "--advantage-batch-size": ["17"],
    "--advantage-memory": ["1000"],
    "--advantage-init": ["last"],
    "--average-batches": ["3"],
    "--average-batch-size": ["17"],
    "--strategy-memory": ["1000"],
    "--learning-rate": ["0.002"],
    "--learning-rate-decay": ["0.5"],
    "--decay-start": ["2"],
    "--gradient-clip": ["5"],
    "--value-scale": ["4"],
    "--threads": ["2"],
    "--kept-networks": ["1"],
    "--inputs": ["cards"],
    "--traversal": ["external"],
}
"""A valid value of each option (and what else it needs to be seen: ``--eval-every`` a curve)."""
EVERY_FAMILY = {"--game", "--algo", "--iterations", "--target-nash-conv", "--time-limit", "--seed", "--out"}
EVERY_FAMILY |= {"--curve", "--eval-every", "--checkpoint", "--checkpoint-every", "--resume", "--json", "--quiet"}
"""Options every family honours: the one training loop's."""


def train_options() -> dict[str, argparse.Action]:
    parser = cli_commands()["train"]
    return {action.option_strings[-1]: action for action in parser._actions if action.option_strings}


OPTIONS = sorted(set(train_options()) - {"-h", "--help", *GLOBAL_OPTIONS})


def test_every_option_has_a_value() -> None:
    assert set(VALUES) == set(OPTIONS)


def run(family: Family, *extra: str, report: bool = True) -> CliRun:
    return run_cli(
        [
            "train",
            "--game",
            KUHN,
            "--iterations",
            "2",
            "--out",
            "p.json",
            *family.argv,
            *extra,
            *(["--json"] if report else []),
        ]
    )


def parsed(option: str) -> Any:
    """The value ``train``'s parser makes of :data:`VALUES`' one for ``option``."""
    namespace = cli_commands()["train"].parse_args(["--out", "x", option, *VALUES[option]])
    value = getattr(namespace, train_options()[option].dest)
    return [int(width) for width in value.split(",")] if option == "--hidden" else value


def honoured(option: str, family: Family, result: CliRun, folder: Path) -> None:
    """The run did what ``option`` asks."""
    if option == "--quiet":
        assert result.err == "" and len(result.out.splitlines()) == 1, result
        return
    report = json.loads(result.out)
    assert set(report) == {field.name for field in fields(TrainReport)} and report["stopped_by"] in STOPPED_BY
    neural = family.name in NEURAL
    dest = train_options()[option].dest
    if option in ("--iterations", "--seed", "--game"):
        assert report[dest] == parsed(option)
    elif option == "--algo":
        assert report["algo"] == family.argv[1]
    elif option == "--suit-isomorphism":
        assert (report["game"], report["policy_game"]) == (
            "openspiel:leduc_poker(suit_isomorphism=True)",
            "openspiel:leduc_poker",
        )
    elif option == "--sampling":
        assert report["sampling"] == "external"
    elif option == "--abstraction":  # MCCFR on the engine, external sampling unless the family samples otherwise
        assert report["game"] == canonical_game_id("holdem-6") and report["sampling"] != "none"
        assert (folder / "p.npz").is_file()
    elif option == "--engine":  # Kuhn runs on the compiled tree; only the public tree's solver names its engine
        assert report["parameters"].get("engine", "tree") == "tree"
    elif option == "--target-nash-conv":  # any strategy of Kuhn has NashConv below 5: met at the first check
        assert report["stopped_by"] == dest and report["iterations"] == 1
    elif option == "--time-limit":
        assert report["stopped_by"] == dest and report["iterations"] < 1_000_000
    elif option == "--out":
        assert (folder / "other.json").is_file() and not (folder / "p.json").exists()
        return
    elif option in ("--curve", "--eval-every"):
        rows = list(csv.DictReader((folder / "c.csv").open()))
        assert rows and rows[-1]["iteration"] == "2" and bool(rows[-1]["nodes_touched"]) == neural
        assert option == "--curve" or [row["iteration"] for row in rows] == ["1", "2"]
    elif option in ("--checkpoint", "--checkpoint-every"):
        assert read_checkpoint(folder / "c.npz").iteration == 2
    elif option == "--resume":
        assert (report["resumed_from"], report["iterations"]) == (1, 3)
        assert read_checkpoint(folder / "c.npz").iteration == 3
    elif option in ("--workers", "--ray"):  # rounds of the default shape, on whatever runs them
        rounds = (report["parameters"]["batches"], report["parameters"]["batch_iterations"])
        assert rounds == (DEFAULT_BATCHES, DEFAULT_BATCH_ITERATIONS)
    elif option == "--preset":
        assert json.loads((folder / "p.json").read_text())["hyperparameters"]["preset"] == "fast"
    elif option != "--json":  # a parameter of the solver, recorded with its policy or model
        assert report["parameters"][dest] == parsed(option), report["parameters"]
    assert (folder / ("p.json" if option != "--out" else "other.json")).is_file()


@pytest.mark.parametrize("option", OPTIONS)
def test_an_option_is_honoured_or_refused_in_one_line_by_every_family(
    option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    if option == "--ray":
        request.getfixturevalue("local_ray")  # the session's Ray runtime (skipped without Ray)
    honouring = []
    for family in FAMILIES:
        folder = tmp_path / family.name.replace(" ", "-")
        folder.mkdir()
        monkeypatch.chdir(folder)
        if option == "--abstraction":
            spec = parse_spec(None, class_counts("holdem-6"))
            save_abstraction(build_abstraction("holdem-6", spec, np.random.default_rng(0)), folder / "abstraction")
        if option == "--resume":  # a checkpoint at iteration 1 (any strategy of Kuhn has NashConv below 5)
            argv = ["--iterations", "3", "--target-nash-conv", "5", "--checkpoint", "c.npz", "--out", "first.json"]
            assert run(family, *argv).status == 0
        result = run(family, *([] if option == "--algo" else [option]), *VALUES[option], report=option != "--quiet")
        if result.status == 2:
            assert (
                result.out == "" and result.err.startswith("cfr-agents: error: ") and len(result.err.splitlines()) == 1
            )
            assert not (folder / "p.json").exists() and not (folder / "other.json").exists(), family
            assert option not in EVERY_FAMILY and option in result.err, (family, result.err)  # the refusal names it
            continue
        assert result.status == 0, (family, result.err)
        honoured(option, family, result, folder)
        honouring.append(family.name)
    assert honouring, f"no family honours {option}"


def test_every_family_reports_the_same_fields_and_stops_by_one_rule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``train --json`` gives one report for every family (the documented fields), and ``stopped_by`` names
    one of the loop's rules."""
    monkeypatch.chdir(tmp_path)
    documented = (Path(__file__).parents[1] / "docs" / "cli.md").read_text()
    for family in FAMILIES:
        report = json.loads(run(family).out)
        assert set(report) == {field.name for field in fields(TrainReport)}, family
        assert report["stopped_by"] == "iterations" and report["iterations_run"] == 2
        assert all(f"`{name}`" in documented for name in report), family
