"""Recursion whose depth the structure of an argument decides (a tree of
tuples, an expression tree with its operators as strings, a dict tree):
code is generated per structure a call passes, down to the leaves.
Gradients against central differences (float64)."""

import os
import subprocess
import sys

import pytest

import s2s_ad
import tree_recursion_src as src

H = 1e-6


def _fd_x(f, tree, x):
    return (f(tree, x + H) - f(tree, x - H)) / (2 * H)


def _fd_leaves(f, tree, x):
    """Central differences with respect to every float of a tuple tree, as a
    tree of the same shape."""
    def walk(node, path):
        if isinstance(node, float):
            def moved(s):
                return _replace(tree, path, node + s)
            return (f(moved(H), x) - f(moved(-H), x)) / (2 * H)
        if isinstance(node, str):
            return node
        return tuple(walk(item, path + (i,)) for i, item in enumerate(node))
    return walk(tree, ())


def _replace(tree, path, value):
    if not path:
        return value
    items = list(tree)
    items[path[0]] = _replace(tree[path[0]], path[1:], value)
    return tuple(items)


def _close(got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    elif isinstance(want, str):
        assert got == want
    else:
        assert got == pytest.approx(want, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("f", [src.tree_product, src.through_helper], ids=["itself", "helper"])
def test_a_tree_of_tuples(f):
    for tree in (src.TREE, (1.5, 0.25), 0.75):
        g_tree, g_x = s2s_ad.grad(f, wrt=(0, 1))(tree, 0.8)
        _close(g_x, _fd_x(f, tree, 0.8))
        _close(g_tree, _fd_leaves(f, tree, 0.8))


def test_an_expression_tree_with_operators_by_name():
    g = s2s_ad.grad(src.evaluate, wrt=(0, 1))
    for expr in (src.EXPR, ("+", "x", ("*", 2.0, "x")), ("sin", "x", 1.0)):
        g_expr, g_x = g(expr, 0.7)
        _close(g_x, _fd_x(src.evaluate, expr, 0.7))
        _close(g_expr, _fd_leaves(src.evaluate, expr, 0.7))


def test_vjp_and_jvp_of_an_expression_tree():
    value, back = s2s_ad.vjp(src.evaluate, src.EXPR, 0.7)
    assert value == pytest.approx(src.evaluate(src.EXPR, 0.7))
    _close(back(1.0)[1], _fd_x(src.evaluate, src.EXPR, 0.7))
    _, tangent = s2s_ad.jvp(src.evaluate, wrt=1)(src.EXPR, 0.7, dx=1.0)
    _close(tangent, _fd_x(src.evaluate, src.EXPR, 0.7))


def test_a_dict_tree():
    tree = {"children": [{"value": 1.5}, {"children": [{"value": 0.5}, {"value": 2.0}]}]}
    got = s2s_ad.grad(src.weighted_depth, wrt=1)(tree, 0.9)
    _close(got, _fd_x(src.weighted_depth, tree, 0.9))


def test_a_recursion_passing_an_ever_larger_structure_is_refused_located():
    with pytest.raises(s2s_ad.SourceError, match="calls itself with a structure no smaller than the one it was given"):
        s2s_ad.grad(src.growing, wrt=1)((0.5, 0.5), 0.3)


def test_the_cli_file_of_an_expression_tree(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    out = tmp_path / "grad_evaluate.py"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                    os.path.join(here, "tree_recursion_src.py") + ":evaluate", "--wrt", "x",
                    "--like", "expr=EXPR", "-o", str(out)],
                   check=True, env=env, capture_output=True, text=True)
    code = (f"import sys\nsys.path[:0] = [{str(tmp_path)!r}, {here!r}]\n"
            "import grad_evaluate, tree_recursion_src as src\n"
            "print(grad_evaluate.grad_evaluate(src.EXPR, 0.7))\n")
    res = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    _close(float(res.stdout), _fd_x(src.evaluate, src.EXPR, 0.7))


def test_a_list_where_the_code_took_a_number_is_refused_located():
    # the gradient was generated for a number; a list there gets code for
    # its structure, which here refuses it at the line (the function itself
    # would raise TypeError: a list times a float)
    g = s2s_ad.grad(src.doubled)
    assert g(1.5) == 2.0
    with pytest.raises(s2s_ad.SourceError, match="a list is used where a number is expected"):
        g([1.0, 2.0])


@pytest.mark.parametrize("f", [src.run_layers, src.run_layers_len], ids=["not", "len"])
def test_layers_consumed_one_at_a_time(f):
    for layers in (((0.5, 0.1), (0.7, -0.2), (1.1, 0.3)), ((0.9, 0.4),), ()):
        g_layers, g_x = s2s_ad.grad(f, wrt=(0, 1))(layers, 0.3)
        _close(g_x, _fd_x(f, layers, 0.3))
        _close(tuple(g_layers), _fd_leaves(f, layers, 0.3))
