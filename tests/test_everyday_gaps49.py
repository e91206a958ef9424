"""Python as people write it, the gaps left: a parameter indexing an array
(``x[k]``, ``np.take(x, k)``) is an integer with no gradient, as a list's
index is. Each derivative is compared with central differences in float64
of the function itself, through ``grad``, ``vjp`` and ``jvp``, at the top
level, in a helper and in a loop."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient as _fd
from tests.modules import import_source

INDEX_SRC = '''
import numpy as np


def read_at(x, k):
    return x[k] * k


def read_at_annotated(x, k: int):
    return x[k] * k


def row_at(m, k):
    return np.sum(m[k, :]) * k


def tail_from(x, k):
    return np.sum(x[k:]) * k


def at_arithmetic(x, k):
    return x[2 * k - 1] * x[k]


def taken(x, k):
    return np.sum(np.take(x, k) * x) * k


def pick(x, k):
    return x[k]


def through_a_helper(x, k):
    return pick(x, k) * k


def in_a_loop(x, k):
    s = 0.0
    for i in range(3):
        s = s + x[k] * x[i] * k
    return s


def masked(x, m):
    return np.sum(x[m] ** 2) + np.sum(x[x > 0.0]) * np.sum(m)
'''
INDEX_POINTS = {"read_at": 2, "read_at_annotated": 2, "row_at": 1, "tail_from": 1,
                "at_arithmetic": 1, "taken": 2, "through_a_helper": 2, "in_a_loop": 2}


@pytest.mark.parametrize("name", sorted(INDEX_POINTS))
def test_a_parameter_indexing_an_array_has_no_gradient(tmp_path, name):
    """A parameter an array is indexed by (``x[k]``, ``x[2 * k - 1]``,
    ``m[k, :]``, ``x[k:]``, ``np.take(x, k)``, in a helper, in a loop) is an
    int: a gradient with respect to it is refused, located, ``wrt=None``
    leaves it out and ``vjp`` gives None for it, as for a list's index (it
    was a number, the derivative with the element read held fixed:
    ``read_at`` at k = 2 gave x[2]); the array's gradient against central
    differences."""
    src = import_source(tmp_path, INDEX_SRC, f"everyday_gaps49_index_{name}")
    f = getattr(src, name)
    x = np.array([0.3, -0.2, 0.5, 0.9])
    args = [np.outer(x, [1.0, -2.0]) if name == "row_at" else x, INDEX_POINTS[name]]
    with pytest.raises(s2s_ad.SourceError, match="used as an integer") as e:
        s2s_ad.grad(f, wrt=1)(*args)
    assert "everyday_gaps49_index_" in str(e.value)
    _, back = s2s_ad.vjp(f, *args)
    got = back(1.0)
    assert got[1] is None
    np.testing.assert_allclose(got[0], _fd(f, args, 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.grad(f)(*args), _fd(f, args, 0), rtol=1e-6, atol=1e-8)
    _, tangent = s2s_ad.jvp(f)(*args, **{"d" + f.__code__.co_varnames[0]: np.ones_like(args[0])})
    assert tangent == pytest.approx(float(np.sum(_fd(f, args, 0))), rel=1e-6)


def test_a_mask_made_by_a_comparison_is_not_an_integer_use(tmp_path):
    """``x[x > 0.0]``: the comparison's operand keeps its gradient (the mask,
    a parameter, has none)."""
    src = import_source(tmp_path, INDEX_SRC, "everyday_gaps49_index_masked")
    x = np.array([0.3, -0.2, 0.5, 0.9])
    m = np.array([True, False, True, True])
    np.testing.assert_allclose(s2s_ad.grad(src.masked)(x, m), _fd(src.masked, [x, m], 0),
                               rtol=1e-6, atol=1e-8)
    assert s2s_ad.vjp(src.masked, x, m)[1](1.0)[1] is None


WRITE_SRC = '''
import numpy as np


def write_at(x, a):
    y = np.zeros(3)
    y[a] = x[0] * 2.0
    return np.sum(y * x)


def put(x, a):
    y = np.zeros(3)
    y[a + 1] = x[0] * x[1]
    return y


def through_a_helper(x, a):
    return np.sum(put(x, a) * x)


def in_a_loop(x, a):
    s = 0.0
    for i in range(2):
        y = np.zeros(3)
        y[a] = x[i] * x[2]
        s = s + np.sum(y * y)
    return s


def read_list(x, a):
    xs = [x, x * 2.0, x * 3.0]
    return xs[a] * x
'''
WRITES = {"write_at": 1, "through_a_helper": 0, "in_a_loop": 2}


def _derivatives(f, args):
    """grad, vjp's pullback and jvp of ``f`` at ``args`` (first argument)."""
    x = args[0]
    yield lambda: s2s_ad.grad(f, wrt=0)(*args)
    yield lambda: s2s_ad.vjp(f, *args)[1](1.0)[0]
    yield lambda: s2s_ad.jvp(f)(*args, **{"dx": np.ones_like(x)})[1]


@pytest.mark.parametrize("name", sorted(WRITES))
def test_a_float_index_of_a_write_raises_index_error(tmp_path, name):
    """``y[a] = v`` with ``a`` a float or a NumPy float: IndexError, as NumPy
    raises (was TypeError, s2s-ad's own); with an int, the derivatives
    against central differences."""
    src = import_source(tmp_path, WRITE_SRC, f"everyday_gaps49_write_{name}")
    f = getattr(src, name)
    x = np.array([0.3, -0.7, 1.1])
    for a in (1.0, np.float64(1.0)):
        with pytest.raises(IndexError):
            f(x, a)
        for run in _derivatives(f, [x, a]):
            with pytest.raises(IndexError, match="`a` indexes `y\\w*` in an assignment .* valid "
                               "indices"):
                run()
    want = _fd(f, [x, WRITES[name]], 0)
    got = [run() for run in _derivatives(f, [x, WRITES[name]])]
    np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got[1], want, rtol=1e-6, atol=1e-8)
    assert got[2] == pytest.approx(float(np.sum(want)), rel=1e-6)


def test_a_float_index_of_a_list_raises_type_error(tmp_path):
    """``xs[a]`` of a list with ``a`` a float: TypeError, as Python raises."""
    src = import_source(tmp_path, WRITE_SRC, "everyday_gaps49_read_list")
    with pytest.raises(TypeError):
        src.read_list(0.5, 1.0)
    for run in _derivatives(src.read_list, [0.5, 1.0]):
        with pytest.raises(TypeError, match="list indices must be integers"):
            run()
    assert s2s_ad.grad(src.read_list, wrt=0)(0.5, 1) == pytest.approx(
        float(_fd(src.read_list, [0.5, 1], 0)), rel=1e-6)


PARTS_SRC = '''
import numpy as np


def bound_imag(x):
    y = x * 2.0
    im = y.imag
    im[0] = 3.0
    return np.sum(y * x) + np.sum(im)


def numpy_imag(x):
    y = x * 2.0
    im = np.imag(y)
    im[1] = x[0]
    return np.sum(y * x) + np.sum(im)


def added_into(x):
    y = x * 2.0
    im = y.imag
    im += 1.0
    return np.sum(y * x)


def written_through(x):
    y = x * 2.0
    y.imag[0] = 3.0
    return np.sum(y * x)


def set_imag(y):
    im = y.imag
    im[0] = 1.0
    return im


def in_a_helper(x):
    return np.sum(set_imag(x * 2.0) * x)


def in_a_loop(x):
    y = x * 2.0
    im = np.imag(y)
    s = 0.0
    for i in range(2):
        im[i] = x[i]
        s = s + np.sum(im) * x[i]
    return s


def real_part(x):
    y = x * 2.0
    r = y.real
    r[0] = x[1] * x[1]
    return np.sum(y * x)


def real_written_through(x):
    y = x * 2.0
    y.real[0] = 3.0
    return np.sum(y * x)
'''
READ_ONLY = {"bound_imag": "read-only", "numpy_imag": "read-only", "added_into": "read-only",
             "written_through": "read-only", "in_a_helper": "read-only",
             "in_a_loop": "must start as a new array", "real_written_through": "`y\\[0\\] = ...`"}


@pytest.mark.parametrize("name", sorted(READ_ONLY))
def test_a_write_into_the_imaginary_part_of_a_real_array_is_refused(tmp_path, name):
    """NumPy raises where the code writes into ``y.imag`` of a real array
    (read-only); the generated code wrote into zeros of its own and gave a
    gradient. Refused, located, through grad, vjp and jvp; ``y.real[0] = v``
    refused with its rewrite."""
    src = import_source(tmp_path, PARTS_SRC, f"everyday_gaps49_parts_{name}")
    f = getattr(src, name)
    x = np.array([0.4, -1.3])
    if name != "real_written_through":
        with pytest.raises(ValueError, match="read-only"):
            f(x)
    for run in _derivatives(f, [x]):
        with pytest.raises(s2s_ad.SourceError, match=READ_ONLY[name]) as e:
            run()
        assert f"everyday_gaps49_parts_{name}.py:" in str(e.value) and "^" in str(e.value)


def test_a_write_into_the_real_part_of_a_real_array_writes_into_it(tmp_path):
    """``r = y.real; r[0] = v``: ``r`` is ``y`` itself, as NumPy returns it."""
    src = import_source(tmp_path, PARTS_SRC, "everyday_gaps49_parts_real")
    f = src.real_part
    x = np.array([0.4, -1.3])
    want = _fd(f, [x], 0)
    got = [run() for run in _derivatives(f, [x])]
    np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got[1], want, rtol=1e-6, atol=1e-8)
    assert got[2] == pytest.approx(float(np.sum(want)), rel=1e-6)


SLICES_SRC = '''
import numpy as np


def bound_then_read(x, n: int):
    sl = slice(1, n)
    return np.sum(x[sl] ** 2) * x[0]


def reversed_all(x):
    sl = slice(None, None, -1)
    return np.sum(x[sl] * x)


def rows_of(m):
    rows = slice(0, 2)
    return np.sum(np.sin(m[rows, 1:]))


def written(x, n: int):
    y = np.zeros(4)
    sl = slice(1, n)
    y[sl] = x[sl] * x[0]
    return np.sum(y * x)


def inline_call(x, n):
    return np.sum(x[slice(1, n)] ** 3)


def bounds_rebound(x, n: int):
    sl = slice(0, n)
    n = n + 1
    return np.sum(x[sl] ** 2) * n


def of_a_list(a, b, n: int):
    xs = [a, a * b, b * b, a * a * b]
    sl = slice(n, None, -1)
    t = 0.0
    for v in xs[sl]:
        t = t + v * v
    return t + sum(xs[slice(1, n)])


def windows(x, n: int):
    s = 0.0
    for i in range(n):
        sl = slice(i, i + 2)
        s = s + np.sum(x[sl] ** 2) * x[i]
    return s


def made_before_the_loop(x, n: int):
    sl = slice(1, n)
    s = 0.0
    for i in range(3):
        s = s + np.sum(x[sl] * x[i])
    return s


def inner(x, n: int):
    sl = slice(0, n)
    return np.sum(np.tanh(x[sl]))


def in_a_helper(x, n: int):
    return inner(x * x, n) * x[1]


def take(z, sl):
    return np.sum(z[sl])


def passed(x, n: int):
    return take(x, slice(0, n))


def returned(x):
    sl = slice(0, 2)
    return np.sum(x[sl]), sl


def window(k):
    return slice(k, k + 2)


def from_a_helper(x):
    return np.sum(x[window(1)] ** 2)


def in_a_branch(x, n: int):
    if x[0] > 0:
        sl = slice(0, n)
    else:
        sl = slice(n, None)
    return np.sum(x[sl] ** 2)


def carried(x):
    s = 0.0
    sl = slice(0, 1)
    for i in range(3):
        s = s + np.sum(x[sl] ** 2)
        sl = slice(i, i + 2)
    return s
'''
SLICE_ARGS = {"bound_then_read": [3], "reversed_all": [], "rows_of": [],
              "written": [3], "inline_call": [3], "bounds_rebound": [2], "of_a_list": [2],
              "windows": [2], "made_before_the_loop": [3], "in_a_helper": [3]}
X5 = np.array([0.3, -0.5, 0.7, 1.1])


@pytest.mark.parametrize("name", sorted(SLICE_ARGS))
def test_a_slice_object_reads_as_the_slice_written_inline(tmp_path, name):
    """``sl = slice(1, n)`` then ``x[sl]`` (``m[sl, 1:]``, ``xs[sl]``, ``y[sl] =
    v``, ``for v in xs[sl]``, ``x[slice(1, n)]``), at the top level, in a
    loop and in a helper: the slice written inline with the bounds it had
    where it was made; grad, vjp and jvp against central differences (was
    refused: 'the call `slice` is not supported')."""
    src = import_source(tmp_path, SLICES_SRC, f"everyday_gaps49_slices_{name}")
    f = getattr(src, name)
    if name == "of_a_list":
        args = [0.3, 0.8] + SLICE_ARGS[name]
    else:
        args = [np.arange(9.0).reshape(3, 3) / 7.0 if name == "rows_of" else X5] \
            + SLICE_ARGS[name]
    want = _fd(f, args, 0)
    np.testing.assert_allclose(s2s_ad.grad(f, wrt=0)(*args), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.vjp(f, *args)[1](1.0)[0], want, rtol=1e-6, atol=1e-8)
    tangents = {"d" + v: np.ones_like(a) if isinstance(a, np.ndarray) else 0.0
                for v, a in zip(f.__code__.co_varnames, args) if not isinstance(a, int)}
    tangents["d" + f.__code__.co_varnames[0]] = np.ones_like(args[0])
    _, tangent = s2s_ad.jvp(f)(*args, **tangents)
    assert tangent == pytest.approx(float(np.sum(want)), rel=1e-6)


SLICE_REFUSED = {"passed": "`take`'s argument `sl` is a slice object",
                 "returned": "`sl` is a slice object",
                 "from_a_helper": r"`slice\(k, k \+ 2\)` is a slice object",
                 "in_a_branch": "slice object made in a branch",
                 "carried": "slice object made before this loop and again in it"}


@pytest.mark.parametrize("name", sorted(SLICE_REFUSED))
def test_a_slice_object_used_otherwise_is_refused_located(tmp_path, name):
    """A slice passed to a helper, returned (by the function or by a helper,
    where it crashed with an AttributeError), made in a branch or made again
    in the loop that reads it: refused, located, with the rewrite."""
    src = import_source(tmp_path, SLICES_SRC, f"everyday_gaps49_slices_{name}")
    f = getattr(src, name)
    args = [X5] + ([2] if name in ("passed", "in_a_branch") else [])
    for run in _derivatives(f, args):
        with pytest.raises(s2s_ad.SourceError, match=SLICE_REFUSED[name]) as e:
            run()
        assert f"everyday_gaps49_slices_{name}.py:" in str(e.value) and "^" in str(e.value)


TABLES_SRC = '''
import math

import numpy as np


def nearest(table, t, n: int):
    i = np.floor(t * n).astype(int)
    return np.sum(table[i] * t)


def linear(table, t, n: int):
    i = np.floor(t * n).astype(np.int64)
    w = t * n - i
    return np.sum(table[i] * (1.0 - w) + table[i + 1] * w)


def lookup(table, t, n: int):
    return linear(table, t, n) * t[0]


def in_a_loop(table, t, n: int):
    s = 0.0
    for k in range(2):
        i = np.floor(t * (n - k)).astype("int32")
        s = s + np.sum(np.take(table, i) * t * (k + 1))
    return s


def as_a_value(table, t, n: int):
    return np.sum(np.floor(t * n).astype(int) * t) + np.sum(table)


def a_number(xs, t):
    i = int(math.floor(t * 3))
    return xs[i] * t
'''
TABLE = np.array([0.3, -0.5, 0.7, 1.1, 0.2, 0.9])
T = np.array([0.12, 0.55, 0.71])


def _check_table(f):
    """grad, vjp and jvp of ``f(table, t, n)`` with respect to the table and
    to ``t``, against central differences."""
    args = [TABLE, T, 4]
    for k in (0, 1):
        want = _fd(f, args, k)
        np.testing.assert_allclose(s2s_ad.grad(f, wrt=k)(*args), want, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(s2s_ad.vjp(f, *args)[1](1.0)[k], want, rtol=1e-6,
                                   atol=1e-8)
        tangents = {"dtable": np.zeros_like(TABLE), "dt": np.zeros_like(T), "dn": 0.0}
        tangents["dtable" if k == 0 else "dt"] = np.ones_like(args[k])
        assert s2s_ad.jvp(f)(*args, **tangents)[1] == pytest.approx(float(np.sum(want)),
                                                                    rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("name", ["nearest", "linear", "lookup", "in_a_loop", "as_a_value"])
def test_an_integer_cast_of_a_value_indexes_a_table(tmp_path, name):
    """``np.floor(t * n).astype(int)`` (``np.int64``, ``"int32"``): integers, a
    step function of ``t``, read as an index (``table[i]``, ``np.take``) or
    as a number with no derivative, as ``int(math.floor(t))`` is (was
    refused: '`dtype=int` is not supported here'); grad, vjp and jvp with
    respect to the table and to ``t`` against central differences, away
    from the steps."""
    src = import_source(tmp_path, TABLES_SRC, f"everyday_gaps49_tables_{name}")
    f = getattr(src, name)
    _check_table(f)


def test_an_integer_dtype_of_a_constructor_is_still_refused():
    """``np.zeros(n, dtype=int)``: an array the function fills with values,
    which would be converted: refused, located, as before."""
    def f(x):
        y = np.zeros(3, dtype=int)
        y[0] = x[0]
        return np.sum(y * x)
    with pytest.raises(s2s_ad.SourceError, match="`dtype=int` is not supported here"):
        s2s_ad.grad(f)(T)


UFUNCS_SRC = '''
import numpy as np


def wrapped(table, t, n: int):
    i = np.floor(t * n).astype(int)
    w = t * n - i
    lo, hi = np.mod(i, table.shape[0]), np.remainder(i + 1, table.shape[0])
    return np.sum(table[lo] * (1.0 - w) + table[hi] * w)


def arithmetic(table, t, n: int):
    u = np.add(t, table[:3]) * np.subtract(t, 0.5)
    v = np.divide(np.multiply(u, t), np.true_divide(table[1:4] ** 2 + 1.0, 2.0))
    return np.sum(v) + np.sum(np.floor_divide(t * n, 0.3) * t) + np.sum(np.mod(t, 0.4) * table[:3])


def helper_then_loop(table, t, n: int):
    s = 0.0
    for k in range(2):
        s = s + wrapped(table, np.mod(t + 0.3 * k, 1.0), n)
    return s
'''


@pytest.mark.parametrize("name", ["wrapped", "arithmetic", "helper_then_loop"])
def test_numpy_operator_ufuncs_are_the_operators(tmp_path, name):
    """``np.mod(i, rows)`` (an interpolation table read with wrap-around, as
    fluid simulations do), ``np.add``, ``np.subtract``, ``np.multiply``,
    ``np.divide``, ``np.floor_divide``: the operators ``%``, ``+``, ``-``,
    ``*``, ``/``, ``//`` (were refused: 'has no derivative rule'); grad, vjp
    and jvp against central differences, top level, helper, loop."""
    src = import_source(tmp_path, UFUNCS_SRC, f"everyday_gaps49_ufuncs_{name}")
    f = getattr(src, name)
    _check_table(f)


JOINS_SRC = '''
def summed(x, n: int):
    xs = []
    ys = []
    for k in range(n):
        xs.append(x * k)
        ys.append(x * x + k)
    return sum(xs + ys)


def iterated(x, n: int):
    xs = [x * k for k in range(n)]
    ys = []
    for k in range(n):
        ys.append(x * x + k)
    t = 0.0
    for z in xs + ys:
        t = t + z * z
    return t


def with_displays(x, n: int):
    xs = [x * k for k in range(n)]
    t = 0.0
    for z in [x] + xs + [x * x]:
        t = t + z * x
    return t


def through_a_helper(x, n: int):
    return iterated(x * 0.5, n) * x


def in_a_loop(x, n: int):
    t = 0.0
    for j in range(2):
        xs = [x * (k + j) for k in range(n)]
        ys = [x * x * k for k in range(n)]
        for z in xs + ys:
            t = t + z * x
        t = t + sum(xs + ys)
    return t


def of_parameters(xs, ys, a):
    t = 0.0
    for z in xs + ys + [a]:
        t = t + z * a
    return t
'''


@pytest.mark.parametrize("name", ["summed", "iterated", "with_displays", "through_a_helper",
                                  "in_a_loop", "of_parameters"])
def test_a_join_of_lists_summed_or_iterated(tmp_path, name):
    """``sum(xs + ys)`` and ``for z in xs + ys`` of lists grown at run time,
    made by comprehensions, displays or given as parameters, at the top
    level, in a helper and in a loop: the join made once (the loop's header
    was refused: 'a for loop must iterate over range(...), ...: make the
    list first'); grad, vjp and jvp against central differences."""
    src = import_source(tmp_path, JOINS_SRC, f"everyday_gaps49_joins_{name}")
    f = getattr(src, name)
    if name == "of_parameters":
        args, k = [[0.1, 0.2], [0.3], 0.5], 2
        want = float(_fd(lambda a: f(args[0], args[1], a), [args[2]], 0))
        assert s2s_ad.vjp(f, *args)[1](1.0)[k] == pytest.approx(want, rel=1e-6)
        assert s2s_ad.grad(f, wrt=k)(*args) == pytest.approx(want, rel=1e-6)
        assert s2s_ad.jvp(f)(*args, dxs=[0.0, 0.0], dys=[0.0], da=1.0)[1] == pytest.approx(
            want, rel=1e-6)
        return
    args = [0.7, 3]
    want = float(_fd(f, args, 0))
    assert s2s_ad.grad(f, wrt=0)(*args) == pytest.approx(want, rel=1e-6)
    assert s2s_ad.vjp(f, *args)[1](1.0)[0] == pytest.approx(want, rel=1e-6)
    assert s2s_ad.jvp(f)(*args, dx=1.0)[1] == pytest.approx(want, rel=1e-6)


DEFAULTS_SRC = '''
import math

import numpy as np

import s2s_ad


def loss(w, act=np.tanh):
    return np.sum(act(w) ** 2)


def scalar(a, f=math.sin):
    return f(a) * a


def relu(t):
    return np.maximum(t, 0.0)


def own_default(w, act=relu):
    return np.sum(act(w) ** 2)


def through_a_helper(w):
    return loss(w * 2.0) * w[0]


def in_a_loop(w, act=np.tanh):
    s = 0.0
    for k in range(3):
        s = s + np.sum(act(w * k) * w)
    return s


def g(a):
    return a * a * math.sin(a)


def loss_np(w):
    return np.sum(np.tanh(w) ** 2)


def grad_inline(a):
    return s2s_ad.grad(g)(a) * a


def grad_bound(a):
    dg = s2s_ad.grad(g)
    return dg(a) * a + dg(a * a)


def grad_in_a_loop(w):
    dl = s2s_ad.grad(loss_np, wrt=0)
    s = 0.0
    for k in range(2):
        s = s + np.sum(dl(w * (k + 1)) * w)
    return s


def jvp_bound(a):
    jg = s2s_ad.jvp(g)
    v, t = jg(a, da=1.0)
    return t * a + v


def grad_of_a_nested_function(a):
    def h(t):
        return t * a
    dh = s2s_ad.grad(h)
    return dh(a)
'''
DEFAULT_POINTS = {"loss": np.array([0.3, -0.5]), "scalar": 0.4,
                  "through_a_helper": np.array([0.3, -0.5]), "in_a_loop": np.array([0.3, -0.5]),
                  "grad_inline": 0.4, "grad_bound": 0.4, "grad_in_a_loop": np.array([0.3, -0.5]),
                  "jvp_bound": 0.4}


@pytest.mark.parametrize("name", sorted(DEFAULT_POINTS))
def test_function_defaults_and_derivatives_made_inside(tmp_path, name):
    """The function differentiated itself has a NumPy or ``math`` function as
    a default (``def loss(w, act=np.tanh)``: was refused, 'the default value
    of parameter act is ufunc'), or makes a derivative of a module-level
    function inside (``dg = s2s_ad.grad(g)``, ``s2s_ad.grad(g)(a)``,
    ``s2s_ad.jvp(g)``: was refused, 'the call s2s_ad.grad is not
    supported'); top level, helper, loop: grad, vjp and jvp against central
    differences."""
    src = import_source(tmp_path, DEFAULTS_SRC, f"everyday_gaps49_defaults_{name}")
    f = getattr(src, name)
    x = DEFAULT_POINTS[name]
    want = _fd(f, [x], 0)
    np.testing.assert_allclose(s2s_ad.grad(f, wrt=0)(x), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.vjp(f, x)[1](1.0)[0], want, rtol=1e-6, atol=1e-8)
    tangent = s2s_ad.jvp(f)(x, **{"d" + f.__code__.co_varnames[0]: np.ones_like(x)})[1]
    assert tangent == pytest.approx(float(np.sum(want)), rel=1e-6)


def test_a_function_default_is_the_code_s_own(tmp_path):
    """The code made for ``act=np.tanh`` raises for another function passed
    (TypeError naming the rewrite); ``act`` has no gradient (vjp: None); a
    default that is a function of the user's is refused with the rewrite,
    as is a derivative of a nested function made inside."""
    src = import_source(tmp_path, DEFAULTS_SRC, "everyday_gaps49_defaults_own")
    x = np.array([0.3, -0.5])
    np.testing.assert_allclose(s2s_ad.grad(src.loss)(x, np.tanh), _fd(src.loss, [x], 0),
                               rtol=1e-6, atol=1e-8)
    with pytest.raises(TypeError, match="generated for act=np.tanh, its default"):
        s2s_ad.grad(src.loss)(x, np.sin)
    assert s2s_ad.vjp(src.loss, x)[1](1.0)[1] is None
    with pytest.raises(s2s_ad.SourceError, match=r"lambda w: own_default\(w\)"):
        s2s_ad.grad(src.own_default)(x)
    with pytest.raises(s2s_ad.SourceError, match="make this one at module level") as e:
        s2s_ad.grad(src.grad_of_a_nested_function)(0.4)
    assert "everyday_gaps49_defaults_own.py:" in str(e.value)
