"""Reads of one array by several indices: the adjoints added into one array
in place (``add_scattered``, s2s_ad/reverse/scatters.py) instead of a
``scatter`` of zeros per read and a sum. Each gradient against central
differences, also where the fusion must not happen (the adjoint read in
between), with repeated integer-array indices, new axes, in loops and
helpers, through vjp, and on Dask arrays."""

import re

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, make_function

RNG = np.random.default_rng(31)

CASES = {
    "slices": ("def f(c):\n    return np.sum(np.sin(c[0:3]) * c[3:6]) + c[6] ** 2 * c[7]\n",
               [(9,)]),
    "repeated_index": ("def f(x):\n    i = np.array([0, 0, 2])\n"
                       "    return np.sum(x[i] ** 2) + np.sum(x[1:] * x[0]) + x[2] * x[i][1]\n",
                       [(4,)]),
    "argsort_index": ("def f(x, y):\n    i = np.argsort(y, axis=1)\n"
                      "    return np.sum(x[i] * x[0]) + x[1, 0] * np.sum(x[i][0])\n",
                      [(3, 2), (2, 3)]),
    "new_axis": ("def f(x, y):\n    return np.sum(x[None, :] * y) + np.sum(x[:, None] * y.T) "
                 "+ np.sum(x[1:])\n", [(3,), (2, 3)]),
    "read_between": ("def h(a):\n    return np.sum(a * a)\n"
                     "def f(x):\n    u = x[0] * x[1]\n    v = h(x) * x[2]\n"
                     "    return u * v + x[3] * np.sum(x[:2])\n", [(5,)]),
    "in_a_loop": ("def f(x, n: int):\n    s = 0.0\n    for i in range(n):\n"
                  "        s = s + x[i] * x[i + 1] + np.sum(x[i:i + 2] ** 3)\n    return s\n",
                  [(6,), ()]),
    "helper": ("def cam(c, p):\n    return np.sum(c[0:3] * p) * c[3] + c[4] * np.sum(c[5:] * p)\n"
               "def f(c, ps):\n    s = 0.0\n    for k in range(2):\n"
               "        s = s + cam(c, ps[k])\n    return s\n", [(8,), (2, 3)]),
}


def _args(shapes):
    return [RNG.uniform(0.2, 1.3, s) if s else 3 for s in shapes]


@pytest.mark.parametrize("name", sorted(CASES))
def test_reads_by_index_against_finite_differences(name):
    source, shapes = CASES[name]
    f = make_function(source)
    args = _args(shapes)
    wrt = [i for i, s in enumerate(shapes) if s]
    assert_gradients(f, args, wrt)
    value, pull = s2s_ad.vjp(f, *args)
    assert np.isclose(value, f(*args))
    for i in wrt:
        np.testing.assert_allclose(pull(2.0)[i], 2.0 * fd_gradient(f, args, i), rtol=1e-5,
                                   atol=1e-7)


def test_the_adjoint_is_added_into_in_place():
    """Constant slices and integers: ``dc[3:6] = dc[3:6] + g`` written out (out
    of place, reverse/out_of_place.py), no helper call to decide how (four
    reads: one scatter, three adds)."""
    f = make_function(CASES["slices"][0])
    text = s2s_ad.gradient_source(f)
    assert text.count("dc = scatter(") == 1
    assert "add_scattered" not in text
    assert sum(text.count(f"dc{index} = dc{index} + ")
               for index in ("[0:3]", "[3:6]", "[6]", "[7]")) == 3


def test_an_index_that_may_repeat_keeps_the_helper():
    """An index array (here from ``np.argsort`` along an axis, whose rows
    repeat the same indices) may name an element twice: ``add_scattered``
    decides when it runs, and sends it to ``np.add.at``."""
    text = s2s_ad.gradient_source(make_function(CASES["argsort_index"][0]), wrt="x")
    assert "add_scattered(dx, i," in text or "add_scattered(dx, (i" in text, text


def test_not_fused_where_the_adjoint_is_read_in_between():
    """``dx`` passed to a helper's backward pass (or read otherwise) after the
    first scatter keeps the sum: adding in place would change what was read."""
    f = make_function("def f(x):\n    a = x[0]\n    b = x[1:] * a\n    return np.sum(b * b)\n")
    assert_gradients(f, _args([(4,)]), [0])


@pytest.mark.parametrize("name", ["slices"])
def test_on_dask(name):
    da = pytest.importorskip("dask.array")
    f = make_function(CASES[name][0])
    args = _args(CASES[name][1])
    df = s2s_ad.grad(f, wrt=0)
    got = df(da.from_array(args[0], chunks=4), *args[1:])
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(np.asarray(got), df(*args), rtol=1e-12)
