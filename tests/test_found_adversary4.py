"""Wrong gradients and internal errors found by adversarial programs on the
newest features (the guard of a branch's untouched adjoints, held
derivatives' late constants, lists of arrays, SciPy forms), each against
central differences (float64)."""

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient, make_function


def _close(got, f, args, wrt):
    for g, i in zip(got, wrt):
        np.testing.assert_allclose(np.asarray(g, dtype=float), fd_gradient(f, args, i),
                                   rtol=1e-5, atol=1e-7)


PARAMETER_ZEROS = '''
def f(x, y):
    v = x / (y + 0.0)
    if y > 0.5:
        return v[1] * y + v[0]
    return y
'''


@pytest.mark.parametrize("y", [0.7, 0.2])
def test_vjp_zero_of_an_array_parameter_behind_the_guard(y):
    # v's producer divides: its backward runs only where the arm reading v
    # ran, else x's adjoint is np.zeros_like(x). The pair's backward pass
    # had no x (not on its tape): NameError in vjp's pullback at y = 0.2.
    # (grad, made before any call, reads a function that never names NumPy
    # as one of numbers and refuses v[1], located.)
    f = make_function(PARAMETER_ZEROS)
    args = [np.array([0.3, 0.5, 0.8]), y]
    value, back = s2s_ad.vjp(f, *args)
    assert value == f(*args)
    _close(back(1.0), f, args, [0, 1])
