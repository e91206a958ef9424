"""Closure under differentiation for the reverse of a write into one element
that a later write overwrites: the gradient module reads the element's
adjoint, then zeroes it (``dt = dp[1] + 0.0``, ``dp[1] = 0.0``). Read back
from its file, that module is differentiated again: its JVP along a random
direction against central differences of the file's gradient, with the
writes at the top level, in both arms of a branch, in a loop and in a helper
called in a loop. (Without the ``+ 0.0`` the module read back was refused:
the element could have been a view of ``dp``, which the zero then changes;
and the adjoint of a slice whose bound the tape holds was refused as an
assignment at an index of no known kind.)"""

from __future__ import annotations

import re

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import assert_file_jvp, make_function
from tests.modules import import_source

RNG = np.random.default_rng(3141)

HELPER = """
def br(v, c):
    m = np.sum(v * v)
    p = np.zeros(2)
    p[0] = np.sum(v) * 0.5
    if np.sum(v * v) > c:
        p[1] = np.sum(v / np.sqrt(m))
    else:
        p[0] = np.sum(v * v)
    return np.sum(p * p) * v
"""

PROGRAMS = {
    "overwritten": "def f(a, s):\n    p = np.zeros(3)\n    p[0] = a[0] * s\n"
                   "    p[0] = p[0] * a[1] + s\n    p[2] = np.sin(a[2])\n"
                   "    return np.sum(p * p * a)",
    "in_branch": HELPER + "\ndef f(a, s):\n    return np.sum(br(a * s, 0.5))",
    "in_loop": "def f(a, s):\n    p = np.zeros(2)\n    for i in range(3):\n"
               "        p[0] = p[0] * s + a[i]\n        p[1] = np.tanh(p[0]) * a[i]\n"
               "    return p[0] * p[1]",
    # a loop computed at once reads a[1:1 + rows_n]: the slice's bound is on the
    # tape, of no kind the module read back says; its adjoint is written there
    "batched_slice": "def h(a, s):\n    acc = 0.0\n    for i in range(1, 3):\n"
                     "        acc += np.sum(np.sin(a[i] * s) * a)\n    p = np.zeros(2)\n"
                     "    p[0] = acc\n    p[0] = p[0] * s\n    return np.sum(p * p)\n\n"
                     "def f(a, s):\n    t = 0.0\n    for k in range(2):\n"
                     "        t = t + h(a, s + k)\n    return t",
    "helper_in_loop": HELPER + "\ndef f(a, s):\n    acc = 0.0\n    for i in range(1, 3):\n"
                      "        acc += np.sum(br(a * (i * s), s))\n    return acc",
}


READ_BACK: dict = {}
"""name -> (f, its gradient file's text, grad_f read back from it): once for
both values of ``c``, so that the JVP of ``grad_f`` (s2s-ad caches it per
function) is generated once, not for each; each value still checks it."""


def _read_back(name, tmp_path_factory):
    if name not in READ_BACK:
        f = make_function(PROGRAMS[name])
        text = s2s_ad.gradient_source(f, wrt=[0, 1])
        folder = tmp_path_factory.mktemp("closure_elements")
        READ_BACK[name] = f, text, import_source(str(folder), text,
                                                 f"closure_elements_{name}").grad_f
    return READ_BACK[name]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("c", [0.3, 1.7])
def test_gradient_file_with_zeroed_elements_differentiates_again(tmp_path_factory, name, c):
    f, text, g = _read_back(name, tmp_path_factory)
    a, s = RNG.uniform(0.2, 0.9, 3), c
    assert re.search(r"\] \+ 0\.0 ", text), text
    da, ds = RNG.uniform(-1.0, 1.0, 3), 0.4
    assert_file_jvp(f, g, [a, s], [da, ds])
