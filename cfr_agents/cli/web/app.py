"""The ASGI app of ``cfr-agents serve`` (Starlette): the page, a human's seat at the table (:mod:`eval.play_steps`)
and the strategy explorer (:mod:`eval.explore`) of the files in the directories it was given.

Security: a file is named by its directory's label and its path inside it (``policies/leduc.json``); it opens only
if, with every symlink resolved, it is a regular file inside that directory -- ``..``, absolute paths and links that
point out are refused. Uploads go to the output directory only (none is taken without one), each at most
:data:`MAX_UPLOAD` bytes with a plain file name; request bodies are bounded (:data:`MAX_BODY`). A bad request gets a
4xx answer with one line saying why (``{"error": ...}``); an unexpected fault in one request is a 500 with one line,
and the server goes on serving."""

from __future__ import annotations

import json
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from adapters.inputs import InputError, ParameterError
from cfr_agents.cli.web.page import STATIC, server_page, static_text
from cfr_agents.files import write_atomic
from eval.explore import BEST_RESPONSE, Explorer
from eval.explore_holdem import HoldemExplorer, open_views
from eval.match import Agents
from eval.opponents import is_file_name
from eval.play import PlaySpec, game_of
from eval.play_steps import Step, SteppedSession

MAX_BODY = 64 * 1024
"""The most bytes of a request body that is not an upload."""
MAX_UPLOAD = 32 * 1024 * 1024
"""The most bytes of one uploaded file."""
MAX_FILES = 2000
"""The most files listed from the directories."""
MAX_SESSIONS = 16
"""Sessions (of play, of the explorer) kept at once; the oldest is dropped past it."""
UPLOADS = "uploads"
"""The label of the output directory, where uploads go."""
GAMES = (
    "openspiel:kuhn_poker",
    "openspiel:leduc_poker",
    "rlcard:kuhn-poker",
    "rlcard:leduc-holdem",
    "holdem-6",
    "holdem-8",
    "holdem-12",
    "fhp",
    "hulh",
    "rlcard:limit-holdem",
)
"""Games the play form suggests (any game ``play`` takes may be typed)."""
AGENTS = ("random", "rlcard-rule-v1", "rlcard-pretrained-cfr", "rlcard-nfsp", "openspiel-cfr:100", "openspiel-cfr+:100")
"""Named agents the play form suggests."""
_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.json")

T = TypeVar("T")


class Refused(InputError):
    """A request refused with an HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Config:
    """What the server serves: the directories files open from (label -> resolved path) and the output
    directory."""

    dirs: dict[str, Path]
    out: Path | None = None

    @classmethod
    def of(cls, dirs: Sequence[str], out: str | None) -> Config:
        """Each directory under its base name (``-2``, ``-3`` added to repeats); a directory that does not exist, or
        an output directory that cannot be made, is refused in one line."""
        try:
            return cls._of(dirs, out)
        except OSError as error:
            raise InputError(f"cannot use {error.filename!r}: {error.strerror or error}") from None

    @classmethod
    def _of(cls, dirs: Sequence[str], out: str | None) -> Config:
        labels: dict[str, Path] = {}
        for given in dirs:
            path = Path(given)
            if not path.is_dir():
                raise InputError(f"--dir {given!r} is not a directory")
            label = re.sub(r"[^A-Za-z0-9._-]", "_", path.resolve().name) or "root"
            base, count = label, 1
            while label in labels or label == UPLOADS:
                count += 1
                label = f"{base}-{count}"
            labels[label] = path.resolve()
        output = None
        if out is not None:
            output = Path(out)
            if output.exists() and not output.is_dir():
                raise InputError(f"--out {out!r} is not a directory")
            output.mkdir(parents=True, exist_ok=True)
            output = output.resolve()
            labels[UPLOADS] = output
        return cls(labels, output)

    def resolve(self, name: str) -> Path:
        """The file ``name`` (``label/path``) names, refused unless it is a regular file inside its directory."""
        if not isinstance(name, str) or not name or "\0" in name or len(name) > 1000:
            raise Refused("name a file as it is listed (directory/file)")
        label, _, inner = name.partition("/")
        root = self.dirs.get(label)
        if root is None or not inner:
            raise Refused(f"{name[:100]!r} is in none of the served directories", 404)
        if Path(inner).is_absolute() or ".." in Path(inner).parts:
            raise Refused(f"{name[:100]!r} leaves its directory", 403)
        try:
            found = (root / inner).resolve(strict=True)
        except (OSError, RuntimeError):
            raise Refused(f"no file {name[:100]!r}", 404) from None
        if not found.is_relative_to(root):
            raise Refused(f"{name[:100]!r} points out of its directory", 403)
        if not found.is_file():
            raise Refused(f"{name[:100]!r} is not a regular file", 400)
        return found

    def files(self) -> list[str]:
        """The JSON files of the directories (policy, model and strategy files), as names :meth:`resolve` takes."""
        listed: list[str] = []
        for label, root in self.dirs.items():
            for folder, subfolders, names in os.walk(root):
                subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
                for file in sorted(names):
                    if not file.endswith(".json") or file.startswith("."):
                        continue
                    name = f"{label}/{(Path(folder) / file).relative_to(root).as_posix()}"
                    try:
                        self.resolve(name)
                    except Refused:
                        continue
                    listed.append(name)
                    if len(listed) >= MAX_FILES:
                        return listed
        return listed


@dataclass
class State:
    """The server's sessions and the agents they share, one request at a time."""

    config: Config
    agents: Agents = field(default_factory=Agents)
    lock: threading.Lock = field(default_factory=threading.Lock)
    plays: OrderedDict[str, SteppedSession] = field(default_factory=OrderedDict)
    explorers: OrderedDict[str, Explorer | HoldemExplorer] = field(default_factory=OrderedDict)
    counter: int = 0

    def keep(self, kept: OrderedDict[str, T], item: T) -> str:
        self.counter += 1
        key = f"{self.counter}-{os.urandom(6).hex()}"
        kept[key] = item
        while len(kept) > MAX_SESSIONS:
            kept.popitem(last=False)
        return key

    def agent(self, name: str) -> str:
        """An agent of the play form: a listed file (as its path) or a named agent."""
        return str(self.config.resolve(name)) if is_file_name(name) else name


def step_json(step: Step) -> dict[str, Any]:
    view = step.view
    return {
        "view": None if view is None else {"text": step.text, "legal": [list(move) for move in view.legal]},
        "outcomes": list(step.outcomes),
        "ended": step.ended,
        "summary": step.summary,
    }


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise Refused(f"the request is larger than {limit:,} bytes", 413)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise Refused(f"the request is larger than {limit:,} bytes", 413)
    return bytes(body)


async def _json(request: Request) -> dict[str, Any]:
    try:
        data = json.loads(await _body(request, MAX_BODY))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise Refused("the request body is not JSON") from None
    if not isinstance(data, dict):
        raise Refused("the request body is not a JSON object")
    return data


def _field(data: dict[str, Any], name: str, kind: type[T], default: T | None = None) -> T:
    value = data.get(name, default)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise Refused(f"{name!r} must be a {kind.__name__}")
    return value


Handler = Callable[[Request, State], Awaitable[Any]]


def _endpoint(handler: Handler, state: State) -> Callable[[Request], Awaitable[Response]]:
    """``handler``'s answer as JSON; a refusal as its status and one line; any other fault as a 500 and one line."""

    async def endpoint(request: Request) -> Response:
        try:
            return JSONResponse(await handler(request, state))
        except Refused as refused:
            return JSONResponse({"error": str(refused)}, status_code=refused.status)
        except InputError as error:
            return JSONResponse({"error": str(error)}, status_code=400)
        except Exception as error:  # one request fails; the server goes on
            return JSONResponse({"error": f"internal error: {type(error).__name__}: {error}"[:500]}, status_code=500)

    return endpoint


async def _in_thread(state: State, work: Callable[[], T]) -> T:
    """``work`` in a worker thread, one at a time (the agents are shared)."""
    from starlette.concurrency import run_in_threadpool

    def locked() -> T:
        with state.lock:
            return work()

    return await run_in_threadpool(locked)


async def files(request: Request, state: State) -> dict[str, Any]:
    return {"files": state.config.files(), "games": list(GAMES), "agents": list(AGENTS)}


async def play_new(request: Request, state: State) -> dict[str, Any]:
    data = await _json(request)
    agent = state.agent(_field(data, "agent", str))
    game = _field(data, "game", str, "")
    seat = _field(data, "seat", str, "alternate")
    if seat not in ("0", "1", "alternate"):
        raise Refused(f"seat {seat[:20]!r}: choose 0, 1 or alternate")
    seed = _field(data, "seed", int, 0)
    if not 0 <= seed < 2**63:
        raise Refused("the seed is a non-negative integer")

    def start() -> tuple[SteppedSession, Step]:
        spec = PlaySpec(game or game_of(agent), agent, None if seat == "alternate" else int(seat), None, seed)
        session = SteppedSession(spec, state.agents)
        return session, session.first()

    session, step = await _in_thread(state, start)
    return {"session": state.keep(state.plays, session), "step": step_json(step)}


def _play(request: Request, state: State) -> SteppedSession:
    session = state.plays.get(request.path_params["session"])
    if session is None:
        raise Refused("no such session (it ended, or the server dropped it): deal again", 404)
    return session


async def play_move(request: Request, state: State) -> dict[str, Any]:
    session = _play(request, state)
    action = _field(await _json(request), "action", int)
    return step_json(await _in_thread(state, lambda: session.move(action)))


async def play_quit(request: Request, state: State) -> dict[str, Any]:
    session = _play(request, state)
    await _body(request, MAX_BODY)
    return step_json(await _in_thread(state, session.quit))


async def explore_open(request: Request, state: State) -> dict[str, Any]:
    data = await _json(request)
    names = _field(data, "files", list)
    if not 1 <= len(names) <= 2 or not all(isinstance(name, str) for name in names):
        raise Refused("'files' lists one or two files")
    paths = [str(state.config.resolve(name)) for name in names]
    against = _field(data, "against", str, BEST_RESPONSE)

    def opened() -> Explorer | HoldemExplorer:
        return open_views(paths, game_of(paths[0]), against, state.agents, labels=names)

    explorer = await _in_thread(state, opened)
    summary = await _in_thread(state, explorer.summary)
    return {"id": state.keep(state.explorers, explorer), "summary": summary}


async def explore_node(request: Request, state: State) -> dict[str, Any]:
    explorer = state.explorers.get(request.path_params["explorer"])
    if explorer is None:
        raise Refused("no such explorer (the server dropped it): open the file again", 404)
    path = request.query_params.get("path", "")
    try:
        return await _in_thread(state, lambda: explorer.view(path))
    except ParameterError as error:
        raise Refused(str(error), 404) from None


async def upload(request: Request, state: State) -> dict[str, Any]:
    """A policy file into the output directory, named by ``?name=``; refused when it does not load."""
    out = state.config.out
    if out is None:
        raise Refused("this server takes no upload: start it with --out DIR", 403)
    name = request.query_params.get("name", "")
    if not _SAFE_NAME.fullmatch(name):
        raise Refused("name the upload with letters, digits, '.', '_' or '-', ending in .json")
    content = await _body(request, MAX_UPLOAD)
    target = out / name
    if target.exists():
        raise Refused(f"{UPLOADS}/{name} exists already", 409)

    def check() -> None:
        from cfr_agents.policy import load_policy

        write_atomic(target, content.decode("utf-8", "replace"))
        try:
            load_policy(target)
        except InputError:
            target.unlink()
            raise

    await _in_thread(state, check)
    return {"file": f"{UPLOADS}/{name}"}


async def page(request: Request) -> Response:
    return HTMLResponse(server_page())


async def static(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in STATIC or name == "index.html":
        return JSONResponse({"error": "no such file"}, status_code=404)
    kind = "text/css" if name.endswith(".css") else "text/javascript"
    return Response(static_text(name), media_type=kind)


def make_app(config: Config) -> Starlette:
    """The app serving ``config``."""
    state = State(config)
    routes = [
        Route("/", page),
        Route("/static/{name}", static),
        Route("/api/files", _endpoint(files, state)),
        Route("/api/play/new", _endpoint(play_new, state), methods=["POST"]),
        Route("/api/play/{session}/move", _endpoint(play_move, state), methods=["POST"]),
        Route("/api/play/{session}/quit", _endpoint(play_quit, state), methods=["POST"]),
        Route("/api/explore/open", _endpoint(explore_open, state), methods=["POST"]),
        Route("/api/explore/{explorer}/node", _endpoint(explore_node, state)),
        Route("/api/upload", _endpoint(upload, state), methods=["POST"]),
    ]
    return Starlette(routes=routes)


__all__ = ["MAX_BODY", "MAX_UPLOAD", "Config", "Refused", "make_app"]
