"""Found by an adversarial round of hand-written probes and the fuzzer
(2026-12-07), each now checked against central differences.

Wrong gradients (in code of earlier sessions):

* **An array parameter read once per element in a loop and also used whole
  as a later loop's start value** (``for k ...: acc += x[k] * c`` then
  ``y = x; for ...: y = y * c``): the reverse sweep assigned each element's
  adjoint (``dx[k] = g``, the rewrite for elements each read once) over the
  whole use's contribution, added before it (3.0 where 3.5 is right). The
  count of uses now sees loop start values, yields and results.
* **The gradient of an array parameter had the wrong shape**, or the module
  raised inside NumPy, when a loop overwrites, without reading it, a value
  computed from the parameter before it (``t = A @ y; for ...: t = np.sum(A,
  axis=1)``): the adjoint of the value before the loop, zero when the loop
  ran, was the number ``0.0``, and ``matmul_adjoint(0.0, A, y, 1)`` has
  ``A``'s transposed shape (``einsum``, ``reshape``, ``concatenate``,
  ``solve``, ``stack``, ``max(axis=1)``, ``tensordot`` before the loop
  raised). It is zeros of that value's shape now.

Refusals and crashes:

* Second derivatives through ``math.lgamma``/``math.gamma`` (``hvp``,
  ``grad(grad(f))``) were refused inside s2s-ad's own module: the digamma
  helper it defines imported ``math`` in its body ("`import` inside the
  function is not supported"). The module imports it at its top now.
* ``hvp`` of code filling an array in a loop, with NumPy imported under
  another name (``import numpy as xp``, and JAX's ``jnp`` read as NumPy), was
  refused in the JVP module: its ``out = xp.copy(out)`` before a write was
  recognised as a fresh copy only when spelled ``np.copy``.
* ``KeyError: 'j'`` from inside s2s-ad: a loop nest ``for i ...: for j ...:``
  after an earlier nest that bound ``j`` (``xs.pop()`` in the second, as in
  s2s-ad's own gradient of a nested loop read back: ``jvp`` of that file
  failed the same way). The outer loop carried ``j``, which the inner loop
  does not keep after it. It is not carried now, and reading it in the outer
  body before the inner loop is refused, located (it would be the earlier
  nest's value on every iteration).
* ``AttributeError`` from inside s2s-ad: a list bound anew and appended to
  inside a ``while`` loop (the same in a ``for`` over a constant range is
  unrolled, and right): refused, located.
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source

SRC = '''
import math
import math as m

import numpy as xp


def gammas(x, y):
    return math.lgamma(x * y) + math.gamma(x) + m.lgamma(y) * x


def one(x):
    return math.lgamma(x) * math.gamma(x)


def nests(x):
    xs = []
    for i in range(2):
        for j in range(2):
            xs.append(x * (i + j + 1.0))
    d = 0.0
    for i in range(2):
        for j in range(2):
            d += xs.pop()
            d = d * x
    return d


def nested_sums(x, y):
    total = 0.0
    for i in range(3):
        acc = 0.0
        for j in range(i + 1):
            acc += x ** j * y
        total += acc * total + acc
    return total


def rebound_k(x):
    k = 3
    for j in range(2):
        for k in range(2):
            x = x * 1.2 + k
    return x


def stale_j(x, n: int):
    s = 0.0
    for j in range(2):
        s = s + x * j
    for i in range(n):
        s = s + j * x
        for j in range(i):
            s = s * x
    return s


def rebuilt_in_while(x, z):
    lst = [x]
    n = 0
    while n < 2:
        n += 1
        lst = [z, 1.0]
        lst.append(x)
        z = lst[0] * lst[2]
    return z


def read_then_carried(x, c):
    acc = 0.0
    y = x
    for k in range(4):
        acc += x[k] * c
    for i in range(2):
        for j in range(2):
            y = y * c
    return acc + xp.sum(y)


def filled_then_carried(x, c):
    out = xp.zeros(4)
    for k in range(0, 4, 2):
        out[k] = x[k] * c + x[k + 1]
    n = 0
    while xp.sum(x) < 5.0 and n < 3:
        x = xp.tanh(x) + c
        n += 1
    return xp.sum(out ** 2) + xp.sum(x)


def overwritten_matmul(y, A):
    t = A @ y
    for i in range(1):
        t = xp.sum(A, axis=1)
    return xp.sum(t)


def overwritten(x, A, k: int):
    t = xp.einsum("ij,j->i", A, x) + xp.linalg.solve(A, x)
    u = xp.stack([x, 2.0 * x])
    for i in range(k):
        t = A[0] * 2.0 * x[1]
        u = xp.outer(x, x)[:2]
    return xp.sum(t * t) + xp.sum(u * u)


def filled(X):
    n = X.shape[0]
    out = xp.zeros((n, 2))
    for k in range(n):
        out[k] = X[k] * X[k, 0]
    return xp.sum(out ** 2)
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("adv10"), SRC, "adversary10_src")


def test_second_derivatives_of_gamma(mod):
    a, v, h = (1.3, 0.7), np.array([1.0, 0.5]), 1e-5
    g = s2s_ad.grad(mod.gammas, wrt=None)
    hv = np.array(s2s_ad.hvp(mod.gammas, wrt=None)(*a, tuple(v)))
    plus = np.array(g(a[0] + h * v[0], a[1] + h * v[1]))
    minus = np.array(g(a[0] - h * v[0], a[1] - h * v[1]))
    assert np.allclose(hv, (plus - minus) / (2 * h), rtol=1e-6)
    gg = s2s_ad.grad(s2s_ad.grad(mod.one))(1.3)
    g1 = s2s_ad.grad(mod.one)
    assert np.isclose(gg, (g1(1.3 + h) - g1(1.3 - h)) / (2 * h), rtol=1e-6)


def test_hvp_of_a_filled_array_numpy_aliased(mod):
    X = np.array([[1.0, 2.0], [3.0, 0.5]])
    V = np.array([[1.0, -0.5], [0.3, 0.2]])
    g, h = s2s_ad.grad(mod.filled), 1e-5
    hv = s2s_ad.hvp(mod.filled)(X, V)
    assert np.allclose(hv, (g(X + h * V) - g(X - h * V)) / (2 * h), rtol=1e-6)


def test_loop_nests_after_a_nest(mod, tmp_path):
    h = 1e-6
    g = s2s_ad.grad(mod.rebound_k)(0.7)
    assert np.isclose(g, (mod.rebound_k(0.7 + h) - mod.rebound_k(0.7 - h)) / (2 * h), rtol=1e-6)
    g = s2s_ad.grad(mod.nests)(0.7)
    assert np.isclose(g, (mod.nests(0.7 + h) - mod.nests(0.7 - h)) / (2 * h), rtol=1e-6)
    # jvp and reverse of s2s-ad's own gradient file of a nested loop (its tape popped there)
    import subprocess
    import sys
    from tests.modules import on_path
    src = tmp_path / "nested_src.py"
    src.write_text(SRC)
    out = tmp_path / "nested_grad.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{src}:nested_sums", "-o",
                    str(out)], check=True, capture_output=True)
    with on_path(tmp_path, "nested_grad", out.read_text()):
        import nested_grad
        gfile = nested_grad.grad_nested_sums
        _, tangent = s2s_ad.jvp(gfile)(0.7, 0.4, dx=1.0, dy=0.0, ddtotal=0.0)
        want = (np.array(gfile(0.7 + h, 0.4)) - np.array(gfile(0.7 - h, 0.4))) / (2 * h)
        assert np.allclose(tangent, want, rtol=1e-6)
        second = s2s_ad.grad(gfile, output=0, wrt=(0, 1))(0.7, 0.4)
        first = lambda a, b: gfile(a, b)[0]  # noqa: E731
        assert np.isclose(second[1], (first(0.7, 0.4 + h) - first(0.7, 0.4 - h)) / (2 * h),
                          rtol=1e-6)


def test_refused_located(mod):
    with pytest.raises(s2s_ad.SourceError, match=r"adversary10_src.py:\d+:\d+: .*`j`"):
        s2s_ad.grad(mod.stale_j)(0.7, 3)
    with pytest.raises(s2s_ad.SourceError, match=r"adversary10_src.py:\d+:\d+: .*`lst`"):
        s2s_ad.grad(mod.rebuilt_in_while, wrt=None)(0.7, 0.4)


def _fd(f, args, i, h=1e-6):
    a = args[i]
    out = np.zeros_like(a)
    for k in np.ndindex(a.shape):
        up, down = list(args), list(args)
        up[i], down[i] = a.copy(), a.copy()
        up[i][k] += h
        down[i][k] -= h
        out[k] = (f(*up) - f(*down)) / (2 * h)
    return out


@pytest.mark.parametrize("name", ["read_then_carried", "filled_then_carried"])
def test_element_reads_and_a_whole_use(mod, name):
    f = getattr(mod, name)
    x = np.array([0.3, -0.5, 0.8, 0.1])
    gx, gc = s2s_ad.grad(f, wrt=(0, 1))(x, 0.7)
    assert np.allclose(gx, _fd(f, [x, 0.7], 0), rtol=1e-6)
    assert np.isclose(gc, (f(x, 0.7 + 1e-6) - f(x, 0.7 - 1e-6)) / 2e-6, rtol=1e-6)
    assert np.allclose(s2s_ad.vjp(f, x, 0.7)[1](1.0)[0], gx)


def test_overwritten_values_keep_their_shape(mod):
    y, A = np.array([0.1, 0.2, 0.3]), np.arange(6.0).reshape(2, 3)
    dy, dA = s2s_ad.grad(mod.overwritten_matmul, wrt=(0, 1))(y, A)
    assert dy.shape == y.shape and np.allclose(dy, 0.0)
    assert np.allclose(dA, _fd(mod.overwritten_matmul, [y, A], 1), rtol=1e-6)
    rng = np.random.default_rng(3)
    A3, x = rng.normal(size=(3, 3)) + 2 * np.eye(3), rng.normal(size=3)
    for k in (0, 1, 2):
        f = mod.overwritten
        gx, gA = s2s_ad.grad(f, wrt=(0, 1))(x, A3, k)
        assert gx.shape == x.shape and gA.shape == A3.shape
        assert np.allclose(gx, _fd(f, [x, A3, k], 0), rtol=1e-6, atol=1e-9), k
        assert np.allclose(gA, _fd(f, [x, A3, k], 1), rtol=1e-6, atol=1e-9), k
