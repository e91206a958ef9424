"""Functions whose generated derivatives are differentiated again by
jacrev, jacfwd and jacobian (tests/test_jacobian_of_derivatives.py)."""

import math

import numpy as np


def energy(x):
    return np.sum(np.sin(x) * x) + x[0] * x[1] ** 2


def two(a, b):
    return math.sin(a) * b + a * a * b
