"""Loops with invariant arithmetic (tests/test_hoist.py)."""
import math


def decay(x, k):
    dt = 0.01
    for i in range(150):
        x = x + dt * (-k * x)
    return x


def chain(x, a, b):
    for i in range(20):
        x = x * 0.9 + (a * b - a) * 0.01 + abs(b) * x * 0.001
    return x


def zero_trips(x, y, n: int):
    s = x
    for i in range(n):
        s = s + 1.0 / y + math.log(y)
    return s


def in_while(x, k):
    t = 0.0
    while t < 1.0:
        x = x - 0.1 * (k * k) * x
        t = t + 0.1
    return x


def in_branch(x, k):
    for i in range(10):
        if x > 0.0:
            x = x - 0.1 * (k * 2.0) * x
        else:
            x = x + k
    return x
