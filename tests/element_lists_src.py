"""Loops filling and reading NumPy arrays one element at a time, for
tests/test_element_lists.py: some whose reverse loop runs on Python lists of
the arrays' elements (s2s_ad/reverse/element_lists.py), some whose reverse
loop keeps the arrays."""

import numpy as np


def fill(x, a):
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y * y)


def two_back(x, a):
    y = np.zeros(len(x))
    y[0] = x[0]
    y[1] = x[1] * a
    for i in range(2, len(x)):
        y[i] = y[i - 1] * a + np.tanh(y[i - 2]) * x[i]
    return np.sum(y * y * y)


def weighted(x, w):
    # w is read by element in the reverse loop too: its dtype is checked as well
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] * w[i] + x[i] * x[i]
    return np.sum(np.sin(y))


def branch_in_loop(x, a):
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        if y[i - 1] > 0.0:
            y[i] = y[i - 1] * a + x[i]
        else:
            y[i] = x[i] - y[i - 1] * y[i - 1]
    return np.sum(y * y)


def in_branch(x, a):
    y = np.zeros(len(x))
    y[0] = x[0]
    if a > 0.0:
        for i in range(1, len(x)):
            y[i] = y[i - 1] * a + x[i]
    return np.sum(y * y)


def divides(x, a):
    # ``/``: a Python float raises on a zero divisor where NumPy gives inf
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] / a + x[i]
    return np.sum(y * y)


def rows(X, a):
    # rows, not elements: y[i] is an array
    y = np.zeros((X.shape[0], X.shape[1]))
    y[0] = X[0]
    for i in range(1, X.shape[0]):
        y[i] = y[i - 1] * a + X[i]
    return np.sum(y * y)


def in_helper(x, a):
    return fill(x, a) * 2.0


def in_helper_of_helper(x, a):
    return in_helper(x, a) + 1.0


def helper_in_loop(x, a):
    s = 0.0
    for k in range(2):
        s = s + fill(x, a * (k + 1))
    return s
