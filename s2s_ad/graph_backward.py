"""The reverse sweep, drawn below the forward graph.

Contract: :func:`combined` takes a lowered function and the
:class:`~s2s_ad.code.CodeFunction` :func:`s2s_ad.reverse.transform` made from
it and returns a :class:`~s2s_ad.graph.Graph`: the forward graph
(:mod:`s2s_ad.graph`) and below it the reverse sweep that
:func:`s2s_ad.sweep.read` reads from the generated code:

* one node per local derivative, labelled as in straight-line code with the
  forward op and operand it differentiates (``∂(s * x)/∂x``) and the
  contribution it computes (``ds * s``); one node per call of a callee's
  backward pass, labelled with the call as the code writes it
  (``dx_1, dt1 = split_bwd(split_1_tape, (dp, dq))``: its targets name the
  item each edge out of it carries);
* each reverse loop a cluster (``reverse of for i in range(n) · line 7``)
  whose head node runs the iterations backwards: the adjoints its body
  changes enter the head, the body reads them from it, and dashed green edges
  take their values back to it for the iteration before (``+= …`` for an
  adjoint each iteration adds to, ``→ previous iteration`` for one it sets,
  ``dx ← dx_1 → previous iteration`` where the value is an inner loop's or a
  call's ``dx_1``);
* each taped value a *tape* node (a cylinder): the forward loop's node that
  computes the value pushes into it, and the reverse nodes that read the
  value pop from it (brown edges); a value recomputed instead of taped is a
  dashed forward-coloured node inside the reverse loop;
* each reverse branch a cluster whose head reads the decision the forward
  pass recorded; an adjoint that a side adds to or sets leaves the branch
  through a ``φ`` node;
* a ``Σ`` node only where two or more contributions to an adjoint meet,
  outside a loop or branch when what it sums comes from before it;
* a gradient sink built from items takes each item's edge (``[0] dxs[0]``).

Nodes are numbered after the forward ones, in the order the sweep runs: a
node reads only nodes numbered before it (the edges back to a loop's head
aside).

Before → after, for ``for i in range(n): s = s * x``::

    tape s_tape ◀─push─ for (forward head)
    reverse of for i in range(n):  head ─ds─▶ ∂(s * x)/∂x ─dx += ds * s─▶ head
                                   tape ─pop s─▶ ∂(s * x)/∂x
"""

from __future__ import annotations

import ast

from s2s_ad import graph, ir, sweep
from s2s_ad.emit.code import CodeFunction
from s2s_ad.reverse import out_of_place
from s2s_ad.sweep import SweepError
from s2s_ad.sweep import ControlSweep, Line, read, tape_of
from s2s_ad.syntax_walk import walk

DERIVED = ("derivative", "shape")
MOVES = ("phi", "carry", "init", "add", "item", "inplace", "other")


class _Reverse:
    def __init__(self, b: "graph.Builder", sw: ControlSweep, tapes: graph.Cluster):
        self.b = b
        self.sw = sw
        self.modules = sw.func.modules
        self.names = sw.adjoint_names
        self.adj: dict[str, list[tuple[str, str]]] = {}
        """Adjoint variable -> the contributions it holds, not summed yet:
        (graph node, edge label). ``[]``: it is 0."""
        self.val: dict[str, str] = {}
        """Forward name -> the node it comes from in the reverse sweep (a tape,
        a recomputation, a reverse loop's index), where not the forward node."""
        self.tapes = tapes
        self.tape_nodes: dict[str, str] = {}
        self.calls: set[str] = set()
        """The nodes of a callee's backward pass: each hands out several
        adjoints, so an edge from one names the item it carries."""
        self.heads: set[str] = set()
        """The reverse loops' heads: an adjoint taken from one is named by
        the variable the head holds it in."""

    # -- adjoints -------------------------------------------------------------

    def source(self, name: str, cluster: graph.Cluster) -> str | None:
        """The one node ``name``'s adjoint comes from: its contribution, or
        the Σ of several (made here, in ``cluster``); None when it is 0."""
        parts = self.adj.get(name, [])
        if not parts:
            return None
        if len(parts) == 1:
            return parts[0][0]
        total = self.b.add("sum", ["Σ", name], cluster)
        for src, label in parts:
            self.b.edge(src, total, label, "adjoint")
        self.adj[name] = [(total, name)]
        return total

    def sum_before(self, lines: list[Line], cluster: graph.Cluster) -> None:
        """Sum, in ``cluster``, the adjoints ``lines`` (a loop's body, a
        branch's sides) read that hold several contributions from before
        them: made inside, the Σ would look as if it ran per iteration, or
        only when one side runs."""
        for name in _read(lines):
            if name in self.names and len(self.adj.get(name, [])) > 1:
                self.source(name, cluster)

    def through(self, name: str, cluster: graph.Cluster) -> tuple[str, str] | None:
        """:meth:`source` and the name to label its edge with: ``name``, or
        for an adjoint a reverse loop's head holds, the head's variable, or
        for one a callee's backward pass handed out (``db`` added to zeros
        from ``db_1, da = h_bwd(...)``), the item it carries."""
        src = self.source(name, cluster)
        if src is None:
            return None
        return src, self.adj[name][0][1] if src in self.heads or src in self.calls else name

    def gather(self, names: list[str], cluster: graph.Cluster,
               skip: frozenset[str] = frozenset()) -> list[tuple[str, str, str]]:
        """The edges (source, label, kind) into a node reading ``names``:
        adjoints in red, forward values dashed grey (from a tape: brown,
        ``pop``). Gathered before the node is made: a Σ node made here gets
        the smaller number, as it runs first."""
        edges = []
        for name in names:
            if name in skip:
                continue
            if name in self.names:
                got = self.through(name, cluster)
                if got is not None:
                    # held by a reverse loop's head under another name (passed on
                    # after the loop: ``dw_1 = dw_2``): the edge says both
                    label = got[1] if got[1] == name else f"{name} ← {got[1]}"
                    edges.append((got[0], label, "adjoint"))
            else:
                edges += self.read(name)
        return edges

    def feed(self, edges: list[tuple[str, str, str]], node: str) -> None:
        for src, label, kind in edges:
            self.b.edge(src, node, label, kind)

    def read(self, name: str) -> list[tuple[str, str, str]]:
        src = self.val.get(name)
        if src is not None:
            if src in self.tape_nodes.values():
                return [(src, f"pop {name}", "pop")]
            return [(src, name, "read")]
        v = self.sw.values.get(name)
        if v is not None and id(v) in self.b.producer:
            return [(self.b.producer[id(v)], name, "read")]
        return []  # a function or module the expression calls (np, unbroadcast)

    def put(self, line: Line, name: str, node: str | None, label: str) -> None:
        """``name``'s adjoint gets ``node``'s contribution: added, or instead of what it held."""
        parts = [(node, label)] if node is not None else []
        if line.adds:
            self.adj.setdefault(name, []).extend(parts)
        else:
            self.adj[name] = parts

    # -- lines ------------------------------------------------------------------

    def lines(self, lines: list[Line], cluster: graph.Cluster) -> None:
        for line in lines:
            if line.kind == "loop":
                self.loop(line, cluster)
            elif line.kind == "if":
                self.branch(line, cluster)
            else:
                self.line(line, cluster)

    def line(self, line: Line, cluster: graph.Cluster) -> None:
        b, k = self.b, line.kind
        if k == "seed":
            node = b.add("seed", [f"{self.sw.seed} = 1.0", "seed"], cluster)
            self.adj[self.sw.seed] = [(node, self.sw.seed)]
            return
        if k == "zero" or (k == "inplace" and not line.adds
                           and not isinstance(line.expr, ast.Name)):
            self.adj[line.writes[0]] = []  # starts at 0 (an array of zeros)
            return
        if k == "pop":
            tape_name = tape_of(line)
            self.val[line.writes[0]] = self.tape(tape_name, line.writes[0])
            return
        if k in ("recompute", "restore"):
            # a forward value computed again, or an array's old elements put back
            edges = self.gather(line.reads, cluster)
            node = b.add("recompute", [k, line.text, f"line {line.op.loc.line}"],
                         cluster, line.op)
            self.feed(edges, node)
            self.val[line.writes[0]] = node
            return
        if k in MOVES and isinstance(line.expr, ast.Name) and line.expr.id in self.names:
            # an adjoint passed on (into a branch side, across an iteration,
            # to a tuple item or a call's operand): no node, the edge goes on
            got = self.through(line.expr.id, cluster)
            self.put(line, line.writes[0], *(got or (None, "")))
            return
        if (k in MOVES and isinstance(line.expr, ast.Tuple) and len(line.writes) > 1
                and all(isinstance(e, ast.Name) or _zero(e) for e in line.expr.elts)):
            # ``da, db = db, da``, ``dx, du = 0.0, dx``: adjoints passed on (or
            # reset to 0) all at once
            got = [self.through(e.id, cluster)
                   if isinstance(e, ast.Name) and e.id in self.names else None
                   for e in line.expr.elts]
            for name, g in zip(line.writes, got):
                self.adj[name] = [g] if g is not None else []
            return
        if k == "call":
            op = line.op
            edges = self.gather(line.reads, cluster, skip=frozenset([line.expr.func.id]))
            node = b.add("bwd", [sweep.derivative_text(op, None, self.modules),
                                 graph.call_text(line.stmt.node), f"line {op.loc.line}"],
                         cluster, op)
            self.calls.add(node)
            self.feed(edges, node)
            for name in line.writes:
                if name in self.names:
                    self.adj[name] = [(node, name)]
            return
        if line.op is not None and line.operand is not None:
            op = line.op
            arg = op.args[line.operand]
            step = sweep.Step(op, line.operand, arg, line.stmt.partial, line.stmt)
            side = f" ({step.side})" if step.side else ""
            head = sweep.derivative_text(op, line.operand, self.modules) + side
            label = [head, _shown(line), f"line {op.loc.line}"]
        else:
            label = [line.stmt.comment, _shown(line)]
        if _sets_element(line):
            # ``dy[i] = 0.0``: a new adjoint, the one it held with an element
            # replaced; it reads what the adjoint held (all of it, summed)
            name = line.writes[0]
            reads = [name] + [n for n in line.reads + _index_names(line) if n != name]
            edges = self.gather(reads, cluster)
            node = b.add("bwd", label, cluster, line.op)
            self.feed(edges, node)
            self.adj[name] = [(node, name)]
            return
        edges = self.gather(line.reads + _index_names(line), cluster)
        node = b.add("bwd", label, cluster, line.op)
        self.feed(edges, node)
        self.put(line, line.writes[0], node, line.contribution)

    def tape(self, name: str, value: str) -> str:
        """The tape node of tape list ``name`` (made on its first pop, with the
        push from the forward node that computes ``value``)."""
        node = self.tape_nodes.get(name)
        if node is None:
            node = self.b.add("tape", [f"tape {name}", f"{value}, one per iteration"],
                              self.tapes)
            self.tape_nodes[name] = node
            v = self.sw.values.get(value)
            if v is None or id(v) not in self.b.producer:
                raise SweepError(f"no forward node computes {value}, popped from {name}")
            self.b.edge(self.b.producer[id(v)], node, f"push {value}", "push")
        return node

    # -- loops --------------------------------------------------------------------

    def loop(self, line: Line, cluster: graph.Cluster) -> None:
        node = line.control
        text = node.text or ("while" if isinstance(node, ir.While) else "for")
        edges = self.gather(_names(line.expr), cluster)
        self.sum_before(line.body, cluster)
        # the adjoints the body changes that live on across iterations (an
        # adjoint first set inside the body is the iteration's own)
        written = [n for n in _written(line.body, self.names) if n in self.adj]
        for name in written:
            got = self.through(name, cluster)
            if got is not None:
                edges.append((got[0], name if got[1] == name else f"{name} ← {got[1]}",
                              "adjoint"))
        box = graph.subcluster(self.b, cluster, f"reverse of {text} · line {node.loc.line}")
        head = self.b.add("control", [line.text.rstrip(":"), "iterations last to first"], box)
        self.feed(edges, head)
        target = line.block.head.target
        saved_val = dict(self.val)
        if isinstance(target, ast.Name) and not target.id.startswith("_"):
            self.val[target.id] = head
        self.heads.add(head)
        for name in written:
            self.adj[name] = [(head, name)]
        self.lines(line.body, box)
        for name in written:
            parts = self.adj.get(name, [])
            if parts[:1] == [(head, name)]:
                extra = parts[1:]
                if not extra:
                    continue
                if len(extra) == 1:
                    src, label = extra[0]
                else:
                    self.adj[name] = extra
                    src, label = self.source(name, box), name
                self.b.edge(src, head, f"{name} += {label}", "carry")
            else:
                got = self.through(name, box)
                if got is None:
                    # reset to 0 by the iteration (``dx, du = 0.0, dx``): the
                    # previous iteration starts from 0, not from what the head held
                    self.b.edge(head, head, f"{name} = 0 → previous iteration", "carry")
                    continue
                src, held = got[0], self.adj[name][0][1]
                if src == head:
                    label = f"{name} ← {held}"
                elif (src in self.heads or src in self.calls) and held != name:
                    # a variable of an inner loop's head, an item of a call's result
                    label = f"{name} ← {held} → previous iteration"
                else:
                    label = f"{name} → previous iteration"
                self.b.edge(src, head, label, "carry")
        for name in written:
            self.adj[name] = [(head, name)]
        self.val = saved_val

    # -- branches -------------------------------------------------------------------

    def read_outside(self, line: Line) -> set[str]:
        """The names the sweep reads outside the branch ``line``, and the
        gradients it returns."""
        inside = {id(x) for x in _walk([line])}
        out = set(_names(self.sw.code.returns))
        for x in self.sw.walk():
            if id(x) not in inside:
                out.update(x.reads + (_index_names(x) if x.stmt is not None else []))
        return out

    def branch(self, line: Line, cluster: graph.Cluster) -> None:
        node = line.control
        edges = self.gather(_names(line.expr), cluster)
        test = line.block.head.test
        # the sides are named by the decision the forward pass recorded: under
        # ``if not t3:`` the body runs where t3 was false, the orelse where it was true
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        sides = [(line.body, "else" if negated else "then")]
        if line.orelse:
            sides.append((line.orelse, "then" if negated else "else"))
        # the adjoints a side changes that the sweep reads after the branch:
        # those set before it (to 0 if need be), and those every side sets and
        # the sweep reads outside the branch (an untouched adjoint's guard,
        # ``if t3: dt2 = dr / (2 * r) else: dt2 = 0.0``)
        everywhere = set(_written(line.body, self.names)) & set(_written(line.orelse, self.names))
        if everywhere - self.adj.keys():
            everywhere &= self.read_outside(line)
        written = [n for n in _written(line.body + line.orelse, self.names)
                   if n in self.adj or n in everywhere]
        sets = {n for n in written if any((not x.adds or x.stmt is not None and _sets_element(x))
                                          and n in x.writes
                                          for x in _walk(line.body + line.orelse))}
        for name in sorted(sets, key=written.index):
            self.source(name, cluster)  # one node for what it held before the branch
        self.sum_before(line.body + line.orelse, cluster)
        box = graph.subcluster(self.b, cluster, f"reverse of {node.text or 'if'} · line {node.loc.line}")
        head = self.b.add("control", [line.text.rstrip(":"), f"as decided at line {node.loc.line}"],
                          box)
        self.feed(edges, head)
        before = {n: list(self.adj[n]) for n in written if n in self.adj}
        states = []
        for body, name in sides:
            side = graph.subcluster(self.b, box, name)
            self.adj.update({n: list(p) for n, p in before.items()})
            saved_val = dict(self.val)
            count = len(self.b.g.nodes)
            self.lines(body, side)
            if len(self.b.g.nodes) > count:
                self.b.edge(head, self.b.g.nodes[count].id, name, "control")
            states.append((name, side, {n: list(self.adj.get(n, [])) for n in written}))
            self.val = saved_val
        if len(states) == 1:
            states.append(("else" if states[0][0] == "then" else "then", box,
                           {n: list(p) for n, p in before.items()}))
        for name in written:
            pre = before.get(name)
            inputs = []
            for side_name, side, state in states:
                parts = state.get(name, [])
                if name not in sets and pre is not None and parts[:len(pre)] == pre:
                    extra = parts[len(pre):]
                else:
                    extra = parts
                inputs.append((side_name, side, extra))
            if all(not extra for _, _, extra in inputs) and name not in sets:
                self.adj[name] = list(pre or [])
                continue
            quiet = [f"{side_name}: adds nothing" for side_name, _, extra in inputs if not extra]
            for k, (side_name, side, extra) in enumerate(inputs):
                if len(extra) > 1:  # the side's contributions meet in the side
                    self.adj[name] = extra
                    inputs[k] = (side_name, side, [(self.source(name, side), name)])
            phi = self.b.add("control", [f"φ {name}"] + quiet, box)
            for side_name, _, extra in inputs:
                for src, label in extra:
                    self.b.edge(src, phi, f"{side_name}: {label}", "adjoint")
            if name in sets or pre is None:
                self.adj[name] = [(phi, name)]
            else:
                self.adj[name] = list(pre) + [(phi, f"φ {name}")]


def _shown(line: Line) -> str:
    """The contribution as a label shows it: ``dx[i] += g`` where it goes
    into one element (the index matters), ``dy[i] = 0.0`` where it replaces
    one, else ``g``."""
    node = line.stmt.node
    target = node.target if isinstance(node, ast.AugAssign) else \
        node.targets[0] if isinstance(node, ast.Assign) else None
    if isinstance(target, ast.Subscript):
        return f"{ast.unparse(target)} {'=' if _sets_element(line) else '+='} {line.contribution}"
    return line.contribution


def _zero(e: ast.expr) -> bool:
    """Is ``e`` the constant 0 (an adjoint reset)?"""
    return isinstance(e, ast.Constant) and type(e.value) in (int, float) and e.value == 0


def _sets_element(line: Line) -> bool:
    """``dy[i] = 0.0``: the adjoint of an element the forward pass overwrote
    is set, not added to (sweep counts it among the lines that add,
    as it changes the adjoint in place)."""
    node = line.stmt.node
    if line.op is not None and line.op.prim == "getitem":
        return False  # ``dc[i] = g``: the first contribution to a zero element (element_writes)
    return isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) \
        and out_of_place.adds_to(node) is None  # not ``dy[i] = dy[i] + g``, which adds


def _index_names(line: Line) -> list[str]:
    """What the index of ``dx[i] += g`` reads (``i``)."""
    node = line.stmt.node
    target = node.target if isinstance(node, ast.AugAssign) else \
        node.targets[0] if isinstance(node, ast.Assign) else None
    if not isinstance(target, ast.Subscript):
        return []
    return [n for n in _names(target.slice) if n not in line.reads]


def _walk(lines: list[Line]):
    for line in lines:
        yield line
        yield from _walk(line.body)
        yield from _walk(line.orelse)


def _read(lines: list[Line]) -> list[str]:
    """The names ``lines`` read, in order of first read."""
    out: list[str] = []
    for line in _walk(lines):
        index = _index_names(line) if line.stmt is not None else []
        out += [n for n in line.reads + index if n not in out]
    return out


def _written(lines: list[Line], adjoints: set[str]) -> list[str]:
    """The adjoint variables ``lines`` write, in order of first write."""
    out: list[str] = []
    for line in _walk(lines):
        if line.kind in ("pop", "recompute"):
            continue
        out += [n for n in line.writes if n in adjoints and n not in out]
    return out


def _names(expr: ast.expr) -> list[str]:
    out: list[str] = []
    for n in walk(expr):
        if isinstance(n, ast.Name) and n.id not in out:
            out.append(n.id)
    return out


def combined(func: ir.Function, code: CodeFunction) -> graph.Graph:
    """The forward graph of ``func`` and, below it, the reverse sweep of ``code``."""
    wrt = ", ".join(v.name for v in code.wrt)
    g = graph.Graph(func.name, f"forward and reverse sweep of {graph.where(func)}, "
                               f"with respect to {wrt}")
    fwd = graph.Cluster("cluster_forward", "forward pass")
    bwd = graph.Cluster("cluster_reverse", "reverse sweep")
    g.clusters += [fwd, bwd]
    b = graph.Builder(g)
    graph.draw_forward(b, func, fwd)
    draw(b, func, code, bwd)
    return g


def draw(b: "graph.Builder", func: ir.Function, code: CodeFunction,
         bwd: graph.Cluster) -> None:
    """Add the reverse sweep of ``code`` (made from ``func``) to ``b``'s graph."""
    sw = read(func, code)
    tapes = graph.Cluster("cluster_tape", "tape: pushed forward, popped in reverse")
    r = _Reverse(b, sw, tapes)
    first = len(b.g.nodes)
    r.lines(sw.lines, bwd)
    if tapes.nodes:
        b.g.clusters.insert(1, tapes)
    # Graphviz places unconnected clusters side by side: keep the forward
    # pass on top, the tapes below it, the reverse sweep at the bottom.
    below = tapes.nodes or [n.id for n in b.g.nodes[first:first + 1]]
    for node in below:
        b.edge("return", node, "", "order")
    if tapes.nodes and len(b.g.nodes) > first:
        first_reverse = next(n.id for n in b.g.nodes[first:] if n.id not in tapes.nodes)
        b.edge(tapes.nodes[0], first_reverse, "", "order")
    returns = code.returns.elts if isinstance(code.returns, ast.Tuple) else [code.returns]
    result = func.result.name if isinstance(func.result, ir.Value) else "out"
    for v, g in zip(code.wrt, returns):
        items = g.elts if isinstance(g, (ast.List, ast.Tuple)) else None
        into = [(r.through(name, bwd), "" if items is None else f"[{i}] ", element)
                for i, e in enumerate(items if items is not None else [g])
                for name, element in _taken(e) if name in r.names]
        sink = b.add("grad", [f"gradient ∂{result}/∂{v.name}", f"= {ast.unparse(g)}"], bwd,
                     node_id=f"grad_{v.name}")
        for got, index, element in into:
            if got is not None:
                b.edge(got[0], sink, index + got[1] + element, "adjoint")


def _taken(expr: ast.expr) -> list[tuple[str, str]]:
    """The names ``expr`` reads, each with the element it takes: ``("dxs",
    "[0]")`` for ``dxs[0]`` (the edge is item 0 of the list's adjoint, not all
    of it), ``("dm", "")`` for ``dm``."""
    elements = {id(n.value): f"[{ast.unparse(n.slice)}]" for n in walk(expr)
                if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)}
    out: list[tuple[str, str]] = []
    for n in walk(expr):
        if isinstance(n, ast.Name) and (n.id, elements.get(id(n), "")) not in out:
            out.append((n.id, elements.get(id(n), "")))
    return out
