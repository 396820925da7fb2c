"""The opponent tables of both Leducs and the training curves of the shipped models, as generated files.

Run from the repository root (``make bench-opponents`` runs it after ``benchmarks/opponents.py``)::

    .venv/bin/python benchmarks/opponent_tables.py [--out-dir benchmarks/results]

Writes, each atomically:

* ``opponent_tables.md``: ``cfr-agents opponents --game G --table`` for ``rlcard:leduc-holdem`` and
  ``openspiel:leduc_poker``: every named opponent scored exactly against random, our DCFR and each other;
* ``opponent_training.md``: each shipped trained model's provenance (command, hyperparameter preset,
  training time) and the exact exploitability recorded at its checks during training;
* ``opponent_training.png``: those curves, exploitability against episodes or iterations.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from adapters import load_game
from benchmarks.report import OneLineParser, one_line_errors
from cfr_agents.files import write_atomic
from eval.opponents import TRAINABLE, available, shipped_model
from eval.opponents.provenance import Provenance, provenance_of
from eval.opponents.table import OpponentTable, opponent_table

GAMES = ("rlcard:leduc-holdem", "openspiel:leduc_poker")
SHIPPED = (
    ("rlcard-nfsp", "rlcard:leduc-holdem"),
    ("openspiel-nfsp", "openspiel:leduc_poker"),
    ("rlcard-cfr", "rlcard:leduc-holdem"),
    *(
        (kind, game_id)
        for kind in ("deep-cfr", "sd-cfr")
        for game_id in ("openspiel:leduc_poker", "rlcard:leduc-holdem")
    ),
)


def table_section(table: OpponentTable) -> str:
    """One game's table as ``cfr-agents opponents --table`` prints it."""
    lines = [
        f"## {table.game_id}",
        "",
        "```",
        f"{table.game_id}: exact values per hand in {table.units}, row against column, seats swapped",
        f"DCFR column: {table.equilibrium}",
    ]
    if table.distinct_observations is not None:
        observations = table.distinct_observations
        lines.append(f"RLCard's obs: {observations} distinct observations for {table.infosets:,} infosets")
    return "\n".join([*lines, "```", "", table.markdown(), ""])


def shipped() -> list[Provenance]:
    """The provenance of each shipped trained model that is present."""
    found = []
    for kind, game_id in SHIPPED:
        path = shipped_model(kind, load_game(game_id))
        if path.is_file():
            found.append(provenance_of(json.loads(path.read_text()), str(path)))
    return found


def _command(provenance: Provenance) -> str:
    unit = TRAINABLE[provenance.kind].unit
    amount = provenance.episodes if unit == "episodes" else provenance.iterations
    preset = provenance.hyperparameters.get("preset")
    every = provenance.curve[0].iteration if provenance.curve else None
    if provenance.kind in ("deep-cfr", "sd-cfr"):  # trained by train --algo, which takes single hyperparameters
        kept = provenance.hyperparameters.get("kept_networks")
        parts = [
            f"cfr-agents train --algo {provenance.kind} --game {provenance.game} --iterations {amount}",
            f"--seed {provenance.seed} --preset {preset}",
            *([f"--kept-networks {kept}"] if kept else []),
            *([f"--eval-every {every}"] if every else []),
            "--out FILE.json",
        ]
        return " ".join(parts)
    parts = [
        f"cfr-agents train-opponent {provenance.kind} --game {provenance.game} --{unit} {amount}",
        f"--seed {provenance.seed}",
        *([f"--hyperparameters {preset}"] if preset else []),
        *([f"--check-every {every}"] if every else []),
    ]
    return " ".join(parts)


def training_report(models: Sequence[Provenance]) -> str:
    """The shipped models' provenance and curves as Markdown."""
    lines = ["# Shipped trained opponents", ""]
    lines += ["| model | trained | preset | exploitability | NashConv |", "|---|---|---|---|---|"]
    for p in models:
        preset = p.hyperparameters.get("preset", "-")
        lines.append(
            f"| `{p.kind}` | {p.describe()} | {preset} | {p.exploitability:.4f} {p.units} | "
            f"{p.nash_conv:.4f} {p.units} |"
        )
    for p in models:
        unit = TRAINABLE[p.kind].unit
        lines += ["", f"## `{p.kind}` on `{p.game}`", "", "```sh", _command(p), "```", ""]
        if not p.curve:
            lines.append("No checks during training (trained without `--check-every`).")
            continue
        lines += [
            f"| {unit} | training seconds | exploitability ({p.units}) | NashConv ({p.units}) |",
            "|---:|---:|---:|---:|",
        ]
        lines += [f"| {c.iteration:,} | {c.seconds:.0f} | {c.nash_conv / 2:.4f} | {c.nash_conv:.4f} |" for c in p.curve]
    return "\n".join(lines) + "\n"


def plot_training(models: Sequence[Provenance], out: Path) -> None:
    """Exploitability against the amount trained, one line per model with a curve."""
    from eval.plots import pyplot, save_figure

    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7, 4))
    for p in models:
        if p.curve:
            axes.plot(
                [c.iteration for c in p.curve],
                [c.nash_conv / 2 for c in p.curve],
                marker="o",
                markersize=3,
                label=f"{p.kind} ({p.units})",
            )
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.xaxis.set_minor_formatter("")  # decades only: minor labels collide
    axes.set_xlabel("episodes (NFSP) or iterations (CFRAgent, Deep CFR, SD-CFR) trained")
    axes.set_ylabel("exact exploitability (NashConv / 2)")
    axes.set_title("Shipped opponents: exact exploitability during training")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    save_figure(figure, out)


@one_line_errors
def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_output("--out-dir", suffixes=None, default=Path("benchmarks/results"), help="where the files go")
    parser.add_argument("--skip-tables", action="store_true", help="only the training report and plot")
    args = parser.parse(argv)
    models = shipped()
    write_atomic(args.out_dir / "opponent_training.md", training_report(models))
    plot_training(models, args.out_dir / "opponent_training.png")
    print(f"wrote {args.out_dir / 'opponent_training.md'} and opponent_training.png")
    if not args.skip_tables:
        sections = [
            "Exact values per hand, row against column, seats swapped (the mean over both seats); "
            '"vs DCFR" is against our DCFR after 3,000 iterations. Generated by '
            "`benchmarks/opponent_tables.py`.",
            "",
        ]
        for game_id in GAMES:
            names = [family.name for family in available(game_id)]
            sections.append(table_section(opponent_table(game_id, names)))
            print(f"scored {len(names)} opponents on {game_id}", flush=True)
        write_atomic(args.out_dir / "opponent_tables.md", "\n".join(sections))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
