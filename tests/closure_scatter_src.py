"""NumPy functions whose gradient modules read slices back (``scatter(g, x,
slice(1, None))``, ``add_scattered(dx, slice(None, -1), g)``) and add into an
adjoint by index in a reverse loop (``dx[i] += g``), in every position: top
level, a loop, a branch, helpers (a pair each), a helper of a helper, a helper
called in a loop. tests/test_closure_scatter.py differentiates each gradient
module again."""

import numpy as np


def sliced(x):
    return np.sum(x[1:] * x[:-1] ** 2) + np.sum(np.cos(x[::2]))


def in_loop(x, n: int):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sin(x[1:] * x[:-1])) * x[0]
    return s


def in_branch(x):
    if x[0] > 0:
        s = np.sum(x[1:] ** 3)
    else:
        s = np.sum(x[:2] * x[2:4])
    return s


def inner(v):
    return np.sum(v[1:] * v[:-1] ** 2)


def outer(v):
    return inner(v) * inner(v[::2] * 1.5)


def helper_of_helper(v):
    return outer(v[1:]) + np.sum(v[0:2, None] * v[None, 2:4])


def helper_in_loop(v, n: int):
    t = 0.0
    for k in range(n):
        t = t + inner(v * (k + 1.0))
    return t


def by_element(x, n: int):
    s = 0.0
    for i in range(n):
        s = s + x[i] * x[i + 1] ** 2
    return s


def rows(a):
    return np.sum(a[1:, :] * a[:-1, ::-1]) + np.sum(a[0] ** 3)


def fancy(x, idx):
    return np.sum(x[idx] ** 2)


def fancy_loop(x, idx):
    s = 0.0
    for k in range(3):
        s = s + np.sum(np.sin(x[idx]) * (k + 1.0))
    return s


def by_parent(x, parents):
    y = np.zeros_like(x)
    for i in range(x.shape[0]):
        if parents[i] < 0:
            y[i] = x[i]
        else:
            y[i] = y[parents[i]] * x[i]
    return np.sum(y * y)


def passed_through(b, z):
    acc = 0.0
    for i in range(2):
        d = b - 2.0 * np.max(z + i, keepdims=True)
        o = d - np.log(np.sum(np.exp(d), keepdims=True))
        acc = acc + np.sum(d[0] * o[0])
    return acc


def aliased_after(z, w):
    if np.sum(w) < 0.0:
        acc = np.sum(np.sin(z) * w)
    else:
        acc = np.sum(z * w)
    m = np.max(z, axis=1, keepdims=True)
    d = z - m
    e = np.exp(d)
    s = np.sum(e, axis=1, keepdims=True)
    o = d - np.log(s)
    return acc + np.sum(d[0] * o[0])
