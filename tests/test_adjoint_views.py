"""The adjoint of an array written element by element in place is read as a
view (no ``own`` copy) where the reverse sweep never changes that adjoint in
place (s2s_ad/reverse/views.py), and copied where it does. Every gradient
against central differences, as a top-level function and as a helper the
gradient's caller calls in a loop (the helper's backward is a separate
function there)."""

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, make_function, rand

RNG = np.random.default_rng(2026)

CASES = [  # (body of h(x, w), own copies left in the backward of h)
    # written once per element, returned, never read: views
    ("y = np.zeros_like(x)\n    for i in range(0, x.shape[0], 2):\n"
     "        y[i] = np.tanh(x[i] * w)\n        y[i + 1] = x[i + 1] * x[i]\n    return y", 0),
    # y[i] read after its write: its adjoint is added to in place, copies stay
    ("y = np.zeros_like(x)\n    for i in range(0, x.shape[0], 2):\n"
     "        y[i] = np.tanh(x[i] * w)\n        y[i + 1] = x[i + 1] * y[i]\n    return y", 2),
    # straight-line writes: their reverse zeroes the elements' adjoint, copies stay
    ("y = np.zeros((3, 4))\n    y[0] = x[0] * w\n    y[1] = np.sin(x[1])\n    y[2] = x[2] ** 2\n"
     "    return y", 3),
    # the same elements written twice: the second write zeroes their adjoint in place
    ("y = np.zeros_like(x)\n    y[0] = x[0] * w\n    y[0] = y[0] * x[1]\n    return y", 2),
    # y read after a write: its adjoint is added to in place
    ("y = np.zeros_like(x)\n    for i in range(1, x.shape[0]):\n"
     "        y[i] = y[i - 1] * w + x[i]\n    return y", 1),
    # y used whole after straight-line writes: zeroed in place, copies stay
    ("y = np.zeros_like(x)\n    y[0] = x[0] * w\n    y[1] = x[1] * w\n    return y * y", 2),
]


def _functions(body):
    h = make_function(f"def h(x, w):\n    {body}", "h")
    top = make_function(f"def top(x, w):\n    {body}", "top")
    caller = make_function(
        "def f(x, w):\n    s = 0.0\n    for k in range(2):\n"
        "        s = s + np.sum(np.cos(h(x, w) * (k + 1.0)))\n    return s", env={"h": h})
    outer = make_function("def g(x, w):\n    return np.sum(np.cos(top(x, w)))", "g",
                          env={"top": top})
    return h, caller, outer


@pytest.mark.parametrize("body, copies", CASES)
def test_gradient_with_and_without_copies(body, copies):
    h, caller, outer = _functions(body)
    args = [rand(RNG, (4, 4)), 0.7]
    assert_gradients(caller, args, [0, 1])
    assert_gradients(outer, args, [0, 1])
    text = s2s_ad.gradient_source(caller, wrt=[0, 1])
    backward = text[text.index("def h_bwd"):]
    backward = backward[:backward.index("\ndef ") if "\ndef " in backward else None]
    assert backward.count("own(") == copies, backward


def test_view_is_not_changed_by_later_iterations():
    # each iteration's adjoint read stays what it was when read: the
    # adjoint buffer is never written after the reads start
    h = make_function("def h(x, w):\n    y = np.zeros_like(x)\n    for i in range(x.shape[0]):\n"
                      "        y[i] = x[i] * w\n    return y", "h")
    f = make_function("def f(x, w):\n    y = h(x, w)\n    z = h(y, w)\n"
                      "    return np.sum(z * y) + np.sum(np.sin(z))", env={"h": h})
    assert_gradients(f, [rand(RNG, (5, 3)), 1.3], [0, 1])
    x = rand(RNG, (5, 3))
    value, pull = s2s_ad.vjp(f, x, 1.3)
    dx, dw = pull(1.0)
    gx, gw = s2s_ad.grad(f, wrt=[0, 1])(x, 1.3)
    np.testing.assert_allclose(dx, gx)
    np.testing.assert_allclose(dw, gw)
