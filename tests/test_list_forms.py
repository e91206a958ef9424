"""Everyday ways of making and growing lists and tuples (s2s_ad/frontend/list_forms.py):
``list(e)`` of any iterable a comprehension reads, ``xs += [v]`` on a list
(in place, as Python's ``+=`` on a list is: ``extend``), ``xs.copy()``,
``t += (v,)`` on a tuple, ``for k in d`` and ``for k in sorted(d)`` over a dict,
``a, b = zip(*pairs)``.
Each was refused ("the call `list` is not supported", "a list is used where a
number is expected", "a `for` loop must iterate over `range(...)`"). Every
derivative against central differences: in straight code, in loops, in a
helper, with ``jvp`` and ``jvp(grad)``, in NumPy code, and through the CLI's
module in a fresh interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import assert_gradients, fd_gradient
from tests.modules import cli_grad, import_source
from tests.scalar_checks import assert_derivatives
from tests.soak import beyond

SRC = '''
import math

import numpy as np


def list_of_tuple(x):
    a = list((x, math.sin(x), x * x))
    return a[2] * a[1] + a[0]


def list_of_reversed(x):
    xs = [x, 2.0 * x, x * x]
    ys = list(reversed(xs))
    return ys[0] * 3.0 + ys[2] * ys[1]


def list_of_grown(x):
    hs = []
    for i in range(5):
        hs.append(math.cos(x * i))
    ys = list(hs)
    ys.append(x)
    return sum(v * v for v in ys) + len(list())


def list_of_zip(x):
    pairs = list(zip([x, x * x], [math.exp(x), 2.0]))
    return pairs[0][0] * pairs[0][1] + pairs[1][0] * pairs[1][1]


def as_tuples(x):
    xs = [x, math.sin(x) * x]
    t = tuple(xs)
    u = tuple([v for v in reversed(t)])
    hs = []
    for i in range(4):
        hs.append(x * i + 0.5)
    v = tuple(hs)
    return t[0] * u[0] + len(tuple([0, 1, 2])) + v[1] * v[-1]


def transposed(x):
    pairs = [(x, math.sin(x)), (x * x, 2.0), (1.5, x)]
    a, b = zip(*pairs)
    xs, ys = zip(*[(u * v, v) for u, v in pairs])
    return sum(a) * b[1] + a[2] * b[0] + sum(u * w for u, w in zip(xs, ys))


def plus_in_loop(x):
    xs = [x]
    for i in range(4):
        xs += [xs[-1] * x + 0.5]
    return sum(xs)


def plus_two_in_loop(x):
    xs = []
    for i in range(3):
        xs += [x * i, math.sin(x)]
        if i > 0:
            xs += [xs[-1] * xs[-3]]
    return sum(xs) * xs[-1]


def plus_aliased(x):
    xs = [x]
    ys = xs
    xs += [x * x]
    ys += (math.sin(x),)
    return sum(ys) * len(xs) + xs[2]


def plus_in_while(x):
    hs = [x]
    k = 0
    while k < 4:
        hs += [hs[-1] * 0.5 + x]
        k += 1
    return hs[-1] * hs[1]


def copied(x):
    hs = [x, x * x]
    acc = 0.0
    for i in range(3):
        ks = hs.copy()
        ks += [acc]
        acc = acc + sum(ks) * 0.5 + ks[-1] * hs[1]
    return acc + len(hs)


def tuple_plus(x):
    t = (x,)
    t += (x * x, math.sin(x))
    return t[0] * t[1] + t[2]


def grow(a, n: int):
    hs = []
    for i in range(n):
        hs += [a * i]
    return hs


def from_helper(x):
    hs = grow(x, 5)
    ys = list(reversed(hs))
    ys += [x * x]
    return sum(v * v for v in ys)


def helper_called(x):
    s = 0.0
    for k in range(2):
        s = s + plus_two_in_loop(x * (k + 1.0)) + list_of_reversed(x)
    return s


def over_keys(d, y):
    s = 0.0
    for k in d:
        s = s + d[k] * y
    for k in sorted(d):
        s = s * 0.5 + d[k] * d[k]
    return s


def over_local_keys(x):
    d = {"b": x, "a": x * x, "c": math.sin(x)}
    s = 0.0
    for k in sorted(d):
        s = s * 2.0 + d[k]
    for k in d:
        s = s + d[k] * x
    return s


def arrays(a, b):
    xs = [np.sin(a), b]
    for i in range(3):
        xs += [xs[-1] * a + xs[-2]]
    ys = list(reversed(xs))
    return np.sum(np.stack(ys) * np.stack(xs))
'''

SCALAR = ["as_tuples", "transposed", "list_of_tuple", "list_of_reversed", "list_of_grown", "list_of_zip", "plus_in_loop",
          "plus_two_in_loop", "plus_aliased", "plus_in_while", "copied", "tuple_plus",
          "from_helper", "helper_called", "over_local_keys"]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("list_forms"), SRC, "list_forms_src")


@pytest.mark.parametrize("name", SCALAR)
def test_scalar(mod, name):
    assert_derivatives(getattr(mod, name), 0.7)


def test_dict_parameter(mod):
    d, y, h = {"b": 1.3, "a": -0.4}, 0.7, 1e-6
    gd, gy = s2s_ad.grad(mod.over_keys, wrt=None)(d, y)
    want_y = (mod.over_keys(d, y + h) - mod.over_keys(d, y - h)) / (2 * h)
    assert np.isclose(gy, want_y, rtol=1e-6)
    for k in d:
        up, down = dict(d), dict(d)
        up[k] += h
        down[k] -= h
        want = (mod.over_keys(up, y) - mod.over_keys(down, y)) / (2 * h)
        assert np.isclose(gd[k], want, rtol=1e-6), k


def test_arrays(mod):
    assert_gradients(mod.arrays, [np.array([0.3, 1.2, -0.5]), np.array([1.5, -0.4, 0.2])],
                     [0, 1], rtol=1e-6)


def test_aliasing_is_python_s(mod):
    """`ys = xs; xs += [v]` changes the list both names hold (extend in
    place): the forward value is Python's, and so the gradient."""
    assert mod.plus_aliased(0.7) == pytest.approx(
        (0.7 + 0.49 + np.sin(0.7)) * 3 + np.sin(0.7))


@pytest.mark.parametrize("name", beyond(["plus_two_in_loop", "copied", "over_local_keys"], 1))
def test_cli_module(mod, tmp_path, name):  # (all three with --soak)
    (got,) = cli_grad(tmp_path, SRC, name, [0.7])
    assert np.isclose(got, s2s_ad.grad(getattr(mod, name))(0.7), rtol=1e-12)
    f, h = getattr(mod, name), 1e-6
    assert np.isclose(got, (f(0.7 + h) - f(0.7 - h)) / (2 * h), rtol=1e-6)


REFUSED = '''
import numpy as np


def tuple_grown_in_loop(x, n):
    t = ()
    for i in range(n):
        t += (x * i,)
    return sum(t)


def plus_on_parameter(xs, y):
    xs += [y]
    return sum(xs)


def array_plus(a):
    b = a * 2.0
    b += a * a
    return np.sum(b * a)
'''


def test_refusals_and_arrays(tmp_path):
    mod = import_source(tmp_path, REFUSED, "list_forms_refused")
    # (over range(3) the loop is unrolled: tests/test_call_tuples_joined.py)
    with pytest.raises(s2s_ad.SourceError, match=r"list_forms_refused.py:7:\d+"):
        s2s_ad.grad(mod.tuple_grown_in_loop)(0.5, 3)
    with pytest.raises(s2s_ad.S2SError, match=r"list_forms_refused.py:\d+:\d+"):
        s2s_ad.grad(mod.plus_on_parameter, wrt=None)([1.0, 2.0], 0.5)
    # an array's `+=` stays NumPy's elementwise addition
    a = np.array([0.5, -1.0])
    g = s2s_ad.grad(mod.array_plus)(a)
    assert np.allclose(g, fd_gradient(mod.array_plus, [a], 0), rtol=1e-6)
