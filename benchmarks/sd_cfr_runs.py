"""Every SD-CFR run on Flop Hold'em in one figure: its exact NashConv against the iterations it completed.

    python -m benchmarks.sd_cfr_runs --out benchmarks/results/fhp_sd_cfr_runs.png

Reads each ``train --json`` report saved as ``fhp_sd_cfr*.json`` in ``--results`` (the runs of the table in
``docs/flop_holdem.md``); a point's colour is what the networks read (``--inputs``, or public-chance targets), its
shape the regrets' unit :math:`S` (``--value-scale``), filled for one thread and hollow for two. The lines are the
target, NFSP's 47 mbb/g of NashConv, and Deep CFR's 37 (Brown et al. 2019).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from adapters.inputs import InputError
from benchmarks.flop_holdem import DEEP_CFR_EXPLOITABILITY, NFSP_EXPLOITABILITY
from benchmarks.report import OneLineParser, one_line_errors
from eval.plots import pyplot, save_figure

NFSP_NASH_CONV = 2 * NFSP_EXPLOITABILITY
DEEP_CFR_NASH_CONV = 2 * DEEP_CFR_EXPLOITABILITY
"""Brown et al. (2019): NashConv on FHP in mbb/g, NFSP's best (the target) and Deep CFR's."""
MBB_PER_CHIP = 10.0
"""FHP's big blind is 100 chips: a chip is 10 mbb."""
_COLOURS = {"cards": "tab:blue", "canonical": "tab:green", "strength": "tab:orange", "public-chance": "tab:red"}
_LABELS = {
    "cards": "the cards as dealt",
    "canonical": "suit-canonical images",
    "strength": "cards and hand strength",
    "public-chance": "public-chance targets",
}
_MARKERS = {1.0: "o", 700.0: "s", 2100.0: "^"}


class Run(NamedTuple):
    """One SD-CFR run's report, as the figure reads it."""

    name: str
    iterations: int
    nash_conv_mbb: float
    reads: str
    """``cards``, ``canonical`` or ``strength`` (``--inputs``), or ``public-chance`` (``--traversal``)."""
    value_scale: float
    threads: int
    minutes: float
    """Solve time, scoring excluded."""


def read_run(path: Path) -> Run | None:
    """The run a report file holds, or ``None`` for a file of another kind."""
    data: dict[str, Any] = json.loads(path.read_text())
    report = data.get("report", data)
    if report.get("algo") != "sd-cfr":
        return None
    parameters = report["parameters"]
    traversal = parameters.get("traversal") or "external"
    reads = "public-chance" if traversal == "public-chance" else parameters.get("inputs") or "cards"
    if reads not in _COLOURS:
        raise ValueError(f"inputs {reads!r} have no colour in the figure")
    return Run(
        path.name,
        int(report["iterations"]),
        float(report["nash_conv"]) * MBB_PER_CHIP,
        reads,
        float(parameters.get("value_scale") or 1.0),  # runs made before --value-scale fitted in chips
        int(parameters.get("threads") or 1),
        float(report["solve_seconds"]) / 60,
    )


def read_runs(results: Path) -> list[Run]:
    """The SD-CFR ``train`` reports among ``results``' ``fhp_sd_cfr*.json`` (a report alone, or under ``report``
    beside its command); other files there, such as a model's rescoring, are left out, and a file that is not a
    report is refused in one line."""
    runs = []
    for path in sorted(results.glob("fhp_sd_cfr*.json")):
        try:
            run = read_run(path)
        except (ValueError, KeyError, TypeError, AttributeError) as error:  # JSONDecodeError is a ValueError
            raise InputError(f"{path}: not a train --json report ({type(error).__name__}: {error})") from None
        if run is not None:
            runs.append(run)
    return runs


def plot_runs(runs: list[Run], png: Path) -> None:
    """NashConv (mbb/g, log scale) against iterations (log scale), one point a run, beside the two lines."""
    plt = pyplot()
    from matplotlib.patches import Patch

    figure, axes = plt.subplots(figsize=(7.2, 4.6))
    for run in runs:
        colour = _COLOURS[run.reads]
        axes.scatter(
            run.iterations,
            run.nash_conv_mbb,
            marker=_MARKERS.get(run.value_scale, "D"),
            s=42,
            facecolors=colour if run.threads == 1 else "none",
            edgecolors=colour,
        )
    handles: list[Any] = [Patch(color=colour, label=_LABELS[reads]) for reads, colour in _COLOURS.items()]
    for scale, marker in _MARKERS.items():
        handles.append(axes.scatter([], [], color="grey", marker=marker, label=f"S = {scale:,.0f}, 1 thread"))
    handles.append(axes.scatter([], [], facecolors="none", edgecolors="grey", marker="o", label="2 threads"))
    handles.append(axes.axhline(NFSP_NASH_CONV, color="black", linestyle="--", label="target: NFSP's 47"))
    handles.append(axes.axhline(DEEP_CFR_NASH_CONV, color="tab:gray", linestyle=":", label="Deep CFR's 37"))
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("iterations completed")
    axes.set_ylabel("NashConv of the model (mbb/g)")
    shortest, longest = min(run.minutes for run in runs), max(run.minutes for run in runs)
    axes.set_title(f"SD-CFR on Flop Hold'em: {len(runs)} runs of {shortest:.0f} to {longest:.0f} minutes")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(handles=handles, fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    figure.tight_layout()
    save_figure(figure, png)


@one_line_errors
def main(argv: list[str] | None = None) -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=Path("benchmarks/results"), help="where the reports are")
    parser.add_output("--out", default=Path("benchmarks/results/fhp_sd_cfr_runs.png"))
    args = parser.parse(argv)
    if not args.results.is_dir():
        parser.error(f"--results {args.results}: not a directory")
    runs = read_runs(args.results)
    if not runs:
        parser.error(f"--results {args.results}: no SD-CFR report named fhp_sd_cfr*.json")
    plot_runs(runs, args.out)
    best = min(runs, key=lambda run: run.nash_conv_mbb)
    print(f"{len(runs)} runs; best {best.nash_conv_mbb:.0f} mbb/g ({best.name}); wrote {args.out}")


if __name__ == "__main__":
    main()
