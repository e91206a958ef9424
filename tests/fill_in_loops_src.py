"""Lists made by `[c] * n` inside loops and branches (tests/test_fill_in_loops.py):
each run of the body makes a list of its own, written by index after it.
Plain Python: the tests compare s2s-ad's derivatives with central differences
of these. f(x, w, n): n an int, the lists' length (at least 1)."""

import math

import numpy as np


def in_loop(x, w, n):
    s = 0.0
    for k in range(3):
        ys = [0.0] * n
        for i in range(n):
            ys[i] = math.sin(x * (i + k + 1.0)) * w
        ys[0] += x * k
        s = s + sum(ys) * ys[-1]
    return s


def in_branch(x, w, n):
    if x > 0.0:
        ys = [x] * n
        for i in range(1, n):
            ys[i] = ys[i - 1] * w + x
        r = sum(ys)
    else:
        r = x * w
    return r


def in_while(x, w, n):
    t = 0.0
    s = 0.0
    while t < 1.0:
        ys = [w] * (n + 1)
        for i in range(n):
            ys[i + 1] = ys[i] * math.cos(x + t)
        s = s + ys[-1]
        t = t + 0.3
    return s


def filled_with_active(x, w, n):
    # the filled number carries a derivative; items read before and after a write
    s = 0.0
    for k in range(2):
        ys = [x * w] * n
        a = ys[-1]
        ys[len(ys) // 2] = w * (k + 1.0)
        for v in ys:
            s = s + v * v * a
    return s


def grown_after_fill(x, w, n):
    s = 0.0
    for k in range(2):
        ys = [x] * n
        for i in range(n):
            ys.append(ys[i] * w)
        s = s + sum(ys) * ys[-1]
    return s


def _use(ys, w):
    return sum(ys) * w + ys[0]


def passed_in_loop(x, w, n):
    s = 0.0
    for k in range(3):
        ys = [0.0] * n
        for i in range(n):
            ys[i] = x ** (i + 1) * (k + 1.0)
        s = s + _use(ys, w)
    return s


def _helper(x, w, n):
    s = 0.0
    for k in range(2):
        ys = [w] * n
        for i in range(n):
            ys[i] = ys[i] * x + k
        s = s + ys[-1] * ys[0]
    return s


def in_a_helper(x, w, n):
    return _helper(x, w, n) * x + _helper(w, x, n)


def nested_loops(x, w, n):
    s = 0.0
    for j in range(2):
        for k in range(2):
            if (j + k) % 2 == 0:
                ys = [x * (j + 1.0)] * n
                for i in range(n):
                    ys[i] += w * i
                s = s + ys[-1] * sum(ys)
    return s


# still refused, located

def one_of_two(x, w, n):
    if x > 0.0:
        ys = [x] * n
    else:
        ys = [w] * n
    return sum(ys)


def replaced_in_loop(x, w, n):
    ys = [0.0] * n
    for k in range(2):
        ys = [x * (k + 1.0)] * n
        ys[0] = w
    return sum(ys)


def in_numpy(x, n: int):
    s = 0.0
    for k in range(2):
        ys = [0.0] * n
        ys[0] = k * 1.0
        s = s + np.sum(x * x) * ys[0]
    return s


# gradient modules read back (tests/test_list_readback.py)

def top_filled(x, w, n):
    ys = [0.0] * n
    for i in range(n):
        ys[i] = math.cos(x * (i + 1.0)) * w
    return sum(ys) * ys[-1]


def _fill(x, n):
    ys = [0.0] * n
    for i in range(n):
        ys[i] = math.cos(x * (i + 1.0))
    return sum(ys) * ys[-1]


def helper_filled(x, w, n):
    return _fill(x * w, n) + x * _fill(w, n)


def comprehension(cs, x):
    return sum([c * x ** i for i, c in enumerate(cs)])


def _grow(x, w, n):
    xs = [x]
    for i in range(n):
        xs.append(math.sin(xs[-1] * w) + 0.1 * x)
    s = 0.0
    for v in xs:
        s = s + v * v
    return s


def helper_grown(x, w, n):
    return _grow(x, w, n) * w


def _grow_indexed(x, w, n):
    xs = [x, w]
    for i in range(n):
        xs.append(math.sin(xs[i] * w) + xs[-1] * 0.5)
    return sum(xs) * xs[-1]


def helper_grown_indexed(x, w, n):
    return _grow_indexed(x, w, n) + x
