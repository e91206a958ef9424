"""Lists read at an index the caller passes as an int parameter (``xs[i]``),
in each position (tests/test_index_params.py)."""

import math


def at_param(xs, i):
    return xs[i] * xs[0] + math.sin(xs[-i])


def around(xs, i):
    return xs[i + 1] * xs[i - 1] - 2.0 * xs[i]


def circular(xs, i):
    s = 0.0
    for j in range(len(xs)):
        s = s + xs[(i + j) % len(xs)] * xs[j]
    return s


def local_list(x, y, i):
    zs = [x, y, x * y, math.exp(x - y)]
    return zs[i] * x + zs[i - 1]


def _pick(xs, i):
    return xs[i] * xs[i]


def _pick_twice(xs, i):
    return _pick(xs, i) + _pick(xs, i - 1)


def through_helpers(xs, i):
    return _pick_twice(xs, i) * xs[0]


def in_loop(xs, i):
    s = 0.0
    for k in range(3):
        s = s * 0.5 + xs[i] * math.cos(xs[k])
    return s


def in_while(xs, i):
    s, k = 0.0, 0
    while k < len(xs):
        s = s + xs[k] * xs[i]
        k += 1
    return s


def in_branches(xs, i):
    if xs[0] > 0.0:
        return xs[i] * 3.0 + xs[0]
    return xs[i - 1] ** 2
