"""Structures carried across a loop's iterations: a name holding a tuple, a
NamedTuple or dataclass instance or a dict, rebound in the loop (``state =
step(state, x)``, ``p = (p[1] * x, p[0])``), is carried leaf by leaf
(s2s_ad/frontend/loop_structures.py); it was refused ("a loop carries single
values"). Gradients against central differences: in code of numbers and
NumPy code, ``for`` and ``while`` loops, nested loops, loops in helpers and
helpers called in loops, under a branch, with `break`, `continue` and
`return` in the loop (whose arm keeps the structure it had: that arm first
stood in zeros for it, as after a `return` at the top level, and `break` gave
0.0 where 28.0 is right), with `jvp` and `jvp(grad(f))` too; and a structure
whose shape changes in the loop is refused, located."""

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
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class State(NamedTuple):
    a: float
    b: float


@dataclass
class Params:
    w: object
    c: object
    mode: str


def step(s, x):
    return State(s.a * x + s.b, s.b * 0.5 + math.sin(x))


def named(x):
    s = State(x, 2.0 * x)
    for i in range(3):
        s = step(s, x)
    return s.a + s.b


def swapped(x, y):
    p = (x, y)
    for i in range(4):
        p = (p[1] * x, p[0] + 0.5)
    return p[0] * p[1]


def keyed(x):
    d = {"a": x, "b": x * x}
    k = 0
    while k < 3:
        d = {"a": d["a"] * d["b"], "b": d["b"] + 0.1 * k}
        k += 1
    return d["a"]


def nested(x):
    s = State(x, 1.0)
    for i in range(2):
        t = (s.a, 0.0)
        for j in range(3):
            t = (t[0] * 0.9 + s.b, t[1] + t[0])
        s = State(t[1], s.b * x)
    return s.a + s.b


def branchy(x):
    s = State(x, 1.0)
    for i in range(3):
        if s.a > 0.0:
            s = step(s, x)
        else:
            s = State(s.b, s.a * x)
    return s.a * s.b


def inner(x, n):
    s = State(x, 0.5)
    for i in range(n):
        s = step(s, x)
    return s.a


def calls_a_looping_helper(x):
    total = 0.0
    for k in range(2):
        total = total + inner(x + k, 2)
    return total


def arrays(w, x):
    p = Params(w, x, "tanh")
    for i in range(3):
        h = np.tanh(p.w @ p.c) if p.mode == "tanh" else p.w @ p.c
        p = Params(p.w * 0.9, h, p.mode)
    return np.sum(p.c ** 2)


def broken(x):
    s = State(x, 1.0)
    for i in range(5):
        if s.a > 3.0:
            break
        s = State(s.a * 1.5 + x, s.b + s.a)
    return s.a * s.b


def continued(x):
    p = (x, 1.0)
    k = 0
    while k < 6:
        k += 1
        if p[0] > 4.0:
            break
        if k == 2:
            continue
        p = (p[0] * 1.3 + p[1], p[1] * x)
    return p[0] + p[1]


def returned(x):
    p = (x, 1.0)
    for i in range(3):
        if x > 1.0:
            return p[0] * 2.0
        p = (p[1] * x, p[0])
    return p[0] * p[1]


class Cell(NamedTuple):
    h: object
    c: object


def cell(s, w, x):
    g = np.tanh(w @ s.h + x)
    c = s.c * 0.5 + g
    return Cell(np.tanh(c) * g, c)


def rnn(w, x):
    s = Cell(np.zeros(3), np.zeros(3))
    for t in range(x.shape[0]):
        s = cell(s, w, x[t])
    return np.sum(s.h ** 2) + np.sum(s.c)


def rnn_while(w, x):
    s = Cell(x[0], x[1])
    t = 0
    while t < 3:
        if np.sum(s.c) > 5.0:
            break
        s = cell(s, w, x[t])
        t += 1
    return np.sum(s.h * s.c)


def reshaped(x):
    p = (x, 1.0)
    for i in range(2):
        p = (p[0] * x, p[1], 3.0)
    return p[0]
'''

RNG = np.random.default_rng(4711)


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    return import_source(str(tmp_path_factory.mktemp("loopstruct")), SRC, "loop_structures_src")


@pytest.mark.parametrize("name", ["named", "keyed", "nested", "branchy",
                                  "calls_a_looping_helper", "broken", "continued", "returned"])
@pytest.mark.parametrize("a", [0.6, -0.45, 1.3])
def test_a_structure_carried_across_iterations(mod, name, a):
    assert_derivatives(getattr(mod, name), a, atol=1e-9)


def test_a_tuple_carried_with_two_parameters(mod):
    x, y = 0.8, -0.3
    dx, dy = s2s_ad.grad(mod.swapped, wrt=(0, 1))(x, y)
    assert np.isclose(dx, fd(lambda t: mod.swapped(t, y), x), rtol=1e-6)
    assert np.isclose(dy, fd(lambda t: mod.swapped(x, t), y), rtol=1e-6)


def test_a_dataclass_of_arrays_carried(mod):
    w, x = 0.5 * RNG.normal(size=(3, 3)), RNG.normal(size=3)
    dw, dx = s2s_ad.grad(mod.arrays, wrt=(0, 1))(w, x)
    np.testing.assert_allclose(dw, fd_gradient(mod.arrays, [w, x], 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dx, fd_gradient(mod.arrays, [w, x], 1), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["rnn", "rnn_while"])
def test_a_recurrent_state_as_a_namedtuple_of_arrays(mod, name):
    """An RNN cell's state, a NamedTuple of two arrays, carried through a
    loop: the gradient and a Hessian-vector product against central
    differences."""
    fn = getattr(mod, name)
    w, x = 0.5 * RNG.normal(size=(3, 3)), RNG.normal(size=(4, 3))
    for k, d in enumerate(s2s_ad.grad(fn, wrt=(0, 1))(w, x)):
        np.testing.assert_allclose(d, fd_gradient(fn, [w, x], k), rtol=1e-6, atol=1e-9)
    v = RNG.normal(size=(3, 3))
    g = s2s_ad.grad(fn, wrt=0)
    want = (g(w + 1e-5 * v, x) - g(w - 1e-5 * v, x)) / 2e-5
    np.testing.assert_allclose(s2s_ad.hvp(fn, wrt=0)(w, x, v), want, rtol=1e-5, atol=1e-7)


def test_a_structure_changing_shape_in_the_loop_is_refused_located(mod):
    with pytest.raises(s2s_ad.SourceError) as e:
        s2s_ad.grad(mod.reshaped)(0.5)
    text = str(e.value)
    assert "loop_structures_src.py:" in text and "keeps its shape" in text and "^" in text


@pytest.mark.parametrize("name,a", rows_beyond([("named", 0.6), ("continued", -0.45),
                                                 ("broken", 1.3)], 1))  # all with --soak
def test_the_cli_module_in_a_fresh_interpreter(tmp_path, mod, name, a):
    """`s2s-ad grad FILE:fn -o out.py`, then `out.py` imported and called in a
    fresh interpreter without s2s-ad: the same gradient as central differences."""
    (got,) = cli_grad(tmp_path, SRC, name, [a])
    assert np.isclose(float(got), fd(getattr(mod, name), a), rtol=1e-6, atol=1e-9)
