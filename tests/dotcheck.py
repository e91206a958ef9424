"""A strict parser of Graphviz DOT, independent of s2s-ad's writer.

It follows the grammar of https://graphviz.org/doc/info/lang.html (IDs,
double-quoted strings with escapes, attribute lists, subgraphs, edge chains;
no HTML labels, no ports) and raises :class:`DotError` on anything else, so
tests can check DOT text without Graphviz installed. It also insists that
every edge endpoint is a declared node, which DOT itself does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KEYWORDS = {"strict", "graph", "digraph", "node", "edge", "subgraph"}
TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<id>[A-Za-z_\u0080-\uffff][A-Za-z_0-9\u0080-\uffff]*|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))
  | (?P<op>->|--|[{}\[\];,=:])
""", re.VERBOSE | re.DOTALL)


class DotError(ValueError):
    pass


@dataclass
class Dot:
    name: str
    directed: bool
    attrs: dict = field(default_factory=dict)
    nodes: dict = field(default_factory=dict)
    """node id -> its attributes"""
    edges: list = field(default_factory=list)
    """(src, dst, attributes)"""
    subgraphs: dict = field(default_factory=dict)
    """subgraph name -> (its attributes, set of node ids declared inside, directly or nested)"""
    parent: dict = field(default_factory=dict)
    """node id -> innermost subgraph name it is declared in ("" for the top level)"""


def _unquote(tok: str) -> str:
    if tok.startswith('"'):
        return re.sub(r'\\(.)', lambda m: "\\" + m.group(1) if m.group(1) in "nlr" else m.group(1),
                      tok[1:-1])
    return tok


def tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if m is None:
            raise DotError(f"unexpected character {text[pos]!r} at offset {pos}")
        pos = m.end()
        if m.lastgroup != "ws":
            out.append((m.lastgroup, m.group()))
    return out


def parse(text: str) -> Dot:
    toks = tokens(text)
    i = 0

    def peek(k=0):
        return toks[i + k] if i + k < len(toks) else ("eof", "")

    def take(value=None, kind=None):
        nonlocal i
        t = peek()
        if (value is not None and t[1] != value) or (kind is not None and t[0] not in kind):
            raise DotError(f"expected {value or kind}, got {t[1]!r} (token {i})")
        i += 1
        return t

    def ident():
        t = take(kind=("id", "string"))
        if t[0] == "id" and t[1] in KEYWORDS:
            raise DotError(f"keyword {t[1]!r} used as an ID")
        return _unquote(t[1])

    def attr_list():
        attrs = {}
        while peek()[1] == "[":
            take("[")
            while peek()[1] != "]":
                key = ident()
                take("=")
                attrs[key] = ident()
                if peek()[1] in (",", ";"):
                    take()
            take("]")
        return attrs

    if peek()[1] == "strict":
        take()
    kind = take(kind=("id",))[1]
    if kind not in ("graph", "digraph"):
        raise DotError(f"expected graph or digraph, got {kind!r}")
    dot = Dot("", kind == "digraph")
    if peek()[1] != "{":
        dot.name = ident()
    edgeop = "->" if dot.directed else "--"
    stack = [""]

    def node_ref():
        if peek()[1] in ("subgraph", "{"):
            raise DotError("subgraphs as edge endpoints are not used by s2s-ad")
        return ident()

    def stmt_list():
        take("{")
        while peek()[1] != "}":
            if peek()[0] == "eof":
                raise DotError("unterminated {")
            stmt()
            if peek()[1] == ";":
                take()
        take("}")

    def stmt():
        t = peek()
        if t[1] in ("graph", "node", "edge") and t[0] == "id":
            take()
            attrs = attr_list()
            if t[1] == "graph":
                (dot.attrs if stack[-1] == "" else dot.subgraphs[stack[-1]][0]).update(attrs)
            return
        if t[1] in ("subgraph", "{"):
            name = ""
            if t[1] == "subgraph":
                take()
                if peek()[1] != "{":
                    name = ident()
            name = name or f"<anonymous {i}>"
            if name in dot.subgraphs:
                raise DotError(f"subgraph {name!r} declared twice")
            dot.subgraphs[name] = ({}, set())
            stack.append(name)
            stmt_list()
            stack.pop()
            return
        first = node_ref()
        if peek()[1] == "=":
            take()
            value = ident()
            (dot.attrs if stack[-1] == "" else dot.subgraphs[stack[-1]][0])[first] = value
            return
        if peek()[1] in ("->", "--"):
            chain = [first]
            while peek()[1] in ("->", "--"):
                if take()[1] != edgeop:
                    raise DotError(f"{'directed' if dot.directed else 'undirected'} graph uses {edgeop}")
                chain.append(node_ref())
            attrs = attr_list()
            for a, b in zip(chain, chain[1:]):
                dot.edges.append((a, b, attrs))
            return
        attrs = attr_list()
        if first in dot.nodes:
            raise DotError(f"node {first!r} declared twice")
        dot.nodes[first] = attrs
        dot.parent[first] = stack[-1]
        for name in stack[1:]:
            dot.subgraphs[name][1].add(first)

    stmt_list()
    if peek()[0] != "eof":
        raise DotError(f"text after the graph: {peek()[1]!r}")
    for a, b, _ in dot.edges:
        for end in (a, b):
            if end not in dot.nodes:
                raise DotError(f"edge endpoint {end!r} is not a declared node")
    return dot
