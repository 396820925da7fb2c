"""``cfr-agents train``: train a policy on any game and save it as JSON."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

import numpy as np

import cfr_agents.cli.train_neural as train_neural
from adapters import Game, load_game
from adapters.inputs import InputError
from cfr_agents.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from cfr_agents.cli.common import deferred_interrupt, mbb, non_negative_int, positive_float, positive_int, real
from cfr_agents.cli.paths import add_input, add_output
from cfr_agents.files import check_outputs, write_atomic
from cfr_agents.solvers import ALGORITHMS, SAMPLING_CHOICES, TUNABLE, Solver, make_solver
from cfr_agents.solvers.sampling import CHANCE_DRAWS, DEFAULT_EPSILON, check_sampling
from cfr_agents.training import StopRule, TrainingRun, train
from cfr_agents.tree import compile_tree
from eval.train_report import curve_csv, nash_conv, train_report

CHECKPOINT_EVERY = 60.0
"""Seconds between checkpoints unless ``--checkpoint-every`` says otherwise."""


def register(commands: Any) -> None:
    command = commands.add_parser("train", help="train a policy and save it as JSON")
    command.add_argument("--game", help="openspiel:<game string> or rlcard:<env id>")
    command.add_argument(
        "--algo",
        choices=[*sorted(ALGORITHMS), *train_neural.NEURAL],
        help="update rule (from the checkpoint with --resume), or neural CFR: deep-cfr, sd-cfr",
    )
    command.add_argument(
        "--suit-isomorphism",
        action="store_true",
        help="solve the game's lossless suit-isomorphic reduction and save its policy lifted to the game "
        "(openspiel:leduc_poker: the same iterates in exact arithmetic on a smaller tree)",
    )
    command.add_argument("--sampling", choices=SAMPLING_CHOICES, help="none (full tree; default) or an MCCFR scheme")
    command.add_argument("--averaging", metavar="MODE", help="average-strategy mode of the sampling scheme")
    command.add_argument("--epsilon", type=real, help=f"outcome sampling's exploration (default {DEFAULT_EPSILON})")
    command.add_argument(
        "--chance-draws",
        choices=CHANCE_DRAWS,
        help="independent (default): a fresh draw at each chance node; stratified: one "
        "low-discrepancy uniform per traversal drives them all",
    )
    command.add_argument("--iterations", type=positive_int, help="total iterations to run (a cap with targets)")
    command.add_argument("--target-nash-conv", type=positive_float, metavar="X", help="stop at NashConv <= X")
    command.add_argument("--time-limit", type=positive_float, metavar="S", help="stop after S seconds")
    command.add_argument("--seed", type=non_negative_int, help="seed of the sampled solvers, recorded (default 0)")
    command.add_argument("--alpha", type=real, help="DCFR/DCFR+/PDCFR+ alpha (default 1.5, 1.5, 2.3)")
    command.add_argument("--beta", type=real, help="DCFR beta (default 0)")
    command.add_argument("--gamma", type=real, help="DCFR gamma (default 2)")
    add_output(command, "--out", required=True, metavar="FILE", help="policy file to write")
    add_output(command, "--curve", metavar="FILE.csv", help="write (iteration, seconds, nash_conv)")
    add_output(
        command, "--checkpoint", updates="resume", metavar="FILE", help="write the solver's whole state here (.npz)"
    )
    command.add_argument(
        "--checkpoint-every",
        type=positive_float,
        metavar="SECONDS",
        help=f"seconds between checkpoints (default {CHECKPOINT_EVERY:g}); also written at the end and on Ctrl-C",
    )
    add_input(command, "--resume", metavar="FILE", help="continue from a checkpoint; --iterations is the total")
    command.add_argument("--json", action="store_true", help="print one JSON object")
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    train_neural.register_options(command)
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.algo in train_neural.NEURAL:
        if args.suit_isomorphism:
            raise InputError("--suit-isomorphism applies to the tabular solvers, not to --algo deep-cfr or sd-cfr")
        return train_neural.run(args)
    neural = train_neural.given_neural_options(args)
    if neural:
        verb = "applies" if len(neural) == 1 else "apply"
        raise InputError(f"{', '.join(neural)} {verb} to --algo deep-cfr or sd-cfr only")
    if args.iterations is None and args.target_nash_conv is None and args.time_limit is None:
        raise InputError("give --iterations, --target-nash-conv or --time-limit")
    checkpoint_path = args.checkpoint or args.resume
    if args.checkpoint_every is not None and checkpoint_path is None:
        raise InputError("--checkpoint-every needs --checkpoint FILE (or --resume, which checkpoints into its file)")
    check_outputs(args.out, args.curve, checkpoint_path)
    solved = _solved_game(args)
    if args.resume:
        saved = load_checkpoint(args.resume)
        _check_resume(args, saved, solved)
        tree = compile_tree(load_game(saved.game_id))
        solver, seed = saved.solver(tree), saved.seed
    else:
        solver, seed = _new_solver(args, solved)
        tree = solver.tree
    compile_seconds = solver.compile()  # Numba compiles or loads its cache here, outside the timed run
    if not args.json and not args.quiet:
        print(tree.summary(), file=sys.stderr)
    stop = StopRule(args.iterations, args.target_nash_conv, args.time_limit)
    save = (lambda: save_checkpoint(checkpoint_path, solver, seed)) if checkpoint_path else None
    show = not args.quiet and not args.json
    every = CHECKPOINT_EVERY if args.checkpoint_every is None else args.checkpoint_every
    training = _run_with_progress(solver, stop, show=show, curve=bool(args.curve), save=save, every=every)
    policy = replace(solver.average_policy(), parameters={**solver.parameters(), "seed": seed})
    if args.suit_isomorphism:
        policy = policy.for_game(args.game)
    policy.save(args.out)
    if save is not None:
        save()
    if args.curve:
        write_atomic(args.curve, curve_csv(training))
    report = train_report(
        solver,
        training,
        seed=seed,
        resumed_from=training.started_at if args.resume else None,
        compile_seconds=compile_seconds,
        out=args.out,
        checkpoint=checkpoint_path,
        policy_game=policy.game_id,
    )
    if args.json:
        print(json.dumps(asdict(report), allow_nan=False))
    else:
        scheme = "" if report.sampling == "none" else f" ({report.sampling} sampling)"
        resumed = f" (from {training.started_at:,} to {training.iterations:,})" if args.resume else ""
        lifted = f" (lifted from {tree.game_id})" if policy.game_id != tree.game_id else ""
        rate = training.iterations_per_second
        speed = "too fast to time" if rate is None else f"{rate:,.0f} it/s"
        print(
            f"{report.algo}{scheme}: {training.iterations_run:,} iterations{resumed} in "
            f"{training.solve_seconds:.3f} s ({speed}, stopped by {training.stopped_by}); "
            f"NashConv {training.nash_conv:.6g} {tree.units}{mbb(training.nash_conv, tree.units)}, "
            f"exploitability {training.nash_conv / 2:.6g} {tree.units}; saved {args.out}{lifted}"
        )
    return 0


def _solved_game(args: argparse.Namespace) -> Game | None:
    """The game the solver runs on: ``--game``, or its suit-isomorphic reduction with --suit-isomorphism."""
    if args.game is None:
        if args.suit_isomorphism:
            raise InputError("--suit-isomorphism needs --game (the game its policy is for)")
        return None
    game = load_game(args.game)
    if not args.suit_isomorphism:
        return game
    reduction = game.reduction()
    if reduction is None:
        raise InputError(f"{args.game} has no suit-isomorphic reduction here (openspiel:leduc_poker has one)")
    return load_game(reduction.game_id)


def _new_solver(args: argparse.Namespace, solved: Game | None) -> tuple[Solver, int]:
    if solved is None or args.algo is None:
        raise InputError("give --game and --algo (or --resume a checkpoint)")
    overrides = {k: getattr(args, k) for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None}
    tunable = TUNABLE.get(args.algo, ())
    if any(name not in tunable for name in overrides):
        allowed = "; ".join(f"{algo}: --{'/--'.join(names)}" for algo, names in TUNABLE.items())
        raise InputError(f"--{'/--'.join(overrides)} do not apply to --algo {args.algo} ({allowed})")
    rule = replace(ALGORITHMS[args.algo], **overrides)
    if rule.scheduled and args.iterations is not None:
        rule = replace(rule, horizon=args.iterations)  # a schedule spans the run: T = --iterations
    sampling = args.sampling or "none"
    if sampling != "none":
        check_sampling(sampling, rule, args.averaging, args.epsilon, args.chance_draws)
    seed = 0 if args.seed is None else args.seed
    tree = compile_tree(solved)
    solver = make_solver(
        tree,
        args.algo,
        rule,
        sampling=sampling,
        rng=np.random.default_rng(seed),
        averaging=args.averaging,
        epsilon=args.epsilon,
        chance_draws=args.chance_draws,
    )
    return solver, seed


def _check_resume(args: argparse.Namespace, saved: Checkpoint, solved: Game | None) -> None:
    """Refuse options that contradict the checkpoint being resumed."""
    if args.iterations is not None and args.iterations <= saved.iteration:
        raise InputError(
            f"the checkpoint is already at iteration {saved.iteration}; "
            f"--iterations is the total, give more than {saved.iteration}"
        )
    if solved is not None and solved.game_id != saved.game_id:
        raise InputError(f"the checkpoint is for game {saved.game_id!r}, not {solved.game_id!r}")
    saved.check(
        algorithm=args.algo,
        sampling=args.sampling,
        averaging=args.averaging,
        epsilon=args.epsilon,
        chance_draws=args.chance_draws,
        seed=args.seed,
    )
    given = {k: getattr(args, k) for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None}
    if given and replace(saved.rule, **given) != saved.rule:
        raise InputError(f"the checkpoint's rule is {saved.rule.parameters()}; --alpha/--beta/--gamma differ")


def _run_with_progress(
    solver: Solver, stop: StopRule, *, show: bool, curve: bool, save: Callable[[], None] | None, every: float
) -> TrainingRun:
    """Train with a progress bar; checkpoint every ``every`` seconds, and on Ctrl-C before exiting.

    Ctrl-C is held until the current batch of iterations ends, so the checkpoint is a consistent state.
    """
    from tqdm import tqdm

    last_save = time.monotonic()
    with (
        tqdm(
            initial=solver.iteration,
            total=stop.iterations,
            disable=None if show else True,
            unit="it",
            file=sys.stderr,
            leave=False,
        ) as bar,
        deferred_interrupt() as interrupt,
    ):

        def progress(iteration: int, nash_conv: float | None) -> None:
            nonlocal last_save
            bar.update(iteration - bar.n)
            if nash_conv is not None:
                bar.set_postfix_str(f"NashConv {nash_conv:.3g}", refresh=False)
            if save is not None and (interrupt.requested or time.monotonic() - last_save >= every):
                save()
                last_save = time.monotonic()
            if interrupt.requested:
                raise KeyboardInterrupt("checkpoint written" if save is not None else "")

        # A visible bar shows NashConv measured at the curve's log-spaced iterations.
        return train(solver, stop, nash_conv, record_curve=curve or not bar.disable, on_progress=progress)
