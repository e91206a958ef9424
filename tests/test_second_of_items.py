"""Second derivatives of ``grad(f, output=K)``, ``f`` returning a tuple:
``jvp``, ``grad``, ``vjp`` of it and ``grad`` of a function calling it,
each against central differences of the gradient itself (checked against
central differences of ``f``'s item first), for numbers and NumPy arrays,
every item and a negative index. (They were refused: "second derivatives
of such functions are not generated yet".)"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient, make_function

RNG = np.random.default_rng(4242)

PAIR = """
def f(x, y):
    a = np.sum(np.sin(x) * y)
    b = np.sum(x * x * y) + np.sum(np.exp(0.3 * y) * x)
    return a, b
"""

LOOPED = """
def f(x, y):
    s = np.zeros(len(x))
    for i in range(3):
        s = np.tanh(s * x + y)
    return np.sum(s * s), np.sum(s * x), np.max(s)
"""


def _numbers(a: float, b: float):
    return a * a * b, np.sin(a) * b + a, a / (1.5 + b * b)


@pytest.mark.parametrize("text,k", [(PAIR, 0), (PAIR, 1), (PAIR, -1), (LOOPED, 0), (LOOPED, 1)])
def test_numpy_items(text, k):
    f = make_function(text)
    x, y = RNG.uniform(0.2, 0.9, 3), RNG.uniform(-0.5, 0.8, 3)
    g = s2s_ad.grad(f, wrt=(0, 1), output=k)
    item = make_function(text + f"\n\ndef item(x, y):\n    return f(x, y)[{k}]\n", name="item")
    first = g(x, y)
    for i, got in enumerate(first):
        np.testing.assert_allclose(got, fd_gradient(item, [x, y], i), rtol=1e-6, atol=1e-8)
    dx, dy = RNG.normal(size=3), RNG.normal(size=3)
    value, tangent = s2s_ad.jvp(g, wrt=(0, 1))(x, y, dx=dx, dy=dy)
    h = 1e-6
    up, down = g(x + h * dx, y + h * dy), g(x - h * dx, y - h * dy)
    for v, t, u, d, want in zip(value, tangent, up, down, first):
        np.testing.assert_allclose(v, want, rtol=1e-12)
        np.testing.assert_allclose(t, (u - d) / (2 * h), rtol=1e-5, atol=1e-7)
    c = (RNG.normal(size=3), RNG.normal(size=3))

    def probe(x, y):
        gx, gy = g(x, y)
        return np.sum(gx * c[0]) + np.sum(gy * c[1])

    for i, got in enumerate(s2s_ad.grad(probe, wrt=(0, 1))(x, y)):
        np.testing.assert_allclose(got, fd_gradient(probe, [x, y], i), rtol=1e-5, atol=1e-7)
    _, pull = s2s_ad.vjp(g, x, y)
    for i, got in enumerate(pull(c)[:2]):
        np.testing.assert_allclose(got, fd_gradient(probe, [x, y], i), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("k", [0, 1, 2])
def test_number_items(k):
    g = s2s_ad.grad(_numbers, wrt=0, output=k)
    a, b, h = 0.7, 1.3, 1e-6
    assert np.isclose(g(a, b), (_numbers(a + h, b)[k] - _numbers(a - h, b)[k]) / (2 * h),
                      rtol=1e-7)
    want = [(g(a + h, b) - g(a - h, b)) / (2 * h), (g(a, b + h) - g(a, b - h)) / (2 * h)]
    np.testing.assert_allclose(s2s_ad.grad(g, wrt=(0, 1))(a, b), want, rtol=1e-6, atol=1e-9)
    value, tangent = s2s_ad.jvp(g, wrt=(0, 1))(a, b, da=0.4, db=-0.3)
    assert np.isclose(value, g(a, b), rtol=1e-12)
    assert np.isclose(tangent, 0.4 * want[0] - 0.3 * want[1], rtol=1e-6, atol=1e-9)
    value, both = s2s_ad.value_and_grad(g, wrt=(0, 1))(a, b)
    assert np.isclose(value, g(a, b), rtol=1e-12)
    np.testing.assert_allclose(both, want, rtol=1e-6, atol=1e-9)
