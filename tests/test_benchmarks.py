"""The benchmark's pieces, and a quick run of the sampling family on Kuhn, so the benchmark cannot rot."""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyspiel
import pytest

import benchmarks
from benchmarks import lbr_last_round, sampling, solvers
from benchmarks.measure import Convergence, ReferenceCheck
from cfr_agents.training import CurvePoint
from tests.support import tree


def convergence(seed: int, points: list[tuple[float, float]]) -> Convergence:
    curve = tuple(CurvePoint(10 * (k + 1), seconds, value) for k, (seconds, value) in enumerate(points))
    check = ReferenceCheck(points[-1][1], points[-1][1], "test")
    return Convergence("external cfr", "x", "ours", "cfr", "external", seed, "kuhn", 1.0, curve, check)


COMMANDS = {
    module.name: getattr(importlib.import_module(f"benchmarks.{module.name}"), "main", None)
    for module in pkgutil.iter_modules(benchmarks.__path__)
}
"""Every benchmark module's ``main`` (``None`` for the helpers)."""


def refused(
    main: Callable[[list[str]], Any], argv: list[str], capsys: pytest.CaptureFixture[str], *, after: str = ""
) -> str:
    """The one line on stderr with which ``main(argv)`` ends the run, exit status 2; with ``after``, the one line
    after a progress line that starts so."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 + bool(after) and lines[0].startswith(after), lines
    return lines[-1]


def test_nash_conv_at_a_time_is_the_last_checkpoint_within_it_and_medians_over_seeds() -> None:
    run = convergence(0, [(0.1, 0.5), (0.499, 0.2), (1.004, 0.1), (1.2, 0.05)])
    assert run.at(0.05) is None
    assert run.at(0.5) == run.points[1]
    assert run.at(1.0) == run.points[2]  # 1.004 s is within the 1% tolerance of 1 s
    runs = sampling.SolverRuns("external cfr", (run, convergence(1, [(0.5, 0.4)]), convergence(2, [(0.5, 0.3)])))
    assert runs.median_at(0.5) == 0.3
    assert runs.cell(0.5) == "3.00e-01 (median of 3)"
    assert runs.median_at(0.01) is None


def test_one_state_per_infoset() -> None:
    t = tree("openspiel:kuhn_poker")
    states = sampling.infoset_states(t, pyspiel.load_game("kuhn_poker"))
    assert [row for row, _ in states] == list(range(t.num_infosets))
    assert all(t.index[state.information_state_string()] == row for row, state in states)


def test_compile_time_is_printed_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    sampling.print_compile_time("outcome")
    seconds = json.loads(capsys.readouterr().out)
    assert seconds["wall"] > 0 and seconds["cpu"] > 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--families", "nope"], "--families takes"),
        (["--games", "chess"], "--games takes"),
        (["--families", "full-tree", "--games", "liars-dice"], "--games takes"),
        (["--games", "liars-dice"], "gives family full-tree nothing to run"),
        (["--budget", "0"], "--budget must be"),
        (["--seeds", "0"], "--seeds must be"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert message in refused(solvers.parse_options, argv, capsys)


@pytest.mark.parametrize("name", sorted(name for name, main in COMMANDS.items() if main is not None))
def test_every_benchmark_has_help_and_refuses_an_unknown_option_in_one_line(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main = COMMANDS[name]
    assert main is not None
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0 and "usage:" in capsys.readouterr().out
    error = refused(main, ["--no-such-option"], capsys)
    assert "unrecognized arguments: --no-such-option" in error or "the following arguments are required" in error


WRITERS = (
    "aivat", "convergence", "cost", "endgame", "endgame_play", "flop_holdem", "holdem_neural", "kernel", "lbr",
    "lbr_last_round", "learning", "limit_holdem_agent", "limit_holdem_lbr", "matches", "n_player", "neural",
    "neural_limits", "neural_step", "opponents", "round_errors", "scale_out", "scaling", "sd_cfr_runs", "solvers",
    "tree_build", "web",
)  # fmt: skip
OUTPUTS = {**dict.fromkeys(WRITERS, "--out"), "exploitation_table": "--out-dir", "opponent_tables": "--out-dir"}
"""Each benchmark that writes files, and the option that says where."""
REQUIRED = {
    **{name: ["--agent", "random"] for name in ("endgame_play", "lbr_last_round", "limit_holdem_lbr")},
    "round_errors": ["--models", "random"],
}


def test_every_benchmark_that_writes_declares_where() -> None:
    """Every ``main`` parses through :meth:`OneLineParser.parse` and declares its outputs with ``add_output``, so
    that the conformance test below reaches them all."""
    for name, main in COMMANDS.items():
        if main is not None:
            source = Path(benchmarks.__path__[0], f"{name}.py").read_text()
            assert "parse_args(" not in source and 'add_argument("--out' not in source, name
            assert (name in OUTPUTS) == ("add_output(" in source), name


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_an_output_that_cannot_be_written_is_refused_before_any_work(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output under a regular file ends the run in one line at once, naming the option."""
    main = COMMANDS[name]
    assert main is not None
    (tmp_path / "file").write_text("")
    argv = [*REQUIRED.get(name, []), OUTPUTS[name], str(tmp_path / "file" / "out")]
    assert f"{OUTPUTS[name]} {tmp_path / 'file' / 'out'}: " in refused(main, argv, capsys)
    assert [path.name for path in tmp_path.iterdir()] == ["file"]


def test_outputs_are_checked_file_by_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each of an output's files is checked (a directory where ``OUT.md`` goes is refused), a directory output
    that is a file is refused, missing directories are made, and a child process's outputs are left alone."""
    from benchmarks import endgame, flop_holdem

    (tmp_path / "r.md").mkdir()
    assert "r.md': it is a directory" in refused(endgame.main, ["--out", str(tmp_path / "r")], capsys)
    (tmp_path / "results").write_text("")
    assert "File exists" in refused(solvers.main, ["--out", str(tmp_path / "results")], capsys)
    made = tmp_path / "new" / "folder"
    argv = ["--blueprint", str(tmp_path / "absent.json"), "--out", str(made / "r")]
    assert "absent.json' does not exist" in refused(endgame.main, argv, capsys)
    assert made.is_dir() and not any(made.iterdir())
    child = ["--measure", "nope", "--out", str(tmp_path / "results" / "x")]  # a measured child writes nothing
    assert "not nope" in refused(flop_holdem.main, child, capsys)


@pytest.mark.parametrize(
    ("name", "argv", "message"),
    [
        ("endgame", ["--iterations", "0"], "argument --iterations: must be at least 1, not 0"),
        ("endgame", ["--iterations", "many"], "'many' is not a whole number"),
        ("endgame", ["--blueprint", "dcfr:x"], "dcfr:N takes a number of iterations"),
        ("endgame", ["--blueprint", "dcfr:0"], "dcfr:N takes a number of iterations N, at least 1"),
        ("endgame", ["--game", "holdem-6", "--blueprint", "dcfr:3,{tmp}/absent.json"], "absent.json' does not exist"),
        ("endgame", ["--game", "chess"], "chess"),
        ("endgame_play", ["--agent", "{tmp}/absent.npz"], "absent.npz' does not exist"),
        ("endgame_play", ["--agent", "random", "--lbr-pairs", "1"], "--lbr-pairs: must be at least 2, not 1"),
        ("endgame_play", ["--agent", "{tmp}/a.npz", "--out", "{tmp}/a"], "would overwrite the agent's file"),
        ("frontier", ["--opponent", "nope"], "unknown opponent 'nope'"),
        ("lbr", ["--games", "holdem-6", "--file", "fhp=x.npz", "--out", "{tmp}/o"], "GAME one of --games"),
        ("lbr", ["--games", "holdem-6", "--file", "holdem-6={tmp}/absent.npz", "--out", "{tmp}/o"], "does not exist"),
        ("limit_holdem_lbr", ["--agent", "{tmp}/absent.npz", "--out", "{tmp}/o"], "absent.npz' does not exist"),
        ("round_errors", ["--models", ""], "--models: give at least one agent file"),
        ("round_errors", ["--models", "random", "--reference", "dcfr:0"], "dcfr:N takes a number of iterations N"),
        ("round_errors", ["--game", "holdem-6", "--models", "{tmp}/absent.json"], "absent.json' does not exist"),
        ("round_errors", ["--game", "holdem-6", "--models", "random", "--reference", "{tmp}/a.npz"], "a.npz' does not"),
        ("round_errors", ["--game", "holdem-6", "--models", "nope"], "unknown opponent 'nope'"),
        ("round_errors", ["--models", "random,{tmp}/m.npz", "--out", "{tmp}/m"], "would overwrite the agent's file"),
        ("round_errors", ["--models", "random", "--reference", "{tmp}/r.json", "--out", "{tmp}/r"], "would overwrite"),
        ("endgame", ["--blueprint", "dcfr:2,{tmp}/b.npz", "--out", "{tmp}/b"], "would overwrite the agent's file"),
    ],
)
def test_bad_files_agents_and_values_are_refused_in_one_line_before_any_work(
    name: str, argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The check comes first: nothing is written, and the refusal is quick (``limit_holdem_lbr`` passes on the one
    line of the ``cfr-agents lbr`` it runs)."""
    main = COMMANDS[name]
    assert main is not None
    after = "LBR against" if name == "limit_holdem_lbr" else ""
    assert message in refused(main, [arg.replace("{tmp}", str(tmp_path)) for arg in argv], capsys, after=after)
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_quick_sampling_run_on_kuhn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--families", "sampling", "--games", "kuhn", "--quick", "--budget", "0.12", "--seeds", "2"]
    assert solvers.main([*argv, "--no-compile-timing", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    expected = (
        "openspiel:kuhn_poker: MCCFR speed",
        "Targets and ratios on openspiel:kuhn_poker",
        "best sampled",
        "openspiel-cpp:external",
        "openspiel-python:outcome",
        "dcfr full tree",
    )
    assert all(text in printed for text in expected)
    assert "MISMATCH" not in printed
    report = (tmp_path / "results.md").read_text()
    assert "# Monte Carlo CFR" in report and "load average at the end" in report
    curves = (tmp_path / "curves.csv").read_text().splitlines()
    assert curves[0] == "solver,game,seed,iteration,seconds,nash_conv"
    assert any(line.startswith("openspiel-cpp:external,kuhn,1,") for line in curves)
    assert (tmp_path / "nash_conv_vs_time_kuhn.png").stat().st_size > 10_000


def test_sd_cfr_with_a_perfect_fit_of_its_memory_converges_on_kuhn() -> None:
    """The floor ``benchmarks/neural_limits.py`` measures is SD-CFR's: with the memory's exact means in place of the
    network it is an unbiased sampled linear CFR, so on Kuhn it approaches the equilibrium."""
    pytest.importorskip("torch")
    from benchmarks import neural_limits

    points = neural_limits.run("openspiel:kuhn_poker", 1_000_000, 300, seed=0)
    assert [iteration for iteration, _, _ in points] == [30, 100, 200, 300]
    assert points[-1][1] < 0.005 < points[0][1]


def test_lbr_last_round_modes_differ_from_the_played_one_by_noise_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every mode of ``--last-round`` is unbiased, so on the same seeds its difference from ``sampled`` is 0 within
    4 standard errors; ``--pairs 1`` is refused in one line."""
    lbr_last_round.main(["--agent", "random", "--game", "holdem-6", "--pairs", "200", "--out", str(tmp_path / "r")])
    result = json.loads((tmp_path / "r.json").read_text())
    rows = {row["last_round"]: row for row in result["rows"]}
    assert set(rows) == {"sampled", "expected", "over-range"}
    for mode in ("expected", "over-range"):
        assert abs(rows[mode]["minus_sampled_mbb"]) <= 4 * rows[mode]["minus_sampled_se_mbb"]
        assert rows[mode]["hands_needed_ratio"] > 1.0
    assert "| `expected` |" in (tmp_path / "r.md").read_text()
    capsys.readouterr()
    assert "--pairs: must be at least 2" in refused(lbr_last_round.main, ["--agent", "random", "--pairs", "1"], capsys)
    agent = str(tmp_path / "agent.npz")
    assert "would overwrite the agent's file" in refused(
        lbr_last_round.main, ["--agent", agent, "--out", str(tmp_path / "agent")], capsys
    )  # agent.json is the agent's sidecar


def test_average_exponent_one_is_the_models_own_weighting() -> None:
    """``holdem_neural --average-exponent 1`` weighs each kept network as the model does, 0 by its block's length,
    2 by its block's sum of squares."""
    from types import SimpleNamespace

    from benchmarks import holdem_neural
    from cfr_agents.neural_policy import NeuralPolicy
    from cfr_agents.solvers.neural.sd_cfr import kept_iterations

    kept = tuple(kept_iterations(100, 10))
    own = NeuralPolicy.__dict__["iteration_weights"].func(SimpleNamespace(kept_iterations=kept))
    assert holdem_neural.exponent_weights(kept, 1) == [weight for _, weight in own]
    assert sum(holdem_neural.exponent_weights(kept, 0)) == kept[-1]  # sigma^2 .. sigma^{t_K+1}, once each
    assert sum(holdem_neural.exponent_weights(kept, 2)) == sum(s * s for s in range(2, kept[-1] + 2))
    assert len(set(holdem_neural.exponent_weights(kept, 0))) > 1


def test_average_exponent_without_a_model_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import holdem_neural

    assert "give --model" in refused(holdem_neural.main, ["--average-exponent", "0"], capsys)


def test_holdem_neural_refuses_to_write_over_its_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out`` naming the model's own sidecar, and a model file that is not there, are refused in one line, with
    nothing written."""
    from benchmarks import holdem_neural

    model = tmp_path / "m.json"
    model.write_text("{}")
    assert "would overwrite the model" in refused(
        holdem_neural.main, ["--model", str(model), "--out", str(tmp_path / "m")], capsys
    )
    assert model.read_text() == "{}"
    assert "does not exist" in refused(
        holdem_neural.main, ["--model", str(tmp_path / "absent.json"), "--out", str(tmp_path / "o")], capsys
    )
    assert sorted(path.name for path in tmp_path.iterdir()) == ["m.json"]


def test_endgame_run_states_its_memory_first_and_scores_the_blueprint_as_nash_conv_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A whole run on holdem-6: the memory estimate is the first line it prints, the JSON and the table are written,
    and the blueprint's NashConv (from LBR's best responses) is the one :func:`public_exploitability` computes."""
    from benchmarks import endgame
    from cfr_agents.public_tree.solver import PublicTreeSolver
    from cfr_agents.solvers import ALGORITHMS
    from eval.exploitability import public_exploitability
    from eval.holdem import game_tree

    capsys.readouterr()
    endgame.main(["--game", "holdem-6", "--blueprint", "dcfr:4", "--iterations", "5", "--out", str(tmp_path / "e")])
    assert capsys.readouterr().err.startswith("memory: about ")
    (row,) = json.loads((tmp_path / "e.json").read_text())
    assert (tmp_path / "e.md").read_text().count("| dcfr:4 |") == 3
    tree = game_tree("holdem-6")
    solver = PublicTreeSolver(tree, ALGORITHMS["dcfr"], "dcfr")
    solver.run(4)
    exact = public_exploitability(tree, solver.average_strategy()).nash_conv
    assert row["blueprint_nash_conv"] == pytest.approx(exact * 1000 / tree.rules.big_blind, rel=1e-12)
    assert row["blueprint_nash_conv"] not in (row["resolved_nash_conv"], row["safe_nash_conv"])  # re-solved


def test_the_figure_of_sd_cfr_runs_reads_each_run_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``sd_cfr_runs`` reads a ``train --json`` report alone or under ``report``, in mbb/g (a chip is 10 on FHP),
    with the defaults of runs made before an option existed; a rescoring beside them is left out, and a directory
    that is missing or holds no report, or a file cut short, is refused in one line."""
    from benchmarks import sd_cfr_runs

    assert "no SD-CFR report" in refused(sd_cfr_runs.main, ["--results", str(tmp_path)], capsys)
    assert "not a directory" in refused(sd_cfr_runs.main, ["--results", str(tmp_path / "none")], capsys)
    old = {"algo": "sd-cfr", "iterations": 431, "nash_conv": 22.1, "solve_seconds": 5410.0, "parameters": {}}
    new = {**old, "iterations": 1463, "nash_conv": 12.7, "solve_seconds": 6003.0}
    new["parameters"] = {"inputs": "canonical", "value_scale": 700.0, "threads": 2, "traversal": "external"}
    (tmp_path / "fhp_sd_cfr.json").write_text(json.dumps({"command": "train", "report": old}))
    (tmp_path / "fhp_sd_cfr_canonical.json").write_text(json.dumps(new))
    (tmp_path / "fhp_sd_cfr_scoring.json").write_text(json.dumps({"model": "m.json", "nash_conv_mbb": 221.0}))
    runs = sd_cfr_runs.read_runs(tmp_path)
    assert [(run.name, run.iterations, run.reads, run.value_scale, run.threads) for run in runs] == [
        ("fhp_sd_cfr.json", 431, "cards", 1.0, 1),
        ("fhp_sd_cfr_canonical.json", 1463, "canonical", 700.0, 2),
    ]
    assert [run.nash_conv_mbb for run in runs] == pytest.approx([221.0, 127.0])
    assert [run.minutes for run in runs] == pytest.approx([5410 / 60, 6003 / 60])
    pytest.importorskip("matplotlib")
    sd_cfr_runs.main(["--results", str(tmp_path), "--out", str(tmp_path / "runs.png")])
    assert "2 runs; best 127 mbb/g (fhp_sd_cfr_canonical.json)" in capsys.readouterr().out
    assert (tmp_path / "runs.png").read_bytes().startswith(b"\x89PNG")
    (tmp_path / "fhp_sd_cfr_cut.json").write_text(json.dumps(new)[:40])
    assert "fhp_sd_cfr_cut.json: not a train --json report" in refused(
        sd_cfr_runs.main, ["--results", str(tmp_path), "--out", str(tmp_path / "again.png")], capsys
    )
    assert not (tmp_path / "again.png").exists()


def test_a_replot_with_other_budgets_than_its_runs_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``neural.py --replot`` with ``--minutes`` whose longest budget no run of the file was checked at names the
    options to give, and writes nothing."""
    saved = tmp_path / "runs.json"
    saved.write_text(json.dumps([{"contender": "sd-cfr", "seed": 0, "seconds": 60, "points": [[60.0, 1, 0.1]]}]))
    main = COMMANDS["neural"]
    assert main is not None
    message = refused(main, ["--replot", str(saved), "--minutes", "2"], capsys)
    assert "no run of it was checked at 120 s" in message and "--minutes and --seeds" in message
    assert [path.name for path in tmp_path.iterdir()] == ["runs.json"]
