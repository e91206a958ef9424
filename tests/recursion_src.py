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


def pair_walk(x, n):
    """A recursion returning a flat tuple."""
    if n == 0:
        return x, x * x
    a, b = pair_walk(x * 0.9, n - 1)
    return a + b, a * b


def uses_pair(x, y):
    a, b = pair_walk(x * y, 3)
    return a * b + y


def nested_walk(x, n):
    """A recursion returning nested tuples, written out at its one return."""
    if n == 0:
        a, b, c = x, 1.0, x
    else:
        (a1, b1), c1 = nested_walk(math.sin(x) * 1.1, n - 1)
        a, b, c = a1 * x, b1 + a1, c1 * x
    return (a, b), c


def uses_nested(x, y):
    (a, b), c = nested_walk(x * y, 3)
    return a + b * b + c * y


def nested_by_name(x, n):
    """Nested tuples returned through a name: a recursive call cannot read them."""
    if n == 0:
        r = (x, 1.0), x
    else:
        (a, b), c = nested_by_name(math.sin(x) * 1.1, n - 1)
        r = (a * x, b + a), c * x
    return r


def uses_nested_by_name(x):
    (a, b), c = nested_by_name(x, 3)
    return a + b * b + c
