"""`s2s-ad graph --backward` for loops and branches: reverse loops and
branches as clusters, the tape as nodes, carried adjoints as edges back to a
reverse loop's head.

The DOT text is parsed by the strict parser (tests/dotcheck.py) and, where
Graphviz is installed, by ``dot``. Every backward node of every loop and
branch in the test corpora must get each name its contribution reads on an
edge; and the drawn reverse loops are *run*: a head runs its iterations,
pops from the tapes its body reads and passes the adjoints back along its
dashed edges, each node evaluated from its incoming edges only, and the
gradients reaching the sinks must match central finite differences.
"""

from __future__ import annotations

import ast
import inspect
import math
import sys

import pytest

import s2s_ad
from s2s_ad import api, graph, ir, loader, reverse
from s2s_ad.errors import S2SError

import calls_loops_src
import cf_programs
import dotcheck
import graph_src
import numpy_loops_src
from graph_check import check_with_graphviz, kinds, labels
from oracle import close, fd_gradient


# -- the reverse sweep of loops and branches ------------------------------------

def edges_of(dot, kind_color: str | None = None):
    """(src, dst, label) of every edge, or of those drawn in one colour."""
    return [(a, b, e["label"].strip()) for a, b, e in dot.edges
            if e.get("style") != "invis" and (kind_color is None or e.get("color") == kind_color)]


TAPE = graph.EDGE_STYLE["push"]["color"]
ADJ = graph.EDGE_STYLE["adjoint"]["color"]
CARRY = graph.EDGE_STYLE["carry"]["color"]


def cluster_named(dot, label: str) -> set[str]:
    (nodes,) = [nodes for attrs, nodes in dot.subgraphs.values() if attrs.get("label") == label]
    return nodes


def test_a_loop_has_a_reverse_cluster_a_tape_and_carried_adjoints():
    """for i in range(n): s = s * x. The forward loop pushes s on its tape;
    the reverse loop pops it; ds is carried from one iteration to the one
    before, dx is kept across iterations; a single contribution needs no Σ."""
    text = s2s_ad.graph_dot(graph_src.power, wrt="x", backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    count = {kind: sum(1 for n in dot.nodes if k[n] == kind) for kind in set(k.values())}
    assert count == {"param": 2, "const": 3, "op": 1, "control": 2, "return": 1, "tape": 1,
                     "seed": 1, "bwd": 2, "grad": 1}
    reverse = cluster_named(dot, "reverse of for i in range(n) · line 51")
    (head,) = [n for n in reverse if k[n] == "control"]
    assert labels(dot, head)[1:] == ["for _ in range(n)", "iterations last to first"]
    bwd = {labels(dot, n)[1]: n for n in reverse if k[n] == "bwd"}
    assert {name: labels(dot, n)[2:] for name, n in bwd.items()} == {
        "∂(s * x)/∂x": ["ds * s", "line 52"], "∂(s * x)/∂s": ["ds * x", "line 52"]}
    (tape,) = [n for n in dot.nodes if k[n] == "tape"]
    assert labels(dot, tape)[1:] == ["tape s_tape", "s, one per iteration"]
    assert dot.parent[tape] == "cluster_tape"
    (fwd_head,) = [n for n in dot.nodes if k[n] == "control" and n != head]
    assert edges_of(dot, TAPE) == [(fwd_head, tape, "push s"), (tape, bwd["∂(s * x)/∂x"], "pop s")]
    (seed_leaf,) = [n for n in dot.nodes if k[n] == "seed"]
    assert sorted(edges_of(dot, ADJ)) == sorted([
        (seed_leaf, head, "ds"), (head, bwd["∂(s * x)/∂x"], "ds"), (head, bwd["∂(s * x)/∂s"], "ds"),
        (head, "grad_x", "dx")])
    assert sorted(edges_of(dot, CARRY)) == sorted([
        (bwd["∂(s * x)/∂x"], head, "dx += ds * s"), (bwd["∂(s * x)/∂s"], head, "ds → previous iteration"),
        ("node_1", fwd_head, "s_1 → next s")])
    # the forward pass is drawn above the tape, the tape above the reverse sweep
    assert ("return", tape) in [(a, b) for a, b, e in dot.edges if e.get("style") == "invis"]


def test_a_carried_adjoint_set_by_two_uses_sums_them_each_iteration():
    """x = r * x * (1.0 - x): x is read twice in the body, so the adjoint
    carried to the iteration before is a Σ of two contributions."""
    dot = dotcheck.parse(s2s_ad.graph_dot(cf_programs.logistic, wrt=("x", "r"), backward=True))
    k = kinds(dot)
    reverse = cluster_named(dot, "reverse of for i in range(n) · line 118")
    (total,) = [n for n in dot.nodes if k[n] == "sum"]
    assert total in reverse and labels(dot, total)[1:] == ["Σ", "dx_1"]
    into = sorted(lab for a, b, lab in edges_of(dot, ADJ) if b == total)
    assert into == ["-dt2", "dt1 * r"]
    (head,) = [n for n in reverse if k[n] == "control"]
    assert (total, head, "dx_1 → previous iteration") in edges_of(dot, CARRY)
    tapes = sorted(labels(dot, n)[1] for n in dot.nodes if k[n] == "tape")
    assert tapes == ["tape t1_tape", "tape t2_tape", "tape x_1_tape"]
    # one push per tape, one pop per reverse node that reads the value
    assert sorted(lab for a, b, lab in edges_of(dot, TAPE)) == [
        "pop t1", "pop t2", "pop x_1", "push t1", "push t2", "push x_1"]
    # after the loop, x's adjoint is what the carried one holds
    assert (head, "grad_x", "dx_1") in edges_of(dot, ADJ)


def test_a_branch_reverses_under_the_recorded_decision_and_joins_in_phi_nodes():
    text = s2s_ad.graph_dot(graph_src.clipped, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    box = cluster_named(dot, "reverse of if x > y · line 64")
    (head,) = [n for n in box if k[n] == "control" and labels(dot, n)[1] == "if t1"]
    assert labels(dot, head)[2] == "as decided at line 64"
    (decided,) = [a for a, b, lab in edges_of(dot) if b == head]
    assert labels(dot, decided)[1:] == ["gt", "t1 · line 64"]  # the forward comparison
    sides = {attrs["label"]: nodes for attrs, nodes in dot.subgraphs.values()
             if attrs["label"] in ("then", "else") and nodes <= box}
    assert sorted(labels(dot, n)[1] for n in sides["then"]) == ["∂(x * y)/∂x", "∂(x * y)/∂y"]
    phis = {labels(dot, n)[1]: n for n in box if labels(dot, n)[1].startswith("φ")}
    assert sorted(phis) == ["φ dx", "φ dy"]
    # dy: the else side reads y twice; its two contributions meet in a Σ inside that side
    sums = {labels(dot, n)[2]: n for n in dot.nodes if k[n] == "sum"}
    assert sorted(sums) == ["dx", "dy"]
    assert sums["dy"] in sides["else"]
    assert sorted(lab for a, b, lab in edges_of(dot, ADJ) if b == phis["φ dy"]) == [
        "else: dy", "then: dz_2 * x"]
    # dx: out = z_2 * x's contribution outside the branch, plus the branch's
    assert sorted(lab for a, b, lab in edges_of(dot, ADJ) if b == sums["dx"]) == [
        "dout * z_2", "φ dx"]


def test_a_helper_returning_a_tuple_inside_a_loop_pops_its_tape():
    text = s2s_ad.graph_dot(graph_src.tuple_in_loop, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    (call,) = [n for n in dot.nodes if k[n] == "bwd" and "split_bwd" in labels(dot, n)[2]]
    assert labels(dot, call)[1:] == ["∂split/∂(x, y)", "split_bwd(split_1_tape, (dp, dq))",
                                     "line 93"]
    tapes = {labels(dot, n)[1]: n for n in dot.nodes if k[n] == "tape"}
    assert (tapes["tape split_1_tapes"], call, "pop split_1_tape") in edges_of(dot, TAPE)
    (fwd_call,) = [n for n in dot.nodes if k[n] == "op" and labels(dot, n)[1] == "call split"]
    assert (fwd_call, tapes["tape split_1_tapes"], "push split_1_tape") in edges_of(dot, TAPE)
    assert sorted(lab for a, b, lab in edges_of(dot, ADJ) if b == call) == ["dp", "dq"]
    head = next(n for n in dot.nodes if k[n] == "control" and labels(dot, n)[1].startswith("for _"))
    assert sorted(lab for a, b, lab in edges_of(dot, CARRY) if b == head) == ["ds += dt1", "dx += dx_1"]


def test_a_numpy_loop_recomputes_a_cheap_value_and_tapes_the_rest():
    text = s2s_ad.graph_dot(graph_src.array_loop, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    assert sorted(labels(dot, n)[1] for n in dot.nodes if k[n] == "tape") == [
        "tape h_tape", "tape t1_tape", "tape t2_tape"]
    (again,) = [n for n in dot.nodes if k[n] == "recompute"]
    assert labels(dot, again)[1:] == ["recompute", "t3 = 0.5 * h", "line 101"]
    assert [(lab) for a, b, lab in edges_of(dot, TAPE) if b == again] == ["pop h"]
    reverse = cluster_named(dot, "reverse of for _ in range(k) · line 100")
    assert again in reverse
    assert {labels(dot, n)[1] for n in reverse if k[n] == "bwd"} >= {
        "∂np.tanh(t1)/∂t1", "∂(W @ h)/∂W", "∂(W @ h)/∂h"}


def _control_flow_functions():
    """The loops and branches of the test corpora that s2s-ad differentiates
    as written (lists of length 3; the corpora also hold refusals)."""
    out = []
    for mod in (cf_programs, calls_loops_src, numpy_loops_src, graph_src):
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if fn.__module__ != mod.__name__:
                continue
            for lengths in (None, {p: 3 for p in inspect.signature(fn).parameters}):
                try:
                    if ir.has_control_flow(api.lower(fn, lengths)):
                        s2s_ad.gradient_source(fn, None, lengths=lengths)
                        out.append(pytest.param(fn, lengths, id=f"{mod.__name__}.{name}"))
                    break
                except S2SError:
                    continue
    return out


@pytest.mark.parametrize("fn, lengths", _control_flow_functions())
def test_every_backward_node_gets_each_name_its_contribution_reads(fn, lengths):
    """Wiring: a backward node's contribution (``ds * s``) reads names; each
    arrives on an edge into it (an adjoint, a forward value, a pop)."""
    dot = dotcheck.parse(s2s_ad.graph_dot(fn, backward=True, lengths=lengths))
    k = kinds(dot)
    for n in dot.nodes:
        if k[n] not in ("bwd", "recompute"):
            continue
        text = labels(dot, n)[2]
        if k[n] == "recompute":
            text = text.split(" = ", 1)[1]
        tree = ast.parse(text)  # an expression, or ``dx[i] += g`` into one element
        added_to = tree.body[0].target.value if isinstance(tree.body[0], ast.AugAssign) else None
        called = {id(c.func) for c in ast.walk(tree) if isinstance(c, ast.Call)}
        called |= {id(a.value) for a in ast.walk(tree) if isinstance(a, ast.Attribute)}
        names = {x.id for x in ast.walk(tree) if isinstance(x, ast.Name)
                 and id(x) not in called and x is not added_to}
        got = {lab.removeprefix("pop ") for a, b, lab in edges_of(dot) if b == n}
        missing = names - got
        assert not missing, (n, text, got)


def test_the_node_numbers_docs_graphs_md_talks_about_for_a_loop():
    """docs/graphs.md walks through the logistic map's backward graph by node number."""
    dot = dotcheck.parse(s2s_ad.graph_dot(cf_programs.logistic, wrt=("x", "r"), backward=True))
    k = kinds(dot)
    assert labels(dot, "node_4")[1:] == ["for _ in range(n)", "iterations last to first"]
    assert labels(dot, "node_8")[1:3] == ["∂(t1 * t2)/∂t1", "dx_1 * t2"]
    assert k["node_13"] == "sum" and labels(dot, "node_13")[1:] == ["Σ", "dx_1"]
    assert [labels(dot, n)[1] for n in dot.nodes if k[n] == "tape"] == [
        "tape x_1_tape", "tape t1_tape", "tape t2_tape"]
    assert ("node_13", "node_4", "dx_1 → previous iteration") in edges_of(dot, CARRY)
    assert ("node_11", "node_4", "dr += dt1 * x_1") in edges_of(dot, CARRY)


# -- running the reverse sweep of a loop ----------------------------------------

def _forward_state(fn, args: list, lengths: dict | None):
    """Every local of the generated gradient when its reverse sweep starts:
    the forward values and the full tape lists (what the drawn reverse sweep
    reads; the graph's forward part is checked by the tests above)."""
    source = s2s_ad.gradient_source(fn, None, lengths=lengths)
    module = loader.load(source, f"run_{fn.__name__}")
    grad_fn = getattr(module, f"grad_{fn.__name__}")
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "# reverse sweep") + 2
    seen: dict = {}

    def trace(frame, event, arg):
        if frame.f_code is grad_fn.__code__:
            if event == "line" and frame.f_lineno >= start and not seen:
                seen.update({k: (list(v) if isinstance(v, list) else v)
                             for k, v in frame.f_locals.items()})
            return trace
        return None

    sys.settrace(trace)
    try:
        grad_fn(*args)
    finally:
        sys.settrace(None)
    return seen, vars(module)


def _run_reverse(g: graph.Graph, state: dict, names: dict) -> dict[str, float]:
    """Run the reverse part of a combined graph: a reverse loop's head runs its
    iterations, popping from the tapes its body reads and passing the carried
    adjoints back along its dashed edges; a reverse branch runs its taken side.
    Forward values come from ``state``; every backward node is evaluated from
    the values on its incoming edges only."""
    order = {n.id: i for i, n in enumerate(g.nodes)}
    ins: dict[str, list] = {}
    for e in g.edges:
        if e.kind not in ("order", "control", "push"):
            ins.setdefault(e.dst, []).append(e)
    out: dict[str, object] = {}
    heads: dict[str, dict] = {}     # a reverse loop's head -> its adjoints now
    popped: dict[str, object] = {}  # a tape node -> the value popped this iteration
    stacks = {n.id: list(state[n.label[1].split()[1]]) for n in g.nodes if n.kind == "tape"}
    (reverse,) = [c for c in g.clusters if c.name == "cluster_reverse"]

    def var_of(label):
        """The variable of the head an edge's label names: ``dx``, ``then: dx``,
        ``da ← db``, ``dx += dy``."""
        label = label.split(": ", 1)[-1].removeprefix("pop ")
        return label.split(" ← ")[-1].split(" += ")[-1]

    def value(e):
        if e.src in heads:
            return heads[e.src][var_of(e.label)]
        if e.src in stacks:
            return popped[e.src]
        if e.src in out:
            return out[e.src]
        return state[e.label]  # a forward value, as the forward pass left it

    def env_of(node_id, kinds=("adjoint", "read", "pop")):
        env = dict(names)
        for e in ins.get(node_id, []):
            if e.kind in kinds:
                env[e.label.removeprefix("pop ")] = value(e)
        return env

    def items(c):
        """``c``'s nodes and clusters in the order the sweep made them."""
        first = {id(s): min(order[n] for n in _all(s)) for s in c.clusters}
        both = [(order[n], n) for n in c.nodes] + [(first[id(s)], s) for s in c.clusters]
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
            out[n.id] = eval(text, env)
        elif n.kind in ("sum", "grad"):
            out[n.id] = sum(value(e) for e in ins.get(n.id, []))
        elif n.kind == "shared":
            (e,) = ins[n.id]
            out[n.id] = value(e)

    def loop(c, head):
        text = g.node(head).label[1]          # for i in reversed(range(n))
        target, iterable = text[4:].split(" in ", 1)
        adjoints = {e.label.split(" ← ")[0]: value(e) for e in ins.get(head, [])
                    if e.kind == "adjoint"}
        back = [e for e in ins.get(head, []) if e.kind == "carry"]
        tapes = {e.src for n in _direct(c) for e in ins.get(n, []) if e.src in stacks}
        heads[head] = {}
        for e in g.edges:  # an adjoint no edge brings in starts at 0
            if e.src == head and e.kind == "adjoint":
                adjoints.setdefault(e.label, 0.0)
        for i in eval(iterable, env_of(head, ("read",))):
            heads[head] = dict(adjoints)
            heads[head][target] = i
            for t in tapes:
                popped[t] = stacks[t].pop()
            run_body(c, head)
            old = heads[head]
            for e in back:  # all at once, from the iteration's values
                now = old[var_of(e.label)] if e.src == head else out[e.src]
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

    def _direct(c):
        """The nodes of ``c`` outside the loops nested in it."""
        out_ = list(c.nodes)
        for s in c.clusters:
            if not any(g.node(n).label[1].startswith("for") for n in s.nodes
                       if g.node(n).kind == "control"):
                out_ += _direct(s)
        return out_

    def branch(c, head):
        (e,) = [e for e in ins[head]]
        taken = "then" if value(e) else "else"
        for x in items(c):
            if isinstance(x, graph.Cluster):
                if x.label == taken:
                    run(x)
            elif x != head:  # a φ: the taken side's contribution, or nothing
                out[x] = sum(value(e) for e in ins.get(x, []) if e.label.startswith(taken + ":"))

    run(reverse)
    return {n.id: out[n.id] for n in g.nodes if n.kind == "grad"}


@pytest.mark.parametrize("fn, args, lengths", [
    (graph_src.power, [1.3, 4], None), (graph_src.power, [1.3, 0], None),
    (cf_programs.logistic, [0.3, 2.9, 4], None),
    (graph_src.damped, [0.7, 1.6, 5], None), (graph_src.damped, [1.4, 0.8, 3], None),
    (graph_src.early_exit, [0.9, 8], None), (graph_src.early_exit, [0.2, 3], None),
    (cf_programs.nested_loops, [0.8, 4], None), (cf_programs.two_carried_swap, [0.4, 0.9, 5], None),
    (cf_programs.newton_sqrt, [2.5], None), (cf_programs.for_range_negative_step, [0.6, 5], None),
])
def test_running_a_looping_graph_gives_the_gradient(fn, args, lengths):
    """The reverse loop's head runs the iterations, pops what its body reads,
    and passes the adjoints back along its dashed edges: the gradients
    reaching the sinks match central finite differences."""
    func = api.lower(fn, lengths)
    values, _ = api.resolve_wrt(func, None)
    g = graph.combined(func, reverse.transform(func, values))
    state, names = _forward_state(fn, args, lengths)
    got = _run_reverse(g, state, {"math": math, **names})
    floats = [i for i, a in enumerate(args) if not isinstance(a, int)]
    flat = [x for i in floats for x in (args[i] if isinstance(args[i], list) else [args[i]])]

    def flat_fn(*xs):
        it = iter(xs)
        call = [a if i not in floats else ([next(it) for _ in a] if isinstance(a, list)
                                            else next(it)) for i, a in enumerate(args)]
        return fn(*call)

    want = fd_gradient(flat_fn, flat, list(range(len(flat))))
    grads = []
    for i in floats:
        sink = got[f"grad_{func.params[i].value.name}"]
        grads += sink if isinstance(sink, list) else [sink]
    assert len(grads) == len(want) and all(close(a, b) for a, b in zip(grads, want)), (grads, want)
