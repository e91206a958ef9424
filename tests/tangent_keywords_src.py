"""Functions with a variable named like a parameter's tangent keyword
(tests/test_tangent_keywords.py)."""

import math

import numpy as np


def decay(y, t):
    dt = 0.1
    for i in range(5):
        y = y - dt * y * math.sin(t + i * dt)
    return y


def doubled(x):
    dx = x * 2.0
    return dx * x


def uses_helper(x):
    return doubled(x) + x


def field(x, dx_scale=0.5):
    dx = np.roll(x, 1) - x
    return np.sum(dx * dx) * dx_scale + np.sum(np.sin(x))
