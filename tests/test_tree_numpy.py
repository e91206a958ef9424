"""Recursion over a structure in NumPy code (docs/structures.md, "Recursion
over a structure"): the number leaves of a tree stay numbers (so
`isinstance(node, float)` holds for them and they get number adjoints), its
array leaves are arrays, its strings select code; dict trees and a list of
layers consumed one at a time too. Gradients against central differences
(float64): `grad`, `vjp`, `jvp`, in a helper and a loop, and the CLI file."""

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
import tree_numpy_src as src
from array_oracle import fd_gradient as _fd

X = np.array([0.1, 0.2, 0.3])


def _leaves(tree, path=()):
    """(path, value) of every number and array leaf of a tuple/list/dict tree."""
    if isinstance(tree, (float, int, np.ndarray)):
        return [(path, tree)]
    if isinstance(tree, str):
        return []
    items = tree.items() if isinstance(tree, dict) else enumerate(tree)
    return [leaf for k, v in items for leaf in _leaves(v, path + (k,))]


def _replaced(tree, path, value):
    if not path:
        return value
    if isinstance(tree, dict):
        return {k: (_replaced(v, path[1:], value) if k == path[0] else v)
                for k, v in tree.items()}
    return type(tree)(_replaced(v, path[1:], value) if i == path[0] else v
                      for i, v in enumerate(tree))


def _at(tree, path):
    for k in path:
        tree = tree[k]
    return tree


def _fd_tree(f, tree, x):
    """[(path, central difference)] for every leaf of ``tree``."""
    return [(path, _fd(lambda v: f(_replaced(tree, path, v), x), [leaf], 0))
            for path, leaf in _leaves(tree)]


def _check(f, tree, x, got_tree, got_x):
    np.testing.assert_allclose(got_x, _fd(f, [tree, x], 1), rtol=1e-6, atol=1e-8)
    assert [p for p, _ in _leaves(got_tree)] == [p for p, _ in _leaves(tree)]
    for path, want in _fd_tree(f, tree, x):
        got = _at(got_tree, path)
        if isinstance(_at(tree, path), float):
            assert isinstance(got, float), (path, got)  # a number adjoint for a number leaf
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    # the strings (operators) are the argument's own
    strings = [(p, v) for p, v in _paths_of_strings(tree)]
    assert [(p, _at(got_tree, p)) for p, _ in strings] == strings


def _paths_of_strings(tree, path=()):
    if isinstance(tree, str):
        return [(path, tree)]
    if isinstance(tree, (tuple, list)):
        return [s for i, v in enumerate(tree) for s in _paths_of_strings(v, path + (i,))]
    if isinstance(tree, dict):
        return [s for k, v in tree.items() for s in _paths_of_strings(v, path + (k,))]
    return []


@pytest.mark.parametrize("tree", [src.EXPR, src.DEEP, 2.5], ids=["expr", "deep", "number"])
def test_an_expression_tree_with_operators_by_name(tree):
    g_tree, g_x = s2s_ad.grad(src.loss, wrt=(0, 1))(tree, X)
    _check(src.loss, tree, X, g_tree, g_x)


@pytest.mark.parametrize("tree", [src.MIXED, (1.5, 0.5), (np.array([0.3, 0.2, 0.1]), 0.8)],
                         ids=["mixed", "numbers", "array-and-number"])
def test_array_leaves_beside_number_leaves(tree):
    g_tree, g_x = s2s_ad.grad(src.array_loss, wrt=(0, 1))(tree, X)
    _check(src.array_loss, tree, X, g_tree, g_x)


def test_a_dict_tree():
    g_tree, g_x = s2s_ad.grad(src.dict_loss, wrt=(0, 1))(src.DICT, X)
    _check(src.dict_loss, src.DICT, X, g_tree, g_x)


@pytest.mark.parametrize("depth", [2, 1, 0])
def test_a_list_of_layers_consumed_one_at_a_time(depth):
    layers = src.LAYERS[:depth]
    x = X if depth else np.array([0.4, -0.3])
    g_layers, g_x = s2s_ad.grad(src.mlp_loss, wrt=(0, 1))(layers, x)
    _check(src.mlp_loss, layers, x, g_layers, g_x)


def test_in_a_loop_and_through_vjp_and_jvp():
    g_tree, g_x = s2s_ad.grad(src.summed_in_a_loop, wrt=(0, 1))(src.DEEP, X)
    _check(src.summed_in_a_loop, src.DEEP, X, g_tree, g_x)
    value, back = s2s_ad.vjp(src.loss, src.EXPR, X)
    assert value == pytest.approx(src.loss(src.EXPR, X))
    b_tree, b_x = back(1.0)
    _check(src.loss, src.EXPR, X, b_tree, b_x)
    u = np.array([0.3, -1.0, 0.5])
    _, tangent = s2s_ad.jvp(src.dict_loss, wrt=1)(src.DICT, X, dx=u)
    assert tangent == pytest.approx(float(_fd(src.dict_loss, [src.DICT, X], 1) @ u), rel=1e-6)
    _, tangent = s2s_ad.jvp(src.array_loss, wrt=1)(src.MIXED, X, dx=u)
    assert tangent == pytest.approx(float(_fd(src.array_loss, [src.MIXED, X], 1) @ u), rel=1e-6)


def test_a_class_computed_from_the_arguments_is_refused_located():
    with pytest.raises(s2s_ad.SourceError, match="isinstance` takes a class or a tuple of "
                       "classes known while the code is generated") as exc:
        s2s_ad.grad(src.class_loss, wrt=(0, 1))((1.5, (0.5, 2.0)), X)
    assert "tree_numpy_src.py:" in str(exc.value) and "type(x)" in str(exc.value)


@pytest.mark.parametrize("fn,like,args", [
    ("loss", "tree=EXPR", "src.EXPR"),
    ("array_loss", "tree=MIXED", "src.MIXED"),
    ("mlp_loss", "layers=LAYERS", "src.LAYERS"),
])
def test_the_cli_file(fn, like, args, tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    out = tmp_path / f"grad_{fn}.py"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                    os.path.join(here, "tree_numpy_src.py") + ":" + fn, "--like", like,
                    "-o", str(out)], check=True, env=env, capture_output=True, text=True)
    code = (f"import sys, pickle\nsys.path[:0] = [{str(tmp_path)!r}, {here!r}]\n"
            f"import numpy as np, grad_{fn} as g, tree_numpy_src as src\n"
            f"out = g.grad_{fn}({args}, np.array({X.tolist()!r}) if {fn!r} != 'mlp_loss' "
            "else np.array([0.1, 0.2, 0.3]))\n"
            "assert 's2s_ad' not in sys.modules\n"
            "sys.stdout.buffer.write(pickle.dumps(out))\n")
    res = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    import pickle
    got = pickle.loads(res.stdout)
    f = getattr(src, fn)
    tree = getattr(src, like.split("=")[1])
    _check(f, tree, X, got[0], got[1])


def test_one_gradient_called_with_numbers_then_arrays_at_the_same_leaf():
    # the same structure, a number or an array at one leaf: code of its own each
    g = s2s_ad.grad(src.array_loss, wrt=(0, 1))
    for tree in [(1.5, 0.5), (np.array([0.3, 0.2, 0.1]), 0.5), (1.5, 0.5),
                 (np.array([0.3, 0.2, 0.1]), np.array([1.0, -1.0, 0.5]))]:
        g_tree, g_x = g(tree, X)
        _check(src.array_loss, tree, X, g_tree, g_x)


def test_the_cli_file_refuses_an_array_where_its_example_held_a_number(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    out = tmp_path / "grad_loss_mixed.py"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                    os.path.join(here, "tree_numpy_src.py") + ":array_loss", "--like",
                    "tree=MIXED", "-o", str(out)], check=True, env=env, capture_output=True)
    code = (f"import sys\nsys.path[:0] = [{str(tmp_path)!r}, {here!r}]\n"
            "import numpy as np, grad_loss_mixed as g\n"
            "x = np.array([0.1, 0.2, 0.3])\n"
            "g.grad_array_loss(((x, x), x), x)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode != 0
    assert "TypeError: generated for a number at tree[0][1], given an array" in res.stderr
