"""Found by an adversarial round of hand-written probes (2026-12-07), each now
checked against central differences.

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
