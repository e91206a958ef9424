"""Determinants by expansion by minors, as real code writes them, and the
integer lists and index arrays they are written with: ``np.delete`` for the
minor, a list of ints made when the code runs used as an index array into a
NumPy array, and ints read from a list of ints used as list indices.

Every gradient is compared with central differences of the function itself
(float64), and the determinants' also with the closed form
``det(A)·inv(A)ᵀ``; ``vjp`` and ``jvp`` against the same differences along a
random direction."""

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient

RNG = np.random.default_rng(47)


def closed_form(A, ell):
    m = np.reshape(A, (ell, ell))
    return (np.linalg.det(m) * np.linalg.inv(m).T).ravel()


def check_all(f, A, *rest, wrt=0, atol=1e-7):
    """grad, vjp and jvp of f with respect to argument ``wrt`` against
    central differences."""
    args = [A, *rest]
    fd = fd_gradient(f, args, wrt)
    g = s2s_ad.grad(f, wrt=wrt)(*args)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6, atol=atol)
    value, back = s2s_ad.vjp(f, *args)
    assert np.isclose(value, f(*args))
    np.testing.assert_allclose(np.asarray(back(2.5)[wrt]), 2.5 * fd, rtol=1e-6, atol=atol)
    v = RNG.normal(size=np.shape(A))
    name = f.__code__.co_varnames[wrt]
    value, tangent = s2s_ad.jvp(f, wrt=wrt)(*args, **{f"d{name}": v})
    assert np.isclose(value, f(*args))
    assert np.isclose(tangent, np.sum(fd * v), rtol=1e-6, atol=atol)
    return g


# ---- np.delete: the minor ----------------------------------------------------

def minor(m, row, col):
    return np.delete(np.delete(m, row, axis=0), col, axis=1)


def det_by_minor(m):
    n = m.shape[0]
    if n == 1:
        return m[0, 0]
    total = 0.0
    for col in range(n):
        total += (-1) ** col * m[0, col] * det_by_minor(minor(m, 0, col))
    return total


def det_delete(A, ell):
    return det_by_minor(np.reshape(A, (ell, ell)))


def rows_deleted(x, drop):
    """np.delete of a list of rows in a loop, of a slice, of the flattened x."""
    s = 0.0
    for k in range(x.shape[0] - 1):
        s = s + np.sum(np.sin(np.delete(x, [k, k + 1], axis=0)) * k)
    return s + np.sum(np.delete(x, slice(0, 3)) ** 2) + np.sum(np.delete(x, np.s_[::2], 1) * drop)


def slice_at_run_time(x, drop):
    return np.sum(np.delete(x, slice(0, drop)))


@pytest.mark.parametrize("ell", [1, 2, 3, 4])
def test_det_by_np_delete(ell):
    A = RNG.normal(size=ell * ell)
    g = check_all(det_delete, A, ell)
    np.testing.assert_allclose(g, closed_form(A, ell), rtol=1e-8, atol=1e-10)


def test_np_delete_in_a_loop_of_lists_slices():
    check_all(rows_deleted, RNG.normal(size=(4, 5)), 3)


def test_np_delete_of_a_slice_known_only_when_the_code_runs_is_refused():
    with pytest.raises(s2s_ad.SourceError, match="`stop` must be a constant") as e:
        s2s_ad.grad(slice_at_run_time, wrt=0)
    assert "test_int_lists47.py:" in str(e.value)
