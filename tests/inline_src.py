"""Helpers small enough to be inlined, and ones that keep their pair."""
import math


def term(a, b):
    return 100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2


def rosen(x0, x1, x2, x3):
    return term(x0, x1) + term(x1, x2) + term(x2, x3)


def clipped(x):
    if x > 0.0:
        return x * x
    return 0.5 * x


def with_branch(x, y):
    return clipped(x) + clipped(x * y)


def long_helper(x):
    a = math.sin(x) * x
    b = a * a + x
    c = math.cos(b) * a
    d = c * c + b * a
    e = math.exp(-d * d) + c
    f = e * a + d * b
    g = math.tanh(f) + e * e
    return g * g + f * a + math.sin(g)


def uses_long(x, y):
    return long_helper(x) * long_helper(y)


def in_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + term(s * 0.1, x + i * 0.5)
    return s


def shared(w, x):
    # the inlined helper reads w twice and its result is used twice
    t = term(w, x)
    return t * t + term(x, w)
