"""Functions for tests/test_everyday_gaps.py: forms everyday NumPy and list
code writes (conversions to a NumPy float, masked reductions, keyword
bounds of clip, flatten as a copy, chained index writes, list slices at
run-time bounds, helpers returning their own list)."""

import math

import numpy as np


# -- np.float64(x), np.float32(x), float(a[i]) --------------------------------

def conv_f64(x):
    y = np.float64(x[0]) * 2.0
    return y * np.sum(x)


def conv_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + float(x[i]) * np.float64(x[i]) * np.sin(x[i])
    return s


def _sq64(v):
    return np.float64(v) ** 2 + v


def conv_helper(x):
    s = 0.0
    for i in range(3):
        s = s + _sq64(x[i] * x[i - 1])
    return s


def conv_numbers(a, b):
    return np.float64(a) * b + np.float64(a * b) ** 2


def conv_f32(x):
    y = np.float32(x[1])
    return float(y) * x[0] + np.sum(np.float32(x) * x)


# -- where= of sum and mean, keyword bounds of clip ------------------------------

def sum_where(x):
    return np.sum(x * x, where=x > 0.0) + np.sin(x).sum(where=x < 0.5)


def mean_where(x):
    return np.mean(x ** 3, where=x > -0.5) * np.mean(np.exp(x), where=x < 0.5)


def where_axis(m):
    keep = m > 0.0
    rows = np.sum(m * m, axis=1, where=keep)
    cols = m.mean(axis=0, keepdims=True, where=keep)
    return np.sum(rows * np.cos(rows)) + np.sum(cols ** 2)


def where_loop(m):
    s = 0.0
    for i in range(m.shape[0]):
        s = s + np.mean(m[i] ** 2, where=m[i] > -0.3) * np.sum(m[i], where=m[i] < 0.8)
    return s


def clip_keywords(x):
    return np.sum(x.clip(min=-0.3) ** 2) + np.sum(np.sin(x.clip(max=0.4))) \
        + np.sum(np.clip(x, a_min=None, a_max=0.6) ** 3) \
        + np.sum(np.clip(x, a_min=-0.5, a_max=0.5) * x) + np.sum(np.clip(x, -0.2, a_max=0.9))


def clip_loop(x, n: int):
    s = 0.0
    for i in range(n):
        s = s + np.sum(x.clip(min=0.1 * i) * x)
    return s


# -- flatten, copy, np.array are copies; ravel and reshape views -----------------

def flatten_write(a):
    b = a.flatten()
    b[0] = 0.0
    return np.sum(b * a.ravel())


def copies_written(a):
    b = a.copy()
    b[0] = 0.0
    c = np.array(a)
    c[1] = c[1] * 3.0
    d = a.flatten()
    d[-1] = d[0] ** 2
    return np.sum(b * c * a) + np.sum(d * d)


def flatten_loop(a):
    b = a.flatten()
    for i in range(b.shape[0] - 1):
        b[i + 1] = b[i + 1] * b[i]
    return np.sum(b) + np.sum(a * a)


def ravel_write(a):
    b = a.ravel()
    b[0] = 0.0
    return np.sum(b)


def reshape_write(a):
    b = a.reshape(-1)
    b[0] = 0.0
    return np.sum(b)


# -- b[i][j] = v on a local array --------------------------------------------------

def chained_write(a):
    b = a * 2.0
    b[0][1] = a[1, 1] ** 2
    b[1][0] += a[0, 0] * a[0, 1]
    b[-1][1:] = np.sin(b[-1][1:])
    return np.sum(b * b)


def chained_loop(a):
    b = np.zeros_like(a)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            b[i][j] = a[i, j] * (i + 1.0) + b[i - 1][j] * a[i, j]
    return np.sum(b ** 2)


def list_of_lists(x):
    rows = [[x, 2.0 * x], [x * x, 3.0]]
    r = rows[0]
    rows[0][1] = x ** 3
    return r[1] * rows[1][0] + rows[0][1]


def sliced_then_indexed(a):
    b = a * 1.0
    b[1:][0] = 5.0
    return np.sum(b * a)


def masked_then_indexed(a):
    b = a * 1.0
    b[b > 0.0][0] = 5.0
    return np.sum(b * a)


# -- list slices at bounds known only as the code runs ------------------------------

def slice_prefix(x, n: int):
    xs = [x, 2.0 * x, x * x, 3.0]
    return sum(xs[:n]) * x


def slice_suffix_loop(x, i: int):
    xs = [x, 2.0 * x, x * x, 3.0]
    s = 0.0
    for v in xs[i:]:
        s = s + v * x
    return s


def slice_window(x, y, i: int, j: int):
    xs = [x, 2.0 * y, x * y, 3.0, y * y]
    ys = xs[i:j]
    return ys[0] * len(ys) + ys[-1] * x


def slice_len(x, n: int):
    xs = [x, np.sin(x), x * x, 3.0]
    ys = xs[:len(xs) - n]
    return sum(ys) * x


def _total_sq(vs):
    s = 0.0
    for v in vs:
        s = s + v * v
    return s


def slice_to_helper(x, y, n: int):
    xs = [x * y, y, x + y]
    s = 0.0
    for k in range(n):
        s = s + _total_sq(xs[k:]) * x
    return s


def chained_rows(x, w):
    out = np.zeros((x.shape[0], 2))
    for i in range(x.shape[0]):
        out[i][0] = x[i] * w
        out[i][1] = np.sin(x[i]) + w * w
    return np.sum(out ** 2)


def chained_accumulate(x):
    acc = np.zeros((2, x.shape[0]))
    s = 0.0
    for i in range(x.shape[0]):
        acc[0][i] += x[i] ** 2
        acc[1][i] -= x[i] * s
        s = s + acc[0][i]
    return np.sum(acc * acc) + s


def sum_not_nan(x):
    return np.sum(x, where=~np.isnan(x)) * 2.0


# -- float32 arguments' cotangents -------------------------------------------------

WEIGHTS = np.array([1.0, -2.0, 0.5])


def mixed_dtypes(x, s, *, c=0.5):
    return np.sum(np.sin(x) * WEIGHTS) * s + np.sum(np.zeros(3) + x * x) * c


# -- a helper returning its own list parameter ---------------------------------------

def _checked(xs):
    if len(xs) < 2:
        raise ValueError("too short")
    return xs


def _same(xs):
    return xs


def own_list_changed_after(x):
    ys = [x, x * 3.0]
    zs = _checked(ys)
    ys[0] = x * x
    return zs[0] * zs[1]


def own_list_read(x, y):
    ys = [x, np.sin(y), x * y]
    zs = _same(_checked(ys))
    return zs[0] * zs[2] + ys[1] * zs[1]


def own_list_param(xs, w):
    s = xs[0] * w
    zs = _same(xs)
    return s + zs[-1] * zs[1]


def own_list_loop(x, n: int):
    ys = [x, 2.0 * x]
    s = 0.0
    for i in range(n):
        zs = _checked(ys)
        s = s + zs[0] * zs[1] * (i + 1.0)
    return s


def own_list_arrays(a):
    ys = [a, np.sin(a)]
    zs = _same(ys)
    ys[1] = a * a
    return np.sum(zs[0] * zs[1])


def _maybe_same(xs, c):
    if c > 0.0:
        return xs
    return [xs[1], xs[0]]


def own_list_in_branch(x):
    ys = [x, x * 3.0]
    zs = _maybe_same(ys, x)
    ys[0] = x * x
    return zs[0] * zs[1]


# -- second derivatives through a helper called in a loop -----------------------------

def _iterate(a, b, m: int):
    t = a
    for _ in range(m):
        t = math.sin(t) * b + 0.5 * t
    return t


def helper_in_loop(x, y, n: int):
    s = 0.0
    for i in range(n):
        s = s + _iterate(x * s + 0.1 * i, y, i + 1)
    return s


def helper_in_while(x, y):
    s = 0.1
    i = 0
    while s < 3.0 and i < 10:
        s = s + _iterate(x * s, y, 2) + 0.5
        i = i + 1
    return s


def helper_in_nested_loops(x, y, n: int):
    s = 0.0
    for i in range(n):
        for j in range(2):
            if s < 1.5:
                s = s + _iterate(x * s + 0.1 * j, y, i + j)
            else:
                s = s * 0.9 + x
    return s


def _masked_step(row, w):
    b = row.flatten()
    b[0] = b[0] * w
    grid = np.outer(b, b)
    grid[0][1] = np.mean(row ** 2, where=row > -0.5)
    return np.sum(grid.clip(max=0.8), where=grid > -0.9)


def helpers_of_the_forms(m, w):
    s = 0.0
    for i in range(m.shape[0]):
        s = s + _masked_step(m[i], w) * (i + 1.0)
    return s
