"""A module-level table of functions read at a key known while lowering
(``ACTIVATIONS[name](x)`` with ``name`` a string parameter or a constant,
``f = ACTIVATIONS["tanh"]`` then ``f(x)``, ``g = math.sin`` then ``g(x)``):
the function at that key is called as if written there. Each was refused
("`ACTS[act]` is not supported as a callee", "`ACTS` is a dict; only numbers
can be used as values here", "`f` is a local value"). The table is watched
like the other globals the code depends on: an item replaced, a key added or
the name bound to another table gives new code on the next call (checked
below; it would be a stale, wrong gradient otherwise). Gradients against
central differences, in code of numbers and NumPy code, in a loop and a
helper."""

from __future__ import annotations

import math

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import fd_gradient
from tests.modules import import_source
from tests.scalar_checks import assert_derivatives

SRC = '''
import math

import numpy as np


def relu(t):
    return t if t > 0.0 else 0.0


def cube(t):
    return t * t * t


ACTS = {"relu": relu, "sin": math.sin, "sq": lambda t: t * t}
STEPS = (math.cos, cube)
NP_ACTS = {"tanh": np.tanh, "soft": lambda t: np.log1p(np.exp(t))}


def by_parameter(x, act="sin"):
    return ACTS[act](x) * 2.0


def switched(x):
    return by_parameter(x) + by_parameter(x, "sq") + by_parameter(x, act="relu")


def aliased(x):
    f = ACTS["sq"]
    g = math.sin
    h = cube
    return f(x) + g(x) * h(x) + STEPS[0](x)


def in_loop(x):
    s = 0.0
    for k in range(3):
        s = s + ACTS["sin"](x * k) + STEPS[1](s * 0.1)
    return s


def layer(w, x, act):
    return NP_ACTS[act](w * x)


def arrays(w, x, kind="soft"):
    h = layer(w, x, kind)
    f = NP_ACTS["tanh"]
    return np.sum(f(h) * x)
'''


@pytest.fixture
def mod(tmp_path):
    # a module of its own per test: the tests below change its tables
    return import_source(str(tmp_path), SRC, "function_tables_src")


@pytest.mark.parametrize("name", ["switched", "aliased", "in_loop"])
@pytest.mark.parametrize("a", [0.7, -0.4])
def test_a_function_read_from_a_table(mod, name, a):
    assert_derivatives(getattr(mod, name), a)


def test_in_numpy_code(mod):
    rng = np.random.default_rng(3)
    w, x = rng.normal(size=4), rng.normal(size=4)
    for kind in ("soft", "tanh"):
        got = s2s_ad.grad(mod.arrays, wrt=(0, 1))(w, x, kind)
        for i in range(2):
            want = fd_gradient(lambda a, b: mod.arrays(a, b, kind), [w, x], i)
            np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-9)


def test_a_table_changed_after_the_gradient_was_made(mod):
    """An item replaced, a key added, the name bound to another table: the
    same derivative object gives the gradient of the function as it is now."""
    g = s2s_ad.grad(mod.by_parameter)
    assert np.isclose(g(0.7), 2.0 * math.cos(0.7))
    mod.ACTS["sin"] = mod.cube
    assert np.isclose(g(0.7), 6.0 * 0.7 ** 2)
    mod.ACTS["extra"] = math.exp
    assert np.isclose(g(0.7), 6.0 * 0.7 ** 2)
    mod.ACTS = {"sin": math.sinh}
    assert np.isclose(g(0.7), 2.0 * math.cosh(0.7))
    x = np.array([0.3, -0.5])
    ga = s2s_ad.grad(mod.arrays, wrt=1)
    mod.NP_ACTS["soft"] = np.sin
    np.testing.assert_allclose(ga(np.ones(2), x),
                               fd_gradient(lambda b: mod.arrays(np.ones(2), b), [x], 0),
                               rtol=1e-6, atol=1e-9)


def test_a_missing_key_is_refused_located(mod):
    with pytest.raises(s2s_ad.SourceError) as e:
        s2s_ad.grad(mod.by_parameter)(0.5, "gelu")
    text = str(e.value)
    assert "function_tables_src.py:" in text and "has no item 'gelu'" in text and "^" in text
