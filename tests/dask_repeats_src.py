"""Reads by integer arrays that repeat elements (their adjoints sum the
repeats), at the top level, in helpers, helpers of helpers, loops and
branches: run on Dask arrays by tests/test_dask_repeats.py against central
differences. ``idx`` repeats 0 and 2; ``rows`` repeats row 1."""

import numpy as np


def fancy(x, idx):
    return np.sum(np.sin(x[idx]) * np.arange(1.0, 1.0 + np.size(idx)))


def columns(m, idx):
    return np.sum(np.sin(m[:, idx]) ** 2)


def taken(m, idx):
    return np.sum(np.sin(np.take(m, idx, axis=1)) * 1.5)


def taken_flat(m, idx):
    return np.sum(np.sin(np.take(np.ravel(m), idx)) * np.arange(1.0, 1.0 + np.size(idx)))


def taken_along(m, rows):
    order = np.reshape(np.concatenate([rows, rows[::-1]]), (2, 3))
    return np.sum(np.sin(np.take_along_axis(m[:, :3], order, axis=0)) * np.arange(6.0).reshape(2, 3))


def _pick(x, idx):
    return x[idx] * x[idx]


def _pick_twice(x, idx):
    return _pick(x, idx) + np.sin(_pick(x, idx[::-1]))


def in_helper(x, idx):
    return np.sum(_pick(x, idx))


def in_helper_of_helper(x, idx):
    return np.sum(_pick_twice(x, idx))


def in_loop(x, idx):
    total = 0.0
    for k in range(3):
        total = total + np.sum(np.sin(x[idx] * (k + 1.0)))
    return total


def in_branch(x, idx):
    if np.sum(x) > -100.0:
        y = np.sum(x[idx] ** 3)
    else:
        y = np.sum(x)
    return y


def returns_rows(m, rows):
    return np.sin(m[rows]) * 2.0


def numpy_made(w, idx):
    """y is made with NumPy and filled from w (Dask values computed into it);
    its reads' adjoints are a NumPy float (y[0] * 2.0) and Dask arrays."""
    y = np.zeros(4)
    y[0] = w[0]
    y[1:] = w[1:] * 3.0
    return y[0] * 2.0 + np.sum(y[1:] * w[1:]) + np.sum(y[idx] * w[:3])
