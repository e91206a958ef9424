"""Functions for tests/test_higher_third.py: third derivatives from the
second gradient module read back from its file."""

import math


def straight(x, y):
    return math.sin(x * y) + x ** 3 * y


def looped(x, n: int):
    s = x
    for k in range(n):
        s = math.sin(s) * x + 0.1 * k
    return s


def branched(x):
    if x > 0.5:
        y = x ** 4
    else:
        y = math.exp(x) * x
    return y


def whiled(x):
    s = x
    k = 0
    while s < 3.0 and k < 10:
        s = s * 1.3 + math.sin(s)
        k = k + 1
    return s * x


def _step(s, x):
    return math.sin(s) * x + 0.2


def helper_in_loop(x, n: int):
    s = x
    for k in range(n):
        s = _step(s, x)
    return s
