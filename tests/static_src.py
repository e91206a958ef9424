"""Static arguments: strings, None and bools that select code (tests/test_static_args.py)."""

import math

import numpy as np


def penalty(x, mode="l2"):
    if mode == "l2":
        return x * x
    elif mode == "l1":
        return abs(x)
    return math.log(1.0 + x * x)


def loss(x, y, mode="l2", reduce=None, scale=True):
    r = penalty(x - y, mode) + penalty(y, "huber")
    if reduce is not None:
        r = r * reduce
    if scale:
        r = r * 0.5
    return r


def no_defaults(x, mode, flag: bool):
    """Static without defaults: found from the comparison and the annotation."""
    if mode in ("a", "b") and not flag:
        return x * x * x
    return math.sin(x)


def passes_on(x, mode):
    """mode is passed to a helper that compares it."""
    return penalty(x, mode) * 2.0


def loop_with_mode(x, n, mode="sum"):
    s = 0.0
    for i in range(n):
        if mode == "sum":
            s = s + math.sin(x * i)
        else:
            s = s * x + 1.0
    return s


def optional_array(w, X, _range=None, kind="sum"):
    if _range is None:
        z = X @ w
    else:
        z = X @ w - _range
    if kind == "sum":
        return np.sum(z * z)
    return np.mean(z * z)


def local_static(x, mode="fast"):
    how = "square" if mode == "fast" else "cube"
    if how == "square":
        return x * x
    return x * x * x


def none_tested_value(x, r=0.5):
    if r is None:
        return x * x
    return x * r


def string_arithmetic(x, mode="a"):
    return x * mode


def string_vs_number(x, mode="a"):
    if x == "a":
        return x
    return x * 2.0


def string_vs_local(x):
    y = x * 2.0
    if y == "a":
        return y
    return x * 2.0


def none_on_one_path(x):
    r = None
    if x > 0:
        r = x * 2.0
    if r is None:
        return x
    return r


def none_carried_by_a_loop(x):
    best = None
    for i in range(3):
        if best is None or x * i > best:
            best = x * i
    return best


def none_default_given_a_number(x, y=None):
    return x * y + x
