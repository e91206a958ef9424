"""Helpers for reading drawn graphs in the tests (test_graph.py, test_graph_backward.py)."""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=None)
def working_dot() -> str | None:
    """The Graphviz `dot` program, if it is installed and renders a trivial
    graph (a broken install, missing its plugins, would fail every test)."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "-Tsvg"], input=b"digraph { a -> b }", capture_output=True,
                              timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return exe if done.returncode == 0 and b"<svg" in done.stdout else None


def check_with_graphviz(text):
    """Graphviz parses and lays out the text (only where it works)."""
    exe = working_dot()
    if exe is not None:
        done = subprocess.run([exe, "-Tsvg"], input=text.encode(), capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        assert b"<svg" in done.stdout
