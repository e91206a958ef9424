"""`s2s-ad graph`: the forward graph and the combined forward + reverse graph.

The DOT text is parsed by an independent strict parser (tests/dotcheck.py)
and, where Graphviz is installed, by ``dot`` itself. The combined graph is
also *run*: each reverse node evaluates the contribution in its label from the
values on its incoming edges only, and the gradients reaching the sinks must
match central finite differences. A mis-wired edge (say, a shared temporary's
adjoint taken from the wrong node) would change them.
"""

from __future__ import annotations

import math
import re
import shutil

import pytest

import s2s_ad
from s2s_ad import api, graph, graph_backward, ir, sweep
from s2s_ad.emit import loader
from s2s_ad.reverse import transform as reverse
from s2s_ad.cli import main

import dotcheck
from graph_check import check_with_graphviz, kinds, labels, working_dot
from oracle import close, fd_gradient
from seed_ggml import f as seed

import calls_src
import cf_programs
import graph_src
from graph_src import norm2, returns_tuple, reused, shared_temp, twice_item

SEED_FILE = "examples/seed_ggml.py:f"


# -- forward ------------------------------------------------------------------

def test_seed_forward_has_two_mul_nodes_and_two_leaves():
    text = s2s_ad.graph_dot(seed)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    ops = [n for n in dot.nodes if n.startswith("node_")]
    leaves = [n for n in dot.nodes if n.startswith("leaf_")]
    assert ops == ["node_0", "node_1"]
    assert [labels(dot, n)[1] for n in ops] == ["mul", "mul"]
    assert [labels(dot, n)[2] for n in ops] == ["b · line 9", "y · line 10"]
    assert [labels(dot, n)[1] for n in leaves] == ["a", "x"]
    assert set(dot.nodes) == {"leaf_0", "leaf_1", "node_0", "node_1", "return"}
    edges = [(a, b, e["label"].strip()) for a, b, e in dot.edges]
    assert sorted(edges) == sorted([("leaf_1", "node_0", "x"), ("leaf_1", "node_0", "x"),
                                    ("leaf_0", "node_1", "a"), ("node_0", "node_1", "b"),
                                    ("node_1", "return", "y")])
    assert dot.subgraphs == {}


def test_forward_constants_are_leaves_once_each():
    def f(x):
        y = 2.0 * x + 2.0
        return y * 3.0

    dot = dotcheck.parse(s2s_ad.graph_dot(f))
    leaves = {labels(dot, n)[1] for n in dot.nodes if n.startswith("leaf_")}
    assert leaves == {"x", "2.0", "3.0"}
    assert kinds(dot)["leaf_1"] == "const"
    assert sum(1 for n in dot.nodes if n.startswith("node_")) == 3


def test_forward_ignores_wrt_and_cli_says_so(capsys):
    assert main(["graph", SEED_FILE, "--wrt", "x"]) == 2
    assert "--backward" in capsys.readouterr().err


# -- combined -------------------------------------------------------------------

def test_seed_backward_for_x_sums_two_contributions_in_one_node():
    text = s2s_ad.graph_dot(seed, wrt="x", backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    bwd = [n for n in dot.nodes if k[n] == "bwd"]
    sums = [n for n in dot.nodes if k[n] == "sum"]
    assert [labels(dot, n)[1] for n in bwd] == ["∂(a * b)/∂b", "∂(x * x)/∂x (left operand)",
                                                "∂(x * x)/∂x (right operand)"]
    assert len(sums) == 1
    (total,) = sums
    assert labels(dot, total)[1:] == ["Σ", "dx"]
    into = [(a, e["label"].strip()) for a, b, e in dot.edges if b == total]
    assert into == [(bwd[1], "db * x"), (bwd[2], "db * x")]
    assert [(a, b) for a, b, _ in dot.edges if a == total] == [(total, "grad_x")]
    assert [n for n in dot.nodes if k[n] == "grad"] == ["grad_x"]
    assert [n for n in dot.nodes if k[n] == "seed"] == ["leaf_2"]
    assert dot.parent["leaf_2"] == "cluster_reverse" and dot.parent["node_0"] == "cluster_forward"


def test_seed_backward_numbering_matches_the_sweep():
    """node_4 and node_5 are the two derivatives of b = x * x, node_6 their sum."""
    dot = dotcheck.parse(s2s_ad.graph_dot(seed, wrt=("a", "x"), backward=True))
    named = {n: labels(dot, n)[1] for n in dot.nodes if n.startswith(("node_", "leaf_"))}
    assert named == {"leaf_0": "a", "leaf_1": "x", "node_0": "mul", "node_1": "mul",
                     "leaf_2": "dy = 1.0", "node_2": "∂(a * b)/∂a", "node_3": "∂(a * b)/∂b",
                     "node_4": "∂(x * x)/∂x (left operand)",
                     "node_5": "∂(x * x)/∂x (right operand)", "node_6": "Σ"}
    assert labels(dot, "node_4")[2] == labels(dot, "node_5")[2] == "db * x"
    # a single contribution goes straight on: da has no Σ node
    assert ("node_2", "grad_a") in [(a, b) for a, b, _ in dot.edges]
    # the forward values each derivative reads come from the forward nodes
    reads = sorted((a, b) for a, b, e in dot.edges if e.get("style") == "dashed")
    assert reads == [("leaf_0", "node_3"), ("leaf_1", "node_4"), ("leaf_1", "node_5"),
                     ("node_0", "node_2")]


def test_seed_golden(golden):
    golden("graph_seed_forward.dot", s2s_ad.graph_dot(seed))
    golden("graph_seed_backward.dot", s2s_ad.graph_dot(seed, wrt=("a", "x"), backward=True))


def _run(g: graph.Graph, func: ir.Function, args: list, names: dict | None = None
         ) -> dict[str, object]:
    """Evaluate a combined graph node by node, each from its incoming edges.
    A list argument fills its item leaves (``xs[0]``, ...); a gradient sink
    of a list parameter collects its ``[i]`` edges into a list. ``names``
    are the globals labels may call (``np``, ``unbroadcast``)."""
    value: dict[str, float] = {}
    for p, a in zip(func.params, args):
        if p.items is None:
            value[p.value.name] = a
        else:
            value.update({f"{p.value.name}[{i}]": x for i, x in enumerate(a)})
    out: dict[str, object] = {}
    env_math = {"math": math, **(names or {})}
    for n in g.nodes:
        ins = [e for e in g.edges if e.dst == n.id and e.kind not in ("order", "control")]
        env = dict(env_math)
        for e in ins:
            env[e.label] = out[e.src]
        if n.kind == "param":
            out[n.id] = value[n.label[1]]
        elif n.kind == "const":
            out[n.id] = float(n.label[1])
        elif n.kind == "op":
            # the forward op, evaluated from the values on its edges only
            names = [e.label for e in ins]
            assert names == [a.name if isinstance(a, ir.Value) else repr(a) for a in n.op.args]
            rhs = sweep.forward_text(n.op, func.modules).split(" = ", 1)[1]
            out[n.id] = eval(rhs, env)
        elif n.kind == "seed":
            out[n.id] = 1.0
        elif n.kind == "bwd":
            out[n.id] = eval(n.label[2], env)
        elif n.kind == "shared":
            (e,) = [e for e in ins if e.kind == "adjoint"]
            out[n.id] = out[e.src]
        elif n.kind == "sum":
            out[n.id] = sum(out[e.src] for e in ins)
        elif n.kind == "control" and n.label[1].startswith("if "):
            # a branch's head, forward or reverse: the decision (of the test,
            # also for the reverse sweep's ``if not t1`` over the else side)
            (e,) = ins
            out[n.id] = bool(out[e.src])
        elif n.kind == "control" and n.label[1].startswith("φ"):
            # the side that ran: its value (forward) or its contribution (reverse)
            taken = "then" if out[_branch_head(g, n.id)] else "else"
            out[n.id] = sum(out[e.src] for e in ins if e.label.startswith(taken + ":"))
        elif n.kind == "grad" and n.label[1].startswith("= ["):
            items = n.label[1][3:-1].split(", ")
            got = {int(e.label.split("]")[0][1:]): out[e.src] for e in ins}
            out[n.id] = [got.get(i, 0.0) for i in range(len(items))]
        elif n.kind in ("grad", "return"):
            out[n.id] = sum(out[e.src] for e in ins)
    return out


@pytest.mark.parametrize("fn, args", [
    (seed, [1.3, -0.7]),
    (reused, [0.4, 1.1, 0.8]),
    (shared_temp, [0.3, -1.2, 2.0]),
    (norm2, [[0.3, -1.2, 2.0], 0.7]),
])
def test_running_the_graph_gives_the_gradient(fn, args):
    lengths = {"xs": 3} if fn is norm2 else None
    func = api.lower(fn, lengths)
    values, _ = api.resolve_wrt(func, None)
    g = graph_backward.combined(func, reverse.transform(func, values))
    out = _run(g, func, args)
    got = []
    for v in values:
        got += out[f"grad_{v.name}"] if isinstance(out[f"grad_{v.name}"], list) \
            else [out[f"grad_{v.name}"]]
    flat = [x for a in args for x in (a if isinstance(a, list) else [a])]

    def flat_fn(*xs):
        return fn([xs[0], xs[1], xs[2]], xs[3]) if fn is norm2 else fn(*xs)

    want = fd_gradient(flat_fn, flat, list(range(len(flat))))
    assert len(got) == len(want)
    assert all(close(a, b) for a, b in zip(got, want)), (got, want)


def _branch_head(g: graph.Graph, node_id: str) -> str:
    """The ``if`` node of the branch cluster holding ``node_id``."""
    def find(clusters):
        for c in clusters:
            if node_id in c.nodes:
                return next(n for n in c.nodes if g.node(n).label[1].startswith("if "))
            found = find(c.clusters)
            if found:
                return found
        return None
    return find(g.clusters)


@pytest.mark.parametrize("fn, args", [
    (graph_src.clipped, [1.3, 0.4]), (graph_src.clipped, [0.2, 0.9]),
    (cf_programs.branch_elif, [1.7]), (cf_programs.branch_elif, [0.4]),
    (cf_programs.branch_elif, [-0.6]), (cf_programs.branch_nested, [0.8, 0.3]),
    (cf_programs.branch_nested, [0.8, -0.3]), (cf_programs.branch_nested, [-0.5, 0.2]),
    (cf_programs.branch_one_sided, [0.1, 1.2]), (cf_programs.branch_one_sided, [0.6, 1.2]),
])
def test_running_a_branching_graph_gives_the_gradient(fn, args):
    """The reverse branch runs the side the forward decision took; its φ
    nodes pass that side's contributions on."""
    func = api.lower(fn)
    values, _ = api.resolve_wrt(func, None)
    g = graph_backward.combined(func, reverse.transform(func, values))
    out = _run(g, func, args)
    got = [out[f"grad_{v.name}"] for v in values]
    want = fd_gradient(fn, args, list(range(len(args))))
    assert all(close(a, b) for a, b in zip(got, want)), (got, want)


def test_list_parameter_items_are_leaves_and_its_gradient_a_list(capsys):
    dot = dotcheck.parse(s2s_ad.graph_dot(norm2, backward=True, lengths={"xs": 3}))
    leaves = [labels(dot, n)[1] for n in dot.nodes if kinds(dot)[n] == "param"]
    assert leaves == ["xs[0]", "xs[1]", "xs[2]", "w"]
    assert labels(dot, "grad_xs") == ["gradient ∂out/∂xs", "= [dxs_0, dxs_1, dxs_2]"]
    assert sorted(e["label"].strip() for a, b, e in dot.edges if b == "grad_xs") == [
        "[0] dxs_0", "[1] dxs_1", "[2] dxs_2"]
    assert main(["explain", "tests/graph_src.py:norm2", "--length", "xs=3"]) == 0
    assert "gradient: ∂out/∂xs = [dxs_0, dxs_1, dxs_2], ∂out/∂w = dw" in capsys.readouterr().out


def test_a_temporary_passing_its_adjoint_on_gets_no_node():
    # y = t1 + c: t1's adjoint is dy itself, so no statement and no node
    # computes it; the derivatives of t1 = a * b read dy from the seed.
    text = s2s_ad.graph_dot(shared_temp, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    (seed,) = [n for n in dot.nodes if k[n] == "seed"]
    outs = sorted(b for a, b, e in dot.edges if a == seed)
    assert [labels(dot, n)[1] for n in outs] == ["∂(t1 + c)/∂c", "∂(a * b)/∂a", "∂(a * b)/∂b"]
    assert not [n for n in dot.nodes if k[n] == "sum"]


def test_each_call_site_is_one_backward_node_reading_its_tape(pairs):
    text = s2s_ad.graph_dot(calls_src.nested, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    calls = {labels(dot, n)[2]: n for n in dot.nodes
             if k[n] == "bwd" and "_bwd(" in labels(dot, n)[2]}
    # each as the generated code writes it: the targets name the items of its result
    assert sorted(calls) == ["da, _, db_1 = cube_plus_bwd(u_tape, du)",
                             "db, _, _ = cube_plus_bwd(v_tape, dv)",
                             "du, = sq_bwd(sq_1_tape, dout)"]
    calls = {text.split(" = ", 1)[1]: n for text, n in calls.items()}
    fwd_calls = {labels(dot, n)[2].split(" ·")[0]: n for n in dot.nodes
                 if k[n] == "op" and labels(dot, n)[1].startswith("call ")}
    assert sorted(fwd_calls) == ["sq_1", "u", "v"]
    for value, tape in [("u", "u_tape"), ("v", "v_tape"), ("sq_1", "sq_1_tape")]:
        (bwd,) = [n for t, n in calls.items() if f"({tape}," in t]
        reads = [(a, e["label"].strip()) for a, b, e in dot.edges
                 if b == bwd and e.get("style") == "dashed"]
        assert reads == [(fwd_calls[value], tape)]
    # b is used by both cube_plus calls: their contributions meet in one Σ
    (total,) = [n for n in dot.nodes if k[n] == "sum" and labels(dot, n)[2] == "db"]
    into = sorted((a, e["label"].strip()) for a, b, e in dot.edges if b == total)
    assert into == sorted([(calls["cube_plus_bwd(v_tape, dv)"], "db"),
                           (calls["cube_plus_bwd(u_tape, du)"], "db_1")])


def test_a_call_reading_one_value_three_times_sums_three_contributions():
    dot = dotcheck.parse(s2s_ad.graph_dot(calls_src.same_arg, backward=True))
    k = kinds(dot)
    (call,) = [n for n in dot.nodes if k[n] == "bwd"]
    (total,) = [n for n in dot.nodes if k[n] == "sum"]
    assert labels(dot, call)[1:3] == ["∂cube_plus/∂(x, k, shift)",
                                      "dx, dx_1, dx_2 = cube_plus_bwd(out_tape, dout)"]
    assert [(a, e["label"].strip()) for a, b, e in dot.edges if b == total] == [
        (call, "dx"), (call, "dx_1"), (call, "dx_2")]


def test_inactive_parameter_gets_a_zero_gradient_sink():
    def f(x, n):
        return x * 2.0 + n // 2

    dot = dotcheck.parse(s2s_ad.graph_dot(f, backward=True))
    assert labels(dot, "grad_n") == ["gradient ∂out/∂n", "= 0.0"]
    assert not [e for e in dot.edges if e[1] == "grad_n"]


def test_labels_with_quotes_and_backslashes_are_escaped():
    g = graph.Graph('q"uote', 'a "label" \\ here')
    g.nodes.append(graph.Node("node_0", "op", ['say "hi"', "back\\slash"]))
    dot = dotcheck.parse(graph.to_dot(g))
    assert dot.name == 'q"uote'
    assert dot.nodes["node_0"]["label"] == 'say "hi"\\nback\\slash'


def test_loop_is_a_cluster_with_its_head_feeding_the_body_and_taking_next_values():
    text = s2s_ad.graph_dot(cf_programs.logistic)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    (head,) = [n for n in dot.nodes if k[n] == "control"]
    assert labels(dot, head)[1:] == ["for i in range(0, n, 1)", "line 118"]
    loop, body = [name for name, (attrs, nodes) in dot.subgraphs.items()]
    assert dot.subgraphs[loop][0]["label"] == "for i in range(n) · line 118"
    assert dot.subgraphs[body][0]["label"] == "body"
    inside = sorted(dot.subgraphs[body][1])
    assert [labels(dot, n)[1] for n in inside] == ["mul", "sub", "mul"]
    assert dot.parent[head] == loop and dotcheck_parent_of(dot, body) == loop
    edges = [(a, b, e["label"].strip(), e.get("style")) for a, b, e in dot.edges]
    assert ("leaf_0", head, "x → x_1", None) in edges               # init → carried
    assert (inside[2], head, "x_2 → next x_1", "dashed") in edges   # next value, back edge
    assert (head, "return", "x_1", None) in edges                   # the loop's result
    assert sorted(b for a, b, lab, _ in edges if a == head and lab == "x_1") == sorted(
        inside[:2] + ["return"])


def dotcheck_parent_of(dot, sub):
    """The subgraph ``sub`` is declared in (its nodes' second-innermost scope)."""
    holders = [name for name, (_, nodes) in dot.subgraphs.items()
               if name != sub and dot.subgraphs[sub][1] <= nodes]
    return min(holders, key=lambda n: len(dot.subgraphs[n][1]))


def test_branch_sides_are_clusters_joined_by_a_phi_node():
    dot = dotcheck.parse(s2s_ad.graph_dot(cf_programs.branch_if_else))
    k = kinds(dot)
    heads = [labels(dot, n)[1] for n in dot.nodes if k[n] == "control"]
    assert heads == ["if t1", "φ z_2"]
    sides = {attrs["label"]: sorted(nodes) for attrs, nodes in dot.subgraphs.values()}
    assert [labels(dot, n)[2] for n in sides["then"]] == ["z · line 14"]
    assert [labels(dot, n)[2] for n in sides["else"]] == ["t2 · line 16", "z_1 · line 16"]
    (phi,) = [n for n in dot.nodes if labels(dot, n)[1:2] == ["φ z_2"]]
    assert sorted(e["label"].strip() for a, b, e in dot.edges if b == phi) == [
        "else: z_1", "then: z"]


def test_cli_draws_and_explains_the_reverse_sweep_of_loops(capsys):
    assert main(["graph", "tests/cf_programs.py:logistic", "--backward"]) == 0
    assert "reverse of for i in range(n) · line 118" in capsys.readouterr().out
    assert main(["explain", "tests/cf_programs.py:branch_if_else"]) == 0
    assert "the decision the forward pass took at line 13" in capsys.readouterr().out
    assert main(["graph", "tests/cf_programs.py:newton_sqrt"]) == 0
    assert "while" in capsys.readouterr().out


# -- CLI --------------------------------------------------------------------------

def test_cli_prints_dot_to_stdout(capsys):
    assert main(["graph", SEED_FILE, "--backward", "--wrt", "x"]) == 0
    assert capsys.readouterr().out == s2s_ad.graph_dot(seed, wrt=("x",), backward=True)


def test_cli_writes_dot_file(tmp_path):
    out = tmp_path / "seed.dot"
    assert main(["graph", SEED_FILE, "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == s2s_ad.graph_dot(seed)


def test_cli_without_graphviz_says_how_to_install(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    out = tmp_path / "seed.png"
    assert main(["graph", SEED_FILE, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "apt-get install graphviz" in err and "dot" in err
    assert not out.exists()


def test_cli_rejects_unknown_formats(tmp_path, capsys):
    assert main(["graph", SEED_FILE, "-o", str(tmp_path / "seed.jpeg")]) == 2
    assert ".svg" in capsys.readouterr().err


def test_cli_renders_svg_when_graphviz_is_installed(tmp_path):
    out = tmp_path / "seed.svg"
    if shutil.which("dot") is not None and working_dot() is None:
        pytest.skip("Graphviz `dot` is installed but cannot render a trivial graph")
    code = main(["graph", SEED_FILE, "--backward", "-o", str(out)])
    if shutil.which("dot") is None:
        assert code == 2 and not out.exists()
    else:
        assert code == 0
        svg = out.read_text(encoding="utf-8")
        assert "<svg" in svg and re.search(r"node_6", svg)


# -- tuples a helper returns ----------------------------------------------------


def test_items_of_a_returned_tuple_feed_the_call_node_one_edge_each():
    text = s2s_ad.graph_dot(twice_item, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    items = [labels(dot, n)[1] for n in dot.nodes if k[n] == "op" and "item" in labels(dot, n)[1]]
    # each item read once, next to the call: item 0, read twice (`a = t[0]`, `t[0] * 2.0`),
    # is one value whose adjoint sums its two uses, as any value's does
    assert items == ["item 0", "item 1"]
    (call,) = [n for n in dot.nodes if k[n] == "bwd" and "split_bwd" in labels(dot, n)[2]]
    into = sorted(e["label"].strip() for a, b, e in dot.edges
                  if b == call and e.get("style") != "dashed")
    assert into == ["dout", "dt_0"]  # item 1 (t_1 in out = t1 + t_1) passes dout on
    assert sorted(b for a, b, _ in dot.edges if a == call) == ["grad_x", "grad_y"]


def test_a_returned_tuple_is_drawn_item_by_item_and_output_picks_one(capsys):
    dot = dotcheck.parse(s2s_ad.graph_dot(returns_tuple))
    into = sorted(e["label"].strip() for a, b, e in dot.edges if b == "return")
    assert into == ["[0] t3", "[1] loss", "[2] reg"]
    assert labels(dot, "return") == ["return (t3, loss, reg)"]
    back = dotcheck.parse(s2s_ad.graph_dot(returns_tuple, backward=True, output=2))
    k = kinds(back)
    assert [labels(back, n)[1] for n in back.nodes if k[n] == "bwd"] == [
        "∂(t2 * x)/∂t2", "∂(t2 * x)/∂x", "∂(0.1 * x)/∂x"]
    assert main(["graph", "tests/graph_src.py:returns_tuple", "--backward"]) == 2
    assert "--output K" in capsys.readouterr().err
    assert main(["graph", "tests/graph_src.py:returns_tuple", "--backward", "--output", "1"]) == 0


def test_the_node_numbers_docs_graphs_md_talks_about():
    """docs/graphs.md walks through these graphs by node number."""
    import gaussian_nll

    dot = dotcheck.parse(s2s_ad.graph_dot(gaussian_nll.nll, wrt=("mu", "log_sigma"),
                                          backward=True))
    k = kinds(dot)
    assert {n: labels(dot, n)[2] for n in dot.nodes if k[n] == "sum"} == {
        "node_12": "dz", "node_17": "dlog_sigma"}
    assert [labels(dot, n)[1] for n in ("node_8", "node_9", "node_10")] == [
        "∂(t3 + log_sigma)/∂log_sigma", "∂(t2 * z)/∂t2", "∂(t2 * z)/∂z"]


# -- NumPy ------------------------------------------------------------------------

def test_tied_weights_graph_runs_to_the_finite_difference_gradient():
    """W is used twice (W @ x and W.T @ h): one Σ node sums its two contributions,
    and running the drawn graph gives the gradient finite differences give."""
    import numpy as np
    import tied_weights
    from array_oracle import fd_gradient as fd_array

    fn = tied_weights.tied
    func = api.lower(fn)
    values, _ = api.resolve_wrt(func, None)
    code = reverse.transform(func, values)
    g = graph_backward.combined(func, code)
    (total,) = [n for n in g.nodes if n.kind == "sum"]
    assert total.label[1:] == ["Σ", "dW"] and total.id == "node_20"  # as docs/graphs.md says
    assert sorted(e.src for e in g.edges if e.dst == total.id) == ["node_15", "node_18"]
    assert len([e for e in g.edges if e.dst == total.id]) == 2
    module = loader.load(s2s_ad.gradient_source(fn, None), "tied_graph")
    rng = np.random.default_rng(0)
    args = [rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=2)]
    out = _run(g, func, args, vars(module))
    for i, v in enumerate(values):
        np.testing.assert_allclose(out[f"grad_{v.name}"], fd_array(fn, args, i), rtol=1e-5,
                                   atol=1e-7)
    dotcheck.parse(graph.to_dot(g))


@pytest.mark.parametrize("index", ["x[1]", "x[1, 2]", "x[1:-1]", "x[:, 0]", "x[::2]",
                                   "x[-1, ::-2]", "x[..., 1]", "x[:, None, 1]", "x[idx]",
                                   "x[idx, 1:]", "x[x > 0.2]", "x[i]", "x[i, i + 1]",
                                   "x[[0, 3, 0], 1:3]"])
def test_running_the_graph_of_numpy_indexing_gives_the_gradient(index):
    """The adjoint of an indexed read is made element by element
    (``dx = np.zeros_like(x); dx[i] += dt``, ``np.add.at`` for repeated
    indices): the node shows every statement and takes the index on an edge."""
    import numpy as np
    import graph_run
    from array_oracle import make_function, rand

    rng = np.random.default_rng(7)
    f = make_function(f"def f(x, i: int, idx):\n    t = {index}\n"
                      "    return np.sum(np.sin(t) * (1 + t))\n")
    graph_run.check_arrays(f, [rand(rng, (4, 5)), 2, np.array([0, 2, 2, 3, 0])], [0])


@pytest.mark.parametrize("source, args", [
    ("def f(x, w, i: int):\n    y = np.zeros(6)\n    y[0] = x[0] * w\n"
     "    y[i] = y[0] * 2 + x[1]\n    y[2:4] = np.sin(x[2:4])\n    y[4:] += x[:2] * w\n"
     "    y[y > 100.0] = 0.0\n    return np.sum(y * y)\n", lambda r: [r((4,)), 1.3, 5]),
    ("def f(x):\n    y = x * 1.0\n    s = np.sum(y * y)\n    y[1] = 5.0\n"
     "    return s + np.sum(y * x)\n", lambda r: [r((4,))]),
    ("def f(x, idx):\n    return np.sum(x[idx] ** 2) + np.sum(np.sin(x[idx]))\n",
     lambda r: [r((4,)), __import__("numpy").array([0, 2, 2])]),
], ids=["writes", "overwritten_after_read", "fancy_index_twice"])
def test_running_the_graph_of_numpy_subscript_assignment_gives_the_gradient(source, args):
    """``dy = np.copy(dy_1); dy[0] = 0.0``: the overwritten element's adjoint
    is set to 0 in a copy, not the whole adjoint; a second indexed read adds
    into the adjoint the first one made (``np.add.at(dx, idx, dt1)``)."""
    import numpy as np
    import graph_run
    from array_oracle import make_function, rand

    rng = np.random.default_rng(5)
    f = make_function(source)
    a = args(lambda shape: rand(rng, shape))
    graph_run.check_arrays(f, a, [k for k, v in enumerate(a) if isinstance(v, (float, np.ndarray))
                                  and np.asarray(v).dtype.kind == "f"])


def test_an_indexed_reads_adjoint_shows_its_index():
    """Drawn as its last statement alone (``dt``), the adjoint of ``x[i]``
    would be added to every element of dx."""
    from array_oracle import make_function

    f = make_function("def f(x, i: int):\n    return np.sum(np.sin(x[i]))\n")
    dot = dotcheck.parse(s2s_ad.graph_dot(f, wrt="x", backward=True))
    k = kinds(dot)
    (node,) = [n for n in dot.nodes if k[n] == "bwd" and labels(dot, n)[1] == "∂x[i]/∂x"]
    assert labels(dot, node)[2] == "scatter(dt1, x, i)"
    assert sorted(e["label"].strip() for a, b, e in dot.edges if b == node) == ["dt1", "i", "x"]
