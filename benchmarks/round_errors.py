r"""Which betting round carries a model's NashConv, on a game scored on its public tree: each round's strategy
replaced by a reference's, each seat's share, and what best responses gain from each round on.

    python -m benchmarks.round_errors --game fhp --models sdcfr.json,other.json --reference dcfr:250 \\
        --out benchmarks/results/fhp_round_errors

``--models`` lists agent files of the game (a model, a strategy file, an abstraction agent), each read on the tree
with suit-canonical boards as matches on it play it; ``--reference`` is another such file or ``dcfr:N``, full-game
DCFR stopped after N iterations (:func:`benchmarks.endgame.make_blueprint`), an approximate equilibrium
:math:`\sigma^*` of NashConv :math:`\varepsilon^*`. For a model :math:`\sigma`, in mbb/g, exactly on the tree:

* NashConv :math:`\mathrm{BR}_0(\sigma_1) + \mathrm{BR}_1(\sigma_0)` (zero-sum), and seat :math:`p`'s share
  :math:`\mathrm{BR}_{1-p}(\sigma_p) - u_{1-p}(\sigma^*)`: the two shares sum to NashConv exactly
  (:math:`u_0(\sigma^*) + u_1(\sigma^*) = 0`), and each is what seat :math:`p`'s strategy loses against a best
  response beyond the game's value, to within :math:`\varepsilon^*`;
* for each round :math:`r`, the NashConv of :math:`\sigma` with its play in round :math:`r` replaced by
  :math:`\sigma^*`'s, every information state of that round (its earlier and later rounds the model's own);
* for each round :math:`r`, the gain :math:`\sum_p \mathrm{BR}^{\ge r}_p(\sigma_{-p}) - u_p(\sigma)` of best
  responses that keep :math:`\sigma_p` before round :math:`r` and deviate from it on (``frozen_rounds``,
  :meth:`~cfr_agents.public_tree.engine.Engine.root_values`): what the model's play from round :math:`r` on loses,
  given the ranges its earlier rounds lead to (round 0: NashConv; the last round: the endgame gap of
  :mod:`benchmarks.endgame`).
"""

from __future__ import annotations

import json
import resource
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adapters.games import canonical_game_id
from benchmarks.endgame import blueprint_agent, make_blueprint
from benchmarks.report import OneLineParser, one_line_errors, progress
from cfr_agents.cli.common import check_memory
from cfr_agents.files import write_atomic
from cfr_agents.public_tree.engine import Engine, FloatArray, own_placement, profile
from cfr_agents.public_tree.kernels import BEST_RESPONSE
from cfr_agents.public_tree.solver import peak_bytes
from cfr_agents.public_tree.tree import PublicTree
from eval.agents import PublicStrategyAgent, materialised
from eval.holdem import game_tree
from eval.opponents import load_opponent

ROUND_NAMES = ("preflop", "flop", "turn", "river")


def round_entries(tree: PublicTree, r: int) -> slice:
    """The entries of round ``r``'s segments in a strategy laid out over the tree's own segments (consecutive: the
    segments are numbered round by round)."""
    segments = tree.segments
    first, stop = int(segments.round_start[r]), int(segments.round_start[r + 1])
    return slice(int(segments.offset[first]), tree.size if stop == segments.count else int(segments.offset[stop]))


def swapped(tree: PublicTree, model: FloatArray, reference: FloatArray, r: int) -> FloatArray:
    """``model`` with round ``r``'s entries taken from ``reference`` (both over the tree's own segments)."""
    out = model.copy()
    entries = round_entries(tree, r)
    out[entries] = reference[entries]
    return out


class Scorer:
    """Exact values of strategies laid out over one tree's own segments, in mbb/g."""

    def __init__(self, tree: PublicTree) -> None:
        self.tree, self.engine, self.own = tree, Engine(tree), own_placement(tree)
        self.mbb = 1000 / tree.rules.big_blind

    def best_responses(self, strategy: FloatArray, frozen_rounds: int = 0) -> list[float]:
        """:math:`\\mathrm{BR}^{\\ge r}_p(\\sigma_{-p})` for each player ``p``, ``r`` = ``frozen_rounds``."""
        both = profile(strategy, strategy, self.own, self.own)
        return [
            self.tree.chance
            * float(self.engine.root_values(p, BEST_RESPONSE, both, frozen_rounds=frozen_rounds).sum())
            * self.mbb
            for p in range(2)
        ]

    def value(self, strategy: FloatArray) -> float:
        """:math:`u_0(\\sigma)`."""
        return self.engine.value(0, profile(strategy, strategy, self.own, self.own)) * self.mbb


def measure(scorer: Scorer, name: str, model: FloatArray, reference: FloatArray, game_value: float) -> dict[str, Any]:
    """One model's row (module docstring); ``game_value``: :math:`u_0(\\sigma^*)` in mbb/g."""
    tree = scorer.tree
    rounds = tree.rules.num_rounds
    best = scorer.best_responses(model)
    from_round = [sum(best), *(sum(scorer.best_responses(model, frozen_rounds=r)) for r in range(1, rounds))]
    replaced = []
    for r in range(rounds):
        progress(f"{name}: round {r} from the reference")
        replaced.append(sum(scorer.best_responses(swapped(tree, model, reference, r))))
    return {
        "model": name,
        "best_responses_mbb": best,
        "nash_conv_mbb": sum(best),
        "seat_shares_mbb": [best[1] + game_value, best[0] - game_value],  # BR_1(σ_0) - u_1(σ*), BR_0(σ_1) - u_0(σ*)
        "round_replaced_nash_conv_mbb": replaced,
        "from_round_gain_mbb": from_round,  # sum_p BR^{>=r}_p - u_p(σ), u_0 + u_1 = 0
    }


def table(game: str, reference: str, reference_nash_conv: float, rows: Sequence[dict[str, Any]], rounds: int) -> str:
    """The rows as a markdown table, in mbb/g."""
    names = ROUND_NAMES[:rounds]
    headers = [
        "model",
        "NashConv",
        "seat 0's share",
        "seat 1's share",
        *(f"{n} from the reference" for n in names),
        *(f"gain from the {n} on" for n in names[1:]),
    ]
    lines = [
        f"# Where the NashConv is, on {game}: each round replaced by {Path(reference).name}'s, each seat's share",
        "",
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join("---" for _ in headers) + " |",
    ]
    for row in rows:
        cells = [
            Path(row["model"]).name,
            *(f"{v:.1f}" for v in (row["nash_conv_mbb"], *row["seat_shares_mbb"])),
            *(f"{v:.1f}" for v in row["round_replaced_nash_conv_mbb"]),
            *(f"{v:.1f}" for v in row["from_round_gain_mbb"][1:]),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "All in mbb/g, exact, on the public tree with suit-canonical boards. The reference, "
        f"{Path(reference).name}, has NashConv {reference_nash_conv:.3f}: each seat's share is its strategy's loss "
        "to a best response beyond the game's value to within that; a round from the reference is the model with "
        "that round's play replaced by the reference's; the gain from a round on is what both best responses gain "
        "by deviating from the model's play from that round on only.",
    ]
    return "\n".join(lines) + "\n"


@one_line_errors
def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="fhp")
    parser.add_argument("--models", required=True, help="agent files, comma-separated")
    parser.add_argument("--reference", default="dcfr:250", help="an agent file or dcfr:N (default dcfr:250)")
    parser.add_output("--out", suffixes=(".json", ".md"), default=Path("benchmarks/results/round_errors"))
    args = parser.parse(argv)
    names = [name.strip() for name in args.models.split(",") if name.strip()]
    if not names:
        parser.error("--models: give at least one agent file")
    for name in (*names, args.reference):
        parser.refuse_overwriting(args, (Path(name), Path(name).with_suffix(".json")), f"the agent's file {name}")
    reference_agent = blueprint_agent(parser, "--reference", args.reference, args.game)
    agents = {name: load_opponent(name, args.game).agent for name in names}  # every file read before any work
    tree = game_tree(args.game)
    held = [a for a in (reference_agent, *agents.values()) if isinstance(a, PublicStrategyAgent)]
    working = max(peak_bytes(tree) if reference_agent is None else 0, 3 * 8 * tree.size)  # a solve, or 3 arrays
    print(check_memory(f"round errors on {args.game}", len(held) * 8 * tree.size + working), file=sys.stderr)
    progress(f"reference {args.reference}")
    reference = make_blueprint(tree, args.game, args.reference, reference_agent)
    scorer = Scorer(tree)
    game_value = scorer.value(reference)
    reference_nash_conv = sum(scorer.best_responses(reference))
    rows = []
    for name, agent in agents.items():
        progress(f"{name}: laying its strategy out over the public tree")
        model = make_blueprint(tree, args.game, name, agent)
        materialised.cache_clear()  # a model's array is held here alone, and dropped after its row
        rows.append(measure(scorer, name, model, reference, game_value))
        del model
    rounds = tree.rules.num_rounds
    text = table(args.game, args.reference, reference_nash_conv, rows, rounds)
    print(text)
    report = {
        "game": canonical_game_id(args.game),
        "reference": args.reference,
        "reference_nash_conv_mbb": reference_nash_conv,
        "game_value_mbb": game_value,
        "rows": rows,
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
    }
    write_atomic(args.out.with_suffix(".json"), json.dumps(report, indent=1) + "\n")
    write_atomic(args.out.with_suffix(".md"), text)


if __name__ == "__main__":
    main()
