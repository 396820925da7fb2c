"""A neural model scored exactly on Flop Hold'em: its strategy made by batched forward passes over the hands of
each public node, then the engine's best responses.

    python -m benchmarks.holdem_neural --boards canonical --out benchmarks/results/holdem_neural
    python -m benchmarks.holdem_neural --boards every --out benchmarks/results/holdem_neural_every
    python -m benchmarks.holdem_neural --model sdcfr.json --out benchmarks/results/fhp_sd_cfr_scoring
    python -m benchmarks.holdem_neural --model sdcfr.json --kept 16 --out sdcfr_16
    python -m benchmarks.holdem_neural --model sdcfr.json --average-exponent 0 --out sdcfr_uniform

Without ``--model`` the model is a network of the Deep CFR paper's (64, 64, 64) shape, freshly initialised from a
seeded generator, read as Deep CFR's average network (softmax): the times are what any trained network of that
shape costs. ``--model`` scores a model ``train`` wrote (Deep CFR's average network, or SD-CFR's mixture of its
kept networks) and records its training beside the scoring; ``--kept K`` scores an SD-CFR model thinned to K of its
kept networks, as if it had been trained with ``--kept-networks K``. ``--average-exponent g`` scores an SD-CFR
model's mixture with iteration :math:`s` weighted :math:`s^g` in place of linear CFR's :math:`s` (each kept network
standing for its block of iterations, :func:`exponent_weights`): 0 the plain average, 2 DCFR's.
``canonical``: the network reads each canonical board and each hand's smallest suit-equivalent hand, so its
strategy is suit-canonical and the 1,755 canonical flops score it. ``every``: the network reads every board as
it is; the strategy (4.1e9 entries) is made and scored a chunk of segments at a time, once per seat's best
response (NashConv is their sum: the game is zero-sum).
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import replace
from pathlib import Path

import pyspiel

from adapters.games import canonical_game_id
from adapters.holdem.tensors import holdem_tensors
from adapters.openspiel import PREFIX
from benchmarks.report import OneLineParser, one_line_errors
from cfr_agents.files import write_atomic
from cfr_agents.neural_policy import NeuralPolicy
from cfr_agents.public_tree.engine import Engine, chunked
from cfr_agents.public_tree.neural import Materialiser, network_strategy, torch_strategy
from cfr_agents.public_tree.tree import build_public_tree
from cfr_agents.solvers.neural import networks
from eval.exploitability import public_exploitability
from eval.opponents import load_opponent

HIDDEN = (64, 64, 64)


def exponent_weights(kept_iterations: tuple[int, ...], exponent: int) -> list[int]:
    r"""The weight of each kept :math:`\sigma^{t_j+1}` when iteration :math:`s` weighs :math:`s^g`:
    :math:`\sum_{t_{j-1}+1 < s \le t_j+1} s^g` over the block it stands for (:math:`g = 1`: the model's own)."""
    blocks = zip((0, *kept_iterations), kept_iterations, strict=False)
    return [sum(s**exponent for s in range(previous + 2, t + 2)) for previous, t in blocks]  # sum of s^g


@one_line_errors
def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="fhp")
    parser.add_argument("--boards", choices=("canonical", "every"), default="canonical")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", help="a model file written by train (default: a fresh network)")
    parser.add_argument(
        "--kept", type=int, default=0, help="an SD-CFR model thinned to this many of its kept networks (0: all)"
    )
    parser.add_argument(
        "--average-exponent",
        type=int,
        choices=range(6),
        default=1,
        metavar="G",
        help="an SD-CFR model's mixture with iteration s weighted s^G, 0 to 5 (default 1: linear CFR's, the model's)",
    )
    parser.add_output("--out", suffixes=(".json",), default=Path("benchmarks/results/holdem_neural"))
    args = parser.parse(argv)
    game_string = canonical_game_id(args.game).removeprefix(PREFIX)
    trained: dict[str, object] = {}
    if args.model is None and (args.kept or args.average_exponent != 1):
        parser.error("--kept and --average-exponent read a model: give --model")
    if args.model is not None:
        model_files = (Path(args.model), Path(args.model).with_suffix(".safetensors"))
        parser.refuse_overwriting(args, model_files, f"the model {args.model}")
    if args.model is None:
        torch = networks.torch_module()
        size = holdem_tensors(pyspiel.load_game(game_string)).size
        network = networks.mlp(size, HIDDEN, 3, torch.Generator().manual_seed(args.seed))
        model, hidden = torch_strategy(args.game, "softmax", network), list(HIDDEN)
    else:
        loaded = load_opponent(args.model, args.game)
        if not isinstance(loaded.agent.raw, NeuralPolicy):
            parser.error(f"{args.model} is not a neural model")
        raw = loaded.agent.raw.thinned(args.kept) if args.kept else loaded.agent.raw
        model, hidden = network_strategy(raw), list(raw.hidden)
        if args.average_exponent != 1:
            if raw.algorithm != "sd-cfr":
                parser.error(f"--average-exponent weighs an SD-CFR model's iterations, not a {raw.algorithm} model's")
            weights = exponent_weights(raw.kept_iterations, args.average_exponent)
            uniform, *kept = model.terms  # sigma^1, weight 1 = 1^g
            model = replace(model, terms=(uniform, *((w, nets) for w, (_, nets) in zip(weights, kept, strict=True))))
        sidecar = json.loads(Path(args.model).read_text())
        trained = {name: sidecar.get(name) for name in ("kind", "iterations", "training_seconds", "hyperparameters")}
        trained["terms"] = len(model.terms)
        trained["average_exponent"] = args.average_exponent
        trained["kept_iterations"] = list(raw.kept_iterations) if raw.algorithm == "sd-cfr" else None
    started = time.perf_counter()
    tree = build_public_tree(game_string, canonical=args.boards == "canonical")
    build = time.perf_counter() - started
    materialiser = Materialiser(tree, model)
    print(f"{tree.summary()}; {tree.num_infosets:,} information states", flush=True)
    began = time.perf_counter()
    if args.boards == "canonical":
        strategy = materialiser.strategy()
        forward: float | None = time.perf_counter() - began
        nash_conv = public_exploitability(tree, strategy).nash_conv
        scored = time.perf_counter() - began
    else:
        engine = Engine(tree)
        source = chunked(tree, materialiser.chunk)
        nash_conv = sum(engine.best_response_value(player, source) for player in range(2))
        scored = time.perf_counter() - began
        forward = None
    result = {
        "game": args.game,
        "boards": args.boards,
        "model": args.model,
        "hidden": hidden,
        **trained,
        "information_states": tree.num_infosets,
        "build_seconds": build,
        "forward_seconds": forward,
        "total_seconds": scored,
        "nash_conv_chips": nash_conv,
        "nash_conv_mbb": nash_conv / tree.rules.big_blind * 1000,
        "exploitability_mbb": nash_conv / 2 / tree.rules.big_blind * 1000,
        "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6,
    }
    write_atomic(args.out.with_suffix(".json"), json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
