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
