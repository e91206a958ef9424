"""jacrev, jacfwd and jacobian of a function s2s-ad generated (a gradient, a
JVP): the Hessian against central differences of a gradient written out by
hand; jacrev used to refuse a generated gradient ("a wrapper made by a
decorator") where jacfwd took it."""

import os
import sys

import numpy as np
import pytest

import s2s_ad

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jacobian_of_derivatives_src as src  # noqa: E402


def energy_grad(x):
    g = np.sin(x) + x * np.cos(x)
    g[0] += x[1] ** 2
    g[1] += 2 * x[0] * x[1]
    return g


def fd_jacobian(f, x, h=1e-6):
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


X = np.array([0.3, -0.5, 1.2])


@pytest.mark.parametrize("jac", [s2s_ad.jacrev, s2s_ad.jacfwd, s2s_ad.jacobian])
def test_jacobian_of_a_gradient_is_the_hessian(jac):
    got = jac(s2s_ad.grad(src.energy))(X)
    assert np.allclose(got, fd_jacobian(energy_grad, X), atol=1e-7)
    assert np.allclose(got, s2s_ad.hessian(src.energy)(X), atol=1e-12)


def test_jacrev_of_a_jvp():
    direction = np.array([1.0, 2.0, -0.5])
    value_row, tangent_row = s2s_ad.jacrev(s2s_ad.jvp(src.energy))(X, dx=direction)
    assert np.allclose(value_row, energy_grad(X), atol=1e-12)
    assert np.allclose(tangent_row, fd_jacobian(energy_grad, X) @ direction, atol=1e-6)


def test_jacrev_of_a_gradient_of_numbers():
    import math
    a, b = 0.4, 1.3
    wrt_a, wrt_b = s2s_ad.jacrev(s2s_ad.grad(src.two, wrt=(0, 1)), wrt=(0, 1))(a, b)
    # the gradient (cos(a) b + 2 a b, sin(a) + a²) differentiated by hand
    assert np.allclose(wrt_a, [-math.sin(a) * b + 2 * b, math.cos(a) + 2 * a], atol=1e-12)
    assert np.allclose(wrt_b, [math.cos(a) + 2 * a, 0.0], atol=1e-12)
