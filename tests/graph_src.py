"""Small functions the graph and explain tests (test_graph.py, test_explain.py)
draw and explain: straight-line ones with shared temporaries and tuple items,
and loops and branches. Tests name lines of this file: append, don't insert."""

import math

import numpy as np


def reused(a, b, c):
    t = a * b
    u = math.sin(t) + c * 2.0
    return u * u + t / c


def temporaries(a, b, c):
    t = math.sin(a * b) + c * 2.0
    return t * t + a / c


def shared_temp(a, b, c):
    y = a * b + c
    return y


def norm2(xs, w):
    return sum(x * x for x in xs) * w + xs[0] * xs[-1]


def split(x, y):
    return x * y, x + y


def twice_item(x, y):
    t = split(x, y)
    a = t[0]
    b = t[0] * 2.0
    return a * b + t[1]


def returns_tuple(x, y):
    loss = (x - y) ** 2
    reg = 0.1 * x * x
    return loss + reg, loss, reg


# -- loops and branches ----------------------------------------------------------

def power(x, n):
    s = 1.0
    for i in range(n):
        s = s * x
    return s


def horner(cs, x):
    s = 0.0
    for c in cs:
        s = s * x + c
    return s


def clipped(x, y):
    if x > y:
        z = x * y
    else:
        z = x + y * y
    return z * x


def damped(x, k, n):
    v = x
    for i in range(n):
        if v > 1.0:
            v = v * k
        else:
            v = v + x * 0.5
    return v


def early_exit(x, n):
    s = x
    for i in range(n):
        s = s * 1.5 + x
        if s > 10.0:
            break
    return s


def tuple_in_loop(x, n):
    s = 0.0
    for i in range(n):
        p, q = split(x, s + 1.0)
        s = s + p * q
    return s


def array_loop(W, x, k: int):
    h = x
    for _ in range(k):
        h = np.tanh(W @ h) + 0.5 * h
    return np.sum(h * h)


def _pass_second(u, v):
    return np.copy(v)


def call_before_indexed_loop(a, b, s):
    # b's adjoint starts as zeros (the loop adds into it by index) and gets the
    # call's db_1 before the loop: the edge into the loop carries db_1
    acc = 0.0
    for i in range(3):
        acc = acc + _pass_second(b[i], s) * b[i]
    r = a * 0.0 + _pass_second(b, a)
    return acc + s * r[2] + np.sum(a * 0.0)


def root_in_one_arm(x, c):
    """``r`` is read in the else arm only: the sweep runs the square root's
    backward under a guard (``if not t3: dt2 = dr / (2 * r) else: dt2 = 0.0``)
    and reads ``dt2`` after it."""
    r = math.sqrt(x * x + 1.0)
    if c > 0:
        y = x * 2.0
    else:
        y = math.log(r)
    return y * x


def root_in_other_arm(x, c):
    r = math.sqrt(x * x + 1.0)
    if c > 0:
        y = math.log(r)
    else:
        y = x * 2.0
    return y * x


def root_in_inner_arm(x, c):
    """The guard tests two recorded decisions (``t4`` is recorded only where
    ``t3`` did not hold)."""
    r = math.sqrt(x * x + 1.0)
    if c > 0:
        y = x
    elif c > -1:
        y = x * 2.0
    else:
        y = math.log(r)
    return y * x
