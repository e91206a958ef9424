"""A helper returning a tuple, its result bound to a name and indexed
(``r = h(x)``, ``r[0] * r[1]``, ``r[-1]``): in NumPy code as in code of
numbers. (In NumPy code ``r[0]`` was read as a row of an array the helper
returns, and refused, "returns 2 values; unpack them ... or index the
result", although it is indexed; and a negative index, ``r[-1]``, gave a
gradient of 0.0 where 2.385 is right: the item's adjoint went to an item
-1 that no output is; and an item read inside a loop or a branch, ``r[2] if a
> 0 else r[1]``, gave 0.0: the item's adjoint stayed inside the region; an
item that is a list the helper grew, ``r[1][-1]`` in a loop, kept that
bug a little longer: 4.12 where 4.84 is right, 0.0 or an UnboundLocalError
in an arm; and so did ``u, v, w = r``, ``sum(r)``, ``max(r)`` in a loop or an
arm: 0.0 where 1.28 is right, and ``r = q = triple(a)``, a chained
assignment, read in a loop: half the gradient.) A
helper may return another's tuple as it is (``return triple(a * 2.0)``, or
``r = pair(x); return r``): its items, as ``a, b = ...; return a, b`` (it
was refused: "`triple` returns 3 values; unpack them ..."), and a name may
hold one call's tuple before a branch and another's after an arm rebinds it
(``r = triple(y)`` in one arm, or in each): the items' φs (was refused,
"`r` may be undefined here"); it may be iterated over (``for k, v in
enumerate(r)``) and sliced (``r[1:]``), its items again. Gradients against central differences, at the top level, in
a loop and in a helper; and the gradient file of a function with a
one-parameter gradient (``return dx,``) indexed by a probe."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import import_source

SRC = '''
import math

import numpy as np


def pair(x):
    return np.sin(x), x * x


def one(x):
    return x * x,


def top(x):
    r = pair(x)
    return np.sum(r[0] * r[1])


def single(x):
    r = one(x)
    return np.sum(r[0] * 2.0)


def negative(x):
    r = pair(x)
    return np.sum(r[-1] + r[-2] ** 2)


def looped(x):
    s = 0.0
    for k in range(3):
        r = pair(x + k)
        s = s + np.sum(r[0] * r[1])
    return s


def inner(x):
    r = pair(x)
    return r[1] * r[0]


def nested(x):
    return np.sum(inner(x))


def scalar(a):
    r = pair(a)
    return r[0] * r[1]


def pair_of_numbers(a):
    return math.sin(a), a * a


def scalar_negative(a):
    r = pair_of_numbers(a)
    return r[-1] + r[-2] ** 2


def direct(x):
    return np.sum(pair(x)[-1] * pair(x)[0])


def past_the_end(x):
    r = pair(x)
    return np.sum(r[2])


def triple(a):
    return math.sin(a), a * a, 3.0 * a


def in_expression_arm(a):
    r = triple(a)
    return r[2] if a > 0 else r[1]


def in_branch(a):
    r = triple(a)
    s = r[0]
    if a > 0:
        s = s + r[2] * r[2]
    return s


def in_loop(a):
    r = triple(a)
    s = 0.0
    for i in range(3):
        s = s + r[2] * i + r[-3]
    return s


def in_while(a):
    r = triple(a)
    k = 0
    while k < 2:
        a = a + r[1]
        k += 1
    return a


def called_in_loop(a):
    s = 0.0
    for i in range(2):
        r = triple(a + i)
        if i > 0:
            s = s + r[2] * r[0]
    return s


def forwards(a):
    return triple(a * 2.0)


def forwarded_unpacked(a):
    u, v, w = forwards(a)
    return u * w + v


def forwarded_indexed(a):
    def inner(t):
        return triple(t)
    r = inner(a)
    s = 0.0
    for i in range(2):
        s = s + r[1] * i
    return s + (r[-1] if a > 0 else r[0])


def forwards_bound(x):
    r = pair(x)
    return r


def arrays_forwarded(x):
    r = forwards_bound(x)
    return np.sum(r[0] * r[1])


def rebound_in_an_arm(a):
    r = triple(a)
    y = r[0]
    if a > 0:
        r = triple(y)
    return r[1] + y * r[-1]


def bound_in_each_arm(a):
    if a > 0:
        r = triple(a)
    else:
        r = triple(2.0 * a)
    s = 0.0
    for i in range(2):
        s = s + r[0] * i
    return s * r[-1]


def arrays_rebound_in_an_arm(x):
    r = pair(x)
    if np.sum(x) > 0:
        r = pair(r[0] * 2.0)
    return np.sum(r[0] * r[1])


def iterated(a):
    r = triple(a)
    t = 0.0
    for k, v in enumerate(r):
        t = t * 0.5 + v * (k + 1.0)
    return t


def sliced(a):
    r = triple(a)
    t = 0.0
    if a > 0:
        for v in r[1:]:
            t = t + v * v
    return t + sum(r[-2:]) * r[1:][0]


def unpacked_in_arm(a):
    r = triple(a)
    s = 0.0
    if a > 0:
        u, v, w = r
        s = u * v + w
    return s + 1.0


def unpacked_in_loop(a):
    r = triple(a)
    s = 0.0
    for i in range(2):
        u, v, w = r
        s = s + u * v * i + sum(r) * max(r)
    return s


def chained(a):
    r = q = triple(a)
    s = 0.0
    for i in range(2):
        s = s + q[0] * r[1] + q[-1]
    return s


def grow(a, n):
    ys = [a]
    for i in range(n):
        ys.append(ys[-1] * 0.5 + math.sin(a))
    return a * a, ys


def list_item_in_loop(a):
    r = grow(a, 3)
    s = 0.0
    for i in range(2):
        s = s + r[1][-1] * r[0] + r[1][i]
    return s


def list_item_in_arms(a):
    r = grow(a, 3)
    if a > 0:
        s = sum(r[1]) * r[0]
    else:
        s = r[1][0] * r[-1][1]
    return s


def grow_arrays(x, n):
    ys = [x]
    for i in range(n):
        ys.append(np.tanh(ys[-1]) * 0.5 + x)
    return np.sum(x), ys


def arrays_list_item_in_loop(x):
    r = grow_arrays(x, 3)
    s = 0.0
    for i in range(2):
        s = s + np.sum(r[1][-1] * r[1][i]) * r[0]
    return s


def arrays_in_loop_and_branch(x):
    r = pair(x)
    s = 0.0
    for i in range(2):
        s = s + np.sum(r[1] * i)
    if np.sum(x) > 0:
        s = s + np.sum(r[0] * r[-1])
    return s
'''

RNG = np.random.default_rng(4242)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("tuples")), SRC, "tuple_results_src")


@pytest.mark.parametrize("name", ["top", "single", "negative", "looped", "nested", "direct",
                                  "arrays_in_loop_and_branch", "arrays_forwarded",
                                  "arrays_rebound_in_an_arm", "arrays_list_item_in_loop"])
def test_a_tuple_result_indexed_in_numpy_code(mod, name):
    fn = getattr(mod, name)
    x = RNG.normal(size=4)
    np.testing.assert_allclose(s2s_ad.grad(fn)(x), fd_gradient(fn, [x], 0), rtol=1e-6,
                               atol=1e-9)


def test_the_same_in_code_of_numbers(mod):
    a = 0.7
    h = 1e-6
    want = (mod.scalar(a + h) - mod.scalar(a - h)) / (2 * h)
    assert np.isclose(s2s_ad.grad(mod.scalar)(a), want, rtol=1e-7)


def test_a_negative_index_in_code_of_numbers(mod):
    a, h = 0.7, 1e-6
    want = (mod.scalar_negative(a + h) - mod.scalar_negative(a - h)) / (2 * h)
    assert np.isclose(s2s_ad.grad(mod.scalar_negative)(a), want, rtol=1e-7)


def test_an_index_past_the_end_is_refused_located(mod):
    with pytest.raises(s2s_ad.SourceError) as e:
        s2s_ad.grad(mod.past_the_end)(RNG.normal(size=3))
    text = str(e.value)
    assert "tuple_results_src.py:" in text and "out of range for length 2" in text and "^" in text


@pytest.mark.parametrize("name", ["in_expression_arm", "in_branch", "in_loop", "in_while",
                                  "called_in_loop", "forwarded_unpacked", "forwarded_indexed",
                                  "rebound_in_an_arm", "bound_in_each_arm", "iterated",
                                  "sliced", "list_item_in_loop", "list_item_in_arms",
                                  "unpacked_in_arm", "unpacked_in_loop", "chained"])
@pytest.mark.parametrize("a", [0.7, -0.4])
def test_an_item_read_in_a_loop_or_a_branch(mod, name, a):
    """``r = triple(a)`` then ``r[k]`` read inside a loop or an arm: the items'
    adjoints reach the call's backward pass (they were 0.0, or partly lost:
    ``in_branch`` gave 0.0 where 3.76 is right, ``in_while`` 2.4 where 3.8 is)."""
    fn = getattr(mod, name)
    h = 1e-6
    want = (fn(a + h) - fn(a - h)) / (2 * h)
    assert np.isclose(s2s_ad.grad(fn)(a), want, rtol=1e-6, atol=1e-9)
