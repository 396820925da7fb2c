"""Pictures: a tournament's heatmap, NashConv curves, a policy's strategy along one betting line, and the
frontier of safe exploitation and its learning curve from logged hands.

matplotlib is the optional ``[plot]`` extra; without it every function here raises a one-line
:class:`~adapters.inputs.MissingExtraError` naming the extra to install.

Betting lines (``plot strategy --line``) are written as the Stanford Leduc paper writes them: tokens
joined by ``:``, each an action name of the game or a public card, in the order they happen. For
``rlcard:leduc-holdem`` the actions are ``call``, ``raise``, ``fold``, ``check`` and a card is
RLCard's name, suit then rank (``SK`` is the king of spades; ``K♠``, ``Ks`` and ``KS`` are accepted
too): the paper's line is ``call:raise:call:SK:check:raise``. For the Kuhn games the actions are
``pass`` and ``bet`` (``pass:bet``). The plot shows, for each private card the player to act at the
end of the line can hold there, that player's probability of each legal action.
"""

from __future__ import annotations

import csv
import importlib
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from adapters.inputs import MAX_RESULTS_BYTES, InputError, ParameterError, read_regular, require_extra
from cfr_agents.files import replacing
from cfr_agents.policy import Policy

if TYPE_CHECKING:
    from eval.exploitation.report import FrontierReport, Learning


def pyplot() -> ModuleType:
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or a one-line refusal."""
    matplotlib = require_extra("matplotlib", "plot", "plotting")
    matplotlib.use("Agg")
    return importlib.import_module("matplotlib.pyplot")


IMAGE_FORMATS = ("png", "pdf", "svg", "eps", "ps")
"""The image formats a plot is written in, named by the output's suffix (matplotlib's own writers)."""


def image_format(out: str | Path) -> str:
    """The format ``out``'s suffix names (``plot.pdf`` -> ``pdf``), or a one-line refusal."""
    suffix = Path(out).suffix.lower().lstrip(".")
    if suffix not in IMAGE_FORMATS:
        named = f"suffix {Path(out).suffix!r}" if suffix else "no suffix"
        raise InputError(f"image {str(out)!r} has {named}; name one of {', '.join('.' + f for f in IMAGE_FORMATS)}")
    return suffix


def save_figure(figure: Any, out: str | Path, *, dpi: int = 120) -> None:
    """Write ``figure`` atomically (via :func:`cfr_agents.files.replacing`) in the format ``out``'s suffix
    names (:func:`image_format`), cropped to its contents (a legend beside the axes included); the figure is
    closed whether or not the write succeeds."""
    plt = pyplot()
    try:
        with replacing(out) as temporary:
            figure.savefig(temporary, format=image_format(out), dpi=dpi, bbox_inches="tight")
    finally:
        plt.close(figure)


# --- tournaments ---------------------------------------------------------------------------------


def heatmap(result: Any, out: str | Path) -> None:
    """The row agent's mean payoff per hand against the column agent (an
    :class:`eval.tournament.TournamentResult`), each cell annotated with its 95% half-width and,
    when both agents can be queried, the exact value."""
    from eval.tournament import display_names

    plt = pyplot()
    agents: Sequence[str] = result.agents
    n = len(agents)
    values = [[math.nan] * n for _ in range(n)]
    labels = [[""] * n for _ in range(n)]
    for i, row in enumerate(agents):
        for j, column in enumerate(agents):
            cell = result.match(row, column)
            if cell is None:
                continue
            mean, error, exact = cell
            values[i][j] = mean
            labels[i][j] = f"{mean:+.3f}\n±{1.96 * error:.3f}" + (f"\nexact {exact:+.3f}" if exact is not None else "")
    finite = [abs(v) for line in values for v in line if not math.isnan(v)]
    limit = max(finite) if finite else 1.0
    size = max(5.0, 1.25 * n + 2.5)
    figure, axes = plt.subplots(figsize=(size, size * 0.85))
    image = axes.imshow(values, cmap="RdBu", vmin=-limit, vmax=limit)
    names = display_names(agents)
    axes.set_xticks(range(n), labels=names, rotation=35, ha="right")
    axes.set_yticks(range(n), labels=names)
    for i in range(n):
        for j in range(n):
            text = labels[i][j] or "--"
            strong = not math.isnan(values[i][j]) and abs(values[i][j]) > 0.6 * limit
            axes.text(j, i, text, ha="center", va="center", fontsize=8, color="white" if strong else "black")
    axes.set_xlabel("column agent")
    axes.set_ylabel("row agent")
    axes.set_title(
        f"{result.game_id}: row agent's payoff per hand ({result.units}),\n"
        f"{result.hands:,} hands per match, ± 95% half-width",
        fontsize=10,
    )
    figure.colorbar(image, ax=axes, label=f"{result.units} per hand")
    save_figure(figure, out)


# --- NashConv curves -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Curve:
    """One ``--curve`` file: ``iteration,seconds,nash_conv`` rows."""

    label: str
    iterations: tuple[float, ...]
    seconds: tuple[float, ...]
    nash_conv: tuple[float, ...]


def read_curve(path: str | Path) -> Curve:
    """A ``--curve`` CSV (from ``cfr-agents train --curve``); a missing or malformed one is refused."""
    shown = str(path)
    content = read_regular(path, "curve file", MAX_RESULTS_BYTES)
    try:
        rows = list(csv.DictReader(io.StringIO(content.decode("utf-8"), newline="")))
    except (UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"cannot read curve file {shown!r}: {error}") from None
    columns = ("iteration", "seconds", "nash_conv")
    if not rows or any(column not in rows[0] for column in columns):
        raise InputError(f"{shown!r} is not a curve file: it needs the columns {','.join(columns)} and a row")
    try:
        parsed = [tuple(float(row[column]) for column in columns) for row in rows]
    except (TypeError, ValueError):
        raise InputError(f"{shown!r} has a value that is not a number") from None
    if not all(math.isfinite(value) for row in parsed for value in row):
        raise InputError(f"{shown!r} has a value that is not a finite number")
    iterations, seconds, nash_conv = (tuple(values) for values in zip(*parsed, strict=True))
    return Curve(Path(path).stem, iterations, seconds, nash_conv)


def plot_curves(paths: Sequence[str | Path], out: str | Path) -> list[Curve]:
    """NashConv against iterations and against seconds, log-log, one line per file."""
    curves = [read_curve(path) for path in paths]
    lines = []
    for path, curve in zip(paths, curves, strict=True):  # log axes show positive values only
        kept = [
            (i, s, v)
            for i, s, v in zip(curve.iterations, curve.seconds, curve.nash_conv, strict=True)
            if i > 0 and v > 0
        ]
        timed = [k for k in kept if k[1] > 0]
        if not kept:
            raise InputError(f"curve {str(path)!r} has no point with positive iteration and NashConv for log axes")
        if not timed:
            raise InputError(f"curve {str(path)!r} has no positive seconds to plot on a log axis")
        lines.append((curve.label, kept, timed))
    plt = pyplot()
    figure, (by_iterations, by_seconds) = plt.subplots(1, 2, figsize=(11, 4.2))
    for label, kept, timed in lines:
        by_iterations.plot([k[0] for k in kept], [k[2] for k in kept], label=label)
        by_seconds.plot([k[1] for k in timed], [k[2] for k in timed], label=label)
    for axes, label in ((by_iterations, "iterations"), (by_seconds, "seconds")):
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel(label)
        axes.set_ylabel("NashConv")
        axes.grid(True, which="both", alpha=0.3)
    by_iterations.legend(fontsize=8)
    by_iterations.set_title("NashConv against iterations")
    by_seconds.set_title("NashConv against solve time")
    save_figure(figure, out)
    return curves


def plot_sweep(runs: Sequence[tuple[str, Sequence[Sequence[float]]]], out: str | Path) -> None:
    """A sweep's NashConv against solve time, log-log: one colour per configuration, one line per seed.

    ``runs`` holds ``(configuration, curve)`` with curve points ``(iteration, seconds, NashConv)``.
    """
    plt = pyplot()
    figure, axes = plt.subplots(figsize=(7, 4.5))
    colours: dict[str, str] = {}
    for name, curve in runs:
        kept = [point for point in curve if point[1] > 0 and point[2] > 0]
        first = name not in colours
        colours.setdefault(name, f"C{len(colours) % 10}")
        axes.plot(
            [p[1] for p in kept],
            [p[2] for p in kept],
            color=colours[name],
            alpha=0.8,
            linewidth=1,
            label=name if first else None,
        )
    axes.set(xscale="log", yscale="log", xlabel="solve seconds", ylabel="NashConv", title="NashConv against solve time")
    axes.legend(fontsize=7)
    save_figure(figure, out)


# --- safe exploitation ---------------------------------------------------------------------------


def plot_frontier(path: str | Path, out: str | Path) -> FrontierReport:
    """Exploitation against exploitability from a frontier file (``cfr-agents exploit --frontier``): the
    RNR points, the ε-safe LP's exact curve where the file has it, the naive line
    :math:`\\lambda\\,\\mathrm{BR} + (1-\\lambda)\\,\\mathrm{Nash}` and the best response, with the shares'
    exploitability levels dotted; the right panel zooms in on those levels."""
    from eval.exploitation.report import read_frontier

    report = read_frontier(path)
    frontier = report.frontier
    plt = pyplot()
    units = frontier.units
    levels = [share.level for share in frontier.shares]
    rnr = [(point.exploitability, point.exploitation) for point in frontier.rnr]
    naive = [(point.exploitability, point.exploitation) for point in frontier.naive]
    lp = [(point.exploitability, point.exploitation) for point in report.lp_curve or ()]
    best = (frontier.best_response_exploitability, frontier.best_response_exploitation)
    figure, panels = plt.subplots(1, 2, figsize=(11, 4.5))
    zoom = 1.5 * (max(levels, default=0.0) or 0.1)
    for axes in panels:
        if lp:
            axes.plot(*zip(*lp, strict=True), color="C0", linewidth=1.5, label="ε-safe LP: the exact frontier")
        if naive:
            axes.plot(*zip(*naive, strict=True), "--", color="C7", label="naive: λ·BR + (1-λ)·Nash")
        axes.plot(*zip(*rnr, strict=True), "o" if lp else "o-", color="C3", markersize=4, label="RNR, p = 0 ... 1")
        axes.plot(*best, "*", color="C2", markersize=12, label="best response")
        for level in levels:
            axes.axvline(level, linestyle=":", color="0.6", linewidth=0.8)
        axes.set_xlabel(f"exploitability ({units})")
        axes.set_ylabel(f"exploitation ({units} per hand)")
        axes.grid(True, alpha=0.3)
    whole, near = panels
    whole.legend(fontsize=8, loc="lower right")
    whole.set_title("the whole frontier", fontsize=9)
    everything = [*rnr, *naive, *lp, best]
    shown = [y for x, y in everything if x <= zoom] or [y for _, y in everything]
    pad = 0.05 * (max(shown) - min(shown)) or 0.01
    near.set_xlim(-0.03 * zoom, zoom)
    near.set_ylim(min(shown) - pad, max(shown) + pad)
    near.set_title(f"exploitability up to {zoom:g} {units}, the shares' levels dotted", fontsize=9)
    for (x, y), ps in _close_points(frontier.rnr, zoom, max(shown) - min(shown)):
        shown_ps = ", ".join(ps) if len(ps) <= 2 else f"{ps[0]}–{ps[-1]}"
        near.annotate(shown_ps, (x, y), fontsize=6, xytext=(3, -8), textcoords="offset points")
    where = "both seats" if len(frontier.seats) == 2 else f"seat {frontier.seats[0]}"
    figure.suptitle(
        f"Exploiting {_clipped(frontier.opponent, tail=True)} on {_clipped(frontier.game_id)} ({where}); "
        "RNR points labelled by p",
        fontsize=10,
    )
    save_figure(figure, out)
    return report


def plot_learning(path: str | Path, out: str | Path) -> Learning:
    """A learning file (``benchmarks/learning.py``): one row per opponent. Left, against the logged hands
    (log scale): the exact gain of DBR and of the best response to the model against the real opponent
    (the mean over seeds, a band of one standard deviation), what the model predicts (dashed), and the
    lines of the equilibrium, RNR on the true strategy (the ceiling) and the best response to it. Right:
    the responses' exploitability, log scale."""
    from eval.exploitation.report import read_learning

    learning = read_learning(path)
    plt = pyplot()
    units = learning.units
    rows = len(learning.references)
    figure, panels = plt.subplots(rows, 2, figsize=(11, 3.1 * rows + 0.6), squeeze=False)
    for (gains, risks), reference in zip(panels, learning.references, strict=True):
        points = [point for point in learning.points if point.opponent == reference.opponent]
        hands = sorted({point.hands for point in points})
        for kind, colour, label in (("dbr", "C3", "DBR"), ("best_response", "C0", "BR to the model")):
            values = {
                key: [[getattr(getattr(p, kind), key) for p in points if p.hands == n] for n in hands]
                for key in ("gain", "predicted", "exploitability")
            }
            mean = {key: [sum(v) / len(v) for v in columns] for key, columns in values.items()}
            spread = [_deviation(v) for v in values["gain"]]
            gains.plot(hands, mean["gain"], "o-", color=colour, markersize=3, label=f"{label}: real gain")
            gains.fill_between(
                hands,
                [m - d for m, d in zip(mean["gain"], spread, strict=True)],
                [m + d for m, d in zip(mean["gain"], spread, strict=True)],
                color=colour,
                alpha=0.15,
            )
            gains.plot(hands, mean["predicted"], "--", color=colour, linewidth=1, label=f"{label}: model's prediction")
            risks.plot(hands, mean["exploitability"], "o-", color=colour, markersize=3, label=label)
        ceiling = f"RNR on the truth, p = {reference.ceiling_p:g}"
        for value, style, colour, label in (
            (reference.equilibrium_gain, ":", "0.4", "equilibrium"),
            (reference.ceiling_gain, "-.", "C4", ceiling),
            (reference.best_response_gain, ":", "C2", "best response to the truth"),
        ):
            gains.axhline(value, linestyle=style, color=colour, linewidth=1, label=label)
        risks.axhline(reference.ceiling_exploitability, linestyle="-.", color="C4", linewidth=1, label=ceiling)
        risks.axhline(
            reference.best_response_exploitability, linestyle=":", color="C2", linewidth=1, label="BR to the truth"
        )
        opponent = _clipped(reference.opponent, tail=True)
        gains.set(xscale="log", ylabel=f"gain ({units} per hand)", title=f"against {opponent}")
        risks.set(xscale="log", yscale="log", ylabel=f"exploitability ({units})", title=opponent)
        for axes in (gains, risks):
            axes.grid(True, which="both", alpha=0.3)
    panels[0][0].legend(fontsize=7, loc="best")
    panels[0][1].legend(fontsize=7, loc="lower right")
    for axes in panels[-1]:
        axes.set_xlabel("hands logged")
    figure.suptitle(
        f"{_clipped(learning.game_id)}: responses from logged hands ({learning.observe} observation; DBR "
        f"{_clipped(learning.confidence)}); mean over seeds ± one standard deviation",
        fontsize=10,
    )
    figure.tight_layout()
    save_figure(figure, out)
    return learning


TITLE_TEXT = 60
"""The most characters of a name (an opponent, a game) a plot's title shows."""


def _clipped(text: str, *, tail: bool = False) -> str:
    """``text`` cut to :data:`TITLE_TEXT` characters with an ellipsis: its start, or with ``tail`` its end (a
    path's file name)."""
    if len(text) <= TITLE_TEXT:
        return text
    return "…" + text[1 - TITLE_TEXT :] if tail else text[: TITLE_TEXT - 1] + "…"


def _deviation(values: Sequence[float]) -> float:
    """The sample standard deviation; 0 for one value."""
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _close_points(points: Sequence[Any], width: float, height: float) -> list[tuple[tuple[float, float], list[str]]]:
    """RNR points within ``width`` of exploitability, with the values of p of points that would overlap
    (within 2% of the panel's width and height of the first of them) gathered under one label."""
    groups: list[tuple[tuple[float, float], list[str]]] = []
    for point in points:
        if point.exploitability > width:
            continue
        x, y = point.exploitability, point.exploitation
        if groups and abs(x - groups[-1][0][0]) <= 0.02 * width and abs(y - groups[-1][0][1]) <= 0.02 * height:
            groups[-1][1].append(f"{point.p:g}")
        else:
            groups.append(((x, y), [f"{point.p:g}"]))
    return groups


# --- a strategy along one betting line -----------------------------------------------------------

LINE_GAMES = ("rlcard:leduc-holdem", "rlcard:kuhn-poker", "openspiel:kuhn_poker")
"""The games whose betting lines ``plot strategy`` reads."""
_SUITS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C", "s": "S", "h": "H", "d": "D", "c": "C"}
_RANKS = {"J", "Q", "K", "A", "T", "2", "3", "4", "5", "6", "7", "8", "9"}


def _card(token: str) -> str | None:
    """RLCard's card name for ``token`` (``SK``, ``K♠``, ``Ks``, ``KS``), or ``None``."""
    text = token.strip()
    if len(text) != 2:
        return None
    first, second = text[0], text[1]
    if first.upper() in "SHDC" and second.upper() in _RANKS:
        return first.upper() + second.upper()
    if first.upper() in _RANKS and (second in _SUITS or second.upper() in "SHDC"):
        return _SUITS.get(second, second.upper()) + first.upper()
    return None


@dataclass(frozen=True)
class LineStrategy:
    """The rows of one betting line: for each private card, the action probabilities there."""

    game_id: str
    line: str
    player: int
    """The seat to act at the end of the line."""
    actions: tuple[str, ...]
    hands: tuple[str, ...]
    probabilities: tuple[tuple[float, ...], ...]
    """``probabilities[h][a]``: of action ``actions[a]`` with hand ``hands[h]``."""


def line_strategy(policy: Policy, line: str, seat: int | None = None) -> LineStrategy:
    """``policy``'s probabilities at the end of ``line`` for every private card (see the module docstring)."""
    if policy.game_id not in LINE_GAMES:
        raise InputError(f"plot strategy draws {', '.join(LINE_GAMES)}; {policy.game_id} is not supported yet")
    tokens = line.split(":")
    if not line or any(not token.strip() for token in tokens):
        raise ParameterError(
            "{line} {given!r}: give action names and public cards joined by ':', e.g. call:raise:call:SK", given=line
        )
    game = policy.game()
    names = {game.action_name(a).lower(): a for a in range(_num_actions(policy))}
    actions: list[str] = []
    public: str | None = None
    for token in tokens:
        word = token.strip().lower()
        if word in names:
            if public is not None and not _leduc(policy.game_id):
                raise ParameterError("{line} {given!r}: {game} has no public card", given=line, game=policy.game_id)
            actions.append(word)
            continue
        card = _card(token)
        if card is None or not _leduc(policy.game_id):
            known = ", ".join(names)
            raise ParameterError(
                "{line} {given!r}: {token!r} is neither an action ({known}) nor a public card (e.g. SK)",
                given=line,
                token=token,
                known=known,
            )
        if public is not None:
            raise ParameterError("{line} {given!r}: only one public card is dealt", given=line)
        public = card
    if _leduc(policy.game_id):
        return _leduc_line(policy, line, actions, public, seat)
    return _kuhn_line(policy, line, actions)


def _num_actions(policy: Policy) -> int:
    return max((a for row in policy.table.values() for a in row), default=-1) + 1


def _leduc(game_id: str) -> bool:
    return game_id == "rlcard:leduc-holdem"


def _leduc_line(policy: Policy, line: str, actions: list[str], public: str | None, seat: int | None) -> LineStrategy:
    """RLCard Leduc keys ``seat|hand|public|role|actions``."""
    history = "-".join(actions)
    found: dict[int, dict[str, dict[int, float]]] = {}
    for key, row in policy.table.items():
        player, hand, card, _, record = key.split("|")
        if record == history and card == (public or "-"):
            found.setdefault(int(player), {})[hand] = dict(row)
    if not found:
        raise ParameterError(
            "{line} {given!r} reaches no decision of {game}"
            + ("" if public else " (after the first round, name the public card, e.g. SK)"),
            given=line,
            game=policy.game_id,
        )
    seats = sorted(found)
    chosen = seat if seat is not None else seats[0]
    if chosen not in found:
        raise ParameterError(
            "{seat} {chosen}: the line is a decision of seat {seats}", chosen=chosen, seats=" or ".join(map(str, seats))
        )
    return _assemble(policy, line, chosen, found[chosen])


def _kuhn_line(policy: Policy, line: str, actions: list[str]) -> LineStrategy:
    """Kuhn keys: card index (J=0, Q=1, K=2) then ``p``/``b`` per action."""
    history = "".join("p" if action == "pass" else "b" for action in actions)
    ranks = ("J", "Q", "K")
    rows = {ranks[int(key[0])]: dict(row) for key, row in policy.table.items() if key[1:] == history}
    if not rows:
        raise ParameterError("{line} {given!r} reaches no decision of {game}", given=line, game=policy.game_id)
    return _assemble(policy, line, len(history) % 2, rows)


def _assemble(policy: Policy, line: str, player: int, rows: dict[str, dict[int, float]]) -> LineStrategy:
    game = policy.game()
    action_ids = sorted({a for row in rows.values() for a in row})
    order = {"J": 0, "Q": 1, "K": 2}
    hands = sorted(rows, key=lambda h: (order.get(h[-1], 9), h))
    table = tuple(tuple(float(rows[h].get(a, 0.0)) for a in action_ids) for h in hands)
    return LineStrategy(
        policy.game_id, line, player, tuple(game.action_name(a) for a in action_ids), tuple(hands), table
    )


def plot_strategy(policy: Policy, line: str, out: str | Path, seat: int | None = None) -> LineStrategy:
    """Grouped bars: for each private card, the probability of each action at the end of ``line``."""
    strategy = line_strategy(policy, line, seat)
    plt = pyplot()
    hands, actions = strategy.hands, strategy.actions
    width = 0.8 / len(actions)
    figure, axes = plt.subplots(figsize=(max(5.0, 1.3 * len(hands) + 1.5), 3.8))
    for a, action in enumerate(actions):
        xs = [h + (a - (len(actions) - 1) / 2) * width for h in range(len(hands))]
        heights = [strategy.probabilities[h][a] for h in range(len(hands))]
        bars = axes.bar(xs, heights, width, label=action)
        for bar, height in zip(bars, heights, strict=True):
            if height >= 0.005:
                axes.text(bar.get_x() + bar.get_width() / 2, height + 0.01, f"{height:.2f}", ha="center", fontsize=7)
    axes.set_xticks(range(len(hands)), labels=[_pretty(h) for h in hands])
    axes.set_ylim(0, 1.2)
    axes.set_ylabel("probability")
    axes.set_xlabel("private card")
    axes.legend(fontsize=8, ncols=len(actions))
    axes.set_title(f"{strategy.game_id}, seat {strategy.player} to act after {strategy.line}", fontsize=9)
    save_figure(figure, out)
    return strategy


def _pretty(hand: str) -> str:
    """``SK`` -> ``K♠``; Kuhn ranks stay as they are."""
    suits = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
    return f"{hand[1]}{suits[hand[0]]}" if len(hand) == 2 and hand[0] in suits else hand


__all__ = [
    "IMAGE_FORMATS",
    "Curve",
    "LineStrategy",
    "heatmap",
    "image_format",
    "line_strategy",
    "plot_curves",
    "plot_frontier",
    "plot_learning",
    "plot_strategy",
    "pyplot",
    "read_curve",
    "save_figure",
]
