"""The tuple a helper returns, used whole: passed to another helper
(``r = pair(x); use(r)``, ``use(pair(x))``, ``use(r=r)``), spliced
(``mul(*r)``, ``[*r, x]``, ``(*r, x)``, ``np.stack(r)``), unpacked with a
starred name (``a, *rest = trip(x)``, ``*rest, a = ...``), indexed by an
index known only when the code runs (``r[i % 2]`` in a loop), and rebound in
the loop that carries it (``r = pair(r[1] + x)``). Each was refused ("such a
value is not passed whole to a helper", "`*` in a call is supported on a
tuple or list built in the function", "starred expressions are not
supported", "indices must be integer constants", "`r` holds a tuple of 2
before this loop and another value after"); each is the tuple of the call's
items, as ``a, b = pair(x)`` then ``(a, b)`` would be. Also ``{**d, "k": v}``
of a dict built in the function. In NumPy code also ``(*r, 1.5)`` (was
read as a shape: "a tuple returned by a call is used where a number is
expected") and an array item indexed or sliced further (``r[1][1:]``,
``d["w"][0]``: "only tuples and lists built in the function can be
sliced"); and the second derivatives there (the reverse sweep of ``r[i %
2]`` read back was refused). Gradients, ``jvp`` and ``jvp(grad)`` against
central differences, in code of numbers and NumPy code; the CLI's module in
a fresh interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import cli_grad, import_source, on_path
from tests.scalar_checks import assert_derivatives, fd
from tests.soak import rows_beyond

SRC = '''
import math

import numpy as np


def pair(x):
    return x * x, math.sin(x)


def trip(x):
    return x * x, math.sin(x), math.exp(x)


def use(r):
    return r[0] * 3.0 + r[1]


def use2(r, k):
    a, b = r
    return a * k + b * b


def mul(a, b):
    return a * b


def passed(x):
    r = pair(x)
    return use(r)


def passed_directly(x):
    return use(pair(x)) + use2(pair(x * 2.0), x)


def passed_by_keyword(x):
    r = pair(x)
    return use(r=r) * use2(k=x, r=r)


def passed_in_loop(x):
    s = 0.0
    for i in range(3):
        r = pair(x + i)
        s = s + use(r)
    return s


def passed_in_arm(x):
    r = pair(x)
    if x > 0.5:
        return use(r) * 2.0
    return use2(r, x)


def passed_in_while(x):
    r = pair(x)
    i = 0
    s = 0.0
    while i < 3:
        s = s + use2(r, x) * i
        i += 1
    return s


def rebound_in_arm(x):
    r = pair(x)
    if x > 0.0:
        r = pair(x * 3.0)
    return use(r)


def forwarded_twice(x):
    r = pair(x)
    q = r
    return use(q) + use2(r, x)


def spliced_in_call(x):
    r = pair(x)
    return mul(*r) + max(*r) * min(*r)


def spliced_in_tuple(x):
    t = (*pair(x), x)
    return t[0] * t[2] + t[1]


def spliced_in_list(x):
    xs = [x, *trip(x)]
    s = 0.0
    for v in xs:
        s = s + v * v
    return s


def starred_last(x):
    a, *rest = trip(x)
    return a * rest[0] + rest[1] * len(rest)


def starred_first(x):
    *rest, a = trip(x)
    s = 0.0
    for v in rest:
        s = s + v * a
    return s


def starred_middle(x):
    a, *mid, b = (x, x * 2.0, x * 3.0, math.cos(x))
    return a * b + sum(mid)


def starred_in_loop(x):
    s = 0.0
    for i in range(3):
        a, *rest = trip(x + i)
        s = s + a * rest[-1]
    return s


def run_time_index(x):
    r = pair(x)
    s = 0.0
    i = 0
    while i < 4:
        s = s + r[i % 2] * r[(i + 1) % 2]
        i += 1
    return s


def run_time_index_in_arms(x):
    s = 0.0
    for i in range(4):
        r = pair(x * i)
        if x > 0.3:
            s = s + r[i % 2] * x
        else:
            s = s - r[(i + 1) % 2]
    return s


def carried(x):
    r = pair(x)
    for i in range(2):
        r = pair(r[1] + x)
    return use(r)


def merged_dicts(x):
    d = {"a": x * 2.0}
    e = {**d, "b": math.sin(x)}
    return e["a"] * e["b"]


def arrays_pair(x):
    return x * x, np.sin(x)


def arrays_use(r):
    return np.sum(r[0] * 3.0 + r[1])


def arrays_passed(x):
    r = arrays_pair(x)
    return arrays_use(r)


def arrays_spliced(x):
    r = arrays_pair(x)
    return np.sum(np.maximum(*r)) + np.sum(np.stack(r) ** 2)


def arrays_joined(x):
    r = arrays_pair(x)
    return np.sum(np.concatenate([*r, x]) ** 2)


def arrays_run_time_index(x):
    r = arrays_pair(x)
    s = 0.0
    for i in range(3):
        s = s + np.sum(r[i % 2] * x)
    return s


def arrays_carried(x):
    r = arrays_pair(x)
    for i in range(2):
        r = arrays_pair(r[1] + x)
    return arrays_use(r)


def arrays_passed_in_loop(x):
    s = 0.0
    for i in range(3):
        s = s + arrays_use(arrays_pair(x * i))
    return s


def arrays_starred(x):
    a, *rest = (*arrays_pair(x), x)
    t = (*arrays_pair(x * 2.0), 1.5)
    return np.sum(a * rest[-1]) + np.sum(t[1]) * t[-1]


def arrays_items_sliced(x):
    r = arrays_pair(x)
    d = {"w": x * 2.0, "b": np.cos(x)}
    t = (x, np.sin(x))
    return np.sum(r[1][1:]) + np.sum(r[0][:2] * 2.0) + np.sum(d["w"][1:] * d["b"][:-1]) \
        + d["w"][0] + np.sum(t[1][::2]) * t[0][-1]


def arrays_items_indexed(x):
    # names no NumPy itself: its parameter is lowered as a number first, then,
    # `r[1][i]` being computed from it, as the array it is called with
    r = arrays_pair(x)
    s = 0.0
    for i in range(3):
        s = s + r[1][i] * r[0][i + 1]
    return s + r[1][0] * r[0][1]


def starred_of_a_number(x):
    a, *rest = x
    return a
'''

SCALAR = ["passed", "passed_directly", "passed_by_keyword", "passed_in_loop", "passed_in_arm",
          "passed_in_while", "rebound_in_arm", "forwarded_twice", "spliced_in_call",
          "spliced_in_tuple", "spliced_in_list", "starred_last", "starred_first",
          "starred_middle", "starred_in_loop", "run_time_index", "run_time_index_in_arms",
          "carried", "merged_dicts"]
ARRAYS = ["arrays_passed", "arrays_spliced", "arrays_joined", "arrays_run_time_index",
          "arrays_carried", "arrays_passed_in_loop", "arrays_starred", "arrays_items_sliced",
          "arrays_items_indexed"]
RNG = np.random.default_rng(8181)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("whole")), SRC, "call_tuples_whole_src")



@pytest.mark.parametrize("name", SCALAR)
@pytest.mark.parametrize("a", [0.7, -0.4])
def test_a_call_tuple_used_whole(mod, name, a):
    assert_derivatives(getattr(mod, name), a, atol=1e-9)


@pytest.mark.parametrize("name", ARRAYS)
def test_the_same_in_numpy_code(mod, name):
    fn = getattr(mod, name)
    x = RNG.uniform(0.2, 0.9, size=4)
    np.testing.assert_allclose(s2s_ad.grad(fn)(x), fd_gradient(fn, [x], 0), rtol=1e-6,
                               atol=1e-9)


@pytest.mark.parametrize("name", ["arrays_run_time_index", "arrays_spliced"])
def test_second_derivatives_in_numpy_code(tmp_path, mod, name):
    """Forward over reverse (``hvp``), and reverse over the gradient file:
    the sweep of ``r[i % 2]`` writes ``ditems[t1] = ditems[t1] + dt2`` into
    a list of the items' adjoints, which the reverse over it reads as a list
    of any length (it was refused: "indices must be integer constants")."""
    fn = getattr(mod, name)
    x, v = RNG.uniform(0.2, 0.9, size=4), RNG.normal(size=4)
    g = s2s_ad.grad(fn)
    want = (g(x + 1e-5 * v) - g(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(s2s_ad.hvp(fn)(x, v), want, rtol=1e-5, atol=1e-7)
    with on_path(tmp_path, f"whole_grad_{name}", s2s_ad.gradient_source(fn, arrays=["x"])):
        probe = import_source(str(tmp_path), f"import numpy as np\n"
                              f"from whole_grad_{name} import grad_{name}\n\n\n"
                              f"def probe(x, v):\n    return np.sum(grad_{name}(x) * v)\n",
                              f"whole_probe_{name}")
        np.testing.assert_allclose(s2s_ad.grad(probe.probe)(x, v), want, rtol=1e-5, atol=1e-7)


def test_a_starred_name_unpacking_a_number_is_refused_located(mod):
    with pytest.raises(s2s_ad.SourceError) as e:
        s2s_ad.grad(mod.starred_of_a_number)(0.5)
    text = str(e.value)
    assert "call_tuples_whole_src.py:" in text and "a starred name unpacks" in text \
        and "^" in text


@pytest.mark.parametrize("name,a", rows_beyond([("passed_in_loop", 0.6), ("starred_first", -0.45),
                                                ("carried", 1.3)], 1))
# (passed_in_loop in the default run, all three with --soak: each is checked in-process)
def test_the_cli_module_in_a_fresh_interpreter(tmp_path, mod, name, a):
    (got,) = cli_grad(tmp_path, SRC, name, [a])
    assert np.isclose(float(got), fd(getattr(mod, name), a), rtol=1e-6, atol=1e-9)
