"""Subscript assignment in loops and branches, written in place: gradients
against central differences, and what the forward pass keeps (s2s_ad/reverse/inplace.py)."""

import re

import numpy as np
import pytest

import numpy_inplace_src as src
import s2s_ad
from array_oracle import assert_gradients, fd_gradient, rand

RNG = np.random.default_rng(23)

CASES = [
    (src.fill, lambda: [rand(RNG, (5,)), 0.7, 5], [0, 1]),
    (src.long_recurrence, lambda: [rand(RNG, (7,)), 0.9, 7], [0, 1]),
    (src.two_back, lambda: [rand(RNG, (6,)), 0.8, 6], [0, 1]),
    (src.twice, lambda: [rand(RNG, (4,)), rand(RNG, (4,)), 4], [0, 1]),
    (src.read_then_write, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.slices_under_branch, lambda: [rand(RNG, (5,)), 0.6, 5], [0, 1]),
    (src.whole_reads_after, lambda: [rand(RNG, (4,)), rand(RNG, (4,)), 4], [0, 1]),
    (src.rnn_rows, lambda: [rand(RNG, (3, 3)), rand(RNG, (3,)), 4], [0, 1]),
    (src.while_fill, lambda: [rand(RNG, (5,)), 4.0], [0]),
    (src.while_fill, lambda: [rand(RNG, (5,)), 100.0], [0]),
    (src.early_exit, lambda: [rand(RNG, (6,)), 3.0], [0]),
    (src.early_exit, lambda: [rand(RNG, (6,)), 100.0], [0]),
    (src.constant_table, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.carried_only, lambda: [rand(RNG, (5,)), 5], [0]),
    (src.returns_array, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.masked, lambda: [rand(RNG, (5,)), 3], [0]),
    (src.calls_filler, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.saved_fill, lambda: [rand(RNG, (5,)), 5], [0]),
    (src.nested_rows, lambda: [rand(RNG, (3, 4)), 3], [0]),
    (src.read_before_loop, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.early_return_sum, lambda: [np.array([0.1, 0.2, 0.3, 0.9]), 4], [0]),
    (src.early_return_sum, lambda: [np.array([0.8, 0.9, 0.1, 0.2]), 4], [0]),
    (src.early_return_sum, lambda: [np.array([-1.0, -0.5, -1.0, -0.5]), 4], [0]),
    (src.returns_a_piece, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.sum_then_write, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.copy_elements, lambda: [rand(RNG, (4,)), 4], [0]),
    (src.returned_from_loop, lambda: [np.array([0.1, 0.2, 0.3, 0.9]), 4], [0]),
    (src.returned_from_loop, lambda: [np.array([0.8, 0.9, 0.1, 0.2]), 4], [0]),
    (src.returned_from_loop, lambda: [np.array([-1.0, -0.5, -1.0, -0.5]), 4], [0]),
]


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_agrees_with_finite_differences(fn, args, wrt):
    assert_gradients(fn, args(), wrt)


@pytest.mark.parametrize("fn", [c[0] for c in CASES], ids=lambda f: f.__name__)
def test_assignment_is_in_place(fn):
    text = s2s_ad.gradient_source(fn)
    assert "assign(" not in text and "zeroed(" not in text


@pytest.mark.parametrize("fn, saved", [
    (src.fill, False), (src.long_recurrence, False), (src.two_back, False),
    (src.whole_reads_after, False), (src.rnn_rows, False), (src.returns_array, False),
    (src.carried_only, False), (src.slices_under_branch, True), (src.twice, True),
    (src.read_then_write, True), (src.constant_table, True), (src.read_before_loop, True),
], ids=lambda v: getattr(v, "__name__", ""))
def test_old_elements_are_saved_only_when_an_earlier_read_needs_them(fn, saved):
    text = s2s_ad.gradient_source(fn)
    assert ("_old.append(" in text) == saved
    assert ("_old.pop()" in text) == saved


def _pushed(fn, args):
    """How many numbers the gradient of ``fn`` pushes onto its tapes at ``args``."""
    text = s2s_ad.gradient_source(fn)
    sizes = []

    class Counting(list):
        def append(self, v):
            sizes.append(int(np.size(v)))
            super().append(v)

        def __setitem__(self, k, v):  # a tape with a slot per iteration
            sizes.append(int(np.size(v)))
            super().__setitem__(k, v)

    namespace = {"Counting": Counting}
    lines = [re.sub(r"= (\[None\] \* [^#]*?)( *#|$)", r"= Counting(\1)\2",
                    line.replace("= []", "= Counting()")) for line in text.splitlines()]
    exec(compile("\n".join(lines), "<tape>", "exec"), namespace)
    namespace[f"grad_{fn.__name__}"](*args)
    return sum(sizes), max(sizes, default=0)


@pytest.mark.parametrize("fn", [src.long_recurrence, src.saved_fill, src.fill],
                         ids=lambda f: f.__name__)
def test_tape_holds_a_few_numbers_per_element(fn):
    for n in (40, 80):
        args = [rand(RNG, (n,)), 0.9, n] if fn is not src.saved_fill else [rand(RNG, (n,)), n]
        total, largest = _pushed(fn, args)
        assert largest <= 1 and total <= 5 * n, (n, total, largest)


def test_value_and_grad_returns_the_filled_array():
    x = rand(RNG, (4,))
    value, g = s2s_ad.value_and_grad(src.returns_array)(x, 4)
    np.testing.assert_allclose(value, x * x)
    np.testing.assert_allclose(g, 2 * x)
    value, g = s2s_ad.value_and_grad(src.constant_table)(x, 4)
    assert np.isclose(value, src.constant_table(x, 4))
    np.testing.assert_allclose(g, fd_gradient(src.constant_table, [x, 4], 0), rtol=1e-6)


def test_a_returned_view_of_the_array_is_not_restored_under_the_caller():
    # The reverse sweep puts old elements back into y; the value y[1:] is a copy.
    x = rand(RNG, (4,))
    value, g = s2s_ad.value_and_grad(src.returns_a_piece)(x, 4)
    np.testing.assert_allclose(value, src.returns_a_piece(x, 4))
    value, pullback = s2s_ad.vjp(src.returns_a_piece, x, 4)
    pullback(np.ones(3))
    np.testing.assert_allclose(value, src.returns_a_piece(x, 4))
    # returned from inside the loop: the function's result is the array itself
    x = np.array([0.8, 0.9, 0.1, 0.2])
    value, g = s2s_ad.value_and_grad(src.returned_from_loop)(x, 4)
    np.testing.assert_allclose(value, src.returned_from_loop(x, 4))


def test_vjp_of_a_function_filling_an_array():
    x = rand(RNG, (4,))
    value, pullback = s2s_ad.vjp(src.returns_array, x, 4)
    v = rand(RNG, (4,))
    (gx, _) = pullback(v)
    np.testing.assert_allclose(gx, 2 * x * v)
    np.testing.assert_allclose(value, x * x)  # the backward pass restored its own buffer only
    (gx2, _) = pullback(2 * v)  # again: the first call's pops and restores do not leak
    np.testing.assert_allclose(gx2, 4 * x * v)


def test_arguments_and_seed_are_not_written():
    x, w = rand(RNG, (4,)), rand(RNG, (4,))
    x0, w0 = x.copy(), w.copy()
    s2s_ad.grad(src.twice, wrt=[0, 1])(x, w, 4)
    assert np.array_equal(x, x0) and np.array_equal(w, w0)
    seed = rand(RNG, (4,))
    seed0 = seed.copy()
    g = s2s_ad.grad(src.returns_array)(x, 4, dy=seed)
    assert np.array_equal(seed, seed0)
    np.testing.assert_allclose(g, 2 * x * seed)


def test_float32_stays_float32():
    x = rand(RNG, (5,)).astype(np.float32)
    g = s2s_ad.grad(src.long_recurrence, wrt=0)(x, np.float32(0.5), 5)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, fd_gradient(src.long_recurrence, [x, 0.5, 5], 0), rtol=1e-3)


def test_explain_says_where_old_elements_are_put_back():
    text = s2s_ad.explain(src.twice, wrt=("x", "w"))
    assert "y[i] = y_old.pop()" in text
    assert "y as it was before the write (its old elements popped from y_old)" in text
    assert "the adjoint of y, updated in place" in text


def test_integer_arrays_and_lists_get_float_gradients():
    x = np.array([1, 2, 3, 4])
    g = s2s_ad.grad(src.long_recurrence, wrt=0)(x, 0.5, 4)
    np.testing.assert_allclose(g, fd_gradient(src.long_recurrence, [x.astype(float), 0.5, 4], 0),
                               rtol=1e-6)
    g = s2s_ad.grad(src.long_recurrence, wrt=0)([1.0, 2.0, 3.0, 4.0], 0.5, 4)
    np.testing.assert_allclose(g, fd_gradient(src.long_recurrence, [x.astype(float), 0.5, 4], 0),
                               rtol=1e-6)


def test_shape_only_operations_read_no_operand_values():
    """A read of the array by the operations of inplace.SHAPE_ONLY makes no
    write save its old elements: their derivatives must read the operands'
    shapes only (spread, reduced_size, unbroadcast: each reads its last
    operand's shape) or be constants."""
    import ast

    from s2s_ad.reverse.inplace import SHAPE_ONLY
    from s2s_ad.rules import RULES

    operands = {"x", "y"} | {f"x{k}" for k in range(4)}
    for prim in SHAPE_ONLY:
        rule = RULES.get(prim)
        if rule is None:
            continue
        for template in rule.partial_asts:
            if template is None:
                continue
            measured = {id(n.args[-1]) for n in ast.walk(template) if isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Name)
                        and n.func.id in ("spread", "reduced_size", "unbroadcast")}
            for n in ast.walk(template):
                if isinstance(n, ast.Name) and n.id in operands:
                    assert id(n) in measured, (prim, ast.unparse(template))


def test_a_running_sum_of_the_array_saves_nothing():
    text = s2s_ad.gradient_source(src.sum_then_write)
    assert "_old" not in text


def test_an_unforeseen_read_falls_back_to_keeping_every_version(monkeypatch):
    """If the reverse sweep reads the array where the analysis did not expect
    it, the transform keeps every version (the copying path) rather than
    reading a buffer that may hold other values."""
    from s2s_ad.reverse import inplace

    real = inplace.families

    def no_readers(func, namer):
        fams = real(func, namer)
        for fam in fams.values():
            fam.readers = set()
        return fams

    monkeypatch.setattr(inplace, "families", no_readers)
    s2s_ad.clear_cache()
    try:
        text = s2s_ad.gradient_source(src.twice)
        assert "assign(" in text
        assert_gradients(src.twice, [rand(RNG, (4,)), rand(RNG, (4,)), 4], [0, 1])
        assert "assign(" in s2s_ad.source_of(s2s_ad.grad(src.twice, wrt=[0, 1]))
    finally:
        s2s_ad.clear_cache()
