"""Run the reverse sweep of a drawn graph (``s2s-ad graph --backward``) node by
node, and compare the gradients reaching its sinks with central finite
differences (test_graph_backward.py).

What the drawing is run from: each backward node is evaluated from its label
and the values on its incoming edges only; a reverse loop's head runs its
iterations (its label says which), pops from the tapes its body reads and
passes the adjoints back along its dashed edges; a reverse branch runs the
side the recorded decision took and its φ nodes pass that side's
contributions on. Two things come from the generated module instead, as the
drawing says they do:

* the forward values and the full tapes when the reverse sweep starts (the
  forward part of the graph is checked by the wiring tests);
* the callee's backward pass a call node names (``dx, dy = split_bwd(...)``):
  the drawing shows each call site as one node, and the callee's own graph
  (``s2s-ad graph`` on the callee) draws its inside.

A contribution to one element of a list's or array's adjoint (``dcs[k] +=
ds``), or an element replaced (``dy[i] = 0.0``), is an :class:`Element`
change; a gradient sink of a list parameter collects them into a list as long
as the parameter has item leaves (of an array parameter: into an array of its
shape).

Not run from the drawing: NumPy code that writes into an array it later
reads in the reverse sweep (``y[i] = ...`` with old elements put back,
``y[i] = y_old.pop()``): the stack of old elements is not drawn as a tape,
nor are the array and index the restore writes into, and the restored array
passes from one reverse iteration to the next without a drawn edge.
"""

from __future__ import annotations

import ast
import copy
import inspect
import math
import re
import sys

import numpy as np

import s2s_ad
from s2s_ad import api, graph, graph_backward
from s2s_ad.emit import loader

from oracle import close, fd_gradient


def forward_state(fn, args: list, wrt, lengths: dict | None, *, keywords: dict | None = None,
                  output: int | None = None, arrays=()):
    """Every local of the generated gradient when its reverse sweep starts:
    the forward values and the full tape lists (what the drawn reverse sweep
    reads), and the module's globals (the callees' backward passes, helpers).
    ``keywords``: keyword-only arguments; ``output``: the item differentiated;
    ``arrays``: the parameters that receive arrays."""
    source = s2s_ad.gradient_source(fn, wrt, lengths=lengths, output=output, arrays=arrays)
    module = loader.load(source, f"run_{fn.__name__}")
    grad_fn = getattr(module, f"grad_{fn.__name__}")
    lines = source.splitlines()
    # No reverse sweep (no adjoint reaches a parameter): the state at the return.
    start = next((i + 2 for i, line in enumerate(lines) if line.strip() == "# reverse sweep"),
                 len(lines) + 1)
    seen: dict = {}

    def trace(frame, event, arg):
        if frame.f_code is grad_fn.__code__:
            if (event == "line" and frame.f_lineno >= start or event == "return") and not seen:
                # deep: a callee's backward pass pops the tapes inside its tape
                seen.update(copy.deepcopy(dict(frame.f_locals)))
            return trace
        return None

    sys.settrace(trace)
    try:
        grad_fn(*args, **(keywords or {}))
    finally:
        sys.settrace(None)
    return seen, vars(module)


class Element:
    """Changes to single elements of a list's or array's adjoint, in order:
    ``("add", index, value)`` for ``dcs[k] += ds``, ``("set", index, value)``
    for ``dy[i] = 0.0``, ``("at", index, value)`` for ``add_at(dx, idx, g)`` (``np.add.at``). Adds to 0 and to other element changes (after them);
    into a whole list or array, it applies to a copy. Never added to a whole
    nonzero number: that would mix an element update with a scalar adjoint."""

    __array_ufunc__ = None  # ``array + Element`` comes here, not to NumPy

    def __init__(self, ops):
        self.ops = list(ops)

    def __add__(self, other):
        if isinstance(other, (int, float)) and other == 0:
            return Element(self.ops)
        if isinstance(other, Element):
            return Element(self.ops + other.ops)
        if isinstance(other, (list, np.ndarray)):
            return self.into(other)
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, Element):
            return Element(other.ops + self.ops)
        return self.__add__(other)  # a whole value first, then the element changes

    def into(self, whole):
        """``whole`` (a list or an array) with these changes, as a new value."""
        out = np.array(whole, dtype=float) if isinstance(whole, np.ndarray) else list(whole)
        for kind, k, v in self.ops:
            if kind == "at":
                np.add.at(out, k, v)  # repeated indices add up
            else:
                out[k] = v if kind == "set" else out[k] + v
        return out

    def __repr__(self):
        return f"Element({self.ops})"


class _Key:
    def __getitem__(self, key):
        return key


def _index(target: ast.Subscript, env: dict):
    """The index of ``dx[i, 1:]`` as ``dx.__getitem__`` gets it (slices too)."""
    key = ast.Subscript(value=ast.Name("_key", ast.Load()), slice=target.slice, ctx=ast.Load())
    return eval(ast.unparse(key), {**env, "_key": _Key()})


def run_reverse(g: graph.Graph, state: dict, names: dict) -> dict[str, object]:
    """Run the reverse part of a combined graph; the value reaching each
    gradient sink (``grad_x``), a list for a list parameter."""
    order = {n.id: i for i, n in enumerate(g.nodes)}
    ins: dict[str, list] = {}
    for e in g.edges:
        if e.kind not in ("order", "control", "push"):
            ins.setdefault(e.dst, []).append(e)
    out: dict[str, object] = {}
    calls: dict[str, dict] = {}     # a call node -> the adjoints it hands out, by name
    heads: dict[str, dict] = {}     # a reverse loop's head -> its adjoints now
    popped: dict[str, object] = {}  # a tape node -> the value popped this iteration
    stacks = {n.id: list(state[n.label[1].split()[1]]) for n in g.nodes if n.kind == "tape"}
    (reverse,) = [c for c in g.clusters if c.name == "cluster_reverse"]
    path: dict[str, list] = {}      # a node -> the clusters around it, outermost first

    def walk(c, around):
        for n in c.nodes:
            path[n] = around + [c]
        for sub in c.clusters:
            walk(sub, around + [c])

    walk(reverse, [])
    (forward,) = [c for c in g.clusters if c.name == "cluster_forward"]
    walk(forward, [])

    def in_a_side(node):
        """Is ``node`` (forward) inside a branch side of its innermost loop?"""
        for c in reversed(path.get(node, [])):
            if c.label in ("then", "else"):
                return True
            if c.label in ("body", "condition"):
                return False
        return False

    def reverse_loop(c):
        return any(g.node(n).kind == "control" and g.node(n).label[-1] == "iterations last to first"
                   for n in c.nodes)

    pops: dict[int, list[str]] = {}  # id(cluster) -> the tapes popped on entering it
    for t in stacks:
        # a loop's head reads its trip count once, before its cluster runs
        readers = [path[e.dst][:-1] if g.node(e.dst).kind == "control" else path[e.dst]
                   for e in g.edges if e.src == t and e.kind == "pop"]
        if not readers:
            continue  # a tape the reverse sweep pops but never reads
        common = [cs[0] for cs in zip(*readers) if all(c is cs[0] for c in cs)]
        pushes = [e.src for e in g.edges if e.dst == t and e.kind == "push"]
        loops = [c for c in common if reverse_loop(c)]
        if loops and pushes and not any(in_a_side(p) for p in pushes):
            # pushed every iteration (read in one side only): popped every iteration
            pops.setdefault(id(loops[-1]), []).append(t)
        else:
            pops.setdefault(id(common[-1]), []).append(t)

    def var_of(label):
        """The variable an edge's label names: ``dx``, ``then: dx``,
        ``da ← db``, ``dx += dy``, ``dx → previous iteration``."""
        label = label.split(": ", 1)[-1].removeprefix("pop ").removeprefix("φ ")
        return label.split(" ← ")[-1].split(" += ")[-1].split(" → ")[0]

    def value(e, name=None):
        """What edge ``e`` carries; ``name``: the variable it names, where its
        label is not one :func:`var_of` reads."""
        if e.src in heads:
            return heads[e.src][name or var_of(e.label)]
        if e.src in stacks:
            return popped[e.src]
        if e.src in calls:
            return calls[e.src][name or var_of(e.label)]
        if e.src in out:
            return out[e.src]
        return state[e.label]  # a forward value, as the forward pass left it

    def env_of(node_id, kinds=("adjoint", "read", "pop")):
        env = dict(names)
        for e in ins.get(node_id, []):
            if e.kind in kinds:  # ``dw_1 ← dw_2``: the node reads dw_1
                env[e.label.removeprefix("pop ").split(" ← ")[0]] = value(e)
        return env

    def items(c):
        """``c``'s nodes and clusters in the order the sweep made them."""
        first = {id(s): min(order[n] for n in _all(s)) for s in c.clusters if _all(s)}
        both = [(order[n], n) for n in c.nodes] + [(first[id(s)], s) for s in c.clusters
                                                     if id(s) in first]
        return [x for _, x in sorted(both, key=lambda p: p[0])]

    def _all(c):
        return c.nodes + [n for s in c.clusters for n in _all(s)]

    def run(c):
        for x in items(c):
            if isinstance(x, graph.Cluster):
                (head,) = [n for n in x.nodes if g.node(n).kind == "control"
                           and g.node(n).label[1].split()[0] in ("for", "if")]
                if g.node(head).label[1].startswith("for"):
                    loop(x, head)
                else:
                    branch(x, head)
            else:
                node(g.node(x))

    def node(n):
        env = env_of(n.id)
        if n.kind == "seed":
            out[n.id] = 1.0
        elif n.kind in ("bwd", "recompute"):
            text = n.label[2] if n.kind == "bwd" else n.label[2].split(" = ", 1)[1]
            body = ast.parse(text).body
            st = body[0]
            if len(body) > 1:
                # ``dx = np.zeros_like(x); dx[1] += dt1``: the adjoint the
                # statements make, element by element
                exec(text, env)
                last = body[-1]
                target = last.target if isinstance(last, ast.AugAssign) else \
                    last.value.args[0] if isinstance(last, ast.Expr) else last.targets[0]
                # (``add_at(dx, idx, g)`` adds into its first argument)
                out[n.id] = env[(target.value if isinstance(target, ast.Subscript)
                                 else target).id]
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) \
                    and re.fullmatch(r"(add_at|add_scattered)(_\d+)?",
                                     ast.unparse(st.value.func)):
                # ``add_at(dx, idx, g)`` (np.add.at), ``add_scattered(dx, idx, g)``:
                # adds g into the elements idx picks
                index, g_ = (eval(ast.unparse(a), env) for a in st.value.args[1:])
                out[n.id] = Element([("at", index, g_)])
            elif isinstance(st, ast.Expr):
                out[n.id] = eval(text, env)
            elif isinstance(st, ast.AugAssign):
                # ``dcs[k] += ds``: a contribution to one element
                assert isinstance(st.target, ast.Subscript) and isinstance(st.op, ast.Add), text
                index = _index(st.target, env)
                out[n.id] = Element([("add", index, eval(ast.unparse(st.value), env))])
            elif isinstance(st.targets[0], ast.Subscript):
                # ``dy[i] = 0.0``: the adjoint it reads, with one element replaced
                (target,) = st.targets
                whole = env[target.value.id]
                change = Element([("set", _index(target, env),
                                   eval(ast.unparse(st.value), env))])
                out[n.id] = whole + change
            else:
                # a call of a callee's backward pass: ``dx, dt1 = split_bwd(...)``
                (target,) = st.targets
                got = eval(ast.unparse(st.value), env)
                targets = target.elts if isinstance(target, ast.Tuple) else [target]
                assert len(targets) == len(got), text
                calls[n.id] = {t.id: v for t, v in zip(targets, got)}
        elif n.kind == "sum":
            out[n.id] = sum(value(e) for e in ins.get(n.id, []))
        elif n.kind == "grad":
            out[n.id] = sink(n)
        elif n.kind == "shared":
            (e,) = ins[n.id]
            out[n.id] = value(e)

    def sink(n):
        """A gradient sink: one adjoint, or a list parameter's items (edges
        ``[i] dxs_i``, ``[i] dxs[i]`` for item i of a list's adjoint, or one
        edge of element contributions)."""
        param = n.id.removeprefix("grad_")
        length = sum(1 for m in g.nodes if m.kind == "param" and m.label[1].startswith(param + "["))
        edges = ins.get(n.id, [])
        if length and all(e.label.startswith("[") for e in edges):
            got = [0.0] * length
            for e in edges:
                index, what = e.label[1:].split("] ", 1)
                name, _, element = what.partition("[")
                x = value(e, name)
                if element:
                    if isinstance(x, Element):
                        x = x.into([0.0] * length)
                    x = x[int(element[:-1])]
                got[int(index)] += x
            return got
        total = sum(value(e) for e in edges)
        if (isinstance(total, (int, float)) and total == 0
                and isinstance(state.get(param), np.ndarray)):
            # no contribution reaches the array (no edge, or a φ adding nothing)
            return np.zeros(np.shape(state[param]))
        if isinstance(total, Element):
            if isinstance(state.get(param), np.ndarray):  # into an array of zeros
                return total.into(np.zeros(np.shape(state[param])))
            assert length, (n.id, total)
            return total.into([0.0] * length)
        return total

    def loop(c, head):
        text = g.node(head).label[1]          # for i in reversed(range(n))
        target, iterable = text[4:].split(" in ", 1)
        adjoints = {e.label.split(" ← ")[0]: value(e) for e in ins.get(head, [])
                    if e.kind == "adjoint"}
        back = [e for e in ins.get(head, []) if e.kind == "carry"]
        heads[head] = {}
        for e in g.edges:  # an adjoint no edge brings in starts at 0
            if e.src == head and e.kind == "adjoint":
                adjoints.setdefault(var_of(e.label), 0.0)
        for i in eval(iterable, env_of(head, ("read", "pop"))):
            heads[head] = dict(adjoints)
            heads[head][target] = i
            enter(c)
            run_body(c, head)
            old = heads[head]
            for e in back:  # all at once, from the iteration's values
                reset, zero, _ = e.label.partition(" = 0 → ")
                if zero:  # ``dx = 0 → previous iteration``
                    adjoints[reset] = 0.0
                    continue
                now = old[var_of(e.label)] if e.src == head else value(e)
                name, plus, _ = e.label.partition(" += ")
                if plus:
                    adjoints[name] = adjoints.get(name, 0.0) + now
                else:
                    adjoints[e.label.split(" → ")[0].split(" ← ")[0]] = now
        heads[head] = adjoints

    def run_body(c, head):
        for x in items(c):
            if x == head:
                continue
            if isinstance(x, graph.Cluster):
                run(graph.Cluster("", "", [], [x]))
            else:
                node(g.node(x))

    def enter(c):
        """Pop the tapes ``c`` is the innermost region around all readers of
        (once per iteration for a loop's cluster): a tape pushed inside a
        forward branch side is popped only when its reverse side runs; one
        pushed every iteration, every iteration, though one side reads it."""
        for t in pops.get(id(c), []):
            popped[t] = stacks[t].pop()

    def decided(head):
        """The side the recorded decision took: ``then`` where the head's test
        (``if t3``, ``if not (t5 and (not t6 and t7 or t6))``), without its
        ``not``, held. A decision the forward pass did not record (``t7``
        where ``t6`` held) is never read: ``and``/``or`` stop before it."""
        test = ast.parse(g.node(head).label[1].removeprefix("if "), mode="eval").body
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        env = dict(names)
        for e in ins[head]:
            if e.src in out or e.src in heads or e.src in stacks or e.label in state:
                env[e.label.removeprefix("pop ")] = value(e)
        return "then" if eval(ast.unparse(test), env) else "else"

    def branch(c, head):
        taken = decided(head)
        enter(c)
        for x in items(c):
            if isinstance(x, graph.Cluster):
                if x.label == taken:
                    enter(x)
                    run(x)
            elif x != head:  # a φ: the taken side's contribution, or nothing
                out[x] = sum(value(e) for e in ins.get(x, []) if e.label.startswith(taken + ":"))

    run(reverse)
    return {n.id: out[n.id] for n in g.nodes if n.kind == "grad"}


def check(fn, args: list, wrt: list[int] | None = None) -> None:
    """Draw ``fn``'s reverse sweep, run it at ``args`` and compare the sinks'
    gradients with central finite differences, for the parameters ``wrt``
    (by default each float or list of floats)."""
    if wrt is None:
        wrt = [i for i, a in enumerate(args) if not isinstance(a, int)]
    params = list(inspect.signature(fn).parameters)
    lengths = {params[i]: len(a) for i, a in enumerate(args) if isinstance(a, (list, tuple))}
    lengths = lengths or None
    func, code = api.gradient_code(fn, tuple(wrt), None, lengths)
    g = graph_backward.combined(func, code)
    state, names = forward_state(fn, args, tuple(wrt), lengths)
    got = run_reverse(g, state, {"math": math, **names})
    flat = [x for i in wrt for x in (args[i] if isinstance(args[i], (list, tuple)) else [args[i]])]

    def flat_fn(*xs):
        it = iter(xs)
        call = [a if i not in wrt else (type(a)(next(it) for _ in a)
                                        if isinstance(a, (list, tuple)) else next(it))
                for i, a in enumerate(args)]
        return fn(*call)

    want = fd_gradient(flat_fn, flat, list(range(len(flat))))
    grads = []
    for i in wrt:
        sink = got[f"grad_{func.params[i].value.name}"]
        if isinstance(args[i], (list, tuple)):
            assert isinstance(sink, list) and len(sink) == len(args[i]), (i, sink)
            grads += sink
        else:
            assert not isinstance(sink, (list, dict)), (i, sink)
            grads.append(sink)
    assert len(grads) == len(want), (grads, want)
    assert all(close(a, b) for a, b in zip(grads, want)), (grads, want)


def check_arrays(fn, args: list, wrt: list[int]) -> None:
    """:func:`check` for NumPy code: each sink against elementwise central
    differences (tests/array_oracle.py), with the argument's shape."""
    import array_oracle

    func, code = api.gradient_code(fn, tuple(wrt), None, None)
    g = graph_backward.combined(func, code)
    state, names = forward_state(fn, args, tuple(wrt), None)
    got = run_reverse(g, state, {"math": math, "np": np, **names})
    for i in wrt:
        sink = got[f"grad_{func.params[i].value.name}"]
        assert np.shape(sink) == np.shape(args[i]), (i, np.shape(sink))
        np.testing.assert_allclose(np.asarray(sink, dtype=np.float64),
                                   array_oracle.fd_gradient(fn, args, i), rtol=1e-5, atol=1e-7,
                                   err_msg=f"gradient with respect to argument {i}")
