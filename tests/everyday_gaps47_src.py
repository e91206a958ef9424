"""Functions for tests/test_everyday_gaps47.py: forms everyday code writes
that s2s-ad once refused or checked loosely (a run-time list slice under
``checkpoint=True``, ...)."""

import numpy as np


# -- a slice of a list at a run-time bound, checkpoint=True -------------------

def slice_head(xs, n):
    ys = xs[:n]
    s = 0.0
    for y in ys:
        s = s * 0.5 + np.sin(y) * y
    return s


def slice_last(xs):
    ys = xs[:len(xs) - 1]
    s = 0.0
    for k in range(3):
        for y in ys:
            s = s * 0.5 + y * xs[k]
    return s


def slice_built(x, n):
    xs = [x, 2.0 * x, x * x]
    ys = xs[:n]
    return sum(ys) * x


def _head_sum(xs, n):
    return sum(xs[:n])


def slice_helper(xs, n):
    s = 0.0
    for k in range(3):
        s = s + _head_sum(xs, n) * xs[k] + s * 0.25
    return s


def comprehension_then_loop(xs):
    ys = [y * y for y in xs]
    s = 0.0
    for y in ys:
        s = s * 0.5 + np.sin(y)
    return s


# -- b[i][j] = v on a local 2-D array, i and j int parameters ------------------

def chained_write(x, i, j):
    b = np.zeros((3, 3))
    b[i][j] = x[0] * x[1]
    b[1][2] = np.sin(x[2])
    return np.sum(b * b) + b[i, j] * x[1]


def chained_write_loop(x, i):
    b = np.ones((3, 4))
    for k in range(4):
        b[i][k] = b[i][k] * x[k] + x[(k + 1) % 4]
    return np.sum(np.sin(b) * b)


def _placed(x, i, j):
    b = np.zeros((2, 3))
    b[i][j] = np.exp(x[0])
    b[1 - i][j] = x[1] * x[2]
    return b


def chained_write_helper(x, i, j):
    b = _placed(x, i, j)
    return np.sum(b * np.cos(b)) + x[3]


def rows_shared(x, k):
    row = [0.0, 0.0]
    b = [row, row]
    b[1][0] = x * x
    c = [[0.0, 0.0], [0.0, 0.0]]
    c[1][0] = x * x
    return b[0][0] * 3.0 + b[1][0] + c[0][0] * 5.0 + c[1][0] * 7.0 + k


def rows_at_param(x, i, j):
    b = [[0.0, 0.0], [0.0, 0.0]]
    b[i][j] = x * x
    return b[0][0] + 2.0 * b[1][1]


# -- tangents, cotangents and directions of the wrong shape ---------------------

def sums_rows(W, x):
    return np.sum(W) + np.sum(np.sin(W) * x)


def gram(W):
    return W.T @ W


def column_sums(W):
    return np.sum(W, axis=0) * 2.0


def pair_out(W, x):
    return np.sum(W * x), np.sin(W)


def numbers_only(x, y):
    return x * y + y * y


# -- a float64 argument beside a float32 one ----------------------------------

def mixed_dot(a, b):
    return np.sum(a * b)


def mixed_product(a, b):
    return np.sum(a * b) + np.sum(np.sin(a)) * np.sum(b * b)


# -- del ys[0], del ys[i], ys.pop(0) -------------------------------------------

def del_first(x):
    ys = [x, 2.0 * x, x * x]
    del ys[0]
    return ys[0] * ys[1]


def del_last(x, y):
    ys = [x, y * x, np.sin(y)]
    del ys[-1]
    return ys[0] * ys[-1] + len(ys)


def del_slice(x, y):
    ys = [x, y, x * y, x + y, y * y]
    del ys[1:3]
    return ys[0] * ys[1] * ys[2]


def del_key(x, y):
    d = {"a": x * y, "b": np.exp(x), "c": y}
    del d["b"]
    return (d["a"] + d["c"]) * d["a"] + len(d)


def _tail(x):
    ys = [x, x * x, np.cos(x)]
    del ys[0]
    return ys


def del_helper(x):
    zs = _tail(x)
    return zs[0] + zs[1] * x


def del_in_loop(x):
    s = 0.0
    for k in range(3):
        ys = [x * k, np.sin(x + k), x * x]
        del ys[1]
        s = s + ys[0] * ys[1] + s * 0.5
    return s


def del_run_time_index(x, i):
    ys = [x, 2.0 * x, x * x]
    del ys[i]
    return ys[0] * ys[1]


def del_grown(xs):
    ys = []
    for v in xs:
        ys.append(v * v)
    del ys[0]
    return sum(ys)


def pop_made(xs):
    ys = [v * v for v in xs]
    a = ys.pop(0)
    return a * sum(ys)


def pop_grown(xs):
    ys = []
    for v in xs:
        ys.append(v * v)
    a = ys.pop(0)
    return a * sum(ys)


def del_name(x):
    y = x * x
    del y
    return x


def del_before_loop(x):
    ys = [x, 2.0 * x, x * x]
    for k in range(2):
        del ys[0]
    return sum(ys)


def del_rewritten_index(x, i):
    ys = [x, 2.0 * x, x * x]
    ys = [y for k, y in enumerate(ys) if k != i]
    return ys[0] * ys[1]


def del_rewritten_grown(xs):
    ys = []
    for v in xs:
        ys.append(v * v)
    ys = ys[1:]
    return sum(ys) * ys[0]


# -- np.concatenate([z, [a]]): an inner list is an array -----------------------

def join_one(z, a):
    w = np.concatenate([z, [a]])
    return np.sum(w * w * np.arange(4.0))


def join_around(z, a):
    w = np.concatenate(([a], z, [a * a, 1.0]))
    return np.sum(w * np.arange(6.0))


def join_hstack(z, a):
    return np.sum(np.sin(np.hstack([z, [a, 2.0 * a]])))


def join_stack(z, a):
    return np.sum(np.stack([z, [a, a * a, 1.0]]) ** 3)


def _appended(z, a):
    return np.concatenate([z, [a * a]])


def join_loop(z, a):
    w = z
    for k in range(3):
        w = _appended(w, a + k)
    return np.sum(np.cos(w) * w)


def join_bad_entry(z, a):
    return np.sum(np.concatenate([z, [a, [a]]]))


# -- np.sum(x, where=m), m broadcast to x's shape -------------------------------

def masked_sum(x, m):
    return np.sum(x * x, where=m)


def masked_mean(x, m):
    return np.mean(np.sin(x), where=m) + x.sum(where=m, axis=-1)[-1] * 0.5


def masked_in_loop(x, m):
    s = 0.0
    for k in range(3):
        s = s + np.sum(x * (k + 1.0) + s, where=m) * 0.5
    return s


# -- how an int parameter is used, as check reports it ---------------------------

def _powers(x, m):
    s = 0.0
    for k in range(m):
        s = s + x ** (k + 1)
    return s


def passes_count(x, n):
    return _powers(x, n) * 2.0
