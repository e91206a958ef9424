"""The derivative of np.quantile / np.percentile with respect to q.

With method "linear" the result is (1 - t)·lower + t·higher, t the fraction
of (n - 1)·q, so it moves with q by (n - 1)·(higher - lower) (percentile: a
hundredth of that); the other methods are constant in q between order
statistics. Each case: the gradient with respect to every parameter, vjp and
jvp against central differences, for q a number, an array, computed from the
input, from a parameter, in a helper. Second derivatives (hvp, hessian,
jvp of the gradient), through q too (the weights' derivative in q moves with
x: the mixed derivative), against central differences of the gradient.
A differentiated value reaching an operand with no derivative
(scipy.special.polygamma's order) gets none."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import import_source

RNG = np.random.default_rng(20270107)

SRC = '''
import numpy as np
import scipy.special


def q_of_x(x):
    return np.quantile(x, 1.0 / (1.0 + np.exp(-x[0])))


def p_of_x(x):
    return np.percentile(x, 50.0 + 20.0 * np.tanh(x[1]))


def q_param(x, s):
    return np.quantile(x, 0.5 * s)


def p_param(x, s):
    return np.sum(np.percentile(x, s, axis=0) ** 2)


def q_array(x, s):
    return np.sum(np.sin(np.quantile(x, s * np.array([0.2, 0.45, 0.9]), axis=1)))


def q_array_keep(x, s):
    return np.sum(np.quantile(x, np.array([0.3, 0.6]) * s, axis=-1, keepdims=True) * x)


def q_array_param(x, qs):
    return np.sum(np.cos(np.percentile(x, qs, axis=0)) * np.array([[1.0], [2.0]]))


def level(x):
    return 0.25 + 0.5 / (1.0 + x[0] * x[0])


def q_helper(x):
    return np.quantile(x, level(x)) * x[1]


def q_methods(x, s):
    return (np.quantile(x, 0.3 * s, method="lower") + np.quantile(x, 0.3 * s, method="higher")
            + np.quantile(x, 0.35 * s, method="midpoint") + np.quantile(x, 0.4 * s))


def q_in_loop(x, s):
    t = 0.0
    for k in range(3):
        t = t + np.quantile(x, 0.2 * s + 0.1 * k) * (k + 1.0)
    return t


def inner_quantile(x, q):
    return np.quantile(x, q)


def middle(x, q):
    return inner_quantile(x * x, q) * 2.0


def q_helper_of_helper(x, q):
    return middle(x, q) + np.sum(x)


def polygamma_order(x):
    return np.sum(scipy.special.polygamma(x[0] - x[0] + 1.0, x))


def polygamma_step(x):
    return np.sum(scipy.special.polygamma(np.floor(x[0]) + 1.0, x))
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("quantile_q")), SRC, "quantile_q_src")


def _n(*shape):
    return RNG.normal(size=shape)


X6 = np.array([0.3, -1.2, 0.5, 2.0, 0.1, -0.4])
CASES = [
    ("q_of_x", [X6]),
    ("p_of_x", [X6]),
    ("q_param", [X6, 0.9]),
    ("q_param", [_n(3, 5), 1.3]),
    ("p_param", [_n(6, 3), 37.0]),
    ("q_array", [_n(4, 7), 0.95]),
    ("q_array_keep", [_n(3, 6), 1.1]),
    ("q_array_param", [_n(5, 3), np.array([22.0, 71.0])]),
    ("q_helper", [X6]),
    ("q_methods", [_n(7), 1.05]),
    ("q_in_loop", [_n(6), 0.8]),
    ("q_helper_of_helper", [X6, 0.45]),
]
IDS = [f"{name}-{k}" for k, (name, _) in enumerate(CASES)]


@pytest.mark.parametrize("name, args", CASES, ids=IDS)
def test_gradient_and_vjp_against_central_differences(mod, name, args):
    f = getattr(mod, name)
    wrt = tuple(range(len(args)))
    got = s2s_ad.grad(f, wrt=wrt)(*args)
    for i, g in zip(wrt, got):
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)
    value, pullback = s2s_ad.vjp(f, *args)
    assert np.isclose(value, f(*args), rtol=1e-12)
    for i, g in enumerate(pullback(2.0)):
        np.testing.assert_allclose(g, 2.0 * fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name, args", CASES, ids=IDS)
def test_jvp_against_central_differences(mod, name, args):
    f = getattr(mod, name)
    # every parameter at once: the tangents through x and through q add up
    directions = {"d" + p: RNG.normal(size=np.shape(a)) if np.ndim(a) else float(RNG.normal())
                  for p, a in zip(inspect.signature(f).parameters, args)}
    value, tangent = s2s_ad.jvp(f, wrt=tuple(range(len(args))))(*args, **directions)
    assert np.isclose(value, f(*args), rtol=1e-12)
    want = sum(float(np.sum(fd_gradient(f, args, i) * v))
               for i, v in enumerate(directions.values()))
    assert np.isclose(float(tangent), want, rtol=1e-6, atol=1e-8)


def test_the_derivative_in_q_is_n_minus_1_times_the_gap(mod):
    x = np.array([4.0, 1.0, 3.0, 0.0, 2.5])  # sorted: 0, 1, 2.5, 3, 4
    # 0.5 * s = 0.3 -> (n - 1)·q = 1.2: between 1 and 2.5
    got = s2s_ad.grad(mod.q_param, wrt="s")(x, 0.6)
    assert got == pytest.approx(0.5 * 4 * (2.5 - 1.0))


def _along(f, args, directions, h=1e-5):
    """Central differences of the gradient (checked against central
    differences of f above) along ``directions``."""
    g = s2s_ad.grad(f, wrt=tuple(range(len(args))))

    def at(e):
        return g(*[a + e * d for a, d in zip(args, directions)])
    return [(u - d) / (2 * h) for u, d in zip(at(h), at(-h))]


@pytest.mark.parametrize("name, args", CASES, ids=IDS)
def test_second_derivatives_through_q_against_differences_of_the_gradient(mod, name, args):
    f = getattr(mod, name)
    wrt = tuple(range(len(args)))
    directions = [RNG.normal(size=np.shape(a)) if np.ndim(a) else float(RNG.normal())
                  for a in args]
    want = _along(f, args, directions)
    got = s2s_ad.hvp(f, wrt=wrt)(*args, tuple(directions))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    # forward over reverse: the gradient's tangent
    names = list(inspect.signature(f).parameters)
    _, tangent = s2s_ad.jvp(s2s_ad.grad(f, wrt=wrt), wrt=wrt)(
        *args, **{"d" + n: d for n, d in zip(names, directions)})
    for g, w in zip(tangent, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_the_mixed_derivative_is_n_minus_1_times_the_gap_moving(mod):
    """d²/dx dq of np.quantile(x, 0.5 * s) by hand: the slope 0.5·(n − 1)·(higher −
    lower) moves with the two order statistics, ±0.5·(n − 1) = ±2.5 there;
    d²/dq² is 0 (the slope is constant between order statistics)."""
    hessian = s2s_ad.hessian(mod.q_param, wrt=(0, 1))(X6, 0.9)
    # (n - 1)·q = 5·0.45 = 2.25: between the sorted X6's 2nd and 3rd (0.1 and 0.3)
    mixed = np.zeros(6)
    mixed[0], mixed[4] = 2.5, -2.5
    np.testing.assert_allclose(hessian[0][1], mixed, atol=1e-12)
    np.testing.assert_allclose(hessian[1][0], mixed, atol=1e-12)
    assert hessian[1][1] == 0.0
    np.testing.assert_allclose(hessian[0][0], np.zeros((6, 6)), atol=1e-12)
    # q computed from the input: hvp against differences of the gradient
    v = np.ones(6)
    np.testing.assert_allclose(s2s_ad.hvp(mod.q_of_x)(X6, v), _along(mod.q_of_x, [X6], [v])[0],
                               rtol=1e-5, atol=1e-6)


def test_a_second_derivative_with_a_constant_q_still_runs(mod):
    x = _n(4, 7)
    got = s2s_ad.hvp(mod.q_array, wrt=0)(x, 0.95, np.ones_like(x))
    assert np.all(np.isfinite(got))


def test_an_integer_order_of_polygamma_computed_from_the_input_has_no_derivative(mod):
    # (an int operand, as `//` and round: zero where the function is defined)
    pytest.importorskip("scipy")
    x = np.array([1.3, 2.5])
    np.testing.assert_allclose(s2s_ad.grad(mod.polygamma_order)(x),
                               fd_gradient(mod.polygamma_order, [x], 0), rtol=1e-6)
    np.testing.assert_allclose(s2s_ad.grad(mod.polygamma_step)(x),
                               fd_gradient(mod.polygamma_step, [x], 0), rtol=1e-6)
