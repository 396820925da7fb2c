"""The opponent registry and its commands: listing, refusals, training, shipped models, the table."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from adapters.inputs import MissingExtraError
from cfr_agents.cli import main
from eval import exploitability_of_strategy
from eval.opponents import FAMILIES, available, load_opponent, shipped_model
from eval.opponents.provenance import provenance_of
from tests.support import FLOAT32_RTOL, CliRun, cli_commands, game, in_one_process, tree

SHIPPED = [
    ("rlcard-nfsp", "rlcard:leduc-holdem"),
    ("openspiel-nfsp", "openspiel:leduc_poker"),
    ("rlcard-cfr", "rlcard:leduc-holdem"),
    *(
        (kind, game_id)
        for kind in ("deep-cfr", "sd-cfr")
        for game_id in ("openspiel:leduc_poker", "rlcard:leduc-holdem")
    ),
]
NETWORKS = ("nfsp", "deep-cfr", "sd-cfr")
"""Families whose models are torch float32 networks."""


LIMIT = ("rlcard-limit-rule-v1", "always-call", "always-raise")
"""The families of ``rlcard:limit-holdem`` alone."""
LIMIT_MODELS = ("rlcard-nfsp", "rlcard-dqn")
"""The families whose models ship for ``rlcard:limit-holdem`` (``rlcard-dqn`` for it alone)."""


def test_every_family_is_available_where_it_applies() -> None:
    expected = [name for name in FAMILIES if name not in ("openspiel-nfsp", "rlcard-dqn") and name not in LIMIT]
    assert [f.name for f in available("rlcard:leduc-holdem")] == expected
    assert [f.name for f in available("rlcard:limit-holdem")] == ["random", *LIMIT, *LIMIT_MODELS]
    assert [f.name for f in available("openspiel:leduc_poker")] == [
        "random",
        "openspiel-nfsp",
        "deep-cfr",
        "sd-cfr",
        "openspiel-cfr",
        "openspiel-cfr+",
        "openspiel-mccfr-es",
        "openspiel-mccfr-os",
    ]


def test_a_missing_file_is_named_as_given(tmp_path: Path) -> None:
    """A strategy's ``.npz`` that is not there is named, not the sidecar that is read first; a sidecar missing
    beside its ``.npz`` is named as itself."""
    from adapters.inputs import InputError

    absent = tmp_path / "absent.npz"
    with pytest.raises(InputError, match=r"'.*absent\.npz' does not exist"):
        load_opponent(str(absent), "rlcard:limit-holdem")
    absent.write_bytes(b"")
    with pytest.raises(InputError, match=r"'.*absent\.json' does not exist"):
        load_opponent(str(absent), "rlcard:limit-holdem")


def test_opponents_command_lists_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["opponents", "--game", "openspiel:kuhn_poker", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [entry["name"] for entry in listed["opponents"]] == [f.name for f in available("openspiel:kuhn_poker")]


@pytest.mark.parametrize(("kind", "game_id"), SHIPPED)
def test_shipped_models_reproduce_their_recorded_exploitability(kind: str, game_id: str) -> None:
    path = shipped_model(kind, game(game_id))
    data = json.loads(path.read_text())
    provenance = provenance_of(data, str(path))
    assert (provenance.kind, provenance.game) == (kind, game_id)
    assert provenance.training_seconds > 0 and provenance.versions["rlcard"] == "1.2.0"
    opponent = load_opponent(kind, game_id)
    measured = exploitability_of_strategy(tree(game_id), opponent.agent.strategy(tree(game_id)))
    if kind.endswith(NETWORKS):
        # torch float32 networks: the recorded value holds on any CPU only to float32's tolerance.
        assert measured.nash_conv == pytest.approx(provenance.nash_conv, rel=FLOAT32_RTOL)
        assert data["weights"].endswith(".safetensors")
        assert path.with_name(data["weights"]).stat().st_size < 5_000_000  # a few MB: SD-CFR keeps 24 iterations
    else:
        # float64 tables: the same value on any CPU up to float64 rounding, far below 1e-9.
        assert measured.nash_conv == pytest.approx(provenance.nash_conv, abs=1e-9)


def test_exploitability_of_a_named_agent_and_its_json_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exploitability", "rlcard-rule-v2", "--game", "rlcard:leduc-holdem", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) >= {"agent", "game", "units", "nash_conv", "exploitability", "best_response_values"}
    assert (report["agent"], report["game"], report["units"]) == ("rlcard-rule-v2", "rlcard:leduc-holdem", "BB")
    assert report["nash_conv_mbb"] == pytest.approx(1000 * report["nash_conv"])
    assert sum(report["best_response_values"]) - sum(report["policy_values"]) == pytest.approx(report["nash_conv"])
    assert main(["exploitability", "random", "--game", "rlcard:kuhn-poker", "--json", "--cross-check"]) == 0
    checked = json.loads(capsys.readouterr().out)
    assert checked["agree"] and checked["openspiel_game_source"] == "bridged"
    assert checked["nash_conv"] == pytest.approx(11 / 12)  # RandomAgent is uniform: the brief's Kuhn reference


def test_best_response_command_writes_a_policy_worth_the_best_response_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "br.json"
    args = ["best-response", "openspiel-cfr:5", "--game", "openspiel:kuhn_poker", "--out", str(out), "--json"]
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["seat_values"] == pytest.approx(report["best_response_values"], abs=1e-12)
    assert main(["exploitability", str(out), "--json"]) == 0  # a policy file needs no --game
    assert json.loads(capsys.readouterr().out)["agent"] == str(out)


REFUSALS = [
    (["exploitability", "nope", "--game", "rlcard:leduc-holdem"], "unknown opponent 'nope'"),
    (["exploitability", "rlcard-rule-v1", "--game", "openspiel:leduc_poker"], "not available for"),
    (["exploitability", "openspiel-nfsp", "--game", "rlcard:leduc-holdem"], "not available for"),
    (["exploitability", "rlcard-rule-v1"], "needs a game"),
    (["exploitability", "openspiel-cfr:x", "--game", "openspiel:kuhn_poker"], "must be an integer"),
    (["exploitability", "random:3", "--game", "openspiel:kuhn_poker"], "takes no iteration count"),
    (["best-response", "random", "--game", "rlcard:uno", "--out", "x.json"], "unsupported RLCard game"),
    (
        [
            "train-opponent",
            "rlcard-nfsp",
            "--game",
            "openspiel:kuhn_poker",
            "--episodes",
            "5",
            "--seed",
            "0",
            "--out",
            "x.json",
        ],
        "trains on rlcard: games",
    ),
    (
        [
            "train-opponent",
            "rlcard-cfr",
            "--game",
            "rlcard:kuhn-poker",
            "--episodes",
            "5",
            "--seed",
            "0",
            "--out",
            "x.json",
        ],
        "counts --iterations",
    ),
    (
        [
            "train-opponent",
            "rlcard-cfr",
            "--game",
            "rlcard:kuhn-poker",
            "--iterations",
            "5",
            "--seed",
            "0",
            "--target-exploitability",
            "0.1",
            "--out",
            "x.json",
        ],
        "--target-exploitability needs --check-every",
    ),
    (
        [
            "train-opponent",
            "openspiel-nfsp",
            "--game",
            "openspiel:kuhn_poker",
            "--episodes",
            "5",
            "--seed",
            "0",
            "--hyperparameters",
            "nope",
            "--out",
            "x.json",
        ],
        "has no --hyperparameters 'nope'",
    ),
    (["opponents", "--game", "openspiel:nope"], "unknown OpenSpiel game"),
]


@pytest.fixture(scope="module")
def refusal_runs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[Path, CliRun]]:
    """Every command of :data:`REFUSALS`, each in a folder of its own, in one process."""
    folders = [tmp_path_factory.mktemp("refused") for _ in REFUSALS]
    runs = in_one_process([(folder, argv) for folder, (argv, _) in zip(folders, REFUSALS, strict=True)])
    return list(zip(folders, runs, strict=True))


@pytest.mark.parametrize(("argv", "message"), REFUSALS)
def test_refusals_are_one_line_and_exit_2(
    refusal_runs: list[tuple[Path, CliRun]], argv: list[str], message: str
) -> None:
    folder, result = refusal_runs[REFUSALS.index((argv, message))]
    assert result.status == 2, result.err
    assert len(result.err.strip().splitlines()) == 1 and message in result.err, result.err
    assert "Traceback" not in result.err and not (folder / "x.json").exists()


def test_a_torch_opponent_without_torch_is_refused_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    with pytest.raises(MissingExtraError, match=r"pip install 'cfr-agents\[nfsp\]'"):
        load_opponent("rlcard-nfsp", "rlcard:leduc-holdem")
    assert main(["exploitability", "openspiel-nfsp", "--game", "openspiel:leduc_poker"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "openspiel-nfsp needs torch" in error and "cfr-agents[nfsp]" in error


@pytest.mark.parametrize(
    ("kind", "game_id", "amount"),
    [
        ("rlcard-nfsp", "rlcard:kuhn-poker", ["--episodes", "300"]),
        ("openspiel-nfsp", "openspiel:kuhn_poker", ["--episodes", "1500"]),
        ("rlcard-cfr", "rlcard:kuhn-poker", ["--iterations", "30"]),
    ],
)
def test_train_opponent_is_reproducible_and_its_file_is_an_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, game_id: str, amount: list[str]
) -> None:
    """On one machine the same seed trains the same weights, bit for bit (torch float32 on one thread);
    across CPUs float32 kernels differ in their last bits, which the shipped-model test allows for."""
    outputs = []
    for run in ("a", "b"):
        out = tmp_path / f"{run}.json"
        args = ["train-opponent", kind, "--game", game_id, *amount, "--seed", "7", "--out", str(out), "--json"]
        assert main(args) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    first, second = outputs
    assert first["nash_conv"] == second["nash_conv"]
    weights = [tmp_path / f"{run}.safetensors" for run in ("a", "b")]
    if kind.endswith(NETWORKS):
        assert weights[0].read_bytes() == weights[1].read_bytes()
    assert main(["exploitability", str(tmp_path / "a.json"), "--json"]) == 0
    measured = json.loads(capsys.readouterr().out)
    assert measured["nash_conv"] == pytest.approx(first["nash_conv"], abs=1e-12)
    assert (measured["game"], measured["agent"]) == (game_id, str(tmp_path / "a.json"))


def test_opponent_table_rows_and_columns(capsys: pytest.CaptureFixture[str]) -> None:
    names = ["random", "openspiel-cfr+:200", "openspiel-mccfr-es:2000"]
    assert main(["opponents", "--game", "openspiel:kuhn_poker", "--table", *names, "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    rows = {row["name"]: row for row in table["rows"]}
    assert list(rows) == ["random", "openspiel-cfr+:200", "openspiel-mccfr-es:2000"]
    assert rows["random"]["nash_conv"] == pytest.approx(11 / 12)  # uniform Kuhn, the design brief's reference
    for row in table["rows"]:
        assert row["vs"][list(rows).index(row["name"])] == pytest.approx(0, abs=1e-12)  # itself, seats swapped
        assert row["vs_random"] == pytest.approx(row["vs"][0], abs=1e-12)
    # Zero-sum with seats swapped: A against B is minus B against A; nothing beats the equilibrium.
    matrix = np.array([row["vs"] for row in table["rows"]])
    assert np.allclose(matrix, -matrix.T, atol=1e-12)
    assert all(row["vs_equilibrium"] <= 1e-4 for row in table["rows"])


def test_train_opponent_records_its_exact_curve_and_stops_at_a_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Checks every N iterations go in the file; the last one is the agent that was saved."""
    out = tmp_path / "cfr.json"
    argv = [
        "train-opponent",
        "rlcard-cfr",
        "--game",
        "rlcard:kuhn-poker",
        "--iterations",
        "40",
        "--seed",
        "3",
        "--check-every",
        "10",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    capsys.readouterr()
    data = json.loads(out.read_text())
    provenance = provenance_of(data, str(out))
    assert [point.iteration for point in provenance.curve] == [10, 20, 30, 40]
    assert provenance.curve[-1].nash_conv == provenance.nash_conv and provenance.stopped_by == "amount"
    assert main(["exploitability", str(out), "--json"]) == 0  # the last check measured the saved agent
    assert json.loads(capsys.readouterr().out)["nash_conv"] == pytest.approx(provenance.nash_conv, abs=1e-12)
    assert all(a.seconds <= b.seconds for a, b in zip(provenance.curve, provenance.curve[1:], strict=False))
    loose = provenance.curve[1].nash_conv / 2  # met at the second check, not at the first
    assert provenance.curve[0].nash_conv / 2 > loose
    assert main([*argv[:-3], "--target-exploitability", repr(loose), "--out", str(out), "--quiet"]) == 0
    stopped = provenance_of(json.loads(out.read_text()), str(out))
    assert (stopped.iterations, stopped.stopped_by) == (20, "target_exploitability")
    assert [p.nash_conv for p in stopped.curve] == [p.nash_conv for p in provenance.curve[:2]]  # same seed


def test_every_family_is_one_registry_spec() -> None:
    """A trainable family's spec says how it trains, saves and loads; the command offers exactly those."""
    from eval.opponents import TRAINABLE

    assert set(TRAINABLE) == {"rlcard-cfr", "rlcard-nfsp", "rlcard-dqn", "openspiel-nfsp", "deep-cfr", "sd-cfr"}
    for name, training in TRAINABLE.items():
        assert FAMILIES[name].training is training and training.presets, name
        assert FAMILIES[name].needs_torch == (name != "rlcard-cfr")
        assert training.takes_overrides == (name in {"deep-cfr", "sd-cfr"})
    assert cli_commands()["train-opponent"]._option_string_actions["--hyperparameters"] is not None
    [kind] = [a for a in cli_commands()["train-opponent"]._actions if a.dest == "kind"]
    assert list(kind.choices or []) == list(TRAINABLE)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("kind", ["rlcard-cfr"], "its field 'kind' must be a string"),
        ("game", {"a": 0}, "its field 'game' must be a string"),
        ("iterations", [20000], "its field 'iterations' must be an integer"),
        ("iterations", None, "gives neither the episodes nor the iterations trained"),
        ("training_seconds", [0], "its field 'training_seconds' must be a finite number"),
        ("nash_conv", True, "its field 'nash_conv' must be a finite number"),
        ("curve", [[0]], "its field 'curve' must hold [iteration, seconds, NashConv(, nodes)] points"),
        ("policy", [0], "has no valid RLCard CFR tables"),
    ],
)
def test_an_opponent_file_with_a_field_of_another_type_is_refused(
    tmp_path: Path, field: str, value: object, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(shipped_model("rlcard-cfr", game("rlcard:leduc-holdem")).read_text())
    path = tmp_path / "table.json"
    path.write_text(json.dumps({**data, field: value}))
    assert main(["exploitability", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err, err


@pytest.mark.parametrize("row", [[0.5], [-1.0, 2.0, 0.0, 0.0], [float("nan")] * 4])
def test_an_rlcard_cfr_table_with_a_row_it_cannot_play_is_refused(
    tmp_path: Path, row: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    """A row of another length, with a negative probability or a nan: refused as the table is read, not when
    a hand reaches it."""
    data = json.loads(shipped_model("rlcard-cfr", game("rlcard:leduc-holdem")).read_text())
    data["average_policy"] = dict.fromkeys(data["average_policy"], row)
    path = tmp_path / "table.json"
    path.write_text(json.dumps(data))
    assert main(["exploitability", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "each row of its 'average_policy' table must be 4 finite numbers" in err, err


@pytest.mark.parametrize(
    ("kind", "game_id", "change", "message"),
    [
        ("openspiel-nfsp", "openspiel:leduc_poker", {"loss_str": "x"}, "'loss_str' differ"),
        ("openspiel-nfsp", "openspiel:leduc_poker", {"seed": [1]}, "its seed must be an integer"),
        ("rlcard-nfsp", "rlcard:leduc-holdem", {"q_mlp_layers": "x"}, "'q_mlp_layers' differ"),
        ("rlcard-nfsp", "rlcard:leduc-holdem", {"q_epsilon_decay_steps": 10**12}, "'q_epsilon_decay_steps' differ"),
        ("rlcard-nfsp", "rlcard:leduc-holdem", {"preset": "mine"}, "name no preset of rlcard-nfsp ('mine')"),
    ],
)
def test_an_nfsp_sidecar_whose_hyperparameters_are_not_its_preset_s_is_refused(
    tmp_path: Path, kind: str, game_id: str, change: dict[str, object], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The toolkits' constructors trust what they are given (an unknown loss raises deep inside OpenSpiel; a
    decay of 10^12 steps asks RLCard for terabytes): a sidecar's hyperparameters must be its preset's."""
    pytest.importorskip("torch")
    sidecar = shipped_model(kind, game(game_id))
    data = json.loads(sidecar.read_text())
    data["hyperparameters"] = {**data["hyperparameters"], **change}
    path = tmp_path / sidecar.name
    path.write_text(json.dumps(data))
    shutil.copy(sidecar.with_suffix(".safetensors"), tmp_path)
    assert main(["exploitability", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
