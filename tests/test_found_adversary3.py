"""Wrong gradients and internal errors found by adversarial programs on the
newer features, each against central differences (float64)."""

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient, make_function


def _close(got, f, args, wrt):
    for g, i in zip(got, wrt):
        np.testing.assert_allclose(np.asarray(g, dtype=float), fd_gradient(f, args, i),
                                   rtol=1e-5, atol=1e-7)


EINSUM_BROADCAST = '''
def f(A, x):
    return np.sum(np.einsum("ij,ij->i", A, x) ** 2) + np.sum(np.einsum("ij,ij->j", A, x) ** 2)
'''


@pytest.mark.parametrize("xshape", [(3, 1), (1, 2), (1, 1), (3, 2)])
def test_einsum_operand_broadcast_by_the_other(xshape):
    # A (3, 2) with x (3, 1): the letter j has length 1 in x only, so the
    # adjoint of A (x's j broadcast) is constant along j. The contraction of g
    # with x had x's length 1 there and unbroadcast raised ValueError (could
    # not reshape (3, 1) into (3, 2)).
    f = make_function(EINSUM_BROADCAST)
    rng = np.random.default_rng(1)
    args = [rng.normal(size=(3, 2)), rng.normal(size=xshape)]
    _close(s2s_ad.grad(f, wrt=[0, 1])(*args), f, args, [0, 1])
    value, back = s2s_ad.vjp(f, *args)
    _close(back(1.0), f, args, [0, 1])
