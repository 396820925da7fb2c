"""Library errors speak of parameters, the command line of its options; every float option has a range.

A refusal raised below the command line names the parameters of the call it refuses (``epsilon``), never a
command's flags (``--epsilon``): :class:`~adapters.inputs.ParameterError` marks them, and ``cfr-agents`` writes
them as the options of the command being run, read off its parser. Every float option takes a documented
finite range (``docs/algorithms.md``), refused in one line outside it, the solver's parameters by the
library itself, so that ``train``, ``sweep --grid`` and Python refuse alike.
"""

from __future__ import annotations

import ast
import math
import pickle
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from adapters.inputs import InputError, Interval, ParameterError
from cfr_agents.cli import build_parser, options
from cfr_agents.cli.common import Within, real
from cfr_agents.solvers import ALGORITHMS, UpdateRule, make_solver
from cfr_agents.solvers.sampling import EPSILON
from cfr_agents.solvers.update_rule import ALPHA, BETA, GAMMA
from tests.support import run_cli, tree

ROOT = Path(__file__).resolve().parent.parent
FLAG = re.compile(r"--[A-Za-z]")
KUHN = "openspiel:kuhn_poker"
TUNED_GAMMA = ("dcfr", "dcfr+", "pdcfr+", "hs-pcfr+")
"""The algorithms whose ``gamma`` a user sets."""


def flag_naming_raises() -> dict[str, list[str]]:
    """Per module of the library (the command line aside), the ``raise X(...)`` whose string constants
    (f-strings' literal parts included) name a ``--flag``, as ``line: text``."""
    found: dict[str, list[str]] = {}
    for package in ("adapters", "cfr_agents", "eval"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name.startswith("cfr_agents/cli/"):
                continue
            for node in ast.walk(ast.parse(path.read_text(), name)):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                    texts = [
                        part.value
                        for part in ast.walk(node.exc)
                        if isinstance(part, ast.Constant) and isinstance(part.value, str)
                    ]
                    if any(FLAG.search(text) for text in texts):
                        found.setdefault(name, []).append(f"{node.lineno}: {' '.join(texts)}")
    return found


def test_no_library_refusal_names_a_flag() -> None:
    assert flag_naming_raises() == {}


def test_the_scan_finds_a_flag_in_an_f_string() -> None:
    """The scan reads f-strings' literal parts: a module that raised ``f"--workers must be ..."`` is found."""
    source = 'def f(workers):\n    raise InputError(f"--workers must be at least 1, got {workers}")\n'
    raised = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Raise)]
    assert isinstance(raised[0].exc, ast.Call)
    texts = [part.value for part in ast.walk(raised[0].exc) if isinstance(part, ast.Constant)]
    assert any(FLAG.search(str(text)) for text in texts)


def test_a_parameter_error_names_its_parameters_as_given() -> None:
    error = ParameterError("{averaging} {given!r} does not apply; give {chance_draws}", given="a{b}")
    assert isinstance(error, InputError)
    assert str(error) == "averaging 'a{b}' does not apply; give chance_draws"
    assert error.parameters == ("averaging", "chance_draws")
    assert error.render(lambda name: f"--{name.replace('_', '-')}") == (
        "--averaging 'a{b}' does not apply; give --chance-draws"
    )


def test_a_parameter_error_crosses_to_and_from_a_worker_process() -> None:
    """A process pool carries a worker's error back pickled: the copy renders as the original does."""
    error = ParameterError("{seeds} {given} must name distinct seeds", given="3-1")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is ParameterError and str(copy) == str(error)
    assert copy.render(str.upper) == "SEEDS 3-1 must name distinct seeds"


def test_the_command_line_writes_parameters_as_its_commands_options() -> None:
    """The options are the command's, read off the parser: ``chance_draws`` is ``train``'s ``--chance-draws``;
    ``sweep`` sets ``gamma`` by a grid key, not an option, so it keeps its name there."""
    parser = build_parser()
    train = options(parser, parser.parse_args(["train", "--out", "x.json"]))
    assert [train(name) for name in ("chance_draws", "gamma", "no_tree_cache", "nothing")] == [
        "--chance-draws",
        "--gamma",
        "--no-tree-cache",
        "nothing",
    ]
    sweep = options(
        parser, parser.parse_args(["sweep", "--game", KUHN, "--algo", "dcfr", "--grid", "a=1", "--out", "d"])
    )
    assert [sweep(name) for name in ("grid", "gamma", "time_limit")] == ["--grid", "gamma", "--time-limit"]
    plot = options(parser, parser.parse_args(["plot", "strategy", "p.json", "--line", "raise", "--out", "x.png"]))
    assert plot("line") == "--line" and plot("seat") == "--seat"


def test_one_refusal_in_python_and_on_the_command_line(tmp_path: Path) -> None:
    with pytest.raises(ParameterError) as refused:
        make_solver(tree(KUHN), "cfr", averaging="simple")
    assert str(refused.value) == "averaging applies to sampled solvers only (give sampling)"
    argv = ["train", "--game", KUHN, "--algo", "cfr", "--iterations", "2", "--averaging", "simple"]
    status, _, err = run_cli([*argv, "--out", str(tmp_path / "p.json")])
    assert status == 2
    assert err == "cfr-agents: error: --averaging applies to sampled solvers only (give --sampling)\n"


@pytest.mark.parametrize(
    ("interval", "inside", "outside"),
    [
        (ALPHA, [0.0, 1.5, 50.0, math.inf], [-0.5, 50.5, 1e308, -math.inf, math.nan, 5e-324]),
        (BETA, [-50.0, 0.0, 50.0, -math.inf, math.inf], [-50.5, 50.5, -1e308, 1e308, math.nan, -5e-324]),
        (GAMMA, [0.0, 2.0, 100.0], [-1e-9, 100.5, 1e6, 1e308, -1e308, math.inf, math.nan, 5e-324, 2e-308]),
        (EPSILON, [0.01, 0.6, 1.0], [0.0, 0.001, 1.5, 5e-324]),
    ],
)
def test_the_solvers_parameters_have_finite_ranges(
    interval: Interval, inside: list[float], outside: list[float]
) -> None:
    assert all(value in interval for value in inside)
    assert not any(value in interval for value in outside)


@pytest.mark.parametrize("algorithm", TUNED_GAMMA)
@pytest.mark.parametrize("gamma", [1e308, -1e308])
def test_an_update_rule_refuses_a_gamma_out_of_range(algorithm: str, gamma: float) -> None:
    """``gamma = 1e308`` made ``gamma ln t`` overflow and the average a uniform policy; it is refused where
    the rule is made, for every algorithm that takes ``gamma``."""
    with pytest.raises(ParameterError, match=r"^gamma must be in \[0, 100\], got -?1e\+308$"):
        replace(ALGORITHMS[algorithm], gamma=gamma)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: UpdateRule(alpha=1e308), r"^alpha must be in \[0, 50\] or inf, got 1e\+308$"),
        (lambda: UpdateRule(alpha=-math.inf), r"^alpha must be in \[0, 50\] or inf, got -inf$"),
        (lambda: UpdateRule(beta=-1e308), r"^beta must be in \[-50, 50\], -inf or inf, got -1e\+308$"),
        (lambda: UpdateRule(gamma=1e6), r"^gamma must be in \[0, 100\], got 1000000.0$"),
        (lambda: UpdateRule(gamma=5e-324), r"^gamma must be in \[0, 100\], got 5e-324, a subnormal number$"),
        (
            lambda: UpdateRule(gamma=3.0, gamma_change=-5.0),
            r"^the schedule's last exponent, gamma \+ gamma_change = 3.0 \+ -5.0, must be in \[0, 100\], got -2.0$",
        ),
        (lambda: UpdateRule(gamma_change=math.inf), r"gamma \+ gamma_change = 0.0 \+ inf, must be in \[0, 100\]"),
    ],
)
def test_an_update_rule_out_of_range_is_refused_by_its_parameters_names(
    make: Callable[[], UpdateRule], message: str
) -> None:
    with pytest.raises(ParameterError, match=message):
        make()


@pytest.mark.parametrize("algorithm", TUNED_GAMMA)
@pytest.mark.parametrize("gamma", ["1e308", "-1e308"])
def test_train_refuses_a_gamma_out_of_range(tmp_path: Path, algorithm: str, gamma: str) -> None:
    out = tmp_path / "p.json"
    argv = ["train", "--game", KUHN, "--algo", algorithm, "--iterations", "5", f"--gamma={gamma}", "--out", str(out)]
    status, printed, err = run_cli(argv)
    assert (status, printed) == (2, "")
    assert err == f"cfr-agents: error: --gamma must be in [0, 100], got {float(gamma)!r}\n"
    assert not out.exists()


@pytest.mark.parametrize("algorithm", TUNED_GAMMA)
@pytest.mark.parametrize("gamma", ["1e308", "-1e308"])
def test_a_sweep_refuses_a_grid_gamma_out_of_range(tmp_path: Path, algorithm: str, gamma: str) -> None:
    out = tmp_path / "sweep"
    argv = ["sweep", "--game", KUHN, "--algo", algorithm, "--grid", f"gamma=15,{gamma}", "--iterations", "5"]
    status, printed, err = run_cli([*argv, "--workers", "1", "--out", str(out)])
    assert (status, printed) == (2, "")
    assert err == f"cfr-agents: error: gamma must be in [0, 100], got {float(gamma)!r}\n"
    assert not out.exists()


def test_a_schedule_that_leaves_the_range_is_refused_on_the_command_line(tmp_path: Path) -> None:
    """HS-PCFR+'s exponent falls from ``--gamma`` by 5: ``--gamma 3`` would end at -2."""
    argv = ["train", "--game", KUHN, "--algo", "hs-pcfr+", "--iterations", "5", "--gamma", "3"]
    status, _, err = run_cli([*argv, "--out", str(tmp_path / "p.json")])
    assert status == 2 and err.count("\n") == 1
    assert "the schedule's last exponent, --gamma + gamma_change = 3.0 + -5.0, must be in [0, 100]" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["train", "--algo", "cfr", "--iterations", "5", "--sampling", "outcome", "--epsilon", "1e-3"],
            "--epsilon must be in [0.01, 1], got 0.001",
        ),
        (["train", "--algo", "cfr", "--time-limit", "5e-324"], "--time-limit: must be in (0, 1e9], got 5e-324, a sub"),
        (["train", "--algo", "cfr", "--target-nash-conv", "1e308"], "--target-nash-conv: must be in [1e-15, 1e6]"),
        (["train", "--algo", "cfr", "--iterations", "5", "--checkpoint-every", "inf"], "must be in (0, 1e9], got inf"),
        (["train", "--algo", "sd-cfr", "--learning-rate", "2"], "--learning-rate: must be in (0, 1], got 2.0"),
    ],
)
def test_float_options_out_of_range_are_refused_in_one_line(tmp_path: Path, argv: list[str], message: str) -> None:
    status, _, err = run_cli([*argv[:1], "--game", KUHN, *argv[1:], "--out", str(tmp_path / "p.json")])
    assert status == 2 and err.count("\n") == 1 and message in err, err


def float_options() -> dict[str, tuple[str, str]]:
    """Every option of every command whose value is a number other than a count: its type's range (``real``:
    the library checks it) and its help, by option string."""
    parser = build_parser()
    found: dict[str, tuple[str, str]] = {}
    commands = next(action for action in parser._actions if action.dest == "command").choices
    assert isinstance(commands, dict)
    for command in commands.values():
        for action in command._actions:
            if action.type is float:
                raise AssertionError(f"{action.option_strings} takes any float")
            if isinstance(action.type, Within) or action.type is real:
                shown = str(action.type.allowed) if isinstance(action.type, Within) else "real"
                found[action.option_strings[-1]] = (shown, action.help or "")
    return found


def test_every_float_option_documents_its_range() -> None:
    """Each help names the range: the parser's own, or, for an option the library checks, the library's."""
    library = {"--alpha": ALPHA, "--beta": BETA, "--gamma": GAMMA, "--epsilon": EPSILON}
    probabilities = {"--p", "--p-max"}
    found = float_options()
    assert set(library) | probabilities <= set(found)
    for option, (shown, help_text) in found.items():
        if shown == "real":
            shown = "[0, 1]" if option in probabilities else str(library[option])
        assert f"in {shown}" in help_text, (option, help_text)


def test_the_documented_ranges_are_the_ones_refused() -> None:
    """The table of ``docs/algorithms.md`` gives each float option the range the code refuses outside of."""
    page = (ROOT / "docs" / "algorithms.md").read_text()
    table = page.split("### Parameter ranges", 1)[1].split("\n\n")[2]
    documented: dict[str, str] = {}
    for row in table.splitlines()[2:]:
        names, shown = row.split(" | ")[:2]
        for name in re.findall(r"`(--[a-z-]+)`", names):
            documented[name] = shown.strip("` ")
    library = {"--alpha": ALPHA, "--beta": BETA, "--gamma": GAMMA, "--epsilon": EPSILON}
    expected = {
        option: str(library[option]) if option in library else "[0, 1]" if shown == "real" else shown
        for option, (shown, _) in float_options().items()
    }
    assert documented == expected


def test_an_outcome_sampler_refuses_a_tiny_epsilon_as_a_sweep_does(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match=r"^epsilon must be in \[0.01, 1\], got 0.001$"):
        make_solver(tree(KUHN), "cfr", sampling="outcome", rng=np.random.default_rng(0), epsilon=0.001)
    argv = ["sweep", "--game", KUHN, "--algo", "cfr", "--sampling", "outcome", "--grid", "epsilon=0.6,0.001"]
    status, _, err = run_cli([*argv, "--iterations", "5", "--out", str(tmp_path / "sweep")])
    assert status == 2 and err == "cfr-agents: error: epsilon must be in [0.01, 1], got 0.001\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("target_nash_conv", 1e308, r"^target_nash_conv must be in \[1e-15, 1e6\], got 1e\+308$"),
        ("target_nash_conv", 5e-324, r"^target_nash_conv must be in \[1e-15, 1e6\], got 5e-324, a subnormal number$"),
        ("time_limit", 0.0, r"^time_limit must be in \(0, 1e9\], got 0.0$"),
        ("time_limit", float("inf"), r"^time_limit must be in \(0, 1e9\], got inf$"),
    ],
)
def test_a_stop_rule_out_of_its_range_is_refused_by_the_library(field: str, value: float, message: str) -> None:
    """The training loop's own ranges: a Python caller is refused as the command line is."""
    from cfr_agents.training import StopRule

    with pytest.raises(InputError, match=message):
        given: dict[str, Any] = {field: value}
        StopRule(**given)


def test_public_chance_sampling_without_an_abstraction_is_refused(tmp_path: Path) -> None:
    argv = ["train", "--game", KUHN, "--algo", "cfr", "--iterations", "5", "--sampling", "public-chance"]
    status, _, err = run_cli([*argv, "--out", str(tmp_path / "p.json")])
    assert status == 2 and err.count("\n") == 1, err
    assert "--sampling public-chance walks vectors over the private hands" in err and "(--abstraction DIR)" in err
