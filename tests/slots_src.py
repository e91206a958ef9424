"""Loops for tests/test_tape_slots.py: which tapes get a slot per iteration."""

import math


def top_level(x, n):
    for i in range(n):
        x = x + 0.1 * math.sin(x) * x
    return x


def nested(x, n):
    s = 0.0
    for i in range(n):
        y = x * i
        for j in range(3):
            y = math.sin(y) * x
        s = s + y * y
    return s


def stops_early(x, n):
    for i in range(n):
        if x > 5.0:
            break
        x = x * x + 0.5
    return x


def in_branch(x, n):
    s = 0.0
    for i in range(n):
        t = math.sin(x * i)
        if i % 2 == 0:
            u = math.exp(t)
            s = s + u * t
        else:
            s = s * t
    return s


def counted_while(x, n):
    k = 0
    while k < n:
        x = math.sin(x) * x + 1.0
        k = k + 1
    return x


def from_one(x, n):
    for i in range(1, n):
        x = x * math.cos(x * i)
    return x
