"""``cfr-agents plot curves`` and ``plot strategy``: PNGs, betting lines, and the missing-extra message."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cfr_agents import make_solver
from eval.plots import line_strategy
from tests.support import run_cli, tree

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def leduc_policy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    solver = make_solver(tree("rlcard:leduc-holdem"), "dcfr")
    solver.run(200)
    path = tmp_path_factory.mktemp("plots") / "leduc.json"
    solver.average_policy().save(path)
    return path


def test_plot_curves(tmp_path: Path) -> None:
    curves = []
    for algo in ("cfr+", "dcfr"):
        curve = tmp_path / f"{algo}.csv"
        argv = ["train", "--game", "openspiel:kuhn_poker", "--algo", algo, "--iterations", "300", "--quiet"]
        assert run_cli([*argv, "--out", str(tmp_path / f"{algo}.json"), "--curve", str(curve)]).status == 0
        curves.append(str(curve))
    out = tmp_path / "curves.png"
    status, printed, _ = run_cli(["plot", "curves", *curves, "--out", str(out)])
    assert status == 0
    assert out.read_bytes()[:8] == PNG
    assert "plotted 2 curves" in printed


def test_plot_strategy_on_the_papers_line(leduc_policy: Path, tmp_path: Path) -> None:
    out = tmp_path / "line.png"
    line = "call:raise:call:K♠:check:raise"
    status, printed, _ = run_cli(["plot", "strategy", str(leduc_policy), "--line", line, "--out", str(out)])
    assert status == 0
    assert out.read_bytes()[:8] == PNG
    assert "call:raise:call:K♠:check:raise" in printed


def test_line_strategy_rows(leduc_policy: Path) -> None:
    from cfr_agents import load_policy

    policy = load_policy(leduc_policy)
    shown = line_strategy(policy, "call:raise:call:SK:check:raise")
    assert set(shown.actions) == {"call", "raise", "fold"}  # facing a raise with one raise left
    assert len(shown.hands) == 5 and "SK" not in shown.hands  # the public card is not a holding
    for row in shown.probabilities:
        assert sum(row) == pytest.approx(1.0)
    same = line_strategy(policy, "call:raise:call:Ks:check:raise")  # K♠, Ks and SK are one card
    assert (same.hands, same.probabilities) == (shown.hands, shown.probabilities)
    first = line_strategy(policy, "raise")
    assert set(first.actions) == {"call", "raise", "fold"} and len(first.hands) == 6


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("call:jump", "neither an action"),
        ("call:raise:call:check", "name the public card"),
        ("call:SK:HK", "only one public card"),
        ("", "give action names"),
    ],
)
def test_bad_lines_exit_2_with_one_line(leduc_policy: Path, tmp_path: Path, line: str, expected: str) -> None:
    status, _, err = run_cli(["plot", "strategy", str(leduc_policy), "--line", line, "--out", str(tmp_path / "x.png")])
    assert status == 2 and expected in err and len(err.splitlines()) == 1, err


def test_without_matplotlib_plots_name_the_extra(
    leduc_policy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    argv = ["plot", "strategy", str(leduc_policy), "--line", "raise", "--out", str(tmp_path / "x.png")]
    status, _, err = run_cli(argv)
    assert status == 2 and "pip install 'cfr-agents[plot]'" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x.png").exists()
