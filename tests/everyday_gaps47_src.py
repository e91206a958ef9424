"""Functions for tests/test_everyday_gaps47.py: forms everyday code writes
that s2s-ad once refused or checked loosely (a run-time list slice under
``checkpoint=True``, ...)."""

import numpy as np


# -- a slice of a list at a run-time bound, checkpoint=True -------------------

def slice_head(xs, n):
    ys = xs[:n]
    s = 0.0
    for y in ys:
        s = s * 0.5 + np.sin(y) * y
    return s


def slice_last(xs):
    ys = xs[:len(xs) - 1]
    s = 0.0
    for k in range(3):
        for y in ys:
            s = s * 0.5 + y * xs[k]
    return s


def slice_built(x, n):
    xs = [x, 2.0 * x, x * x]
    ys = xs[:n]
    return sum(ys) * x


def _head_sum(xs, n):
    return sum(xs[:n])


def slice_helper(xs, n):
    s = 0.0
    for k in range(3):
        s = s + _head_sum(xs, n) * xs[k] + s * 0.25
    return s


def comprehension_then_loop(xs):
    ys = [y * y for y in xs]
    s = 0.0
    for y in ys:
        s = s * 0.5 + np.sin(y)
    return s
