"""An array read through a shape op, its result read in one arm of a branch:
where the other arm runs, its adjoint is a structural zero, and the shape
op's adjoint must give zeros of the array's shape (it crashed with AxisError
or ValueError on the number 0.0, or returned 0.0 for an array parameter).
grad and vjp against central differences, both arms."""

import numpy as np
import pytest

import s2s_ad
from tests import untouched_shapes_src as src
from tests.array_oracle import fd_gradient

CASES = {
    "f_reshape": (np.arange(6.0).reshape(2, 3) * 0.1, np.ones((2, 3))),
    "f_transpose": (np.arange(6.0).reshape(3, 2) * 0.1, np.ones((2, 3))),
    "f_T": (np.arange(6.0).reshape(3, 2) * 0.1, np.ones((2, 3))),
    "f_swap": (np.arange(6.0).reshape(3, 2) * 0.1, np.ones((2, 3))),
    "f_expand": (np.arange(9.0).reshape(3, 3) * 0.1, np.ones((1, 3))),
    "f_moveaxis": (np.arange(6.0).reshape(3, 2) * 0.1, np.ones((2, 3))),
}


@pytest.mark.parametrize("s", [-1.0, 1.0])
@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_op_read_in_one_arm(name, s):
    f = getattr(src, name)
    a, b = CASES[name]
    args = [a, b * 0.7, s]
    got = s2s_ad.grad(f, wrt=[0, 1])(*args)
    for i, g in enumerate(got):
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)
    value, pull = s2s_ad.vjp(f, *args)
    assert value == pytest.approx(f(*args), rel=1e-13)
    for i, g in enumerate(pull(1.0)[:2]):
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("s", [-1.0, 1.0])
@pytest.mark.parametrize("fn", [src.tuple_item_in_one_arm, src.tuple_item_in_one_arm_reshaped],
                         ids=lambda f: f.__name__)
def test_helper_tuple_item_read_in_one_arm(fn, s):
    """The arm that does not read ``a`` ran: ``h``'s backward got the number
    0.0 as ``a``'s cotangent and crashed in the adjoint of np.moveaxis
    (AxisError) or np.reshape (ValueError)."""
    args = [np.arange(6.0).reshape(2, 3) * 0.1, s]
    want = fd_gradient(fn, args, 0)
    np.testing.assert_allclose(s2s_ad.grad(fn, wrt=0)(*args), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.vjp(fn, *args)[1](1.0)[0], want, rtol=1e-6, atol=1e-8)
