"""Augmented assignment to names holding arrays (tests/test_numpy_augassign.py):
NumPy writes into the array, which other names and views see."""

import numpy as np

import augassign_helpers as helpers


# -- accepted: the gradient computes what NumPy computes -------------------------

def name_alias(x):
    y = x * 1.0
    z = y
    y += x
    return np.sum(z * z)


def alias_written(x):
    y = x * 2.0
    z = y
    w = z
    w -= x
    return np.sum(y * y) + np.sum(w)


def asarray_alias(x):
    y = x * 1.0
    b = np.asarray(y)
    y *= x
    return np.sum(b * b)


def every_operator(x, w):
    y = x + 2.5
    y += w
    y -= x * w
    y *= x
    y /= w * w + 1.0
    y **= 2
    return np.sum(y)


def read_before_write(x):
    y = np.sin(x)
    s = np.sum(y * y)
    y *= x
    return s + np.sum(y)


def accumulate(x, w, n: int):
    acc = np.zeros(3)
    for i in range(n):
        acc += x * w[i]
    return np.sum(acc * acc)


def accumulate_rows(X, w):
    acc = np.zeros_like(w)
    for i in range(len(X)):
        acc += X[i] * w
    return np.sum(np.tanh(acc))


def branch(x, c: float):
    y = x * 1.0
    if c > 0:
        y += x
    else:
        y *= x
    return np.sum(y * y)


def loop_operators(x, n: int):
    y = x * 1.0
    for i in range(n):
        y *= 0.5
        y += np.sin(x)
        y **= 2
    return np.sum(y)


def scalar_alias(x: float, a):
    y = x
    x += 1.0
    return np.sum(a * y * x)


def numpy_scalar_alias(x):
    s = np.sum(x)
    t = s
    s += 1.0
    return t * s


def fresh_helper(u):
    u = u * 1.0
    u += 1.0
    return u * u


def calls_fresh_helper(x):
    return np.sum(fresh_helper(x))


def scalar_accumulator(u, v):
    t = 0.0
    t += u * v
    t *= v
    return t


def calls_scalar_accumulator(x, w):
    return np.sum(scalar_accumulator(x, w))


def scalar_alias_helper(u):
    v = u
    u += 1.0
    return v * u


def calls_scalar_alias_helper_with_numbers(x):
    return np.sum(x) * scalar_alias_helper(2.0)


def no_numpy(x):
    y = x
    x += 1.0
    return y * x


# -- refused with a located message ---------------------------------------------

def param_alias(x):
    y = x
    x += 1.0
    return np.sum(y * y)


def param_plain(x):
    x += 1.0
    return np.sum(x * x)


def view_then_base(a):
    a = a * 1.0
    b = a[1:]
    a += a
    return np.sum(b * b)


def write_through_view(a):
    a = a * 1.0
    b = a[1:]
    b *= 2.0
    return np.sum(a * a)


def transpose_then_base(a):
    a = a * 1.0
    b = a.T
    a -= 1.0
    return np.sum(b * b)


def reshape_then_base(a):
    a = a * 1.0
    b = a.reshape(-1)
    a /= 2.0
    return np.sum(b * b)


def ellipsis_then_base(a):
    a = a * 1.0
    b = a[...]
    a **= 2
    return np.sum(b * b)


def ravel_then_base(a):
    a = a * 1.0
    b = a.ravel()
    a *= 3.0
    return np.sum(b * b)


def write_through_transpose(a):
    a = a * 1.0
    b = a.T
    b += 1.0
    return np.sum(a * a)


def view_of_param(x):
    y = x[1:]
    y += 1.0
    return np.sum(y * y)


def alias_before_loop(x, n: int):
    acc = np.zeros(3)
    z = acc
    for i in range(n):
        acc += x * i
    return np.sum(z * z)


def alias_in_loop(x, n: int):
    acc = x * 1.0
    s = 0.0
    for i in range(n):
        z = acc
        acc += x
        s = s + np.sum(z * z)
    return s


def alias_in_branch(x, c: float):
    y = x * 1.0
    z = x * 2.0
    if c > 0:
        z = y
    y += x
    return np.sum(z * z)


def view_in_loop(a, n: int):
    a = a * 1.0
    s = 0.0
    for i in range(n):
        b = a[1:]
        a *= 2.0
        s = s + np.sum(b)
    return s


def row_accumulator(X):
    acc = X[0]
    for i in range(1, len(X)):
        acc += X[i]
    return np.sum(acc * acc)


def bump(u):
    u += 1.0
    return u * u


def calls_bump(x):
    return np.sum(bump(x))


def bump_numbers(u):
    v = u
    u += 1.0
    return v * v


def calls_bump_numbers(x):
    return np.sum(bump_numbers(x))


def identity(u):
    return u


def helper_result(x):
    h = identity(x)
    h += 1.0
    return np.sum(h * h)


def passed_to_helper(x):
    y = x * 1.0
    z = identity(y)
    y += x
    return np.sum(z * z)


def held_in_list(x):
    y = x * 1.0
    ys = [y, x]
    y += x
    return np.sum(ys[0] * ys[0])


# -- the rewrites the messages suggest ------------------------------------------

def rebound_param_in_loop(x, n: int):
    x = x * 1.0
    for i in range(n):
        x += np.sin(x)
    return np.sum(x * x)


def copied_alias_after_loop(x, n: int):
    acc = np.zeros(3)
    for i in range(n):
        acc += x * i
    z = acc * 1.0
    return np.sum(z * z)


def copied_row_accumulator(X):
    acc = X[0] * 1.0
    for i in range(1, len(X)):
        acc += X[i]
    return np.sum(acc * acc)


def param_read_before_rebinding_in_loop(x, n: int):
    y = x
    x = x * 1.0
    for i in range(n):
        x += 1.0
    return np.sum(y * x)


def rows_iterated(X):
    acc = np.zeros(3)
    for row in X:
        acc += row
    return np.sum(acc * acc)


def rows_written(X):
    s = 0.0
    for row in X:
        row *= 2.0
        s = s + np.sum(row)
    return s + np.sum(X * X)


def float_becomes_array_in_loop(x, n: int):
    y = 0.0
    s = 0.0
    for i in range(n):
        z = y
        y += x
        s = s + np.sum(z * x)
    return s


def float_alias_in_loop(x, n: int):
    s = 0.0
    t = 0.0
    for i in range(n):
        prev = s
        s += np.sum(x * x)
        t = t + prev * s
    return t


def module_helper_keeps_filled(x, n: int):
    y = np.zeros(3)
    for i in range(n):
        y[i] = x[i] * 2.0
    z = helpers.same(y)
    y[0] = 5.0 * x[1]
    return np.sum(z * x)


def module_helper_keeps_accumulator(x, n: int):
    y = x * 1.0
    z = helpers.same(y)
    for i in range(n):
        y += x
    return np.sum(z * x)
