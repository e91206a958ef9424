"""Functions taking lists of any length: read by index (constant, negative,
computed at run time), by `len`, `sum`, and iterated over with `for`,
`enumerate`, `zip`, `reversed` (tests/test_runtime_lists.py)."""

import math


def horner(coeffs, x):
    s = 0.0
    for i in range(len(coeffs)):
        s = s * x + coeffs[i]
    return s


def horner_iter(coeffs, x):
    s = 0.0
    for c in coeffs:
        s = s * x + c
    return s


def indices(xs, w):
    t = xs[-1] * w + xs[0]
    for i in range(len(xs) - 1):
        t = t + xs[i] * xs[i + 1] * w
    return t + xs[len(xs) - 1] * xs[-2]


def enumerate_zip(xs, ys, w):
    t = 0.0
    for i, x in enumerate(xs, 1):
        t = t + math.sin(x * w) * i
    for x, y in zip(xs, ys):
        t = t + x * y
    return t + sum(ys) * w


def backwards(xs, x):
    s = 0.0
    for c in reversed(xs):
        s = s * x + c
    return s


def step(s, c, x):
    return math.tanh(s * x + c)


def nested_helper(xs, x):
    s = 0.5
    for i in range(len(xs)):
        for j in range(i + 1):
            s = step(s, xs[j] * xs[i], x)
        if s > 0.3:
            s = s * xs[i]
    return s


def empty_ok(xs, x):
    t = x * x
    for v in xs:
        t = t + v * x
    return t + sum(xs)


def unpacks(xs, w):
    a, b = xs
    return a * b * w


def fixed_trips(c, x):
    s = 0.0
    for i in range(4):  # a constant trip count: the list's length is given or found
        s = s * x + c[i]
    return s
