"""Pictures of the computation: the forward SSA graph, and DOT text for any graph.

Contract: :func:`forward` takes an :class:`~s2s_ad.ir.Function` and returns
a :class:`Graph` that :func:`to_dot` writes as Graphviz DOT, and
:func:`render` turns into SVG or PNG with the ``dot`` program. The same input
always gives the same text. :mod:`s2s_ad.graph_backward` draws the reverse
sweep below the forward graph, with the :class:`Builder` and
:func:`draw_forward` this module provides.

Naming follows ggml's graph dumps: parameters and constants are *leaves*
(``leaf_0``, ``leaf_1``, …), computations are *nodes* (``node_0``, …), both
numbered in the order the program runs them: the forward ops first, then the
reverse sweep. Each node is labelled with its primitive and source line; each
edge carries a value and is labelled with its SSA name.

A loop or branch is a cluster: a head node takes what it reads and hands its
body the index and carried values, dashed edges take the next values back,
and a branch's sides meet in a ``φ`` node.

Before → after, for ``b = x * x; y = a * b``::

    func f(a, x):          leaf_0 (a) ──a──▶ node_1 (mul, line 10) ──y──▶ return
      b = mul x x          leaf_1 (x) ══x══▶ node_0 (mul, line 9) ──b──▶ node_1
      y = mul a b
      return y
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from dataclasses import dataclass, field

from s2s_ad import ir
from s2s_ad.emit import loader
from s2s_ad.errors import S2SError

# Forward things are blue, backward things red, as in most AD textbooks' figures.
STYLE = {
    "param": dict(shape="ellipse", style="filled", fillcolor="#dbe9f6", color="#3c78b4"),
    "const": dict(shape="ellipse", style="filled", fillcolor="#eeeeee", color="#888888"),
    "op": dict(shape="box", style="rounded,filled", fillcolor="#ffffff", color="#3c78b4"),
    "return": dict(shape="box", style="filled", fillcolor="#dbe9f6", color="#3c78b4",
                   peripheries="2"),
    "seed": dict(shape="ellipse", style="filled", fillcolor="#fbe3e1", color="#b43c3c"),
    "bwd": dict(shape="box", style="filled", fillcolor="#fbe3e1", color="#b43c3c"),
    "shared": dict(shape="box", style="dashed,filled", fillcolor="#fdf3f2", color="#b43c3c"),
    "sum": dict(shape="circle", style="filled", fillcolor="#f4b6b0", color="#b43c3c"),
    "control": dict(shape="hexagon", style="filled", fillcolor="#eef3e2", color="#5a7a2a"),
    "tape": dict(shape="cylinder", style="filled", fillcolor="#f6ead2", color="#a0672a"),
    "recompute": dict(shape="box", style="dashed,rounded,filled", fillcolor="#ffffff",
                      color="#3c78b4"),
    "grad": dict(shape="box", style="filled", fillcolor="#fbe3e1", color="#b43c3c",
                 peripheries="2"),
}
EDGE_STYLE = {
    "value": dict(color="#3c78b4", fontcolor="#3c78b4"),
    "adjoint": dict(color="#b43c3c", fontcolor="#b43c3c", penwidth="1.5"),
    "read": dict(color="#999999", fontcolor="#777777", style="dashed"),
    "carry": dict(color="#5a7a2a", fontcolor="#5a7a2a", style="dashed", constraint="false"),
    "control": dict(color="#5a7a2a", fontcolor="#5a7a2a", style="dotted"),
    "push": dict(color="#a0672a", fontcolor="#a0672a", penwidth="1.5"),
    "pop": dict(color="#a0672a", fontcolor="#a0672a", style="dashed"),
    "order": dict(style="invis"),
}


class GraphvizMissing(S2SError):
    """The ``dot`` program is needed to render SVG or PNG and is not installed."""


@dataclass(eq=False)
class Node:
    id: str
    """``leaf_N``, ``node_N`` or, for the ends, ``return`` / ``grad_NAME``."""
    kind: str
    """A key of :data:`STYLE`."""
    label: list[str]
    """The label's lines."""
    op: ir.Op | None = None


@dataclass(eq=False)
class Edge:
    src: str
    dst: str
    label: str
    kind: str = "value"
    """A key of :data:`EDGE_STYLE`."""


@dataclass(eq=False)
class Cluster:
    """A box around nodes: the forward pass, the reverse sweep, each loop or
    branch and the regions inside it."""

    name: str
    label: str
    nodes: list[str] = field(default_factory=list)
    clusters: list["Cluster"] = field(default_factory=list)


@dataclass(eq=False)
class Graph:
    name: str
    label: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    clusters: list[Cluster] = field(default_factory=list)
    """Nodes not in any cluster sit at the top level."""

    def node(self, node_id: str) -> Node:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def of_kind(self, *kinds: str) -> list[Node]:
        return [n for n in self.nodes if n.kind in kinds]


class Builder:
    """Numbers leaves and nodes as they are added and remembers which graph
    node produces each IR value (and, backward, each adjoint)."""

    def __init__(self, graph: Graph):
        self.g = graph
        self.leaves = 0
        self.ops = 0
        self.clusters = 0
        self.producer: dict[int, str] = {}
        self.consts: dict[str, str] = {}

    def add(self, kind: str, label: list[str], cluster: Cluster | None, op: ir.Op | None = None,
            node_id: str | None = None) -> str:
        if node_id is None:
            if kind in ("param", "const", "seed"):
                node_id, self.leaves = f"leaf_{self.leaves}", self.leaves + 1
            else:
                node_id, self.ops = f"node_{self.ops}", self.ops + 1
        # Leaves and nodes show their id, so a reader can say "node_4"; the
        # ends (return, gradients) have self-explaining names.
        ids = [node_id] if kind not in ("return", "grad") else []
        self.g.nodes.append(Node(node_id, kind, ids + label, op))
        if cluster is not None:
            cluster.nodes.append(node_id)
        return node_id

    def edge(self, src: str, dst: str, label: str, kind: str = "value") -> None:
        self.g.edges.append(Edge(src, dst, label, kind))


def where(func: ir.Function) -> str:
    return f"{func.name} ({os.path.basename(func.loc.file)}:{func.loc.line})"


def draw_forward(b: Builder, func: ir.Function, cluster: Cluster | None) -> None:
    for p in func.params:
        if p.items is None:
            b.producer[id(p.value)] = b.add("param", [p.value.name], cluster)
            continue
        # a list or tuple parameter: one leaf per item, as the code unpacks it
        for i, v in enumerate(p.items):
            b.producer[id(v)] = b.add("param", [f"{p.value.name}[{i}]"], cluster)
    for node in ir.walk(func.body):
        for a in _inputs(node) + (_yields(node) if not isinstance(node, ir.Op) else []):
            if isinstance(a, ir.Const) and repr(a) not in b.consts:
                b.consts[repr(a)] = b.add("const", [repr(a)], cluster)
    _region(b, func.body, cluster)
    outputs = func.outputs if func.result is None and func.outputs is not None \
        else (func.result,)
    text = ", ".join(repr(o) for o in outputs)
    ret = b.add("return", [f"return {text}" if len(outputs) == 1 else f"return ({text})"],
                cluster, node_id="return")
    for k, out in enumerate(outputs):
        label = out.name if isinstance(out, ir.Value) else repr(out)
        label = label if len(outputs) == 1 else f"[{k}] {label}"
        if isinstance(out, ir.Value):
            b.edge(b.producer[id(out)], ret, label)
        else:
            b.edge(b.consts.get(repr(out)) or b.add("const", [repr(out)], cluster), ret, label)


def _inputs(node) -> list[ir.Operand]:
    """What ``node`` reads from its region; an item's index is part of the op."""
    if isinstance(node, ir.Op):
        return list(node.args[:1] if node.prim == "item" else node.args)
    return ir.operands(node)


def _yields(node) -> list[ir.Operand]:
    return [y for r in node.regions for y in r.yields]


def _feed(b: Builder, a: ir.Operand, dst: str, label: str | None = None,
          kind: str = "value") -> None:
    if isinstance(a, ir.Value) and id(a) not in b.producer and a.kind in ("list", "tuple"):
        # a list parameter read whole (``for c in cs``, ``cs[i]``): a leaf of its own
        b.producer[id(a)] = b.add("param", [a.name], None)
    src = b.consts[repr(a)] if isinstance(a, ir.Const) else b.producer[id(a)]
    b.edge(src, dst, label or (repr(a) if isinstance(a, ir.Const) else a.name), kind)


def _region(b: Builder, region: ir.Region, cluster: Cluster | None) -> None:
    for node in region.ops:
        if not isinstance(node, ir.Op):
            _structured(b, node, cluster)
            continue
        if node.callee is not None:
            prim = f"call {node.callee.name}"
        elif node.prim == "item":
            prim = f"item {node.args[1].value}"
        else:
            prim = node.prim
        op = b.add("op", [prim, f"{node.out.name} · line {node.loc.line}"], cluster, node)
        for a in _inputs(node):
            _feed(b, a, op)
        b.producer[id(node.out)] = op
        if node.callee is not None and node.callee.tape is not None:
            b.producer[id(node.callee.tape)] = op  # the tape its backward pass reads


def subcluster(b: Builder, parent: Cluster | None, label: str) -> Cluster:
    """A cluster inside ``parent`` (or at the top level)."""
    b.clusters += 1
    c = Cluster(f"cluster_{b.clusters}", label)
    (parent.clusters if parent is not None else b.g.clusters).append(c)
    return c


def _structured(b: Builder, node, cluster: Cluster | None) -> None:
    """A loop or branch: its body in a cluster of its own. The head node
    (``for``/``while``/``if``) takes what the op reads; a loop's head hands
    the index and carried values to its body and gets their next values back
    (dashed edges), and its results come out of it; a branch's results come
    out of a ``φ`` node joining what the two sides yield."""
    line = f"line {node.loc.line}"
    text = node.text.strip() if node.text else ""
    if isinstance(node, ir.If):
        box = subcluster(b, cluster, f"if · {line}")
        head = b.add("control", [f"if {node.cond!r}", line], box, None)
        _feed(b, node.cond, head)
        sides = [(node.then, "then"), (node.orelse, "else")]
        for region, name in sides:
            side = subcluster(b, box, name)
            b.edge(head, _first(b, region, side, head), name, "control")
        join = b.add("control", ["φ " + ", ".join(o.name for o in node.outs), line], box, None)
        for region, name in sides:
            for y, o in zip(region.yields, node.outs):
                _feed(b, y, join, f"{name}: {y!r}")
        for o in node.outs:
            b.producer[id(o)] = join
        return
    if isinstance(node, ir.For):
        what = (f"{node.seq!r}" if node.seq is not None
                else f"range({node.start!r}, {node.stop!r}, {node.step!r})")
        header = f"for {node.index.name} in {what}"
        regions = [(node.body, "body")]
    else:
        header = "while"
        regions = [(node.cond, "condition"), (node.body, "body")]
    box = subcluster(b, cluster, f"{text or header} · {line}")
    head = b.add("control", [header, line], box, None)
    for a in _inputs(node):
        carried = {id(i): c for i, c in zip(node.inits, node.carried)}
        name = a.name if isinstance(a, ir.Value) else repr(a)
        label = f"{name} → {carried[id(a)].name}" if id(a) in carried else None
        _feed(b, a, head, label)
    if isinstance(node, ir.For):
        b.producer[id(node.index)] = head
    for c in node.carried:
        b.producer[id(c)] = head
    for region, name in regions:
        inner = subcluster(b, box, name)
        _region(b, region, inner)
        nexts = list(node.carried) if region is node.body else []
        for k, y in enumerate(region.yields):
            if k < len(nexts):
                label = f"{y!r} → next {nexts[k].name}"
            elif region is node.body:
                label = f"{y!r}: exit"
            else:
                label = f"{y!r}: go on?"
            _feed(b, y, head, label, "carry")
    for o in node.outs:
        b.producer[id(o)] = head
    if node.trips is not None:
        b.producer[id(node.trips)] = head


def _first(b: Builder, region: ir.Region, side: Cluster, head: str) -> str:
    """Draw ``region`` into ``side``; the node the branch edge points at (a
    marker when the side computes nothing)."""
    before = len(b.g.nodes)
    _region(b, region, side)
    if len(b.g.nodes) > before:
        return b.g.nodes[before].id
    return b.add("control", ["(nothing)"], side, None)


def forward(func: ir.Function) -> Graph:
    """The forward SSA graph of ``func``: leaves, op nodes, value edges; each
    loop or branch a cluster around its body."""
    g = Graph(func.name, f"forward graph of {where(func)}")
    draw_forward(Builder(g), func, None)
    return g


def call_text(node: ast.Assign) -> str:
    """A call of a callee's backward pass as the generated code writes it,
    ``dx, dy = split_bwd(t_tape, (dt_0, dt_1))``: the targets say which item
    of its result each adjoint edge out of the node carries."""
    (target,) = node.targets
    names = target.elts if isinstance(target, ast.Tuple) else [target]
    lhs = ", ".join(ast.unparse(n) for n in names) + ("," if len(names) == 1
                                                       and isinstance(target, ast.Tuple) else "")
    return f"{lhs} = {ast.unparse(node.value)}"


# -- DOT text -----------------------------------------------------------------

def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _attrs(attrs: dict[str, str]) -> str:
    return "[" + ", ".join(f"{k}={_quote(v)}" for k, v in attrs.items()) + "]"


def _label(lines: list[str]) -> str:
    # \n in a DOT string is a centred line break; escape the lines' own text first.
    return "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines)


def to_dot(g: Graph) -> str:
    """``g`` as Graphviz DOT text."""
    out = [f"digraph {_quote(g.name)} {{",
           f'  graph [label={_quote(g.label)}, labelloc="t", fontname="Helvetica", '
           f'rankdir="TB", nodesep="0.35", ranksep="0.45"];',
           '  node [fontname="Helvetica", fontsize="11"];',
           '  edge [fontname="Helvetica", fontsize="10"];']
    placed = {n for c in g.clusters for n in _all_nodes(c)}
    by_id = {n.id: n for n in g.nodes}
    for n in g.nodes:
        if n.id not in placed:
            out.append("  " + _node(n))
    for c in g.clusters:
        out += _cluster(c, by_id, "  ")
    for e in g.edges:
        out.append(f"  {_quote(e.src)} -> {_quote(e.dst)} "
                   + _attrs({"label": " " + e.label + " ", **EDGE_STYLE[e.kind]}))
    out.append("}")
    return "\n".join(out) + "\n"


def _node(n: Node) -> str:
    label = '"' + _label(n.label) + '"'
    rest = ", ".join(f"{k}={_quote(v)}" for k, v in STYLE[n.kind].items())
    return f"{_quote(n.id)} [label={label}, {rest}];"


def _cluster(c: Cluster, by_id: dict[str, Node], indent: str) -> list[str]:
    out = [f"{indent}subgraph {_quote(c.name)} {{",
           f'{indent}  graph [label={_quote(c.label)}, style="rounded", color="#bbbbbb", '
           f'fontcolor="#555555"];']
    out += [f"{indent}  " + _node(by_id[n]) for n in c.nodes]
    for sub in c.clusters:
        out += _cluster(sub, by_id, indent + "  ")
    out.append(f"{indent}}}")
    return out


def _all_nodes(c: Cluster) -> list[str]:
    return c.nodes + [n for sub in c.clusters for n in _all_nodes(sub)]


# -- rendering ------------------------------------------------------------------

INSTALL_HINT = ("rendering needs the Graphviz `dot` program: install it "
                "(Debian/Ubuntu: `apt-get install graphviz`; macOS: `brew install graphviz`), "
                "or write DOT with `-o FILE.dot` or to stdout")


def render(dot_text: str, path: str) -> None:
    """Write ``dot_text`` to ``path``: as it is for ``.dot``/``.gv``, rendered by
    Graphviz for ``.svg``/``.png``/``.pdf``."""
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext in ("dot", "gv"):
        loader.write(dot_text, path)  # atomically, like a generated module
        return
    if ext not in ("svg", "png", "pdf"):
        raise S2SError(f"-o {path}: the format is taken from the extension; "
                       "use .dot, .gv, .svg, .png or .pdf")
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizMissing(INSTALL_HINT)
    done = subprocess.run([exe, f"-T{ext}", "-o", path], input=dot_text.encode("utf-8"),
                          capture_output=True)
    if done.returncode != 0:
        raise S2SError(f"dot failed: {done.stderr.decode(errors='replace').strip()}")
