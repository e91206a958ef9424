"""Functions returning a list grown at run time, pulled back through
`s2s_ad.vjp` (tests/test_list_results.py): the cotangent is a list of the
value's length. Plain Python: the tests compare with central differences of
the cotangent's dot product with these."""

import math

import numpy as np


def trajectory(x, w, n):
    hs = [x]
    for i in range(n):
        hs.append(math.sin(hs[-1] * w) + 0.1 * x)
    return hs


def _roll(x, w, n):
    hs = [x]
    for i in range(n):
        hs.append(math.cos(hs[-1]) * w)
    return hs


def from_a_helper_sliced(x, w, n):
    ys = _roll(x, w, n)
    return ys[1:]


def states(x, w, n):
    hs = []
    h = x
    for i in range(n):
        h = np.tanh(h * w + 0.1 * i)
        hs.append(h * x)
    return hs
