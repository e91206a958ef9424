"""Programs in the style of google/tangent's test functions that s2s-ad
refused (tests/test_tangent_style.py differentiates them)."""

import numpy as np


# -- NumPy's ufuncs of the arithmetic operators ------------------------------------

def ufunc_numbers(a, b):
    return np.multiply(a, 3.0) + np.divide(b, a) - np.subtract(a, b) * np.add(b, 1.0)


def ufunc_arrays(x, m):
    # broadcasting: x of shape (4,) against m of shape (3, 4)
    y = np.multiply(x, m) + np.true_divide(m, 2.0) - np.subtract(x, np.multiply(m, m))
    return np.sum(np.divide(y, np.add(x * x, 1.0)))


def ufunc_displays(a, b):
    return np.sum(np.multiply([a, b], [b, 2.0]) + np.add((a, a * b), 1.5))


def _scaled(v, k):
    return np.multiply(v, k)


def ufunc_loop_helper(x, k):
    s = 0.0
    for i in range(3):
        x = np.add(_scaled(x, k), np.sin(x))
        s = s + np.sum(np.subtract(x, float(i)))
    return s


def ufunc_where(x, y):
    return np.sum(np.multiply(x, y, where=x > 0))


def ufunc_list(xs, w):
    return np.sum(np.multiply(xs, w))


# -- a tuple or list indexed by an int parameter, in NumPy code ----------------------

def picked(a, b, c, i):
    x = a, b, c
    return x[i]


def tuple_at_param(a, b, c, i):
    x = a, b, np.tanh(c)
    return np.sin(x[i]) * x[-1 - i]


def tuple_at_param_arithmetic(x, i):
    parts = (x[0] * x[1], np.exp(x[2]), x[1] - x[0])
    return np.sum(x) * parts[(i + 1) % 3] + parts[2 * i - 2]


def helper_at_param(a, b, c, i):
    # a NumPy caller handing its int on to a helper of numbers that indexes a tuple
    return np.sum(picked(a, b, c, i)) * np.sin(a)


def helper_at_param_loop(x, n):
    s = 0.0
    for k in range(n):
        s = s + picked(x[0], x[1], x[2], n - 1 - k) * np.cos(x[k])
    return s


def list_param_at_param(xs, i):
    return np.sin(xs[i]) * xs[i - 1]


# -- NumPy's reductions of a tuple of numbers or arrays --------------------------------

def pair(a):
    return 2.0 * a, a * a


def sum_of_tuple(a, b):
    t = (a * b, np.sin(a), 1.5)
    return np.sum(t) + np.sum((b, b * b))


def reductions_of_tuple(x):
    t = (x[0] * x[1], np.exp(x[2]), x[1])
    return np.mean(t) + np.max(t) * np.prod(t) - np.min(t)


def sum_of_returned_tuple(a):
    s = 0.0
    for k in range(2):
        v = pair(a * (k + 1.0))
        s = s + np.sum(v)
    return s


def arrays(x):
    return x * x, np.cos(x)


def sum_of_tuple_of_arrays(x):
    v = arrays(x)
    return np.sum(v) + np.sum((x * 2.0, np.sin(x))) * np.mean(v)
