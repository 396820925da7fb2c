"""Endgame re-solving at play time where no public tree fits (RLCard's limit hold'em, ``hulh``): what an agent that
re-solves each endgame gains against its blueprint head to head, and its local best response beside the
blueprint's.

    python -m benchmarks.endgame_play --agent agent.npz --game rlcard:limit-holdem --hands 600 --lbr-pairs 400 \\
        --out benchmarks/results/endgame_play

The blueprint is any agent file of the game that answers for every hand at once (an abstraction agent, a model
trained on the engine). Two agents play it until the last round and re-solve each endgame there by ``--iterations``
DCFR iterations (:mod:`eval.resolving`): unsafely, and safely through the re-solving gadget.

*Head to head.* Until the last round both agents play the blueprint, so the gain of re-solving is made in the
endgames: ``--hands`` hands of the blueprint against itself are dealt and played to the last round, and at each
endgame reached each seat's exact gain there over both ranges (:meth:`eval.resolving.ResolvingRange.gains`) is
scored, 0 for a hand that ends sooner. The mean over hands is each agent's expected gain against the blueprint,
with its standard error.

*LBR* (:func:`eval.lbr_sampled.pair_values`, calling preflop) against the blueprint and both agents on the same
``--lbr-pairs`` duplicate pairs, each pair from its own seed, so the differences are measured pair by pair. Its last
round is scored in expectation over the agent's range and actions by default (``--lbr-last-round over-range``): the
three agents play alike before it, so the same seeds bring the same hands to the same endgames, and LBR's change
is then what re-solving does there, without the luck of the agent's cards or actions.
"""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from adapters.games import canonical_game_id
from adapters.holdem.betting import DEAL, DECISION
from adapters.holdem.cards import hand_index_table, private_hands
from adapters.holdem.engine import HoldemEngine, holdem_engine
from benchmarks.report import OneLineParser, at_least, interval, mbb_summary, one_line_errors
from cfr_agents.files import write_atomic
from eval.agents import AbstractStrategyAgent
from eval.lbr_sampled import LAST_ROUND, ShowdownTables, pair_values
from eval.opponents import load_opponent
from eval.ranges import RangeQuery, range_query
from eval.resolving import ResolvingRange

KINDS = {"unsafe": False, "safe": True}
LAST_ROUND_WORDS = {
    "sampled": "played",
    "expected": "in expectation over the agent's actions",
    "over-range": "in expectation over the agent's range and actions",
}


@one_line_errors
def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", required=True, help="the blueprint: an agent file of the game")
    parser.add_argument("--game", default="rlcard:limit-holdem")
    parser.add_argument("--iterations", type=at_least(1), default=200, help="DCFR iterations per endgame")
    parser.add_argument("--hands", type=at_least(1), default=600, help="hands of play for the head-to-head gain")
    parser.add_argument("--lbr-pairs", type=at_least(2), default=300, help="duplicate pairs of LBR against each agent")
    parser.add_argument(
        "--lbr-last-round",
        choices=LAST_ROUND,
        default="over-range",
        help="how LBR scores its last round (default: over-range)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_output("--out", suffixes=(".json", ".md"), default=Path("benchmarks/results/endgame_play"))
    args = parser.parse(argv)
    agent_files = (Path(args.agent), Path(args.agent).with_suffix(".json"))
    parser.refuse_overwriting(args, agent_files, f"the agent's file {args.agent}")
    started = time.perf_counter()
    engine, blueprint, tables = prepared(args.agent, args.game)
    mbb = 1000.0 / engine.rules.big_blind  # chips -> mbb
    agents = {
        kind: ResolvingRange(blueprint, engine, iterations=args.iterations, safe=safe) for kind, safe in KINDS.items()
    }
    row: dict[str, Any] = {"game": args.game, "agent": args.agent, "iterations": args.iterations, "seed": args.seed}
    rng = np.random.default_rng(args.seed)
    gains, reached, seconds = head_to_head(engine, blueprint, agents, args.hands, rng)
    row |= {"hands": args.hands, "endgames_reached": reached}
    for kind, values in gains.items():
        row |= mbb_summary(f"{kind}_gain", values * mbb)
        row[f"{kind}_seconds_per_endgame"] = seconds[kind] / max(reached, 1)
    seeds = np.random.SeedSequence(args.seed).spawn(args.lbr_pairs)
    scale = 1000.0 / (engine.payoff_scale * engine.rules.big_blind)  # the game's units -> mbb
    lbr: dict[str, np.ndarray] = {}
    for kind, agent in {"blueprint": blueprint, **agents}.items():
        began = time.perf_counter()
        lbr[kind] = lbr_values(engine, agent, seeds, tables, args.lbr_last_round) * scale
        row |= mbb_summary(f"{kind}_lbr", lbr[kind])
        row[f"{kind}_lbr_seconds"] = time.perf_counter() - began
        if kind != "blueprint":
            row |= mbb_summary(f"{kind}_lbr_change", lbr[kind] - lbr["blueprint"])
    row["lbr_pairs"], row["lbr_last_round"] = args.lbr_pairs, args.lbr_last_round
    row["seconds"] = time.perf_counter() - started
    row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines = report(row)
    print("\n".join(lines))
    write_atomic(args.out.with_suffix(".json"), json.dumps(row, indent=1) + "\n")
    write_atomic(args.out.with_suffix(".md"), "\n".join(lines) + "\n")


def prepared(name: str, game: str) -> tuple[HoldemEngine, RangeQuery, ShowdownTables]:
    """The engine of ``game``, the agent file ``name`` asked for every hand at once, and the showdown tables."""
    agent = load_opponent(name, canonical_game_id(game)).agent
    engine = (
        agent.raw.game.engine if isinstance(agent, AbstractStrategyAgent) else holdem_engine(canonical_game_id(game))
    )
    hands = private_hands(engine.rules.num_ranks, engine.rules.num_suits, engine.rules.num_hole_cards)
    return engine, range_query(agent, engine, hands, name), ShowdownTables(engine.rules, hands)


def head_to_head(
    engine: HoldemEngine, blueprint: RangeQuery, agents: dict[str, ResolvingRange], hands: int, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], int, dict[str, float]]:
    """Each agent's gain against the blueprint in each of ``hands`` hands of the blueprint's self-play (the mean of
    its two seats', in chips), the endgames reached, and the seconds each agent spent re-solving and scoring them."""
    betting, rules = engine.betting, engine.rules
    k, last = rules.num_hole_cards, rules.num_rounds - 1
    resolvers = next(iter(agents.values()))
    index = hand_index_table(resolvers.hands, rules.deck_size)
    gains = {kind: np.zeros(hands) for kind in agents}
    seconds = dict.fromkeys(agents, 0.0)
    reached = 0
    for i in tqdm(range(hands), unit="hand", mininterval=1.0):
        cards = engine.deal(rng)
        rows = [int(index[tuple(np.sort(cards[p * k : (p + 1) * k]).tolist())]) for p in range(2)]
        node, actions = engine.root, list[int]()
        while True:
            kind = int(betting.kind[node])
            if kind == DEAL:
                node = int(betting.first_child[node])
                continue
            if kind != DECISION:
                break
            round_ = int(betting.round[node])
            board = engine.board(cards, round_)
            if round_ == last:
                reached += 1
                for name, agent in agents.items():
                    began = time.perf_counter()
                    gains[name][i] = float(agent.gains(agent.endgame(node, board, actions)).mean())
                    seconds[name] += time.perf_counter() - began
                break
            p = int(betting.player[node])
            live = np.zeros(resolvers.hands.shape[0], dtype=bool)
            live[rows[p]] = True
            column = np.asarray(blueprint.probabilities(node, board, tuple(actions), live))[:, rows[p]]
            choice = min(
                int(np.searchsorted(np.cumsum(column / column.sum()), rng.random(), side="right")), column.size - 1
            )
            actions.append(int(betting.action[int(betting.first_child[node]) + choice]))
            node = int(betting.first_child[node]) + choice
    return gains, reached, seconds


def lbr_values(
    engine: HoldemEngine,
    agent: RangeQuery,
    seeds: list[np.random.SeedSequence],
    tables: ShowdownTables,
    last_round: str,
) -> np.ndarray:
    """LBR's mean payoff over each duplicate pair (one seed each), in the game's units, calling preflop, its last
    round scored as ``last_round`` says (:data:`eval.lbr_sampled.LAST_ROUND`)."""
    chunks = [seeds[i : i + 25] for i in range(0, len(seeds), 25)]
    values = [
        pair_values(engine, agent, "both", chunk, call_until=1, tables=tables, last_round=last_round)
        for chunk in tqdm(chunks, unit="25 pairs")
    ]
    return np.concatenate(values)


def report(row: dict[str, Any]) -> list[str]:
    def interval_of(kind: str, name: str) -> str:
        return interval(row[f"{kind}_{name}_mbb"], row[f"{kind}_{name}_se_mbb"])

    lines = [
        f"# Endgame re-solving at play time on {row['game']}: {row['iterations']} DCFR iterations per endgame",
        "",
        f"Blueprint `{Path(row['agent']).name}`. Head to head: {row['hands']:,} hands of the blueprint's self-play, "
        f"{row['endgames_reached']:,} reaching the last round, each endgame's gain exact over both ranges. LBR: "
        f"{row['lbr_pairs']:,} duplicate pairs against each agent, the same deals for all three, the last round "
        f"{LAST_ROUND_WORDS[row.get('lbr_last_round', 'sampled')]}.",
        "",
        "| agent | gain against the blueprint (mbb/hand) | s per endgame | LBR (mbb/hand) | LBR change | LBR time |",
        "| --- | --- | --- | --- | --- | --- |",
        f"| blueprint | -- | -- | {interval_of('blueprint', 'lbr')} | -- | {row['blueprint_lbr_seconds']:.0f} s |",
    ]
    for kind in KINDS:
        lines.append(
            f"| {kind} re-solving | {interval_of(kind, 'gain')} | {row[f'{kind}_seconds_per_endgame']:.2f} "
            f"| {interval_of(kind, 'lbr')} | {interval_of(kind, 'lbr_change')} | {row[f'{kind}_lbr_seconds']:.0f} s |"
        )
    lines += [
        "",
        "95% intervals in brackets. The gain is the mean of the agent's two seats'; LBR's change is measured pair by "
        f"pair against the blueprint's. {row['seconds']:.0f} s in all, peak {row['peak_rss_mb']:.0f} MB.",
    ]
    return lines


if __name__ == "__main__":
    main()
