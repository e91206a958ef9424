"""The standard library's ``operator`` functions, ``functools.reduce`` and
``statistics.mean``/``fmean``/``variance``/``stdev``/``pvariance``/``pstdev``,
``divmod`` and ``min``/``max`` with ``default=`` read as the arithmetic they compute (s2s_ad/frontend/stdlib_calls.py). Each
was refused ("the call `operator.add` is not supported"), and the
``statistics`` functions were read from the standard library's own source
and refused there, located in statistics.py: any other function of the
standard library is refused at the user's call now. Against central
differences, with ``jvp`` and ``jvp(grad)``, in NumPy code too."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import assert_gradients
from tests.modules import import_source
from tests.scalar_checks import assert_derivatives

SRC = '''
import functools
import math
import operator
import statistics

import numpy as np


def operators(x):
    y = math.sin(x)
    return (operator.add(x, y) * operator.mul(x, 2.0) + operator.truediv(x, y)
            - operator.neg(y) + operator.pow(x, 2) + operator.sub(y, x) * operator.abs(-x))


def reduced(x):
    a = functools.reduce(operator.mul, [x, math.cos(x), x + 1.0])
    b = functools.reduce(lambda acc, v: acc * 0.5 + v, [x, x * x, 2.0], 1.0)
    c = functools.reduce(max, (x, 0.3, x * x))
    return a + b + c


def spreads(x):
    xs = [x, math.exp(x), x * x, 1.5]
    return (statistics.mean(xs) + statistics.fmean(xs) * 2.0 + statistics.variance(xs)
            + statistics.stdev(xs) + statistics.pvariance(xs) + statistics.pstdev(xs))


def step(acc, w):
    return np.tanh(acc * w + 0.1)


def arrays(a, b):
    M = np.outer(a, b)
    return (np.sum(functools.reduce(step, [a, b, a * b], b))
            + np.sum(functools.reduce(operator.matmul, [M, M, M])))


def median(x):
    return statistics.median([x, 2.0 * x, 1.0])


def divided(x):
    q, r = divmod(x * 7.0, 0.6 + x * x)
    s = 0.0
    for k in range(3):
        s = s + divmod(x + k, 0.4)[1] * q
    return s + r * r


def defaults(x):
    lo = min([x, math.sin(x), x * x], default=0.0)
    hi = max((x, 1.5 - x), default=-1.0)
    none = min([], default=x * 3.0)
    xs = [math.cos(x) * k for k in range(3)]
    return lo * hi + none + max(xs, default=0.0)


def default_in_helper(x):
    s = 0.0
    for k in range(2):
        s = s + defaults(x + 0.1 * k)
    if x > 0.0:
        s = s + divided(x)
    return s


def array_divmod(a, b):
    q, r = divmod(a * 3.0, b * b + 1.0)
    return np.sum(r * a) + np.sum(q)


def runtime_default(xs):
    return min(xs, default=0.0)
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("stdlib_calls"), SRC, "stdlib_calls_src")


@pytest.mark.parametrize("name", ["operators", "reduced", "spreads", "divided", "defaults",
                                  "default_in_helper"])
def test_scalar(mod, name):
    assert_derivatives(getattr(mod, name), 0.7)
    assert_derivatives(getattr(mod, name), 0.35)


def test_divmod_of_arrays(mod):
    assert_gradients(mod.array_divmod, [np.array([0.3, 1.2, -0.5]), np.array([1.5, -0.4, 0.2])],
                     [0, 1], rtol=1e-6)


def test_default_of_a_list_of_any_length_is_refused_located(mod):
    with pytest.raises(s2s_ad.SourceError, match=r"stdlib_calls_src.py:\d+:\d+: .*default="):
        s2s_ad.grad(mod.runtime_default)([0.5, 0.2])


def test_arrays(mod):
    assert_gradients(mod.arrays, [np.array([0.3, 1.2, -0.5]), np.array([1.5, -0.4, 0.2])],
                     [0, 1], rtol=1e-6)


def test_other_standard_library_functions_refused_at_the_call(mod):
    with pytest.raises(s2s_ad.SourceError, match=r"stdlib_calls_src.py:\d+:\d+: .*statistics"):
        s2s_ad.grad(mod.median)(0.7)
