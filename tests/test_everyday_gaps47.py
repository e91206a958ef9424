"""Forms everyday code writes that s2s-ad once refused or checked loosely
(tests/everyday_gaps47_src.py): each gradient against central finite
differences in float64 through `s2s_ad.grad`, `s2s_ad.vjp` and `s2s_ad.jvp`;
what would be wrong is refused, located, by name."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests import everyday_gaps47_src as S
from tests.test_everyday_gaps import _differences, _flat, check

XS = [0.7, -1.3, 0.4, 1.1]


# -- 1. a run-time list slice under checkpoint=True ----------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (S.slice_head, (XS, 3), [0]),
    (S.slice_head, (XS, -1), [0]),
    (S.slice_last, (XS,), [0]),
    (S.slice_built, (0.8, 2), [0]),
    (S.slice_helper, (XS, 2), [0]),
    (S.comprehension_then_loop, (XS,), [0]),
])
def test_run_time_slice_checkpointed(f, args, wrt):
    """`checkpoint=True` checkpoints the loops the code writes and tapes the
    loop a slice or a comprehension stands for (it appends to its own list,
    which a snapshot would not restore): no refusal naming a loop the code
    never wrote."""
    check(f, list(args), wrt)
    expected = [_differences(f, list(args), i) for i in wrt]
    got = s2s_ad.grad(f, wrt=wrt, checkpoint=True)(*args)
    got = got if isinstance(got, tuple) else (got,)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(_flat(g), e, rtol=1e-6, atol=1e-8)


def test_written_loop_still_checkpointed():
    """The loop the code writes after a comprehension is the one kept by
    snapshots."""
    text = " ".join(s2s_ad.gradient_source(S.comprehension_then_loop,
                                           checkpoint=True).split("\n\n")[1].split())
    assert "Loop `for y in ys` (line 47) records 3 values per iteration" in text
    assert text.count("It is checkpointed") == 1
    assert text.index("It is checkpointed") > text.index("Loop `for y in ys`")


# -- 2. b[i][j] = v on a local 2-D array at int parameters ---------------------

X4 = [0.3, -0.8, 1.2, 0.5]


@pytest.mark.parametrize("f, args", [
    (S.chained_write, (np.array(X4), 2, 1)),
    (S.chained_write, (np.array(X4), 1, 2)),
    (S.chained_write, (np.array(X4), -1, 0)),
    (S.chained_write_loop, (np.array(X4), 1)),
    (S.chained_write_helper, (np.array(X4), 0, 2)),
    (S.chained_write_helper, (np.array(X4), 1, 1)),
])
def test_chained_write_at_parameters(f, args):
    """`b[i][j] = v` is `b[i, j] = v` for an array `b` made here: `b[i]` is a
    view, so the write changes `b`'s element; `i`, `j` unannotated
    parameters checked to be ints where the code runs."""
    check(f, list(args), [0])


@pytest.mark.parametrize("i, exc", [(2.0, IndexError), (np.array([1, 1]), TypeError),
                                    (True, TypeError)])
def test_chained_write_index_not_int(i, exc):
    """An integer array as `i` could write a position twice (NumPy keeps the
    last write; `b[i][j]` would even write a copy): TypeError by name where
    the code runs, never a gradient; a float is no index: IndexError, as
    NumPy raises."""
    with pytest.raises(exc, match="`i` indexes `b` in an assignment"):
        s2s_ad.grad(S.chained_write)(np.array(X4), i, 1)


def test_chained_write_no_gradient_for_index():
    with pytest.raises(s2s_ad.SourceError, match="used as an integer"):
        s2s_ad.grad(S.chained_write, wrt=1)(np.array(X4), 2, 1)


def test_list_of_lists_keeps_shared_rows():
    """A list of lists keeps Python's row sharing: `b = [row, row]` written
    at `b[1][0]` changes `b[0][0]` too."""
    check(S.rows_shared, [0.9, 2], [0])
    assert s2s_ad.grad(S.rows_shared)(0.9, 2) == pytest.approx(2 * 0.9 * (3.0 + 1.0 + 7.0))


def test_list_of_lists_at_parameters_refused():
    """A list of lists written at int parameters is refused at the index."""
    with pytest.raises(s2s_ad.SourceError, match="indices must be integer constants") as e:
        s2s_ad.grad(S.rows_at_param)(0.9, 1, 1)
    assert "b[i][j] = x * x" in str(e.value)


# -- 3. tangents, cotangents and directions of another shape refused -------------

W23 = np.array([[0.3, -0.8, 1.2], [0.5, 0.1, -0.4]])


@pytest.mark.parametrize("dW", [np.ones(3), 1.0, np.ones((2, 1)), np.ones((3, 2)),
                                np.ones((1, 2, 3))])
def test_jvp_tangent_of_another_shape_refused(dW):
    """A `(3,)` tangent for a `(2, 3)` parameter gave `np.sum(dW)` = 3 where
    the broadcast direction has 6: refused by the tangent's name, as JAX
    does."""
    with pytest.raises(ValueError, match=r"the tangent dW= has shape .* where the argument W "
                                         r"has shape \(2, 3\)"):
        s2s_ad.jvp(S.sums_rows)(W23, 0.7, dW=dW, dx=1.0)


def test_jvp_tangent_of_a_number_in_numpy_code_refused():
    with pytest.raises(ValueError, match=r"the tangent dx= has shape \(3,\) where the argument "
                                         r"x has shape \(\)"):
        s2s_ad.jvp(S.sums_rows)(W23, 0.7, dW=np.ones((2, 3)), dx=np.ones(3))


def test_jvp_tangent_of_its_shape_against_differences():
    dW = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, 1.0]])
    h = 1e-6
    want = (S.sums_rows(W23 + h * dW, 0.7 + 0.3 * h) - S.sums_rows(W23 - h * dW, 0.7 - 0.3 * h)) \
        / (2 * h)
    value, tangent = s2s_ad.jvp(S.sums_rows)(W23, 0.7, dW=dW, dx=0.3)
    assert tangent == pytest.approx(want, rel=1e-7)


def test_numbers_code_takes_an_array_of_directions():
    """Code of Python numbers computes element by element: an array of
    directions gives one JVP per direction, as it did."""
    _, t = s2s_ad.jvp(S.numbers_only)(0.4, -1.1, dx=np.array([1.0, 0.0]),
                                      dy=np.array([0.0, 1.0]))
    np.testing.assert_allclose(t, [-1.1, 0.4 - 2.2], rtol=1e-12)


@pytest.mark.parametrize("f, ct", [
    (S.gram, np.ones(3)),          # gave a (2,) cotangent for a (2, 3) W
    (S.column_sums, np.ones((2, 3))),  # a value of shape (3,)
    (S.column_sums, np.ones((1, 3))),
])
def test_vjp_cotangent_of_another_shape_refused(f, ct):
    _, pull = s2s_ad.vjp(f, W23)
    with pytest.raises(ValueError, match="the cotangent has shape .* where the value has shape"):
        pull(ct)
    _, pull = s2s_ad.vjp(f, W23)  # (the call plan's quick path, the second time)
    with pytest.raises(ValueError, match="the cotangent has shape"):
        pull(ct)


def test_vjp_cotangent_of_a_tuple_item_refused():
    _, pull = s2s_ad.vjp(S.pair_out, W23, 0.7)
    with pytest.raises(ValueError, match=r"item 1 of the value has shape \(3,\) where that item "
                                         r"has shape \(2, 3\)"):
        pull((1.0, np.ones(3)))
    got = pull((1.0, np.zeros((2, 3))))
    np.testing.assert_allclose(got[0], np.full((2, 3), 0.7))


def test_vjp_cotangent_of_its_shape_against_differences():
    ct = np.array([[1.0, -0.5, 2.0], [0.3, 0.0, -1.0], [0.25, 1.5, 0.5]])
    _, pull = s2s_ad.vjp(S.gram, W23)
    got, = pull(ct)
    h = 1e-6
    want = np.zeros_like(W23)
    for k in range(W23.size):
        e = np.zeros(W23.size)
        e[k] = h
        e = e.reshape(W23.shape)
        want.flat[k] = np.sum(ct * (S.gram(W23 + e) - S.gram(W23 - e))) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    assert s2s_ad.source_of(pull).startswith('"""')


@pytest.mark.parametrize("v", [np.ones(3), 1.0])
def test_hvp_direction_of_another_shape_refused(v):
    with pytest.raises(ValueError, match=r"the direction for 'W' is of shape"):
        s2s_ad.hvp(S.sums_rows)(W23, 0.7, v)


# -- 4. each cotangent in its own argument's dtype -----------------------------

A32 = np.array([0.1, 0.7, -0.3], dtype=np.float32)
B64 = np.array([0.2, -1.3, 2.9])


def _mixed_reference():
    """The cotangents of mixed_product (its derivative written out), the sums
    of float32 values as the function computes them (in float32)."""
    a = A32.astype(np.float64)
    sines = np.float64(np.sum(np.sin(A32)))
    return B64 + np.cos(a) * np.sum(B64 * B64), a + 2.0 * B64 * sines


@pytest.mark.parametrize("repeat", [0, 1])  # the second: the call plan's quick path
def test_vjp_cotangent_in_its_arguments_dtype(repeat):
    """`dout * a` of a Python float and a float32 `a` is float32: the float64
    argument's cotangent came out float32 (6e-8 off); now in float64, as
    `grad` gives it."""
    want_a, want_b = _mixed_reference()
    _, pull = s2s_ad.vjp(S.mixed_product, A32, B64)
    da, db = pull(1.0)
    assert da.dtype == np.float32 and db.dtype == np.float64
    np.testing.assert_allclose(db, want_b, rtol=1e-13)
    np.testing.assert_allclose(da, want_a, rtol=1e-6)
    g = s2s_ad.grad(S.mixed_product, wrt=(0, 1))(A32, B64)
    assert g[0].dtype == np.float32 and g[1].dtype == np.float64
    np.testing.assert_allclose(db, g[1], rtol=1e-15)
    h = 1e-6
    fd = [(S.mixed_product(A32, B64 + h * e) - S.mixed_product(A32, B64 - h * e)) / (2 * h)
          for e in np.eye(3)]
    np.testing.assert_allclose(db, fd, rtol=1e-6)
    _, pull = s2s_ad.vjp(S.mixed_product, B64, A32)  # the float64 argument first
    db, da = pull(2.0)
    assert db.dtype == np.float64 and da.dtype == np.float32


@pytest.mark.parametrize("repeat", [0, 1])
def test_vjp_float64_cotangent_computed_in_float64(repeat):
    """np.sum(a * b), a float32, b float64: `0.1 * a` of a Python float and a
    float32 array is float32 (db = 0.0700000003 where 0.1 * a in float64 is
    0.0700000002980232...); the value is float64, so is its cotangent's seed."""
    _, pull = s2s_ad.vjp(S.mixed_dot, A32, B64)
    da, db = pull(0.1)
    assert db.dtype == np.float64 and da.dtype == np.float32
    np.testing.assert_allclose(db, 0.1 * A32.astype(np.float64), rtol=1e-15)
    np.testing.assert_allclose(da, (0.1 * B64).astype(np.float32), rtol=1e-7)


# -- 5. del ys[k], del d[k], ys.pop(0) -----------------------------------------

@pytest.mark.parametrize("f, args", [
    (S.del_first, (0.7,)),
    (S.del_last, (0.7, -1.2)),
    (S.del_slice, (0.7, -1.2)),
    (S.del_key, (0.7, -1.2)),
    (S.del_helper, (0.7,)),
    (S.del_in_loop, (0.7,)),
    (S.pop_made, ([0.5, 1.5, 2.0],)),
])
def test_del_on_a_list_built_here(f, args):
    """The list shrinks, as Python's does; a removed item's adjoint is what
    its other readers give it (here none: zero)."""
    check(f, list(args), list(range(len(args))))


@pytest.mark.parametrize("f, args, says", [
    (S.del_run_time_index, (0.7, 1), "`ys = [y for k, y in enumerate(ys) if k != i]`"),
    (S.del_grown, ([0.5, 1.5, 2.0],), "`ys = ys[1:]`"),
    (S.pop_grown, ([0.5, 1.5, 2.0],), "`v = ys[0]`, then `ys = ys[1:]`"),
    (S.del_name, (0.7,), "a name needs no `del`"),
    (S.del_before_loop, (0.7,), "inside a loop or a branch"),
])
def test_del_refused_with_the_rewrite(f, args, says):
    with pytest.raises(s2s_ad.SourceError) as e:
        s2s_ad.grad(f, wrt=0)(*args)
    assert says in str(e.value) and "everyday_gaps47_src.py:" in str(e.value), str(e.value)


def test_del_rewrites_work():
    """The rewrites the refusals name are differentiated (against central
    differences)."""
    check(S.del_rewritten_index, [0.7, 1], [0])
    check(S.del_rewritten_grown, [[0.5, 1.5, 2.0]], [0])


# -- 6. np.concatenate([z, [a]]) ------------------------------------------------

Z3 = np.array([0.3, -0.5, 1.1])


@pytest.mark.parametrize("f", [S.join_one, S.join_around, S.join_hstack, S.join_stack,
                               S.join_loop])
def test_inner_list_joined_as_an_array(f):
    """`[a]` inside np.concatenate/hstack/stack is the 1-element array NumPy
    makes of it (was refused blaming the outer list)."""
    check(f, [Z3, 0.7], [0, 1])


def test_ragged_inner_list_raises_as_numpy_does():
    """`[a, [a]]` is ragged: NumPy raises ValueError, and so does the gradient."""
    with pytest.raises(ValueError):
        S.join_bad_entry(Z3, 0.7)
    with pytest.raises(ValueError):
        s2s_ad.grad(S.join_bad_entry)(Z3, 0.7)


# -- 7. np.sum(x, where=m) with a mask broadcasting past x's shape --------------

X23 = np.array([[0.3, -0.8, 1.2], [0.5, 0.1, -0.4]])
M23 = np.array([[True, False, True], [False, True, True]])


@pytest.mark.parametrize("f", [S.masked_sum, S.masked_mean, S.masked_in_loop])
@pytest.mark.parametrize("m", [M23, M23[0], np.array([[True], [False]]), True])
def test_mask_broadcast_to_x(f, m):
    check(f, [X23, m], [0])


@pytest.mark.parametrize("f", [S.masked_sum, S.masked_mean, S.masked_in_loop])
@pytest.mark.parametrize("x, m", [(X23[0], M23), (X23[:1], M23),
                                  (X23, np.ones((2, 2, 3), dtype=bool))])
def test_mask_larger_than_x_raises_as_numpy(f, x, m):
    """A mask that broadcasts to a larger shape than x: NumPy raises; the
    gradient summed np.where(m, x, 0) over the larger shape (x's elements
    counted twice: dx = [4, 4, 6] for np.sum(x * x, where=m), x = [1, 2, 3]
    and a (2, 3) mask); now it raises NumPy's ValueError."""
    with pytest.raises(ValueError):
        f(x, m)
    with pytest.raises(ValueError):
        s2s_ad.grad(f)(x, m)
    with pytest.raises(ValueError):
        s2s_ad.vjp(f, x, m)
    with pytest.raises(ValueError):
        s2s_ad.jvp(f, wrt=0)(x, m, dx=np.ones_like(x))


# -- 8. how an int parameter is used, kept beside its refusal --------------------

def test_integer_use_kept_beside_the_refusal():
    """`check` says how an int parameter is used from the refusal's own field
    (IntegerUse.use), for a use in the function and one through a helper."""
    from s2s_ad.errors import IntegerUse
    func = s2s_ad.lower(S.chained_write)
    assert isinstance(func.integers["i"], IntegerUse)
    assert func.integers["i"].use == "an index in an assignment"
    verdict = s2s_ad.check(S.passes_count)
    assert verdict.status == "proved", str(verdict)
    assert "n=3 is a value s2s-ad chose for the int parameter n (passed to `_powers`, whose " \
           "`m` is used as an integer on line" in str(verdict), str(verdict)
