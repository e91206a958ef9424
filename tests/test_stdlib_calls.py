"""The standard library's ``operator`` functions, ``functools.reduce`` and
``statistics.mean``/``fmean``/``variance``/``stdev``/``pvariance``/``pstdev``,
``statistics.median``/``median_low``/``median_high`` (the middle items of
``sorted``), ``divmod`` and ``min``/``max`` with ``default=`` read as the arithmetic they compute (s2s_ad/frontend/stdlib_calls.py). Each
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


def medians(x):
    xs = [x, math.sin(3.0 * x), x * x, 0.5, 1.0 - x]
    ys = xs[:4]
    return (statistics.median(xs) * statistics.median(ys) + statistics.median_low(ys) ** 2
            + statistics.median_high(ys) * x + statistics.median_low(xs) * 2.0
            + statistics.median_high(xs))


def middle(xs):
    return statistics.median(xs) * xs[0]


def median_loop(a, b):
    s = 0.0
    for i in range(3):
        s = s + middle([a * i + 0.1, b, a + b * i, 1.0])
    return s


def median_of_arrays_code(a):
    xs = [float(np.sum(a)), float(np.prod(a)), float(a[0])]
    return statistics.median(xs) * np.sum(a * a)


def median_grown(x, n: int):
    xs = []
    for i in range(n):
        xs.append(x * i)
    return statistics.median(xs)


def median_of_nothing(x):
    return statistics.median([]) + x


def geometric(x):
    return statistics.geometric_mean([x, 2.0])


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
    with pytest.raises(s2s_ad.SourceError, match=r"stdlib_calls_src.py:\d+:\d+: .*"
                       r"statistics\.geometric_mean"):
        s2s_ad.grad(mod.geometric)(0.7)


@pytest.mark.parametrize("x", [0.7, 0.35, 0.1, 1.3])
def test_median(mod, x):
    """statistics.median / median_low / median_high of a list whose length is
    known while lowering: the middle items of sorted(xs) (one for an odd
    length, the mean of two for an even one); value, gradient, jvp and
    jvp(grad) against central differences (away from ties)."""
    assert s2s_ad.jvp(mod.median)(x, dx=1.0)[0] == mod.median(x)
    assert_derivatives(mod.median, x)
    assert_derivatives(mod.medians, x)


@pytest.mark.parametrize("args", [[[0.3, 0.1, 0.5, 0.7]], [[0.3, 0.1, 0.5]], [[0.9, -0.2]],
                                  [[0.4]]])
def test_median_of_a_list_parameter(mod, args):
    assert_gradients(mod.middle, args, [0], rtol=1e-6)
    h = s2s_ad.hessian(mod.middle)(*args)  # grad(grad): ∂²(m·x0): 1 where m holds x0
    xs = args[0]
    n, order = len(xs), sorted(range(len(xs)), key=lambda k: xs[k])
    mid = [order[n // 2]] if n % 2 else [order[n // 2 - 1], order[n // 2]]
    want = np.zeros((n, n))
    for k in mid:
        want[0, k] += 1.0 / len(mid)
        want[k, 0] += 1.0 / len(mid)
    np.testing.assert_allclose(np.asarray(h), want, atol=1e-12)


@pytest.mark.parametrize("a, b", [(0.3, 0.65), (0.4, 0.2), (-0.5, 1.5)])  # (no ties)
def test_median_in_a_helper_in_a_loop(mod, a, b):
    assert_gradients(mod.median_loop, [a, b], [0, 1], rtol=1e-6)
    value, tangent = s2s_ad.jvp(mod.median_loop, wrt=0)(a, b, da=1.0)
    h = 1e-6
    assert np.isclose(tangent, (mod.median_loop(a + h, b) - mod.median_loop(a - h, b)) / (2 * h),
                      rtol=1e-6)


def test_median_in_numpy_code(mod):
    assert_gradients(mod.median_of_arrays_code, [np.array([0.3, 1.2, 0.7])], [0], rtol=1e-6)


@pytest.mark.parametrize("name, args, message", [
    ("median_grown", (0.3, 4), "`statistics.median` of a sequence whose length is known only "
     "when the code runs"),
    ("median_of_nothing", (0.3,), "`statistics.median` of no items"),
])
def test_median_refusals_are_located(mod, name, args, message):
    with pytest.raises(s2s_ad.SourceError, match=r"stdlib_calls_src.py:\d+:\d+: .*" + message):
        s2s_ad.grad(getattr(mod, name))(*args)
