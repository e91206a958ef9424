"""Everyday syntax (tests/test_syntax_more.py)."""

import math

import numpy as np


def pair(a, b):
    return a * b, a - b


def scaled(a, b=1.0, *, c=0.5):
    return a * b + c * a * a


def chained(x, y):
    s = 0.0
    if 0.0 < x < 2.0:
        s = s + x * y
    if x < y <= 3.0 < x + 5.0:
        s = s + math.sin(y)
    return s + (1.0 if -1.0 < y * x < 1.0 else 2.0) * x


def chained_in_loop(x, y):
    s = 0.0
    for i in range(4):
        if 0.5 < x * i < 2.5:
            s = s + x * i * y
    return s


def nested_unpack(x, y):
    (a, b), c = pair(x, y), x * 3.0
    (p, q), (r, t) = pair(a, c), pair(b, y)
    return a * p + b * q + c * r + t


def starred(x, y):
    t = (x, y)
    a, b, c = (*t, x * y)
    args = (a, c)
    kw = {"b": y, "c": x}
    return pair(*args)[0] + scaled(*t) + scaled(x, **kw) + b


def sums(x, y):
    xs = [x, y, x * y]
    return (sum(xs, 1.5) + sum((t * t for t in xs), start=y) + math.fsum([x, y * y])
            + math.prod(xs) + math.prod((x, y), start=2.0) + math.dist((x, y), (1.0, -2.0)))


def gammas(x, y):
    return math.lgamma(x) * y + math.gamma(y) + math.lgamma(x * y + 0.5)


def sum_of_array(w):
    return sum(np.tanh(w)) @ np.ones(w.shape[1]) + sum(w * w, 1.0)[0]


def tuple_subscript_targets(x):
    s = np.zeros(4)
    for i in range(3):
        (s[i], s[i + 1]) = pair(x[i], x[i + 1])
    return np.sum(s * s)


def calls_them_all(x, y):
    """A helper position for the scalar programs above."""
    return chained(x, y) + nested_unpack(y, x) * starred(x, y) + sums(x, y) + gammas(x + 1.0, y)


def in_a_loop(x, y):
    s = 0.0
    for k in range(3):
        s = s + calls_them_all(x + 0.1 * k, y)
    return s
