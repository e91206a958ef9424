"""A number times a comparison of arrays, ``t * (t <= a)`` with ``t`` a
number (``np.sum(b)``) and ``a`` an array: the product is an array, so the
adjoint to ``t`` is the sum over its elements.

The comparison's kind says bool, and the product of a number and a bool was
taken for a number: the reverse sweep wrote ``dt = dt2 * t1`` (an array)
where ``total(dt2 * t1)`` is right. With ``b`` of ``a``'s shape that was a
silently wrong gradient (``[[0, 1/6, 0], [1/6, 0, 1/6]]`` for ``np.mean(t *
(t <= a))``, right: 0.5 everywhere); with another shape, a ``ValueError``.
Forward mode writes such products itself (the tangent of ``np.minimum(t, a)``
is ``dt * (t <= a) + da * (t > a)``), so ``hvp`` and ``hessian`` of
``np.minimum``/``np.maximum`` of a sum and an array failed the same way.

Each case against central differences (gradients) or differences of
differences (second derivatives)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient, make_function

RNG = np.random.default_rng(60612)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SOURCE = '''
import numpy as np


def mean_masked(a, b):
    t = np.sum(b)
    return np.mean(t * (t <= a))


def mask_first(a, b):
    t = np.sum(b * b)
    m = t <= a
    return np.sum(m * t * a) + np.sum((a > t) + t) + np.sum(t * np.argsort(a, axis=0))


def _half(t, a):
    return t * (t <= a) + (a > t) * t * 2.0


def in_positions(a, b):
    t = np.sum(b * b)
    s = 0.0
    for i in range(2):
        if i == 0:
            s = s + np.sum(_half(t, a) * a)
        else:
            s = s + np.sum(t * np.argmax(a, axis=0))
    return s


def in_a_branch(a, b, c):
    t = np.sum(b)
    if c > 0:
        m = t <= a
    else:
        m = t > a
    return np.mean(t * m)


def in_a_loop(a, b):
    t = np.sum(b)
    m = t <= a
    for i in range(2):
        m = m * (t <= a + 0.5 * i)
    return np.mean(t * m)


def smallest(a, b):
    t = np.sum(b * b)
    return np.mean(np.minimum(t, a * a)) + np.sum(np.maximum(np.max(b), a) * a)
'''

NAMES = ("mean_masked", "mask_first", "in_positions", "smallest")


def _point(name):
    a = RNG.uniform(0.0, 2.0, size=(2, 3))
    b = RNG.normal(size=(2, 3)) * 0.4
    if name == "mean_masked":  # t = sum(b) inside a's range: some elements masked
        b = b - np.mean(b) + 1.0 / 6
    return a, b


@pytest.mark.parametrize("name", NAMES)
def test_gradient_against_central_differences(name):
    f = make_function(SOURCE, name)
    a, b = _point(name)
    got = s2s_ad.grad(f, wrt=("a", "b"))(a, b)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(f, [a, b], i), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name,extra", [("in_a_branch", 1.0), ("in_a_branch", -1.0),
                                        ("in_a_loop", None)])
def test_a_mask_through_a_branch_or_a_loop(name, extra):
    """A mask made on both sides of a branch (its φ), or carried by a loop
    (a mask times a mask): the product with the number is an array still."""
    f = make_function(SOURCE, name)
    a = np.array([[0.5, 3.0, 0.1], [2.0, 0.2, 1.0]])
    b = np.array([[0.3, 0.4, 0.1], [0.1, -0.2, 0.1]])
    args = [a, b] + ([extra] if extra is not None else [])
    got = s2s_ad.grad(f, wrt="b")(*args)
    np.testing.assert_allclose(got, fd_gradient(f, args, 1), rtol=1e-6, atol=1e-8)
    assert np.ptp(got) == 0.0 and got[0, 0] != 0.0  # the same sum for every element


def test_the_wrong_gradient_of_before():
    f = make_function(SOURCE, "mean_masked")
    a = np.array([[0.5, 3.0, 0.1], [2.0, 0.2, 1.0]])
    b = np.array([[0.3, 0.4, 0.1], [0.1, -0.2, 0.1]])  # t = 0.8: three of six kept
    np.testing.assert_allclose(s2s_ad.grad(f, wrt="b")(a, b), np.full((2, 3), 0.5))
    np.testing.assert_allclose(s2s_ad.grad(f, wrt="b")(a, b[0]), np.full(3, 0.5))


@pytest.mark.parametrize("name", ["smallest", "in_positions"])
def test_hvp_against_differences_of_differences(name):
    f = make_function(SOURCE, name)
    a, b = _point(name)
    v = (RNG.normal(size=a.shape), RNG.normal(size=b.shape))
    got = s2s_ad.hvp(f, wrt=("a", "b"))(a, b, v)
    h = 1e-4

    def grads(a, b):
        return [fd_gradient(f, [a, b], i, h=1e-5) for i in range(2)]
    up, down = grads(a + h * v[0], b + h * v[1]), grads(a - h * v[0], b - h * v[1])
    for g, u, w in zip(got, up, down):
        np.testing.assert_allclose(g, (u - w) / (2 * h), rtol=1e-4, atol=1e-5)


def test_cli_gradient_in_a_fresh_interpreter(tmp_path):
    (tmp_path / "masked.py").write_text(SOURCE)
    out = tmp_path / "grad_masked.py"
    r = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", str(tmp_path / "masked.py") +
                        ":mean_masked", "--wrt", "b", "-o", str(out)], capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert r.returncode == 0, r.stderr
    run = ("import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import grad_masked; "
           "a = np.array([[0.5, 3.0, 0.1], [2.0, 0.2, 1.0]]); "
           "b = np.array([[0.3, 0.4, 0.1], [0.1, -0.2, 0.1]]); "
           "print(repr(grad_masked.grad_mean_masked(a, b).tolist()))")
    r = subprocess.run([sys.executable, "-c", run, str(tmp_path)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.array(eval(r.stdout)), np.full((2, 3), 0.5))
