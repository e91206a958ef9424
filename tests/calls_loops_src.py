"""Calls inside loops and branches (test data for test_calls.py)."""

import math


def sq(x):
    return x * x


def split(x, y):
    return x * y, x + y


def horner(x, n):
    s = 0.0
    for i in range(n):
        s = s * x + 1.0
    return s


def call_in_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + sq(x + i)
    return s


def call_in_branch(x, y):
    if x > y:
        z = sq(x) * y
    else:
        z = sq(y) + x
    return z


def tuple_call_in_loop(x, n):
    s = 0.0
    for i in range(n):
        p, q = split(x, s + i)
        s = s + p * q
    return s


def looping_helper_in_loop(x, n):
    t = 0.0
    for i in range(n):
        t = t + horner(x * t + 0.1, 3)
    return t


def call_in_while(x):
    s = x
    while s < 10.0:
        s = s + sq(s) + 0.5
    return s


def call_in_nested_loops(x, n):
    s = 0.0
    for i in range(n):
        for j in range(2):
            s = s + math.sin(sq(x * j + s * 0.1))
    return s


def call_after_break(x, n):
    s = x
    for i in range(n):
        if s > 3.0:
            break
        s = sq(s) + 0.5
    return s
