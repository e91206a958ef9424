"""Reads by boolean masks (``x[x > 0]``), whose result has a length Dask knows
only when it computes: at the top level, in helpers, helpers of helpers,
loops and branches, run on Dask arrays by tests/test_dask_masks.py against
central differences."""

import numpy as np


def squares(x):
    return np.sum(x[x > 0] ** 2)


def two_arrays(x, w):
    m = x > 0.1
    return np.sum(np.sin(x[m]) * w[m])


def plain_sum(x):
    return np.sum(x[x > 0])


def mean_exp(x):
    return np.mean(np.exp(x[x > -0.2]))


def matrix(m):
    return np.sum(m[m > 0] ** 3)


def _positives(x):
    return x[x > 0] * 1.5


def _positive_sum(x):
    return np.sum(np.sin(_positives(x)))


def in_helper(x):
    return np.sum(_positives(x) ** 2)


def in_helper_of_helper(x):
    return _positive_sum(x) * 2.0


def in_loop(x):
    s = 0.0
    for k in range(3):
        s = s + np.sum(x[x > 0.2 * k] * (k + 1.0))
    return s


def in_branch(x, t):
    if t > 0.0:
        return np.sum(np.cos(x[x > 0]) * t)
    return np.sum(x[x < 0] ** 2)
