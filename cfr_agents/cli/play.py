"""``cfr-agents play AGENT --game G [--seat {0,1,alternate}] [--hands N] [--seed S]``: a human against any agent,
in the terminal (:mod:`eval.play`).

Moves are read one per line from the standard input -- a terminal or a pipe -- by number or by name; ``q`` or the
end of the input ends the session, and a summary is printed: the net result, and on games the compiled tree holds,
the AIVAT estimate of the human's expected result with the agent's exact best-response value beside it."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cfr_agents.cli.common import MAX_HANDS, hands, magnitude, non_negative_int
from cfr_agents.cli.paths import add_input


def session_hands(text: str) -> int:
    """``--hands``: from 1 to :data:`MAX_HANDS`."""
    value = hands(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {magnitude(value)}")
    return value


SEATS = ("0", "1", "alternate")
"""What ``--seat`` takes: a seat for every hand, or seats in turn (seat 0 first)."""


def register(commands: Any) -> None:
    command = commands.add_parser(
        "play",
        help="play against an agent in the terminal, moves typed or piped one per line; a summary with AIVAT",
    )
    add_input(command, "agent", metavar="AGENT", help="a named agent (cfr-agents opponents --game G) or a file")
    command.add_argument("--game", help="the game (a file names its own)")
    command.add_argument(
        "--seat",
        choices=SEATS,
        default="alternate",
        help="your seat: 0, 1, or alternate (seat 0, then 1, in turn; the default)",
    )
    command.add_argument(
        "--hands",
        type=session_hands,
        help=f"end the session after N hands, at most {magnitude(MAX_HANDS)} (default: until q or the end of input)",
    )
    command.add_argument("--seed", type=non_negative_int, default=0, help="seed of the deals and the agent (default 0)")
    command.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from adapters.inputs import InputError
    from eval.play import PlaySpec, Session, Terminal, game_of, render_header, render_summary

    spec = PlaySpec(
        game_id=args.game or game_of(args.agent),
        agent=args.agent,
        seat=None if args.seat == "alternate" else int(args.seat),
        hands=args.hands,
        seed=args.seed,
    )
    terminal = Terminal(sys.stdin, sys.stdout)
    session = Session.start(spec, terminal.choose)
    terminal.show(render_header(spec))
    try:
        session.play(terminal.show)
    except (InputError, KeyboardInterrupt) as error:
        interrupted = isinstance(error, KeyboardInterrupt)
        session.ended = "interrupted" if interrupted else "stopped by an error"
        terminal.show(("\n" if interrupted else "") + render_summary(session, session.score()))
        raise
    terminal.show(render_summary(session, session.score()))
    return 0
