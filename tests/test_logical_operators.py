"""``&``, ``|``, ``^`` of comparisons and ``~`` of a comparison of arrays in
NumPy code, lowered as NumPy's logical functions (no derivative): the
gradient and the JVP against central differences, at top level, in a helper
and in a loop (points away from the comparisons' thresholds); the gradient
module's file read back; and the refusals, located: ``&`` of integers
(bitwise) and ``~`` of what may be a Python bool (``~True`` is ``-2``)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad import SourceError
from tests.array_oracle import assert_file_jvp, fd_gradient, make_function
from tests.modules import import_source

X = np.array([0.03, 0.15, 0.33, 0.45, 0.61, 0.77, 0.9])
Y = np.array([0.05, 0.27, 0.62, 0.2, 0.7, 0.08, 0.52])

PROGRAMS = {
    "and_or": "def f(x, y):\n    m = (x > 0.2) & (y < 0.65)\n"
              "    return np.sum(np.where(m, x * y, x)) + np.sum(x * ((x > 0.5) | (y < 0.1)))",
    "xor_not": "def f(x, y):\n    return np.sum(np.where(~(x > 0.5), x * x, y)) "
               "+ np.sum(y * ((x > 0.4) ^ (y > 0.4)))",
    "calls": "def f(x, y):\n    k = np.logical_and(x > 0.2, np.logical_not(y < 0.1))\n"
             "    return np.sum(np.where(np.logical_or(k, x > 0.8), x * y, 0.0)) "
             "+ np.sum(np.logical_xor(x > 0.3, y > 0.3) * y * y)",
    "helper": "def inside(x, lo, hi):\n    return (x > lo) & (x < hi)\n\n"
              "def f(x, y):\n    return np.sum(np.where(inside(x, 0.2, 0.65), x * y, y * y))",
    "loop": "def f(x, y):\n    s = x * 1.0\n    for i in range(3):\n"
            "        s = np.where((s > 0.3) & (y > 0.1), s * y + 0.1, s * 0.9)\n    return np.sum(s)",
    "numbers": "def f(a: float, y):\n    return np.sum(y * y) * ((a > 0.0) & (a < 1.0)) + a * a",
    # a helper's test read by `|` in its caller, a helper of that helper, and a branch
    "helper_test": "def inside(x, lo, hi):\n    return (x > lo) & (x < hi)\n\n"
                   "def mid(x, y):\n"
                   "    return np.where(inside(x, 0.2, 0.65) | (y < 0.1), x * y, y)\n\n"
                   "def f(x, y):\n    return np.sum(mid(x, y) * x)",
    "branch": "def f(x, y):\n    if np.sum(x) > 1.0:\n        m = (x > 0.3) & (y < 0.5)\n"
              "    else:\n        m = (x < 0.3) ^ (y > 0.5)\n"
              "    return np.sum(np.where(m, x * y, x))",
    # the tests np.isnan, np.isfinite are masks too: ~np.isnan(y) is a logical not
    "nan_masks": "def f(x, y):\n    z = np.where(y > 0.6, np.nan, y)\n"
                 "    ok = ~np.isnan(z) & np.isfinite(x)\n"
                 "    return np.sum(np.where(ok, x * np.nan_to_num(z), 0.0)) + np.sum(x * np.isnan(z))",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_and_jvp_against_differences(name):
    f = make_function(PROGRAMS[name])
    args = [0.3, Y] if name == "numbers" else [X, Y]
    got = s2s_ad.grad(f, wrt=(0, 1))(*args)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)
    dx = 0.7 if name == "numbers" else np.linspace(-1.0, 1.0, 7)
    dy = np.linspace(0.5, -0.3, 7)
    _, tangent = s2s_ad.jvp(f, wrt=(0, 1))(*args, **{("da" if name == "numbers" else "dx"): dx,
                                                     "dy": dy})
    want = float(np.sum(got[0] * dx) + np.sum(got[1] * dy))
    assert np.isclose(tangent, want, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["and_or", "xor_not", "loop", "helper_test", "branch"])
def test_gradient_file_read_back(tmp_path, name):
    f = make_function(PROGRAMS[name])
    text = s2s_ad.gradient_source(f, wrt=[0, 1])
    assert "np.logical_" in text
    g = import_source(str(tmp_path), text, f"logical_{name}").grad_f
    assert_file_jvp(f, g, [X, Y], [np.linspace(-1.0, 1.0, 7), np.linspace(0.5, -0.3, 7)])


@pytest.mark.parametrize("body,what", [
    ("return np.sum(x) * (k & 3)", "`&` is supported between comparisons"),
    ("return np.sum(x) * ((x > 0.5) & k)", "this operand is int"),
    ("return np.sum(x) * (~(k > 1))", "`~` is supported on a comparison of arrays"),
])
def test_bitwise_arithmetic_is_refused_located(body, what):
    f = make_function(f"def f(x, k: int):\n    {body}")
    with pytest.raises(SourceError, match=r":2:\d+: error: ") as caught:
        s2s_ad.grad(f, wrt=0)(X, 5)
    assert what in str(caught.value) and "^" in str(caught.value)
