"""NumPy functions with loops and branches (tests/test_numpy_loops.py)."""

import numpy as np


def power_iteration(A, v, k: int):
    for _ in range(k):
        w = A @ v
        v = w / np.sqrt(np.sum(w * w))
    return np.sum(v * (A @ v))


def residual_layers(W, x, k: int):
    h = x
    for _ in range(k):
        h = np.maximum(W @ h, 0.0) + 0.1 * h
    return np.sum(h ** 2)


def branchy(x, t: float):
    if t > 0:
        y = np.sin(x) * t
    else:
        y = np.cos(x)
    return np.mean(y, axis=0).sum()


def indexed_sum(x, w, n: int):
    s = 0.0
    for i in range(n):
        s = s + np.tanh(x[i] * w[i]) * x[i]
    return s


def row_norms(A, v):
    total = 0.0
    for i in range(len(A)):
        r = A[i]
        total = total + np.sum(r * v) ** 2
    return total


def oscillator(x, v, k: int, dt=0.1):
    for _ in range(k):
        a = -x - 0.1 * v * np.abs(v)
        v = v + dt * a
        x = x + dt * v
    return np.sum(x * x) + np.mean(v)


def accumulate(x, n: int):
    s = 0.0  # becomes an array on the first iteration
    for i in range(n):
        s = s + x * (i + 1)
    return np.sum(s * s)


def until_small(x):
    while np.sum(x * x) > 0.5:
        x = x * 0.7
    return np.sum(np.exp(x))


def assigns_in_loop(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] * 2
    return np.sum(y)
