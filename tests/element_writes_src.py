"""Programs reading a list parameter in a loop, for tests/test_element_writes.py:
some whose list adjoint is set element by element, some that must add."""

import math

import cf_programs

horner = cf_programs.horner  # its list adjoint is set element by element


def weighted_from_one(c, x):
    s = 0.0
    for i in range(1, len(c)):
        s = s * x + c[i] * c[i - 1]
    return s


def every_other(c, x):
    s = 0.0
    for i in range(0, len(c), 2):
        s += math.sin(c[i] * x)
    return s


def negative_start(c, x):
    # i = -2, -1, 0, 1, 2: c[-2] is c[2] on a 4-item list, read twice
    s = 0.0
    for i in range(-2, 3):
        s = s * x + c[i]
    return s


def nested(c, x):
    s = 0.0
    for k in range(2):
        for i in range(len(c)):
            s = s * x + c[i]
    return s


def read_twice(c, x):
    s = 0.0
    for i in range(len(c)):
        s += c[i] * x + c[i] * c[i]
    return s


def two_loops(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    for i in range(len(c)):
        s += c[i] * x
    return s


def stops_early(c, x):
    s = 0.0
    for i in range(len(c)):
        if s > 2.0:
            break
        s = s * x + c[i]
    return s


def in_branch(c, x):
    s = 0.0
    for i in range(len(c)):
        if i % 2 == 0:
            s = s * x + c[i]
        else:
            s = s * x
    return s


def index_reversed(c, x):
    s = 0.0
    n = len(c)
    for i in range(n):
        s = s * x + c[n - 1 - i]
    return s
