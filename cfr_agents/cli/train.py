"""``cfr-agents train``: train a policy (or a Deep CFR / SD-CFR model) on any game and save it.

Every solver -- full-tree, sampled, neural -- runs through one loop (:func:`cfr_agents.training.train`)
with the same stopping rules, curve, checkpoints and report; an option that does not apply to the
solver's family is refused in one line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import numpy as np

import cfr_agents.cli.train_neural as train_neural
from adapters import Game, load_game
from adapters.holdem.engine import RLCARD_LIMIT
from adapters.holdem.rules import limit_rules
from adapters.inputs import InputError
from cfr_agents.abstract_game import AbstractGame
from cfr_agents.abstract_strategy import save_abstract_strategy
from cfr_agents.checkpoint import AnyCheckpoint, Checkpoint, NeuralCheckpoint, read_checkpoint, save_checkpoint
from cfr_agents.cli.common import (
    MAX_WORKERS,
    Within,
    check_memory,
    deferred_interrupt,
    mbb,
    non_negative_int,
    positive_int,
    real,
    workers,
)
from cfr_agents.cli.paths import add_input, add_output
from cfr_agents.files import check_outputs, write_atomic
from cfr_agents.jobs import LocalPool, executor
from cfr_agents.public_tree import COMPILED_TREE_CARDS, public_by_default, public_tree
from cfr_agents.public_tree.solver import PublicTreeSolver, peak_bytes
from cfr_agents.public_tree.strategy_file import save_strategy, strategy_paths
from cfr_agents.public_tree.tree import PublicTree
from cfr_agents.solvers import ALGORITHMS, SAMPLING_CHOICES, TUNABLE, SampledSolver, make_solver
from cfr_agents.solvers.full_tree import FullTreeSolver
from cfr_agents.solvers.neural import NEURAL, NeuralSolver, infoset_tensors, make_neural_solver
from cfr_agents.solvers.neural.holdem import EngineGame, HoldemNeuralSolver
from cfr_agents.solvers.sampling import CHANCE_DRAWS, DEFAULT_EPSILON, EPSILON, check_sampling, table_bytes
from cfr_agents.solvers.sampling.scale_out import (
    DEFAULT_BATCH_ITERATIONS,
    DEFAULT_BATCHES,
    Rounds,
    ScaleOutSolver,
    Workers,
    scale_out_bytes,
)
from cfr_agents.solvers.update_rule import ALPHA, BETA, GAMMA, UpdateRule
from cfr_agents.training import NASH_CONV_TARGET, SECONDS, StopRule, Trainable, TrainingRun, curve_csv, train
from cfr_agents.tree import CompiledTree, FloatArray, compile_tree
from eval.train_report import engine_nash_conv, nash_conv, scores_exactly, scoring_bytes, train_report

ENGINES = ("auto", "tree", "public-tree")
SCALE_OUT = ("workers", "batches", "batch_iterations", "ray")
"""The options of a run in synchronous rounds (:mod:`cfr_agents.solvers.sampling.scale_out`)."""
CHECKPOINT_EVERY = 60.0
"""Seconds between checkpoints unless ``--checkpoint-every`` says otherwise."""


def register(commands: Any) -> None:
    command = commands.add_parser("train", help="train a policy (or a neural CFR model) and save it as JSON")
    command.add_argument("--game", help="openspiel:<game string> or rlcard:<env id>")
    command.add_argument(
        "--algo",
        choices=[*sorted(ALGORITHMS), *NEURAL],
        help="update rule, or neural CFR: deep-cfr, sd-cfr (from the checkpoint with --resume)",
    )
    command.add_argument(
        "--suit-isomorphism",
        action="store_true",
        help="solve the game's lossless suit-isomorphic reduction and save its policy lifted to the game "
        "(openspiel:leduc_poker: the same iterates in exact arithmetic on a smaller tree)",
    )
    command.add_argument(
        "--engine",
        choices=ENGINES,
        help="auto (default): full-game CFR on the public tree for hold'em games past 12 cards (fhp, fhp-acpc, "
        "hulh, ...), the compiled tree for the rest; tree; public-tree (two-player limit universal_poker only)",
    )
    command.add_argument(
        "--sampling",
        choices=SAMPLING_CHOICES,
        help="none (full tree; default) or an MCCFR scheme (external by default with --abstraction)",
    )
    add_input(
        command,
        "--abstraction",
        metavar="DIR",
        help="train MCCFR on a limit hold'em game through this card abstraction (cfr-agents abstraction build): "
        "no game tree in memory; --out names a .npz/.json strategy pair",
    )
    command.add_argument("--averaging", metavar="MODE", help="average-strategy mode of the sampling scheme")
    command.add_argument(
        "--epsilon", type=real, help=f"outcome sampling's exploration, in {EPSILON} (default {DEFAULT_EPSILON})"
    )
    command.add_argument(
        "--chance-draws",
        choices=CHANCE_DRAWS,
        help="independent (default): a fresh draw at each chance node; stratified: one "
        "low-discrepancy uniform per traversal drives them all",
    )
    command.add_argument(
        "--workers",
        type=workers,
        help="run a sampled solver in synchronous rounds of --batches batches on K local processes (1: in this "
        f"process; at most {MAX_WORKERS}); --iterations then counts rounds",
    )
    command.add_argument(
        "--batches",
        type=positive_int,
        metavar="B",
        help=f"batches a round, each from the round's snapshot with its own seed (default {DEFAULT_BATCHES}); the "
        "result depends on B, never on --workers",
    )
    command.add_argument(
        "--batch-iterations",
        type=positive_int,
        metavar="M",
        help=f"iterations of each batch (default {DEFAULT_BATCH_ITERATIONS:,})",
    )
    command.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="HOST:PORT",
        help="run the rounds' batches on Ray: a local runtime, or the cluster at HOST:PORT (extra 'ray')",
    )
    command.add_argument("--iterations", type=positive_int, help="total iterations to run (a cap with targets)")
    command.add_argument(
        "--target-nash-conv",
        type=Within(NASH_CONV_TARGET),
        metavar="X",
        help=f"stop at NashConv <= X, X in {NASH_CONV_TARGET}",
    )
    command.add_argument(
        "--time-limit", type=Within(SECONDS), metavar="S", help=f"stop after S seconds, S in {SECONDS}"
    )
    command.add_argument("--seed", type=non_negative_int, help="seed of the sampled and neural solvers (default 0)")
    command.add_argument("--alpha", type=real, help=f"DCFR/DCFR+/PDCFR+ alpha, in {ALPHA} (default 1.5, 1.5, 2.3)")
    command.add_argument("--beta", type=real, help=f"DCFR beta, in {BETA} (default 0)")
    command.add_argument(
        "--gamma",
        type=real,
        help=f"DCFR/DCFR+/PDCFR+/HS-PCFR+ gamma, in {GAMMA} (default 2, 4, 5, 30; HS-PCFR+'s falls by 5 and must "
        "stay in range)",
    )
    add_output(
        command,
        "--out",
        required=True,
        beside=(".safetensors",),
        metavar="FILE",
        help="policy file to write (deep-cfr, sd-cfr: the model's FILE.json, its weights in FILE.safetensors)",
    )
    add_output(command, "--curve", metavar="FILE.csv", help="write (iteration, seconds, nash_conv, nodes_touched)")
    command.add_argument(
        "--eval-every",
        type=positive_int,
        metavar="N",
        help="measure NashConv every N iterations (the curve's points, and a target's checks) instead of at "
        "log-spaced iterations",
    )
    add_output(
        command, "--checkpoint", updates="resume", metavar="FILE", help="write the solver's whole state here (.npz)"
    )
    command.add_argument(
        "--checkpoint-every",
        type=Within(SECONDS),
        metavar="SECONDS",
        help=f"seconds between checkpoints, in {SECONDS} (default {CHECKPOINT_EVERY:g}); also written at the end "
        "and on Ctrl-C",
    )
    add_input(command, "--resume", metavar="FILE", help="continue from a checkpoint; --iterations is the total")
    command.add_argument("--json", action="store_true", help="print one JSON object")
    command.add_argument("--quiet", action="store_true", help="no progress bar")
    train_neural.register_options(command)
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    saved = read_checkpoint(args.resume) if args.resume else None
    if saved is not None:
        saved.check(algorithm=args.algo)
    algorithm = args.algo if saved is None else saved.algorithm
    if algorithm is None:
        if args.suit_isomorphism and args.game is None:
            raise InputError("--suit-isomorphism needs --game (the game its policy is for)")
        raise InputError("give --game and --algo (or --resume a checkpoint)")
    neural = algorithm in NEURAL
    if neural and args.abstraction is not None:
        raise InputError(f"--algo {algorithm} trains on the compiled tree, not through --abstraction")
    train_neural.refuse_inapplicable(args, algorithm)
    if args.iterations is None and args.target_nash_conv is None and args.time_limit is None:
        raise InputError("give --iterations, --target-nash-conv or --time-limit")
    checkpoint_path = args.checkpoint or args.resume
    if args.checkpoint_every is not None and checkpoint_path is None:
        raise InputError("--checkpoint-every needs --checkpoint FILE (or --resume, which checkpoints into its file)")
    if neural and not args.out.endswith(".json"):
        raise InputError(f"--out must name a .json file (the weights go beside it), got {args.out!r}")
    from eval.opponents.neural import outputs, save_trained  # loads the toolkits' agents: only when training

    preset = saved.preset if isinstance(saved, NeuralCheckpoint) else train_neural.preset(args)
    if neural and saved is None:
        train_neural.settings(args)  # refused now, before the game is built
    check_outputs(*(outputs(args.out) if neural else (args.out,)), args.curve, checkpoint_path)
    rounds = _rounds(args, saved, algorithm)
    where = None if rounds is None else _workers(args)
    solver, seed = _resumed(args, saved, where) if saved is not None else _new_solver(args, algorithm, where)
    if rounds is not None and where is not None:
        assert isinstance(solver, SampledSolver)
        solver = ScaleOutSolver(solver, seed, rounds, where)
    if isinstance(solver, PublicTreeSolver) or isinstance(solver.tree, AbstractGame):
        arrays, sidecar = strategy_paths(args.out)  # the pair --out names, refused now rather than after the run
        flag = "--checkpoint" if args.checkpoint else "--resume"
        for option, other in (("--curve", args.curve), (flag, checkpoint_path)):
            if other is not None and Path(other).resolve() in (arrays.resolve(), sidecar.resolve()):
                raise InputError(f"--out {args.out} writes {arrays} and {sidecar}; {option} {other} is one of them")
        check_outputs(arrays, sidecar, args.curve, checkpoint_path)
    elif not neural and args.out.endswith(".npz"):
        raise InputError(
            f"--out {args.out}: the compiled tree's solvers write a JSON policy; .npz names the public tree's "
            "strategy files (--engine public-tree)"
        )
    tree = solver.tree
    scored = scores_exactly(tree)
    if not scored and (args.target_nash_conv is not None or args.curve or args.eval_every is not None):
        raise InputError(
            f"nothing here scores {tree.game_id} exactly (no public tree fits one machine): "
            "--target-nash-conv, --curve and --eval-every need NashConv"
        )
    compile_seconds = solver.compile()  # Numba compiles or loads its cache here, outside the timed run
    if not args.json and not args.quiet:
        print(tree.summary(), file=sys.stderr)
        if isinstance(tree, PublicTree | AbstractGame) or where is not None:
            print(check_memory(tree.game_id, _peak_bytes(tree, where)), file=sys.stderr)
    stop = StopRule(args.iterations, args.target_nash_conv, args.time_limit)
    save = (lambda: save_checkpoint(checkpoint_path, solver, seed, preset)) if checkpoint_path else None
    show = not args.quiet and not args.json
    every = CHECKPOINT_EVERY if args.checkpoint_every is None else args.checkpoint_every
    curve = bool(args.curve) or args.eval_every is not None
    try:
        training = _run_with_progress(
            solver,
            stop,
            show=show,
            curve=curve,
            live=not neural and scored,
            eval_every=args.eval_every,
            save=save,
            every=every,
            score=nash_conv if scored else None,
        )
    finally:
        if isinstance(solver, ScaleOutSolver):
            solver.close()  # the workers stop; the tables stay
    if neural:
        assert isinstance(solver, NeuralSolver | HoldemNeuralSolver)
        model_nash_conv = save_trained(
            args.out, solver, training, seed=seed, preset=preset, curve=curve, score=engine_nash_conv
        )
        policy_game = tree.game_id
    elif isinstance(solver, PublicTreeSolver):
        save_strategy(
            args.out,
            solver.tree,
            solver.average_strategy(),
            algorithm=solver.algorithm,
            parameters={**solver.parameters(), "seed": seed},
            iterations=solver.iteration,
        )
        model_nash_conv, policy_game = training.nash_conv, tree.game_id
    elif isinstance(tree, AbstractGame):
        save_abstract_strategy(
            args.out,
            tree,
            solver.average_strategy(),
            algorithm=solver.algorithm,
            parameters={**solver.parameters(), "seed": seed},
            iterations=solver.iteration,
        )
        model_nash_conv, policy_game = training.nash_conv, tree.game_id
    else:
        assert isinstance(solver, FullTreeSolver | SampledSolver | ScaleOutSolver)
        policy = replace(solver.average_policy(), parameters={**solver.parameters(), "seed": seed})
        if args.suit_isomorphism:
            policy = policy.for_game(args.game)
        policy.save(args.out)
        model_nash_conv, policy_game = training.nash_conv, policy.game_id
    if save is not None:
        save()
    if args.curve:
        write_atomic(args.curve, curve_csv(training.curve))
    report = train_report(
        solver,
        training,
        seed=seed,
        resumed_from=training.started_at if args.resume else None,
        compile_seconds=compile_seconds,
        out=args.out,
        checkpoint=checkpoint_path,
        policy_game=policy_game,
        nash_conv=model_nash_conv,
    )
    if args.json:
        print(json.dumps(asdict(report), allow_nan=False))
    else:
        scheme = "" if report.sampling == "none" or neural else f" ({report.sampling} sampling)"
        resumed = f" (from {training.started_at:,} to {training.iterations:,})" if args.resume else ""
        lifted = f" (lifted from {tree.game_id})" if policy_game != tree.game_id else ""
        rate = training.iterations_per_second
        done = f"{training.iterations_run:,} iterations"
        if isinstance(solver, ScaleOutSolver):  # a round is B x M iterations
            per_round = solver.rounds.batches * solver.rounds.batch_iterations
            done = f"{training.iterations_run:,} rounds of {solver.rounds.batches} x {solver.rounds.batch_iterations:,}"
            rate = None if rate is None else rate * per_round
        speed = "too fast to time" if rate is None else f"{rate:,.0f} it/s" if rate >= 10 else f"{rate:.3g} it/s"
        score = (
            "NashConv not measured (nothing scores this game exactly)"
            if report.nash_conv is None
            else f"NashConv {report.nash_conv:.6g} {tree.units}{_mbb(report.nash_conv, tree)}, "
            + (
                "exploitability undefined (the payoffs do not add up to one total)"
                if report.exploitability is None
                else f"exploitability {report.exploitability:.6g} {tree.units}"
            )
        )
        print(
            f"{report.algo}{scheme}: {done}{resumed} in "
            f"{training.solve_seconds:.3f} s ({speed}, stopped by {training.stopped_by}); {score}; "
            f"saved {args.out}{lifted}"
        )
    return 0


def _solved_game(args: argparse.Namespace) -> Game | None:
    """The game the solver runs on: ``--game``, or its suit-isomorphic reduction with --suit-isomorphism."""
    if args.game is None:
        if args.suit_isomorphism:
            raise InputError("--suit-isomorphism needs --game (the game its policy is for)")
        return None
    game = load_game(args.game, any_players=True)
    if game.num_players != 2 or not game.zero_sum:
        _check_full_tree(args)
    if not args.suit_isomorphism:
        return game
    if args.engine == "public-tree" or (args.engine in (None, "auto") and public_by_default(limit_rules(game))):
        raise InputError(_NOT_PUBLIC.format(option="--suit-isomorphism"))
    reduction = game.reduction()
    if reduction is None:
        raise InputError(f"{args.game} has no suit-isomorphic reduction here (openspiel:leduc_poker has one)")
    return load_game(reduction.game_id)


def _check_full_tree(args: argparse.Namespace) -> None:
    """Refuse, in one line, the options that run neither the full-tree nor the sampled solvers, which alone take
    n-player and general-sum games."""
    asked = {
        "--algo " + str(args.algo): args.algo in NEURAL,
        "--abstraction": args.abstraction is not None,
        "--engine public-tree": args.engine == "public-tree",
    }
    given = next((option for option, present in asked.items() if present), None)
    if given is not None:
        raise InputError(
            f"{given} takes two-player zero-sum games; {args.game} is not one: n-player and general-sum games train "
            "with the full-tree or sampled algorithms"
        )


def _rounds(args: argparse.Namespace, saved: AnyCheckpoint | None, algorithm: str) -> Rounds | None:
    """The rounds of a scale-out run (``--workers``, ``--batches``, ``--batch-iterations``, ``--ray``, or a resumed
    checkpoint's); ``None`` for a run in one process. Options that do not apply, or contradict the checkpoint, are
    refused."""
    asked = [f"--{name.replace('_', '-')}" for name in SCALE_OUT if getattr(args, name) is not None]
    if saved is not None:
        kept = saved.rounds if isinstance(saved, Checkpoint) else None
        if kept is None:
            if asked:
                raise InputError(f"the checkpoint was written by one process; {asked[0]} does not apply to it")
            return None
        if Rounds(args.batches or kept.batches, args.batch_iterations or kept.batch_iterations) != kept:
            raise InputError(
                f"the checkpoint's rounds are {kept.batches} batches of {kept.batch_iterations:,} iterations; "
                "--batches and --batch-iterations must not change them"
            )
        return kept
    if not asked:
        return None
    if algorithm in NEURAL or (args.abstraction is None and args.sampling in (None, "none")):
        raise InputError(f"{asked[0]} runs a sampled solver in rounds: give --sampling SCHEME or --abstraction DIR")
    return Rounds(args.batches or DEFAULT_BATCHES, args.batch_iterations or DEFAULT_BATCH_ITERATIONS)


def _workers(args: argparse.Namespace) -> Workers:
    """Where the rounds' batches run: on Ray with ``--ray``, else on ``--workers`` local processes (1: this one)."""
    return Workers(executor(args.workers, args.ray) if args.ray is not None else LocalPool(args.workers or 1))


def _new_solver(args: argparse.Namespace, algorithm: str, where: Workers | None) -> tuple[Trainable, int]:
    if args.abstraction is not None:
        return _abstract_solver(args, algorithm, where)
    solved = _solved_game(args)
    if solved is None:
        raise InputError("give --game and --algo (or --resume a checkpoint)")
    seed = 0 if args.seed is None else args.seed
    rng = np.random.default_rng(seed)
    rules = limit_rules(solved)
    if args.engine == "tree" and public_by_default(rules):
        raise InputError(
            f"the compiled tree takes hold'em games of up to {COMPILED_TREE_CARDS} cards; {args.game} runs on its "
            "public tree (--engine public-tree, the default)"
        )
    if algorithm in NEURAL:
        if args.engine == "public-tree" or public_by_default(rules) or solved.game_id == RLCARD_LIMIT:
            for option in ("checkpoint", "curve", "eval_every", "target_nash_conv"):
                if getattr(args, option) is not None:
                    raise InputError(
                        f"--{option.replace('_', '-')} does not apply to --algo {algorithm} on the hold'em engine "
                        f"({args.game}): its model is scored once, when saved"
                    )
            return HoldemNeuralSolver(solved.game_id, algorithm, train_neural.settings(args), rng), seed
        tree = compile_tree(solved)
        return make_neural_solver(tree, infoset_tensors(tree), algorithm, train_neural.settings(args), rng=rng), seed
    rule = _rule(args, algorithm)
    if _public_engine(args, solved):
        public = public_tree(solved.game_id)
        check_memory(public.game_id, _peak_bytes(public))
        return PublicTreeSolver(public, rule, algorithm), seed
    sampling = args.sampling or "none"
    if sampling != "none":
        check_sampling(sampling, rule, args.averaging, args.epsilon, args.chance_draws)
    tree = compile_tree(solved)
    if where is not None:
        check_memory(tree.game_id, scale_out_bytes(tree, where))
    solver = make_solver(
        tree,
        algorithm,
        rule,
        sampling=sampling,
        rng=rng,
        averaging=args.averaging,
        epsilon=args.epsilon,
        chance_draws=args.chance_draws,
    )
    return solver, seed


def _rule(args: argparse.Namespace, algorithm: str) -> UpdateRule:
    """``algorithm``'s update rule with the parameters given (``--alpha``, ``--beta``, ``--gamma``)."""
    overrides = {k: getattr(args, k) for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None}
    tunable = TUNABLE.get(algorithm, ())
    if any(name not in tunable for name in overrides):
        allowed = "; ".join(f"{algo}: --{'/--'.join(names)}" for algo, names in TUNABLE.items())
        raise InputError(f"--{'/--'.join(overrides)} do not apply to --algo {algorithm} ({allowed})")
    rule = replace(ALGORITHMS[algorithm], **overrides)
    if rule.scheduled and args.iterations is not None:
        rule = replace(rule, horizon=args.iterations)  # a schedule spans the run: T = --iterations
    return rule


def _abstract_solver(args: argparse.Namespace, algorithm: str, where: Workers | None) -> tuple[Trainable, int]:
    """MCCFR on ``--abstraction``'s game through it (``--game``, if given, must be that game)."""
    for option, given in (("--engine", args.engine), ("--suit-isomorphism", args.suit_isomorphism or None)):
        if given is not None:
            raise InputError(f"{option} does not apply with --abstraction (the abstraction is the game trained)")
    try:
        game = AbstractGame.load(args.abstraction, args.game)
    except InputError as error:
        raise InputError(f"--abstraction: {error}") from None
    check_memory(game.game_id, _peak_bytes(game, where))
    rule = _rule(args, algorithm)
    if rule.predictive or rule.discount_first or rule.scheduled:
        sampled = ", ".join(
            name for name, r in ALGORITHMS.items() if not (r.predictive or r.discount_first or r.scheduled)
        )
        raise InputError(f"--algo {algorithm} runs on a full tree; --abstraction trains MCCFR with {sampled}")
    seed = 0 if args.seed is None else args.seed
    solver = make_solver(
        game,
        algorithm,
        rule,
        sampling=args.sampling or "external",
        rng=np.random.default_rng(seed),
        averaging=args.averaging,
        epsilon=args.epsilon,
        chance_draws=args.chance_draws,
    )
    return solver, seed


def _resumed(args: argparse.Namespace, saved: AnyCheckpoint, where: Workers | None) -> tuple[Trainable, int]:
    """The solver of the checkpoint ``saved``, after refusing options that contradict it."""
    if args.iterations is not None and args.iterations <= saved.iteration:
        raise InputError(
            f"the checkpoint is already at iteration {saved.iteration}; "
            f"--iterations is the total, give more than {saved.iteration}"
        )
    solved = _solved_game(args)
    if solved is not None and solved.game_id != saved.game_id:
        raise InputError(f"the checkpoint is for game {saved.game_id!r}, not {solved.game_id!r}")
    saved.check(seed=args.seed)
    if isinstance(saved, NeuralCheckpoint):
        train_neural.check_resume(args, saved.settings, saved.preset)
    else:
        _check_tabular_resume(args, saved)
        if saved.engine == "public-tree":
            if args.engine == "tree":
                raise InputError("the checkpoint was written by --engine public-tree, not tree")
            return saved.public_solver(public_tree(saved.game_id)), saved.seed
        if saved.engine == "abstraction":
            game = saved.abstract_game(args.abstraction)
            if where is not None:
                check_memory(game.game_id, _peak_bytes(game, where))
            return saved.solver(game, take=True), saved.seed
    if args.abstraction is not None:
        raise InputError("the checkpoint was not written by a solver on an abstraction: drop --abstraction")
    if args.engine == "public-tree":
        raise InputError("the checkpoint was written by a solver on the compiled tree, not --engine public-tree")
    tree: CompiledTree = compile_tree(load_game(saved.game_id, any_players=True))
    return saved.solver(tree), saved.seed


def _public_engine(args: argparse.Namespace, game: Game) -> bool:
    """Whether ``--engine`` (or its default, ``auto``) runs ``game`` on its public tree; options the public tree
    does not take are refused."""
    rules = limit_rules(game)
    if args.engine == "public-tree" and rules is None:
        raise InputError(f"--engine public-tree runs two-player limit universal_poker games, not {game.game_id}")
    public = args.engine == "public-tree" or (args.engine in (None, "auto") and public_by_default(rules))
    if public and args.sampling not in (None, "none"):
        raise InputError(_NOT_PUBLIC.format(option="--sampling"))
    return public


_NOT_PUBLIC = (
    "{option} does not apply to full-game CFR on the public tree (it uses suit isomorphism itself); give --engine "
    "tree for the compiled tree"
)


def _peak_bytes(tree: CompiledTree | PublicTree | AbstractGame | EngineGame, where: Workers | None = None) -> int:
    """The memory training on ``tree`` needs at its peak: full-game CFR's on a public tree, MCCFR's tables and the
    abstraction on an abstract game with what scoring its strategy on the game's public tree adds, and in rounds
    on ``where`` the workers' too."""
    if isinstance(tree, PublicTree):
        return peak_bytes(tree)
    assert not isinstance(tree, EngineGame), "neural CFR on the engine holds no tables"
    tables = table_bytes(tree) if where is None else scale_out_bytes(tree, where)
    return tables + scoring_bytes(tree) if isinstance(tree, AbstractGame) else tables


def _mbb(value: float, tree: CompiledTree | PublicTree | AbstractGame | EngineGame) -> str:
    """`` (N mbb/g)`` for hold'em games (thousandths of a big blind) and games paid in big blinds."""
    if isinstance(tree, PublicTree):
        return f" ({value / tree.rules.big_blind * 1000:.4g} mbb/g)"
    if isinstance(tree, AbstractGame | EngineGame):
        return f" ({value * tree.engine.payoff_scale / tree.engine.rules.big_blind * 1000:.4g} mbb/g)"
    return mbb(value, tree.units)


def _check_tabular_resume(args: argparse.Namespace, saved: Checkpoint) -> None:
    """Refuse sampling options, rule parameters and a total that contradict the checkpoint being resumed."""
    saved.check(
        sampling=args.sampling,
        averaging=args.averaging,
        epsilon=args.epsilon,
        chance_draws=args.chance_draws,
    )
    given = {k: getattr(args, k) for k in ("alpha", "beta", "gamma") if getattr(args, k) is not None}
    if given and replace(saved.rule, **given) != saved.rule:
        raise InputError(f"the checkpoint's rule is {saved.rule.parameters()}; --alpha/--beta/--gamma differ")
    horizon = saved.rule.horizon
    fresh = ALGORITHMS[saved.algorithm].horizon if args.iterations is None else args.iterations
    if saved.rule.scheduled and horizon != fresh:  # a fresh run's schedule spans --iterations (or the default)
        asked = "no --iterations" if args.iterations is None else f"--iterations {args.iterations}"
        raise InputError(
            f"the checkpoint's {saved.algorithm} schedule spans T = {horizon} iterations, and a fresh run with "
            f"{asked} spans {fresh}: resume it with --iterations {horizon}"
        )


def _run_with_progress(
    solver: Trainable,
    stop: StopRule,
    *,
    show: bool,
    curve: bool,
    live: bool,
    eval_every: int | None,
    save: Callable[[], None] | None,
    every: float,
    score: Callable[[Any, FloatArray], float] | None = nash_conv,
) -> TrainingRun:
    """Train with a progress bar; checkpoint every ``every`` seconds, and on Ctrl-C before exiting.

    Ctrl-C is held until the current batch of iterations ends, so the checkpoint is a consistent state.
    ``live``: a visible bar shows NashConv measured at the curve's marks even without ``curve``.
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

        record = curve or (live and not bar.disable)
        return train(solver, stop, score, record_curve=record, every=eval_every, on_progress=progress)
