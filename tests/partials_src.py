"""Losses whose data are fixed with functools.partial."""

import functools
import math

import numpy as np


def scalar_loss(x, data, k=0.5):
    return sum((x * d - k) ** 2 for d in data) + math.sin(k * x)


def regression_loss(w, X, y, reg=0.1):
    r = X @ w - y
    return np.sum(r * r) + reg * np.sum(w * w)


def two_parameters(a, b, scale):
    return scale * math.exp(a * b) + a * a


def helper_calls(x, data, n):
    total = 0.0
    for i in range(n):
        total = total + scalar_loss(x + 0.1 * i, data)
    return total


fixed = functools.partial(scalar_loss, data=[1.0, 2.0])


def calls_a_partial(x):
    return fixed(x) * 2.0
