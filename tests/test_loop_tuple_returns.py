"""A tuple returned from inside a loop (``for ...: if s > 2.0: return s, x *
i``), by a helper or by the function differentiated (``output=K``), a call's
tuple too where the function writes a ``return a, b`` out elsewhere: the loop
carries the result item by item, the flag ``ret`` saying which iteration's
items it is. It was refused ("a tuple returned from inside this
loop is not supported: assign its items to names, `break`, and return the
tuple after the loop"). Gradients at points that leave the loop by each
exit, ``jvp`` and ``jvp(grad)``, against central differences; NumPy code;
the CLI's module in a fresh interpreter. A helper's nested tuple returned
there stays refused, located, as it is from a branch."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import cli_grad, import_source
from tests.scalar_checks import assert_derivatives, fd
from tests.soak import rows_beyond

SRC = '''
import math

import numpy as np


def first_over(x):
    s = 1.0
    for i in range(5):
        s = s * x + math.sin(s)
        if s > 2.0:
            return s, x * i
    return s, x


def unpacked(x):
    a, b = first_over(x)
    return a * b + a


def indexed(x):
    return first_over(x * 3.0)[0] + first_over(x)[1] * x


def counted(x):
    s = x
    i = 0
    while True:
        s = s * 1.3 + 0.1
        i += 1
        if s > 3.0:
            return s, i
        if i > 20:
            break
    return s * 2.0, 0


def while_helper(x):
    a, n = counted(x)
    return a * a + n


def called_in_loop(x):
    t = 0.0
    for k in range(3):
        a, b = first_over(x + 0.3 * k)
        t = t + a * b
    return t


def skips(x):
    s = x
    for i in range(8):
        if i % 2 == 1:
            continue
        s = math.cos(s) * x + s
        if s > 1.5:
            return s * s, s + i
    return s, s


def continued(x):
    a, b = skips(x)
    return a - b * x


def top(x):
    if x > 10.0:
        return x, x
    s = x
    for i in range(6):
        s = math.cos(s) + x
        if s > 1.2:
            return s, s * x
    return 0.5 * s, s


def pair(x):
    return x * x, math.sin(x)


def returns_a_call(x):
    s = x
    for i in range(4):
        s = s * 1.2
        if s > 1.0:
            return pair(s)
    return s, x


def call_returned(x):
    a, b = returns_a_call(x)
    return a + b * 3.0


def whole(x):
    r = first_over(x)
    return r[0] * r[1] + sum(r)


def arrays_helper(x):
    s = x
    for i in range(4):
        s = np.tanh(s) + x
        if np.sum(s) > 3.0:
            return s, i
    return s * 2.0, -1


def arrays(x):
    s, n = arrays_helper(x)
    return np.sum(s * s) * (n + 2)


def nested(x):
    s = x
    for i in range(3):
        s = s * 1.1 + x
        if s > 5.0:
            return (s, i), x
    return (s, 0), x


def calls_nested(x):
    (a, i), b = nested(x)
    return a * b
'''

RNG = np.random.default_rng(5151)
NAMES = ["unpacked", "indexed", "while_helper", "called_in_loop", "continued", "whole",
         "call_returned"]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("loopret")), SRC, "loop_tuple_returns_src")



@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("a", [0.7, 1.45, -0.35, 2.3])
def test_a_tuple_returned_from_inside_a_loop(mod, name, a):
    assert_derivatives(getattr(mod, name), a)


@pytest.mark.parametrize("output", [0, 1])
@pytest.mark.parametrize("a", [0.7, 1.5, -0.3])
def test_the_function_differentiated_returns_it(mod, output, a):
    want = fd(lambda t: mod.top(t)[output], a)
    assert np.isclose(s2s_ad.grad(mod.top, output=output)(a), want, rtol=1e-6, atol=1e-9)
    assert np.isclose(s2s_ad.jvp(mod.top)(a, dx=1.0)[1][output], want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("scale", [1.0, 0.03])
def test_in_numpy_code(mod, scale):
    x = scale * RNG.uniform(0.2, 0.6, size=3)
    np.testing.assert_allclose(s2s_ad.grad(mod.arrays)(x), fd_gradient(mod.arrays, [x], 0),
                               rtol=1e-6, atol=1e-8)


def test_a_helper_returning_nested_tuples_there_is_refused_located(mod):
    with pytest.raises(s2s_ad.SourceError) as e:
        s2s_ad.grad(mod.calls_nested)(0.5)
    text = str(e.value)
    assert "loop_tuple_returns_src.py:" in text and "returns it once, at the end" in text \
        and "^" in text


@pytest.mark.parametrize("name,a", rows_beyond([("unpacked", 0.7), ("while_helper", 1.45)], 1))
def test_the_cli_module_in_a_fresh_interpreter(tmp_path, mod, name, a):
    (got,) = cli_grad(tmp_path, SRC, name, [a])
    assert np.isclose(float(got), fd(getattr(mod, name), a), rtol=1e-6, atol=1e-8)
