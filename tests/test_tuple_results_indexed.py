"""A helper returning a tuple, its result bound to a name and indexed
(``r = h(x)``, ``r[0] * r[1]``, ``r[-1]``): in NumPy code as in code of
numbers. (In NumPy code ``r[0]`` was read as a row of an array the helper
returns, and refused, "returns 2 values; unpack them ... or index the
result", although it is indexed; and a negative index, ``r[-1]``, gave a
gradient of 0.0 where 2.385 is right: the item's adjoint went to an item
-1 that no output is.) Gradients against central differences, at the top level, in
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
'''

RNG = np.random.default_rng(4242)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("tuples")), SRC, "tuple_results_src")


@pytest.mark.parametrize("name", ["top", "single", "negative", "looped", "nested", "direct"])
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
