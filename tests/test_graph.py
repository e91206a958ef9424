"""`s2s-ad graph`: the forward graph and the combined forward + reverse graph.

The DOT text is parsed by an independent strict parser (tests/dotcheck.py)
and, where Graphviz is installed, by ``dot`` itself. The combined graph is
also *run*: each reverse node evaluates the contribution in its label from the
values on its incoming edges only, and the gradients reaching the sinks must
match central finite differences. A mis-wired edge (say, a shared temporary's
adjoint taken from the wrong node) would change them.
"""

from __future__ import annotations

import ast
import math
import re
import shutil
import subprocess

import pytest

import s2s_ad
from s2s_ad import api, graph, ir, loader, reverse, sweep
from s2s_ad.cli import main
from s2s_ad.errors import S2SError, SourceError

import dotcheck
from oracle import close, fd_gradient
from seed_ggml import f as seed

import calls_src
import cf_programs
import graph_src
from graph_src import norm2, returns_tuple, reused, shared_temp, twice_item

SEED_FILE = "examples/seed_ggml.py:f"


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
    g = graph.combined(func, reverse.transform(func, values))
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
    g = graph.combined(func, reverse.transform(func, values))
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


def test_shared_adjoint_is_drawn_as_a_codeless_derivative():
    text = s2s_ad.graph_dot(shared_temp, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    (shared,) = [n for n in dot.nodes if k[n] == "shared"]
    assert labels(dot, shared)[1:4] == ["∂(t1 + c)/∂t1", "= 1, no code:", "t1's adjoint is dy"]
    assert "dashed" in dot.nodes[shared]["style"]
    # the derivatives of t1 = a * b read t1's adjoint from the shared node
    outs = sorted(b for a, b, e in dot.edges if a == shared)
    assert [labels(dot, n)[1] for n in outs] == ["∂(a * b)/∂a", "∂(a * b)/∂b"]
    assert not [n for n in dot.nodes if k[n] == "sum"]


def test_each_call_site_is_one_backward_node_reading_its_tape():
    text = s2s_ad.graph_dot(calls_src.nested, backward=True)
    dot = dotcheck.parse(text)
    check_with_graphviz(text)
    k = kinds(dot)
    calls = {labels(dot, n)[2]: n for n in dot.nodes
             if k[n] == "bwd" and "_bwd(" in labels(dot, n)[2]}
    assert sorted(calls) == ["cube_plus_bwd(u_tape, du)", "cube_plus_bwd(v_tape, dv)",
                             "sq_bwd(sq_1_tape, dsq_1)"]
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
    assert labels(dot, call)[1] == "∂cube_plus/∂(x, k, shift)"
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
    assert items == ["item 0", "item 0", "item 1"]
    shared = {labels(dot, n)[1]: n for n in dot.nodes if k[n] == "shared"}
    assert {"∂a/∂t[0]", "∂t_0/∂t[0]", "∂t_1/∂t[1]"} <= set(shared)
    # item 0 is read twice: its adjoint is a Σ of both reads
    (total,) = [n for n in dot.nodes if k[n] == "sum"]
    assert sorted(a for a, b, _ in dot.edges if b == total) == sorted(
        [shared["∂a/∂t[0]"], shared["∂t_0/∂t[0]"]])
    (call,) = [n for n in dot.nodes if k[n] == "bwd" and "split_bwd" in labels(dot, n)[2]]
    into = sorted((a, e["label"].strip()) for a, b, e in dot.edges
                  if b == call and e.get("style") != "dashed")
    assert into == sorted([(total, "dt_0_1"), (shared["∂t_1/∂t[1]"], "dt_1")])
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
    assert [n for n in dot.nodes if k[n] == "shared"] == ["node_8", "node_9"]
    assert {n: labels(dot, n)[2] for n in dot.nodes if k[n] == "sum"} == {
        "node_14": "dz", "node_19": "dlog_sigma"}
    assert [labels(dot, n)[1] for n in ("node_11", "node_12")] == ["∂(t2 * z)/∂t2",
                                                                   "∂(t2 * z)/∂z"]


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
    g = graph.combined(func, code)
    (total,) = [n for n in g.nodes if n.kind == "sum"]
    assert total.label[1:] == ["Σ", "dW"] and total.id == "node_22"  # as docs/graphs.md says
    assert sorted(e.src for e in g.edges if e.dst == total.id) == ["node_16", "node_21"]
    assert len([e for e in g.edges if e.dst == total.id]) == 2
    module = loader.load(s2s_ad.gradient_source(fn, None), "tied_graph")
    rng = np.random.default_rng(0)
    args = [rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=2)]
    out = _run(g, func, args, vars(module))
    for i, v in enumerate(values):
        np.testing.assert_allclose(out[f"grad_{v.name}"], fd_array(fn, args, i), rtol=1e-5,
                                   atol=1e-7)
    dotcheck.parse(graph.to_dot(g))


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
    import inspect
    import calls_loops_src
    import numpy_loops_src

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
    import sys

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
            elif x != head:
                n = g.node(x)  # a φ: the taken side's contribution, or nothing
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
