"""Recursive functions (tests/test_recursion.py)."""

import math


def series(x, n):
    if n == 0:
        return 1.0
    return 1.0 + x * series(x, n - 1) / n


def ping(x, n):
    if n <= 0:
        return math.sin(x)
    return pong(x * 1.1, n - 1) + x


def pong(x, n):
    return ping(x, n - 1) * x


def halve(x):
    if x < 1.0:
        return x * x
    return halve(x / 2.0) + math.log(x)


def tree(x, depth):
    if depth == 0:
        return x
    return tree(x * 0.5, depth - 1) * tree(x + 0.25, depth - 1)


def no_base_case(x):
    return no_base_case(x * 0.5) + x


def series_in_loop(x, m):
    s = 0.0
    for k in range(m):
        s = s + series(x + 0.1 * k, k + 2)
    return s


def uses_series(x, y):
    """A helper position."""
    return series(x * y, 5) * halve(y + 3.0)
