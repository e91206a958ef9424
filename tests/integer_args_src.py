"""Programs whose parameter sets a helper's trip count or index
(tests/test_integer_args.py)."""

import math

import numpy as np

COEFFS = [0.5, -1.25, 2.0, 0.75]


def euler(x, s):
    h = 1.0 / s
    y = x
    for i in range(s):
        y = y + h * math.sin(y)
    return y


def scaled(x, s):
    return euler(x, s) * 2.0


def shifted(x, n):
    return euler(x, n + 1) + x


def outer(x, s):
    return scaled(x, s) - x * x


def term(x, i):
    return COEFFS[i] * x ** 2 + i * x


def picked(x, i):
    return term(x, i) + x


def euler_np(x, s):
    h = 1.0 / s
    y = x
    for i in range(s):
        y = y + h * np.sin(y)
    return y


def total_np(x, s):
    return np.sum(euler_np(x, s))


def repeated(x, s):
    total = 0.0
    for k in range(2):
        if x > 0.0:
            total = total + euler(x, s) * (k + 1)
        else:
            total = total - x
    return total
