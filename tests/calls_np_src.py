"""NumPy arrays passed through helpers (test data for test_calls.py)."""

import numpy as np


def ident(v):
    return v


def sqsum(v):
    return np.sum(v * v)


def arrays_through_helpers(x):
    a = ident(x)
    b = ident(x)
    return sqsum(a + b) + sqsum(b) * 0.5
