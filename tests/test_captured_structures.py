"""Closures capturing structures (lists, tuples, dicts, dataclasses,
NamedTuples of numbers and arrays): the captured structure is data of the
gradient, read from the closure on every call, with no gradient itself.
Each gradient against central differences, through grad, vjp, jvp and the
CLI's file in a fresh interpreter."""

import os
import subprocess
import sys

import numpy as np
import pytest

import captured_structures_src as c
import s2s_ad
from array_oracle import fd_gradient as array_fd
from oracle import close, fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

RNG = np.random.default_rng(11)
LAYERS = [(RNG.normal(size=(3, 3)), RNG.normal(size=3)) for _ in range(2)]

SCALAR = [
    ("list", lambda: c.make_list_loss([1.0, 2.0, 3.0]), [0.3]),
    ("list, one item", lambda: c.make_list_loss([0.5]), [0.3]),
    ("list and tuple indexed in a loop", lambda: c.make_indexed_loss([1.0, 2.0, -1.0],
                                                                    (0.5, 2.0, 1.5)), [0.3, 0.1]),
    ("dataclass and NamedTuple", lambda: c.make_config_loss(c.Config(2.0, 0.5),
                                                            c.Prior(0.25, 2.0)), [0.3]),
    ("dict holding a list", lambda: c.make_dict_loss({"a": 1.5, "b": [1.0, 3.0]}), [0.3]),
]

ARRAYS = [
    ("tuple of arrays", lambda: c.make_regression_loss((RNG.normal(size=(4, 3)),
                                                        RNG.normal(size=4))), [RNG.normal(size=3)]),
    ("list of (W, b) pairs", lambda: c.make_network_loss(LAYERS, RNG.normal(size=3)),
     [RNG.normal(size=3)]),
]


@pytest.mark.parametrize("name, make, point", SCALAR, ids=[s[0] for s in SCALAR])
def test_scalar_captures_against_finite_differences(name, make, point):
    loss = make()
    wrt = tuple(range(len(point)))
    got = s2s_ad.grad(loss, wrt=wrt)(*point)
    want = fd_gradient(loss, point, list(wrt))
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)
    value, pull = s2s_ad.vjp(loss, *point)
    assert close(value, loss(*point))
    assert all(close(g, 0.5 * w) for g, w in zip(pull(0.5), want))
    value, tangent = s2s_ad.jvp(loss)(*point, **{f"d{n}": 1.0 for n in
                                                   loss.__code__.co_varnames[:len(point)]})
    assert close(tangent, sum(want))


@pytest.mark.parametrize("name, make, point", ARRAYS, ids=[s[0] for s in ARRAYS])
def test_array_captures_against_finite_differences(name, make, point):
    loss = make()
    got = s2s_ad.grad(loss)(*point)
    np.testing.assert_allclose(got, array_fd(loss, point, 0), rtol=1e-5, atol=1e-8)
    _, pull = s2s_ad.vjp(loss, *point)
    np.testing.assert_allclose(pull(2.0)[0], 2.0 * got)


def test_a_change_to_the_captured_list_is_seen():
    data = [1.0, 2.0, 3.0]
    loss = c.make_list_loss(data)
    dloss = s2s_ad.grad(loss)
    before = dloss(0.3)
    data[0] = 5.0                 # an item changed: the same code, new values
    assert close(dloss(0.3), fd_gradient(loss, [0.3], [0])[0])
    data.append(4.0)              # a longer list: read at its new length
    assert close(dloss(0.3), fd_gradient(loss, [0.3], [0])[0])
    assert not close(before, dloss(0.3))


def test_a_change_of_structure_asks_for_the_gradient_again():
    d = {"a": 1.5, "b": [1.0, 3.0]}
    loss = c.make_dict_loss(d)
    dloss = s2s_ad.grad(loss)
    assert close(dloss(0.3), fd_gradient(loss, [0.3], [0])[0])
    d["b"].append(2.0)            # the code read d["b"] as two items
    with pytest.raises(TypeError, match="whose structure .* changed"):
        dloss(0.3)
    assert close(s2s_ad.grad(loss)(0.3), fd_gradient(loss, [0.3], [0])[0])


def test_the_captured_structure_has_no_gradient():
    loss = c.make_list_loss([1.0, 2.0])
    with pytest.raises(s2s_ad.SourceError, match="captures from the function that made it"):
        s2s_ad.grad(loss, wrt="data")(0.5)  # (lists are seen at the call)


def test_a_captured_list_of_strings_is_static():
    # strings select code (a structure's static leaves): `w * len(labels)`
    assert close(s2s_ad.grad(c.labels_loss)(0.5), fd_gradient(c.labels_loss, [0.5], [0])[0])


def test_hvp_and_value_and_grad_of_a_closure_capturing_a_dataclass():
    loss = c.make_config_loss(c.Config(2.0, 0.5), c.Prior(0.25, 2.0))
    value, g = s2s_ad.value_and_grad(loss)(0.3)
    assert close(value, loss(0.3)) and close(g, fd_gradient(loss, [0.3], [0])[0])
    grad = s2s_ad.grad(loss)
    h = s2s_ad.hvp(loss)(0.3, 1.0)
    assert close(h, fd_gradient(grad, [0.3], [0])[0])


@pytest.mark.parametrize("name, options, keywords", [
    ("indexed_loss", [], "xs=[1.0, 2.0, -1.0, 0.5], weights=(0.5, 2.0, 1.5, 1.0)"),
    ("list_loss", ["--length", "data=4"], "data=[1.0, 2.0, 3.0, 4.0]"),
    ("config_loss", [], "cfg=src.Config(2.0, 0.5), prior=src.Prior(0.25, 2.0)"),
])
def test_cli_file_takes_the_captured_structure_as_a_keyword(tmp_path, name, options, keywords):
    out = tmp_path / "g_mod.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"captured_structures_src.{name}", *options, "-o", str(out)],
                          cwd=HERE, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    probe = (f"import sys; sys.path.insert(0, {HERE!r})\n"
             "import captured_structures_src as src\nimport g_mod\n"
             f"print(repr(g_mod.grad_loss(0.3, {'0.0, ' if name == 'indexed_loss' else ''}"
             f"{keywords})))")
    run = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                         text=True, env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    assert run.returncode == 0, run.stderr
    got = eval(run.stdout.replace("np.float64", ""))
    loss = {"list_loss": c.make_list_loss([1.0, 2.0, 3.0, 4.0]),
            "indexed_loss": c.make_indexed_loss([1.0, 2.0, -1.0, 0.5], (0.5, 2.0, 1.5, 1.0)),
            "config_loss": c.config_loss}[name]
    point = [0.3, 0.0] if name == "indexed_loss" else [0.3]
    want = fd_gradient(loss, point, list(range(len(point))))
    got = got if isinstance(got, tuple) else (got,)
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


def test_vjp_sees_a_change_of_the_captured_structure():
    d = {"a": 1.5, "b": [1.0, 3.0]}
    loss = c.make_dict_loss(d)
    _, pull = s2s_ad.vjp(loss, 0.3)
    assert close(pull(1.0)[0], fd_gradient(loss, [0.3], [0])[0])
    d["b"] = [2.0, -1.0, 4.0]     # another length: other code, the new values
    _, pull = s2s_ad.vjp(loss, 0.3)
    assert close(pull(1.0)[0], fd_gradient(loss, [0.3], [0])[0])


CLOSURES = [
    ("numbers", lambda: __import__("closures_src").scalar_loss, [0.3, 0.7]),
    ("list", lambda: c.make_list_loss([1.0, 2.0, 3.0]), [0.3]),
    ("dataclass and NamedTuple", lambda: c.make_config_loss(c.Config(2.0, 0.5),
                                                            c.Prior(0.25, 2.0)), [0.3]),
    ("dict holding a list", lambda: c.make_dict_loss({"a": 1.5, "b": [1.0, 3.0]}), [0.3]),
]


@pytest.mark.parametrize("name, make, point", CLOSURES, ids=[s[0] for s in CLOSURES])
def test_second_derivatives_and_jacobians_of_closures(name, make, point):
    # hvp, hessian, grad(grad), jvp(grad), jacfwd, jacrev of a closure:
    # against central differences of its gradient, itself against f's
    loss = make()
    wrt = tuple(range(len(point)))
    grad = s2s_ad.grad(loss, wrt=wrt)
    first = fd_gradient(loss, point, list(wrt))
    assert all(close(g, w) for g, w in zip(grad(*point), first))
    rows = [fd_gradient(lambda *p, i=i: grad(*p)[i], point, list(wrt)) for i in wrt]
    hess = s2s_ad.hessian(loss, wrt=wrt)(*point)
    assert all(close(hess[i][j], rows[i][j]) for i in wrt for j in wrt), (hess, rows)
    v = tuple(1.0 if j == 0 else 0.0 for j in wrt)
    assert all(close(h, rows[i][0]) for i, h in enumerate(s2s_ad.hvp(loss, wrt=wrt)(*point, v)))
    g0 = s2s_ad.grad(loss, wrt=0)
    assert all(close(a, b) for a, b in zip(s2s_ad.grad(g0, wrt=wrt)(*point), rows[0]))
    tangents = {f"d{n}": float(j == 0) for j, n in
                enumerate(loss.__code__.co_varnames[:len(point)])}
    value, tangent = s2s_ad.jvp(g0)(*point, **tangents)
    assert close(value, first[0]) and close(tangent, rows[0][0])
    for jac in (s2s_ad.jacfwd, s2s_ad.jacrev, s2s_ad.jacobian):
        got = jac(loss, wrt=wrt)(*point)
        assert all(close(a, b) for a, b in zip(got, first)), (jac.__name__, got, first)
