"""``cfr-agents serve [--port P] [--host H] [--dir DIR ...] [--out DIR]``: the browser side on a local server --
play any agent, explore the policy and model files of the ``--dir`` directories (:mod:`cfr_agents.cli.web.app`).

Starlette and uvicorn are the optional ``[web]`` extra; without them the command is refused in one line. The server
listens on 127.0.0.1 unless ``--host`` says otherwise; files open only from the ``--dir`` directories, and uploads
are written only into ``--out``."""

from __future__ import annotations

import argparse
import socket
from typing import Any

from adapters.inputs import InputError, require_extra
from cfr_agents.cli.common import non_negative_int

DEFAULT_PORT = 8765


def port(text: str) -> int:
    """``--port``: 0 (any free port) to 65535."""
    value = non_negative_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port is at most 65535, got {value}")
    return value


def register(commands: Any) -> None:
    command = commands.add_parser(
        "serve", help="a local web server: play any agent in the browser, explore policy files (needs [web])"
    )
    command.add_argument("--port", type=port, default=DEFAULT_PORT, help=f"the port (default {DEFAULT_PORT})")
    command.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine)"
    )
    command.add_argument(
        "--dir",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory whose policy and model files the explorer and the play form may open (repeatable)",
    )
    command.add_argument("--out", metavar="DIR", help="the directory uploads are written to (none without it)")
    command.set_defaults(run=run)


def listening(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening; an address that cannot be had is an :class:`InputError`."""
    try:
        family, kind, protocol, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        bound = socket.socket(family, kind, protocol)
    except (OSError, UnicodeError) as error:
        raise InputError(f"cannot listen on {host!r}: {getattr(error, 'strerror', None) or error}") from None
    try:
        bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        bound.bind(address)
        bound.listen(64)
    except OSError as error:
        bound.close()
        raise InputError(f"cannot listen on {host}:{port}: {error.strerror or error}") from None
    return bound


def run(args: argparse.Namespace) -> int:
    require_extra("starlette", "web", "cfr-agents serve")
    uvicorn = require_extra("uvicorn", "web", "cfr-agents serve")
    from cfr_agents.cli.web.app import Config, make_app

    app = make_app(Config.of(args.dir, args.out))
    bound = listening(args.host, args.port)
    host, port = bound.getsockname()[:2]
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"cfr-agents: serving on {args.host}: anyone who reaches this address can use the server")
    print(f"cfr-agents: http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[bound])
    finally:
        bound.close()
    return 0
