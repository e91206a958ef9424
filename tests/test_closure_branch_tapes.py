"""Closure under differentiation for a loop computed at once whose body
branches: the module's ``loop_sum_fwd`` starts the values one arm keeps at
``None`` (``w = None  # defined only if its branch runs``) and returns them
on its tape, and ``loop_sum_bwd(tape, cotangents)`` unpacks its cotangents
before its tape. Read back from its file, the module is differentiated
again (the pair's tape split into its items, the placeholders started at a
number, the recorded decision tested as a number): the file's gradient and
its JVP along a random direction against central differences of the
function and of the file's gradient, with each arm taken."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import assert_file_jvp, fd_gradient, make_function
from tests.modules import import_source

RNG = np.random.default_rng(2718)

PROGRAMS = {
    # the test reads a parameter: one arm for every iteration
    "arms_by_parameter": "def f(a, s):\n    acc = 0.0\n    for i in range(3):\n"
                         "        if s > 0.5:\n            w = np.exp(a * s)\n"
                         "        else:\n            w = np.sin(a) * s\n"
                         "        acc += np.sum(w * a)\n        acc += np.sum(a * i) * s\n"
                         "    return acc",
    # a reduction in the test, an axis-free extreme in one arm (a fuzzer's program)
    "arms_with_extreme": "def f(a, s):\n    acc = 0.0\n    for i in range(1, len(a)):\n"
                         "        u = i * 1.0 / len(a) + s\n"
                         "        if np.sum(np.negative(s)) > s:\n            q = (a ** 3) * u\n"
                         "        else:\n"
                         "            q = np.tanh(a * np.min(a, axis=None, keepdims=True))\n"
                         "        acc += np.sum(q * a)\n"
                         "        acc += np.sum(np.negative(a) * np.sin(u))\n    return acc",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("s", [-0.3, 0.8])
def test_gradient_file_of_a_branching_loop_differentiates_again(tmp_path, name, s):
    f = make_function(PROGRAMS[name])
    a = RNG.uniform(0.2, 0.9, 4)
    text = s2s_ad.gradient_source(f, wrt=[0, 1])
    assert "= None  " in text and "= cotangents" in text, text  # the case this file is about
    g = import_source(str(tmp_path), text, f"closure_branch_tapes_{name}").grad_f
    da, ds = RNG.uniform(-1.0, 1.0, 4), 0.4
    assert_file_jvp(f, g, [a, s], [da, ds])
    # and reverse over reverse: a probe of the file's gradient through grad
    v = RNG.normal(size=4)

    def probe(a, s):
        ga, gs = g(a, s)
        return np.sum(ga * v) + gs * gs

    second = s2s_ad.grad(probe, wrt=(0, 1))(a, s)
    np.testing.assert_allclose(second[0], fd_gradient(probe, [a, s], 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(second[1], fd_gradient(probe, [a, s], 1), rtol=1e-5, atol=1e-6)


# Two programs of the fuzzer's --numpy-sums family (seeds 14000 and 14012) whose
# gradient files were refused when read back: a helper with an early return
# called in a loop computed at once (the arms' values compared by shape,
# np.shape(arm_value)[:-1] != ...), and a tape item that is a tuple in one arm
# (t = -1, np.shape(x)[-1]), None in the other.
FOUND = {
    "seed14000": """
def g(k, v):
    w = v * 0.5
    return np.sum(np.sin(w) * v)

def br(v, c):
    m = np.sum(v * v)
    if np.sum(v) > c:
        return np.log(np.sum(v * v) + 1.0) * v
    w = v * v
    return w * 0.5

def f(a, b, s):
    acc = 0.0
    vec = np.zeros(len(a))
    for i in range(0, 7, 2):
        u = i * 0.25 + s
        vec = vec + g(u, a)
        acc += np.sum(br((s - a) * u, s))
        acc += np.sum(np.cumsum((2.0 * b) * u) * b)
        acc += np.sum(br((s + s) * u, s))
    return acc + np.sum(vec * b)
""",
    "seed14012": """
def br(v, c):
    m = np.sum(v * v)
    if np.max(v) < c:
        return np.tanh(v) * c
    w = v * 0.5
    return w * 0.5

def f(a, b, s):
    n = len(a)
    acc = 0.0
    vec = np.zeros(len(a))
    for i in range(1, n):
        u = i * 0.25 + 0.0
        ai = a[i] * u + b[i - 1]
        acc += np.sum(br((b - s) * u, s))
        if np.sum(np.sqrt((b * b + 0.5))) > s:
            q = (b * ai) * u
        else:
            q = np.tanh(np.exp(np.tanh(ai)))
        vec = vec + q
    return acc * s + np.sum(np.sin(vec))
""",
}


READ_BACK: dict = {}
"""name -> (f, its gradient file's text, ``grad_f`` read back from it): one
module per program for its three points, so that the JVP of ``grad_f`` (4 s
to generate, the rest of a point takes 10 ms) is generated once, not three
times; the points still each check the file's gradient and its JVP."""


def _read_back(name, tmp_path_factory):
    if name not in READ_BACK:
        f = make_function(FOUND[name])
        text = s2s_ad.gradient_source(f, wrt=[0, 1, 2])
        folder = tmp_path_factory.mktemp("found")
        g = import_source(str(folder), text, f"closure_branch_found_{name}").grad_f
        READ_BACK[name] = f, text, g
    return READ_BACK[name]


@pytest.mark.parametrize("name", sorted(FOUND))
@pytest.mark.parametrize("s", [-1.9, -0.45, 0.6])
def test_found_programs_differentiate_again(tmp_path_factory, name, s):
    f, text, g = _read_back(name, tmp_path_factory)
    a, b = RNG.uniform(-1.5, 1.5, 4), RNG.uniform(-1.5, 1.5, 4)
    assert "= None  " in text and "= cotangents" in text, text
    assert_file_jvp(f, g, [a, b, s], [RNG.uniform(-1.0, 1.0, 4), RNG.uniform(-1.0, 1.0, 4), 0.3])
