"""Values read only in one arm of a branch, whose producers have local
derivatives that are infinite where the other arm runs (a root or a
logarithm at zero): tests/test_untouched.py."""

import math

import numpy as np


def radial(x, y):
    r = math.sqrt(x * x + y * y)
    if r < 1e-4:
        return 1.0 + x
    return math.sin(r) / r + x


def norm(x, y):
    return math.sqrt(x * x + y * y)


def radial_helper(x, y):
    r = norm(x, y)
    if r < 1e-4:
        return 1.0 + x * y
    return math.sin(r) / r + x


def nested_roots(x, y):
    s = x * x + y * y
    r = math.sqrt(math.sqrt(s))
    if s < 1e-8:
        return x + 2.0 * y
    return math.log(r) + y


def three_arms(x, y):
    r = math.sqrt(x * x + y * y)
    a = math.log(r + 1e-300) if r > 0.0 else 0.0
    if r < 1e-4:
        out = 2.0 * x
    elif r < 1.0:
        out = r * y
    else:
        out = a * x
    return out + y


def in_a_loop(x, y, n):
    total = 0.0
    for i in range(n):
        r = math.sqrt(x * x + (y - i) ** 2)
        if r > 0.5:
            total += r * x
        else:
            total += y
    return total


def radial_np(v):
    r = np.sqrt(np.sum(v * v))
    if r < 1e-4:
        return np.sum(v) + 1.0
    return np.sin(r) / r + np.sum(v)


def normalised(v, w):
    n = np.linalg.norm(v)
    if n < 1e-3:
        return np.sum(v * w) * 3.0
    return np.sum(v / n * w)


def touched_by_value(x, z):
    r = math.sqrt(x)
    if z > -1.0:
        return r * z + x
    return x


def elif_threshold(x, y):
    r = math.sqrt(x * x + y * y)
    if x > 10.0:
        out = x * y
    elif r < 1e-4:
        out = 1.0 + x
    else:
        out = math.sin(r) / r + x
    return out


def nested_in_both(x, y):
    r = math.sqrt(x * x + y * y)
    if y > 0.5:
        if r > 2.0:
            out = r * x
        else:
            out = x
    else:
        if r < 1e-4:
            out = 3.0 * y
        else:
            out = math.log(r) * y
    return out
