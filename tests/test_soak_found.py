"""Regression tests for what the soaks of docs/testing.md found, each gradient
against central finite differences (tests/array_oracle.py)."""

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient, make_function

# --numpy-aliasing seeds 1002097, 1005352, 1007077, 1007251, 1007768, 1009756
# (and seed 1083 of the earlier soak): an array value whose adjoint starts as
# 0.0 before a branch or loop that may not add to it (``dc1 = 0.0``), times a
# number (``dc1 * t5``), reached unbroadcast as a number, which could not be
# reshaped to the array's shape: the gradient raised ValueError.
ZERO_ADJOINT = {
    "branch": """
def f(b, s: float):
    c1 = b * np.sqrt(s * s + 1.0)
    if s > 0:
        c1 = b * np.tanh(b)
    else:
        c1 **= 2
    return np.sum(c1 * b)
""",
    "loop": """
def f(b, s: float):
    c1 = b * s
    for i in range(2):
        c1 = b * (s * np.sum(2.0, axis=None, keepdims=True))
    return np.sum(c1 * b)
""",
}

# --numpy-aliasing seed 1009777: a value that is a number (or a row) before a
# loop and an array of another shape inside it, not read in the loop (``v =
# b[0] * s; for ...: v = np.ravel(b)``): the adjoint carried to the previous
# iteration was reset to the number 0.0, which np.reshape (ravel's adjoint)
# could not shape. It is a zero of the array's shape now, and the value before
# the loop gets 0.0 when the loop ran (the zeros have the loop's shape, not its).
CARRIED_KIND_CHANGE = {
    "ravel": """
def f(b, s: float, n: int):
    v = b[0] * s
    for i in range(n):
        v = np.ravel(b) * s
    return np.sum(v * v)
""",
    "transpose": """
def f(b, s: float, n: int):
    v = b[0] * s
    for i in range(n):
        v = b.T * s
    return np.sum(v * v)
""",
}

POINTS = [(np.array([1.0, 2.0, 3.0]), 1.5), (np.array([1.0, 2.0, 3.0]), -1.5),
          (np.array([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]]), 1.5),
          (np.array([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]]), -1.5)]


def _assert_gradient(source, b, s):
    f = make_function(source)
    db, ds = s2s_ad.grad(f, (0, 1))(b, s)
    assert np.shape(db) == np.shape(b)
    np.testing.assert_allclose(db, fd_gradient(f, [b, s], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ds, fd_gradient(f, [b, s], 1), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(ZERO_ADJOINT))
@pytest.mark.parametrize("b, s", POINTS)
def test_a_zero_adjoint_of_an_array_times_a_number(name, b, s):
    _assert_gradient(ZERO_ADJOINT[name], b, s)


@pytest.mark.parametrize("name", sorted(CARRIED_KIND_CHANGE))
@pytest.mark.parametrize("n", [0, 1, 3])
@pytest.mark.parametrize("b, s", POINTS[::2])
def test_a_value_that_becomes_an_array_of_another_shape_in_a_loop(name, n, b, s):
    f = make_function(CARRIED_KIND_CHANGE[name])
    db, ds = s2s_ad.grad(f, (0, 1))(b, s, n)
    assert np.shape(db) == np.shape(b)
    np.testing.assert_allclose(db, fd_gradient(lambda b, s: f(b, s, n), [b, s], 0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ds, fd_gradient(lambda b, s: f(b, s, n), [b, s], 1),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("g_shape, shape", [((), (2, 3)), ((3,), (2, 3)), ((3,), (2, 1)),
                                            ((1,), (4, 2)), ((2, 1), (3, 2, 3))])
def test_unbroadcast_of_an_adjoint_with_fewer_axes(g_shape, shape):
    """unbroadcast(g, x) with g of fewer axes than x: g broadcast to both
    shapes, then summed back to x's."""
    from test_numpy_fastpaths import _helpers
    g = np.arange(1.0, 1.0 + np.prod(g_shape, dtype=int)).reshape(g_shape)
    full = np.broadcast_to(g, np.broadcast_shapes(g_shape, shape))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and full.shape[i] != 1)
    got = _helpers()["unbroadcast"](g, np.zeros(shape))
    assert np.shape(got) == shape
    np.testing.assert_array_equal(got, np.sum(full, axis=axes, keepdims=True)
                                  * np.ones(shape))


def test_a_value_that_becomes_an_array_in_a_helper_called_twice(pairs):
    g = make_function(CARRIED_KIND_CHANGE["ravel"] + """
def g(b, s: float):
    return f(b, s, 2) + f(b * 0.5, s, 0)
""", "g")
    b, s = POINTS[2]
    db, ds = s2s_ad.grad(g, (0, 1))(b, s)
    np.testing.assert_allclose(db, fd_gradient(g, [b, s], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ds, fd_gradient(g, [b, s], 1), rtol=1e-6, atol=1e-8)
    pulled = s2s_ad.vjp(g, b, s)[1](-0.75)
    np.testing.assert_allclose(pulled[0], -0.75 * fd_gradient(g, [b, s], 0), rtol=1e-6, atol=1e-8)


# --numpy-shifts seed 7001416: a shift m = np.max(y) whose use does not cancel
# (exp(y - m) * y is no log-sum-exp), summed into the first item of a returned
# tuple. The analysis of shifts that cancel counted the uses of values without
# the items of a tuple result, so vjp (the pair, before an output is chosen)
# saw every use of the summed value accounted for and dropped m's adjoint: a
# wrong gradient at the maximum's element, where grad(output=0) was right.
SHIFT_RETURNED = """
def f(z, w):
    y = z * w
    m = np.max(y, axis=None, keepdims=True)
    e = np.exp(y - m)
    return np.sum(e * y), np.sum(z * z)
"""


@pytest.mark.parametrize("cotangent", [(1.0, 0.0), (0.0, 1.0), (0.7, -1.3)])
def test_a_shift_returned_in_a_tuple_keeps_its_adjoint_through_vjp(cotangent):
    f = make_function(SHIFT_RETURNED)
    rng = np.random.default_rng(1416)
    z, w = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    value, pull = s2s_ad.vjp(f, z, w)
    np.testing.assert_allclose(value, f(z, w))
    got = pull(cotangent)

    def weighted(z, w):
        a, b = f(z, w)
        return cotangent[0] * a + cotangent[1] * b

    for i in (0, 1):
        np.testing.assert_allclose(got[i], fd_gradient(weighted, [z, w], i), rtol=1e-5, atol=1e-7)
