"""Found by adversarial round 11 (2026-12-07): probes of the derivative's
late-binding check (``s2s_ad/late_constants.py``, ``s2s_ad/fingerprint.py``)
and of the run-time ``axis`` of the NumPy reductions, each checked against
central differences. Not fixed here: these tests fail until they are.

Wrong gradients (stale code after a change ``f`` itself sees):

* **A staticmethod or classmethod rebound on its class** (``Ops.act =
  staticmethod(other)``) after ``g = grad(f)``, ``f`` calling ``Ops.act(x)``:
  ``g`` keeps the old helper's derivative (``s2s_ad.grad(f)`` asked again is
  right). The check tests the old helper's code, not that the class still
  holds it (class constants are checked by ``_s2s_getattr(cls, name)``;
  ``_class_reads`` adds no such term for a static or class method).
* **The check gives up silently** (``fingerprint.watched`` -> ``_Unwatchable``,
  the derivative returned unwatched) when the function reads anything it
  cannot hold by identity: a module-level dict (``PARAMS = {"w": W}``, module
  data), a helper's or the function's keyword-only default that is a tuple
  (``*, w=(1.0, 2.0)``). A module constant ``K`` the same function inlines is
  then never checked again: ``K = 7.0`` after ``g = grad(f)`` leaves ``g``
  computing with the old ``K`` (docs/api.md promises the change is seen).

Wrong gradient (new rules, e22bea1): ``np.quantile``/``np.percentile``
(method "linear") drop the derivative through ``q`` (documented as "q has no
derivative"): a ``q`` computed from the input, or a parameter reaching the
result through ``q`` only, gets 0 where the result moves with ``q``.

Crash (an error from NumPy inside the generated code, not located):

* An ``axis`` passed as a parameter (docs/numpy.md: "an int known when the
  code runs") given ``None`` or a tuple, for ``np.quantile``, ``np.median``
  (new rules) and ``np.max`` alike: the generated code calls
  ``np.moveaxis(x, ax, 0)`` (TypeError: 'NoneType' object is not iterable;
  ValueError: `source` and `destination` arguments must have the same number
  of elements). ``None`` is a static value (docs/calls.md), and ``f`` itself
  runs.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import s2s_ad

from modules import import_source

_names = itertools.count()


def _module(tmp_path, text):
    return import_source(tmp_path, text, f"adv11_mod_{next(_names)}")


def _cd(fn, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    if x.ndim == 0:
        return (fn(float(x) + h) - fn(float(x) - h)) / (2 * h)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        g.flat[k] = (fn(x + e) - fn(x - e)) / (2 * h)
    return g


STATIC = '''
class Ops:
    @staticmethod
    def act(x):
        return x * x * x

    @classmethod
    def cact(cls, x):
        return x * x * x


def other(x):
    return 10.0 * x


def other_c(cls, x):
    return 10.0 * x


def f(x):
    return Ops.act(x)


def fc(x):
    return Ops.cact(x)
'''


@pytest.mark.parametrize("name,attr,kind,new", [("f", "act", staticmethod, "other"),
                                                  ("fc", "cact", classmethod, "other_c")])
def test_a_static_or_class_method_rebound_on_its_class_is_seen_by_the_derivative(
        tmp_path, name, attr, kind, new):
    m = _module(tmp_path, STATIC)
    f = getattr(m, name)
    g = s2s_ad.grad(f)
    assert g(1.5) == pytest.approx(_cd(f, 1.5), rel=1e-6)
    setattr(m.Ops, attr, kind(getattr(m, new)))
    # f now computes 10 * x: its derivative is 10
    assert _cd(f, 1.5) == pytest.approx(10.0, rel=1e-6)
    assert g(1.5) == pytest.approx(_cd(f, 1.5), rel=1e-6)


UNWATCHABLE = '''
import numpy as np

K = 2.0
PARAMS = {"w": np.array([1.0, 2.0])}


def h(x, *, w=(1.0, 2.0)):
    return x * x * w[0]


def f_helper_kw_tuple(x):
    return h(x) * K


def f_module_dict(x):
    return np.sum(PARAMS["w"] * x) * K


def f_own_kw_tuple(x, *, c=(1.0, 3.0)):
    return x * x * K * c[1]
'''


@pytest.mark.parametrize("name, x", [
    ("f_helper_kw_tuple", 1.5),
    ("f_module_dict", np.array([0.5, 1.0])),
    ("f_own_kw_tuple", 1.5),
])
def test_a_module_constant_changed_is_seen_beside_a_read_not_held_by_identity(tmp_path, name, x):
    m = _module(tmp_path, UNWATCHABLE)
    fn = getattr(m, name)
    g = s2s_ad.grad(fn)
    np.testing.assert_allclose(g(x), _cd(fn, x), rtol=1e-6)
    m.K = 7.0
    np.testing.assert_allclose(g(x), _cd(fn, x), rtol=1e-6)


AXES = '''
import numpy as np


def q(x, ax):
    return np.sum(np.quantile(x, 0.3, axis=ax) ** 2)


def med(x, ax):
    return np.sum(np.median(x, axis=ax) ** 2)


def mx(x, ax):
    return np.sum(np.max(x, axis=ax) ** 2)
'''


@pytest.mark.parametrize("name", ["q", "med", "mx"])
@pytest.mark.parametrize("ax", [None, (0, 1)], ids=["None", "tuple"])
def test_a_run_time_axis_given_none_or_a_tuple(tmp_path, name, ax):
    m = _module(tmp_path, AXES)
    fn = getattr(m, name)
    x = np.array([[0.3, -1.2, 0.5], [2.0, 0.1, -0.4]])
    got = s2s_ad.grad(fn)(x, ax)
    np.testing.assert_allclose(got, _cd(lambda v: fn(v, ax), x), rtol=1e-6, atol=1e-9)


# Wrong gradient (new rules, e22bea1): the derivative of np.quantile and
# np.percentile (method "linear", the default) with respect to q is dropped
# ("q has no derivative", rules/numpy_more.py), silently: a q computed from
# the differentiated input, or a parameter differentiated through q only,
# gets 0 where the result moves with q ((n - 1) * (higher - lower) per unit of
# q between order statistics). No refusal says so.

QDEP = '''
import numpy as np


def q_of_x(x):
    q = 1.0 / (1.0 + np.exp(-x[0]))
    return np.quantile(x, q)


def p_of_x(x):
    return np.percentile(x, 50.0 + 20.0 * np.tanh(x[1]))


def q_param(x, s):
    return np.quantile(x, 0.5 * s)
'''


@pytest.mark.parametrize("name", ["q_of_x", "p_of_x"])
def test_a_quantile_whose_q_depends_on_the_input(tmp_path, name):
    m = _module(tmp_path, QDEP)
    fn = getattr(m, name)
    x = np.array([0.3, -1.2, 0.5, 2.0, 0.1, -0.4])
    np.testing.assert_allclose(s2s_ad.grad(fn)(x), _cd(fn, x), rtol=1e-6, atol=1e-8)
    _, tangent = s2s_ad.jvp(fn)(x, dx=np.eye(6)[0])
    np.testing.assert_allclose(tangent, _cd(fn, x)[0], rtol=1e-6, atol=1e-8)


def test_a_parameter_reaching_a_quantile_through_q_only(tmp_path):
    m = _module(tmp_path, QDEP)
    x = np.array([0.3, -1.2, 0.5, 2.0, 0.1, -0.4])
    got = s2s_ad.grad(m.q_param, wrt="s")(x, 0.9)
    assert got == pytest.approx(_cd(lambda s: m.q_param(x, s), 0.9), rel=1e-6)
