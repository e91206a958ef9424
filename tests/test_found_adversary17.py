"""Adversarial programs of round 17: np.where discarding a root or a
logarithm under conditions made otherwise than by one comparison with a
number (``~(a <= 0)``, ``np.logical_not``, ``a > b`` of two arrays, the
tests ``np.isnan``/``np.isfinite``), and under wheres nested in wheres
(the discarded value picked by the inner where, dropped by the outer). Each
derivative is compared with central differences in float64 of the original
function (second derivatives with central differences of the gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient as _fd
from tests.modules import import_source
from tests.test_found_adversary16 import _tangent_columns

WHERE_SRC = '''
import numpy as np


def tilde_of_comparison(a):
    return np.sum(np.where(~(a <= 0), np.sqrt(a), 0.0))


def logical_not_of_comparison(a):
    return np.sum(np.where(np.logical_not(a <= 0), np.sqrt(a) * a, a))


def logical_or_of_comparisons(a):
    r = np.log(a)
    return np.sum(np.where(np.logical_or(a > 2.0, (a > 0) & (a < 1.0)), r * a, 0.0))


def two_arrays_compared(a, b):
    return np.sum(np.where(a > b, np.sqrt(a - b), 0.0))


def finite_test(a):
    r = np.log(a)
    return np.sum(np.where(np.isfinite(r), r, 0.0)) + np.sum(np.where(~np.isnan(r), r * r, 1.0))


def nested_in_else(a):
    return np.sum(np.where(a <= 0, 0.0, np.where(a > 1, np.log(a - 1.0), np.sqrt(a))))


def nested_in_then(a):
    return np.sum(np.where(a > 0, np.where(a > 1, np.log(a - 1.0), np.sqrt(a)), 0.0))


def nested_scaled(a):
    r = np.sqrt(a)
    return np.sum(np.where(a > 0, 2.0 * np.where(a > 1, 1.0, r * a), a))


def nested_three(a):
    r = np.log(a)
    inner = np.where(a < 3.0, r, 1.0)
    middle = np.where(a > 0.5, inner * 2.0, 0.5 * a)
    return np.sum(np.where(a > 0, middle, a * a))


def nested_in_loop(a):
    s = 0.0
    b = a
    for k in range(3):
        b = b * 0.9 - 0.2
        s = s + np.sum(np.where(b <= 0, b, np.where(b > 1, np.log(b), np.sqrt(b) * b)))
    return s


def root_or_log(b):
    return np.where(b <= 0, 2.0 * b, np.where(b > 1, np.log(b), np.sqrt(b)))


def nested_in_helper(a):
    return np.sum(root_or_log(a) * root_or_log(a - 0.5))


def nested_matrix_row(m, a):
    return np.sum(np.where(a > 0, np.where(a < 2.0, np.sqrt(a), 1.0) * m, m))
'''

A = np.array([0.7, -1.3, 2.1, 1.4, -0.2])
M = np.array([[0.7, -1.3, 2.1, 0.2, 1.0], [-0.4, 0.9, 1.6, -2.0, 0.3]])
WHERE_POINTS = {
    "tilde_of_comparison": (A,), "logical_not_of_comparison": (A,),
    "logical_or_of_comparisons": (A,), "two_arrays_compared": (A, np.array([0.5, -0.2, 2.5, 1.0, 0.3])),
    "finite_test": (A,), "nested_in_else": (A,), "nested_in_then": (A,), "nested_scaled": (A,),
    "nested_three": (np.array([0.7, -1.3, 3.5, 0.3, -0.2]),), "nested_in_loop": (A,),
    "nested_in_helper": (A,), "nested_matrix_row": (M, A),
}


FIRST_ORDER = {
    "grad": lambda f, args, i: s2s_ad.grad(f, wrt=i)(*args),
    "checkpoint": lambda f, args, i: s2s_ad.grad(f, wrt=i, checkpoint=True)(*args),
    "vjp": lambda f, args, i: s2s_ad.vjp(f, *args)[1](1.0)[i],
    "jvp": _tangent_columns,
}
"""Each entry point's derivative of f in argument i at args."""


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(WHERE_POINTS))
@pytest.mark.parametrize("api", ["grad", "vjp", "checkpoint", "jvp", "hvp"])
def test_where_discarding_under_other_conditions_and_nested_wheres(tmp_path, name, api):
    """A root or logarithm np.where discards where it is nan (a < 0) has a
    zero adjoint there, as central differences give: under a condition made
    by `~`, np.logical_not, np.logical_or, a comparison of two arrays or a
    test of the value, and where a where picks it that another where, reading
    the first, drops (before: nan at those elements, e.g. nested_in_else at
    a = [0.7, -1.3, 2.1, 1.4, -0.2] gave [0.598, nan, 0.909, 2.5, nan] where
    [0.598, 0, 0.909, 2.5, 0])."""
    src = import_source(tmp_path, WHERE_SRC, f"found_adversary17_where_{name}")
    f = getattr(src, name)
    args = WHERE_POINTS[name]
    if api == "hvp":
        a = args[-1]
        v = np.linspace(0.3, -0.2, a.size).reshape(a.shape)
        wrt = len(args) - 1
        grad = s2s_ad.grad(f, wrt=wrt)  # checked against central differences by api="grad"
        up, down = list(args), list(args)
        up[wrt], down[wrt] = a + 1e-5 * v, a - 1e-5 * v
        want = (grad(*up) - grad(*down)) / 2e-5
        got = s2s_ad.hvp(f, wrt=wrt)(*[x.copy() for x in args], v)
        assert np.all(np.isfinite(got)), got
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5), (got, want)
        return
    for i in range(len(args)):
        got = FIRST_ORDER[api](f, [x.copy() for x in args], i)
        assert np.all(np.isfinite(got)), got
        assert np.allclose(got, _fd(f, list(args), i), rtol=1e-6, atol=1e-8), (name, i, got)
