"""hessian and hvp choose their code by the static arguments of each call
(strings, None, bools), as grad does; against central differences of the
gradient."""
import numpy as np
import pytest

import s2s_ad
from tests import static_hessians_src as src

EPS = 1e-5


def _fd_hessian(fn, x, *statics, **kw):
    """Central differences of s2s_ad.grad (itself checked against central
    differences of fn below) along each coordinate of x."""
    grad = s2s_ad.grad(fn)
    x = np.asarray(x, dtype=float)
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = EPS
        cols.append((np.asarray(grad(x + e if x.ndim else float(x + e), *statics, **kw))
                     - np.asarray(grad(x - e if x.ndim else float(x - e), *statics, **kw)))
                    / (2 * EPS))
    return np.stack(cols, axis=-1).reshape(x.shape + x.shape)


def _fd_grad(fn, x, *statics):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = 1e-6
        g.flat[i] = (fn(x + e if x.ndim else float(x + e), *statics)
                     - fn(x - e if x.ndim else float(x - e), *statics)) / 2e-6
    return g


@pytest.mark.parametrize("order", [("sq", "lin"), ("lin", "sq")])
def test_hessian_and_hvp_per_mode(order):
    hess, hvp = s2s_ad.hessian(src.poly), s2s_ad.hvp(src.poly)
    for _ in range(2):  # again: the code found first is not reused for the other mode
        for mode in order:
            x = 1.3
            assert np.isclose(_fd_grad(src.poly, x, mode), s2s_ad.grad(src.poly)(x, mode))
            ref = float(_fd_hessian(src.poly, x, mode))
            assert np.isclose(hess(x, mode), ref, rtol=1e-6)
            assert np.isclose(hess(x, mode=mode), ref, rtol=1e-6)
            assert np.isclose(hvp(x, mode, 2.0), 2.0 * ref, rtol=1e-6)
    assert np.isclose(hess(1.3), float(_fd_hessian(src.poly, 1.3)), rtol=1e-6)  # the default


def test_a_bool_flag_between_two_parameters():
    hess = s2s_ad.hessian(src.flagged, wrt=(0, 1))
    hvp = s2s_ad.hvp(src.flagged, wrt=(0, 1))
    x, y = 0.7, -1.2
    for cube in (True, False, True, False):
        ref = [[0.0, 0.0], [0.0, 0.0]]
        g = s2s_ad.grad(src.flagged, wrt=(0, 1))
        for j, (dx, dy) in enumerate([(EPS, 0.0), (0.0, EPS)]):
            hi, lo = g(x + dx, y + dy, cube), g(x - dx, y - dy, cube)
            for i in range(2):
                ref[i][j] = (hi[i] - lo[i]) / (2 * EPS)
        np.testing.assert_allclose(np.array(hess(x, y, cube)), ref, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(hvp(x, y, cube, (1.0, 0.5)),
                                   np.array(ref) @ [1.0, 0.5], rtol=1e-6, atol=1e-8)


def test_arrays_per_mode():
    x = np.array([0.3, -0.8, 1.1])
    hess, hvp = s2s_ad.hessian(src.arrays), s2s_ad.hvp(src.arrays)
    v = np.array([1.0, -0.5, 2.0])
    for mode in ("lin", "sq", "lin"):
        np.testing.assert_allclose(s2s_ad.grad(src.arrays)(x, mode),
                                   _fd_grad(src.arrays, x, mode), rtol=1e-6, atol=1e-8)
        ref = _fd_hessian(src.arrays, x, mode)
        np.testing.assert_allclose(hess(x, mode), ref, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(hvp(x, mode, v), ref @ v, rtol=1e-6, atol=1e-7)


def vector_poly(x, mode="sq"):
    if mode == "sq":
        return np.sin(x) * x * x
    return np.exp(0.5 * x) * 3.0


@pytest.mark.parametrize("name", ["jacfwd", "jacrev", "jacobian"])
def test_jacobians_per_mode(name):
    jac = getattr(s2s_ad, name)(vector_poly)
    x = np.array([0.4, -1.3, 0.9])
    for mode in ("lin", "sq", "lin", None):
        given = () if mode is None else (mode,)
        ref = np.stack([(vector_poly(x + e, *given) - vector_poly(x - e, *given)) / 2e-6
                        for e in np.eye(3) * 1e-6], axis=-1)
        np.testing.assert_allclose(jac(x, *given), ref, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jac(x, mode="lin"), np.diag(1.5 * np.exp(0.5 * x)), rtol=1e-12)
