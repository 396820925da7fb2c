"""The policy file: JSON round trip, OpenSpiel-loadable without our code, refusals, atomic writes."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from open_spiel.python.policy import TabularPolicy

from cfr_agents import PolicyFileError, load_policy, make_solver
from eval import exploitability
from tests.support import tree


@pytest.fixture(scope="module")
def leduc_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    solver = make_solver(tree("openspiel:leduc_poker"), "cfr+")
    solver.run(20)
    path = tmp_path_factory.mktemp("policy") / "leduc.json"
    solver.average_policy().save(path)
    return path


def test_round_trip(leduc_file: Path) -> None:
    policy = load_policy(leduc_file)
    data = json.loads(leduc_file.read_text())
    assert data["format"] == "cfr-agents-policy" and data["format_version"] == 1
    assert (data["game"], data["algorithm"], data["iterations"]) == ("openspiel:leduc_poker", "cfr+", 20)
    assert data["rules_fingerprint"] == tree("openspiel:leduc_poker").rules_fingerprint
    assert data["parameters"]["gamma"] == 1.0
    assert policy.table == {k: {int(a): p for a, p in v.items()} for k, v in data["policy"].items()}


def test_file_loads_into_openspiel_tabular_policy_without_our_code(leduc_file: Path) -> None:
    data = json.loads(leduc_file.read_text())
    game = pyspiel.load_game("leduc_poker")
    tabular = TabularPolicy(game)
    for key, row in tabular.state_lookup.items():
        tabular.action_probability_array[row] = 0.0
        for action, probability in data["policy"][key].items():
            tabular.action_probability_array[row, int(action)] = probability
    t = tree("openspiel:leduc_poker")
    ours = exploitability(load_policy(leduc_file), t).nash_conv
    assert openspiel_exploitability.nash_conv(game, tabular) == pytest.approx(ours, abs=1e-9)


def _rewrite(source: Path, target: Path, **changes: object) -> Path:
    data = json.loads(source.read_text())
    data.update(changes)
    target.write_text(json.dumps(data))
    return target


def test_mismatched_files_are_refused(leduc_file: Path, tmp_path: Path) -> None:
    with pytest.raises(PolicyFileError, match="rules"):
        load_policy(_rewrite(leduc_file, tmp_path / "a.json", rules_fingerprint="sha256:beef"))
    with pytest.raises(PolicyFileError, match="rules"):
        load_policy(_rewrite(leduc_file, tmp_path / "b.json", game="openspiel:leduc_poker(suit_isomorphism=True)"))
    with pytest.raises(PolicyFileError, match="unknown OpenSpiel game"):
        load_policy(_rewrite(leduc_file, tmp_path / "c.json", game="openspiel:no_such_game"))
    with pytest.raises(PolicyFileError, match="format_version"):
        load_policy(_rewrite(leduc_file, tmp_path / "d.json", format_version=99))
    with pytest.raises(PolicyFileError, match="summing"):
        load_policy(_rewrite(leduc_file, tmp_path / "e.json", policy={"x": {"0": 0.5}}))
    with pytest.raises(PolicyFileError, match="iterations"):
        load_policy(_rewrite(leduc_file, tmp_path / "f.json", iterations="many"))


def test_missing_and_corrupt_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(PolicyFileError, match="does not exist"):
        load_policy(tmp_path / "nothing.json")
    (tmp_path / "half.json").write_text('{"format": "cfr-agents-pol')
    with pytest.raises(PolicyFileError, match="not valid JSON"):
        load_policy(tmp_path / "half.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(PolicyFileError, match="not a cfr-agents-policy file"):
        load_policy(tmp_path / "list.json")


def test_a_failed_save_leaves_the_old_file_whole(
    leduc_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "policy.json"
    target.write_text("old content")
    policy = load_policy(leduc_file)

    def crash(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        policy.save(target)
    assert target.read_text() == "old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy.json"]


def test_saved_files_get_the_usual_permissions(leduc_file: Path, tmp_path: Path) -> None:
    """A new file gets 0666 minus the umask, as open() would give it; a replaced file keeps its mode."""
    umask = os.umask(0o022)
    try:
        policy = load_policy(leduc_file)
        fresh = tmp_path / "fresh.json"
        policy.save(fresh)
        assert fresh.stat().st_mode & 0o777 == 0o644
        kept = tmp_path / "kept.json"
        kept.write_text("old")
        kept.chmod(0o600)
        policy.save(kept)
        assert kept.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(umask)


@pytest.fixture(scope="module")
def kuhn_data() -> dict[str, Any]:
    solver = make_solver(tree("rlcard:kuhn-poker"), "cfr")
    solver.run(5)
    return solver.average_policy().to_json()


def _with(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**json.loads(json.dumps(data)), **changes}


def _with_row(data: dict[str, Any], key: str, row: Any) -> dict[str, Any]:
    return _with(data, policy={**data["policy"], key: row})


REFUSED: dict[str, tuple[Callable[[dict[str, Any]], object], str]] = {
    "unknown infoset": (lambda d: _with_row(d, "3pb", {"0": 0.5, "1": 0.5}), "which rlcard:kuhn-poker does not have"),
    "missing infoset": (lambda d: _with(d, policy={k: v for k, v in d["policy"].items() if k != "1p"}), "no entry"),
    "string probability": (lambda d: _with_row(d, "0", {"0": "0.5", "1": "0.5"}), "not a number"),
    "boolean probability": (lambda d: _with_row(d, "0", {"0": True, "1": False}), "not a number"),
    "NaN probability": (lambda d: _with_row(d, "0", {"0": math.nan, "1": 1.0}), "outside [0, 1]"),
    "probability above 1": (lambda d: _with_row(d, "0", {"0": 2.0, "1": -1.0}), "outside [0, 1]"),
    "illegal action": (lambda d: _with_row(d, "0", {"0": 0.5, "2": 0.5}), "legal actions are [0, 1]"),
    "padded action id": (lambda d: _with_row(d, "0", {"0": 0.5, "01": 0.5}), "legal actions are [0, 1]"),
    "negative iterations": (lambda d: _with(d, iterations=-1), "negative 'iterations'"),
    "boolean iterations": (lambda d: _with(d, iterations=True), "'iterations'"),
    "boolean format_version": (lambda d: _with(d, format_version=True), "format_version"),
    "other units": (lambda d: _with(d, units="BB"), "pays in 'chips'"),
}


@pytest.mark.parametrize("case", REFUSED)
def test_the_loader_refuses_what_does_not_fit_the_game(kuhn_data: dict[str, Any], tmp_path: Path, case: str) -> None:
    mutate, message = REFUSED[case]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(mutate(kuhn_data)))
    with pytest.raises(PolicyFileError, match=re.escape(message)) as error:
        load_policy(path)
    assert "\n" not in str(error.value)
    path.write_text(json.dumps(kuhn_data))
    assert load_policy(path).table  # the unchanged document loads


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
        ('{"x": ' + "9" * 5000 + "}", "not valid JSON"),
    ],
    ids=["duplicate key", "deep nesting", "5000-digit number"],
)
def test_json_the_parser_chokes_on_is_refused(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(PolicyFileError, match=message):
        load_policy(path)


def test_a_legal_action_missing_from_a_row_has_probability_0(kuhn_data: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_with_row(kuhn_data, "0", {"1": 1.0})))
    policy = load_policy(path)
    assert policy.table["0"] == {0: 0.0, 1: 1.0}
    agent = policy.rlcard_agent(seed=0)
    state = {"raw_obs": {"hand": "J", "current_player": 0}, "action_record": [], "legal_actions": {0: None, 1: None}}
    assert agent.probabilities(state) == {0: 0.0, 1: 1.0}
    assert all(agent.step(state) == 1 for _ in range(20))
