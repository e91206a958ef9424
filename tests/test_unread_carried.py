"""A loop's carried value that nothing reads in a gradient's forward pass is
not computed there: ``total += np.sum(ygold * ynorm)`` of a function
returning ``-total / count`` (the gradient never needs ``total``), a value
read only to compute another such value, a ``while`` loop's sum beside its
counter. A carried value read after the loop (``value_and_grad``), by the
loop's condition, or by a branch of the loop is computed as before. Each
gradient against central differences; the forward passes read in the
generated text."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import assert_gradients, fd_gradient, make_function


def _forward(text: str, name: str) -> str:
    """The forward pass of ``grad_<name>`` in a gradient module's text."""
    body = text.split(f"def grad_{name}(", 1)[1]
    return body.split("# reverse sweep", 1)[0]


LOSS = '''
def loss(w, seq):
    total = 0.0
    count = 0
    x = seq[0]
    for t in range(seq.shape[0] - 1):
        y = x * w
        ynorm = y - np.log(np.sum(np.exp(y)) + 2)
        gold = seq[t + 1]
        total += np.sum(gold * ynorm)
        count += gold.shape[0]
        x = np.tanh(y)
    return -total / count
'''

CHAIN = '''
def chain(x, n):
    s = 0.0
    a = 1.0
    b = 0.0
    c = 0.0
    for i in range(n):
        a = a * 1.1
        b = b + a * x
        c = c + b * b
        s = s + x * x * a
    return s
'''

WHILE = '''
def looped(x):
    k = 0
    t = 0.0
    y = x
    while k < 5:
        y = y * 0.9 + x * y
        t = t + y * y
        k += 1
    return y * y
'''

NESTED = '''
def nested(x, n):
    total = 0.0
    k = 0
    while total < 4.0 and k < 6:
        for j in range(n):
            total = total + math.sin(x + j + k) ** 2 + 0.1
        k = k + 1
    return total
'''

BRANCH = '''
def branch(x, n):
    t = 0.0
    y = x
    for i in range(n):
        t = t + y
        if t > 1.0:
            y = y * 0.5
        y = y * x
    return y
'''


def test_a_sum_the_gradient_never_reads_is_not_computed():
    f = make_function(LOSS, "loss")
    rng = np.random.default_rng(3)
    args = [rng.uniform(-1.0, 1.0, 4), rng.uniform(0.0, 1.0, (6, 4))]
    text = s2s_ad.gradient_source(f, wrt=(0,))
    forward = _forward(text, "loss")
    assert "total" not in forward and "ynorm" not in forward, forward
    assert "count = count +" in forward, forward
    got = s2s_ad.grad(f, wrt=0)(*args)
    np.testing.assert_allclose(got, fd_gradient(f, args, 0), rtol=1e-6, atol=1e-8)
    value, grads = s2s_ad.value_and_grad(f, wrt=(0,))(*args)
    assert np.isclose(value, f(*args))
    np.testing.assert_allclose(grads[0], got, rtol=1e-12)


def test_a_value_read_only_by_another_unread_one_is_not_computed():
    f = make_function(CHAIN, "chain")
    forward = _forward(s2s_ad.gradient_source(f, wrt=(0,)), "chain")
    assert "b =" not in forward and "c =" not in forward and "b * b" not in forward, forward
    assert "a * 1.1" in forward, forward
    for n in (0, 1, 4):
        got = s2s_ad.grad(f, wrt=0)(0.7, n)
        assert np.isclose(got, fd_gradient(f, [0.7, n], 0), rtol=1e-7, atol=1e-9)
        assert np.isclose(s2s_ad.value_and_grad(f, wrt=0)(0.7, n)[0], f(0.7, n))


def test_a_while_loop_keeps_its_counter_not_its_unread_sum():
    f = make_function(WHILE, "looped")
    forward = _forward(s2s_ad.gradient_source(f, wrt="x"), "looped")
    assert "t =" not in forward and "k" in forward, forward
    got = s2s_ad.grad(f, wrt="x")(0.3)
    assert np.isclose(got, fd_gradient(f, [0.3], 0), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("x", [0.3, 1.1])
def test_a_sum_the_outer_condition_reads_is_computed_in_the_inner_loop(x):
    """The inner loop's sum is read only by the outer loop's condition: found
    read on the outer loop's second round, after the inner loop was first
    pruned without it."""
    import math

    f = make_function(NESTED, "nested", {"math": math})
    forward = _forward(s2s_ad.gradient_source(f, wrt="x"), "nested")
    assert "total = total + " in forward or "total_1 = total_1 + " in forward, forward
    got = s2s_ad.grad(f, wrt="x")(x, 3)
    assert np.isclose(got, fd_gradient(f, [x, 3], 0), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("x", [0.4, 0.9, 1.3])
def test_a_sum_a_branch_reads_is_computed(x):
    f = make_function(BRANCH, "branch")
    forward = _forward(s2s_ad.gradient_source(f, wrt=(0,)), "branch")
    assert "t = t + y" in forward or "t + y" in forward, forward
    got = s2s_ad.grad(f, wrt=0)(x, 4)
    assert np.isclose(got, fd_gradient(f, [x, 4], 0), rtol=1e-6, atol=1e-9)


def test_arrays_and_a_checkpointed_loop():
    """The same function with its loop checkpointed (the loop is run again in
    the reverse sweep, whole): the same gradient."""
    f = make_function(LOSS, "loss")
    rng = np.random.default_rng(4)
    args = [rng.uniform(-1.0, 1.0, 3), rng.uniform(0.0, 1.0, (5, 3))]
    got = s2s_ad.grad(f, wrt=0, checkpoint=2)(*args)
    np.testing.assert_allclose(got, fd_gradient(f, args, 0), rtol=1e-6, atol=1e-8)
    assert_gradients(f, args, [0])
