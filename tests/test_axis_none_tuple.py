"""An ``axis`` passed as a parameter given None or a tuple of ints.

An int axis is read where the code runs (``np.moveaxis(x, ax, 0)``); a
parameter passed as an ``axis`` may also be given None (NumPy's default) or a
tuple: the code is generated for that value, as for any static argument
(:mod:`s2s_ad.frontend.statics`), and refuses another. Every gradient, jvp
and hvp against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import import_source

SRC = '''
import numpy as np


def total(x, ax):
    return np.sum(np.sin(np.sum(x, axis=ax)) ** 2)


def mean_keep(x, ax):
    return np.sum(np.mean(x, ax, keepdims=True) * x)


def biggest(x, ax):
    return np.sum(np.max(x, axis=ax) ** 2)


def spread(x, ax):
    return np.sum(x.var(ax) * 3.0)


def middle(x, ax):
    return np.sum(np.median(x, axis=ax) ** 2)


def level(x, ax):
    return np.sum(np.quantile(x, 0.3, axis=ax) ** 2) + np.sum(np.percentile(x, 60.0, ax) ** 3)


def inner(x, k):
    return np.std(x, axis=k)


def via_helper(x, k):
    return np.sum(inner(x, k) * 2.0)
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("axis_none_tuple")), SRC, "axis_nt_src")


RNG = np.random.default_rng(20270108)
X = RNG.normal(size=(3, 4, 2))
NAMES = ["total", "mean_keep", "biggest", "spread", "middle", "level", "via_helper"]
AXES = [None, (0, 2), (1,), (-1, 0), 1]


@pytest.mark.parametrize("ax", AXES, ids=repr)
@pytest.mark.parametrize("name", NAMES)
def test_gradient_jvp_hvp(mod, name, ax):
    f = getattr(mod, name)
    want = fd_gradient(lambda v: f(v, ax), [X], 0)
    np.testing.assert_allclose(s2s_ad.grad(f)(X, ax), want, rtol=1e-6, atol=1e-8)
    v = RNG.normal(size=X.shape)
    _, tangent = s2s_ad.jvp(f, wrt=0)(X, ax, dx=v)
    assert np.isclose(float(tangent), float(np.sum(want * v)), rtol=1e-6, atol=1e-8)
    g = s2s_ad.grad(f)
    hv = s2s_ad.hvp(f, wrt=0)(X, ax, v)
    np.testing.assert_allclose(hv, fd_gradient(lambda y: np.sum(g(y, ax) * v), [X], 0, h=1e-5),
                               rtol=1e-4, atol=1e-6)


def test_one_derivative_for_every_kind_of_axis(mod):
    """One derivative, called with an int, None and tuples in turn: each
    call gets the code for its axis."""
    g = s2s_ad.grad(mod.biggest)
    for ax in (1, None, (0, 1), 2, (1, 2), None, 0):
        np.testing.assert_allclose(g(X, ax), fd_gradient(lambda v: mod.biggest(v, ax), [X], 0),
                                   rtol=1e-6, atol=1e-8)


def test_a_list_for_the_axis_is_refused_as_numpy_refuses_it(mod):
    with pytest.raises(Exception):
        mod.total(X, [0, 1])
    with pytest.raises(Exception):
        s2s_ad.grad(mod.total)(X, [0, 1])


def test_a_parameter_passed_to_a_library_function_is_no_static_candidate(tmp_path):
    # (a library function's own source is not read for candidates: scipy's
    # logsumexp tests its arguments against None, which made `a` a candidate,
    # and the derivative lost its signature to the per-value dispatch)
    scipy_special = pytest.importorskip("scipy.special")
    from s2s_ad.cache import static_parameters
    src = ("import numpy as np\nfrom scipy.special import logsumexp\n\n"
           "def f(a, x):\n    return logsumexp(a) + np.sum(logsumexp(x * a, axis=0))\n")
    m = import_source(str(tmp_path), src, "axis_library_candidates")
    assert static_parameters(m.f) == frozenset()
    a, x = np.array([0.3, -0.2]), np.array([[0.5, 1.0], [-1.0, 0.2]])
    g = s2s_ad.grad(m.f)
    assert list(__import__("inspect").signature(g).parameters)[:2] == ["a", "x"]
    np.testing.assert_allclose(g(a, x), fd_gradient(m.f, [a, x], 0), rtol=1e-6, atol=1e-8)
    assert scipy_special is not None
