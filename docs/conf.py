"""Sphinx configuration: the Markdown pages in this folder (MyST) and the API reference (autodoc)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # autodoc imports adapters, cfr_agents and eval from this checkout

project = "cfr-agents"
author = "cfr-agents contributors"
copyright = "cfr-agents contributors"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.mathjax", "sphinx-mathjax-offline"]
"""``sphinx-mathjax-offline`` copies MathJax 3 into ``_static/mathjax`` and points ``mathjax_path`` there: the
formulas render from the site's own files, with no network (a page opened from disk, a machine offline)."""

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]

myst_heading_anchors = 3  # links such as verification.md#reproducibility resolve to the heading

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_inherit_docstrings = False  # an override of OpenSpiel's Policy does not show OpenSpiel's docstring
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}

html_theme = "furo"  # wide tables and code blocks scroll inside the page instead of running off it
html_title = "cfr-agents"


def link_files_outside_the_site(app: Sphinx, doctree: nodes.document) -> None:
    """Make a Markdown link to a file outside ``docs/`` (``../benchmarks/results/results.md``) a download.

    The pages link generated files by relative path, as GitHub shows them; MyST would take a ``.md``
    target for a page of the site.
    """
    page = Path(doctree["source"])
    for node in list(doctree.findall(addnodes.pending_xref)):
        target = Path(str(node.get("reftarget", "")))
        if node.get("refdomain") != "doc" or not target.is_absolute():
            continue
        file = next((f for f in (Path(f"{target}{suffix}") for suffix in (".md", ".rst")) if f.is_file()), None)
        if file is None:
            continue
        download = addnodes.download_reference(
            refdomain=None,
            reftarget=os.path.relpath(file, page.parent),
            refdoc=node["refdoc"],
            reftype="myst",
            refexplicit=node.get("refexplicit", False),
        )
        download += node.children
        for child in download.children:
            if isinstance(child, nodes.Element):
                child["classes"] = ["xref", "download", "myst"]
        node.replace_self(download)


def setup(app: Sphinx) -> None:
    app.connect("doctree-read", link_files_outside_the_site, priority=400)  # before downloads are collected
