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


LIST_SRC = '''
import math


def h(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + math.sin(c[i])
    return s
'''


def _fd_list(fn, c, x, dc, dx, h=1e-6):
    up = [ci + h * di for ci, di in zip(c, dc)]
    down = [ci - h * di for ci, di in zip(c, dc)]
    return (fn(up, x + h * dx) - fn(down, x - h * dx)) / (2 * h)


def test_a_tangent_list_is_tested_as_a_list_only():
    # its items are not added up to tell numbers from arrays: the code the slow
    # path runs for another list is chosen by the parameters' arguments alone
    fn = make_function(LIST_SRC, "h", {"math": math})
    c, x = [0.3, -1.2, 0.8, 2.0], 0.6
    for lengths in (None, {"c": 4}):
        j = s2s_ad.jvp(fn, wrt=None, lengths=lengths)
        guard = _guard(j)
        assert "_s2s_sequence(c)" in guard and "_s2s_sequence(dc)" not in guard, guard
        dc, dx = [1.0, 0.5, -2.0, 0.25], -0.75
        value, tangent = j(c, x, dc=dc, dx=dx)
        assert value == fn(c, x)
        assert abs(tangent - _fd_list(fn, c, x, dc, dx)) < 1e-8
        # a list of arrays of directions, or ints: one tangent per direction
        dcs = [np.array([1.0, 0.0, 0.5]), np.array([0.5, 1.0, 0.0]),
               np.array([-2.0, 0.0, 1.0]), np.array([0.25, 0.0, 0.0])]
        dxs = np.array([-0.75, 0.0, 1.0])
        _, tangents = j(c, x, dc=dcs, dx=dxs)
        assert np.shape(tangents) == (3,)
        for k in range(3):
            want = _fd_list(fn, c, x, [float(d[k]) for d in dcs], float(dxs[k]))
            assert abs(tangents[k] - want) < 1e-8
        _, tangent = j(c, x, dc=[1, 0, 2, 0], dx=0)
        assert abs(tangent - _fd_list(fn, c, x, [1.0, 0.0, 2.0, 0.0], 0.0)) < 1e-8


def test_a_tangent_of_a_list_that_is_not_a_list_is_refused_by_name():
    # it failed inside the generated code, on `len()` of the number
    fn = make_function(LIST_SRC, "h", {"math": math})
    c, x = [0.3, -1.2, 0.8, 2.0], 0.6
    for lengths in (None, {"c": 4}):  # a list of any length, and of a length given
        j = s2s_ad.jvp(fn, wrt=None, lengths=lengths)
        for bad in (1.0, 2, None):
            try:
                j(c, x, dc=bad, dx=0.5)
            except TypeError as error:
                assert "the tangent dc= of a list parameter takes a list" in str(error), error
            else:
                raise AssertionError(f"dc={bad!r} was taken")
        _, tangent = j(c, x, dc=[1.0, 0.0, 0.0, 0.0], dx=0.0)  # the right one still works
        assert abs(tangent - _fd_list(fn, c, x, [1.0, 0.0, 0.0, 0.0], 0.0)) < 1e-8
