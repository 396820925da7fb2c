"""Neural CFR's training step on the hold'em engine: the first layer as one embedding bag against the dense product
with the rebuilt tensors, side by side in one run, and the seconds of whole iterations.

    python -m benchmarks.neural_step --game fhp --threads 1 --out benchmarks/results/neural_step

One iteration of ``--preset fast`` (its 10,000 traversals) fills the advantage memories; then ``--steps`` Adam steps
of the mini-batch size each way, on the same mini-batches, alternating; then ``--iterations`` more iterations
(traversals and training, as ``train`` runs them). With ``--inputs strength`` the networks read the hand's strength
too.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from cfr_agents.files import write_atomic
from cfr_agents.solvers.neural import networks, settings_of
from cfr_agents.solvers.neural.holdem import HoldemNeuralSolver
from cfr_agents.solvers.neural.solver import weighted_step


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="fhp")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--inputs", default="cards")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/neural_step"))
    args = parser.parse_args(argv)
    torch = networks.torch_module()
    settings = settings_of("fast", {"advantage_memory": 10_000_000, "threads": args.threads, "inputs": args.inputs})
    solver = HoldemNeuralSolver(args.game, "sd-cfr", settings, np.random.default_rng(0))
    solver.run(1)
    memory, network = solver.advantage_memories[0], solver.value_networks[0]
    optimiser = solver._optimiser(network)
    rng = np.random.default_rng(1)
    seconds = {"embedding bag": 0.0, "dense": 0.0}
    for _ in range(args.steps):
        index = rng.integers(0, memory.filled, size=settings.advantage_batch_size)
        keys = memory.infoset[index]
        weight = memory.iteration[index].astype(np.float64)
        for way in seconds:
            started = time.perf_counter()
            output = (
                solver.forward(network, keys)
                if way == "embedding bag"
                else network(torch.from_numpy(solver.inputs(keys)))
            )
            legal = solver._mask[keys & ((1 << solver._node_bits) - 1)]
            weighted_step(
                network, optimiser, output, legal, memory.values[index], weight / weight.sum(), softmax=False, clip=10.0
            )
            seconds[way] += time.perf_counter() - started
    step = {way: 1000 * total / args.steps for way, total in seconds.items()}
    iterations = []
    for _ in range(args.iterations):
        started, trained = time.perf_counter(), solver.training_seconds
        solver.run(1)
        iterations.append({"seconds": time.perf_counter() - started, "training": solver.training_seconds - trained})
    result = {
        "game": args.game,
        "threads": args.threads,
        "inputs": args.inputs,
        "batch": settings.advantage_batch_size,
        "hidden": list(settings.hidden),
        "step_ms": step,
        "dense_over_bag": step["dense"] / step["embedding bag"],
        "iterations": iterations,
    }
    lines = [f"# Neural CFR's training step on {args.game} ({args.threads} thread(s), inputs {args.inputs})", ""]
    lines += [f"- a step of {settings.advantage_batch_size:,} samples, {way}: {ms:.1f} ms" for way, ms in step.items()]
    lines += [f"- dense / embedding bag: {result['dense_over_bag']:.2f}"]
    lines += [
        f"- iteration {i + 2}: {it['seconds']:.2f} s, training {it['training']:.2f} s"
        for i, it in enumerate(iterations)
    ]
    print("\n".join(lines))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out.with_suffix(".json"), json.dumps(result, indent=1) + "\n")
    write_atomic(args.out.with_suffix(".md"), "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
