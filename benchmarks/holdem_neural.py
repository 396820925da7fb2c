"""A neural model scored exactly on Flop Hold'em: its strategy made by batched forward passes over the hands of
each public node, then the engine's best responses.

    python -m benchmarks.holdem_neural --boards canonical --out benchmarks/results/holdem_neural
    python -m benchmarks.holdem_neural --boards every --out benchmarks/results/holdem_neural_every
    python -m benchmarks.holdem_neural --model sdcfr.json --out benchmarks/results/fhp_sd_cfr_scoring
    python -m benchmarks.holdem_neural --model sdcfr.json --kept 16 --out sdcfr_16

Without ``--model`` the model is a network of the Deep CFR paper's (64, 64, 64) shape, freshly initialised from a
seeded generator, read as Deep CFR's average network (softmax): the times are what any trained network of that
shape costs. ``--model`` scores a model ``train`` wrote (Deep CFR's average network, or SD-CFR's mixture of its
kept networks) and records its training beside the scoring; ``--kept K`` scores an SD-CFR model thinned to K of its
kept networks, as if it had been trained with ``--kept-networks K``. ``canonical``: the network reads each
canonical board and each hand's smallest suit-equivalent hand, so its strategy is suit-canonical and the 1,755
canonical flops score it. ``every``: the network reads every board as it is; the strategy (4.1e9 entries) is
made and scored a chunk of segments at a time, once per seat's best response (NashConv is their sum: the game is
zero-sum).
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import pyspiel

from adapters.games import canonical_game_id
from adapters.holdem.tensors import holdem_tensors
from adapters.openspiel import PREFIX
from cfr_agents.files import write_atomic
from cfr_agents.neural_policy import NeuralPolicy
from cfr_agents.public_tree.engine import Engine, chunked
from cfr_agents.public_tree.neural import Materialiser, network_strategy, torch_strategy
from cfr_agents.public_tree.tree import build_public_tree
from cfr_agents.solvers.neural import networks
from eval.exploitability import public_exploitability
from eval.opponents import load_opponent

HIDDEN = (64, 64, 64)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="fhp")
    parser.add_argument("--boards", choices=("canonical", "every"), default="canonical")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", help="a model file written by train (default: a fresh network)")
    parser.add_argument(
        "--kept", type=int, default=0, help="an SD-CFR model thinned to this many of its kept networks (0: all)"
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/holdem_neural"))
    args = parser.parse_args(argv)
    game_string = canonical_game_id(args.game).removeprefix(PREFIX)
    trained: dict[str, object] = {}
    if args.model is None:
        torch = networks.torch_module()
        size = holdem_tensors(pyspiel.load_game(game_string)).size
        network = networks.mlp(size, HIDDEN, 3, torch.Generator().manual_seed(args.seed))
        model, hidden = torch_strategy(args.game, "softmax", network), list(HIDDEN)
    else:
        loaded = load_opponent(args.model, args.game)
        assert isinstance(loaded.agent.raw, NeuralPolicy), f"{args.model} is not a neural model"
        raw = loaded.agent.raw.thinned(args.kept) if args.kept else loaded.agent.raw
        model, hidden = network_strategy(raw), list(raw.hidden)
        sidecar = json.loads(Path(args.model).read_text())
        trained = {name: sidecar.get(name) for name in ("kind", "iterations", "training_seconds", "hyperparameters")}
        trained["terms"] = len(model.terms)
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
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out.with_suffix(".json"), json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
