"""Functions for test_api.py."""

import math

SCALE = 2.0


def poly(x, y=2.0, *, z=0.5):
    return x * x * y + math.sin(z * x) + z


def three(a, b, c):
    return a * b - c / b


def star(x, *rest):
    return x


def kwstar(x, **options):
    return x


def scaled(x):
    return SCALE * x * x


def inner(x):
    return x * x * x


def outer(x):
    return inner(x) + x
