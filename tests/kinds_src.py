"""Helpers that never name NumPy, called with arrays and with numbers (test
data for test_kinds.py). Whether a value is an array comes from the call
site's arguments, never from whether a helper's source mentions ``np``."""

import numpy as np


def scale(u, s):
    return u * s


def f_scale(x, s):
    return np.sum(scale(x, s))


def shift(u, c):
    # a helper of a helper: neither names NumPy
    return scale(u, c) + c


def f_nested(x, s):
    return np.sum(shift(x, s) * x)


def f_both(x, a: float):
    # scale gets an array (x) and, at the second call, two numbers
    return np.sum(scale(x, a)) * scale(a, 3.0)


def ratio(u, w=0.5):
    return u / (1.0 + w * w)


def f_default(x, w):
    # w, a numeric default in the helper, receives an array here
    return np.sum(ratio(x, w) * x) + np.sum(ratio(x))


def rosen_term(a, b):
    return 100.0 * (b - a ** 2) ** 2 + (1.0 - a) ** 2


def f_rosen_terms(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + rosen_term(x[i], x[i + 1])
    return s


def elementwise(x, s):
    # no NumPy at all: an array x gives an array result (a vjp's cotangent is one)
    return x * s + s


def rosenbrock_no_numpy(x):
    s = 0.0
    for i in range(len(x) - 1):
        s = s + 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s


def unpacks_a_list(x):
    a, b = x
    return a * b


def calls_rosenbrock(x, y):
    return rosenbrock_no_numpy(x) * y


def annotated(u, s: float):
    return u * s


def f_annotated(x, s):
    return np.sum(annotated(x, s))


def product_of_items(xs):
    return xs[0] * xs[1]
