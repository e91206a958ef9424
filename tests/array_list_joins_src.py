"""Programs joining a parameter that receives a list of arrays
(tests/test_array_list_joins.py)."""
import numpy as np


def stacked(xs):
    return np.sum(np.sin(np.stack(xs)) ** 2)


def stacked_axis(xs):
    s = np.stack(xs, axis=1)
    return np.sum(s * s[:, :1] * 0.5) + np.sum(np.cos(s))


def hstacked(xs):
    return np.sum(np.hstack(xs) ** 3)


def concatenated(xs):
    c = np.concatenate(xs)
    return np.sum(np.exp(c * 0.3) * c)


def vstacked_helper(ys):
    return np.vstack(ys)


def through_helper(xs, w):
    return np.sum(np.tanh(vstacked_helper(xs)) * w)
