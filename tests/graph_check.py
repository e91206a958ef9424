"""Helpers for reading drawn graphs in the tests (test_graph.py, test_graph_backward.py)."""

from __future__ import annotations

import shutil
import subprocess

from s2s_ad import graph


def labels(dot, node_id):
    return dot.nodes[node_id]["label"].split("\\n")


def kinds(dot):
    """node id -> which STYLE entry drew it, recovered from how it looks."""
    by_fill = {}
    for kind, style in graph.STYLE.items():
        key = (style["fillcolor"], style["shape"], style.get("style"), style.get("peripheries"))
        assert key not in by_fill, "two kinds of node look alike"
        by_fill[key] = kind
    return {n: by_fill[(a["fillcolor"], a["shape"], a.get("style"), a.get("peripheries"))]
            for n, a in dot.nodes.items()}


def check_with_graphviz(text):
    """Graphviz parses and lays out the text (only where it is installed)."""
    exe = shutil.which("dot")
    if exe is not None:
        done = subprocess.run([exe, "-Tsvg"], input=text.encode(), capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        assert b"<svg" in done.stdout
