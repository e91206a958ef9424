"""Helpers called from NumPy code, each gradient against finite differences."""

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient, make_function

# An index array read element by element (and whole) inside a helper: its
# elements choose positions, so no derivative may flow to it (np.add.at into
# an integer array's adjoint used to fail).
INDEX_HELPERS = {
    "loop": """
def h(y, parents):
    s = 0.0
    for i in range(3):
        s = s + y[parents[i]] * np.sin(y[i])
    return s
""",
    "whole": """
def h(y, parents):
    return np.sum(y[parents] * y)
""",
}
CALLS = {
    "literal": "def f(x, par):\n    return h(x, np.array([0, 0, 1]))\n",
    "parameter": "def f(x, par):\n    return h(x, par)\n",
    "arange": "def f(x, par):\n    return h(x, np.arange(3)) + h(x * 2.0, par)\n",
    "in_loop": "def f(x, par):\n    s = 0.0\n    for k in range(2):\n"
               "        s = s + h(x + k, par)\n    return s\n",
}


@pytest.mark.parametrize("helper", sorted(INDEX_HELPERS))
@pytest.mark.parametrize("call", sorted(CALLS))
def test_index_array_passed_to_a_helper_gets_no_adjoint(helper, call):
    f = make_function(INDEX_HELPERS[helper] + CALLS[call])
    x, par = np.array([1.0, 2.0, 3.0]), np.array([0, 0, 1])
    got = s2s_ad.grad(f)(x, par)
    np.testing.assert_allclose(got, fd_gradient(f, [x, par], 0), rtol=1e-5, atol=1e-7)
    value, vjp_fn = s2s_ad.vjp(f, x, par)
    np.testing.assert_allclose(vjp_fn(0.7)[0], 0.7 * fd_gradient(f, [x, par], 0),
                               rtol=1e-5, atol=1e-7)


SHAPE_HELPER = """
def h(u, n):
    z = np.zeros(n)
    return u * u + z
"""
SHAPE_CALLS = {
    "once": "def f(x):\n    return np.sum(h(x, 3))\n",
    "twice": "def f(x):\n    return np.sum(h(x, 3) * h(2.0 * x, x.shape[0]))\n",
    "in_loop": "def f(x):\n    s = 0.0\n    for k in range(2):\n        s = s + np.sum(h(x + k, 3))\n"
               "    return s\n",
    "in_if": "def f(x):\n    if np.sum(x) > 0:\n        return np.sum(h(x, 3))\n"
             "    return np.sum(x)\n",
}


@pytest.mark.parametrize("call", sorted(SHAPE_CALLS))
def test_helper_parameter_used_as_a_shape_gets_no_adjoint(call):
    # `n` has no derivative; the backward pass returns np.zeros_like(n) for it,
    # so the tape must carry n (a NameError before).
    f = make_function(SHAPE_HELPER + SHAPE_CALLS[call])
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(s2s_ad.grad(f)(x), fd_gradient(f, [x], 0), rtol=1e-5, atol=1e-7)
    _, vjp_fn = s2s_ad.vjp(f, x)
    np.testing.assert_allclose(vjp_fn(-1.3)[0], -1.3 * fd_gradient(f, [x], 0),
                               rtol=1e-5, atol=1e-7)
