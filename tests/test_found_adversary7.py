"""The seventh adversarial round: about 440 programs, each construct put in
many positions, checked with ``grad``, ``jvp`` and ``jvp(grad)`` against
central differences (and ``hvp``/``hessian`` on 150 more). No wrong
gradient; one internal crash and a set of refusals of ordinary code, each
now differentiated and checked here against central differences:

* ``f = jax.vmap(g)`` then ``f(x)`` crashed inside s2s-ad (``AttributeError:
  'Attribute' object has no attribute 'args'``); a ``jax.vmap(g)`` that is
  neither called nor bound to a name only called is refused, located;
* a helper's tuple carried across a loop with ``break``/``continue``, or
  rebound to a tuple written out in one arm (``r = (r[1], r[0])``, an
  ``elif``): "`r` is a tuple of 2 after one arm ... and a tuple after the
  other";
* a helper's tuple read by a nested function or a ``sorted`` key: "`h` is
  passed a tuple returned by a call";
* ``for v in [x, x * x, math.sin(x)]`` (a display, not a name): "a `for`
  loop must iterate over `range(...)`";
* ``list(map(lambda t: ..., xs))``: "the call `list` is not supported" (the
  inner ``map`` was rewritten first);
* ``sorted(grow(x))``, ``grow`` returning a list of a known length: "`grow`
  returns 4 values" (and the call was lowered twice);
* ``math.hypot`` of one or three coordinates;
* a ``def`` or ``lambda`` in a loop's body: "the nested function 'h' is
  defined inside an `if`, `for` or `while`" (it reads the enclosing
  variables when called, as a closure defined before the loop would);
* a default value reading the enclosing function's variables (``def h(t,
  scale=k)``): "its default values may read only module-level names" (the
  value is taken where the ``def`` is, as Python evaluates it).
"""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.modules import import_source
from tests.scalar_checks import assert_derivatives

SRC = '''
import math


def pair(x):
    return x * x, math.sin(x)


def carried_with_break(x):
    r = pair(x)
    for i in range(3):
        if r[0] > 0.9:
            break
        r = pair(r[0] + 0.3)
    return r[0] + r[1]


def carried_with_continue(x):
    r = pair(x)
    for i in range(3):
        if i == 1:
            continue
        r = pair(r[0] + 0.3)
    return r[0] + r[1]


def swapped_in_arm(x):
    r = pair(x)
    if x > 0.5:
        r = (r[1], r[0])
    return r[0] * 2.0 + r[1]


def elif_arms(x):
    r = pair(x)
    if x > 0.5:
        r = pair(x * 2.0)
    elif x > 0.2:
        r = (x, x)
    return r[0] * 2.0 + r[1]


def read_by_nested_function(x):
    r = pair(x)

    def h(t):
        return t * r[0]

    return h(x) + r[1]


def read_by_sort_key(x):
    r = pair(x)
    ys = sorted([x, x * 2.0, 0.5], key=lambda t: abs(t - r[1]))
    return ys[0] * 2.0 + ys[1]


def over_a_display(x):
    s = 0.0
    for v in [x, x * x, math.sin(x)]:
        s = s + v * v
    for i, v in enumerate((x, math.cos(x))):
        s = s + v * i
    return s


def listed_map(x):
    return sum(list(map(lambda t: t * t, [x, 2.0 * x])))


def grow(x):
    xs = [x]
    for i in range(3):
        xs.append(xs[-1] * 0.5 + x)
    return xs


def sorted_helper_list(x):
    return sorted(grow(x))[0] + max(grow(x))


def defined_in_loop(x):
    s = 0.0
    for i in range(3):
        def h(t):
            return t * i + x
        g = lambda t: t * s
        s = s + h(s + x) + g(x)
    j = 0
    while j < 2:
        def k(t):
            return t * j + math.sin(x)
        s = s + k(s)
        j += 1
    return s


def defaults_read_locals(x):
    k = 2.0 * x
    def h(t, scale=k):
        return t * scale
    g = lambda t, c=k * k: t * c
    k = 5.0
    s = h(x) + h(x, 3.0) + g(x) + k
    j = 0
    while j < 3:
        def w(t, *, by=x * j):
            return t * by + math.sin(t)
        s = s + w(s * 0.1 + x)
        j += 1
    return s


def hypots(x):
    return math.hypot(x * 2.0) + math.hypot(x, x, x, 1.0)
'''

NAMES = ["carried_with_break", "carried_with_continue", "swapped_in_arm", "elif_arms",
         "read_by_nested_function", "read_by_sort_key", "over_a_display", "listed_map",
         "sorted_helper_list", "hypots", "defined_in_loop", "defaults_read_locals"]

JAX_SRC = '''
import jax
import jax.numpy as jnp


def g(t):
    return jnp.sin(t) * t


def bound(x):
    f = jax.vmap(g)
    return jnp.sum(f(x))


def bound_lambda(x):
    f = jax.vmap(lambda t: jnp.sin(t) * t)
    return jnp.sum(f(x)) + jnp.sum(f(x * 2.0))


def passed_on(x):
    f = jax.vmap(g)
    h = f
    return jnp.sum(h(x))
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("adv7")), SRC, "adversary7_src")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("a", [0.7, 0.3, 1.1, -0.6])
def test_refused_before_now_differentiated(mod, name, a):
    assert_derivatives(getattr(mod, name), a)


@pytest.fixture(scope="module")
def jax_mod(tmp_path_factory):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return import_source(str(tmp_path_factory.mktemp("adv7jax")), JAX_SRC, "adversary7_jax")


@pytest.mark.parametrize("name", ["bound", "bound_lambda"])
def test_a_vmap_bound_to_a_name(jax_mod, name):
    fn = getattr(jax_mod, name)
    x = np.array([0.3, 0.9, -0.4])
    want = [float((fn(x + e) - fn(x - e)) / 2e-6) for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(s2s_ad.grad(fn)(x), want, rtol=1e-6, atol=1e-9)


def test_a_vmap_passed_on_is_refused_located(jax_mod):
    with pytest.raises(s2s_ad.SourceError) as e:
        s2s_ad.grad(jax_mod.passed_on)(np.array([0.3, 0.9]))
    text = str(e.value)
    assert "adversary7_jax.py:" in text and "is read where it is called" in text and "^" in text
