"""Lists grown by `append` that are created inside a loop or a branch
(tests/test_inner_lists.py): each run of the body makes a list of its own,
grown in a nested loop, then summed, read by index, stacked or passed to a
helper. Plain Python: the tests compare s2s-ad's derivatives with central
differences of these. f(x, w, n): n an int, the inner trip count (at least 1);
the NumPy ones take an array x."""

import math

import numpy as np


def in_loop(x, w, n):
    s = 0.0
    for t in range(3):
        row = []
        for i in range(n):
            row.append(math.sin(x * (i + t + 1.0)) * w)
        s = s + sum(row) * row[-1] + row[len(row) // 2]
    return s


def in_branch(x, w, n):
    if x > 0.0:
        row = [x]
        for i in range(n):
            row.append(row[-1] * w + x)
        r = sum(row)
    else:
        r = x * w
    return r


def in_while(x, w, n):
    t = 0.0
    s = 0.0
    while t < 1.0:
        hist = [w]
        k = 0
        while k < n:
            hist.append(hist[k] * math.cos(x + t))
            k = k + 1
        s = s + hist[-1] * len(hist)
        t = t + 0.3
    return s


def _use(ys, w):
    return sum(ys) * w + ys[0]


def passed(x, w, n):
    s = 0.0
    for k in range(3):
        row = []
        for i in range(n):
            row.append(x ** (i + 1) * (k + 1.0))
        s = s + _use(row, w)
    return s


def branch_in_loop(x, w, n):
    s = 0.0
    for k in range(3):
        if k % 2 == 0:
            row = []
            for i in range(n):
                row.append(w * x + i)
            for v in reversed(row):
                s = s + v * row[0]
        else:
            s = s + x
    return s


def appended_in_branch(x, w, n):
    # created in the loop body, appended to in a branch of it
    s = 0.0
    for k in range(n):
        row = [x]
        if k % 2 == 1:
            row.append(w * k)
        for a, b in zip(row, reversed(row)):
            s = s + a * b
    return s


def in_a_helper(x, w, n):
    return in_loop(x, w, n) * x + in_loop(w, x, n)


# NumPy code: f(x, n), x an array

def np_stacked(x, n):
    s = 0.0
    for t in range(3):
        row = []
        for i in range(n):
            row.append(np.sin(x * (i + t + 1.0)))
        m = np.stack(row)
        s = s + np.sum(m * m) + np.sum(row[-1])
    return s


def _np_use(rows, x):
    return np.sum(np.stack(rows) @ x) + np.sum(rows[0] * rows[-1])


def np_passed(x, n):
    s = 0.0
    for t in range(2):
        states = []
        h = x
        for i in range(n):
            h = np.tanh(h * (t + 1.0) + 0.1 * i)
            states.append(h)
        if t == 1:
            s = s + np.sum(sum(states) * states[0])
        s = s + _np_use(states, x)
    return s


# still refused, located

def replaced_in_loop(x, w, n):
    row = [w]
    for k in range(n):
        row = [x]
        for i in range(n):
            row.append(w * i)
    return sum(row)


def one_of_two(x, w, n):
    if x > 0.0:
        row = [x]
        for i in range(n):
            row.append(w)
    else:
        row = [w]
        for i in range(n):
            row.append(x)
    return sum(row)
