"""Forms google/tangent's test functions write (tests/test_tangent_files.py
reads them from a tangent checkout) that s2s-ad refused, in programs of our
own (tests/tangent_style_src.py): each derivative against central finite
differences in float64 through `s2s_ad.grad`, `s2s_ad.vjp`, `s2s_ad.jvp` and,
where it applies, `s2s_ad.hessian`; what stays unsupported is refused, located."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests import tangent_style_src as S
from tests.oracle import second_difference
from tests.test_everyday_gaps import check

RNG = np.random.default_rng(49)
X = RNG.uniform(-1.0, 1.0, size=4)
M = RNG.uniform(0.5, 1.5, size=(3, 4))


# -- np.add, np.subtract, np.multiply, np.divide: the operators ----------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.ufunc_numbers, [0.7, -1.3], [0, 1]),
    (S.ufunc_numbers, [-1.6, 0.4], [0, 1]),
    (S.ufunc_arrays, [X, M], [0, 1]),
    (S.ufunc_arrays, [0.3, M], [0, 1]),  # a number broadcast against the matrix
    (S.ufunc_displays, [0.7, -1.3], [0, 1]),
    (S.ufunc_loop_helper, [X, 0.8], [0, 1]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_operator_ufuncs(f, args, wrt):
    check(f, args, wrt)


@pytest.mark.parametrize("a, b", [(0.7, -1.3), (-1.6, 0.4)])
def test_operator_ufuncs_second_derivatives(a, b):
    got = s2s_ad.hessian(S.ufunc_numbers, wrt=(0, 1))(a, b)
    for i in range(2):
        for j in range(2):
            want = second_difference(S.ufunc_numbers, [a, b], i, j)
            assert float(got[i][j]) == pytest.approx(want, rel=1e-6, abs=1e-6), (i, j)


@pytest.mark.parametrize("f, args, phrase", [
    (S.ufunc_where, [X, X], "`out`, `where` and `dtype` are not supported"),
    (S.ufunc_list, [[0.5, 1.5], 2.0], "make the array first, `np.array(xs)`"),
])
def test_operator_ufuncs_refused_located(f, args, phrase):
    with pytest.raises(SourceError) as exc:
        s2s_ad.vjp(f, *args)
    message = str(exc.value)
    assert "tangent_style_src.py:" in message.splitlines()[0], message
    assert phrase in message and "^" in message, message


# -- a tuple or list indexed by an int parameter, in NumPy code (the parameter an
#    array there: checked to be an int where the code runs, as Python's tuple does) ----

@pytest.mark.parametrize("f, args, wrt", [
    (S.tuple_at_param, [0.7, -1.3, 0.4, 0], [0, 1, 2]),
    (S.tuple_at_param, [0.7, -1.3, 0.4, 1], [0, 1, 2]),
    (S.tuple_at_param, [0.7, -1.3, 0.4, 2], [0, 1, 2]),
    (S.tuple_at_param_arithmetic, [X[:3], 1], [0]),
    (S.tuple_at_param_arithmetic, [X[:3], 2], [0]),
    (S.helper_at_param, [0.7, -1.3, 0.4, 2], [0, 1, 2]),
    (S.helper_at_param, [0.7, -1.3, 0.4, 1], [0, 1, 2]),
    (S.helper_at_param_loop, [X[:3], 3], [0]),
    (S.list_param_at_param, [[0.7, -1.3, 0.4], 2], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_index_parameter_of_numpy_code(f, args, wrt):
    check(f, args, wrt)


def test_index_parameter_of_numpy_code_has_no_derivative():
    with pytest.raises(SourceError) as exc:
        s2s_ad.grad(S.tuple_at_param, wrt=3)(0.7, -1.3, 0.4, 1)
    message = str(exc.value)
    assert "cannot differentiate with respect to `i`" in message and "^" in message, message


def test_index_parameter_of_numpy_code_given_a_float_raises_as_python():
    with pytest.raises(TypeError):
        S.tuple_at_param(0.7, -1.3, 0.4, 1.0)
    with pytest.raises(TypeError, match="must be an int"):
        s2s_ad.grad(S.tuple_at_param, wrt=0)(0.7, -1.3, 0.4, 1.0)


# -- np.sum, np.mean, np.max ... of a tuple: of the array NumPy makes of it, as of a list --

@pytest.mark.parametrize("f, args, wrt", [
    (S.sum_of_tuple, [0.7, -1.3], [0, 1]),
    (S.reductions_of_tuple, [X[:3]], [0]),
    (S.sum_of_returned_tuple, [0.7], [0]),
    (S.sum_of_returned_tuple, [-1.3], [0]),
    (S.sum_of_tuple_of_arrays, [X], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_reductions_of_tuples(f, args, wrt):
    check(f, args, wrt)


def test_sum_of_a_shape_stays_an_int():
    def size_times(x):
        return np.prod(x.shape) * np.sum(x)
    assert s2s_ad.grad(size_times)(M) == pytest.approx(np.full(M.shape, M.size))
