"""Second derivatives and Jacobians of functions taking structures
(tests/pytrees_higher_src.py): `hvp`, `hessian`, `jacfwd`, `jacrev`,
`jacobian` and the module of `s2s-ad hessian --like`, for dicts, lists of
NamedTuples, dataclasses (nested), of arrays and numbers, at the top level,
in helpers, loops and branches.

References: the gradient of s2s-ad is first checked against central
differences of the function (every number of every leaf, float64); each
Hessian-vector product is then compared with central differences of that
gradient along the direction, and each Jacobian with central differences of
the function. `scalar_dataclass` is also compared with sympy's Hessian. The
flattening of structures is the tests' own (tests/test_pytrees.py), not
s2s-ad's."""

import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import pytrees_higher_src as src
import s2s_ad
from test_pytrees import _fd_tree, _flatten


def _rng(seed):
    return np.random.default_rng(seed)


def _layers(n, seed=0):
    rng = _rng(seed)
    return [src.Layer(rng.normal(size=(3, 3)) * 0.7, rng.normal(size=3)) for _ in range(n)]


def _params(seed=1, s=1.3):
    rng = _rng(seed)
    return {"W": rng.normal(size=(3, 3)) * 0.6, "b": rng.normal(size=3), "s": s}


CASES = [
    ("scalar_dataclass", lambda: (src.Scalars(0.5, -0.3), 0.7), {}),
    ("dict_layer", lambda: (_params(), _rng(2).normal(size=3)), {}),
    ("nested_model", lambda: (src.Model(_rng(3).normal(size=(3, 3)), _rng(4).normal(size=3),
                                        src.Head(_rng(5).normal(size=3), 1.5)),
                              _rng(6).normal(size=3)), {}),
    ("layers_loop", lambda: (_layers(2), _rng(7).normal(size=3)), {}),
    ("layers_loop", lambda: (tuple(_layers(3, seed=8)), _rng(9).normal(size=3)), {}),
    ("nested_dicts", lambda: ({"layers": [{"W": _rng(1).normal(size=(2, 2)), "s": 0.5},
                                          {"W": _rng(2).normal(size=(2, 2)), "s": 1.5}],
                               "bias": 0.3}, _rng(3).normal(size=2)), {}),
    ("helpers_in_a_loop", lambda: (_params(10, 0.9), _rng(11).normal(size=3) + 0.5, 3), {}),
    ("helpers_in_a_loop", lambda: (_params(12, 0.8), _rng(13).normal(size=3) - 1.5, 2), {}),
    ("scalar_helper", lambda: (src.Scalars(0.6, -0.4), 0.9), {}),
    ("scalar_helper", lambda: (src.Scalars(-0.6, 0.4), 0.9), {}),
]
IDS = [f"{name}-{k}" for k, (name, _, _) in enumerate(CASES)]


def _checked_gradient(f, args):
    """s2s-ad's gradient with respect to the first parameter, checked
    against central differences of ``f`` first."""
    g = s2s_ad.grad(f, wrt=0)
    got = g(*args)
    for leaf, want in zip(_flatten(got)[0], _fd_tree(f, args, 0)):
        np.testing.assert_allclose(leaf, want, rtol=1e-5, atol=1e-6)
    return g


def _moved(tree, direction, h):
    leaves, rebuild = _flatten(tree)
    return rebuild([np.asarray(a, dtype=float) + h * np.asarray(d, dtype=float)
                    if isinstance(a, np.ndarray) else a + h * d
                    for a, d in zip(leaves, _flatten(direction)[0])])


def _fd_hvp(g, args, direction, h=1e-5):
    """Central differences of the gradient ``g`` along ``direction``, leaf by leaf."""
    plus = g(_moved(args[0], direction, h), *args[1:])
    minus = g(_moved(args[0], direction, -h), *args[1:])
    return [(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) / (2 * h)
            for a, b in zip(_flatten(plus)[0], _flatten(minus)[0])]


def _random_like(tree, seed):
    leaves, rebuild = _flatten(tree)
    rng = _rng(seed)
    return rebuild([rng.normal(size=np.shape(leaf)) if isinstance(leaf, np.ndarray)
                    else float(rng.normal()) for leaf in leaves])


def _unit(tree, b, k):
    leaves, rebuild = _flatten(tree)
    out = [np.zeros(np.shape(leaf)) if isinstance(leaf, np.ndarray) else 0.0
           for leaf in leaves]
    if isinstance(leaves[b], np.ndarray):
        out[b].reshape(-1)[k] = 1.0
    else:
        out[b] = 1.0
    return rebuild(out)


@pytest.mark.parametrize("name, make, kw", CASES, ids=IDS)
def test_hvp_has_the_structure_and_matches_differences_of_the_gradient(name, make, kw):
    f = getattr(src, name)
    args = make()
    g = _checked_gradient(f, args)
    for seed in (20, 21):
        v = _random_like(args[0], seed)
        got = s2s_ad.hvp(f, wrt=0)(*args, v)
        assert type(got) is type(args[0])
        leaves = _flatten(got)[0]
        want = _fd_hvp(g, args, v)
        assert len(leaves) == len(want)
        for a, b in zip(leaves, want):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, make, kw", CASES[:4] + CASES[6:], ids=IDS[:4] + IDS[6:])
def test_vjp_and_jvp_of_the_gradient_are_the_same_product(name, make, kw):
    """``vjp(grad(f))`` with a cotangent of the parameter's structure and
    ``jvp(grad(f))`` along a tangent of it are H·v too."""
    import inspect
    f = getattr(src, name)
    args = make()
    g = _checked_gradient(f, args)
    first = list(inspect.signature(f).parameters)[0]
    v = _random_like(args[0], 30)
    want = _fd_hvp(g, args, v)
    _, back = s2s_ad.vjp(g, *args)
    for got in (back(v)[0], s2s_ad.jvp(g, wrt=first)(*args, **{"d" + first: v})[1]):
        assert type(got) is type(args[0])
        for a, b in zip(_flatten(got)[0], want):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, make, kw", CASES, ids=IDS)
def test_hessian_is_the_structure_nested_in_itself(name, make, kw):
    """As jax.hessian: H[a][b] (a, b leaves) has shape shape(a) + shape(b);
    the outer and the inner structure are the argument's (same classes, keys)."""
    f = getattr(src, name)
    args = make()
    g = _checked_gradient(f, args)
    H = s2s_ad.hessian(f, wrt=0)(*args)
    leaves = _flatten(args[0])[0]
    assert type(H) is type(args[0])
    rows, _ = _flatten_outer(H, args[0])
    assert len(rows) == len(leaves)
    for row, a in zip(rows, leaves):
        assert type(row) is type(args[0])
        cells = _flatten(row)[0]
        assert len(cells) == len(leaves)
        for cell, b in zip(cells, leaves):
            assert np.shape(cell) == np.shape(a) + np.shape(b)
            if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
                assert isinstance(cell, float)
    # column by column: H e_k against differences of the gradient along e_k
    for b, leaf in enumerate(leaves):
        for k in range(int(np.size(leaf))):
            want = _fd_hvp(g, args, _unit(args[0], b, k))
            for a, row in enumerate(rows):
                cell = np.asarray(_flatten(row)[0][b], dtype=float)
                column = cell.reshape(int(np.size(leaves[a])), -1)[:, k]
                np.testing.assert_allclose(column, np.ravel(want[a]), rtol=1e-5, atol=1e-6)


def _flatten_outer(H, like):
    """The rows of H: the values at the leaf positions of ``like`` (each one
    a structure like ``like``), without flattening those."""
    n = len(_flatten(like)[0])
    rows = _at_leaves(H, like)
    assert len(_flatten(H)[0]) == n * n and len(rows) == n
    return rows, n


def _at_leaves(h, like):
    """The values of ``h`` at the leaf positions of ``like`` (same classes)."""
    if isinstance(like, dict):
        assert list(h) == list(like)
        return [r for key in like for r in _at_leaves(h[key], like[key])]
    if hasattr(like, "__dataclass_fields__"):
        assert type(h) is type(like)
        return [r for key in like.__dataclass_fields__
                for r in _at_leaves(getattr(h, key), getattr(like, key))]
    if isinstance(like, (list, tuple)):
        assert type(h) is type(like) and len(h) == len(like)
        return [r for a, b in zip(h, like) for r in _at_leaves(a, b)]
    return [h]


def test_scalar_dataclass_hessian_against_sympy():
    sympy = pytest.importorskip("sympy")
    w, b, x = sympy.symbols("w b x")
    expr = sympy.tanh(w * x + b) ** 2 + w * b
    at = {w: 0.5, b: -0.3, x: 0.7}
    exact = [[float(sympy.diff(expr, p, q).subs(at)) for q in (w, b, x)] for p in (w, b, x)]
    H = s2s_ad.hessian(src.scalar_dataclass, wrt=("p", "x"))(src.Scalars(0.5, -0.3), 0.7)
    (pp, px), (xp, xx) = H
    got = [[pp.w.w, pp.w.b, px.w], [pp.b.w, pp.b.b, px.b], [xp.w, xp.b, xx]]
    assert isinstance(pp, src.Scalars) and isinstance(pp.w, src.Scalars)
    np.testing.assert_allclose(got, exact, rtol=1e-12, atol=1e-12)
    v = s2s_ad.hvp(src.scalar_dataclass, wrt=("p", "x"))(src.Scalars(0.5, -0.3), 0.7,
                                                          (src.Scalars(1.0, -2.0), 0.5))
    want = np.array(exact) @ np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose([v[0].w, v[0].b, v[1]], want, rtol=1e-12, atol=1e-12)


def test_hessian_blocks_between_a_structure_and_an_array():
    args = (_params(), _rng(2).normal(size=3))
    (pp, px), (xp, xx) = s2s_ad.hessian(src.dict_layer, wrt=("params", "x"))(*args)
    assert list(px) == ["W", "b", "s"] and np.shape(px["W"]) == (3, 3, 3)
    assert list(xp) == ["W", "b", "s"] and np.shape(xp["W"]) == (3, 3, 3)
    assert np.shape(pp["W"]["b"]) == (3, 3, 3) and np.shape(xx) == (3, 3)
    # ∂²f/∂x∂params against differences of the (checked) gradient with respect to x
    gx = s2s_ad.grad(src.dict_layer, wrt="x")
    for leaf, want in zip([gx(*args)], [_fd_tree(src.dict_layer, args, 1)[0]]):
        np.testing.assert_allclose(leaf, want, rtol=1e-5, atol=1e-6)
    h = 1e-5
    for key in ("W", "b"):
        for idx in np.ndindex(np.shape(args[0][key])):
            up, down = copy.deepcopy(args[0]), copy.deepcopy(args[0])
            up[key][idx] += h
            down[key][idx] -= h
            want = (gx(up, args[1]) - gx(down, args[1])) / (2 * h)
            np.testing.assert_allclose(xp[key][(slice(None),) + idx], want, rtol=1e-5,
                                       atol=1e-6)
            np.testing.assert_allclose(px[key][idx], want, rtol=1e-5, atol=1e-6)
    want = (gx({**args[0], "s": 1.3 + h}, args[1]) - gx({**args[0], "s": 1.3 - h}, args[1])) \
        / (2 * h)
    np.testing.assert_allclose(xp["s"], want, rtol=1e-5, atol=1e-6)


def test_hvp_refuses_a_direction_of_another_structure():
    args = (_params(), _rng(2).normal(size=3))
    hv = s2s_ad.hvp(src.dict_layer, wrt="params")
    with pytest.raises(ValueError, match="another structure"):
        hv(*args, {"W": np.ones((3, 3)), "b": np.ones(3)})
    with pytest.raises(ValueError, match=r"shape \(2,\), not \(3,\)"):
        hv(*args, {"W": np.ones((3, 3)), "b": np.ones(2), "s": 1.0})
    with pytest.raises(ValueError, match="another structure"):
        s2s_ad.hvp(src.scalar_dataclass, wrt="p")(src.Scalars(0.5, 0.1), 0.3,
                                                   {"w": 1.0, "b": 0.0})


def _fd_jacobian_leaves(f, args, h=1e-6):
    """Central differences of an array- or tuple-valued f, one array of shape
    shape(value) + shape(leaf) per leaf of args[0]."""
    leaves, _ = _flatten(args[0])
    out = []
    for b, leaf in enumerate(leaves):
        columns = []
        for k in range(int(np.size(leaf))):
            e = _unit(args[0], b, k)
            up = np.asarray(f(_moved(args[0], e, h), *args[1:]), dtype=float)
            down = np.asarray(f(_moved(args[0], e, -h), *args[1:]), dtype=float)
            columns.append((up - down) / (2 * h))
        stacked = np.stack(columns, axis=-1)
        out.append(stacked.reshape(np.shape(columns[0]) + np.shape(leaf)))
    return out


@pytest.mark.parametrize("which", ["jacfwd", "jacrev", "jacobian"])
@pytest.mark.parametrize("name, make", [
    ("dict_outputs", lambda: (_params(), _rng(2).normal(size=3))),
    ("two_numbers", lambda: (src.Scalars(0.5, -0.3), 0.7)),
    ("dict_layer", lambda: (_params(), _rng(2).normal(size=3))),
    ("nested_model", lambda: (src.Model(_rng(3).normal(size=(3, 3)), _rng(4).normal(size=3),
                                        src.Head(_rng(5).normal(size=3), 1.5)),
                              _rng(6).normal(size=3))),
    ("helpers_in_a_loop", lambda: (_params(10, 0.9), _rng(11).normal(size=3) + 0.5, 3)),
    ("scalar_helper", lambda: (src.Scalars(-0.6, 0.4), 0.9)),
    ("layers_loop", lambda: (_layers(2), _rng(7).normal(size=3))),
])
def test_jacobians_have_the_structure_of_the_parameter(which, name, make):
    f = getattr(src, name)
    args = make()
    J = getattr(s2s_ad, which)(f, wrt=0)(*args)
    assert type(J) is type(args[0])
    got = _at_leaves(J, args[0])
    want = _fd_jacobian_leaves(f, args)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a, dtype=float), b, rtol=1e-5, atol=1e-6)


def test_jacobian_with_respect_to_a_structure_and_a_number():
    args = (src.Scalars(0.5, -0.3), 0.7)
    for which in ("jacfwd", "jacrev", "jacobian"):
        Jp, Jx = getattr(s2s_ad, which)(src.two_numbers, wrt=("p", "x"))(*args)
        assert isinstance(Jp, src.Scalars)
        h = 1e-6
        want_x = (np.array(src.two_numbers(args[0], 0.7 + h))
                  - np.array(src.two_numbers(args[0], 0.7 - h))) / (2 * h)
        np.testing.assert_allclose(np.asarray(Jx, dtype=float), want_x, rtol=1e-6)
        for leaf, want in zip(_at_leaves(Jp, args[0]),
                              _fd_jacobian_leaves(src.two_numbers, args)):
            np.testing.assert_allclose(np.asarray(leaf, dtype=float), want, rtol=1e-6)


@pytest.mark.parametrize("name, like, wrt, make", [
    ("scalar_dataclass", "p=SCALARS", "p,x", lambda: (src.Scalars(0.5, -0.3), 0.7)),
    ("dict_layer", "params=PARAMS", "params", lambda: ({"W": _rng(1).normal(size=(2, 2)),
                                                        "b": _rng(2).normal(size=2), "s": 0.8},
                                                       _rng(3).normal(size=2))),
    ("nested_model", "model=MODEL", "model,x",
     lambda: (src.Model(_rng(3).normal(size=(2, 2)), _rng(4).normal(size=2),
                        src.Head(_rng(5).normal(size=2), 1.5)), _rng(6).normal(size=2))),
])
def test_cli_hessian_like_module_in_a_fresh_interpreter(name, like, wrt, make, tmp_path):
    """`s2s-ad hessian --like` writes a module that runs without s2s-ad and
    returns what s2s_ad.hessian returns; both against differences of the
    checked gradient."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    out = tmp_path / "hess_tree.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "hessian",
                           f"tests/pytrees_higher_src.py:{name}", "--like", like, "--wrt", wrt,
                           "-o", str(out)], cwd=root, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=root))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "import s2s_ad" not in text and "from s2s_ad" not in text
    args = make()
    (tmp_path / "args.pkl").write_bytes(pickle.dumps(args))
    run = subprocess.run([sys.executable, "-c", "import pickle, sys; from hess_tree import *; "
                          f"h = hessian_{name}(*pickle.load(open('args.pkl', 'rb'))); "
                          "sys.stdout.buffer.write(pickle.dumps(h))"],
                         cwd=tmp_path, capture_output=True, timeout=120,
                         env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": here})
    assert run.returncode == 0, run.stderr.decode()
    got = pickle.loads(run.stdout)
    names = wrt.split(",")
    want = s2s_ad.hessian(getattr(src, name), wrt=tuple(names) if len(names) > 1
                          else names[0])(*args)
    got_leaves, want_leaves = _flatten(got)[0], _flatten(want)[0]
    assert type(got) is type(want) and len(got_leaves) == len(want_leaves)
    for a, b in zip(got_leaves, want_leaves):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    # and the structure block against differences of the checked gradient
    f = getattr(src, name)
    g = _checked_gradient(f, args)
    block = got[0][0] if len(names) > 1 else got
    rows, _ = _flatten_outer(block, args[0])
    leaves = _flatten(args[0])[0]
    for b, leaf in enumerate(leaves):
        for k in range(int(np.size(leaf))):
            want_col = _fd_hvp(g, args, _unit(args[0], b, k))
            for a, row in enumerate(rows):
                cell = np.asarray(_flatten(row)[0][b], dtype=float)
                np.testing.assert_allclose(cell.reshape(int(np.size(leaves[a])), -1)[:, k],
                                           np.ravel(want_col[a]), rtol=1e-5, atol=1e-6)


def test_cli_jvp_like_module_in_a_fresh_interpreter(tmp_path):
    """`s2s-ad jvp --like` writes a module whose tangent of a dict parameter
    is a dict: the directional derivative against central differences."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    out = tmp_path / "jvp_tree.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "jvp",
                           "tests/pytrees_higher_src.py:dict_layer", "--like", "params=PARAMS",
                           "--wrt", "params", "-o", str(out)], cwd=root, capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=root))
    assert done.returncode == 0, done.stderr
    args = ({"W": _rng(1).normal(size=(2, 2)), "b": _rng(2).normal(size=2), "s": 0.8},
            _rng(3).normal(size=2))
    v = _random_like(args[0], 40)
    (tmp_path / "args.pkl").write_bytes(pickle.dumps((args, v)))
    run = subprocess.run([sys.executable, "-c", "import pickle, sys; from jvp_tree import *; "
                          "args, v = pickle.load(open('args.pkl', 'rb')); "
                          "sys.stdout.buffer.write(pickle.dumps(jvp_dict_layer(*args, "
                          "dparams=v)))"],
                         cwd=tmp_path, capture_output=True, timeout=120,
                         env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": here})
    assert run.returncode == 0, run.stderr.decode()
    value, tangent = pickle.loads(run.stdout)
    h = 1e-6
    want = (src.dict_layer(_moved(args[0], v, h), args[1])
            - src.dict_layer(_moved(args[0], v, -h), args[1])) / (2 * h)
    assert value == pytest.approx(src.dict_layer(*args))
    assert tangent == pytest.approx(want, rel=1e-6, abs=1e-8)
