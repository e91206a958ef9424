"""The ninth adversarial round, on this wave's new constructs (about 150
programs, 300 checks of grad, jvp, jvp(grad), grad(grad), hvp, vjp, hessian
and 16 CLI modules): no first-order gradient was wrong; found, each checked
here:

* **stale gradients after module state changed** (wrong, and silent):
  ``g = math.sin`` at module level, then ``g = math.cos``: the derivative
  kept ``sin`` (1.1796 where 0.3139 is right), as did a new ``grad(f)``: a
  global naming a builtin or a ufunc was not part of the key nor watched.
  ``grad(grad(f))`` of an ``f`` taking a string (``mode="a"``) kept a module
  constant's old value (8.4 where 12.6 is right, on the code before this
  wave too) and a table's old function: its watch did not reach ``f``;
* **a crash in a Hessian-vector product**: ``hvp``/``hessian`` through
  ``np.add.at`` in a helper whose result is linear (``TypeError: 'float'
  object is not subscriptable``: the adjoint of the scatter read a zero
  number at the index);
* **a refusal**: ``ACTS[name](x)`` with ``name`` a parameter without a
  default (it is now static when the call gives it a string).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source

SRC = '''
import math

import numpy as np

g = math.sin
h = np.tanh
K = 2.0
T = {"a": math.sin}
ACTS = {"sin": math.sin, "cos": math.cos}
IDX = np.array([0, 2, 0, 1])


def aliased(x):
    return g(x) * x


def aliased_ufunc(x):
    return np.sum(h(x) * x)


def with_mode(x, mode="a"):
    if mode == "a":
        return K * x * x * x
    return x


def tabled(x, name="a"):
    return T[name](x) * x


def keyed(x, name):
    return ACTS[name](x) * x


def scat(x):
    y = np.zeros(3)
    np.add.at(y, IDX, x)
    return y


def linear(x, w):
    return np.sum(scat(x) * w)
'''


@pytest.fixture
def mod(tmp_path):
    return import_source(str(tmp_path), SRC, "adversary9_src")


def test_a_global_naming_a_builtin_rebound(mod):
    df = s2s_ad.grad(mod.aliased)
    assert np.isclose(df(0.7), math.cos(0.7) * 0.7 + math.sin(0.7))
    mod.g = math.cos
    want = -math.sin(0.7) * 0.7 + math.cos(0.7)
    assert np.isclose(df(0.7), want) and np.isclose(s2s_ad.grad(mod.aliased)(0.7), want)
    mod.g = math.exp
    assert np.isclose(s2s_ad.hvp(mod.aliased)(0.7, 1.0), 2.7 * math.exp(0.7))
    x = np.array([0.3, -0.5])
    dh = s2s_ad.grad(mod.aliased_ufunc)
    mod.h = np.sin
    np.testing.assert_allclose(dh(x), np.cos(x) * x + np.sin(x))


def test_second_derivatives_of_a_function_taking_a_string(mod):
    gg = s2s_ad.grad(s2s_ad.grad(mod.with_mode, wrt=0), wrt=0)
    jg = s2s_ad.jvp(s2s_ad.grad(mod.with_mode, wrt=0))
    assert np.isclose(gg(0.7), 12 * 0.7)
    mod.K = 3.0
    assert np.isclose(gg(0.7), 18 * 0.7) and np.isclose(jg(0.7, dx=1.0)[1], 18 * 0.7)
    tt = s2s_ad.grad(s2s_ad.grad(mod.tabled, wrt=0), wrt=0)
    assert np.isclose(tt(0.7), -math.sin(0.7) * 0.7 + 2 * math.cos(0.7))
    mod.T["a"] = math.exp
    assert np.isclose(tt(0.7), 2.7 * math.exp(0.7))


def test_a_table_keyed_by_a_parameter_without_a_default(mod):
    g = s2s_ad.grad(mod.keyed)
    assert np.isclose(g(0.7, "sin"), math.cos(0.7) * 0.7 + math.sin(0.7))
    assert np.isclose(g(0.7, "cos"), -math.sin(0.7) * 0.7 + math.cos(0.7))


def test_second_derivatives_through_np_add_at_in_a_helper(mod):
    x, w = np.array([0.3, -0.7, 1.2, 0.5]), np.array([0.4, 1.1, -0.3])
    v = np.array([1.0, 0.5, -0.2, 0.3])
    np.testing.assert_allclose(s2s_ad.hvp(mod.linear, wrt=0)(x, w, v), np.zeros(4))
    np.testing.assert_allclose(s2s_ad.hessian(mod.linear, wrt=0)(x, w), np.zeros((4, 4)))
    np.testing.assert_allclose(s2s_ad.grad(mod.linear)(x, w), w[[0, 2, 0, 1]])
