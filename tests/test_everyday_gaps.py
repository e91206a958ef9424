"""Forms everyday code writes that s2s-ad once refused (tests/everyday_gaps_src.py):
each gradient against central finite differences in float64 through
`s2s_ad.grad`, `s2s_ad.vjp` and `s2s_ad.jvp`; writes whose gradient would be
wrong are refused, located."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests import everyday_gaps_src as S

RNG = np.random.default_rng(46)
H = 1e-6


def _shift(value, k, h):
    """``value`` (a float, an array or a list of floats) with its k-th
    element moved by ``h``."""
    if isinstance(value, list):
        out = list(value)
        out[k] += h
        return out
    if isinstance(value, np.ndarray):
        out = value.astype(np.float64)
        out.flat[k] += h
        return out
    return float(value) + h


def _size(value) -> int:
    return len(value) if isinstance(value, list) else int(np.size(value))


def _differences(f, args, i, h=H):
    """∂f/∂args[i] by central differences, as a flat float64 array."""
    out = np.zeros(_size(args[i]))
    for k in range(out.size):
        up = list(args)
        down = list(args)
        up[i], down[i] = _shift(args[i], k, h), _shift(args[i], k, -h)
        out[k] = (float(f(*up)) - float(f(*down))) / (2 * h)
    return out


def _flat(g):
    return np.ravel(np.asarray(g, dtype=np.float64))


def check(f, args, wrt, rtol=1e-6, atol=1e-8):
    """grad, vjp and jvp of ``f`` at ``args`` (``wrt``: the positions of the
    float arguments) against central differences."""
    expected = [_differences(f, args, i) for i in wrt]
    got = s2s_ad.grad(f, wrt=list(wrt))(*args)
    got = got if isinstance(got, tuple) else (got,)
    for i, g, e in zip(wrt, got, expected):
        assert np.shape(g) == np.shape(np.asarray(args[i])), (i, np.shape(g))
        np.testing.assert_allclose(_flat(g), e, rtol=rtol, atol=atol, err_msg=f"grad {i}")
    value, pull = s2s_ad.vjp(f, *args)
    assert value == pytest.approx(float(f(*args)), rel=1e-12)
    cotangents = pull(-2.5)
    for i, e in zip(wrt, expected):
        np.testing.assert_allclose(_flat(cotangents[i]), -2.5 * e, rtol=rtol, atol=atol,
                                   err_msg=f"vjp {i}")
    names = list(inspect.signature(f).parameters)
    directions = {i: RNG.normal(size=np.shape(np.asarray(args[i]))) for i in wrt}
    tangents = {f"d{names[i]}": (list(d) if isinstance(args[i], list) else
                                 d if np.ndim(d) else float(d))
                for i, d in directions.items()}
    value, tangent = s2s_ad.jvp(f, wrt=list(wrt))(*args, **tangents)
    assert value == pytest.approx(float(f(*args)), rel=1e-12)
    along = sum(float(np.dot(e, np.ravel(directions[i]))) for i, e in zip(wrt, expected))
    assert float(tangent) == pytest.approx(along, rel=rtol, abs=atol)


X = RNG.uniform(-1.0, 1.0, size=5)
M = RNG.uniform(-1.0, 1.0, size=(3, 4))


# -- conversions to a NumPy float ----------------------------------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.conv_f64, [X], [0]),
    (S.conv_loop, [X], [0]),
    (S.conv_helper, [X], [0]),
    (S.conv_numbers, [0.7, -1.3], [0, 1]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_float_conversions(f, args, wrt):
    check(f, args, wrt)


def test_float32_conversion_keeps_the_argument_dtype():
    # float32(x) rounds x: differences over a wider step see its slope, 1
    x = np.array([0.3, -0.8, 1.1])
    g = s2s_ad.grad(S.conv_f32)(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, _differences(S.conv_f32, [x], 0, h=1e-3), rtol=1e-3)
    g32 = s2s_ad.grad(S.conv_f64)(x.astype(np.float32))
    assert g32.dtype == np.float32  # np.float64(x[0]) cast back to x's dtype
    np.testing.assert_allclose(g32, _differences(S.conv_f64, [x.astype(np.float32)], 0),
                               rtol=1e-5)


# -- where= of sum and mean, keyword bounds of clip -------------------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.sum_where, [X], [0]),
    (S.mean_where, [X], [0]),
    (S.where_axis, [M], [0]),
    (S.where_loop, [M], [0]),
    (S.clip_keywords, [X], [0]),
    (S.clip_loop, [X, 3], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_masked_reductions_and_clip_keywords(f, args, wrt):
    check(f, args, wrt)


def test_where_leaves_out_nans():
    x = np.array([0.5, np.nan, 1.5])
    g = s2s_ad.grad(S.sum_not_nan)(x)
    np.testing.assert_array_equal(g, [2.0, 0.0, 2.0])


# -- flatten and copies are new arrays; ravel and reshape are views ---------------------

@pytest.mark.parametrize("f", [S.flatten_write, S.copies_written, S.flatten_loop],
                         ids=lambda v: v.__name__)
def test_copies_may_be_written(f):
    check(f, [M], [0])


@pytest.mark.parametrize("f", [S.ravel_write, S.reshape_write], ids=lambda v: v.__name__)
def test_views_of_an_argument_are_not_written(f):
    with pytest.raises(SourceError, match=r"everyday_gaps_src\.py:\d+:\d+: .*`b`"):
        s2s_ad.grad(f)(M)


# -- b[i][j] = v ----------------------------------------------------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.chained_write, [M], [0]),
    (S.chained_loop, [M], [0]),
    (S.chained_rows, [X, 0.6], [0, 1]),
    (S.chained_accumulate, [X], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_chained_index_writes(f, args, wrt):
    check(f, args, wrt)


def test_list_of_lists_keeps_its_shared_row():
    check(S.list_of_lists, [0.8], [0])


@pytest.mark.parametrize("f", [S.sliced_then_indexed, S.masked_then_indexed],
                         ids=lambda v: v.__name__)
def test_a_write_after_a_slice_or_mask_is_refused(f):
    # b[1:][0] writes into a view, b[m][0] into a copy NumPy drops: not b[1:, 0]
    with pytest.raises(SourceError, match=r"everyday_gaps_src\.py:\d+:5: "):
        s2s_ad.grad(f)(M)


# -- slices of a list at run-time bounds ------------------------------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.slice_prefix, [0.7, 0], [0]),
    (S.slice_prefix, [0.7, 3], [0]),
    (S.slice_prefix, [0.7, 9], [0]),
    (S.slice_suffix_loop, [0.7, 1], [0]),
    (S.slice_suffix_loop, [0.7, -2], [0]),
    (S.slice_window, [0.7, -1.2, 1, 4], [0, 1]),
    (S.slice_window, [0.7, -1.2, -4, -1], [0, 1]),
    (S.slice_len, [0.7, 1], [0]),
    (S.slice_to_helper, [0.7, -1.2, 3], [0, 1]),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_list_slices_at_run_time_bounds(f, args, wrt):
    check(f, args, wrt)


def test_one_gradient_serves_every_bound():
    g = s2s_ad.grad(S.slice_window, wrt=[0, 1])
    for i, j in [(0, 5), (2, 3), (1, -1), (3, 100)]:
        got = g(0.7, -1.2, i, j)
        for k in range(2):
            e = _differences(S.slice_window, [0.7, -1.2, i, j], k)
            assert got[k] == pytest.approx(e[0], rel=1e-6, abs=1e-8)


# -- float32 arguments: vjp's cotangents in their dtype, as grad's gradient -------------

@pytest.mark.parametrize("seed", [1.0, np.float64(-2.0)], ids=["float", "float64"])
def test_vjp_keeps_float32(seed):
    x = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    s, c = np.float32(1.5), np.float32(-0.25)
    grads = s2s_ad.grad(S.mixed_dtypes, wrt=["x", "s", "c"])(x, s, c=c)
    value, pull = s2s_ad.vjp(S.mixed_dtypes, x, s, c=c)
    cotangents = pull(seed)
    assert len(cotangents) == 3
    wide = [x.astype(np.float64), float(s), float(c)]
    for k, (g, v, arg) in enumerate(zip(grads, cotangents, (x, s, c))):
        assert v.dtype == np.float32, (k, v.dtype)
        assert type(v) is type(arg), (k, type(v))  # an array, or a NumPy scalar
        np.testing.assert_allclose(np.ravel(v), float(seed) * np.ravel(g), rtol=1e-6)
    # (grad casts the parameters it reads as arrays; `c`, a number with a float
    # default, it computes in float64)
    assert grads[0].dtype == grads[1].dtype == np.float32

    def at(*vals):
        return S.mixed_dtypes(vals[0], vals[1], c=vals[2])
    for k in range(3):
        np.testing.assert_allclose(_flat(cotangents[k]) / float(seed),
                                   _differences(at, wide, k), rtol=2e-5, atol=1e-6)
    # float64 arguments keep float64 cotangents
    _, pull64 = s2s_ad.vjp(S.mixed_dtypes, wide[0], 1.5, c=-0.25)
    assert pull64(seed)[0].dtype == np.float64


# -- a helper returning its own list parameter: the caller's list itself ---------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.own_list_changed_after, [0.8], [0]),
    (S.own_list_read, [0.8, -0.4], [0, 1]),
    (S.own_list_param, [[0.8, -0.4, 1.3], 0.6], [0, 1]),
    (S.own_list_loop, [0.8, 3], [0]),
    (S.own_list_arrays, [X], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_helper_returning_its_list(f, args, wrt):
    check(f, args, wrt)


def test_helper_returning_its_list_from_a_branch_is_refused():
    with pytest.raises(SourceError, match=r"everyday_gaps_src\.py:\d+:\d+: .*returning a list"):
        s2s_ad.grad(S.own_list_in_branch)(0.8)


# -- second derivatives: a helper with a loop, called in a loop -------------------------

SECOND = [(S.helper_in_loop, (0.3, 0.7, 4)), (S.helper_in_while, (0.3, 0.7)),
          (S.helper_in_nested_loops, (0.3, 0.7, 3))]


def _gradient_differences(g, args, h=1e-5):
    """Central differences of the gradient ``g`` (of x and y) in x and y."""
    columns = []
    for k in range(2):
        up, down = list(args), list(args)
        up[k] += h
        down[k] -= h
        columns.append((np.array(g(*up), dtype=float) - np.array(g(*down), dtype=float))
                       / (2 * h))
    return np.array(columns).T


@pytest.mark.parametrize("f, args", SECOND, ids=lambda v: getattr(v, "__name__", ""))
def test_hessian_through_a_helper_in_a_loop(f, args):
    g = s2s_ad.grad(f, wrt=[0, 1])
    np.testing.assert_allclose(np.ravel(g(*args)), [_differences(f, list(args), k)[0]
                                                    for k in range(2)], rtol=1e-6)
    hess = np.array(s2s_ad.hessian(f, wrt=[0, 1])(*args), dtype=float)
    np.testing.assert_allclose(hess, _gradient_differences(g, args), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f, args", SECOND, ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_file_differentiated_again(f, args, tmp_path):
    """`s2s-ad grad -o` of the function, read back: its gradient (grad of the
    file's function, output 0, and the Jacobian of both outputs) against
    central differences of the file's gradient."""
    from s2s_ad import cli
    from tests.modules import import_source
    out = tmp_path / f"gaps_{f.__name__}.py"
    assert cli.main(["grad", f"{S.__file__}:{f.__name__}", "-o", str(out)]) == 0
    module = import_source(str(tmp_path), out.read_text(), f"gaps_{f.__name__}")
    g = getattr(module, f"grad_{f.__name__}")
    expected = _gradient_differences(g, args)
    first_row = s2s_ad.grad(g, wrt=[0, 1], output=0)(*args)
    np.testing.assert_allclose(first_row, expected[0], rtol=1e-5, atol=1e-7)
    jac = np.array(s2s_ad.jacobian(g, wrt=[0, 1])(*args), dtype=float)
    np.testing.assert_allclose(jac, expected, rtol=1e-5, atol=1e-7)


def test_vjp_keeps_float32_on_every_path():
    """Again with the same kinds (the pair found by the call plan) and through
    a functools.partial (a vjp_fn of its function's)."""
    import functools
    x = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    s = np.float32(1.5)
    expected = None
    for _ in range(3):
        _, pull = s2s_ad.vjp(S.mixed_dtypes, x, s)
        got = pull(np.float64(2.0))
        assert [type(g) for g in got[:2]] == [np.ndarray, np.float32]
        assert got[0].dtype == np.float32
        expected = got if expected is None else expected
        np.testing.assert_array_equal(got[0], expected[0])
    _, pull = s2s_ad.vjp(functools.partial(S.mixed_dtypes, s=s), x)
    got = pull(np.float64(2.0))
    assert got[0].dtype == np.float32
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)


def test_the_forms_in_a_helper_called_in_a_loop():
    """flatten written into, a chained write, where= and clip(max=) inside a
    helper each iteration of the caller's loop calls."""
    check(S.helpers_of_the_forms, [M, 0.7], [0, 1])
