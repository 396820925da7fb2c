"""Games and compiled trees built once per test session, and the values, checks and runners the
tests share."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import io
import json
import signal
import subprocess
import sys
import types
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyspiel
import pytest
from numpy.typing import ArrayLike
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.policy import TabularPolicy

import adapters
from adapters import Game
from adapters.rlcard import RLCardGame
from cfr_agents.policy import load_policy
from cfr_agents.solvers import Solver
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree, load_tree
from eval.exploitability import exploitability_of_strategy
from eval.train_report import nash_conv

FLOAT32_RTOL = 16 * float(np.finfo(np.float32).eps)
"""Relative tolerance for an exact value computed from float32 network outputs.

torch float32 network outputs differ in their last bits between CPUs (different SIMD kernels and
summation orders); an exact value computed from them (a NashConv) inherits a relative error of a
few float32 epsilons. 16 epsilons (about 1.9e-6) allow for that and still fail on any real change
of the network."""

MATCH_REPORT_FIELDS = frozenset(
    {"game", "agents", "hands", "mean", "standard_error", "ci95", "units", "mbb_per_hand", "exact"}
)
"""The fields of every match report: ``cfr-agents match --json`` and each match of a tournament's
``results.json``."""

GAME_IDS = (
    "openspiel:kuhn_poker",
    "openspiel:leduc_poker",
    "rlcard:kuhn-poker",
    "rlcard:leduc-holdem",
)


@functools.cache
def game(game_id: str) -> Game:
    return adapters.load_game(game_id)


@functools.cache
def tree(game_id: str) -> CompiledTree:
    return compile_tree(game(game_id))


def assert_same_tree(ours: CompiledTree, theirs: CompiledTree) -> None:
    """Every field of two trees equal -- arrays in dtype, shape and every value -- but the three that
    say how a tree was obtained (``build_seconds``, ``from_cache``, ``cache_header``)."""
    for field in dataclasses.fields(CompiledTree):
        if field.name in ("build_seconds", "from_cache", "cache_header"):
            continue
        mine, other = getattr(ours, field.name), getattr(theirs, field.name)
        if isinstance(mine, np.ndarray):
            assert mine.dtype == other.dtype and mine.shape == other.shape, field.name
            assert np.array_equal(mine, other), field.name
        else:
            assert type(mine) is type(other) and mine == other, field.name


def cli_commands() -> dict[str, argparse.ArgumentParser]:
    """Every command of ``cfr-agents`` and its parser, as :func:`cfr_agents.cli.build_parser` registers them."""
    from cfr_agents.cli import build_parser

    [commands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


class CliRun(NamedTuple):
    """What one ``cfr-agents`` command did."""

    status: int
    out: str
    err: str


def run_cli(argv: Sequence[str]) -> CliRun:
    """Run ``cfr-agents argv`` in this process and capture its exit status, standard output and error.

    argparse's own exits (``--help``, ``--version``, usage errors) count as the status they carry.
    """
    from cfr_agents.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exit_:
            status = 0 if exit_.code is None else exit_.code if isinstance(exit_.code, int) else 1
    return CliRun(status, out.getvalue(), err.getvalue())


ONE_PROCESS = """\
import json, os, runpy, sys, tempfile, traceback

runs = []
for folder, argv in json.loads(sys.argv[1]):
    os.chdir(folder)
    sys.argv = ["cfr-agents", *argv]
    kept = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        try:
            runpy.run_module("cfr_agents", run_name="__main__")
            status = 0
        except SystemExit as exit_:
            status = 0 if exit_.code is None else exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(kept[0], 1)
        os.dup2(kept[1], 2)
        for descriptor in kept:
            os.close(descriptor)
        out.seek(0)
        err.seek(0)
        runs.append([status, out.read().decode(), err.read().decode()])
print(json.dumps(runs))
"""
"""Runs ``cfr-agents`` commands one after another in one interpreter as ``python -m cfr_agents`` runs one, each in
its folder, capturing what reaches file descriptors 1 and 2 (OpenSpiel's C++ and Ray write there, not to
``sys.stderr``) and the exit status, or the traceback and status 1 of an exception that escapes."""


def in_one_process(
    runs: Sequence[tuple[Path, Sequence[str]]], preexec_fn: Callable[[], None] | None = None
) -> list[CliRun]:
    """Each ``(folder, argv)`` of ``runs`` as :data:`ONE_PROCESS` runs it, in one new process (``preexec_fn`` run in
    it first: a resource limit, say): what a process per command shows, without a start-up and the imports for
    each. Nothing may reach the terminal outside the commands."""
    given = json.dumps([[str(folder), list(argv)] for folder, argv in runs])
    done = subprocess.run(
        [sys.executable, "-c", ONE_PROCESS, given], capture_output=True, text=True, timeout=600, preexec_fn=preexec_fn
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return [CliRun(*run) for run in json.loads(done.stdout)]


def start_interruptible(argv: Sequence[str], **options: Any) -> subprocess.Popen[str]:
    """Start ``argv`` (text mode) with SIGINT at its default disposition, as a shell's foreground job has it,
    so that a SIGINT the test sends reaches the program as Ctrl-C would.

    A process started in the background by a non-interactive shell (``make test &``, ``nohup``, some CI
    runners) inherits SIGINT as ignored, an ignored signal stays ignored across ``exec``, and Python then
    installs no ``KeyboardInterrupt`` handler: the child would never see the test's SIGINT.
    ``restore_signals`` resets SIGPIPE, SIGXFZ and SIGXFSZ only, hence the reset in the child before ``exec``.
    """
    return subprocess.Popen(argv, preexec_fn=_default_sigint, text=True, **options)


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def assert_within_standard_errors(
    sampled: ArrayLike, exact: ArrayLike, standard_error: ArrayLike, k: float = 4.0, *, atol: float = 0.0
) -> None:
    """Assert ``|sampled - exact| <= k * standard_error + atol``, elementwise for arrays, naming the
    worst cell and its distance ``z = |sampled - exact| / standard_error`` in standard errors.

    An unbiased sampled mean strays beyond 4 standard errors with probability about 6e-5, beyond 5
    about 6e-7 (normal tails). ``atol`` absorbs rounding where a standard error is 0 (a cell whose
    samples never varied must then equal its exact value). Some standard error must be positive:
    samples that never varied test nothing.
    """
    arrays = (np.asarray(x, dtype=np.float64) for x in (sampled, exact, standard_error))
    values, exacts, errors = np.broadcast_arrays(*arrays)
    assert np.any(errors > 0), f"no positive standard error: the samples never varied (sampled {values})"
    distance = np.abs(values - exacts)
    excess = np.nan_to_num(distance - (k * errors + atol), nan=np.inf)
    if np.any(excess > 0):
        worst = np.unravel_index(int(np.argmax(excess)), excess.shape)
        cell = f" at {tuple(int(i) for i in worst)}" if excess.ndim else ""
        z = distance[worst] / errors[worst] if errors[worst] > 0 else np.inf
        raise AssertionError(
            f"sampled {float(values[worst])!r} is {z:.2f} standard errors ({errors[worst]:.3g}) from exact "
            f"{float(exacts[worst])!r}{cell}; at most {k} allowed"
        )


def card_name(card: Any) -> str:
    """An RLCard card as the adapter names it (Leduc's ``Card`` objects, Kuhn's rank strings)."""
    return str(card.get_index()) if hasattr(card, "get_index") else str(card)


def rlcard_deal(engine: Any, game: RLCardGame) -> list[int]:
    """The adapter's chance outcomes for the deal an RLCard engine made: the hands (and for Leduc
    the small-blind seat, who acts first)."""
    hands = [p.hand for p in engine.players] if hasattr(engine, "players") else list(engine.hands)
    outcomes = [game.deck_index[card_name(card)] for card in hands]
    if "seat" in game.spec.deal:
        outcomes.append(int(engine.game_pointer))
    return outcomes


RLCARD_LEDUC_SMALL_BLIND_VALUE = 0.0119127
"""RLCard Leduc's value for the small blind, in BB, as published in the README: OpenSpiel's
sequence-form LP on the bridged game, rerun by the test below. Player 0's value, which averages
the two seats, is 0: the seat is a fair coin and the seats have the same rules."""


def values_by_role(pyspiel_game: pyspiel.Game, policies: list[TabularPolicy]) -> dict[str, float]:
    """Player 0's expected value seated as small blind (``SB``) and as big blind (``BB``).

    The role is read from player 0's information state at the first decision after the deal.
    """
    weighted = {"SB": 0.0, "BB": 0.0}
    mass = {"SB": 0.0, "BB": 0.0}

    def deals(state: pyspiel.State, reach: float) -> Iterator[tuple[pyspiel.State, float]]:
        if not state.is_chance_node():
            yield state, reach
            return
        for outcome, probability in state.chance_outcomes():
            yield from deals(state.child(outcome), reach * probability)

    for state, reach in deals(pyspiel_game.new_initial_state(), 1.0):
        role = state.information_state_string(0).split("|")[3]
        weighted[role] += reach * expected_game_score.policy_value(state, policies)[0]
        mass[role] += reach
    assert mass == pytest.approx({"SB": 0.5, "BB": 0.5})
    return {role: weighted[role] / mass[role] for role in weighted}


class Overtime(BaseException):
    """Raised by :func:`time_limit` in the command under test; not an ``Exception``, so the command cannot
    catch it."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`Overtime` in the block after ``seconds`` of wall time (SIGALRM; the main thread only)."""

    def overtime(signum: int, frame: types.FrameType | None) -> None:
        raise Overtime

    previous = signal.signal(signal.SIGALRM, overtime)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def openspiel_table(tree: CompiledTree, strategy: FloatArray, pyspiel_game: pyspiel.Game) -> Any:
    """``strategy`` as OpenSpiel's ``TabularPolicy`` of ``pyspiel_game``, row by information state."""
    table = TabularPolicy(pyspiel_game)
    for key, row in table.state_lookup.items():
        i = tree.index[key]
        table.action_probability_array[row, :] = 0.0
        table.action_probability_array[row, list(tree.infoset_actions[i])] = strategy[i, : len(tree.infoset_actions[i])]
    return table


def trained_and_scored(out: Path, game_id: str, algorithm: str, iterations: int, *options: str) -> CliRun:
    """``train`` a policy file of an n-player game into ``out``, then ``exploitability`` of it (with ``options``):
    both succeed, and the score names every seat and gives the file's exact NashConv."""
    argv = ["train", "--game", game_id, "--algo", algorithm, "--iterations", str(iterations), "--out", str(out)]
    trained = run_cli(argv)
    assert trained.status == 0, trained.err
    policy = load_policy(out)
    assert policy.game_id == game_id
    scored = run_cli(["exploitability", str(out), *options])
    assert scored.status == 0, scored.err
    tree = load_tree(game_id, any_players=True)
    expected = exploitability_of_strategy(tree, policy.strategy_on(tree)).nash_conv
    assert f"NashConv {expected:.12g}" in scored.out and f"seat {tree.num_players - 1}" in scored.out
    return scored


def resumed_and_whole(
    folder: Path, common: Sequence[str], part: int, whole: int, game_id: str
) -> tuple[FloatArray, FloatArray]:
    """``train`` (``common`` options) for ``part`` iterations with a checkpoint, ``train --resume`` it to ``whole``,
    and the same run uninterrupted: the two policies' strategies on ``game_id``'s tree, resumed first."""
    files = {name: folder / f"{name}.json" for name in ("whole", "part", "resumed")}
    checkpoint = folder / "run.ckpt"
    uninterrupted = run_cli([*common, "--iterations", str(whole), "--out", str(files["whole"])])
    assert uninterrupted.status == 0, uninterrupted.err
    first = run_cli([*common, "--iterations", str(part), "--checkpoint", str(checkpoint), "--out", str(files["part"])])
    assert first.status == 0, first.err
    second = run_cli(["train", "--resume", str(checkpoint), "--iterations", str(whole), "--out", str(files["resumed"])])
    assert second.status == 0, second.err
    tree = load_tree(game_id, any_players=True)
    return load_policy(files["resumed"]).strategy_on(tree), load_policy(files["whole"]).strategy_on(tree)


class Clock:
    """Stands in for ``time.perf_counter``: each iteration of the solver being timed takes 2**-10 s
    and each NashConv check ``check_cost`` times as long, so the check schedule is exact."""

    def __init__(self, check_cost: float) -> None:
        self.check_cost = check_cost
        self.solver: Solver | None = None
        self.checks: list[tuple[int, float]] = []
        """Each check's iteration and NashConv."""

    def __call__(self) -> float:
        iterations = self.solver.iteration if self.solver is not None else 0
        return (iterations + len(self.checks) * self.check_cost) * 2**-10

    def time(self, solver: Solver) -> Solver:
        """Time ``solver`` from here on."""
        self.solver = solver
        return solver

    def nash_conv(self, t: CompiledTree, strategy: FloatArray) -> float:
        assert self.solver is not None, "time a solver first"
        self.checks.append((self.solver.iteration, nash_conv(t, strategy)))
        return self.checks[-1][1]
