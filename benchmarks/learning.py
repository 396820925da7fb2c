r"""Learning curve of data-biased responses built from logged hands, against every RLCard Leduc opponent.

Run from the repository root::

    .venv/bin/python benchmarks/learning.py [--quick] [--opponents A,B,...] [--seeds N] [--hands N,N,...]
        [--observe full|showdown] [--precision NASHCONV] [--out PREFIX]

Method, for each opponent and seed:

* The observer is an equilibrium: the RNR game at :math:`p = 0`, solved to NashConv ``--precision``.
  It plays the largest number of ``--hands`` against the opponent in RLCard's environment, in duplicate
  pairs with seats swapped, and every hand goes into a hand log (:mod:`eval.hand_log`). Both agents
  play their exact strategy tables, with their own random streams. An RLCard agent's probabilities
  depend only on its state, so the hands are distributed as the agent's own would be, and 10^5 hands
  of the slower agents (NFSP's network) fit the time.
* For each ``n`` of ``--hands``, the model comes from the log's first ``n`` hands
  (:func:`eval.exploitation.hands.model_from_log`: ``--observe`` mode, Dirichlet prior
  :math:`\alpha = 1`). Against it:

  - DBR, :math:`c_I = P_\max \min(1, n_I / k)` with the defaults :math:`P_\max = 0.8` and
    :math:`k = 20`, solved to NashConv ``--precision`` in each seat's transform;
  - the plain best response to the model.

  For each response: its exact gain against the real opponent :math:`u(\sigma, \sigma_\mathrm{true})`,
  the gain the model predicts :math:`u(\sigma, \hat\sigma)`, and its exact exploitability.
* Per opponent, the references: the equilibrium's gain, the best response to the true strategy (the
  most any strategy wins), and the ceiling, RNR on the true strategy at :math:`p = P_\max`.

Every number is exact on the compiled tree, the mean over both exploiter seats (the opponent sat in
both), in BB per hand. Over seeds the tables give the mean and the standard deviation. The results go
to ``PREFIX.md`` and ``PREFIX.json``: ``benchmarks/results/learning``, or ``learning_quick`` with
``--quick``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

from benchmarks.report import OneLineParser, Table, machine_facts, now, one_line_errors, progress
from cfr_agents.files import write_atomic
from cfr_agents.policy import Policy
from cfr_agents.rlcard_agent import PolicyAgent
from cfr_agents.tree import CompiledTree, FloatArray, load_tree
from eval.best_response import best_response_strategy
from eval.environments import play_rlcard_match
from eval.exploitation.hands import (
    DEFAULT_K,
    DEFAULT_P_MAX,
    DEFAULT_PRIOR,
    OBSERVATIONS,
    confidence_function,
    model_from_log,
    solve_logged_dbr,
)
from eval.exploitation.model import OpponentModel, exact_model
from eval.exploitation.report import LearningScore as Score
from eval.exploitation.response import DEFAULT_ALGORITHM, solve_rnr
from eval.exploitation.tradeoff import tradeoff
from eval.hand_log import HandLog

GAME = "rlcard:leduc-holdem"
OPPONENTS = ("random", "rlcard-rule-v1", "rlcard-rule-v2", "rlcard-pretrained-cfr", "rlcard-nfsp", "rlcard-cfr")
HANDS = (100, 316, 1_000, 3_162, 10_000, 31_623, 100_000)
"""From 10^2 to 10^5, half a decade apart."""
SEEDS = 5
PRECISION = 1e-4
r"""NashConv of each DBR and RNR game, in BB. A DBR game weighs the real opponent's best reply by the
product of :math:`1 - c_I` over the infosets where it deviates, so a solution within :math:`\delta` of the
DBR game's value can be much further from the response's best exploitability; a tight :math:`\delta`
keeps that spread small."""
QUICK = {"opponents": ("random", "rlcard-rule-v1"), "hands": (100, 1_000, 10_000), "seeds": 2}
OBSERVER = "equilibrium"
SEATS = (0, 1)
RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Point:
    opponent: str
    seed: int
    hands: int
    revealed: int
    observed_infosets: int
    """Opponent infosets with at least one observation."""
    dbr: Score
    best_response: Score
    seconds: float
    """Building the model, solving the DBR and scoring both responses."""


@dataclass(frozen=True)
class Reference:
    opponent: str
    source: str
    equilibrium_gain: float
    best_response_gain: float
    best_response_exploitability: float
    ceiling_p: float
    ceiling_gain: float
    ceiling_exploitability: float


def parse_options(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 opponents, 10^2 to 10^4 hands, 2 seeds")
    parser.add_argument("--opponents", help=f"comma-separated registry names (default: {', '.join(OPPONENTS)})")
    parser.add_argument("--seeds", type=int, help=f"seeds per opponent (default {SEEDS})")
    parser.add_argument("--hands", help="comma-separated numbers of logged hands (default 100, 316, ..., 100000)")
    parser.add_argument("--observe", choices=OBSERVATIONS, default="full", help="the observation mode (default full)")
    parser.add_argument(
        "--precision", type=float, default=PRECISION, help=f"NashConv of each game (default {PRECISION:g})"
    )
    parser.add_output("--out", suffixes=(".json", ".md"), help="PREFIX of PREFIX.md and PREFIX.json")
    options = parser.parse(argv)
    quick = QUICK if options.quick else {"opponents": OPPONENTS, "hands": HANDS, "seeds": SEEDS}
    options.opponents = tuple(options.opponents.split(",")) if options.opponents else quick["opponents"]
    options.seeds = options.seeds if options.seeds is not None else quick["seeds"]
    try:
        options.hands = tuple(int(n) for n in options.hands.split(",")) if options.hands else quick["hands"]
    except ValueError:
        parser.error(f"--hands takes comma-separated integers, got {options.hands!r}")
    if options.seeds < 1:
        parser.error("--seeds must be at least 1")
    if any(n < 1 for n in options.hands):
        parser.error("--hands must be positive")
    if not options.precision > 0:
        parser.error("--precision must be positive")
    options.out = options.out or RESULTS / ("learning_quick" if options.quick else "learning")
    return options


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    options = parse_options(argv)
    command = "benchmarks/learning.py" + "".join(f" {arg}" for arg in (sys.argv[1:] if argv is None else argv))
    facts = machine_facts()
    started = time.perf_counter()
    tree = load_tree(GAME)
    truths = {name: exact_model(name, GAME) for name in options.opponents}
    equilibrium = solve_rnr(next(iter(truths.values())), 0.0, precision=options.precision).strategy
    progress(f"observer: an equilibrium of {GAME} to NashConv {options.precision:g}")
    references, points = [], []
    with tempfile.TemporaryDirectory() as directory:
        for name, truth in truths.items():
            references.append(reference(truth, equilibrium, options.precision))
            for seed in range(options.seeds):
                log = Path(directory) / f"{name}-{seed}.jsonl"
                play_logged(tree, equilibrium, name, truth.strategy, 2 * -(-max(options.hands) // 2), seed, log)
                for hands in sorted(options.hands):
                    points.append(score(tree, log, name, truth.strategy, hands, seed, options))
                    last = points[-1]
                    dbr, best = last.dbr, last.best_response
                    progress(
                        f"{name} seed {seed} {hands:,} hands: DBR {dbr.gain:+.4f} (model {dbr.predicted:+.4f}, "
                        f"exploitability {dbr.exploitability:.4f}); BR {best.gain:+.4f} ({best.exploitability:.4f}); "
                        f"{last.seconds:.1f} s"
                    )
    seconds = time.perf_counter() - started
    results = {
        "benchmark": "learning",
        "date": now(),
        "command": command,
        "machine": facts,
        "seconds": seconds,
        "game": GAME,
        "units": tree.units,
        "observer": OBSERVER,
        "observe": options.observe,
        "prior": DEFAULT_PRIOR,
        "confidence": confidence_function(DEFAULT_P_MAX, DEFAULT_K),
        "p_max": DEFAULT_P_MAX,
        "k": DEFAULT_K,
        "precision": options.precision,
        "algorithm": DEFAULT_ALGORITHM,
        "hands": sorted(options.hands),
        "seeds": options.seeds,
        "references": [asdict(item) for item in references],
        "points": [asdict(point) for point in points],
    }
    out: Path = options.out
    write_atomic(out.with_suffix(".json"), json.dumps(results, indent=1) + "\n")
    report = markdown(results, references, points)
    write_atomic(out.with_suffix(".md"), report)
    print(report)
    print(f"wrote {out.with_suffix('.md')} and {out.with_suffix('.json')} in {seconds:.0f} s")
    return 0


def play_logged(
    tree: CompiledTree, observer: FloatArray, name: str, strategy: FloatArray, hands: int, seed: int, log: Path
) -> None:
    """``hands`` hands (duplicate pairs) of the observer against ``name``'s strategy table, logged."""
    deal, first, second = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(3))
    agents = (
        PolicyAgent(Policy.from_strategy(tree, observer, algorithm=OBSERVER, parameters={}, iterations=0), first),
        PolicyAgent(Policy.from_strategy(tree, strategy, algorithm=name, parameters={}, iterations=0), second),
    )
    with HandLog(log, GAME, (OBSERVER, name)) as hand_log:
        play_rlcard_match(GAME, *agents, hands // 2, deal, log=hand_log)


def reference(model: OpponentModel, equilibrium: FloatArray, precision: float) -> Reference:
    tree, truth = model.tree, model.strategy
    best = tradeoff(tree, best_response_strategy(tree, truth), truth, SEATS)
    ceiling = solve_rnr(model, DEFAULT_P_MAX, precision=precision)
    top = tradeoff(tree, ceiling.strategy, truth, SEATS)
    return Reference(
        opponent=model.name,
        source=model.source,
        equilibrium_gain=tradeoff(tree, equilibrium, truth, SEATS).exploitation,
        best_response_gain=best.exploitation,
        best_response_exploitability=best.exploitability(0.0),
        ceiling_p=DEFAULT_P_MAX,
        ceiling_gain=top.exploitation,
        ceiling_exploitability=top.exploitability(0.0),
    )


def score(
    tree: CompiledTree, log: Path, name: str, truth: FloatArray, hands: int, seed: int, options: argparse.Namespace
) -> Point:
    started = time.perf_counter()
    logged = model_from_log(log, GAME, name, options.observe, hands=hands)
    model = logged.model.strategy
    dbr = solve_logged_dbr(logged, precision=options.precision, seats=SEATS).strategy
    best = best_response_strategy(tree, model)
    return Point(
        opponent=name,
        seed=seed,
        hands=hands,
        revealed=logged.revealed,
        observed_infosets=int(np.count_nonzero(logged.counts)),
        dbr=scored(tree, dbr, truth, model),
        best_response=scored(tree, best, truth, model),
        seconds=time.perf_counter() - started,
    )


def scored(tree: CompiledTree, strategy: FloatArray, truth: FloatArray, model: FloatArray) -> Score:
    real = tradeoff(tree, strategy, truth, SEATS)
    return Score(real.exploitation, tradeoff(tree, strategy, model, SEATS).exploitation, real.exploitability(0.0))


def markdown(results: Mapping[str, Any], references: Sequence[Reference], points: Sequence[Point]) -> str:
    lines = [
        "# Learning curve: data-biased responses from logged hands",
        "",
        f"- Date: {results['date']}; {results['seconds']:.0f} s",
        f"- Command: `{results['command']}`",
        f"- Game: {results['game']}, in {results['units']} per hand; exploiter in both seats",
        f"- Observer: an equilibrium (NashConv {results['precision']:g}); observation: {results['observe']}; "
        f"Dirichlet prior alpha = {results['prior']:g}",
        f"- DBR confidence: {results['confidence']}; every DBR and RNR game solved by "
        f"{results['algorithm']} to NashConv {results['precision']:g}",
        f"- Seeds: {results['seeds']} per opponent; cells are mean ± standard deviation over the seeds",
        *(f"- {key}: {value}" for key, value in results["machine"].items()),
        "",
        "Gain: the exact value against the real opponent. Model: the gain the model predicts. "
        "Exploitability: NashConv / 2 of the response.",
        "",
    ]
    for item in references:
        mine = [point for point in points if point.opponent == item.opponent]
        rows = []
        for hands in sorted({point.hands for point in mine}):
            at = [point for point in mine if point.hands == hands]
            rows.append(
                (
                    f"{hands:,}",
                    _cell([p.dbr.gain for p in at]),
                    _cell([p.dbr.predicted for p in at]),
                    _cell([p.dbr.exploitability for p in at], sign=""),
                    _cell([p.best_response.gain for p in at]),
                    _cell([p.best_response.predicted for p in at]),
                    _cell([p.best_response.exploitability for p in at], sign=""),
                    f"{np.mean([p.observed_infosets for p in at]):.0f}",
                )
            )
        notes = (
            f"Opponent: {item.source}.",
            f"Equilibrium's gain {item.equilibrium_gain:+.4f}; best response to the true strategy: gain "
            f"{item.best_response_gain:+.4f}, exploitability {item.best_response_exploitability:.4f}; "
            f"ceiling, RNR on the true strategy at p = {item.ceiling_p:g}: gain {item.ceiling_gain:+.4f}, "
            f"exploitability {item.ceiling_exploitability:.4f}.",
        )
        headers = ("hands", "DBR gain", "DBR model", "DBR exploitability", "BR gain", "BR model", "BR exploitability")
        table = Table(item.opponent, (*headers, "infosets seen"), tuple(rows), notes)
        lines.append(table.markdown())
    return "\n".join(lines)


def _cell(values: Sequence[float], sign: str = "+") -> str:
    mean = f"{np.mean(values):{sign}.4f}"
    return mean if len(values) == 1 else f"{mean} ± {np.std(values, ddof=1):.4f}"


if __name__ == "__main__":
    sys.exit(main())
