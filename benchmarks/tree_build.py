"""Tree building yardstick: a cold ``compile_tree`` and a load from the tree cache, per game.

    .venv/bin/python benchmarks/tree_build.py [--reps 5] [--cpu 1] [--games leduc13,liars-dice]

Every measurement is a fresh Python process that imports everything and loads the game untimed,
then times one ``compile_tree(game)``: with ``CFR_AGENTS_NO_TREE_CACHE=1`` for the cold build, and
against a cache that a first, untimed process filled for the cached load (a temporary
``XDG_CACHE_HOME``: your own cache is never touched). Each figure is the minimum over ``--reps``
processes; ``--cpu`` pins them to one core. Targets: 13-rank Leduc built in at most 2.5 s, Liar's
Dice in at most 0.5 s, RLCard Leduc in at most 0.3 s. Writes ``benchmarks/results/tree_build.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script: the repository root

from benchmarks.report import OneLineParser, Table, machine_facts, now, one_line_errors, verdict
from cfr_agents.files import write_atomic
from cfr_agents.tree_cache import DISABLE_VARIABLE

RESULTS = Path(__file__).resolve().parent / "results"
LEDUC13 = (
    "openspiel:universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=1 1,raiseSize=2 4,firstPlayer=1 1,"
    "maxRaises=2 2,numSuits=2,numRanks=13,numHoleCards=1,numBoardCards=0 1)"
)


@dataclass(frozen=True)
class Game:
    name: str
    game_id: str
    target: float | None
    """Most seconds a cold build may take."""


GAMES = (
    Game("kuhn", "openspiel:kuhn_poker", None),
    Game("leduc", "openspiel:leduc_poker", None),
    Game("leduc-suit-isomorphic", "openspiel:leduc_poker(suit_isomorphism=True)", None),
    Game("liars-dice", "openspiel:liars_dice", 0.5),
    Game("leduc13", LEDUC13, 2.5),
    Game("rlcard-kuhn", "rlcard:kuhn-poker", None),
    Game("rlcard-leduc", "rlcard:leduc-holdem", 0.3),
)


@dataclass(frozen=True)
class Timing:
    game: Game
    size: str
    """The tree's infosets, decision nodes and terminals."""
    cold: float
    cached: float
    entry_bytes: int
    """Size of the game's cache entry."""

    @property
    def passed(self) -> bool:
        return self.game.target is None or self.cold <= self.game.target


def child(game_id: str, cpu: int | None) -> int:
    """One timed ``compile_tree`` in this process (pinned to ``cpu`` if given): prints its seconds,
    whether the tree came from the cache and the tree's size, as JSON."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    import adapters
    from cfr_agents.tree import compile_tree

    game = adapters.load_game(game_id)
    started = time.perf_counter()
    tree = compile_tree(game)
    seconds = time.perf_counter() - started
    size = (
        f"{tree.num_infosets:,} infosets, {tree.num_decision_nodes:,} decision nodes, {tree.num_terminals:,} terminals"
    )
    print(json.dumps({"seconds": seconds, "from_cache": tree.from_cache, "size": size}))
    return 0


def measure(game: Game, cache_home: Path, cached: bool, cpu: int | None) -> tuple[float, str, bool]:
    """Seconds of one ``compile_tree`` in a fresh process with the cache on (``cached``) or off, and the
    tree's size; refused unless the tree came from the cache exactly when it should."""
    env = {name: value for name, value in os.environ.items() if name != DISABLE_VARIABLE}
    env["XDG_CACHE_HOME"] = str(cache_home)
    if not cached:
        env[DISABLE_VARIABLE] = "1"
    command = [sys.executable, __file__, "--child", game.game_id, *([] if cpu is None else ["--cpu", str(cpu)])]
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"tree_build: {game.name} failed: {result.stderr.strip().splitlines()[-1:]}")
    printed = json.loads(result.stdout.strip().splitlines()[-1])
    return float(printed["seconds"]), str(printed["size"]), bool(printed["from_cache"])


def time_game(game: Game, reps: int, cpu: int | None) -> Timing:
    """The minimum over ``reps`` fresh processes of a cold build and of a cached load, interleaved."""
    with tempfile.TemporaryDirectory(prefix="bench-tree-cache-") as name:
        cache_home = Path(name)
        *_, filled_from_cache = measure(game, cache_home, True, cpu)  # fills the cache, untimed
        entry_bytes = sum(entry.stat().st_size for entry in cache_home.rglob("*.npz"))
        cold, cached = [], []
        size = ""
        for _ in range(reps):
            seconds, size, cold_from_cache = measure(game, cache_home, False, cpu)
            cold.append(seconds)
            seconds, _, loaded_from_cache = measure(game, cache_home, True, cpu)
            cached.append(seconds)
            if filled_from_cache or cold_from_cache or not loaded_from_cache:
                raise SystemExit(f"tree_build: {game.name}: the cache was not used as expected")
    return Timing(game, size, min(cold), min(cached), entry_bytes)


def report(timings: list[Timing], reps: int, cpu: int | None, command: str) -> tuple[str, str]:
    """The results as Markdown (the file) and as text (the terminal)."""
    rows = tuple(
        (
            timing.game.name,
            f"{timing.cold:.3f}",
            f"{timing.cached:.3f}",
            f"{timing.cold / timing.cached:.1f}x",
            f"{timing.entry_bytes / 1e6:.2f}",
            "-" if timing.game.target is None else f"<= {timing.game.target:g} s",
            "-" if timing.game.target is None else verdict(timing.passed),
        )
        for timing in timings
    )
    table = Table(
        "Cold build and cached load of compile_tree (seconds, minimum over fresh processes)",
        ("game", "cold build", "cached load", "speed-up", "entry MB", "target (cold)", "verdict"),
        rows,
        (
            *(f"{timing.game.name}: {timing.game.game_id}, {timing.size}." for timing in timings),
            "A speed-up below 1x: the tree takes less time to build than an entry takes to read.",
        ),
    )
    facts = machine_facts()
    lines = [
        "# Tree building and the tree cache",
        "",
        f"- Date: {now()}",
        f"- Command: `{command}`",
        *(f"- {name}: {value}" for name, value in facts.items()),
        f"- rlcard version: {metadata.version('rlcard')}",
        f"- Fresh processes per figure: {reps}" + ("" if cpu is None else f", each pinned to CPU {cpu}"),
        "- Method: each process imports everything and loads the game untimed, then times one "
        "`compile_tree(game)`: with `CFR_AGENTS_NO_TREE_CACHE=1` (cold build: the whole tree walked and "
        "compiled) and against a tree cache filled beforehand (cached load: the `.npz` entry read and "
        "checked). Cold and cached processes alternate, so load drift hits both alike.",
        "",
        table.markdown(),
    ]
    return "\n".join(lines), table.text()


@one_line_errors
def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="fresh processes per figure (default 5)")
    parser.add_argument("--cpu", type=int, help="pin every measured process to this CPU")
    parser.add_argument("--games", help=f"comma-separated, of {','.join(game.name for game in GAMES)} (default all)")
    parser.add_output("--out", default=RESULTS / "tree_build.md", help="report file")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # one measured process: the game id
    args = parser.parse(argv, child="child")
    if args.child:
        return child(args.child, args.cpu)
    names = {game.name: game for game in GAMES}
    chosen = args.games.split(",") if args.games else list(names)
    if args.reps < 1 or any(name not in names for name in chosen):
        parser.error(f"--reps must be positive and --games take names from {', '.join(names)}")
    timings = []
    for name in chosen:
        print(f"[tree_build] {name}", file=sys.stderr, flush=True)
        timings.append(time_game(names[name], args.reps, args.cpu))
    command = "python benchmarks/tree_build.py " + " ".join(argv if argv is not None else sys.argv[1:])
    markdown, text = report(timings, args.reps, args.cpu, command.strip())
    print(text, end="")
    write_atomic(args.out, markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
