"""Arrays filled by subscript assignment inside loops and branches
(tests/test_numpy_inplace.py): the gradient writes them in place."""

import numpy as np


def fill(x, a: float, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = np.sin(x[i]) * a
    return np.sum(y * y)


def two_back(x, a: float, n: int):
    y = np.zeros(n)
    y[0] = x[0]
    y[1] = x[1] * a
    for i in range(2, n):
        y[i] = y[i - 1] * a + np.tanh(y[i - 2]) * x[i]
    return np.sum(y ** 3)


def twice(x, w, n: int):
    y = np.copy(x)
    s = 0.0
    for i in range(n):
        y[i] = x[i] * w[i]
        s = s + np.sum(y * w)       # reads the whole array between the writes
        y[i] = y[i] * y[i] + s
    return np.sum(np.sin(y)) + s


def read_then_write(x, n: int):
    y = np.ones(n)
    s = 0.0
    for i in range(n):
        s = s + np.sum(y * x)       # y as it was before this iteration's write
        y[i] = s * x[i]
    return s + np.sum(y)


def slices_under_branch(x, t: float, k: int):
    y = np.copy(x)
    s = 0.0
    for j in range(k):
        if x[j] > 0:
            y[1:] += x[:-1] * t
        else:
            y[:2] *= y[2:4]
        s = s + np.sum(np.sin(y))
    return s + np.sum(y * x)


def whole_reads_after(x, w, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] * x[i] + w[i]
    z = y @ w
    return np.sum(y * y) * z + np.max(y)


def rnn_rows(W, x, k: int):
    H = np.zeros((k + 1, len(W)))
    H[0, :] = x
    for t in range(1, k + 1):
        H[t, :] = np.tanh(W @ H[t - 1] + H[t - 1] * 0.5)
    return np.sum(H ** 2)


def while_fill(x, c: float):
    y = np.zeros(len(x))
    i = 0
    while i < len(x) and np.sum(y) < c:
        y[i] = np.exp(x[i]) + np.sum(y) * 0.1
        i = i + 1
    return np.sum(y * x)


def early_exit(x, c: float):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = np.sin(x[i]) + 1.5
        if np.sum(y) > c:
            break
        y[i] = y[i] * x[i]
    return np.sum(y * y)


def constant_table(x, n: int):
    y = np.zeros(n)
    s = 0.0
    for i in range(n):
        y[i] = 1.0 + i
        s = s + np.sum(y * x)       # y holds no derivative, but is read before each write
    return s


def carried_only(x, n: int):
    y = np.zeros(n)
    s = 0.0
    for i in range(1, n):
        s = s + y[i - 1] * x[i]
        y[i] = x[i] * s
    return s


def returns_array(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] * x[i]
    return y


def masked(x, n: int):
    y = np.copy(x)
    for _ in range(n):
        y[y > 0.5] = 0.5 * y[y > 0.5]
    return np.sum(y * x)


def _inner(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] * np.sum(y)
        y[i] = y[i] + x[i]
    return np.sum(y * x)


def calls_filler(x, n: int):
    s = 0.0
    for _ in range(2):
        s = s + _inner(x * s + 1.0, n)
    return s


def long_recurrence(x, a: float, n: int):
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y * y)


def saved_fill(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] * np.sum(y) * 0.1 + x[i]
    return np.sum(y * y)


def nested_rows(A, k: int):
    H = np.copy(A)
    for t in range(1, k):
        for j in range(len(A[0])):
            H[t, j] = H[t - 1, j] * A[t, j] + np.sin(H[t, j])
    return np.sum(H * H)


def read_before_loop(x, n: int):
    y = np.copy(x)
    z = y * 2.0
    for i in range(n):
        y[i] = y[i] * x[i] + z[i]
    return np.sum(y * z) + np.sum(y)


def early_return_sum(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = np.sin(x[i]) + y[i - 1]
        if np.sum(y) > 1.5:
            return np.sum(y * y)
    return np.sum(y)


def returns_a_piece(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = np.sum(y) + x[i]
    return y[1:]


def returned_from_loop(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = x[i] * np.sum(y) + x[i]
        if np.sum(y) > 1.0:
            return y
    return y * 3.0


def _filled(x, n: int):
    y = np.zeros(n)
    for i in range(n):
        y[i] = np.sum(y) * 0.5 + x[i]
    return y


def calls_returning_filled(x, n: int):
    s = 0.0
    z = x
    for _ in range(2):
        z = _filled(z, n) * 0.5
        s = s + np.sum(z * x)
    return s


def sum_then_write(x, n: int):
    y = np.zeros(n)
    s = 0.0
    for i in range(n):
        s = s + np.sum(y) + np.mean(y - 1.0)
        y[i] = s * x[i]
    return s + np.sum(y * x)


def copy_elements(x, n: int):
    y = np.copy(x)
    z = np.zeros(n)
    for i in range(1, n):
        y[i] = y[i - 1]             # an element copied, not a name bound to a piece of y
        z[i] = y[i] * x[i]
    return np.sum(z * y)
