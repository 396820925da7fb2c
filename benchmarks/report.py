"""Presentation shared by the benchmark families: tables, machine facts, ``results.md``, ``curves.csv``, plots.

Every file is written atomically (a temporary file, then a rename).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import io
import json
import math
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TypeVar

import numpy as np

from adapters.inputs import InputError
from benchmarks.measure import Convergence, ReferenceCheck
from cfr_agents.files import can_create_in, check_outputs, write_atomic
from eval.environments import Z_95
from eval.plots import pyplot, save_figure


def mbb_summary(name: str, values: np.ndarray) -> dict[str, float]:
    """``{name}_mbb``, the mean of ``values`` (mbb a hand), and ``{name}_se_mbb``, its standard error."""
    return {f"{name}_mbb": float(values.mean()), f"{name}_se_mbb": float(values.std(ddof=1) / math.sqrt(values.size))}


def interval(mean: float, error: float) -> str:
    """``mean [low, high]``, the 95% interval of a mean with standard error ``error``."""
    return f"{mean:+.1f} [{mean - Z_95 * error:+.1f}, {mean + Z_95 * error:+.1f}]"


class OneLineParser(argparse.ArgumentParser):
    """A benchmark's options: bad ones end the run with one line on stderr and exit status 2 (``prog`` defaults to
    the script's file name, as :func:`one_line_errors` names it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outputs: list[tuple[str, str, tuple[str, ...] | None]] = []
        """Each output option's destination, first flag and suffixes (``None``: a directory)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")

    def add_output(self, *flags: str, suffixes: Sequence[str] | None = ("",), **kwargs: Any) -> None:
        """An option naming what the run writes: files (``OUT.with_suffix(s)`` for each of ``suffixes``, ``OUT``
        itself for ``""``) or, with ``suffixes=None``, a directory. :meth:`parse` checks them."""
        action = self.add_argument(*flags, type=Path, **kwargs)
        self.outputs.append((action.dest, flags[0], None if suffixes is None else tuple(suffixes)))

    def parse(self, argv: Sequence[str] | None = None, *, child: str | None = None) -> argparse.Namespace:
        """The options, after making the directories the outputs go into and ending the run in one line if one of
        the outputs could not be written, so that a run never fails at its end for want of a place to write. Where
        the hidden option ``child`` (a destination) is set, the process is one the benchmark runs to measure in
        and writes nothing: its outputs are left alone."""
        options = self.parse_args(argv)
        if child is not None and getattr(options, child):
            return options
        for dest, flag, suffixes in self.outputs:
            out: Path | None = getattr(options, dest)
            if out is None:
                continue
            directory = out if suffixes is None else out.parent
            try:
                directory.mkdir(parents=True, exist_ok=True)
                if suffixes is None and not can_create_in(directory):
                    raise InputError(f"directory {str(directory)!r} is not writable")
                check_outputs(*self.files(out, suffixes or ()))
            except (InputError, OSError) as error:
                self.error(f"{flag} {out}: {error}")
        return options

    @staticmethod
    def files(out: Path, suffixes: Sequence[str]) -> list[Path]:
        """The files an output option's value ``out`` names: ``out.with_suffix(s)`` for each suffix, ``out`` for
        ``""``."""
        return [out.with_suffix(suffix) if suffix else out for suffix in suffixes]

    def refuse_overwriting(self, options: argparse.Namespace, inputs: Sequence[Path], what: str) -> None:
        """End the run in one line if a file one of the parsed ``options``' outputs names is one of ``inputs``."""
        read = {path.resolve() for path in inputs}
        for dest, flag, suffixes in self.outputs:
            out: Path | None = getattr(options, dest)
            if out is not None and any(path.resolve() in read for path in self.files(out, suffixes or ())):
                self.error(f"{flag} {out} would overwrite {what}")


def at_least(least: int) -> Callable[[str], int]:
    """An option's type: a whole number no smaller than ``least`` (argparse names the option in its one line)."""

    def whole(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, not {value}")
        return value

    return whole


Params = ParamSpec("Params")
Result = TypeVar("Result")


def one_line_errors(main: Callable[Params, Result]) -> Callable[Params, Result]:
    """A benchmark's ``main`` that ends the run with one line on stderr and exit status 2, not a traceback, where
    the input is at fault: an option value, file or agent name the library refuses (:class:`InputError`), or a file
    that cannot be read or written (:class:`OSError`)."""

    @functools.wraps(main)
    def guarded(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        try:
            return main(*args, **kwargs)
        except (InputError, OSError) as error:
            print(f"{os.path.basename(sys.argv[0])}: error: {' '.join(str(error).split())}", file=sys.stderr)
            raise SystemExit(2) from None

    return guarded


def cfr_agents(*argv: str) -> dict[str, Any]:
    """``cfr-agents argv --json``'s object. Where the command fails, its stderr (one line where it refuses the
    input) is passed on and the run ends with its exit status."""
    done = subprocess.run([sys.executable, "-m", "cfr_agents", *argv, "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(done.returncode)
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@dataclass(frozen=True)
class Table:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        widths = [max(len(cell) for cell in column) for column in zip(self.headers, *self.rows, strict=True)]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()

        body = [line(self.headers), line(["-" * width for width in widths]), *(line(row) for row in self.rows)]
        return "\n".join([f"== {self.title}", *body, *self.notes]) + "\n"

    def markdown(self) -> str:
        def line(cells: Sequence[str]) -> str:
            return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

        body = [line(self.headers), line(["---"] * len(self.headers)), *(line(row) for row in self.rows)]
        notes = ["", *self.notes] if self.notes else []
        return "\n".join([f"## {self.title}", "", *body, *notes]) + "\n"


@dataclass(frozen=True)
class Section:
    """One family's contribution to the report: its method notes and tables."""

    name: str
    method: tuple[str, ...]
    tables: tuple[Table, ...]


@dataclass(frozen=True)
class Figure:
    """A game's NashConv-against-time plot: ``nash_conv_vs_time_<game>.png``."""

    game: str
    title: str
    units: str
    thresholds: tuple[float, ...] = ()
    """NashConv levels drawn as horizontal lines."""


@dataclass(frozen=True)
class FamilyResult:
    """What a family hands the entry point: its report section, its curves, their plots, notes for the header."""

    section: Section
    runs: tuple[Convergence, ...]
    figures: tuple[Figure, ...]
    notes: tuple[str, ...] = ()


def ms(value: float) -> str:
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def check_cell(check: ReferenceCheck) -> str:
    return f"{'ok' if check.agrees else 'MISMATCH'} ({check.difference:.0e})"


def cross_check_table(runs: Sequence[Convergence], tolerance: float, notes: tuple[str, ...]) -> Table:
    rows = []
    for run in runs:
        check = run.check
        rows.append(
            (
                f"{run.game} {run.solver}" + (f" seed {run.seed}" if run.seed else ""),
                f"{check.ours:.12e}",
                f"{check.reference:.12e}",
                f"{check.difference:.1e}",
                "-" if check.native is None else f"{check.native:.12e} ({abs(check.native - check.ours):.1e})",
                "-" if check.conversion_gap is None else f"{check.conversion_gap:.1e}",
                "ok" if check.agrees else "MISMATCH",
            )
        )
    return Table(
        f"Cross-check of the final average policies (tolerance {tolerance:g})",
        ("run", "our NashConv", "OpenSpiel NashConv", "|diff|", "LiteEFG own (|diff|)", "read-out gap", "verdict"),
        tuple(rows),
        notes,
    )


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")


def load_average() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def machine_facts() -> dict[str, str]:
    model = "unknown"
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
        model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), model)
    versions = {}
    for distribution in ("open_spiel", "liteefg", "numpy", "numba", "cfr-agents"):
        try:
            versions[distribution] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            versions[distribution] = "not installed"
    return {
        "CPU": model,
        "cores": str(os.cpu_count()),
        "load average at start (1, 5, 15 min)": load_average(),
        "Python": platform.python_version(),
        **{f"{name} version": version for name, version in versions.items()},
    }


def write_table_report(
    out: Path, title: str, module: str, argv: Sequence[str], table: Table, records: Sequence[Mapping[str, object]]
) -> None:
    """``<out>.md`` (the title, the command ``python -m <module> <argv>``, the machine's facts and ``table``) and
    ``<out>.json`` (the facts and ``records``), each atomically; the table is printed as text."""
    facts = machine_facts()
    lines = [f"# {title}", "", f"- Date: {now()}", f"- Command: `python -m {module} {' '.join(argv)}`"]
    lines += [f"- {name}: {value}" for name, value in facts.items()]
    write_atomic(out.with_suffix(".md"), "\n".join(lines) + "\n\n" + table.markdown())
    write_atomic(out.with_suffix(".json"), json.dumps({"facts": facts, "rows": list(records)}, indent=1) + "\n")
    print(table.text())


def markdown_report(command: str, facts: Mapping[str, str], notes: Sequence[str], sections: Sequence[Section]) -> str:
    lines = ["# Solver benchmark", "", f"- Date: {now()}", f"- Command: `{command}`"]
    lines += [f"- {name}: {value}" for name, value in facts.items()]
    lines += [f"- {note}" for note in notes]
    for section in sections:
        lines += ["", f"# {section.name}", "", "Method:", "", *(f"- {item}" for item in section.method), ""]
        lines += [table.markdown() for table in section.tables]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_curves(path: Path, runs: Sequence[Convergence]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("solver", "game", "seed", "iteration", "seconds", "nash_conv"))
    for run in runs:
        for point in run.points:
            writer.writerow(
                (run.solver, run.game, run.seed, point.iteration, f"{point.seconds:.6f}", f"{point.nash_conv:.9e}")
            )
    write_atomic(path, buffer.getvalue())


_ALGORITHM_COLOURS = {"cfr": "C0", "cfr+": "C1", "lcfr": "C2", "dcfr": "C3", "pcfr+": "C4"}
_SCHEME_COLOURS = {"chance": "C5", "external": "C9", "outcome": "C6", "pure": "C8"}
_FULL_TREE_STYLES = {"ours": "-", "openspiel-cpp": "--", "liteefg": ":"}
_SAMPLED_STYLES = {"cfr": "-", "cfr+": "--", "lcfr": "-.", "dcfr": ":"}
_MARKERS = {"openspiel-cpp": "x", "openspiel-python": "+"}


def _style(run: Convergence) -> dict[str, object]:
    """Full-tree runs: thick, coloured by algorithm, styled by implementation. Sampled runs: thin
    (ours with stratified chance draws: thicker), coloured by scheme; ours styled by algorithm,
    OpenSpiel's marked by implementation."""
    if run.sampling == "none":
        return {"color": _ALGORITHM_COLOURS[run.algorithm], "linestyle": _FULL_TREE_STYLES[run.family], "linewidth": 2}
    stratified = run.solver.endswith(" stratified")  # thicker: chance drawn by --chance-draws stratified
    style: dict[str, object] = {"color": _SCHEME_COLOURS[run.sampling], "linewidth": 2.2 if stratified else 1.1}
    if run.family == "ours":
        return {**style, "linestyle": _SAMPLED_STYLES[run.algorithm]}
    return {**style, "linestyle": "-", "marker": _MARKERS[run.family], "markevery": 0.08, "markersize": 6}


def write_plot(path: Path, title: str, units: str, runs: Sequence[Convergence], thresholds: Sequence[float]) -> None:
    """Log-log NashConv against solve seconds, one line per run (see :func:`_style`)."""
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(11, 7))
    for run in runs:
        seconds = [point.seconds for point in run.points]
        values = [max(point.nash_conv, 1e-12) for point in run.points]
        axes.plot(seconds, values, label=run.label, **_style(run))
    for threshold in thresholds:
        axes.axhline(threshold, color="grey", linewidth=0.8, alpha=0.6)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("solve time (s), evaluation excluded")
    axes.set_ylabel(f"NashConv of the average strategy ({units})")
    axes.set_title(title)
    axes.grid(True, which="both", alpha=0.25)
    axes.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    figure.tight_layout()
    save_figure(figure, path, dpi=110)
