"""Augmented assignment to a name holding an array (s2s_ad/frontend/aliasing.py):
NumPy writes into the array, so another name bound to it, or a view of it,
sees the change. Each accepted function's gradient agrees with central
differences of the function itself (which NumPy runs in place); each doubtful
one is refused with file:line:col, the line and a caret, and the rewrite."""

import inspect
import re

import numpy as np
import pytest

import numpy_augassign_src as src
import s2s_ad
from array_oracle import assert_gradients, fd_gradient, rand

RNG = np.random.default_rng(41)

ACCEPTED = [
    (src.name_alias, lambda: [np.array([1.0, 2.0, 3.0])], [0]),
    (src.name_alias, lambda: [rand(RNG, (2, 3))], [0]),
    (src.alias_written, lambda: [rand(RNG, (4,))], [0]),
    (src.asarray_alias, lambda: [rand(RNG, (3,))], [0]),
    (src.every_operator, lambda: [rand(RNG, (4,), 0.5, 2.0), rand(RNG, (4,), 0.5, 2.0)], [0, 1]),
    (src.read_before_write, lambda: [rand(RNG, (3,))], [0]),
    (src.accumulate, lambda: [rand(RNG, (3,)), rand(RNG, (4,)), 4], [0, 1]),
    (src.accumulate_rows, lambda: [rand(RNG, (4, 3)), rand(RNG, (3,))], [0, 1]),
    (src.branch, lambda: [rand(RNG, (3,)), 1.0], [0]),
    (src.branch, lambda: [rand(RNG, (3,)), -1.0], [0]),
    (src.loop_operators, lambda: [rand(RNG, (3,)), 3], [0]),
    (src.scalar_alias, lambda: [0.7, rand(RNG, (3,))], [0, 1]),
    (src.numpy_scalar_alias, lambda: [rand(RNG, (3,))], [0]),
    (src.calls_fresh_helper, lambda: [rand(RNG, (3,))], [0]),
    (src.calls_scalar_accumulator, lambda: [rand(RNG, (3,)), rand(RNG, (3,))], [0, 1]),
    (src.calls_scalar_alias_helper_with_numbers, lambda: [rand(RNG, (3,))], [0]),
    (src.no_numpy, lambda: [0.8], [0]),
    (src.rebound_param_in_loop, lambda: [rand(RNG, (3,)), 3], [0]),
    (src.copied_alias_after_loop, lambda: [rand(RNG, (3,)), 3], [0]),
    (src.copied_row_accumulator, lambda: [rand(RNG, (4, 3))], [0]),
    (src.rows_iterated, lambda: [rand(RNG, (4, 3))], [0]),
    (src.float_alias_in_loop, lambda: [rand(RNG, (3,)), 3], [0]),
]


@pytest.mark.parametrize("fn, args, wrt", ACCEPTED, ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_agrees_with_finite_differences(fn, args, wrt):
    assert_gradients(fn, args(), wrt)


def test_the_alias_sees_the_write():
    # z is y: NumPy's `y += x` makes z = 2x, so ∂ sum(z²)/∂x = 8x, not 2x
    x = np.array([1.0, 2.0, 3.0])
    got = s2s_ad.grad(src.name_alias)(x)
    np.testing.assert_allclose(got, fd_gradient(src.name_alias, [x], 0), rtol=1e-6)
    assert not np.allclose(got, 2 * x)


@pytest.mark.parametrize("fn, args, wrt", ACCEPTED, ids=lambda v: getattr(v, "__name__", ""))
def test_value_is_the_function_s_and_arguments_are_kept(fn, args, wrt):
    a = args()
    before = [v.copy() if isinstance(v, np.ndarray) else v for v in a]
    value, _ = s2s_ad.value_and_grad(fn, wrt=wrt)(*a)
    for v, b in zip(a, before):
        np.testing.assert_array_equal(v, b)
    # (numbers stay numbers: a 0-d array would be changed in place)
    copies = [v.copy() if isinstance(v, np.ndarray) else v for v in a]
    np.testing.assert_allclose(value, fn(*copies), rtol=1e-12)


REFUSED = [
    # (function, the line it points at, the text the caret is under, what the message says);
    # (caller, helper) where the helper's line is meant
    (src.param_alias, "x += 1.0", "x", "the array the caller passed in"),
    (src.param_plain, "x += 1.0", "x", "the array the caller passed in"),
    (src.view_then_base, "return np.sum(b * b)", "b", "it is a view of `a`"),
    (src.write_through_view, "b *= 2.0", "b", "`b` is a view of `a`"),
    (src.transpose_then_base, "return np.sum(b * b)", "b", "it is a view of `a`"),
    (src.reshape_then_base, "return np.sum(b * b)", "b", "it is a view of `a`"),
    (src.ellipsis_then_base, "return np.sum(b * b)", "b", "it is a view of `a`"),
    (src.ravel_then_base, "return np.sum(b * b)", "b", "it is a view of `a`"),
    (src.write_through_transpose, "b += 1.0", "b", "`b` is a view of `a`"),
    (src.view_of_param, "y += 1.0", "y", "a view of an array the caller passed in"),
    (src.alias_before_loop, "acc += x * i", "acc", "`z = acc`"),
    (src.alias_in_loop, "acc += x", "acc", "`z = acc`"),
    (src.alias_in_branch, "y += x", "y", "`z = y`"),
    (src.view_in_loop, "a *= 2.0", "a", "`b = a[1:]`"),
    (src.row_accumulator, "acc += X[i]", "acc", "`acc = X[0]`"),
    ((src.calls_bump, src.bump), "u += 1.0", "u", "`bump(x)` at"),
    # (a helper without NumPy, lowered as NumPy code because it is passed an array)
    ((src.calls_bump_numbers, src.bump_numbers), "u += 1.0", "u",
     "the array the caller passed in"),
    (src.helper_result, "h += 1.0", "h", "created elsewhere"),
    (src.passed_to_helper, "y += x", "y", "passed to `identity`"),
    (src.held_in_list, "y += x", "y", "the list or tuple `ys` holds it"),
    (src.param_read_before_rebinding_in_loop, "x += 1.0", "x", "`y = x`"),
    (src.rows_written, "row *= 2.0", "row", "`for row in X:"),
    (src.float_becomes_array_in_loop, "y += x", "y", "`z = y`"),
    # `helpers.same(y)` is no NumPy function: its result is `y` itself
    (src.module_helper_keeps_accumulator, "y += x", "y", "`z = helpers.same(y)`"),
]


def _position(fn, line_text: str, at: str) -> tuple[int, int]:
    """(line, 1-based column) of ``at`` on the line of ``fn`` holding ``line_text``."""
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if line_text in line:
            return first + k, line.index(line_text) + line_text.index(at) + 1
    raise AssertionError(f"{line_text!r} not in {fn.__name__}")


def _name(v) -> str:
    return getattr(v[0] if isinstance(v, tuple) else v, "__name__", "")


@pytest.mark.parametrize("fn, line_text, at, says", REFUSED, ids=_name)
def test_refused_with_location_and_rewrite(fn, line_text, at, says):
    fn, where = fn if isinstance(fn, tuple) else (fn, fn)
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(fn)(np.ones(3))
    text = str(info.value)
    line, col = _position(where, line_text, at)
    head, shown, caret = text.split("\n")
    assert re.match(rf".*numpy_augassign_src\.py:{line}:{col}: error: ", head), text
    assert shown.strip() == line_text
    assert caret.index("^") == 4 + col - 1, text  # shown lines are indented by 4
    assert says in head, text
    assert "np.copy" in head or re.search(r"Write `(\w+) = \1 [-+*/]+ \.\.\.`", head), text


def test_a_helper_without_numpy_is_refused_only_for_arrays():
    # bump_numbers aliases its parameter: harmless for a float, not for an array
    assert s2s_ad.grad(src.bump_numbers)(1.5) == pytest.approx(
        fd_gradient(src.bump_numbers, [1.5], 0))
    with pytest.raises(s2s_ad.SourceError, match="passes an array"):
        s2s_ad.grad(src.calls_bump_numbers)(np.ones(3))


def test_a_helper_reached_as_module_attribute_is_no_numpy_function():
    # Subscript assignment in a loop shares the ownership analysis: `helpers.same(y)`
    # returns `y` itself, which the later `y[0] = ...` changes.
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(src.module_helper_keeps_filled)(np.ones(3), 3)
    line, col = _position(src.module_helper_keeps_filled, "z = helpers.same(y)", "y)")
    assert f"numpy_augassign_src.py:{line}:{col}: error: `y` is assigned into" in str(info.value)
