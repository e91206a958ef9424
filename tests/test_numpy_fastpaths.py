"""The generated module's NumPy helpers, on their fast paths (plain
``np.ndarray`` operands) and their dispatching ones (any other array type),
and the shapes the reverse sweep proves equal without ``unbroadcast``; every
gradient against central finite differences (``tests/array_oracle.py``)."""

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, make_function, rand
from s2s_ad.rules.numpy import HELPERS

RNG = np.random.default_rng(4321)


class Tagged(np.ndarray):
    """An ndarray subclass: the helpers take their dispatching path for it."""


def _helpers() -> dict:
    ns = {"np": np}
    for text in HELPERS.values():
        exec(text, ns)
    return ns


# -- np.dot of N-d arrays -------------------------------------------------------

DOT_SHAPES = [((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
              ((2, 3, 4), (3, 4, 2)), ((2, 1, 3), (2, 3, 2)), ((1, 2, 2, 3), (3, 2)),
              ((), (2, 3)), ((2, 3), ()), ((2, 3, 4), ()), ((), (3,)), ((), ())]


@pytest.mark.parametrize("op", ["np.dot(x, y)", "x.dot(y)"])
@pytest.mark.parametrize("shapes", DOT_SHAPES)
def test_dot_of_n_dimensional_arrays(op, shapes):
    if op == "x.dot(y)" and shapes[0] == ():
        return  # a float has no .dot
    f = make_function(f"def f(x, y):\n    return np.sum(np.sin({op}))")
    assert_gradients(f, [rand(RNG, shapes[0]), rand(RNG, shapes[1])], [0, 1])


def test_dot_of_n_dimensional_arrays_in_a_loop():
    f = make_function("def f(x, y, n: int):\n    s = 0.0\n    for i in range(n):\n"
                      "        s = s + np.sum(np.sin(np.dot(x, y) * i))\n    return s")
    args = [rand(RNG, (2, 3, 4)), rand(RNG, (2, 4, 3)), 3]
    got = s2s_ad.grad(f, wrt=[0, 1])(*args)
    for i, g in zip((0, 1), got):
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-5, atol=1e-7)


def test_dot_of_n_dimensional_float32_stays_float32():
    f = make_function("def f(x, y):\n    return np.sum(np.dot(x, y) ** 2)")
    x = rand(RNG, (2, 3, 4)).astype(np.float32)
    y = rand(RNG, (3, 4, 2)).astype(np.float32)
    gx, gy = s2s_ad.grad(f, wrt=[0, 1])(x, y)
    assert gx.dtype == np.float32 and gy.dtype == np.float32
    np.testing.assert_allclose(gx, fd_gradient(f, [x, y], 0), rtol=1e-3, atol=1e-3)


# -- the dispatching paths: the same gradients for an ndarray subclass ---------

SUBCLASS_CASES = [
    ("np.sum(np.tanh(x @ W + b) ** 2)", {"x": (3, 4), "W": (4, 2), "b": (2,)}),
    ("np.mean((x @ W - b) ** 2)", {"x": (3, 4), "W": (4, 2), "b": (3, 1)}),
    ("np.sum(np.max(x, axis=1) * b)", {"x": (3, 4), "W": (4, 2), "b": (3,)}),
    ("np.sum(np.dot(x, W) * b) + np.sum(np.dot(b, b))", {"x": (3, 4), "W": (4, 2), "b": (2,)}),
    ("np.sum(np.mean(x, axis=0, keepdims=True) * np.sum(W))", {"x": (3, 4), "W": (4, 2), "b": (2,)}),
]


@pytest.mark.parametrize("expr, shapes", SUBCLASS_CASES)
def test_helpers_dispatch_for_other_array_types(expr, shapes):
    f = make_function(f"def f(x, W, b):\n    return {expr}")
    args = [rand(RNG, shapes[k]) for k in ("x", "W", "b")]
    args[0] = np.linspace(-1.0, 1.0, 12).reshape(3, 4) ** 3 + args[0] * 1e-3  # no ties in max
    grads = s2s_ad.grad(f, wrt=[0, 1, 2])(*[a.view(Tagged) for a in args])
    for i, g in enumerate(grads):
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(np.asarray(g), fd_gradient(f, args, i), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("expr, shapes", [("x @ y", ((3, 4), (4,))), ("x @ y", ((4,), (4, 3))),
                                          ("x @ y", ((4,), (4,))), ("np.dot(x, y)", ((3, 4), (4,)))])
@pytest.mark.parametrize("wrap", [np.asarray, lambda a: a.view(Tagged)])
def test_vector_products(expr, shapes, wrap):
    f = make_function(f"def f(x, y):\n    return np.sum(np.sin({expr}))")
    args = [rand(RNG, shapes[0]), rand(RNG, shapes[1])]
    grads = s2s_ad.grad(f, wrt=[0, 1])(*[wrap(a) for a in args])
    for i, g in enumerate(grads):
        assert np.shape(g) == shapes[i]
        np.testing.assert_allclose(np.asarray(g), fd_gradient(f, args, i), rtol=1e-5, atol=1e-7)


# -- the helpers themselves ---------------------------------------------------

UNBROADCAST = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3), (1, 3)), ((2, 3), (2, 1)), ((2, 3), ()),
               ((4, 2, 3), (2, 1)), ((4, 2, 3), (1, 1, 3)), ((4, 1, 3), (1, 3)), ((2, 3), (1, 1))]


@pytest.mark.parametrize("g_shape, shape", UNBROADCAST)
def test_unbroadcast_sums_each_broadcast_copy(g_shape, shape):
    unbroadcast = _helpers()["unbroadcast"]
    g = RNG.normal(size=g_shape)
    x = np.zeros(shape)
    expected = np.zeros(shape)  # reference: add each element of g to the one it copied
    lead = len(g_shape) - len(shape)
    for idx in np.ndindex(*g_shape):
        expected[tuple(0 if n == 1 else i for n, i in zip(shape, idx[lead:]))] += g[idx]
    fast = unbroadcast(g, x)
    slow = unbroadcast(g.view(Tagged), x.view(Tagged))
    assert np.shape(fast) == shape and np.shape(slow) == shape
    np.testing.assert_allclose(fast, expected, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(slow), fast, rtol=1e-12)  # BLAS may sum in another order


@pytest.mark.parametrize("g", [1.5, np.float64(1.5), np.float32(1.5), 2, np.array(1.5),
                               np.array([[1.0, 2.0], [3.0, 4.5]])])
@pytest.mark.parametrize("x", [2.0, np.float64(2.0), np.float32(2.0), 3, np.array(2.0)])
def test_unbroadcast_to_a_scalar(g, x):
    unbroadcast = _helpers()["unbroadcast"]
    got = unbroadcast(g, x)
    assert np.shape(got) == ()
    assert float(got) == float(np.sum(g))  # the elements of g, exactly (small integers)
    if np.shape(g) == ():
        assert got is g  # nothing to sum: g itself, as np.shape would decide


@pytest.mark.parametrize("x_dtype", [np.float32, np.float64, np.int64, bool])
@pytest.mark.parametrize("g", [1.0, 2, np.float32(0.5), np.float64(0.5), -0.0, np.inf, np.nan])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_spread_is_zeros_like_plus_g(x_dtype, g, shape):
    spread = _helpers()["spread"]
    x = np.ones(shape, dtype=x_dtype)
    expected = np.zeros_like(x) + g
    got = spread(g, x)
    assert type(got) is type(expected) and np.shape(got) == np.shape(expected)
    assert np.result_type(got) == np.result_type(expected)
    np.testing.assert_array_equal(got, expected)
    if shape:  # a fresh array the reverse sweep may write into
        assert got.flags.writeable and not np.shares_memory(got, x)


def test_spread_of_a_kept_axis_adjoint_and_of_a_python_float():
    spread = _helpers()["spread"]
    g = RNG.normal(size=(2, 1)).astype(np.float32)
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(spread(g, x), np.zeros_like(x) + g)
    assert spread(g, x).dtype == np.float32
    np.testing.assert_array_equal(spread(1.5, 3.0), np.zeros_like(3.0) + 1.5)


def test_max_with_ties_inf_and_nan_as_before():
    extreme = _helpers()["extreme_adjoint"]
    x = np.array([[1.0, 3.0, 3.0], [np.inf, 0.0, np.inf], [np.nan, 1.0, 2.0]])
    m = np.max(x, axis=1, keepdims=True)
    g = np.array([[1.0], [2.0], [3.0]])
    with np.errstate(all="ignore"):
        expected = g / np.sum(x == m, axis=1, keepdims=True, dtype=np.result_type(x)) * (x == m)
        got = extreme(g, x, m, 1)
    np.testing.assert_array_equal(got, expected)
    assert got[0].tolist() == [0.0, 0.5, 0.5] and got[1].tolist() == [1.0, 0.0, 1.0]
    assert np.isnan(got[2]).all()  # a nan maximum: no element equals it (docs/numpy.md)


ADD_OVER = [((5, 7), (0,)), ((5, 7), (1,)), ((1, 7), (0,)), ((5, 1), (1,)), ((0, 3), (0,)),
            ((3, 0), (1,)), ((0, 3), (1,)), ((7,), (0,)), ((4, 5, 6), (0,)), ((4, 5, 6), (2,)),
            ((4, 5, 6), (0, 2)), ((4, 5, 6), (1,)), ((5, 7), (0, 1)), ((300, 10), (1,)),
            ((4, 5, 6), (0, 1)), ((4, 5, 6), (1, 2)), ((4, 5, 6), (0, 1, 2)), ((2, 3, 4, 5), (0, 1)),
            ((2, 3, 4, 5), (3,)), ((2, 3, 4, 5), (1, 2)), ((0, 5, 6), (0,)), ((4, 0, 6), (2,)),
            ((1, 1, 1), (0,))]


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, bool])
@pytest.mark.parametrize("shape, axes", ADD_OVER)
def test_add_over_is_add_reduce(shape, axes, dtype, layout):
    add_over = _helpers()["add_over"]
    base = RNG.normal(size=tuple(2 * n for n in shape)) * 10
    g = base[tuple(slice(None, None, 2) for _ in shape)] if layout == "strided" else base[
        tuple(slice(0, n) for n in shape)]
    g = np.asfortranarray(g) if layout == "F" else g
    g = g.astype(dtype) if dtype is not np.float64 else g
    expected = np.add.reduce(g, axis=axes)
    got = add_over(g, axes)
    assert np.shape(got) == np.shape(expected) and np.result_type(got) == np.result_type(expected)
    np.testing.assert_allclose(got, expected, rtol=1e-12 if dtype is not np.float32 else 1e-5)
    np.testing.assert_allclose(add_over(g.view(Tagged), axes), expected, rtol=1e-5)


@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 4), (4, 0), (2, 3, 5)])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_rolled_is_np_roll(shape, layout):
    """rolled (np.concatenate of the two pieces) against np.roll itself, every
    shift and axis, and a new array however it rolls."""
    rolled = _helpers()["rolled"]
    g = RNG.normal(size=shape)
    g = np.asfortranarray(g) if layout == "F" else g
    axes = ([None] if len(shape) == 1 else []) + list(range(-len(shape), len(shape)))
    for shift in range(-9, 10):
        for axis in axes:
            got, expected = rolled(g, shift, axis), np.roll(g, shift, axis=axis)
            assert got.shape == expected.shape and got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
            assert not np.shares_memory(got, g)
    np.testing.assert_array_equal(rolled(g.view(Tagged), 2, 0), np.roll(g, 2, axis=0))


def test_add_over_keeps_its_vectors_of_ones_read_only():
    ns = _helpers()
    g = RNG.normal(size=(6, 4))
    np.testing.assert_allclose(ns["add_over"](g, (0,)), g.sum(axis=0), rtol=1e-12)
    ones = ns["add_over"].__defaults__[0]
    assert ones and all(not v.flags.writeable and (v == 1.0).all() for v in ones.values())
    np.testing.assert_allclose(ns["add_over"](g, (0,)), g.sum(axis=0), rtol=1e-12)  # reused


@pytest.mark.parametrize("x, g", [
    ([[1.0, 3.0, 2.0], [4.0, 0.0, -1.0]], [[2.0], [-3.0]]),  # no ties: each slice's one extreme
    ([[1.0, 3.0, 3.0], [4.0, 0.0, -1.0]], [[2.0], [-3.0]]),  # a tie: split
    ([[np.nan, 1.0], [2.0, 2.0]], [[1.0], [4.0]]),  # a nan slice and a tie: as many matches as slices
    ([[np.inf, 0.0], [-np.inf, -np.inf]], [[1.0], [4.0]]),
    ([[-0.0, 0.0], [5.0, 1.0]], [[1.0], [4.0]]),  # -0.0 == 0.0: a tie
])
def test_extreme_adjoint_splits_ties_only_where_there_are_some(x, g):
    extreme = _helpers()["extreme_adjoint"]
    x, g = np.array(x), np.array(g)
    m = np.max(x, axis=1, keepdims=True)
    with np.errstate(all="ignore"):
        got = extreme(g, x, m, 1)
        expected = np.zeros_like(x)
        for r in range(len(x)):  # reference: g over the number of elements equal to the maximum
            at = x[r] == m[r, 0]  # none at a nan maximum: nan throughout (docs/numpy.md)
            expected[r] = np.where(at, g[r, 0] / np.count_nonzero(at), 0.0) if at.any() else np.nan
        dispatched = extreme(g.view(Tagged), x.view(Tagged), m.view(Tagged), 1)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(dispatched, expected)


@pytest.mark.parametrize("g, dtype", [(1.5, np.float32), (np.float64(1.5), np.float64),
                                      (np.ones((3, 1), np.float32), np.float32)])
def test_extreme_adjoint_dtype(g, dtype):
    extreme = _helpers()["extreme_adjoint"]
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    m = np.max(x, axis=1, keepdims=True)
    assert extreme(g, x, m, 1).dtype == dtype


# -- shapes proven equal: a reduction keeping its axes broadcasts into its operand

@pytest.mark.parametrize("body", [
    "m = np.max(z, axis=1, keepdims=True)\n    s = np.sum(np.exp(z - m), axis=1, keepdims=True)\n"
    "    return np.sum(w * (z - m - np.log(s)))",
    "return np.sum(w * (z - np.mean(z)) ** 2)",
    "return np.sum(w * (z - np.mean(z, axis=0, keepdims=True) - np.max(z, axis=1, keepdims=True)))",
    "return np.sum(w * (z / np.sum(z, axis=None, keepdims=True)))",
    "return np.sum(w * (np.mean(z, axis=-1, keepdims=True) - z) ** 2)",
    "return np.sum(w * (z - np.mean(w, axis=1, keepdims=True)))",
    "return np.sum(np.sin(np.sum(z, axis=1, keepdims=True) - np.max(w, axis=1, keepdims=True)))",
])
@pytest.mark.parametrize("shape", [(3, 4), (3, 1), (1, 4)])
def test_reductions_keeping_axes_broadcast_back(body, shape):
    f = make_function(f"def f(z, w):\n    {body}")
    z = RNG.permutation(np.linspace(0.5, 1.5, int(np.prod(shape)))).reshape(shape)
    assert_gradients(f, [z, rand(RNG, shape)], [0, 1])


def test_operands_of_other_shapes_still_unbroadcast():
    f = make_function("def f(a, b):\n    return np.sum(np.sin(a - np.max(b, axis=1, keepdims=True)))")
    assert_gradients(f, [rand(RNG, (3, 4)), rand(RNG, (3, 2))], [0, 1])
    text = s2s_ad.gradient_source(f, wrt=[0, 1])
    assert "unbroadcast(" in text[text.index("def grad_f"):]


def test_softmax_needs_no_unbroadcast_for_equal_shapes():
    from softmax_xent import softmax_xent
    text = s2s_ad.gradient_source(softmax_xent, wrt=[0])
    body = text[text.index("def grad_softmax_xent"):]
    # only the sum over the class axis (to lse's shape) and T's product remain; m, a
    # shift that cancels, gets no adjoint (tests/test_shifts.py)
    assert body.count("unbroadcast(") == 2


def test_mean_adjoint_does_not_compute_the_mean():
    from mlp import mlp_loss
    text = s2s_ad.gradient_source(mlp_loss, wrt=[0, 1, 2, 3])
    assert "= np.mean(" not in text and "dout / np.size(t4)" in text


# -- a reduction's adjoint left unspread where its operand's one use broadcasts it

LAZY = [  # (body, how many reductions' adjoints are still spread)
    ("return np.mean((x - y) ** 2)", 0),
    ("return np.sum(np.sin(x) ** 2)", 0),
    ("return np.sum(x * x)", 0),
    ("return np.sum(np.tanh(x), axis=0)[1]", 0),
    ("return np.sum(np.mean(np.exp(x), axis=1, keepdims=True) * y)", 0),
    ("return np.sum(np.mean(np.cos(x) ** 2, axis=-1))", 1),  # the outer sum: a mean's result
    ("return np.sum(np.mean(np.cos(x) * 3.0, axis=-1))", 1),  # * 3.0: np.cos decides
    ("return np.mean(x * y * 2.0)", 0),  # a number as local derivative: x * y decides
    ("return np.mean(-(c * r))", 0),
    ("return np.sum((c * r) / 4.0 + 1.0)", 0),
    ("return np.mean(c * r)", 0),  # np.mean reads its operand's size only
    ("return np.sum((x + y) * 2.0)", 1),  # x + y decides: local derivatives 1
    ("return np.mean(0.5 * (c - r) ** 2 * 2.0)", 0),
    # a number beside the array: its contribution is summed whole, so it must read
    # the array (np.sum(y) * e: total(g * e)); minus a number keeps the spread (np.sum(y)'s
    # own adjoint is one more)
    ("return np.sum(np.exp(x) - np.sum(y))", 2),
    ("return np.sum(np.exp(x) * np.sum(y))", 1),
    ("return np.sum(np.exp(x) / np.sum(y))", 1),
    ("return np.sum(np.sum(y) + np.tanh(c * r))", 2),
    # a flag leaving the parameter c out: (x + y)'s adjoint dout * c is c's shape
    ("return np.sum((x + y) * c)", 0),
    ("return np.mean((x * y) * r) + np.sum(x * y)", 0),
    ("return np.sum(x * 2.0)", 1),  # the local derivative is a number: no shape
    ("return np.sum(x + y)", 1),  # local derivatives 1
    ("return np.sum(x * y)", 0),  # unbroadcast(g * y, x): g * y and x broadcast to x * y
    ("return np.sum(c * r)", 0),  # a column times a row: unbroadcast spreads g * r over c
    ("return np.sum(c * x) + np.sum(x / c) + np.sum(r / x)", 0),
    ("return np.sum((c * c + 0.5) ** r) + np.sum(np.exp(r) * c)", 0),
    ("return np.sum(np.sum(x, axis=1, keepdims=True) * r)", 1),  # x itself: spread
    ("return np.sum(c * r, axis=0)[1]", 0),  # summed over an axis, then read by index
    ("return np.sum(c - r)", 1),  # local derivatives 1 and -1
    ("return np.sum(x ** 2) + np.sum(x ** 2 * y)", 0),  # each x ** 2 read once
    ("s = x ** 2\n    return np.sum(s) + np.sum(s * y)", 1),  # s read twice
    ("s = 0.0\n    for i in range(3):\n        s = s + np.sum(c[i] * r) + np.sum(np.exp(x[i]))\n    return s", 0),  # in a loop
    ("return np.sum(np.where(x > 0, x, 0.0))", 1),
]


@pytest.mark.parametrize("body, spread", LAZY)
def test_reduction_adjoint_is_spread_only_where_needed(body, spread):
    f = make_function(f"def f(x, y, c, r):\n    {body}")
    text = s2s_ad.gradient_source(f, wrt=[0, 1, 2, 3])
    assert text[text.index("def grad_f"):].count("spread(") == spread, text
    args = [rand(RNG, (3, 4)), rand(RNG, (3, 4)), rand(RNG, (3, 1)), rand(RNG, (1, 4))]
    assert_gradients(f, args, [0, 1, 2, 3])


def test_mean_squared_error_computes_no_square():
    from mlp import mlp_loss
    text = s2s_ad.gradient_source(mlp_loss, wrt=[0, 1, 2, 3])
    body = text[text.index("def grad_mlp_loss"):]
    assert "spread(" not in body and "dout / np.size(t4)" in body and "t4 ** 2" not in body


@pytest.mark.parametrize("s", [1.5, np.float64(1.5), np.array(1.5)])
def test_sum_of_a_number_over_axis_0_has_the_number_s_shape(s):
    f = make_function("def f(s: float, x):\n    return np.sum(np.sum(s, axis=0) * x)")
    args = [s, rand(RNG, (3,))]
    gs, gx = s2s_ad.grad(f, wrt=[0, 1])(*args)
    assert np.shape(gs) == ()
    np.testing.assert_allclose(gs, np.sum(args[1]), rtol=1e-12)
    assert_gradients(f, args, [1])


BROADCAST_PAIRS = [((3, 4), (4,)), ((3, 1), (1, 4)), ((1, 4), (3, 1)), ((2, 3, 4), (3, 1)),
                   ((4,), (2, 3, 4)), ((), (3, 4)), ((3, 4), ()), ((3, 4), (3, 4))]
PRODUCTS = ["a * b", "np.exp(a) * np.sin(b)", "a / (b * b + 1.0)", "(a * a + 1.0) ** b",
            "np.sum(a * b) * a * b"]


@pytest.mark.parametrize("shapes", BROADCAST_PAIRS)
@pytest.mark.parametrize("expr", PRODUCTS)
@pytest.mark.parametrize("form", ["np.sum({e})", "np.sum(np.sum({e}, axis=0) ** 2)",
                                  "np.mean({e})", "loop"])
def test_unspread_sum_of_broadcast_product(shapes, expr, form):
    """np.sum of a product whose operands broadcast (each operand's
    contribution g * b summed back by unbroadcast, no spread array), by
    itself, summed over an axis, as a mean and in a loop: against central
    differences, in float64 and float32."""
    if form == "loop":
        src = (f"def f(a, b):\n    s = 0.0\n    for k in range(3):\n"
               f"        s = s + np.sum({expr}) * (k + 1.0)\n    return s")
    else:
        if "axis=0" in form and len(np.broadcast_shapes(*shapes)) == 0:
            pytest.skip("a 0-d product has no axis 0")
        src = f"def f(a, b):\n    return {form.format(e=expr)}"
    f = make_function(src)
    args = [rand(RNG, s, 0.5, 1.5) for s in shapes]
    assert_gradients(f, args, [0, 1])
    if all(s != () for s in shapes):
        low = [a.astype(np.float32) for a in args]
        got = s2s_ad.grad(f, wrt=[0, 1])(*low)
        for g, a, i in zip(got, low, (0, 1)):
            assert g.dtype == np.float32 and g.shape == a.shape
            np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=2e-3, atol=1e-4)
