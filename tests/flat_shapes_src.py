"""Elementwise operations between arrays whose shapes the code cannot tell
apart (parameters, slices, a parameter times a slice): the gradient takes
one test of their shapes instead of an ``unbroadcast`` per operand
(s2s_ad/reverse/flat_shapes.py). Each function is called by the tests with
arrays of one shape (the flag holds) and with arrays that broadcast (a row
against a matrix, a length-1 array: the flag does not hold)."""

import numpy as np


def mix(a, b, c):
    """Top level: three parameters, two operations joined by their result."""
    t = a * b + c * a
    return np.sum(t * t)


def cell(z, h, c):
    """An LSTM-like cell: gates sliced from z, mixed with h and c."""
    n = len(h)
    f = 1.0 / (1.0 + np.exp(-z[:n]))
    u = np.tanh(z[n:2 * n])
    o = 1.0 / (1.0 + np.exp(-z[2 * n:]))
    c2 = c * f + (1.0 - f) * u
    return o * np.tanh(c2), c2


def cell_sum(z, h, c):
    """cell as a helper, its two results summed."""
    h2, c2 = cell(z, h, c)
    return np.sum(h2 * c2)


def step(w, h, c):
    """A helper calling the cell: a helper of a helper."""
    h2, c2 = cell(np.concatenate((h, h, h)) * w, h, c)
    return h2, c2


def run(w, h, c):
    """The cell called in a loop through step."""
    for k in range(3):
        h, c = step(w, h, c)
    return np.sum(h * h) + np.sum(c)


def branch(w, h, c):
    """The cell called in each arm of a branch."""
    if np.sum(c) > 0:
        h, c = step(w, h, c)
    else:
        h, c = step(w * w, c, h)
    return np.sum(h * c)


def affine(x, w, b):
    """A row added to every row of a matrix (broadcast in every call)."""
    y = x * w + b
    return np.sum(np.tanh(y) * w)


def blend(a, b, c):
    """A helper that keeps its pair (a branch): flags in its backward pass."""
    if np.sum(c) > 0:
        s = 1.5
    else:
        s = -0.5
    t = a * b + c * a
    return t * c * s


def chain(a, b, c):
    """blend called in a loop."""
    for k in range(2):
        a = blend(a, b, c)
    return np.sum(a * a)


def dense(X, W, b, Y):
    """A layer with a bias against a target: the parameters b and Y are where
    shapes broadcast (a row added to every row), the rest is of one shape."""
    H = np.tanh(X @ W)
    P = H + b
    return np.mean((P - Y) ** 2) + np.sum(P * H)


def slope(x, y):
    """A right-hand side whose result's shape its callers cannot tell (x * y
    broadcasts as the arguments do)."""
    return x * np.roll(y, 1) + 0.5 * y


def euler(x, y, s):
    """A loop mixing its carried value with a helper's results: the reverse
    loop tests the shapes once per iteration. With x a matrix and y a row, y
    broadcasts on the first iteration only."""
    h = 1.0 / s
    for _ in range(s):
        k1 = slope(x, y)
        k2 = slope(x, y + h * k1)
        y = y + h / 2 * (k1 + k2)
    return np.sum(y * y)


def unread(a, b, s):
    """A carried value whose final value is not read: its adjoint starts each
    reverse sweep as the number 0.0, never taken for an array of its shape."""
    p = a
    q = b
    for _ in range(s):
        r = slope(p, q)
        q = q * r + p
        p = p + r * q
    return np.sum(q)
