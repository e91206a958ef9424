"""Array parameters read by index in a loop (tests/test_read_once.py): where
each element is read once, the reverse sweep assigns its adjoint
(``dx[i + 1] = g``); where an element may be read twice, it adds."""

import numpy as np

# -- each element read once: assigned --------------------------------------------


def pairs(x, a: float):
    s = 0.0
    for i in range(0, len(x) - 1, 2):  # s2s-ad: loop
        s = s + np.sin(x[i]) * x[i + 1] * a
    return s


def triples_from_one(x, a: float):
    s = 0.0
    for i in range(1, len(x) - 2, 3):  # s2s-ad: loop
        s = s + x[i] * x[i + 2] * a + np.cos(x[i + 1])
    return s


def cell(u, v, h):
    return np.tanh(u * h + v)


def rows_through_a_helper(x, a: float):
    h = np.ones(x.shape[1]) * a
    for i in range(0, x.shape[0], 2):  # s2s-ad: loop
        h = cell(x[i], x[i + 1], h)
    return np.sum(h * h)


def outer(x, a: float):
    return rows_through_a_helper(x, a) * a


def read_in_a_branch(x, a: float):
    s = 0.0
    for i in range(0, len(x) - 2, 3):  # s2s-ad: loop
        v = x[i]
        if v > 0.0:
            s = s + np.sin(v) * x[i + 2] * a
        else:
            s = s - v * a
    return s


ONCE = [pairs, triples_from_one, rows_through_a_helper, outer, read_in_a_branch]

# -- an element may be read twice: added ---------------------------------------------


def overlapping(x, a: float):
    s = 0.0
    for i in range(len(x) - 1):  # s2s-ad: loop
        s = s + x[i] * x[i + 1] * a
    return s


def one_step_back(x, a: float):
    s = 0.0
    for i in range(1, len(x), 2):  # s2s-ad: loop
        s = s + x[i] * x[i - 1] * a
    return s


def also_before_the_loop(x, a: float):
    s = x[0] * a
    for i in range(0, len(x) - 1, 2):  # s2s-ad: loop
        s = s + x[i] * x[i + 1]
    return s


def also_whole(x, a: float):
    s = np.sum(x * x) * a
    for i in range(0, len(x) - 1, 2):  # s2s-ad: loop
        s = s + x[i] * x[i + 1]
    return s


def same_element_twice(x, a: float):
    s = 0.0
    for i in range(0, len(x) - 1, 2):  # s2s-ad: loop
        s = s + x[i] * a + np.sin(x[i]) * x[i + 1]
    return s


def in_two_loops(x, a: float):
    s = 0.0
    for i in range(0, len(x) - 1, 2):  # s2s-ad: loop
        s = s + x[i] * x[i + 1] * a
    for j in range(0, len(x) - 1, 2):
        s = s + x[j] * a
    return s


def nested(x, a: float, n: int):
    s = 0.0
    for k in range(n):
        for i in range(0, len(x) - 1, 2):
            s = s * a + x[i] * x[i + 1]
    return s


ADDED = [overlapping, one_step_back, also_before_the_loop, also_whole, same_element_twice,
         in_two_loops, nested]
