"""``functools.partial`` targets (``grad(partial(loss, X=X, y=y))``): the
fixed values are passed on every call and get no gradient; ``wrt`` counts
the partial's own parameters. Each against central differences, through
grad, value_and_grad, vjp, jvp, hvp, hessian and the Jacobians."""

import functools

import numpy as np
import pytest

import partials_src as c
import s2s_ad
from array_oracle import fd_gradient as array_fd
from oracle import close, fd_gradient

DATA = [1.0, 2.0, -0.5]


@pytest.mark.parametrize("p, point", [
    (functools.partial(c.scalar_loss, data=DATA), [0.7]),
    (functools.partial(c.scalar_loss, data=DATA, k=1.5), [0.7]),
    (functools.partial(c.two_parameters, scale=2.0), [0.3, -0.4]),
    (functools.partial(c.two_parameters, 0.3), [-0.4, 2.0]),
    (functools.partial(c.helper_calls, data=DATA, n=3), [0.2]),
], ids=["keyword", "keywords", "scale", "positional", "helper in a loop"])
def test_scalar_partials(p, point):
    wrt = tuple(range(len(point)))
    want = fd_gradient(p, point, list(wrt))
    got = s2s_ad.grad(p, wrt=wrt)(*point)
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)
    value, g = s2s_ad.value_and_grad(p)(*point)
    assert close(value, p(*point)) and close(g, want[0])
    value, pull = s2s_ad.vjp(p, *point)
    assert close(value, p(*point))
    assert all(close(pull(2.0)[i], 2.0 * w) for i, w in zip(wrt, want))
    _, tangent = s2s_ad.jvp(p, wrt=0)(*point, **{"d" + _name(p, 0): 1.0})
    assert close(tangent, want[0])
    g0 = s2s_ad.grad(p, wrt=0)
    second = fd_gradient(g0, point, [0])[0]
    assert close(s2s_ad.hvp(p)(*point, 1.0), second)
    assert close(s2s_ad.hessian(p)(*point), second)


def _name(p, i):
    import inspect
    return list(inspect.signature(p).parameters)[i]


def test_wrt_names_a_parameter_the_partial_leaves_free():
    p = functools.partial(c.scalar_loss, data=DATA)
    dx, dk = s2s_ad.grad(p, wrt=("x", "k"))(0.7)
    want = fd_gradient(c.scalar_loss, [0.7, DATA, 0.5], [0, 2])
    assert close(dx, want[0]) and close(dk, want[1])
    with pytest.raises(s2s_ad.WrtError, match="has no parameter 'z'"):
        s2s_ad.grad(p, wrt="z")


def test_arrays_fixed_by_keyword():
    rng = np.random.default_rng(2)
    X, y, w = rng.normal(size=(6, 3)), rng.normal(size=6), rng.normal(size=3)
    p = functools.partial(c.regression_loss, X=X, y=y)
    want = array_fd(p, [w], 0)
    np.testing.assert_allclose(s2s_ad.grad(p)(w), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.jacrev(p)(w), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.jacfwd(p)(w), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.hessian(p)(w), 2 * X.T @ X + 0.2 * np.eye(3), rtol=1e-8)
    X2 = X * 2.0          # the partial holds X; another partial, other data
    p2 = functools.partial(c.regression_loss, X=X2, y=y)
    np.testing.assert_allclose(s2s_ad.grad(p2)(w), array_fd(p2, [w], 0), rtol=1e-6, atol=1e-8)


def test_wrt_may_name_a_value_the_partial_fixes_by_keyword():
    p = functools.partial(c.scalar_loss, data=DATA, k=1.5)
    want = fd_gradient(c.scalar_loss, [0.7, DATA, 1.5], [2])[0]
    assert close(s2s_ad.grad(p, wrt="k")(0.7), want)


def test_a_module_level_partial_called_from_a_function():
    """``fixed = functools.partial(scalar_loss, data=[1.0, 2.0])`` at module
    level, called by the function differentiated: ``scalar_loss`` called
    with the bound list (it was refused before)."""
    want = fd_gradient(c.calls_a_partial, [0.7], [0])[0]
    assert close(s2s_ad.grad(c.calls_a_partial)(0.7), want)
