"""NumPy code with loops and branches, against central differences."""

import numpy as np
import pytest

import numpy_loops_src as src
import s2s_ad
from array_oracle import assert_gradients, fd_gradient, rand
from s2s_ad import SourceError

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("fn, args, wrt", [
    (src.power_iteration, lambda: [rand(RNG, (3, 3)), rand(RNG, (3,)), 4], [0, 1]),
    (src.residual_layers, lambda: [rand(RNG, (3, 3)), rand(RNG, (3,)), 3], [0, 1]),
    (src.branchy, lambda: [rand(RNG, (2, 3)), 0.7], [0, 1]),
    (src.branchy, lambda: [rand(RNG, (2, 3)), -0.7], [0]),
    (src.indexed_sum, lambda: [rand(RNG, (5,)), rand(RNG, (5,)), 4], [0, 1]),
    (src.row_norms, lambda: [rand(RNG, (3, 4)), rand(RNG, (4,))], [0, 1]),
    (src.oscillator, lambda: [rand(RNG, (3,)), rand(RNG, (3,)), 5], [0, 1]),
    (src.accumulate, lambda: [rand(RNG, (3,)), 3], [0]),
    (src.until_small, lambda: [rand(RNG, (3,), 0.5, 1.0)], [0]),
    (src.rows_by_shape, lambda: [rand(RNG, (4, 3)), rand(RNG, (3,))], [0, 1]),
    (src.over_rows, lambda: [rand(RNG, (4, 3)), rand(RNG, (3,))], [0, 1]),
    (src.enumerate_zip_rows, lambda: [rand(RNG, (4, 3)), rand(RNG, (3, 3)), 0.7], [0, 1, 2]),
    (src.zip_rows_and_list, lambda: [rand(RNG, (4, 3)), [0.5, -1.0, 2.0, 0.3]], [0]),
    (src.bound_element, lambda: [rand(RNG, (5,)), 5], [0]),
    (src.bound_piece, lambda: [rand(RNG, (4, 3)), 4], [0]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_loops_and_branches(fn, args, wrt):
    assert_gradients(fn, args(), wrt)


def test_loop_gradient_keeps_float32():
    x = rand(RNG, (3,)).astype(np.float32)
    v = rand(RNG, (3,)).astype(np.float32)
    gx, gv = s2s_ad.grad(src.oscillator, wrt=[0, 1])(x, v, 3)
    assert gx.dtype == np.float32 and gv.dtype == np.float32


@pytest.mark.parametrize("fn, args, wrt", [
    (src.assigns_in_loop, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.assigns_over_a_copy, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.recurrence, lambda: [rand(RNG, (5,)), 0.8, 5], [0, 1]),
    (src.rnn_states, lambda: [rand(RNG, (3, 3)), rand(RNG, (3,)), rand(RNG, (4,)), 4], [0, 1, 2]),
    (src.branch_assign, lambda: [rand(RNG, (4,)), 0.6], [0, 1]),
    (src.branch_assign, lambda: [rand(RNG, (4,)), -0.6], [0, 1]),
], ids=lambda v: getattr(v, "__name__", ""))
def test_assignment_in_loops_and_branches(fn, args, wrt):
    assert_gradients(fn, args(), wrt)


@pytest.mark.parametrize("fn, message", [
    (src.bound_piece_rewritten, "may write into `y` between that binding and this read"),
    (src.aliased, "nothing else may refer to it"),
    (src.param_assigned, "bound once"),
    (src.piece_to_helper, "function of yours"),
])
def test_assignment_in_loops_refused_where_python_would_alias(fn, message):
    with pytest.raises(SourceError, match=message):
        s2s_ad.grad(fn)


def test_gradient_has_the_shape_of_its_argument_when_the_loop_does_not_run():
    x, w = rand(RNG, (5,)), rand(RNG, (5,))
    gx, gw = s2s_ad.grad(src.indexed_sum, wrt=[0, 1])(x, w, 0)
    assert gx.shape == x.shape and gw.shape == w.shape and not gx.any()


@pytest.mark.parametrize("body, message", [
    ("for row in x:\n        x[0] = row\n    return np.sum(x)", "changed inside the loop"),
    ("y = np.copy(x)\n    s = 0.0\n    for row in y:\n        s = s + np.sum(row)\n"
     "    for i in range(2):\n        y[i] = y[i] * 2.0\n    return s + np.sum(y)", "nothing else may refer"),
])
def test_iterating_over_an_array_that_changes_is_refused(body, message):
    from array_oracle import make_function
    f = make_function(f"def f(x):\n    {body}\n")
    with pytest.raises(SourceError, match=message):
        s2s_ad.grad(f)


@pytest.mark.parametrize("n", [1, 2, 3, 12])
def test_array_returned_from_a_loop_on_the_copying_path(n):
    x = rand(RNG, (3,))
    g = s2s_ad.grad(src.early_return_then_fill, wrt=0)(x, n)
    want = fd_gradient(lambda x: np.sum(src.early_return_then_fill(x, n)), [x], 0)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
