"""isinstance in NumPy code (tests/test_everyday.py): a number and an array
each get their own code."""

import numpy as np


def scalar_or_array(x):
    if isinstance(x, np.ndarray):
        return np.sum(x * x)
    return x * x * x
