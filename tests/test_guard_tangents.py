"""The check a derivative of a function of numbers makes on each call tests
its parameters' classes only: the JVP's tangents and the gradient's seed are
passed on untested, as the slow path it guards passes them to the same
generated code whatever they are. Tangents and seeds of other kinds (a
NumPy array of directions, a NumPy float, an int) give what they gave;
a parameter of another kind still takes the slow path. Against central
differences."""

from __future__ import annotations

import linecache
import math

import numpy as np

import s2s_ad
from tests.array_oracle import make_function

SRC = '''
import math


def f(x, y):
    return math.sin(x * y) + x * x / (1.0 + y * y)
'''


def _fd(fn, x, y, vx, vy, h=1e-6):
    return (fn(x + h * vx, y + h * vy) - fn(x - h * vx, y - h * vy)) / (2 * h)


def _guard(fn) -> str:
    """The first lines of the function s2s-ad hands out (its check)."""
    return "".join(linecache.getlines(fn.__code__.co_filename)[:3])


def test_the_check_tests_the_parameters_only():
    fn = make_function(SRC, "f", {"math": math})
    j = s2s_ad.jvp(fn, wrt=None)
    guard = _guard(j)
    assert "x.__class__" in guard and "y.__class__" in guard, guard
    assert "dx.__class__" not in guard and "dy.__class__" not in guard, guard
    g = s2s_ad.grad(fn, wrt=None)
    assert "dout.__class__" not in _guard(g), _guard(g)


def test_tangents_of_other_kinds():
    fn = make_function(SRC, "f", {"math": math})
    j = s2s_ad.jvp(fn, wrt=None)
    x, y = 0.7, -0.4
    for vx, vy in [(1.0, 0.0), (1, 2), (np.float64(0.5), -1.5), (True, 0.25)]:
        value, tangent = j(x, y, dx=vx, dy=vy)
        assert value == fn(x, y)
        assert abs(tangent - _fd(fn, x, y, float(vx), float(vy))) < 1e-8
    vx, vy = np.array([1.0, 0.0, 0.5]), np.array([0.0, 1.0, -2.0])
    _, tangents = j(x, y, dx=vx, dy=vy)
    assert np.shape(tangents) == (3,)
    for k in range(3):
        assert abs(tangents[k] - _fd(fn, x, y, vx[k], vy[k])) < 1e-8


def test_seeds_and_parameters_of_other_kinds():
    fn = make_function(SRC, "f", {"math": math})
    g = s2s_ad.grad(fn, wrt=None)
    x, y = 0.7, -0.4
    want = (_fd(fn, x, y, 1.0, 0.0), _fd(fn, x, y, 0.0, 1.0))
    for seed in (2, np.float64(2.0), np.array([2.0, -1.0])):
        got = g(x, y, dout=seed)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, np.multiply(seed, b), rtol=1e-7, atol=1e-9)
    got = g(np.float64(x), y)  # a NumPy float parameter: the slow path
    for a, b in zip(got, want):
        assert abs(a - b) < 1e-8
