"""Loops and comprehensions over zip and enumerate, max and min of a sequence
(test data for test_iterables.py)."""

import math


def weighted(xs, w):
    s = 0.0
    for i, x in enumerate(xs):
        s += w ** i * x
    return s


def dot_sin(xs, ys):
    s = 0.0
    for x, y in zip(xs, ys):  # ys is shorter: zip stops there
        s = s + x * math.sin(y)
    return s


def nested(xs, ys, w):
    s = 0.0
    for i, (x, y) in enumerate(zip(xs, ys), 1):
        if x > y:
            s = s + i * x * w
        else:
            s = s - y * w / i
    return s


def early_exit(xs):
    s = 1.0
    for i, x in enumerate(xs):
        if i == 2:
            break
        s = s * x + i
    return s


def comprehensions(xs, ys, w):
    a = sum(x * y for x, y in zip(xs, ys))
    b = sum(w ** i * math.sin(x) for i, x in enumerate(xs, start=1))
    c = sum([p * q for p, q in zip(xs, xs[1:])])
    return a + b + c


def softmax_sum(xs):
    m = max(xs)
    return sum(math.exp(x - m) for x in xs)


def extremes(xs, w):
    return min(x * w for x in xs) + max([w, 2.0 * w]) + max((xs[0],))
