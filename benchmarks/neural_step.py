"""Neural CFR's training step on the hold'em engine: the first layer as one embedding bag against the dense product
with the rebuilt tensors, side by side in one run, and the seconds of whole iterations.

    python -m benchmarks.neural_step --game fhp --threads 1,2 --out benchmarks/results/neural_step

For each torch thread count, one iteration of ``--preset fast`` (its 10,000 traversals) fills the advantage memories;
then ``--steps`` Adam steps of the mini-batch size each way, on the same mini-batches, alternating; then
``--iterations`` more iterations (traversals and training, as ``train`` runs them). With ``--inputs strength`` the
networks read the hand's strength too.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.report import OneLineParser, one_line_errors
from cfr_agents.files import write_atomic
from cfr_agents.solvers.neural import networks, settings_of
from cfr_agents.solvers.neural.holdem import HoldemNeuralSolver
from cfr_agents.solvers.neural.solver import weighted_step


@one_line_errors
def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="fhp")
    parser.add_argument("--threads", default="1", help="torch thread counts, e.g. 1,2")
    parser.add_argument("--inputs", default="cards")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_output("--out", suffixes=(".json", ".md"), default=Path("benchmarks/results/neural_step"))
    args = parser.parse(argv)
    runs = [
        measure(args.game, int(threads), args.inputs, args.steps, args.iterations)
        for threads in args.threads.split(",")
    ]
    lines = [f"# Neural CFR's training step on {args.game} (inputs {args.inputs})", ""]
    lines += [
        "| threads | step, embedding bag | step, dense | dense / bag | iterations (training) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for run in runs:
        step = run["step_ms"]
        times = ", ".join(f"{it['seconds']:.2f} s ({it['training']:.2f} s)" for it in run["iterations"])
        figures = f"{step['embedding bag']:.1f} ms | {step['dense']:.1f} ms | {run['dense_over_bag']:.2f}"
        lines.append(f"| {run['threads']} | {figures} | {times} |")
    lines += [
        "",
        f"Steps of {runs[0]['batch']:,} samples, networks {runs[0]['hidden']}; iterations of `--preset fast`.",
    ]
    print("\n".join(lines))
    write_atomic(args.out.with_suffix(".json"), json.dumps(runs, indent=1) + "\n")
    write_atomic(args.out.with_suffix(".md"), "\n".join(lines) + "\n")


def measure(game: str, threads: int, inputs: str, steps: int, iterations: int) -> dict[str, Any]:
    """One thread count's figures: milliseconds a step each way, and whole iterations' seconds."""
    torch = networks.torch_module()
    settings = settings_of("fast", {"advantage_memory": 10_000_000, "threads": threads, "inputs": inputs})
    solver = HoldemNeuralSolver(game, "sd-cfr", settings, np.random.default_rng(0))
    solver.run(1)
    memory, network = solver.advantage_memories[0], solver.value_networks[0]
    optimiser = solver._optimiser(network)
    rng = np.random.default_rng(1)
    seconds = {"embedding bag": 0.0, "dense": 0.0}
    for _ in range(steps):
        index = rng.integers(0, memory.filled, size=settings.advantage_batch_size)
        keys = memory.infoset[index]
        weight = memory.iteration[index].astype(np.float64)
        legal = solver._mask[keys & ((1 << solver._node_bits) - 1)]
        for way in seconds:
            started = time.perf_counter()
            output = (
                solver.forward(network, keys)
                if way == "embedding bag"
                else network(torch.from_numpy(solver.inputs(keys)))
            )
            weighted_step(
                network, optimiser, output, legal, memory.values[index], weight / weight.sum(), softmax=False, clip=10.0
            )
            seconds[way] += time.perf_counter() - started
    step = {way: 1000 * total / steps for way, total in seconds.items()}
    runs = []
    for _ in range(iterations):
        started, trained = time.perf_counter(), solver.training_seconds
        solver.run(1)
        runs.append({"seconds": time.perf_counter() - started, "training": solver.training_seconds - trained})
    return {
        "game": game,
        "threads": threads,
        "inputs": inputs,
        "batch": settings.advantage_batch_size,
        "hidden": list(settings.hidden),
        "step_ms": step,
        "dense_over_bag": step["dense"] / step["embedding bag"],
        "iterations": runs,
    }


if __name__ == "__main__":
    main()
