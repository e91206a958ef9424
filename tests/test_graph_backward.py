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
import os

import numpy as np
import pytest

import s2s_ad
from s2s_ad import api, graph, graph_backward, ir
from s2s_ad.errors import S2SError

import calls_loops_src
import calls_src
import cf_programs
import dotcheck
import graph_run
import graph_src
import horner
import logistic_map
import numpy_loops_src
from array_oracle import make_function, rand
from graph_check import check_with_graphviz, kinds, labels


RNG = np.random.default_rng(11)


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
    assert labels(dot, head)[1:] == ["for i in reversed(range(n))", "iterations last to first"]
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
    # the targets say which item of split_bwd's result each edge out of it carries
    assert labels(dot, call)[1:] == ["∂split/∂(x, y)",
                                     "dx_1, dt1 = split_bwd(split_1_tape, (dp, dq))", "line 93"]
    tapes = {labels(dot, n)[1]: n for n in dot.nodes if k[n] == "tape"}
    assert (tapes["tape split_1_tapes"], call, "pop split_1_tape") in edges_of(dot, TAPE)
    (fwd_call,) = [n for n in dot.nodes if k[n] == "op" and labels(dot, n)[1] == "call split"]
    assert (fwd_call, tapes["tape split_1_tapes"], "push split_1_tape") in edges_of(dot, TAPE)
    assert sorted(lab for a, b, lab in edges_of(dot, ADJ) if b == call) == ["dp", "dq"]
    head = next(n for n in dot.nodes if k[n] == "control" and labels(dot, n)[1].startswith("for i in reversed"))
    assert sorted(lab for a, b, lab in edges_of(dot, CARRY) if b == head) == ["ds += dt1", "dx += dx_1"]


def test_a_numpy_loop_tapes_what_it_reads_and_reads_a_shape_from_its_source():
    text = s2s_ad.graph_dot(graph_src.array_loop, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    assert sorted(labels(dot, n)[1] for n in dot.nodes if k[n] == "tape") == [
        "tape h_tape", "tape t2_tape"]  # t1's shape is never asked: t2 has it
    # t3 = 0.5 * h is read for its shape only: from h, not recomputed
    assert not [n for n in dot.nodes if k[n] == "recompute"]
    reverse = cluster_named(dot, "reverse of for _ in range(k) · line 100")
    assert {labels(dot, n)[1] for n in reverse if k[n] == "bwd"} >= {
        "∂np.tanh(t1)/∂t1", "∂(W @ h)/∂W", "∂(W @ h)/∂h"}


def test_a_numpy_loop_recomputes_a_cheap_value():
    f = make_function("def array_loop_square(W, x, k: int):\n    h = x\n"
                      "    for _ in range(k):\n        h = np.tanh(W @ h) + 0.5 * h * h\n"
                      "    return np.sum(h * h)\n", "array_loop_square")
    text = s2s_ad.graph_dot(f, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    assert sorted(labels(dot, n)[1] for n in dot.nodes if k[n] == "tape") == [
        "tape h_tape", "tape t2_tape"]
    again = {labels(dot, n)[2]: n for n in dot.nodes if k[n] == "recompute"}
    assert sorted(again) == ["t3 = 0.5 * h", "t4 = t3 * h"]
    assert [lab for a, b, lab in edges_of(dot, TAPE) if b == again["t3 = 0.5 * h"]] == ["pop h"]
    reverse = cluster_named(dot, "reverse of for _ in range(k) · line 3")
    assert again["t3 = 0.5 * h"] in reverse


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
        tree = ast.parse(text)  # an expression, ``dx[i] += g`` into one element, or a call
        if isinstance(tree.body[0], ast.Assign):  # ``dx_1, dt1 = split_bwd(...)``: reads its value
            tree = ast.Expression(tree.body[0].value)
        added_to = tree.body[0].target.value if isinstance(tree, ast.Module) and \
            isinstance(tree.body[0], ast.AugAssign) else None
        called = {id(c.func) for c in ast.walk(tree) if isinstance(c, ast.Call)}
        called |= {id(a.value) for a in ast.walk(tree) if isinstance(a, ast.Attribute)}
        names = {x.id for x in ast.walk(tree) if isinstance(x, ast.Name)
                 and id(x) not in called and x is not added_to}
        got = {lab.removeprefix("pop ") for a, b, lab in edges_of(dot) if b == n}
        missing = names - got
        assert not missing, (n, text, got)


@pytest.mark.parametrize("fn, lengths", _control_flow_functions())
def test_nodes_are_numbered_in_the_order_the_sweep_runs(fn, lengths):
    """A node reads only nodes numbered before it (the dashed edges back to a
    reverse loop's head aside): a Σ is made before the node that reads it,
    even when the node is a loop's head or a branch reads it."""
    dot = dotcheck.parse(s2s_ad.graph_dot(fn, backward=True, lengths=lengths))

    def number(n):
        return int(n[5:]) if n.startswith("node_") else None

    for a, b, e in dot.edges:
        if e.get("style") in ("invis", "dotted") or e.get("color") == CARRY:
            continue
        if number(a) is not None and number(b) is not None:
            assert number(a) < number(b), (a, b, e["label"])


def test_a_sum_both_sides_of_a_branch_read_is_made_before_the_branch():
    """m = x if x > y else y; m * m: dm sums two contributions, and either
    side of the reverse branch hands it on. Made inside the then side, the Σ
    would look as if the else side went without it."""
    dot = dotcheck.parse(s2s_ad.graph_dot(cf_programs.ternary, backward=True))
    k = kinds(dot)
    (total,) = [n for n in dot.nodes if k[n] == "sum" and labels(dot, n)[2] == "dm"]
    box = cluster_named(dot, "reverse of x if x > y else y · line 46")
    assert total not in box
    phis = sorted(labels(dot, b)[1] for a, b, lab in edges_of(dot, ADJ) if a == total)
    assert phis == ["φ dx", "φ dy"]


def test_a_carried_adjoint_from_an_inner_head_or_a_call_names_what_it_carries(pairs):
    """``dacc = dacc_1`` after an inner reverse loop, ``dx_1 = dx_1_1`` after a
    call: the edge back to the head says which of the source's values it is."""
    dot = dotcheck.parse(s2s_ad.graph_dot(cf_programs.triangular_reassign, wrt=("x", "y"),
                                          backward=True))
    outer = [n for n in cluster_named(dot, "reverse of for i in range(n) · line 141")
             if labels(dot, n)[1].startswith("for i")]
    assert sorted(lab for a, b, lab in edges_of(dot, CARRY) if b == outer[0]) == [
        "dacc ← dacc_1 → previous iteration", "dx += dacc", "dy → previous iteration"]
    dot = dotcheck.parse(s2s_ad.graph_dot(cf_programs.call_in_loop, wrt="x", backward=True))
    k = kinds(dot)
    (call,) = [n for n in dot.nodes if k[n] == "bwd"]
    assert labels(dot, call)[2] == "dx_1_1, = _helper_bwd(x_2_tape, dx_1)"
    assert [lab for a, b, lab in edges_of(dot, CARRY) if a == call] == [
        "dx_1 ← dx_1_1 → previous iteration"]


def test_an_adjoint_a_call_adds_to_zeros_names_the_item_the_call_hands_out(pairs):
    """``db = zeros; db_1, da = h_bwd(...); db = db + db_1`` before a loop
    reading ``db``: every adjoint edge out of a call node names an item the
    call hands out (``db ← db_1``; it was ``db``), and the drawn sweep, run
    node by node, gives grad's gradient."""
    fn = graph_src.call_before_indexed_loop
    args = [rand(RNG, (3,)), rand(RNG, (3,)), 0.7]
    dot = dotcheck.parse(s2s_ad.graph_dot(fn, backward=True))
    k = kinds(dot)
    calls = {n: labels(dot, n)[2].split(" = ")[0].split(", ") for n in dot.nodes
             if k[n] == "bwd" and "_bwd(" in labels(dot, n)[2]}
    out = [(a, lab) for a, b, lab in edges_of(dot, ADJ) + edges_of(dot, CARRY) if a in calls]
    assert ("db ← db_1" in [lab for _, lab in out]), out
    for a, lab in out:
        # (the variable an edge names, read as tests/graph_run.py reads it)
        assert lab.split(" ← ")[-1].split(" += ")[-1].split(" → ")[0] in calls[a], (lab, calls[a])
    func, code = api.gradient_code(fn, None, None, None)
    state, names = graph_run.forward_state(fn, args, None, None)
    got = graph_run.run_reverse(graph_backward.combined(func, code), state, {"np": np, **names})
    want = s2s_ad.grad(fn, wrt=None)(*args)
    for name, w in zip(("a", "b", "s"), want):
        np.testing.assert_allclose(got[f"grad_{name}"], w, rtol=1e-9)


GUARDED = [(graph_src.root_in_one_arm, c) for c in (1.0, -1.0)] + \
    [(graph_src.root_in_other_arm, c) for c in (1.0, -1.0)] + \
    [(graph_src.root_in_inner_arm, c) for c in (1.0, -0.5, -2.0)]


@pytest.mark.parametrize("fn, c", GUARDED, ids=[f"{f.__name__}{c}" for f, c in GUARDED])
def test_running_the_graph_of_a_guarded_backward_gives_the_gradient(fn, c):
    """A value read in one arm only: its producer's backward runs under the
    sweep's own branch (``if not t3: dt2 = dr / (2 * r) else: dt2 = 0.0``) and
    ``dt2`` is read after it. The drawing lost ``dt2`` there (no edge into the
    node reading it): the φ of an adjoint both sides set is drawn now."""
    graph_run.check(fn, [0.7, c], [0])


def test_the_sides_of_a_negated_guard_are_named_by_the_recorded_decision():
    """``if not t3: dt2 = … else: dt2 = 0.0``: the first side runs where t3
    was false (``else``), the second where it held (``then``); both were
    named ``else``. The φ of dt2 takes the derivative from the ``else`` side."""
    func, code = api.gradient_code(graph_src.root_in_one_arm, (0,), None, None)
    g = graph_backward.combined(func, code)

    def boxes(c):
        yield c
        for sub in c.clusters:
            yield from boxes(sub)

    (guard,) = [c for c in boxes(g.clusters[-1])
                if any(g.node(n).label[1] == "if not t3" for n in c.nodes)]
    assert [side.label for side in guard.clusters] == ["else", "then"]
    (phi,) = [n for n in guard.nodes if g.node(n).label[1] == "φ dt2"]
    assert [e.label for e in g.edges if e.dst == phi] == ["else: dr / (2.0 * r)"]


def test_a_list_gradient_built_from_items_takes_each_item_of_the_lists_adjoint():
    """max_in_loop returns [dxs[0] + dm, dxs[1], ...]: the edge into item 0
    of the sink is dxs[0], not the whole list dxs."""
    dot = dotcheck.parse(s2s_ad.graph_dot(cf_programs.max_in_loop, backward=True,
                                          lengths={"xs": 3}))
    assert labels(dot, "grad_xs")[1] == "= [dxs[0] + dm, dxs[1], dxs[2]]"
    assert sorted(lab for a, b, lab in edges_of(dot, ADJ) if b == "grad_xs") == [
        "[0] dm", "[0] dxs[0]", "[1] dxs[1]", "[2] dxs[2]"]


def test_the_node_numbers_docs_graphs_md_talks_about_for_a_loop():
    """docs/graphs.md walks through the backward graph of examples/logistic_map.py
    by node number, with the commands that drew its pictures."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "graphs.md"), encoding="utf-8") as f:
        page = f.read()
    for command in ["s2s-ad graph examples/logistic_map.py:logistic -o docs/img/loop_forward.png",
                    "s2s-ad graph examples/logistic_map.py:logistic --backward --wrt x,r "
                    "-o docs/img/loop_backward.png"]:
        assert f"`{command}`" in page
    text = s2s_ad.graph_dot(logistic_map.logistic, wrt=("x", "r"), backward=True)
    dot = dotcheck.parse(text)
    assert dot.attrs["label"].startswith("forward and reverse sweep of logistic (logistic_map.py:13)")
    k = kinds(dot)
    assert labels(dot, "node_4")[1:] == ["for i in reversed(range(n))", "iterations last to first"]
    assert labels(dot, "node_8")[1:3] == ["∂(t1 * t2)/∂t1", "dx_1 * t2"]
    assert k["node_13"] == "sum" and labels(dot, "node_13")[1:] == ["Σ", "dx_1"]
    assert [labels(dot, n)[1] for n in dot.nodes if k[n] == "tape"] == [
        "tape x_1_tape", "tape t1_tape", "tape t2_tape"]
    assert ("node_13", "node_4", "dx_1 → previous iteration") in edges_of(dot, CARRY)
    assert ("node_11", "node_4", "dr += dt1 * x_1") in edges_of(dot, CARRY)


# -- running the drawn reverse sweep ------------------------------------------------
# graph_run.check draws the function, runs the drawing node by node (a reverse
# loop's head runs its iterations, pops what its body reads and passes the
# adjoints back along its dashed edges) and compares the gradients reaching the
# sinks with central finite differences.

@pytest.mark.parametrize("fn, args", [
    (graph_src.power, [1.3, 4]), (graph_src.power, [1.3, 0]),
    (cf_programs.logistic, [0.3, 2.9, 4]),
    (graph_src.damped, [0.7, 1.6, 5]), (graph_src.damped, [1.4, 0.8, 3]),
    (graph_src.early_exit, [0.9, 8]), (graph_src.early_exit, [0.2, 3]),
    (cf_programs.nested_loops, [0.8, 4]), (cf_programs.two_carried_swap, [0.4, 0.9, 5]),
    (cf_programs.newton_sqrt, [2.5]), (cf_programs.for_range_negative_step, [0.6, 5]),
])
def test_running_a_looping_graph_gives_the_gradient(fn, args):
    graph_run.check(fn, args)


@pytest.mark.parametrize("name", list(cf_programs.PROGRAMS))
def test_running_the_graph_of_every_control_flow_program_gives_the_gradient(name):
    """Loops, branches, early exits, while loops, list parameters: each
    program of the control-flow corpus at the points test_control_flow.py
    checks the generated gradient at."""
    fn, args, wrt = cf_programs.PROGRAMS[name]
    graph_run.check(fn, args, wrt)


CALLS = [
    (calls_loops_src.call_in_loop, [0.7, 3]), (calls_loops_src.call_in_branch, [0.7, 0.3]),
    (calls_loops_src.call_in_branch, [0.2, 0.9]), (calls_loops_src.tuple_call_in_loop, [0.4, 3]),
    (calls_loops_src.looping_helper_in_loop, [0.3, 3]), (calls_loops_src.call_in_while, [0.4]),
    (calls_loops_src.call_in_nested_loops, [0.3, 3]), (calls_loops_src.call_after_break, [1.1, 5]),
    (calls_loops_src.call_after_break, [0.2, 5]), (cf_programs.call_in_loop, [0.3, 3]),
    (graph_src.tuple_in_loop, [0.4, 3]),
    # straight-line code calling helpers: the same call nodes
    (calls_src.twice_sq, [0.7, 1.3]), (calls_src.nested, [0.4, 0.9]), (calls_src.same_arg, [0.8]),
    (graph_src.twice_item, [0.3, 1.2]),
]


@pytest.mark.parametrize("fn, args", CALLS, ids=[f"{f.__name__}{a}" for f, a in CALLS])
def test_running_a_graph_calling_helpers_gives_the_gradient(fn, args):
    """A call node runs the callee's backward pass it names on the adjoints
    and tape its edges bring; its targets (``dx_1, dt1 = split_bwd(...)``) say
    which item each edge out of it carries. A helper that loops itself
    (``horner``) pops the tapes inside its tape."""
    graph_run.check(fn, args)


@pytest.mark.parametrize("fn, args", [
    (graph_src.horner, [[1.0, -2.0, 0.5], 0.8]), (graph_src.horner, [(0.3, 1.5, -0.7, 2.0), -1.1]),
    (horner.horner, [[1.0, -2.0, 0.5, 3.0], 0.8]), (horner.horner, [[2.5], 0.4]),
    (graph_src.norm2, [[0.3, -1.2, 2.0], 0.7]),
])
def test_running_the_graph_of_a_list_parameter_gives_a_list_gradient(fn, args):
    """``dcs[k] += ds`` is a contribution to one element of the list's
    adjoint; the reverse loop's head accumulates them and the sink of the
    list parameter collects one item per item leaf."""
    graph_run.check(fn, args)


@pytest.mark.parametrize("fn, args, wrt", [
    (numpy_loops_src.power_iteration, lambda: [rand(RNG, (3, 3)), rand(RNG, (3,)), 4], [0, 1]),
    (numpy_loops_src.branchy, lambda: [rand(RNG, (2, 3)), 0.7], [0, 1]),
    (numpy_loops_src.branchy, lambda: [rand(RNG, (2, 3)), -0.7], [0]),
    (numpy_loops_src.indexed_sum, lambda: [rand(RNG, (5,)), rand(RNG, (5,)), 4], [0, 1]),
    (numpy_loops_src.row_norms, lambda: [rand(RNG, (3, 4)), rand(RNG, (4,))], [0, 1]),
    (numpy_loops_src.oscillator, lambda: [rand(RNG, (3,)), rand(RNG, (3,)), 5], [0, 1]),
    (numpy_loops_src.until_small, lambda: [rand(RNG, (3,), 0.5, 1.0)], [0]),
    (numpy_loops_src.rows_by_shape, lambda: [rand(RNG, (4, 3)), rand(RNG, (3,))], [0, 1]),
    (numpy_loops_src.enumerate_zip_rows,
     lambda: [rand(RNG, (4, 3)), rand(RNG, (3, 3)), 0.7], [0, 1, 2]),
    (numpy_loops_src.assigns_in_loop, lambda: [rand(RNG, (4,)), 4], [0]),
    (numpy_loops_src.assigns_over_a_copy, lambda: [rand(RNG, (4,)), 4], [0]),
    (numpy_loops_src.recurrence, lambda: [rand(RNG, (5,)), 0.8, 5], [0, 1]),
    (numpy_loops_src.rnn_states,
     lambda: [rand(RNG, (3, 3)), rand(RNG, (3,)), rand(RNG, (4,)), 4], [0, 1, 2]),
    (numpy_loops_src.branch_assign, lambda: [rand(RNG, (4,)), 0.6], [0, 1]),
    (numpy_loops_src.branch_assign, lambda: [rand(RNG, (4,)), -0.6], [0, 1]),
    (graph_src.array_loop, lambda: [rand(RNG, (3, 3)), rand(RNG, (3,)), 3], [0, 1]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_running_the_graph_of_a_numpy_loop_gives_the_gradient(fn, args, wrt):
    """Arrays: element adjoints added (``dx[i] += g``, ``db[t14] += dt15``) or
    replaced where the forward pass overwrote the element (``dy[i] = 0.0``),
    slices and rows included."""
    graph_run.check_arrays(fn, args(), wrt)


def test_an_overwritten_elements_adjoint_is_drawn_as_set_not_added_to():
    """y[i] = x[i] * 2 in a loop over y = np.copy(x): the reverse sweep sets
    dy[i] = 0.0 (the element's old value does not reach the result). Drawn as
    ``+= 0.0`` it would say the opposite, and a branch writing it would count
    dy twice."""
    dot = dotcheck.parse(s2s_ad.graph_dot(numpy_loops_src.assigns_over_a_copy, backward=True))
    (node,) = [n for n in dot.nodes if labels(dot, n)[2:3] == ["dy[i] = 0.0"]]
    assert labels(dot, node)[1] == "∂assign(y_1, i, t2)/∂y_1"
    assert sorted(lab for a, b, lab in edges_of(dot) if b == node) == ["dy", "i"]
    assert [lab for a, b, lab in edges_of(dot, CARRY) if a == node] == ["dy → previous iteration"]
    dot = dotcheck.parse(s2s_ad.graph_dot(numpy_loops_src.branch_assign, backward=True))
    k = kinds(dot)
    (phi,) = [n for n in dot.nodes if k[n] == "control" and labels(dot, n)[1] == "φ dy"]
    # each side's dy holds what dy held before the branch: nothing adds it again after
    assert not [b for a, b, lab in edges_of(dot, ADJ) if a == phi and k[b] == "sum"]
