"""Work at a helper's boundary that the gradient does not need, left out
(the LSTM's `predict` pattern: an array filled row by row, returned, fed
back in a loop): the array a helper's forward pass returns is copied only
where its backward pass puts old elements back; its adjoint starts as the
caller's cotangent itself where the backward pass only reads it
(``seeded``); ``x.shape`` written in the source stays an attribute read; an
operand read only for its shape is read as the operand of its shape it is
recomputed from (``ypred`` for ``ypred - np.log(s)``). Every gradient
against central differences, and the same programs' gradients with each
change's opposite case."""

import re

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, make_function, rand
from s2s_ad.rules.numpy_helpers import HELPERS

RNG = np.random.default_rng(4848)


def _section(text: str, name: str) -> str:
    """The text of generated function ``name``."""
    part = text[text.index(f"def {name}("):]
    return part[:part.index("\ndef ", 1)] if "\ndef " in part[1:] else part


# A helper filling a new array row by row and returning it, fed back in a
# loop, as examples/gradbench/lstm.py's predict does.
ROWS = ("def step(w, state, x):\n"
        "    new_state = np.zeros_like(state)\n"
        "    for i in range(state.shape[0]):\n"
        "        x = np.tanh(state[i] * w[i] + x)\n"
        "        new_state[i] = x\n"
        "    return x, new_state\n")
# the same, reading the array's values before a later write: that write is
# undone by the backward pass, so the returned array is a copy
READ_BEFORE = ("def step(w, state, x):\n"
               "    new_state = np.zeros_like(state)\n"
               "    for i in range(state.shape[0]):\n"
               "        x = np.tanh(state[i] * w[i] + x) + 0.1 * np.sum(np.sin(new_state))\n"
               "        new_state[i] = x\n"
               "    return x, new_state\n")
LOOP = ("def f(w, state, xs):\n"
        "    total = 0.0\n"
        "    for t in range(xs.shape[0]):\n"
        "        y, state = step(w, state, xs[t])\n"
        "        total = total + np.sum(y * y) + np.sum(state * w)\n"
        "    return total\n")


def _program(step_source: str):
    step = make_function(step_source, "step")
    return make_function(LOOP, env={"step": step})


def _args():
    return [rand(RNG, (3, 4)), rand(RNG, (3, 4)), rand(RNG, (5, 4))]


def test_returned_array_not_copied_where_nothing_puts_elements_back():
    f = _program(ROWS)
    assert_gradients(f, _args(), [0, 1, 2])
    text = s2s_ad.gradient_source(f, wrt=[0, 1, 2])
    forward = _section(text, "step_fwd")
    assert "return (x_1, new_state)" in forward.replace("x_2", "x_1"), forward
    assert "own(" not in forward, forward


def test_returned_array_copied_where_the_backward_pass_restores_it():
    f = _program(READ_BEFORE)
    assert_gradients(f, _args(), [0, 1, 2])
    forward = _section(s2s_ad.gradient_source(f, wrt=[0, 1, 2]), "step_fwd")
    assert "own(new_state)" in forward, forward


def test_adjoint_of_the_returned_array_starts_as_the_cotangent():
    f = _program(ROWS)
    backward = _section(s2s_ad.gradient_source(f, wrt=[0, 1, 2]), "step_bwd")
    assert "= seeded(new_state, " in backward, backward
    assert "float_zeros(new_state)" not in backward, backward
    # where the backward pass adds into the adjoint in place, it starts as zeros
    backward = _section(s2s_ad.gradient_source(_program(READ_BEFORE), wrt=[0, 1, 2]), "step_bwd")
    assert "seeded(" not in backward and "float_zeros(new_state)" in backward, backward


def test_vjp_value_stays_a_copy():
    # the value vjp returns is the user's, who may change it before calling
    # vjp_fn, whose backward pass reads the array's values (np.sin(y))
    f = make_function("def f(x):\n    y = np.zeros_like(x)\n    for i in range(x.shape[0]):\n"
                      "        y[i] = x[i] * 2.0\n    return y, np.sum(np.sin(y))\n")
    x = rand(RNG, (4,))
    value, vjp_fn = s2s_ad.vjp(f, x)
    cotangent = (RNG.normal(size=4), 0.7)
    want = vjp_fn(cotangent)
    value[0][...] = 100.0
    np.testing.assert_array_equal(vjp_fn(cotangent)[0], want[0])
    g = make_function("def g(x, c):\n    y, s = f(x)\n    return np.sum(y * c) + 0.7 * s\n",
                      "g", env={"f": f})
    np.testing.assert_allclose(want[0], fd_gradient(g, [x, cotangent[0]], 0), rtol=1e-6, atol=1e-8)


CALLERS = [
    # the helper's result fed straight into a second call: the first
    # backward pass is given the second one's adjoint of its parameter
    "        y, s1 = step(w, state, xs[t])\n"
    "        y2, state = step(w * 0.5, s1, y)\n"
    "        total = total + np.sum(y2 * s1) + np.sum(state * state)\n",
    # the caller's adjoint of the result made from reads by index (added into
    # an array in place), then given to the backward pass as its cotangent
    "        y, state = step(w, state, xs[t])\n"
    "        total = total + np.sum(state[0] * state[2]) + np.sum(y * state[1])\n",
]


@pytest.mark.parametrize("source", [ROWS, READ_BEFORE])
@pytest.mark.parametrize("body", CALLERS)
def test_gradients_of_other_callers(source, body):
    step = make_function(source, "step")
    f = make_function("def f(w, state, xs):\n    total = 0.0\n"
                      "    for t in range(xs.shape[0]):\n" + body + "    return total\n",
                      env={"step": step})
    assert_gradients(f, _args(), [0, 1, 2])


def _seeded():
    ns = {"np": np}
    exec(HELPERS["float_zeros"] + HELPERS["seeded"], ns)
    return ns["seeded"]


def test_seeded_is_the_cotangent_only_where_the_sum_would_equal_it():
    seeded = _seeded()
    x = np.ones((3, 4))
    g = RNG.normal(size=(3, 4))
    assert seeded(x, g) is g
    # a view (of an adjoint its caller may still write into): a new array
    view = np.zeros((5, 4))[1:4]
    out = seeded(x, view)
    assert out is not view and not np.shares_memory(out, view)
    # an integer x: float64 zeros, g's dtype
    assert seeded(np.ones((3, 4), int), g) is g
    # another shape (broadcast), another dtype, a number: the sum
    for other, xx in ((g[0], x), (g.astype(np.float32), x), (0.0, x),
                      (g.astype(np.float32), np.ones((3, 4), int))):
        got = seeded(xx, other)
        want = np.zeros(np.shape(xx)) + other
        assert got is not other and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    x32 = np.ones((3, 4), np.float32)
    g32 = g.astype(np.float32)
    assert seeded(x32, g32) is g32


def test_shape_attribute_read_as_written():
    f = make_function("def f(x, y):\n    n = x.shape[0]\n    m = np.shape(y)[0]\n"
                      "    return np.sum(x * x) * n + np.sum(y) * m\n")
    args = [rand(RNG, (3, 2)), rand(RNG, (4,))]
    assert_gradients(f, args, [0, 1])
    text = _section(s2s_ad.gradient_source(f, wrt=[0, 1]), "grad_f")
    assert "n = x.shape[0]" in text and "np.shape(x)" not in text, text
    # np.shape written in the source stays np.shape (it also reads lists)
    assert "m = np.shape(y)[0]" in text, text


LOG_SOFTMAX = ("def f(w, xs):\n"
               "    total = 0.0\n"
               "    ypred = w * 0.0\n"
               "    for t in range(xs.shape[0] - 1):\n"
               "        ypred = np.tanh(xs[t] * w + ypred)\n"
               "        ynorm = ypred - np.log(np.sum(np.exp(ypred)) + 2)\n"
               "        total = total + np.sum(xs[t + 1] * ynorm)\n"
               "    return -total\n")


def test_operand_read_for_its_shape_as_the_value_it_is_recomputed_from():
    f = make_function(LOG_SOFTMAX)
    args = [rand(RNG, (4,)), rand(RNG, (6, 4))]
    assert_gradients(f, args, [0, 1])
    assert_gradients(f, args, [0])
    # with respect to w only, ynorm is read for its shape only
    text = _section(s2s_ad.gradient_source(f, wrt=[0]), "grad_f")
    code = "\n".join(line.split("#")[0] for line in text.splitlines())
    assert not re.search(r"\bynorm\b", code), text
    assert "np.log(" not in code, text  # the logarithm was taped only for ynorm


@pytest.mark.parametrize("shapes", [((4,), (6, 4)), ((4,), (6, 3, 4)), ((3, 1), (6, 3, 4))])
def test_shape_of_a_broadcast_operand_kept(shapes):
    # ynorm - c, c an array of its own shape: ynorm's shape is not ypred's,
    # the unbroadcast still reads the value itself
    f = make_function("def f(w, xs, c):\n"
                      "    total = 0.0\n"
                      "    ypred = w * 0.0\n"
                      "    for t in range(xs.shape[0] - 1):\n"
                      "        ypred = np.tanh(ypred * 0.5 + w)\n"
                      "        ynorm = ypred - c\n"
                      "        total = total + np.sum(xs[t + 1] * ynorm)\n"
                      "    return -total\n")
    w_shape, xs_shape = shapes
    args = [rand(RNG, w_shape), rand(RNG, xs_shape), rand(RNG, xs_shape[1:])]
    assert_gradients(f, args, [0, 1, 2])
    assert_gradients(f, args, [0, 2])


def test_the_sum_helpers_are_np_sum_bit_for_bit():
    """``total`` and ``array_sum`` (a row summed by its one axis, anything
    else by axis=None): np.sum's value and type, bit for bit, for rows of
    every length up to 300 and long ones, 0-d arrays, matrices, strided
    views, float32, complex and integer arrays, and numbers."""
    ns = {"np": np}
    exec(HELPERS["total"] + HELPERS["array_sum"], ns)
    values = [RNG.normal(size=n) * 10.0 ** RNG.uniform(-8, 8, n) for n in range(300)]
    values += [RNG.normal(size=4099), RNG.normal(size=(3, 5)), RNG.normal(size=(4, 1, 3)),
               np.array(2.5), np.zeros(0), RNG.normal(size=50)[::3],
               RNG.normal(size=33).astype(np.float32), RNG.normal(size=7) + 1j * RNG.normal(size=7),
               np.arange(9, dtype=np.int32), np.arange(6) > 2]
    for v in values:
        want = np.sum(v)
        for helper in (ns["total"], ns["array_sum"]):
            got = helper(v)
            assert type(got) is type(want) and np.asarray(got).tobytes() == \
                np.asarray(want).tobytes(), (v, got, want)
    assert ns["total"](1.5) == 1.5 and ns["array_sum"](2.0) == np.sum(2.0)
