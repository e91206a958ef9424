"""Adversarial programs against the features of the last round: the mask
np.where gives a discarded producer's backward (read by two wheres, under a
condition on another array, broadcast either way, keepdims, in loops and
helpers, np.maximum/np.clip in between, where= in a reduction), and loops
over a list whose body writes into it (enumerate, zip, reversed, nested,
run-time lists, dict items and values). Each derivative is compared with
central differences in float64 of the original function (second
derivatives with central differences of the gradient)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient as _fd
from tests.modules import import_source

WHERE_SRC = '''
import numpy as np


def two_wheres_other(a):
    r = np.sqrt(np.abs(a) + 0.1)
    return np.sum(np.where(a > 0, r, 0.0) + np.where(a < 1.0, r * 2.0, 0.0))


def two_wheres_same_value_other_conds(a):
    r = a * a
    return np.sum(np.where(a > 0, r, 0.0)) + np.sum(np.where(a < 0, r, 1.0))


def other_array_cond(a, b):
    return np.sum(np.where(b > 0, np.sqrt(np.abs(a)) * b, a))


def cond_row_vals_matrix(a, m):
    return np.sum(np.where(a > 0, np.log(np.abs(m) + 0.5) * m, m * 3.0))


def cond_matrix_sqrt_row(m, a):
    return np.sum(np.where(m > 0, np.sqrt(np.abs(a)), a))


def sqrt_row_times_matrix(a, m):
    return np.sum(np.where(a > 0, np.sqrt(np.abs(a)) * m, 0.0))


def sqrt_row_times_matrix_cond_m(a, m):
    return np.sum(np.where(m > 0, np.sqrt(np.abs(a)) * m, 0.0))


def keepdims(m):
    s = np.sum(m, axis=1, keepdims=True)
    return np.sum(np.where(s > 0, m / s, 0.0))


def keepdims2(m):
    s = np.sum(m * m, axis=0, keepdims=True)
    return np.sum(np.where(s > 1.0, np.sqrt(s) * m, m))


def in_loop(a):
    s = 0.0
    b = a
    for k in range(3):
        b = b * 0.9 - 0.3
        s = s + np.sum(np.where(b > 0, np.sqrt(np.abs(b)) * b, b * b))
    return s


def in_loop_carried(a):
    b = a
    for k in range(3):
        b = np.where(b > 0, np.sqrt(np.abs(b)) + b, b * 0.5 - 0.1)
    return np.sum(b)


def helper(b):
    return np.where(b > 0, np.sqrt(np.abs(b)) * b, 2.0 * b)


def helper_twice(a):
    return np.sum(helper(a) + helper(a - 1.0) * helper(a))


def max_between(a):
    r = np.maximum(a, 0.2)
    return np.sum(np.where(a > 0.5, np.sqrt(r) * a, a))


def clip_between(a):
    r = np.clip(a, -1.0, 1.0)
    return np.sum(np.where(a > 0, np.log(r + 1.5) * r, r))


def nested_where(a):
    r = a * a
    inner = np.where(a < 1.0, r, 0.0)
    return np.sum(np.where(a > 0, inner, r))


def where_same_both(a):
    r = a * a
    return np.sum(np.where(a > 0, r, r * 3.0))


def cond_via_where_operand(a):
    c = a > 0
    t = np.where(c, a, 1.0)
    return np.sum(np.where(t > 0.5, t * a, a))


def where_vals_used_after(a):
    r = a * a
    y = np.where(a > 0, r, 0.0)
    return np.sum(y) + np.sum(r * a)


def where_cond_of_masked_value(a):
    r = a * a - 0.5
    return np.sum(np.where(r > 0, r * a, a))


def sum_where_sqrt(a):
    return np.sum(np.sqrt(a), where=a > 0)


def mean_where_log(a):
    return np.mean(np.log(a) * a, where=a > 0)


def sum_where_axis_sqrt(m):
    return np.sum(np.sum(np.sqrt(m), axis=1, where=m > 0) ** 2)


def sum_where_div(a):
    n = np.maximum(a, 0.0)
    return np.sum(a / n, where=n > 0)


def where_int_vals(a):
    k = np.array([1, 2, 3])
    return np.sum(np.where(a > 0, np.sqrt(a) * k, k))
'''

A = np.array([0.7, -1.3, 2.1])
M = np.array([[0.7, -1.3, 2.1], [-0.4, 0.9, 1.6]])
WHERE_POINTS = {
    "two_wheres_other": (A,), "two_wheres_same_value_other_conds": (A,),
    "other_array_cond": (A, np.array([0.5, -0.2, 0.3])), "cond_row_vals_matrix": (A, M),
    "cond_matrix_sqrt_row": (M, A), "sqrt_row_times_matrix": (A, M),
    "sqrt_row_times_matrix_cond_m": (A, M), "keepdims": (M,), "keepdims2": (M,),
    "in_loop": (A,), "in_loop_carried": (A,), "helper_twice": (A,), "max_between": (A,),
    "clip_between": (A,), "nested_where": (A,), "where_same_both": (A,),
    "cond_via_where_operand": (A,), "where_vals_used_after": (A,),
    "where_cond_of_masked_value": (A,), "sum_where_sqrt": (A,), "mean_where_log": (A,),
    "sum_where_axis_sqrt": (M,), "sum_where_div": (A,), "where_int_vals": (A,),
}


def _tangent_columns(f, args, i):
    """Forward mode's derivative in argument i, one unit tangent at a time."""
    names = list(__import__("inspect").signature(f).parameters)
    zeros = {"d" + n: np.zeros(np.shape(a)) for n, a in zip(names, args)}
    a = args[i]
    out = np.zeros(np.shape(a))
    for k in np.ndindex(np.shape(a)):
        e = np.zeros(np.shape(a))
        e[k] = 1.0
        out[k] = s2s_ad.jvp(f)(*args, **{**zeros, "d" + names[i]: e})[1]
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", sorted(WHERE_POINTS))
@pytest.mark.parametrize("api", ["grad", "vjp", "jvp", "hvp"])
def test_where_mask_against_central_differences(tmp_path, name, api):
    """The mask of a discarded producer leaves every finite derivative as it
    is: the value also read by a second where (another condition, or the
    other branch), a condition on another array or broadcast against the
    values, a keepdims sum as the condition, the where in a loop (taped
    condition per iteration) and in a helper called twice."""
    src = import_source(tmp_path, WHERE_SRC, f"found_adversary16_where_{name}")
    f = getattr(src, name)
    args = WHERE_POINTS[name]
    if api == "hvp":
        a = args[0]
        v = np.linspace(0.3, -0.2, a.size).reshape(a.shape)
        grad = s2s_ad.grad(f)  # checked against central differences by api="grad"
        want = (grad(a + 1e-5 * v, *args[1:]) - grad(a - 1e-5 * v, *args[1:])) / 2e-5
        got = s2s_ad.hvp(f)(*[x.copy() for x in args], v)
        assert np.allclose(got, want, rtol=1e-4, atol=1e-5), (got, want)
        return
    for i in range(len(args)):
        want = _fd(f, args, i)
        if api == "grad":
            got = s2s_ad.grad(f, wrt=i)(*[x.copy() for x in args])
        elif api == "vjp":
            got = s2s_ad.vjp(f, *[x.copy() for x in args])[1](1.0)[i]
        else:
            got = _tangent_columns(f, [x.copy() for x in args], i)
        assert np.all(np.isfinite(got)), got
        assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (name, i, got, want)


LISTS_SRC = '''
import numpy as np


def write_self_enum(x, y):
    xs = [x, y, x * y]
    for k, v in enumerate(xs):
        xs[(k + 1) % 3] = xs[(k + 1) % 3] + v * v
    return sum(xs)


def write_self_reversed(x, y):
    xs = [x, y, x * y]
    for v in reversed(xs):
        xs[0] = xs[0] * v + 1.0
    return xs[0] + xs[2]


def write_self_zip(x, y):
    xs = [x, y, x * y]
    ys = [y, 0.5, x]
    for v, w in zip(xs, ys):
        xs[1] = xs[1] + v * w
        ys[0] = ys[0] * v
    return sum(xs) + sum(ys)


def nested_same(x, y):
    xs = [x, y, x * y]
    for v in xs:
        for w in xs:
            xs[2] = xs[2] + 0.1 * v * w
    return sum(xs)


def nested_same_enum(x, y):
    xs = [x, y, x * y]
    for i, v in enumerate(xs):
        for j, w in enumerate(xs):
            xs[j] = w + 0.1 * v * xs[i]
    return sum(xs)


def grown_rev(x, n):
    xs = []
    for k in range(n):
        xs.append(x * k + 1.0)
    for v in reversed(xs):
        xs[0] = xs[0] * v
    return sum(xs)


def grown_zip(x, n):
    xs = []
    ys = []
    for k in range(n):
        xs.append(x * k + 1.0)
        ys.append(x - k)
    for v, w in zip(xs, ys):
        xs[-1] = xs[-1] + v * w
        ys[0] = ys[0] * v
    return sum(xs) + sum(ys)


def grown_nested(x, n):
    xs = [x] * n
    for v in xs:
        for k, w in enumerate(xs):
            xs[k] = w * 0.5 + v
    return sum(xs)


def dict_items_w(x, y):
    d = {"a": x, "b": y}
    for k, v in d.items():
        d["b"] = d["b"] * v + x
    return d["a"] + d["b"]


def dict_values_w(x, y):
    d = {"a": x, "b": y}
    for v in d.values():
        d["a"] = d["a"] * v + y
    return d["a"] + d["b"]


def arrays_list(a):
    xs = [a, a * a, np.sin(a)]
    for k, v in enumerate(xs):
        xs[(k + 2) % 3] = xs[(k + 2) % 3] * v
    return np.sum(xs[0] + xs[1] + xs[2])
'''

LIST_POINTS = {
    "write_self_enum": (0.7, 1.3), "write_self_reversed": (0.7, 1.3),
    "write_self_zip": (0.7, 1.3), "nested_same": (0.7, 1.3), "nested_same_enum": (0.7, 1.3),
    "grown_rev": (0.7, 4), "grown_zip": (0.7, 3), "grown_nested": (0.7, 3),
    "dict_items_w": (0.7, 1.3), "dict_values_w": (0.7, 1.3), "arrays_list": (A,),
}


@pytest.mark.parametrize("name", sorted(LIST_POINTS))
@pytest.mark.parametrize("api", ["grad", "vjp", "jvp"])
def test_list_written_while_iterated_against_central_differences(tmp_path, name, api):
    """A loop over a list whose body writes into it (items ahead, behind, or
    its own), with enumerate, zip, reversed, nested loops over the same list,
    a run-time list grown by append, and a dict's items and values."""
    src = import_source(tmp_path, LISTS_SRC, f"found_adversary16_lists_{name}")
    f = getattr(src, name)
    args = LIST_POINTS[name]
    for i, a in enumerate(args):
        if isinstance(a, int):
            continue
        want = _fd(f, args, i)
        copy = [x.copy() if isinstance(x, np.ndarray) else x for x in args]
        if api == "grad":
            got = s2s_ad.grad(f, wrt=i)(*copy)
        elif api == "vjp":
            got = s2s_ad.vjp(f, *copy)[1](1.0)[i]
        else:
            got = _tangent_columns(f, copy, i) if isinstance(a, np.ndarray) else \
                s2s_ad.jvp(f, wrt=i)(*copy, **{"d" + f.__code__.co_varnames[i]: 1.0})[1]
        assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (name, i, got, want)


TWO_WHERES_SRC = '''
import numpy as np


def two_conditions(a):
    r = np.sqrt(a)
    return np.sum(np.where(a > 0, r, 0.0) + np.where(a > 0.5, r * 2.0, 0.0))


def kept_and_dropped(a):
    r = np.sqrt(a)
    return np.sum(np.where(a > 0, r, 0.0) + np.where(a <= 0, 0.0, r * 2.0))


def another_array(a):
    r = np.sqrt(a)
    b = a * a - 2.0
    return np.sum(np.where(b > 0, r * b, 0.0) + np.where(a > 0, r, 0.0))
'''


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", ["two_conditions", "kept_and_dropped", "another_array"])
@pytest.mark.parametrize("api", ["grad", "vjp", "jvp", "hvp"])
def test_value_read_by_wheres_of_different_conditions(tmp_path, name, api):
    """A root read by two wheres with different conditions (or one keeping
    it where `a > 0`, the other dropping it where `a <= 0`) is discarded
    where neither picks it, and the gradient there is 0; the mask was only
    taken where all the wheres had one condition, so the zero adjoint met
    sqrt's infinite derivative: two_conditions' gradient at (0.7, -1.3, 2.1)
    was [1.793, nan, 1.035], right [1.793, 0, 1.035], and kept_and_dropped's
    the same, another_array's (conditions on a and on a * a - 2) [0.598,
    nan, 7.263], right [0.598, 0, 7.263]. The backward of the root is taken
    under the or of the picks."""
    src = import_source(tmp_path, TWO_WHERES_SRC, f"found_adversary16_wheres_{name}")
    f = getattr(src, name)
    args = (A,)
    if api == "hvp":
        v = np.array([0.3, 0.5, -0.2])
        grad = s2s_ad.grad(f)
        want = (grad(A + 1e-5 * v, *args[1:]) - grad(A - 1e-5 * v, *args[1:])) / 2e-5
        got = s2s_ad.hvp(f)(*[x.copy() for x in args], v)
        assert np.all(np.isfinite(got)), got
        assert np.allclose(got, want, rtol=1e-4, atol=1e-6), (got, want)
        return
    want = _fd(f, args, 0)
    if api == "grad":
        got = s2s_ad.grad(f)(*[x.copy() for x in args])
    elif api == "vjp":
        got = s2s_ad.vjp(f, *[x.copy() for x in args])[1](1.0)[0]
    else:
        got = _tangent_columns(f, [x.copy() for x in args], 0)
    assert np.all(np.isfinite(got)), got
    assert np.allclose(got, want, rtol=1e-6, atol=1e-8), (got, want)

