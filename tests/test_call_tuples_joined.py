"""Tuples a helper returns, joined with ``+``: ``pair(x, y) + pair(y, x)``,
``pair(x, y) + (z,)``, ``r + (z,)`` for ``r = pair(x, y)``, ``t = t + one(x)``
in an unrolled loop, in an arm, in a helper of a helper, in NumPy code. Each
was refused ("`t` is computed from parameter 'x', lowered as a number", "a
tuple returned by a call is used where a number is expected"); each is the
tuple of the calls' items joined, as Python's ``+`` of tuples is. A tuple
(or list) grown by ``+`` in a ``for i in range(constant)`` loop has the loop
unrolled (its length then known at every iteration). Arithmetic
on such a tuple (``pair(x, y) + 1.0``, ``pair(x, y) * 2``: a TypeError or a
repetition in Python) is refused at the call, located. Gradients, ``jvp`` and
``jvp(grad)`` against central differences; the CLI's module in a fresh
interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import cli_grad, import_source
from tests.scalar_checks import assert_derivatives

SRC = '''
import math

import numpy as np


def pair(a, b):
    return a * b, a + b


def one(a):
    return (a * 3.0,)


def two_calls(x):
    t = pair(x, 0.5) + pair(0.5, x)
    return t[0] * t[3] + math.sin(t[1]) * t[2]


def named_then_joined(x):
    r = pair(x, 1.3)
    t = r + (x,)
    return t[0] * t[2] + t[1]


def in_arms(x):
    if x > 0.0:
        t = pair(x, 1.3) + (x * x,)
    else:
        t = (x * x,) + pair(1.3, x)
    return t[0] * t[1] + t[2]


def inner(x, y):
    return pair(x, y) + pair(y, y)


def helper_of_helper(x):
    a, b, c, d = inner(x, 0.8)
    return a * d + b * c


def in_a_loop(x):
    s = 0.0
    for i in range(2):
        t = pair(x, 0.7 * i) + one(x)
        s = s + t[0] * t[2] + math.sin(t[1])
    return s


def three_joined_summed(x):
    return sum(one(x) + one(x * x) + pair(x, 2.0))


def starred(x):
    a, *rest = pair(x, 0.4) + (1.0,)
    return a * rest[0] + rest[1]


def grown_in_a_loop(x):
    t = ()
    for i in range(3):
        t = t + one(x * i)
    s = (x,)
    for i in range(2):
        s += pair(x, s[-1])
    return t[0] + t[1] * x + t[2] + sum(s)


def list_grown_by_plus(x):
    xs = [x]
    for i in range(3):
        xs = xs + [xs[-1] * 1.3]
    t = ()
    for i in range(3):
        t = (math.sin(x * i),) + t
    return xs[3] + xs[1] + t[0] * t[2]


def grown_in_a_nest(x):
    s = 0.0
    for j in range(2):
        t = ()
        for i in range(2):
            t = t + pair(x, 0.6 * j)
        s = s + t[0] * t[3] + t[1]
    return s


def grown_at_run_time(x, n):
    t = ()
    for i in range(n):
        t = t + (x,)
    return t[0]


def on_arrays(x):
    t = pair(x, 0.5) + (np.sin(x),)
    return np.sum(t[0] * t[2]) + np.sum(t[1] ** 2)


def added_to_a_number(x):
    t = pair(x, 0.5) + 1.0
    return t[0]


def repeated(x):
    t = pair(x, 0.5) * 2
    return t[0] + t[3]
'''

SCALAR = ["two_calls", "named_then_joined", "in_arms", "helper_of_helper", "in_a_loop",
          "three_joined_summed", "starred", "grown_in_a_loop", "list_grown_by_plus",
          "grown_in_a_nest"]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("joined")), SRC, "call_tuples_joined_src")


@pytest.mark.parametrize("name", SCALAR)
@pytest.mark.parametrize("x", [0.7, -0.45])
def test_joined_tuples_match_finite_differences(mod, name, x):
    assert_derivatives(getattr(mod, name), x)


def test_joined_tuples_on_arrays(mod):
    x = np.array([0.3, -0.7, 1.1])
    np.testing.assert_allclose(s2s_ad.grad(mod.on_arrays)(x), fd_gradient(mod.on_arrays, [x], 0),
                               rtol=1e-6, atol=1e-8)
    dx = np.array([0.2, 0.5, -1.0])
    _, tangent = s2s_ad.jvp(mod.on_arrays)(x, dx=dx)
    assert np.isclose(tangent, np.dot(fd_gradient(mod.on_arrays, [x], 0), dx), rtol=1e-6)


@pytest.mark.parametrize("name", ["added_to_a_number", "repeated"])
def test_arithmetic_on_a_call_tuple_is_refused_at_the_call(mod, name):
    with pytest.raises(s2s_ad.SourceError, match=r"returns 2 values \(a tuple\), used here in arithmetic") as info:
        s2s_ad.grad(getattr(mod, name))(0.7)
    assert info.value.source_line.strip().startswith("t = pair(x, 0.5)")
    assert info.value.col == 8


def test_a_tuple_grown_over_a_run_time_count_is_refused_located(mod):
    with pytest.raises(s2s_ad.SourceError, match="call_tuples_joined_src.py:\\d+:\\d+: .*tuple"):
        s2s_ad.grad(mod.grown_at_run_time)(0.7, 3)


def test_cli_module_in_a_fresh_interpreter(tmp_path, mod):
    for name in ("two_calls", "in_a_loop"):
        got = cli_grad(tmp_path, SRC, name, [0.7])
        assert np.isclose(got[0], s2s_ad.grad(getattr(mod, name))(0.7), rtol=1e-12)
