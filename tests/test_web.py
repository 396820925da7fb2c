"""``cfr-agents serve``'s app (:mod:`cfr_agents.cli.web.app`) through Starlette's test client: a hand played to the
end, the explorer's nodes, and every refusal of the security rules -- path traversal, symlinks out of a directory,
huge and malformed uploads, writes outside ``--out`` -- each a 4xx with one line, the server serving on after it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the [web] extra is not installed")
pytest.importorskip("httpx", reason="Starlette's test client needs httpx")

from starlette.testclient import TestClient

from cfr_agents.cli.web.app import MAX_BODY, MAX_UPLOAD, Config, make_app
from cfr_agents.policy import load_policy
from tests.support import run_cli

KUHN = "openspiel:kuhn_poker"


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, policy_files: dict[str, Path]
) -> Iterator[tuple[TestClient, Path]]:
    """A client of an app serving ``policies/`` (the Kuhn policy, a link to it, a link out, a sub-directory) with
    ``uploads/`` as its output directory; the outside directory beside them holds a policy it must not open."""
    root = tmp_path_factory.mktemp("served")
    policies, outside, uploads = root / "policies", root / "outside", root / "uploads"
    for directory in (policies, outside, policies / "deeper"):
        directory.mkdir()
    (policies / "kuhn.json").write_bytes(policy_files[KUHN].read_bytes())
    (outside / "secret.json").write_bytes(policy_files[KUHN].read_bytes())
    os.symlink(policies / "kuhn.json", policies / "inside-link.json")
    os.symlink(outside / "secret.json", policies / "out-link.json")
    os.symlink(outside, policies / "deeper" / "away")
    with TestClient(make_app(Config.of([str(policies)], str(uploads))), raise_server_exceptions=False) as client:
        yield client, root


def refused(response: object, status: int) -> str:
    assert getattr(response, "status_code", None) == status, getattr(response, "text", response)
    error = response.json()["error"]  # type: ignore[attr-defined]
    assert isinstance(error, str) and "\n" not in error and "Traceback" not in error
    return error


def still_serving(client: TestClient) -> None:
    assert client.get("/").status_code == 200 and client.get("/api/files").status_code == 200


def test_the_page_links_nothing_outside_the_server(served: tuple[TestClient, Path]) -> None:
    client, _ = served
    page = client.get("/").text
    assert 'href="static/app.css"' in page and 'src="static/app.js"' in page and "//" not in page.split("<body>")[0]
    assert client.get("/static/app.js").headers["content-type"].startswith("text/javascript")
    assert client.get("/static/..%2F__init__.py").status_code == 404
    refused(client.get("/static/page.py"), 404)


def test_only_files_inside_the_directories_are_listed(served: tuple[TestClient, Path]) -> None:
    client, _ = served
    files = client.get("/api/files").json()["files"]
    assert files == ["policies/inside-link.json", "policies/kuhn.json"]


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("policies/../outside/secret.json", 403),
        ("policies/deeper/../../outside/secret.json", 403),
        ("policies//etc/passwd", 403),
        ("/etc/passwd", 404),
        ("outside/secret.json", 404),
        ("policies/out-link.json", 403),
        ("policies/deeper/away/secret.json", 403),
        ("policies/deeper", 400),
        ("policies/missing.json", 404),
        ("policies/kuhn.json\0", 400),
    ],
)
def test_paths_out_of_the_directories_are_refused(served: tuple[TestClient, Path], name: str, status: int) -> None:
    client, _ = served
    refused(client.post("/api/explore/open", json={"files": [name]}), status)
    refused(client.post("/api/play/new", json={"game": KUHN, "agent": name}), status)
    still_serving(client)


def test_bad_requests_get_a_4xx_and_the_server_goes_on(served: tuple[TestClient, Path]) -> None:
    client, _ = served
    refused(client.post("/api/explore/open", content=b"{not json"), 400)
    refused(client.post("/api/explore/open", json=["policies/kuhn.json"]), 400)
    refused(client.post("/api/explore/open", json={"files": "policies/kuhn.json"}), 400)
    refused(client.post("/api/explore/open", json={"files": ["policies/kuhn.json"], "against": "other"}), 400)
    refused(client.post("/api/explore/open", content=b"[" * (MAX_BODY + 1)), 413)
    refused(client.post("/api/play/new", json={"game": KUHN, "agent": "no-such-agent"}), 400)
    refused(client.post("/api/play/new", json={"game": "nonsense:game", "agent": "random"}), 400)
    refused(client.post("/api/play/new", json={"game": KUHN, "agent": "random", "seat": "2"}), 400)
    refused(client.post("/api/play/new", json={"game": KUHN, "agent": "random", "seed": -1}), 400)
    refused(client.post("/api/play/no-such-session/move", json={"action": 0}), 404)
    refused(client.get("/api/explore/no-such-explorer/node?path="), 404)
    still_serving(client)


def test_uploads_are_bounded_checked_and_written_only_into_out(served: tuple[TestClient, Path]) -> None:
    client, root = served
    before = sorted(p for p in root.rglob("*") if p.parent != root / "uploads")
    refused(client.post("/api/upload?name=huge.json", content=b" " * (MAX_UPLOAD + 1)), 413)
    refused(client.post("/api/upload?name=bad.json", content=b'{"policy": 1}'), 400)
    refused(client.post("/api/upload?name=../escape.json", content=b"{}"), 400)
    refused(client.post("/api/upload?name=.hidden.json", content=b"{}"), 400)
    assert not list((root / "uploads").iterdir())
    policy = (root / "policies" / "kuhn.json").read_bytes()
    assert client.post("/api/upload?name=mine.json", content=policy).json() == {"file": "uploads/mine.json"}
    refused(client.post("/api/upload?name=mine.json", content=policy), 409)
    assert load_policy(root / "uploads" / "mine.json").game_id == KUHN
    assert sorted(p for p in root.rglob("*") if p.parent != root / "uploads") == before
    assert "uploads/mine.json" in client.get("/api/files").json()["files"]


def test_no_upload_without_an_output_directory(served: tuple[TestClient, Path]) -> None:
    _, root = served
    with TestClient(make_app(Config.of([str(root / "policies")], None))) as client:
        refused(client.post("/api/upload?name=mine.json", content=b"{}"), 403)


def test_a_hand_played_to_the_end(served: tuple[TestClient, Path]) -> None:
    client, _ = served
    started = client.post("/api/play/new", json={"game": "", "agent": "policies/kuhn.json", "seat": "0", "seed": 3})
    assert started.status_code == 200, started.text
    session, step = started.json()["session"], started.json()["step"]
    assert "your cards" in step["view"]["text"]
    refused(client.post(f"/api/play/{session}/move", json={"action": 7}), 400)
    while not step["outcomes"]:
        step = client.post(f"/api/play/{session}/move", json={"action": step["view"]["legal"][0][0]}).json()
    assert step["outcomes"][0].startswith("Hand 1 is over.") and "Hand 2" in step["view"]["text"]
    ended = client.post(f"/api/play/{session}/quit").json()
    assert ended["ended"] == "you quit" and ended["summary"].startswith("Session over (you quit): 1 hand against")
    refused(client.post(f"/api/play/{session}/move", json={"action": 0}), 400)


def test_the_explorer_walks_the_tree(served: tuple[TestClient, Path], policy_files: dict[str, Path]) -> None:
    client, _ = served
    opened = client.post("/api/explore/open", json={"files": ["policies/kuhn.json"]}).json()
    assert opened["summary"]["policies"][0]["name"] == "policies/kuhn.json"
    view = client.get(f"/api/explore/{opened['id']}/node", params={"path": "0"}).json()
    assert view["line"] == [{"player": 0, "text": "Pass"}] and view["player"] == 1
    table = json.loads(policy_files[KUHN].read_text())["policy"]
    for key, shown in zip(view["keys"], view["policies"][0]["strategy"], strict=True):
        assert shown == pytest.approx([table[key]["0"], table[key]["1"]])
    refused(client.get(f"/api/explore/{opened['id']}/node", params={"path": "0.0.0"}), 404)


def test_serve_without_the_web_extra_is_refused_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    result = run_cli(["serve", "--port", "0"])
    assert result.status == 2 and result.err.strip() == (
        "cfr-agents: error: cfr-agents serve needs uvicorn, which is not installed: pip install 'cfr-agents[web]'"
    )


@pytest.mark.parametrize(
    ("option", "name", "message"),
    [
        ("--dir", "missing", "is not a directory"),
        ("--dir", "n" * 300, "cannot use"),
        ("--out", "n" * 300, "cannot use"),
    ],
)
def test_serve_refuses_a_directory_it_cannot_use(tmp_path: Path, option: str, name: str, message: str) -> None:
    result = run_cli(["serve", option, str(tmp_path / name), "--port", "0"])
    assert result.status == 2 and message in result.err and len(result.err.splitlines()) == 1, result
