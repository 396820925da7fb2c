"""The one page of the browser side: ``static/index.html`` with its stylesheet and script, linked for the server
(:func:`server_page`) or inlined with the explorer's data for a report that opens offline (:func:`report_page`).
No file is fetched from the network: the page has no CDN link, and the report no link at all."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

STATIC = ("index.html", "app.css", "app.js")
"""The files of the front-end, package data of :mod:`cfr_agents.cli.web`."""


def static_text(name: str) -> str:
    """One of :data:`STATIC`, as text."""
    if name not in STATIC:
        raise KeyError(name)
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def _page(style: str, data: str, script: str) -> str:
    return (
        static_text("index.html")
        .replace("<!--style-->", style)
        .replace("<!--data-->", data)
        .replace("<!--script-->", script)
    )


def server_page() -> str:
    """The page the server sends: its stylesheet and script fetched from the server's ``static/``."""
    return _page('<link rel="stylesheet" href="static/app.css">', "", '<script src="static/app.js"></script>')


def embedded_json(data: Any) -> str:
    """``data`` as JSON that a ``<script>`` element holds safely: every ``<``, ``>`` and ``&`` escaped (they occur
    only inside strings), so no text of the data closes the element."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def report_page(data: Any) -> str:
    """One self-contained page: the explorer's ``data`` (``{"summary": ..., "views": {path: view}}``), the
    stylesheet and the script inlined."""
    return _page(
        f"<style>\n{static_text('app.css')}</style>",
        f'<script id="report-data" type="application/json">{embedded_json(data)}</script>',
        f"<script>\n{static_text('app.js')}</script>",
    )


__all__ = ["STATIC", "embedded_json", "report_page", "server_page", "static_text"]
